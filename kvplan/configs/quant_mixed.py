"""Checkpoints that store their quantized linear layers in more than one format, each module in the format its
config names for it (QuantBytes.formats: an ordered tuple of (key, the format's QuantBytes), read module by module by
configs/weight_mixed.py over kvplan's per-module count, configs/weight_tables).

  ModelOpt MIXED_PRECISION   key: a module name of the `quantized_layers` table (hf_quant_config.json's
                             "quantization", else config.json's quantization_config: vLLM 0.34 modelopt.py
                             ModelOptMixedPrecisionConfig._from_config). A module's format (get_quant_method,
                             _resolve_quant_algo): excluded (is_layer_excluded) -> the float dtype; else its own
                             entry, else the first entry under "<name>.", else for routed experts the first under
                             their parent; a linear layer none of these names -> UnquantizedLinearMethod, the
                             float dtype. Each algo stores what resolve() + its QuantKeyScheme create:
                               NVFP4        uint8 [out, in/2] + F8_E4M3 weight_scale [out, in/16] + float32
                                            weight_scale_2 and input_scale (KNvfp4Static, KNvfp4Dynamic)
                               W4A16_NVFP4  the same weight and scales, no input_scale (KNvfp4Static, activation None;
                                            _DROP_INPUT_SCALE drops a legacy one): 4 B per tensor
                               FP8          F8_E4M3 [out, in] + float32 weight_scale and input_scale (KFp8StaticTensor)
                               FP8_PB_WO    F8_E4M3 [out, in] + float32 weight_scale per 128 x 128 block
                                            (KFp8Block128; activation dynamic, no input_scale)
                               MXFP8        F8_E4M3 [out, in] + uint8 E8M0 weight_scale per 32 (KMxfp8Static)
                             Another algo (FP8_PER_CHANNEL_PER_TOKEN, the B12X block codecs) is not sized: the
                             module that names it is refused by name.
  compressed-tensors         key: a target of a config group, in the order vLLM 0.34 compressed_tensors.py
                             _quantization_scheme_map_from_config builds target_scheme_map (group by group); a
                             module's format (get_scheme_dict -> utils.py find_matched_target): its name against
                             each target (config_utils.py is_equal_or_regex_match: equal, or re.match after "re:"),
                             the first that matches; then the class name, which kvplan maps only for "Linear" (every
                             linear layer: the check_contains match of a vLLM *Linear class, and RoutedExperts through
                             _add_fused_moe_to_target_scheme_map); a module no target matches is unquantized. Each
                             group is sized as kvplan sizes a single-format config (quant_bytes._ct_weight) in its own
                             "format" (else the config's).
"""

from __future__ import annotations

import re
from typing import Callable

from .quant_bytes import QuantBytes, Unsized

MODELOPT_MIXED = "ModelOpt MIXED_PRECISION"
COMPRESSED_TENSORS_MIXED = "compressed-tensors"

# vLLM 0.34 modelopt.py: KFp8Block128's 128 x 128 blocks (the MoE side takes group_size, default 128)
_PB_WO_BLOCK = 128


def modelopt_algo_bytes(algo: str, entry: dict, where: str) -> QuantBytes:
    """One quantized_layers entry's format (module doc), sized as kvplan sizes that single format; Unsized naming
    `where` (the module) for an algo kvplan has not read."""
    if algo in ("NVFP4", "W4A16_NVFP4"):
        group = entry.get("group_size", 16)
        if group != 16:  # kvplan's NVFP4 sizing (quant_bytes._modelopt): one F8_E4M3 scale per 16
            raise Unsized(f"ModelOpt MIXED_PRECISION gives {where} {algo} with group_size {group!r}; kvplan sizes "
                          "NVFP4 with one scale per 16 weights")
        # weight_scale_2 (+ input_scale for W4A4), float32 each
        return QuantBytes(f"{algo} (modelopt)", "nvfp4", 0.5 + 1 / 16, keeps_lm_head=False,
                          per_tensor_bytes=8 if algo == "NVFP4" else 4)
    if algo == "FP8":
        return QuantBytes("FP8 (modelopt)", "fp8", 1.0, keeps_lm_head=False, per_tensor_bytes=8)
    if algo == "FP8_PB_WO":
        block = entry.get("group_size", _PB_WO_BLOCK)
        if block != _PB_WO_BLOCK:
            raise Unsized(f"ModelOpt MIXED_PRECISION gives {where} FP8_PB_WO with group_size {block!r}; vLLM 0.34 "
                          "KFp8Block128 reads 128 x 128 blocks")
        return QuantBytes("FP8 128x128 blocks (modelopt)", "fp8", 1 + 4 / (_PB_WO_BLOCK * _PB_WO_BLOCK),
                          keeps_lm_head=False)
    if algo == "MXFP8":
        return QuantBytes("MXFP8 (modelopt)", "mxfp8", 1 + 1 / 32, keeps_lm_head=False)
    raise Unsized(f"ModelOpt MIXED_PRECISION gives {where} quant_algo {algo!r}, whose stored layout kvplan has not "
                  "read (it sizes NVFP4, W4A16_NVFP4, FP8, FP8_PB_WO and MXFP8)")


