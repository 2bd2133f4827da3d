"""The core's byte formulas over an array of context lengths (numpy int64).

`kvplan sweep` evaluates thousands of contexts; calling the scalar core per
point costs 40-90 us each (several ms for 100 points, about a second for
10,000 x 3 series). These functions compute the same integers for a whole
array at once. They mirror, line for line:

- TokenPolicy.retained_tokens / stored_entries / read_entries
- TokenCache.paged_entries, entry_bytes (Storage.tensor_bytes), quest_meta_bytes
- capacity.pool.sequence_bytes / prefix_shared_bytes / batch_bytes
- core.estimate's read_bytes_per_step and capacity.pool.capacity's concurrency

and tests/test_sweep.py checks them against the scalar core on every bundled
model, with every technique, at random contexts (exact equality). Anything
constant in the context (pool bytes, pool tokens) still comes from the core.

Integers stay exact: the largest value is bytes of a batch (< 2^63 for any
real model and context); Fractions are applied as ceil(p * n / q) in integers.
"""

from __future__ import annotations

import numpy as np

from ..capacity.hardware import Deployment
from ..capacity.pool import DEFAULT_PREFIX_BLOCK, capacity, pool_bytes_per_stage
from ..capacity.shard import shard
from ..core.layers import TokenCache, TokenPolicy
from ..core.model import ModelSpec
from ..core.storage import Storage
from ..techniques.base import Plan

Array = np.ndarray


