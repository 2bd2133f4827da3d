"""The text model's widths vLLM 0.34 cannot split at a TP size: the MLP, the routed experts and the FP8 blocks,
refused in one line (`kvplan estimate --engine vllm`: engines/vllm.py simulate; `kvplan fit`: fit/screen.py screen).
The vision towers' widths are engines/vllm_vision_refusal.py's; the attention heads fit/grid.py split_reason's. Read in
the vllm 0.34.0 wheel (vllm/model_executor/...):

- Dense MLP (_DENSE, by the config's model_type): llama.py LlamaMLP (which mistral.py's MistralMLP copies, phi3.py's
  Phi3ForCausalLM and glm4.py's Glm4MLP reuse), qwen2.py Qwen2MLP (qwen3.py Qwen3MLP; qwen2_vl.py / qwen2_5_vl.py
  build their text model as Qwen2ForCausalLM), gemma2.py Gemma2MLP, gemma3.py Gemma3MLP build gate_up_proj as a
  MergedColumnParallelLinear of [intermediate_size] x 2 and down_proj as a RowParallelLinear of intermediate_size
  (config.intermediate_size). layers/linear.py MergedColumnParallelLinear.__init__ asserts every output size %
  tp_size == 0 (a bare AssertionError) before ColumnParallelLinear divides it (distributed/utils.py divide); the
  dense layers of DeepSeek-V2/V3 and GLM-4.5 (deepseek_v2.py DeepseekV2MLP, glm4_moe.py Glm4MoeMLP below
  first_k_dense_replace) the same, and they come before any MoE layer.
- Routed experts: fused_moe/config.py FusedMoEConfig.__post_init__ asserts intermediate_size % tp_size == 0, where
  tp_size is FusedMoEParallelConfig.make's: the --tp flattened over --data-parallel-size
  (flatten_tp_across_dp_and_pcp) without --enable-expert-parallel, 1 with it ("each device owns a set of experts
  fully"): under EP the experts are whole, no split. The expert width is moe_intermediate_size, else
  intermediate_size (Mixtral), as engines/vllm_moe_workspace.py moe_shape reads it.
- Shared experts (_SHARED): a dense MLP (MergedColumnParallelLinear gate_up_proj, RowParallelLinear down_proj) over
  the TP group, built before the layer's FusedMoE: deepseek_v2.py DeepseekV2MoE.shared_experts and glm4_moe.py
  Glm4MoE.shared_experts of moe_intermediate_size x n_shared_experts, qwen2_moe.py / qwen3_moe.py /
  qwen3_next.py shared_expert of shared_expert_intermediate_size, step3p5.py FusedMoEBlock.share_expert of
  share_expert_dim. DeepseekV2MLP and qwen3_next.py's get disable_tp=is_sequence_parallel (config/parallel.py
  use_sequence_parallel_moe): whole under --ep with tp > 1 and dp > 1 (capacity/experts.py shared_whole) under
  an --all2all-backend of SEQUENCE_PARALLEL_BACKENDS (vLLM's default among them); another keeps them split;
  the others always split. Not modelled: AITER's fused shared experts (ROCm: fused_moe/utils.py
  resolve_layer_fused_shared_expert), Qwen3-Next's replicated misaligned Quark OCP MX shared expert.
- FP8 block quantization (a checkpoint served by fp8.py Fp8Config with weight_block_size [block_n, block_k]):
  Fp8LinearMethod.create_weights calls quantization/utils/fp8_utils.py validate_fp8_block_shape. A row-parallel
  down_proj whose input per rank is not a multiple of block_k fails ("Weight input_size_per_partition = N is not
  divisible by weight quantization block_k = K."); the merged gate_up_proj does not (linear.py
  ColumnParallelLinear._maybe_allow_fp8_block_shape_mismatch skips the check for a layer with several output
  partitions any of which block_n does not divide). The experts: Fp8MoEMethod.__init__ asks fused_moe/oracle/fp8.py
  resolve_fp8_moe_weight_block_shape, which under the default --moe-backend auto (config/kernel.py) refines the
  blocks (refine_fp8_moe_block_shape: gcd(block_n, block_k, intermediate per rank, hidden_size), kept where >= 32:
  Triton kernels take it) where the intermediate per rank is not a multiple of the blocks; where no refinement is
  possible Fp8MoEMethod.create_weights calls validate_fp8_block_shape_moe, which fails ("The output_size of gate's
  and up's weight = N is not divisible by weight quantization block_n = 128.", then down's against block_k when
  tp_size > 1). Padding the shard to whole blocks (pad_tp_shard_to_weight_blocks) runs only under an explicit
  --moe-backend: not modelled. Read in 0.34 only: applied to 0.34 plans; not to a config with ignored_layers /
  modules_to_not_convert (Fp8Config.get_quant_method serves those modules unquantized) or store_dtype (other experts).
- compressed-tensors block FP8, ModelOpt's per-rank alignment and the GPTQ / AWQ / compressed-tensors WNA16 routed
  experts (Marlin MoE, else the MoeWNA16Method fallback): engines/vllm_widths_quant.py (its module doc), 0.34 only.
- NVFP4 routed experts (ModelOpt, compressed-tensors), whose backend, and so whose width rule, depends on the card:
  engines/vllm_nvfp4_moe.py, on the card of `capability` (refusal, check; card_refusal alone for `kvplan fit`).

Not refused, and why: GPTQ / AWQ (auto_gptq.py AutoGPTQLinearMethod, auto_awq.py AutoAWQMarlinLinearMethod) choose a
kernel in kernels/linear/__init__.py choose_mp_linear_kernel: Marlin refuses an input per rank that its group size
does not divide (mixed_precision/marlin.py can_implement), but the list ends in mixed_precision/humming.py
HummingLinearKernel, whose can_implement accepts any 16-bit-activation layer on CUDA SM 7.5+ (humming-kernels is a
dependency of the 0.34 wheel, METADATA) and pads K to 128 (quantization/utils/humming/linear.py): the older
releases' "input size is not aligned with the quantized weight shape" (gptq.py) and Marlin's "min_thread_k" refusals
are gone from 0.34, and whether a group straddling two ranks then loads right is in humming-kernels, not in the wheel.
The FP8 Marlin fallback below SM 8.9 falls through the same way (_POSSIBLE_FP8_BLOCK_KERNELS: Humming, Triton after
Marlin). MXFP4 (gpt-oss: mxfp4.py GptOssMxfp4MoEMethod / Mxfp4MoEMethod.maybe_roundup_sizes, fused_moe/oracle/
mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size) rounds the experts' width a rank up; its linear layers
are unquantized. compressed-tensors NVFP4 linears (compressed_tensors_w4a4_nvfp4.py create_weights) check no
alignment (its experts: engines/vllm_nvfp4_moe.py).

Not checked: compressed-tensors' other schemes, online --quantization, the attention projections' FP8 blocks.
Families not in _DENSE: OLMo 2, StarCoder2, StableLM have no 0.34 model file (Transformers backend, not read);
falcon.py FalconMLP (4 x hidden) and the ColumnParallelLinear up_proj of apertus.py / nemotron.py are not listed.
SGLang has its own rules (not read here): this applies under --engine vllm only.
"""

