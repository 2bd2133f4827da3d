"""Per-module tables of MiniMax-Text-01 / M1, Ling / Ring 2.0 (bailing_moe), DBRX and DeepSeek-MoE v1
(configs/weight_tables/moe.py): they add up to the parameter count, and the bytes each TP rank holds whole are
worked out here by hand from the module shapes (what vLLM builds whole: the module's docstring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from kvplan.weights.estimate import estimated

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "model_specs"
DATA = Path(__file__).resolve().parent / "data" / "configs"


def _raw(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", [SPECS / "minimax-text-01.json", SPECS / "minimax-m1.json",
                                  SPECS / "minimax-m1-hf.json", SPECS / "dbrx-instruct.json",
                                  DATA / "deepseek-moe-16b-base.json", DATA / "ling-lite-1.5.json",
                                  DATA / "ling-mini-2.0-trimmed.json", DATA / "ling-flash-2.0-handwritten.json",
                                  DATA / "edge0-8b-a1b-preview.json", DATA / "ming-v3-asr-handwritten.json"],
                         ids=lambda p: p.stem)
def test_the_table_adds_up_to_the_parameter_count(path):
    family, f, _, layers, dims = _read(_raw(path), path.stem)
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


def test_minimax_text_01_keeps_norms_and_routers_whole_and_splits_the_lightning_norm():
    model = build_model(_raw(SPECS / "minimax-text-01.json"), "minimax-text-01")
    # hidden 6,144, 64 heads x 128 (8,192), 8 KV heads, 32 experts of 9,216, vocab 200,064 untied, 80 layers of
    # which attn_type_list marks 10 softmax (1) and 70 lightning (0)
    softmax = 6144 * 8192 + 2 * 6144 * 1024 + 8192 * 6144  # q, k, v, o_proj: 113,246,208
    lightning = 6144 * 3 * 8192 + 8192 * 6144 + 6144 * 8192 + 8192  # qkv_proj, out_proj, output_gate, norm
    moe = 32 * 3 * 6144 * 9216 + 6144 * 32  # w1 / w3 / w2, block_sparse_moe.gate
    total = 2 * 200064 * 6144 + 6144 + 10 * softmax + 70 * lightning + 80 * (moe + 2 * 6144)
    assert total == model.param_count == 456_089_655_296
    # whole on every TP rank: 80 x (two norms + the router [32, 6,144]) + the final norm; the lightning layers'
    # self_attn.norm (8,192) splits with the heads (vLLM 0.23 MiniMaxText01RMSNormTP)
    whole = 80 * (2 * 6144 + 32 * 6144) + 6144
    assert whole == 16_717_824 and model.weight_replicated_bytes == 2 * whole
    # TP 8 in BF16: (912,179,310,592 - 33,435,648) / 8 + 33,435,648 = 114,051,670,016 B a GPU (an even split:
    # 114,022,413,824)
    assert stage_weight_bytes(estimated(model), 80, tp=8) == [(2 * total - 2 * whole) // 8 + 2 * whole] \
        == [114_051_670_016]


def test_dbrx_instruct_keeps_its_layernorms_and_routers_whole():
    model = build_model(_raw(SPECS / "dbrx-instruct.json"), "dbrx-instruct")
    # d_model 6,144, 48 heads of 128, kv_n_heads 8, 16 experts of ffn_hidden_size 10,752, vocab 100,352, 40 blocks
    attention = 6144 * (48 + 2 * 8) * 128 + 6144 * 6144  # Wqkv, out_proj: 88,080,384
    experts = 3 * 16 * 10752 * 6144  # w1, v1, w2 [16 x 10,752, 6,144] each
    total = 2 * 100352 * 6144 + 6144 + 40 * (attention + experts + 16 * 6144 + 2 * 6144)
    assert total == model.param_count == 131_596_523_520
    # whole on every TP rank: 40 x (norm_1 + norm_2 + ffn.router.layer [16, 6,144]) + norm_f
    whole = 40 * (2 * 6144 + 16 * 6144) + 6144
    assert whole == 4_429_824 and model.weight_replicated_bytes == 2 * whole
    # TP 8 in BF16: (263,193,047,040 - 8,859,648) / 8 + 8,859,648 = 32,906,883,072 (even split 32,899,130,880)
    assert stage_weight_bytes(estimated(model), 40, tp=8) == [(2 * total - 2 * whole) // 8 + 2 * whole] \
        == [32_906_883_072]


def test_ling_flash_2_0_keeps_qk_norms_routers_and_expert_bias_whole():
    model = build_model(_raw(DATA / "ling-flash-2.0-handwritten.json"), "ling-flash-2.0")
    # hidden 4,096, 32 heads + 2 x 4 KV heads of 128, use_qk_norm with use_rmsnorm (one 128-wide weight each),
    # layer 0 dense (9,216), 31 MoE layers: 256 experts of 1,024, router [256, 4,096] + expert_bias [256], one
    # shared expert of 1,024; vocab 157,184 untied
    attention = 4096 * 40 * 128 + 4096 * 4096 + 2 * 128 + 2 * 4096  # query_key_value, dense, qk norms, norms
    moe = 256 * 3 * 4096 * 1024 + 256 * 4096 + 256 + 3 * 4096 * 1024
    total = 2 * 157184 * 4096 + 4096 + 32 * attention + 3 * 4096 * 9216 + 31 * moe
    assert total == model.param_count == 102_889_705_216
    whole = 32 * (2 * 4096 + 2 * 128) + 31 * (256 * 4096 + 256) + 4096
    assert whole == 32_788_224 and model.weight_replicated_bytes == 2 * whole
    # TP 4: (205,779,410,432 - 65,576,448) / 4 + 65,576,448 = 51,494,034,944 (even split 51,444,852,608)
    assert stage_weight_bytes(estimated(model), 32, tp=4) == [(2 * total - 2 * whole) // 4 + 2 * whole] \
        == [51_494_034_944]


def test_ling_lite_1_5_counts_no_qk_norm_or_expert_bias():
    family, f, _, layers, dims = _read(_raw(DATA / "ling-lite-1.5.json"), "ling-lite-1.5")
    names = {m.name for m in table(f, layers, dims)}
    # BailingMoeForCausalLM, use_qk_norm and moe_router_enable_expert_bias unset: no query_layernorm, no
    # expert_bias; first_k_dense_replace 0: every layer MoE, with mlp.shared_experts (2 x 1,408)
    assert "layers.0.attention.query_key_value" in names and "layers.0.attention.query_layernorm" not in names
    assert "layers.0.mlp.gate" in names and "layers.0.mlp.gate.expert_bias" not in names
    assert "layers.0.mlp.shared_experts.down_proj" in names and "layers.0.mlp.gate_proj" not in names


def test_deepseek_moe_16b_keeps_norms_and_routers_whole():
    model = build_model(_raw(DATA / "deepseek-moe-16b-base.json"), "deepseek-moe-16b")
    # hidden 2,048, 16 heads = 16 KV heads of 128, layer 0 dense (10,944), 27 MoE layers: 64 experts of 1,408,
    # router [64, 2,048] (no e_score_correction_bias: no topk_method), shared experts 2 x 1,408; vocab 102,400
    attention = 4 * 2048 * 2048 + 2 * 2048
    moe = 64 * 3 * 2048 * 1408 + 64 * 2048 + 3 * 2048 * 2816
    total = 2 * 102400 * 2048 + 2048 + 28 * attention + 3 * 2048 * 10944 + 27 * moe
    assert total == model.param_count == 16_375_728_128
    whole = 28 * 2 * 2048 + 27 * 64 * 2048 + 2048
    assert whole == 3_655_680 and model.weight_replicated_bytes == 2 * whole
    # TP 2: (32,751,456,256 - 7,311,360) / 2 + 7,311,360 = 16,379,383,808 (even split 16,375,728,128)
    assert stage_weight_bytes(estimated(model), 28, tp=2) == [(2 * total - 2 * whole) // 2 + 2 * whole] \
        == [16_379_383_808]


def test_ling_3_0_edge0_holds_mla_down_projections_and_kda_o_norm_whole():
    raw = _raw(DATA / "edge0-8b-a1b-preview.json")
    del raw["quantization"], raw["quantization_config"]  # an MLX 4-bit config, read here as the BF16 original
    model = build_model(raw, "edge0")
    # BailingMoeV3ForCausalLM, hidden 1,536, 24 layers: MLA where (i + 1) % layer_group_size 4 == 0 (6 layers), Kimi
    # Delta Attention on the other 18; 16 heads; layer 0 dense (4,608), 23 MoE layers of 128 experts (512) + 1 shared
    # MLA: q_a_proj 1,536 x 256, q_a_layernorm, q_b_proj 256 x 16 x 192, kv_a_proj_with_mqa 1,536 x (512 + 64),
    # kv_a_layernorm 512, kv_b_proj 512 x 16 x 256, dense 2,048 x 1,536, g_proj 1,536 x 16 (head_wise)
    mla = 1536 * 256 + 256 + 256 * 16 * 192 + 1536 * 576 + 512 + 512 * 16 * 256 + 2048 * 1536 + 1536 * 16
    # KDA over 16 heads of head_dim 128 (2,048): q/k/v_proj, three convolutions of kernel 4, A_log, dt_bias,
    # f_proj, b_proj 1,536 x 16, o_norm 128, o_proj, g_proj
    kda = 3 * 1536 * 2048 + 3 * 2048 * 4 + 16 + 2048 + 1536 * 2048 + 1536 * 16 + 128 + 2048 * 1536 + 1536 * 2048
    moe = 128 * 3 * 1536 * 512 + 128 * 1536 + 128 + 3 * 1536 * 512
    total = 2 * 157184 * 1536 + 1536 + 6 * mla + 18 * kda + 24 * 2 * 1536 + 3 * 1536 * 4608 + 23 * moe
    assert total == model.param_count == 7_893_392_800
    # whole: the norms, MLA's q_a_proj and kv_a_proj_with_mqa with their layernorms, KDA's o_norm, the routers
    # with expert_bias, the final norm
    whole = 24 * 2 * 1536 + 6 * (1536 * 256 + 256 + 1536 * 576 + 512) + 18 * 128 + 23 * (128 * 1536 + 128) + 1536
    assert whole == 12_274_816 and model.weight_replicated_bytes == 2 * whole
    # TP 2: (15,786,785,600 - 24,549,632) / 2 + 24,549,632 = 7,905,667,616 (even split 7,893,392,800)
    assert stage_weight_bytes(estimated(model), 24, tp=2) == [(2 * total - 2 * whole) // 2 + 2 * whole] \
        == [7_905_667_616]


def test_amd_dbrx_instruct_fp8_kv_reads_its_modules_one_by_one():
    # amd/dbrx-instruct-FP8-KV config.json (Quark, FP8 per-tensor weights and static activation scales): its
    # quantization_config, whose ignored_layers keep the LM head and the routers
    raw = dict(_raw(SPECS / "dbrx-instruct.json"), quantization_config={
        "activation_scheme": "static", "ignored_layers": ["lm_head", "*router.layer"], "kv_cache_scheme": "static",
        "quant_method": "fp8"})
    model = build_model(raw, "dbrx-instruct-fp8-kv")
    # quantized: every block's Wqkv and out_proj and its three expert tensors
    quantized = 40 * (6144 * 8192 + 6144 * 6144 + 3 * 16 * 10752 * 6144)
    assert quantized == 130_358_968_320
    # in BF16: wte and lm_head 2 x 100,352 x 6,144, the norms 40 x 2 x 6,144 + 6,144, the routers 40 x 16 x 6,144
    plain = 2 * 100352 * 6144 + 40 * 2 * 6144 + 6144 + 40 * 16 * 6144
    assert plain == 1_237_555_200 and model.param_count == quantized + plain
    # 1 B a weight, 2 B a float; a float32 weight_scale and input_scale (8 B) per quantized tensor, each expert's
    # own: 40 x (2 + 3 x 16) = 2,000 tensors (before the table: the norms and routers at 1 B, 132,829,648,896 B)
    assert model.weight_bytes == quantized + 2 * plain + 2000 * 8 == 132_834_094_720
    # whole on every TP rank: the norms and routers in BF16 and the 2,000 per-tensor scale pairs
    assert model.weight_replicated_bytes == 2 * (40 * 18 * 6144 + 6144) + 2000 * 8 == 8_875_648
