"""The text model's widths SGLang 0.5.23 cannot split at a TP size: the MLPs, the routed and shared experts and the
FP8 blocks, refused in one line (`kvplan estimate --engine sglang`: sglang_report.refuse_unread; `kvplan fit`:
fit/screen.py screen, per card). The vision towers' widths are engines/sglang_vision_refusal.py's; vLLM's text
widths engines/vllm_widths.py's. Read in the sglang 0.5.23 wheel (python/sglang/srt/...):

- The groups (engines/sglang_dp.py): the MLPs (dense and shared experts) split over the whole --tp T (parallel_group
  "tp", layers/linear.py _resolve_linear_group), with attention DP too; the dense MLPs of the
  sglang_groups.DENSE_FULLY_DP families whole under --moe-dense-tp-size 1 (parallel_group "replicated", a group of
  one), the shared experts whole under an all-to-all backend that replicates them (Deployment.replicated_shared:
  sglang_a2a). The routed experts split over moe_tp = T / ep_size (runtime_context.derive_parallel_widths): T
  without --ep-size, 1 with kvplan's --ep (--ep-size T; the a2a backends set it: sglang_a2a.EP_SPANNING).
- Any width: layers/linear.py MergedColumnParallelLinear.__init__ asserts every output size % tp_size == 0 (a bare
  AssertionError) for gate_up_proj of [width] x 2; layers/moe/fused_moe_triton/layer.py FusedMoE.__init__ asserts
  intermediate_size % moe_tp_size == 0 for the routed experts.
- FP8 block quantization (a checkpoint Fp8Config serves with weight_block_size [block_n, block_k]): the linears'
  Fp8LinearMethod.create_weights calls layers/quantization/fp8.py Fp8LinearMethod.validate_block_quant_shapes: a
  merged layer (several output partitions: gate_up_proj) needs each partition, width / T, a multiple of block_n,
  even at TP 1 ("Weight output_partition_size = N is not divisible by weight quantization block_n = K."); a
  row-parallel down_proj its input per rank a multiple of block_k at T > 1 ("Weight input_size_per_partition =
  ..."). Unlike vLLM 0.34 (no refinement of the blocks) the experts: Fp8MoEMethod.create_fp8_moe_weight_ needs
  the intermediate per rank a multiple of block_n ("The output_size of gate's and up's weight = N is not divisible
  by weight quantization block_n = K.") and, at moe_tp > 1, of block_k ("The input_size of down's weight = ...");
  only ROCm's aiter path skips it. FusedMoE.__init__ rounds the intermediate per rank up to 128 first under the
  flashinfer_trtllm runner, which 0.5.23 picks by default (--moe-runner-backend auto, --moe-a2a-backend none) on an
  SM 10.x card for an fp8 checkpoint of the _SM100_TRTLLM architectures (arg_groups/overrides.py
  _deepseek_moe_quant_resolution, model_overrides/qwen3_moe.py _qwen3_moe_family_overrides; is_sm100: CUDA major
  10, utils/common.py): there the experts' blocks are not refused. Not checked: the attention's linears (whose heads
  fit/grid.py split_reason checks), modules an Fp8Config leaves unquantized (ignored_layers), a --moe-runner-backend other than auto (kvplan has no flag for it). The FP8 rules are applied to
  0.5.23 plans (rules.release), the asserts to every release.
- GPTQ / AWQ (Marlin or not), compressed-tensors WNA16, FP8 on Marlin below SM 8.9 and ModelOpt NVFP4: the MLPs'
  linears a rank, engines/sglang_widths_quant.py (its module doc), on a known card (Split.capability), 0.5.23; the
  routed experts under GPTQ / AWQ / compressed-tensors WNA16, engines/sglang_widths_moe.py; NVFP4 routed experts
  (ModelOpt, compressed-tensors), engines/sglang_nvfp4_moe.py, after the others.

The model files read, by family (_FAMILIES; the first failing module in build order is named: a layer's MLP
after its attention, FusedMoE before the shared experts in each MoE block, layer 0 first). Qwen3-Next and
Qwen3.5-MoE build qwen2_moe.py Qwen2MoeSparseMoeBlock, whose shared_expert is a Qwen2MoeMLP over the whole --tp
(replicated under the a2a backends); qwen3_next.py asks for the CUDA fusion (enable_cuda_shared_expert_fusion),
which can_fuse_shared_expert allows where the shared width equals moe_intermediate_size: the shared expert is then
an extra routed expert of that width, checked with them (fused_if_routed_width). qwen3_5.py does not ask on CUDA.
Not read: uses_per_rank_fused_shared_slots (unfusing at moe_ep_size > 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from .fp8_blocks import config_int, fp8_block, moe_block_error
from .vision_heads import undivides

READ_IN = "0.5.23"
HINT = ("choose a --tp that gives each rank a whole share of the width the line names (FP8 blocks: a multiple of the "
        "block)")


@dataclass(frozen=True)
class _Family:
    dense: str | None = None  # the class of the dense MLP (gate_up_proj / down_proj of config.intermediate_size)
    dense_first: bool = False  # only below first_k_dense_replace (the MoE models' first layers)
    shared: str | None = None  # the class of the shared experts' MLP
    shared_width: tuple[str, ...] = ()  # its width: the first field, times the second where given
    fused_if_routed_width: bool = False  # no shared MLP where its width is the routed experts' (fused: module doc)


_DSV2_MLP = "deepseek_v2.py DeepseekV2MLP"
_DSV2 = _Family(_DSV2_MLP, True, _DSV2_MLP + " (DeepseekV2MoE.shared_experts)", ("moe_intermediate_size",
                                                                                 "n_shared_experts"))
_QWEN2 = _Family("qwen2.py Qwen2MLP")
_QWEN2_MOE = _Family(shared="qwen2_moe.py Qwen2MoeMLP (Qwen2MoeSparseMoeBlock.shared_expert)",
                     shared_width=("shared_expert_intermediate_size",))
# config model_type -> the SGLang 0.5.23 classes building its MLPs (module doc); the routed experts of every MoE model
# are FusedMoE's (moe_intermediate_size, else intermediate_size: vllm_moe_workspace.moe_shape)
_FAMILIES: dict[str, _Family] = {
    "llama": _Family("llama.py LlamaMLP"), "mistral": _Family("mistral.py MistralForCausalLM's llama.py LlamaMLP"),
    "phi3": _Family("llama.py LlamaMLP (Phi3ForCausalLM)"), "glm4": _Family("glm4.py Glm4MLP"),
    "qwen2": _QWEN2, "qwen3": _Family("qwen3.py Qwen3MLP (qwen2.py Qwen2MLP)"),
    "qwen2_vl": _Family("qwen2_vl.py's qwen2.py Qwen2MLP"), "qwen2_5_vl": _Family("qwen2_5_vl.py's qwen2.py Qwen2MLP"),
    "gemma2": _Family("gemma2.py Gemma2MLP"), "gemma3_text": _Family("gemma3_causal.py Gemma3MLP"),
    "gemma3": _Family("gemma3_mm.py's gemma3_causal.py Gemma3MLP"),
    "deepseek_v2": _DSV2, "deepseek_v3": _DSV2,
    "glm4_moe": _Family("glm4_moe.py Glm4MoeMLP", True, "glm4_moe.py Glm4MoeMLP (Glm4MoeSparseMoeBlock.shared_experts)",
                        ("moe_intermediate_size", "n_shared_experts")),
    "qwen2_moe": _QWEN2_MOE,
    "qwen3_next": _Family(shared=_QWEN2_MOE.shared + " in qwen3_next.py", shared_width=_QWEN2_MOE.shared_width,
                          fused_if_routed_width=True),
    "qwen3_5_moe": _Family(shared=_QWEN2_MOE.shared + " in qwen3_5.py", shared_width=_QWEN2_MOE.shared_width),
    # Step3p5DecoderLayer: the dense layers' Step3p5MLP (layers 0-2 of the released configs), a sparse layer's
    # Step3p5MoEMLP (FusedMoE) then its share_expert, a Step3p5MLP of share_expert_dim
    "step3p5": _Family("step3p5.py Step3p5MLP", shared="step3p5.py Step3p5MLP (Step3p5DecoderLayer.share_expert)",
                       shared_width=("share_expert_dim",)),
}
# the architectures whose fp8 checkpoint 0.5.23 runs on the flashinfer_trtllm MoE runner by default on SM 10.x
# (module doc): overrides.py _DEEPSEEK_FAMILY_ARCHS less LongCat (excluded there), qwen3_moe.py's _register_for list
_SM100_TRTLLM = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration", "MistralLarge3ForCausalLM",
    "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM", "Glm5NextForConditionalGeneration", "HYV4ForCausalLM",
    "Dots3NoteForCausalLM", "Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
    "Qwen4ExpForConditionalGeneration"})
TRTLLM_ALIGN = 128  # FusedMoE.__init__: round_up(intermediate_size_per_partition, 128) under flashinfer_trtllm


@dataclass(frozen=True)
class Split:
    """An SGLang launch as kvplan plans it: --tp (all T GPUs: kvplan's tp x dp), --dp (attention DP), --ep
    (--ep-size T), the shared experts replicated (an a2a backend), the dense MLPs whole (--moe-dense-tp-size 1),
    whether the card is SM 10.x and the MoE a2a backend is none (flashinfer_trtllm's default)."""
    gpus: int
    dp: int = 1
    ep: bool = False
    replicated_shared: bool = False
    dense_whole: bool = False
    sm100_trtllm: bool = False
    capability: tuple[int, int] | None = None  # the card's CUDA capability (sglang_widths_quant's kernels), if known

    def flags(self) -> str:
        return f"--tp {self.gpus}" + (f" --dp {self.dp}" if self.dp > 1 else "") + (
            f" --ep-size {self.gpus}" if self.ep else "")


def _mlp(width: int | None, group: int, cls: str, what: str, block, quant=None) -> str | None:
    """Why SGLang fails to build an MLP (MergedColumnParallelLinear gate_up_proj + RowParallelLinear down_proj) of
    `width` over a group of `group` GPUs; None where it builds it. quant: (sglang_widths_quant.Kernel, hidden size,
    the list the MLP's linears are added to, in build order, for the checks after loading)."""
    if width is None:
        return None
    if undivides(width, group):
        return (f"SGLang 0.5.23 splits the {what} of {width:,} over TP {group}, which does not divide it ({width:,} % "
                f"{group} = {width % group}: {cls}.gate_up_proj; layers/linear.py MergedColumnParallelLinear.__init__ "
                "asserts every output size % tp_size == 0)")
    if quant is not None:
        from .sglang_widths_quant import build_error, mlp_linears

        kern, hidden, built = quant
        linears = mlp_linears(cls, width, hidden, group)
        built.extend(linears)
        why = next(filter(None, (build_error(kern, lin) for lin in linears)), None)
        if why:
            return f"SGLang 0.5.23 splits the {what} of {width:,} over TP {group}: {why}"
    if block is None:
        return None
    per_rank, (block_n, block_k) = width // group, block
    where = f"{width:,} / {group}" if group > 1 else "whole: a merged layer is checked at TP 1 too"
    if per_rank % block_n:
        line = (f"'Weight output_partition_size = {per_rank} is not divisible by weight quantization block_n = "
                f"{block_n}.' ({cls}.gate_up_proj, {per_rank:,} a rank: {where}")
    elif group > 1 and per_rank % block_k:
        line = (f"'Weight input_size_per_partition = {per_rank} is not divisible by weight quantization block_k = "
                f"{block_k}.' ({cls}.down_proj, {per_rank:,} a rank: {where}")
    else:
        return None
    return (f"SGLang 0.5.23 splits the FP8 {block_n}x{block_k}-block {what} of {width:,}: {line}; "
            "layers/quantization/fp8.py Fp8LinearMethod.validate_block_quant_shapes)")


def _experts(width: int | None, split: Split, block, moe_quant=None, quant=None) -> str | None:
    """The routed experts' FusedMoE over moe_tp; moe_quant: their sglang_widths_moe.Scheme, whose build error is
    checked here and whose Experts join quant's built list for the checks after loading."""
    group = 1 if split.ep else split.gpus
    if width is None:
        return None
    if undivides(width, group):
        return (f"SGLang 0.5.23 splits each routed expert's intermediate size of {width:,} over MoE TP {group} "
                f"(no --ep-size), which does not divide it ({width:,} % {group} = {width % group}: "
                "layers/moe/fused_moe_triton/layer.py FusedMoE.__init__ asserts intermediate_size % moe_tp_size == 0; "
                "with --ep the experts are whole)")
    if moe_quant is not None and quant is not None:
        from .sglang_widths_moe import Experts, build_error

        experts = Experts("FusedMoE (the routed experts)", width, group, quant[1])
        quant[2].append(experts)
        why = build_error(moe_quant, experts)
        if why:
            return f"SGLang 0.5.23 splits the routed experts: {why}"
    if block is None:
        return None
    per_rank, (block_n, block_k) = width // group, block
    held = -(-per_rank // TRTLLM_ALIGN) * TRTLLM_ALIGN if split.sm100_trtllm else per_rank
    # create_fp8_moe_weight_ checks (and its ValueError names) the intermediate per rank FusedMoE hands it: the padded
    # one under flashinfer_trtllm (layer.py FusedMoE.__init__ rounds self.intermediate_size_per_partition up first)
    which = moe_block_error(held, block, group > 1)
    if which is None:
        return None
    over = f"{width:,} / {group}" if group > 1 else "whole"
    padded = (f", padded to {held:,} (flashinfer_trtllm: layers/moe/fused_moe_triton/layer.py FusedMoE.__init__)"
              if held != per_rank else "")
    return (f"SGLang 0.5.23 splits the FP8 {block_n}x{block_k}-block routed experts' intermediate size of {width:,} "
            f"into {per_rank:,} a rank ({over}){padded}, with no block refinement: {which} "
            "(layers/quantization/fp8.py Fp8MoEMethod.create_fp8_moe_weight_)")


def _shared_width(raw: dict, family: _Family) -> int | None:
    if not family.shared_width:
        return None
    width = config_int(raw, family.shared_width[0])
    if width is not None and len(family.shared_width) > 1:
        times = config_int(raw, family.shared_width[1])
        width = width * times if times else None
    return width


def refusal(model, split: Split, release: str | None = None) -> str | None:
    """Why SGLang fails to build this text model at this launch (module doc): its first dense MLP, its routed
    experts, its shared experts, in build order; None where it builds them, or nothing is checked. The FP8 block
    rules are applied to 0.5.23 (release None: the newest) only."""
    from ..capacity.experts import is_moe
    from ..configs.quant_online import sglang_method_below_sm80
    from .vllm_load import raw_config
    from .vllm_moe_workspace import moe_shape
    from .vllm_rules import TP_REPLICATED

    raw = raw_config(model)
    if not raw or raw.get("model_type") in TP_REPLICATED:  # built whole on every rank (ZAYA1: zaya.py)
        return None
    # the checkpoint's fp8 method is read as SGLang names it (quant_online: ModelOpt by its algo, fp8 as fp8)
    block = fp8_block(model, raw, sglang_method_below_sm80) if (release or READ_IN).startswith(READ_IN) else None
    from ..configs.resolve_family import nested_text

    family = _FAMILIES.get(str(raw.get("model_type") or "")) or _FAMILIES.get(
        str(nested_text(raw).get("model_type") or "")) or _Family()
    has_dense = family.dense is not None and (not family.dense_first
                                              or (config_int(raw, "first_k_dense_replace") or 0) > 0)
    dense_group = 1 if split.dense_whole else split.gpus
    moe = is_moe(model)
    shape = moe_shape(raw) if moe else None
    expert_width = config_int(raw, "moe_intermediate_size") or (shape.intermediate if shape else None)
    shared_width = _shared_width(raw, family)
    if family.fused_if_routed_width and shared_width == expert_width:
        shared_width = None  # fused into the routed experts on CUDA (qwen2_moe.py can_fuse_shared_expert)
    from .sglang_widths_quant import kernel

    kern = kernel(model, raw, split.capability) if (release or READ_IN).startswith(READ_IN) else None
    built: list = []
    quant = (kern, config_int(raw, "hidden_size") or 0, built) if kern else None
    from .sglang_widths_moe import scheme as moe_scheme

    moe_quant = moe_scheme(kern, raw, split.capability) if moe and expert_width else None
    why = ((_mlp(config_int(raw, "intermediate_size"), dense_group, family.dense, "dense MLP intermediate_size", block,
                 quant) if has_dense else None)
           or (_experts(expert_width, split, block, moe_quant, quant) if moe else None)
           or (_mlp(shared_width, 1 if split.replicated_shared else split.gpus, family.shared,
                    "shared experts' intermediate size", block, quant) if moe and family.shared else None))
    if not why and kern:  # built: the repack after loading, then the first forward (sglang_widths_quant, _moe)
        from .sglang_sm7 import served_dtype
        from .sglang_widths_moe import late_refusal

        late = late_refusal(kern, moe_quant, built, served_dtype(model))
        why = f"SGLang 0.5.23 builds the MLPs but fails before it serves: {late}" if late else None
    if not why and moe and expert_width and (release or READ_IN).startswith(READ_IN):
        from .nvfp4_experts import sglang_activation
        from .sglang_nvfp4_moe import refusal as nvfp4_refusal, scheme as nvfp4_scheme

        # the NVFP4 routed experts, by card: at load or the first forward (engines/sglang_nvfp4_moe.py)
        late = nvfp4_refusal(nvfp4_scheme(model, raw), expert_width, 1 if split.ep else split.gpus,
                             config_int(raw, "hidden_size") or 0, split.capability, sglang_activation(raw))
        why = f"SGLang 0.5.23 builds the MLPs but fails before it serves: {late}" if late else None
    return f"{split.flags()} with --engine sglang: {why}" if why else None


def split_of(model, tp: int, dp: int = 1, ep: bool = False, gpu=None, a2a: str | None = None,
             replicated_shared: bool = False, groups=None) -> Split:
    """The Split of kvplan's tp x dp GPUs (--ep, the card `gpu`, the a2a backend, replicated shared experts,
    engines/sglang_groups.py's flags), as a Deployment or fit's candidate gives them."""
    from ..capacity.gpus import CUDA_CAPABILITY
    from .sglang_groups import dense_whole

    capability = CUDA_CAPABILITY.get(gpu.name) if gpu is not None else None
    return Split(tp * dp, dp, ep, replicated_shared, dense_whole(model, groups),
                 (capability or (0, 0))[0] == 10 and a2a in (None, "none")
                 and (model.architecture or "") in _SM100_TRTLLM, capability)


def _scale_note(model, split: Split, release: str | None) -> str | None:
    """sglang_widths_moe.tp_scale_note for this launch's routed experts (0.5.23 only)."""
    from ..capacity.experts import is_moe
    from .sglang_widths_moe import scheme, tp_scale_note
    from .sglang_widths_quant import kernel
    from .vllm_load import raw_config

    raw = raw_config(model)
    if split.ep or split.gpus == 1 or not raw or not (release or READ_IN).startswith(READ_IN) or not is_moe(model):
        return None
    return tp_scale_note(scheme(kernel(model, raw, split.capability), raw, split.capability), split.gpus)


def check(model, dep, release: str | None = None, notes: list[str] | None = None) -> None:
    """Raise the refusal line where SGLang fails to build the text model at this deployment (dep None: TP 1); add to
    `notes` what starts but is known to compute wrong (sglang_widths_moe.tp_scale_note)."""
    from ..errors import UsageError

    split = (split_of(model, dep.tp, dep.dp, bool(dep.ep), dep.gpu, dep.a2a, dep.replicated_shared, dep.sglang_groups)
             if dep is not None else Split(1))
    why = refusal(model, split, release)
    if why and "whatever the widths" in why:  # no split helps (sglang_nvfp4_moe: Marlin's gated SiLU / SiTU only)
        raise UsageError(why, "no --tp helps on this card: choose a card SGLang serves these experts on (--gpu)")
    if why:
        raise UsageError(why, HINT + (", or add --ep for the experts" if "routed expert" in why and not split.ep
                                      else ""))
    note = _scale_note(model, split, release) if notes is not None else None
    if note:
        notes.append(note)


__all__ = ["Split", "check", "refusal", "split_of"]