from __future__ import annotations

from .fp8_blocks import config_int as _int, fp8_block, moe_block_error
from .vision_heads import undivides
from .vllm_nvfp4_moe import refusal as _card
from .vllm_widths_quant import (CT_SITE, ModelOpt as _ModelOpt, ct_block as _ct_block, ct_experts as _ct_experts,
                                mixed_expert_block, modelopt as _modelopt, modelopt_row as _modelopt_row, mxfp8_experts,
                                o_proj as _o_proj, wna16_experts)

# model_type -> vLLM 0.34's module of the dense MLP (gate_up_proj MergedColumnParallelLinear, down_proj
# RowParallelLinear) of config.intermediate_size, every layer
_DENSE = {
    "llama": "llama.py LlamaMLP", "mistral": "mistral.py MistralMLP", "phi3": "phi3.py's llama.py LlamaMLP",
    "glm4": "glm4.py Glm4MLP (llama.py LlamaMLP)", "qwen2": "qwen2.py Qwen2MLP", "qwen3": "qwen3.py Qwen3MLP (Qwen2MLP)",
    "qwen2_vl": "qwen2_vl.py's qwen2.py Qwen2MLP", "qwen2_5_vl": "qwen2_5_vl.py's qwen2.py Qwen2MLP",
    "gemma2": "gemma2.py Gemma2MLP", "gemma3_text": "gemma3.py Gemma3MLP", "gemma3": "gemma3_mm.py's gemma3.py Gemma3MLP",
    "mistral3": "mistral3.py's text_config model (mistral.py MistralMLP)", "ministral3": "mistral.py MistralMLP",
    "exaone": "exaone.py ExaoneGatedMLP", "exaone4": "exaone4.py Exaone4GatedMLP", "granite": "granite.py GraniteMLP",
    "cohere": "commandr.py CohereMLP", "cohere2": "commandr.py CohereMLP", "internlm2": "internlm2.py InternLM2MLP",
    "internlm3": "llama.py LlamaMLP (InternLM3ForCausalLM)", "ernie4_5": "ernie45.py's llama.py LlamaMLP",
    "solar": "solar.py SolarMLP", "orion": "orion.py OrionMLP",
}
# MoE model_type -> the module of its dense layers (those below first_k_dense_replace), built before the MoE layers
_DENSE_FIRST = {"deepseek_v2": "deepseek_v2.py DeepseekV2MLP", "deepseek_v3": "deepseek_v2.py DeepseekV2MLP",
                "glm4_moe": "glm4_moe.py Glm4MoeMLP", "deepseek": "deepseek_v2.py DeepseekV2MLP"}
