"""Per-module tables of DeepSeek-V4, MiniCPM3 and LongCat-Flash (configs/weight_tables/mla.py): they add up to the families' own parameter
counts, and the bytes a checkpoint stores and each TP rank holds whole are worked out here by hand from the bundled
configs (model_specs/*.json), module by module as vLLM 0.34 builds them (the table module's docstring says which
vLLM class makes each module whole or split, and compressed.py _FP32 which are float32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from kvplan.engines.vllm_load import config_weights_per_gpu
from kvplan.weights.estimate import estimated

SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def _raw(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


@pytest.mark.parametrize("name", ["deepseek-v4-flash", "deepseek-v4-pro", "minicpm3-4b", "longcat-flash-chat"])
def test_the_table_adds_up_to_the_family_count(name):
    family, f, _, layers, dims = _read(_raw(name), name)
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


def test_deepseek_v4_counts_the_router_bias_on_the_layers_not_routed_by_hash():
    raw = _raw("deepseek-v4-flash")
    base = build_model(raw, "flash").param_count
    # num_hash_layers 3 of 43: 40 layers hold ffn.gate.bias [256]; 5 hash layers leave 38
    assert build_model(dict(raw, num_hash_layers=5), "flash5").param_count == base - 2 * 256
    # mlp_layer_types, when given, says which layers are hash-routed
    kinds = ["moe"] * 43
    assert build_model(dict(raw, mlp_layer_types=kinds), "all-moe").param_count == base + 3 * 256


# DeepSeek-V4-Flash: hidden 4,096, 64 heads of 512, q_lora_rank 1,024, o_groups 8 of o_lora_rank 1,024, 256 experts
# of 2,048 and one shared, hc_mult 4, index 64 heads of 128, vocab 129,280 (head untied), 43 layers: 2 sliding
# (0, 1), 21 CSA (ratio 4: 2, 4 ... 42), 20 HCA (ratio 128: 3, 5 ... 41); 3 hash-routed layers.
# FP8 (UE8M0 block scales, 1 + 1/16,384 B) a layer: wq_a 4,096 x 1,024 + wkv 4,096 x 512 (both whole) + wq_b
# 1,024 x 32,768 + wo_a 4,096 x 8,192 + wo_b 8,192 x 4,096 + shared expert 3 x 4,096 x 2,048 = 132,120,576;
# a CSA layer's indexer.wq_b 1,024 x 8,192 = 8,388,608 (whole)
FLASH_FP8 = 43 * 132_120_576 + 21 * 8_388_608
# routed experts, MXFP4 (17/32 B)
FLASH_EXPERTS = 43 * 256 * 3 * 4096 * 2048
# BF16 a layer: q_norm 1,024, kv_norm 512, attn_norm and ffn_norm 4,096 each, router gate 256 x 4,096 = 1,058,304;
# a CSA layer: compressor wkv + wgate 2 x 4,096 x 1,024, norm 512, the indexer's compressor 2 x 4,096 x 256 and its
# norm 128, weights_proj 4,096 x 64 = 10,748,544; an HCA layer: wkv + wgate 2 x 4,096 x 512, norm 512 = 4,194,816;
# embed and head 129,280 x 4,096 each, final norm 4,096
FLASH_BF16 = 43 * 1_058_304 + 21 * 10_748_544 + 20 * 4_194_816 + 2 * 129_280 * 4096 + 4096
# float32: attn_sink 64 and hc_attn / hc_ffn (fn 24 x 16,384, base 24, scale 3) 2 x 393,243 a layer; gate.bias 256
# on 40 layers; ape 4 x 1,024 + 4 x 256 on CSA layers, 128 x 512 on HCA layers; hc_head fn 4 x 16,384, base 4, scale 1
FLASH_FP32 = 43 * (64 + 2 * 393_243) + 40 * 256 + 21 * 5_120 + 20 * 65_536 + 65_541


def test_deepseek_v4_flash_is_sized_module_by_module_in_its_checkpoint_dtypes():
    model = build_model(_raw("deepseek-v4-flash"), "flash")
    assert FLASH_FP8 + FLASH_EXPERTS + FLASH_BF16 + FLASH_FP32 == model.param_count == 284_332_240_471
    # 5,857,345,536 FP8 + 357,504 B of scales; 277,025,390,592 x 17/32; 1,414,188,672 x 2; 35,315,671 x 4
    assert FLASH_FP8 == 5_857_345_536 and FLASH_BF16 == 1_414_188_672 and FLASH_FP32 == 35_315_671
    stored = FLASH_FP8 + FLASH_FP8 // 16384 + FLASH_EXPERTS * 17 // 32 + 2 * FLASH_BF16 + 4 * FLASH_FP32
    # before: everything but the experts, embed and head at the FP8 rate, 155,536,021,485 B
    assert model.weight_bytes == stored == 155_997_081_820


def test_deepseek_v4_flash_holds_its_latent_projections_compressors_and_mixers_whole():
    model = build_model(_raw("deepseek-v4-flash"), "flash")
    # FP8, whole: wq_a + wkv 43 x 6,291,456, indexer.wq_b 21 x 8,388,608 = 446,693,376 (+ 27,264 B of scales)
    fp8 = 43 * (4096 * 1024 + 4096 * 512) + 21 * 1024 * 8192
    # BF16, whole: 4 norms a layer (43 x 9,728), the routers 43 x 1,048,576, the compressors and weights_proj
    # (21 x 10,748,544 + 20 x 4,194,816), the final norm
    bf16 = 43 * 9_728 + 43 * 256 * 4096 + 21 * 10_748_544 + 20 * 4_194_816 + 4096
    # float32, whole: everything float32 but the attention sinks, which split with the heads
    fp32 = FLASH_FP32 - 43 * 64
    whole = fp8 + fp8 // 16384 + 2 * bf16 + 4 * fp32
    assert whole == 1_298_226_140 and model.weight_replicated_bytes == whole  # before: 0
    # TP 4: (155,997,081,820 - 1,298,226,140) / 4 + 1,298,226,140 (before: an even split, 38,884,005,371)
    per_gpu = (155_997_081_820 - whole) // 4 + whole
    assert per_gpu == 39_972_940_060
    assert stage_weight_bytes(estimated(model), 43, tp=4) == [per_gpu]
    assert config_weights_per_gpu(model, 4, 1, "0.34.0") == per_gpu


# MiniCPM3-4B: hidden 2,560, 62 layers, 40 heads, q_lora_rank 768, kv_lora_rank 256, qk_rope 32, qk_nope 64,
# v_head_dim 2,560 / 40 = 64, intermediate 6,400, vocab 73,448, head tied. A layer: q_a_proj 2,560 x 768 = 1,966,080,
# q_a_layernorm 768, q_b_proj 768 x 40 x 96 = 2,949,120, kv_a_proj_with_mqa 2,560 x 288 = 737,280, kv_a_layernorm
# 256, kv_b_proj 256 x 40 x 128 = 1,310,720, o_proj 2,560 x 2,560 = 6,553,600; mlp 3 x 2,560 x 6,400 = 49,152,000;
# two norms 5,120: 62,674,944
MINICPM3 = 62 * 62_674_944 + 73_448 * 2560 + 2560


def test_minicpm3_holds_its_latent_projections_and_norms_whole():
    model = build_model(_raw("minicpm3-4b"), "minicpm3")
    assert model.param_count == MINICPM3 == 4_073_875_968
    # whole (vLLM 0.34 minicpm3.py: q_a_proj, kv_a_proj_with_mqa ReplicatedLinear; RMSNorms): 62 x (1,966,080 +
    # 768 + 737,280 + 256 + 5,120) + the final norm 2,560 = 167,991,808 parameters x 2 B
    whole = (62 * (1_966_080 + 768 + 737_280 + 256 + 5_120) + 2560) * 2
    assert model.weight_replicated_bytes == whole == 335_983_616  # before: 0
    # TP 2: (8,147,751,936 - 335,983,616) / 2 + 335,983,616 (before: an even split, 4,073,875,968)
    assert stage_weight_bytes(estimated(model), 62, tp=2) == [3_905_884_160 + whole] == [4_241_867_776]


def test_minicpm3_counts_the_biases_transformers_builds():
    raw = dict(_raw("minicpm3-4b"), attention_bias=True, mlp_bias=True)
    # modeling_minicpm3.py: attention_bias on q_a_proj (768), kv_a_proj_with_mqa (288) and o_proj (2,560);
    # mlp_bias on gate_proj and up_proj (6,400 each) and down_proj (2,560): 18,976 a layer
    assert build_model(raw, "minicpm3-bias").param_count == MINICPM3 + 62 * 18_976


# LongCat-Flash-Chat: hidden 6,144, 28 decoder layers of two MLA sublayers, 64 heads, q_lora_rank 1,536, kv_lora_rank
# 512, qk_rope 64, qk_nope 128, v_head_dim 128, ffn_hidden_size 12,288, 512 experts of 2,048 and 256 zero experts,
# vocab 131,072, head untied. A sublayer: q_a_proj 6,144 x 1,536 = 9,437,184, q_a_layernorm 1,536, q_b_proj 1,536 x
# 64 x 192 = 18,874,368, kv_a_proj_with_mqa 6,144 x 576 = 3,538,944, kv_a_layernorm 512, kv_b_proj 512 x 64 x 256 =
# 8,388,608, o_proj 8,192 x 6,144 = 50,331,648; mlps.s 3 x 6,144 x 12,288 = 226,492,416; two norms 12,288:
# 317,077,504. A decoder layer's MoE: experts 512 x 3 x 6,144 x 2,048, router.classifier 6,144 x 768 and its
# e_score_correction_bias 768
LONGCAT_MOE = 512 * 3 * 6144 * 2048 + 6144 * 768 + 768
LONGCAT = 56 * 317_077_504 + 28 * LONGCAT_MOE + 2 * 131_072 * 6144 + 6144


def test_longcat_flash_holds_latents_norms_and_routers_whole():
    model = build_model(_raw("longcat-flash-chat"), "longcat")
    assert model.param_count == LONGCAT == 560_664_980_480  # the published 560B
    # whole: each sublayer's q_a_proj, kv_a_proj_with_mqa (DeepseekV2MLAAttention), q_a / kv_a_layernorm and two
    # norms; each decoder layer's router (classifier and e_score_correction_bias); the final norm
    whole = 56 * (9_437_184 + 1_536 + 3_538_944 + 512 + 12_288) + 28 * (6144 * 768 + 768) + 6144
    assert whole == 859_614_208 and model.weight_replicated_bytes == 2 * whole  # before: 0
    # TP 8: (1,121,329,960,960 - 1,719,228,416) / 8 + 1,719,228,416 (before: an even split, 140,166,245,120)
    per_gpu = (2 * LONGCAT - 2 * whole) // 8 + 2 * whole
    assert per_gpu == 139_951_341_568 + 1_719_228_416 == 141_670_569_984
    assert stage_weight_bytes(estimated(model), 56, tp=8) == [per_gpu]


def test_deepseek_v4_flash_nvfp4_experts_read_moe_quant_algo():
    # the bundled config with quantization_config's moe_quant_algo NVFP4, the field vLLM 0.34's DeepseekV4FP8Config
    # reads (not a published checkpoint's config): the routed experts in NVFP4, the rest as in the FP4 checkpoint
    raw = _raw("deepseek-v4-flash")
    raw["quantization_config"] = dict(raw["quantization_config"], moe_quant_algo="NVFP4")
    model = build_model(raw, "flash-nvfp4")
    assert model.weight_dtype == "nvfp4 experts + fp8"
    # experts at 1/2 + 1/16 B (an F8_E4M3 scale per 16) + float32 weight_scale_2 and input_scale for each of the
    # 43 x 256 x 3 expert tensors (264,192 B, whole on every rank); the other modules' 8,827,343,068 B as above
    scalars = 43 * 256 * 3 * 8
    assert model.weight_bytes == FLASH_EXPERTS * 9 // 16 + scalars + 8_827_343_068 == 164_654_389_468
    assert model.weight_replicated_bytes == 1_298_226_140 + scalars  # before: MXFP4 experts, 155,997,081,820 B


def test_deepseek_v4_modules_match_a_list_written_against_the_checkpoint_names():
    from kvplan.configs.weight_tables import split
    from kvplan.configs.quant_exclude import MODELOPT, Matcher

    # a ModelOpt-style list in the checkpoint's own names (an illustration, not a published config): the
    # attention and the shared experts kept, the head named bare
    family, f, _, layers, dims = _read(_raw("deepseek-v4-flash"), "flash")
    s = split(table(f, layers, dims), Matcher(MODELOPT, ("*.attn.*", "*.ffn.shared_experts.*", "head")), True)
    # kept: wq_a, wq_b, wkv, wo_a, wo_b (132,120,576 - 25,165,824 = 106,954,752 a layer) and the indexer's wq_b
    # (21 x 8,388,608); the shared experts 43 x 25,165,824; the head 129,280 x 4,096. The compressors' wkv / wgate
    # and weights_proj are never quantized, so not "kept"; only the routed experts stay quantized
    assert s.kept == {"attention": 43 * 106_954_752 + 21 * 8_388_608, "shared experts": 43 * 25_165_824,
                      "lm_head": 129_280 * 4096}
    assert s.quantized == FLASH_EXPERTS and s.tensors == 43 * 256 * 3
