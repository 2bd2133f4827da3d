"""SGLang 0.5.23's MoE all-to-all backend (`--moe-a2a-backend`): its reserve, the shared experts it holds whole,
its DeepEP buffer.

Read in the sglang 0.5.23 wheel (srt/...):
- arg_groups/fields/exec_.py: moe_a2a_backend's choices (CHOICES), default "none"; deepep_mode default "auto"
  (low_latency for decode batches, normal for prefill).
- arg_groups/overrides.py _a2a_ep_size: the backends of _A2A_EP_SPANNING_BACKENDS set ep_size = tp_size (whole
  experts over every GPU), so kvplan asks for --ep with them (its whole-expert placement, capacity.experts).
- arg_groups/memory_hook.py handle_gpu_memory_settings: reserved_mem += reserve_for_deepep_a2a_mb after the 10 GiB
  floor: 2 * 1024 MiB for deepep unless a prefill-disaggregation server or the decode CUDA graphs are off
  (deepep_mode normal turns them off: moe_hook.py _handle_a2a_moe; kvplan plans the default auto);
  mem_fraction_static = (gpu_mem - reserved_mem) / gpu_mem, rounded to 3 places. reserve_for_graph_mb's 1 GiB more
  for deepep applies to the breakable prefill graphs only (Backend.BREAKABLE; not modelled).
- models/deepseek_v2.py DeepseekV2MoE: the shared experts are a DeepseekV2MLP with parallel_group "replicated"
  (whole on every GPU) under the backends of _shared_expert_use_tp1 (REPLICATED_SHARED); with deepep / deepep_v2
  (is_deepep_class_backend) shared_experts_fusion_disable_reason keeps them out of the fused MoE by default
  ("DeepEP: fusion off by default"), so kvplan counts them whole for those two. Read in deepseek_v2.py (DeepSeek-V2
  / V3 / V3.2, GLM-5); qwen2_moe.py and glm4_moe.py also leave the "tp" group for their shared experts under an
  all-to-all backend (sglang_dp.DP_FAMILIES), and the same rule is applied to them; their fusion default was not
  read.
- layers/moe/token_dispatcher/deepep.py DeepEPBuffer.get_deepep_buffer: one Buffer a process, made at the first
  dispatch (the dispatchers' _get_buffer), after the KV pool is sized: it lives in the reserve above, not in a
  pool term. Its sizes (deepep_mode auto: both): normal, num_nvl_bytes = get_nvl_buffer_size_hint(hidden x 2 B,
  EP ranks) of DeepEP's dispatch / combine Config; low latency, num_rdma_bytes =
  get_low_latency_rdma_size_hint(SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK (environ.py: 128), hidden, EP
  ranks, experts) (kvplan.engines.deepep), its experts the FusedMoE's num_experts (fused_moe_triton/layer.py:
  with EPLB's --ep-num-redundant-experts R, the logical experts + R). kvplan prints it beside the 2 GiB reserve.
  The sizes follow the group's size alone (no node count); --gpus-per-node adds a note where DeepEP's NVLink
  peers lie across nodes (engines/ep_nodes.py, the rule shared with vLLM).
Not modelled: the other backends' buffers (mooncake, nixl, mori, flashinfer, megamoe, pplx, ...), deepep_v2's
ElasticBuffer, --deepep-mode normal.
"""

from __future__ import annotations

from ..errors import UsageError
from ..units import GIB
from .deepep import NVSHMEM_NOTE, DeepEPBuffer, check_ranks, low_latency_rdma_bytes, normal_nvl_bytes, \
    normal_rdma_bytes
from .ep_nodes import NVL_SPLIT_NOTE, sglang_ep_group

DEFAULT = "none"
CHOICES = ("none", "deepep", "mooncake", "nixl", "mori", "ascend_fuseep", "flashinfer", "megamoe", "deepep_v2",
           "pplx", "ascend_tp", "flashinfer_megamoe")  # fields/exec_.py moe_a2a_backend choices
EP_SPANNING = frozenset({"megamoe", "deepep", "deepep_v2", "mooncake", "nixl", "ascend_fuseep", "flashinfer",
                         "flashinfer_megamoe", "mori", "pplx"})  # overrides.py _A2A_EP_SPANNING_BACKENDS
# deepseek_v2.py _shared_expert_use_tp1's backends, and those of them whose shared experts stay unfused by default
REPLICATED_SHARED = frozenset({"deepep", "pplx", "mooncake", "nixl", "mori", "ascend_fuseep", "flashinfer",
                               "megamoe", "flashinfer_megamoe", "deepep_v2"})
UNFUSED_SHARED = frozenset({"deepep", "deepep_v2"})
DEEPEP_RESERVE_MIB = 2 * 1024  # memory_hook.py reserve_for_deepep_a2a_mb
LL_DISPATCH_TOKENS = 128  # environ.py SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK
PARAM_BYTES = 2  # deepep.py _DeepEPDispatcherImplBase.params_bytes


