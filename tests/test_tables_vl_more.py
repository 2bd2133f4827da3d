"""Per-module tables of more wrappers' text models (configs/weight_tables/vl_more.py): Qwen2-VL, GLM-4.1V
(glm4v_text), GLM-OCR (glm_ocr_text). The counts, the bytes each TP rank holds whole and the bytes a GPU holds are
worked out here by hand from the configs and the module shapes of transformers 5.25 (modeling_qwen2_vl.py,
modeling_glm4v.py, modeling_glm_ocr.py); what vLLM 0.34 builds whole: the module's docstrings.

Configs: Qwen2-VL-7B-Instruct's text fields (flat, as its config.json), GLM-4.1V-9B-Thinking's text_config,
zai-org/GLM-OCR's text_config (a copy of its config.json, read with the search tools), and Qwen2-VL-2B-Instruct-AWQ's
config.json (a copy in the public repository sophgo/LLM-TPU, models/Qwen2_VL/config/config.json)."""

from __future__ import annotations

import pytest

from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from tests.weight_table_checks import per_gpu as _per_gpu

QWEN2_VL_7B = {"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"], "hidden_size": 3584,
               "intermediate_size": 18944, "num_attention_heads": 28, "num_hidden_layers": 28,
               "num_key_value_heads": 4, "vocab_size": 152064, "tie_word_embeddings": False, "max_window_layers": 28,
               "use_sliding_window": False, "sliding_window": 32768, "rope_theta": 1000000.0,
               "max_position_embeddings": 32768, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
               "vision_config": {"depth": 32, "embed_dim": 1280, "num_heads": 16, "hidden_size": 3584}}
QWEN2_VL_2B_AWQ = {
    "architectures": ["Qwen2VLForConditionalGeneration"], "hidden_act": "silu", "hidden_size": 1536,
    "intermediate_size": 8960, "max_position_embeddings": 32768, "max_window_layers": 28, "model_type": "qwen2_vl",
    "num_attention_heads": 12, "num_hidden_layers": 28, "num_key_value_heads": 2,
    "quantization_config": {"bits": 4, "group_size": 128, "modules_to_not_convert": ["visual"], "quant_method": "awq",
                            "version": "gemm", "zero_point": True},
    "rms_norm_eps": 1e-06, "rope_scaling": {"mrope_section": [16, 24, 24], "type": "mrope"}, "rope_theta": 1000000.0,
    "sliding_window": 32768, "tie_word_embeddings": True, "torch_dtype": "float16", "use_sliding_window": False,
    "vision_config": {"hidden_size": 1536, "in_chans": 3, "model_type": "qwen2_vl", "spatial_patch_size": 14},
    "vocab_size": 151936}
GLM_41V = {"model_type": "glm4v", "architectures": ["Glm4vForConditionalGeneration"], "tie_word_embeddings": False,
           "text_config": {"model_type": "glm4v_text", "hidden_size": 4096, "num_hidden_layers": 40,
                           "intermediate_size": 13696, "num_attention_heads": 32, "num_key_value_heads": 2,
                           "vocab_size": 151552, "rms_norm_eps": 1e-05, "attention_bias": True,
                           "partial_rotary_factor": 0.5, "max_position_embeddings": 65536,
                           "rope_theta": 10000.0,
                           "rope_scaling": {"rope_type": "default", "mrope_section": [8, 12, 12]}},
           "vision_config": {"model_type": "glm4v", "depth": 24, "hidden_size": 1536, "num_heads": 12}}
GLM_OCR = {"architectures": ["GlmOcrForConditionalGeneration"], "model_type": "glm_ocr", "tie_word_embeddings": False,
           "text_config": {"attention_bias": False, "head_dim": 128, "hidden_act": "silu", "hidden_size": 1536,
                           "intermediate_size": 4608, "max_position_embeddings": 131072, "model_type": "glm_ocr_text",
                           "num_attention_heads": 16, "num_hidden_layers": 16, "num_key_value_heads": 8,
                           "num_nextn_predict_layers": 1, "rms_norm_eps": 1e-05, "tie_word_embeddings": False,
                           "rope_parameters": {"mrope_section": [16, 24, 24], "partial_rotary_factor": 1.0,
                                               "rope_theta": 10000, "rope_type": "default"},
                           "vocab_size": 59392},
           "vision_config": {"depth": 24, "hidden_size": 1024, "model_type": "glm_ocr_vision", "num_heads": 16}}


@pytest.mark.parametrize("raw", [QWEN2_VL_7B, QWEN2_VL_2B_AWQ, GLM_41V, GLM_OCR,
                                 "ernie", "ernie-baidu", "m3", "molmo2", "hcx",
                                 {**QWEN2_VL_7B, "model_type": "qwen2_vl", "text_config": {
                                     **{k: v for k, v in QWEN2_VL_7B.items() if k not in ("vision_config",
                                                                                           "architectures")},
                                     "model_type": "qwen2_vl_text"}}])
def test_the_table_adds_up_to_the_parameter_count(raw):
    if isinstance(raw, str):  # configs defined further down
        raw = {"ernie": ERNIE_VL, "ernie-baidu": ERNIE_VL_BAIDU, "m3": M3, "molmo2": MOLMO2, "hcx": HYPERCLOVAX}[raw]
    family, f, _, layers, dims = _read(raw, "vl_more")
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


# -- Qwen2-VL ------------------------------------------------------------------------------------------------------

def test_qwen2_vl_7b_counts_the_q_k_v_biases_and_keeps_the_norms_whole():
    model = build_model(QWEN2_VL_7B, "qwen2-vl-7b")
    # 28 layers, hidden 3,584, 28 query / 4 KV heads of 128, mlp 18,944, vocab 152,064, untied. A layer: q, o
    # 3,584 x 3,584; k, v 3,584 x 512; q/k/v biases 3,584 + 2 x 512 (Qwen2VLAttention; uncounted before: 28 x 4,608
    # = 129,024 fewer); mlp 3 x 3,584 x 18,944; 2 norms
    layer = 2 * 3584 * 3584 + 2 * 3584 * 512 + 3584 + 2 * 512 + 3 * 3584 * 18944 + 2 * 3584
    total = 2 * 152064 * 3584 + 3584 + 28 * layer
    assert total == 7_615_616_512 and model.param_count == total
    # whole on every TP rank: the two norms a layer and the final norm (o_proj has no bias), BF16
    whole = 28 * 2 * 3584 + 3584
    assert whole == 204_288 and model.weight_replicated_bytes == 2 * whole
    # TP 2: (15,231,233,024 - 408,576) / 2 + 408,576 (before: an even split, 7,615,487,488 of a smaller count)
    assert model.weight_bytes == 2 * total == 15_231_233_024
    assert _per_gpu(model, 28, 2) == 7_615_412_224 + 408_576 == 7_615_820_800


