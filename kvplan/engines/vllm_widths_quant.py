"""The quantization schemes whose vLLM 0.34 layers need more of a TP split than the plain widths (engines/
vllm_widths.py, which asks them): compressed-tensors block FP8 and ModelOpt's per-rank alignment. Read in the
vllm 0.34.0 wheel (vllm/model_executor/layers/quantization/...):

- compressed-tensors block FP8 (ct_block: every config group float 8-bit, strategy "block"; ignore at most
  lm_head): compressed_tensors_w8a8_fp8.py CompressedTensorsW8A8Fp8.create_weights (CompressedTensorsW8A16Fp8 below
  SM 8.9 alike) calls validate_fp8_block_shape, and linear.py _maybe_allow_fp8_block_shape_mismatch reads
  quant_config.weight_block_size, which CompressedTensorsConfig has not: the merged gate_up_proj's outputs a rank
  must be a multiple of block_n too ("Weight output_partition_size = N is not divisible by weight quantization
  block_n = K."). Its experts: compressed_tensors_moe_w8a8_fp8.py CompressedTensorsW8A8Fp8MoEMethod.create_weights
  calls validate_fp8_block_shape_moe with no refinement (down against block_k where the TP world size > 1).

- ModelOpt (modelopt: a config vLLM names modelopt / modelopt_fp4 / modelopt_mxfp8 / modelopt_mixed, read by
  engines/modelopt_config.py): modelopt.py ModelOptLinearMethod.create_weights hands a linear layer's input per rank
  to the weight scheme resolve() picks by quant_algo (_MODELOPT_LINEAR): KNvfp4Static (NVFP4, W4A16_NVFP4) 16,
  KFp8Block128 (FP8_PB_WO) 128, KMxfp8Static (MXFP8) 32, each a ValueError. The row-parallel layers are split by
  input: the dense and shared experts' down_proj and the attention's o_proj (built before the MLP) of the families
  in _O_PROJ (the check is the linear method's, any family's; listed are those whose o_proj input was read).
  MXFP8's routed experts: ModelOptMxFp8FusedMoE.create_weights (intermediate_size_per_partition % 32), unless
  moe_quant_algo NVFP4. MIXED_PRECISION (ModelOptMixedPrecisionConfig.get_quant_method): each module takes its
  quantized_layers algo (a linear not named: unquantized); experts MXFP8 as above, FP8_PB_WO / FP8_BLOCK_SCALES
  to fp8.py Fp8MoEMethod with blocks [group_size, group_size] (mixed_expert_block; vllm_widths.py _experts applies
  its refine / validate rule). A module the exclude list names is served unquantized (is_layer_excluded),
  unchecked. Not refused: FP8 per tensor / channel linears and experts (ModelOptFp8MoEMethod.create_weights checks
  nothing; flashinfer_utils.py align_moe_weights_for_fi pads), the non-mixed FP8_PB_WO experts (served by
  ModelOptFp8MoEMethod). NVFP4 experts: ModelOptNvFp4FusedMoE.create_weights checks nothing; at
  process_weights_after_loading the backend fused_moe/oracle/nvfp4.py select_nvfp4_moe_backend picks by card decides,
  card-dependent: engines/vllm_nvfp4_moe.py (vllm_widths.py asks it with the card's capability). Not modelled: the
  o_proj of unlisted families.

- GPTQ / AWQ routed experts (wna16_experts): auto_gptq.py AutoGPTQConfig.get_quant_method and auto_awq.py
  AutoAWQConfig.get_quant_method ask marlin_utils.py check_moe_marlin_supports_layer(allow_tile_padding=True):
  hidden % 128, the intermediate per rank % group_size, group_size in [-1, 32, 64, 128]. Where it holds,
  AutoGPTQMoEMethod / AutoAWQMoEMethod serve them (fused_moe/oracle/int_wna16.py select_wna16_moe_backend with
  tile padding: marlin_moe_padded_intermediate pads a misaligned width): nothing refused. Where it fails they fall
  back to moe_wna16.py MoeWNA16Method, whose create_weights halves the group while the intermediate per rank or
  hidden is not a multiple of it and asserts group_size >= 32 (a bare AssertionError): refused where the
  intermediate per rank is not a multiple of 32. Not modelled: modules_to_not_convert, dynamic GPTQ rules, ROCm.
- compressed-tensors WNA16 routed experts (every config group int 4 / 8-bit weight-only, pack-quantized: the
  checkpoints engines/sglang_widths_quant.py _int_weight_only reads): compressed_tensors_moe_wna16.py
  CompressedTensorsWNA16MoEMethod.create_weights raises a ValueError for a group strategy whose group_size does not
  divide the intermediate per rank, and, asymmetric, for 2 x the intermediate per rank not a multiple of the pack
  factor (32 / bits).

compressed-tensors NVFP4 (compressed_tensors_w4a4_nvfp4.py create_weights) checks no alignment: not here.
"""

