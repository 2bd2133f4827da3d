"""Which vLLM release registers which architecture (kvplan/engines/vllm_registry_data.py) and the
`--engine vllm@VERSION` note when the release does not.

The entries checked below were read by hand (grep) in vllm/model_executor/models/registry.py of the
release named beside each, from the released wheels unpacked at /tmp/vsrc/s<version>/vllm.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.engines.vllm_registry_data import REGISTRY, RELEASES
from kvplan.engines.vllm_rules import RULES
from kvplan.engines.vllm_served import check
from kvplan.sources import load_model
from benchmark_scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
VSRC = Path("/tmp/vsrc")


def native_in(arch: str, release: str) -> bool:
    key = tuple(int(p) for p in release.split("."))
    return any(tuple(map(int, a.split("."))) <= key and (b is None or key < tuple(map(int, b.split("."))))
               for a, b in REGISTRY[arch][0])


def test_releases_read():
    # every release from 0.11.0 to 0.33.0 (35 wheels), in order, and 0.34.0 (its sdist, added with --base)
    assert RELEASES[0] == "0.11.0" and RELEASES[-1] == "0.34.0" and len(RELEASES) == 36
    assert list(RELEASES) == sorted(RELEASES, key=lambda r: tuple(map(int, r.split("."))))


@pytest.mark.parametrize("arch, absent, present", [
    # 0.11.0's registry has no "KimiLinearForCausalLM"; 0.11.1's: ("kimi_linear", "KimiLinearForCausalLM")
    ("KimiLinearForCausalLM", "0.11.0", "0.11.1"),
    # 0.18.1's has no Gemma4*; 0.19.0's _MULTIMODAL_MODELS: ("gemma4_mm", "Gemma4ForConditionalGeneration")
    ("Gemma4ForConditionalGeneration", "0.18.1", "0.19.0"),
    # 0.16.0's has no Qwen3_5*; 0.17.0's maps Qwen3_5ForConditionalGeneration to qwen3_5
    ("Qwen3_5ForConditionalGeneration", "0.16.0", "0.17.0"),
])
def test_first_release(arch, absent, present):
    assert not native_in(arch, absent) and native_in(arch, present)
    assert REGISTRY[arch][0][0][0] == present


@pytest.mark.parametrize("arch, last, gone, backend", [
    # 0.23.0's _TEXT_GENERATION_MODELS: "BambaForCausalLM": ("bamba", ...); 0.24.0's has it only in
    # _PREVIOUSLY_SUPPORTED_MODELS ("0.23.0"), so gone from 0.24.0 (not 0.25)
    ("BambaForCausalLM", "0.23.0", "0.24.0", False),
    ("MiniMaxText01ForCausalLM", "0.23.0", "0.24.0", False),  # same lines as Bamba, 0.23.0 / 0.24.0
    # 0.24.0 still maps "BaichuanForCausalLM" to baichuan (although 0.25.0's removed-table says "0.23.0")
    ("BaichuanForCausalLM", "0.24.0", "0.25.0", False),
    # 0.28.0 maps "MPTForCausalLM" to mpt; 0.29.0 lists it only in _PREVIOUSLY_SUPPORTED_MODELS ("0.28.0")
    ("MPTForCausalLM", "0.28.0", "0.29.0", False),
    # 0.25.1 maps "Olmo2ForCausalLM" to olmo2; 0.26.0's _TRANSFORMERS_SUPPORTED_MODELS has it
    ("Olmo2ForCausalLM", "0.25.1", "0.26.0", True),
])
def test_gone(arch, last, gone, backend):
    assert native_in(arch, last) and not native_in(arch, gone)
    assert REGISTRY[arch][0][-1][1] == gone
    assert bool(REGISTRY[arch][1]) == backend


def test_llama_served_by_every_release():
    # "LlamaForCausalLM": ("llama", "LlamaForCausalLM") in 0.11.0's, 0.20.0's and 0.33.0's registry
    assert REGISTRY["LlamaForCausalLM"] == ((("0.11.0", None),), ())
    for release in list(RELEASES) + [r.version for r in RULES] + ["0.33.5"]:
        s = check("LlamaForCausalLM", release)
        assert s.served is True and s.by == "vllm" and s.reason is None, release


def test_check_messages():
    s = check("KimiLinearForCausalLM", "0.11")
    assert (s.served, s.release) == (False, "0.11.0")
    assert s.reason.startswith("vLLM 0.11.0 does not register KimiLinearForCausalLM (added in 0.11.1)")
    assert "refuse" in s.reason
    s = check("BambaForCausalLM", "0.33")
    assert s.served is False and "removed in 0.24.0" in s.reason and "0.11.0 to 0.23.0" in s.reason
    s = check("BambaForCausalLM", "0.23.0")
    assert s.served is True and s.reason is None
    s = check("Olmo2ForCausalLM", "0.26.0")
    assert (s.served, s.by) == (True, "transformers backend") and "Transformers backend" in s.reason
    s = check("GPTNeoForCausalLM", "0.20")  # in no registry (grep finds no GPTNeo key in 0.11.0, 0.33.0 or 0.34.0)
    assert s.served is False and s.reason.startswith("no vLLM release from 0.11.0 to 0.34.0 registers")
    assert check(None, "0.20").served is None  # a config without architectures: not checked
    assert check("KimiLinearForCausalLM", "0.10.2").served is None  # before the releases read


def test_model_keeps_architecture():
    assert load_model("kimi-linear-48b-a3b").architecture == "KimiLinearForCausalLM"
    assert load_model("llama-3.1-8b").architecture == "LlamaForCausalLM"


def _estimate(name: str, engine: str) -> dict:
    r = CliRunner().invoke(app, ["estimate", name, "-c", "8k", "--kv-memory", "20GiB", "--engine", engine,
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("name, engine, served, words", [
    ("kimi-linear-48b-a3b", "vllm@0.11.0", False, "does not register KimiLinearForCausalLM (added in 0.11.1)"),
    ("kimi-linear-48b-a3b", "vllm@0.11.1", True, None),
    ("gemma-4-31b", "vllm@0.18", False, "does not register Gemma4ForConditionalGeneration (added in 0.19.0)"),
    ("gemma-4-31b", "vllm@0.19", True, None),
    ("bamba-9b", "vllm@0.24.0", False, "does not register BambaForCausalLM (removed in 0.24.0"),
    ("bamba-9b", "vllm", False, "vLLM 0.34.0 does not register BambaForCausalLM"),  # --engine vllm = 0.34
    ("minimax-text-01", "vllm@0.33", False, "does not register MiniMaxText01ForCausalLM"),
    ("llama-3.1-8b", "vllm@0.11", True, None),
    ("llama-3.1-8b", "vllm", True, None),
])
def test_estimate_note(name, engine, served, words):
    doc = _estimate(name, engine)
    e = doc["engine"]
    assert e["served"] is served and doc["model"]["architecture"] == e["architecture"]
    assert e["num_blocks"] > 0  # the accounting still answers
    notes = [n for n in e["notes"] if "register" in n]
    if words is None:
        assert notes == [] and e["served_reason"] is None
    else:
        assert len(notes) == 1 and words in notes[0] and e["served_reason"] == notes[0]


# ---- the generator script ----------------------------------------------------------------

def _script():
    return load_script("vllm_registry_table")


def _wheel(root: Path, version: str, registry: str) -> None:
    pkg = root / f"s{version}" / "vllm"
    (pkg / "model_executor" / "models").mkdir(parents=True)
    (pkg / "_version.py").write_text(f"__version__ = version = '{version}'\n")
    (pkg / "model_executor" / "models" / "registry.py").write_text(textwrap.dedent(registry))


def test_script_reads_a_registry(tmp_path):
    # two made-up releases: A native in both, B native then Transformers-backend, C added in the second,
    # E an embedding model; the comprehension over the text models (filtered) adds no new key
    _wheel(tmp_path, "0.11.0", """
        _TEXT_GENERATION_MODELS = {"A": ("a", "A"), "B": ("b", "B")}
        _EMBEDDING_MODELS = {"E": ("e", "E"), **{k: (m, c) for k, (m, c) in _TEXT_GENERATION_MODELS.items() if c == "A"}}
        _TRANSFORMERS_SUPPORTED_MODELS = {}
        _TRANSFORMERS_BACKEND_MODELS = {"TransformersForCausalLM": ("transformers", "TransformersForCausalLM")}
        _VLLM_MODELS = {**_TEXT_GENERATION_MODELS, **_EMBEDDING_MODELS, **_TRANSFORMERS_SUPPORTED_MODELS,
                        **_TRANSFORMERS_BACKEND_MODELS}
        _PREVIOUSLY_SUPPORTED_MODELS = {"Z": "0.10.0"}
    """)
    _wheel(tmp_path, "0.12.0", """
        _TEXT_GENERATION_MODELS = {"A": ("a", "A"), "C": ("c", "C")}
        _TRANSFORMERS_SUPPORTED_MODELS = {"B": ("transformers", "TransformersForCausalLM")}
        _TRANSFORMERS_BACKEND_MODELS = {"TransformersForCausalLM": ("transformers", "TransformersForCausalLM")}
        _VLLM_MODELS = {**_TEXT_GENERATION_MODELS, **_TRANSFORMERS_SUPPORTED_MODELS, **_TRANSFORMERS_BACKEND_MODELS}
    """)
    (tmp_path / "s0.9.2" / "vllm").mkdir(parents=True)  # older than 0.11.0: ignored
    (tmp_path / "s0.9.2" / "vllm" / "_version.py").write_text("__version__ = version = '0.9.2'\n")
    releases, table = _script().build(tmp_path)
    assert releases == ["0.11.0", "0.12.0"]
    assert table["A"] == {"native": [("0.11.0", None)], "transformers": []}
    assert table["B"] == {"native": [("0.11.0", "0.12.0")], "transformers": [("0.12.0", None)]}
    assert table["C"] == {"native": [("0.12.0", None)], "transformers": []}
    assert table["E"] == {"native": [("0.11.0", "0.12.0")], "transformers": []}
    assert "TransformersForCausalLM" not in table and "Z" not in table
    out = tmp_path / "gen.py"
    assert _script().main([str(tmp_path), "--out", str(out)]) == 0
    ns: dict = {}
    exec(out.read_text(), ns)
    assert ns["REGISTRY"]["B"] == ((("0.11.0", "0.12.0"),), (("0.12.0", None),))


@pytest.mark.skipif(not (VSRC / "s33" / "vllm").is_dir(), reason="the unpacked vLLM wheels are not on this machine")
def test_committed_table_is_current():
    releases, table = _script().build(VSRC)
    assert tuple(releases) == RELEASES
    assert {a: (tuple(map(tuple, e["native"])), tuple(map(tuple, e["transformers"]))) for a, e in table.items()} \
        == REGISTRY


def test_the_first_registered_name_of_several_architectures_is_served():
    # vLLM 0.11-0.33 ModelRegistry.inspect_model_cls tries every name of the config's architectures in order
    # (model_executor/models/registry.py); LlamaForCausalLM is native in every release read
    assert check(["NotAModelForCausalLM", "LlamaForCausalLM"], "0.33").served is True
    assert check(("LlamaForCausalLM", "NotAModelForCausalLM"), "0.11").served is True
    neither = check(["NotAModelForCausalLM", "AlsoNotAModel"], "0.33")
    assert neither.served is False and "NotAModelForCausalLM" in neither.reason
