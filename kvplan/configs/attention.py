"""Readers for decoder-only attention families: which layers are full, windowed, shared.

Each returns the list of per-layer TokenCache tuples; parameter counting lives in
params.py, model assembly in build.py.
"""

from __future__ import annotations

from ..core.layers import LayerSpec, TokenCache, TokenPolicy
from ..errors import ConfigError
from .fields import Fields

FULL = "full_attention"
SLIDING = "sliding_attention"
_SLIDING_NAMES = {"sliding_attention", "sliding", "local", "local_attention", "chunked_attention"}
_FULL_NAMES = {"full_attention", "full", "global", "attention", "global_attention"}


def head_dims(f: Fields) -> tuple[int, int, int]:
    """(query heads, KV heads, head_dim) with the usual defaults."""
    heads = f.int("num_attention_heads", "n_head", "n_heads")
    kv_heads = f.int("num_key_value_heads", "num_kv_heads", default=heads)
    hidden = f.int("hidden_size", "n_embd", "d_model", default=0, minimum=0)
    head_dim = f.get("head_dim")
    if head_dim is None:
        if not hidden:
            raise ConfigError(
                f"{f.source}: config (model_type {f.model_type!r}) has neither 'head_dim' nor 'hidden_size'",
                "add one of them or pass --set head_dim=VALUE",
            )
        if hidden % heads:
            raise ConfigError(f"{f.source}: hidden_size {hidden} is not divisible by num_attention_heads {heads}")
        head_dim = hidden // heads
    head_dim = f.int("head_dim", default=head_dim)
    if heads % kv_heads:
        raise ConfigError(
            f"{f.source}: num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}"
        )
    return heads, kv_heads, head_dim


def attention_layer(kv_heads: int, head_dim: int, window: int | None, value_dim: int | None = None) -> LayerSpec:
    cache = TokenCache(
        kind="attention",
        heads=kv_heads,
        key_dim=head_dim,
        value_dim=head_dim if value_dim is None else value_dim,
        policy=TokenPolicy(window_tokens=window),
    )
    return LayerSpec(caches=(cache,))


def layer_types(f: Fields, num_layers: int) -> list[str] | None:
    """`layer_types` normalised to FULL/SLIDING, or None when absent."""
    types = f.get("layer_types")
    if types is None:
        return None
    if not isinstance(types, list) or len(types) != num_layers:
        raise ConfigError(
            f"{f.source}: 'layer_types' must list {num_layers} entries (num_hidden_layers), "
            f"got {len(types) if isinstance(types, list) else type(types).__name__}"
        )
    out = []
    for i, name in enumerate(types):
        if name in _SLIDING_NAMES:
            out.append(SLIDING)
        elif name in _FULL_NAMES:
            out.append(FULL)
        else:
            out.append(str(name))  # hybrid kinds (linear_attention, mamba) kept verbatim
    return out


def window_of(f: Fields) -> int | None:
    value = f.get("sliding_window")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{f.source}: 'sliding_window' must be a positive integer or null, got {value!r} (model_type {f.model_type!r})")
    return value


def pattern_types(num_layers: int, period: int, full_first: bool = False) -> list[str]:
    """Layer i is full when (i + 1) % period == 0 (Gemma 3, Gemma 3n)."""
    return [FULL if (i + 1) % period == 0 else SLIDING for i in range(num_layers)]


