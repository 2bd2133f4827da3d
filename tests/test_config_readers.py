"""Config-reading rules on small hand-made configs (each rule in one place)."""

from __future__ import annotations

import warnings

import pytest

from kvplan import estimate
from kvplan.configs import build_model
from kvplan.errors import ConfigError

BASE = dict(hidden_size=512, intermediate_size=1024, num_hidden_layers=6, num_attention_heads=8,
            num_key_value_heads=2, vocab_size=1000, max_position_embeddings=4096)
PER_LAYER_TOKEN = 2 * 2 * 64 * 2  # K and V, 2 KV heads, head_dim 512/8, bf16


def windows(cfg):
    return [c.policy.window_tokens for layer in build_model(cfg, "t").layers for c in layer.caches]


def test_llama_defaults_head_dim_from_hidden():
    m = build_model(dict(BASE, model_type="llama"), "t")
    assert estimate(m, 10).bytes_per_token == 6 * PER_LAYER_TOKEN


def test_explicit_head_dim_wins():
    m = build_model(dict(BASE, model_type="qwen3", head_dim=128), "t")
    assert estimate(m, 10).bytes_per_token == 6 * 2 * 2 * 128 * 2


def test_kv_heads_default_to_attention_heads():
    cfg = dict(BASE, model_type="llama")
    del cfg["num_key_value_heads"]
    assert estimate(build_model(cfg, "t"), 1).bytes_per_token == 6 * 2 * 8 * 64 * 2


def test_mistral_null_window_is_full():
    assert windows(dict(BASE, model_type="mistral", sliding_window=None)) == [None] * 6
    assert windows(dict(BASE, model_type="mistral", sliding_window=4096)) == [4096] * 6


def test_qwen_window_only_when_enabled_and_from_max_window_layers():
    cfg = dict(BASE, model_type="qwen2", sliding_window=1024, max_window_layers=4)
    assert windows(dict(cfg, use_sliding_window=False)) == [None] * 6
    assert windows(dict(cfg, use_sliding_window=True)) == [None, None, None, None, 1024, 1024]


def test_layer_types_win_over_family_rules():
    types = ["full_attention", "sliding_attention"] * 3
    cfg = dict(BASE, model_type="gemma2", sliding_window=256, layer_types=types)
    assert windows(cfg) == [None, 256] * 3  # gemma2's own rule would put the window on even layers
    assert windows(dict(BASE, model_type="gemma2", sliding_window=256)) == [256, None] * 3


def test_gemma3_pattern_and_nested_sparse_text_config():
    cfg = {"model_type": "gemma3", "text_config": {"num_hidden_layers": 12, "sliding_window": 512}}
    m = build_model(cfg, "t")
    # defaults fill the gaps: 4 KV heads x head_dim 256; (i+1) % 6 == 0 is global
    got = [c.policy.window_tokens for layer in m.layers for c in layer.caches]
    assert got == [512] * 5 + [None] + [512] * 5 + [None]
    assert estimate(m, 1).bytes_per_token == 12 * 2 * 4 * 256 * 2


def test_gemma3n_shared_layers_reuse_last_earlier_layer_of_same_type():
    types = (["sliding_attention"] * 4 + ["full_attention"]) * 2
    cfg = dict(BASE, model_type="gemma3n_text", num_hidden_layers=10, sliding_window=128,
               layer_types=types, num_kv_shared_layers=4)
    m = build_model(cfg, "t")
    owners = [layer.shares_cache_of for layer in m.layers]
    # layers 6..9 shared: 6,7,8 are sliding -> the last sliding layer before 6 is 5;
    # 9 is full -> the last full layer before 6 is 4
    assert owners == [None] * 6 + [5, 5, 5, 4]


def test_falcon_rules():
    cfg = dict(model_type="falcon", hidden_size=512, num_hidden_layers=2, num_attention_heads=8, vocab_size=10)
    assert estimate(build_model(dict(cfg, multi_query=True, num_kv_heads=8), "t"), 1).bytes_per_token == 2 * 2 * 1 * 64 * 2
    assert estimate(build_model(dict(cfg, multi_query=False), "t"), 1).bytes_per_token == 2 * 2 * 8 * 64 * 2
    new = dict(cfg, new_decoder_architecture=True, num_kv_heads=4, multi_query=True)
    assert estimate(build_model(new, "t"), 1).bytes_per_token == 2 * 2 * 4 * 64 * 2


def test_mla_ignores_num_key_value_heads():
    cfg = dict(BASE, model_type="deepseek_v3", num_key_value_heads=8, kv_lora_rank=64, qk_rope_head_dim=16,
               qk_nope_head_dim=32, v_head_dim=32, q_lora_rank=None)
    assert estimate(build_model(cfg, "t"), 1).bytes_per_token == 6 * (64 + 16) * 2


def test_qwen3_next_interval_and_layer_types():
    cfg = dict(BASE, model_type="qwen3_next", num_hidden_layers=8, full_attention_interval=4,
               linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=8)
    m = build_model(cfg, "t")
    assert [bool(layer.caches) for layer in m.layers] == [False, False, False, True] * 2
    types = ["full_attention"] * 2 + ["linear_attention"] * 6
    m2 = build_model(dict(cfg, layer_types=types), "t")
    assert [bool(layer.caches) for layer in m2.layers] == [True, True] + [False] * 6


def test_unknown_model_type_with_standard_fields_warns():
    with pytest.warns(UserWarning, match="unknown model_type 'mystery'"):
        m = build_model(dict(BASE, model_type="mystery"), "t")
    assert estimate(m, 1).bytes_per_token == 6 * PER_LAYER_TOKEN


@pytest.mark.parametrize("field, value", [("num_attention_groups", 1), ("share_q_dim", 2048)])
def test_unknown_step_fields_are_refused_not_guessed(field, value):
    """Step-3's text model gives its KV heads as num_attention_groups (1 head of 256 in vLLM's step3_text.py);
    read as a guess it was plain multi-head attention, 64 times too large."""
    with pytest.raises(ConfigError, match=f"carries '{field}'"):
        build_model(dict(BASE, model_type="step3_text_unknown", **{field: value}), "t")


def test_unknown_model_type_without_fields_names_the_field():
    with pytest.raises(ConfigError, match="lacks 'num_attention_heads'"):
        build_model({"model_type": "mystery", "num_hidden_layers": 2, "hidden_size": 64}, "t")


@pytest.mark.parametrize(
    "change, message",
    [
        ({"num_hidden_layers": None}, "has no 'num_hidden_layers'"),
        ({"num_hidden_layers": 0}, "'num_hidden_layers' must be >= 1"),
        ({"num_hidden_layers": 2.5}, "'num_hidden_layers' must be an integer"),
        ({"num_hidden_layers": -3}, "'num_hidden_layers' must be >= 1"),
        ({"num_key_value_heads": 3}, "not a multiple"),
        ({"sliding_window": -1}, "'sliding_window' must be >= 1"),
    ],
)
def test_bad_fields_name_the_field_and_model_type(change, message):
    cfg = dict(BASE, model_type="mistral")
    cfg.update(change)
    cfg = {k: v for k, v in cfg.items() if v is not None}
    with pytest.raises(ConfigError, match=message) as info:
        build_model(cfg, "t")
    if "must" in message or "has no" in message:
        assert "mistral" in str(info.value)


def test_missing_model_type():
    with pytest.raises(ConfigError, match="no 'model_type'"):
        build_model({"hidden_size": 1}, "t")


def test_no_warning_for_known_types():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_model(dict(BASE, model_type="llama"), "t")
