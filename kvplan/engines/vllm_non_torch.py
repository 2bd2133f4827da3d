"""The non-torch memory vLLM's profile subtracts: CUDA context growth, NCCL and custom all-reduce buffers.

0.35 GiB on v0 (#10517, TP 1), 0.13 GiB on v1 at TP 1 (llm-d H100 logs).
vLLM counts what was allocated outside torch since its first memory
snapshot. v0 (worker.py init_device: init_gpu_memory) and v1 before 0.11.0
(v1/worker/gpu_worker.py init_device: init_snapshot) take it before
init_worker_distributed_environment, so every communication buffer counts;
from 0.11.0 it is taken after, and only what the profile run allocates
(NCCL connections made lazily for the algorithms its collectives use, kernel
loading) counts. Read in source, per GPU: custom all-reduce (distributed/
device_communicators/custom_all_reduce.py) cudaMallocs an 8 MiB IPC buffer
and meta_size() + 8 MiB of metadata (its 8 MiB rank_data is torch's); the
symmetric-memory all-reduce (0.11+ default, all_reduce_utils.
SYMM_MEM_ALL_REDUCE_MAX_SIZES) 32-64 MiB on Hopper; NCCL's NVLS buffers above
2 GPUs on NVSwitch systems (NCCL src/transport/nvls.cc, 2.21+: 16 channels
on SM90 x 2 x 1 MiB x TP per communicator, 128 MiB at TP 4; nvls_bytes,
counted for pynccl's all-reduce communicator). The rest, NCCL's ring/tree
buffers (NCCL_BUFFSIZE 4 MiB for SIMPLE, about 4.7 MiB LL128 and 0.5 MiB LL
per channel and peer, for each of pynccl's and torch's communicators), grows
with the channel count NCCL picks from the topology at run time, so it is an
empirical figure per GPU for any TP > 1: NON_TORCH_TP_BYTES = 0.41 GiB from
0.11.0 (fitted on llm-d's H100 pair of one model and build: 0.14 GiB at TP 1,
0.55 at TP 2; the summary does not print the release, its log line exists
from 0.10.2) and NON_TORCH_TP_BYTES_EARLY = 1.25 GiB before (fitted on a
0.10.2 log on 2 x H200: 1.38 GiB). Logs they were not fitted on: 4 x B200
on 0.26.0 logged 0.95 GiB (0.22 above the model), PR #10511's v0 build added
1.79 GiB at TP 2 (0.54 above), and the Qwen3-235B TP 4 log (0.9/0.10) is
still 0.96 GiB per GPU short. Those are NVLink systems: on PCIe-only GPUs
(no NVLink; vLLM's custom all-reduce is off above two of them and NCCL picks
a few channels) a 0.10.2 log of 8 x L40S prints 0.17-0.21 GiB in all, so
NON_TORCH_TP_BYTES_PCIE = 0.05 GiB (fitted on it) for the catalog's PCIe
cards and any log whose custom all-reduce says so (pcie_only). PP's buffers
are not modelled.
"""

from __future__ import annotations

from ..capacity.gpus import PCIE_ONLY_GPUS
from ..units import GIB
from .vllm_release import release_key