def test_qwen2_vl_2b_awq_keeps_embeddings_norms_and_biases_in_fp16():
    model = build_model(QWEN2_VL_2B_AWQ, "qwen2-vl-2b-awq")
    # 28 layers, hidden 1,536, 12 query / 2 KV heads of 128, mlp 8,960, vocab 151,936, tied. Linear weights a
    # layer: q, o 1,536 x 1,536; k, v 1,536 x 256; mlp 3 x 1,536 x 8,960: 46,792,704; x 28 = 1,310,195,712, at AWQ
    # int4 group 128: 1/2 + (2 + 1/2) / 128 = 133/256 B. In FP16: the embeddings 151,936 x 1,536 = 233,373,696, the
    # q/k/v biases 1,536 + 512 and two norms 2 x 1,536 a layer, the final norm 1,536: 233,518,592 (before: the biases
    # uncounted and the norms at the quantized width)
    linear = 28 * (2 * 1536 * 1536 + 2 * 1536 * 256 + 3 * 1536 * 8960)
    floats = 151936 * 1536 + 28 * (1536 + 512 + 2 * 1536) + 1536
    assert linear == 1_310_195_712 and floats == 233_518_592
    assert model.param_count == linear + floats == 1_543_714_304
    assert model.weight_bytes == linear * 133 // 256 + floats * 2 == 1_147_724_800
    assert any("read module by module" in n for n in model.notes)
    # the norms are whole on every TP rank: 28 x 2 x 1,536 + 1,536 = 87,552 parameters
    assert model.weight_replicated_bytes == 87_552 * 2


def test_qwen2_vl_text_nested_reads_as_the_flat_config():
    nested = {"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"],
              "text_config": {**{k: v for k, v in QWEN2_VL_7B.items() if k not in ("vision_config", "architectures")},
                              "model_type": "qwen2_vl_text"}}
    model = build_model(nested, "qwen2-vl-nested")
    assert model.param_count == 7_615_616_512 and model.weight_replicated_bytes == 2 * 204_288


# -- GLM-4.1V and GLM-OCR ------------------------------------------------------------------------------------------

def test_glm_4_1v_counts_four_norms_q_k_v_biases_and_no_o_proj_bias():
    # the text model's table (the vision tower, counted since, is tests/test_vision_towers.py's)
    model = build_model({k: v for k, v in GLM_41V.items() if k != "vision_config"}, "glm-4.1v")
    # 40 layers, hidden 4,096, 32 query / 2 KV heads of 128, mlp 13,696, vocab 151,552, untied. A layer: q, o
    # 4,096 x 4,096; k, v 4,096 x 256; q/k/v biases 4,096 + 2 x 256 (o_proj none: Glm4vTextAttention); gate_up_proj
    # 4,096 x 27,392 and down_proj 13,696 x 4,096; four norms 4 x 4,096. Before: two norms and an o_proj bias
    # (attention_bias true), 40 x (2 x 4,096 - 4,096) = 163,840 fewer
    layer = 2 * 4096 * 4096 + 2 * 4096 * 256 + 4096 + 512 + 4096 * 27392 + 13696 * 4096 + 4 * 4096
    assert layer == 203_969_024
    total = 40 * layer + 2 * 151552 * 4096 + 4096
    assert total == 9_400_279_040 and model.param_count == total
    # whole on every TP rank: 40 x 4 norms of 4,096 + the final norm, BF16; the q/k/v biases split with the heads
    assert model.weight_replicated_bytes == (40 * 4 * 4096 + 4096) * 2 == 1_318_912
    # TP 2: (18,800,558,080 - 1,318,912) / 2 + 1,318,912
    assert _per_gpu(model, 40, 2) == 9_399_619_584 + 1_318_912 == 9_400_938_496


def test_glm_ocr_counts_four_norms_and_no_biases():
    model = build_model(GLM_OCR, "glm-ocr")
    # 16 layers, hidden 1,536, 16 query / 8 KV heads of head_dim 128, mlp 4,608, vocab 59,392, untied. A layer: q
    # 1,536 x 2,048, k, v 1,536 x 1,024, o 2,048 x 1,536 (no biases: GlmOcrTextAttention); gate_up_proj
    # 1,536 x 9,216 and down_proj 4,608 x 1,536; four norms 4 x 1,536 (two before: 16 x 3,072 = 49,152 fewer).
    # The MTP layer (num_nextn_predict_layers) is the drafter's, not counted
    layer = 1536 * 2048 + 2 * 1536 * 1024 + 2048 * 1536 + 1536 * 9216 + 4608 * 1536 + 4 * 1536
    assert layer == 30_676_992
    total = 16 * layer + 2 * 59392 * 1536 + 1536
    assert total == 673_285_632 and model.param_count == total
    # whole: 16 x 4 norms of 1,536 + the final norm, BF16; TP 2: (1,346,571,264 - 199,680) / 2 + 199,680
    assert model.weight_replicated_bytes == (16 * 4 * 1536 + 1536) * 2 == 199_680
    assert _per_gpu(model, 16, 2) == 673_185_792 + 199_680 == 673_385_472


def test_glm_ocr_with_attention_bias_gets_no_table():
    # GlmOcrTextAttention builds no biases; vLLM's Glm4Attention would build them from attention_bias
    assert table(*_read(GLM_OCR, "glm-ocr")[1:2], *_read(GLM_OCR, "glm-ocr")[3:])
    raw = {**GLM_OCR, "text_config": {**GLM_OCR["text_config"], "attention_bias": True}}
    family, f, _, layers, dims = _read(raw, "glm-ocr-bias")
    assert table(f, layers, dims) == []


# -- ERNIE-4.5-VL --------------------------------------------------------------------------------------------------

ERNIE_VL_TEXT = {"model_type": "ernie4_5_vl_moe_text", "hidden_size": 2560, "intermediate_size": 12288,
                 "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4, "vocab_size": 103424,
                 "moe_num_experts": 64, "moe_intermediate_size": [1536, 512], "moe_k": 6,
                 "moe_num_shared_experts": 2, "tie_word_embeddings": True, "use_bias": False,
                 "max_position_embeddings": 131072, "rope_parameters": {"rope_theta": 500000.0, "rope_type": "default",
                                                                        "mrope_section": [22, 22, 20]}}
# ERNIE-4.5-VL-28B-A3B's text model (Baidu's config.json: 28 layers, hidden 2,560, 20 query / 4 KV heads, 64 + 64
# experts of [1,536, 512], moe_k 6, moe_layer_start_index [1, 1], moe_layer_end_index [29, 28], 2 shared experts,
# vocab 103,424, tied), in transformers 5.25's form (mlp_layer_types: layer 0 dense) and in Baidu's (start / end)
ERNIE_VL = {"model_type": "ernie4_5_vl_moe", "architectures": ["Ernie4_5_VLMoeForConditionalGeneration"],
            "tie_word_embeddings": True,
            "text_config": {**ERNIE_VL_TEXT, "mlp_layer_types": ["dense"] + ["sparse"] * 27}}
ERNIE_VL_BAIDU = {**ERNIE_VL, "text_config": {**ERNIE_VL_TEXT, "moe_num_experts": [64, 64],
                                              "moe_layer_start_index": [1, 1], "moe_layer_end_index": [29, 28],
                                              "moe_layer_interval": 1}}


