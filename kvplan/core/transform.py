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
        # a borrowed cache changes with its owner's: where() judges it as the owner's cache
        borrowed = tuple(where(layer.borrows_from, model.layers[layer.borrows_from], c) for c in layer.borrows)
        key = (id(layer), mask, borrowed)
        new = done.get(key)
        if new is None:
            if any(mask) or any(borrowed):
                caches = tuple(fn(c) if m else c for c, m in zip(layer.caches, mask))
                borrows = tuple(fn(c) if m else c for c, m in zip(layer.borrows, borrowed))
                new = replace(layer, caches=caches, borrows=borrows)
            else:
                new = layer
            done[key] = new
        out.append(new)
    return replace(model, layers=intern(out))


def with_policy(cache: TokenCache, **changes) -> TokenCache:
    return replace(cache, policy=replace(cache.policy, **changes))


def hold_borrowed(layers: list[LayerSpec], start: int) -> list[LayerSpec]:
    """The layers of a pipeline stage that begins at layer `start` (indices stay the whole model's): a layer
    that borrows from a layer on an earlier stage holds those caches itself, as the first such layer of
    that source on this stage; the later ones borrow from it."""
    holder: dict[int, int] = {}
    out = []
    for k, layer in enumerate(layers):
        source = layer.borrows_from
        if layer.borrows and source is not None and source < start:
            if source in holder:
                layer = replace(layer, borrows_from=holder[source])
            else:
                holder[source] = start + k
                layer = replace(layer, caches=layer.caches + layer.borrows, borrows=(), borrows_from=None)
        out.append(layer)
    return out