# MoE model_type -> (the module of its shared experts, a MergedColumnParallelLinear gate_up_proj and RowParallelLinear
# down_proj over the TP group, and the config field of their width; "n_shared_experts": moe_intermediate_size x
# n_shared_experts, one merged MLP). AITER's fused shared experts (ROCm) are not modelled.
_SHARED = {
    "deepseek_v2": ("deepseek_v2.py DeepseekV2MoE.shared_experts (DeepseekV2MLP)", "n_shared_experts"),
    "deepseek_v3": ("deepseek_v2.py DeepseekV2MoE.shared_experts (DeepseekV2MLP)", "n_shared_experts"),
    "deepseek": ("deepseek_v2.py DeepseekV2MoE.shared_experts (DeepseekV2MLP)", "n_shared_experts"),
    "glm4_moe": ("glm4_moe.py Glm4MoE.shared_experts (Glm4MoeMLP)", "n_shared_experts"),
    "qwen2_moe": ("qwen2_moe.py Qwen2MoeSparseMoeBlock.shared_expert (Qwen2MoeMLP)", "shared_expert_intermediate_size"),
    "qwen3_moe": ("qwen3_moe.py Qwen3MoeSparseMoeBlock.shared_expert (Qwen3MoeMLP)", "shared_expert_intermediate_size"),
    "qwen3_next": ("qwen3_next.py Qwen3NextSparseMoeBlock.shared_expert (Qwen2MoeMLP)",
                   "shared_expert_intermediate_size"),
    "step3p5": ("step3p5.py FusedMoEBlock.share_expert (Step3p5MLP)", "share_expert_dim"),
}
# where each block check is made: the FP8 method's (compressed-tensors': vllm_widths_quant.CT_SITE)
_FP8_SITE = "fp8.py Fp8LinearMethod.create_weights"
READ_IN = "0.34"
CARD_HINT = ("choose a --tp that leaves each rank a multiple of 64 of the experts' width, add --ep (the experts whole), "
             "or plan a card whose backend pads them (SM 10.x; SM 7.5 - 9.0)")
HINT = "choose a --tp that gives each rank a whole share of the width the line names (FP8 blocks: a multiple of the block)"


def _split_mlp(what: str, cls: str, width: int, tp: int, block, site: str, mo=None) -> str | None:
    """Why a MergedColumnParallelLinear gate_up_proj / RowParallelLinear down_proj pair of `width` fails at TP tp
    (module doc); site: the quantization method that validates the FP8 blocks (_FP8_SITE, CT_SITE); mo: a ModelOpt
    checkpoint's (_ModelOpt, the down_proj's module name under the layer, the layers that have it)."""
    if undivides(width, tp):
        return (f"vLLM 0.34 splits the {what} of {width:,} over TP {tp}, which does not divide it "
                f"({width:,} % {tp} = {width % tp}: {cls}.gate_up_proj; layers/linear.py "
                "MergedColumnParallelLinear.__init__ asserts every output size % tp_size == 0)")
    part = what.split(" intermediate")[0]
    if mo is not None:
        return _modelopt_row(mo[0], f"{part} down_proj", cls, width, tp, mo[1], mo[2])
    if block is None:
        return None
    per_rank = width // tp
    if site == CT_SITE and per_rank % block[0]:  # no weight_block_size on CompressedTensorsConfig: no allowance
        return (f"vLLM 0.34 splits the FP8 {block[0]}x{block[1]}-block {part} gate_up_proj ({cls}) into "
                f"{per_rank:,} outputs a rank ({width:,} / {tp}), not a multiple of block_n: 'Weight "
                f"output_partition_size = {per_rank} is not divisible by weight quantization block_n = {block[0]}.' "
                f"(quantization/utils/fp8_utils.py validate_fp8_block_shape, from {site}; linear.py "
                "_maybe_allow_fp8_block_shape_mismatch reads a weight_block_size compressed-tensors' config lacks)")
    if per_rank % block[1]:
        return (f"vLLM 0.34 splits the FP8 {block[0]}x{block[1]}-block {part} down_proj ({cls}) into {per_rank:,} "
                f"inputs a rank ({width:,} / {tp}), not a multiple of block_k: 'Weight input_size_per_partition = "
                f"{per_rank} is not divisible by weight quantization block_k = {block[1]}.' "
                f"(quantization/utils/fp8_utils.py validate_fp8_block_shape, from {site})")
    return None


