"""Data-parallel attention with the routed experts split over every GPU (vLLM's --data-parallel-size with or without
--enable-expert-parallel): what one GPU holds.

vLLM 0.34 runs one engine core per DP rank (--data-parallel-size N), each a TP group of --tensor-parallel-size GPUs
that profiles its own GPUs and sizes its own KV pool; the requests are spread over the ranks, so a replica serves
dp x the sequences one rank's pool holds. Attention, the dense layers, the shared experts, the embeddings and the
LM head are built per DP rank and split over its TP ranks as without DP (VocabParallelEmbedding and the linear
layers use the TP group). Only the FusedMoE layers' routed experts span the DP ranks
(model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make):

- without --enable-expert-parallel, TP is flattened across DP (flatten_tp_across_dp_and_pcp): every expert is
  split over the dp x tp GPUs, each holding 1 / (dp x tp) of the routed experts' bytes;
- with it, EP = dp x tp (ep_size = the flattened tp_size, the MoE layers' tp_size 1), and every GPU holds whole
  experts: fused_moe/expert_map_manager.py determine_expert_map gives each rank num_experts // EP, the first
  num_experts % EP ranks one more ("linear" and "round_robin" placement alike), so an uneven split is allowed and
  the fullest GPU holds ceil(num_experts / EP) of them.

vLLM refuses --enable-expert-parallel for a model without experts (config/model.py
ModelConfig._verify_with_expert_parallelism). The all-to-all backend's buffers are engines/vllm_a2a.py's (a vLLM
profile term). Not modelled: the MoE kernel workspace under EP (its tokens are those dispatched to the rank).

EPLB's redundant experts (--redundant-experts R: vLLM's --enable-eplb --eplb-config '{"num_redundant_experts": R}',
SGLang's --ep-num-redundant-experts R; capacity/eplb.py): the EP ranks hold logical + R physical experts
(vLLM fused_moe/layer.py determine_expert_counts: global_num_experts = num_experts + num_redundant_experts; SGLang
eplb/expert_location.py num_physical_experts), each rank physical / EP of them, each the bytes of one logical
expert.

Sequence-parallel MoE: with EP, tp > 1 and dp > 1 vLLM 0.34 runs the MoE sequence-parallel
(config/parallel.py ParallelConfig.use_sequence_parallel_moe: the all2all backend one of its list, the default
"allgather_reducescatter" among them), and some families then build their shared experts whole on every TP rank
(SP_SHARED_WHOLE): deepseek_v2.py DeepseekV2MoE passes is_sequence_parallel to DeepseekV2MLP, whose
MergedColumnParallelLinear / RowParallelLinear take disable_tp=is_sequence_parallel; llama4.py Llama4MoE's
shared_expert LlamaMLP(disable_tp=is_sequence_parallel); qwen3_next.py Qwen3NextSparseMoeBlock's Qwen2MoeMLP
(is_sequence_parallel -> disable_tp); nemotron_h.py NemotronHMoE's NemotronHMLP(is_sequence_parallel). Others keep
them split over TP: qwen2_moe.py Qwen2MoeSparseMoeBlock and glm4_moe.py Glm4MoE pass no such flag.
"""

from __future__ import annotations

from ..core.model import ModelSpec
from ..errors import UsageError
from ..weights.estimate import holds_config_estimate
from ..weights.record import Weights
from .placement import VLLM_SPLIT, Placement
from .shard import _ceil_div


def is_moe(model: ModelSpec) -> bool:
    """A model with routed experts: some weights a token does not pass through (params.py's active count)."""
    return 0 < model.active_param_count < model.param_count


def experts_per_rank(num_experts: int, ep: int) -> int:
    """Experts on the fullest EP rank (determine_expert_map: num_experts // ep, the first num_experts % ep ranks
    one more)."""
    return _ceil_div(num_experts, ep)


def routed_bytes(model: ModelSpec, weights: Weights) -> int | None:
    """Bytes of the routed experts the engine loads: a tensor table's "experts" parts of the decoder layers (the MTP
    module's are left out, as the engine loads it only for MTP decoding), else for a record that holds the config
    estimate (weights.estimate.holds_config_estimate) the family table's routed parameters at the checkpoint's
    bytes per linear weight (the experts' own format where it stores them so: FP8's store_dtype); None where not
    known (a size given, a total kvplan does not match, a family without a per-module table)."""
    if weights.parts:
        return sum(n for role, layer, n in weights.parts if role == "experts" and 0 <= layer < model.num_layers)
    routed = model.weight_routed_params
    if routed is None or not holds_config_estimate(weights, model):
        return None
    if model.weight_expert_params:
        return model.weight_expert_bytes
    if " experts + " in model.weight_dtype:  # DeepSeek-V4's experts in their own dtype, not split out of the total
        return None
    return int(routed[1] * model.linear_weight_bytes)


