"""Mistral-format params.json (vLLM's --config-format mistral), read as vLLM 0.33 adapts it
(vllm/transformers_utils/configs/mistral.py adapt_config_dict) into a Hugging Face-style config.

Mistral Large 3 ships only this file: with MLA fields (qk_nope_head_dim) and a moe block with shared experts,
vLLM renames the keys (dim -> hidden_size, n_layers -> num_hidden_layers, moe.num_experts -> n_routed_experts ...),
sets model_type deepseek_v3 and runs MistralLarge3ForCausalLM (mistral_large_3.py, a DeepseekV3ForCausalLM), so
kvplan reads the result with its deepseek_v3 record. A dense text params.json becomes MistralForCausalLM (mistral.py,
Llama's rule), read as mistral. A MoE one without shared experts (MixtralForCausalLM), an audio one (vLLM's
Voxtral wrapper; Voxtral and Voxtral Realtime each named) and Mamba's are refused; a vision one is read as vLLM's
Pixtral wrapper (model_type pixtral, its text model under text_config).

Mistral Large 4 (a `dsa` block beside MLA and a MoE with shared experts) is read as vLLM 0.34 adapts it
(_remap_mistral_large_4_args): model_type mistral_large_4, MistralLarge4ForCausalLM, the per-layer patterns
expanded (nope -> nope_layer_flags, kv_sharing.source_layers_str -> kv_source_layers, dsa.sharing ->
index_sharing) and the dsa keys renamed (kvplan/configs/vllm34_text.py reads the result). vLLM 0.33 has no such
branch and would run it as Mistral Large 3.
"""

from __future__ import annotations

from ..errors import ConfigError

# vLLM's _remap_general_mistral_args: Mistral key -> HF key
_GENERAL = {"dim": "hidden_size", "norm_eps": "rms_norm_eps", "n_kv_heads": "num_key_value_heads",
            "n_layers": "num_hidden_layers", "n_heads": "num_attention_heads", "hidden_dim": "intermediate_size"}
# vLLM's _remap_moe_args: moe.<key> -> HF key
_MOE = {"route_every_n": "moe_layer_freq", "first_k_dense_replace": "first_k_dense_replace",
        "num_experts_per_tok": "num_experts_per_tok", "num_experts": "n_routed_experts",
        "expert_hidden_dim": "moe_intermediate_size", "routed_scale": "routed_scaling_factor",
        "num_shared_experts": "n_shared_experts", "num_expert_groups": "n_group",
        "num_expert_groups_per_tok": "topk_group"}


def is_params_json(raw: dict) -> bool:
    """A Mistral-format params.json: no model_type (or vLLM's default 'transformer'), dim and n_layers."""
    return raw.get("model_type") in (None, "transformer") and "dim" in raw and "n_layers" in raw