from __future__ import annotations

from .fp8_blocks import config_int as _int, ct_groups, int_weight_only
from .modelopt_config import ModelOpt, modelopt as _read_modelopt, module_algos
from .vision_heads import undivides

# where compressed-tensors checks the blocks (no merged-layer allowance, no MoE refinement)
CT_SITE = "compressed_tensors_w8a8_fp8.py CompressedTensorsW8A8Fp8.create_weights"
# ModelOpt's linear layers (modelopt.py ModelOptLinearMethod.create_weights -> the weight scheme resolve() picks by
# quant_algo): quant_algo -> (the scheme, the multiple it needs of a layer's input per rank, the ValueError it raises)
_NVFP4_IN = ("KNvfp4Static", 16, "Unsupported model when in features size is not multiple of 16")
_MODELOPT_LINEAR = {"NVFP4": _NVFP4_IN, "W4A16_NVFP4": _NVFP4_IN,
                    "FP8_PB_WO": ("KFp8Block128", 128, "FP8_PB_WO requires in divisible by 128, got {n}"),
                    "MXFP8": ("KMxfp8Static", 32, "MXFP8 requires input size divisible by 32, got {n}")}
# model_type -> (vLLM 0.34's attention whose o_proj is a RowParallelLinear of total heads x the width a head, that
# width's rule). The linear check is the method's (ModelOptLinearMethod.create_weights), so any family's quantized
# o_proj meets it; listed are the families whose o_proj input was read. "config": the config's head_dim, else
# hidden / heads (llama.py LlamaAttention.__init__; qwen3.py, qwen3_moe.py Qwen3MoeAttention alike); "hidden":
# hidden / heads always (qwen2.py, qwen2_moe.py Qwen2MoeAttention); "head_dim": config.head_dim (llama4.py
# Llama4Attention); "v_head_dim": num_attention_heads x v_head_dim (deepseek_v2.py DeepseekV2MLAAttention and
# DeepseekV2Attention, both RowParallelLinear(num_heads * v_head_dim); the MHA DeepseekAttention of model_type
# "deepseek" or no rope / nope dims is not listed)
_O_PROJ = {"llama": ("llama.py LlamaAttention.o_proj", "config"),
           "mistral": ("mistral.py MistralAttention.o_proj (LlamaAttention)", "config"),
           "qwen2": ("qwen2.py Qwen2Attention.o_proj", "hidden"),
           "qwen3": ("qwen3.py Qwen3Attention.o_proj", "config"),
           "qwen2_moe": ("qwen2_moe.py Qwen2MoeAttention.o_proj", "hidden"),
           "qwen3_moe": ("qwen3_moe.py Qwen3MoeAttention.o_proj", "config"),
           "llama4": ("llama4.py Llama4Attention.o_proj", "head_dim"),
           "deepseek_v2": ("deepseek_v2.py DeepseekV2MLAAttention.o_proj", "v_head_dim"),
           "deepseek_v3": ("deepseek_v2.py DeepseekV2MLAAttention.o_proj", "v_head_dim")}


