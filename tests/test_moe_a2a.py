"""The MoE all-to-all backends under expert parallelism: vLLM 0.34's --all2all-backend (engines/vllm_a2a.py) and
SGLang 0.5.23's --moe-a2a-backend (engines/sglang_a2a.py), with DeepEP's buffer sizes (engines/deepep.py).

Every figure below is worked by hand from the cited source constants (DeepSeek-V3's config: hidden_size 7168,
n_routed_experts 256), never read off kvplan's output."""

import json

import pytest

MIB, GIB = 2**20, 2**30
BASE = ["estimate", "deepseek-v3", "--gpu", "h200", "--context", "32k"]


@pytest.fixture
def run(cli):
    return lambda *args: cli(*BASE, *args)


@pytest.fixture
def engine_json(run):
    def get(*args):
        code, out, err = run(*args, "--format", "json")
        assert code == 0, err
        return json.loads(out)["engine"]

    return get


# DeepEP 73b6ea4 config.hpp LowLatencyLayout at hidden 7168 (num_scales 7168 / 128 = 56), 256 experts:
# dispatch message 16 + max(7168 x 2, 7168 + 56 x 4) = 16 + 14,336 = 14,352 B; combine 56 x 4 + 14,336 = 14,560 B.
# tokens T: send = max(T x 14,352, 256 x T x 14,560), recv = 256 x T x max(14,352, 14,560); signaling 256 x 4 = 1,024
# (already a multiple of 128); total = 2 send + 2 recv + 2 x 1,024, then ((total + 128) // 128) x 128.
# T = 256 (vLLM: max_num_batched_tokens under use_batched_dp_moe): 256 x 256 x 14,560 = 954,204,160 each;
#   total 4 x 954,204,160 + 2,048 = 3,816,818,688 -> + 128 = 3,816,818,816.
LL_RDMA_256 = 3_816_818_816
# T = 128 (SGLang: SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK): 256 x 128 x 14,560 = 477,102,080 each;
#   total 4 x 477,102,080 + 2,048 = 1,908,410,368 -> 1,908,410,496.
LL_RDMA_128 = 1_908_410_496
# Config::get_nvl_buffer_size_hint at 8 ranks (get_dispatch_config / get_combine_config: 256 receive tokens, 20 SMs ->
# 10 channels), hidden bytes 7168 x 2 = 14,336: 10 x 8 x (2 x 1 + 3) x 4 = 1,600; rows 10 x 8 x 256 = 20,480, each
# 14,336 + 8 (SourceMeta) + 128 x 8 + 128 x 4 + 128 x 4 = 16,392 B -> 335,708,160; sum 335,709,760, aligned to 128
# -> 335,709,824.
NVL_NORMAL_8 = 335_709_824
# deep_ep.cpp Buffer: cudaMalloc(num_nvl_bytes + 8 x 4 + 8 x 8 + 8 x 8) + cudaMalloc(NUM_WORKSPACE_BYTES = 32 MiB)
NVL_TAIL = 160
WORKSPACE = 32 * MIB
VLLM_NVL = 1024 * MIB  # envs.py VLLM_DEEPEP_BUFFER_SIZE_MB 1024


def test_deepep_sizes_from_source():
    from kvplan.engines.deepep import low_latency_rdma_bytes, normal_nvl_bytes

    assert low_latency_rdma_bytes(256, 7168, 256) == LL_RDMA_256
    assert low_latency_rdma_bytes(128, 7168, 256) == LL_RDMA_128
    assert normal_nvl_bytes(7168 * 2, 8) == NVL_NORMAL_8
    assert normal_nvl_bytes(7168 * 2, 16) == 377_673_984  # worked in tests/test_a2a_nodes.py
    assert normal_nvl_bytes(7168 * 2, 12) is None  # get_dispatch_config has no Config for 12 ranks


def test_vllm_high_throughput_is_taken_from_the_kv_cache(engine_json):
    # one node (EP 8): num_rdma_bytes 0; the buffer is allocated in load_model, after the first snapshot, so vLLM's
    # consumed memory (mem_get_info) holds 1 GiB + 160 B + 32 MiB = 1,107,296,416 B more than the default backend's
    base = engine_json("--dp", "8", "--ep", "--engine", "vllm")
    ht = engine_json("--dp", "8", "--ep", "--engine", "vllm", "--all2all-backend", "deepep_high_throughput")
    assert ht["profile"]["kept_bytes"] - base["profile"]["kept_bytes"] == VLLM_NVL + NVL_TAIL + WORKSPACE
    assert base["profile"]["available_bytes"] - ht["profile"]["available_bytes"] == 1_107_296_416
    assert ht["max_num_batched_tokens"] == base["max_num_batched_tokens"]


