"""Per-module tables of Gemma, Gemma 2, Command R7B (cohere2), EXAONE 4.0, GLM-4-9B-chat-hf (glm), GLM-4-0414
(glm4), OLMo 3, LFM2 and LFM2-MoE (configs/weight_tables/dense.py), and the parameter counts they mirror: each table adds up to
the family's count, and the bytes each TP rank holds whole (the norms; o_proj's bias where attention_bias gives
one) are worked out here by hand from the bundled configs (model_specs/*.json) and the module shapes of
transformers 5.25 (modeling_gemma.py, modeling_gemma2.py, modeling_cohere2.py, modeling_exaone4.py,
modeling_glm.py, modeling_glm4.py, modeling_olmo3.py, modeling_lfm2.py, modeling_lfm2_moe.py). What vLLM 0.34
builds whole: the module's docstrings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from kvplan.engines.vllm_load import config_weights_per_gpu
from tests.weight_table_checks import per_gpu as _per_gpu

SPECS = Path(__file__).resolve().parent.parent / "model_specs"
DENSE_TYPES = {"gemma", "gemma2", "cohere2", "exaone4", "glm", "glm4", "olmo3", "lfm2", "lfm2_moe"}


def _raw(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def _bundled() -> list[str]:
    return sorted(p.stem for p in SPECS.glob("*.json") if json.loads(p.read_text()).get("model_type") in DENSE_TYPES)


def test_every_family_has_a_bundled_config():
    types = {json.loads((SPECS / f"{name}.json").read_text())["model_type"] for name in _bundled()}
    assert types == DENSE_TYPES


@pytest.mark.parametrize("name", _bundled())
def test_the_table_adds_up_to_the_family_count(name):
    family, f, _, layers, dims = _read(_raw(name), name)
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


# -- the counts the tables mirror (each was off before: transformers' modules, counted by hand) -------------------

def test_exaone_4_32b_counts_q_norm_and_k_norm():
    # hidden 5,120, 64 layers, 40 heads and 8 KV heads of 128, intermediate 27,392, vocab 102,400, head untied.
    # A layer: q 5,120 x 5,120 + k, v 2 x 5,120 x 1,024 + o 5,120 x 5,120 = 62,914,560; q_norm and k_norm over
    # head_dim 2 x 128 (Exaone4Attention; uncounted before); mlp 3 x 5,120 x 27,392 = 420,741,120; post_attention
    # and post_feedforward_layernorm 2 x 5,120: 483,666,176
    model = build_model(_raw("exaone-4.0-32b"), "exaone4")
    assert model.param_count == 64 * 483_666_176 + 2 * 102_400 * 5_120 + 5_120 == 32_003_216_384


def test_olmo_3_7b_counts_q_norm_and_k_norm_over_the_whole_projections():
    # hidden 4,096, 32 layers, 32 heads and 32 KV heads of 128, intermediate 11,008, vocab 100,278, head untied.
    # A layer: q/k/v/o 4 x 4,096 x 4,096 = 67,108,864; q_norm over 32 x 128 and k_norm over 32 x 128 (Olmo3Attention;
    # uncounted before) 8,192; mlp 3 x 4,096 x 11,008 = 135,266,304; 2 norms 8,192: 202,391,552
    model = build_model(_raw("olmo-3-7b"), "olmo3")
    assert model.param_count == 32 * 202_391_552 + 2 * 100_278 * 4_096 + 4_096 == 7_298_011_136


def test_glm_4_0414_counts_four_norms_no_o_proj_bias_and_glm4configs_defaults():
    # the bundled config leaves out vocab_size and intermediate_size: Glm4Config's 151,552 and 13,696 (before: no
    # embeddings at all and a 4 x hidden MLP). hidden 4,096, 40 layers, 32 heads and 2 KV heads of 128,
    # attention_bias on q/k/v only. A layer: q 4,096 x 4,096 + k, v 2 x 4,096 x 256 + o 4,096 x 4,096 + biases 4,096
    # + 2 x 256 = 35,656,192; gate_up_proj 4,096 x 27,392 + down_proj 13,696 x 4,096 = 168,296,448; input,
    # post_self_attn, post_attention and post_mlp_layernorm 4 x 4,096: 203,969,024
    model = build_model(_raw("glm-4-9b-0414"), "glm4")
    assert model.param_count == 40 * 203_969_024 + 2 * 151_552 * 4_096 + 4_096 == 9_400_279_040


def test_glm_4_9b_chat_hf_counts_no_o_proj_bias_and_biases_q_k_v_by_default():
    # as GLM-4-0414 with two norms a layer: 35,656,192 + 168,296,448 + 8,192 = 203,960,832 (before: o_proj's bias
    # 4,096 a layer besides)
    raw = _raw("glm-4-9b-chat-hf")
    total = 40 * 203_960_832 + 2 * 151_552 * 4_096 + 4_096
    assert build_model(raw, "glm").param_count == total == 9_399_951_360
    # GlmConfig's attention_bias is true: a config that leaves it out has the q/k/v biases all the same
    raw.pop("attention_bias")
    assert build_model(raw, "glm-default-bias").param_count == total


def test_cohere2_counts_the_attention_biases_attention_bias_gives():
    # Command R7B: 8,028,033,024 without biases; Cohere2Attention biases q/k/v/o with attention_bias: a layer gains
    # q 32 x 128 + k, v 2 x 8 x 128 + o 4,096 = 10,240 (uncounted before)
    raw = dict(_raw("command-r7b"), attention_bias=True)
    assert build_model(_raw("command-r7b"), "c2").param_count == 8_028_033_024
    assert build_model(raw, "c2-bias").param_count == 8_028_033_024 + 32 * 10_240 == 8_028_360_704


# -- what each TP rank holds whole (BF16: 2 B a parameter) -------------------------------------------------------

def test_gemma_2_9b_keeps_four_norms_a_layer_whole():
    model = build_model(_raw("gemma-2-9b"), "gemma2")
    # 42 layers x 4 norms of 3,584 + the final norm: 605,696 parameters, 1,211,392 B
    assert model.weight_replicated_bytes == (42 * 4 * 3_584 + 3_584) * 2 == 1_211_392
    # TP 2: (18,483,411,968 - 1,211,392) / 2 + 1,211,392 (before: an even split, 9,241,705,984)
    assert model.weight_bytes == 18_483_411_968
    assert _per_gpu(model, 42, 2) == 9_241_100_288 + 1_211_392 == 9_242_311_680


def test_command_r7b_keeps_its_one_norm_a_layer_whole():
    model = build_model(_raw("command-r7b"), "cohere2")
    # a parallel block: one LayerNorm weight of 4,096 a layer (no bias), 32 layers + the final norm
    assert model.weight_replicated_bytes == (32 * 4_096 + 4_096) * 2 == 270_336
    # TP 2: (16,056,066,048 - 270,336) / 2 + 270,336
    assert _per_gpu(model, 32, 2) == 8_027_897_856 + 270_336 == 8_028_168_192


def test_exaone_4_32b_keeps_post_norms_and_q_k_norms_whole():
    model = build_model(_raw("exaone-4.0-32b"), "exaone4")
    # 64 layers x (2 norms of 5,120 + q_norm and k_norm of 128) + the final norm: 676,864 parameters
    assert model.weight_replicated_bytes == (64 * (2 * 5_120 + 2 * 128) + 5_120) * 2 == 1_353_728
    # TP 4: (64,006,432,768 - 1,353,728) / 4 + 1,353,728
    assert model.weight_bytes == 2 * 32_003_216_384 == 64_006_432_768
    assert _per_gpu(model, 64, 4) == 16_001_269_760 + 1_353_728 == 16_002_623_488


def test_glm_4_0414_keeps_four_norms_a_layer_whole():
    model = build_model(_raw("glm-4-9b-0414"), "glm4")
    # 40 layers x 4 norms of 4,096 + the final norm; the q/k/v biases split with the heads, o_proj has none
    assert model.weight_replicated_bytes == (40 * 4 * 4_096 + 4_096) * 2 == 1_318_912
    # TP 2: (18,800,558,080 - 1,318,912) / 2 + 1,318,912
    assert _per_gpu(model, 40, 2) == 9_399_619_584 + 1_318_912 == 9_400_938_496


def test_olmo_3_7b_keeps_its_whole_width_q_k_norms_whole_on_the_transformers_backend():
    model = build_model(_raw("olmo-3-7b"), "olmo3")
    # 32 layers x (2 norms of 4,096 + q_norm 32 x 128 + k_norm 32 x 128) + the final norm: 528,384 parameters
    whole = (32 * (2 * 4_096 + 4_096 + 4_096) + 4_096) * 2
    assert model.weight_replicated_bytes == whole == 1_056_768
    # TP 2: (14,596,022,272 - 1,056,768) / 2 + 1,056,768, in kvplan's plan and vLLM 0.34's profile
    assert _per_gpu(model, 32, 2) == 7_297_482_752 + 1_056_768 == 7_298_539_520
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == 7_298_539_520


def test_gemma_7b_and_glm_4_9b_chat_hf_keep_two_norms_a_layer_whole():
    gemma = build_model(_raw("gemma-7b"), "gemma")
    # 28 layers x 2 norms of 3,072 + the final norm; TP 2: (17,075,361,792 - 350,208) / 2 + 350,208
    assert gemma.weight_replicated_bytes == (28 * 2 * 3_072 + 3_072) * 2 == 350_208
    assert _per_gpu(gemma, 28, 2) == 8_537_505_792 + 350_208 == 8_537_856_000
    glm = build_model(_raw("glm-4-9b-chat-hf"), "glm")
    # 40 layers x 2 norms of 4,096 + the final norm; TP 2: (18,799,902,720 - 663,552) / 2 + 663,552
    assert glm.weight_replicated_bytes == (40 * 2 * 4_096 + 4_096) * 2 == 663_552
    assert _per_gpu(glm, 40, 2) == 9_399_619_584 + 663_552 == 9_400_283_136


def test_an_o_proj_bias_is_held_whole_and_q_k_v_biases_split():
    # Gemma-7B with attention_bias (a RowParallelLinear's bias is whole on every rank): 28 x 3,072 o_proj biases
    # join the 28 x 2 x 3,072 + 3,072 norms; the q/k/v biases (3 x 16 x 256 a layer) split with the heads
    model = build_model(dict(_raw("gemma-7b"), attention_bias=True), "gemma-bias")
    assert model.param_count == 8_537_680_896 + 28 * (3 * 4_096 + 3_072)
    assert model.weight_replicated_bytes == (28 * 3 * 3_072 + 3_072) * 2 == 522_240


# -- quantized: the table splits a format's weights module by module ---------------------------------------------

def test_gemma_7b_awq_keeps_the_norms_in_fp16():
    # AWQ 4-bit, group 128 (a config written here, not a published checkpoint's): the linear weights, 28 x (q, k, v
    # 3 x 3,072 x 4,096 + o 4,096 x 3,072 + mlp 3 x 3,072 x 24,576) = 28 x 276,824,064 = 7,751,073,792, at
    # 1/2 + (2 + 1/2) / 128 = 133/256 B; the embeddings 256,000 x 3,072 (the head tied) and norms 28 x 2 x 3,072 +
    # 3,072, 786,607,104, at 2 B (before: the norms at 133/256 B, 5,599,880,028 B)
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True}
    model = build_model(dict(_raw("gemma-7b"), quantization_config=awq), "gemma-awq")
    assert model.param_count == 7_751_073_792 + 786_607_104
    assert model.weight_bytes == 7_751_073_792 * 133 // 256 + 786_607_104 * 2 == 5_600_139_264
    assert any("read module by module" in n for n in model.notes)
    assert model.weight_replicated_bytes == (28 * 2 * 3_072 + 3_072) * 2


def test_exaone4_with_attention_bias_gets_no_table():
    # Exaone4Attention builds no biases whatever the config says: the counter's biases would have no module
    family, f, _, layers, dims = _read(dict(_raw("exaone-4.0-32b"), attention_bias=True), "exaone4-bias")
    assert table(f, layers, dims) == []


# -- LFM2 / LFM2-MoE: short convolutions and attention ----------------------------------------------------------

def test_lfm2_1_2b_keeps_its_norms_whole_and_splits_the_convolutions():
    model = build_model(_raw("lfm2-1.2b"), "lfm2")
    # hidden 2,048, 16 layers (attention at 2, 5, 8, 10, 12, 14: 6; short convolutions: 10), 32 heads and 8 KV heads
    # of 64, conv_L_cache 3, no conv_bias, MLP 2/3 x 12,288 = 8,192 (a multiple of 256), vocab 65,536, the head tied.
    # attention q 2,048 x 2,048 + k, v 2 x 2,048 x 512 + out 2,048 x 2,048 + q/k_layernorm 2 x 64 = 10,485,888;
    # conv in_proj 2,048 x 6,144 + conv 2,048 x 3 + out_proj 2,048 x 2,048 = 16,783,360; w1/w3/w2 3 x 2,048 x
    # 8,192 = 50,331,648; operator_norm and ffn_norm 4,096
    total = 6 * 10_485_888 + 10 * 16_783_360 + 16 * (50_331_648 + 4_096) + 65_536 * 2_048 + 2_048
    assert model.param_count == total == 1_170_340_608
    # whole: 16 x 2 norms of 2,048, 6 x (q_layernorm + k_layernorm) of 64, embedding_norm 2,048: 68,352
    assert model.weight_replicated_bytes == (16 * 2 * 2_048 + 6 * 2 * 64 + 2_048) * 2 == 136_704
    # TP 2: (2,340,681,216 - 136,704) / 2 + 136,704 (before: an even split, 1,170,340,608)
    assert _per_gpu(model, 16, 2) == 1_170_272_256 + 136_704 == 1_170_408_960


def test_lfm2_with_conv_bias_holds_the_out_proj_bias_whole():
    # conv_bias: in_proj 6,144, conv 2,048 and out_proj 2,048 biases on each of the 10 conv layers; only out_proj's
    # (a RowParallelLinear in vLLM's ShortConv) is whole on every rank
    model = build_model(dict(_raw("lfm2-1.2b"), conv_bias=True), "lfm2-bias")
    assert model.param_count == 1_170_340_608 + 10 * (6_144 + 2_048 + 2_048)
    assert model.weight_replicated_bytes == (68_352 + 10 * 2_048) * 2 == 177_664


def test_lfm2_8b_a1b_keeps_norms_routers_and_expert_biases_whole():
    model = build_model(_raw("lfm2-8b-a1b"), "lfm2_moe")
    # hidden 2,048, 24 layers (attention at 2, 6, 10, 14, 18, 21: 6; conv: 18), layers 0 and 1 a dense MLP of
    # 7,168 (3 x 2,048 x 7,168 = 44,040,192), the other 22 MoE: 32 experts of 1,792 (32 x 3 x 2,048 x 1,792 =
    # 352,321,536), router 2,048 x 32, expert_bias 32; attention and conv layers as LFM2-1.2B's
    moe = 352_321_536 + 2_048 * 32 + 32
    total = (6 * 10_485_888 + 18 * 16_783_360 + 24 * 4_096 + 2 * 44_040_192 + 22 * moe + 65_536 * 2_048 + 2_048)
    assert model.param_count == total == 8_339_930_560
    # whole: 24 x 2 norms of 2,048, 6 x 2 x 64, 22 x (router 65,536 + expert_bias 32), embedding_norm 2,048
    whole = 24 * 2 * 2_048 + 6 * 2 * 64 + 22 * (65_536 + 32) + 2_048
    assert model.weight_replicated_bytes == whole * 2 == 3_087_232
    # TP 2: (16,679,861,120 - 3,087,232) / 2 + 3,087,232
    assert _per_gpu(model, 24, 2) == 8_338_386_944 + 3_087_232 == 8_341_474_176
