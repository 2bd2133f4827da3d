"""SGLang 0.5.23's rules, where they differ from 0.5.9's (tests/test_sglang.py). Every expected figure is worked
out by hand from the rules read in the 0.5.23 wheel (arg_groups/memory_hook.py handle_gpu_memory_settings and
reserve_for_graph_mb, arg_groups/cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes,
model_executor/pool_configurator.py, mem_cache/kv_cache_configurator.py _handle_max_mamba_cache and
resolve_max_num_reqs, mem_cache/memory_pool.py _finalize_allocation_log) and the models' configs."""

from __future__ import annotations

import json

import pytest

from kvplan.engines.sglang import Speculation, cell, pool
from kvplan.engines.sglang_rules import RULES, memory_defaults, prefill_graph_sizes
from kvplan.errors import PlanError, UsageError
from kvplan.sources import load_model

GIB = 2**30
R0523, R059 = RULES["0.5.23"], RULES["0.5.9"]


def test_prefill_graph_sizes():
    # 4..32 step 4 (8), 48..256 step 16 (14), 288..512 step 32 (8), 576..1,024 step 64 (8), 1,280..4,096 step 256
    # (12), then 4,608 step 512 up to max_bs: 8,192 -> 8 more (4,608..8,192)
    assert prefill_graph_sizes(8192) == 8 + 14 + 8 + 8 + 12 + 8 == 58
    assert prefill_graph_sizes(4096) == 50
    assert prefill_graph_sizes(2048) == 8 + 14 + 8 + 8 + 4 == 42  # 1,280, 1,536, 1,792, 2,048


@pytest.mark.parametrize("mib,tp,kwargs,chunked,graph_bs,reserved,fraction", [
    # H100 (81,559 MiB), TP 1: 512 + 8,192 x 1.5 + 256 x 2 + 1/8 x 1,024 + 58 prefill graphs x 8 = 13,904 MiB
    # -> (81,559 - 13,904) / 81,559 = 0.82952 (0.5.9: 0.835)
    (81559, 1, {}, 8192, 256, 13904, 0.830),
    # no speculative reserve in 0.5.23: EAGLE gets the same fraction (0.5.9: 0.810)
    (81559, 1, {"speculative": "EAGLE"}, 8192, 256, 13904, 0.830),
    # --max-running-requests 64 cuts the decode graphs to 64: 512 + 12,288 + 128 + 128 + 464 = 13,520 -> 0.83423
    (81559, 1, {"max_running_requests": 64}, 8192, 64, 13520, 0.834),
    # a multimodal model without the breakable prefill graph: 0.5.9's 13,440 MiB -> 0.835
    (81559, 1, {"prefill_graph": False}, 8192, 256, 13440, 0.835),
    # RTX 4090 (24,564 MiB): the 20-35 GiB band is now chunked 4,096 and graphs to 48:
    # 512 + 6,144 + 96 + 128 + 50 x 8 = 7,280 MiB -> 0.70363 (0.5.9: 0.847)
    (24564, 1, {}, 4096, 48, 7280, 0.704),
    # H200 (143,771 MiB), TP 8, an MLA model: 512 + 12,288 + 512 x 2 + 1,024 + 1,536 flat = 16,384 -> 0.88604
    (143771, 8, {"mla": True}, 8192, 512, 16384, 0.886),
])
def test_default_mem_fraction_static(mib, tp, kwargs, chunked, graph_bs, reserved, fraction):
    got = memory_defaults(mib, tp, rules=R0523, **kwargs)
    assert (got.chunked_prefill_size, got.cuda_graph_max_bs, got.reserved_mib, got.mem_fraction_static) == (
        chunked, graph_bs, reserved, fraction)


def test_dense_pool_and_its_log_line():
    llama = load_model("llama-3.1-8b")
    got = pool(llama, rest_bytes=50 * GIB, context_len=131072, rules=R0523)
    assert got.max_total_num_tokens == 50 * GIB // 131_072 == 409_600 and got.max_running_requests == 2048
    # 0.5.23 names the dtype in the line
    assert got.log_lines()[0] == ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 409600, K size: 25.00 GB, "
                                  "V size: 25.00 GB")
    fp8 = pool(llama, rest_bytes=50 * GIB, context_len=131072, kv_cache_dtype="fp8_e4m3", rules=R0523)
    assert "dtype: torch.float8_e4m3fn, #tokens: 819200," in fp8.log_lines()[0]


