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


def _budget(kept: int, n: int, budget: tuple[int, int, int]) -> int:
    """TokenPolicy.retained_tokens' fraction budget in integers:
    min(kept, max(ceil(p / q x n), recent))."""
    p, q, recent = budget
    share = -(-p * n // q)
    if share < recent:
        share = recent
    return share if share < kept else kept


def _kept(n: int, window: int | None, budget: tuple[int, int, int] | None, cap: int | None) -> int:
    """Tokens a plain cache keeps at n (TokenPolicy.retained_tokens for a window, a
    fraction budget and a token cap, in integers): the one place the hot loops ask."""
    kept = n if window is None or n < window else window
    if budget is not None:
        kept = _budget(kept, n, budget)
    if cap is not None and cap < kept:
        kept = cap
    return kept


class _Terms:
    """What an estimate needs from one model that does not depend on the context:
    counts, owners, marginal and fixed bytes, caps, states, and for each cache
    either its bytes per entry (a plain or windowed cache: bytes are entries x
    that) or the cache itself (eviction, compression, Quest, KIVI: its own
    methods). Built once per ModelSpec and kept on it."""

    __slots__ = ("groups", "kinds", "per_token", "state", "shared")

    def __init__(self, model: ModelSpec):
        from .layers import TokenPolicy

        kinds: dict[str, list] = {}
        groups = []
        per_token = 0  # int, or a Fraction once KIVI's amortised scales appear
        state_total = shared = 0
        for layer, count in model.groups:
            owners = 0 if layer.shares_cache_of is not None or not layer.caches else count
            layer_per_token = 0
            cap = None
            caches = []
            for cache in layer.caches:
                policy = cache.policy
                if owners:
                    layer_per_token += cache.growth_per_token()
                    shared += cache.fixed_bytes() * owners
                policy_cap = policy.cap_tokens
                cap = policy_cap if cap is None else (cap if policy_cap is None else max(cap, policy_cap))
                linear = cache._linear_entry_bytes
                # the plain case: a window and a budget (or neither) decide the entries
                # kept, and every kept entry is stored and read: bytes = entries x bytes per entry
                fraction = policy.budget_fraction
                plain = linear is not None and policy == TokenPolicy(
                    window_tokens=policy.window_tokens, budget_fraction=fraction,
                    budget_tokens=policy.budget_tokens, recent_tokens=policy.recent_tokens)
                caches.append((linear if plain else None, policy.window_tokens,
                               None if fraction is None else (fraction.numerator, fraction.denominator, policy.recent_tokens),
                               policy.budget_tokens, cache))
            state = layer.state.bytes if layer.state is not None and layer.shares_cache_of is None else 0
            per_token += layer_per_token * owners
            state_total += state * count
            row = kinds.get(layer.kind)
            first = row is None
            if first:
                row = kinds[layer.kind] = [len(kinds), count, owners, layer_per_token, cap, state * count]
            else:
                row[1] += count
                row[2] += owners
                row[5] += state * count
            groups.append((row[0], first, count, owners, tuple(caches), layer.borrows))
        self.groups = tuple(groups)
        self.kinds = tuple((kind, *values[1:5], values[5]) for kind, values in kinds.items())
        self.per_token = per_token
        self.state = state_total
        self.shared = shared


    def kv_bytes(self, n: int) -> int:
        """KV bytes one sequence of n tokens stores (ideal, token-granular):
        the estimate's kv_bytes_per_sequence alone."""
        total = 0
        for _, _, _, owners, caches, _ in self.groups:
            if owners:
                for linear, window, budget, cap, cache in caches:
                    if linear is not None:
                        kept = _kept(n, window, budget, cap)
                        if kept > 0:
                            total += owners * kept * linear
                    else:
                        total += owners * cache.stored_bytes(n)
        return total

    def read_bytes(self, n: int) -> int:
        """KV bytes one sequence's decode step reads at n tokens (all layers)."""
        total = 0
        for _, _, count, _, caches, borrows in self.groups:
            for linear, window, budget, cap, cache in caches:
                if linear is not None:
                    kept = _kept(n, window, budget, cap)
                    if kept > 0:
                        total += count * kept * linear
                else:
                    total += count * cache.read_bytes(n)
            for cache in borrows:
                total += count * cache.read_bytes(n)
        return total

    def paged_kv_bytes(self, n: int, block: int) -> int:
        """KV bytes one sequence of n tokens holds in whole blocks of `block` tokens
        (TokenCache.paged_bytes summed over the caches a sequence stores)."""
        total = 0
        for _, _, _, owners, caches, _ in self.groups:
            if owners:
                for linear, window, budget, cap, cache in caches:
                    if linear is None:
                        total += owners * cache.paged_bytes(n, block)
                        continue
                    kept = _kept(n, window, budget, cap)
                    if kept <= 0:
                        continue
                    if budget is None and cap is None and kept < n:  # a window: the blocks it touches
                        entries = ((n - 1) // block - (n - kept) // block + 1) * block
                    else:
                        entries = -(-kept // block) * block
                    total += owners * entries * linear
        return total


def terms(model: ModelSpec) -> _Terms:
    """The context-independent part of `model`'s estimate, computed once per model."""
    found = model.__dict__.get("_estimate_terms")
    if found is None:
        found = model.__dict__["_estimate_terms"] = _Terms(model)
    return found


def estimate(model: ModelSpec, context_tokens: int, batch: int = 1) -> Estimate:
    """Exact cache bytes of `batch` sequences of `context_tokens` tokens each."""
    t = model.__dict__.get("_estimate_terms") or terms(model)
    n = context_tokens
    width = len(t.kinds)
    kv_row = [0] * width
    read_row = [0] * width
    retained_row = [0] * width
    for index, first, count, owners, caches, borrows in t.groups:
        kv = read = retained = 0
        for cache in borrows:
            read += cache.read_bytes(n)
        for linear, window, budget, cap, cache in caches:
            if linear is not None:  # entries = the tokens kept; bytes = entries x bytes per entry
                kept = _kept(n, window, budget, cap)
                if kept > 0:
                    read += kept * linear
                    if owners:
                        kv += kept * linear
            else:
                read += cache.read_bytes(n)
                if owners:
                    kv += cache.stored_bytes(n)
                kept = cache.policy.retained_tokens(n)
            if kept > retained:
                retained = kept
        kv_row[index] += kv * owners
        read_row[index] += read * count
        if first:
            retained_row[index] = retained
    kinds = tuple(
        KindRow(kind, layers, owners, per_token, cap, retained_row[i], kv_row[i], state, read_row[i])
        for i, (kind, layers, owners, per_token, cap, state) in enumerate(t.kinds)
    )
    return Estimate(model, context_tokens, batch, t.per_token, sum(kv_row), t.state, t.shared, sum(read_row), kinds)
