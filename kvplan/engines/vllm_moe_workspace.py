"""The fused-MoE workspace vLLM's profiling run allocates, per release, read in vLLM's source.

Which kernel runs a MoE layer decides whether its intermediate caches are transient (allocated and freed
inside each layer's call) or persistent (a workspace that outlives the layer, the run and the profile).
Read in model_executor/layers/fused_moe/ (fused_moe.py fused_experts_impl, fused_marlin_moe.py,
modular_kernel.py _allocate_buffers, oracle/*.py, experts/*.py), quantization/fp8.py and mxfp4.py, and
v1/worker/workspace.py, in the wheels of 0.10.1.1, 0.10.2, 0.11.0, 0.12.0, 0.13.0, 0.14.0, 0.16.0,
0.17.0, 0.19.0, 0.26.0, 0.27.1, 0.31.0 and 0.33.0, and the 0.34.0 sdist. A rule holds over a range whose read releases agree;
the releases between two read ones (0.15, 0.18, 0.20-0.25, 0.28-0.30, 0.32) are taken to follow it
where both neighbours do, and 0.18 is not used where the chunking (0.17) and its removal (0.19) differ.
Under TP as below; under data / expert parallelism (--dp, --ep) the rule further down ("Under DP / EP"),
read in 0.34 only. Default environment.

Paths, per release (M = the dummy run's tokens, topk = experts per token, I = intermediate size per
TP rank, H = hidden size; model dtype, 2 B):

- unquantized bf16/fp16 MoE on CUDA (Ampere, Hopper):
  * 0.10.1-0.13: UnquantizedFusedMoEMethod.forward_cuda calls fused_experts (fused_moe.py
    fused_experts_impl), which torch.empty's cache13 (M' x topk x max(2I, H)) and cache2
    (M' x topk x I) per call, M' = min(M, VLLM_FUSED_MOE_CHUNK_SIZE: 32,768 to 0.11, 16,384 from 0.12):
    TRANSIENT;
  * 0.14-0.33: a FusedMoEModularKernel with TritonExperts (0.14 unquantized_fused_moe_method.py; from
    0.16 oracle/unquantized.py: FlashInfer only with VLLM_USE_FLASHINFER_MOE_FP16 to 0.19, from 0.26
    FlashInfer CUTLASS first but moved behind Triton on Hopper and needing 9.0 on Ampere): PERSISTENT.
- FP8 with 128 x 128 block scales (Qwen3-235B-A22B-FP8), VLLM_USE_DEEP_GEMM=0 (or DeepGEMM absent):
  * SM120 (RTX PRO 6000): 0.10.1-0.13 Fp8MoEMethod.apply -> fused_experts: TRANSIENT (DeepGEMM
    supports SM90/SM100 only there); 0.14-0.33 the FP8 oracle's TRITON backend, TritonExperts in a
    modular kernel (FlashInfer CUTLASS's block-FP8 path needs capability 9.0 exactly): PERSISTENT.
    This assumes DeepGEMM off: platforms/cuda.py support_deep_gemm takes SM120 in 0.26 (not in 0.19),
    and with DeepGEMM installed and VLLM_USE_DEEP_GEMM left at 1 the oracle would pick
    TritonOrDeepGemmExperts, whose rows are aligned per expert (not modelled);
  * Hopper: 0.17-0.33 the oracle moves TRITON to the front for block FP8 without EP, so TritonExperts
    runs unless VLLM_USE_DEEP_GEMM=1 is set explicitly: PERSISTENT; before 0.17 DeepGEMM (its own
    modular kernel, persistent in 0.11+) or Triton (transient before 0.14) depending on the install:
    not modelled (None).
- MXFP4 (gpt-oss), with kvplan.weights.vllm_mxfp4.backend()'s choice of kernel:
  * Marlin (below Hopper; Hopper to 0.11): 0.10.1-0.16 Mxfp4MoEMethod.apply calls fused_marlin_moe,
    which torch.empty's cache13 (M x topk x max(2N, K)) and cache2 (M x topk x N), N = I padded to 128,
    K = H padded to 256: TRANSIENT; 0.17-0.33 MarlinExperts in a modular kernel (0.17 mxfp4.py
    process_weights_after_loading; oracle/mxfp4.py from 0.19): PERSISTENT;
  * Triton (triton_kernels, Hopper from 0.12): triton_kernel_moe_forward, called directly (0.12-0.17)
    or wrapped by OAITritonMxfp4ExpertsMonolithic (0.19-0.33, which the oracle prefers to the modular
    OAITritonExperts): an intermediate (M x topk, I) and an output (M, H) per call, plus matmul_ogs'
    own scratch (not read): TRANSIENT.
- anything else (other quantizations, Blackwell SM100, ROCm, expert parallelism): None.

Persistent workspace (v1/worker/workspace.py WorkspaceManager, from 0.14): get_simultaneous carves each
tensor from one buffer, each rounded up to 256 B, grown to the largest request and never freed.
modular_kernel.py _allocate_buffers asks for
  one chunk (M <= chunk size, or 0.19+ where M_full is passed as the chunk): max(workspace13, output)
      (the output shares workspace13's memory) and workspace2;
  several chunks (0.14-0.17, VLLM_FUSED_MOE_CHUNK_SIZE 16,384 and activation chunking on by default):
      workspace13 and workspace2 of one chunk and the whole output.
TritonExperts.workspace_shapes: workspace13 (M, topk, max(I, H)) (N = 2I halved by the gated
activation), workspace2 (M, topk, max(2I, H)), output (M, H). MarlinExperts: workspace13
(M x topk, max(N, K)), workspace2 (M x topk x max(2N, K)), output (M, K).

What the profile sees: a persistent workspace stays allocated from the first MoE layer on, so it is
live when the sampler runs after the forward: peak = workspace + max(forward, sampler). From 0.27.0
(vllm_profile.CONSUMED_FROM) the profile counts what stays allocated after the run as "consumed", and
its printed peak is the transient headroom: the workspace moves there. A transient one only matters
where it is larger than the forward and the sampler.

Under DP / EP (vLLM 0.34.0 wheel; moe_parallel()):
- the MoE's split: fused_moe/config.py FusedMoEParallelConfig.make flattens TP over DP (moe tp = tp x dp); with
  --enable-expert-parallel it sets tp_size=1 (each rank holds whole experts: I is not split) and ep_size = tp x dp.
  TritonExperts.workspace_shapes does not depend on the experts' count (local or global), so only M and I change.
- the tokens the kernel sees (M = modular_kernel.py _fused_experts' M_full = a1q.size(0) after prepare):
  * dp > 1, all2all backend allgather_reducescatter (the default; also the fallback for DP without EP,
    all2all_utils.maybe_make_prepare_finalize, made with allow_new_interface by oracle/base.py make_moe_kernel):
    prepare_finalize/naive_dp_ep.py MoEPrepareAndFinalizeNaiveDPEPModular.prepare -> the EP group's dispatch ->
    distributed/device_communicators/all2all.py AgRsAll2AllManager.dispatch: all_gatherv of every rank's tokens
    over the DP group, or over the EP group (dp x tp ranks) under sequence-parallel MoE (config/parallel.py
    use_sequence_parallel_moe: EP, tp > 1, dp > 1), each TP rank then holding ceil(n / tp) of its DP rank's n
    tokens (forward_context.py _compute_sp_num_tokens). The profile runs max_num_batched_tokens on every DP rank
    (v1/worker/gpu/model_runner.py profile_run -> _dummy_run(self.max_num_tokens); dp_utils.py
    dispatch_cg_and_sync_dp agrees the counts), so M = dp x max_num_batched_tokens, or dp x tp x ceil(mnbt / tp)
    under sequence parallelism. 0.34 has no DP chunking (no VLLM_MOE_DP_CHUNK_SIZE; M_full is one chunk).
    (A model class that does not build its MoE sequence-parallel gathers over the DP group: dp x mnbt, the same
    figure wherever tp divides max_num_batched_tokens.)
  * dp = 1 with EP over TP: no all-to-all (use_all2all_kernels needs dp > 1): M = max_num_batched_tokens.
  * any other all2all backend (DeepEP, MoRI, NIXL, FlashInfer NVLink, MoonEP): the kernels see what the backend
    dispatches (routed tokens, or a batched E x T layout): not read.
- the kernel: the unquantized oracle (oracle/unquantized.py _get_priority_backends) keeps TRITON first on
  Hopper and moves FlashInfer CUTLASS back when dp > 1, and TritonExperts._supports_parallel_config refuses only
  the FlashInfer NVLink backends: TritonExperts, persistent, as under TP. FP8 block: on Hopper with ep_size > 1 the
  FP8 oracle (oracle/fp8.py) moves FlashInfer CUTLASS to the front (not read); on SM120 the order has no EP rule
  (VLLM_CUTLASS takes no block scales): TritonExperts, DeepGEMM off. MXFP4 under DP / EP: not read.
- the combine input (naive_dp_ep.py allocate_fused_expert_output) is a NCCL symmetric buffer only with
  VLLM_USE_NCCL_SYMM_MEM (envs.py, default off), and _allocate_buffers keeps the output's share of the workspace
  even when it is aliased: nothing more is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..configs.resolve_family import nested_text
from ..capacity.gpus import CATALOG, CUDA_CAPABILITY
from .vllm_release import release_key

READ_FROM = (0, 10, 1)
# read up to 0.33.0 and in the 0.34.0 sdist: TritonExperts.workspace_shapes, modular_kernel._allocate_buffers,
# v1/worker/workspace.py (256 B views, a retained tail span added) and the unquantized and FP8 oracles'
# backend priorities are unchanged; the MXFP4 oracle adds SM110 (Jetson Thor) to Marlin's GPUs
READ_UNTIL = (0, 35, 0)
UNQUANTIZED_MODULAR_FROM = (0, 14, 0)  # 0.13: fused_experts; 0.14: FusedMoEModularKernel(TritonExperts)
FP8_SM120_MODULAR_FROM = (0, 14, 0)  # 0.13: fused_experts; 0.14: oracle/fp8.py TRITON
FP8_HOPPER_TRITON_FROM = (0, 17, 0)  # oracle/fp8.py: TRITON moved to the front on SM90 (block FP8, no EP)
MARLIN_MODULAR_FROM = (0, 17, 0)  # 0.16: fused_marlin_moe; 0.17: FusedMoEKernel(MarlinExperts)
TRITON_MXFP4_FROM = (0, 12, 0)  # vllm_mxfp4.TRITON_BUNDLED_FROM
PARALLEL_READ = ((0, 34, 0), (0, 35, 0))  # the DP / EP rule: read in the 0.34.0 wheel only
AGRS_BACKEND = "allgather_reducescatter"  # vllm_a2a.DEFAULT
UNCHUNKED_FROM = (0, 19, 0)  # 0.19 passes M_full as the chunk; 0.17 chunks; 0.18 not read
CHUNK_SMALLER_FROM = (0, 12, 0)  # envs.py VLLM_FUSED_MOE_CHUNK_SIZE: 32,768 to 0.11, 16,384 from 0.12
CHUNK_TOKENS_EARLY = 32768
CHUNK_TOKENS = 16384
WORKSPACE_ALIGN_BYTES = 256  # workspace.py get_simultaneous: round_up(bytes, 256)
MARLIN_INTERMEDIATE_PAD = 128
MARLIN_HIDDEN_PAD = 256
TRITON_MXFP4_INTERMEDIATE_PAD = 64
DTYPE_BYTES = 2  # workspace_dtype: the activations' dtype (bf16 / fp16)

# compute capability by the catalog's GPU names: kvplan.capacity.gpus.CUDA_CAPABILITY


@dataclass(frozen=True)
class MoeShape:
    top_k: int
    intermediate: int  # per expert, whole (before the TP split)
    hidden: int
    quant: str  # "unquantized", "fp8-block", "mxfp4", or the quant_method as given


@dataclass(frozen=True)
class MoeWorkspace:
    bytes: int | None  # None: the path is not read
    persistent: bool
    path: str  # the kernel and the source it was read in, or why there is no figure


def _round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def _aligned(elements: int) -> int:
    return _round_up(elements * DTYPE_BYTES, WORKSPACE_ALIGN_BYTES)


def moe_shape(config: dict) -> MoeShape | None:
    """The MoE fields of a config.json (top level or text_config), None when it has no routed experts."""
    nested = nested_text(config)

    def get(*keys):
        for k in keys:
            for src in (config, nested):
                v = src.get(k)
                if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    return v
        return None

    top_k = get("num_experts_per_tok", "experts_per_token", "top_k_experts")  # top_k_experts: Gemma 4 (gemma4.py)
    inter = get("moe_intermediate_size", "intermediate_size")
    hidden = get("hidden_size")
    if not (top_k and inter and hidden):
        return None
    quant = config.get("quantization_config") or nested.get("quantization_config")
    if not quant:
        kind = "unquantized"
    elif isinstance(quant, dict):
        method = str(quant.get("quant_method", "")).lower()
        if method == "fp8" and quant.get("store_dtype") is not None:
            # the routed experts in their own format (Fp8Config store_dtype "mxfp4": Mxfp4MoEMethod with 0.34's
            # DeepSeek-V4 MXFP4 backends, not the gpt-oss ones read here)
            kind = f"fp8 store_dtype {quant.get('store_dtype')}"
        elif method == "fp8" and quant.get("weight_block_size") == [128, 128]:
            kind = "fp8-block"
        else:
            kind = method or "unknown"
    else:
        kind = "unknown"
    return MoeShape(top_k, inter, hidden, kind)


def triton_experts_bytes(tokens: int, shape: MoeShape, tp: int, chunk: int | None) -> int:
    """TritonExperts' persistent workspace on one rank (chunk: the chunk size, None: one chunk)."""
    i, h, k = shape.intermediate // tp, shape.hidden, shape.top_k
    m = tokens if chunk is None else min(tokens, chunk)
    ws13, ws2, out = m * k * max(i, h), m * k * max(2 * i, h), tokens * h
    if m == tokens:
        return _aligned(max(ws13, out)) + _aligned(ws2)
    return _aligned(ws13) + _aligned(ws2) + _aligned(out)