@pytest.mark.parametrize("rules", [R059, R0523])
def test_max_running_requests_is_at_most_half_the_tokens(rules):
    # a pool of 3,000 tokens: the estimate min(max(int(3,000 / 8,192 x 512), 2,048), 4,096) = 2,048, but both
    # releases take at most tokens // 2 = 1,500 (0.5.9 model_runner.py, 0.5.23 resolve_max_num_reqs)
    got = pool(load_model("llama-3.1-8b"), rest_bytes=3000 * 131_072, context_len=8192, rules=rules)
    assert got.max_total_num_tokens == 3000 and got.max_running_requests == 1500


def test_hybrid_sliding_window_split():
    # GPT-OSS-120B, 18 full and 18 sliding layers of 2,048 B a token: 0.5.23 sizes the full tokens at
    # F x 18 + 0.8 x S x 18 = 36,864 + 29,491.2 = 66,355.2 B: int(50 GiB // 66,355.2) = 809,086 (0.5.9 rescales
    # whole tokens and lands on 809,085); sliding int(809,086 x 0.8) = 647,268
    got = pool(load_model("gpt-oss-120b"), rest_bytes=50 * GIB, context_len=131072, rules=R0523)
    assert (got.max_total_num_tokens, got.swa_tokens) == (809_086, 647_268)
    lines = got.log_lines()
    assert lines[0] == "Use sliding window memory pool. full_layer_tokens=809086, swa_layer_tokens=647268"
    assert lines[1].startswith("Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 809086, ")
    assert lines[2].startswith("SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 647268, ")


