"""Which family reads a config dict, and the fields it reads (resolve): the model_type or architecture's family,
a wrapper's nested text model (`text_config`, or the family's own key: `llm_config`, `language_config`; a wrapper
in a wrapper: Qwen-Omni's thinker_config), the fields a wrapper passes down, and the config's architectures and
auto_map class. An unknown model_type goes to kvplan.configs.unknown_types (read generically or refused)."""

from __future__ import annotations

from ..errors import ConfigError
from .family import Family
from .families import BY_ARCHITECTURE, FAMILIES, GENERIC, REFUSED, REFUSED_ARCHITECTURES
from .fields import Fields
from .unknown_types import check_generic

_INHERITED = ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings", "architectures")
# Fields where the wrapper's own value, when it writes one, beats the nested text config's. tie_word_embeddings:
# the head is the wrapper's (transformers 5.25 PreTrainedModel.get_expanded_tied_weights_keys reads the config of
# the class holding lm_head and _tied_weights_keys, e.g. Qwen3VLMoeForConditionalGeneration with Qwen3VLMoeConfig);
# vLLM 0.34 VllmConfig.with_hf_config (config/vllm.py) copies a multimodal hf_config's tie_word_embeddings into the
# text config the language model is built from; SGLang 0.5.23 Qwen3VLForConditionalGeneration.__init__
# (models/qwen3_vl.py) does the same for Qwen3-VL-MoE / Qwen3-Omni. transformers 5 dumps of Qwen3-VL-MoE write
# text_config.tie_word_embeddings true (Qwen3VLMoeTextConfig's default) beside the wrapper's false, and the
# checkpoint ships lm_head.weight.
_WRAPPER_WINS = ("tie_word_embeddings",)
_DTYPE_NAMES = ("torch_dtype", "dtype")


def resolve(raw: dict, source: str) -> tuple[Family, Fields, str]:
    """(family, fields to read, reading) for a config dict; reading is 'exact' or 'guessed'."""
    model_type = raw.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ConfigError(f"{source}: config has no 'model_type'", "is this a Hugging Face config.json?")
    if _architecture(raw) in REFUSED_ARCHITECTURES:
        raise ConfigError(f"{source}: architecture {_architecture(raw)} is {REFUSED_ARCHITECTURES[_architecture(raw)]}",
                          "this architecture is not supported yet")
    family = BY_ARCHITECTURE.get((model_type, _architecture(raw))) or FAMILIES.get(model_type)
    if family is None and model_type in REFUSED:
        raise ConfigError(f"{source}: model_type {model_type!r} is {REFUSED[model_type]}",
                          "kvplan plans the KV cache of decoder LLMs; this family is not supported")
    if family is None:
        check_generic(raw, source, model_type)
        return GENERIC, Fields(raw, source, GENERIC.defaults, GENERIC.aliases, model_type), "guessed"
    if family.wraps:
        return _text_model(family, raw, source, model_type)
    return family, Fields(raw, source, family.defaults, family.aliases), "exact"


def nested_text_path(raw: dict) -> tuple[str, ...]:
    """The keys leading to the text model: (the family's key: text_config unless the family names another,
    llm_config, language_config,), or two keys for a wrapper nested in a wrapper (Qwen-Omni's thinker_config,
    which keeps text_config), which is followed down as transformers' Qwen2_5OmniConfig.get_text_config /
    Qwen3OmniMoeConfig's (thinker_config.get_text_config()) do."""
    outer = FAMILIES.get(raw.get("model_type")) if isinstance(raw.get("model_type"), str) else None
    key = outer.key_in(raw) if outer is not None and outer.wraps else "text_config"
    nested = raw.get(key)
    if not isinstance(nested, dict):
        return (key,)
    inner_type = nested.get("model_type") or (outer.text if outer is not None else None)
    inner = FAMILIES.get(inner_type) if isinstance(inner_type, str) else None
    if inner is not None and inner.wraps and isinstance(nested.get(inner.nested_key), dict):
        return key, inner.nested_key
    return (key,)