def check_backend(name: str, ep: bool, tp: int = 1) -> str:
    """SGLang's --moe-a2a-backend as given; one line for a name it does not take, one that spans EP without
    kvplan's --ep, or DeepEP on an EP size (tp: SGLang's --tp, the EP group) its Buffer refuses (deepep.check_ranks)."""
    asked = name.strip().lower()
    if asked not in CHOICES:
        raise UsageError(f"--moe-a2a-backend {name!r}: not one of SGLang 0.5.23's ({', '.join(CHOICES)})")
    if asked in EP_SPANNING and not ep:
        raise UsageError(f"--moe-a2a-backend {asked} needs --ep: SGLang 0.5.23 sets ep_size = tp_size under it "
                         "(arg_groups/overrides.py _a2a_ep_size)", "add --ep")
    if asked == "deepep":
        check_ranks(tp, f"--moe-a2a-backend {asked}")
    return asked


def reserve_mib(backend: str | None) -> float:
    """What reserve_for_deepep_a2a_mb adds (the default auto mode keeps the decode CUDA graphs)."""
    return DEEPEP_RESERVE_MIB if backend == "deepep" else 0.0


def replicates_shared(backend: str | None) -> bool:
    """Whether SGLang's `backend` holds the shared experts whole on every GPU (REPLICATED_SHARED, unfused:
    UNFUSED_SHARED): Deployment.replicated_shared, which capacity.experts.placement_saving counts."""
    return backend in UNFUSED_SHARED


def shared_note(model, weights, dep) -> str | None:
    """The note where the backend builds the shared experts whole on every GPU (Deployment.replicated_shared, which
    capacity.experts.placement_saving counts for kvplan's plan and SGLang's report alike: replicated_shared_extra)."""
    if dep is None or not dep.replicated_shared or weights is None:
        return None
    from ..capacity.experts import is_moe, replicated_shared_extra, shared_bytes

    if not is_moe(model) or model.weight_routed_params is None or not model.weight_routed_params[4]:
        return None
    if shared_bytes(model, weights) is None:
        return (f"--moe-a2a-backend {dep.a2a}: SGLang holds the shared experts whole on every GPU "
                "(deepseek_v2.py parallel_group 'replicated'); not counted: their share of a tensor table is not "
                "known, kvplan splits them over the --tp GPUs")
    extra = replicated_shared_extra(model, weights, dep.tp * dep.dp)
    return (f"--moe-a2a-backend {dep.a2a}: the shared experts whole on every GPU (deepseek_v2.py "
            f"parallel_group 'replicated', fusion off under DeepEP): + {extra / GIB:.2f} GiB a GPU")


def buffer_note(model, dep) -> str | None:
    """The DeepEP buffer SGLang makes at the first dispatch, beside the reserve it is taken from."""
    if dep is None or dep.a2a != "deepep" or model.weight_routed_params is None:
        return None
    # the dispatcher's num_experts is the FusedMoE's, the logical experts + --ep-num-redundant-experts
    # (fused_moe_triton/layer.py moe_runner_config.num_experts; capacity/eplb.py)
    ranks, hidden = dep.tp * dep.dp, model.hidden_size or 0
    experts = model.weight_routed_params[0] + (dep.redundant_experts or 0)
    nvl = normal_nvl_bytes(hidden * PARAM_BYTES, ranks)
    normal_rdma = normal_rdma_bytes(hidden * PARAM_BYTES, ranks)
    rdma = max(low_latency_rdma_bytes(LL_DISPATCH_TOKENS, hidden, experts), normal_rdma or 0)
    line = (f"--moe-a2a-backend deepep: mem_fraction_static reserves {DEEPEP_RESERVE_MIB:,} MiB more "
            "(memory_hook.py reserve_for_deepep_a2a_mb); the DeepEP buffer is made at the first dispatch, after the "
            "pool is sized, inside the reserve")
    nodes = sglang_ep_group(dep.tp * dep.dp, dep.pp, dep.gpus_per_node)
    where = f"; {nodes.text()}" + (f": {NVL_SPLIT_NOTE} (SGLang's CUDA 12 fork fzyzcjy/DeepEP enables fabric handles)"
                                   if nodes.nvl_peers_split else "")
    if nvl is None:
        return line + (f"; its size at EP {ranks} is not modelled: DeepEP has no Config for {ranks} ranks "
                       "(deep_ep/buffer.py get_dispatch_config asserts)") + where
    buf = DeepEPBuffer(nvl, rdma)
    rdma_from = (f"the larger of the normal-mode RDMA hint ({normal_rdma / 2**20:,.2f} MiB) and the low-latency one"
                 if normal_rdma else "the low-latency RDMA hint")
    return (line + f"; deepep_mode auto: {buf.parts_text()} = {buf.total_bytes / GIB:.2f} GiB "
            f"(normal-mode NVLink hint at EP {ranks}, {rdma_from} for {LL_DISPATCH_TOKENS} tokens, hidden "
            f"{hidden}, {experts} experts){where}; {NVSHMEM_NOTE}")