def to_config(raw: dict, source: str) -> dict:
    """The config vLLM 0.33 builds from a params.json, with the model_type kvplan reads it by. A vision encoder
    (multimodal.vision_encoder_args or vision_encoder) makes it Pixtral: _remap_mistral_vision_args moves the
    adapted text config under text_config (model_type pixtral, PixtralForConditionalGeneration); an audio
    encoder (Voxtral) is refused."""
    multimodal = raw.get("multimodal") or {}
    if not isinstance(multimodal, dict):
        raise ConfigError(f"{source}: params.json 'multimodal' must be a JSON object, got {type(multimodal).__name__}")
    _refuse_audio(multimodal, source)
    if multimodal.get("whisper_model_args"):
        raise ConfigError(f"{source}: a Mistral params.json with an audio encoder, which vLLM 0.33 wraps as Voxtral; "
                          "kvplan does not read it", "give the checkpoint's Hugging Face config.json")
    if multimodal.get("vision_encoder_args") or raw.get("vision_encoder"):
        text = to_config({k: v for k, v in raw.items() if k not in ("multimodal", "vision_encoder")}, source)
        config = {"model_type": "pixtral", "architectures": ["PixtralForConditionalGeneration"], "text_config": text}
        if "quantization_config" in text:  # _remap_mistral_vision_args keeps it on the outer config too
            config["quantization_config"] = text["quantization_config"]
        return config
    config = {k: v for k, v in raw.items() if k not in _GENERAL}
    for key, name in _GENERAL.items():
        if key in raw:
            config[name] = raw[key]
    config["hidden_act"] = raw.get("activation", "silu")
    config["tie_word_embeddings"] = raw.get("tied_embeddings", False)
    config["max_position_embeddings"] = raw.get("max_position_embeddings", 128_000)
    config.pop("activation", None)
    config.pop("tied_embeddings", None)
    window = raw.get("sliding_window")
    if isinstance(window, list):  # _remap_mistral_sliding_window: a per-layer pattern, repeated
        n = config.get("num_hidden_layers")
        if not isinstance(n, int) or not window or len({w for w in window if w is not None}) > 1:
            raise ConfigError(f"{source}: sliding_window {window!r} is not a pattern vLLM 0.33 reads")
        config["layer_types"] = ["full_attention" if w is None else "sliding_attention"
                                 for w in window * (n // len(window))]
        config["sliding_window"] = next((w for w in window if w is not None), None)
    elif isinstance(window, int) and window and raw.get("layer_types") is None:
        config["layer_types"] = ["sliding_attention"] * config.get("num_hidden_layers", 0)
    quantization = raw.get("quantization")
    if quantization:
        config.pop("quantization")
        if quantization.get("qformat_weight") == "fp8_e4m3":
            dynamic = quantization.get("qscheme_act") == "NO_SCALES"
            config["quantization_config"] = {"quant_method": "fp8",
                                             "activation_scheme": "dynamic" if dynamic else "static"}
        elif str(quantization.get("quant_method", "")).lower().replace("_", "-") == "compressed-tensors":
            config["quantization_config"] = {**quantization, "quant_method": "compressed-tensors"}
        else:
            raise ConfigError(f"{source}: params.json quantization {quantization!r} is one vLLM 0.33 refuses")
    if raw.get("model_type") == "mamba":
        raise ConfigError(f"{source}: a Mistral-format Mamba-2 params.json, which kvplan does not read",
                          "give the checkpoint's Hugging Face config.json")
    moe = dict(raw.get("moe") or {})
    if raw.get("qk_nope_head_dim") and not moe:  # _remap_mistral_mla_args: a dense MLA model as one MoE
        moe = {"num_experts": 1, "first_k_dense_replace": config.get("num_hidden_layers"), "route_every_n": 1,
               "num_shared_experts": 1, "expert_hidden_dim": config.get("intermediate_size"),
               "num_experts_per_tok": 1, "routed_scale": 1.0, "num_expert_groups": 1, "num_expert_groups_per_tok": 1}
    config.pop("moe", None)
    shared = moe.get("num_shared_experts") or 0
    if isinstance(shared, bool) or not isinstance(shared, int):
        raise ConfigError(f"{source}: params.json moe.num_shared_experts must be a whole number, got {shared!r}")
    if raw.get("dsa"):  # Mistral Large 4 (vLLM 0.34 adapt_config_dict: is_dsa, before Mistral Large 3)
        if not (raw.get("qk_nope_head_dim") and shared > 0):
            raise ConfigError(f"{source}: a params.json with a dsa block but not MLA with a MoE of shared experts, "
                              "which vLLM 0.34 asserts for Mistral DSA (MistralLarge4ForCausalLM)")
        for key, name in _MOE.items():
            if key in moe:
                config[name] = moe[key]
        config.update(topk_method=None, norm_topk_prob=True, scoring_func="softmax")
        return _large4(config, source)
    if moe and shared > 0:  # Mistral Large 3
        if not isinstance(raw.get("llama_4_scaling"), dict):
            raise ConfigError(f"{source}: a Mistral Large 3 params.json without llama_4_scaling, which vLLM 0.33 "
                              "asserts")
        for key, name in _MOE.items():
            if key in moe:
                config[name] = moe[key]
        config.update(topk_method=None, norm_topk_prob=True, scoring_func="softmax", model_type="deepseek_v3",
                      architectures=["MistralLarge3ForCausalLM"])
    elif moe:
        raise ConfigError(f"{source}: a Mistral-format MoE params.json without shared experts (vLLM 0.33 runs it as "
                          "MixtralForCausalLM with the moe block unrenamed), which kvplan does not read",
                          "give the checkpoint's Hugging Face config.json")
    else:
        config.update(model_type="mistral", architectures=["MistralForCausalLM"])
        # vLLM 0.33 builds a bare PreTrainedConfig (adapt_config_dict: PreTrainedConfig.from_dict), filled only from
        # the repo's config.json (MistralConfigParser.parse: defaults=hf_config_dict; kvplan reads a params.json
        # only for a folder without one): no MistralConfig default window, so no window unless params.json names one
        config.setdefault("sliding_window", None)
    return config


# vLLM 0.34 _DSA_KEY_ALIASES: the unprefixed dsa keys of the checkpoint converter -> the prefixed ones
_DSA_ALIASES = {"topk": "index_topk", "n_heads": "index_n_heads", "head_dim": "index_head_dim",
                "rope_head_dim": "index_rope_head_dim", "nope": "index_nope", "match_nope": "indexer_match_nope",
                "ssmax_scaling": "indexer_ssmax_scaling", "norm_eps": "indexer_norm_eps", "sharing": "index_sharing"}


def _pattern(values: list, n: int) -> list:
    """vLLM's _expand_layer_pattern: the comma-separated pattern repeated over n layers."""
    return (values * -(-n // len(values)))[:n]


def _large4(config: dict, source: str) -> dict:
    """vLLM 0.34 _remap_mistral_large_4_args, the parts the cache depends on, with its checks."""
    n = config.get("num_hidden_layers")
    if not isinstance(n, int) or n < 1:
        raise ConfigError(f"{source}: params.json n_layers must be a positive integer, got {n!r}")
    dsa = config.pop("dsa")
    if not isinstance(dsa, dict):
        raise ConfigError(f"{source}: params.json 'dsa' must be a JSON object, got {type(dsa).__name__}")
    dsa = {_DSA_ALIASES.get(k, k): v for k, v in dsa.items()}
    # vLLM pops these five unconditionally (a KeyError there)
    missing = [k for k in ("index_topk", "index_n_heads", "index_head_dim", "indexer_norm_eps",
                           "indexer_ssmax_scaling") if k not in dsa]
    if missing:
        raise ConfigError(f"{source}: params.json dsa lacks {', '.join(missing)}, which vLLM 0.34 requires")
    if dsa.get("index_nope") or not dsa.get("fp8_indexer", True):
        raise ConfigError(f"{source}: params.json dsa sets index_nope or turns fp8_indexer off, which vLLM 0.34 "
                          "refuses (only the FP8 indexer cache is supported)")
    nope = config.pop("nope", None)
    flags = _pattern([v == "nope" for v in str(nope).split(",")], n) if nope else [False] * n
    sharing = config.pop("kv_sharing", None) or {}
    if not isinstance(sharing, dict) or set(sharing) - {"source_layers_str"}:
        raise ConfigError(f"{source}: params.json kv_sharing {sharing!r} is not one vLLM 0.34 reads "
                          "(only source_layers_str)")
    try:
        sources = ([int(v) for v in sharing["source_layers_str"].split(",")] if sharing.get("source_layers_str")
                   else list(range(n)))
    except (AttributeError, ValueError):
        raise ConfigError(f"{source}: params.json kv_sharing.source_layers_str must be comma-separated layer "
                          f"numbers, got {sharing['source_layers_str']!r}") from None
    if len(sources) != n or any(not 0 <= src <= i or sources[src] != src or flags[src] != flags[i]
                                for i, src in enumerate(sources)):
        raise ConfigError(f"{source}: params.json kv_sharing.source_layers_str must name, for each of the {n} "
                          "layers, itself or an earlier layer that keeps its own cache (and has the same NoPE "
                          "flag), as vLLM 0.34 asserts")
    index_sharing = (_pattern(str(dsa["index_sharing"]).split(","), n) if dsa.get("index_sharing")
                     else ["full"] * n)
    if set(index_sharing) - {"full", "shared"} or index_sharing[0] != "full":
        raise ConfigError(f"{source}: params.json dsa sharing {dsa['index_sharing']!r} must be 'full' / 'shared' "
                          "entries starting with 'full', as vLLM 0.34 asserts")
    config.update(nope_layer_flags=flags, kv_source_layers=sources, index_sharing=index_sharing,
                  index_topk=dsa["index_topk"], index_n_heads=dsa["index_n_heads"],
                  index_head_dim=dsa["index_head_dim"], fp8_kv_cache=bool(dsa.get("fp8_kv_cache", False)),
                  model_type="mistral_large_4", architectures=["MistralLarge4ForCausalLM"])
    return config


def _refuse_audio(multimodal, source: str) -> None:
    """A Voxtral params.json (multimodal.whisper_model_args.encoder_args), refused by name as vLLM 0.33 would build
    it (_remap_mistral_audio_args): with encoder_args.causal, VoxtralRealtimeGeneration, whose causal Whisper
    encoder keeps its own block-pooled sliding-window K/V in the KV pool; else VoxtralForConditionalGeneration on a
    text_config vLLM leaves a bare PretrainedConfig, which kvplan reads from the checkpoint's config.json instead."""
    whisper = multimodal.get("whisper_model_args") if isinstance(multimodal, dict) else None
    encoder = whisper.get("encoder_args") if isinstance(whisper, dict) else None
    if not isinstance(encoder, dict) or not encoder:
        return
    if encoder.get("causal"):
        raise ConfigError(f"{source}: a Voxtral Realtime params.json (a causal Whisper encoder): vLLM 0.33 keeps the "
                          "encoder's own sliding-window K/V in the KV pool beside the decoder's, block-pooled "
                          "(whisper_causal.py WhisperCausalAttentionWithBlockPooling), which kvplan does not size yet",
                          "this variant is not supported yet")
    raise ConfigError(f"{source}: a Voxtral params.json (vLLM 0.33 wraps it as VoxtralForConditionalGeneration); "
                      "kvplan reads Voxtral from its Hugging Face config.json (model_type voxtral)",
                      "give the checkpoint's Hugging Face config.json")
