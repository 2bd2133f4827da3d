"""What each TP rank holds whole of an unquantized checkpoint sized from its config (ModelSpec.weight_replicated,
counted on first use from configs/weight_tables/__init__.py), in kvplan's plan and in vLLM's profile.

Whole on every rank in vLLM 0.34.0 (read): RMSNorm weights (layers/layernorm.py RMSNorm: weight [hidden_size]),
MoE routers (models/qwen3_moe.py: mlp.gate is fused_moe/router/gate_linear.py GateLinear, a ReplicatedLinear) and
the bias of a RowParallelLinear (layers/linear.py RowParallelLinear.__init__: bias [output_size] on every rank,
loaded whole, added on rank 0 only; every o_proj of these families is one). Split with the heads: MiniMax-M2's
q_norm / k_norm over all heads (models/minimax_m2.py MiniMaxText01RMSNormTP, hidden_size // tp a rank).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model, weight_tables
from kvplan.engines.vllm_profile import predict_available
from kvplan.engines.vllm_load import config_weights_per_gpu, rope_bytes
from kvplan.sources import load_model
from kvplan.weights.estimate import estimated
from kvplan_inprocess import kvplan

SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def _spec(name: str, **extra) -> dict:
    raw = dict(json.loads((SPECS / f"{name}.json").read_text()), **extra)
    raw.pop("quantization_config", None)
    return raw


# Qwen3-30B-A3B in BF16: 30,532,122,624 parameters (its index total_size, 61,064,245,248 B, is the count x 2 B:
# docs/weights.md). Whole on each rank: the routers 48 x 2,048 x 128 = 12,582,912 and the norms
# 48 x (2 x 2,048 + 2 x 128) + 2,048 = 210,944 parameters, 12,793,856 x 2 B = 25,587,712 B.
QWEN3_30B_BYTES = 61_064_245_248
QWEN3_30B_WHOLE = 2 * (48 * 2048 * 128 + 48 * (2 * 2048 + 2 * 128) + 2048)


def test_qwen3_30b_bf16_keeps_norms_and_routers_whole_in_the_plan_and_the_vllm_profile(tmp_path):
    model = build_model(_spec("qwen3-30b-a3b"), "q30-bf16")
    assert model.weight_bytes == QWEN3_30B_BYTES
    assert QWEN3_30B_WHOLE == 25_587_712 and model.weight_replicated_bytes == QWEN3_30B_WHOLE
    # TP 2: (61,064,245,248 - 25,587,712) / 2 + 25,587,712 = 30,544,916,480 B a GPU (before: 30,532,122,624, all of it
    # halved, 12,793,856 B under); TP 2 x PP 2: 61,038,657,536 / 4 + 25,587,712 / 2 = 15,272,458,240
    assert stage_weight_bytes(estimated(model), 48, tp=2) == [30_544_916_480]
    assert stage_weight_bytes(estimated(model), 48, tp=2, pp=2) == [15_272_458_240] * 2
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == 30_544_916_480
    # vLLM's profile (no rotary tables: a config given as a dict has no file to read them from, and says so)
    profile = predict_available(model, total_bytes=80 * 2**30, gpu_memory_utilization=0.9, tp=2, version="0.34.0",
                                max_model_len=8192, weights=estimated(model))
    assert rope_bytes(model, "0.34.0", 8192) is None and profile.weight_bytes == 30_544_916_480
    # the CLI's plan of that config with no weights beside it
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_spec("qwen3-30b-a3b")))
    out = kvplan("estimate", str(path), "--gpu", "h100", "--tp", "2", "--context", "8k", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["capacity"]["weight_bytes_per_gpu"] == 30_544_916_480


def test_a_row_parallel_bias_is_whole_and_column_parallel_biases_split():
    # Llama-3.1-8B (8,030,261,248 parameters, its model card) with attention_bias: q, k, v and o_proj gain biases,
    # 32 x (4,096 + 1,024 + 1,024 + 4,096) = 327,680 (transformers LlamaAttention: bias=attention_bias on all four).
    # Whole on each rank: the norms 32 x 2 x 4,096 + 4,096 = 266,240 and the o_proj biases 32 x 4,096 = 131,072
    # (RowParallelLinear); q/k/v's (QKVParallelLinear, a column split) divide with their heads.
    model = build_model(_spec("llama-3.1-8b", attention_bias=True), "llama-bias")
    assert model.param_count == 8_030_261_248 + 327_680
    assert model.weight_replicated_bytes == (266_240 + 131_072) * 2 == 794_624
    # TP 2: (16,061,177,856 - 794,624) / 2 + 794,624 = 8,030,986,240 B
    assert config_weights_per_gpu(model, 2) == 8_030_986_240
    assert stage_weight_bytes(estimated(model), 32, tp=2) == [8_030_986_240]


def test_minimax_m2_query_and_key_norms_split_with_the_heads():
    # MiniMax-M2 (62 layers, hidden 3,072, 256 experts): whole on each rank the two norms a layer and the final one,
    # 62 x 2 x 3,072 + 3,072 = 384,000, the routers 62 x 3,072 x 256 = 48,758,784 and their
    # e_score_correction_bias 62 x 256 = 15,872; not its q_norm [48 x 128] and k_norm [8 x 128], split by vLLM
    model = build_model(_spec("minimax-m2", torch_dtype="bfloat16"), "minimax-m2-bf16")
    assert model.weight_replicated_bytes == (384_000 + 48_758_784 + 15_872) * 2 == 98_317_312


def test_the_table_is_built_only_when_a_tp_split_needs_it(monkeypatch):
    built = []
    real = weight_tables.table
    monkeypatch.setattr(weight_tables, "table", lambda *a: built.append(1) or real(*a))
    model = build_model(_spec("qwen3-30b-a3b"), "qwen3-30b-a3b")
    record = estimated(model)
    assert stage_weight_bytes(record, 48, tp=1) == [QWEN3_30B_BYTES]
    assert config_weights_per_gpu(model, 1) == QWEN3_30B_BYTES
    assert built == []  # nothing at TP 1
    stage_weight_bytes(record, 48, tp=2)
    config_weights_per_gpu(model, 2)
    assert built == [1]  # once, then kept


def test_a_bundled_total_equal_to_the_config_estimate_takes_its_replicated_bytes():
    # qwen3-30b-a3b's bundled total is its Hub index total_size, 61,064,245,248 B, the config's count x 2 B to the
    # byte (model_specs/weights.json): the same modules, so the same 25,587,712 B whole on each rank at TP 2, in
    # kvplan's plan and vLLM's profile (which adds its rotary cos/sin tables)
    out = kvplan("estimate", "qwen3-30b-a3b", "--gpu", "h100", "--tp", "2", "--context", "8k", "--format", "json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["model"]["weights"]["source"] == "bundled"
    assert report["capacity"]["weight_bytes_per_gpu"] == 30_544_916_480  # before: 30,532,122,624
    spec = load_model("qwen3-30b-a3b")  # vLLM's profile reads the same bundled record
    profile = predict_available(spec, total_bytes=80 * 2**30, gpu_memory_utilization=0.9, tp=2, version="0.34.0",
                                max_model_len=8192)
    assert profile.weight_bytes == 30_544_916_480 + rope_bytes(spec, "0.34.0", 8192)
    # Llama-3.1-8B's bundled index total 16,060,522,496 B (8,030,261,248 x 2): its norms, 266,240 parameters, whole
    # on each rank: 16,060,522,496 / 2 + 266,240 = 8,030,527,488 at TP 2 (before: 8,030,261,248)
    out = kvplan("estimate", "llama-3.1-8b", "--gpu", "h100", "--tp", "2", "--context", "8k", "--format", "json")
    assert json.loads(out.stdout)["capacity"]["weight_bytes_per_gpu"] == 8_030_527_488
