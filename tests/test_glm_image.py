"""GLM-Image (glm_image, its generator glm_image_text), read exactly.

The configs are GlmImageConfig's / GlmImageTextConfig's defaults (transformers 5.25
models/glm_image/configuration_glm_image.py), written out by hand. The cache follows
GlmImageTextAttention (modeling_glm_image.py) and SGLang 0.5.23 glm_image_vl.py (RadixAttention with
num_kv_heads x head_dim, no window); the figures below are worked out from those fields.
"""

from __future__ import annotations

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate

TEXT = {"model_type": "glm_image_text", "vocab_size": 168064, "hidden_size": 4096, "intermediate_size": 13696,
        "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "attention_bias": True,
        "vision_vocab_size": 16512}
GLM_IMAGE = {"model_type": "glm_image", "text_config": TEXT, "tie_word_embeddings": False}


def test_glm_image_caches_two_kv_heads_on_every_layer():
    model = build_model(GLM_IMAGE, "glm-image")
    assert model.reading == "exact" and model.num_layers == 40
    # 40 layers x K and V x 2 KV heads x 128 (4,096 / 32) x 2 B (bf16) = 40,960 B a token, every token kept
    est = estimate(model, 8192)
    assert est.bytes_per_token == 40 * 2 * 2 * 128 * 2 == 40_960
    assert est.kv_bytes_per_sequence == 8192 * 40_960
    # the text config alone reads the same; a sparse one leaves num_key_value_heads to GlmImageTextConfig's 2
    sparse = {k: v for k, v in TEXT.items() if k != "num_key_value_heads"}
    assert estimate(build_model(sparse, "t"), 8192).bytes_per_token == 40_960


def test_glm_image_text_reads_head_dim_when_given():
    # GlmImageTextAttention: head_dim = getattr(config, "head_dim", hidden_size // heads) (SGLang the same), unlike
    # glm4v_text's hidden_size / heads: 64 / 4 = 16 without the key, 32 with it; 2 layers x K, V x 2 heads x 2 B
    tiny = {"model_type": "glm_image_text", "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vision_vocab_size": 40}
    assert estimate(build_model(tiny, "t"), 1).bytes_per_token == 2 * 2 * 2 * 16 * 2
    assert estimate(build_model(dict(tiny, head_dim=32), "t"), 1).bytes_per_token == 2 * 2 * 2 * 32 * 2


def test_glm_image_parameters_are_the_generator_and_its_image_token_head():
    # embed_tokens 168,064 x 4,096 = 688,390,144; a layer: q 4,096 x 4,096 + 4,096 bias, k and v 4,096 x 256 + 256
    # each, o 4,096 x 4,096, gate_up 4,096 x 27,392, down 13,696 x 4,096, four RMSNorms 4 x 4,096 = 203,969,024,
    # x 40 = 8,158,760,960; final norm 4,096; lm_head 16,512 (vision_vocab_size) x 4,096 = 67,633,152.
    # transformers 5.25 builds the same on the meta device: GlmImageForConditionalGeneration's language_model
    # 8,847,155,200 + lm_head 67,633,152 (its vision encoder 1,159,607,808 and VQ-VAE 39,849,472 not counted)
    per_layer = 4096 * 4096 + 4096 + 2 * (4096 * 256 + 256) + 4096 * 4096 + 4096 * 27392 + 13696 * 4096 + 4 * 4096
    assert per_layer == 203_969_024
    expected = 168064 * 4096 + 40 * per_layer + 4096 + 16512 * 4096
    assert expected == 8_847_155_200 + 67_633_152
    assert build_model(GLM_IMAGE, "glm-image").param_count == expected
    # without attention_bias the q/k/v biases go: 40 x (4,096 + 2 x 256) fewer
    assert build_model(dict(TEXT, attention_bias=False), "t").param_count == expected - 40 * 4608


def test_glm_image_is_served_by_sglang_not_vllm():
    # vLLM 0.34 registry.py has no GlmImage class; SGLang 0.5.23 glm_image_vl.py EntryClass does. vLLM 0.34 would
    # fall back to its Transformers backend (transformers 5.22.2's GlmImageForConditionalGeneration has
    # _supports_attention_backend) as TransformersMultiModalForCausalLM (GlmImageConfig has sub-configs), whose
    # multimodal checks kvplan does not read: not known
    from kvplan.engines.sglang_served import check as sglang_check
    from kvplan.engines.vllm_served import check as vllm_check

    assert vllm_check(["GlmImageForConditionalGeneration"], "0.34").served is None
    assert sglang_check(["GlmImageForConditionalGeneration"], "0.5.23").served is True
