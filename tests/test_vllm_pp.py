"""vLLM's pipeline-parallel refusal (kvplan/engines/vllm_pp.py), its table (NO_PP in vllm_registry_data.py) and the
static reader that wrote it (benchmarks/vllm_registry_table.py read_pp).

Read by hand from the vLLM 0.34.0 sdist (2026-12-07):
- config/model.py ModelConfig.verify_with_parallel_config: pipeline_parallel_size > 1 and not
  registry.is_pp_supported_model(...) -> NotImplementedError("Pipeline parallelism is not supported for this model.
  Supported models implement the `SupportsPP` interface."); registry.py _ModelInfo.from_model_cls takes
  supports_pp from interfaces.py supports_pp: SupportsPP in the class's MRO and a forward taking intermediate_tensors.
- llama.py `class LlamaForCausalLM(LocalArgmaxMixin, nn.Module, SupportsLoRA, SupportsPP, SupportsEagle, ...)`,
  its forward has `intermediate_tensors: IntermediateTensors | None = None`: PP supported.
- zamba2.py `class Zamba2ForCausalLM(nn.Module, HasInnerState, IsHybrid)` and mamba2.py
  `class Mamba2ForCausalLM(nn.Module, HasInnerState, IsAttentionFree, SupportsMambaPrefixCaching)`: no SupportsPP.
- registry.py lists GemmaForCausalLM in _TRANSFORMERS_SUPPORTED_MODELS as ("transformers", "TransformersForCausalLM");
  transformers/__init__.py `TransformersForCausalLM(CausalMixin)`, causal.py `CausalMixin(VllmModelForTextGeneration,
  Base)`, base.py `class Base(..., SupportsPP, ...)`: the Transformers backend classes support PP.
- qwen3_eagle3.py `class Eagle3Qwen3ForCausalLM(Qwen3ForCausalLM)` inherits SupportsPP but overrides forward with
  (input_ids, positions, hidden_states, inputs_embeds): no intermediate_tensors, so supports_pp is False.
The bundled zamba2-2.7b config names Zamba2ForCausalLM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvplan.engines.vllm_pp import pipeline_support
from kvplan.engines.vllm_registry_data import NO_PP, PP_RELEASES, RELEASES
from kvplan.fit.grid import parse_gpus
from kvplan.fit.search import FitRequest, search
from kvplan_inprocess import kvplan
from benchmark_scripts import load_script, write_source

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_reads_every_release():
    # 0.15.0 and 0.15.1 (wheels only on PyPI) were read from their wheels' model sources
    assert set(RELEASES) == set(PP_RELEASES)


@pytest.mark.parametrize("arch", ["LlamaForCausalLM", "GemmaForCausalLM"])
def test_supportspp_classes_run_with_pp_in_0_34(arch):
    found = pipeline_support(arch, "0.34.0")
    assert found.supported is True and found.release == "0.34.0" and found.note is None


@pytest.mark.parametrize("arch", ["Zamba2ForCausalLM", "Mamba2ForCausalLM", "Eagle3Qwen3ForCausalLM"])
def test_classes_without_supportspp_are_listed(arch):
    assert arch in NO_PP
    assert pipeline_support(arch, "0.34").supported is False


def test_a_release_not_read_is_not_known(monkeypatch):
    # a release in the registry table whose model sources were not read (as 0.15.0 was until Dec 2026)
    from kvplan.engines import vllm_registry_data

    monkeypatch.setattr(vllm_registry_data, "PP_RELEASES", tuple(r for r in PP_RELEASES if r != "0.15.0"))
    found = pipeline_support("Zamba2ForCausalLM", "0.15.0")
    assert found.supported is None and "not known" in found.note and "0.15.0" in found.note


def test_0_15_wheels_read():
    # vLLM 0.15.0's zamba2.py: class Zamba2ForCausalLM(nn.Module, HasInnerState, IsHybrid,
    # SupportsMambaPrefixCaching), no SupportsPP; llama.py's LlamaForCausalLM has it; 0.15.1 adds step3p5_mtp.py's
    # Step3p5MTP(nn.Module), which 0.15.0 does not register
    assert pipeline_support("Zamba2ForCausalLM", "0.15.0").supported is False
    assert pipeline_support("LlamaForCausalLM", "0.15.1").supported is True
    assert pipeline_support("Step3p5MTP", "0.15.1").supported is False


def test_cli_refuses_pp_for_a_class_without_supportspp():
    out = kvplan("estimate", "zamba2-2.7b", "--engine", "vllm", "--gpu", "h100", "--pp", "2")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert "vLLM 0.34.0" in lines[0] and "Zamba2ForCausalLM" in lines[0] and "--pp 1" in lines[0]
    # the same at pp 1 plans
    assert kvplan("estimate", "zamba2-2.7b", "--engine", "vllm", "--gpu", "h100").returncode == 0


def test_cli_refuses_pp_under_a_release_read_from_its_wheel():
    out = kvplan("estimate", "zamba2-2.7b", "--engine", "vllm@0.15.0", "--gpu", "h100", "--pp", "2")
    assert out.returncode == 2
    assert "vLLM 0.15.0" in out.stderr and "Zamba2ForCausalLM" in out.stderr


def test_fit_leaves_pp_out_for_a_class_without_supportspp():
    # Zamba2 2.7B at 4k fits one H100 many times over: every split up to 4 GPUs passes the planner's screen
    request = FitRequest("zamba2-2.7b", 4096, 8, tuple(parse_gpus("h100")), max_gpus=4, kv_dtypes=("auto",),
                         engine="vllm")
    result = search(request)
    assert result.options and all(c.pp == 1 for c in result.options)
    piped = [c for c in result.candidates if c.pp > 1]
    assert piped and all(not c.ok and c.constraint == "split" and "Zamba2ForCausalLM" in c.reason for c in piped)
    # without --engine vllm the planner keeps them
    ideal = search(FitRequest("zamba2-2.7b", 4096, 8, tuple(parse_gpus("h100")), max_gpus=4, kv_dtypes=("auto",)))
    assert any(c.pp > 1 and c.ok for c in ideal.candidates)


# ---- the static reader ------------------------------------------------------------------------------------------

def _script():
    return load_script("vllm_registry_table")


_write = write_source


def test_reader_follows_bases_across_modules(tmp_path):
    # A: SupportsPP through a base imported from another module; B: SupportsPP but a forward without
    # intermediate_tensors; C: no SupportsPP; D: a package whose CUDA branch (not ROCm's) has a PP class;
    # F: a lazy package (module __getattr__) whose TYPE_CHECKING import names the class; G: a subclass of
    # adapters.py as_embedding_model(A), itself a subclass of A; E: a class that is not there
    models = "vllm/model_executor/models"
    _write(tmp_path, f"{models}/interfaces.py", """
        class SupportsPP:
            def forward(self, input_ids, positions, *, intermediate_tensors): ...
    """)
    _write(tmp_path, f"{models}/base.py", """
        from torch import nn
        from .interfaces import SupportsPP
        class Base(nn.Module, SupportsPP):
            def forward(self, input_ids, positions, intermediate_tensors=None): ...
    """)
    _write(tmp_path, f"{models}/a.py", """
        from vllm.model_executor.models.base import Base as Parent
        from .adapters import as_embedding_model
        class A(Parent): ...
        class B(Parent):
            def forward(self, input_ids, positions, hidden_states): ...
        class G(as_embedding_model(A)): ...
    """)
    _write(tmp_path, f"{models}/c.py", """
        from torch import nn
        class C(nn.Module):
            def forward(self, input_ids, positions, intermediate_tensors=None): ...
    """)
    _write(tmp_path, "vllm/models/d/__init__.py", """
        from vllm.platforms import current_platform
        if current_platform.is_rocm():
            from vllm.model_executor.models.c import C as D
        else:
            from .impl import D
    """)
    _write(tmp_path, "vllm/models/d/impl.py", """
        from vllm.model_executor.models import a
        class D(a.A): ...
    """)
    _write(tmp_path, "vllm/models/f/__init__.py", """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from vllm.model_executor.models.c import C as F
        def __getattr__(name):
            from vllm.model_executor.models import c
            return c.C
    """)
    entries = {"A": ("a", "A"), "B": ("a", "B"), "C": ("c", "C"), "D": ("vllm.models.d", "D"),
               "E": ("c", "E"), "F": ("vllm.models.f", "F"), "G": ("a", "G")}
    without, unread = _script().read_pp(tmp_path, entries)
    assert without == {"B", "C", "F"} and unread == {"E"}



def test_emit_vllm_warns_that_the_command_would_not_start():
    # without --engine vllm the plan stands; the emitted `vllm serve ... --pipeline-parallel-size 2` would not start
    out = kvplan("estimate", "zamba2-2.7b", "--gpu", "h100", "--pp", "2", "--emit", "vllm")
    assert out.returncode == 0 and "--pipeline-parallel-size 2" in out.stdout
    assert "this command would not start: vLLM 0.34.0 refuses --pp 2 for Zamba2ForCausalLM" in out.stdout
