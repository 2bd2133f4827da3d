"""Does SGLang serve the architecture? kvplan.engines.sglang_served over the generated
kvplan/engines/sglang_registry_data.py (benchmarks/sglang_registry_table.py)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.engines.sglang_registry_data import CONFIG_ARCHITECTURES, REGISTRY, RELEASES
from kvplan.engines.sglang_rules import RULES
from kvplan.engines.sglang_served import check
from benchmark_scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
PHI3V = str(ROOT / "tests" / "data" / "configs" / "phi-3-vision-128k-instruct.json")


def test_releases_are_the_modelled_ones():
    assert list(RELEASES) == list(RULES)  # 0.5.9 and 0.5.23, the releases sglang_rules models


@pytest.mark.parametrize("arch, releases", [
    # srt/models/llama.py: EntryClass = [LlamaForCausalLM, ...] in 0.5.9 and 0.5.23
    ("LlamaForCausalLM", ("0.5.9", "0.5.23")),
    # srt/models/deepseek_v2.py: EntryClass = [DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, DeepseekV32ForCausalLM]
    ("DeepseekV3ForCausalLM", ("0.5.9", "0.5.23")),
    # 0.5.23 srt/models/gemma4_mm.py: EntryClass = Gemma4ForConditionalGeneration; 0.5.9 has no gemma4*.py
    ("Gemma4ForConditionalGeneration", ("0.5.23",)),
    # 0.5.23 srt/models/dots3.py imports EntryClass's class from dots3_common/modeling.py (followed)
    ("Dots3NoteForCausalLM", ("0.5.23",)),
    # srt/models/transformers.py: the fallback class, in both
    ("TransformersForCausalLM", ("0.5.9", "0.5.23")),
    # srt/models/deepseek_vl2.py: EntryClass = DeepseekVL2ForCausalLM (not vLLM's DeepseekVLV2ForCausalLM)
    ("DeepseekVL2ForCausalLM", ("0.5.9", "0.5.23")),
])
def test_registered(arch, releases):
    assert REGISTRY[arch] == releases


@pytest.mark.parametrize("arch", [
    # grep -ril "telechat\|phi3v\|molmo\|ultravox\|skywork" sglang/srt/models finds no file in either release
    "TeleChat2ForCausalLM", "Phi3VForCausalLM", "MolmoForCausalLM", "UltravoxModel", "SkyworkR1VChatModel",
    "DeepseekVLV2ForCausalLM",  # vLLM's name: SGLang's registry has only DeepseekVL2ForCausalLM
])
def test_not_registered(arch):
    assert arch not in REGISTRY


def test_check():
    s = check("LlamaForCausalLM", "0.5.23")
    assert (s.served, s.by, s.release, s.reason) == (True, "sglang", "0.5.23", None)
    s = check("TeleChat2ForCausalLM", "0.5.23")
    assert s.served is False and s.by is None
    assert s.reason == ("SGLang 0.5.23 registers no TeleChat2ForCausalLM: transformers 5.19.0 (which it pins) has "
                        "no class TeleChat2ForCausalLM, so it would refuse the model unless config.json's auto_map "
                        "names an \"AutoModel\" class (not read) that its Transformers fallback can load; the "
                        "figures are what-if")
    s = check("Gemma4ForConditionalGeneration", "0.5.9")
    assert s.served is False and "registers no Gemma4ForConditionalGeneration (SGLang 0.5.23 does)" in s.reason
    assert check(None, "0.5.23").served is None and "not checked" in check(None, "0.5.23").reason
    assert check("LlamaForCausalLM", "0.4.0").served is None  # not a release read


def test_config_class_renames():
    # srt/configs/deepseekvl2.py DeepseekVL2Config (model_type "deepseek_vl_v2", in _CONFIG_REGISTRY) sets
    # self.architectures = ["DeepseekVL2ForCausalLM"] in __init__, whatever the checkpoint's config.json names
    assert CONFIG_ARCHITECTURES["deepseek_vl_v2"] == ("DeepseekVL2ForCausalLM", ("0.5.9", "0.5.23"))
    assert check("DeepseekVLV2ForCausalLM", "0.5.23", "deepseek_vl_v2").served is True
    assert check("DeepseekVLV2ForCausalLM", "0.5.23").served is False  # without its model_type


def _run(*args) -> dict:
    r = CliRunner().invoke(app, ["estimate", *args, "-c", "8k", "--kv-memory", "20GiB", "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("engine", ["sglang", "sglang@0.5.9"])
def test_estimate_and_emit_not_served(engine):
    # phi-3-vision-128k-instruct.json: architectures ["Phi3VForCausalLM"], which neither release registers
    doc = _run(PHI3V, "--engine", engine, "--emit", "sglang")
    e = doc["engine"]
    release = engine.partition("@")[2] or "0.5.23"
    assert (e["served"], e["served_by"], e["registry_release"]) == (False, None, release)
    # its auto_map has AutoModelForCausalLM but no "AutoModel", the one key resolve_transformers_arch loads
    assert e["served_reason"].startswith(f"SGLang {release} registers no Phi3VForCausalLM, and its Transformers "
                                         "fallback cannot load it either")
    assert e["notes"][0] == e["served_reason"] and e["max_total_num_tokens"] > 0  # still sized (what-if)
    assert doc["emit"]["served"] is False and doc["emit"]["notes"][0] == e["served_reason"]


def test_estimate_served_and_text():
    doc = _run("llama-3.1-8b", "--engine", "sglang", "--emit", "sglang")
    e = doc["engine"]
    assert (e["served"], e["served_by"], e["served_reason"]) == (True, "sglang", None)
    assert doc["emit"]["served"] is True and not any("register" in n for n in e["notes"])
    r = CliRunner().invoke(app, ["estimate", PHI3V, "-c", "8k", "--kv-memory", "20GiB", "--engine", "sglang"])
    assert r.exit_code == 0 and "note: SGLang 0.5.23 registers no Phi3VForCausalLM" in r.stdout


# ---- the generator script ----------------------------------------------------------------

def _script():
    return load_script("sglang_registry_table")


def _package(root: Path, version: str, files: dict[str, str]) -> Path:
    pkg = root / version / "sglang"
    for name, text in {"_version.py": f"__version__ = version = '{version}'\n", **files}.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(textwrap.dedent(text))
    return pkg


def test_script_reads_entry_classes(tmp_path):
    # made-up releases: a list, an alias (registered under the class's own name), an import, a sub-package
    # (skipped, as pkgutil.iter_modules with ispkg False skips it) and a config class that renames
    old = _package(tmp_path, "0.5.9", {"srt/models/a.py": "class A: pass\nclass B: pass\nEntryClass = [A, B]\n",
                                       "srt/models/sub/__init__.py": "class S: pass\nEntryClass = S\n"})
    new = _package(tmp_path, "0.5.23", {
        "srt/models/a.py": "class A: pass\nEntryClass = A\n",
        "srt/models/c.py": "class Real: pass\nC = Real\nEntryClass = [C]\n",
        "srt/models/d.py": "from sglang.srt.models.dcommon.modeling import Dee as D\nEntryClass = D\n",
        "srt/models/dcommon/modeling.py": "class Dee: pass\n",
        "srt/configs/x.py": ("class XConfig:\n    model_type = 'x'\n    def __init__(self):\n"
                             "        self.architectures = ['A']\n"),
    })
    releases, table, configs, without, unread = _script().build([new, old])
    assert releases == ["0.5.9", "0.5.23"]
    assert table == {"A": ["0.5.9", "0.5.23"], "B": ["0.5.9"], "Dee": ["0.5.23"], "Real": ["0.5.23"]}
    assert configs == {"x": ("A", ["0.5.23"])}
    # no class here defines a forward or has a base: the PP check is not read for any (tests/test_sglang_pp.py reads it)
    assert without == {} and unread == table
    text = _script().render(releases, table, configs, without, unread)
    assert "RELEASES = ('0.5.9', '0.5.23')" in text and "'B': ('0.5.9',)," in text


def test_script_refuses_a_duplicate(tmp_path):
    # SGLang asserts "Duplicated model implementation" when two modules register one name
    pkg = _package(tmp_path, "0.5.23", {"srt/models/a.py": "class A: pass\nEntryClass = A\n",
                                        "srt/models/b.py": "from sglang.srt.models.a import A\nEntryClass = [A]\n"})
    with pytest.raises(ValueError, match="A is also registered by a.py"):
        _script().build([pkg])


def test_sglang_serves_the_first_registered_name_of_several_architectures():
    # SGLang 0.5.23 ModelRegistry.resolve_model_cls (srt/models/registry.py) tries the first name, then every
    # name its registry has (_normalize_archs); LlamaForCausalLM is registered in 0.5.23 and 0.5.9
    assert check(["NotAModelForCausalLM", "LlamaForCausalLM"], "0.5.23", "llama").served is True
    neither = check(["NotAModelForCausalLM", "AlsoNotAModel"], "0.5.23", "llama")
    assert neither.served is False and "NotAModelForCausalLM" in neither.reason