def modelopt_mixed(inner: dict, excluded, kv_bytes: int, kv_unsized: str, where: str) -> QuantBytes:
    """QuantBytes of a ModelOpt MIXED_PRECISION config (module doc): formats in the table's order, one QuantBytes per
    distinct entry; excluded: the exclusion list, handed on as QuantBytes.exclusions."""
    table = inner.get("quantized_layers")
    if not isinstance(table, dict) or not table or not all(isinstance(v, dict) for v in table.values()):
        raise Unsized("ModelOpt MIXED_PRECISION without a quantized_layers table of module entries (vLLM 0.34 "
                      "ModelOptMixedPrecisionConfig._from_config requires a non-empty one)")
    if excluded is not None and (not isinstance(excluded, list) or not all(isinstance(n, str) for n in excluded)):
        raise Unsized("ModelOpt: its list of unquantized modules is not a list of names")
    sized: dict[tuple, QuantBytes] = {}
    formats = []
    for name, entry in table.items():
        algo = str(entry.get("quant_algo") or "").upper()
        key = (algo, repr(entry.get("group_size")))  # any JSON value: a list or object is refused below, not hashed
        if key not in sized:
            sized[key] = modelopt_algo_bytes(algo, entry, repr(name))
        formats.append((str(name), sized[key]))
    labels = sorted({q.label.split(" (")[0] for q in sized.values()})
    return QuantBytes(f"ModelOpt MIXED_PRECISION{where} ({', '.join(labels)} by module)", "mixed",
                      max(q.bytes_per_weight for q in sized.values()), keeps_lm_head=False,
                      exclusions=("ModelOpt", tuple(excluded or ())), kv_scale_bytes=kv_bytes, unsized=kv_unsized,
                      formats=tuple(formats), formats_style=MODELOPT_MIXED)


def compressed_tensors_mixed(groups: list[tuple[str, QuantBytes, object]], exclusions, head: bool,
                             unsized: str, fmt: str) -> QuantBytes:
    """QuantBytes of a compressed-tensors config whose groups differ in format: groups are (name, the group's
    QuantBytes, its targets) in the config's order; targets in vLLM's target_scheme_map order (module doc)."""
    formats, seen = [], set()
    for name, q, targets in groups:
        if isinstance(targets, str):
            targets = [targets]
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
            raise Unsized(f"compressed-tensors: config group {name!r} has targets {targets!r}, not a list of names")
        for target in targets:
            if target in seen:  # target_scheme_map: a later group's target replaces the earlier one's scheme
                raise Unsized(f"compressed-tensors: target {target!r} is in more than one config group")
            seen.add(target)
            if not target.startswith("re:") and target != "Linear" and "." not in target and target[:1].isupper():
                raise Unsized(f"compressed-tensors: config group {name!r} targets the module class {target!r}, which "
                              "kvplan's per-module count does not map to module names (it maps 'Linear')")
            formats.append((target, q))
    labels = " / ".join(dict.fromkeys(q.label for _, q, _ in groups))
    return QuantBytes(f"compressed-tensors {fmt} ({labels}, by module)", "mixed",
                      max(q.bytes_per_weight for _, q, _ in groups), keeps_lm_head=head, exclusions=exclusions,
                      unsized=unsized, formats=tuple(formats), formats_style=COMPRESSED_TENSORS_MIXED)


def mixed_entry(table: dict, names: list[str], experts: bool):
    """ModelOptMixedPrecisionConfig._resolve_quant_algo's entry for a module spelled `names` (vLLM 0.34 modelopt.py):
    the name itself, else the first key under "<name>.", else for routed experts the first key under their parent
    ("...mlp."); None where no key names it. Its packed-layer and fused-shard lookups (qkv_proj, gate_up_proj) are
    not modelled: kvplan names modules as the checkpoint does."""
    hit = next((table[n] for n in names if n in table), None)
    unders = [f"{n}." for n in names] + ([n.rsplit(".experts", 1)[0] + "." for n in names] if experts else [])
    for dot in unders:
        if hit is None:
            hit = next((info for key, info in table.items() if key.startswith(dot)), None)
    return hit


def target_matches(value: str, target: str, contains: bool = False) -> bool:
    """vLLM 0.34 utils/config_utils.py is_equal_or_regex_match, as compressed-tensors' find_matched_target asks it:
    re.match after "re:", else equal (or, for a class name, contained)."""
    if target.startswith("re:"):
        return re.match(target[3:], value) is not None
    return target.lower() in value.lower() if contains else target == value


def format_of(q: QuantBytes) -> Callable[[list[str], bool, bool], QuantBytes | None]:
    """A lookup (a module's names, whether it is routed experts, whether it is a linear layer) -> the format it is
    stored in, None for the float dtype (module doc)."""
    if q.formats_style == MODELOPT_MIXED:
        table = dict(q.formats)
        return lambda names, experts, linear: mixed_entry(table, names, experts)

    def lookup(names: list[str], experts: bool, linear: bool):
        for name in names:  # find_matched_target: the layer's name first, against every target in order
            for target, fq in q.formats:
                if target_matches(name, target):
                    return fq
        return next((fq for target, fq in q.formats if target == "Linear"), None) if linear else None

    return lookup
