"""SGLang 0.5.23's data-parallel attention: `--tp 8 --dp 8 --engine sglang` (launch_server --tp 8 --dp 8
--enable-dp-attention), kvplan.engines.sglang_dp.

Read in the sglang 0.5.23 wheel: runtime_context.derive_attn_tp_size (attention TP = tp / dp), derive_parallel_widths
(the MoE over all tp GPUs), models/deepseek_v2.py (dense MLPs and shared experts on the "tp" group, ParallelLMHead over
the whole TP group, the embedding over the attention TP group: vocab_parallel_embedding.get_embedding_tp_kwargs),
kv_cache_configurator.resolve_max_num_reqs (max_running_requests // attn_dp_size a rank), arg_groups/memory_hook.py
reserve_for_graph_mb (+ max_bs x dp x 3 MiB, x 1.5 more above 300), parallel_hook._handle_data_parallelism
(tp_size % attn_dp_size == 0).

DeepSeek-V3 (config.json: hidden 7,168, intermediate 18,432 in the 3 dense layers, moe_intermediate 2,048, one shared
expert and 256 routed ones in each of the 58 MoE layers, vocab 129,280, untied head; FP8 with a float32 scale per
128 x 128 block, the head bf16; MLA latent 512 + rope 64, 61 layers).
"""

from __future__ import annotations

from kvplan_inprocess import estimate_json, refused_line as _refused


