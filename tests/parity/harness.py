"""Build a transformers causal LM from its default config, shrunk, and count its cache.

The shrink is generic over model_type: it sets the fields a config has (by
transformers' own names and aliases) to small values; OVERRIDES lists, with
reasons, the few types whose defaults transformers cannot run as they are, and
VARIANTS the non-default and older config forms worth checking too. The count
walks every tensor the returned cache object holds, per decoder layer.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from dataclasses import dataclass, field

PROMPT_TOKENS = 21  # longer than every window and chunk the shrink sets (8)
WINDOW = 8
VOCAB = 128
MAX_PARAMS = 100_000_000  # a shrunk model above this is a shrink the harness does not understand

# Widths: 4 query heads, 2 KV heads, head_dim 16 -> hidden 64.
_SET_INT = {
    "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16,
    "intermediate_size": 64, "intermediate_size_mlp": 64, "block_ff_dim": 64, "ffn_hidden_size": 64, "n_inner": 64, "ffn_dim": 64, "d_ff": 64,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32, "expert_intermediate_size": 32,
    "dense_intermediate_size": 64, "shared_intermediate_size": 32, "moe_shared_expert_intermediate_size": 32,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "moe_num_experts": 4,
    "num_experts_per_tok": 2, "moe_topk": 2, "moe_k": 2, "num_experts_per_token": 2,
    "n_group": 1, "topk_group": 1, "n_shared_experts": 1, "num_shared_experts": 1,
    # latent attention
    "q_lora_rank": 32, "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16,
    "index_head_dim": 16, "index_n_heads": 2, "index_topk": 16,
    # recurrent states
    "state_size": 8, "ssm_state_size": 8, "mamba_d_state": 8, "mamba_d_head": 8, "mamba_head_dim": 8,
    "mamba_n_heads": 8, "mamba_expand": 2, "expand": 2, "n_groups": 1, "mamba_n_groups": 1,
    "time_step_rank": 4, "mamba_dt_rank": 4,
    "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
    "lru_width": 64, "embed_dim": 64, "d_head": 16, "out_hidden_size": 64, "text_hidden_size": 64,
    "adapter_in_dim": 64, "adapter_out_dim": 64, "adapter_input_size": 64,
    "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
    "num_heads": 4, "linear_num_heads": 4, "linear_head_dim": 16, "global_head_dim": 32,
    "num_global_key_value_heads": 1,
    # windows and chunks
    "sliding_window": WINDOW, "attention_chunk_size": WINDOW, "attention_window_size": WINDOW,
    "window_size": WINDOW, "local_window_size": WINDOW, "sliding_window_size": WINDOW,
    "local_attention": 2 * WINDOW,  # modernbert-decoder: sliding_window = local_attention // 2
    "vocab_size": VOCAB, "encoder_hash_byte_group_vocab": VOCAB, "vocab_size_per_layer_input": VOCAB,
    "hidden_size_per_layer_input": 16,
}
_KV_HEADS = 2

# Per-type settings the generic shrink cannot derive, each with why. Structure is changed only where
# transformers' own default cannot run a cached forward; everything else is widths.
OVERRIDES: dict[str, dict] = {
    # transformers 5.25: its indexer scores key head 0 against the query heads that read it, so index_num_heads
    # must not exceed heads / KV heads (2 after the shrink); the top-k and pool fit the short prompt
    "kolibri1_1": {"index_num_heads": 2, "index_topk": 4, "index_pool_size": 8, "index_compression": 4,
                   "index_num_local_tokens": 4, "index_num_sink_tokens": 2},
    # The default has no attention layer at all, and transformers' mask code then fails on a cache of
    # only linear layers (get_seq_length). Put attention on 2 of the 32 layers, as the released models do.
    "bamba": {"attn_layer_indices": [5, 21]},
    "granitemoehybrid": {"layer_types": ["full_attention" if i in (5, 21) else "linear_attention"
                                         for i in range(32)]},
    # The default routes to num_experts_per_tok = None experts (topk fails); DeepSeek-V2 uses 6 of 160.
    "deepseek_v2": {"num_experts_per_tok": 2},
    # transformers' defaults that cannot build or run: DBRX's attn_config lacks rope_theta (DBRX's is
    # 500000) and has clip_qkv None, which its attention clamps with (DBRX's is 8).
    "dbrx": {"attn_config": {"rope_theta": 500000.0, "clip_qkv": 8}},
    # None where the model code needs a number: KV heads (Nemotron-4 uses 8 of 48), head_dim (Hunyuan's
    # is 128), the expert counts (dots.llm1: 128 routed, 6 per token, 2 shared); here shrunk values.
    "nemotron": {"num_key_value_heads": 2},
    "hunyuan_v1_dense": {"head_dim": 16},
    "hunyuan_v1_moe": {"head_dim": 16},
    "dots1": {"n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1},
    # LFM2-MoE's default has no layer_types and its model indexes them: conv layers with attention on
    # every fourth (both kinds present, as in the released models).
    "lfm2_moe": {"layer_types": ["full_attention" if i % 4 == 2 else "conv" for i in range(32)]},
    # Muse Spark's expert width (moe_hidden_size) is a name the generic shrink does not know.
    "muse_spark": {"moe_hidden_size": 32},
    # DeepSeek-OCR-2's default has no mlp_layer_types (its model indexes them) and routes to
    # num_experts_per_tok = None experts: one dense layer, then MoE with 2 experts per token.
    "deepseek_ocr2": {"mlp_layer_types": ["dense"] + ["sparse"] * 31, "num_experts_per_tok": 2},
    # Step 3.7's text model builds a sliding-window mask whether or not a layer slides: its default (None)
    # cannot run a forward; the default layers stay full.
    "step3p7": {"sliding_window": WINDOW},
    # ZAYA's validator accepts only one expert per token.
    "zaya": {"num_experts_per_tok": 1},
    # head_dim None in the default (Ministral-8B's is 128; here the shrunk 16).
    "ministral": {"head_dim": 16},
    # Multimodal RoPE: the modeling code falls back to sections sized for the default head_dim
    # ([16, 24, 24] = 128 / 2); the shrunk head_dim 16 needs sections summing to its rotary half.
    **dict.fromkeys(("qwen2_vl", "qwen2_5_vl", "glm4v", "glm46v", "glm_ocr", "glmga", "paddleocr_vl",
                     "qwen2_5_omni_thinker"),
                    {"rope_parameters": {"mrope_section": [2, 3, 3]}}),
    "glm4v_moe": {"rope_parameters": {"mrope_section": [1, 1, 2]}},
    # ERNIE-4.5-VL falls back to sections [22, 22, 20] (its head_dim 128 / 2) when none is given; HunYuan-VL
    # has no fallback (its default cannot run): sections for the shrunk rotary half, 8.
    "ernie4_5_vl_moe": {"rope_parameters": {"mrope_section": [3, 3, 2]}},
    "hunyuan_vl": {"head_dim": 16, "rope_parameters": {"mrope_section": [2, 2, 2, 2]}},
    # Cohere Compass's rotary embedding reads rope_parameters per layer type, which the default leaves empty
    # (KeyError 'full_attention'); layer_types with sliding layers (every 4th full) exercise the window.
    **dict.fromkeys(("cohere_compass_text", "cohere_compass"), {
        "layer_types": ["full_attention" if i % 4 == 3 else "sliding_attention" for i in range(40)],
        "rope_parameters": {kind: {"rope_type": "default", "rope_theta": 10000.0}
                            for kind in ("full_attention", "sliding_attention")}}),
    # Qwen4-Exp's default has no QSA indexer, which its attention builds regardless (None // None), and no PLE
    # layer: Qwen3.8-Flash-Next's (tests/data/configs/qwen3.8-flash-next.json) indexer heads and ratio at a
    # shrunk head width and budget, its PLE on layer 2 (one-based) with small n-gram tables (the PLE needs an
    # eos_token_id)
    "qwen4_exp_text": {"indexer_n_heads": 4, "indexer_kv_heads": 1, "indexer_head_dim": 16, "indexer_budget": 64,
                       "indexer_compress_ratio": 4, "ple_layer_ids": [2], "ngram_vocab_size_base": 101,
                       "eos_token_id": 1},
    # Inkling2's lm_head has unpadded_vocab_size rows in transformers 5.25 (it drops the checkpoint's padding rows on
    # load), whose default (200,058) the generic shrink leaves: no padding in the shrunk model
    **dict.fromkeys(("inkling2", "inkling2_loop"), {"unpadded_vocab_size": 128}),
}
# The same for settings of a wrapper's top-level config (OVERRIDES go to its text_config).
TOP_OVERRIDES: dict[str, dict] = {
    # Granite-4 Vision's model indexes deepstack_layer_map and parses downsample_rate, both None by default
    # (its default cannot build): one vision layer injected at text layer 0, a 1/2 window Q-Former.
    "granite4_vision": {"deepstack_layer_map": [[-1, 0]], "downsample_rate": "1/2"},
    # Muse Spark's audio tower widths are a list the generic shrink leaves alone (the model weighs 250M)
    "muse_spark": {"audio_config": {"hidden_sizes": [16, 16, 16, 16]}},
}
# Widths derived from hidden_size at config time (2 x hidden for attention, hidden / 16 for dt rank):
# applied to default configs and to bundled files alike.
WIDTH_FIXES: dict[str, dict] = {
    "zamba": {"attention_hidden_size": 128, "attention_head_dim": 32, "mamba_dt_rank": 4},
    "zamba2": {"attention_hidden_size": 128, "attention_head_dim": 32, "kv_channels": 16, "num_query_groups": 4,
               "mamba_headdim": 16, "n_mamba_heads": 8, "adapter_rank": 8},
}
_TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "sep_token_id",
              "cls_token_id", "mask_token_id", "unk_token_id", "image_token_id", "image_token_index",
              "video_token_id", "boi_token_id", "eoi_token_id")


@dataclass
class Built:
    model_type: str
    config: object  # the shrunk top-level config the model was built from
    raw: dict  # the saved config.json form kvplan reads (saved_form)
    layers: list[int] = field(default_factory=list)  # cached elements per decoder layer
    tensors: list[list[tuple]] = field(default_factory=list)  # per layer: (name, shape)


class Skip(Exception):
    """transformers cannot build or run this model_type (its defaults fail, a dependency is missing, or
    the shrink does not fit it: the message says which)."""


def _kv_heads(old_kv, old_heads, new_heads):
    if old_kv == old_heads:
        return new_heads  # multi-head: stays multi-head
    if old_kv == 1:
        return 1  # multi-query stays multi-query
    return _KV_HEADS


def shrink_dict(d: dict, attribute_map: dict | None = None) -> dict:
    """A shrunk copy of a config dict (sub-config dicts shrunk too)."""
    d = copy.deepcopy(d)
    _shrink_dict(d, attribute_map or {})
    return d


_WIDTH_KEY = re.compile(r"hidden|embd|embed|width|d_model|conv_dim|model_dim")


def _shrink_dict(d: dict, amap: dict) -> None:
    def key(name):  # transformers' own name for a standard field (gpt2: n_embd for hidden_size)
        return amap.get(name, name) if amap.get(name, name) in d else name

    def old(name):
        value = d.get(key(name))
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    old_hidden, old_heads, old_kv = old("hidden_size"), old("num_attention_heads"), old("num_key_value_heads")
    old_head, old_rope, old_nope = old("head_dim"), old("qk_rope_head_dim"), old("qk_nope_head_dim")
    done = set()
    for name, value in _SET_INT.items():
        k = key(name)
        if k in d and isinstance(d[k], int) and not isinstance(d[k], bool):
            if d[k] == 0:
                continue  # 0 means "none" (a NoPE layer's rope dim, no shared expert): keep it
            d[k] = value
            done.add(k)
        elif k in d and isinstance(d[k], list) and d[k] and all(isinstance(v, int) for v in d[k]):
            d[k] = [value] * len(d[k])  # a per-layer width (gemma3n intermediate_size)
            done.add(k)
    # other widths that equal the hidden size (rwkv attention_hidden_size, zamba mamba widths, ...)
    for k, v in list(d.items()):
        if k not in done and _WIDTH_KEY.search(k) and old_hidden and v == old_hidden and not isinstance(v, bool):
            d[k] = _SET_INT["hidden_size"]
    if old_kv is not None:
        d[key("num_key_value_heads")] = (d.get(key("num_attention_heads")) if old_kv == old_heads
                                         else 1 if old_kv == 1 else _KV_HEADS)
    for alias in ("num_kv_heads", "n_head_kv"):  # Falcon's names, not in its attribute_map
        if isinstance(d.get(alias), int) and alias != key("num_key_value_heads"):
            d[alias] = d.get(key("num_attention_heads")) if d[alias] == old_heads else 1 if d[alias] == 1 \
                else _KV_HEADS
    # head_dim in latent configs: keep its relation to the rope/nope dims
    if old_head is not None and old_rope is not None:
        if old_head == old_rope:
            d[key("head_dim")] = d["qk_rope_head_dim"]
        elif old_nope is not None and old_head == old_rope + old_nope:
            d[key("head_dim")] = d["qk_rope_head_dim"] + d["qk_nope_head_dim"]
    if isinstance(d.get("qk_head_dim"), int) and "qk_rope_head_dim" in d and "qk_nope_head_dim" in d:
        d["qk_head_dim"] = d["qk_rope_head_dim"] + d["qk_nope_head_dim"]
    if isinstance(d.get("mamba_d_ssm"), int) and isinstance(d.get("mamba_expand"), int):
        d["mamba_d_ssm"] = d["mamba_expand"] * d["hidden_size"]
    if "rotary_dim" in d and isinstance(d["rotary_dim"], int):
        d["rotary_dim"] = 8
    # Mamba-2 heads must tile expand x hidden
    for heads, head, expand in (("mamba_n_heads", "mamba_d_head", "mamba_expand"), ("num_heads", "head_dim", "expand")):
        if all(isinstance(d.get(x), int) for x in (heads, head, expand)) and "hidden_size" in d:
            d[heads] = d[expand] * d["hidden_size"] // d[head]
    if "is_decoder" in d:
        d["is_decoder"] = True
    for name in _TOKEN_IDS:
        value = d.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= VOCAB:
            d[name] = VOCAB - 1 - _TOKEN_IDS.index(name)
        elif isinstance(value, list):
            d[name] = [v if not isinstance(v, int) or v < VOCAB else VOCAB - 1 for v in value]
    for name in ("rope_parameters", "rope_scaling"):
        rope = d.get(name)
        heads = d.get(key("num_attention_heads"))
        if isinstance(rope, dict) and rope.get("mrope_section") and heads:
            head = d.get(key("head_dim")) or d[key("hidden_size")] // heads
            rope["mrope_section"] = _scale_sections(rope["mrope_section"], head // 2)
    for value in d.values():
        if isinstance(value, dict) and ("model_type" in value or "hidden_size" in value):
            _shrink_dict(value, _attribute_map(value.get("model_type")))
        elif isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            for entry in value.values():  # per_layer_config: {"02": {...}, ...}
                _shrink_dict(entry, amap)
        elif isinstance(value, dict) and any(k in value for k in ("head_dim", "num_heads")):
            _shrink_dict(value, {})  # a structural sub-dict (kimi_linear linear_attn_config)


def _attribute_map(model_type) -> dict:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    try:
        return dict(getattr(CONFIG_MAPPING[model_type], "attribute_map", {}) or {})
    except KeyError:
        return {}


def _scale_sections(sections: list[int], total: int) -> list[int]:
    old = sum(sections)
    out = [max(1, s * total // old) for s in sections]
    out[0] += total - sum(out)
    return out


# -- build and run --------------------------------------------------------------------

def default_config(model_type: str):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    try:
        return CONFIG_MAPPING[model_type]()
    except Exception as exc:  # noqa: BLE001 - any failure means "transformers cannot build it"
        raise Skip(f"default config fails: {type(exc).__name__}: {_short(exc)}") from None


def _short(exc) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else "")[:160]


def shrunk_config(model_type: str, variant: str | None = None):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    base = default_config(model_type)
    d = shrink_dict(base.to_dict(), _attribute_map(model_type))
    target = d.get("text_config") if isinstance(d.get("text_config"), dict) else d
    _merge(target, copy.deepcopy(OVERRIDES.get(model_type, {})))
    if target is not d:
        _merge(d, copy.deepcopy(TOP_OVERRIDES.get(model_type, {})))
    _merge(target, copy.deepcopy(WIDTH_FIXES.get(model_type, {})))
    if variant is not None:
        _merge(target, copy.deepcopy(VARIANTS[variant][1]))
    d.pop("model_type", None)
    d.pop("transformers_version", None)
    try:
        return CONFIG_MAPPING[model_type](**d)
    except Exception as exc:  # noqa: BLE001
        raise Skip(f"harness: the shrunk config is invalid: {type(exc).__name__}: {_short(exc.__cause__ or exc)}") \
            from None


def saved_form(config, variant: str | None = None) -> dict:
    """What save_pretrained writes to config.json (the diff against the base defaults): what kvplan reads;
    for a legacy-form variant, edited back to the older form of the file."""
    raw = json.loads(config.to_json_string(use_diff=True))
    edit = VARIANTS[variant][2] if variant is not None else None
    if edit is not None:
        edit(raw["text_config"] if isinstance(raw.get("text_config"), dict) else raw)
    return raw


def is_causal(model_type: str) -> bool:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


def _weights_left_uninitialised():
    """transformers' own switch that skips initialising the weights (torch's and its own init functions,
    module by module); run() then fills every weight from one seeded normal(0, 0.02) in one pass. The cache
    holds what the forward writes, whose shapes follow the config, not the weights' values."""
    import contextlib

    try:
        from transformers.initialization import no_init_weights
    except ImportError:  # older transformers: initialise as before
        return contextlib.nullcontext()
    return no_init_weights()