def marlin_experts_bytes(tokens: int, shape: MoeShape, tp: int, chunk: int | None) -> int:
    """MarlinExperts' persistent workspace on one rank (MXFP4: I padded to 128, H to 256)."""
    n = _round_up(shape.intermediate // tp, MARLIN_INTERMEDIATE_PAD)
    kk = _round_up(shape.hidden, MARLIN_HIDDEN_PAD)
    m = tokens if chunk is None else min(tokens, chunk)
    ws13, ws2, out = m * shape.top_k * max(n, kk), m * shape.top_k * max(2 * n, kk), tokens * kk
    if m == tokens:
        return _aligned(max(ws13, out)) + _aligned(ws2)
    return _aligned(ws13) + _aligned(ws2) + _aligned(out)


def fused_experts_impl_bytes(tokens: int, shape: MoeShape, tp: int, chunk: int) -> int:
    """fused_experts_impl's transient caches: cache13 (M' x topk x max(2I, H)) + cache2 (M' x topk x I)."""
    i, m = shape.intermediate // tp, min(tokens, chunk)
    return (m * shape.top_k * max(2 * i, shape.hidden) + m * shape.top_k * i) * DTYPE_BYTES


def fused_marlin_moe_bytes(tokens: int, shape: MoeShape, tp: int) -> int:
    """fused_marlin_moe's transient caches (MXFP4 padding): M x topk x (max(2N, K) + N)."""
    n = _round_up(shape.intermediate // tp, MARLIN_INTERMEDIATE_PAD)
    kk = _round_up(shape.hidden, MARLIN_HIDDEN_PAD)
    return tokens * shape.top_k * (max(2 * n, kk) + n) * DTYPE_BYTES


def triton_kernels_mxfp4_bytes(tokens: int, shape: MoeShape, tp: int) -> int:
    """triton_kernel_moe_forward's intermediate (M x topk, I) and output (M, H); matmul_ogs' scratch not read."""
    i = _round_up(shape.intermediate // tp, TRITON_MXFP4_INTERMEDIATE_PAD)
    return (tokens * shape.top_k * i + tokens * shape.hidden) * DTYPE_BYTES


def _none(why: str) -> MoeWorkspace:
    return MoeWorkspace(None, False, why)


@dataclass(frozen=True)
class MoeRanks:
    tp: int  # the MoE's TP split of I (1 under EP)
    tokens: int  # M: the tokens the kernel sees on one rank
    how: str  # "" under plain TP, else where M and the split come from


def moe_parallel(tp: int, dp: int, ep: bool, tokens: int, a2a: str | None) -> MoeRanks | str:
    """The MoE's TP split and the tokens its kernel sees on one rank in vLLM 0.34's profile (module doc, "Under
    DP / EP"), or why not read."""
    if dp <= 1 and not ep:
        return MoeRanks(tp, tokens, "")
    moe_tp = 1 if ep else tp * dp  # FusedMoEParallelConfig.make: tp_size=1 under EP, else TP flattened over DP
    split = "experts whole (EP)" if ep else f"I split over tp x dp = {moe_tp}"
    if dp <= 1:
        return MoeRanks(moe_tp, tokens, f"EP over TP, no all-to-all: {tokens:,} tokens, {split}")
    backend = (a2a or AGRS_BACKEND) if ep else AGRS_BACKEND
    if backend != AGRS_BACKEND:
        return (f"under all2all backend {backend} the MoE kernels see the tokens it dispatches (its own layout), "
                "not read")
    if ep and tp > 1:  # use_sequence_parallel_moe: ceil(n / tp) a TP rank, gathered over the dp x tp EP ranks
        m = dp * tp * -(-tokens // tp)
        how = f"{dp} x {tp} x ceil({tokens:,} / {tp}) tokens all-gathered over the EP group (sequence-parallel MoE)"
    else:
        m = dp * tokens
        how = f"{dp} x {tokens:,} tokens all-gathered over the DP group"
    return MoeRanks(moe_tp, m, f"{how} (allgather_reducescatter), {split}")


def workspace(version, gpu: str | None, config: dict, *, tp: int = 1, tokens: int, dp: int = 1, ep: bool = False,
              a2a: str | None = None) -> MoeWorkspace | None:
    """The fused-MoE workspace of one rank in vLLM's profiling run (see the module doc); None for a config
    without routed experts; bytes None (with why) where the path is not read. dp, ep, a2a: vLLM's
    --data-parallel-size, --enable-expert-parallel and --all2all-backend (None: its default)."""
    shape = moe_shape(config)
    if shape is None:
        return None
    key = release_key(version)
    cap = CUDA_CAPABILITY.get(gpu or "")
    if key is None or not (READ_FROM <= key < READ_UNTIL):
        return _none("the fused-MoE path is read for vLLM 0.10.1-0.34 only")
    if cap is None:
        return _none(f"{gpu} is a ROCm card, whose fused-MoE path in vLLM was not read"
                     if gpu in CATALOG else "the fused-MoE kernel depends on the GPU, which is not known here")
    tp = max(tp, 1)
    if max(dp, 1) > 1 or ep:
        if not PARALLEL_READ[0] <= key < PARALLEL_READ[1]:
            return _none("the fused-MoE workspace under DP / EP is read in vLLM 0.34 only")
        ranks = moe_parallel(tp, max(dp, 1), ep, tokens, a2a)
        if isinstance(ranks, str):
            return _none(ranks)
        found = _workspace(key, cap, gpu, shape, ranks.tp, ranks.tokens, ep=ep, parallel=True)
        if found.bytes is None:
            return found
        return MoeWorkspace(found.bytes, found.persistent, f"{found.path}; {ranks.how}")
    return _workspace(key, cap, gpu, shape, tp, tokens)


def _workspace(key, cap, gpu, shape: MoeShape, tp: int, tokens: int, *, ep: bool = False,
               parallel: bool = False) -> MoeWorkspace:
    """workspace() for one MoE split (tp) and the tokens its kernel sees; parallel: under DP / EP (0.34)."""
    if shape.intermediate % tp:
        return _none("the experts' intermediate size does not split evenly over the TP ranks")
    chunk = CHUNK_TOKENS_EARLY if key < CHUNK_SMALLER_FROM else CHUNK_TOKENS
    modular_chunk = None if key >= UNCHUNKED_FROM else chunk
    if (0, 18, 0) <= key < UNCHUNKED_FROM and tokens > chunk:
        return _none("vLLM 0.18's MoE chunking is not read (0.17 chunks at 16,384 tokens, 0.19 does not)")
    if shape.quant == "mxfp4":
        if parallel:
            return _none("the MXFP4 MoE kernels under DP / EP are not read")
        from ..weights.vllm_mxfp4 import backend

        kind = backend(key, gpu)
        if kind == "marlin":
            if key >= MARLIN_MODULAR_FROM:
                return MoeWorkspace(marlin_experts_bytes(tokens, shape, tp, modular_chunk), True,
                                    "MarlinExperts, modular kernel's persistent workspace")
            return MoeWorkspace(fused_marlin_moe_bytes(tokens, shape, tp), False, "fused_marlin_moe, per call")
        if kind in ("triton", "triton-freed"):
            return MoeWorkspace(triton_kernels_mxfp4_bytes(tokens, shape, tp), False,
                                "triton_kernels' MoE (OAI Triton), per call")
        return _none("MXFP4 MoE kernel not read for this GPU")
    if cap >= (10, 0) and cap < (12, 0):
        return _none("Blackwell SM100's MoE kernels (FlashInfer) are not read")
    if shape.quant == "unquantized":
        if not (8, 0) <= cap < (10, 0):
            return _none("unquantized MoE kernels are read for Ampere, Ada and Hopper only (FlashInfer CUTLASS "
                         "can take Blackwell from 0.26)")
        if key >= UNQUANTIZED_MODULAR_FROM:
            return MoeWorkspace(triton_experts_bytes(tokens, shape, tp, modular_chunk), True,
                                "TritonExperts, modular kernel's persistent workspace")
        return MoeWorkspace(fused_experts_impl_bytes(tokens, shape, tp, chunk), False, "fused_experts, per call")
    if shape.quant == "fp8-block":
        if cap >= (12, 0):
            if key >= FP8_SM120_MODULAR_FROM:
                return MoeWorkspace(triton_experts_bytes(tokens, shape, tp, modular_chunk), True,
                                    "TritonExperts (FP8 block, assuming DeepGEMM off), modular kernel's persistent "
                                    "workspace")
            return MoeWorkspace(fused_experts_impl_bytes(tokens, shape, tp, chunk), False,
                                "fused_experts (FP8 block), per call")
        if cap == (9, 0):
            if ep:
                return _none("FP8 block MoE under EP on Hopper: the FP8 oracle puts FlashInfer CUTLASS first "
                             "(oracle/fp8.py _get_priority_backends, ep_size > 1), not read")
            if key >= FP8_HOPPER_TRITON_FROM:
                return MoeWorkspace(triton_experts_bytes(tokens, shape, tp, modular_chunk), True,
                                    "TritonExperts (FP8 block), modular kernel's persistent workspace")
            return _none("FP8 block MoE on Hopper before 0.17 runs DeepGEMM or Triton by the install: not modelled")
        return _none("FP8 block MoE kernels on this GPU are not read")
    return _none(f"the {shape.quant} MoE kernels are not read")


__all__ = ["MoeShape", "MoeWorkspace", "MoeRanks", "moe_parallel", "moe_shape", "workspace", "triton_experts_bytes", "marlin_experts_bytes",
           "fused_experts_impl_bytes", "fused_marlin_moe_bytes", "triton_kernels_mxfp4_bytes", "CUDA_CAPABILITY",
           "WORKSPACE_ALIGN_BYTES"]
