"""A config's layers (_read, steps 2-4 of kvplan.configs.build): the layer count and each layer's kind
(`layer_types`, else the older markers the family writes, else its rule: markers.py), what each kind caches
(attention K/V with its window or chunk, an MLA latent, an indexer, a recurrent state, nothing: _LayerMaker), and
KV sharing between layers (Gemma 3n's last layers)."""

from __future__ import annotations

from ..core.layers import LayerSpec, TokenCache
from ..errors import ConfigError
from . import kinds as K
from .attention import attention_cache, head_dims
from .block_sparse import block_sparse_caches
from .compressed import compressed_layer
from .family import Family
from .fields import Fields
from .latent import indexer_cache, latent_cache
from .markers import MARKERS, marker_length, normalise
from .resolve_family import resolve


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
