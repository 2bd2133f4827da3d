"""The fused-MoE workspace of vLLM 0.34's profile under data / expert parallelism (kvplan/engines/
vllm_moe_workspace.py, "Under DP / EP"), worked out by hand from the rules read in the 0.34.0 wheel:
- FusedMoEParallelConfig.make: under EP the MoE's tp_size is 1 (I whole), without EP TP is flattened over DP;
- AgRsAll2AllManager.dispatch (allgather_reducescatter): every DP rank's max_num_batched_tokens gathered, or under
  sequence-parallel MoE (EP, tp > 1, dp > 1) ceil(mnbt / tp) from each of the dp x tp EP ranks;
- TritonExperts.workspace_shapes: workspace13 (M, topk, max(I, H)) sharing its memory with the output (M, H),
  workspace2 (M, topk, max(2I, H)); 2 B an element, each rounded up to 256 B (every figure here is a multiple)."""

from __future__ import annotations

from kvplan.engines.vllm_moe_workspace import workspace

# config.json fields: Mixtral-8x7B (2 of 8 experts, I 14,336, H 4,096), Qwen3-30B-A3B, Qwen3-235B-A22B-FP8
MIXTRAL = {"num_experts_per_tok": 2, "intermediate_size": 14336, "hidden_size": 4096}
QWEN3_30B_A3B = {"num_experts_per_tok": 8, "moe_intermediate_size": 768, "hidden_size": 2048}
QWEN3_235B_FP8 = {"num_experts_per_tok": 8, "moe_intermediate_size": 1536, "hidden_size": 4096,
                  "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}


def test_mixtral_dp2_tp2_ep_on_h100():
    # sequence-parallel MoE: M = 2 x 2 x ceil(8,192 / 2) = 16,384; EP: I = 14,336 whole.
    # workspace13 16,384 x 2 x max(14,336, 4,096) = 469,762,048 (the output 16,384 x 4,096 = 67,108,864 shares it)
    # workspace2 16,384 x 2 x max(28,672, 4,096) = 939,524,096; (469,762,048 + 939,524,096) x 2 B = 2,818,572,288
    ws = workspace("0.34.0", "h100-sxm", MIXTRAL, tp=2, tokens=8192, dp=2, ep=True)
    assert ws.bytes == 2_818_572_288 and ws.persistent
    # under TP 2 alone: M 8,192, I 7,168: (8,192 x 2 x 7,168 + 8,192 x 2 x 14,336) x 2 B = 704,643,072
    assert workspace("0.34.0", "h100-sxm", MIXTRAL, tp=2, tokens=8192).bytes == 704_643_072


def test_mixtral_dp2_tp2_without_ep_splits_over_four():
    # no EP: I over tp x dp = 4 -> 3,584; M = 2 x 8,192 = 16,384 (gathered over the DP group)
    # workspace13 16,384 x 2 x max(3,584, 4,096) = 134,217,728 (= the output 16,384 x 4,096)
    # workspace2 16,384 x 2 x max(7,168, 4,096) = 234,881,024; (134,217,728 + 234,881,024) x 2 B = 738,197,504
    assert workspace("0.34.0", "a100-80gb", MIXTRAL, tp=2, tokens=8192, dp=2).bytes == 738_197_504


def test_mixtral_ep_over_tp_only():
    # dp 1, EP over TP 4: no all-to-all, M = 8,192; I whole:
    # (8,192 x 2 x 14,336 + 8,192 x 2 x 28,672) x 2 B = (234,881,024 + 469,762,048) x 2 = 1,409,286,144
    assert workspace("0.34.0", "h100-sxm", MIXTRAL, tp=4, tokens=8192, ep=True).bytes == 1_409_286_144


def test_sequence_parallel_rounds_up_per_tp_rank():
    from kvplan.engines.vllm_moe_workspace import moe_parallel

    # 8,191 tokens at dp 2 x tp 2 + EP: ceil(8,191 / 2) = 4,096 a TP rank, 2 x 2 x 4,096 = 16,384 gathered
    assert moe_parallel(2, 2, True, 8191, None).tokens == 16384
    # tp 1: 2 x 8,191 = 16,382, no rounding
    assert moe_parallel(1, 2, True, 8191, None).tokens == 16382
    # Qwen3-30B-A3B at dp 2 x tp 1 + EP: M 16,384, I 768: workspace13 16,384 x 8 x 2,048 = 268,435,456,
    # workspace2 16,384 x 8 x max(1,536, 2,048) = 268,435,456: 2 x 268,435,456 x 2 B = 1,073,741,824
    assert workspace("0.34.0", "h100-sxm", QWEN3_30B_A3B, tokens=8192, dp=2, ep=True).bytes == 1_073_741_824


def test_fp8_block_by_gpu_under_ep():
    # Hopper + EP: the FP8 oracle puts FlashInfer CUTLASS first: not read
    assert workspace("0.34.0", "h100-sxm", QWEN3_235B_FP8, tokens=8192, dp=2, ep=True).bytes is None
    # SM120 + EP (TritonExperts, DeepGEMM off): M 16,384, I 1,536 whole: workspace13 16,384 x 8 x 4,096 =
    # 536,870,912, workspace2 16,384 x 8 x max(3,072, 4,096) = 536,870,912: x 2 x 2 B = 2,147,483,648
    assert workspace("0.34.0", "rtx-pro-6000", QWEN3_235B_FP8, tokens=8192, dp=2, ep=True).bytes == 2_147_483_648


def test_not_read_elsewhere():
    # another all2all backend: its own dispatch layout
    ws = workspace("0.34.0", "h100-sxm", MIXTRAL, tp=1, tokens=256, dp=8, ep=True, a2a="deepep_low_latency")
    assert ws.bytes is None and "deepep_low_latency" in ws.path
    # the DP / EP rule is read in 0.34 only
    assert workspace("0.33.0", "h100-sxm", MIXTRAL, tokens=8192, dp=2, ep=True).bytes is None


def test_estimate_keeps_the_gathered_workspace():
    # kvplan estimate's vLLM 0.34 profile (0.27+: a persistent workspace is kept, in "consumed"): Qwen3-30B-A3B
    # at DP 2 + EP keeps 1,073,741,824 B of workspace where TP 1 keeps 8,192 x 8 x 2,048 x 2 x 2 B = 536,870,912
    from kvplan.engines.vllm_profile import predict_available
    from kvplan.sources import load_model

    model = load_model("qwen3-30b-a3b")
    kw = dict(total_bytes=80 * 2**30, gpu_memory_utilization=0.9, version="0.34.0", gpu="h100-sxm",
              max_num_batched_tokens=8192, max_num_seqs=256)
    one = predict_available(model, **kw)
    dep = predict_available(model, dp=2, ep=True, **kw)
    assert dep.buffer_bytes - one.buffer_bytes == 1_073_741_824 - 536_870_912
