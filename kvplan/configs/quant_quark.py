"""Bytes of an AMD Quark checkpoint (quant_method "quark": amd/*-FP8-KV, amd/*-MXFP4 ...), read as vLLM 0.34 reads it.

vLLM 0.34 quantization/quark/quark.py QuarkConfig picks one scheme per linear layer from the config's
layer_quant_config (by name pattern), else layer_type_quant_config, else global_quant_config
(_find_matched_config), and leaves the layers `exclude` names unquantized (should_ignore_layer). kvplan sizes one
scheme for every quantized linear: layer_quant_config entries may only repeat the global weight and input specs
(the FP8-KV checkpoints' "*k_proj" / "*v_proj" entries, which add the KV cache's output_tensors); a config that gives
some layers a scheme of their own (amd/DeepSeek-V4-Pro-MXFP4: MXFP4 experts, FP8 attention) gives no figure.

The schemes (_get_scheme_cls_from_config) and what each linear stores, per the scheme's create_weights:

  FP8 per_tensor / per_channel  QuarkW8A8Fp8: F8_E4M3 weight, float32 weight_scale per tensor / per output row, a
                                float32 input_scale per tensor when the input is static per_tensor
  FP8 per_block [a, b]          QuarkW8A8Fp8PerBlock: 1 B + a float32 scale per a x b block (scale_type
                                float8_e8m0fnu: one byte); MXFP8's 2-D spelling [R, 32] e8m0 (QuarkOCP_MX,
                                scale_block_rows R) is the same count
  OCP MX per_group 32 e8m0      QuarkOCP_MX: MXFP4 uint8 [out, in / 2], MXFP6 [out, 3 in / 4], MXFP8 [out, in]; a uint8
                                E8M0 weight_scale [out, in / 32]; (QuarkW4A8_MXFP4_FP8 adds a float32 input_scale)
  NVFP4 [fp4 per_group 16, fp8_e4m3 per_tensor]  QuarkNVFP4: uint8 [out, in / 2] + F8_E4M3 weight_scale per 16 +
                                float32 weight_scale_2 and input_scale_2 per tensor
  int8 per_tensor / per_channel  QuarkW8A8Int8 (static symmetric weight; input static per_tensor or dynamic
                                per_channel): int8 weight, float32 weight_scale + int8 weight_zero_point per tensor /
                                per output row, float32 input_scale + int8 input_zero_point per tensor when static
  int4 / uint4 per_group g      QuarkW4A16Int4: int32 weight [in, out / 8], weight_scale [in / g, out] in the model
                                dtype, int32 weight_zero_point [in / g, out / 8] used when asymmetric
  kv_cache_group (FP8 KV)       k_proj.output_scale and v_proj.output_scale per attention layer
                                (get_cache_scale_mapper), float32 scalars as vLLM holds them (kv_cache.py
                                BaseKVCacheMethod); the checkpoint's scale dtypes are taken from vLLM's create_weights

The routed experts follow the same specs (quark_moe.py QuarkW8A8Fp8MoEMethod, QuarkOCP_MX_MoEMethod ...: the same
weight and scale tensors per expert). The LM head is quantized unless `exclude` names it; a wildcard `exclude`
entry is read as Quark's quantizer matches it (configs/quant_exclude.py).
"""

from __future__ import annotations

from .quant_bytes import QuantBytes, Unsized, _group, _grouped, _ignored, _positive_int
from .quant_exclude import QUARK  # its exclude list, matched as Quark writes it (quant_exclude.py)

_MX_BITS = {"fp4": 4, "fp6_e2m3": 6, "fp6_e3m2": 6, "fp8_e4m3": 8}  # OCP MX element dtypes (ocp_mx_utils.py)


