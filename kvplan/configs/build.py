"""Turn a Hugging Face config dict into a ModelSpec (the per-layer cache description).

The same steps for every family (families.py holds one record per model_type):
1. find the family, unwrapping a nested text model (`text_config`, or the
   family's own key: `llm_config`, `language_config`);
2. read the layer count and each layer's kind (`layer_types`, else the older
   markers the family writes, else its rule: markers.py);
3. turn each kind into what the layer caches (attention K/V with its window or
   chunk, an MLA latent, a recurrent state, nothing);
4. apply KV sharing between layers, and count parameters for the weights.

An unknown model_type is read with transformers' generic cache rule only when
every structural field it carries is understood; the reading is then marked
"guessed". A field that hints at a structure kvplan cannot see (a per-layer
list, a latent rank, a state size) is refused by name instead.
"""

from __future__ import annotations

import functools
import re
import warnings

from ..core.layers import LayerSpec, TokenCache
from ..core.model import ModelSpec
from ..core.transform import intern
from ..errors import ConfigError
from . import kinds as K
from . import quant_bytes, quant_mlx, quant_stored
from .param_embeddings import embedding_params
from .params_generic import gpt_oss_expert_weights
from .attention import attention_cache, head_dims
from .family import Family
from .block_sparse import block_sparse_caches
from .compressed import compressed_layer
from .families import BY_ARCHITECTURE, FAMILIES, GENERIC, PARAMS_OFF, REFUSED, REFUSED_ARCHITECTURES
from .fields import Fields
from .latent import indexer_cache, latent_cache
from .markers import MARKERS, marker_length, normalise

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


# -- unknown model types ------------------------------------------------------

# Fields an unknown decoder may carry that the generic reading understands.
_GENERIC_UNDERSTOOD = {
    "layer_types", "sliding_window", "attention_chunk_size", "use_sliding_window", "max_window_layers",
    "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
    "max_position_embeddings", "intermediate_size", "vocab_size", "tie_word_embeddings",
    "mlp_layer_types", "layer_norm_eps", "rms_norm_eps",
    # every transformers config carries these (PreTrainedConfig); none says anything about the cache
    "_name_or_path", "architectures", "chunk_size_feed_forward", "dtype", "torch_dtype", "id2label", "label2id",
    "model_type", "output_attentions", "output_hidden_states", "problem_type", "return_dict",
    "transformers_version", "is_encoder_decoder",
}
# Keys that nest a text model (transformers' text_config; remote-code wrappers' llm_config, language_config):
# an unknown type carrying one is refused rather than read flat.
_NESTED_TEXT_KEYS = ("text_config", "llm_config", "language_config")
# Names that say a layer keeps something the generic reading cannot see.
_STRUCTURAL = re.compile(
    r"lora_rank|rope_head_dim|state_size|ssm|conv|mamba|linear_|cross_attention|block_type|kv_shared|"
    r"shared_layer|chunk|window_pattern|rope_layers|index_|indexer|attn_layer|attention_layer|full_attn|"
    r"attn_type|hybrid|recurrent|rnn|lru|compress|global_head|global_key_value|kv_lora|v_head_dim|"
    r"kv_channels|query_group|kv_n_heads|n_head_kv|num_kv_heads|multi_query|layers_block|window_size|"
    r"sliding_window_|attention_window|kv_heads|_idxs|layer_period|layer_offset|attention_groups|share_q_dim|"
    r"sink|v_channels|qk_nope_dim|qk_rope_dim|"  # openPangu's sink attention (K and V of different widths)
    r"cla_share|use_cla"  # cross-layer attention (Hunyuan-Large's remote HunYuanConfig: layers share K/V in groups)
)


def check_generic(raw: dict, source: str, model_type: str) -> None:
    for key, value in raw.items():
        if key in _GENERIC_UNDERSTOOD:
            continue
        if key in _NESTED_TEXT_KEYS or _STRUCTURAL.search(key):
            raise ConfigError(
                f"{source}: unknown model_type {model_type!r} carries {key!r}, which kvplan cannot read "
                "without knowing the family",
                "this family is not supported yet: run 'kvplan models --family' for the ones that are",
            )
        layers = raw.get("num_hidden_layers")
        if isinstance(value, list) and isinstance(layers, int) and layers > 1 and len(value) == layers:
            raise ConfigError(
                f"{source}: unknown model_type {model_type!r} carries a per-layer list {key!r}, which kvplan "
                "cannot read without knowing the family",
                "this family is not supported yet: run 'kvplan models --family' for the ones that are",
            )
    for need in ("num_hidden_layers", "num_attention_heads"):
        if raw.get(need) is None:
            raise ConfigError(
                f"{source}: unknown model_type {model_type!r} and the config lacks {need!r}",
                "kvplan reads unknown types only when they have the standard decoder fields",
            )


# -- layer kinds ----------------------------------------------------------------

def layer_count(f: Fields, family: Family) -> int:
    if family.layers_rule is not None:
        return family.layers_rule(f)
    n = f.opt_int("num_hidden_layers")
    if n is not None:
        return n
    for marker in family.markers:
        length = marker_length(f, marker)
        if length:
            return f.check_int(marker, length)
    raise ConfigError(
        f"{f.source}: config (model_type {f.model_type!r}) has no 'num_hidden_layers'",
        "add 'num_hidden_layers' to the config or pass --set num_hidden_layers=VALUE",
    )


def window_tokens(f: Fields, family: Family) -> int | None:
    """The sliding window in tokens: the family's rule, else sliding_window."""
    return family.window(f) if family.window is not None else f.opt_int("sliding_window")


