"""The reading of an NVIDIA ModelOpt checkpoint's quantization config shared by both engines' width refusals
(engines/vllm_widths_quant.py, engines/sglang_widths_quant.py): its quant_algo, its moe_quant_algo, its number of
layers and which modules its exclusion list leaves unquantized. No engine rule lives here: each engine's module says
which algos it checks and what a quantized module must satisfy.

Where the fields come from (vllm 0.34.0 wheel, vllm/model_executor/layers/quantization/modelopt.py):
ModelOptQuantConfigBase.from_config reads hf_quant_config.json's nested "quantization" (quant_algo,
exclude_modules, moe_quant_algo) and otherwise config.json's quantization_config (quant_algo, ignore, else
exclude_modules); is_layer_excluded matches a module's name against the list with fnmatch wildcards and, for the
older exports, as a plain substring. SGLang's own is_layer_excluded is not compared: its module says so.

quant_algo MIXED_PRECISION (ModelOptMixedPrecisionConfig._from_config): the per-module algos are the
"quantized_layers" mapping (module name -> {"quant_algo": ...}) of hf_quant_config.json's "quantization", else of
config.json's quantization_config. get_quant_method serves an excluded module unquantized, then asks
_resolve_quant_algo: the name itself (and its language_model.model. / model.language_model. spelling:
_quantized_layer_prefix_candidates), then the first key under "<name>.", then, for routed experts ("...experts"),
the first key under their parent ("...mlp."); a linear none of these names is served unquantized. Its packed-layer
and fused-shard lookups (qkv_proj, gate_up_proj) are not modelled: no rule here reads those layers. The names
apply_vllm_mapper rewrites per model (hf_to_vllm_mapper) are not modelled beyond those two spellings.
"""

from __future__ import annotations

from typing import Callable, Collection, NamedTuple

from .fp8_blocks import config_int as _int


class ModelOpt(NamedTuple):
    """A ModelOpt checkpoint's quant_algo and moe_quant_algo (upper case, "" where absent), what its config leaves
    unquantized (excluded: a module name -> bool) and its number of layers."""
    algo: str
    moe_algo: str
    excluded: Callable[[str], bool]
    layers: int
    quantized_layers: dict | None = None  # MIXED_PRECISION: module name -> {"quant_algo": ...}


def modelopt(model, raw: dict, algos: Collection[str]) -> ModelOpt | None:
    """The ModelOpt config of a checkpoint vLLM 0.34 serves with a ModelOpt config (configs/quant_online.py
    vllm_method: modelopt / modelopt_fp4 / modelopt_mxfp8 / modelopt_mixed) whose quant_algo is one of `algos`;
    None for another method, online quantization, another algo, or an exclusion list kvplan cannot match (single
    experts)."""
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from ..configs.quant_bytes import Unsized
    from ..configs.quant_exclude import MODELOPT, Matcher
    from ..configs.quant_online import vllm_method

    # the config's method itself, not pre_ampere.py served_quantization: kvplan sizes no FP8_PB_WO weights (its
    # weight_dtype stays the float one), which vLLM still serves quantized
    q = checkpoint_quantization_config(raw) or {}
    if getattr(model, "online_quantization", "") or not str(
            vllm_method(q, str(raw.get("model_type") or "")) or "").startswith("modelopt"):
        return None
    inner = q["quantization"] if isinstance(q.get("quantization"), dict) else None
    algo = str((inner or q).get("quant_algo") or "").upper()
    # ModelOptQuantConfigBase.from_config: hf_quant_config.json's exclude_modules, else config.json's ignore
    names = inner.get("exclude_modules", []) if inner is not None else q.get("ignore", q.get("exclude_modules", []))
    if algo not in algos or not isinstance(names, list):
        return None
    per_layer = (inner or q).get("quantized_layers") if algo == "MIXED_PRECISION" else None
    if algo == "MIXED_PRECISION" and (not isinstance(per_layer, dict) or not per_layer or not all(
            isinstance(v, dict) for v in per_layer.values())):
        return None  # _from_config raises on an empty mapping; a malformed one is not read
    names = tuple(str(n) for n in names)
    try:
        matcher = Matcher(MODELOPT, names)
    except Unsized:
        return None

    def excluded(name: str) -> bool:  # is_layer_excluded: wildcards, and the substring match older exports need
        return matcher(name) or any(n in name for n in names)

    # moe_quant_algo: read from the "quantization" layout only (ModelOptMxFp8Config)
    moe = str((inner or {}).get("moe_quant_algo") or "").upper()
    return ModelOpt(algo, moe, excluded, _int(raw, "num_hidden_layers") or 1, per_layer)


# the module names a layer's modules take in a text model and in a multimodal model's language model
_LAYER_PREFIXES = ("model.layers", "language_model.model.layers", "model.language_model.layers")


def quantized(mo: ModelOpt, module: str, layers: range) -> bool:
    """Whether ModelOpt quantizes `module` (model.layers.<i>.<module>) in some layer of `layers`: an excluded one is
    served unquantized (ModelOptQuantConfigBase.get_quant_method: UnquantizedLinearMethod), unchecked; a layer any
    spelling of whose name is excluded counts as excluded."""
    return any(not any(mo.excluded(f"{pre}.{i}.{module}") for pre in _LAYER_PREFIXES) for i in layers)


def _mixed_algo(table: dict, names: list[str], experts: bool) -> str | None:
    """ModelOptMixedPrecisionConfig._resolve_quant_algo for a module spelled `names` (its _LAYER_PREFIXES
    spellings, which cover _quantized_layer_prefix_candidates): the entry configs/quant_mixed.py mixed_entry finds
    (the name, else the first key under "<name>.", else for routed experts the first key under their parent)."""
    from ..configs.quant_mixed import mixed_entry

    hit = mixed_entry(table, names, experts)
    if hit is None:
        return None
    return str(hit.get("quant_algo") or "").upper() or None


def module_algos(mo: ModelOpt, module: str, layers: range) -> set[str]:
    """The quant_algos ModelOpt serves `module` (model.layers.<i>.<module>) with over `layers`, excluded ones left
    out (quantized): the config's quant_algo, or under MIXED_PRECISION each layer's (module doc); empty where no
    layer's is quantized."""
    if mo.quantized_layers is None:
        return {mo.algo} if quantized(mo, module, layers) else set()
    found = set()
    for i in layers:
        names = [f"{pre}.{i}.{module}" for pre in _LAYER_PREFIXES]
        if any(mo.excluded(n) for n in names):
            continue
        algo = _mixed_algo(mo.quantized_layers, names, module.endswith("experts"))
        if algo:
            found.add(algo)
    return found


__all__ = ["ModelOpt", "module_algos", "modelopt", "quantized"]
