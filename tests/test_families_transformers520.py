"""Model types transformers 5.20 lists for causal LM / image-text-to-text (models/auto/modeling_auto.py) that
kvplan now reads exactly or refuses by name.

No public config.json of GPT-SW3 with model_type gpt-sw3 (its checkpoints write gpt2) or of Kosmos-2 / Kosmos-2.5
was found with the search tools, so these tests use hand-written configs: GPT2Config's field names with
hand-picked sizes, and the Kosmos config classes' own defaults (transformers 5.20 configuration_kosmos2.py
Kosmos2TextConfig, configuration_kosmos2_5.py Kosmos2_5TextConfig, whose docstrings name
microsoft/kosmos-2-patch14-224 and microsoft/kosmos-2.5 as the checkpoints they describe). Expected bytes are
worked out by hand.
"""

from __future__ import annotations

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import KvplanError


def test_gpt_sw3_reads_as_gpt2():
    # transformers 5.20 configuration_auto.py maps gpt-sw3 to GPT2Config; vLLM 0.33 builds GPT2LMHeadModel (gpt2.py):
    # n_head heads of n_embd / n_head = 1024 / 16 = 64 wide, K and V in bf16 on 24 layers:
    # 2 x 24 x 16 x 64 x 2 = 98,304 B a token
    model = build_model({"model_type": "gpt-sw3", "architectures": ["GPT2LMHeadModel"], "n_layer": 24,
                         "n_embd": 1024, "n_head": 16, "n_positions": 2048, "vocab_size": 64000}, "gpt-sw3")
    assert model.reading == "exact"
    assert estimate(model, 2048).bytes_per_token == 2 * 24 * 16 * 64 * 2 == 98_304


def test_gpt_sw3_with_cross_attention_is_refused():
    with pytest.raises(KvplanError, match="cross-attention"):
        build_model({"model_type": "gpt-sw3", "n_layer": 2, "n_embd": 64, "n_head": 4, "add_cross_attention": True},
                    "gpt-sw3")


@pytest.mark.parametrize("model_type, text_type, per_token", [
    # Kosmos2TextConfig defaults: layers 24, attention_heads 32, embed_dim 2048 -> head 64 (KosmosTextAttention:
    # embed_dim // num_heads, K/V of embed_dim each): 2 x 24 x 32 x 64 x 2 = 196,608 B a token
    ("kosmos-2", "kosmos_2_text_model", 2 * 24 * 32 * 64 * 2),
    # Kosmos2_5TextConfig defaults: layers 24, attention_heads 16, embed_dim 1536 -> head 96:
    # 2 x 24 x 16 x 96 x 2 = 147,456 B a token
    ("kosmos-2.5", "kosmos_2_5_text_model", 2 * 24 * 16 * 96 * 2),
])
def test_kosmos_text_model_from_class_defaults(model_type, text_type, per_token):
    model = build_model({"model_type": model_type, "text_config": {"model_type": text_type}}, model_type)
    assert model.reading == "exact"
    assert len(model.layers) == 24
    assert estimate(model, 1024).bytes_per_token == per_token


def test_kosmos2_reads_its_own_field_names():
    # layers / attention_heads / embed_dim (Kosmos2TextConfig.attribute_map): 2 x 6 x 8 x (512 / 8 = 64) x 2
    model = build_model({"model_type": "kosmos-2", "text_config": {
        "model_type": "kosmos_2_text_model", "layers": 6, "attention_heads": 8, "embed_dim": 512}}, "kosmos-2")
    assert estimate(model, 1024).bytes_per_token == 2 * 6 * 8 * 64 * 2 == 12_288


def test_kosmos2_without_text_config_is_refused():
    # Kosmos2Config builds Kosmos2TextConfig() when text_config is absent, not from top-level fields
    with pytest.raises(KvplanError, match="text_config"):
        build_model({"model_type": "kosmos-2", "layers": 6}, "kosmos-2")


@pytest.mark.parametrize("model_type, words", [
    ("gemma4_assistant", "target model's K/V"),
    ("blt", "Byte Latent Transformer"),
    ("pi0", "vision-language-action"),
    ("evolla", "cross-attends"),
])
def test_refused_by_name(model_type, words):
    with pytest.raises(KvplanError, match=words):
        build_model({"model_type": model_type, "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64},
                    model_type)


def test_qwen2_and_qwen3_fill_their_config_classes_defaults():
    # transformers 5.20 configuration_qwen2.py / configuration_qwen3.py: num_key_value_heads = 32 when left out
    # (the query heads only when given as null), and Qwen3Config's head_dim = 128, which vLLM 0.33's
    # Qwen3Attention reads from the config; Qwen2Config has no head_dim (hidden / heads)
    from kvplan.configs import build_model
    from kvplan.core.estimate import estimate

    sparse = {"hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 64}
    qwen3 = build_model({**sparse, "model_type": "qwen3"}, "qwen3-sparse")
    assert estimate(qwen3, 16).bytes_per_token == 2 * 2 * 32 * 128 * 2  # layers x (K, V) x 32 x 128 x 2 B
    qwen2 = build_model({**sparse, "model_type": "qwen2"}, "qwen2-sparse")
    assert estimate(qwen2, 16).bytes_per_token == 2 * 2 * 32 * (4096 // 64) * 2
    given = build_model({**sparse, "model_type": "qwen3", "num_key_value_heads": 8, "head_dim": 64}, "qwen3-given")
    assert estimate(given, 16).bytes_per_token == 2 * 2 * 8 * 64 * 2
