"""vLLM 0.34's extensible KV cache: the pool sized from the memory measured after warmup and CUDA-graph capture.

Read in the 0.34.0 sdist. From 0.34.0 a CUDA (or ROCm) start reserves the KV cache's address range with the
driver's virtual memory and commits physical pages only after warmup (config/cache.py
`CacheConfig.enable_extensible_kv_cache`: None, settled by config/vllm.py `_resolve_extensible_kv_cache`, on
where supported; off with `kv_cache_memory_bytes`, `num_gpu_blocks_override`, elastic EP, a connector that
shares the cache through legacy CUDA IPC or its own memory pool, or NIXL without an IMEX channel; the
executor turns it off where the driver lacks VMM, `Disabling the extensible KV cache: ...`).

What changes for the memory model:

1. The default utilization. `gpu_memory_utilization` defaults to None, resolved by
   `CacheConfig.resolved_gpu_memory_utilization`: **1.0 with the extensible cache**, 0.92
   (`DEFAULT_GPU_MEMORY_UTILIZATION`) without it. `v1/worker/utils.py request_memory`: requested =
   ceil(total x utilization).
2. The profile still runs as in 0.33 (v1/worker/gpu_worker.py `determine_available_memory`) and still
   prints "Available KV cache memory: X GiB" = requested - consumed - transient peak - the CUDA-graph
   estimate; with the extensible cache that figure is only the **reserved capacity** (v1/engine/core.py:
   "num_blocks is the reserved capacity until the post-warmup measurement"), not the pool.
3. After warmup and the real CUDA-graph capture, `v1/worker/extensible_kv_cache.py measure_kv_cache_blocks`
   empties torch's cache, reads the driver's free memory and calls `measure_kv_cache_bytes`:

       non_kv_used = init_free - free - committed       (everything resident but the committed KV prefix)
       headroom    = free + committed
       margin      = max(1 GiB, 0.75 x transient peak)   (KV_CACHE_MARGIN_FLOOR_BYTES, KV_CACHE_MARGIN_FRACTION;
                                                           3 GiB floor on ROCm)
       pool        = min(requested - non_kv_used, headroom - margin) - max(transient peak, reserve growth)

   The transient peak (`ExtensibleKVCache.reserved_headroom_bytes`) starts as the worker's
   `peak_activation_memory`, the profile's transient headroom plus the CUDA-graph estimate (gpu_worker.py
   `determine_available_memory`, `initialize_from_config`); **with the extensible cache that estimate is 0**:
   Model Runner V2's `profile_cudagraph_memory` (v1/worker/gpu/model_runner.py, 0.34.0) returns 0 when
   `cache_config.enable_extensible_kv_cache` ("The extensible KV cache measures the capture footprint after
   warmup"), so neither the reserved capacity of point 2 nor the transient peak holds it. The peak then grows
   to any larger allocated peak of the sizing warmup
   (v1/worker/gpu/warmup.py `run_kv_cache_sizing_warmup`: a full `max_num_batched_tokens` step with
   attention, prompt logprobs on one prompt in chunks of 1,024 rows). The reserve growth is how far a sizing
   step grows torch's reservation from an emptied cache (fragmentation).
   `v1/core/kv_cache_planning.py finalize_extensible_kv_cache` takes the smallest block count over the ranks
   (never above the reserved capacity) and then prints "GPU KV cache size" for it.

In kvplan's terms, with init_free = total - the memory in use before vLLM's first snapshot (the CUDA
context, and at TP > 1 what the distributed init allocates; other processes on the GPU), and resident =
weights + non-torch + the buffers kept after the profile + the captured graphs (kvplan has only the
estimate for these):

    pool = min(requested - resident, total - pre-snapshot - resident - margin) - transient peak

so at the default utilization 1.0 the pool is total - pre-snapshot - resident - margin - transient peak, and
at an explicit utilization well under 1 (0.92 on an 80 GB card leaves 6.4 GiB) it is requested - resident -
transient peak. The CUDA graphs are taken once, as the captured pool resident when the pool is measured (until
Dec 2026 kvplan also put its estimate in the transient peak and in the reserved capacity, which 0.34 does not).

Not modelled (the line says so): the sizing warmup's own peak where it exceeds the profile's (read in
source, it is the bf16 logits of 1,024 prompt rows plus the forward with attention, below the sampler
warm-up pass at the default sequences; not checked against any log), the reserve growth, the per-segment
rounding of committed pages to the driver's granularity (`ExtensibleKVCache.blocks_within`: each segment,
one per layer in layer-outermost layouts, rounds up to a granule), and ROCm's larger margin.
No public 0.34 start-up log was found (Dec 2026) to check any of this against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..units import GIB
from .vllm_release import release_key

# which releases have it on by default is VllmRules.extensible_kv_cache (vllm_rules.py: from 0.34.0), whose
# gpu_memory_utilization is then the resolved default with it, 1.0
UTILIZATION_WITHOUT_EXTENSIBLE = 0.92  # CacheConfig.DEFAULT_GPU_MEMORY_UTILIZATION, with it turned off
MARGIN_FLOOR_BYTES = 1 << 30  # extensible_kv_cache.py KV_CACHE_MARGIN_FLOOR_BYTES on CUDA (ROCm: 3 GiB)
MARGIN_FRACTION = 0.75  # KV_CACHE_MARGIN_FRACTION of the transient peak


@dataclass(frozen=True)
class PreSnapshotFigure:
    """Memory in use on a GPU before vLLM's first snapshot, from a public breakdown line ("Free memory on
    device (A/B GiB) on startup": B - A), on a machine whose GPU ran vLLM alone."""

    source: str
    release: str
    gpu: str
    tp: int
    pcie_only: bool
    gib: float  # B - A as printed (each to 2 decimals)