def layer_kinds(f: Fields, family: Family, n: int) -> list[str]:
    """Each layer's kind, with ATTENTION resolved to full or sliding."""
    windows_on = family.window_gate is None or f.flag(family.window_gate, default=family.window_gate_default)
    if f.has("layer_types"):
        names = f.list("layer_types")
        extra = f.int(family.trailing, default=0, minimum=0) if family.trailing else 0
        if extra and len(names) == n + extra:  # legacy files list the MTP layers after the decoder's
            names = names[:n]
        else:
            names = f.list("layer_types", n)
        kinds = normalise(f, "layer_types", names, family.kinds)
    else:
        kinds = None
        for marker in family.markers:
            if f.has(marker):
                kinds = MARKERS[marker](f, n, family.kinds, family.rest)
                break
        if kinds is None:
            kinds = family.derive(f, n) if family.derive and windows_on else [K.ATTENTION] * n
    window = window_tokens(f, family) if windows_on else None
    out = []
    for i, kind in enumerate(kinds):
        if kind == K.ATTENTION:
            kind = K.SLIDING if window is not None and K.SLIDING in family.kinds else K.FULL
        elif kind in (K.SLIDING, K.HYBRID_SLIDING) and window is None:
            if not windows_on:
                kind = K.FULL if kind == K.SLIDING else K.HYBRID  # use_sliding_window false: no window anywhere
            else:
                raise ConfigError(f"{f.source}: layer {i} is a sliding-window layer but 'sliding_window' is not set "
                                  f"(model_type {f.model_type!r})", "set sliding_window or fix the layer types")
        if kind not in family.kinds:
            raise ConfigError(f"{f.source}: layer {i} is {kind!r}, which model_type {f.model_type!r} cannot have "
                              f"(it has {', '.join(sorted(family.kinds))})", "fix the config's layer types")
        out.append(kind)
    return family.refine(f, out) if family.refine else out


# -- what each kind caches -----------------------------------------------------------

class _LayerMaker:
    """Builds (and shares) the LayerSpec of each kind for one config."""

    def __init__(self, f: Fields, family: Family):
        self.f, self.family = f, family
        self._made: dict[tuple, LayerSpec] = {}
        self._dims = None

    def dims(self) -> tuple[int, int, int, int]:
        if self._dims is None:
            rule = self.family.dims
            self._dims = rule(self.f) if rule else head_dims(self.f, self.family.kv_rule)
        return self._dims

    def _attention(self, kind: str, overrides: dict) -> tuple[TokenCache, ...]:
        f = self.f
        if self.family.attention == "latent":
            window = window_tokens(f, self.family) if kind == K.SLIDING else None
            caches = (latent_cache(f, overrides.get("qk_rope_head_dim"), overrides.get("kv_lora_rank"), window),)
            return caches + (indexer_cache(f),) if kind == K.INDEXED else caches
        _, kv, key_dim, value_dim = self.dims()
        kv = overrides.get("num_key_value_heads", kv)
        if "head_dim" in overrides:
            key_dim = value_dim = overrides["head_dim"]
        window = window_tokens(f, self.family) if kind in (K.SLIDING, K.HYBRID_SLIDING) else None
        chunk = None
        if kind == K.CHUNKED:
            chunk = f.int("attention_chunk_size")
        cache = attention_cache(kv, key_dim, value_dim, window, chunk)
        return block_sparse_caches(f, cache) if kind == K.BLOCK_SPARSE else (cache,)

    def _state(self, kind: str):
        if self.family.kind_state is not None:
            return self.family.kind_state(self.f, kind)
        make = self.family.conv if kind == K.CONV and self.family.conv else self.family.state
        if make is None:
            raise ConfigError(f"{self.f.source}: model_type {self.f.model_type!r} has a {kind!r} layer but kvplan "
                              "knows no state for it", "this layer kind is not supported for this family yet")
        return make(self.f)

    def layer(self, kind: str, index: int) -> LayerSpec:
        per_layer = self.family.per_layer
        overrides = per_layer(self.f, index, kind) if per_layer and kind in K.ATTENTION_KINDS else {}
        key = (kind, tuple(sorted(overrides.items())))
        made = self._made.get(key)
        if made is not None:
            return made
        if self.family.attention == "compressed" and kind in (K.SLIDING, K.CSA, K.HCA):
            spec = compressed_layer(self.f, kind)
        elif kind in (K.NONE, K.CROSS):
            spec = LayerSpec()
        elif kind in (K.LINEAR, K.CONV):
            spec = LayerSpec(state=self._state(kind))
        elif kind in (K.HYBRID, K.HYBRID_SLIDING):
            spec = LayerSpec(caches=self._attention(K.SLIDING if kind == K.HYBRID_SLIDING else K.FULL, overrides),
                             state=self._state(kind))
        else:
            spec = LayerSpec(caches=self._attention(kind, overrides))
        self._made[key] = spec
        return spec


def share_last_layers(layers: list[LayerSpec], kinds: list[str], shared: int, f: Fields) -> list[LayerSpec]:
    """Gemma 3n: the last `shared` layers reuse the cache of the last earlier layer of the same kind."""
    first_shared = len(layers) - shared
    if first_shared <= 0:
        raise ConfigError(f"{f.source}: num_kv_shared_layers {shared} leaves no layer that owns a cache")
    out = list(layers)
    for i in range(first_shared, len(layers)):
        owner = max((j for j in range(first_shared) if kinds[j] == kinds[i]), default=None)
        if owner is None:
            raise ConfigError(f"{f.source}: shared layer {i} has no earlier {kinds[i]} layer to reuse")
        out[i] = LayerSpec(caches=layers[i].caches, shares_cache_of=owner)
    return out


WEIGHTS_NOT_SIZED = "weights not sized from the config"