def windowed_layers(f: Fields, num_layers: int) -> list[str]:
    """Per-family rule for which layers use the sliding window."""
    explicit = layer_types(f, num_layers)
    if explicit is not None:
        return explicit
    mt = f.model_type
    window = window_of(f)
    if mt in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        if not f.flag("use_sliding_window") or window is None:
            return [FULL] * num_layers
        # Layers with index >= max_window_layers use the window (transformers'
        # code; an older docstring says the opposite).
        first = f.int("max_window_layers", default=num_layers, minimum=0)
        return [SLIDING if i >= first else FULL for i in range(num_layers)]
    if mt == "gemma2":
        return [SLIDING if i % 2 == 0 else FULL for i in range(num_layers)]
    if mt in ("gemma3", "gemma3_text"):
        period = f.int("sliding_window_pattern", "_sliding_window_pattern", default=6)
        return pattern_types(num_layers, period)
    if mt in ("gemma3n", "gemma3n_text"):
        return pattern_types(num_layers, 5)
    if mt == "gpt_oss":
        return [SLIDING if i % 2 == 0 else FULL for i in range(num_layers)]
    if mt == "cohere2":
        period = f.int("sliding_window_pattern", default=4)
        return pattern_types(num_layers, period)
    # llama, mistral, mixtral, phi3 and the generic case: one window for all or none.
    return [SLIDING if window is not None else FULL] * num_layers


def standard_layers(f: Fields) -> list[LayerSpec]:
    """Attention-only decoders: llama, mistral, mixtral, qwen2/3(+moe), phi3, gemma*, gpt-oss."""
    num_layers = f.int("num_hidden_layers", "n_layer", "num_layers")
    _, kv_heads, head_dim = head_dims(f)
    window = window_of(f)
    types = windowed_layers(f, num_layers)
    global_head_dim = f.get("global_head_dim")  # some models size full layers differently
    layers = []
    for i, kind in enumerate(types):
        if kind == SLIDING:
            if window is None:
                raise ConfigError(
                    f"{f.source}: layer {i} is a sliding-window layer but 'sliding_window' is not set"
                )
            layers.append(attention_layer(kv_heads, head_dim, window))
        elif kind == FULL:
            layers.append(attention_layer(kv_heads, global_head_dim or head_dim, None))
        else:
            raise ConfigError(f"{f.source}: layer {i} has layer type {kind!r}, which model_type {f.model_type!r} cannot have")
    shared = f.int("num_kv_shared_layers", default=0, minimum=0)
    if shared:
        layers = share_last_layers(layers, types, shared, f)
    return layers


def share_last_layers(layers: list[LayerSpec], types: list[str], shared: int, f: Fields) -> list[LayerSpec]:
    """Gemma 3n: the last `shared` layers reuse the cache of the last earlier layer of the same type."""
    first_shared = len(layers) - shared
    if first_shared <= 0:
        raise ConfigError(f"{f.source}: num_kv_shared_layers {shared} leaves no layer that owns a cache")
    out = list(layers)
    for i in range(first_shared, len(layers)):
        owner = max((j for j in range(first_shared) if types[j] == types[i]), default=None)
        if owner is None:
            raise ConfigError(f"{f.source}: shared layer {i} has no earlier {types[i]} layer to reuse")
        out[i] = LayerSpec(caches=layers[i].caches, shares_cache_of=owner)
    return out


def falcon_kv_heads(f: Fields, heads: int) -> int:
    """transformers' rule: num_kv_heads counts only with the new decoder architecture
    or without multi_query; otherwise multi-query means ONE KV head."""
    if f.flag("new_decoder_architecture"):
        return f.int("num_kv_heads", "n_head_kv", default=heads)
    if f.flag("multi_query", default=True):
        return 1
    return heads


def falcon_layers(f: Fields) -> list[LayerSpec]:
    num_layers = f.int("num_hidden_layers", "n_layer")
    heads = f.int("num_attention_heads", "n_head")
    hidden = f.int("hidden_size")
    kv = falcon_kv_heads(f, heads)
    return [attention_layer(kv, hidden // heads, None) for _ in range(num_layers)]


def bigcode_layers(f: Fields) -> list[LayerSpec]:
    num_layers = f.int("n_layer", "num_hidden_layers")
    heads = f.int("n_head", "num_attention_heads")
    hidden = f.int("n_embd", "hidden_size")
    kv = 1 if f.flag("multi_query", default=True) else heads
    return [attention_layer(kv, hidden // heads, None) for _ in range(num_layers)]