def _weigh_on_meta(auto, cfg) -> int:
    """The model's parameter count, built on the meta device (no memory); 0 where even that fails."""
    import torch

    try:
        with torch.device("meta"):
            return sum(p.numel() for p in auto.from_config(cfg).parameters())
    except Exception:  # noqa: BLE001  the build's own failure is reported instead
        return 0


def _refuse_large(params: int) -> None:
    if params > MAX_PARAMS:
        raise Skip(f"harness: the shrunk model still has {params:,} parameters (limit {MAX_PARAMS:,})")


def run(model_type: str, wrapper: bool = False, top=None, weigh: bool = True) -> Built:
    """Build, run and count one model_type. wrapper: an image-text-to-text type, built whole
    (AutoModelForImageTextToText) and run on text tokens only (no image). top: its shrunk config.
    weigh: count the parameters of the model built and skip one the shrink left large, before a weight is written."""
    import torch
    from transformers import AutoModelForCausalLM

    top = top if top is not None else shrunk_config(model_type)
    cfg = top
    if wrapper:
        from transformers import AutoModelForImageTextToText as auto
    else:
        auto = AutoModelForCausalLM
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # vision towers and sizes the shrink does not know: weighed once built, its weights still unwritten
            # (memory reserved, not touched), instead of built on the meta device first, a second build that was a
            # third of a bundled file's run. Only a model over the limit, or one too large to reserve, is built on
            # the meta device too: its count there decides and is reported, as before (weights left unwritten
            # can leave tied ones apart: janus counts 8,192 more parameters so)
            try:
                with _weights_left_uninitialised():
                    model = auto.from_config(cfg)
            except Exception:
                if weigh:
                    _refuse_large(_weigh_on_meta(auto, cfg))
                raise
            if weigh and sum(p.numel() for p in model.parameters()) > MAX_PARAMS:
                _refuse_large(_weigh_on_meta(auto, cfg))
            with torch.no_grad():  # finite, seeded values instead of whatever the memory held
                gen = torch.Generator().manual_seed(0)
                for p in model.parameters():
                    if p.is_floating_point():
                        p.normal_(0.0, 0.02, generator=gen)
    except Skip:
        raise
    except Exception as exc:  # noqa: BLE001
        raise Skip(_build_failure(model_type, exc, auto)) from None
    model.eval()
    text = cfg.get_text_config(decoder=True)
    vocab = getattr(text, "vocab_size", VOCAB) or VOCAB
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(3, min(vocab, VOCAB) - 16, (1, PROMPT_TOKENS), generator=gen)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = model(input_ids=ids, use_cache=True)
    except Exception as exc:  # noqa: BLE001
        raise Skip(f"forward fails: {type(exc).__name__}: {_short(exc)}") from None
    cache = next((getattr(out, k) for k in ("past_key_values", "cache_params", "state")
                  if getattr(out, k, None) is not None), None)
    n_layers = _decoder_layers(text)
    if cache is None:  # recurrent_gemma: pass a cache for the attention layers; states live on modules
        from transformers import DynamicCache
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cache = DynamicCache(config=cfg)
            model(input_ids=ids, use_cache=True, past_key_values=cache)
    counts, shapes = count_cache(cache, n_layers)
    _add_module_states(model, n_layers, counts, shapes)
    return Built(model_type, cfg, saved_form(top), counts, shapes)