def read(q: dict) -> QuantBytes:
    g = q.get("global_quant_config")
    if not isinstance(g, dict):
        raise Unsized("Quark: no global_quant_config")
    if q.get("layer_type_quant_config"):
        raise Unsized("Quark: a layer_type_quant_config gives module types a scheme of their own, which kvplan does "
                      "not split out")
    layers = q.get("layer_quant_config") or {}
    if not isinstance(layers, dict):
        raise Unsized("Quark: layer_quant_config is not a table of name patterns")
    for pattern, cfg in layers.items():
        if not isinstance(cfg, dict) or any(cfg.get(k) != g.get(k) for k in ("weight", "input_tensors")):
            raise Unsized(f"Quark gives {pattern!r} a scheme of its own (layer_quant_config), and kvplan sizes one "
                          "scheme for every quantized linear")
    if g.get("bias") or g.get("output_tensors"):  # vLLM 0.34 refuses these too (NotImplementedError)
        raise Unsized("Quark with quantized bias or output tensors, which vLLM 0.34 does not load")
    label, dtype, size, scalars, rows, unsized = _scheme(g.get("weight"), g.get("input_tensors"))
    head, exclusions = _ignored(q.get("exclude"), QUARK, False)
    export = q.get("export") if isinstance(q.get("export"), dict) else {}
    kv = 8 if export.get("kv_cache_group") else 0
    algos = q.get("algo_config") if isinstance(q.get("algo_config"), list) else []
    if any(isinstance(a, dict) and a.get("name") == "rotation" for a in algos):
        # QuarkConfig.maybe_update_config: an online rotation stores an int8 input_rotation [r, r] on some layers
        unsized = "; ".join(x for x in (unsized, "the int8 input_rotation matrices of its rotation algo_config") if x)
    return QuantBytes(f"Quark {label}", dtype, size, keeps_lm_head=head, exclusions=exclusions,
                      per_tensor_bytes=scalars, per_output_row_bytes=rows, kv_scale_bytes=kv, unsized=unsized)


def _static(spec) -> bool:
    """An input quantized with a stored per-tensor scale (a float32 input_scale per tensor)."""
    return isinstance(spec, dict) and not spec.get("is_dynamic") and spec.get("qscheme") == "per_tensor"


def _scheme(weight, inputs) -> tuple[str, str, float, int, int, str]:
    """(label, dtype, bytes per weight, bytes per tensor, bytes per output row, what is left unsized)."""
    if isinstance(weight, list) and len(weight) == 1:
        weight = weight[0]
    if isinstance(inputs, list) and len(inputs) == 1:
        inputs = inputs[0]
    if isinstance(weight, list):
        first, second = (weight + [{}, {}])[:2] if len(weight) == 2 else ({}, {})
        if (isinstance(first, dict) and isinstance(second, dict) and first.get("dtype") == "fp4"
                and first.get("qscheme") == "per_group" and first.get("group_size") == 16
                and second.get("dtype") == "fp8_e4m3" and second.get("qscheme") == "per_tensor"):
            return "NVFP4", "nvfp4", 0.5 + 1 / 16, 8, 0, ""
        raise Unsized(f"Quark weight given as {len(weight)} specs: kvplan knows NVFP4's [fp4 per_group 16, fp8_e4m3 "
                      "per_tensor]")
    if not isinstance(weight, dict) or not weight:
        raise Unsized("Quark: global_quant_config has no weight spec")
    dtype, scheme = weight.get("dtype"), weight.get("qscheme")
    static = 4 if _static(inputs) else 0
    if dtype in _MX_BITS and scheme == "per_group" and weight.get("group_size") == 32 \
            and weight.get("scale_format") == "e8m0":
        bits = _MX_BITS[dtype]
        name = "mxfp8" if bits == 8 else f"mx{dtype.split('_')[0]}"
        return f"{name.upper()} (E8M0 scale per 32)", name, bits / 8 + 1 / 32, static, 0, ""
    if dtype == "fp8_e4m3" and scheme == "per_block":
        block = weight.get("block_size")
        if not isinstance(block, list) or len(block) != 2:
            raise Unsized(f"Quark: FP8 per_block with block_size {block!r}, not [rows, columns]")
        a, b = (_positive_int(x, "block_size", "Quark") for x in block)
        scale = 1 if weight.get("scale_type") == "float8_e8m0fnu" else 4
        return f"FP8 block-scaled {a}x{b}", "fp8", 1 + scale / (a * b), 0, 0, ""
    if dtype == "fp8_e4m3" and scheme in ("per_tensor", "per_channel"):
        if scheme == "per_tensor":
            return "FP8 per-tensor", "fp8", 1.0, 4 + static, 0, ""
        return "FP8 per-channel", "fp8", 1.0, static, 4, ""
    if dtype == "int8":
        return _int8(weight, inputs)
    if dtype in ("int4", "uint4") and scheme == "per_group" and inputs is None:
        group = _group(weight.get("group_size"), "Quark")
        symmetric = weight.get("symmetric")
        if not isinstance(symmetric, bool):
            raise Unsized(f"Quark int4: symmetric is {symmetric!r}, not true or false")
        size = _grouped(4, group, 2, not symmetric)
        unsized = ("a weight_zero_point Quark may also write for symmetric int4 (vLLM 0.34 QuarkW4A16Int4 creates "
                   "one, int32 [in / group, out / 8], and does not use it)" if symmetric else "")
        return f"{dtype} group {group}{'' if symmetric else ' asymmetric'}", "int4", size, 0, 0, unsized
    raise Unsized(f"Quark weight {dtype!r} {scheme!r}: not a scheme kvplan has read (vLLM 0.34 quark.py "
                  "_get_scheme_cls_from_config)")


