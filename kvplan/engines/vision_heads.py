"""The vision heads an engine splits over tensor parallelism, where a TP size that does not divide them fails at
start: the part shared by SGLang 0.5.23's refusal (engines/sglang_vision_refusal.py) and vLLM 0.34's
(engines/vllm_vision_refusal.py). Each engine's module names, per model_type, the vision_config field holding the
heads and the class that divides them (HeadsTable); a family it pads or builds whole is not in its table. Only a
tower kvplan counts (ModelSpec.weight_vision) is checked, and a vision_config without its heads field is not.
"""

from __future__ import annotations

from typing import Mapping, Union

from ..errors import UsageError

# model_type -> (the vision_config field of the heads, the class splitting them), or, for a wrapper whose tower
# class depends on the vision_config (LLaVA), vision_config model_type -> that pair
Entry = tuple[str, str]
HeadsTable = Mapping[str, Union[Entry, Mapping[str, Entry]]]

HINT = "choose a --tp that divides the vision heads, or plan the text model alone with --set vision_config=null"
# transformers 5.25 LlavaConfig / LlavaNextConfig: a vision_config without model_type is CLIP's
DEFAULT_VISION_TYPE = "clip_vision_model"


def tower(model) -> tuple[str, dict] | None:
    """(model_type, vision_config) of a model whose tower kvplan counts; None otherwise."""
    from .vllm_load import raw_config

    if not model.weight_vision[0]:
        return None
    raw = raw_config(model) or {}
    nested = raw.get("vision_config")
    return (str(raw.get("model_type")), nested) if isinstance(nested, dict) else None


def undivided_heads(model, table: HeadsTable, tp: int) -> tuple[int, str] | None:
    """(vision heads, the class splitting them) where the model's family is in `table` and `tp` does not divide the
    heads its vision_config gives; None where it divides them, or nothing is checked."""
    found = tower(model)
    if found is None or tp <= 1:
        return None
    entry = table.get(found[0])
    if isinstance(entry, Mapping):
        entry = entry.get(found[1].get("model_type", DEFAULT_VISION_TYPE))
    if entry is None:
        return None
    key, cls = entry
    heads = found[1].get(key)
    if not isinstance(heads, int) or isinstance(heads, bool) or heads <= 0 or heads % tp == 0:
        return None
    return heads, cls


def raise_refusal(why: str) -> None:
    """Raise an engine's heads refusal line, with the shared hint."""
    raise UsageError(why, HINT)


__all__ = ["DEFAULT_VISION_TYPE", "HINT", "HeadsTable", "raise_refusal", "tower", "undivided_heads"]