# -- kvplan's bundled configs (real published config.json files) ---------------------------------

def bundled_files() -> list:
    """kvplan's bundled model configs: real hub files, in the forms their authors saved."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "model_specs"
    return sorted(p for p in root.glob("*.json") if '"model_type"' in p.read_text())


# Keys that change how transformers builds weights, not what the cache holds.
_BUILD_ONLY = ("quantization_config", "auto_map", "torch_dtype", "dtype")


def shrunk_file(path) -> tuple[dict, object]:
    """(the shrunk file as kvplan reads it, the transformers config built from that same dict).

    A file that leaves a width to its class default (llava-1.5's text_config has no hidden_size) gets that
    field written in with its shrunk value: the default itself is what the shrink must change."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    raw = json.loads(path.read_text())
    model_type = raw.get("model_type")
    if model_type not in CONFIG_MAPPING:
        raise Skip(f"transformers has no built-in model_type {model_type!r} (remote code)")
    build = {k: v for k, v in raw.items() if k not in _BUILD_ONLY + ("model_type", "transformers_version")}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = CONFIG_MAPPING[model_type](**copy.deepcopy(build)).to_dict()
    except Exception as exc:  # noqa: BLE001
        raise Skip(f"transformers cannot read this file: {type(exc).__name__}: {_short(exc.__cause__ or exc)}") \
            from None
    amap = _attribute_map(model_type)
    shrunk = shrink_dict(raw, amap)
    _write_changed_defaults(shrunk, full, shrink_dict(full, amap))
    _merge(shrunk, copy.deepcopy(WIDTH_FIXES.get(model_type, {})))
    d = {k: v for k, v in copy.deepcopy(shrunk).items() if k not in _BUILD_ONLY + ("model_type",
                                                                                    "transformers_version")}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = CONFIG_MAPPING[model_type](**d)
    except Exception as exc:  # noqa: BLE001
        raise Skip(f"harness: the shrunk file is invalid for transformers: {type(exc).__name__}: "
                   f"{_short(exc.__cause__ or exc)}") from None
    return shrunk, config


def _write_changed_defaults(shrunk: dict, full: dict, full_shrunk: dict) -> None:
    for key, value in full_shrunk.items():
        if isinstance(value, dict) and isinstance(full.get(key), dict):
            if isinstance(shrunk.get(key), dict):
                _write_changed_defaults(shrunk[key], full[key], value)
            elif key not in shrunk and value != full[key]:
                shrunk[key] = value  # a whole sub-config the file leaves to defaults
        elif key not in shrunk and value != full.get(key) and key not in ("layer_types",):
            shrunk[key] = value


def causal_types() -> list[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)


def wrapper_types() -> list[str]:
    """Image-text-to-text types that are not causal-LM types themselves."""
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                         MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)

    return sorted(set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES) - set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES))


