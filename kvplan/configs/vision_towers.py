"""The vision tower and multimodal projector of an image-text wrapper, counted from its vision_config.

kvplan's parameter count is the text model's (configs/params*.py); a wrapper's checkpoint also holds the image
encoder and the projector into the text model, and vLLM 0.34 loads them on every GPU unless images are off. This
module counts them module by module as transformers 5.25 builds them, for the families below (one counter a
wrapper model_type, VISION_TOWERS), and says which of their parameters vLLM 0.34 holds whole on every TP rank
(configs/vision_count.py: the TP rule, under its default `mm_encoder_tp_mode` "weights").

vLLM 0.34 skips the modules a model builds under `_mark_tower_model` (models/interfaces.py SupportsMultiModal:
StageMissingLayer) when `--limit-mm-per-prompt` is 0 for every image modality or `--language-model-only` is set
(config/multimodal.py MultiModalConfig.get_limit_per_prompt answers 0), and on every pipeline stage but the first.
Every family here builds its tower and projector under it. Llama 3.2 Vision (mllama), which no vLLM after 0.10.1
builds, is split as SGLang 0.5.23 builds it (SPLIT_BY). Plan such a start with `--set vision_config=null`
(docs/weights.md): a config without a vision_config counts no tower.

A wrapper whose config has no vision_config object counts none: Gemma4Config's is optional (no tower; kvplan's
bundled gemma-4-31b keeps only text_config), and for the others a checkpoint saved by save_pretrained always writes
the one its class builds.

Where the counters are (one module a tower family; this one holds the registry and vision_tower()):
vision_count.py (Tower, _Count, NotCounted, the shared layer builders), vision_clip.py (CLIP, SigLIP, LLaVA,
Phi-3-vision, MiniCPM-V / -o, Kimi-VL), vision_qwen.py (Qwen2.5-VL, Qwen3-VL / 3.5, Qwen-Omni, GLM-4.1V / 4.5V),
vision_llama.py (Llama 4, Llama 3.2 Vision, Mistral 3 / Pixtral), vision_gemma.py (Gemma 3, 4, 3n; the MobileNetV5
and Conformer arithmetic in vision_gemma3n.py), vision_internvl.py (InternViT wrappers), vision_phi4mm.py
(Phi-4-multimodal).
"""

from __future__ import annotations

from typing import Callable

from ..errors import ConfigError
from .fields import Fields
from .vision_clip import _SIGLIP, clip, kimi_vl, llava, minicpmo, minicpmv, phi3_v, siglip
from .vision_count import Linear, NotCounted, Tower, _Count
from .vision_gemma import gemma3, gemma3n, gemma4
from .vision_internvl import internvl
from .vision_llama import llama4, mistral3, mllama
from .vision_phi4mm import phi4mm
from .vision_qwen import glm4v, qwen2_5_vl, qwen3_vl, qwen_omni

__all__ = [  # with the registry's counters, the names other modules imported from here before the split (session 27)
    "Linear", "NESTED_KEY", "NotCounted", "SPLIT_BY", "Tower", "VISION_TOWERS", "clip", "siglip", "tower_key",
    "vision_tower",
]


# the wrapper's model_type -> its counter; a wrapper not listed keeps the text model's count, with a note
VISION_TOWERS: dict[str, Callable[[dict, Fields, Fields], tuple[_Count, str]]] = {
    "gemma3": gemma3,
    "gemma4": gemma4,
    "gemma3n": gemma3n,
    "qwen2_5_vl": qwen2_5_vl,
    "qwen3_vl": qwen3_vl,
    "qwen3_vl_moe": qwen3_vl,
    "qwen3_5": qwen3_vl,
    "qwen3_5_moe": qwen3_vl,
    "llama4": llama4,
    "mistral3": mistral3,
    "llava": llava,
    "llava_next": llava,
    "mllama": mllama,
    "internvl_chat": internvl,
    "internvl": internvl,
    "NVLM_D": internvl,
    "h2ovl_chat": internvl,
    "skywork_chat": internvl,
    "kimi_vl": kimi_vl,
    "glm4v": glm4v,
    "glm4v_moe": glm4v,
    "phi3_v": phi3_v,
    "minicpmv": minicpmv,
    "minicpmo": minicpmo,
    "phi4mm": phi4mm,
    "qwen2_5_omni": qwen_omni,
    "qwen3_omni_moe": qwen_omni,
}


# wrapper architectures whose names do not end in ForConditionalGeneration (vLLM 0.34 registry.py)
_WRAPPER_CLASSES = {"InternVLChatModel", "Phi3VForCausalLM", "MiniCPMV", "Qwen2_5OmniModel", "NVLM_D", "H2OVLChatModel",
                    "SkyworkR1VChatModel", "MiniCPMO", "Phi4MMForCausalLM"}


# a wrapper whose tower's settings are not in vision_config -> the key that holds them (Phi-3-vision: img_processor)
NESTED_KEY = {"phi3_v": "img_processor", "phi4mm": "embd_layer", "qwen2_5_omni": "thinker_config",
              "qwen3_omni_moe": "thinker_config"}


# a wrapper vLLM 0.34 does not build -> the engine whose TP split its `whole` follows, for the note
SPLIT_BY = {"mllama": "vLLM 0.34 builds no Mllama (registry.py: last in 0.10.1); SGLang 0.5.23 mllama.py"}


def tower_key(model_type: object) -> str:
    """The config key a wrapper's tower is read from, whose null drops it (`--set KEY=null`)."""
    return NESTED_KEY.get(model_type, "vision_config")


def vision_tower(raw: dict, f: Fields) -> Tower | None:
    """The tower and projector of the wrapper `raw` (f: its text model's fields), None where the config has no
    vision_config (null), the wrapper is not one kvplan counts, or its architecture is a text-only class (a
    Gemma3ForCausalLM on a gemma3 config builds no tower). Raises NotCounted for a valid vision_config it does not
    count, ConfigError for a malformed one (not an object, a field of the wrong type or range)."""
    counter = VISION_TOWERS.get(raw.get("model_type"))
    key = tower_key(raw.get("model_type"))
    nested = raw.get(key)
    if counter is None or nested is None:
        return None
    if not isinstance(nested, dict):  # transformers 5.25 refuses it too (the config class's field type)
        raise ConfigError(f"{f.source}: {key!r} must be an object, or null for no tower, got {nested!r} "
                          f"(model_type {raw.get('model_type')!r})")
    arch = raw.get("architectures")
    first = arch[0] if isinstance(arch, list) and arch else None
    if isinstance(first, str) and not first.endswith("ForConditionalGeneration") and first not in _WRAPPER_CLASSES:
        return None
    defaults = _SIGLIP if raw.get("model_type") == "gemma3" else None
    source = f"{f.source}: {key}"
    v = Fields(nested, source, defaults, model_type=str(nested.get("model_type", raw.get("model_type"))))
    try:
        c, what = counter(raw, f, v)
    except NotCounted:
        raise
    except ConfigError as exc:  # a field of the vision_config: --set reaches it only as the whole object
        if not exc.message.startswith(source):
            raise
        raise ConfigError(exc.message, f"fix the config's {key}, or pass --set {key}=null to plan the text model "
                          "alone") from None
    return Tower(c.params, c.whole, what, SPLIT_BY.get(raw.get("model_type"), ""), key, tuple(c.linears))
