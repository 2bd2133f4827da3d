"""Bytes of a torchao checkpoint (quant_method "torchao"), read as vLLM 0.34 torchao.py TorchAOConfig reads its config.

transformers (5.x quantizers/quantizer_torchao.py) saves a torchao model with torchao's
prototype/safetensors/safetensors_support.py flatten_tensor_state_dict: each quantized weight becomes one
safetensors tensor per tensor-data attribute of its tensor subclass (`<module>._weight_qdata`, `_weight_scale`,
`_weight_zero_point` ...: tensor_data_names plus the optional ones that are set). The config names the torchao config
that made them: quant_type {"default": {"_type": ..., "_version": ..., "_data": {...}}} (torchao core/config.py
config_to_dict: "_version" is the config's `version`). Layouts read from torchao 0.18.0:

  Int8WeightOnlyConfig v2       Int8Tensor.from_hp (quantize_/workflows/int8/int8_tensor.py): int8 qdata [out, in],
                                float32 scale and int8 zero_point (choose_qparams_affine, symmetric: zeros, kept)
                                per block: PerRow one per output row, PerTensor one a tensor, PerGroup(g) one per g
  Float8DynamicActivation-      Float8Tensor.from_hp (float8/float8_tensor.py), packing_format plain: float8_e4m3fn
  Float8WeightConfig v2         qdata [out, in], float32 scale (_choose_scale_float8) per tensor (the default,
                                PerTensor), per output row (PerRow) or per [a, b] block (PerBlock); the activation
                                scale is dynamic (not stored)
  Int4WeightOnlyConfig v2,      Int4Tensor.from_hp (int4/int4_tensor.py): qdata two values a byte [out, in / 2],
  int4_packing_format plain     scale and zero_point [in / g, out] in the weight's dtype (2 B in BF16 / FP16)

Refused: version 1 configs (torchao's AffineQuantizedTensor layouts, removed from these configs by 0.18.0), the
other int4 packing formats (tile_packed_to_4d pads each weight to a multiple of 1024 inputs and ntile outputs,
so its bytes follow each module's shape; preshuffled and plain_int32 are kernel-specific layouts kvplan has not
read), the other configs, and a ModuleFqnToConfig table that gives some modules a config other than its "_default"
(one whose entries are all "_default"'s config or None is read as that config with those modules kept).

Which modules: vLLM 0.34 TorchAOConfig.get_quant_method quantizes LinearBase layers only, so the routed experts
(FusedMoE), the embeddings and the LM head (VocabParallelEmbedding) stay in the float dtype; transformers likewise
quantizes nn.Linear weights only (TorchAoHfQuantizer.param_needs_quantization; MoE experts are fused 3-D parameters
there). modules_to_not_convert and a ModuleFqnToConfig's None entries are matched as vLLM 0.34 matches them
(configs/quant_exclude.py). A linear whose shape
the config cannot take (Int4: in not a multiple of g, _int4_weight_only_quantize_tensor; Float8: _fp8_mm_compat)
is left unquantized by torchao; kvplan counts every linear as quantized.
"""

from __future__ import annotations

from .quant_bytes import QuantBytes, Unsized, _positive_int
from .quant_exclude import TORCHAO