def checkpoint_quantization_config(raw: dict, text: dict | None = None) -> dict | None:
    """The checkpoint's quantization config where the engines find it, the one reading kvplan takes of it: the
    config's quantization_config, else its compression_config, else its text model's (text, or nested_text(raw)) in
    the same order; the first that is not None (or absent) is taken, and a value that is no JSON object is none (the
    misshapen config is refused where the weights are sized: _misshapen_quantization_config). vLLM 0.34
    transformers_utils/model_arch_config_convertor.py get_quantization_config / _normalize_quantization_config (the
    text_config only when the top config has neither); SGLang 0.5.23 model_loader/checkpoint_quantization.py
    _select_hf_quant_metadata (`is not None` likewise). An empty `quantization_config: {}` is taken, and hides the
    others: it names no method, so vLLM 0.34 serves the checkpoint unquantized (config/model.py _verify_quantization:
    quant_method "" is None) and refuses an online --quantization against it ("... model config (None) does not
    match ..."); SGLang 0.5.23 finds no quant_method in it (configs/model_config.py _verify_quantization: "Unknown
    quantization method: " without the flag; with --quantization fp8, fp8.py Fp8Config.from_config: "Cannot find
    any of ['quant_method'] in the model's quantization config")."""
    for holder in (raw, nested_text(raw) if text is None else text):
        for key in ("quantization_config", "compression_config"):
            quant = holder.get(key) if isinstance(holder, dict) else None
            if quant is not None:
                return quant if isinstance(quant, dict) else None
    return None


def _quantization_config(raw: dict, f: Fields) -> dict | None:
    """The checkpoint's quantization config (checkpoint_quantization_config), the text model's fields read as f has
    them."""
    return checkpoint_quantization_config(raw, f.raw)


def _misshapen_quantization_config(raw: dict, f: Fields) -> str | None:
    """The type of a quantization_config (the config's or its text model's) that is neither null nor a JSON object
    (vLLM 0.33 model_arch_config_convertor.py _normalize_quantization_config reads its quant_method with .get(),
    so such a config does not load); None when there is none."""
    for holder in (raw, f.raw):
        quant = holder.get("quantization_config")
        if quant is not None and not isinstance(quant, dict):
            return type(quant).__name__
    return None


# the dtypes a checkpoint's torch_dtype names (torch's names; transformers writes them without "torch.")
_DTYPES = ("float32", "float16", "bfloat16", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "uint8")


def float_width_bytes(f: Fields) -> int:
    """Bytes of one float parameter as the checkpoint stores it (its torch_dtype; bfloat16 when it names none)."""
    return {"float32": 4, "float16": 2, "bfloat16": 2}.get(_float_dtype(f)[0], 2)


def _float_dtype(f: Fields) -> tuple[str, str | None]:
    """(the checkpoint's dtype, a note when the config names none kvplan knows: bfloat16 is taken)."""
    value = f.get("torch_dtype", "dtype", default="bfloat16")
    text = str(value).removeprefix("torch.") if isinstance(value, str) else None
    if text in _DTYPES:
        return text, None
    return "bfloat16", (f"torch_dtype {value!r} is not a dtype kvplan knows ({', '.join(_DTYPES[:3])} ...): "
                        "the weights are sized as bfloat16")


# a quantization format's mark in a checkpoint's name (nvidia/Llama-3.1-70B-Instruct-FP8, ...-NVFP4, ...-AWQ)
_QUANTIZED_NAME = re.compile(r"(?i)(?:^|[-_./])(?:fp8|nvfp4|mxfp4|fp4|awq|gptq|int4|int8|w4a16|w8a8|w4a4|bnb-4bit)"
                             r"(?:$|[-_./])")