def _decoder_layers(text) -> int:
    for name in ("num_hidden_layers", "n_layer", "num_layers", "n_layers"):
        value = getattr(text, name, None)
        if isinstance(value, int):
            return value
    raise Skip("no layer count on the text config")


def count_cache(cache, n_layers: int):
    """Elements of every tensor the cache holds, per decoder layer (shared tensors counted once)."""
    import torch

    seen: set = set()
    counts = [0] * n_layers
    shapes: list[list[tuple]] = [[] for _ in range(n_layers)]

    def walk(obj, path, layer, depth=0):
        if depth > 6 or obj is None:
            return
        if isinstance(obj, torch.Tensor):
            if obj.dim() == 0:
                return  # bookkeeping scalars (a sliding layer's window size), not cached tokens
            key = (obj.untyped_storage().data_ptr(), obj.storage_offset(), tuple(obj.shape)) if obj.numel() else None
            if key is not None and key in seen:
                return
            if key is not None:
                seen.add(key)
            counts[layer] += obj.numel()
            shapes[layer].append((path, tuple(obj.shape)))
            return
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, f"{path}[{k}]", layer, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for k, v in enumerate(obj):
                walk(v, f"{path}[{k}]", layer, depth + 1)
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            for k, v in vars(obj).items():
                walk(v, f"{path}.{k}", layer, depth + 1)

    if isinstance(cache, (tuple, list)) and cache and all(
            isinstance(t, torch.Tensor) and t.shape[-1] == n_layers for t in cache):
        for i, t in enumerate(cache):  # rwkv: a few tensors, the last axis the layer
            for layer in range(n_layers):
                counts[layer] += t[..., layer].numel()
                shapes[layer].append((f"state[{i}]", tuple(t[..., layer].shape)))
        return counts, shapes
    if isinstance(cache, (tuple, list)):  # legacy tuples: one entry per layer
        per_layer = {"layers": cache}
    else:
        if getattr(cache, "self_attention_cache", None) is not None:  # encoder-decoder wrapper
            cache = cache.self_attention_cache
        # DynamicCache.layers, plus any other per-layer list a model-specific cache keeps
        # (MiniMaxCache.linear_cache); lazily built lists may be shorter than the model.
        per_layer = {name: value for name, value in vars(cache).items()
                     if isinstance(value, (list, tuple)) and 0 < len(value) <= n_layers}
    if not per_layer:
        raise Skip(f"cache {type(cache).__name__} has no per-layer structure the count understands")
    for name, value in per_layer.items():
        for i, item in enumerate(value):
            walk(item, f"{name}[{i}]", i)
    return counts, shapes


