"""The vision tower on one GPU as SGLang 0.5.23 splits it under plain --tp, where it differs from vLLM 0.34's split.

kvplan's tower (configs/vision_towers.py, ModelSpec.weight_vision; a tensor table's "vision" parts) is split as vLLM
0.34 splits it; SGLang's plan starts from that figure (sglang_report._stage_weights) and corrects it here with the
family's rule in weights/vision_tp.py SGLANG_TOWERS: the modules SGLang holds whole where vLLM splits them and the
reverse, and what SGLang adds (dummy heads, padded rows), on the first pipeline stage (the tower's). Sized from the
config.json (the config estimate's tower) or from the tensor table's names (roles.fold: Weights.vision_sglang; the
added parameters at the config's float width). Under attention DP engines/sglang_dp_vision.py places the tower
instead (nothing here); under the engine's online quantization nothing is corrected (noted).
"""

from __future__ import annotations

from .sglang_whole import SglangWhole

_MIB = 2**20


def tower_fields(model, raw: dict):
    """(the text model's hidden size as Fields, the tower's config as Fields) for the rule's `moves`."""
    from ..configs.fields import Fields
    from ..configs.vision_towers import tower_key

    key = tower_key(raw.get("model_type"))
    nested = raw.get(key)
    if not isinstance(nested, dict):
        return None
    source = f"{model.name}: {key}"
    text = Fields({"hidden_size": model.hidden_size}, model.name)
    return text, Fields(nested, source, None, model_type=str(nested.get("model_type", raw.get("model_type"))))


def tower_delta(model, record, tp: int, pp: int = 1, dp: int = 1, served_16bit: bool = False) -> SglangWhole | None:
    """Bytes SGLang 0.5.23 holds on one GPU of each stage beyond kvplan's vLLM-split tower, with the plan's note; None
    where the model has no tower kvplan sizes, or under attention DP (dp > 1). record: the weights as the plan
    holds them; served_16bit: a float32 checkpoint served at 2 B (sglang_report.served_16bit)."""
    from ..capacity.weights import vision_bytes, vision_split_bytes, vision_whole_bytes
    from ..errors import ConfigError
    from ..weights.vision_tp import SGLANG_TOWERS
    from .vllm_load import raw_config

    if dp > 1 or record is None:
        return None
    total = vision_bytes(record)
    if not total:
        return None
    whole, zero = vision_whole_bytes(record), (0,) * pp
    raw = raw_config(model) or {}
    family = raw.get("model_type") or model.model_type
    rule = SGLANG_TOWERS.get(family)
    if family == "mllama":  # counted as SGLang's mllama.py builds it already (configs/vision_towers.py SPLIT_BY)
        return None
    if rule is None:
        return SglangWhole(zero, f"the vision tower split over TP as vLLM 0.34 splits it: SGLang 0.5.23's model file "
                                 f"for model_type {family!r} was not read for its tower")
    if model.weight_vision_quantized[0]:
        return SglangWhole(zero, f"the vision tower split as vLLM splits it: SGLang's split ({rule.source}) not "
                                 "corrected under online quantization")
    fields = tower_fields(model, raw) if raw else None
    if fields is None or not model.weight_vision[0]:
        return SglangWhole(zero, f"the vision tower split as vLLM splits it: SGLang's split ({rule.source}) not "
                                 "corrected without the config.json's counted tower at hand")
    try:
        moves = rule.moves(raw, *fields, tp)
    except ConfigError as exc:
        return SglangWhole(zero, f"the vision tower split as vLLM splits it: SGLang's split ({rule.source}) not "
                                 f"corrected ({exc.message})")
    width = 2 if served_16bit else model.weight_vision[1] // model.weight_vision[0]
    uncounted_whole = uncounted_split = 0
    if record.parts:  # the moved tensors by name (roles.fold), the added parameters at the config's width
        to_whole, to_split = record.vision_sglang
    else:  # and the modules a config's count of vLLM's tower leaves out (a table holds them)
        to_whole, to_split = moves.whole * width, moves.split * width
        uncounted_whole, uncounted_split = (n * width for n in moves.uncounted)
    before = vision_split_bytes(record, tp)
    held = whole + to_whole - to_split + moves.added_whole * width + uncounted_whole
    split = total - whole - to_whole + to_split + moves.added * width + uncounted_split
    after = held + -(-split // tp)
    delta = after - before
    select = raw.get("select_layer", -1) if family == "internvl_chat" else -1
    cut = select not in (-1, (raw.get("vision_config") or {}).get("num_hidden_layers", 0) - 1)
    if not delta and tp == 1 and not cut:
        return None
    how = (f"{'+' if delta >= 0 else '-'} {abs(delta) / _MIB:,.1f} MiB a GPU against vLLM's split" if delta else
           "the same bytes a GPU as vLLM's split")
    if cut:  # internvl.py InternVLChatModel builds InternVisionModel(config.vision_config): every layer
        how += (f"; SGLang builds every InternViT layer whatever select_layer ({select}) says: the layers past it, "
                "which vLLM leaves out, are counted" + ("" if record.parts else " from the config"))
    return SglangWhole((delta,) + zero[1:], f"the vision tower as SGLang 0.5.23 splits it over TP {tp} "
                                            f"({rule.source}): {how}")


def whole_tower(model, record, tp: int, pp: int = 1, served_16bit: bool = False) -> SglangWhole | None:
    """--mm-enable-dp-encoder (engines/sglang_groups.py encoder_whole): the tower as SGLang builds it at TP 1
    (tower_delta's rule at tp 1: its padded rows and columns) on every GPU of the first stage, against kvplan's split
    over tp (the attention TP group under attention DP); None where the model has no tower kvplan sizes."""
    from ..capacity.weights import vision_bytes, vision_split_bytes

    total = vision_bytes(record) if record is not None else 0
    if not total:
        return None
    at_one = tower_delta(model, record, 1, pp, 1, served_16bit)
    built = total + (at_one.stage_bytes[0] if at_one is not None else 0)
    delta = built - vision_split_bytes(record, tp)
    return SglangWhole((delta,) + (0,) * (pp - 1),
                       f"--mm-enable-dp-encoder: the vision tower whole on every GPU (use_data_parallel: parallel_group "
                       f"\"replicated\"), {built / _MIB:,.1f} MiB, {'+' if delta >= 0 else '-'} "
                       f"{abs(delta) / _MIB:,.1f} MiB a GPU against vLLM's split over TP {tp}")


__all__ = ["tower_delta", "tower_fields", "whole_tower"]