def test_hybrid_recurrent_pool():
    # Qwen3-Next-80B at TP 2 (38,633,472 B of state a request, 12,288 B a token: tests/test_sglang.py). 0.5.23
    # charges the pool's padding slot: K = int((B - per) // per) with B = 50 GiB x 0.9 / 1.9, and the tokens lose
    # (K + 1) states; the extra_buffer strategy (Qwen3-Next under the overlap schedule) holds 3 + 2 slots a request
    model = load_model("qwen3-next-80b-a3b")
    rest, per = 50 * GIB, 38_633_472
    got = pool(model, rest_bytes=rest, context_len=4096, tp=2, rules=R0523)
    assert got.mamba_cache_size == int((rest * 0.9 / 1.9 - per) // per) == 657
    assert got.max_total_num_tokens == (rest - 658 * per) // 12_288 == 2_300_314
    assert got.max_running_requests == 657 // 5 == 131  # 0.5.9: 658 // 3 = 219
    # with speculation (48 requests, 3 draft tokens) a joint solve: K = int((B - per x 4) // (per x (1 + 3/5)))
    # = 408; the intermediate states per x (min(48, 408 // 5) + 1) x 3 = 5,679,120,384 B; the MTP layer joins the
    # cell at the target's per-layer size, int(12,288 x 1 / 12) = 1,024 B
    got = pool(model, rest_bytes=rest, context_len=4096, tp=2, rules=R0523,
               speculation=Speculation("EAGLE", 2, 3, 1))
    assert got.mamba_cache_size == 408 and got.max_running_requests == 48 and got.draft_bytes == 1024
    assert got.max_total_num_tokens == (rest - 5_679_120_384 - 409 * per) // 13_312 == 2_419_387


def test_the_draft_is_in_the_cell():
    # DeepSeek-V3 with its MTP layer at TP 8: the cell 576 x 61 x 2 = 70,272 B, and the draft's one layer at the
    # target's per-layer size int(70,272 x 1 / 61) = 1,152 B: 40 GiB // 71,424 = 601,333 tokens
    v3 = load_model("deepseek-v3")
    got = pool(v3, rest_bytes=40 * GIB, context_len=32768, tp=8, rules=R0523,
               speculation=Speculation("EAGLE", 3, 4, 1))
    assert got.draft_bytes == 1152 and got.max_total_num_tokens == 601_333 and got.max_running_requests == 48
    # 0.5.9 sized the target pool alone: 40 GiB // 70,272 = 611,191
    assert pool(v3, rest_bytes=40 * GIB, context_len=32768, tp=8, rules=R059,
                speculation=Speculation("EAGLE", 3, 4, 1)).max_total_num_tokens == 40 * GIB // 70_272 == 611_191


def test_deepseek_sparse_attention_pool():
    # DeepSeek-V3.2, 61 layers, each with the latent (512 + 64 rope) and an indexer key of 128 + 128 / 128 x 4 =
    # 132 B (uint8). 0.5.23 sizes the pool at what the backend stores (calculate_mla_kv_cache_dim x kv size):
    # bf16 576 x 2; fp8 on Hopper (flashmla_kv) 512 + 16 + 64 x 2 = 656; fp8 on SM >= 10 (trtllm) the raw 576
    model = load_model("deepseek-v3.2-exp")
    assert cell(model, rules=R0523).bytes == (1152 + 132) * 61 == 78_324
    assert cell(model, kv_bytes=1, rules=R0523).bytes == (656 + 132) * 61 == 48_068  # 0.5.9 sized it at 576 + 132
    assert cell(model, kv_bytes=1, rules=R0523, sm10=True).bytes == (576 + 132) * 61 == 43_188
    got = pool(model, rest_bytes=40 * GIB, context_len=8192, nsa_fp8=True, rules=R0523)  # fp8 by default on SM >= 10
    assert (got.kv_cache_dtype, got.page_size) == ("fp8_e4m3", 64)
    assert got.max_total_num_tokens == 40 * GIB // 43_188 // 64 * 64 == 994_432
    assert not any("KV Cache is allocated" in line for line in got.log_lines())  # its buffers are not read
    with pytest.raises(UsageError, match="bfloat16 or fp8_e4m3"):
        pool(model, rest_bytes=40 * GIB, context_len=8192, kv_cache_dtype="fp8_e5m2", rules=R0523)


def test_refusals():
    # MTP layers on a sliding-window model split between the sub-pools (mtp_local_layer_ids): not read
    with pytest.raises(UsageError, match="sliding-window draft on a sliding-window pool"):
        pool(load_model("gpt-oss-120b"), rest_bytes=50 * GIB, context_len=8192, rules=R0523,
             speculation=Speculation("EAGLE", 3, 4, 1))


def test_an_eagle3_head_on_a_sliding_window_pool():
    # GPT-OSS-120B with a one-layer EAGLE-3 head (no sliding layers): HybridSWAPoolConfigurator prices the draft
    # layer at a full layer's 2,048 B: full tokens = int(50 GiB // (2,048 x 18 + 2,048 + 0.8 x 2,048 x 18 =
    # 68,403.2)) = 784,862, sliding int(784,862 x 0.8) = 627,889; 48 requests (the speculative default)
    got = pool(load_model("gpt-oss-120b"), rest_bytes=50 * GIB, context_len=8192, rules=R0523,
               speculation=Speculation("EAGLE3", 3, 4, 1, "head", "LlamaForCausalLMEagle3"))
    assert (got.max_total_num_tokens, got.swa_tokens, got.max_running_requests) == (784_862, 627_889, 48)


def test_the_cli_models_the_newest_release(cli):
    rc, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--context", "8k", "--engine", "sglang",
                       "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    assert (engine["version"], engine["mem_fraction_static"]) == ("0.5.23", 0.83)
    assert engine["log"][0].startswith("KV Cache is allocated. dtype: torch.bfloat16, ")
    rc, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--context", "8k", "--engine", "sglang@0.5.9",
                       "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    assert (engine["version"], engine["mem_fraction_static"]) == ("0.5.9", 0.835)
    rc, out, err = cli("estimate", "llama-3.1-8b", "--kv-memory", "10GiB", "--engine", "sglang@0.5.10")
    assert rc == 2 and "SGLang 0.5.10 is not a release kvplan models (0.5.9, 0.5.23)" in err


@pytest.mark.parametrize("rules,states,requests", [(R0523, 233, 233 // 5), (R059, 234, 234)])
def test_kimi_linear_kda_state_pool(rules, states, requests):
    # Kimi-Linear-48B-A3B: 20 KDA layers (32 heads of 128, short conv kernel 4) and 7 MLA layers (512 + 64).
    # A request's state (configs/mamba_utils.py KimiLinearStateShape, mamba2_state_dtype(None): conv bf16, the
    # temporal state float32): conv 3 x 32 x 128 x 3 x 2 B = 73,728 + 32 x 128 x 128 x 4 B = 2,097,152, x 20 layers
    # = 43,417,600 B; the cell 576 x 2 B x 7 = 8,064 B. 20 GiB: B = 20 GiB x 0.9 / 1.9 = 10,172,290,964.2
    # 0.5.23: K = int((B - per) // per) = 233, tokens (20 GiB - 234 x per) // 8,064 = 1,403,164, requests <= K // 5
    # (extra_buffer for KimiLinearForCausalLM); 0.5.9: K = int(B // per) = 234, the same tokens, and the radix cache
    # is off for KimiLinearForCausalLM (server_args._handle_model_specific_adjustments: _handle_mamba_radix_cache(
    # support_mamba_cache=False)), so init_memory_pool's ratio is 1: min(4,096, 1,403,164 // 2, 234 // 1) = 234
    got = pool(load_model("kimi-linear-48b-a3b"), rest_bytes=20 * GIB, context_len=8192, rules=rules)
    assert (got.cell.kind, got.cell.bytes, got.cell.state.bytes) == ("mla", 8064, 43_417_600)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (states, 1_403_164, requests)


def test_lfm2_short_conv_state_pool():
    # LFM2-1.2B: 10 short-conv layers (hidden 2,048, conv_L_cache 3) and 6 attention layers of 8 KV heads x 64.
    # configs/lfm2.py: Mamba2StateShape with hidden_size channels and state_size 0: 2,048 x 2 x 2 B = 8,192 B a
    # layer, 81,920 B a request; the cell 6 x 8 x 128 x 2 B = 12,288 B. 0.5.23 at 20 GiB: K = int((B - 81,920) //
    # 81,920) = 124,172; tokens (20 GiB - 124,173 x 81,920) // 12,288 = 919,806; LFM2 stays on no_buffer: K // 3 is
    # above 4,096, so the estimate (capped at 4,096) decides
    got = pool(load_model("lfm2-1.2b"), rest_bytes=20 * GIB, context_len=8192, rules=R0523)
    assert (got.cell.bytes, got.cell.state.bytes, got.cell.state.ssm_bytes) == (12_288, 81_920, 0)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (124_172, 919_806, 4096)


def test_pooled_index_keys_are_refused(cli, tmp_path):
    # index_kpool > 1 pools the indexer keys (0.5.23: pages of 64 x index_kpool, ceil(132 / index_kpool) B a layer);
    # kvplan has not read it: one line, not a guess
    from kvplan.sources import load_config

    raw = dict(load_config("deepseek-v3.2-exp")[0], index_kpool=2)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    rc, out, err = cli("estimate", str(path), "--kv-memory", "40GiB", "--engine", "sglang")
    assert rc == 2 and "index_kpool 2 (pooled indexer keys) is not modelled" in err


def test_gemma4_sub_pools_take_their_own_shapes():
    # Gemma 4 31B (is_hybrid_swa_compress): 10 full layers of 4 KV heads x (512 + 512) and 50 sliding ones of
    # 16 x (256 + 256), 2 B: full 8,192 B and sliding 16,384 B a layer and token. 0.5.23 sizes the full tokens at
    # 10 x 8,192 + 0.8 x 50 x 16,384 = 737,280 B: 40 GiB // 737,280 = 58,254; sliding int(58,254 x 0.8) = 46,603
    got = pool(load_model("gemma-4-31b"), rest_bytes=40 * GIB, context_len=32768, rules=R0523)
    assert (got.max_total_num_tokens, got.swa_tokens) == (58_254, 46_603)
    # the full sub-pool's K: (58,254 + 1) x 4 x 512 x 2 B x 10 layers = 2.22 GiB; the sliding one's
    # (46,603 + 1) x 16 x 256 x 2 B x 50 = 17.78 GiB
    assert got.log_lines()[1].endswith("#tokens: 58254, K size: 2.22 GB, V size: 2.22 GB")
    assert got.log_lines()[2].endswith("#tokens: 46603, K size: 17.78 GB, V size: 17.78 GB")
    # under 0.5.9 Gemma 4 was not a hybrid architecture: every layer pooled in full, at 60 layers' bytes
    with pytest.raises(UsageError, match="differ in KV heads or width"):
        cell(load_model("gemma-4-31b"), rules=R059)


@pytest.mark.parametrize("raw,factor", [
    # 0.95 x clamp(1 - 0.1 x (L x H^2 / (24 x 1,024^2) - 1), 0.8, 1.05)
    ({"vision_config": {"num_hidden_layers": 24, "hidden_size": 1024}}, 0.95),  # the ViT-L/14 baseline: x 1
    ({"vision_config": {"num_hidden_layers": 27, "hidden_size": 1152}}, 0.95 * (1 - 0.1 * (27 * 1152**2 / 25_165_824 - 1))),
    ({"vision_config": {"num_hidden_layers": 12, "hidden_size": 768}}, 0.95 * 1.05),  # small towers: at most 1.05
    ({"vision_config": {"num_hidden_layers": 48, "hidden_size": 2048}}, 0.95 * 0.8),  # large: at least 0.8
    ({"vision_config": {"depth": 32, "hidden_size": 1280}}, None),  # num_hidden_layers left to the class: said
    ({}, None),
    # Qwen3-Omni: SGLang 0.5.23's and transformers 5.19's Qwen3OmniMoeConfig have no top-level vision_config (it
    # is thinker_config.vision_config), so getattr(hf_config, "vision_config", None) is None: the fraction x 1
    ({"model_type": "qwen3_omni_moe", "thinker_config": {"vision_config": {"depth": 27, "hidden_size": 1152}}}, 1.0),
])
def test_vision_fraction_factor(raw, factor):
    from kvplan.engines.sglang_rules import vlm_fraction_factor

    got, _ = vlm_fraction_factor(raw)
    assert got == pytest.approx(factor) if factor is not None else got is None


def test_a_vision_models_default_fraction(cli):
    # Gemma 3 27B (multimodal, a SigLIP tower of 27 x 1,152 in its config) on H100s at TP 4, 0.5.23: no breakable
    # prefill graph (multimodal, not on SGLang's list), so 512 + 12,288 + 512 x 2 + 4/8 x 1,024 = 14,336 MiB ->
    # round((81,559 - 14,336) / 81,559, 3) = 0.824, then x 0.95 x (1 - 0.1 x (27 x 1,152^2 / (24 x 1,024^2) - 1))
    rc, out, err = cli("estimate", "gemma-3-27b", "--gpu", "h100", "--tp", "4", "--context", "8k", "--engine", "sglang",
                       "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    assert engine["mem_fraction_static"] == pytest.approx(0.824 * 0.95 * (1 - 0.1 * (27 * 1152**2 / 25_165_824 - 1)))
    assert any("the multimodal cache 100 MiB" in n for n in engine["notes"])


def test_the_draft_weights_are_resident_when_the_pool_is_sized(cli):
    # 0.5.23 loads the draft worker before init_memory_pools and shares the target's embedding and head only in
    # alloc_memory_pool (init_lm_head), after: DeepSeek-V3's NEXTN module counts whole on each of 8 GPUs, its FP8
    # decoder layer (11,507,286,272 parameters) and its vocabulary-parallel embedding and head (129,280 x 7,168 x
    # 2 B each) over 8, eh_proj (2 x 7,168 x 7,168 x 2 B) and three norms (7,168 x 2 B) whole; the layer's FP8
    # block scales (one float32 per 128 x 128: 11,507,286,272 x 4 / 16,384 = 2,809,396 B) with it:
    # but the layer's 16,990,464 parameters each rank holds whole (sglang 0.5.23 deepseek_nextn.py DeepseekModelNextN
    # .decoder is deepseek_v2.py's DeepseekV2DecoderLayer: fused_qkv_a_proj_with_mqa / kv_a_proj_with_mqa are
    # ReplicatedLinear, MoEGate's weight and e_score_correction_bias plain parameters, RMSNorms whole): q_a 7,168 x
    # 1,536 + kv_a 7,168 x 576 + 4 norms 16,384 + router 7,168 x 256 + 256, at the layer's 1 + 4 / 16,384 B =
    # 16,994,612 B: (11,510,095,668 - 16,994,612) / 8 + 16,994,612 + 205,520,896 + 43,008 + 2 x 1,853,358,080 / 8
    # = 1,436,637,632 + 16,994,612 + 205,563,904 + 463,339,520 = 2,122,535,668 B (before: the layer all split,
    # ceil(11,510,095,668 / 8) + ... = 2,107,665,383)
    def engine(*extra):
        rc, out, err = cli("estimate", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--context", "32k", "--engine",
                           "sglang", "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["engine"]

    plain, drafted = engine(), engine("--mtp")
    assert plain["kv_memory_bytes"] - drafted["kv_memory_bytes"] == 2_122_535_668
    assert drafted["draft_bytes_per_token"] == 70_272 // 61  # 1,152 B: the one MTP layer at the target's size
    assert drafted["max_total_num_tokens"] == drafted["kv_memory_bytes"] // (70_272 + 1_152)


def test_a_state_pool_too_small_for_one_request_does_not_start():
    # 0.5.23 resolve_max_num_reqs raises when max_mamba_cache_size // ratio is 0: Qwen3-Next at TP 2 (38,633,472 B
    # a request) with B = 5.5 states' worth: K = int((B - per) // per) = 4, 4 // 5 = 0 requests
    per = 38_633_472
    with pytest.raises(PlanError, match="would not serve: its state pool holds 4 states"):
        pool(load_model("qwen3-next-80b-a3b"), rest_bytes=int(5.5 * per * 1.9 / 0.9), context_len=4096, tp=2,
             rules=R0523)


def test_a_qwen3_next_mtp_module_is_resident_too(cli):
    # qwen3_next_mtp.py builds a Qwen3NextModel of one layer (its own VocabParallelEmbedding) and a ParallelLMHead,
    # filled with the target's only after the pool is sized; fc is an nn.Linear. At TP 2, bf16: the decoder layer
    # 1,642,076,672 parameters x 2 B / 2, fc 2 x 2,048 x 2,048 x 2 B whole, three norms 3 x 2,048 x 2 B, and an
    # embedding and a head of 151,936 x 2,048 x 2 B over 2 each:
    # 1,642,076,672 + 16,777,216 + 12,288 + 2 x 311,164,928 = 2,281,196,032 B
    def engine(*extra):
        rc, out, err = cli("estimate", "qwen3-next-80b-a3b", "--gpu", "h200", "--tp", "2", "--context", "8k",
                           "--engine", "sglang", "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["engine"]

    assert engine()["kv_memory_bytes"] - engine("--mtp")["kv_memory_bytes"] == 2_281_196_032


def test_the_ssm_dtype_environment_variable_wins(cli, monkeypatch):
    # configs/mamba_utils.py mamba2_state_dtype: SGLANG_MAMBA_SSM_DTYPE over the config over float32, read from
    # kvplan's environment as SGLang reads its own. Kimi Linear (20 KDA layers of 32 x 128 x 128 temporal
    # elements) at TP 1: 4 B -> 2 B halves the ssm part, 2,097,152 -> 1,048,576 B a layer
    def state(*extra):
        rc, out, err = cli("estimate", "kimi-linear-48b-a3b", "--kv-memory", "20GiB", "--context", "8k", "--engine",
                           "sglang", "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["engine"]

    assert state()["state_bytes_per_request"] == 20 * (73_728 + 2_097_152)
    monkeypatch.setenv("SGLANG_MAMBA_SSM_DTYPE", "bfloat16")
    engine = state()
    assert engine["state_bytes_per_request"] == 20 * (73_728 + 1_048_576)
    assert any("SGLANG_MAMBA_SSM_DTYPE=bfloat16" in n for n in engine["notes"])


def test_a_sliding_window_pool_under_pipeline_parallelism(cli):
    # GPT-OSS-20B at PP 2: 12 layers a stage, 6 sliding and 6 full of 8 KV heads x 64, 2,048 B a layer and token.
    # 0.5.23: each stage's full tokens int(10 GiB // (2,048 x 6 + 0.8 x 2,048 x 6 = 22,118.4)) = 485,451, the MIN
    # over the ranks the same, and every rank's sliding count from it: int(485,451 x 0.8) = 388,360
    rc, out, err = cli("estimate", "gpt-oss-20b", "--kv-memory", "10GiB", "--pp", "2", "--context", "8k", "--engine",
                       "sglang", "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    assert (engine["max_total_num_tokens"], engine["swa_tokens"]) == (485_451, 388_360)
    # 0.5.9 split each rank's tokens by its own layers after the MIN: not modelled
    rc, out, err = cli("estimate", "gpt-oss-20b", "--kv-memory", "10GiB", "--pp", "2", "--context", "8k", "--engine",
                       "sglang@0.5.9")
    assert rc == 2 and "0.5.9 splits each rank's tokens by its own layers" in err