def check_placement(model: ModelSpec, weights: Weights | None, dp: int, ep: bool, pp: int) -> None:
    """Refuse what vLLM refuses or kvplan does not model, one line each. pp > 1 is planned (capacity.experts_pp:
    vLLM 0.34 takes --data-parallel-size and --enable-expert-parallel with --pipeline-parallel-size)."""
    if ep and not is_moe(model):
        raise UsageError(f"--ep: {model.name} has no routed experts",
                         "vLLM 0.34 refuses --enable-expert-parallel for a model without experts "
                         "(ModelConfig._verify_with_expert_parallelism); leave --ep out (--dp alone runs replicas)")
    if (dp > 1 or ep) and is_moe(model):
        if model.weight_routed_params is None:
            raise UsageError(f"--dp / --ep: kvplan cannot place the routed experts of {model.name}: it has no per-module "
                             f"count of model_type {model.model_type!r} that finds them", "leave --dp and --ep out")
        if weights is not None and routed_bytes(model, weights) is None:
            why = ("a size given" if weights.source == "given" else
                   f"the config estimate of model_type {model.model_type!r} does not split its routed experts' own "
                   "format out" if " experts + " in model.weight_dtype else
                   f"a {weights.source} total kvplan does not match to the config estimate")
            raise UsageError(f"--dp / --ep: the routed experts' share of the weights of {model.name} is not known "
                             f"({why})", "give the checkpoint's tensor table (--weights FOLDER or hf://REPO)"
                             + (" or leave --weights out" if weights.source == "given" else ""))