def _weight_format(f: Fields, raw: dict, total: int, layers: list, dims, online=None) -> tuple:
    """(weight dtype, average bytes per parameter, bytes of one decoder-layer linear weight, parameters kept in
    the float dtype, notes, (bytes each TP rank holds whole, or for an unquantized config a counter of them that
    runs on first use, bytes of GPTQ g_idx, the routed experts' parameters and bytes where the format stores them
    in a format of their own: FP8's store_dtype)) of the
    checkpoint the config describes: its float dtype, or its quantization (kvplan.configs.quant_bytes) read
    module by module where kvplan has a per-module count of the family (configs/weight_tables/__init__.py: the embeddings,
    norms, routers, biases, a kept LM head and whatever a list of unquantized modules names in the float dtype,
    plus what the format stores once per quantized tensor); else with the embeddings, a kept LM head and, for
    gpt-oss, everything but the experts in the float dtype, norms, biases and routers at the quantized width (a
    list that keeps more then gives no figure). A quantization whose bytes kvplan cannot work out gives 0 B and
    says why (GPU plans then refuse)."""
    dtype = _float_dtype(f)[0]
    plain_bytes = {"float32": 4.0, "float16": 2.0, "bfloat16": 2.0}.get(dtype, 2.0)
    misshapen = _misshapen_quantization_config(raw, f)
    if misshapen is not None and total:
        return dtype, 0.0, 0.0, 0, (f"{WEIGHTS_NOT_SIZED}: its quantization_config is a {misshapen}, not a JSON "
                                 "object; give them with --weights, or point --weights at the checkpoint's folder",), (0, 0, 0, 0, None)
    low_bit = raw.get("bigdl_transformers_low_bit")
    if low_bit and total:  # ipex-llm's save_low_bit writes its qtype here and its own low-bit tensors beside it
        return dtype, 0.0, 0.0, 0, (f"{WEIGHTS_NOT_SIZED}: a BigDL / ipex-llm low-bit checkpoint "
                                 f"(bigdl_transformers_low_bit {low_bit!r}): its tensors are in ipex-llm's own "
                                 "low-bit layout, which the config does not size and vLLM 0.34 has no method for; "
                                 "give them with --weights",), (0, 0, 0, 0, None)
    mlx = quant_mlx.block(raw) if total else None
    if mlx is not None:  # mlx-lm's "quantization" (and its copy as quantization_config): no quant_method
        return _mlx_format(f, mlx, total, layers, dims, dtype, plain_bytes)
    quant = _quantization_config(raw, f)
    if not quant or not total:
        # an unquantized config counts what each TP rank holds whole on first use, not here (docs/weights.md)
        whole, kv = _replicated_counter(f, layers, dims, total, plain_bytes) if total else (0, None)
        return dtype, plain_bytes, plain_bytes, 0, (), (whole, 0, 0, 0, kv)
    try:
        q = quant_bytes.read(quant, f.model_type)
        if online is not None:  # an engine's online layout: what it holds beyond that format (quant_online.OnlineLayout)
            q = online.applied(q)
        if dtype == "float32" and q.float32_stored_as is not None:  # e.g. AWQ: 16-bit whatever the config says
            dtype, plain_bytes = q.float32_stored_as, 2.0
        split = (_module_split(f, q, layers, dims, total) if q.exclusions is not None
                 else None if q.experts_only else _whole_split(f, q, layers, dims, total))
        if split is None and q.experts_bytes_per_weight is not None:
            raise quant_bytes.Unsized(f"its store_dtype {q.experts_dtype!r} stores the routed experts in their own "
                                      f"format, and kvplan has no per-module count of model_type {f.model_type!r} "
                                      "that adds up to its parameter count to find them")
    except quant_bytes.Unsized as exc:
        return dtype, 0.0, 0.0, 0, (f"{WEIGHTS_NOT_SIZED}: {exc}; give them with --weights, or point --weights "
                                 "at the checkpoint's folder or hf://REPO to read its tensors",), (0, 0, 0, 0, None)
    head_note = ""
    if q.keeps_lm_head and not q.experts_only and not f.has("tie_word_embeddings"):
        head = embedding_params(f)[1]
        head_note = f"; the config has no tie_word_embeddings, so the head is taken as {'separate' if head else 'tied'}"
    if split is not None:
        plain = total - split.quantized
        beside = quant_stored.stored(q, split)
        # routed experts in a format of their own (FP8's store_dtype): their params and bytes
        experts = split.experts if q.experts_bytes_per_weight is not None else 0
        experts_bytes = experts * q.experts_bytes_per_weight if experts else 0
        stored = ((split.quantized - experts) * q.bytes_per_weight + experts_bytes + plain * plain_bytes
                  + beside.total_bytes)
        kept = "; ".join(f"{role} {n:,}" for role, n in split.kept.items())
        if q.exclusions is not None:
            keeps = ("torchao leaves unquantized (linear layers only: not the routed experts; its "
                     "modules_to_not_convert)" if q.exclusions[0] == "torchao" else
                     "outside the routed experts" if q.exclusions[0] == "routed experts only" else
                     "its list of unquantized modules keeps")
            what = (f"the linear weights {keeps} ({kept or 'no linear weights'}), read "
                    "module by module, and the embeddings, norms, routers and biases")
        else:  # the head, when kept, is the only linear weight in the float dtype
            routers = ("norms and biases (the routers quantized, as the engine builds them)"
                       if f.model_type in q.quantized_router_families else "norms, routers and biases")
            what = f"read module by module: {'the LM head, ' if kept else ''}the embeddings, {routers}"
        note = (f"weights estimated as {q.label}: {q.bytes_per_weight:.4g} B per quantized weight with its scales, "
                f"{plain:,} parameters at {plain_bytes:g} B: {what}")
        if experts:
            note += (f"; the routed experts' {experts:,} weights as {q.experts_dtype.upper()} (store_dtype), "
                     f"{q.experts_bytes_per_weight:.4g} B each: packed 4-bit values and one uint8 E8M0 scale per 32 "
                     "(vLLM's Mxfp4MoEMethod layout)")
        if beside.parts:
            note += "; " + "; ".join(beside.parts)
        if beside.unsized:
            note += ("; estimated: not counted, as the config does not size them, " + " and ".join(beside.unsized))
        note += head_note if q.exclusions is None else ""
        # what each TP rank holds whole: float parameters, the weights of whole modules the format quantizes (at
        # its per-weight rate with scales), per-tensor and KV scales
        whole = int(split.replicated * plain_bytes + split.replicated_quantized * q.bytes_per_weight) \
            + beside.replicated_bytes
        # the KV shares vLLM splits by KV head: quantized weights at the format's rate with their scales and zero
        # points (which follow the same output rows: per group in bytes_per_weight, per row in per_output_row_bytes,
        # as a QKVParallelLinear loads a ChannelQuantScaleParameter by KV head like its weight: vLLM 0.34 parameter.py
        # _ColumnvLLMParameter.load_qkv_weight, tp_rank // num_kv_head_replicas), biases and kept
        # weights in the float dtype
        kv = tuple((heads, int(quantized * q.bytes_per_weight + rows * q.per_output_row_bytes + kept * plain_bytes))
                   for heads, quantized, kept, rows in split.kv)
        label = f"{q.experts_dtype} experts + {q.dtype} + {dtype}" if experts else f"{q.dtype} + {dtype}"
        return (label, stored / total, q.bytes_per_weight, plain, (note,),
                (whole, beside.g_idx_bytes, experts, round(experts_bytes), kv))
    embed, head = embedding_params(f)
    plain = embed + (head if q.keeps_lm_head else 0)
    whole, kv = 0, None
    if q.experts_only:
        plain = total - gpt_oss_expert_weights(f, len(layers))
        # all but the experts stays in the float dtype, so what each TP rank holds whole (norms, routers, o_proj
        # biases) and the KV shares are the unquantized checkpoint's, from the per-module count where it adds up
        counter, kv_counter = _replicated_counter(f, layers, dims, total, plain_bytes)
        whole = counter() if callable(counter) else 0
        kv = kv_counter() if callable(kv_counter) else None
    stored = (total - plain) * q.bytes_per_weight + plain * plain_bytes
    kept = "all but the routed experts' weights" if q.experts_only else (
        "embeddings and LM head" if q.keeps_lm_head and head else "embeddings")
    note = (f"weights estimated as {q.label}: {q.bytes_per_weight:.4g} B per quantized weight with its scales, "
            f"{plain:,} parameters ({kept}) at {plain_bytes:g} B")
    if not q.experts_only:
        note += (f"; norms, biases and routers counted at the quantized width and per-tensor scales left out (kvplan "
                 f"has no per-module count of model_type {f.model_type!r} that adds up to its parameter count)")
    notes = (note + head_note,)
    return (f"{q.dtype} + {dtype}" if plain else q.dtype, stored / total, q.bytes_per_weight, plain, notes,
            (whole, 0, 0, 0, kv))