@pytest.mark.parametrize("raw", [ERNIE_VL, ERNIE_VL_BAIDU])
def test_ernie_4_5_vl_28b_counts_text_and_vision_experts_and_keeps_routers_whole(raw):
    model = build_model(raw, "ernie-4.5-vl-28b-a3b")
    # a layer's attention: q, o 2,560 x 2,560; k, v 2,560 x 512 (head_dim 2,560 / 20 = 128); two norms 2 x 2,560
    attention = 2 * 2560 * 2560 + 2 * 2560 * 512 + 2 * 2560
    # layer 0: an mlp of 12,288; layers 1-27: text and vision routers 2 x 64 x 2,560, the [2, 64] score bias, 64
    # text experts of 1,536 and 64 vision experts of 512 (3 x 2,560 x width each), shared experts of 2 x 1,536
    # (before: a dense model, every layer an mlp of 12,288)
    dense = 3 * 2560 * 12288
    moe = 2 * 64 * 2560 + 2 * 64 + 64 * 3 * 2560 * (1536 + 512) + 3 * 2560 * 3072
    assert moe == 1_030_553_728
    total = attention + dense + 27 * (attention + moe) + 103424 * 2560 + 2560
    assert total == 28_624_635_776 and model.param_count == total
    # whole on every TP rank: 28 x 2 norms + the final norm, 27 x (routers 327,680 + score bias 128), BF16
    whole = 28 * 2 * 2560 + 2560 + 27 * (2 * 64 * 2560 + 2 * 64)
    assert whole == 8_996_736 and model.weight_replicated_bytes == 2 * whole
    # TP 2: (57,249,271,552 - 17,993,472) / 2 + 17,993,472
    assert _per_gpu(model, 28, 2) == 28_615_639_040 + 17_993_472 == 28_633_632_512


def test_ernie_4_5_vl_list_naming_only_the_vision_experts_cannot_be_sized():
    # the 128 experts a layer are one block (0-63 text, 64-127 vision): a list that keeps some of them is refused
    from kvplan.configs.quant_bytes import Unsized
    from kvplan.configs.weight_tables import split

    family, f, _, layers, dims = _read(ERNIE_VL, "ernie-vl")
    modules = table(f, layers, dims)
    with pytest.raises(Unsized):
        split(modules, lambda name: ".experts.127." in name or ".experts.64." in name, True)
    kept = split(modules, lambda name: ".experts." in name, True)
    assert kept.kept["experts"] == 27 * 64 * 3 * 2560 * 2048


# -- MiniMax-M3 ----------------------------------------------------------------------------------------------------

# the text model as tests/test_minimax_m3.py writes it (the checkpoint's sparse_attention_config form: 60 layers, 3
# full then 57 block-sparse, 4 KV heads and 4 index heads of 128, 128 experts of 3,072; no mlp_layer_types: every
# layer a MoE, as the counter reads it)
M3_SPARSE = {"use_sparse_attention": True, "sparse_index_dim": 128, "sparse_num_index_heads": 4,
             "sparse_topk_blocks": 16, "sparse_block_size": 128, "sparse_local_block": 1,
             "sparse_attention_freq": [0, 0, 0] + [1] * 57, "sparse_disable_index_value": [0, 0, 0] + [1] * 57}
M3 = {"model_type": "minimax_m3_vl_text", "num_hidden_layers": 60, "hidden_size": 6144, "num_attention_heads": 64,
      "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 200064, "intermediate_size": 3072,
      "num_local_experts": 128, "num_experts_per_tok": 4, "max_position_embeddings": 1048576,
      "sparse_attention_config": M3_SPARSE}


def test_minimax_m3_keeps_norms_routers_and_the_index_key_projection_whole():
    model = build_model(M3, "minimax-m3")
    # a layer: q 6,144 x 8,192, k, v 6,144 x 512, o 8,192 x 6,144; q/k norms 2 x 128; two norms 2 x 6,144; the
    # MoE: router 128 x 6,144, score bias 128, experts 128 x 3 x 6,144 x 3,072, shared experts 3 x 6,144 x 3,072;
    # the 57 sparse layers' indexer: index_q 6,144 x 512, index_k 6,144 x 128, index q/k norms 2 x 128; embeddings
    # and head 2 x 200,064 x 6,144 (untied), final norm
    layer = (2 * 6144 * 8192 + 2 * 6144 * 512 + 2 * 128 + 2 * 6144
             + 128 * 6144 + 128 + 128 * 3 * 6144 * 3072 + 3 * 6144 * 3072)
    indexer = 6144 * 512 + 6144 * 128 + 2 * 128
    total = 60 * layer + 57 * indexer + 2 * 200064 * 6144 + 6144
    assert total == 447_410_596_608 and model.param_count == total
    # whole: the norms (60 x (2 x 6,144 + 2 x 128) + 57 x 2 x 128 + 6,144 = 773,376), the routers and score biases
    # (60 x 786,560 = 47,193,600) and index_k_proj, one head replicated to every rank (57 x 786,432 = 44,826,624)
    whole = 773_376 + 47_193_600 + 44_826_624
    assert whole == 92_793_600 and model.weight_replicated_bytes == 2 * whole
    # TP 4 (one KV head and one index head a rank): (894,821,193,216 - 185,587,200) / 4 + 185,587,200
    assert _per_gpu(model, 60, 4) == 223_658_901_504 + 185_587_200 == 223_844_488_704
    # TP 8: above the 4 KV heads each rank holds a quarter of k_proj, v_proj and index_q_proj, not an eighth: their
    # 60 x 6,291,456 + 57 x 3,145,728 = 556,793,856 parameters (1,113,587,712 B) add 1,113,587,712 / 8 a rank
    assert _per_gpu(model, 60, 8) == 111_829_450_752 + 185_587_200 + 139_198_464 == 112_154_236_416


def test_minimax_m3_with_shared_experts_of_another_width_gets_no_table():
    # vLLM builds the shared experts of intermediate_size, transformers of shared_intermediate_size
    family, f, _, layers, dims = _read(M3, "m3")
    assert table(f, layers, dims)
    family, f, _, layers, dims = _read({**M3, "shared_intermediate_size": 1536}, "m3-shared")
    assert table(f, layers, dims) == []


# -- Molmo2 --------------------------------------------------------------------------------------------------------

# Molmo2-ER's 4B text model (the text_config fields a public repository checks a checkpoint against, in Molmo2's
# own names: qkv_bias, use_qk_norm, qk_norm_type, layer_norm_eps), the wrapper untied as Molmo2Config's default
MOLMO2 = {"model_type": "molmo2", "architectures": ["Molmo2ForConditionalGeneration"], "tie_word_embeddings": False,
          "text_config": {"model_type": "molmo2_text", "hidden_size": 2560, "intermediate_size": 9728,
                          "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
                          "head_dim": 128, "vocab_size": 151936, "additional_vocab_size": 128, "hidden_act": "silu",
                          "rope_theta": 5000000.0, "qkv_bias": False, "use_qk_norm": True, "qk_norm_type": "qwen3",
                          "layer_norm_eps": 1e-06, "max_position_embeddings": 16384, "norm_after": False,
                          "tie_word_embeddings": False}}


