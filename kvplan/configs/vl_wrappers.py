"""How remote-code image/audio-text wrappers pick their text model, where the config's own fields decide it.

Most wrappers nest the text model's config under a key (text_config, llm_config, language_config) that names
its model_type, and build.py reads it by that type's family. Two that vLLM 0.33 serves pick it otherwise:

- MiniCPM-V (model_type minicpmv) is saved flat, and its `version` picks the language model class
  (vLLM 0.33 model_executor/models/minicpmv.py, get_version_by_config and the MiniCPMV2_0 ... MiniCPMV4_5
  init_llm methods);
- DeepSeek-VL2 (deepseek_vl_v2) nests a DeepseekV2 config under language_config whose kv_lora_rank, when the
  file sets it to null, turns multi-head latent attention off (vLLM 0.33 transformers_utils/configs/
  deepseek_vl2.py DeepseekVLV2TextConfig; model_arch_config_convertor.py is_deepseek_mla).
"""

from __future__ import annotations

from ..errors import ConfigError

# vLLM 0.33 minicpmv.py: MiniCPMV2_0.init_llm builds MiniCPMForCausalLM, MiniCPMV2_5 and MiniCPMV4_0
# LlamaForCausalLM, MiniCPMV2_6 Qwen2ForCausalLM, MiniCPMV4_5 Qwen3ForCausalLM; no other version is served
MINICPMV_TEXT = {(2, 0): "minicpm", (2, 5): "llama", (2, 6): "qwen2", (4, 0): "llama", (4, 5): "qwen3"}


def minicpmv_version(raw: dict, source: str) -> tuple[int, ...]:
    """MiniCPM-V's version as vLLM 0.33 reads it (get_version_by_config): `version` split at its dot; a
    config without one is 2.0 when hidden_size is 2304 and query_num 64, else 2.5."""
    version = raw.get("version")
    if version is None:
        return (2, 0) if raw.get("hidden_size") == 2304 and raw.get("query_num") == 64 else (2, 5)
    return _version_parts(version, source, "minicpmv")


def _version_parts(version, source: str, model_type: str, first: int | None = None) -> tuple[int, ...]:
    """A config's `version` (2.6, "4.5") split at its dots as vLLM's str(version).split(".") does, the `first`
    parts only when given (minicpmo.py reads two, minicpmv.py all)."""
    if isinstance(version, bool) or not isinstance(version, (int, float, str)):
        raise ConfigError(f"{source}: 'version' must be a number like 2.6, got {version!r} (model_type {model_type!r})")
    try:
        return tuple(int(part) for part in str(version).split(".")[:first])
    except ValueError:
        raise ConfigError(f"{source}: 'version' must be a number like 2.6, got {version!r} "
                          f"(model_type {model_type!r})") from None


def minicpmv_text(raw: dict, source: str) -> str:
    """The model_type whose family reads MiniCPM-V's flat text fields, by its version."""
    version = minicpmv_version(raw, source)
    text = MINICPMV_TEXT.get(version)
    if text is None:
        served = ", ".join(".".join(map(str, v)) for v in MINICPMV_TEXT)
        raise ConfigError(f"{source}: MiniCPM-V version {'.'.join(map(str, version))} is not one vLLM 0.33 serves "
                          f"({served}) (model_type 'minicpmv')", "check the config's 'version'")
    return text


def nested_only(key: str, model_type: str, text: str | None = None):
    """A text rule for a wrapper whose config class builds its text model from `key` alone, ignoring the top
    level (KimiVLConfig, DeepseekVLV2Config): a config without `key` would run the class's default text model,
    not the fields beside it, so it is refused rather than read flat. text: the model_type of the class the
    wrapper always builds from `key`, whatever model_type `key` names (KimiVLConfig: DeepseekV2Config(**text_config),
    vLLM 0.33 transformers_utils/configs/kimi_vl.py; DeepseekVLV2Config: DeepseekVLV2TextConfig(**language_config),
    a DeepseekV2Config, configs/deepseek_vl2.py): the nested fields are read by that family."""
    def rule(raw: dict, source: str) -> str | None:
        if key not in raw:
            raise ConfigError(f"{source}: model_type {model_type!r} keeps its text model under {key!r}, which the "
                              "config lacks (its config class would build a default text model, not read the "
                              "top-level fields)", f"add {key} (the text model's config) to the config")
        return text
    return rule