def _mlx_format(f: Fields, mlx: dict, total: int, layers: list, dims, dtype: str, plain_bytes: float) -> tuple:
    """_weight_format's answer for an MLX checkpoint (configs/quant_mlx.py), module by module from kvplan's table
    of the family where mlx-lm's module layout was read; else no figure, with the reason."""
    from . import weight_tables

    try:
        q = quant_mlx.read(mlx)
        if f.model_type not in quant_mlx.FAMILIES:
            raise quant_bytes.Unsized(f"an MLX checkpoint ({q.default.label}) of model_type {f.model_type!r}, whose "
                                      "mlx-lm module layout kvplan has not read (it has: "
                                      f"{', '.join(quant_mlx.FAMILIES)})")
        modules = weight_tables.table(f, layers, dims)
        if not modules or sum(m.weight + m.other for m in modules) != total:
            raise quant_bytes.Unsized(f"an MLX checkpoint ({q.default.label}), and kvplan's per-module count of "
                                      f"model_type {f.model_type!r} does not add up to its parameter count")
        sized = quant_mlx.size(q, modules, f.int("hidden_size"), int(plain_bytes),
                               quant_mlx.PATH_PREFIX.get(f.model_type, ""))
    except quant_bytes.Unsized as exc:
        return dtype, 0.0, 0.0, 0, (f"{WEIGHTS_NOT_SIZED}: {exc}; give them with --weights, or point --weights "
                                 "at the checkpoint's folder or hf://REPO to read its tensors",), (0, 0, 0, 0, None)
    d = q.default
    rate = d.bytes_per_weight(int(plain_bytes))
    plain = total - sized.quantized
    scales = (f"a {dtype} scale and bias per {d.group_size} weights" if d.mode == "affine"
              else f"a uint8 scale per {d.group_size} weights")
    note = (f"weights estimated as MLX {d.label} (mlx-lm): {rate:.4g} B per quantized weight with {scales}, "
            f"{sized.quantized:,} parameters quantized (the linear weights, the embeddings and any router, as MLX "
            f"quantizes nn.Linear and nn.Embedding), {plain:,} parameters at {plain_bytes:g} B (norms, biases)")
    others = {label: n for label, n in sized.rates.items() if label != d.label}
    if others:
        note += "; by the config's per-module entries " + ", ".join(f"{n:,} at {label}" for label, n in others.items())
    if sized.kept:
        note += (f"; {sized.kept:,} of them left unquantized: inputs not a multiple of group {d.group_size} "
                 "(mlx_lm quantize_model)")
    note += "; vLLM and SGLang cannot serve an MLX checkpoint"
    qdtype = f"mlx-int{d.bits}" if d.mode == "affine" else f"mlx-{d.mode}"
    return (f"{qdtype} + {dtype}", sized.stored_bytes / total, rate, plain, (note,),
            (int(sized.whole_bytes), 0, 0, 0, None))


def _replicated_counter(f: Fields, layers: list, dims, total: int, plain_bytes: float):
    """(the bytes each TP rank holds whole of an unquantized checkpoint (norms, routers, RowParallelLinear biases:
    weight_tables.replicated_params), the KV shares vLLM splits by KV head as (KV heads, bytes) pairs
    (weight_tables.kv_params)), as two counters that build the family's per-module table when first called and
    keep the answer: building it costs 0.4 to 3 ms, more than the rest of build_model for most configs, and only a
    TP split reads it. 0 and None where kvplan has no such table, or one that does not add up to the count."""
    from . import weight_tables

    if f.model_type not in weight_tables.TABLES:
        return 0, None

    @functools.cache
    def modules() -> list:
        found = weight_tables.table(f, layers, dims)
        return found if found and sum(m.weight + m.other for m in found) == total else []

    def count() -> int:
        return int(weight_tables.replicated_params(modules()) * plain_bytes)

    def kv() -> tuple[tuple[int, int], ...] | None:
        found = modules()
        return tuple((heads, int(n * plain_bytes)) for heads, n in sorted(weight_tables.kv_params(found).items())) \
            if found else None

    return functools.cache(count), functools.cache(kv)


def _routed_counter(f: Fields, layers: list, dims, total: int):
    """A counter of the routed experts (experts per MoE layer, their parameters over every layer; then the dense MLP
    and shared-expert parameters, the LM head's, the shared experts' alone, the MoE layers) from the family's
    per-module table (weight_tables: the modules with Module.experts), built on first call (only a data / expert
    parallel plan reads it: capacity.experts); it answers None where kvplan has no table that adds up to the count
    (a dense model: 0 experts and 0 parameters, the MLPs and head counted for SGLang's attention DP)."""
    from . import weight_tables

    if f.model_type not in weight_tables.TABLES:
        return None

    @functools.cache
    def count() -> tuple[int, int] | None:
        found = weight_tables.table(f, layers, dims)
        if not found or sum(m.weight + m.other for m in found) != total:
            return None
        routed = [m for m in found if m.experts]
        # and the parameters SGLang's attention DP splits over the whole TP group (capacity.experts.full_tp_bytes): the
        # dense MLPs and shared experts (weight), the untied LM head; and the shared experts alone (vLLM's
        # sequence-parallel MoE holds them whole: capacity.experts.shared_bytes)
        ffn = sum(m.weight for m in found if m.role in ("mlp", "shared experts") and not m.top)
        head = sum(m.weight + m.other for m in found if m.role == "lm_head")
        shared = sum(m.weight for m in found if m.role == "shared experts")
        # and the MoE layers: the decoder layers ("layers.N.") with routed experts (EPLB's per-layer state:
        # capacity/eplb.py)
        moe_layers = len({m.name.split(".")[1] for m in routed if m.name.startswith("layers.") and not m.top})
        return (max((m.experts for m in routed), default=0), sum(m.weight for m in routed), ffn, head, shared,
                moe_layers)

    return count