def test_molmo2_counts_the_extra_embedding_rows_and_q_k_norms_and_keeps_them_whole():
    model = build_model(MOLMO2, "molmo2-4b")
    # a block: att_proj 2,560 x (32 + 2 x 8) x 128, attn_out 4,096 x 2,560, q_norm and k_norm over head_dim 128
    # (qk_norm_type qwen3), ff_proj 2,560 x 2 x 9,728 and ff_out 9,728 x 2,560, attn_norm and ff_norm 2 x 2,560.
    # wte.embedding 151,936 and wte.new_embedding 128 rows of 2,560, the head 151,936 x 2,560, ln_f 2,560. Before:
    # neither the 128 extra rows nor the q/k norms were counted
    block = 2560 * 48 * 128 + 4096 * 2560 + 2 * 128 + 3 * 2560 * 9728 + 2 * 2560
    assert block == 100_930_816
    total = 36 * block + (151936 + 128) * 2560 + 151936 * 2560 + 2560
    assert total == 4_411_751_936 and model.param_count == total
    # whole: 36 x (2 x 2,560 + 2 x 128) + 2,560 = 196,096, BF16; TP 2: (8,823,503,872 - 392,192) / 2 + 392,192
    assert model.weight_replicated_bytes == 196_096 * 2 == 392_192
    assert _per_gpu(model, 36, 2) == 4_411_555_840 + 392_192 == 4_411_948_032


def test_molmo2_olmo_norms_span_all_heads_and_use_qk_norm_false_gets_no_table():
    olmo = {**MOLMO2, "text_config": {**MOLMO2["text_config"], "qk_norm_type": "olmo"}}
    # q_norm over 32 x 128, k_norm over 8 x 128: 36 x (5,120 - 256) more, all whole
    assert build_model(olmo, "molmo2-olmo").param_count == 4_411_751_936 + 36 * (5120 - 256)
    assert build_model(olmo, "molmo2-olmo").weight_replicated_bytes == (196_096 + 36 * (5120 - 256)) * 2
    family, f, _, layers, dims = _read({**MOLMO2, "text_config": {**MOLMO2["text_config"], "use_qk_norm": False}},
                                       "molmo2-no-norm")
    assert table(f, layers, dims) == []


# -- PaddleOCR-VL --------------------------------------------------------------------------------------------------

def test_paddleocr_vl_flat_keeps_its_norms_whole():
    # a flat PaddleOCR-VL config (its text model ERNIE-4.5-0.3B's shape: 18 layers, hidden 1,024, 16 query / 2 KV
    # heads of head_dim 128, mlp 3,072, vocab 103,424; tied here). A layer: q 1,024 x 2,048, k, v 1,024 x 256,
    # o 2,048 x 1,024, mlp 3 x 1,024 x 3,072, two norms: 14,157,824
    raw = {"architectures": ["PaddleOCRVLForConditionalGeneration"], "model_type": "paddleocr_vl", "head_dim": 128,
           "hidden_size": 1024, "intermediate_size": 3072, "num_attention_heads": 16, "num_hidden_layers": 18,
           "num_key_value_heads": 2, "vocab_size": 103424, "tie_word_embeddings": True, "use_bias": False,
           "max_position_embeddings": 131072, "vision_config": {"model_type": "paddleocr_vl"}}
    model = build_model(raw, "paddleocr-vl")
    assert model.param_count == 18 * 14_157_824 + 103424 * 1024 + 1024 == 360_748_032
    # whole: 18 x 2 norms + the final norm, BF16; TP 2: (721,496,064 - 75,776) / 2 + 75,776
    assert model.weight_replicated_bytes == (18 * 2 * 1024 + 1024) * 2 == 75_776
    assert _per_gpu(model, 18, 2) == 360_710_144 + 75_776 == 360_785_920
    # use_bias: transformers biases q/k/v/o and the MLP, vLLM's Ernie4_5ForCausalLM does not: no table
    family, f, _, layers, dims = _read({**raw, "use_bias": True}, "paddleocr-vl-bias")
    assert table(f, layers, dims) == []


# -- HyperCLOVA X ---------------------------------------------------------------------------------------------------

# HyperCLOVAXConfig's defaults (transformers 5.25 configuration_hyperclovax.py), written out: 32 layers, hidden 4,096,
# 32 heads of 128 (KV heads: the query heads), mlp 11,008, vocab 32,000, untied, use_post_norm true
HYPERCLOVAX = {"model_type": "hyperclovax", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
               "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 2048,
               "tie_word_embeddings": False, "use_post_norm": True}


def test_hyperclovax_counts_and_keeps_its_post_norms_whole():
    model = build_model(HYPERCLOVAX, "hyperclovax")
    # a layer: q/k/v/o 4 x 4,096 x 4,096, mlp 3 x 4,096 x 11,008, input / post_attention layernorm and post_norm1 /
    # post_norm2 (HyperCLOVAXDecoderLayer; uncounted before: 32 x 8,192 fewer) 4 x 4,096
    layer = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 4 * 4096
    total = 32 * layer + 2 * 32000 * 4096 + 4096
    assert total == 6_738_677_760 and model.param_count == total
    # whole: 32 x 4 norms + the final norm, BF16; TP 2: (13,477,355,520 - 1,056,768) / 2 + 1,056,768
    assert model.weight_replicated_bytes == (32 * 4 * 4096 + 4096) * 2 == 1_056_768
    assert _per_gpu(model, 32, 2) == 6_738_149_376 + 1_056_768 == 6_739_206_144
    # without the post norms: two norms a layer
    assert build_model({**HYPERCLOVAX, "use_post_norm": False}, "hcx-pre").param_count == total - 32 * 2 * 4096


# -- Cosmos3-Edge --------------------------------------------------------------------------------------------------

def test_cosmos3_edge_defaults_keep_norms_whole_under_diffusers_names():
    # Cosmos3EdgeTextConfig's defaults (a sparse text_config): 28 blocks, hidden 2,048, 16 query / 8 KV heads of 128,
    # relu2 MLP of 9,216 (up and down), vocab 131,072, untied. A block: to_q, to_out 2,048 x 2,048, to_k, to_v
    # 2,048 x 1,024, up_proj and down_proj 2 x 2,048 x 9,216, two norms: 50,335,744
    raw = {"model_type": "cosmos3_edge", "architectures": ["Cosmos3EdgeForConditionalGeneration"],
           "text_config": {"model_type": "cosmos3_edge_text"}}
    model = build_model(raw, "cosmos3-edge")
    block = 2 * 2048 * 2048 + 2 * 2048 * 1024 + 2 * 2048 * 9216 + 2 * 2048
    assert block == 50_335_744
    assert model.param_count == 28 * block + 2 * 131072 * 2048 + 2048 == 1_946_273_792
    # whole: 28 x 2 norms + the final norm, BF16; TP 2: (3,892,547,584 - 233,472) / 2 + 233,472
    assert model.weight_replicated_bytes == (28 * 2 * 2048 + 2048) * 2 == 233_472
    assert _per_gpu(model, 28, 2) == 1_946_157_056 + 233_472 == 1_946_390_528
    family, f, _, layers, dims = _read(raw, "cosmos3-edge")
    names = {m.name for m in table(f, layers, dims)}
    assert {"layers.27.self_attn.to_q", "layers.0.mlp.down_proj", "embed_tokens", "norm"} <= names


