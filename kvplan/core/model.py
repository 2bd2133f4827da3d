"""A model as kvplan sees it: the per-layer cache description plus a few totals."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from .layers import LayerSpec


@dataclass(frozen=True)
class ModelSpec:
    name: str
    model_type: str
    layers: tuple[LayerSpec, ...]
    param_count: int  # every weight, all experts included
    active_param_count: int  # weights one token passes through (MoE: routed top-k)
    weight_bytes_per_param: float = 2.0
    weight_dtype: str = "bfloat16"
    max_context_tokens: int | None = None
    hidden_size: int = 0
    num_attention_heads: int = 0
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    @cached_property
    def groups(self) -> tuple[tuple[LayerSpec, int], ...]:
        """Distinct layer specs with their counts, in first-seen order.

        Estimates iterate over these few groups, not over every layer.
        """
        counts = Counter(self.layers)
        seen: dict[LayerSpec, int] = {}
        for layer in self.layers:
            if layer not in seen:
                seen[layer] = counts[layer]
        return tuple(seen.items())

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def weight_bytes(self) -> int:
        return int(round(self.param_count * self.weight_bytes_per_param))

    def attention_shape(self) -> tuple[int, int] | None:
        """(kv_heads, head_dim) of the first attention cache, for listings."""
        for layer in self.layers:
            for cache in layer.caches:
                if cache.kind == "attention":
                    return cache.heads, cache.key_dim
        return None
