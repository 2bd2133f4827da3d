"""vLLM 0.34's MoE all-to-all backend under expert parallelism (`--all2all-backend`): what its buffers take from
the KV cache.

Read in the vllm 0.34.0 wheel:
- config/parallel.py: All2AllBackend (the choices; engine/arg_utils.py removes "passthrough" from the CLI's),
  ParallelConfig.all2all_backend default "allgather_reducescatter"; _validate_parallel_config turns the removed
  "naive" and "pplx" into "allgather_reducescatter" with a warning; distributed/device_communicators/
  cuda_communicator.py takes "flashinfer_all2allv" as the deprecated name of "flashinfer_nvlink_two_sided".
- model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.use_all2all_kernels: the backend is used only
  with --enable-expert-parallel and dp > 1 (or prefill context parallelism, not modelled); without EP a DP
  deployment falls back to AllGather + ReduceScatter (all2all_utils.maybe_make_prepare_finalize). kvplan refuses
  the option where it would change nothing.
- config/parallel.py use_sequence_parallel_moe: the backends in its list (SEQUENCE_PARALLEL) run the MoE
  sequence-parallel with EP, tp > 1 and dp > 1 (the shared experts whole on every TP rank:
  capacity.experts.SP_SHARED_WHOLE); the others (flashinfer_nvlink_two_sided, moonep) keep them split over TP.
- use_batched_dp_moe: with deepep_low_latency or nixl_ep, EP and dp > 1, engine/arg_utils.py
  _set_default_max_num_batched_tokens_and_seqs_args defaults max_num_batched_tokens to
  SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS_FOR_BATCHED_DP (256).
- when the buffers are allocated: the manager (cuda_communicator.py) is built in init_worker_distributed_environment,
  before v1/worker/gpu_worker.py init_device takes its init_snapshot; the DeepEP Buffer is made later, in
  load_model (the quant method's process_weights_after_loading -> fused_moe/oracle/base.py make_moe_kernel ->
  all2all_utils.maybe_make_prepare_finalize -> manager.get_handle, one Buffer a process through its handle_cache).
  utils/mem_utils.py memory_profiling measures total_consumed with mem_get_info from init_snapshot, so the Buffer's
  cudaMalloc and NVSHMEM memory (outside torch) is consumed and taken from the KV cache
  (determine_available_memory: requested - non_kv_cache_memory), as the profile's kept buffers
  (kvplan.engines.vllm_profile buffer_bytes) are; the extensible KV cache measures after it too.
- distributed/device_communicators/all2all.py, each manager:
  - AgRsAll2AllManager (allgather_reducescatter): no buffer of its own; the all-gathered tokens are the forward's
    activations: the fused-MoE workspace is sized for the gathered tokens (vllm_moe_workspace.moe_parallel).
  - DeepEPHTAll2AllManager (deepep_high_throughput): num_nvl_bytes = VLLM_DEEPEP_BUFFER_SIZE_MB (envs.py: 1024)
    MiB; num_rdma_bytes the same across nodes, else 0.
  - DeepEPLLAll2AllManager (deepep_low_latency): num_nvl_bytes the same 1024 MiB; num_rdma_bytes =
    deep_ep.Buffer.get_low_latency_rdma_size_hint(FusedMoEConfig.max_num_tokens = max_num_batched_tokens
    (fused_moe/layer.py), hidden_dim rounded up to DeepEPLLPrepareAndFinalize.SUPPORTED_HIDDEN_SIZES, EP ranks,
    the global experts) (kvplan.engines.deepep).
  - not sized (a note says so): deepep_v2 (DeepEP's ElasticBuffer, sized inside DeepEP v2), mori (ROCm only; MoRI
    EPv2 opens a 4 GiB-aligned window before the snapshot), moonep (MoonEPBufferPool), nixl_ep (nixl_ep's
    Buffer.get_rdma_size_hint), flashinfer_nvlink_one_sided / two_sided (FlashInfer's MNNVL workspace).
Nodes: --gpus-per-node (default 8) places the EP group's ranks (engines/ep_nodes.py, the rule shared with SGLang):
DeepEPHTAll2AllManager's RDMA buffer where the group spans nodes; a group of at most 8 ranks across nodes is refused
(DeepEP's Buffer asserts more than NUM_MAX_NVL_PEERS ranks under an RDMA buffer in normal mode); more than 8 ranks in
one node is sized as vLLM passes it (no RDMA buffer) with a note: DeepEP at the pinned commit takes 8 NVLink peers at
most, so its internode kernels would have no RDMA buffer. VLLM_DEEPEP_HIGH_THROUGHPUT_FORCE_INTRA_NODE (no RDMA
buffer across nodes, for multi-node NVLink) is not modelled.
"""

