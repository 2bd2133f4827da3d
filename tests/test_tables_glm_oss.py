"""Per-module tables of GLM-4.5 / 4.7 (glm4_moe), GLM-4.7-Flash (glm4_moe_lite) and gpt-oss
(configs/weight_tables/glm_oss.py): they add up to the parameter count, and the bytes each TP rank holds whole
are worked out here by hand from the module shapes (transformers 5.25 modeling_glm4_moe.py,
modeling_glm4_moe_lite.py, modeling_gpt_oss.py; what vLLM 0.34 builds whole: the module's docstring)."""

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


@pytest.mark.parametrize("name", ["glm-4.5-air", "glm-4.7", "glm-4.7-flash", "gpt-oss-20b", "gpt-oss-120b"])
def test_the_table_adds_up_to_the_parameter_count(name):
    family, f, _, layers, dims = _read(_raw(name), name)
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


def test_glm_4_5_air_counts_no_o_proj_bias_and_keeps_norms_and_routers_whole():
    raw = _raw("glm-4.5-air")
    model = build_model(raw, "glm-4.5-air")
    # hidden 4,096, 96 heads x 128, 8 KV heads, attention_bias on q/k/v only (Glm4MoeAttention: o_proj bias=False)
    attention = 2 * 4096 * 96 * 128 + 2 * 4096 * 8 * 128 + 96 * 128 + 2 * 8 * 128
    dense = 3 * 4096 * 10944  # layer 0 (first_k_dense_replace 1)
    # 128 experts of 1,408, router [128, 4,096] + e_score_correction_bias [128], one shared expert of 1,408
    moe = 128 * 3 * 4096 * 1408 + 128 * 4096 + 128 + 3 * 4096 * 1408
    total = 2 * 151552 * 4096 + 4096 + 46 * (attention + 2 * 4096) + dense + 45 * moe
    assert total == 106_852_251_264  # the model card's 106B; 188,416 (46 x 4,096 o_proj biases) less than before
    assert model.param_count == total
    # whole on every TP rank: 46 x 2 norms + the final norm, 45 routers with their score biases; BF16
    whole = 46 * 2 * 4096 + 4096 + 45 * (128 * 4096 + 128)
    assert whole == 23_979_648 and model.weight_replicated_bytes == 2 * whole
    # TP 4: (213,704,502,528 - 47,959,296) / 4 + 47,959,296 B a GPU
    assert stage_weight_bytes(estimated(model), 46, tp=4) == [(2 * total - 2 * whole) // 4 + 2 * whole]


def test_glm_4_7_flash_holds_the_latent_projections_whole():
    model = build_model(_raw("glm-4.7-flash"), "glm-4.7-flash")
    # 47 layers of hidden 2,048: q_a_proj 2,048 x 768, q_a_layernorm 768, kv_a_proj_with_mqa 2,048 x (512 + 64),
    # kv_a_layernorm 512, two norms; 46 MoE layers' routers [64, 2,048] + 64; the final norm
    per_layer = 2048 * 768 + 768 + 2048 * (512 + 64) + 512 + 2 * 2048
    whole = 47 * per_layer + 46 * (64 * 2048 + 64) + 2048
    assert whole == 135_655_040 and model.weight_replicated_bytes == 2 * whole


def test_gpt_oss_120b_mxfp4_keeps_norms_routers_and_o_proj_biases_whole():
    model = build_model(_raw("gpt-oss-120b"), "gpt-oss-120b")
    assert "mxfp4" in model.weight_dtype
    # 36 layers of hidden 2,880: two norms, the router [128, 2,880] + bias [128], o_proj's bias [2,880] (a
    # RowParallelLinear, bias=True); the final norm. The sinks (64 a layer) split with the heads. All BF16 in the
    # MXFP4 checkpoint (modules_to_not_convert: self_attn, mlp.router; norms are not linear layers)
    whole = 36 * (2 * 2880 + 128 * 2880 + 128 + 2880) + 2880
    assert whole == 13_589_568 and model.weight_replicated_bytes == 2 * whole
    # the checkpoint's own bytes are unchanged: the experts' 36 x 128 x 3 x 2,880 x 2,880 weights at 17/32 B
    # (MXFP4 blocks and scales), the other 116,829,156,672 - 114,661,785,600 parameters at 2 B
    experts = 36 * 128 * 3 * 2880 * 2880
    assert model.param_count == 116_829_156_672 and experts == 114_661_785_600
    assert model.weight_bytes == int(experts * 17 / 32 + (model.param_count - experts) * 2)
    # TP 2, in kvplan's plan and vLLM's profile: 65,248,815,744 B (the Hub index's total_size, which this estimate
    # meets) less 27,179,136 whole, halved: 32,610,818,304, + 27,179,136 (13,589,568 B above an even split)
    assert model.weight_bytes == 65_248_815_744
    assert stage_weight_bytes(estimated(model), 36, tp=2) == [32_637_997_440]
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == 32_637_997_440


def test_glm_4_5_air_fp8_block_splits_module_by_module():
    # llm-compressor's FP8_BLOCK recipe for GLM (examples/model_free_ptq/glm_4.6_fp8_block.py: ignore the routers
    # "re:.*gate$", lm_head and the embeddings), written out as compressed-tensors does, with float32 block scales
    group = {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "block",
                                                "block_structure": [128, 128], "scale_dtype": "torch.float32"}}
    raw = dict(_raw("glm-4.5-air"), quantization_config={
        "quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": group},
        "ignore": ["re:.*gate$", "lm_head", "model.embed_tokens"]})
    model = build_model(raw, "glm-4.5-air-fp8-block")
    # quantized: every layer's q/k/v/o weights, layer 0's dense MLP, 45 layers' experts and shared expert
    attention = 2 * 4096 * 12288 + 2 * 4096 * 1024
    quantized = 46 * attention + 3 * 4096 * 10944 + 45 * (128 + 1) * 3 * 4096 * 1408
    assert quantized == 105_586_098_176
    # the rest in BF16: embeddings and head 2 x 151,552 x 4,096, q/k/v biases 46 x (12,288 + 2 x 1,024), norms
    # 46 x 2 x 4,096 + 4,096, routers 45 x (128 x 4,096 + 128)
    plain = 2 * 151552 * 4096 + 46 * (12288 + 2048) + 46 * 2 * 4096 + 4096 + 45 * (128 * 4096 + 128)
    assert plain == 1_266_153_088 and model.param_count == quantized + plain
    # 1 B a weight + a float32 scale a 128 x 128 block (105,586,098,176 / 4,096 = 25,777,856 B of scales)
    assert model.weight_bytes == quantized + quantized // 4096 + 2 * plain == 108_144_182_208
    # whole on every TP rank: the norms and routers, as in BF16 (no linear module of this family is whole)
    assert model.weight_replicated_bytes == 2 * (46 * 2 * 4096 + 4096 + 45 * (128 * 4096 + 128)) == 47_959_296
