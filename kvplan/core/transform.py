"""Helpers that rebuild a ModelSpec with some layers or caches replaced.

Every technique is a transform ModelSpec -> ModelSpec built from these.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from .layers import LayerSpec, TokenCache
from .model import ModelSpec


def map_layers(model: ModelSpec, fn: Callable[[int, LayerSpec], LayerSpec]) -> ModelSpec:
    layers = tuple(fn(i, layer) for i, layer in enumerate(model.layers))
    return replace(model, layers=intern(layers))


def intern(layers) -> tuple[LayerSpec, ...]:
    """Make equal layers the same object, so grouping and transforms stay cheap."""
    by_id: dict[int, LayerSpec] = {}
    canon: dict[LayerSpec, LayerSpec] = {}
    out = []
    for layer in layers:
        same = by_id.get(id(layer))
        if same is None:
            same = by_id[id(layer)] = canon.setdefault(layer, layer)
        out.append(same)
    return tuple(out)


def map_caches(
    model: ModelSpec,
    fn: Callable[[TokenCache], TokenCache],
    where: Callable[[int, LayerSpec, TokenCache], bool] = lambda i, layer, cache: True,
) -> ModelSpec:
    """Replace every token cache for which `where` holds by fn(cache)."""

    done: dict[tuple, LayerSpec] = {}
    out = []
    for i, layer in enumerate(model.layers):
        mask = tuple(where(i, layer, c) for c in layer.caches)
        key = (id(layer), mask)
        new = done.get(key)
        if new is None:
            if any(mask):
                caches = tuple(fn(c) if m else c for c, m in zip(layer.caches, mask))
                new = replace(layer, caches=caches)
            else:
                new = layer
            done[key] = new
        out.append(new)
    return replace(model, layers=intern(out))


def with_policy(cache: TokenCache, **changes) -> TokenCache:
    return replace(cache, policy=replace(cache.policy, **changes))