NON_TORCH_BYTES = int(0.35 * GIB)  # v0 engine, TP 1: #10517's "non_torch_memory=0.35GiB"
NON_TORCH_BYTES_V1 = int(0.13 * GIB)  # v1 engine, TP 1: llm-d-benchmark's H100 logs
# per GPU when TP > 1 (NCCL communicators and their ring/tree buffers, custom all-reduce): empirical; see
# the module doc for what source explains and why the rest stays empirical. Two figures, because where
# vLLM takes its first memory snapshot moved: before the distributed init (v0; v1 before 0.11.0, so every
# communication buffer counts) or after it (v1 from 0.11.0: only what the profile run allocates lazily).
# After: llm-d-benchmark's H100 pair of one model and build (Llama-3.3-70B-FP8: 0.14 GiB at TP 1, 0.55 at TP 2)
NON_TORCH_TP_BYTES = int(0.41 * GIB)
# before: a public vLLM 0.10.2 log on 2 x H200 (Qwen3-Next-80B-A3B, TP 2): 1.38 GiB less the TP 1 base 0.13
NON_TORCH_TP_BYTES_EARLY = int(1.25 * GIB)
# PCIe-only GPUs (no NVLink between them): NCCL picks a few channels (ring buffers scale with them) and vLLM
# turns its custom all-reduce off above 2 GPUs ("not supported on more than two PCIe-only GPUs",
# custom_all_reduce.py): a 0.10.2 log of 8 x L40S (TP 8, snapshot before the distributed init, so every
# buffer counts) prints 0.17-0.21 GiB of non-torch per GPU, 0.18 on rank 0, against 1.38 on 2 x H200 (NVLink).
# One log: the figure is its rank 0 less the TP 1 base, used for both snapshot regimes.
NON_TORCH_TP_BYTES_PCIE = int(0.05 * GIB)
SNAPSHOT_AFTER_DIST_INIT_FROM = (0, 11, 0)  # v1/worker/gpu_worker.py init_device: init_snapshot moved below
# NCCL NVLS (NVLink SHARP) buffers, from NCCL's src/transport/nvls.cc (2.21 and later): only with more
# than 2 GPUs on an NVSwitch system that supports multicast (H100/H200/B200 SXM); per communicator
# nvlsTotalSize = NVLS channels x 2 x (NVLS_CHUNKSIZE 128 KiB x NCCL_STEPS 8) x nHeads (= TP ranks)
NVLS_CHANNELS = {"h100-sxm": 16, "h200": 16, "b200": 24}  # NVLS_NCHANNELS_SM90 16; SM100 single node 24 (2.27+)
NVLS_BUFFER_BYTES = 128 * 1024 * 8  # NVLS_CHUNKSIZE x NCCL_STEPS


def nvls_bytes(tp: int, gpu: str | None) -> int:
    """NCCL's NVLS buffers per GPU for one communicator (vLLM's pynccl all-reduce), 0 where NVLS is off."""
    channels = NVLS_CHANNELS.get(gpu or "")
    if not channels or tp <= 2:
        return 0
    return channels * 2 * NVLS_BUFFER_BYTES * tp


def snapshot_before_dist_init(version: str | None, v0_engine: bool = False) -> bool:
    """Whether vLLM's first memory snapshot precedes the distributed init, so that every buffer NCCL and
    the custom all-reduce allocate counts as non-torch (v0; v1 before 0.11.0). Unknown v1 release: no."""
    key = release_key(version)
    return v0_engine or (key is not None and key + (0,) * (3 - len(key)) < SNAPSHOT_AFTER_DIST_INIT_FROM)


def is_pcie_only(gpu: str | None, pcie_only: bool | None = None) -> bool:
    """Whether the TP group talks over PCIe only: what a log says (pcie_only), else the catalog GPU's form."""
    return pcie_only if pcie_only is not None else (gpu or "") in PCIE_ONLY_GPUS


def tp_non_torch_bytes(tp: int, gpu: str | None = None, version: str | None = None, v0_engine: bool = False,
                       pcie_only: bool | None = None) -> int:
    """What TP adds to one GPU's non-torch memory: the empirical figure (NVLink or PCIe-only) plus the NVLS
    buffers."""
    if tp <= 1:
        return 0
    if is_pcie_only(gpu, pcie_only):
        return NON_TORCH_TP_BYTES_PCIE
    early = snapshot_before_dist_init(version, v0_engine)
    return (NON_TORCH_TP_BYTES_EARLY if early else NON_TORCH_TP_BYTES) + nvls_bytes(tp, gpu)


__all__ = ["NON_TORCH_BYTES", "NON_TORCH_BYTES_V1", "NON_TORCH_TP_BYTES", "NON_TORCH_TP_BYTES_EARLY",
           "NON_TORCH_TP_BYTES_PCIE", "PCIE_ONLY_GPUS", "SNAPSHOT_AFTER_DIST_INIT_FROM", "NVLS_CHANNELS",
           "NVLS_BUFFER_BYTES", "nvls_bytes", "snapshot_before_dist_init", "is_pcie_only", "tp_non_torch_bytes"]
