"""EPLB's redundant experts (--ep --redundant-experts R), as vLLM 0.34 and SGLang 0.5.23 place them.

Read in vLLM 0.34.0: model_executor/layers/fused_moe/layer.py determine_expert_counts (global_num_experts =
num_experts + num_redundant_experts) and FusedMoEFactory ("EPLB currently only supports even distribution of experts
across ranks": global % ep_size must be 0); config/parallel.py ParallelConfig (EPLB needs enable_expert_parallel and
TP x PCP x DP > 1); model_executor/models/interfaces.py MixtureOfExperts (the model classes EPLB registers);
distributed/eplb/eplb_state.py EplbState.add_model (the state allocated at load, before the KV profile). In SGLang
0.5.23: arg_groups/fields/exec_.py --ep-num-redundant-experts, eplb/expert_location.py (num_physical_experts = logical +
R, num_local_physical_experts asserts physical % ep_size == 0).

DeepSeek-V3 (model_specs/deepseek-v3.json: hidden 7,168, moe_intermediate_size 2,048, n_routed_experts 256, 61 layers
of which the first 3 dense, so 58 MoE layers; FP8 with 128 x 128 blocks, one float32 scale a block). One routed
expert matrix: 7,168 x 2,048 B + (2,048 / 128) x (7,168 / 128) = 896 scales x 4 B = 14,683,648 B; gate, up, down:
44,050,944 B an expert a layer; 58 layers: 2,554,954,752 B an expert; 256 experts: 654,068,416,512 B.
"""

from __future__ import annotations

import pytest

from kvplan_inprocess import estimate_json, refused_line as _refused