def _add_module_states(model, n_layers: int, counts: list, shapes: list) -> None:
    """Tensors a decoder layer keeps as plain attributes after a cached forward (not weights, not
    buffers): recurrent_gemma keeps its conv and RG-LRU states on the modules, not in the cache."""
    import torch

    stack = next((m for m in model.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n_layers), None)
    if stack is None:
        return
    for i, layer in enumerate(stack):
        for path, module in layer.named_modules():
            for name, value in vars(module).items():
                if isinstance(value, torch.Tensor) and value.dim() > 0 and not name.startswith("_"):
                    counts[i] += value.numel()
                    shapes[i].append((f"module[{i}].{path}.{name}", tuple(value.shape)))


# Non-default forms of a model_type that transformers' defaults do not exercise: windows turned on
# (issue 11: jamba, qwen2_moe and qwen3_moe apply them by their own rules), Falcon's new decoder, LFM2's
# conv layers; and the older config.json forms of hub files (per-family markers instead of `layer_types`),
# which kvplan must read to the same layers as transformers builds.
# id -> (model_type, settings on the shrunk config, edit of the saved text config kvplan reads or None).
# "layer_types": None lets the config recompute them from the settings.
def _drop(*keys):
    def edit(text: dict) -> None:
        for key in keys:
            text.pop(key, None)
    return edit


