"""DeepEP's buffer sizes (deepseek-ai/DeepEP), shared by the vLLM and SGLang all-to-all models
(kvplan.engines.vllm_a2a, kvplan.engines.sglang_a2a).

Read at DeepEP commit 73b6ea4 (2025-10-17), the commit vLLM's tools/ep_kernels/install_python_libraries.sh pins
(DEEPEP_COMMIT_HASH); SGLang 0.5.23 builds against fzyzcjy/DeepEP on CUDA 12 (token_dispatcher/deepep.py), a fork
kvplan has not read, whose sizes are taken to be the same:

- deep_ep.cpp Buffer::Buffer: one cudaMalloc of num_nvl_bytes + barrier_signal_bytes (NUM_MAX_NVL_PEERS x int) +
  buffer_ptr_bytes (NUM_MAX_NVL_PEERS x void*) + barrier_signal_ptr_bytes (NUM_MAX_NVL_PEERS x int*) when
  num_nvl_bytes > 0, and one cudaMalloc of NUM_WORKSPACE_BYTES (kernels/configs.cuh: 32 MiB) always;
  Buffer::sync: with num_rdma_bytes > 0, NVSHMEM is initialised and internode::alloc(num_rdma_bytes) takes the RDMA
  buffer from NVSHMEM's symmetric heap (deep_ep/buffer.py sets NVSHMEM_CUMEM_GRANULARITY = 2**29 first).
  All of it outside torch's allocator.
- config.hpp get_low_latency_rdma_size_hint (LowLatencyLayout): two (odd / even) send, receive and signaling
  buffers; a dispatch message 16 B + max(hidden x 2, hidden + hidden / 128 x 4), a combine message
  hidden / 128 x 4 + hidden x 2; send max(tokens x dispatch, experts x tokens x combine), receive
  experts x tokens x max(dispatch, combine), signaling experts x 4 aligned to 128 B; the total rounded up past the
  next NUM_BUFFER_ALIGNMENT_BYTES (128) boundary.
- config.hpp Config::get_nvl_buffer_size_hint / get_rdma_buffer_size_hint (the high-throughput buffers, SGLang's
  normal mode) with the Config of deep_ep/buffer.py get_dispatch_config / get_combine_config (num_sms 20; their
  tables for 2 to 160 ranks, DISPATCH_CONFIGS / COMBINE_CONFIGS; the Config constructor rounds the RDMA receive
  tokens up to a multiple of the RDMA send tokens); get_rdma_buffer_size_hint is 0 up to NUM_MAX_NVL_PEERS (8)
  ranks. topk_idx_t is int64 (kernels/configs.cuh TOPK_IDX_BITS default 64), SourceMeta two ints (internode.cu).
- the ranks: deep_ep.cpp Buffer::Buffer rdma_rank = rank / NUM_MAX_NVL_PEERS, nvl_rank = rank % NUM_MAX_NVL_PEERS,
  num_rdma_ranks = max(1, num_ranks / 8), num_nvl_ranks = min(num_ranks, 8): at most 8 NVLink peers whatever the
  node, so 16 ranks are 2 RDMA ranks of 8 (rank_groups); Buffer::sync opens the NVLink peers' buffers with
  cudaIpcOpenMemHandle (one host) and, with num_rdma_bytes > 0, NVSHMEM; Buffer::Buffer asserts num_ranks > 8 (or
  low-latency mode) when num_rdma_bytes > 0. The node rule kvplan draws from this: engines/ep_nodes.py.

Not sized (notes say so): NVSHMEM's own memory (its bootstrap, QPs and the heap mapped in
NVSHMEM_CUMEM_GRANULARITY steps of 512 MiB), the driver's rounding of each cudaMalloc.
"""

from __future__ import annotations

from .._record import record

