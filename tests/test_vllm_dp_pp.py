"""vLLM 0.34 `--data-parallel-size` with `--pipeline-parallel-size` (kvplan.capacity.experts_pp).

Read in vLLM 0.34.0: config/parallel.py ParallelConfig.__post_init__ (world_size = pp x tp x pcp a DP rank; PP
refused only with elastic EP), engine/arg_utils.py (world_size_within_dp = pp x tp x pcp), distributed/
parallel_state.py initialize_model_parallel (ranks laid out (dp, pp, pcp, tp); the EP group one stage's dp x pcp x tp
GPUs), model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make (TP flattened over DP; pp no part).
So each DP rank is a TP x PP engine core, and a stage's routed experts are split over that stage's dp x tp GPUs.

Qwen3-30B-A3B (config.json: hidden 2,048, moe_intermediate 768, 128 experts in each of 48 layers, bf16): the routed
experts hold R = 48 x 128 x 3 x 2,048 x 768 x 2 B = 57,982,058,496 B. kvplan splits a checkpoint total without a
tensor table evenly over the stages, so at --pp 2 a GPU holds R / 2 of them; with --dp 2 each stage's half is split
over its 2 GPUs (one a DP rank): R / 4 a GPU, R / 4 = 14,495,514,624 B less.
"""

from __future__ import annotations

from kvplan_inprocess import estimate_json, refused_line

R = 48 * 128 * 3 * 2_048 * 768 * 2
BASE = ("qwen3-30b-a3b", "--gpu", "h200", "--context", "32k", "--engine", "vllm")


def test_dp2_pp2_each_stage_splits_its_routed_experts_over_its_two_gpus():
    assert R == 57_982_058_496 and R // 4 == 14_495_514_624
    pp2 = estimate_json(*BASE, "--pp", "2")
    for extra in ((), ("--ep",)):  # EP 2: 64 whole experts of each of the stage's layers, the same half
        run = estimate_json(*BASE, "--pp", "2", "--dp", "2", *extra)
        assert run["capacity"]["gpus"] == 4
        assert pp2["capacity"]["weight_bytes_per_gpu"] - run["capacity"]["weight_bytes_per_gpu"] == 14_495_514_624
        # vLLM's own profile (the fullest stage's weights) takes the same bytes off
        assert pp2["engine"]["profile"]["weight_bytes"] - run["engine"]["profile"]["weight_bytes"] == 14_495_514_624


def test_emit_vllm_prints_pp_and_dp():
    argv = estimate_json(*BASE, "--pp", "2", "--dp", "2", "--ep", "--emit", "vllm")["emit"]["argv"]
    at = argv.index("--pipeline-parallel-size")
    assert argv[at:at + 5] == ["--pipeline-parallel-size", "2", "--data-parallel-size", "2",
                               "--enable-expert-parallel"]


def test_tensor_table_stage_holds_its_own_layers_experts():
    # DeepSeek-V2-Lite, 27 layers: vLLM's --pp 2 split gives layers 0-13 to stage 0 and 14-26 to stage 1
    # (capacity/shard.stage_bounds). Routed experts 6,400 B in layer 1 and 3,200 B in layer 20; at --dp 2 --tp 1 each
    # stage keeps half of its own: 3,200 B and 1,600 B less
    import json
    from pathlib import Path

    from kvplan.capacity.experts_pp import stage_savings
    from kvplan.configs import build_model
    from kvplan.weights.record import NO_LAYER, Weights

    raw = json.loads((Path(__file__).resolve().parent.parent / "model_specs" / "deepseek-v2-lite.json").read_text())
    model = build_model(raw, "deepseek-v2-lite")
    table = Weights(total_bytes=14_600, source="safetensors",
                    parts=(("attention", 1, 2_000), ("experts", 1, 6_400), ("experts", 20, 3_200),
                           ("lm_head", NO_LAYER, 3_000)))
    assert stage_savings(model, table, 1, 2, False, 2) == [3_200, 1_600]
    assert stage_savings(model, table, 1, 2, True, 2) == [3_200, 1_600]  # EP 2: 32 of the 64 experts a GPU


def test_sglang_keeps_refusing_pp_with_dp_or_ep():
    assert "--pp 2" in refused_line("deepseek-v3", "--gpu", "h200", "--tp", "8", "--dp", "8", "--pp", "2",
                                    "--engine", "sglang")
    assert "--ep with --pp 2 under --engine sglang" in refused_line("deepseek-v3", "--gpu", "h200", "--tp", "8", "--ep",
                                                                    "--pp", "2", "--engine", "sglang")