LAYER_EXPERT_BYTES = 3 * (7_168 * 2_048 + (2_048 // 128) * (7_168 // 128) * 4)  # one expert, one MoE layer
EXPERT_BYTES = 58 * LAYER_EXPERT_BYTES  # one logical expert over the 58 MoE layers
ROUTED = 256 * EXPERT_BYTES


def _per_gpu(*args: str) -> int:
    return estimate_json("deepseek-v3", "--context", "32k", "--kv-memory", "10GiB", *args)["capacity"][
        "weight_bytes_per_gpu"]


@pytest.mark.parametrize("ep, base, physical", [
    (8, 32, 36),  # 256 / 8 = 32 a GPU; (256 + 32) / 8 = 36
    (16, 16, 18),  # 256 / 16 = 16; 288 / 16 = 18
    (32, 8, 9),  # 256 / 32 = 8; 288 / 32 = 9
])
def test_redundant_experts_add_whole_experts_to_each_gpu(ep, base, physical):
    assert LAYER_EXPERT_BYTES == 44_050_944 and EXPERT_BYTES == 2_554_954_752 and ROUTED == 654_068_416_512
    plain = _per_gpu("--dp", str(ep), "--ep")
    r0 = _per_gpu("--dp", str(ep), "--ep", "--redundant-experts", "0")
    r32 = estimate_json("deepseek-v3", "--context", "32k", "--kv-memory", "10GiB", "--dp", str(ep), "--ep",
                        "--redundant-experts", "32")
    assert r0 == plain  # EPLB without redundant experts: the same 256 / EP experts a GPU
    # R = 32 holds (physical - base) more whole experts: EP 8: 4 x 2,554,954,752 = 10,219,819,008 B;
    # EP 16: 2 x = 5,109,909,504 B; EP 32: 1 x = 2,554,954,752 B
    assert r32["capacity"]["weight_bytes_per_gpu"] - plain == (physical - base) * EXPERT_BYTES
    assert {8: 10_219_819_008, 16: 5_109_909_504, 32: 2_554_954_752}[ep] == (physical - base) * EXPERT_BYTES
    assert r32["capacity"]["redundant_experts"] == 32 and r32["capacity"]["ep"] is True


def test_vllm_counts_the_eplb_state_allocated_before_the_profile():
    # EP 32, R = 32 (L = 58 MoE layers, E = 256, P = 288, 9 a GPU): eplb_state.py EplbState.add_model allocates
    #   expert_buffer, one MoE layer's 9 local experts: 9 x 44,050,944 = 396,458,496
    #   expert_load_window, window_size 1,000 x 58 x 288 int32: 66,816,000
    #   expert_load_pass_buffer, 58 x 288 int32: 66,816
    #   physical_to_logical_map, 58 x 288 int64: 133,632
    #   logical_to_physical_map, 58 x 256 x (32 + 1) int64: 3,919,872
    #   logical_replica_count and last_expert_load, 58 x 256 int64 each: 2 x 118,784 = 237,568
    # 467,632,384 B in all; with the ninth expert (2,554,954,752 B) vLLM's pool is 3,022,587,136 B smaller
    state = 396_458_496 + 66_816_000 + 66_816 + 133_632 + 3_919_872 + 237_568
    assert state == 467_632_384
    args = ("deepseek-v3", "--context", "32k", "--gpu", "h200", "--dp", "32", "--ep", "--engine", "vllm")
    plain = estimate_json(*args)["engine"]["kv_memory_bytes"]
    data = estimate_json(*args, "--redundant-experts", "32")["engine"]
    assert plain - data["kv_memory_bytes"] == EXPERT_BYTES + state == 3_022_587_136
    # the profile's weights term names the state (467,632,384 B = 0.436 GiB), not folded into the experts' saving
    assert "+ 0.44 GiB of EPLB state" in data["profile"]["weights_from"]


def test_emitted_flags():
    vllm = estimate_json("deepseek-v3", "--context", "32k", "--kv-memory", "10GiB", "--dp", "32", "--ep",
                         "--redundant-experts", "32", "--emit", "vllm")["emit"]["argv"]
    at = vllm.index("--enable-eplb")
    assert vllm[at:at + 3] == ["--enable-eplb", "--eplb-config", '{"num_redundant_experts": 32}']
    assert "--enable-expert-parallel" in vllm
    # SGLang --tp 8 --ep-size 8: (256 + 32) / 8 = 36 a GPU
    sglang = estimate_json("deepseek-v3", "--context", "32k", "--gpu", "h200", "--tp", "8", "--ep",
                           "--engine", "sglang", "--redundant-experts", "32", "--emit", "sglang")["emit"]["argv"]
    at = sglang.index("--ep-num-redundant-experts")
    assert sglang[at + 1] == "32" and "--ep-size" in sglang


def test_sglang_holds_physical_over_ep():
    # SGLang --tp 8 --ep-size 8 (no attention DP): 256 / 8 = 32 experts a GPU, with R = 32 (288 / 8) 36: 4 more
    args = ("deepseek-v3", "--context", "32k", "--gpu", "h200", "--tp", "8", "--ep", "--engine", "sglang")
    plain = estimate_json(*args)["capacity"]["weight_bytes_per_gpu"]
    eplb = estimate_json(*args, "--redundant-experts", "32")["capacity"]["weight_bytes_per_gpu"]
    assert eplb - plain == 4 * EXPERT_BYTES == 10_219_819_008


def test_refusals():
    assert "--redundant-experts without --ep" in _refused("deepseek-v3", "--dp", "8", "--redundant-experts", "8")
    # vLLM: 256 + 30 = 286 over EP 32 is uneven (FusedMoE refuses under EPLB)
    assert "286 physical experts do not divide over EP 32" in _refused(
        "deepseek-v3", "--dp", "32", "--ep", "--redundant-experts", "30")
    # SGLang: 256 + 4 = 260 over --ep-size 8 (expert_location.py asserts it)
    assert "260 physical experts do not divide over --ep-size 8" in _refused(
        "deepseek-v3", "--tp", "8", "--ep", "--engine", "sglang", "--redundant-experts", "4")
    # no experts: vLLM refuses --enable-expert-parallel first
    assert "no routed experts" in _refused("llama-3.1-8b", "--dp", "2", "--ep", "--redundant-experts", "0")
    # a MoE model class without vLLM's MixtureOfExperts interface (gpt_oss.py GptOssForCausalLM)
    assert "no MixtureOfExperts model class" in _refused("gpt-oss-120b", "--dp", "8", "--ep",
                                                         "--redundant-experts", "8")
    # SGLang 0.5.23's Mixtral does not add --ep-num-redundant-experts to its experts
    assert "does not build redundant experts" in _refused("mixtral-8x7b", "--tp", "8", "--ep", "--engine", "sglang",
                                                          "--redundant-experts", "8")
    # vLLM: EPLB needs an EP group above one GPU
    assert "EPLB requires tensor, prefill-context, or data parallelism" in _refused(
        "deepseek-v2-lite", "--ep", "--redundant-experts", "0")
    assert "must be 0 or more" in _refused("deepseek-v3", "--dp", "8", "--ep", "--redundant-experts", "-1")


def test_vllm_refuses_more_than_1023_redundant_experts():
    # eplb_state.py EplbState.add_model: MAX_EXPERT_REDUNDANCY = 1023, asserted; 256 + 1,024 = 1,280 divides EP 32
    # (40 a GPU), so only the cap refuses it
    assert "at most 1023" in _refused("deepseek-v3", "--dp", "32", "--ep", "--redundant-experts", "1024")


# one bf16 expert over the MoE layers: gate, up, down of hidden x moe_intermediate_size x 2 B, 48 layers each
# (Qwen3-Next-80B-A3B: hidden 2,048, moe_intermediate_size 512, 512 experts; Qwen3-VL-30B-A3B: 2,048, 768, 128)
@pytest.mark.parametrize("model, expert_bytes", [("qwen3-next-80b-a3b", 48 * 3 * 2_048 * 512 * 2),
                                                 ("qwen3-vl-30b-a3b", 48 * 3 * 2_048 * 768 * 2)])
def test_sglang_families_that_reuse_a_redundant_moe_block(model, expert_bytes):
    # SGLang 0.5.23 qwen3_next.py builds qwen2_moe.Qwen2MoeSparseMoeBlock (FusedMoE of num_experts +
    # ep_num_redundant_experts), qwen3_vl_moe.py builds qwen3_moe.Qwen3MoeModel (the same in Qwen3MoeSparseMoeBlock):
    # R = 4 over --ep-size 4 adds one whole expert a GPU (516 / 4 = 129 vs 128, 132 / 4 = 33 vs 32)
    args = (model, "--context", "8k", "--gpu", "h200", "--tp", "4", "--ep", "--engine", "sglang")
    plain = estimate_json(*args)["capacity"]["weight_bytes_per_gpu"]
    eplb = estimate_json(*args, "--redundant-experts", "4")["capacity"]["weight_bytes_per_gpu"]
    assert eplb - plain == expert_bytes
