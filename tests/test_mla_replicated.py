"""MLA's latent down-projections and the DSA indexer, whole on every TP rank as vLLM 0.34.0 builds them, in the
config estimate and in a tensor table; o_proj biases whole and MiniMax-M2's q/k norms split in a tensor table too.

Read in vLLM 0.34.0: model_executor/models/deepseek_v2.py DeepseekV2MLAAttention (fused_qkv_a_proj is
DeepSeekV2FusedQkvAProjLinear, a MergedColumnParallelLinear with disable_tp=True; without a q_lora_rank,
kv_a_proj_with_mqa is a ReplicatedLinear), Indexer and models/deepseek_v32/attention.py DeepseekV32Indexer (wq_b a
ReplicatedLinear; wk and weights_proj fused into wk_weights_proj, disable_tp=True); layers/linear.py
RowParallelLinear (its bias [output_size] on every rank); models/minimax_m2.py (q_norm / k_norm are
MiniMaxText01RMSNormTP, hidden_size // tp a rank).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model
from kvplan.weights.estimate import estimated
from kvplan.weights.load import from_safetensors
from kvplan_inprocess import kvplan
from safetensors_files import write_safetensors

SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def _spec(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def test_deepseek_v2_lite_keeps_kv_a_proj_with_mqa_whole():
    # DeepSeek-V2-Lite (its config: hidden 2,048, no q_lora_rank, kv_lora_rank 512, qk_rope_head_dim 64, 27 layers,
    # the first dense, 64 routed experts), BF16, 15,706,484,224 parameters. Whole on each rank:
    #   norms 27 x (2 x 2,048 + kv_a_layernorm 512) + 2,048 = 126,464; routers 26 x 2,048 x 64 = 3,407,872
    #   kv_a_proj_with_mqa (a ReplicatedLinear without q_lora_rank) 27 x 2,048 x (512 + 64) = 31,850,496
    # (3,534,336 + 31,850,496) x 2 B = 70,769,664 B (before: 7,068,672, the norms and routers only)
    model = build_model(_spec("deepseek-v2-lite"), "deepseek-v2-lite")
    assert model.weight_bytes == 15_706_484_224 * 2 == 31_412_968_448
    assert model.weight_replicated_bytes == (126_464 + 3_407_872 + 31_850_496) * 2 == 70_769_664
    # TP 8: (31,412,968,448 - 70,769,664) / 8 + 70,769,664 = 3,917,774,848 + 70,769,664 = 3,988,544,512 B a GPU
    # (before: 3,932,806,144)
    assert stage_weight_bytes(estimated(model), 27, tp=8) == [3_988_544_512]
    out = kvplan("weights", "deepseek-v2-lite", "--tp", "8", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["weight_bytes_per_gpu"] == 3_988_544_512


def test_deepseek_v32_fp8_keeps_q_a_kv_a_and_the_indexer_whole():
    # DeepSeek-V3.2-Exp (its config: hidden 7,168, q_lora_rank 1,536, kv_lora_rank 512 + rope 64, index_n_heads 64 x
    # index_head_dim 128, 61 layers, 3 dense, 256 experts), FP8 128 x 128 blocks with UE8M0 scales: 1 + 1 / 16,384 B
    # a quantized weight. Whole on each rank, per layer:
    #   quantized: q_a_proj 7,168 x 1,536 = 11,010,048, kv_a_proj_with_mqa 7,168 x 576 = 4,128,768,
    #              indexer wq_b 1,536 x 8,192 = 12,582,912, wk 7,168 x 128 = 917,504: 28,639,232
    #   bf16: indexer weights_proj 7,168 x 64 = 458,752 (vLLM builds it unquantized)
    # 61 x 28,639,232 = 1,746,993,152 x (1 + 1/16,384) = 1,746,993,152 + 106,628 = 1,747,099,780 B;
    # bf16: norms 61 x (2 x 7,168 + 1,536 + 512 + indexer k_norm 2 x 128) + 7,168 = 1,022,208, routers
    # 58 x 7,168 x 256 = 106,430,464 and 58 x 256 = 14,848 score biases, weights_proj 61 x 458,752 = 27,983,872:
    # 135,451,392 x 2 = 270,902,784 B. 1,747,099,780 + 270,902,784 = 2,018,002,564 B (before: 214,935,040)
    model = build_model(_spec("deepseek-v3.2-exp"), "deepseek-v3.2-exp")
    assert model.weight_replicated_bytes == 2_018_002_564


def test_a_tensor_table_keeps_mla_and_indexer_projections_whole(tmp_path):
    # one small DeepSeek-V3.2-style layer (hidden 64, q_lora 32, kv_lora 16 + rope 8, 4 heads of 16 + 8, indexer
    # 2 heads of 8), bytes = elements x 2 (BF16), 4 (F32), 1 (F8_E4M3)
    a = "model.layers.0.self_attn."
    bf16 = 2
    write_safetensors(tmp_path / "model.safetensors", {
        a + "q_a_proj.weight": ("F8_E4M3", [32, 64], 1),            # 2,048 B, whole
        a + "q_a_proj.weight_scale_inv": ("F32", [1, 1], 4),        # 4 B, whole
        a + "q_a_layernorm.weight": ("BF16", [32], bf16),           # 64 B, a norm: whole
        a + "q_b_proj.weight": ("BF16", [96, 32], bf16),            # 6,144 B, split
        a + "kv_a_proj_with_mqa.weight": ("BF16", [24, 64], bf16),  # 3,072 B, whole
        a + "kv_a_layernorm.weight": ("BF16", [16], bf16),          # 32 B, a norm
        a + "kv_b_proj.weight": ("BF16", [128, 16], bf16),          # 4,096 B, split
        a + "o_proj.weight": ("BF16", [64, 64], bf16),              # 8,192 B, split
        a + "indexer.wq_b.weight": ("BF16", [16, 32], bf16),        # 1,024 B, whole
        a + "indexer.wk.weight": ("BF16", [8, 64], bf16),           # 1,024 B, whole
        a + "indexer.k_norm.weight": ("BF16", [8], bf16),           # 16 B, a norm
        a + "indexer.weights_proj.weight": ("BF16", [2, 64], bf16),  # 256 B, whole
    })
    w = from_safetensors(tmp_path, {"model_type": "deepseek_v32"})
    assert w.total_bytes == 2048 + 4 + 64 + 6144 + 3072 + 32 + 4096 + 8192 + 1024 + 1024 + 16 + 256 == 25_972
    # TP 4: whole 2,048 + 4 + 3,072 + 1,024 + 1,024 + 256 = 7,428 and the norms 64 + 32 + 16 = 112; split
    # (6,144 + 4,096 + 8,192) / 4 = 4,608: 12,148 B a GPU (before: 25,860 / 4 + 112 = 6,577)
    assert stage_weight_bytes(w, 1, tp=4) == [7_428 + 112 + 4_608] == [12_148]
    assert stage_weight_bytes(w, 1, tp=1) == [25_972]


def test_a_tensor_table_keeps_o_proj_biases_whole_and_splits_minimax_m2_query_and_key_norms(tmp_path):
    # as the config path (test_replicated_unquantized.py): a RowParallelLinear's bias whole, q/k/v biases split;
    # MiniMax-M2's q_norm over 4 heads of 16 and k_norm over 2, split with the heads
    a = "model.layers.0.self_attn."
    write_safetensors(tmp_path / "model.safetensors", {
        a + "q_proj.bias": ("BF16", [64], 2),     # 128 B, split
        a + "o_proj.bias": ("BF16", [64], 2),     # 128 B, whole
        a + "q_norm.weight": ("BF16", [64], 2),   # 128 B: split for minimax_m2, whole otherwise
        a + "k_norm.weight": ("BF16", [32], 2),   # 64 B: the same
        "model.layers.0.input_layernorm.weight": ("BF16", [64], 2),  # 128 B, whole
    })
    minimax = from_safetensors(tmp_path, {"model_type": "minimax_m2"})
    # TP 4: o_proj bias 128 + input_layernorm 128 whole; q_proj bias 128 / 4 = 32, q_norm 128 / 4 = 32, k_norm
    # 64 / 4 = 16: 336 B (before: 32 + 32 + 128 + 64 + 128 = 384, the o_proj bias split and the q/k norms whole)
    assert stage_weight_bytes(minimax, 1, tp=4) == [128 + 128 + 32 + 32 + 16] == [336]
    # another family (Qwen3: q_norm / k_norm [head_dim], an RMSNorm whole on each rank): 128 + 128 + 32 + 128 + 64
    qwen = from_safetensors(tmp_path, {"model_type": "qwen3"})
    assert stage_weight_bytes(qwen, 1, tp=4) == [480]