# -- GLM-Image -----------------------------------------------------------------------------------------------------

def test_glm_image_generator_keeps_four_norms_a_layer_whole():
    # GlmImageTextConfig's defaults as tests/test_glm_image.py writes them: 40 layers, hidden 4,096, 32 query / 2
    # KV heads of 128, mlp 13,696, vocab 168,064, attention_bias, vision_vocab_size 16,512 (the head's rows);
    # 8,914,788,352 parameters (that file's sum)
    raw = {"model_type": "glm_image", "tie_word_embeddings": False,
           "text_config": {"model_type": "glm_image_text", "vocab_size": 168064, "hidden_size": 4096,
                           "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32,
                           "num_key_value_heads": 2, "attention_bias": True, "vision_vocab_size": 16512}}
    model = build_model(raw, "glm-image")
    assert model.param_count == 8_847_155_200 + 67_633_152 == 8_914_788_352
    # whole: 40 x 4 norms + the final norm, BF16 (q/k/v biases split, o_proj none); TP 2:
    # (17,829,576,704 - 1,318,912) / 2 + 1,318,912
    assert model.weight_replicated_bytes == (40 * 4 * 4096 + 4096) * 2 == 1_318_912
    assert _per_gpu(model, 40, 2) == 8_914_128_896 + 1_318_912 == 8_915_447_808


# -- Cohere Compass ------------------------------------------------------------------------------------------------

def test_cohere_compass_keeps_one_layernorm_weight_a_layer_whole():
    # CohereCompassTextConfig's defaults as tests/test_cohere_compass.py writes them: 40 layers, hidden 8,192, 64
    # heads (KV heads too) of 128, mlp 22,528, vocab 256,000, tied: 34,980,831,232 parameters
    text = {"model_type": "cohere_compass_text", "vocab_size": 256000, "hidden_size": 8192,
            "intermediate_size": 22528, "num_hidden_layers": 40, "num_attention_heads": 64, "sliding_window": 4096}
    model = build_model({"model_type": "cohere_compass", "text_config": text}, "compass")
    assert model.param_count == 34_980_831_232
    # whole: 40 x one LayerNorm weight of 8,192 + the final norm, BF16; TP 4:
    # (69,961,662,464 - 671,744) / 4 + 671,744
    assert model.weight_replicated_bytes == (40 * 8192 + 8192) * 2 == 671_744
    assert _per_gpu(model, 40, 4) == 17_490_247_680 + 671_744 == 17_490_919_424


# -- Muse Glimmer --------------------------------------------------------------------------------------------------

def test_muse_glimmer_counts_the_output_gate_and_four_norms():
    # MuseGlimmerTextConfig's defaults (transformers 5.25 configuration_muse_glimmer.py): 52 layers, hidden 6,656,
    # 32 query / 2 KV heads of 128, mlp 19,968, vocab 202,048, untied. A layer: q, o 6,656 x 4,096, k, v 6,656 x
    # 256, the output gate self_attn.gate_proj 6,656 x 4,096 and four norms 4 x 6,656 (neither counted before:
    # 52 x (27,262,976 + 13,312) fewer), mlp 3 x 6,656 x 19,968
    text = {"model_type": "muse_glimmer_text", "vocab_size": 202048, "hidden_size": 6656, "intermediate_size": 19968,
            "num_hidden_layers": 52, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128}
    model = build_model({"model_type": "muse_glimmer", "text_config": text}, "muse-glimmer")
    layer = 3 * 6656 * 4096 + 2 * 6656 * 256 + 4 * 6656 + 3 * 6656 * 19968
    assert layer == 483_944_448
    total = 52 * layer + 2 * 202048 * 6656 + 6656
    assert total == 27_854_780_928 and model.param_count == total
    # whole: 52 x 4 norms + the final norm, BF16; TP 2: (55,709,561,856 - 2,782,208) / 2 + 2,782,208
    assert model.weight_replicated_bytes == (52 * 4 * 6656 + 6656) * 2 == 2_782_208
    assert _per_gpu(model, 52, 2) == 27_853_389_824 + 2_782_208 == 27_856_172_032


# -- Higgs Audio v2 ------------------------------------------------------------------------------------------------

HIGGS = {"model_type": "higgs_audio_v2", "vocab_size": 128256, "hidden_size": 3072, "intermediate_size": 8192,
         "num_hidden_layers": 28, "num_attention_heads": 24, "num_key_value_heads": 8, "head_dim": 128,
         "num_codebooks": 8, "codebook_size": 1024}


def test_higgs_audio_v2_keeps_four_norms_a_layer_whole():
    # the config of tests/test_higgs_audio_v2.py (HiggsAudioV2Config's shape): 5,377,182,720 parameters there
    model = build_model(HIGGS, "higgs")
    assert model.param_count == 5_377_182_720
    # whole: 28 x 4 norms of 3,072 (text and audio input / post-attention) + the final norm, BF16; TP 2:
    # (10,754,365,440 - 694,272) / 2 + 694,272
    assert model.weight_replicated_bytes == (28 * 4 * 3072 + 3072) * 2 == 694_272
    assert _per_gpu(model, 28, 2) == 5_376_835_584 + 694_272 == 5_377_529_856
    # with attention_bias and mlp_bias, o_proj's and both down_proj's biases are whole too: 28 x 3 x 3,072 more
    biased = build_model(dict(HIGGS, attention_bias=True, mlp_bias=True), "higgs-bias")
    assert biased.weight_replicated_bytes == (28 * 4 * 3072 + 3072 + 28 * 3 * 3072) * 2


# -- CodeGen -------------------------------------------------------------------------------------------------------

