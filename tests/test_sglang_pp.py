"""SGLang's pipeline-parallel refusal (kvplan/engines/sglang_pp.py), its table (NO_PP in sglang_registry_data.py) and
the static reader that wrote it (benchmarks/sglang_registry_table.py read_pp).

Read by hand from the SGLang 0.5.23 wheel (cp311 manylinux x86_64) and the 0.5.9 sdist (2026-12-07):
- srt/model_executor/model_runner.py ModelRunner.__init__ (both releases): after self.initialize() has loaded the
  model, support_pp = "pp_proxy_tensors" in inspect.signature(self.model.forward).parameters, and with pp_size > 1
  `assert self.support_pp, "Pipeline Parallel is not compatible with this model."` (0.5.23 skips it only for a draft
  worker under SGLANG_ENABLE_PP_SPEC). No earlier, generic check by architecture in server_args.
- llama.py (0.5.23 and 0.5.9) LlamaForCausalLM.forward(self, input_ids, positions, forward_batch, input_embeds=None,
  get_embedding=False, pp_proxy_tensors=None): passes.
- gemma.py (both) GemmaForCausalLM.forward(self, input_ids, positions, forward_batch, input_embeds=None): refused.
- minimax_m2.py 0.5.9 MiniMaxM2ForCausalLM.forward(self, input_ids, positions, forward_batch, input_embeds=None)
  (its MiniMaxM2Model.forward takes pp_proxy_tensors and builds make_layers, but the class ModelRunner sees does not):
  refused; 0.5.23's MiniMaxM2ForCausalLM.forward takes pp_proxy_tensors: passes.
- longcat_flash.py (both) LongcatFlashForCausalLM.forward(self, input_ids, positions, forward_batch,
  input_embeds=None), its layers a plain nn.ModuleList of all num_hidden_layers: refused by the same assert (not run
  unsplit).
- qwen3_next.py 0.5.23 Qwen3NextForCausalLM.forward(..., inputs_embeds=None, **kwargs): **kwargs is a parameter
  named "kwargs", so the check fails: refused.
- mistral.py 0.5.9 `class Mistral3ForConditionalGeneration:` (no base, no forward: its __init__ builds self.inner, a
  LlavaForConditionalGeneration) and minicpmv.py MiniCPMV (forwards through __getattr__ / __call__ to an inner model):
  what ModelRunner's signature check sees is decided at run time, so not read.
The bundled gemma-7b config names GemmaForCausalLM, llama-3.1-8b LlamaForCausalLM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvplan.fit.grid import parse_gpus
from kvplan.fit.search import FitRequest, search
from kvplan_inprocess import kvplan
from benchmark_scripts import load_script, write_source

ROOT = Path(__file__).resolve().parents[1]


def pipeline_support(*args):
    from kvplan.engines.sglang_pp import pipeline_support as read  # here, so each test fails on its own without it

    return read(*args)


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_llama_passes_the_check(release):
    found = pipeline_support(["LlamaForCausalLM"], release)
    assert found.supported is True and found.architecture == "LlamaForCausalLM" and found.note is None


@pytest.mark.parametrize("arch", ["GemmaForCausalLM", "LongcatFlashForCausalLM", "Qwen3NextForCausalLM"])
@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_forwards_without_pp_proxy_tensors_are_refused(arch, release):
    from kvplan.engines.sglang_registry_data import NO_PP

    assert pipeline_support(arch, release).supported is False
    assert release in NO_PP[arch]


def test_minimax_m2_gained_it_in_0_5_23():
    assert pipeline_support("MiniMaxM2ForCausalLM", "0.5.9").supported is False
    assert pipeline_support("MiniMaxM2ForCausalLM", "0.5.23").supported is True


@pytest.mark.parametrize("engine,release", [("sglang", "0.5.23"), ("sglang@0.5.9", "0.5.9")])
def test_cli_refuses_pp_for_a_forward_without_pp_proxy_tensors(engine, release):
    out = kvplan("estimate", "gemma-7b", "--engine", engine, "--gpu", "h100", "--pp", "2", "--context", "4096")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert f"SGLang {release} refuses --pp 2 for GemmaForCausalLM" in lines[0]
    assert "model_runner.py" in lines[0] and "--tp 2 --pp 1" in lines[0]
    # the same at pp 1 plans, and llama at pp 2 plans
    assert kvplan("estimate", "gemma-7b", "--engine", engine, "--gpu", "h100", "--context", "4096").returncode == 0
    llama = kvplan("estimate", "llama-3.1-8b", "--engine", engine, "--gpu", "h100", "--pp", "2", "--context", "4096")
    assert llama.returncode == 0


def test_cli_notes_a_class_it_could_not_read():
    out = kvplan("estimate", "mistral-small-3.1-24b", "--engine", "sglang@0.5.9", "--gpu", "h100", "--pp", "2",
                 "--context", "4096")
    assert out.returncode == 0
    assert ("whether SGLang 0.5.9 runs Mistral3ForConditionalGeneration with pipeline parallelism is not known"
            in out.stdout)


def test_emit_sglang_warns_that_the_command_would_not_start():
    out = kvplan("estimate", "gemma-7b", "--gpu", "h100", "--pp", "2", "--context", "4096", "--emit", "sglang")
    assert out.returncode == 0 and "--pp-size 2" in out.stdout
    assert "this command would not start: SGLang 0.5.23 refuses --pp 2 for GemmaForCausalLM" in out.stdout


def test_fit_leaves_pp_out_for_a_forward_without_pp_proxy_tensors():
    # Gemma 7B at 4k fits one H100 (about 16 GiB of bf16 weights): every split up to 4 GPUs passes the screen
    request = FitRequest("gemma-7b", 4096, 8, tuple(parse_gpus("h100")), max_gpus=4, kv_dtypes=("auto",),
                         engine="sglang")
    result = search(request)
    assert result.options and all(c.pp == 1 for c in result.options)
    piped = [c for c in result.candidates if c.pp > 1]
    assert piped and all(not c.ok and c.constraint == "split" and "GemmaForCausalLM" in c.reason for c in piped)
    # llama keeps its pp splits under --engine sglang
    llama = search(FitRequest("llama-3.1-8b", 4096, 8, tuple(parse_gpus("h100")), max_gpus=4, kv_dtypes=("auto",),
                              engine="sglang"))
    assert any(c.pp > 1 and c.ok for c in llama.candidates)


# ---- the static reader ------------------------------------------------------------------------------------------

def _script():
    return load_script("sglang_registry_table")


_write = write_source


def test_reader_follows_bases_and_reads_the_signature(tmp_path):
    # A: forward with pp_proxy_tensors; B(A) inherits it; C(A) overrides it without; D takes **kwargs only;
    # E: keyword-only pp_proxy_tensors; F: no forward of its own but a base from outside the package (not read);
    # G: a subclass of A imported under another name from another module (inherits A's forward)
    models = tmp_path / "srt" / "models"
    _write(tmp_path, "srt/models/a.py", """
        import torch
        from torch import nn
        class A(nn.Module):
            @torch.no_grad()
            def forward(self, input_ids, positions, forward_batch, pp_proxy_tensors=None): ...
        class B(A): ...
        class C(A):
            def forward(self, input_ids, positions, forward_batch): ...
        class D(nn.Module):
            def forward(self, input_ids, positions, forward_batch, **kwargs): ...
        class E(nn.Module):
            def forward(self, input_ids, *, pp_proxy_tensors=None): ...
        EntryClass = [A, B, C, D, E]
    """)
    _write(tmp_path, "srt/models/f.py", """
        from transformers import PreTrainedModel
        class F(PreTrainedModel): ...
        EntryClass = F
    """)
    _write(tmp_path, "srt/models/g.py", """
        from sglang.srt.models.a import A as Parent
        class G(Parent): ...
        EntryClass = [G]
    """)
    assert models.is_dir()
    mod = _script()
    mod._PARSED.clear()
    without, unread = mod.read_pp(tmp_path)
    assert without == {"C", "D"} and unread == {"F"}
    assert set(mod.read_registry(tmp_path)) == {"A", "B", "C", "D", "E", "F", "G"}