def ct_block(model, raw: dict) -> tuple[int, int] | None:
    """(block_n, block_k) of a compressed-tensors checkpoint whose every config group is FP8 block-wise
    (compressed_tensors.py _is_fp8_w8a8: float 8-bit weights, static, symmetric, strategy "block" with a
    block_structure; CompressedTensorsW8A8Fp8 at SM 8.9+, CompressedTensorsW8A16Fp8 below, both validate it) and
    ignores at most lm_head; None otherwise (other schemes, or modules kept whole: not checked)."""
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from ..configs.quant_online import vllm_method
    from .pre_ampere import served_quantization

    if served_quantization(model, vllm_method) != "compressed-tensors":
        return None
    groups = ct_groups(checkpoint_quantization_config(raw) or {})
    if groups is None:
        return None
    blocks = set()
    for group in groups:
        w = group.get("weights") if isinstance(group, dict) else None
        shape = w.get("block_structure") if isinstance(w, dict) else None
        if (not isinstance(shape, list) or len(shape) != 2 or w.get("strategy") != "block" or w.get("type") != "float"
                or w.get("num_bits") != 8 or w.get("dynamic") or not all(
                    isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in shape)):
            return None
        blocks.add(tuple(shape))
    return blocks.pop() if len(blocks) == 1 else None


def modelopt(model, raw: dict) -> ModelOpt | None:
    """The ModelOpt config (engines/modelopt_config.py) of a checkpoint whose linear layers vLLM 0.34 serves with an
    aligned scheme (a config ModelOptFp8Config / ModelOptNvFp4Config / ModelOptMxFp8Config builds, by quant_algo:
    NVFP4 / W4A16_NVFP4, FP8_PB_WO, MXFP8: _MODELOPT_LINEAR); None for another method, another algo (FP8 per tensor
    or per channel: no alignment), MIXED_PRECISION (per-layer algos, not read) or an exclusion list kvplan cannot
    match (single experts)."""
    return _read_modelopt(model, raw, (*_MODELOPT_LINEAR, "MIXED_PRECISION"))


def _expert_algos(mo: ModelOpt) -> set[str]:
    """What serves the routed experts (mlp.experts), excluded ones left out: under MIXED_PRECISION each layer's
    quant_algo (ModelOptMixedPrecisionConfig.get_quant_method); otherwise the config's, where ModelOptMxFp8Config
    serves MXFP8 experts with ModelOptMxFp8FusedMoE unless moe_quant_algo is NVFP4 (routed_expert_weight_key)."""
    algos = module_algos(mo, "mlp.experts", range(mo.layers))
    if mo.quantized_layers is None and mo.algo == "MXFP8" and mo.moe_algo == "NVFP4":
        return set()
    return algos


# ModelOptMixedPrecisionConfig.get_quant_method: routed experts of these algos go to fp8.py Fp8MoEMethod with
# fp8_block_config (weight_block_size [g, g], g the block-FP8 entries' one group_size, 128 by default)
_BLOCK_FP8_MOE = ("FP8_PB_WO", "FP8_BLOCK_SCALES")


