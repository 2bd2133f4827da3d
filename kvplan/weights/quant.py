"""Which quantization format a checkpoint uses, from its quantization_config and
its tensors (names, dtypes, scale shapes).

Formats and the tensors that mark them:
  MXFP4              <w>_blocks (U8, two FP4 values a byte, 32-value blocks) + <w>_scales (U8 E8M0 exponents)
  NVFP4              U8 packed weight + weight_scale (F8_E4M3, one per 16 values) + weight_scale_2 / weight_global_scale (F32)
  FP8 per-tensor     F8_E4M3 weight + a one-element weight_scale
  FP8 per-channel    F8_E4M3 weight + a weight_scale with one value per output row
  FP8 block-scaled   F8_E4M3 weight + weight_scale_inv (DeepSeek, 128 x 128 blocks) or a 2-D weight_scale
  AWQ / GPTQ         qweight (I32, 32 / bits values each) + scales + qzeros (GPTQ also g_idx)
  compressed-tensors weight_packed (I32) or F8 weights + weight_scale; the config's `format` names it
  bitsandbytes       4-bit: U8 weight + absmax + quant_map (+ quant_state); 8-bit: I8 weight + SCB
  MLX (mlx-lm)       U32 packed weight + scales (+ biases, affine mode); the config's "quantization" names it
  torchao            <module>._weight_qdata + _weight_scale (+ _weight_zero_point): torchao's tensor subclasses as
                     flatten_tensor_state_dict writes them (roles.param_name); the config's quant_type names the layout
"""

from __future__ import annotations

from .roles import TensorEntry, is_torchao_flat


def _from_config(q: dict) -> str | None:
    from ..configs.quant_mlx import is_mlx

    if is_mlx(q):  # mlx-lm's {"group_size", "bits"[, "mode"]} (configs/quant_mlx.py)
        return f"MLX {q.get('bits')}-bit {q.get('mode', 'affine')}, group {q.get('group_size')}"
    method = str(q.get("quant_method", "")).lower()
    if method == "mxfp4":
        return "MXFP4"
    if method in ("awq", "gptq"):
        bits = q.get("bits") or q.get("w_bit")
        group = q.get("group_size") or q.get("q_group_size")
        text = f"{method.upper()} int{bits}" if bits else method.upper()
        return text + (f", group {group}" if group else "")
    if method == "fp8":
        block = q.get("weight_block_size")
        return f"FP8 block-scaled {block[0]}x{block[1]}" if isinstance(block, list) and len(block) == 2 else "FP8"
    if method == "fbgemm_fp8":
        return "FP8 per-channel (fbgemm)"
    if method == "compressed-tensors":
        fmt = q.get("format") or "compressed-tensors"
        details = []
        groups = q.get("config_groups")
        for group in (groups.values() if isinstance(groups, dict) else ()):  # a label: junk is left out
            w = group.get("weights") if isinstance(group, dict) else None
            if isinstance(w, dict):
                kind = f"{w.get('type', 'int')}{w.get('num_bits', '')}"
                strategy = w.get("strategy")
                details.append(f"{kind} {strategy}" if strategy else kind)
        extra = f" ({', '.join(sorted(set(details)))})" if details else ""
        return f"compressed-tensors {fmt}{extra}"
    if method.startswith("modelopt") or "quant_algo" in q or isinstance(q.get("quantization"), dict):
        nested = q.get("quantization") if isinstance(q.get("quantization"), dict) else {}
        algo = str(q.get("quant_algo") or nested.get("quant_algo") or "").upper()
        return f"{algo} (modelopt)" if algo else "modelopt"
    if method == "bitsandbytes" or "load_in_4bit" in q or "load_in_8bit" in q:
        if q.get("load_in_4bit"):
            return f"bitsandbytes 4-bit ({q.get('bnb_4bit_quant_type', 'fp4')})"
        if q.get("load_in_8bit"):
            return "bitsandbytes 8-bit"
        return "bitsandbytes"
    return method or None


def _fp8_granularity(entries: list[TensorEntry]) -> str | None:
    by_name = {t.name: t for t in entries}
    for t in entries:
        if not t.dtype.startswith("F8_E4M3") or not t.name.endswith(".weight") or len(t.shape) != 2:
            continue
        stem = t.name[: -len(".weight")]
        if stem + ".weight_scale_inv" in by_name:
            s = by_name[stem + ".weight_scale_inv"].shape
            if len(s) == 2 and s[0]:
                return f"FP8 block-scaled {-(-t.shape[0] // s[0])}x{-(-t.shape[1] // s[1])}"
            return "FP8 block-scaled"
        scale = by_name.get(stem + ".weight_scale")
        if scale is None:
            continue
        if scale.elements == 1:
            return "FP8 per-tensor"
        if scale.elements == t.shape[0]:
            return "FP8 per-channel"
        return "FP8 block-scaled"
    return None


def _from_tensors(entries: list[TensorEntry]) -> str | None:
    names = {t.name for t in entries}
    dtypes = {t.name: t.dtype for t in entries}
    if any(n.endswith("_blocks") and n[: -len("_blocks")] + "_scales" in names for n in names):
        return "MXFP4"
    if any(is_torchao_flat(n) for n in names):
        return "torchao"
    if any(n.endswith(("weight_scale_2", "weight_global_scale")) for n in names) and any(
        dtypes[n] == "U8" and n.endswith(".weight") or n.endswith(".weight_packed") for n in names
    ):
        return "NVFP4"
    if any(n.endswith(".qweight") for n in names):
        return "GPTQ" if any(n.endswith(".g_idx") for n in names) else "AWQ"
    if any(n.endswith(".weight_packed") for n in names):
        return "compressed-tensors pack-quantized"
    if any(n.endswith(".absmax") or ".quant_state.bitsandbytes__" in n for n in names):
        return "bitsandbytes 4-bit"
    if any(n.endswith(".SCB") for n in names):
        return "bitsandbytes 8-bit"
    if any(n.endswith(".scales") and dtypes.get(n[: -len(".scales")] + ".weight") == "U32" for n in names):
        return "MLX"
    return _fp8_granularity(entries)


def identify(quantization_config: dict | None, entries: list[TensorEntry] = ()) -> str:
    """The format in words; 'none' for plain BF16/F16/F32 checkpoints."""
    from_config = _from_config(quantization_config) if isinstance(quantization_config, dict) else None
    from_tensors = _from_tensors(list(entries)) if entries else None
    if from_config and from_tensors and from_tensors.startswith("FP8") and from_config.startswith("FP8"):
        return from_tensors  # the scale shapes say the granularity
    if from_config and from_tensors:
        packed = {"awq", "gptq"}
        first_c, first_t = from_config.lower().split()[0], from_tensors.lower().split()[0]
        if first_t not in from_config.lower() and not (first_c in packed and first_t in packed):
            return f"{from_config}; tensors look like {from_tensors}"
    return from_config or from_tensors or "none"