def _whole_split(f: Fields, q, layers: list, dims, total: int):
    """The parameters q's format quantizes when it keeps no linear layer but perhaps the head: every linear
    weight of the family's per-module count (configs/weight_tables/__init__.py); None where kvplan has no such count, or
    one that does not add up to the parameter count."""
    from .weight_tables import split, table

    modules = table(f, layers, dims)
    if not modules or sum(m.weight + m.other for m in modules) != total:
        return None
    if f.model_type in q.quantized_router_families:  # the engine quantizes the router too (configs/quant_online.py)
        from .weight_tables import quantized_routers

        modules = quantized_routers(modules, f.int("hidden_size"))
    return split(modules, lambda name: False, quantizes_head=not q.keeps_lm_head, family=f.model_type)


def _module_split(f: Fields, q, layers: list, dims, total: int):
    """The parameters q's format quantizes under its list of unquantized modules, module by module
    (configs/weight_tables/__init__.py, matched as configs/quant_exclude.py reads the format's list)."""
    from .weight_tables import split, table
    from .quant_exclude import Matcher

    from .quant_exclude import ROUTED_EXPERTS_ONLY

    style, names = q.exclusions
    modules = table(f, layers, dims)
    if not modules and style == "torchao":
        raise quant_bytes.Unsized("torchao quantizes linear layers only, not the routed experts, which kvplan reads "
                                  f"module by module, and it has no per-module count of model_type {f.model_type!r}")
    if not modules and style == ROUTED_EXPERTS_ONLY:
        raise quant_bytes.Unsized("only the routed experts are quantized, which kvplan finds module by module, and it "
                                  f"has no per-module count of model_type {f.model_type!r}")
    if not modules:
        try:
            quant_bytes._kept(list(names), style)
        except quant_bytes.Unsized as exc:
            raise quant_bytes.Unsized(f"{exc} (kvplan reads such lists module by module, and has no per-module "
                                      f"count of model_type {f.model_type!r})") from None
    counted = sum(m.weight + m.other for m in modules)
    if counted != total:
        raise quant_bytes.Unsized(f"{style} keeps modules unquantized, and kvplan's per-module count of model_type "
                                  f"{f.model_type!r} ({counted:,} parameters) differs from its parameter count "
                                  f"({total:,}) for this config")
    if style == ROUTED_EXPERTS_ONLY:
        return split(modules, lambda name: False, quantizes_head=False, family=f.model_type, routed_experts_only=True)
    return split(modules, Matcher(style, names), quantizes_head=not q.keeps_lm_head, family=f.model_type)


def _architecture(raw: dict) -> str | None:
    """The config's first architecture name (None when it names none)."""
    names = raw.get("architectures")
    if isinstance(names, list) and names and isinstance(names[0], str) and names[0].strip():
        return names[0].strip()
    return None


def _latent_fp8(f: Fields) -> str | None:
    """Mistral Large 4's dsa.fp8_kv_cache (configs/mistral_params.py): vLLM 0.34's --kv-cache-dtype auto keeps the
    latent as fp8_ds_mla on CUDA (model_executor/models/config.py MistralLarge4ForCausalLM.verify_and_update_config)."""
    return "fp8_ds_mla" if f.model_type == "mistral_large_4" and f.flag("fp8_kv_cache", default=False) else None


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


def _read(raw: dict, source: str) -> tuple[Family, Fields, str, list[LayerSpec], tuple | None]:
    """(family, fields, reading, layers, attention dims) of a config dict: steps 1-4 but the parameter count."""
    family, f, reading = resolve(raw, source)
    for flag, why in family.refuse:
        if f.get(flag):
            raise ConfigError(f"{source}: {flag!r} is set ({why}); kvplan does not size that (model_type "
                              f"{f.model_type!r})", f"remove it or pass --set {flag}=null")
    n = layer_count(f, family)
    kinds = layer_kinds(f, family, n)
    maker = _LayerMaker(f, family)
    layers = family.layers(f, n, kinds) if family.layers else [maker.layer(kind, i) for i, kind in enumerate(kinds)]
    if family.repeat:
        layers = family.repeat(f, layers)
    shared = f.int("num_kv_shared_layers", default=0, minimum=0, maximum=n)
    if shared:
        layers = share_last_layers(layers, kinds, shared, f)
    if not any(layer.caches or layer.state for layer in layers):
        raise ConfigError(f"{source}: config describes no layer that caches anything (model_type {f.model_type!r})")
    dims = maker.dims() if any(k in K.ATTENTION_KINDS for k in kinds) and family.attention == "kv" else None
    return family, f, reading, layers, dims


def last_layer_params(raw: dict, source: str) -> int | None:
    """Parameters of the config's last decoder layer, by the family's own counter (the count with every
    layer less the count without the last one); None where the family has no counter or lacks a field.
    A multi-token-prediction layer built from the target's decoder layer class is sized by this."""
    family, f, _, layers, dims = _read(raw, source)
    if family.params is None or len(layers) < 2:
        return None
    try:
        return family.params(f, layers, dims)[0] - family.params(f, layers[:-1], dims)[0]
    except ConfigError:
        return None


def last_layer_whole_params(raw: dict, source: str) -> int:
    """Parameters of the config's last decoder layer that vLLM holds whole on every TP rank (norms, the router,
    RowParallelLinear biases, MLA's q_a_proj / kv_a_proj_with_mqa, the DSA indexer: weight_tables.replicated_params,
    the table with every layer less the table without the last one); 0 where the family has no per-module table."""
    from . import weight_tables

    try:
        _, f, _, layers, dims = _read(raw, source)
    except ConfigError:
        return 0
    if len(layers) < 2:
        return 0
    whole, before = weight_tables.table(f, layers, dims), weight_tables.table(f, layers[:-1], dims)
    if not whole or not before:
        return 0
    return weight_tables.replicated_params(whole) - weight_tables.replicated_params(before)


def _module_table(raw: dict | None, source: str) -> list | None:
    """The config's per-module table (weight_tables.table), or None where kvplan has no table of the family, or the
    config does not read: what kv_modules and whole_modules read."""
    from . import weight_tables

    if not isinstance(raw, dict):
        return None
    try:
        with warnings.catch_warnings():  # the config was read already, and warned then
            warnings.simplefilter("ignore")
            _, f, _, layers, dims = _read(raw, source)
    except ConfigError:
        return None
    if f.model_type not in weight_tables.TABLES:
        return None
    return weight_tables.table(f, layers, dims) or None


