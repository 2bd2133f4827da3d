"""The deployment a plan runs on: one GPU kind, parallelism and memory settings."""

from __future__ import annotations

from .._record import record
from ..errors import UsageError
from ..units import GIB
from ..weights.record import Weights
from .gpus import Gpu, lookup
from .placement import VLLM_SPLIT, Placement

DEFAULT_MEM_UTIL = 0.9  # vLLM's gpu_memory_utilization default
DEFAULT_RESERVE_BYTES = 2 * GIB  # activations, CUDA graphs, non-torch memory


@record
class Deployment:
    gpu: Gpu | None = None
    tp: int = 1
    pp: int = 1
    mem_util: float = DEFAULT_MEM_UTIL
    reserve_bytes: int = DEFAULT_RESERVE_BYTES
    weight_bytes: int | None = None  # whole model; None = parameter count x bytes
    kv_memory_bytes: int | None = None  # pool per GPU given directly
    weights: Weights | None = None  # the checkpoint's bytes by role (kvplan.weights); wins over weight_bytes
    # data-parallel attention ranks, each a (tp, pp) engine with its own KV pool, and whether the routed experts
    # are split by expert over the dp x tp GPUs (vLLM's --enable-expert-parallel): capacity.experts
    dp: int = 1
    ep: bool = False
    # SGLang's --enable-dp-attention: the dense MLPs, shared experts and LM head over all dp x tp GPUs, not one DP
    # rank's tp (capacity/experts.py full_tp_saving)
    dense_over_all: bool = False
    # the engine's MoE all-to-all backend as resolved (vLLM's --all2all-backend, SGLang's --moe-a2a-backend;
    # engines/vllm_a2a.py, engines/sglang_a2a.py); None: the engine's default
    a2a: str | None = None
    # SGLang's --moe-a2a-backend builds the shared experts whole on every GPU (engines/sglang_a2a.py
    # replicates_shared: deepseek_v2.py parallel_group "replicated", unfused under DeepEP); vLLM's backends of the same
    # names (deepep_v2, ...) do not: capacity/experts.py placement_saving
    replicated_shared: bool = False
    sglang_groups: object = None  # SGLang's --enable-dp-lm-head / --moe-dense-tp-size: engines/sglang_groups.py
    mm_encoder_tp_mode: str | None = None  # vLLM's --mm-encoder-tp-mode as given: engines/vllm_encoder_dp.py
    # EPLB's redundant experts (with ep): experts + R physical experts over the EP ranks (capacity/eplb.py); None:
    # no EPLB
    redundant_experts: int | None = None
    eplb_default: bool = False  # R is vLLM's default (--redundant-experts auto): --emit vllm prints --enable-eplb alone
    # where the engine planned places weights otherwise than kvplan's split (vLLM 0.34's, the default): SGLang 0.5.23's
    # vision tower split and group flags (engines/sglang_placement.py), vLLM's --mm-encoder-tp-mode data
    # (engines/vllm_encoder_dp.py); capacity/placement.py. request.py placement_of picks it, from split_engine_of
    placement: Placement = VLLM_SPLIT
    gpus_per_node: int = 8  # a host's GPUs (--gpus-per-node): which EP ranks share a node (engines/ep_nodes.py)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def layout_text(self) -> str:
        """How the GPUs are split: "tp 8, pp 1", or with data parallelism "dp 8 x tp 1, pp 1, EP 8"."""
        if self.dp == 1 and not self.ep:
            return f"tp {self.tp}, pp {self.pp}"
        head = f"dp {self.dp} x tp {self.tp}, pp {self.pp}"
        if self.dense_over_all:
            head = f"SGLang --tp {self.dp * self.tp}: attention dp {self.dp} x tp {self.tp}, pp {self.pp}"
        eplb = f" + {self.redundant_experts} redundant experts" if self.redundant_experts is not None else ""
        return head + (f", EP {self.dp * self.tp}{eplb}" if self.ep else ", experts split over dp x tp")


def split_engine_of(engine: str, emit: str | None = None) -> str:
    """Whose module split kvplan's own plan follows (Deployment.placement: request.py placement_of), from the engine
    families planned and emitted ("ideal", "vllm", "sglang"; None): the engine planned (--engine), else the one
    emitted (--emit, whose launch line the plan is for, as Deployment.dense_over_all), else vLLM's. --engine vllm
    --emit sglang plans vLLM: vLLM's report stands beside the plan at vLLM's split, and --emit only prints SGLang's
    command."""
    chosen = engine if engine != "ideal" else emit
    return "sglang" if chosen == "sglang" else "vllm"


def make_deployment(
    gpu: str | None = None,
    *,
    gpu_memory: int | None = None,
    hbm_gbps: float | None = None,
    link_gbps: float | None = None,
    tflops: float | None = None,
    tp: int = 1,
    pp: int = 1,
    mem_util: float = DEFAULT_MEM_UTIL,
    reserve_bytes: int = DEFAULT_RESERVE_BYTES,
    weight_bytes: int | None = None,
    kv_memory_bytes: int | None = None,
    dp: int = 1,
    ep: bool = False,
    dense_over_all: bool = False,
    a2a: str | None = None,
    replicated_shared: bool = False,
    sglang_groups: object = None,
    mm_encoder_tp_mode: str | None = None,
    redundant_experts: int | None = None,
    eplb_default: bool = False,
    placement: Placement = VLLM_SPLIT,
    gpus_per_node: int = 8,
) -> Deployment:
    if not 0 < mem_util <= 1:
        raise UsageError(f"--mem-util must be in (0, 1], got {mem_util}")
    if tp < 1 or pp < 1:
        raise UsageError("--tp and --pp must be positive integers")
    if dp < 1:
        raise UsageError(f"--dp must be a positive integer, got {dp}")
    base = lookup(gpu) if gpu is not None else None  # --gpu '' is an unknown GPU, not no GPU
    if base is None and gpu_memory is None and kv_memory_bytes is None:
        return Deployment(None, tp, pp, mem_util, reserve_bytes, weight_bytes, None, dp=dp, ep=ep,
                          dense_over_all=dense_over_all, a2a=a2a, replicated_shared=replicated_shared,
                          sglang_groups=sglang_groups, mm_encoder_tp_mode=mm_encoder_tp_mode,
                          redundant_experts=redundant_experts, eplb_default=eplb_default,
                          placement=placement, gpus_per_node=gpus_per_node)
    if base is None:
        base = Gpu("custom", gpu_memory or 0, hbm_gbps or 0.0, link_gbps or 32.0, tflops or 0.0, "from --gpu-memory")
    else:
        from dataclasses import replace

        base = replace(
            base,
            memory_bytes=gpu_memory or base.memory_bytes,
            # --gpu-memory is the card's total as the user read it: the catalog's driver figures no longer apply
            driver_bytes=None if gpu_memory else base.driver_bytes,
            smi_mib=None if gpu_memory else base.smi_mib,
            hbm_gbps=hbm_gbps or base.hbm_gbps,
            link_gbps=link_gbps or base.link_gbps,
            bf16_tflops=tflops or base.bf16_tflops,
        )
    return Deployment(base, tp, pp, mem_util, reserve_bytes, weight_bytes, kv_memory_bytes, dp=dp, ep=ep,
                      dense_over_all=dense_over_all, a2a=a2a, replicated_shared=replicated_shared,
                      sglang_groups=sglang_groups, mm_encoder_tp_mode=mm_encoder_tp_mode,
                      redundant_experts=redundant_experts, eplb_default=eplb_default, placement=placement,
                      gpus_per_node=gpus_per_node)