def nested_text(raw: dict) -> dict:
    """The nested text model's fields under the family's key ({} when there is none): what vLLM reads as
    hf_text_config (it renames llm_config to text_config, transformers_utils/config.py; Qwen-Omni's is
    thinker_config.text_config)."""
    node = raw
    for key in nested_text_path(raw) if isinstance(raw, dict) else ():
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def _text_model(family: Family, raw: dict, source: str, model_type: str) -> tuple[Family, Fields, str]:
    """The text model of a wrapper: nested under its key (text_config, llm_config, language_config), read by
    the nested model_type's family (else the wrapper's rule or default), or saved flat."""
    key = family.key_in(raw)
    picked = family.text_rule(raw, source) if family.text_rule is not None else None
    if key in raw:
        nested = raw[key]
        if not isinstance(nested, dict):
            raise ConfigError(f"{source}: {key!r} must be a JSON object, got {type(nested).__name__} "
                              f"(model_type {model_type!r})")
        text_type = picked or nested.get("model_type") or family.text
        if text_type is None:
            raise ConfigError(f"{source}: {key} names no model_type, and model_type {model_type!r} has no default "
                              "text model", f"add the text model's model_type to {key}")
        text_family = FAMILIES.get(text_type) if isinstance(text_type, str) else None
        if text_family is None:
            raise ConfigError(f"{source}: {key} has model_type {text_type!r}, which kvplan does not read "
                              f"(model_type {model_type!r})", "this family is not supported yet")
        # a wrapper under a wrapper is read only where the outer family holds one (Qwen-Omni's thinker_config,
        # which keeps its own text_config); elsewhere no engine builds a text model from it
        if text_family.wraps and text_type != family.text:
            raise ConfigError(f"{source}: {key} has model_type {text_type!r}, itself a multimodal wrapper, not a "
                              f"text model (model_type {model_type!r})",
                              f"set {key}'s model_type to the text model's (qwen2, llama ...)")
        merged = dict(nested)
        if any(raw.get(name) is not None for name in _DTYPE_NAMES):
            # the wrapper's own dtype is the checkpoint's: vLLM 0.34 ModelArchConfigConvertorBase.get_torch_dtype
            # (transformers_utils/model_arch_config_convertor.py) reads hf_config.dtype first and the text config's
            # only when the root names none; transformers >= 4.53 saves a text_config with its own torch_dtype
            # (float32 in Qwen2.5-VL fine-tunes whose root says bfloat16)
            for name in _DTYPE_NAMES:
                merged.pop(name, None)
        for inherited in _INHERITED:
            if inherited in raw and (inherited not in merged or inherited in _WRAPPER_WINS):
                merged[inherited] = raw[inherited]
        if text_family.wraps:  # a wrapper in a wrapper (Qwen-Omni's thinker_config, which keeps text_config)
            return _text_model(text_family, merged, source, text_type)
        # a wrapper's own `defaults` are its text config class's (KeyeVL1_5TextConfig), nested or flat
        defaults = {**text_family.nested_defaults, **text_family.defaults, **family.defaults, **family.text_defaults}
        return text_family, Fields(merged, source, defaults, text_family.aliases, text_type), "exact"
    text_type = picked or family.text
    if text_type is None:  # no default text model: the config class needs the nested one
        raise ConfigError(f"{source}: model_type {model_type!r} keeps its text model under {key!r}, which the "
                          "config lacks", f"add {key} (the text model's config) to the config")
    text_family = FAMILIES.get(text_type)  # a multimodal type saved flat: read the text model's fields
    if text_family is None:
        raise ConfigError(f"{source}: model_type {model_type!r} runs a {text_type!r} text model, which kvplan does "
                          "not read", "this family is not supported yet")
    if family.text_defaults:  # the config class builds the text model from its own defaults, as if nested empty
        inherited = {name: raw[name] for name in _INHERITED if name in raw}
        # the text class's own defaults too (nested_defaults), for what the wrapper's leave out (VoxtralConfig's
        # text defaults give no num_attention_heads: LlamaConfig's 32)
        defaults = {**text_family.nested_defaults, **text_family.defaults, **family.text_defaults}
        return text_family, Fields(inherited, source, defaults, text_family.aliases, text_type), "exact"
    return text_family, Fields(raw, source, {**text_family.defaults, **family.defaults}, text_family.aliases,
                               model_type, text_type=text_type), "exact"



def _architecture(raw: dict) -> str | None:
    """The config's first architecture name (None when it names none)."""
    names = raw.get("architectures")
    if isinstance(names, list) and names and isinstance(names[0], str) and names[0].strip():
        return names[0].strip()
    return None



def _architectures(raw: dict) -> tuple[str, ...]:
    """Every name in the config's architectures, in order."""
    names = raw.get("architectures")
    return tuple(n.strip() for n in names if isinstance(n, str) and n.strip()) if isinstance(names, list) else ()


def _model_code(raw: dict) -> str:
    """The class the config's auto_map names for its first AutoModel* key ("" where none): vLLM 0.34
    model_executor/models/registry.py _try_resolve_transformers tries the AutoModel* entries in order."""
    auto_map = raw.get("auto_map")
    items = auto_map.items() if isinstance(auto_map, dict) else ()
    return next((code for key, code in items if key.startswith("AutoModel") and isinstance(code, str)), "")

