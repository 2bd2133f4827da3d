"""vLLM 0.34.0's model registry in kvplan's table (kvplan/engines/vllm_registry_data.py), the served check and
`--emit vllm` for it, and the generator's --base mode that added it.

Every expectation below was read by hand from vllm/model_executor/models/registry.py of the 0.33.0 and 0.34.0
sdists (diff of the two files, 2026-12-07):
- 0.34 moves GemmaForCausalLM, OlmoeForCausalLM, StableLmForCausalLM (text) and AriaForConditionalGeneration
  (multimodal) out of _TEXT_GENERATION_MODELS / _MULTIMODAL_MODELS into _TRANSFORMERS_SUPPORTED_MODELS
  (("transformers", "TransformersForCausalLM" / "TransformersMoEForCausalLM" / "TransformersMultiModalMoEForCausalLM"));
- it drops KeyeForConditionalGeneration and KeyeVL1_5ForConditionalGeneration (now in _PREVIOUSLY_SUPPORTED_MODELS
  with "0.33.0") and the draft models PEagleDraftModel, PeagleLlamaForCausalLM, PeagleQwen3ForCausalLM;
- it adds Lfm3ForCausalLM, MistralLarge4ForCausalLM, RicursiveForCausalLM, UnlimitedOCR2TextForCausalLM,
  ZayaForCausalLM (text), UltraVBertModel (late interaction, colultravbert), KimiK31ForConditionalGeneration,
  Lfm3VlForConditionalGeneration, Lfm3AudioForConditionalGeneration, MingV3ASRForConditionalGeneration,
  Nemotron3_5TranscribeForConditionalGeneration, CanaryForConditionalGeneration (multimodal / speech) and the
  drafts DFlash2RicursiveDraftModel, DSparkMiniMaxDraftModel, MistralLarge4DSparkModel,
  Nemotron3_5TranscribeMTPModel;
- Qwen3_5* only change module ("qwen3_5" -> "vllm.models.qwen3_5"): still native.
vLLM 0.34's Transformers backend (registry.py ModelRegistry.inspect_model_cls / resolve_model_cls): an
architecture listed in _TRANSFORMERS_SUPPORTED_MODELS is a key of the registry's models, so the default
model_impl "auto" loads it through the backend without a flag (docs/models/supported_models.md: "Some models are
supported only via the Transformers modeling backend ... you will see no warning"); --model-impl transformers is
only for preferring the backend over a native implementation.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kvplan.capacity.hardware import make_deployment
from kvplan.engines import vllm_flags
from kvplan.engines.vllm_registry_data import REGISTRY, RELEASES
from kvplan.engines.vllm_served import check
from kvplan.planner import evaluate
from kvplan.render import Report
from kvplan.sources import load_model
from benchmark_scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
GIB = 1024**3


def test_0_34_is_the_newest_release_read():
    # 0.11.0 .. 0.33.0 (35 releases) and 0.34.0
    assert RELEASES[-2:] == ("0.33.0", "0.34.0") and len(RELEASES) == 36


@pytest.mark.parametrize("arch, backend_class", [
    ("GemmaForCausalLM", "TransformersForCausalLM"),
    ("OlmoeForCausalLM", "TransformersMoEForCausalLM"),
    ("StableLmForCausalLM", "TransformersForCausalLM"),
    ("AriaForConditionalGeneration", "TransformersMultiModalMoEForCausalLM"),
])
def test_moved_to_the_transformers_backend_in_0_34(arch, backend_class):
    # native in every release from 0.11.0 to 0.33.0, _TRANSFORMERS_SUPPORTED_MODELS from 0.34.0
    assert REGISTRY[arch] == ((("0.11.0", "0.34.0"),), (("0.34.0", None),))
    assert (check(arch, "0.33").served, check(arch, "0.33").by) == (True, "vllm")
    s = check(arch, "0.34")
    assert (s.served, s.by, s.release) == (True, "transformers backend", "0.34.0")
    assert s.reason.startswith(f"vLLM 0.34.0 serves {arch} only through its Transformers backend (native 0.11.0 "
                               "to 0.33.0)")
    assert "no flag needed" in s.reason  # model_impl auto picks the backend for a listed architecture


@pytest.mark.parametrize("arch, first", [
    ("KeyeForConditionalGeneration", "0.11.0"),
    ("KeyeVL1_5ForConditionalGeneration", "0.11.0"),
    ("PEagleDraftModel", "0.22.0"),
    ("PeagleLlamaForCausalLM", "0.22.0"),
    ("PeagleQwen3ForCausalLM", "0.24.0"),
])
def test_removed_in_0_34(arch, first):
    assert REGISTRY[arch] == (((first, "0.34.0"),), ())
    assert check(arch, "0.33.0").served is True
    s = check(arch, "0.34")
    assert s.served is False and s.by is None
    # vLLM 0.34 itself: "Model architecture KeyeForConditionalGeneration was supported in vLLM until v0.33.0"
    assert s.reason.startswith(f"vLLM 0.34.0 does not register {arch} (removed in 0.34.0; native {first} to 0.33.0)")


@pytest.mark.parametrize("arch", [
    "Lfm3ForCausalLM", "MistralLarge4ForCausalLM", "RicursiveForCausalLM", "UnlimitedOCR2TextForCausalLM",
    "ZayaForCausalLM", "UltraVBertModel", "KimiK31ForConditionalGeneration", "Lfm3VlForConditionalGeneration",
    "Lfm3AudioForConditionalGeneration", "MingV3ASRForConditionalGeneration",
    "Nemotron3_5TranscribeForConditionalGeneration", "CanaryForConditionalGeneration",
    "DFlash2RicursiveDraftModel", "DSparkMiniMaxDraftModel", "MistralLarge4DSparkModel",
    "Nemotron3_5TranscribeMTPModel",
])
def test_added_in_0_34(arch):
    assert REGISTRY[arch] == ((("0.34.0", None),), ())
    assert check(arch, "0.34").served is True and check(arch, "0.34").reason is None
    old = check(arch, "0.33")
    assert old.served is False and old.reason.startswith(f"vLLM 0.33.0 does not register {arch} (added in 0.34.0)")


def test_module_moves_keep_qwen3_5_native():
    # "Qwen3_5ForCausalLM": ("qwen3_5", ...) in 0.33.0, ("vllm.models.qwen3_5", ...) in 0.34.0: native both times
    for arch in ("Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MTP"):
        assert REGISTRY[arch][0][-1][1] is None and REGISTRY[arch][1] == ()
        assert check(arch, "0.34").by == "vllm"


def test_earlier_backend_moves_unchanged():
    # Olmo2ForCausalLM: native to 0.25.1, Transformers backend from 0.26.0, still listed in 0.34.0
    assert REGISTRY["Olmo2ForCausalLM"] == ((("0.11.0", "0.26.0"),), (("0.26.0", None),))


def _emit(name: str, release: str) -> dict:
    result = evaluate(load_model(name), [], 8192, 1, make_deployment(None, kv_memory_bytes=10 * GIB))
    report = Report({})
    vllm_flags.add_to_report(report, result, [], "bf16", 8192, release=release)
    return report.data["emit"]


@pytest.mark.parametrize("name, arch", [("gemma-7b", "GemmaForCausalLM"), ("stablelm-2-1.6b", "StableLmForCausalLM")])
def test_emit_for_a_transformers_backend_model_adds_no_flag(name, arch):
    native = _emit(name, "0.33.0")
    assert native["served"] is True and not any("Transformers backend" in n for n in native["notes"])
    moved = _emit(name, "0.34.0")
    assert moved["served"] is True
    assert moved["argv"] == native["argv"] and not any(a.startswith("--model-impl") for a in moved["argv"])
    assert moved["notes"][0].startswith(f"vLLM 0.34.0 serves {arch} only through its Transformers backend")


def test_emit_for_a_removed_architecture_says_so():
    # a Keye-VL-1.5 config (KeyeVL1_5Config, hand-written as in tests/test_vl_wrappers_vla.py): served by 0.33,
    # removed in 0.34
    from kvplan.configs.build import build_model

    model = build_model({"model_type": "KeyeVL1_5", "architectures": ["KeyeVL1_5ForConditionalGeneration"],
                         "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
                         "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
                         "vocab_size": 151936}, "keye")
    result = evaluate(model, [], 8192, 1, make_deployment(None, kv_memory_bytes=10 * GIB))
    for release, served in (("0.33.0", True), ("0.34.0", False)):
        report = Report({})
        vllm_flags.add_to_report(report, result, [], "bf16", 8192, release=release)
        assert report.data["emit"]["served"] is served
    assert report.data["emit"]["notes"][0].startswith(
        "vLLM 0.34.0 does not register KeyeVL1_5ForConditionalGeneration (removed in 0.34.0; native 0.11.0 to "
        "0.33.0)")


# ---- the generator's --base mode --------------------------------------------------------------------------

def _script():
    return load_script("vllm_registry_table")


def _release(root: Path, version: str, registry: str) -> None:
    pkg = root / f"s{version}" / "vllm"
    (pkg / "model_executor" / "models").mkdir(parents=True)
    (pkg / "_version.py").write_text(f"__version__ = version = '{version}'\n")
    (pkg / "model_executor" / "models" / "registry.py").write_text(textwrap.dedent(registry))


def test_base_mode_adds_one_release(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    # 0.11.0: A and B native; 0.12.0: A native, B Transformers backend
    _release(old, "0.11.0", """
        _TEXT_GENERATION_MODELS = {"A": ("a", "A"), "B": ("b", "B")}
        _VLLM_MODELS = {**_TEXT_GENERATION_MODELS}
    """)
    _release(old, "0.12.0", """
        _TEXT_GENERATION_MODELS = {"A": ("a", "A")}
        _TRANSFORMERS_SUPPORTED_MODELS = {"B": ("transformers", "TransformersForCausalLM")}
        _VLLM_MODELS = {**_TEXT_GENERATION_MODELS, **_TRANSFORMERS_SUPPORTED_MODELS}
    """)
    # 0.13.0: A gone, C added, B still through the backend
    _release(new, "0.13.0", """
        _TEXT_GENERATION_MODELS = {"C": ("c", "C")}
        _TRANSFORMERS_SUPPORTED_MODELS = {"B": ("transformers", "TransformersForCausalLM")}
        _VLLM_MODELS = {**_TEXT_GENERATION_MODELS, **_TRANSFORMERS_SUPPORTED_MODELS}
    """)
    script = _script()
    base = tmp_path / "base.py"
    assert script.main([str(old), "--out", str(base)]) == 0
    out = tmp_path / "out.py"
    assert script.main([str(new), "--base", str(base), "--out", str(out)]) == 0
    ns: dict = {}
    exec(out.read_text(), ns)
    assert ns["RELEASES"] == ("0.11.0", "0.12.0", "0.13.0")
    assert ns["REGISTRY"] == {"A": ((("0.11.0", "0.13.0"),), ()),
                              "B": ((("0.11.0", "0.12.0"),), (("0.12.0", None),)),
                              "C": ((("0.13.0", None),), ())}
    # the same as reading all three releases at once
    _release(old, "0.13.0", (new / "s0.13.0" / "vllm" / "model_executor" / "models" / "registry.py").read_text())
    whole = tmp_path / "whole.py"
    assert script.main([str(old), "--out", str(whole)]) == 0
    assert whole.read_text() == out.read_text()


def test_base_mode_stops_when_a_release_reads_otherwise(tmp_path, capsys):
    old, new = tmp_path / "old", tmp_path / "new"
    _release(old, "0.11.0", """
        _TEXT_GENERATION_MODELS = {"A": ("a", "A")}
        _VLLM_MODELS = {**_TEXT_GENERATION_MODELS}
    """)
    _release(new, "0.11.0", """
        _TEXT_GENERATION_MODELS = {"Z": ("z", "Z")}
        _VLLM_MODELS = {**_TEXT_GENERATION_MODELS}
    """)
    script = _script()
    base = tmp_path / "base.py"
    assert script.main([str(old), "--out", str(base)]) == 0
    assert script.main([str(new), "--base", str(base)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "release 0.11.0 reads otherwise than in" in err[0]
    assert script.main([str(new), "--base", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_committed_table_round_trips_through_base(tmp_path):
    # an empty ROOT with --base rewrites the committed table byte for byte
    script = _script()
    out = tmp_path / "out.py"
    table = ROOT / "kvplan" / "engines" / "vllm_registry_data.py"
    (tmp_path / "empty").mkdir()
    assert script.main([str(tmp_path / "empty"), "--base", str(table), "--out", str(out)]) == 0
    assert out.read_text() == table.read_text()


# ---- --trust-remote-code with vLLM 0.34's config classes (kvplan/engines/remote_code_data.py) -----------------
# Read by hand from vllm/transformers_utils/config.py _CONFIG_REGISTRY of both sdists: 0.34.0 adds kimi_k31
# (KimiK3Config), lfm3, lfm3_audio, lfm3_vl, ming_v3_asr, nemo_speechlm and ricursive, and drops musespark1x_text,
# moss_transcribe_diarize and qwen3_asr; vLLM 0.34.0 requires transformers<5.23.0 (PKG-INFO), so 5.22.2 is read.
# vllm/tokenizers/registry.py _MODEL_TYPES_WITH_INCORRECT_TOKENIZER_CLASS is the same set in both releases.

from kvplan.engines.remote_code import check as remote_check, check_tokenizer, table_for  # noqa: E402


@pytest.mark.parametrize("model_type", ["ricursive", "kimi_k31", "lfm3"])
def test_0_34_reads_its_new_config_classes_without_remote_code(model_type):
    assert remote_check(model_type, True, "0.34.0").needed is False
    # vLLM 0.33.0 had no class for them and transformers 5.20.0 none either: the checkpoint's own code runs
    old = remote_check(model_type, True, "0.33.0")
    assert old.needed is True and "transformers 5.20.0 and vLLM 0.33.0" in old.note


def test_a_config_class_0_34_dropped_needs_the_checkpoints_code():
    # musespark1x_text: vLLM 0.33.0 registers MuseSpark1xTextConfig, 0.34.0 does not, transformers 5.22.2 neither
    assert remote_check("musespark1x_text", True, "0.33.0").needed is False
    out = remote_check("musespark1x_text", False, "0.34.0")
    assert out.needed is False and "vLLM cannot read it as it is" in out.note


def test_each_release_reads_its_own_table():
    assert table_for("0.33", "vllm")[:1] == ("0.33.0",) and table_for("0.33", "vllm")[2] is True
    assert table_for("0.34.0", "vllm")[0] == "0.34.0" and table_for("0.34.0", "vllm")[1][0] == "5.22.2"
    # a release with no table: the newest, flagged as not the one asked for
    assert table_for("0.35.0", "vllm")[0] == "0.34.0" and table_for("0.35.0", "vllm")[2] is False


def test_internlm2_tokenizer_bypass_holds_in_0_34():
    # internlm2 is in _MODEL_TYPES_WITH_INCORRECT_TOKENIZER_CLASS of 0.33.0 and 0.34.0: no tokenizer code runs
    code = "tokenization_internlm2_fast.InternLM2TokenizerFast"
    for release in ("0.33.0", "0.34.0"):
        assert check_tokenizer(code, None, "internlm2", release).needed is False
    assert check_tokenizer(code, None, "internlm2", "0.32.0").needed is True  # no table of 0.32: flag kept


def test_remote_code_tables_keep_earlier_releases(tmp_path):
    # --base with no engine rewrites the committed module byte for byte (every release's table kept)
    mod = load_script("remote_code_tables")
    data = ROOT / "kvplan" / "engines" / "remote_code_data.py"
    out = tmp_path / "out.py"
    assert mod.main(["--base", str(data), "--out", str(out)]) == 0
    assert out.read_text() == data.read_text()


# ---- through the CLI, now that --engine vllm is 0.34 ----------------------------------------------------------

def _cli_emit(*args: str) -> dict:
    import json

    from typer.testing import CliRunner

    from kvplan.cli.app import app

    r = CliRunner().invoke(app, ["estimate", *args, "--context", "8k", "--kv-memory", "10GiB", "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_cli_gemma_through_the_transformers_backend_from_0_34():
    new = _cli_emit("gemma-7b", "--emit", "vllm@0.34")
    old = _cli_emit("gemma-7b", "--emit", "vllm@0.33")
    assert new["emit"]["served"] is True and old["emit"]["served"] is True
    assert "--model-impl" not in " ".join(new["emit"]["argv"])
    said = [n for n in new["emit"]["notes"] if "Transformers backend" in n]
    assert len(said) == 1 and said[0].startswith("vLLM 0.34.0 serves GemmaForCausalLM only through")
    assert not any("Transformers backend" in n for n in old["emit"]["notes"])


def test_cli_keye_under_engine_vllm_0_34(tmp_path):
    import json

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "KeyeVL1_5", "architectures": ["KeyeVL1_5ForConditionalGeneration"],
                                "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
                                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
                                "vocab_size": 151936}))
    engine = _cli_emit(str(path), "--engine", "vllm@0.34")["engine"]
    assert engine["served"] is False
    assert engine["served_reason"].startswith("vLLM 0.34.0 does not register KeyeVL1_5ForConditionalGeneration "
                                              "(removed in 0.34.0; native 0.11.0 to 0.33.0)")
    assert _cli_emit(str(path), "--engine", "vllm@0.33")["engine"]["served"] is True
