"""Cross-layer KV sharing (CLA / YOCO style): several layers read one layer's paged cache.

``owner_of_layer[i]`` names the layer whose cache layer i reads (``None``: layer
i keeps no KV, e.g. a linear-attention or state-space layer). An owner must own
itself (``owner_of_layer[o] == o``) and come no later than its readers
(``o <= i``: a reader attends to KV computed by an earlier layer in the same
forward step). Only owners allocate, so the resident bytes are counted once
per owner::

    resident_bytes = n_owners * 2 * num_blocks * block_size * num_kv_heads * head_dim * dtype_bytes
                     (+ 2 * 4 * num_kv_heads bytes of per-head fp8 scales per owner)

Writes are only allowed for owner layers; ``decode(layer, ...)`` runs
``paged_decode`` on the owner's cache with the shared block table (all layers
of a sequence use the same block ids).
"""
from __future__ import annotations

import torch

from ._checks import check
from .paged_decode import paged_decode
from .paged_write import paged_write

__all__ = ["CrossLayerKV", "validate_owner_map", "owners", "owner_map_from_model", "resident_bytes"]


def owner_map_from_model(model) -> list[int | None]:
    """The ownership map of a kvplan ModelSpec: layer i reads its own cache,
    the cache of `shares_cache_of`, or none (a layer with no growing cache)."""
    out: list[int | None] = []
    for i, layer in enumerate(model.layers):
        if not layer.caches:
            out.append(None)
        elif layer.shares_cache_of is not None:
            out.append(layer.shares_cache_of)
        else:
            out.append(i)
    return out


def validate_owner_map(owner_of_layer: list[int | None]) -> None:
    n = len(owner_of_layer)
    for i, o in enumerate(owner_of_layer):
        if o is None:
            continue
        check(isinstance(o, int) and 0 <= o < n, "owner_of_layer", f"layer {i}: owner {o!r} is not a layer index")
        check(o <= i, "owner_of_layer", f"layer {i} reads layer {o}, which comes later")
        check(owner_of_layer[o] == o, "owner_of_layer",
              f"layer {i} reads layer {o}, but layer {o} does not own a cache (its owner is {owner_of_layer[o]!r})")


def owners(owner_of_layer: list[int | None]) -> list[int]:
    """Layers that allocate a cache, in order."""
    validate_owner_map(owner_of_layer)
    return [i for i, o in enumerate(owner_of_layer) if o == i]


def resident_bytes(owner_of_layer, num_blocks, block_size, num_kv_heads, head_dim, dtype_bytes,
                   *, scale_bytes_per_owner: int = 0) -> int:
    """Exact K+V bytes resident for the map (each owner's cache counted once)."""
    per_owner = 2 * num_blocks * block_size * num_kv_heads * head_dim * dtype_bytes + scale_bytes_per_owner
    return len(owners(owner_of_layer)) * per_owner


class CrossLayerKV:
    """Paged K/V caches for a stack of layers with cross-layer sharing."""

    def __init__(self, owner_of_layer, num_blocks, block_size, num_kv_heads, head_dim, *,
                 dtype=torch.bfloat16, device="cpu", k_scale=None, v_scale=None):
        validate_owner_map(list(owner_of_layer))
        self.owner_of_layer = list(owner_of_layer)
        self.caches: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self.scales: dict[int, tuple[torch.Tensor | None, torch.Tensor | None]] = {}
        shape = (num_blocks, block_size, num_kv_heads, head_dim)
        fp8 = dtype == torch.float8_e4m3fn
        for o in owners(self.owner_of_layer):
            self.caches[o] = (torch.zeros(shape, dtype=dtype, device=device),
                              torch.zeros(shape, dtype=dtype, device=device))
            if fp8:
                ks = (k_scale if k_scale is not None else torch.ones(1)).to(device, torch.float32).clone()
                vs = (v_scale if v_scale is not None else torch.ones(1)).to(device, torch.float32).clone()
                self.scales[o] = (ks, vs)
            else:
                self.scales[o] = (None, None)

    @property
    def num_layers(self) -> int:
        return len(self.owner_of_layer)

    def cache_for_layer(self, layer: int):
        """(k_cache, v_cache) that ``layer`` reads, or None."""
        o = self.owner_of_layer[layer]
        return None if o is None else self.caches[o]

    def resident_bytes(self) -> int:
        """Bytes of distinct storages actually held (caches and scales)."""
        seen, total = set(), 0
        for pair in list(self.caches.values()) + list(self.scales.values()):
            for t in pair:
                if t is None:
                    continue
                ptr = t.untyped_storage().data_ptr()
                if ptr not in seen:
                    seen.add(ptr)
                    total += t.untyped_storage().nbytes()
        return total

    def write(self, layer: int, k, v, slot_mapping) -> None:
        check(0 <= layer < self.num_layers, "layer", f"{layer} out of range")
        check(self.owner_of_layer[layer] == layer, "layer",
              f"layer {layer} does not own a cache (owner {self.owner_of_layer[layer]!r}); only owners write")
        kc, vc = self.caches[layer]
        ks, vs = self.scales[layer]
        paged_write(k, v, kc, vc, slot_mapping, k_scale=ks, v_scale=vs)

    def decode(self, layer: int, q, block_table, seq_lens, **kw):
        check(0 <= layer < self.num_layers, "layer", f"{layer} out of range")
        o = self.owner_of_layer[layer]
        check(o is not None, "layer", f"layer {layer} has no KV cache")
        kc, vc = self.caches[o]
        ks, vs = self.scales[o]
        return paged_decode(q, kc, vc, block_table, seq_lens, k_scale=ks, v_scale=vs, **kw)