def _ceil_div(a, b):
    return -(-a // b)


def retained_tokens(policy: TokenPolicy, n: Array) -> Array:
    kept = n if policy.window_tokens is None else np.minimum(n, policy.window_tokens)
    if policy.chunk_tokens is not None:
        kept = np.minimum(kept, np.where(n > 0, (n - 1) % policy.chunk_tokens + 1, 0))
    if policy.budget_fraction is not None:
        f = policy.budget_fraction
        kept = np.minimum(kept, np.maximum(_ceil_div(f.numerator * n, f.denominator), policy.recent_tokens))
    if policy.budget_tokens is not None:
        kept = np.minimum(kept, policy.budget_tokens)
    return kept


def stored_entries(policy: TokenPolicy, n: Array) -> Array:
    kept = retained_tokens(policy, n)
    if policy.compress_ratio is None:
        return kept
    return kept // policy.compress_ratio + np.minimum(kept, policy.compress_window)


def read_entries(policy: TokenPolicy, n: Array) -> Array:
    kept = retained_tokens(policy, n)
    if policy.compress_ratio is not None:
        compressed = kept // policy.compress_ratio
        chosen = compressed if not policy.compress_topk else np.minimum(policy.compress_topk, compressed)
        return chosen + np.minimum(kept, policy.compress_window)
    if policy.read_topk_pages is not None:
        page = policy.read_page_tokens
        pages = _ceil_div(kept, page)
        last = kept - (pages - 1) * page
        return np.where(pages <= policy.read_topk_pages, kept, (policy.read_topk_pages - 1) * page + last)
    return kept


def tensor_bytes(storage: Storage, t: Array, heads: int, dim: int, role: str) -> Array:
    if dim == 0:
        return np.zeros_like(t)
    t = np.maximum(t, 0)
    row = heads * dim
    if storage.granularity in ("none", "tensor", "head"):
        return t * storage.payload_bytes(row)
    if storage.granularity == "group":
        groups = heads * -(-dim // storage.group_size)
        return t * (storage.payload_bytes(row) + groups * storage.metadata_bytes_per_group)
    g = storage.group_size  # kivi
    quantized = np.maximum(t - storage.residual_tokens, 0)
    recent = t - quantized
    full_row = (row * storage.residual_bits + 7) // 8
    if role == "key":
        meta = _ceil_div(quantized, g) * row * storage.metadata_bytes_per_group
        buffered = np.where(t > 0, g, 0)  # the open key group, per sequence
    else:
        meta = quantized * heads * -(-dim // g) * storage.metadata_bytes_per_group
        buffered = 0
    return quantized * storage.payload_bytes(row) + meta + (recent + buffered) * full_row


def entry_bytes(cache: TokenCache, entries: Array) -> Array:
    out = np.zeros_like(entries)
    for role, heads, dim in cache._tensors():  # the cache's own list of tensors
        out = out + tensor_bytes(cache.storage, entries, heads, dim, role)
    return out


def quest_meta_bytes(cache: TokenCache, n: Array) -> Array | int:
    page = cache.policy.read_page_tokens
    if page is None or not cache.policy.read_page_meta:
        return 0
    pages = _ceil_div(retained_tokens(cache.policy, n), page)
    return pages * 2 * cache.heads * cache.quest_meta_storage.payload_bytes(cache.key_dim)


def paged_entries(cache: TokenCache, n: Array, block: int) -> Array:
    policy = cache.policy
    entries = stored_entries(policy, n)
    plain = not policy.per_sequence_selection
    rounded = _ceil_div(entries, block) * block
    if plain:
        raw = retained_tokens(policy, n)
        first, last = (n - raw) // block, (n - 1) // block
        rounded = np.where(raw < n, (last - first + 1) * block, rounded)
    return np.where(entries == 0, 0, rounded)


def stored_bytes(cache: TokenCache, n: Array, block: int | None) -> Array:
    entries = paged_entries(cache, n, block) if block else stored_entries(cache.policy, n)
    return entry_bytes(cache, entries) + quest_meta_bytes(cache, n)


def read_bytes(cache: TokenCache, n: Array) -> Array:
    policy = cache.policy
    extra = quest_meta_bytes(cache, n)
    if policy.compress_ratio is not None and policy.compress_selector_keys:  # the selector reads every compressed key
        compressed = retained_tokens(policy, n) // policy.compress_ratio
        extra = extra + tensor_bytes(cache.storage, compressed, cache.heads, cache.key_dim, "key")
    return entry_bytes(cache, read_entries(policy, n)) + extra


def sequence_bytes(model: ModelSpec, n: Array, block: int | None) -> tuple[Array, int]:
    """(KV bytes per sequence, fixed state bytes per sequence); see pool.sequence_bytes."""
    kv = np.zeros_like(n)
    state = 0
    for layer, count in model.groups:
        if layer.shares_cache_of is not None:
            continue
        for cache in layer.caches:
            kv = kv + count * stored_bytes(cache, n, block)
        if layer.state is not None:
            state += count * layer.state.bytes
    return kv, state


def prefix_shared_bytes(model: ModelSpec, n: Array, prefix_tokens: int, block: int) -> Array:
    shared_tokens = (np.minimum(prefix_tokens, n) // block) * block
    total = np.zeros_like(n)
    for layer, count in model.groups:
        if layer.shares_cache_of is not None:
            continue
        for cache in layer.caches:
            p = cache.policy
            if p.per_sequence_selection:
                continue
            kept_from = n - retained_tokens(p, n)
            first_block = kept_from // block * block
            overlap = np.maximum(0, shared_tokens - first_block)
            total = total + count * entry_bytes(cache, overlap)
    return total


def fixed_bytes(model: ModelSpec) -> int:
    return sum(c.fixed_bytes() * n for layer, n in model.groups if layer.shares_cache_of is None for c in layer.caches)


def batch_bytes(plan: Plan, n: Array, batch: int, model: ModelSpec | None = None) -> dict[str, Array]:
    """The arrays of pool.batch_bytes: kv and state per sequence, shared prefix, total."""
    model = model or plan.model
    kv, state = sequence_bytes(model, n, plan.block_size)
    shared = saved = np.zeros_like(n)
    if plan.prefix is not None:
        sharers = min(plan.prefix.requests, batch)
        shared = prefix_shared_bytes(model, n, plan.prefix.tokens, plan.block_size or DEFAULT_PREFIX_BLOCK)
        saved = max(sharers - 1, 0) * shared
    total = batch * (kv + state) - saved + fixed_bytes(model)
    return {"kv": kv, "state": np.full_like(n, state), "shared": shared, "total": total}


def read_bytes_per_step(model: ModelSpec, n: Array) -> Array:
    """KV bytes one sequence's decode step reads (core.estimate's read_bytes_per_step)."""
    out = np.zeros_like(n)
    for layer, count in model.groups:
        for cache in layer.caches + layer.borrows:
            out = out + count * read_bytes(cache, n)
    return out


def max_concurrency(plan: Plan, deployment: Deployment, n: Array) -> tuple[Array, int, int | None]:
    """(sequences of n tokens that fit, pool bytes per GPU, pool tokens), as pool.capacity."""
    first = capacity(plan, deployment, int(n[0]))  # pool sizes and tokens do not depend on n
    pool = first.pool_bytes
    pools, _ = pool_bytes_per_stage(plan, deployment)  # each stage's GPU holds its own weights
    best = None
    for stage, stage_pool in zip(shard(plan.model, deployment.tp, deployment.pp), pools):
        usable = stage_pool - fixed_bytes(stage)
        seq = batch_bytes(plan, n, 1, stage)
        unique = seq["kv"] + seq["state"]
        safe = np.maximum(unique, 1)
        fit = np.where(unique > 0, usable // safe, 0)
        if plan.prefix is not None and plan.prefix.requests > 1:
            shared_fit = 1 + (usable - unique) // np.maximum(unique - seq["shared"], 1)
            fit = np.where(usable >= unique, shared_fit, fit)
        best = fit if best is None else np.minimum(best, fit)
    return np.maximum(best, 0), pool, first.pool_tokens


def estimate_many(model: ModelSpec, contexts, batch: int = 1) -> dict[str, Array]:
    """core.estimate for many contexts at once: int64 arrays of the estimate's
    per-sequence bytes, the batch's total and one sequence's decode-step read,
    equal to `estimate(model, n, batch)` at every n (`kvplan.estimate_many`)."""
    n = np.asarray(contexts, dtype=np.int64)
    b = batch_bytes(Plan(model), n, batch)
    return {
        "context_tokens": n,
        "kv_bytes_per_sequence": b["kv"],
        "state_bytes_per_sequence": b["state"],
        "total_bytes": b["total"],
        "read_bytes_per_step": read_bytes_per_step(model, n),
    }
