"""Qwen2.5-Omni and Qwen3-Omni top-level checkpoints (model_type qwen2_5_omni / qwen3_omni_moe), read as vLLM 0.33
serves them: only the thinker is built (model_executor/models/registry.py maps Qwen2_5OmniModel,
Qwen2_5OmniForConditionalGeneration and Qwen3OmniMoeForConditionalGeneration to the *Thinker* classes, whose
hf_to_vllm_mapper drops the talker. / token2wav. / code2wav. weights), and its language model is built on
thinker_config.text_config (qwen2_5_omni_thinker.py: Qwen2ForCausalLM; qwen3_omni_moe_thinker.py:
Qwen3MoeLLMForCausalLM, a Qwen3MoeForCausalLM). So the cache is the thinker's text model's, the talker keeps
none, and the parameters counted are the text model's only (towers, talker and codec left out).

Expected values are worked out by hand from the config's numbers, in bf16 (2 bytes).

Configs (tests/data/configs/):
- qwen3-omni-30b-a3b-instruct-tf5-trimmed.json: Qwen/Qwen3-Omni-30B-A3B-Instruct's config as a public model
  report prints it after loading with transformers 5.7 (code index id 62494955826, its "完整配置" block, a
  Qwen3OmniMoeConfig repr), with the PreTrainedConfig boilerplate of the nested blocks (id2label, label2id,
  output_*, torchscript, tokenizer_class, pruned_heads, ...) left out; every model field kept as printed;
- qwen2.5-omni-7b-trimmed.json: Qwen/Qwen2.5-Omni-7B's config.json as a public inspection script's self-test
  quotes it (code index id 58758613434: transformers_version 4.50.0.dev0, the thinker's text_config reduced to
  hidden / layers / heads / KV heads / vocab, the talker's to its shape). No verbatim config.json of either
  checkpoint was found in the code index. The trimmed text_config leaves intermediate_size and
  tie_word_embeddings to transformers Qwen2_5OmniTextConfig's defaults (18944; True).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.configs.build import build_model, nested_text
from kvplan.core.estimate import estimate
from kvplan.engines import vllm_served
from kvplan.engines.sglang_rules import hf_text_config
from kvplan.errors import ConfigError

from kvplan_inprocess import kvplan

DATA = Path(__file__).parent / "data" / "configs"
QWEN3_OMNI = "qwen3-omni-30b-a3b-instruct-tf5-trimmed.json"
QWEN25_OMNI = "qwen2.5-omni-7b-trimmed.json"


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def _cli(path: Path, *args: str):
    return CliRunner().invoke(app, ["estimate", str(path), "--gpu", "h100", *args])


def _one_line_error(path: Path, *args: str) -> str:
    r = kvplan("estimate", str(path), "--gpu", "h100", *args)
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), r.stderr
    return lines[0]


# -- Qwen3-Omni ---------------------------------------------------------------------------------------------

def test_qwen3_omni_caches_the_thinker_text_model_only():
    model = build_model(_raw(QWEN3_OMNI), "qwen3-omni")
    assert model.reading == "exact" and model.family == "qwen3_omni_moe_text"
    assert model.config_model_type == "qwen3_omni_moe"
    assert len(model.layers) == 48
    # qwen3_moe.py Qwen3MoeAttention: K and V of num_key_value_heads x head_dim on every layer, no window:
    # 48 layers x 2 (K, V) x 4 KV heads x 128 x 2 B = 98,304 B per token
    assert estimate(model, 4096).bytes_per_token == 48 * 2 * 4 * 128 * 2 == 98_304
    # the talker's own decoder (talker_config.text_config: 20 layers, 2 KV heads of 128) adds nothing: vLLM does
    # not build it (it would be 20 x 2 x 2 x 128 x 2 = 20,480 B more per token)
    assert model.max_context_tokens == 65536


def test_qwen3_omni_counts_the_text_model_parameters():
    model = build_model(_raw(QWEN3_OMNI), "qwen3-omni")
    h, v, experts, top_k, moe_inter = 2048, 152064, 128, 8, 768
    attention = h * 32 * 128 + 2 * h * 4 * 128 + 32 * 128 * h  # q, k, v, o (no biases)
    norms = 2 * 128 + 2 * h  # q/k per-head RMSNorms, two layer norms
    expert = 3 * h * moe_inter  # gate, up, down
    router = h * experts
    embeddings = 2 * v * h  # tie_word_embeddings false: embed_tokens + lm_head
    total = 48 * (attention + norms + experts * expert + router) + embeddings + h  # + final norm
    active = 48 * (attention + norms + top_k * expert + router) + embeddings + h
    assert (model.param_count, model.active_param_count) == (total, active) == (30_532_646_912, 3_353_556_992)


def test_qwen3_omni_text_model_is_found_two_levels_down():
    raw = _raw(QWEN3_OMNI)
    # vLLM's hf_text_config (transformers Qwen3OmniMoeConfig.get_text_config -> thinker_config.get_text_config())
    assert nested_text(raw) is raw["thinker_config"]["text_config"]
    # SGLang 0.5.23 get_hf_text_config: thinker_config's text_config first
    assert hf_text_config(raw) is raw["thinker_config"]["text_config"]


# -- Qwen2.5-Omni -------------------------------------------------------------------------------------------

def test_qwen2_5_omni_caches_the_thinker_text_model_only():
    model = build_model(_raw(QWEN25_OMNI), "qwen2.5-omni")
    assert model.reading == "exact" and model.family == "qwen2_5_omni_text"
    # qwen2.py Qwen2Attention, no window (use_sliding_window false by default): 28 layers x 2 (K, V) x 4 KV heads
    # x 128 (3584 / 28) x 2 B = 57,344 B per token; the talker (24 layers, 4 KV heads) is not built
    assert estimate(model, 4096).bytes_per_token == 28 * 2 * 4 * 128 * 2 == 57_344


def test_qwen2_5_omni_parameters():
    raw = _raw(QWEN25_OMNI)
    h, inter, v = 3584, 18944, 152064  # intermediate_size from Qwen2_5OmniTextConfig's default
    attention = 2 * h * h + 2 * h * 512 + h + 2 * 512  # q, o; k, v (4 x 128); q/k/v biases (Qwen2Attention)
    layer = attention + 3 * h * inter + 2 * h
    tied = 28 * layer + v * h + h  # tie_word_embeddings: Qwen2_5OmniTextConfig's default True
    assert build_model(raw, "t").param_count == tied == 7_070_619_136
    raw["thinker_config"]["text_config"]["tie_word_embeddings"] = False
    # an LM head of its own: 7,615,616,512, Qwen2.5-7B's published total (the same text model)
    assert build_model(raw, "u").param_count == tied + v * h == 7_615_616_512


def test_qwen2_5_omni_thinker_read_whatever_its_model_type_says():
    # transformers Qwen2_5OmniConfig builds Qwen2_5OmniThinkerConfig(**thinker_config) whatever model_type it names
    raw = _raw(QWEN25_OMNI)
    raw["thinker_config"]["model_type"] = "something_else"
    assert estimate(build_model(raw, "t"), 4096).bytes_per_token == 57_344


def test_omni_without_thinker_config_is_refused():
    # without thinker_config the config classes build a default thinker, not the top-level fields: refused
    for name in (QWEN25_OMNI, QWEN3_OMNI):
        raw = {k: v for k, v in _raw(name).items() if k != "thinker_config"}
        with pytest.raises(ConfigError, match="keeps its text model under 'thinker_config', which the config lacks"):
            build_model(raw, "no-thinker")


def test_omni_thinker_without_text_config_is_refused():
    # Qwen2_5OmniThinkerConfig / Qwen3OmniMoeThinkerConfig build a default text model without text_config: refused
    for name, thinker in ((QWEN25_OMNI, "qwen2_5_omni_thinker"), (QWEN3_OMNI, "qwen3_omni_moe_thinker")):
        raw = _raw(name)
        del raw["thinker_config"]["text_config"]
        with pytest.raises(ConfigError, match=f"'{thinker}' keeps its text model under 'text_config'"):
            build_model(raw, "no-text")


def test_vllm_serves_the_omni_architectures():
    for arch in ("Qwen2_5OmniModel", "Qwen2_5OmniForConditionalGeneration", "Qwen3OmniMoeForConditionalGeneration"):
        assert vllm_served.check(arch, "0.33").served is True


# -- the CLI ------------------------------------------------------------------------------------------------

def test_cli_vllm_and_sglang(tmp_path):
    for name, per_token in ((QWEN3_OMNI, 98_304), (QWEN25_OMNI, 57_344)):
        r = _cli(DATA / name, "--engine", "vllm", "--format", "json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["bytes_per_token"] == per_token
    r = _cli(DATA / QWEN3_OMNI, "--engine", "sglang", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["bytes_per_token"] == 98_304


def test_cli_sglang_refuses_qwen2_5_omni_in_one_line():
    # SGLang 0.5.23's srt/models has qwen3_omni_moe.py but registers no Qwen2_5Omni* class
    line = _one_line_error(DATA / QWEN25_OMNI, "--engine", "sglang")
    assert "SGLang 0.5.23 has no Qwen2.5-Omni model" in line and "--engine vllm" in line


def test_cli_set_reaches_the_thinker_text_config():
    r = _cli(DATA / QWEN3_OMNI, "--engine", "vllm", "--set", "num_hidden_layers=10", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["bytes_per_token"] == 10 * 2 * 4 * 128 * 2 == 20_480
