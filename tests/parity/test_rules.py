"""The parity rules and the cache count, on values worked out by hand (no model run)."""

from __future__ import annotations

import pytest

from kvplan.core.layers import LayerSpec, RecurrentState, TokenCache, TokenPolicy

from . import rules


def _kv(window=None, chunk=None):
    # 2 KV heads x head_dim 16: 2 * (16 + 16) = 64 elements per token
    return TokenCache("attention", heads=2, key_dim=16, value_dim=16,
                      policy=TokenPolicy(window_tokens=window, chunk_tokens=chunk))


def test_window_rule_is_w_minus_1():
    layer = LayerSpec(caches=(_kv(window=8),))
    ours, theirs, used = rules.explain("mistral", layer, 21, {})
    assert (ours, theirs) == (64 * 8, 64 * 7)  # kvplan keeps W = 8 tokens, transformers the last 7
    assert used == [rules.WINDOW_W_MINUS_1.name]
    # shorter than the window: both keep every token, the rule changes nothing
    assert rules.explain("mistral", layer, 5, {})[:2] == (64 * 5, 64 * 5)
    assert rules.explain("mistral", layer, 5, {})[2] == []


def test_cohere2_window_rule_is_w_plus_1_vs_w_minus_1():
    # sliding_window 8: kvplan (vLLM) keeps 8 + 1 = 9 tokens, transformers the last 8 - 1 = 7
    layer = LayerSpec(caches=(_kv(window=9),))
    ours, theirs, used = rules.explain("cohere2", layer, 21, {})
    assert (ours, theirs) == (64 * 9, 64 * 7) and used == [rules.COHERE2_WINDOW_PLUS_1.name]
    assert rules.explain("cohere2_moe", layer, 5, {})[:2] == (64 * 5, 64 * 5)


@pytest.mark.parametrize(("tokens", "ours", "theirs"), [(21, 5, 7), (16, 8, 7), (12, 4, 7), (3, 3, 3)])
def test_chunk_rule_is_a_formula_pair(tokens, ours, theirs):
    # C = 8: kvplan (n - 1) % 8 + 1, transformers min(n, 7)
    layer = LayerSpec(caches=(_kv(chunk=8),))
    assert rules.explain("llama4_text", layer, tokens, {})[:2] == (64 * ours, 64 * theirs)


def test_conv_rule_adds_one_column():
    # 64 channels, d_conv 4: kvplan 64 x 3 conv + 64 x 8 SSM; transformers 64 x 4 conv
    layer = LayerSpec(state=RecurrentState("mamba", conv_elements=64 * 3, ssm_elements=64 * 8))
    assert rules.explain("mamba", layer, 21, {"conv_kernel": 4})[:2] == (64 * 3 + 512, 64 * 4 + 512)
    # no kernel width in the config: no rule, the delta would stay and fail
    assert rules.explain("mamba", layer, 21, {})[:2] == (64 * 3 + 512, 64 * 3 + 512)


def test_model_specific_rules_stay_on_their_model():
    layer = LayerSpec(caches=(_kv(window=8),))
    assert rules.explain("gpt_neo", layer, 21, {})[:2] == (64 * 8, 64 * 21)  # transformers keeps every token
    full = LayerSpec(caches=(_kv(),))
    text = {"kv_lora_rank": 16, "qk_rope_head_dim": 8}
    assert rules.explain("minicpm3", full, 21, text)[:2] == (64 * 21, 24 * 21)  # latent 16 + rope key 8
    assert rules.explain("llama", full, 21, text)[:2] == (64 * 21, 64 * 21)


def test_falcon_broadcast_only_with_the_new_decoder(monkeypatch):
    monkeypatch.setattr(rules, "TRANSFORMERS_RELEASE", (5, 23, 0))
    layer = LayerSpec(caches=(_kv(),))  # 2 KV heads; 4 query heads broadcast in transformers
    new = {"new_decoder_architecture": True, "num_attention_heads": 4}
    assert rules.explain("falcon", layer, 21, new)[:2] == (64 * 21, 4 * 32 * 21)
    old = {"new_decoder_architecture": False, "num_attention_heads": 4}
    assert rules.explain("falcon", layer, 21, old)[:2] == (64 * 21, 64 * 21)


@pytest.mark.parametrize(("release", "theirs"), [((5, 24, 0), 4 * 32 * 21), ((5, 25, 0), 64 * 21),
                                                 ((5, 26, 1), 64 * 21), (None, 64 * 21)])
def test_falcon_broadcast_is_transformers_before_5_25(monkeypatch, release, theirs):
    # 5.24's _split_heads broadcasts K/V to the 4 query heads (4 x 32 elements a token); 5.25 caches the 2 KV heads
    monkeypatch.setattr(rules, "TRANSFORMERS_RELEASE", release)
    layer = LayerSpec(caches=(_kv(),))
    new = {"new_decoder_architecture": True, "num_attention_heads": 4}
    assert rules.explain("falcon", layer, 21, new)[:2] == (64 * 21, theirs)


def test_shared_layer_counts_nothing():
    layer = LayerSpec(caches=(_kv(),), shares_cache_of=0)
    assert rules.explain("gemma3n_text", layer, 21, {})[:2] == (0, 0)


def test_count_reads_a_real_cache_per_layer():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.cache_utils import DynamicCache, DynamicLayer, DynamicSlidingWindowLayer

    from . import harness

    cache = DynamicCache()
    cache.layers = [DynamicLayer(), DynamicSlidingWindowLayer(sliding_window=8)]
    kv = torch.zeros(1, 2, 21, 16)  # batch 1, 2 KV heads, 21 tokens, head_dim 16
    for i in range(2):
        cache.layers[i].update(kv, kv)
    counts, _ = harness.count_cache(cache, 2)
    assert counts == [2 * 2 * 21 * 16, 2 * 2 * 7 * 16]  # full layer: 21 tokens; sliding: the last 7