def _int8(weight: dict, inputs) -> tuple[str, str, float, int, int, str]:
    """Quark W8A8 int8, as vLLM 0.34 quark.py QuarkConfig._is_w8a8_int8 accepts it: a static symmetric int8 weight
    per_tensor or per_channel with an int8 input, static per_tensor or dynamic per_channel (per token). What each
    linear stores (schemes/quark_w8a8_int8.py QuarkW8A8Int8.create_weights; the routed experts the same per expert,
    quark_moe.py QuarkW8A8Int8MoEMethod): an int8 weight [out, in]; per_channel a float32 weight_scale and an int8
    weight_zero_point per output row, per_tensor one of each a tensor; a static input adds a float32 input_scale and an
    int8 input_zero_point a tensor. vLLM 0.34 loads every one of them (default_loader.py: on a quantized model each
    parameter must come from the checkpoint), and Quark's exporter writes a zero point for every int dtype
    (export/nn/modules/realquantizer.py StaticScaledRealQuantizer). Not counted: the int8 input zero points the MoE
    method registers per expert even for a dynamic input (w13_input_zero_point [E, 2], w2_input_zero_point [E]: 1 B an
    expert projection; whether Quark's export carries them for a dynamic input is not read here)."""
    scheme = weight.get("qscheme")
    if scheme not in ("per_tensor", "per_channel"):
        raise Unsized(f"Quark int8 {scheme!r} weights: vLLM 0.34 quark.py _is_w8a8_int8 reads per_tensor and "
                      "per_channel only")
    if weight.get("symmetric") is not True or weight.get("is_dynamic"):
        raise Unsized("Quark int8 with an asymmetric or dynamic weight: vLLM 0.34 quark.py _is_w8a8_int8 reads a "
                      "static symmetric weight only")
    if not isinstance(inputs, dict) or inputs.get("dtype") != "int8":
        raise Unsized("Quark int8 weights without int8 input_tensors (weight-only int8): no vLLM 0.34 Quark scheme "
                      "reads them (quark.py _get_scheme_cls_from_config)")
    static = inputs.get("qscheme") == "per_tensor" and not inputs.get("is_dynamic")
    if not static and not (inputs.get("qscheme") == "per_channel" and inputs.get("is_dynamic") is True):
        raise Unsized(f"Quark int8 with {inputs.get('qscheme')!r} input_tensors (is_dynamic "
                      f"{inputs.get('is_dynamic')!r}): vLLM 0.34 reads static per_tensor or dynamic per_channel")
    inputs_bytes = 4 + 1 if static else 0  # float32 input_scale + int8 input_zero_point
    label = f"int8 {scheme.replace('_', '-')}, {'static per-tensor' if static else 'dynamic per-token'} input"
    if scheme == "per_channel":
        return f"W8A8 {label}", "int8", 1.0, inputs_bytes, 4 + 1, ""
    return f"W8A8 {label}", "int8", 1.0, 4 + 1 + inputs_bytes, 0, ""
