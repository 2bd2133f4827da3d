"""--trust-remote-code for a tokenizer that ships its own code (kvplan/engines/remote_code.py check_tokenizer,
kvplan/sources.py tokenizer_code).

Facts read from the released sources:
- transformers 5.20.0 models/auto/tokenization_auto.py, AutoTokenizer.from_pretrained: the class comes from
  tokenizer_config.json's auto_map["AutoTokenizer"] (a [slow, fast] pair; a list auto_map is the legacy form of
  the pair itself); with remote code it loads pair[1] when that is not None, else pair[0], and only when
  trust_remote_code is set (dynamic_module_utils.resolve_trust_remote_code raises "Please pass the argument
  `trust_remote_code=True`" when transformers has no class of its own for it).
- vLLM 0.33.0 vllm/tokenizers/hf.py CachedHfTokenizer.from_pretrained calls AutoTokenizer with the server's
  trust_remote_code; vllm/tokenizers/registry.py bypasses AutoTokenizer (TokenizersBackend) for the model_types
  of _MODEL_TYPES_WITH_INCORRECT_TOKENIZER_CLASS, internlm2 among them.
- SGLang 0.5.23 srt/utils/hf_transformers/tokenizer.py get_tokenizer calls AutoTokenizer the same way, with no
  such bypass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hub_server import HubServer
from kvplan.cli.app import app
from kvplan.engines.remote_code import check_tokenizer
from kvplan.sources import load_model, tokenizer_code

SPECS = Path(__file__).resolve().parents[1] / "model_specs"
QWEN = json.loads((SPECS / "qwen2.5-7b.json").read_text())  # qwen2: transformers' own config class, no auto_map


@pytest.mark.parametrize("tokenizer_config, code", [
    ({"auto_map": {"AutoTokenizer": ["tokenization_x.XTokenizer", None]}}, "tokenization_x.XTokenizer"),
    # the fast class wins where the pair names one (transformers 5 prefers it)
    ({"auto_map": {"AutoTokenizer": ["tok.Slow", "tok_fast.Fast"]}}, "tok_fast.Fast"),
    ({"auto_map": ["tok.Slow", None]}, "tok.Slow"),  # the legacy list form
    ({"auto_map": {"AutoConfig": "configuration_x.XConfig"}}, ""),  # code for the config only
    ({"tokenizer_class": "Qwen2Tokenizer"}, ""),
    ({"auto_map": {"AutoTokenizer": [None, None]}}, ""),
])
def test_the_tokenizer_class_auto_map_names(tokenizer_config, code):
    assert tokenizer_code(tokenizer_config) == code


def _folder(tmp_path: Path, tokenizer_config: str | None) -> Path:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(QWEN))
    if tokenizer_config is not None:
        (folder / "tokenizer_config.json").write_text(tokenizer_config)
    return folder


def _emit(model: str, engine: str = "vllm") -> dict:
    r = CliRunner().invoke(app, ["estimate", model, "--emit", engine, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["emit"]


CUSTOM = json.dumps({"tokenizer_class": "XTokenizer",
                     "auto_map": {"AutoTokenizer": ["tokenization_x.XTokenizer", None]}})


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_folder_whose_tokenizer_ships_code_gets_the_flag(tmp_path, engine):
    out = _emit(str(_folder(tmp_path, CUSTOM)), engine)
    assert "--trust-remote-code" in out["argv"]
    assert any("tokenization_x.XTokenizer" in n and "tokenizer_config.json" in n for n in out["notes"])


def test_a_folder_with_a_plain_tokenizer_or_none_gets_no_flag(tmp_path):
    plain = _folder(tmp_path, json.dumps({"tokenizer_class": "Qwen2Tokenizer"}))
    assert "--trust-remote-code" not in _emit(str(plain))["argv"]
    (plain / "tokenizer_config.json").unlink()
    assert "--trust-remote-code" not in _emit(str(plain))["argv"]


def test_a_loose_json_does_not_read_a_tokenizer_config_beside_it(tmp_path):
    folder = _folder(tmp_path, CUSTOM)
    loose = folder / "qwen.json"  # not a checkpoint's config.json: the files beside it are not its own
    loose.write_text(json.dumps(QWEN))
    assert load_model(str(loose)).tokenizer_code is None
    assert load_model(str(folder / "config.json")).tokenizer_code == "tokenization_x.XTokenizer"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\xff\xfe"])
def test_a_broken_tokenizer_config_is_one_warning_and_the_plan_goes_on(tmp_path, text):
    folder = _folder(tmp_path, None)
    (folder / "tokenizer_config.json").write_bytes(text.encode("latin-1"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_model(str(folder))
    assert model.tokenizer_code is None
    said = [str(w.message) for w in caught if "tokenizer" in str(w.message)]
    assert len(said) == 1 and "tokenizer_config.json" in said[0] and "not checked" in said[0]


def test_vllm_033_never_runs_an_internlm2_tokenizer_s_code_and_sglang_does():
    assert check_tokenizer("tokenization_internlm2_fast.InternLM2TokenizerFast", None, "internlm2", "0.33.0").needed \
        is False
    # a release whose bypass list was not read keeps the flag; SGLang has no bypass
    assert check_tokenizer("tokenization_internlm2.InternLM2Tokenizer", None, "internlm2", "0.11").needed
    assert check_tokenizer("tokenization_internlm2.InternLM2Tokenizer", None, "internlm2", "0.5.23", "sglang").needed
    assert check_tokenizer("", None, "chatglm", "0.33.0").needed is False
    assert check_tokenizer(None, None, "chatglm", "0.33.0").needed is False


def test_a_config_with_code_the_engine_does_not_need_says_the_tokenizer_was_not_read():
    # mpt-7b-instruct: auto_map AutoConfig, model_type mpt, which transformers and vLLM 0.33 read; its
    # tokenizer_config.json is not recorded in model_specs/index.json
    out = _emit("mpt-7b-instruct", "vllm@0.33")  # the release whose registry and tokenizer list were read for it
    assert "--trust-remote-code" not in out["argv"]
    assert any("no tokenizer_config.json was read" in n for n in out["notes"])
    # a config without code of its own says nothing about the tokenizer
    assert not any("tokenizer" in n for n in _emit("llama-3.1-8b")["notes"])


def test_the_hub_tokenizer_config_is_read_beside_config_json(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1", KVPLAN_HUB_TIMEOUT="120")
    with HubServer({"acme/custom": QWEN, "acme/plain": QWEN},
                   files={"acme/custom": {"tokenizer_config.json": CUSTOM.encode()}}) as hub:
        env["HF_ENDPOINT"] = hub.url
        runs = {repo: subprocess.run([sys.executable, "-m", "kvplan", "estimate", repo, "--emit", "vllm",
                                      "--format", "json"], capture_output=True, text=True, timeout=120,
                                     cwd=tmp_path, env=env)
                for repo in ("acme/custom", "acme/plain")}
        asked = [p.split("?")[0] for m, p, _ in hub.requests if m == "GET"]
    for run in runs.values():
        assert run.returncode == 0, run.stderr
    assert "--trust-remote-code" in json.loads(runs["acme/custom"].stdout)["emit"]["argv"], runs["acme/custom"].stderr
    assert "--trust-remote-code" not in json.loads(runs["acme/plain"].stdout)["emit"]["argv"]
    assert asked.count("/acme/custom/resolve/main/tokenizer_config.json") == 1
