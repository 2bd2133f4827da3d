"""The vision heads an engine splits over tensor parallelism, where a TP size that does not divide them fails at
start: the part shared by SGLang 0.5.23's refusal (engines/sglang_vision_refusal.py) and vLLM 0.34's
(engines/vllm_vision_refusal.py). Each engine's module names, per model_type, the vision_config field holding the
heads and the class that divides them (HeadsTable); a family it pads or builds whole is not in its table. Only a
tower kvplan counts (ModelSpec.weight_vision) is checked, and a vision_config without its heads field is not. The
tower's settings are read where kvplan reads them (configs/vision_towers.py tower_key): vision_config, Qwen-Omni's
thinker_config.vision_config, Phi-3-vision's img_processor (whose tower vLLM builds from settings fixed in code: an
engine passes them as `fixed`). vLLM 0.34's split MLP / merger widths use the same lookup (family_entry).
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

    from ..configs.vision_towers import tower_key

    if not model.weight_vision[0]:
        return None
    raw = raw_config(model) or {}
    model_type = str(raw.get("model_type"))
    key = tower_key(model_type)
    nested = raw.get(key)
    if key == "thinker_config" and isinstance(nested, dict):  # Qwen-Omni: the thinker's vision_config
        nested = nested.get("vision_config")
    return (model_type, nested) if isinstance(nested, dict) else None


def family_entry(model, table: Mapping, fixed: Mapping[str, dict] | None = None):
    """(the model's entry in `table`, the tower's settings) for a tower kvplan counts whose family `table` names
    (a LLaVA by its vision_config model_type); `fixed`: model_type -> the settings an engine builds the tower from
    instead of the config's. None otherwise."""
    found = tower(model)
    if found is None:
        return None
    settings = (fixed or {}).get(found[0], found[1])
    entry = table.get(found[0])
    if isinstance(entry, Mapping):
        entry = entry.get(settings.get("model_type", DEFAULT_VISION_TYPE))
    return None if entry is None else (entry, settings)


def undivides(value: object, tp: int) -> bool:
    """Whether `value` is a positive int that `tp` does not divide (anything else is not checked)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0 and value % tp != 0


def undivided_heads(model, table: HeadsTable, tp: int, fixed: Mapping[str, dict] | None = None
                    ) -> tuple[int, str] | None:
    """(vision heads, the class splitting them) where the model's family is in `table` and `tp` does not divide the
    heads its vision_config (or `fixed`, family_entry) gives; None where it divides them, or nothing is checked."""
    found = family_entry(model, table, fixed) if tp > 1 else None
    if found is None:
        return None
    (key, cls), settings = found
    heads = settings.get(key)
    return (heads, cls) if undivides(heads, tp) else None


def raise_refusal(why: str, hint: str = HINT) -> None:
    """Raise an engine's tower refusal line, with the shared heads hint unless told another."""
    raise UsageError(why, hint)


__all__ = ["DEFAULT_VISION_TYPE", "HINT", "HeadsTable", "family_entry", "raise_refusal", "tower", "undivided_heads",
           "undivides"]