NUM_MAX_NVL_PEERS = 8  # kernels/configs.cuh
NUM_WORKSPACE_BYTES = 32 * 1024 * 1024  # kernels/configs.cuh
NUM_BUFFER_ALIGNMENT_BYTES = 128  # kernels/configs.cuh
# deep_ep.cpp Buffer::Buffer: barrier signals (int), buffer pointers (void*), barrier signal pointers (int*)
NVL_TAIL_BYTES = NUM_MAX_NVL_PEERS * (4 + 8 + 8)
NUM_SMS = 20  # deep_ep/buffer.py Buffer.num_sms
# deep_ep/buffer.py get_dispatch_config / get_combine_config: ranks -> Config(num_sms, num_max_nvl_chunked_send_tokens,
# num_max_nvl_chunked_recv_tokens, num_max_rdma_chunked_send_tokens, num_max_rdma_chunked_recv_tokens), less num_sms
DISPATCH_CONFIGS = {2: (24, 256, 6, 128), 4: (6, 256, 6, 128), 8: (6, 256, 6, 128), 16: (36, 288, 20, 128),
                    24: (32, 288, 8, 128), 32: (32, 288, 8, 128), 48: (32, 288, 8, 128), 64: (32, 288, 8, 128),
                    96: (20, 480, 12, 128), 128: (20, 560, 12, 128), 144: (32, 720, 12, 128),
                    160: (28, 720, 12, 128)}
COMBINE_CONFIGS = {2: (10, 256, 6, 128), 4: (9, 256, 6, 128), 8: (4, 256, 6, 128), 16: (4, 288, 12, 128),
                   24: (1, 288, 8, 128), 32: (1, 288, 8, 128), 48: (1, 288, 8, 128), 64: (1, 288, 8, 128),
                   96: (1, 480, 8, 128), 128: (1, 560, 8, 128), 144: (2, 720, 8, 128), 160: (2, 720, 8, 128)}
SOURCE_META_BYTES = 8  # kernels/internode.cu SourceMeta: two ints
TOPK_IDX_BYTES = 8  # kernels/configs.cuh topk_idx_t: int64 (TOPK_IDX_BITS 64 unless built otherwise)
INT4_BYTES = 16  # sizeof(int4)
MAX_TOPK = 128  # config.hpp get_nvl_buffer_size_hint kNumMaxTopK
MAX_SCALES = 128  # kNumMaxScales
NVSHMEM_GRANULARITY_BYTES = 2**29  # deep_ep/buffer.py NVSHMEM_CUMEM_GRANULARITY