def _legacy(drop: tuple, **put):
    def edit(text: dict) -> None:
        made = {key: make(text) if callable(make) else make for key, make in put.items()}
        for key in drop:
            text.pop(key, None)
        text.update(made)
    return edit


_NEMOTRON_SYMBOL = {"linear_attention": "M", "mamba": "M", "full_attention": "*", "attention": "*", "mlp": "-",
                    "moe": "E"}
_WINDOW_ON = {"use_sliding_window": True, "sliding_window": WINDOW, "max_window_layers": 12, "layer_types": None}
_M3_SPARSE = {"sparse_attention_freq": [0, 0, 0] + [1] * 57, "sparse_disable_index_value": [0, 0, 0] + [1] * 57,
              "sparse_index_dim": 8, "sparse_block_size": 4, "sparse_topk_blocks": 2}
VARIANTS: dict[str, tuple[str, dict, object]] = {
    "qwen2[use_sliding_window]": ("qwen2", _WINDOW_ON, None),
    "qwen2_moe[use_sliding_window]": ("qwen2_moe", _WINDOW_ON, None),
    "qwen3[use_sliding_window]": ("qwen3", _WINDOW_ON, None),
    "qwen3_moe[use_sliding_window]": ("qwen3_moe", {"use_sliding_window": True, "sliding_window": WINDOW,
                                                    "layer_types": None}, None),
    "jamba[sliding_window]": ("jamba", {"sliding_window": WINDOW}, None),
    "mixtral[sliding_window]": ("mixtral", {"sliding_window": WINDOW}, None),
    "phi3[sliding_window]": ("phi3", {"sliding_window": WINDOW}, None),
    "starcoder2[sliding_window]": ("starcoder2", {"sliding_window": WINDOW}, None),
    "doge[sliding_window]": ("doge", {"sliding_window": WINDOW}, None),
    # Doge's keep_window_size selects the keys a query attends to; the cache still holds every token
    "doge[keep_window_size]": ("doge", {"keep_window_size": 4}, None),
    "mistral[no window]": ("mistral", {"sliding_window": None}, None),
    "falcon[new_decoder_architecture]": ("falcon", {"new_decoder_architecture": True, "num_kv_heads": 2}, None),
    # LFM2's default puts attention on all 32 layers; LFM2-1.2B's full_attn_idxs leave 26 conv layers.
    "lfm2[conv layers]": ("lfm2", {"full_attn_idxs": [2, 5, 8, 10, 12, 14], "layer_types": None}, None),
    # -- older hub forms: transformers builds the same model; kvplan reads the legacy markers
    "qwen2[use_sliding_window, file without layer_types]": ("qwen2", _WINDOW_ON, _drop("layer_types")),
    "qwen2_moe[use_sliding_window, file without layer_types]": ("qwen2_moe", _WINDOW_ON, _drop("layer_types")),
    "qwen3[use_sliding_window, file without layer_types]": ("qwen3", _WINDOW_ON, _drop("layer_types")),
    "gemma3_text[sliding_window_pattern]": ("gemma3_text", {}, _legacy(("layer_types", "_sliding_window_pattern"),
                                                                       sliding_window_pattern=6)),
    "exaone4[sliding_window_pattern]": ("exaone4", {}, _drop("layer_types")),
    "llama4_text[no_rope_layers]": ("llama4_text", {}, _drop("layer_types")),
    # Llama-4 Scout and Maverick publish "no_rope_layers": [] (transformers then uses no_rope_layer_interval)
    "llama4_text[no_rope_layers empty]": ("llama4_text", {}, _legacy(("layer_types",), no_rope_layers=[])),
    # real EXAONE 4 files write the pattern as a string, "LLLG" (3 local, 1 global) = 4
    "exaone4[sliding_window_pattern LLLG]": ("exaone4", {}, _legacy(("layer_types",), sliding_window_pattern="LLLG")),
    "lfm2[full_attn_idxs]": ("lfm2", {"full_attn_idxs": [2, 5, 8, 10, 12, 14], "layer_types": None},
                             _drop("layer_types")),
    # Cohere2-MoE files may give first_k_dense_replace instead of layer_types (Cohere2MoeConfig pops it): the
    # dense prefix follows its own pattern
    "cohere2_moe[first_k_dense_replace, file without layer_types]": (
        "cohere2_moe", {"first_k_dense_replace": 3, "prefix_dense_sliding_window_pattern": 2, "layer_types": None},
        _legacy(("layer_types",), first_k_dense_replace=3)),
    "granite_swa[file without layer_types]": ("granite_swa", {}, _drop("layer_types")),
    "granitemoe_swa[file without layer_types]": ("granitemoe_swa", {}, _drop("layer_types")),
    # MiMo-V2-Flash's hub form: V narrower than K, sliding_window_size (transformers adds 1), hybrid_layer_pattern
    # and swa_* widths that transformers does not read (they agree with what it builds) instead of layer_types
    "mimo_v2_flash[hub form]": ("mimo_v2_flash", {"v_head_dim": 8, "sliding_window_size": 6}, _legacy(
        ("layer_types",), hybrid_layer_pattern=lambda t: [0 if i == 0 or (i + 1) % 6 == 0 else 1
                                                          for i in range(t.get("num_hidden_layers", 48))],
        swa_num_key_value_heads=4, swa_head_dim=16, swa_v_head_dim=8)),
    # Laguna-XS.2's form: every 4th layer full, the rest sliding, more query heads on the sliding layers
    "laguna[sliding layers, per-layer heads]": ("laguna", {
        "layer_types": ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(40)],
        "num_attention_heads_per_layer": [4 if i % 4 == 0 else 8 for i in range(40)]}, None),
    "lfm3[file without layer_types]": ("lfm3", {}, _drop("layer_types")),
    "zaya[hybrid_sliding]": ("zaya", {"sliding_window": WINDOW, "layer_types": [
        "hybrid_sliding" if i % 2 else "hybrid" for i in range(40)]}, None),
    # Bailing-Hybrid's hub form: no layer_types and no linear_* fields; head_dim is the linear head width
    # (BailingHybridConfig derives linear_head_dim from it, then overwrites head_dim with qk_rope_head_dim)
    "bailing_hybrid[hub form]": ("bailing_hybrid", {}, _legacy(
        ("layer_types", "linear_head_dim", "linear_num_heads", "linear_conv_kernel_dim", "qk_head_dim"),
        head_dim=lambda t: t["linear_head_dim"])),
    "hy_v4[file without indexer_types]": ("hy_v4", {}, _drop("indexer_types")),
    "inkling_text[local_layer_ids, file without layer_types]": (
        "inkling_text", {"local_layer_ids": [0, 2, 3], "layer_types": None}, _drop("layer_types")),
    "inkling2_text[file without layer_types]": ("inkling2_text", {}, _drop("layer_types")),
    # indexer keys on some layers only, explicit no_rope_layers
    "mistral_large4[indexer schedule, no_rope_layers]": ("mistral_large4", {
        "index_topk_freq": 3, "no_rope_layers": [int(i % 5 != 0) for i in range(72)], "indexer_types": None,
        "layer_types": None}, None),
    # Step 3.5's released form: 3 sliding : 1 full, more query heads on the sliding layers (per_layer_config)
    "step3p7[sliding layers, per-layer heads]": ("step3p7", {
        "layer_types": ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(45)],
        "num_sliding_attention_heads": 8}, None),
    # MiniMax-M3's released schedule: 3 full layers, then block-sparse layers with index keys
    "minimax_m3_vl_text[sparse layers]": ("minimax_m3_vl_text", {
        "layer_types": ["full_attention"] * 3 + ["minimax_m3_sparse"] * 57}, None),
    # the checkpoint's form: sparse_attention_config (legacy sparse_* names) instead of layer_types
    "minimax_m3_vl_text[sparse_attention_config, file without layer_types]": (
        "minimax_m3_vl_text", {"layer_types": None, "sparse_attention_config": _M3_SPARSE},
        _legacy(("layer_types", "index_head_dim", "index_block_size", "index_topk_blocks"),
                sparse_attention_config=_M3_SPARSE)),
    "dots3_note_text[file without layer_types]": ("dots3_note_text", {}, _drop("layer_types")),
    "muse_glimmer[file without layer_types]": ("muse_glimmer", {}, _drop("layer_types")),
    "qwen2_5_omni_thinker[use_sliding_window, file without layer_types]": (
        "qwen2_5_omni_thinker", _WINDOW_ON, _drop("layer_types")),
    "qwen2_vl[use_sliding_window, file without layer_types]": ("qwen2_vl", _WINDOW_ON, _drop("layer_types")),
    "nemotron_h[hybrid_override_pattern]": ("nemotron_h", {}, _legacy(
        ("layers_block_type", "layer_types"),
        num_hidden_layers=lambda t: len(t["layers_block_type"]),
        hybrid_override_pattern=lambda t: "".join(_NEMOTRON_SYMBOL[k] for k in t["layers_block_type"]))),
}


def _merge(into: dict, extra: dict) -> None:
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def _build_failure(model_type: str, exc: Exception, auto) -> str:
    """Say whether transformers' own default config fails to build too (on the meta device: no memory)."""
    import torch

    try:
        with torch.device("meta"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            auto.from_config(default_config(model_type))
    except Exception as default_exc:  # noqa: BLE001
        return f"transformers cannot build its default config: {type(default_exc).__name__}: {_short(default_exc)}"
    return f"harness: the shrunk model fails to build (the default builds): {type(exc).__name__}: {_short(exc)}"