from __future__ import annotations

from .._record import record
from ..capacity.experts import SEQUENCE_PARALLEL_BACKENDS
from ..errors import UsageError
from .deepep import NUM_MAX_NVL_PEERS, NVSHMEM_NOTE, DeepEPBuffer, check_ranks, low_latency_rdma_bytes, \
    normal_nvl_bytes, normal_rdma_bytes
from .ep_nodes import DEFAULT_GPUS_PER_NODE, NVL_SPLIT_NOTE, EPNodes, vllm_ep_group

DEFAULT = "allgather_reducescatter"
# config/parallel.py All2AllBackend, less "passthrough" (engine/arg_utils.py removes it from the CLI's choices)
BACKENDS = ("naive", "pplx", "deepep_high_throughput", "deepep_low_latency", "deepep_v2", "mori_high_throughput",
            "mori_low_latency", "moonep", "mori", "nixl_ep", "allgather_reducescatter", "flashinfer_all2allv",
            "flashinfer_nvlink_two_sided", "flashinfer_nvlink_one_sided")
RENAMED = {"naive": DEFAULT, "pplx": DEFAULT,  # _validate_parallel_config: removed, falls back with a warning
           "flashinfer_all2allv": "flashinfer_nvlink_two_sided"}  # cuda_communicator.py: deprecated alias
# config/parallel.py use_sequence_parallel_moe's list (passthrough is not a CLI choice): capacity.experts places the
# shared experts by it (placement_saving's a2a)
SEQUENCE_PARALLEL = SEQUENCE_PARALLEL_BACKENDS
BATCHED_DP = frozenset({"deepep_low_latency", "nixl_ep"})  # use_batched_dp_moe
BATCHED_DP_TOKENS = 256  # SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS_FOR_BATCHED_DP
DEEPEP_BUFFER_BYTES = 1024 * 2**20  # envs.py VLLM_DEEPEP_BUFFER_SIZE_MB default 1024
LL_HIDDEN_SIZES = (2048, 2560, 3072, 4096, 5120, 6144, 7168, 8192)  # deepep_ll.py SUPPORTED_HIDDEN_SIZES