def _align(n: int, to: int) -> int:
    return -(-n // to) * to


def low_latency_rdma_bytes(tokens: int, hidden: int, experts: int) -> int:
    """config.hpp get_low_latency_rdma_size_hint(num_max_dispatch_tokens_per_rank, hidden, num_ranks, num_experts)
    (num_ranks is not used by the layout)."""
    scales = hidden // 128
    dispatch = 16 + max(hidden * 2, hidden + scales * 4)
    combine = scales * 4 + hidden * 2
    send = max(tokens * dispatch, experts * tokens * combine)
    recv = max(experts * tokens * dispatch, experts * tokens * combine)
    signaling = _align(experts * 4, 128)
    total = 2 * send + 2 * recv + 2 * signaling
    return (total + NUM_BUFFER_ALIGNMENT_BYTES) // NUM_BUFFER_ALIGNMENT_BYTES * NUM_BUFFER_ALIGNMENT_BYTES


def check_ranks(ranks: int, backend: str) -> None:
    """One line where DeepEP's Buffer refuses `ranks` EP ranks in either mode: deep_ep.cpp Buffer::Buffer asserts
    num_ranks < NUM_MAX_NVL_PEERS or num_ranks % NUM_MAX_NVL_PEERS == 0 (before any buffer is sized)."""
    from ..errors import UsageError

    if ranks >= NUM_MAX_NVL_PEERS and ranks % NUM_MAX_NVL_PEERS:
        raise UsageError(f"{backend} with EP {ranks}: DeepEP's Buffer asserts fewer than {NUM_MAX_NVL_PEERS} EP ranks "
                         f"or a multiple of {NUM_MAX_NVL_PEERS} (deep_ep.cpp Buffer::Buffer), and {NUM_MAX_NVL_PEERS} "
                         f"does not divide {ranks}", f"use an EP size under {NUM_MAX_NVL_PEERS} or a multiple of it")


def rank_groups(ranks: int) -> tuple[int, int]:
    """deep_ep.cpp Buffer::Buffer: (num_nvl_ranks, num_rdma_ranks) of `ranks` EP ranks: at most NUM_MAX_NVL_PEERS
    NVLink peers, whatever the node."""
    return min(ranks, NUM_MAX_NVL_PEERS), max(ranks // NUM_MAX_NVL_PEERS, 1)


def _configs(ranks: int) -> tuple[tuple[int, int, int, int], ...] | None:
    """The dispatch and combine Config of `ranks` (None where get_dispatch_config has none: it asserts), the RDMA
    receive tokens rounded up to a multiple of the send tokens as config.hpp's Config constructor does."""
    if ranks not in DISPATCH_CONFIGS:
        return None
    return tuple((nvl_send, nvl_recv, rdma_send, _align(rdma_recv, rdma_send))
                 for nvl_send, nvl_recv, rdma_send, rdma_recv in (DISPATCH_CONFIGS[ranks], COMBINE_CONFIGS[ranks]))


def normal_nvl_bytes(hidden_bytes: int, ranks: int) -> int | None:
    """config.hpp Config::get_nvl_buffer_size_hint, the larger of DeepEP's own dispatch and combine Config of `ranks`
    (as SGLang's DeepEPBuffer.get_deepep_buffer takes it); None where DeepEP has no Config for `ranks`."""
    configs = _configs(ranks)
    if configs is None:
        return None
    channels, (nvl_ranks, rdma_ranks) = NUM_SMS // 2, rank_groups(ranks)
    row = hidden_bytes + SOURCE_META_BYTES + MAX_TOPK * TOPK_IDX_BYTES + MAX_TOPK * 4 + MAX_SCALES * 4

    def hint(recv: int) -> int:
        n = channels * nvl_ranks * (2 * rdma_ranks + 3) * 4 + channels * nvl_ranks * recv * row
        return _align(n, 128)

    return max(hint(recv) for _, recv, _, _ in configs)


def normal_rdma_bytes(hidden_bytes: int, ranks: int) -> int | None:
    """config.hpp Config::get_rdma_buffer_size_hint, the larger of the dispatch and combine Config of `ranks`: 0 up
    to NUM_MAX_NVL_PEERS ranks; None where DeepEP has no Config for `ranks`."""
    configs = _configs(ranks)
    if configs is None:
        return None
    if ranks <= NUM_MAX_NVL_PEERS:
        return 0
    channels, (_, rdma_ranks) = NUM_SMS // 2, rank_groups(ranks)
    row = (hidden_bytes + SOURCE_META_BYTES + MAX_TOPK * TOPK_IDX_BYTES + MAX_TOPK * 4 + MAX_SCALES * 4
           + INT4_BYTES) * 2

    def hint(recv: int) -> int:
        n = channels * rdma_ranks * (NUM_MAX_NVL_PEERS * 2 + 2) * 2 * 4 + channels * rdma_ranks * recv * row
        return _align(n, 128)

    return max(hint(recv) for _, _, _, recv in configs)


@record
class DeepEPBuffer:
    """What one process's deep_ep.Buffer allocates outside torch."""

    nvl_bytes: int  # num_nvl_bytes (cudaMalloc, with its pointer / barrier tail when > 0)
    rdma_bytes: int  # num_rdma_bytes (NVSHMEM symmetric heap)

    @property
    def cuda_malloc_bytes(self) -> int:
        return (self.nvl_bytes + NVL_TAIL_BYTES if self.nvl_bytes else 0) + NUM_WORKSPACE_BYTES

    @property
    def total_bytes(self) -> int:
        return self.cuda_malloc_bytes + self.rdma_bytes

    def parts_text(self) -> str:
        mib = 2**20
        text = (f"DeepEP buffer: {self.nvl_bytes / mib:,.2f} MiB NVLink + {NVL_TAIL_BYTES} B + 32 MiB workspace "
                "(cudaMalloc)")
        if self.rdma_bytes:
            text += f" + {self.rdma_bytes / mib:,.2f} MiB RDMA (NVSHMEM)"
        return text


NVSHMEM_NOTE = ("not counted: NVSHMEM's own memory (bootstrap, QPs; DeepEP sets NVSHMEM_CUMEM_GRANULARITY to 512 "
                "MiB, so the heap may map up to that much beyond the RDMA buffer) and the driver's rounding of each "
                "cudaMalloc")
