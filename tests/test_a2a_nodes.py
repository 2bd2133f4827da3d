"""--gpus-per-node: which expert-parallel ranks share a node, for vLLM 0.34's --all2all-backend and SGLang 0.5.23's
--moe-a2a-backend (engines/ep_nodes.py), and DeepEP's internode high-throughput hints (engines/deepep.py).

Figures worked by hand from the cited sources (DeepSeek-V3: hidden_size 7168, 256 routed experts), never read off
kvplan's output."""

import json

import pytest

MIB, GIB = 2**20, 2**30
BASE = ["estimate", "deepseek-v3", "--gpu", "h200", "--context", "32k"]
VLLM_HT = ["--engine", "vllm", "--ep", "--all2all-backend", "deepep_high_throughput"]

# DeepEP 73b6ea4 config.hpp Config::get_nvl_buffer_size_hint at 16 ranks, bf16 hidden 7168 x 2 = 14,336 B:
# deep_ep/buffer.py get_dispatch_config(16) = Config(20, 36, 288, 20, 128), get_combine_config(16) = Config(20, 4, 288,
# 12, 128): 10 channels, num_nvl_ranks min(16, 8) = 8, num_rdma_ranks 16 / 8 = 2, 288 NVLink receive tokens (both).
# 10 x 8 x (2 x 2 + 3) x 4 = 2,240; rows 10 x 8 x 288 = 23,040 of 14,336 + 8 (SourceMeta) + 128 x 8 (int64 top-k
# ids) + 128 x 4 + 128 x 4 = 16,392 B = 377,671,680; sum 377,673,920 -> up to a multiple of 128: 377,673,984.
NVL_HINT_16 = 377_673_984
# get_rdma_buffer_size_hint at 16 ranks: the Config constructor rounds the RDMA receive tokens 128 up to a multiple
# of the send tokens: dispatch 20 -> 140, combine 12 -> 132; the larger is the dispatch's. 10 x 2 x (8 x 2 + 2) x 2 x
# 4 = 2,880; rows 10 x 2 x 140 = 2,800 of (14,336 + 8 + 1,024 + 512 + 512 + 16 (int4)) x 2 = 32,816 B =
# 91,884,800; sum 91,887,680 -> 91,887,744.
RDMA_HINT_16 = 91_887_744
# DeepEP's low-latency hint at 128 tokens, 256 experts (tests/test_moe_a2a.py LL_RDMA_128)
LL_RDMA_128 = 1_908_410_496
NVL_TAIL, WORKSPACE = 160, 32 * MIB  # deep_ep.cpp Buffer::Buffer: 8 x (4 + 8 + 8) B; NUM_WORKSPACE_BYTES
VLLM_BUF = 1024 * MIB  # envs.py VLLM_DEEPEP_BUFFER_SIZE_MB


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


def test_deepep_internode_hints():
    from kvplan.engines.deepep import normal_nvl_bytes, normal_rdma_bytes

    assert normal_nvl_bytes(7168 * 2, 16) == NVL_HINT_16
    assert normal_rdma_bytes(7168 * 2, 16) == RDMA_HINT_16
    assert normal_rdma_bytes(7168 * 2, 8) == 0  # "Legacy mode": up to NUM_MAX_NVL_PEERS ranks
    assert normal_rdma_bytes(7168 * 2, 12) is None  # no Config for 12 ranks (get_dispatch_config asserts)


def test_vllm_ep16_two_nodes_of_8_against_one_node_of_16(engine_json):
    # all2all.py DeepEPHTAll2AllManager: num_rdma_bytes = 1024 MiB only when internode (base_device_communicator.py:
    # not all ranks in_the_same_node_as rank 0). EP 16 (--dp 16) on nodes of 8: 2 nodes, 2 x 1 GiB + 160 B + 32 MiB =
    # 2,181,038,240 B kept; on one node of 16: 1 GiB + 160 B + 32 MiB = 1,107,296,416 B
    two = engine_json("--dp", "16", *VLLM_HT)
    one = engine_json("--dp", "16", *VLLM_HT, "--gpus-per-node", "16")
    default = engine_json("--dp", "8", "--engine", "vllm", "--ep")  # no backend buffer
    assert two["profile"]["kept_bytes"] - one["profile"]["kept_bytes"] == VLLM_BUF
    assert one["profile"]["kept_bytes"] - default["profile"]["kept_bytes"] == 1_107_296_416
    assert one["profile"]["available_bytes"] - two["profile"]["available_bytes"] == VLLM_BUF
    # one node of 16 is still 2 RDMA ranks of 8 to DeepEP (NUM_MAX_NVL_PEERS): said, not hidden
    assert any("8 NVLink peers at most" in n for n in one["profile"]["notes"])
    assert any("RDMA 87.63 MiB" in n for n in two["profile"]["notes"])  # 91,887,744 B / 2**20 = 87.63


def test_vllm_ep_group_is_strided_under_pp():
    # parallel_state.py: ranks = arange(16).reshape(-1, dp 2, pp 2, pcp 1, tp 4); the EP group transpose(1, 2):
    # stage 0 = ranks 0-3 and 8-11: two nodes of 8 though EP is 8
    from kvplan.engines.ep_nodes import vllm_ep_group

    group = vllm_ep_group(4, 2, 2, 8)
    assert group.ranks in ((0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15))
    assert group.spans_nodes and not vllm_ep_group(4, 2, 2, 16).spans_nodes


