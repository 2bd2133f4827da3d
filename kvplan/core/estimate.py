"""Bytes of one model's cache for a context and a batch, broken down by layer kind.

The one formula: for every layer that owns a cache, bytes = (entries kept) x
(bytes per entry), where bytes per entry = heads x (key width + value width) x
bytes per element (+ scales). `2 x layers x kv_heads x head_dim x bytes x tokens`
is the special case of identical full-attention layers.
"""

from __future__ import annotations

from fractions import Fraction

from .._record import record
from .model import ModelSpec


@record
class KindRow:
    kind: str
    layers: int  # layers of this kind
    cache_layers: int  # of which own a cache (the rest reuse another layer's)
    bytes_per_token: Fraction  # marginal, per layer of this kind that owns a cache
    cap_tokens: int | None  # window or budget cap (None = grows with context)
    retained_tokens: int  # raw tokens kept per sequence at this context, per layer
    kv_bytes_per_sequence: int  # all layers of this kind
    state_bytes_per_sequence: int  # all layers of this kind
    read_bytes_per_step: int  # one sequence's decode step, all layers of this kind


@record
class Estimate:
    model: ModelSpec
    context_tokens: int
    batch: int
    bytes_per_token: Fraction  # marginal bytes of one more token below any cap
    kv_bytes_per_sequence: int
    state_bytes_per_sequence: int
    shared_bytes: int  # per-tensor scales etc., stored once for all sequences
    read_bytes_per_step: int  # KV bytes one sequence's decode step reads
    kinds: tuple[KindRow, ...]

    @property
    def bytes_per_sequence(self) -> int:
        return self.kv_bytes_per_sequence + self.state_bytes_per_sequence

    @property
    def total_bytes(self) -> int:
        return self.batch * self.bytes_per_sequence + self.shared_bytes


def estimate(model: ModelSpec, context_tokens: int, batch: int = 1) -> Estimate:
    """Exact cache bytes of `batch` sequences of `context_tokens` tokens each."""
    rows: dict[str, list] = {}
    per_token = 0  # int, or a Fraction once KIVI's amortised scales appear
    kv_total = state_total = shared = read_total = 0
    n = context_tokens
    for layer, count in model.groups:
        owners = 0 if layer.shares_cache_of is not None or not layer.caches else count
        kv = read = 0
        layer_per_token = 0
        cap = None
        retained = 0
        for cache in layer.caches:
            policy = cache.policy
            read += cache.read_bytes(n)
            if owners:
                kv += cache.stored_bytes(n)
                layer_per_token += cache.bytes_per_token()
                shared += cache.fixed_bytes() * owners
            policy_cap = policy.cap_tokens
            cap = policy_cap if cap is None else (cap if policy_cap is None else max(cap, policy_cap))
            kept = policy.retained_tokens(n)
            if kept > retained:
                retained = kept
        state = layer.state.bytes if layer.state is not None and layer.shares_cache_of is None else 0
        per_token += layer_per_token * owners
        kv_total += kv * owners
        state_total += state * count
        read_total += read * count
        row = rows.get(layer.kind)
        if row is None:
            rows[layer.kind] = [count, owners, layer_per_token, cap, retained, kv * owners, state * count, read * count]
        else:
            row[0] += count
            row[1] += owners
            row[5] += kv * owners
            row[6] += state * count
            row[7] += read * count
    kinds = tuple(KindRow(kind, *values) for kind, values in rows.items())
    return Estimate(
        model=model,
        context_tokens=context_tokens,
        batch=batch,
        bytes_per_token=per_token,
        kv_bytes_per_sequence=kv_total,
        state_bytes_per_sequence=state_total,
        shared_bytes=shared,
        read_bytes_per_step=read_total,
        kinds=kinds,
    )
