"""What a config-sized quantized checkpoint stores beside its bytes per quantized weight, counted from kvplan's
per-module table (configs/weight_tables/__init__.py Split), and which of it each tensor-parallel rank holds whole.

  per quantized tensor   QuantBytes.per_tensor_bytes: NVFP4 / FP8 per-tensor scales, pack-quantized weight_shape,
                         bitsandbytes 4-bit quant_map (+ nested_quant_map), bitsandbytes 8-bit weight_format
  per input row          QuantBytes.per_input_row_bytes: GPTQ's int32 g_idx (AutoGPTQ QuantLinear: g_idx
                         [in_features], saved whatever desc_act says)
  per output row         QuantBytes.per_output_row_bytes: bitsandbytes 8-bit's float32 SCB, per-channel
                         weight scales (compressed-tensors and Quark int8 / FP8 "channel"; Quark int8 and torchao
                         Int8WeightOnly add an int8 zero point per row), GPTQ group -1's scale and packed zero
                         point (2 + b/8 B a row); those of row-parallel modules (o_proj,
                         down_proj, the experts' w2, GPT-NeoX's attention.dense, ... per family) and whole ones sit
                         whole on every TP rank (weights/roles.py is_row_parallel says where vLLM 0.34 and SGLang
                         0.5.23 load them so)
  per routed expert      QuantBytes.expert_scale_bytes: an engine's online FP8 with one float32 scale for each
                         expert's w13 and one for its w2 (configs/quant_online.py), in place of the experts'
                         per-tensor and per-row scales; whole on every TP rank
  per attention layer    QuantBytes.kv_scale_bytes: ModelOpt's float32 k_scale and v_scale with an FP8 KV cache,
                         counted in the layers whose k_proj and v_proj are both quantized (the layout read);
                         elsewhere (attention kept unquantized, Gemma 4's k_eq_v layers) named as not counted

Scalars (per tensor, per attention layer) sit whole on every TP rank: vLLM creates them per layer, unsharded
(vLLM 0.34 parameter.py PerTensorScaleParameter; kv_cache.py BaseKVCacheMethod.create_weights, scalars); the
per-row tensors split with their weight, but a row-parallel module's per-output-row scales stay whole. vLLM 0.31.0 and later drop every `.g_idx` at load
(base_config.py QuantizationConfig.get_checkpoint_weight_mapper; read in 0.31.0-0.34.0, 0.29.0 still loads it),
so g_idx_bytes is kept apart for the vLLM profile.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stored:
    total_bytes: int = 0
    replicated_bytes: int = 0  # of total_bytes, the scalars every TP rank holds whole
    g_idx_bytes: int = 0  # of total_bytes, GPTQ's g_idx
    parts: tuple[str, ...] = ()  # each counted part in words, for the note
    unsized: tuple[str, ...] = ()  # what the checkpoint also stores that kvplan does not count


def stored(q, split) -> Stored:
    """The bytes q's format stores beside its per-weight rate for a checkpoint of `split`'s modules."""
    parts, unsized = [], [q.unsized] if q.unsized else []
    # routed experts stored in a format of their own (FP8's store_dtype "mxfp4": Mxfp4MoEMethod creates no
    # per-tensor scale) have none of the per-tensor scalars of the other quantized tensors
    # so have the experts of a layout with scales of their own per expert (QuantBytes.expert_scale_bytes)
    own = q.experts_bytes_per_weight is not None or q.expert_scale_bytes is not None
    tensors = split.tensors - (split.expert_tensors if own else 0)
    per_tensor = tensors * q.per_tensor_bytes
    if per_tensor:
        parts.append(f"{tensors:,} quantized tensors with {q.per_tensor_bytes} B each of per-tensor scales, "
                     f"maps or shapes ({per_tensor:,} B)")
    g_idx = _rows(split.input_rows, q.per_input_row_bytes, "GPTQ's int32 g_idx, one per input row", parts, unsized)
    # 4 B: a float32 scale (bitsandbytes' SCB or a per-channel weight scale); 5 B: with an int8 zero point (Quark
    # int8, torchao)
    what = ("float32 scales, one per output row (bitsandbytes' SCB or a per-channel weight scale)"
            if q.per_output_row_bytes == 4 else
            f"a scale and an int8 zero point per output row ({q.per_output_row_bytes} B a row)"
            if q.per_output_row_bytes == 5 else
            f"GPTQ's scale and packed zero point of each output row's one group ({q.per_output_row_bytes:g} B a row)")
    per_expert = q.expert_scale_bytes is not None
    rows = split.output_rows
    if per_expert and rows is not None:
        rows = None if split.expert_output_rows is None else rows - split.expert_output_rows
    scb = _rows(rows, q.per_output_row_bytes, what, parts, unsized)
    experts = split.expert_blocks * q.expert_scale_bytes if per_expert else 0
    if experts:
        parts.append(f"float32 scales of {split.expert_blocks:,} routed experts, {q.expert_scale_bytes} B each "
                     f"(one for its w13, one for its w2: {experts:,} B)")
    kv = split.kv_layers * q.kv_scale_bytes
    if kv:
        parts.append(f"float32 k_scale and v_scale in {split.kv_layers:,} attention layers ({kv:,} B)")
    if q.kv_scale_bytes and split.kv_unsure_layers:
        unsized.append(f"the KV-cache scales of {split.kv_unsure_layers:,} attention layers without a quantized "
                       "k_proj and v_proj (attention kept unquantized, or no v_proj)")
    elif q.kv_scale_bytes and not split.kv_layers:
        unsized.append("the KV-cache scales (kvplan's table of this family has no attention k_proj to count)")
    # the per-row scales of row-parallel and whole modules, held whole on every TP rank (Split.whole_output_rows)
    whole_rows = (split.whole_output_rows or 0) - ((split.expert_whole_output_rows or 0) if per_expert else 0)
    rows_whole = int(round(whole_rows * q.per_output_row_bytes)) if scb and q.row_scales_whole else 0
    return Stored(per_tensor + g_idx + scb + kv + experts, per_tensor + kv + rows_whole + experts, g_idx, tuple(parts),
                  tuple(unsized))


def _rows(rows: int | None, each: float, what: str, parts: list, unsized: list) -> int:
    if not each:
        return 0
    if rows is None:
        unsized.append(f"{what} (kvplan's table does not give every quantized tensor's shape)")
        return 0
    stored_bytes = int(round(rows * each))  # GPTQ's 2 + b/8 B a row: whole bytes for rows in multiples of 32
    parts.append(f"{what} ({rows:,} rows, {stored_bytes:,} B)")
    return stored_bytes