def _dense(model_type: str, raw: dict, tp: int, block, site: str = _FP8_SITE,
           mo: _ModelOpt | None = None) -> str | None:
    first = _int(raw, "first_k_dense_replace") or 0
    cls = _DENSE.get(model_type) or (_DENSE_FIRST.get(model_type) if first > 0 else None)
    width = _int(raw, "intermediate_size") if cls else None
    rows = (mo, "mlp.down_proj", range(first if model_type in _DENSE_FIRST else mo.layers)) if mo else None
    return None if width is None else _split_mlp("MLP intermediate_size", cls, width, tp, block, site, rows)


def _shared(model, model_type: str, raw: dict, tp: int, dp: int, ep: bool, block, site: str,
            a2a: str | None = None, mo: _ModelOpt | None = None) -> str | None:
    """The shared experts (_SHARED), split over the TP group as a dense MLP; whole on every rank (disable_tp) under
    the sequence-parallel MoE of the classes that pass it (capacity/experts.py shared_whole), which the all2all
    backend `a2a` runs only where it is one of SEQUENCE_PARALLEL_BACKENDS (None: vLLM's default, which is)."""
    from ..capacity.experts import SEQUENCE_PARALLEL_BACKENDS, shared_whole

    cls, field = _SHARED.get(model_type, (None, None))
    if cls is None or (shared_whole(model, dp, ep, tp) and (a2a is None or a2a in SEQUENCE_PARALLEL_BACKENDS)):
        return None
    if field == "n_shared_experts":
        count, expert = _int(raw, "n_shared_experts"), _int(raw, "moe_intermediate_size")
        width = count * expert if count and expert else None
    else:
        width = _int(raw, field)
    # the module's name: the attribute _SHARED names (DeepseekV2MoE.shared_experts -> mlp.shared_experts.down_proj)
    rows = (mo, f"mlp.{cls.split('.')[2].split(' ')[0]}.down_proj", range(mo.layers)) if mo else None
    return None if width is None else _split_mlp("shared experts' intermediate size", cls, width, tp, block, site,
                                                 rows)


def _experts(model, raw: dict, split: int, tp: int, block, site: str = _FP8_SITE,
             mo: _ModelOpt | None = None, wna16: bool = False) -> str | None:
    from ..capacity.experts import is_moe
    from .vllm_moe_workspace import moe_shape

    shape = moe_shape(raw) if is_moe(model) else None
    if shape is None:
        return None
    width = shape.intermediate
    if undivides(width, split):
        over = f"TP {tp}" if split == tp else f"TP {tp} x DP {split // tp} (no --ep)"
        return (f"vLLM 0.34 splits each routed expert's intermediate size of {width:,} over {over}, which does not "
                f"divide it ({width:,} % {split} = {width % split}: fused_moe/config.py FusedMoEConfig.__post_init__ "
                "asserts intermediate_size % tp_size == 0; under --enable-expert-parallel the experts are whole)")
    why = mxfp8_experts(mo, width, split) or (wna16_experts(model, raw, width, split, shape.hidden)
                                              if wna16 and block is None and mo is None else None)
    if why:
        return why
    if block is None:
        return None
    import math

    per_rank, (block_n, block_k) = width // split, block
    if site == CT_SITE:  # compressed_tensors_moe_w8a8_fp8.py: validate_fp8_block_shape_moe, no refinement
        return _ct_experts(width, per_rank, split, tp, block)
    # validate_fp8_block_shape_moe checks block_k where the (attention) TP world size is above 1
    which = moe_block_error(per_rank, block, tp > 1)
    if which is None or math.gcd(block_n, block_k, per_rank, shape.hidden) >= 32:  # refine_fp8_moe_block_shape
        return None
    return (f"vLLM 0.34 splits the FP8 {block_n}x{block_k}-block experts' intermediate size of {width:,} into "
            f"{per_rank:,} a rank, which no block refinement fits (gcd({block_n}, {block_k}, {per_rank}, hidden "
            f"{shape.hidden}) = {math.gcd(block_n, block_k, per_rank, shape.hidden)} < 32: fused_moe/oracle/fp8.py "
            f"refine_fp8_moe_block_shape): {which} (fp8_utils.py validate_fp8_block_shape_moe, from fp8.py "
            "Fp8MoEMethod.create_weights)")