# Read from the collected logs (tests/data/vllm_logs/, where each names its source) and one PR. Left out: the
# two 0.27.1 Qwen2.5-0.5B starts on a desktop card (22.45 of 23.99 GiB free: 1.54 GiB held by the display,
# not by vLLM) and the 8 x L40S 0.10.2 start, whose snapshot preceded the distributed init.
PRE_SNAPSHOT_FIGURES = (
    PreSnapshotFigure("v0102_qwen3_8b_fp8_24gb_notes (23.08/23.53)", "0.10.2", "24 GB card", 1, False, 0.45),
    PreSnapshotFigure("v010dev_gemma3_4b_b200_breakdown_pr21489 (177.66/178.36)", "0.10 dev", "b200", 1, False, 0.70),
    PreSnapshotFigure("v026_qwen25_05b_16gb_v2_streaming_notes (15.32/15.55)", "0.26.0", "16 GB card", 1, False,
                      0.23),
    PreSnapshotFigure("v031_llama31_8b_a100_80gb_notes (78.84/79.25)", "0.31.0", "a100-80gb", 1, False, 0.41),
    PreSnapshotFigure("v027_qwen3_235b_a22b_fp8_tp4_rtxpro6000_runbook (94.05/95.01)", "0.27.x", "rtx-pro-6000", 4,
                      True, 0.96),
    PreSnapshotFigure("vLLM PR #48601, Qwen3.6-27B-FP8 on 4 x H100 (77.57/79.11)", "0.2x (MRV2)", "h100-sxm", 4,
                      False, 1.54),
)


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


# TP 1: the median of the four single-GPU figures, (0.41 + 0.45) / 2 = 0.43 GiB. TP > 1 (the snapshot follows the
# distributed init from 0.11.0): one figure each, NVLink 1.54 and PCIe-only 0.96 GiB. Empirical, not fitted on
# any 0.34 start (none was found).
PRE_SNAPSHOT_BYTES = int(_median([f.gib for f in PRE_SNAPSHOT_FIGURES if f.tp == 1]) * GIB)
PRE_SNAPSHOT_TP_BYTES = int(next(f.gib for f in PRE_SNAPSHOT_FIGURES if f.tp > 1 and not f.pcie_only) * GIB)
PRE_SNAPSHOT_TP_BYTES_PCIE = int(next(f.gib for f in PRE_SNAPSHOT_FIGURES if f.tp > 1 and f.pcie_only) * GIB)


def extensible_by_default(version) -> bool:
    """Whether a default CUDA start of this vLLM release sizes the KV cache after warmup (False for an
    unreadable or unmodelled version)."""
    from ..errors import KvplanError
    from .vllm_rules import resolve

    if release_key(version) is None:
        return False
    try:
        return resolve(str(version))[0].extensible_kv_cache
    except KvplanError:
        return False


def resolved_utilization(rules, extensible: bool | None) -> float:
    """The gpu_memory_utilization a start of `rules`' release runs at when none is given
    (config/cache.py resolved_gpu_memory_utilization): the rules' default, which with the extensible KV cache is
    1.0, or 0.92 where that cache was turned off (extensible False)."""
    if rules.extensible_kv_cache and extensible is False:
        return UTILIZATION_WITHOUT_EXTENSIBLE
    return rules.gpu_memory_utilization