def mixed_expert_block(mo: ModelOpt | None) -> tuple[int, int] | None:
    """The FP8 blocks of a MIXED_PRECISION checkpoint's block-FP8 routed experts (fp8.py Fp8MoEMethod, whose rules
    engines/vllm_widths.py _experts applies); None otherwise, or where the entries disagree on group_size
    (ModelOptMixedPrecisionConfig.__init__ raises for that whatever the split)."""
    if mo is None or mo.quantized_layers is None or not _expert_algos(mo) & set(_BLOCK_FP8_MOE):
        return None
    sizes = {info.get("group_size", 128) for info in mo.quantized_layers.values()
             if str(info.get("quant_algo") or "").upper() in _BLOCK_FP8_MOE}
    size = sizes.pop() if len(sizes) == 1 else None
    return (size, size) if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def modelopt_row(mo: ModelOpt, part: str, cls: str, width: int, tp: int, module: str, layers: range) -> str | None:
    """Why ModelOpt's weight scheme refuses a RowParallelLinear of input `width` split over TP tp."""
    per_rank = width // tp
    for algo in sorted(module_algos(mo, module, layers) & set(_MODELOPT_LINEAR)):
        scheme, align, message = _MODELOPT_LINEAR[algo]
        if per_rank % align:
            name = algo if mo.quantized_layers is None else f"MIXED_PRECISION ({algo} layers)"
            return (f"vLLM 0.34 splits the ModelOpt {name} {part} ({cls}) into {per_rank:,} inputs a rank ({width:,} "
                    f"/ {tp}), not a multiple of {align}: '{message.format(n=per_rank)}' (quantization/modelopt.py "
                    f"{scheme}.create_weights, from ModelOptLinearMethod.create_weights)")
    return None


def o_proj(model_type: str, raw: dict, tp: int, mo: ModelOpt | None) -> str | None:
    """The attention's o_proj (_O_PROJ) under ModelOpt, built before the layer's MLP; a head count TP does not
    divide is fit/grid.py split_reason's."""
    cls, rule = _O_PROJ.get(model_type, (None, None)) if mo else (None, None)
    heads, hidden = _int(raw, "num_attention_heads"), _int(raw, "hidden_size")
    if cls is None or not heads or not hidden or undivides(heads, tp):
        return None
    head_dim = {"hidden": hidden // heads, "config": _int(raw, "head_dim") or hidden // heads,
                "head_dim": _int(raw, "head_dim"), "v_head_dim": _int(raw, "v_head_dim")}[rule]
    if not head_dim or (rule == "v_head_dim" and not (_int(raw, "qk_nope_head_dim") or _int(raw, "qk_rope_head_dim"))):
        return None  # no width read, or deepseek_v2.py's MHA DeepseekAttention (no rope / nope dims): not listed
    return modelopt_row(mo, "attention o_proj", cls, heads * head_dim, tp, "self_attn.o_proj", range(mo.layers))


def ct_experts(width: int, per_rank: int, split: int, tp: int, block: tuple[int, int]) -> str | None:
    """compressed-tensors' block FP8 experts: CompressedTensorsW8A8Fp8MoEMethod.create_weights calls
    validate_fp8_block_shape_moe on the intermediate per rank, gate / up against block_n, down against block_k where
    the (attention) TP world size is above 1 (get_tensor_model_parallel_world_size), with no refinement."""
    from .fp8_blocks import moe_block_error

    block_n, block_k = block
    which = moe_block_error(per_rank, block, tp > 1)
    if which is None:
        return None
    return (f"vLLM 0.34 splits the compressed-tensors FP8 {block_n}x{block_k}-block experts' intermediate size of "
            f"{width:,} into {per_rank:,} a rank ({width:,} / {split}): {which} (fp8_utils.py "
            "validate_fp8_block_shape_moe, from compressed_tensors_moe_w8a8_fp8.py "
            "CompressedTensorsW8A8Fp8MoEMethod.create_weights, which refines no blocks)")