def refusal(model, tp: int, dp: int = 1, ep: bool = False, version: str | None = None,
            a2a: str | None = None, capability: tuple[int, int] | None = None) -> str | None:
    """Why vLLM fails to build this text model at --tp tp (--data-parallel-size dp, --enable-expert-parallel ep,
    --all2all-backend a2a): its dense MLP, its shared experts, then its routed experts (module doc), then, on a card
    of CUDA `capability` (None: unknown, the card's rules skipped), what its NVFP4 expert backend refuses
    (card_refusal); None where it builds them, or nothing is checked. The FP8 block rules are applied to vLLM 0.34
    (version None: the latest) only."""
    from .vllm_load import raw_config
    from .vllm_rules import TP_REPLICATED

    raw = raw_config(model) if tp * dp > 1 else None
    if not raw or raw.get("model_type") in TP_REPLICATED:  # built whole on every rank (ZAYA1: zaya.py)
        return None
    from ..configs.quant_online import vllm_method

    read = (version or READ_IN).startswith(READ_IN)  # the quantized schemes' rules: read in 0.34 only
    block, site, mo = (fp8_block(model, raw, vllm_method) if read else None), _FP8_SITE, None
    if block is None and read and (ct := _ct_block(model, raw)):
        block, site = ct, CT_SITE
    if block is None and read:
        mo = _modelopt(model, raw)
    model_type = str(raw.get("model_type") or "")
    why = ((_o_proj(model_type, raw, tp, mo) if tp > 1 else None)
           or (_dense(model_type, raw, tp, block, site, mo) if tp > 1 else None)
           or (_shared(model, model_type, raw, tp, dp, ep, block, site, a2a, mo) if tp > 1 else None)
           or _experts(model, raw, 1 if ep else tp * dp, tp, block or mixed_expert_block(mo), site, mo, read)
           or (_card(model, raw, mo, 1 if ep else tp * dp, capability) if read and block is None else None))
    return f"--tp {tp} with --engine vllm: {why}" if why else None


def card_refusal(model, tp: int, dp: int = 1, ep: bool = False, version: str | None = None,
                 capability: tuple[int, int] | None = None) -> str | None:
    """Only the card's part of refusal (`kvplan fit` asks it per GPU, refusal once per split): the NVFP4 routed
    experts split 1 (--ep) or tp x dp ways on a card of `capability` (engines/vllm_nvfp4_moe.py), vLLM 0.34 only."""
    from .vllm_load import raw_config
    from .vllm_rules import TP_REPLICATED

    raw = raw_config(model) if tp * dp > 1 and capability is not None else None
    if not raw or raw.get("model_type") in TP_REPLICATED or not (version or READ_IN).startswith(READ_IN):
        return None
    why = _card(model, raw, _modelopt(model, raw), 1 if ep else tp * dp, capability)
    return f"--tp {tp} with --engine vllm: {why}" if why else None


def check(model, tp: int, dp: int = 1, ep: bool = False, version: str | None = None,
          a2a: str | None = None, capability: tuple[int, int] | None = None) -> None:
    """Raise the refusal line where vLLM fails to build the text model at this split (on a card of `capability`,
    where known)."""
    from ..errors import UsageError

    why = refusal(model, tp, dp, ep, version, a2a, capability)
    if why:
        hint = (HINT + ", or add --ep for the experts" if "routed expert" in why else HINT)
        if "NVFP4 experts" in why:
            hint = CARD_HINT
        raise UsageError(why, hint)


__all__ = ["card_refusal", "check", "refusal"]