def _fp8(rows: int, cols: int) -> int:  # one FP8 matrix with its block scales
    return rows * cols + (rows // 128) * (cols // 128) * 4


EXPERT = 3 * _fp8(7_168, 2_048)  # gate, up, down of one expert: 44,050,944 B
ROUTED = 58 * 256 * EXPERT
DENSE_MLP = 3 * 3 * _fp8(7_168, 18_432)
SHARED = 58 * EXPERT
HEAD = 129_280 * 7_168 * 2
LATENT = 61 * (512 + 64) * 2  # bytes a token, whole on every GPU (MLA)


def _sglang(*args: str) -> dict:
    return estimate_json("deepseek-v3", "--context", "32k", "--engine", "sglang", *args)


def test_dp8_weights_per_gpu_split_routed_experts_dense_mlp_shared_and_head_over_all_eight():
    # attention TP 1: one GPU holds what TP 1 holds (attention, embedding, norms, routers whole) but 1/8 of the
    # routed experts (MoE TP over the 8) and 1/8 of the dense MLPs, shared experts and LM head (the "tp" group)
    assert EXPERT == 44_050_944 and DENSE_MLP == 1_189_375_488 and HEAD == 1_853_358_080
    split = ROUTED + DENSE_MLP + SHARED + HEAD
    assert split - split // 8 == 577_207_841_728
    big = ("--gpu", "h200", "--gpu-memory", "2TB")  # room for the whole model on one GPU; weights do not depend on it
    whole = _sglang(*big)
    tp1 = whole["engine"]["weight_bytes_per_gpu"]
    dp8_run = _sglang(*big, "--tp", "8", "--dp", "8")
    dp8 = dp8_run["engine"]
    assert tp1 - dp8["weight_bytes_per_gpu"] == 577_207_841_728
    # kvplan's own plan places them the same way under --engine sglang
    assert whole["capacity"]["weight_bytes_per_gpu"] - dp8_run["capacity"]["weight_bytes_per_gpu"] == 577_207_841_728
    # --ep (--ep-size 8): 32 whole experts a GPU, the same 1/8 of ROUTED
    assert _sglang(*big, "--tp", "8", "--dp", "8", "--ep")["engine"]["weight_bytes_per_gpu"] == \
        dp8["weight_bytes_per_gpu"]


def test_dp8_pool_per_rank_holds_the_whole_latent_and_the_replica_eight_pools():
    # 32 GiB a GPU: 34,359,738,368 // 70,272 = 488,953 tokens, at TP 8 (one pool) and in each of the 8 DP ranks;
    # 14 requests of 32k a pool, 112 over the 8 ranks
    tp8 = _sglang("--kv-memory", "32GiB", "--tp", "8")
    dp8 = _sglang("--kv-memory", "32GiB", "--tp", "8", "--dp", "8")
    assert LATENT == 70_272
    for d in (tp8, dp8):
        assert d["engine"]["cell_bytes"] == LATENT
        assert d["engine"]["max_total_num_tokens"] == 34_359_738_368 // 70_272 == 488_953
        assert d["engine"]["concurrent_requests"] == 488_953 // 32_768 == 14
        assert d["capacity"]["gpus"] == 8
    assert dp8["engine"]["attn_tp"] == 1 and dp8["engine"]["replica_concurrent_requests"] == 8 * 14
    assert "replica_concurrent_requests" not in tp8["engine"]
    # a given --max-running-requests is the server's: 64 // 8 = 8 a rank
    assert _sglang("--kv-memory", "32GiB", "--tp", "8", "--dp", "8", "--max-num-seqs", "64")["engine"][
        "max_running_requests"] == 8


def test_dp8_default_fraction_reserves_the_gather_padding():
    # H200 (nvidia-smi 143,771 MiB): reserved 512 + 8,192 x 1.5 + 512 x 2 + 8 / 8 x 1,024 + 1,536 (MLA's prefill
    # graphs) = 16,384 MiB at TP 8; DP 8 adds 512 x 8 x 3 + 512 x 8 x 1.5 = 18,432 MiB
    tp8 = _sglang("--gpu", "h200", "--tp", "8")["engine"]["mem_fraction_static"]
    dp8 = _sglang("--gpu", "h200", "--tp", "8", "--dp", "8")["engine"]["mem_fraction_static"]
    assert tp8 == round((143_771 - 16_384) / 143_771, 3) == 0.886
    assert dp8 == round((143_771 - 34_816) / 143_771, 3) == 0.758


def test_emit_sglang_prints_dp_attention_and_ep_size():
    argv = estimate_json("deepseek-v3", "--context", "32k", "--gpu", "h200", "--tp", "8", "--dp", "8", "--ep",
                         "--emit", "sglang")["emit"]["argv"]
    at = argv.index("--tp-size")
    # 0.5.23's --attn-dp-size: its server_args.py deprecates --dp-size N --enable-dp-attention for it
    assert argv[at:at + 6] == ["--tp-size", "8", "--attn-dp-size", "8", "--ep-size", "8"]


def test_refusals_one_line_each():
    assert "4 does not divide 6" in _refused("deepseek-v3", "--gpu", "h200", "--tp", "6", "--dp", "4",
                                             "--engine", "sglang")
    assert "not LlamaForCausalLM" in _refused("llama-3.1-8b", "--gpu", "h100", "--tp", "4", "--dp", "2",
                                              "--engine", "sglang")
    assert "--pp 2" in _refused("deepseek-v3", "--gpu", "h200", "--tp", "8", "--dp", "8", "--pp", "2",
                                "--engine", "sglang")
    # DeepSeek-V2: 160 routed experts, 64 GPUs of EP: FusedMoE asserts 160 % 64 == 0 (vLLM would place 3 or 2)
    assert "must divide the 160 routed experts" in _refused("deepseek-v2", "--gpu", "h200", "--tp", "64", "--dp", "64",
                                                            "--ep", "--engine", "sglang")
    assert "plan and emit one engine" in _refused("deepseek-v3", "--gpu", "h200", "--tp", "8", "--dp", "8",
                                                  "--engine", "vllm", "--emit", "sglang")


def test_tensor_table_mlp_and_head_parts_over_all_gpus():
    # a tensor table's parts: attention 2,000 B, routed experts 6,400 B and "mlp" (dense MLP and shared experts)
    # 1,600 B in layer 1, an MTP layer's "mlp" 800 B (past the 27 layers: not loaded), lm_head 4,000 B. At --tp 4
    # --dp 2 (attention TP 2) the MLP and head, 5,600 B, sit over 4 GPUs: 1,400 B a GPU against 2,800 B over 2
    import json
    from pathlib import Path

    from kvplan.capacity.hardware import make_deployment
    from kvplan.configs import build_model
    from kvplan.capacity.experts import full_tp_bytes, full_tp_saving
    from kvplan.weights.record import NO_LAYER, Weights

    raw = json.loads((Path(__file__).resolve().parent.parent / "model_specs" / "deepseek-v2-lite.json").read_text())
    model = build_model(raw, "deepseek-v2-lite")
    table = Weights(total_bytes=14_800, source="safetensors",
                    parts=(("attention", 1, 2_000), ("experts", 1, 6_400), ("mlp", 1, 1_600), ("mlp", 27, 800),
                           ("lm_head", NO_LAYER, 4_000)))
    assert full_tp_bytes(model, table) == 5_600
    dep = make_deployment(None, tp=2, dp=2)
    assert full_tp_saving(model, table, dep) == 2_800 - 1_400