def test_codegen_350m_keeps_layernorms_and_fc_out_bias_whole():
    # Salesforce/codegen-350M-mono's shape: 20 blocks, n_embd 1,024, 16 heads, n_inner null (4 x 1,024), vocab
    # 51,200, untied. A block: ln_1 2 x 1,024, qkv_proj 1,024 x 3,072, out_proj 1,024 x 1,024, fc_in 1,024 x 4,096
    # + 4,096, fc_out 4,096 x 1,024 + 1,024: 12,590,080; wte and lm_head (+ its bias 51,200), ln_f 2 x 1,024
    raw = {"model_type": "codegen", "architectures": ["CodeGenForCausalLM"], "n_embd": 1024, "n_layer": 20,
           "n_head": 16, "n_ctx": 2048, "n_positions": 2048, "rotary_dim": 32, "vocab_size": 51200,
           "n_inner": None, "tie_word_embeddings": False}
    model = build_model(raw, "codegen-350m")
    assert model.param_count == 20 * 12_590_080 + 2 * 51200 * 1024 + 51200 + 2048 == 356_712_448
    # whole: 20 x (ln_1 2,048 + fc_out's bias 1,024) + ln_f 2,048 = 63,488, BF16; TP 2:
    # (713,424,896 - 126,976) / 2 + 126,976
    assert model.weight_replicated_bytes == 63_488 * 2 == 126_976
    assert _per_gpu(model, 20, 2) == 356_648_960 + 126_976 == 356_775_936


# -- HRM-Text ------------------------------------------------------------------------------------------------------

def test_hrm_text_holds_z_l_init_whole_and_splits_the_fused_projections():
    # HrmTextConfig's defaults: 16 layers a stack (L_module and H_module), hidden 1,536, 12 heads of 128, mlp 4,096,
    # vocab 151,808, untied, no biases. A layer: gqkv_proj 1,536 x 4 x 1,536, o_proj 1,536 x 1,536, gate_up_proj
    # 1,536 x 8,192, down_proj 4,096 x 1,536 (its RMSNorms have no weight): 30,670,848; z_L_init 1,536
    raw = {"model_type": "hrm_text", "vocab_size": 151808, "hidden_size": 1536, "intermediate_size": 4096,
           "num_hidden_layers": 16, "num_attention_heads": 12, "head_dim": 128, "max_position_embeddings": 2048}
    model = build_model(raw, "hrm-text")
    assert model.param_count == 32 * 30_670_848 + 2 * 151808 * 1536 + 1536 == 1_447_822_848
    # whole: z_L_init alone, BF16; TP 2: (2,895,645,696 - 3,072) / 2 + 3,072
    assert model.weight_replicated_bytes == 1536 * 2
    assert _per_gpu(model, len(model.layers), 2) == 1_447_821_312 + 3072 == 1_447_824_384


# -- CTRL, BioGPT, GPT-NeoX-Japanese (not served by vLLM 0.34) -----------------------------------------------------

def test_ctrl_keeps_layernorms_and_row_biases_whole():
    # Salesforce/ctrl's shape: 48 blocks, n_embd 1,280, 16 heads, dff 8,192, vocab 246,534, the head tied (its bias
    # of 246,534 kept). A block: Wq/Wk/Wv/dense 4 x (1,280^2 + 1,280), ffn.0 1,280 x 8,192 + 8,192, ffn.2 8,192 x
    # 1,280 + 1,280, layernorm1/2 2 x 2 x 1,280: 27,544,832
    raw = {"model_type": "ctrl", "vocab_size": 246534, "n_embd": 1280, "n_layer": 48, "n_head": 16, "dff": 8192,
           "n_positions": 50000}
    model = build_model(raw, "ctrl")
    assert model.param_count == 48 * 27_544_832 + 246534 * 1280 + 2 * 1280 + 246534 == 1_637_964_550
    # whole: 48 x (layernorms 5,120 + the dense and ffn.2 biases 2,560) + the final LayerNorm 2,560, BF16
    assert model.weight_replicated_bytes == (48 * (5120 + 2560) + 2560) * 2 == 742_400
    # TP 2: (3,275,929,100 - 742,400) / 2 + 742,400
    assert _per_gpu(model, 48, 2) == 1_637_593_350 + 742_400 == 1_638_335_750


def test_biogpt_keeps_learned_positions_layernorms_and_row_biases_whole():
    # microsoft/biogpt's shape: 24 layers, hidden 1,024, 16 heads, mlp 4,096, vocab 42,384, 1,024 positions (+ 2),
    # tied. A layer: q/k/v/out_proj 4 x (1,024^2 + 1,024), fc1 1,024 x 4,096 + 4,096, fc2 4,096 x 1,024 + 1,024, two
    # LayerNorms 2 x 2,048: 12,596,224
    raw = {"model_type": "biogpt", "vocab_size": 42384, "hidden_size": 1024, "num_hidden_layers": 24,
           "num_attention_heads": 16, "intermediate_size": 4096, "max_position_embeddings": 1024}
    model = build_model(raw, "biogpt")
    assert model.param_count == 24 * 12_596_224 + 42384 * 1024 + 1026 * 1024 + 2048 == 346_763_264
    # whole: 24 x (LayerNorms 4,096 + out_proj and fc2 biases 2,048) + layer_norm 2,048 + positions 1,026 x 1,024
    whole = 24 * (4096 + 2048) + 2048 + 1026 * 1024
    assert whole == 1_200_128 and model.weight_replicated_bytes == 2 * whole
    # TP 2: (693,526,528 - 2,400,256) / 2 + 2,400,256
    assert _per_gpu(model, 24, 2) == 345_563_136 + 2_400_256 == 347_963_392


def test_gpt_neox_japanese_holds_the_last_layers_dense_bias_whole():
    # GPTNeoXJapaneseConfig's defaults written out: 32 layers, hidden 2,560, 32 heads, intermediate_multiple_size 4,
    # vocab 32,000, tied. A layer: two LayerNorms 2 x 2 x 2,560, query_key_value 2,560 x 7,680, dense 2,560 x 2,560,
    # dense_h_to_4h and dense_4h_to_h 2 x 2,560 x 10,240 (no biases): 78,653,440; the last layer's dense_bias 2,560
    raw = {"model_type": "gpt_neox_japanese", "vocab_size": 32000, "hidden_size": 2560, "num_hidden_layers": 32,
           "num_attention_heads": 32, "intermediate_multiple_size": 4, "max_position_embeddings": 2048}
    model = build_model(raw, "gpt-neox-japanese")
    assert model.param_count == 32 * 78_653_440 + 2560 + 32000 * 2560 + 2 * 2560 == 2_598_837_760
    # whole: 32 x 2 LayerNorms of 2 x 2,560 + final_layer_norm + dense_bias, BF16
    assert model.weight_replicated_bytes == (32 * 4 * 2560 + 2 * 2560 + 2560) * 2 == 670_720


def test_modernbert_decoder_keeps_its_layernorms_whole():
    # ModernBertDecoderConfig's defaults written out (22 layers, hidden 768, 12 heads, mlp 1,152, vocab 50,368, tied,
    # no norm biases, decoder_bias). A layer: attn_norm 768 (not on layer 0), q/k/v 3 x 768^2, Wo 768^2, mlp_norm 768,
    # Wi 768 x 2,304, Wo 1,152 x 768: 5,015,040 (layer 0: 5,014,272); embeddings 50,368 x 768 and their norm, the
    # final norm, lm_head.dense 768^2 and lm_head.norm, the decoder's bias 50,368
    raw = {"model_type": "modernbert-decoder", "vocab_size": 50368, "hidden_size": 768, "num_hidden_layers": 22,
           "num_attention_heads": 12, "intermediate_size": 1152, "max_position_embeddings": 8192}
    model = build_model(raw, "modernbert-decoder")
    total = 5_014_272 + 21 * 5_015_040 + 50368 * 768 + 3 * 768 + 768 * 768 + 50368
    assert total == 149_655_232 and model.param_count == total
    # whole: 21 attn_norm + 22 mlp_norm + the embeddings', final and head norms, 46 x 768 = 35,328, BF16; TP 2:
    # (299,310,464 - 70,656) / 2 + 70,656
    assert model.weight_replicated_bytes == 46 * 768 * 2 == 70_656
    assert _per_gpu(model, 22, 2) == 149_619_904 + 70_656 == 149_690_560