def check_backend(name: str, dp: int, ep: bool, *, tp: int = 1, pp: int = 1,
                  gpus_per_node: int = DEFAULT_GPUS_PER_NODE) -> str:
    """The backend vLLM 0.34 runs for `--all2all-backend name`; one line for a name vLLM does not take, a
    deployment where it would change nothing, or DeepEP high-throughput on an EP group that DeepEP's Buffer refuses
    (module doc: at most 8 ranks across nodes)."""
    asked = name.strip().lower()
    if asked not in BACKENDS:
        raise UsageError(f"--all2all-backend {name!r}: not one of vLLM 0.34's ({', '.join(BACKENDS)})",
                         "config/parallel.py All2AllBackend; passthrough is bound by the MoE backend, not the CLI")
    if not ep or dp <= 1:
        raise UsageError(f"--all2all-backend {asked} needs --ep and --dp > 1: vLLM 0.34 uses an all2all backend only "
                         "with --enable-expert-parallel and --data-parallel-size > 1 "
                         "(FusedMoEParallelConfig.use_all2all_kernels)", "add --ep and --dp N, or leave it out")
    resolved = RENAMED.get(asked, asked)
    if resolved in ("deepep_high_throughput", "deepep_low_latency"):
        check_ranks(dp * tp, f"--all2all-backend {resolved}")
    nodes = vllm_ep_group(tp, pp, dp, gpus_per_node)
    if resolved == "deepep_high_throughput" and nodes.spans_nodes and len(nodes.ranks) <= NUM_MAX_NVL_PEERS:
        raise UsageError(f"--all2all-backend {resolved}: {nodes.text()}: vLLM passes DeepEP an RDMA buffer across "
                         "nodes (all2all.py DeepEPHTAll2AllManager), and DeepEP's Buffer then asserts more than "
                         f"{NUM_MAX_NVL_PEERS} ranks in normal mode (deep_ep.cpp Buffer::Buffer)",
                         "put the EP group in one node, or use more than 8 EP ranks")
    return resolved


def default_tokens(backend: str | None) -> int | None:
    """vLLM's default max_num_batched_tokens under this backend (use_batched_dp_moe), None where it is the usual."""
    return BATCHED_DP_TOKENS if backend in BATCHED_DP else None


@record
class A2ATerm:
    backend: str
    bytes: int  # kept outside torch after the profile, inside vLLM's consumed memory
    what: str  # for the profile's kept-buffers text
    notes: tuple[str, ...] = ()


def ll_hidden(hidden: int) -> int | None:
    """DeepEPLLPrepareAndFinalize.maybe_roundup_layer_hidden_size: the next supported hidden size (None above)."""
    return next((h for h in LL_HIDDEN_SIZES if h >= hidden), None)


def term(backend: str, *, hidden: int, experts: int, ep_size: int, max_tokens: int,
         nodes: EPNodes | None = None) -> A2ATerm:
    """The backend's buffers on one GPU (module doc); `nodes`: the EP group on its nodes (default: ep_size ranks on
    nodes of 8)."""
    where = ("allocated in load_model after vLLM's first snapshot (all2all_utils.maybe_make_prepare_finalize -> "
             "get_handle), so its profile counts it in consumed memory")
    nodes = nodes or EPNodes(tuple(range(ep_size)), DEFAULT_GPUS_PER_NODE)
    split = ("; " + NVL_SPLIT_NOTE) if nodes.nvl_peers_split else ""
    if backend == DEFAULT:
        return A2ATerm(backend, 0, "", (f"all2all backend {backend}: no buffer of its own (AgRsAll2AllManager); the "
                                        "all-gathered tokens are the MoE's activations (the fused-MoE workspace is sized for them)",))
    if backend == "deepep_high_throughput":
        internode = nodes.spans_nodes
        buf = DeepEPBuffer(DEEPEP_BUFFER_BYTES, DEEPEP_BUFFER_BYTES if internode else 0)
        node = (f"{nodes.text()}: across nodes (All2AllManagerBase.internode), the RDMA buffer too" if internode else
                f"{nodes.text()}: one node, no RDMA buffer")
        if not internode and ep_size > NUM_MAX_NVL_PEERS:
            node += (f"; DeepEP (73b6ea4) takes {NUM_MAX_NVL_PEERS} NVLink peers at most (NUM_MAX_NVL_PEERS): EP "
                     f"{ep_size} is {ep_size // NUM_MAX_NVL_PEERS} RDMA ranks to it, whose internode kernels would "
                     "have no RDMA buffer; this runs only with a DeepEP built for more NVLink peers (not read)")
        node += _hints_text(hidden, ep_size) if internode else ""
        return A2ATerm(backend, buf.total_bytes, buf.parts_text(),
                       (f"all2all backend {backend}: {buf.parts_text()}, VLLM_DEEPEP_BUFFER_SIZE_MB 1024 "
                        f"(DeepEPHTAll2AllManager), {where}; {node}"
                        + ("; " + NVSHMEM_NOTE if internode else "") + split,))
    if backend == "deepep_low_latency":
        width = ll_hidden(hidden)
        if width is None:
            return A2ATerm(backend, 0, "", (f"all2all backend {backend}: hidden size {hidden} is above DeepEP "
                                            "low-latency's supported sizes (deepep_ll.py); not sized",))
        buf = DeepEPBuffer(DEEPEP_BUFFER_BYTES, low_latency_rdma_bytes(max_tokens, width, experts))
        return A2ATerm(backend, buf.total_bytes, buf.parts_text(),
                       (f"all2all backend {backend}: {buf.parts_text()}; the RDMA buffer is DeepEP's "
                        f"get_low_latency_rdma_size_hint({max_tokens} tokens = max_num_batched_tokens, hidden {width}, "
                        f"{experts} experts) (DeepEPLLAll2AllManager), {where}; {NVSHMEM_NOTE}{split}",))
    return A2ATerm(backend, 0, "", (f"all2all backend {backend}: its buffers are not sized by kvplan (sized inside "
                                    "the kernel library, or ROCm only); the KV pool here is high by their size",))