def deepseek_vl2_text(raw: dict, source: str) -> str | None:
    """DeepSeek-VL2's language_config is read as deepseek_v2 (MLA). With qk_nope_head_dim and qk_rope_head_dim
    both 0 (DeepSeek-OCR) vLLM 0.33 builds plain multi-head attention instead (deepseek_v2.py
    DeepseekV2DecoderLayer: use_mha, DeepseekAttention: K/V of num_key_value_heads x hidden_size /
    num_attention_heads), the layout kvplan reads as model_type deepseek; DeepSeek-VL2-Tiny's language_config is
    this one (use_mla false: deepseek-ai/DeepSeek-VL2 issue #81; SGLang issue #5537 reports that its
    qk_nope_head_dim + qk_rope_head_dim is 0), the layout DeepSeek-OCR's language_config also has. An explicit kv_lora_rank null with
    nonzero qk head dims turns MLA off (is_deepseek_mla: kv_lora_rank None) and picks DeepseekV2Attention, which
    still builds kv_a_proj_with_mqa of kv_lora_rank + qk_rope_head_dim outputs: vLLM 0.33 cannot build it with a
    null rank, so the config is refused by name."""
    text = nested_only("language_config", "deepseek_vl_v2", "deepseek_v2")(raw, source)
    nested = raw.get("language_config")
    if not isinstance(nested, dict):
        return None  # build.py names the bad type
    # deepseek_v2.py DeepseekV2DecoderLayer: use_mha (DeepseekAttention) when qk_nope_head_dim and
    # qk_rope_head_dim are both 0; DeepseekV2Attention (no latent) when use_mla is off (kv_lora_rank None)
    if nested.get("qk_nope_head_dim") == 0 and nested.get("qk_rope_head_dim") == 0:
        return "deepseek"
    if "kv_lora_rank" in nested and nested["kv_lora_rank"] is None:
        raise ConfigError(f"{source}: language_config sets kv_lora_rank null with nonzero qk head dims: vLLM 0.33 "
                          "picks DeepseekV2Attention without a latent, whose kv_a_proj_with_mqa (kv_lora_rank + "
                          "qk_rope_head_dim outputs) cannot be built with a null rank (deepseek_v2.py), so the model "
                          "does not load (model_type 'deepseek_vl_v2')",
                          "set kv_lora_rank (MLA), or qk_nope_head_dim and qk_rope_head_dim 0 (plain multi-head "
                          "attention, as DeepSeek-VL2-Tiny)")
    return text


def ultravox_text(raw: dict, source: str) -> None:
    """Ultravox (vLLM 0.33 transformers_utils/configs/ultravox.py UltravoxConfig): with text_model_id set, vLLM
    reads the text model's config from that repository (get_config), not from this file: refused with the id
    to plan instead. Without it, text_config is the text model (llama by default); a config with neither would
    run LlamaConfig's defaults, not the top-level fields, so it is refused too."""
    model_id = raw.get("text_model_id")
    if model_id is not None:
        raise ConfigError(f"{source}: Ultravox's text_model_id {str(model_id)[:80]!r} names the text model vLLM "
                          "reads (its own config.json), which this file does not hold (model_type 'ultravox')",
                          f"plan the text model itself: kvplan estimate {str(model_id)[:80]}")
    nested_only("text_config", "ultravox")(raw, source)


# vLLM 0.33 minicpmo.py MiniCPMO.__new__: version's first two numbers pick MiniCPMO2_6 (a MiniCPMV2_6: Qwen2) or
# MiniCPMO4_5 (a MiniCPMV4_5: Qwen3); a config without `version` is 2.6; no other version is served
MINICPMO_TEXT = {(2, 6): "qwen2", (4, 5): "qwen3"}


def minicpmo_text(raw: dict, source: str) -> str:
    """The model_type whose family reads MiniCPM-o's flat text fields, by its version (absent: 2.6)."""
    version = raw.get("version")
    if version is None:
        return MINICPMO_TEXT[(2, 6)]
    text = MINICPMO_TEXT.get(_version_parts(version, source, "minicpmo", first=2))
    if text is None:
        raise ConfigError(f"{source}: MiniCPM-o version {version} is not one vLLM 0.33 serves (2.6, 4.5) "
                          "(model_type 'minicpmo')", "check the config's 'version'")
    return text


def fixed_text(text: str, key: str | None = None, model_type: str = ""):
    """A text rule for a wrapper whose config class reads its text model as one class whatever the nested
    model_type says (BagelConfig's Qwen2Config, IsaacConfig's Qwen3Config); with `key`, the class builds only
    from that key (a default text model without it), so a config lacking it is refused rather than read flat."""
    def rule(raw: dict, source: str) -> str:
        if key is not None:
            nested_only(key, model_type)(raw, source)
        text_type_is_text(raw, key or "text_config", source, model_type or str(raw.get("model_type")))
        return text
    return rule


def text_type_is_text(raw: dict, key: str, source: str, model_type: str) -> None:
    """A wrapper that reads its text model as one class ignores the nested model_type, but a value that is neither
    a string nor null is no config such a class was saved with (and the engines' readers look it up by name):
    refused by name."""
    nested = raw.get(key)
    value = nested.get("model_type") if isinstance(nested, dict) else None
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{source}: {key}.model_type must be a string, got {type(value).__name__} "
                          f"(model_type {model_type!r})", f"fix {key}.model_type")
