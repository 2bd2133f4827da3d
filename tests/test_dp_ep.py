"""Data-parallel attention with expert parallelism (--dp, --ep), as vLLM 0.34 places a MoE model.

Read in vLLM 0.34.0: model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make (without EP, TP flattened
across DP: every expert split over dp x tp GPUs; with EP, ep_size = dp x tp and whole experts a GPU),
fused_moe/expert_map_manager.py determine_expert_map (num_experts // ep a rank, the first num_experts % ep ranks one
more), config/model.py ModelConfig._verify_with_expert_parallelism (no experts: refused), v1/engine/core.py (one engine
core a DP rank, each profiling its own GPUs and sizing its own pool and scheduler).

DeepSeek-V3 (its config.json: hidden 7,168, moe_intermediate_size 2,048, 256 routed experts, 61 layers of which the
first 3 dense (first_k_dense_replace), kv_lora_rank 512 + qk_rope_head_dim 64; FP8 with 128 x 128 weight blocks and
one float32 scale a block). One routed expert matrix is 7,168 x 2,048 FP8 bytes = 14,680,064 B plus
(2,048 / 128) x (7,168 / 128) = 896 scales x 4 B = 3,584 B: 14,683,648 B; gate, up and down: 44,050,944 B an expert;
over 256 experts and 58 MoE layers the routed experts hold R = 654,068,416,512 B.
"""

from __future__ import annotations

from kvplan_inprocess import estimate_json, refused_line as _refused