# vLLM 0.34 architectures whose shared experts are built whole on every TP rank under sequence-parallel MoE (the
# module docstring cites each class)
# (deepseek_v2.py's DeepseekForCausalLM, DeepseekV3ForCausalLM and mistral_large_3.py's MistralLarge3ForCausalLM
# subclass DeepseekV2ForCausalLM; kimi_k25.py builds a DeepseekV2ForCausalLM language model; models/deepseek_v32
# (CUDA) builds DeepseekV2MoE with is_sequence_parallel for DeepSeek-V3.2 and GLM-5's GlmMoeDsaForCausalLM)
SP_SHARED_WHOLE = frozenset({"DeepseekForCausalLM", "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM",
                             "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM", "MistralLarge3ForCausalLM",
                             "KimiK25ForConditionalGeneration", "Llama4ForCausalLM", "Llama4ForConditionalGeneration",
                             "Qwen3NextForCausalLM", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"})


# config/parallel.py use_sequence_parallel_moe's all2all backends (vLLM's --all2all-backend: engines/vllm_a2a.py); the
# others (flashinfer_nvlink_two_sided, moonep) keep the shared experts split over TP
SEQUENCE_PARALLEL_BACKENDS = frozenset({"allgather_reducescatter", "deepep_high_throughput", "deepep_low_latency",
                                        "deepep_v2", "flashinfer_nvlink_one_sided", "mori_high_throughput",
                                        "mori_low_latency", "mori", "nixl_ep"})


def sequence_parallel_moe(dp: int, ep: bool, tp: int) -> bool:
    """vLLM 0.34 config/parallel.py use_sequence_parallel_moe under its default all2all backend
    ("allgather_reducescatter", in the list): EP with tp > 1 and dp > 1."""
    return ep and tp > 1 and dp > 1


def shared_whole(model: ModelSpec, dp: int, ep: bool, tp: int) -> bool:
    """The shared experts are held whole on every TP rank (SP_SHARED_WHOLE under sequence-parallel MoE)."""
    return (sequence_parallel_moe(dp, ep, tp) and is_moe(model)
            and any(name in SP_SHARED_WHOLE for name in model.registry_names[:1]))


def shared_bytes(model: ModelSpec, weights: Weights) -> int | None:
    """Bytes of the shared experts (the family table's "shared experts" modules) at the checkpoint's bytes per
    linear weight, for a record that holds the config estimate; None where not known (a tensor table, whose parts
    do not tell shared experts from the dense MLPs; a size given; no per-module table)."""
    routed = model.weight_routed_params
    if routed is None or weights.parts or not holds_config_estimate(weights, model):
        return None
    return int(routed[4] * model.linear_weight_bytes)


def shared_extra(model: ModelSpec, weights: Weights, tp: int, dp: int, ep: bool) -> int:
    """Bytes one GPU holds more than the TP split counts (stage_weight_bytes divides the shared experts over the
    TP ranks) where vLLM builds them whole on every TP rank (shared_whole); 0 elsewhere or where not known."""
    if not shared_whole(model, dp, ep, tp):
        return 0
    total = shared_bytes(model, weights)
    return 0 if total is None else total - _ceil_div(total, tp)


def replicated_shared_extra(model: ModelSpec, weights: Weights, split_gpus: int) -> int:
    """Bytes one GPU holds more than kvplan's split of the shared experts over `split_gpus` GPUs where the engine
    builds them whole on every GPU (SGLang's all-to-all backends: engines/sglang_a2a.py replicates_shared); 0 for a
    model without them or where their bytes are not known (shared_bytes)."""
    counts = model.weight_routed_params
    if not is_moe(model) or counts is None or not counts[4]:
        return 0
    total = shared_bytes(model, weights)
    return 0 if total is None else total - _ceil_div(total, split_gpus)


def routed_saving(model: ModelSpec, weights: Weights, tp: int, dp: int, ep: bool,
                  vllm_sequence_parallel: bool = True, redundant: int = 0) -> int:
    """Bytes one GPU holds less than the (tp, pp = 1) split gives it (capacity.weights.stage_weight_bytes divides
    the routed and shared experts over the TP ranks): the routed experts over dp x tp GPUs (1 / (dp x tp) of each
    without EP, ceil(experts / EP) whole experts with it), less the shared experts' bytes a sequence-parallel MoE
    holds whole on every TP rank (shared_extra: vLLM's; SGLang's attention DP splits them over all GPUs instead,
    full_tp_saving, so its callers pass vllm_sequence_parallel False); 0 for a dense model or without DP or EP.
    redundant: EPLB's redundant experts (with ep), whole copies of logical experts: the EP ranks hold experts +
    redundant physical experts, each the bytes of one logical expert (capacity/eplb.py)."""
    ranks = dp * tp
    if not is_moe(model) or ranks == 1 or (dp == 1 and not ep):
        return 0
    total = routed_bytes(model, weights)
    if total is None:  # check_placement refuses it first
        return 0
    if ep:
        experts = model.weight_routed_params[0]
        held = _ceil_div(total * experts_per_rank(experts + redundant, ranks), experts)
    else:
        held = _ceil_div(total, ranks)
    extra = shared_extra(model, weights, tp, dp, ep) if vllm_sequence_parallel else 0
    return _ceil_div(total, tp) - held - extra


def placement_note(model: ModelSpec, dp: int, ep: bool, tp: int, weights: Weights | None = None,
                   redundant: int | None = None, a2a: str | None = None, redundant_default: bool = False) -> str | None:
    """The line a data / expert parallel plan of a MoE model prints: what it leaves out (a2a: vLLM's all2all
    backend, placement_saving's; redundant_default: R is vLLM's default, --redundant-experts auto)."""
    if not is_moe(model) or (dp == 1 and not ep):
        return None
    from .eplb import eplb_text

    line = ("routed experts " + (f"split by expert over EP {dp * tp} GPUs" if ep else f"split over dp x tp = {dp * tp} GPUs")
            + " (vLLM 0.34 FusedMoEParallelConfig.make)" + eplb_text(model, dp * tp, redundant, "vllm", redundant_default)
            + "; not counted here: the all-to-all backend's buffers (vLLM's profile counts them: --all2all-backend) and the "
              "DP / EP groups' NCCL memory")
    if (shared_whole(model, dp, ep, tp) and model.weight_routed_params[4]
            and (a2a is None or a2a in SEQUENCE_PARALLEL_BACKENDS)):
        line += ("; sequence-parallel MoE (EP with dp > 1 and tp > 1: vLLM 0.34 config/parallel.py "
                 f"use_sequence_parallel_moe, all2all backend {a2a or 'allgather_reducescatter'}): the shared experts whole on every TP rank "
                 "(disable_tp)" + ("" if weights is None or shared_bytes(model, weights) is not None else
                                   ", not counted: their share of a tensor table is not known, kvplan splits them "
                                   "over the TP ranks"))
    return line


def full_tp_bytes(model, weights) -> int | None:
    """Bytes of the dense MLPs, shared experts and LM head: a tensor table's "mlp" and "lm_head" parts (roles.py files
    shared experts under "mlp"), else for a record that holds the config estimate the family table's counts at the
    checkpoint's bytes per linear weight (the head in its float dtype); None where not known."""
    if weights.parts:
        return sum(n for role, layer, n in weights.parts
                   if (role == "mlp" and 0 <= layer < model.num_layers) or role == "lm_head")
    counts = _estimate_counts(model, weights)
    return None if counts is None else int(counts[2] * model.linear_weight_bytes) + head_bytes(model, weights)


def head_bytes(model, weights) -> int | None:
    """Bytes of the LM head (full_tp_bytes' part): 0 for a tied head (the per-module count has none); None where
    not known."""
    if weights.parts:
        return sum(n for role, _, n in weights.parts if role == "lm_head")
    counts = _estimate_counts(model, weights)
    if counts is None:
        return None
    from ..weights.estimate import FLOAT_BYTES

    return counts[3] * FLOAT_BYTES.get(model.float_dtype, 2)


def dense_mlp_bytes(model, weights) -> int | None:
    """Bytes of a MoE model's dense MLP layers (full_tp_bytes' part less the shared experts): a tensor table's "mlp"
    parts of the layers without "experts" parts, else the family table's dense MLP and shared-expert parameters
    less the shared experts', at the bytes per linear weight; None where not known."""
    if weights.parts:
        moe = {layer for role, layer, _ in weights.parts if role == "experts"}
        return sum(n for role, layer, n in weights.parts
                   if role == "mlp" and 0 <= layer < model.num_layers and layer not in moe)
    counts = _estimate_counts(model, weights)
    return None if counts is None or len(counts) < 5 else int((counts[2] - counts[4]) * model.linear_weight_bytes)


def _estimate_counts(model, weights) -> tuple[int, ...] | None:
    counts = model.weight_routed_params
    if counts is None or len(counts) < 4 or not holds_config_estimate(weights, model):
        return None
    return counts


def full_tp_saving(model, weights, dep) -> int:
    """Bytes one GPU holds less than kvplan's split over a DP rank's attn_tp GPUs gives it: the dense MLPs, shared
    experts and LM head over all dp x tp GPUs instead (Deployment.dense_over_all: SGLang 0.5.23's attention DP,
    engines/sglang_dp.py)."""
    return 0 if weights is None else _full_tp_less(model, weights, dep.tp, dep.dp)


def _full_tp_less(model: ModelSpec, weights: Weights, tp: int, dp: int, kept: int = 0) -> int:
    """full_tp_saving of full_tp_bytes less `kept`, the bytes an SGLang flag builds on another group
    (Placement.moved: engines/sglang_groups.py moved)."""
    total = full_tp_bytes(model, weights) if dp > 1 else None
    return 0 if total is None else _ceil_div(total - kept, tp) - _ceil_div(total - kept, tp * dp)


def placement_saving(model: ModelSpec, weights: Weights, tp: int, dp: int, ep: bool,
                     dense_over_all: bool = False, redundant: int | None = None, a2a: str | None = None,
                     replicated_shared: bool = False, placement: Placement = VLLM_SPLIT) -> int:
    """Bytes one GPU holds less than the (tp, pp) split gives it under data / expert parallelism: the routed experts
    over dp x tp GPUs (routed_saving: vLLM's placement, its sequence-parallel shared experts included), or under
    SGLang's attention DP (dense_over_all) the routed experts and, over all dp x tp GPUs, the dense MLPs, shared
    experts and LM head (full_tp_saving), and the vision tower as the engine places it (placement.dp_tower_saving:
    engines/sglang_placement.py, SGLang's engines/sglang_dp_vision.py tower_saving). 0 without DP or EP.
    redundant: EPLB's redundant experts (None: no EPLB), held as more whole experts a rank (routed_saving). a2a:
    vLLM's all2all backend (None: its default); one outside SEQUENCE_PARALLEL_BACKENDS runs no sequence-parallel MoE,
    so the shared experts stay split over TP.
    replicated_shared: SGLang's --moe-a2a-backend builds the shared experts whole on every GPU
    (Deployment.replicated_shared; engines/sglang_a2a.py): what they weigh more than the split counted here.
    placement: the engine's (Deployment.placement, capacity/placement.py; the default moves nothing): under SGLang
    its --enable-dp-lm-head / --moe-dense-tp-size (engines/sglang_placement.py -> engines/sglang_groups.py moved): the
    LM head kept on the attention TP group, the dense MLPs whole on every GPU, with or without DP."""
    kept, whole = placement.moved(model, weights, tp, dp)
    if dp <= 1 and not ep:
        return -whole
    sequence_parallel = (not dense_over_all and not replicated_shared
                         and (a2a is None or a2a in SEQUENCE_PARALLEL_BACKENDS))
    saving = routed_saving(model, weights, tp, dp, ep, vllm_sequence_parallel=sequence_parallel,
                           redundant=redundant or 0)
    if replicated_shared:  # split over the dp x tp GPUs under attention DP (_full_tp_less), else over tp
        saving -= replicated_shared_extra(model, weights, tp * dp if dense_over_all else tp)
    if not dense_over_all:
        return saving - whole
    tower = placement.dp_tower_saving(model, weights, tp, dp)  # the vision tower as SGLang places it
    return saving - whole + _full_tp_less(model, weights, tp, dp, kept) + tower
