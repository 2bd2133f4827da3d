"""Cohere Compass (cohere_compass, its text model cohere_compass_text), read exactly.

The configs are CohereCompassTextConfig's defaults (transformers 5.25 models/cohere_compass/
configuration_cohere_compass.py), written out by hand. The cache follows vLLM 0.34 cohere_compass.py
CohereCompassAttention (K/V of num_key_value_heads x config.head_dim, which the config class sets to
hidden_size // heads; per_layer_sliding_window = sliding_window on 'sliding_attention' layers); tests/parity
checks it against the cache transformers builds. Figures worked out from the fields.
"""

from __future__ import annotations

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate

TEXT = {"model_type": "cohere_compass_text", "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528,
        "num_hidden_layers": 40, "num_attention_heads": 64, "sliding_window": 4096}


def test_cohere_compass_defaults_cache_every_token_of_64_heads():
    # no layer_types: every layer full (the sliding_window default is unused); num_key_value_heads None = the 64
    # heads, each 8,192 / 64 = 128 wide: 40 x K, V x 64 x 128 x 2 B = 1,310,720 B a token
    model = build_model({"model_type": "cohere_compass", "text_config": TEXT}, "compass")
    assert model.reading == "exact"
    assert estimate(model, 8192).kv_bytes_per_sequence == 8192 * 40 * 2 * 64 * 128 * 2
    # a sliding_window_pattern key is not read (CohereCompassTextConfig's branch for it never runs)
    legacy = build_model(dict(TEXT, sliding_window_pattern=4), "t")
    assert estimate(legacy, 1).bytes_per_token == 40 * 2 * 64 * 128 * 2


def test_cohere_compass_sliding_layers_keep_the_window_and_head_dim_is_hidden_over_heads():
    # every 4th layer full (10), the rest slide (30) on 8 KV heads; a head_dim key is overwritten: 128 wide
    types = ["full_attention" if i % 4 == 3 else "sliding_attention" for i in range(40)]
    model = build_model(dict(TEXT, layer_types=types, num_key_value_heads=8, head_dim=256), "t")
    per_token = 2 * 8 * 128 * 2  # 4,096 B a layer
    assert estimate(model, 32768).kv_bytes_per_sequence == 10 * 32768 * per_token + 30 * 4096 * per_token


def test_cohere_compass_parameters_are_the_tied_text_model():
    # embed_tokens 256,000 x 8,192 (tied head); a layer: q, k, v, o 4 x 8,192^2 (64 KV heads), gated MLP
    # 3 x 8,192 x 22,528, one weight-only LayerNorm 8,192; final norm 8,192
    per_layer = 4 * 8192 * 8192 + 3 * 8192 * 22528 + 8192
    assert build_model(TEXT, "t").param_count == 256000 * 8192 + 40 * per_layer + 8192 == 34_980_831_232
    # a tiny text model, hidden 64, 4 heads / 2 KV heads of 16, MLP 64, vocab 100: embed 6,400, a layer
    # 64 x (64 + 2 x 32) + 64 x 64 + 3 x 64 x 64 + 64 = 24,640, x 2, final norm 64: transformers 5.25's
    # CohereCompassForCausalLM holds the same 55,744
    tiny = {"model_type": "cohere_compass_text", "vocab_size": 100, "hidden_size": 64, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2}
    assert build_model(tiny, "t").param_count == 6400 + 2 * 24640 + 64 == 55_744