def test_sglang_sizes_follow_the_ranks_not_the_node(engine_json):
    # token_dispatcher/deepep.py get_deepep_buffer: deepep_mode auto: num_nvl_bytes the normal hint at group.size()
    # 16, num_rdma_bytes max(normal RDMA hint 91,887,744, low-latency hint 1,908,410,496); no node count enters:
    # 377,673,984 + 160 + 32 MiB + 1,908,410,496 = 2,319,639,072 B = 2.160 GiB on nodes of 8 or of 16
    assert NVL_HINT_16 + NVL_TAIL + WORKSPACE + LL_RDMA_128 == 2_319_639_072
    for node in ("8", "16", "4"):
        notes = engine_json("--tp", "16", "--ep", "--engine", "sglang", "--moe-a2a-backend", "deepep",
                            "--gpus-per-node", node)["notes"]
        line = next(n for n in notes if "DeepEP buffer:" in n)
        assert "= 2.16 GiB" in line and "normal-mode RDMA hint (87.63 MiB)" in line
        # nodes of 4: DeepEP's NVLink peers (8 ranks) across hosts: a note
        assert ("lie across nodes" in line) == (node == "4")


def test_vllm_low_latency_notes_nvlink_peers_across_nodes(engine_json):
    ll = engine_json("--dp", "16", "--engine", "vllm", "--ep", "--all2all-backend", "deepep_low_latency",
                     "--gpus-per-node", "4")
    assert any("lie across nodes" in n for n in ll["profile"]["notes"])


@pytest.mark.parametrize("args,words", [
    (["--dp", "16", *VLLM_HT, "--gpus-per-node", "0"], "--gpus-per-node must be a positive integer"),
    (["--dp", "16", *VLLM_HT, "--gpus-per-node", "-8"], "--gpus-per-node must be a positive integer"),
    # EP 8 on two nodes of 4: vLLM passes an RDMA buffer, DeepEP's Buffer asserts num_ranks > 8 in normal mode
    (["--dp", "8", *VLLM_HT, "--gpus-per-node", "4"], "asserts more than 8 ranks"),
    (["--tp", "4", "--pp", "2", "--dp", "2", *VLLM_HT], "asserts more than 8 ranks"),
    # deep_ep.cpp Buffer::Buffer asserts num_ranks < 8 or num_ranks % 8 == 0 in both modes: EP 12 (12 % 8 = 4)
    (["--dp", "12", *VLLM_HT], "8 does not divide 12"),
    (["--dp", "12", "--engine", "vllm", "--ep", "--all2all-backend", "deepep_low_latency"], "8 does not divide 12"),
    # SGLang's EP group is its whole --tp (12 GPUs, attention TP 4 under --dp 3), not one attention group's 4
    (["--tp", "12", "--dp", "3", "--ep", "--engine", "sglang", "--moe-a2a-backend", "deepep"], "8 does not divide 12"),
])
def test_refusals_are_one_line(run, args, words):
    code, _, err = run(*args)
    lines = err.strip().splitlines()
    assert code != 0 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), err
    assert words in lines[0]


def test_sglang_deepep_ep_size_is_the_whole_tp(engine_json):
    # --tp 16 --dp 16: EP 16 (a multiple of 8) over attention groups of 1 GPU: DeepEP takes it
    sglang = engine_json("--tp", "16", "--dp", "16", "--ep", "--engine", "sglang", "--moe-a2a-backend", "deepep")
    assert sglang is not None


def test_part_filled_last_node_is_planned(engine_json):
    # 16 GPUs on nodes of 6 (ranks 0-5, 6-11, 12-15): the group spans three nodes and DeepEP's first block of 8
    # NVLink peers (ranks 0-7) lies across nodes 0 and 1, so the note says so; nothing is refused
    ht = engine_json("--dp", "16", *VLLM_HT, "--gpus-per-node", "6")
    assert any("lie across nodes" in n for n in ht["profile"]["notes"])


def test_node_size_is_accepted_where_it_changes_nothing(run):
    # no all-to-all backend: a node size that 16 GPUs do not fill whole is not an error (nothing reads it)
    code, _, err = run("--tp", "16", "--gpus-per-node", "6")
    assert code == 0, err


def test_sglang_deepep_ep_size_refused_by_deepeps_buffer(cli):
    # GLM-4.7 (96 query heads) at --tp 12: SGLang's DeepEP group is the 12 TP GPUs (--ep-size = --tp), and
    # deep_ep.cpp Buffer::Buffer asserts num_ranks < 8 or num_ranks % 8 == 0 (12 % 8 = 4)
    code, _, err = cli("estimate", "glm-4.7", "--gpu", "h200", "--context", "32k", "--engine", "sglang", "--tp", "12",
                       "--ep", "--moe-a2a-backend", "deepep")
    lines = err.strip().splitlines()
    assert code != 0 and len(lines) == 1 and "8 does not divide 12" in lines[0], err