def test_vllm_low_latency_term_and_batched_dp_tokens(engine_json):
    from kvplan.engines.vllm_a2a import term

    # 1 GiB NVLink + 160 B + 32 MiB + the RDMA hint at 256 tokens = 1,107,296,416 + 3,816,818,816
    got = term("deepep_low_latency", hidden=7168, experts=256, ep_size=8, max_tokens=256)
    assert got.bytes == 4_924_115_232
    ll = engine_json("--dp", "8", "--ep", "--engine", "vllm", "--all2all-backend", "deepep_low_latency")
    # use_batched_dp_moe: max_num_batched_tokens defaults to DEFAULT_MAX_NUM_BATCHED_TOKENS_FOR_BATCHED_DP = 256
    assert ll["max_num_batched_tokens"] == 256
    assert "DeepEP buffer" in ll["profile"]["kept_from"]
    assert any("get_low_latency_rdma_size_hint(256 tokens" in n for n in ll["profile"]["notes"])


def test_vllm_internode_high_throughput_adds_the_rdma_buffer():
    from kvplan.engines.vllm_a2a import term

    # EP 16 > 8 GPUs a node: num_rdma_bytes = VLLM_DEEPEP_BUFFER_SIZE_MB too
    got = term("deepep_high_throughput", hidden=7168, experts=256, ep_size=16, max_tokens=8192)
    assert got.bytes == 2 * VLLM_NVL + NVL_TAIL + WORKSPACE


@pytest.mark.parametrize("name,resolved", [("naive", "allgather_reducescatter"), ("pplx", "allgather_reducescatter"),
                                           ("flashinfer_all2allv", "flashinfer_nvlink_two_sided")])
def test_vllm_renamed_backends(name, resolved):
    from kvplan.engines.vllm_a2a import check_backend

    assert check_backend(name, 2, True) == resolved


@pytest.mark.parametrize("args,words", [
    (["--dp", "8", "--engine", "vllm", "--all2all-backend", "deepep_low_latency"], "needs --ep and --dp > 1"),
    (["--tp", "8", "--ep", "--engine", "vllm", "--all2all-backend", "deepep_low_latency"], "needs --ep and --dp > 1"),
    (["--dp", "8", "--ep", "--engine", "vllm", "--all2all-backend", "deepep"], "not one of vLLM 0.34's"),
    (["--dp", "8", "--ep", "--engine", "vllm", "--all2all-backend", "passthrough"], "not one of vLLM 0.34's"),
    (["--dp", "8", "--ep", "--all2all-backend", "deepep_low_latency"], "is vLLM's flag"),
    (["--tp", "8", "--engine", "sglang", "--moe-a2a-backend", "deepep"], "needs --ep"),
    (["--tp", "8", "--ep", "--engine", "sglang", "--moe-a2a-backend", "deepep_low_latency"], "not one of SGLang"),
    (["--tp", "8", "--ep", "--engine", "vllm", "--moe-a2a-backend", "deepep"], "is SGLang's flag"),
])
def test_refusals_are_one_line(run, args, words):
    code, _, err = run(*args)
    lines = err.strip().splitlines()
    assert code != 0 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), err
    assert words in lines[0]


def test_emitted_flags(run):
    code, out, err = run("--dp", "8", "--ep", "--emit", "vllm", "--all2all-backend", "deepep_high_throughput")
    assert code == 0, err
    assert "--enable-expert-parallel --all2all-backend deepep_high_throughput" in out
    code, out, err = run("--tp", "8", "--dp", "8", "--ep", "--emit", "sglang", "--moe-a2a-backend", "deepep")
    assert code == 0, err
    assert "--ep-size 8 --moe-a2a-backend deepep" in out