EXPERT_BYTES = 3 * (7_168 * 2_048 + (2_048 // 128) * (7_168 // 128) * 4)  # one expert, one layer
R = 58 * 256 * EXPERT_BYTES
LATENT_BYTES_PER_TOKEN = 61 * (512 + 64) * 2  # the MLA latent and rope key, bf16, every layer: not split by TP or DP


def _per_gpu(*args: str) -> int:
    return estimate_json("deepseek-v3", "--context", "32k", *args)["capacity"]["weight_bytes_per_gpu"]


def test_dp8_ep_holds_one_eighth_of_the_routed_experts():
    # one GPU holding the whole served model (TP 1; --kv-memory skips the fit check) against DP 8 + EP on 8 GPUs:
    # attention, dense layers, shared experts, embeddings and head whole on both; the routed experts 256 / 8 = 32 a
    # GPU, so the DP 8 GPU holds 7/8 R less
    assert EXPERT_BYTES == 44_050_944 and R == 654_068_416_512
    whole = _per_gpu("--kv-memory", "10GiB")
    dp8 = _per_gpu("--kv-memory", "10GiB", "--dp", "8", "--ep")
    assert whole - dp8 == R - R * 32 // 256 == 572_309_864_448
    # without EP vLLM flattens TP across DP: each expert split 8 ways, the same 1/8 of R
    assert _per_gpu("--kv-memory", "10GiB", "--dp", "8") == dp8


def test_uneven_expert_split_takes_the_fullest_rank():
    # EP 6: 256 = 6 x 42 + 4, so the first 4 ranks hold 43 experts (determine_expert_map); without EP 1/6 of each
    with_ep = _per_gpu("--kv-memory", "10GiB", "--dp", "6", "--ep")
    without = _per_gpu("--kv-memory", "10GiB", "--dp", "6")
    assert R * 43 // 256 == 109_863_054_336 and R // 6 == 109_011_402_752
    assert with_ep - without == 851_651_584


def test_dp8_pool_is_per_rank_and_the_replica_holds_eight_times():
    # the pool per GPU holds the whole latent per token (61 x 576 x 2 B), at TP 8 and at DP 8 alike; 32 GiB hold
    # 34,359,738,368 // (32,768 x 70,272 = 2,302,672,896) = 14 sequences of 32k; TP 8: one pool, 14; DP 8: 8 pools
    tp8 = estimate_json("deepseek-v3", "--context", "32k", "--kv-memory", "32GiB", "--tp", "8")
    dp8 = estimate_json("deepseek-v3", "--context", "32k", "--kv-memory", "32GiB", "--dp", "8", "--ep")
    assert LATENT_BYTES_PER_TOKEN == 70_272
    for d in (tp8, dp8):
        assert d["bytes_per_token"] == LATENT_BYTES_PER_TOKEN
        assert d["pool_tokens"] == 34_359_738_368 // 70_272 == 488_953
    assert tp8["max_concurrency"] == 14
    assert dp8["max_concurrency"] == 8 * 14
    assert dp8["capacity"]["gpus"] == 8 and dp8["capacity"]["dp"] == 8 and dp8["capacity"]["ep"] is True
    # a batch of 16 spreads over the 8 ranks: the fullest GPU holds 2 sequences' latents, at TP 8 all 16
    batch = ("--context", "32k", "--kv-memory", "32GiB", "--batch", "16")
    assert estimate_json("deepseek-v3", *batch, "--dp", "8", "--ep")["kv_bytes_per_gpu"] == 2 * 32_768 * 70_272
    assert estimate_json("deepseek-v3", *batch, "--tp", "8")["kv_bytes_per_gpu"] == 16 * 32_768 * 70_272


def test_vllm_emits_dp_ep_and_max_num_seqs_per_rank():
    # vLLM 0.34's pool per rank: 32 GiB // (61 layers x 64 tokens x 1,152 B = 4,497,408 B a block) = 7,639 blocks,
    # one the null block; 32k tokens take 512 blocks: 7,638 // 512 = 14 a rank, its --max-num-seqs; the replica
    # serves 8 x 14.92, so --min-concurrency 100 holds (one rank alone would not)
    d = estimate_json("deepseek-v3", "--context", "32k", "--kv-memory", "32GiB", "--dp", "8", "--ep",
                      "--engine", "vllm", "--emit", "vllm", "--min-concurrency", "100")
    argv = d["emit"]["argv"]
    assert argv[argv.index("--max-num-seqs") + 1] == "14"
    at = argv.index("--data-parallel-size")
    assert argv[at:at + 3] == ["--data-parallel-size", "8", "--enable-expert-parallel"]
    assert d["engine"]["num_blocks"] == 34_359_738_368 // (61 * 64 * 1_152) == 7_639
    assert d["budgets"]["ok"] is True


def test_vllm_profile_weights_follow_the_expert_split():
    # vLLM's weights term on an H200, EP 6 against EP 8: 43 experts on the fullest GPU against 32, the rest alike
    def weights(dp: str) -> int:
        return estimate_json("deepseek-v3", "--context", "32k", "--gpu", "h200", "--dp", dp, "--ep",
                             "--engine", "vllm")["engine"]["profile"]["weight_bytes"]

    assert weights("6") - weights("8") == R * 43 // 256 - R * 32 // 256 == 28_104_502_272


def test_dense_dp_is_replicas():
    # Llama-3.1-8B: no experts, so each DP rank holds the whole model as at TP 1; 32 layers x 8 KV heads x 128 x 2 x
    # 2 B = 131,072 B a token, 1 GiB a sequence of 8k: 16 GiB hold 16 a rank, 64 over 4 ranks
    one = estimate_json("llama-3.1-8b", "--context", "8k", "--kv-memory", "16GiB")
    four = estimate_json("llama-3.1-8b", "--context", "8k", "--kv-memory", "16GiB", "--dp", "4")
    assert four["capacity"]["weight_bytes_per_gpu"] == one["capacity"]["weight_bytes_per_gpu"]
    assert one["max_concurrency"] == 16 and four["max_concurrency"] == 64


def test_refusals_one_line_each():
    assert "no routed experts" in _refused("llama-3.1-8b", "--gpu", "h100", "--ep")
    assert "no routed experts" in _refused("llama-3.1-8b", "--ep")  # without a GPU too
    assert "--dp must be a positive integer" in _refused("deepseek-v3", "--gpu", "h200", "--dp", "0")
    # --dp / --ep with --pp: planned for vLLM (tests/test_vllm_dp_pp.py), not for SGLang
    assert "--ep with --pp 2 under --engine sglang" in _refused("deepseek-v3", "--gpu", "h200", "--tp", "4", "--ep",
                                                                "--pp", "2", "--engine", "sglang")
    assert "enable-dp-attention" in _refused("deepseek-v3", "--gpu", "h200", "--dp", "8", "--engine", "sglang")
    assert "enable-dp-attention" in _refused("deepseek-v3", "--gpu", "h200", "--dp", "8", "--emit", "sglang")
    assert "not known" in _refused("deepseek-v3", "--gpu", "h200", "--dp", "8", "--ep", "--weights", "700GB")


def test_tensor_table_experts_parts_placed_and_mtp_left_out():
    # a tensor table's "experts" parts: DeepSeek-V2-Lite's 64 routed experts a layer (27 layers, the MTP-free
    # config), 6,400 B of them in layer 1 and 640 B in a layer past the 27 (an MTP module, which vLLM loads only for
    # MTP decoding). DP 4 + EP 4: 16 experts a GPU, 6,400 x 16 / 64 = 1,600 B held, so 4,800 B less than TP 1;
    # EP 6 (dp 3 x tp 2): 64 = 6 x 10 + 4, 11 experts on the fullest GPU: 6,400 x 11 / 64 = 1,100 B held against
    # the 3,200 B a TP 2 rank holds, 2,100 B less
    import json
    from pathlib import Path

    from kvplan.capacity.experts import routed_bytes, routed_saving
    from kvplan.configs import build_model
    from kvplan.weights.record import Weights

    raw = json.loads((Path(__file__).resolve().parent.parent / "model_specs" / "deepseek-v2-lite.json").read_text())
    model = build_model(raw, "deepseek-v2-lite")
    assert model.weight_routed_params[0] == 64
    table = Weights(total_bytes=9_040, source="safetensors",
                    parts=(("attention", 1, 2_000), ("experts", 1, 6_400), ("experts", 27, 640)))
    assert routed_bytes(model, table) == 6_400
    assert routed_saving(model, table, tp=1, dp=4, ep=True) == 4_800
    assert routed_saving(model, table, tp=2, dp=3, ep=True) == 2_100


def test_sequence_parallel_moe_holds_the_shared_experts_whole():
    # vLLM 0.34: EP with dp 2 > 1 and tp 4 > 1 runs the MoE sequence-parallel (config/parallel.py
    # use_sequence_parallel_moe, default all2all backend allgather_reducescatter) and DeepseekV2MoE builds its
    # DeepseekV2MLP shared experts with disable_tp. DeepSeek-V3's one shared expert a MoE layer has the routed
    # expert's shape (n_shared_experts 1 x moe_intermediate_size 2,048): EXPERT_BYTES a layer, S = 58 x EXPERT_BYTES
    # over the 58 MoE layers; split over TP 4 a GPU holds S / 4, whole it holds S, 3/4 S = 1.92 GB more
    shared = 58 * EXPERT_BYTES
    assert shared == 2_554_954_752 and shared - shared // 4 == 1_916_216_064
    dp2_tp4 = _per_gpu("--kv-memory", "10GiB", "--dp", "2", "--tp", "4", "--ep")
    tp8 = _per_gpu("--kv-memory", "10GiB", "--tp", "8")
    # TP 8 against DP 2 x TP 4 + EP 8: the routed experts 1/8 on both (32 of 256 whole, or 1/8 of each); the rest
    # (attention, dense layers, embeddings, head) is split 8 ways against 4; the shared experts 1/8 against whole
    rest = _per_gpu("--kv-memory", "10GiB", "--tp", "4") - R // 4 - shared // 4  # a TP 4 rank less its experts
    assert dp2_tp4 == rest + R * 32 // 256 + shared
    # without sequence-parallel MoE (dp 1, or no EP) the shared experts stay split over TP
    assert _per_gpu("--kv-memory", "10GiB", "--dp", "2", "--tp", "4") == rest + R // 8 + shared // 4
    assert tp8 < dp2_tp4


def test_shared_experts_whole_or_split_by_family():
    # DP 2 x TP 4 with EP (sequence-parallel MoE) against DP 2 x TP 4 without (TP flattened across DP, no SP): the
    # routed experts are 1/8 a GPU both ways (16 / 8 and 64 / 8 whole experts, or 1/8 of each), so the difference
    # is the shared experts alone, bf16, each layer a gate / up / down of hidden x width.
    # Llama-4-Scout: vLLM 0.34 llama4.py Llama4MoE builds shared_expert LlamaMLP(disable_tp=is_sequence_parallel):
    # 48 MoE layers x 3 x 5,120 x 8,192 x 2 B = 12,079,595,520 B whole instead of a quarter: 3/4 of it more
    def diff(model: str) -> int:
        return (_per_gpu_of(model, "--dp", "2", "--tp", "4", "--ep")
                - _per_gpu_of(model, "--dp", "2", "--tp", "4"))

    scout = 48 * 3 * 5_120 * 8_192 * 2
    assert scout == 12_079_595_520 and diff("llama-4-scout") == scout - scout // 4 == 9_059_696_640
    # Qwen2-57B-A14B: qwen2_moe.py Qwen2MoeSparseMoeBlock builds its Qwen2MoeMLP shared expert without
    # is_sequence_parallel: split over TP under EP too
    assert diff("qwen2-57b-a14b") == 0


def _per_gpu_of(model: str, *args: str) -> int:
    return estimate_json(model, "--context", "8k", "--kv-memory", "10GiB", *args)["capacity"]["weight_bytes_per_gpu"]


def test_sglangs_attention_dp_splits_the_shared_experts_over_every_gpu():
    # vLLM's sequence-parallel MoE holds DeepSeek-V3's shared experts whole on every TP rank (3/4 S more a GPU at
    # DP 2 x TP 4 + EP); SGLang's attention DP splits them over all its --tp GPUs instead (deepseek_v2.py "tp"
    # group: capacity.experts.full_tp_saving), so its routed-expert saving leaves that vLLM rule out
    from kvplan.capacity.experts import routed_saving
    from kvplan.sources import load_model_and_weights

    model, weights = load_model_and_weights("deepseek-v3")
    vllm = routed_saving(model, weights, 4, 2, True)
    sglang = routed_saving(model, weights, 4, 2, True, vllm_sequence_parallel=False)
    assert sglang - vllm == 58 * EXPERT_BYTES - 58 * EXPERT_BYTES // 4 == 1_916_216_064