def kv_modules(raw: dict | None, source: str = "config") -> dict[str, tuple[int, int, int]] | None:
    """The k/v modules of the config's per-module table (weight_tables/__init__.py Module.kv_heads), by every name a
    checkpoint may give them (Module.names), as (KV heads, parameters of the KV share, parameters of the weight):
    what a tensor table's KV shares are read by (weights.roles.fold). {} where the table has none (MLA); None where
    kvplan has no table of the family, or the config does not read."""
    modules = _module_table(raw, source)
    if modules is None:
        return None
    return {name: (m.kv_heads, m.kv_weight, m.weight) if m.weight else (m.kv_heads, m.kv_other, m.other)
            for m in modules if m.kv_heads and not m.whole and (m.weight or m.other) for name in m.names()}


def whole_modules(raw: dict | None, source: str = "config") -> dict[str, tuple[int, int, int, int]] | None:
    """Every module of the config's per-module table by every name a checkpoint may give it (Module.names), as
    (weight parameters held whole on every TP rank, weight parameters, float parameters held whole, float
    parameters): weight_tables.held_whole, the rule the config estimate sums (replicated_params). What a tensor
    table's whole tensors are read by beyond the names weights.roles._TP_WHOLE knows (weights.roles.fold), so that
    both paths follow the one table; None where kvplan has no table of the family."""
    from .weight_tables import held_whole

    modules = _module_table(raw, source)
    if modules is None:
        return None
    out: dict[str, tuple[int, int, int, int]] = {}
    for m in modules:
        if "{e}" in m.name:  # routed experts: split over TP, never whole
            continue
        weight, other = held_whole(m)
        for name in m.names():
            a, b, c, d = out.get(name, (0, 0, 0, 0))
            out[name] = (a + weight, b + m.weight, c + other, d + m.other)
    return out


def counted_params(family: Family, f: Fields, layers: list, dims) -> tuple[int, int, tuple[str, ...]]:
    """(total, active, notes) of the config's weights: the family's count (Family.params) for its causal LM, and
    for a pooling architecture (configs/pooling_heads.py) that count less the untied LM head (from the family's
    per-module table where it adds up, else vocab x hidden: param_embeddings.embedding_params) and with the pooling
    head, a note saying so. The one place the count is assembled: the tables (weight_tables.table) follow the same
    rule, so they add up to it."""
    from . import weight_tables
    from .pooling_heads import pooling_head

    total, active = family.params(f, layers, dims)
    head = pooling_head(f) if total else None
    if head is None:
        return total, active, ()
    modules = weight_tables.causal_table(f, layers, dims)
    if modules and sum(m.weight + m.other for m in modules) == total:
        lm_head = sum(m.weight + m.other for m in modules if m.role == "lm_head")
    else:
        lm_head = embedding_params(f)[1]
    delta = head.params - lm_head
    return total + delta, active + delta, (head.describe(lm_head),)


def _with_vision_tower(raw: dict, f: Fields, whole, online=None):
    """(the bytes each TP rank holds whole, ModelSpec.weight_vision, ModelSpec.weight_vision_quantized, notes) of an
    image-text wrapper whose vision tower and projector kvplan counts (configs/vision_towers.py): the tower's
    parameters and bytes at the checkpoint's float dtype (a quantized checkpoint is taken to keep its tower
    unquantized, as the note says), its linears in the engine's layout where its online quantization quantizes them
    (configs/quant_online.py quantized_tower), and its part vLLM holds whole added to `whole`; a wrapper kvplan does
    not count gets a note saying so."""
    from .quant_online import quantized_tower
    from .vision_count import NotCounted
    from .vision_towers import vision_tower

    try:
        tower = vision_tower(raw, f)  # a malformed vision_config: its ConfigError, one line
    except NotCounted as exc:
        return whole, (0, 0, 0), (0, 0), (f"vision tower not counted ({exc.message}): the weights are the text "
                                          "model's; give --weights for the checkpoint's",)
    if tower is None:
        # a vision_config, or Phi-4-multimodal's remote-code embd_layer (its image and audio encoders' settings)
        if isinstance(raw.get("vision_config"), dict) or isinstance(raw.get("embd_layer"), dict):
            return whole, (0, 0, 0), (0, 0), (
                f"vision tower not counted: kvplan has no count of model_type {raw.get('model_type')!r}'s image "
                "encoder and projector, which the checkpoint holds and an engine serving images loads; the weights "
                "are the text model's (give --weights, or the checkpoint's folder or hf://REPO)",)
        if f.model_type == "qwen" and isinstance(raw.get("visual"), dict):
            # Qwen-VL's remote-code QWenLMHeadModel: its ViT and resampler under transformer.visual, which SGLang
            # 0.5.23 qwen.py load_weights skips ("Skip visual encoder weights (e.g. Qwen-VL-Chat
            # transformer.visual.*)"): it serves the text model, which is what kvplan counts (Qwen-VL-Chat-Int4's
            # index holds 1,935,610,624 tower parameters in float16 beside it: tests/test_wild_configs_gptq.py)
            return whole, (0, 0, 0), (0, 0), (
                "vision tower not counted: Qwen-VL's `visual` encoder, which the checkpoint holds and SGLang 0.5.23 "
                "qwen.py skips at load; the weights are the text model's",)
        return whole, (0, 0, 0), (0, 0), ()
    width = float_width_bytes(f)
    tower_q = quantized_tower(raw, online)
    total, extra, q_params, q_bytes = tower.sized(width, *(tower_q or ()))
    whole = (lambda base=whole: base() + extra) if callable(whole) else whole + extra
    quantized = (q_params, f"in the engine's online {tower_q[0].dtype}") if q_params else None
    return whole, (tower.params, total, extra), (q_params, q_bytes), (tower.note(width, quantized),)