def _hints_text(hidden: int, ranks: int) -> str:
    """DeepEP's own high-throughput hints at `ranks` (bf16 tokens; an fp8 dispatch needs less) beside the 1024 MiB
    vLLM passes for each buffer: deepep_ht.py _get_dispatch_config / _get_combine_config hand the kernels DeepEP's
    Config for the rank count, whose hints are what the kernels use of the buffers (engines/deepep.py)."""
    nvl, rdma = normal_nvl_bytes(hidden * 2, ranks), normal_rdma_bytes(hidden * 2, ranks)
    if nvl is None or rdma is None:
        return f"; DeepEP has no Config for {ranks} ranks (deep_ep/buffer.py get_dispatch_config asserts)"
    return (f"; DeepEP's own hints at {ranks} ranks, hidden {hidden} bf16: NVLink {nvl / 2**20:,.2f} MiB, RDMA "
            f"{rdma / 2**20:,.2f} MiB (config.hpp get_nvl_buffer_size_hint / get_rdma_buffer_size_hint)")


def a2a_of(model, weights, dep, max_tokens: int) -> tuple[A2ATerm | None, int]:
    """(the backend's buffers on one GPU, the bytes of shared experts the (tp, dp, ep) placement counted whole that
    this backend keeps split over TP: capacity.experts.shared_extra where the backend is not in
    use_sequence_parallel_moe's list) for a vLLM deployment with EP and dp > 1; (None, 0) elsewhere."""
    if not dep.ep or dep.dp <= 1:
        return None, 0
    from ..capacity.experts import is_moe, shared_extra

    if not is_moe(model) or model.weight_routed_params is None:
        return None, 0
    backend = dep.a2a or DEFAULT
    split = 0 if backend in SEQUENCE_PARALLEL else shared_extra(model, weights, dep.tp, dep.dp, dep.ep)
    # FusedMoEConfig.num_experts is global_num_experts: the logical experts + EPLB's redundant ones (fused_moe/
    # layer.py determine_expert_counts), what all2all_utils passes DeepEP as num_global_experts
    found = term(backend, hidden=model.hidden_size or 0,
                 experts=model.weight_routed_params[0] + (dep.redundant_experts or 0),
                 ep_size=dep.dp * dep.tp, max_tokens=max_tokens,
                 nodes=vllm_ep_group(dep.tp, dep.pp, dep.dp, dep.gpus_per_node))
    if split:
        found = A2ATerm(found.backend, found.bytes, found.what, found.notes + (
            f"all2all backend {backend} is not in use_sequence_parallel_moe's list: the shared experts stay split over "
            f"TP ({split / 2**30:.2f} GiB a GPU less than under a sequence-parallel backend)",))
    return found, split