# -- vLLM 0.34's Transformers backend without a tensor-parallel plan (configs/param_vllm_load.py) -------------------
# transformers/base.py makes every nn.Linear no fuser claims a ReplicatedLinear. CTRL: no fuser matches (q, k, v are
# three inputs; a plain MLP): every block's Wq, Wk, Wv (with biases), dense and ffn.2 (weights; their biases are
# whole already) and ffn.0 (with its bias) whole: 3 x (1,280^2 + 1,280) + 1,280^2 + 1,280 x 8,192 + 8,192 +
# 8,192 x 1,280 = 27,537,152 a block. BioGPT: k_proj and v_proj merged and split (MergedColumnParallelFuser), q_proj
# (1,024^2 + 1,024), out_proj (1,024^2), fc1 (1,024 x 4,096 + 4,096) and fc2 (4,096 x 1,024) whole: 10,490,880 a
# layer. ModernBERT-decoder: q/k/v and Wo fused and split (QKVFuser), the MLP's Wi (768 x 2,304) and Wo
# (1,152 x 768) whole: 2,654,208 a layer. At TP 2 each rank holds half of these more, in BF16: the parameters x 2 B / 2.
BACKEND = {
    "ctrl": ({"model_type": "ctrl", "architectures": ["CTRLLMHeadModel"], "vocab_size": 246534, "n_embd": 1280,
              "n_layer": 48, "n_head": 16, "dff": 8192, "n_positions": 50000}, 1_638_335_750, 48 * 27_537_152),
    "biogpt": ({"model_type": "biogpt", "architectures": ["BioGptForCausalLM"], "vocab_size": 42384,
                "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
                "max_position_embeddings": 1024}, 347_963_392, 24 * 10_490_880),
    "modernbert-decoder": ({"model_type": "modernbert-decoder", "architectures": ["ModernBertDecoderForCausalLM"],
                            "vocab_size": 50368, "hidden_size": 768, "num_hidden_layers": 22,
                            "num_attention_heads": 12, "intermediate_size": 1152, "max_position_embeddings": 8192},
                           149_690_560, 22 * 2_654_208),
}


def _vllm_weights(tmp_path, raw: dict, tp: int, version: str):
    import json

    from kvplan.engines.vllm_profile import predict_available
    from kvplan.sources import load_model

    (tmp_path / "config.json").write_text(json.dumps(raw))
    model = load_model(str(tmp_path))
    est = predict_available(model, total_bytes=80 * 2**30, gpu_memory_utilization=0.9, tp=tp, version=version)
    return est.weight_bytes, " ".join(est.notes)


@pytest.mark.parametrize("name", list(BACKEND))
def test_vllm_034_transformers_backend_holds_unfused_linears_whole(tmp_path, name):
    raw, split_per_gpu, whole_params = BACKEND[name]
    # the per-GPU split of the tests above (the checkpoint's layout), which vLLM 0.33 (no such fallback modelled) keeps
    assert _vllm_weights(tmp_path, raw, 2, "0.33.0")[0] == split_per_gpu
    got, notes = _vllm_weights(tmp_path, raw, 2, "0.34.0")
    assert got == split_per_gpu + whole_params * 2 // 2
    # the attention output projection whole while vLLM's attention keeps heads / TP: start-up fails at TP > 1
    assert ("would fail at start-up" in notes) == (name != "modernbert-decoder")
    assert "would fail" not in _vllm_weights(tmp_path, raw, 1, "0.34.0")[1]


def test_vllm_034_transformers_backend_figures_by_hand(tmp_path):
    # CTRL at TP 2: 1,638,335,750 + 1,321,783,296; BioGPT 347,963,392 + 251,781,120; ModernBERT-decoder
    # 149,690,560 + 58,392,576
    assert [_vllm_weights(tmp_path, BACKEND[n][0], 2, "0.34.0")[0] for n in BACKEND] == [
        2_960_119_046, 599_744_512, 208_083_136]


@pytest.mark.parametrize("multi_query", [True, False])
def test_vllm_034_gpt_bigcode_without_multi_query_fails_above_tp_1(tmp_path, multi_query):
    # without multi_query c_attn's packed split is three head_dim widths, which PackedQKVFuser does not take, so
    # c_attn and attn.c_proj are whole while the attention keeps heads / TP; with it they are fused and split
    raw = {"model_type": "gpt_bigcode", "architectures": ["GPTBigCodeForCausalLM"], "vocab_size": 96,
           "n_embd": 64, "n_head": 4, "n_layer": 2, "n_positions": 64, "multi_query": multi_query}
    assert ("would fail at start-up" in _vllm_weights(tmp_path, raw, 2, "0.34.0")[1]) == (not multi_query)


def test_git_text_decoder_keeps_positions_layernorms_and_row_biases_whole():
    # microsoft/git-base's text decoder: 6 layers, hidden 768, 12 heads, mlp 3,072, vocab 30,522, 1,024 positions,
    # the output head untied (with its bias). A layer: query/key/value 3 x (768^2 + 768), attention.output.dense
    # 768^2 + 768, intermediate 768 x 3,072 + 3,072, output 3,072 x 768 + 768, two LayerNorms 2 x 1,536: 7,087,872
    raw = {"model_type": "git", "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 6,
           "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 1024,
           "tie_word_embeddings": False}
    model = build_model(raw, "git-base")
    total = 6 * 7_087_872 + 2 * 30522 * 768 + 30522 + 1024 * 768 + 1536
    assert total == 90_227_514 and model.param_count == total
    # whole: 6 x (two LayerNorms 3,072 + the two RowParallelLinear biases 1,536) + the embeddings' LayerNorm 1,536 +
    # the learned positions 1,024 x 768
    assert model.weight_replicated_bytes == (6 * (3072 + 1536) + 1536 + 1024 * 768) * 2 == 1_631_232


# -- Emu3 ----------------------------------------------------------------------------------------------------------