def read(q: dict) -> QuantBytes:
    types = q.get("quant_type")
    # vLLM 0.34 TorchAOConfig.from_config: exactly one key, "default" (a string quant_type is transformers' old form)
    if not isinstance(types, dict) or list(types) != ["default"] or not isinstance(types["default"], dict):
        raise Unsized(f"torchao quant_type {types!r}: vLLM 0.34 reads a table with one key, 'default', holding a "
                      "serialized torchao config")
    cfg = types["default"]
    kind, version, data = cfg.get("_type"), cfg.get("_version", 1), _data(cfg)
    skip: list[str] = []
    if kind in ("ModuleFqnToConfig", "FqnToConfig"):
        cfg, skip = _one_config(kind, data)
        kind, version, data = cfg.get("_type"), cfg.get("_version", 1), _data(cfg)
    if kind not in _SIZED:
        raise Unsized(f"torchao {kind!r}: kvplan has read Int8WeightOnlyConfig, "
                      "Float8DynamicActivationFloat8WeightConfig and Int4WeightOnlyConfig (torchao 0.18.0)")
    if version != 2:
        raise Unsized(f"torchao {kind} version {version!r}: kvplan has read version 2's tensor layouts (version 1 "
                      "stored torchao's AffineQuantizedTensor, which 0.18.0 no longer makes)")
    label, dtype, size, scalars, rows = _SIZED[kind](data)
    listed = q.get("modules_to_not_convert") or []
    if not isinstance(listed, list) or not all(isinstance(n, str) for n in listed):
        raise Unsized("torchao: modules_to_not_convert is not a list of names")
    skip = listed + skip
    # the head is never quantized by vLLM 0.34 (not a LinearBase); the list is read module by module, as the routed
    # experts stay unquantized too (quant_exclude.Matcher, style TORCHAO)
    return QuantBytes(f"torchao {label}", dtype, size, keeps_lm_head=True, exclusions=(TORCHAO, tuple(skip)),
                      per_tensor_bytes=scalars, per_output_row_bytes=rows)


def _data(cfg: dict) -> dict:
    """A serialized config's fields ("_data", a table: torchao core/config.py config_to_dict); absent: none set."""
    data = cfg.get("_data", {})
    if not isinstance(data, dict):
        raise Unsized(f"torchao {cfg.get('_type')!r} _data {data!r} is not a table of the config's fields")
    return data


def _one_config(kind: str, data: dict) -> tuple[dict, list[str]]:
    """(the one config, the names it leaves unquantized) of a ModuleFqnToConfig (torchao 0.18.0 FqnToConfig: the table
    is fqn_to_config, or module_fqn_to_config for the older name), read as vLLM 0.34 TorchAOConfig does: a module
    takes its exact name's entry, else the first `re:` pattern that fully matches it, else "_default"; an entry of None
    leaves the module unquantized (from_config adds the name to skip_modules). Sized when every entry is "_default"'s
    config or None."""
    table = data.get("fqn_to_config") or data.get("module_fqn_to_config")
    if not isinstance(table, dict) or not isinstance(table.get("_default"), dict):
        raise Unsized(f"torchao {kind} without a '_default' config: it quantizes only the modules it names, which "
                      "kvplan does not split")
    default = table["_default"]
    skip = []
    for name, cfg in table.items():
        if cfg is None:
            skip.append(name)
        elif cfg != default:
            raise Unsized(f"torchao {kind} gives {name!r} a config of its own, and kvplan sizes one config for every "
                          "quantized linear")
    # an exact entry, or an earlier pattern, with a config wins over a None pattern in vLLM: not read
    if any(n.startswith("re:") for n in skip) and any(c is not None and n != "_default" for n, c in table.items()):
        raise Unsized(f"torchao {kind} mixes `re:` entries of None with entries that quantize, whose precedence "
                      "(exact name, then the first full match) kvplan does not follow")
    return default, skip


def _granularity(value, default: str) -> tuple[str, dict]:
    if value is None:
        return default, {}
    if not isinstance(value, dict) or not isinstance(value.get("_type"), str):
        raise Unsized(f"torchao granularity {value!r} is not a serialized granularity")
    return value["_type"], value.get("_data") if isinstance(value.get("_data"), dict) else {}


