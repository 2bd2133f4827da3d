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
    return replace(model, layers=layers)


def map_caches(
    model: ModelSpec,
    fn: Callable[[TokenCache], TokenCache],
    where: Callable[[int, LayerSpec, TokenCache], bool] = lambda i, layer, cache: True,
) -> ModelSpec:
    """Replace every token cache for which `where` holds by fn(cache)."""

    def one(i: int, layer: LayerSpec) -> LayerSpec:
        caches = tuple(fn(c) if where(i, layer, c) else c for c in layer.caches)
        return layer if caches == layer.caches else replace(layer, caches=caches)

    return map_layers(model, one)


def with_policy(cache: TokenCache, **changes) -> TokenCache:
    return replace(cache, policy=replace(cache.policy, **changes))