def test_emu3_text_model_keeps_two_norms_a_layer_whole():
    # Emu3TextConfig's defaults (transformers 5.25 configuration_emu3.py) written out: 32 layers, hidden 4,096, 32
    # query / 8 KV heads of 128, mlp 14,336, vocab 184,622, untied. A layer: q, o 4,096^2, k, v 4,096 x 1,024, mlp
    # 3 x 4,096 x 14,336, two norms: 218,112,000
    raw = {"model_type": "emu3", "text_config": {
        "model_type": "emu3_text_model", "vocab_size": 184622, "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "max_position_embeddings": 9216}}
    model = build_model(raw, "emu3")
    assert model.param_count == 32 * 218_112_000 + 2 * 184622 * 4096 + 4096 == 8_492_011_520
    # whole: 32 x 2 norms + the final norm, BF16; TP 2: (16,984,023,040 - 532,480) / 2 + 532,480
    assert model.weight_replicated_bytes == (32 * 2 * 4096 + 4096) * 2 == 532_480
    assert _per_gpu(model, 32, 2) == 8_491_745_280 + 532_480 == 8_492_277_760


# -- Granite Docling (transformers 5.25's format) ------------------------------------------------------------------

def test_granite_docling_text_names_its_modules_under_text_model():
    # GraniteDoclingTextConfig's defaults written out: 28 layers, hidden 1,024, 16 query / 4 KV heads of 64, mlp
    # 2,048, vocab 133,800, tied. A layer: q, o 1,024^2, k, v 1,024 x 256, mlp 3 x 1,024 x 2,048, two norms: 8,914,944
    raw = {"model_type": "granite_docling", "text_config": {
        "model_type": "granite_docling_text", "vocab_size": 133800, "hidden_size": 1024, "intermediate_size": 2048,
        "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 4,
        "max_position_embeddings": 32768}}
    model = build_model(raw, "granite-docling")
    assert model.param_count == 28 * 8_914_944 + 133800 * 1024 + 1024 == 386_630_656
    # whole: 28 x 2 norms + the final norm, BF16; TP 2: (773,261,312 - 116,736) / 2 + 116,736
    assert model.weight_replicated_bytes == (28 * 2 * 1024 + 1024) * 2 == 116_736
    assert _per_gpu(model, 28, 2) == 386_572_288 + 116_736 == 386_689_024
    family, f, _, layers, dims = _read(raw, "granite-docling")
    names = {n for m in table(f, layers, dims) for n in m.names()}
    assert {"model.text_model.layers.27.self_attn.q_proj", "model.text_model.embed_tokens"} <= names


# -- DeepSeek-OCR-2 (transformers 5.25's format) -------------------------------------------------------------------

def test_deepseek_ocr2_text_reads_mlp_layer_types_and_keeps_routers_whole():
    # a config written here in DeepSeek-3B-MoE's shape: 12 layers, hidden 1,280, 10 heads of 128 (MHA), layer 0 a
    # dense mlp of 6,848, layers 1-11 a MoE of 64 experts of 896, 2 shared experts, vocab 129,280, untied.
    # attention 4 x 1,280^2 and two norms a layer; the MoE: experts 64 x 3 x 1,280 x 896, router 64 x 1,280, shared
    # experts 3 x 1,280 x 1,792. Before: mlp_layer_types unread, layer 0 counted as a MoE (200,867,840 more)
    text = {"model_type": "deepseek_ocr2_text", "vocab_size": 129280, "hidden_size": 1280, "intermediate_size": 6848,
            "num_hidden_layers": 12, "num_attention_heads": 10, "num_key_value_heads": 10, "n_routed_experts": 64,
            "n_shared_experts": 2, "moe_intermediate_size": 896, "num_experts_per_tok": 6,
            "mlp_layer_types": ["dense"] + ["sparse"] * 11, "max_position_embeddings": 8192}
    model = build_model({"model_type": "deepseek_ocr2", "text_config": text}, "deepseek-ocr2")
    attention = 4 * 1280 * 1280 + 2 * 1280
    moe = 64 * 3 * 1280 * 896 + 64 * 1280 + 3 * 1280 * 1792
    total = 12 * attention + 3 * 1280 * 6848 + 11 * moe + 2 * 129280 * 1280 + 1280
    assert total == 2_934_734_080 and model.param_count == total
    # whole: 12 x 2 norms + the final norm, 11 routers of 64 x 1,280, BF16; TP 2:
    # (5,869,468,160 - 1,866,240) / 2 + 1,866,240
    assert model.weight_replicated_bytes == (12 * 2 * 1280 + 1280 + 11 * 64 * 1280) * 2 == 1_866_240
    assert _per_gpu(model, 12, 2) == 2_933_800_960 + 1_866_240 == 2_935_667_200


# -- Kosmos-2 (not served by vLLM 0.34) ----------------------------------------------------------------------------

def test_kosmos_2_text_model_is_counted_and_keeps_its_layernorms_whole():
    # Kosmos2TextConfig's defaults: 24 blocks, embed_dim 2,048, ffn_dim 8,192, 32 heads, vocab 65,037, tied. A block:
    # q/k/v/out_proj 4 x (2,048^2 + 2,048), inner_attn_ln, self_attn_layer_norm and final_layer_norm 3 x 4,096, fc1
    # 2,048 x 8,192 + 8,192, ffn_layernorm 2 x 8,192, fc2 8,192 x 2,048 + 2,048: 50,378,752 (before: not counted)
    model = build_model({"model_type": "kosmos-2", "text_config": {"model_type": "kosmos_2_text_model"}}, "kosmos-2")
    block = 4 * (2048 * 2048 + 2048) + 3 * 4096 + 2048 * 8192 + 8192 + 2 * 8192 + 8192 * 2048 + 2048
    assert block == 50_378_752
    assert model.param_count == 24 * block + 65037 * 2048 + 4096 == 1_342_289_920
    # whole: 24 x (the LayerNorms 28,672 + out_proj's and fc2's biases 4,096) + layer_norm 4,096, BF16
    assert model.weight_replicated_bytes == (24 * (28672 + 4096) + 4096) * 2 == 1_581_056


def test_kosmos_2_5_text_model_has_no_inner_attn_ln_and_a_segment_embedding():
    # Kosmos2_5TextConfig's defaults: 24 blocks, embed_dim 1,536, ffn_dim 6,144, 16 heads, vocab 108,481, tied. A
    # block: q/k/v/out_proj 4 x (1,536^2 + 1,536), self_attn_layer_norm and final_layer_norm 2 x 3,072, fc1 1,536 x
    # 6,144 + 6,144, ffn_layernorm 2 x 6,144, fc2 6,144 x 1,536 + 1,536: 28,343,808; segment_emb 2 x 1,536
    model = build_model({"model_type": "kosmos-2.5", "text_config": {"model_type": "kosmos_2_5_text_model"}}, "k25")
    block = 4 * (1536 * 1536 + 1536) + 2 * 3072 + 1536 * 6144 + 6144 + 2 * 6144 + 6144 * 1536 + 1536
    assert block == 28_343_808
    assert model.param_count == 24 * block + 108481 * 1536 + 3072 + 2 * 1536 == 846_884_352
    # whole: 24 x (LayerNorms 18,432 + out_proj's and fc2's biases 3,072) + layer_norm 3,072, BF16
    assert model.weight_replicated_bytes == (24 * (18432 + 3072) + 3072) * 2 == 1_038_336