def _int8_weight_only(data: dict) -> tuple[str, str, float, int, int]:
    """int8 qdata + a float32 scale and an int8 zero_point per block of the granularity."""
    if data.get("group_size") is not None:
        raise Unsized("torchao Int8WeightOnlyConfig with group_size: version 2 takes granularity only")
    kind, g = _granularity(data.get("granularity"), "PerRow")
    if kind == "PerRow":
        return "Int8WeightOnly (per row)", "int8", 1.0, 0, 4 + 1
    if kind == "PerTensor":
        return "Int8WeightOnly (per tensor)", "int8", 1.0, 4 + 1, 0
    if kind == "PerGroup":
        group = _positive_int(g.get("group_size"), "PerGroup group_size", "torchao")
        return f"Int8WeightOnly (group {group})", "int8", 1 + (4 + 1) / group, 0, 0
    raise Unsized(f"torchao Int8WeightOnlyConfig granularity {kind!r}: torchao 0.18.0 takes PerTensor, PerRow or "
                  "PerGroup")


def _float8_dynamic(data: dict) -> tuple[str, str, float, int, int]:
    """float8_e4m3fn qdata + a float32 scale per tensor, row or block of the weight's granularity."""
    packing = data.get("packing_format")
    packing = packing.get("_data") if isinstance(packing, dict) else packing
    if packing is not None and str(packing).lower() != "plain":
        raise Unsized(f"torchao Float8DynamicActivationFloat8WeightConfig packing_format {packing!r}: kvplan has "
                      "read the plain Float8Tensor layout")
    weight_dtype = data.get("weight_dtype")
    weight_dtype = weight_dtype.get("_data") if isinstance(weight_dtype, dict) else weight_dtype
    if weight_dtype is not None and weight_dtype not in ("float8_e4m3fn", "float8_e5m2"):
        raise Unsized(f"torchao float8 weight_dtype {weight_dtype!r} is not a float8 dtype")
    granularity = data.get("granularity")
    weight = granularity[-1] if isinstance(granularity, list) and granularity else granularity
    kind, g = _granularity(weight, "PerTensor")  # _normalize_granularity: None is PerTensor for both
    if kind == "PerTensor":
        return "Float8 dynamic activation, float8 weight (per tensor)", "fp8", 1.0, 4, 0
    if kind == "PerRow":
        return "Float8 dynamic activation, float8 weight (per row)", "fp8", 1.0, 0, 4
    if kind == "PerBlock":
        block = g.get("block_size")
        if not isinstance(block, list) or len(block) != 2:
            raise Unsized(f"torchao float8 PerBlock block_size {block!r}, not [rows, columns]")
        a, b = (_positive_int(x, "PerBlock block_size", "torchao") for x in block)
        return f"Float8 dynamic activation, float8 weight ({a}x{b} blocks)", "fp8", 1 + 4 / (a * b), 0, 0
    raise Unsized(f"torchao Float8DynamicActivationFloat8WeightConfig weight granularity {kind!r}: kvplan has read "
                  "PerTensor, PerRow and PerBlock")


def _int4_weight_only(data: dict) -> tuple[str, str, float, int, int]:
    """Int4Tensor (plain): 4-bit values two a byte + a 16-bit scale and zero_point per group of inputs."""
    packing = data.get("int4_packing_format")
    packing = packing.get("_data") if isinstance(packing, dict) else packing
    packing = "plain" if packing is None else str(packing).lower()
    if packing != "plain":
        raise Unsized(f"torchao Int4WeightOnlyConfig int4_packing_format {packing!r}: kvplan has read the plain "
                      "Int4Tensor layout (tile_packed_to_4d pads each weight to a multiple of 1024 inputs, so its "
                      "bytes follow each module's shape; preshuffled and plain_int32 are not read)")
    group = _positive_int(data.get("group_size", 128), "group_size", "torchao")
    return f"Int4WeightOnly (plain, group {group})", "int4", 0.5 + (2 + 2) / group, 0, 0


_SIZED = {"Int8WeightOnlyConfig": _int8_weight_only,
          "Float8DynamicActivationFloat8WeightConfig": _float8_dynamic,
          "Int4WeightOnlyConfig": _int4_weight_only}