def pre_snapshot_bytes(tp: int = 1, pcie_only: bool = False) -> int:
    """The memory in use before vLLM's first snapshot on one GPU (empirical, PRE_SNAPSHOT_FIGURES); tp: the
    ranks of the distributed init (TP x PP), whose communicators exist before the snapshot."""
    if max(tp, 1) == 1:
        return PRE_SNAPSHOT_BYTES
    return PRE_SNAPSHOT_TP_BYTES_PCIE if pcie_only else PRE_SNAPSHOT_TP_BYTES


def margin_bytes(transient_peak_bytes: int) -> int:
    """measure_kv_cache_bytes' margin: max(the floor, 0.75 x the transient peak)."""
    return max(MARGIN_FLOOR_BYTES, int(transient_peak_bytes * MARGIN_FRACTION))


def measured_pool_bytes(*, total_bytes: int, utilization: float, pre_snapshot: int, resident_bytes: int,
                        transient_peak_bytes: int, reserve_growth_bytes: int = 0) -> int:
    """The KV pool measure_kv_cache_bytes gives, from the figures it reads (see the module doc):
    init_free = total - pre_snapshot; free + committed = init_free - resident."""
    requested = math.ceil(total_bytes * utilization)  # v1/worker/utils.py request_memory
    headroom = total_bytes - pre_snapshot - resident_bytes
    pool = min(requested - resident_bytes, headroom - margin_bytes(transient_peak_bytes))
    return max(pool - max(transient_peak_bytes, reserve_growth_bytes), 0)


@dataclass(frozen=True)
class ExtensiblePool:
    pool_bytes: int
    pre_snapshot_bytes: int
    margin_bytes: int
    transient_peak_bytes: int
    resident_bytes: int
    captured_graph_bytes: int = 0  # the CUDA graphs captured before the measurement, inside resident_bytes

    def line(self) -> str:
        g = GIB
        return (f"extensible KV cache (vLLM 0.34+): the pool is measured after warmup and graph capture, "
                f"{self.pool_bytes / g:.2f} GiB = min(requested, total - {self.pre_snapshot_bytes / g:.2f} GiB in use "
                f"before vLLM's first snapshot (empirical) - margin {self.margin_bytes / g:.2f} GiB) - resident "
                f"{self.resident_bytes / g:.2f} GiB (weights, non-torch, kept buffers, the CUDA graphs captured "
                f"{self.captured_graph_bytes / g:.2f} GiB, modelled) - transient peak "
                f"{self.transient_peak_bytes / g:.2f} GiB (the profile's peak activation; 0.34 takes no CUDA-graph "
                "estimate with this cache); the sizing warmup's own peak, torch's reserve growth and the page "
                "granularity are not modelled, and no 0.34 log checks it")


def extensible_pool(*, total_bytes: int, utilization: float, tp: int, pcie_only: bool, weight_bytes: int,
                    non_torch_bytes: int, buffer_bytes: int, activation_bytes: int,
                    captured_graph_bytes: int) -> ExtensiblePool:
    """The pool of a 0.34+ start with the extensible KV cache, from kvplan's profile terms; captured_graph_bytes:
    the CUDA graphs captured before the measurement (resident then; no estimate is in the transient peak)."""
    pre = pre_snapshot_bytes(tp, pcie_only)
    resident = weight_bytes + non_torch_bytes + buffer_bytes + captured_graph_bytes
    # gpu_worker.py: peak_activation_memory = transient headroom + the CUDA-graph estimate, which V2's
    # profile_cudagraph_memory returns as 0 under this cache (module doc)
    peak = activation_bytes
    pool = measured_pool_bytes(total_bytes=total_bytes, utilization=utilization, pre_snapshot=pre,
                               resident_bytes=resident, transient_peak_bytes=peak)
    return ExtensiblePool(pool, pre, margin_bytes(peak), peak, resident, captured_graph_bytes)


__all__ = ["UTILIZATION_WITHOUT_EXTENSIBLE", "resolved_utilization",
           "MARGIN_FLOOR_BYTES", "MARGIN_FRACTION", "PRE_SNAPSHOT_FIGURES", "PRE_SNAPSHOT_BYTES",
           "PRE_SNAPSHOT_TP_BYTES", "PRE_SNAPSHOT_TP_BYTES_PCIE", "extensible_by_default", "pre_snapshot_bytes",
           "margin_bytes", "measured_pool_bytes", "extensible_pool", "ExtensiblePool", "PreSnapshotFigure"]
