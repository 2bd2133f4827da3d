"""Higgs Audio v2 (higgs_audio_v2), read exactly.

HiggsAudioV2Config's defaults (transformers 5.25 models/higgs_audio_v2/configuration_higgs_audio_v2.py), written
out by hand; the cache follows HiggsAudioV2Attention (a Llama attention, DynamicCache, no window) and the
parameters HiggsAudioV2ForConditionalGeneration's modules. Figures worked out from those fields.
"""

from __future__ import annotations

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate

HIGGS = {"model_type": "higgs_audio_v2", "vocab_size": 128256, "hidden_size": 3072, "intermediate_size": 8192,
         "num_hidden_layers": 28, "num_attention_heads": 24, "num_key_value_heads": 8, "head_dim": 128,
         "num_codebooks": 8, "codebook_size": 1024}


def test_higgs_audio_v2_caches_llama_kv_on_every_layer():
    model = build_model(HIGGS, "higgs")
    assert model.reading == "exact"
    # 28 layers x K and V x 8 KV heads x 128 x 2 B (bf16) = 114,688 B a position (a text token, or an audio frame:
    # its 8 codebook tokens are summed into one embedding, HiggsAudioV2Embeddings)
    est = estimate(model, 4096)
    assert est.bytes_per_token == 28 * 2 * 8 * 128 * 2 == 114_688
    assert est.kv_bytes_per_sequence == 4096 * 114_688
    # a sparse config: HiggsAudioV2Config's 8 KV heads and head_dim 128; an explicit null head_dim is
    # hidden_size / heads (its __post_init__): 3,072 / 24 = 128 as well, so use 32 heads to tell: 96
    sparse = {k: v for k, v in HIGGS.items() if k not in ("num_key_value_heads", "head_dim")}
    assert estimate(build_model(sparse, "h"), 1).bytes_per_token == 114_688
    null = dict(sparse, num_attention_heads=32, head_dim=None)
    assert estimate(build_model(null, "h"), 1).bytes_per_token == 28 * 2 * 8 * 96 * 2


def test_higgs_audio_v2_parameters_count_both_mlps_and_the_audio_tables():
    # a layer: q 3,072 x 3,072, k and v 3,072 x 1,024 each, o 3,072 x 3,072 = 25,165,824; text and audio MLPs
    # 2 x 3 x 3,072 x 8,192 = 150,994,944; four RMSNorms 12,288: 176,173,056, x 28 = 4,932,845,568. embed_tokens
    # 128,256 x 3,072 = 394,002,432; audio embeddings and audio_lm_head 8 x 1,024 x 3,072 = 25,165,824 each; final
    # norm 3,072. transformers 5.25's meta count of HiggsAudioV2ForConditionalGeneration is the same 5,377,182,720
    per_layer = 2 * 3072 * 3072 + 2 * 3072 * 1024 + 2 * 3 * 3072 * 8192 + 4 * 3072
    assert per_layer == 176_173_056
    expected = 28 * per_layer + 128256 * 3072 + 2 * 8192 * 3072 + 3072
    assert expected == 5_377_182_720
    assert build_model(HIGGS, "higgs").param_count == expected
    # attention_bias: q, k, v and o biases, 3,072 + 2 x 1,024 + 3,072 a layer
    assert build_model(dict(HIGGS, attention_bias=True), "h").param_count == expected + 28 * 8192