def mxfp8_experts(mo: ModelOpt | None, width: int, split: int) -> str | None:
    """ModelOpt MXFP8's routed experts split `split` ways: ModelOptMxFp8FusedMoE.create_weights needs the intermediate
    per rank a multiple of 32 (unless moe_quant_algo is NVFP4, or the experts are excluded)."""
    if mo is not None and (width // split) % 32 and "MXFP8" in _expert_algos(mo):
        return (f"vLLM 0.34 splits the ModelOpt MXFP8 experts' intermediate size of {width:,} into {width // split:,} "
                f"a rank ({width:,} / {split}), not a multiple of 32: 'MXFP8 MoE requires "
                f"intermediate_size_per_partition divisible by 32, got {width // split}.' (quantization/modelopt.py "
                "ModelOptMxFp8FusedMoE.create_weights)")
    return None


_MARLIN_MOE_GROUPS = (-1, 32, 64, 128)  # marlin_utils.py check_moe_marlin_supports_config supports_group_size


def wna16_experts(model, raw: dict, width: int, split: int, hidden: int) -> str | None:
    """GPTQ / AWQ / compressed-tensors WNA16 routed experts split `split` ways (module doc); None where vLLM 0.34
    builds them or the checkpoint is none of these."""
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from ..configs.quant_online import vllm_method
    from .pre_ampere import served_quantization

    method = served_quantization(model, vllm_method)
    q = checkpoint_quantization_config(raw) or {}
    per_rank = width // split
    if method == "compressed-tensors":
        return _ct_wna16_experts(q, width, per_rank, split)
    group, bits = q.get("group_size"), q.get("bits")
    if method not in ("gptq", "auto_awq") or not isinstance(group, int) or isinstance(group, bool) or bits not in (
            4, 8) or group == 0 or q.get("modules_to_not_convert"):
        return None
    if hidden % 128 == 0 and (group < 0 or per_rank % group == 0) and group in _MARLIN_MOE_GROUPS:
        return None  # Marlin MoE, tile-padded (marlin_moe_padded_intermediate)
    g = group
    while g > 0 and (per_rank % g or hidden % g):  # MoeWNA16Method.create_weights
        g //= 2
        if g < 32:
            name = "AutoGPTQConfig" if method == "gptq" else "AutoAWQConfig"
            return (f"vLLM 0.34 splits the {method.replace('auto_', '').upper()} experts' intermediate size of "
                    f"{width:,} into {per_rank:,} a rank ({width:,} / {split}), not a multiple of group_size {group}, "
                    f"so {name}.get_quant_method falls back from Marlin MoE (marlin_utils.py "
                    f"check_moe_marlin_supports_layer) to moe_wna16.py MoeWNA16Method, whose create_weights halves "
                    f"the group to {g} and fails 'assert group_size >= 32' ({per_rank:,} is not a multiple of 32)")
    return None


def _ct_wna16_experts(q: dict, width: int, per_rank: int, split: int) -> str | None:
    """compressed_tensors_moe_wna16.py CompressedTensorsWNA16MoEMethod.create_weights (module doc)."""
    if not int_weight_only(q):
        return None
    site = "compressed_tensors_moe_wna16.py CompressedTensorsWNA16MoEMethod.create_weights"
    for group in q["config_groups"].values():
        w = group["weights"]
        size = w.get("group_size")
        if w.get("strategy") == "group" and isinstance(size, int) and size > 0 and per_rank % size:
            return (f"vLLM 0.34 splits the compressed-tensors WNA16 experts' intermediate size of {width:,} into "
                    f"{per_rank:,} a rank ({width:,} / {split}): 'CompressedTensors WNA16 MoE with static group "
                    f"scales requires the MoE intermediate size per tensor-parallel partition ({per_rank}) to be "
                    f"divisible by group_size ({size}).' ({site})")
        pack = 32 // w["num_bits"]
        if w.get("symmetric") is False and (2 * per_rank) % pack:
            return (f"vLLM 0.34 splits the asymmetric compressed-tensors WNA16 experts' intermediate size of {width:,} "
                    f"into {per_rank:,} a rank ({width:,} / {split}): 'gate+up output channels per TP rank (2 * "
                    f"intermediate_size_per_partition = {2 * per_rank}) must be divisible by packed_factor "
                    f"({pack})' ({site})")
    return None


__all__ = ["CT_SITE", "ModelOpt", "ct_block", "ct_experts", "mixed_expert_block", "modelopt", "modelopt_row",
           "mxfp8_experts", "o_proj", "wna16_experts"]