def build_model(raw: dict, name: str, source: str | None = None, online=None) -> ModelSpec:
    """The per-layer description of the model a config dict describes; online: an engine's online quantization
    layout (configs/quant_online.py OnlineLayout) that raw's quantization_config stands for."""
    source = source or name
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config is not a JSON object")
    family, f, reading, layers, dims = _read(raw, source)
    notes: tuple[str, ...] = ()
    vision, vision_quantized = (0, 0, 0), (0, 0)
    try:
        if family.params is None:
            raise ConfigError(f"kvplan has no parameter count for model_type {f.model_type!r}")
        total, active, pooled = counted_params(family, f, layers, dims)
        notes += pooled
    except ConfigError as exc:  # the cache is read; only the weights estimate lacks a field
        total = active = 0
        notes += (f"parameters not counted ({exc.message}); {exc.hint or 'give the weights with --weights'}",)
    if total and f.model_type in PARAMS_OFF:
        notes += (f"parameter count approximate: kvplan's count for model_type {f.model_type!r} misses modules "
                  f"transformers builds for some configs ({PARAMS_OFF[f.model_type]}); give --weights, or the "
                  "checkpoint's folder or hf://REPO, for exact bytes",)
    weight_dtype, bytes_per_param, linear_bytes, plain, weight_notes, (whole_bytes, g_idx_bytes, expert_params,
                                                                       expert_bytes, kv_bytes) = _weight_format(
        f, raw, total, layers, dims, online)
    dtype_note = _float_dtype(f)[1]
    if dtype_note:
        weight_notes += (dtype_note,)
    if total and not _quantization_config(raw, f) and not quant_mlx.block(raw) and _QUANTIZED_NAME.search(name):
        weight_notes += (f"the name {name!r} suggests a quantized checkpoint, but its config declares no quantization "
                         "(no quantization_config, no hf_quant_config.json beside it): the weights are sized at "
                         f"{weight_dtype}; point kvplan at the checkpoint's folder or hf://REPO, or give --weights",)
    if family.weight_format is not None:  # DeepSeek-V4: experts in their own dtype, the rest per linear weight
        # (label, bytes per parameter[, bytes each TP rank holds whole: DeepSeek-V4, module by module])
        weight_dtype, bytes_per_param, *whole = family.weight_format(f, layers, total, weight_dtype.split(" + ")[0],
                                                                     linear_bytes)
        plain, whole_bytes, kv_bytes = 0, whole[0] if whole else 0, None
        expert_params = expert_bytes = 0
        weight_notes = tuple(n for n in weight_notes if n.startswith(WEIGHTS_NOT_SIZED))
    notes += weight_notes
    if total and bytes_per_param:  # the text model's weights sized: add the tower's
        whole_bytes, vision, vision_quantized, vision_notes = _with_vision_tower(raw, f, whole_bytes, online)
        notes += vision_notes
    if family.notes is not None:
        notes += family.notes(f)
    heads = f.opt_int("num_attention_heads") or 0
    # the MTP layers as the family's own field names them (None: absent): Qwen3.5's vLLM MTP model reads
    # mtp_num_hidden_layers, every other num_nextn_predict_layers, unless the family reads its own (Family.mtp);
    # transformers 5's Ernie4_5_MoeConfig stores it as num_mtp_layers (attribute_map: num_nextn_predict_layers)
    mtp_fields = (("mtp_num_hidden_layers",) if f.model_type.startswith("qwen3_5") else
                  # vLLM 0.33 / 0.34 config/speculative.py: Qwen4-Exp's n_predict is mtp_num_hidden_layers, else
                  # num_nextn_predict_layers
                  ("mtp_num_hidden_layers", "num_nextn_predict_layers") if f.model_type.startswith("qwen4_exp") else
                  ("num_nextn_predict_layers", "num_mtp_layers") if f.model_type == "ernie4_5_moe" else
                  ("num_nextn_predict_layers",))
    mtp_layers, mtp_local, mtp_notes = family.mtp(raw) if family.mtp is not None else (
        f.opt_int(*mtp_fields, minimum=0), (), ())
    notes += mtp_notes
    mtp_attention = None
    if family.mtp_attention is not None and mtp_layers:
        mtp_attention, attention_notes = family.mtp_attention(f)
        notes += attention_notes
    if reading == "guessed":
        notes += (f"guessed: unknown model_type {f.model_type!r} read with transformers' generic rule "
                 "(layer_types, else sliding_window on every layer, else full attention); check the layer kinds",)
        warnings.warn(notes[-1], stacklevel=2)
    return ModelSpec(
        name=name,
        model_type=f.model_type,
        layers=intern(layers),
        param_count=total,
        active_param_count=active,
        weight_bytes_per_param=bytes_per_param,
        weight_linear_bytes_per_param=linear_bytes,
        weight_plain_params=plain,
        weight_replicated=whole_bytes,
        weight_kv=kv_bytes,
        weight_g_idx_bytes=g_idx_bytes,
        weight_expert_params=expert_params,
        weight_expert_bytes=expert_bytes,
        weight_routed=_routed_counter(f, layers, dims, total) if total else None,
        weight_dtype=weight_dtype,
        weight_vision=vision,
        weight_vision_quantized=vision_quantized,
        max_context_tokens=f.opt_int("max_position_embeddings"),
        hidden_size=f.opt_int("hidden_size") or 0,
        num_attention_heads=heads,
        source=source,
        notes=notes,
        reading=reading,
        family=family.name,
        architecture=_architecture(raw),
        architectures=_architectures(raw),
        mtp_layers=mtp_layers,
        mtp_local_layers=mtp_local,
        mtp_attention_layers=mtp_attention,
        checkpoint_kv_cache=quant_bytes.modelopt_kv_cache(_quantization_config(raw, f)) or _latent_fp8(f),
        config_model_type=raw["model_type"],
        config_ships_code=isinstance(raw.get("auto_map"), dict) and "AutoConfig" in raw["auto_map"],
        config_model_code=_model_code(raw),
    )
