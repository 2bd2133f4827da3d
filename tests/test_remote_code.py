"""--trust-remote-code in the emitted serve commands (kvplan/engines/remote_code.py).

Facts read from the released sources (benchmarks/remote_code_tables.py reads the same files):
- SGLang 0.5.23, sglang/srt/utils/hf_transformers/common.py: _CONFIG_REGISTRY holds ChatGLMConfig
  (model_type "chatglm"), InternVLChatConfig ("internvl_chat") and a DeepseekV3Config alias "kimi_k2"; it
  pins transformers==5.19.0, whose models/auto/auto_mappings.py has deepseek_v3 and llama but not internlm2,
  baichuan or chatglm.
- transformers' AutoConfig.from_pretrained (configuration_auto.py) runs auto_map's AutoConfig only with
  trust_remote_code, and uses its own class when the model_type is in CONFIG_MAPPING.
The vLLM side is tested in tests/test_emit_vllm.py.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.engines.remote_code import check


def emit_sglang(*args):
    r = CliRunner().invoke(app, ["estimate", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["emit"]


@pytest.mark.parametrize("model, needed", [
    ("internlm2.5-7b-chat", True),  # internlm2: auto_map, in neither table
    ("baichuan2-7b-chat", True),  # baichuan: auto_map, in neither table
    # config: auto_map, but SGLang registers ChatGLMConfig; tokenizer: its auto_map names ChatGLMTokenizer, code
    # the checkpoint ships (model_specs/index.json records it), so the flag is needed for the tokenizer
    ("chatglm3-6b", True),
    ("kimi-k2", True),  # config: SGLang's kimi_k2 alias; tokenizer: tokenization_kimi.TikTokenTokenizer
    ("deepseek-v3", False),  # auto_map, transformers' own DeepseekV3Config; no tokenizer code recorded
    ("llama-3.1-8b", False),
])
def test_sglang_trust_remote_code_where_the_config_or_tokenizer_needs_it(model, needed):
    out = emit_sglang(model, "--emit", "sglang")
    assert ("--trust-remote-code" in out["argv"]) is needed
    assert any("review that code" in n for n in out["notes"]) is needed


def test_the_config_alone_of_chatglm_and_kimi_k2_needs_no_flag():
    assert check("chatglm", True, "0.5.23", "sglang").needed is False
    assert check("kimi_k2", True, "0.5.23", "sglang").needed is False


def test_engines_differ_where_their_registries_do():
    # internvl_chat: SGLang 0.5.23 registers InternVLChatConfig, vLLM 0.33.0's _CONFIG_REGISTRY does not, and
    # transformers has no internvl_chat (its own InternVL is model_type "internvl")
    assert check("internvl_chat", True, "0.5.23", "sglang").needed is False
    assert check("internvl_chat", True, "0.33.0", "vllm").needed is True


def test_release_other_than_the_tables_is_unchecked_for_engine_only_types():
    out = check("kimi_k2", True, "0.5.9", "sglang")
    assert out.needed and "whether SGLang 0.5.9 does is not checked" in out.note
    # a transformers type needs nothing whatever the release
    assert check("llama", True, "0.5.9", "sglang") == check("llama", False, "0.11", "vllm")
    assert check("llama", True, "0.5.9", "sglang").needed is False