def test_sglang_deepep_reserve_and_shared_experts(engine_json):
    # memory_hook.py: reserved_mem += reserve_for_deepep_a2a_mb = 2,048 MiB after the 10 GiB floor. H200 (nvidia-smi
    # 143,771 MiB), --tp 8 --attn-dp-size 8: 512 + 8,192 x 1.5 (chunked prefill 8,192) + 512 x 2 (decode graphs) +
    # 8 / 8 x 1,024 + 1,536 (MLA prefill graphs) + 512 x 8 x 3 + 512 x 8 x 1.5 (DP gather, max_bs 512 > 300) =
    # 34,816 MiB; mem_fraction_static (143,771 - 34,816) / 143,771 = 0.7578... -> 0.758 without, and with DeepEP
    # (143,771 - 36,864) / 143,771 = 0.7436... -> 0.744.
    from kvplan.engines.sglang_rules import memory_defaults

    assert memory_defaults(143_771, 8, mla=True, dp=8).mem_fraction_static == 0.758
    assert memory_defaults(143_771, 8, mla=True, dp=8, a2a_mib=2048).mem_fraction_static == 0.744
    base = engine_json("--tp", "8", "--dp", "8", "--ep", "--engine", "sglang")
    deepep = engine_json("--tp", "8", "--dp", "8", "--ep", "--engine", "sglang", "--moe-a2a-backend", "deepep")
    # deepseek_v2.py: shared experts "replicated" under DeepEP: 58 MoE layers x 44,050,944 B = 2,554,954,752 B whole
    # on each GPU instead of an eighth (319,369,344 B): + 2,235,585,408 B
    assert deepep["weight_bytes_per_gpu"] - base["weight_bytes_per_gpu"] == 2_235_585_408
    assert any("0.744" in n for n in deepep["notes"])
    # the buffer SGLang makes at the first dispatch, inside the reserve: 335,709,824 + 160 + 32 MiB + 1,908,410,496
    # = 2,277,674,912 B = 2.12 GiB (above the 2 GiB it reserves)
    assert any("= 2.12 GiB" in n for n in deepep["notes"])


def test_deepep_low_latency_counts_the_redundant_experts(engine_json):
    # vLLM 0.34 fused_moe/layer.py: FusedMoEConfig(num_experts=global_num_experts = 256 + R), which all2all_utils
    # passes DeepEP as num_global_experts. R = 32: 288 experts at T = 256: combine 288 x 256 x 14,560 =
    # 1,073,479,680 = send = recv; signaling 288 x 4 = 1,152 (a multiple of 128); total 4 x 1,073,479,680 + 2,304 =
    # 4,293,921,024 -> + 128 = 4,293,921,152 B = 4,095.0002 MiB (256 experts: 3,640.00 MiB)
    ll = engine_json("--tp", "8", "--dp", "2", "--ep", "--engine", "vllm", "--all2all-backend", "deepep_low_latency",
                     "--redundant-experts", "32")
    assert "4,095.00 MiB RDMA" in ll["profile"]["kept_from"]
    assert any("hidden 7168, 288 experts" in n for n in ll["profile"]["notes"])
    # SGLang 0.5.23 fused_moe_triton/layer.py: the dispatcher's num_experts = 256 + R. R = 8 at T = 128: combine
    # 264 x 128 x 14,560 = 492,011,520 = send = recv; signaling 264 x 4 = 1,056 -> 1,152; total 4 x 492,011,520 +
    # 2,304 = 1,968,048,384 -> 1,968,048,512; with the NVLink hint 335,709,824 + 160 + 32 MiB: 2,337,312,928 B =
    # 2.177 GiB (2.12 GiB without the redundant experts)
    deepep = engine_json("--tp", "8", "--ep", "--engine", "sglang", "--moe-a2a-backend", "deepep",
                         "--redundant-experts", "8")
    assert any("= 2.18 GiB" in n and "264 experts" in n for n in deepep["notes"])


@pytest.mark.parametrize("pp", ["1", "2"])
def test_vllm_backend_outside_the_sequence_parallel_list_in_kvplans_own_plan(run, pp):
    # config/parallel.py use_sequence_parallel_moe: moonep is not in its list, so DeepSeek-V3's shared experts stay
    # split over the 8 TP ranks instead of whole on each (deepseek_v2.py disable_tp=is_sequence_parallel): 58 MoE
    # layers x 44,050,944 B = 2,554,954,752 B whole vs 319,369,344 B an eighth: 2,235,585,408 B a GPU less, in
    # kvplan's own plan (capacity.pool) as in vLLM's profile; at PP 2 (no tensor table: an even half a stage)
    # 1,117,792,704 B
    def weights(*args):
        code, out, err = run("--tp", "8", "--pp", pp, "--dp", "2", "--ep", "--engine", "vllm", *args,
                             "--format", "json")
        assert code == 0, err
        data = json.loads(out)
        return data["capacity"]["weight_bytes_per_gpu"], data["engine"]["profile"]["weight_bytes"]

    (plan_sp, profile_sp), (plan_split, profile_split) = weights(), weights("--all2all-backend", "moonep")
    # and the plan's placement note no longer says they are whole under moonep
    code, out, err = run("--tp", "8", "--pp", pp, "--dp", "2", "--ep", "--engine", "vllm", "--all2all-backend",
                         "moonep")
    assert code == 0 and "routed experts split by expert" in out and "sequence-parallel MoE (" not in out, err
    assert plan_sp - plan_split == 2_235_585_408 // int(pp)
    assert profile_sp - profile_split == 2_235_585_408 // int(pp)
