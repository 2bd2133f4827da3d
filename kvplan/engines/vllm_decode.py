"""The blocks a decoding request holds in vLLM's pool, group by group, and the --max-num-seqs that pool bears.

vLLM's start-up concurrency counts a request's worst case (a sliding window's prefill chunk in flight, a Mamba
prefill checkpoint); a request that has reached steady decode holds less. Each step KVCacheManager.allocate_slots
(v1/core/kv_cache_manager.py) first frees, group by group, the whole blocks below what get_num_skipped_tokens says
the next token no longer reads (SingleTypeKVCacheManager.remove_skipped_blocks), then tops the request up to
cdiv(computed + 1, block) blocks. Read in vLLM 0.34.0 (v1/core/single_type_kv_cache_manager.py); the sliding
window's freeing and its call compared in 0.11.0, 0.20.0, 0.22.0, 0.24.0, 0.25.0, 0.26.0, 0.27.1, 0.28.0-0.33.0
(not 0.30), Mamba 'align' in 0.20.0. One rule per kind of group, in held_blocks; checked against 0.34.0's
KVCacheManager on CPU by benchmarks/vllm_oracle_decode.py.

In steady decode one token is scheduled a step. From 0.26.0 the freeing counts the processed tokens only
(computed - request.num_in_flight_tokens, VllmRules.decode_frees_processed_tokens): under async scheduling, the
default, the token of the step still in flight is one more token kept below the window. Before, the computed
tokens. With PP vLLM keeps more steps in flight; kvplan assumes one.

A request of L tokens has held, at some step of its decode, the most blocks any length l <= L holds: that is the
count here. With N requests of L tokens decoding, N x that count must fit the pool's blocks less the null block
(BlockPool keeps one, every release) or vLLM preempts. Not modelled: speculative decoding's draft and lookahead
slots (allocate_slots reserves num_speculative_tokens + num_lookahead_tokens more a step), prefill chunks, the
admission watermark (0 by default) and prefix-cache sharing (shared blocks count once in the pool).
"""

from __future__ import annotations

import math

from .._record import record
from ..units import cdiv


def held_blocks(spec, length_tokens: int, lag_tokens: int) -> int | None:
    """The most blocks one request of at most length_tokens holds in one group of this PageSpec while it decodes
    (None: a kind kvplan has not read). lag_tokens: tokens computed but not yet processed (1 under async
    scheduling from 0.26.0, else 0)."""
    block, kind = spec.block_tokens, spec.kind
    if kind in ("full", "mla", "indexer"):
        # FullAttentionManager (MLA and the V3.2 indexer keys are FullAttentionSpec / MLAAttentionSpec):
        # get_num_skipped_tokens is the base class's 0, every block is kept
        return cdiv(length_tokens, block)
    if kind == "sliding":
        # SlidingWindowManager.get_num_skipped_tokens: computed - W + 1 - extra_retained_tokens. At l slots
        # (computed l - 1) the first l - 1 - lag - W + 1 - r tokens are skipped, so the last
        # kept = W + r + lag tokens stay, over at most cdiv(kept - 1, block) + 1 blocks: the most any l <= L
        # holds is cdiv(kept + min(block - 1, L - kept), block) once L passes kept (with block - 1 more the
        # kept tokens start one token into a block and end one past a boundary)
        kept = spec.window_tokens + spec.retained_tokens + lag_tokens
        if length_tokens <= kept:
            return cdiv(length_tokens, block)
        return cdiv(kept + min(block - 1, length_tokens - kept), block)
    if kind == "chunked":
        # ChunkedLocalAttentionManager.get_num_skipped_tokens: computed // chunk x chunk, the chunks before the
        # one the next token is in; the held count repeats every lcm(chunk, block) tokens, so the last period
        # of lengths up to L holds its most
        chunk = spec.window_tokens
        period = math.lcm(chunk, block) + lag_tokens + 1
        return max(cdiv(n, block) - (max(0, n - 1 - lag_tokens) // chunk * chunk) // block
                   for n in range(max(1, length_tokens - period), length_tokens + 1))
    if kind in ("mamba", "short_conv"):
        # MambaManager: mode 'none' holds one block (its block is max_model_len), 'align' the running state's
        # block and, once the request has crossed a block boundary, the one it is copied from until the
        # processed tokens pass it (remove_skipped_blocks frees last_state_block_idx): 2. The prefill checkpoint
        # page is not held in decode (is_mamba_prefill_checkpoint_valid needs a query spanning a hash block).
        # Both + num_speculative_blocks.
        steady = min(spec.state_pages - spec.speculative_pages, 2, cdiv(length_tokens, block))
        return steady + spec.speculative_pages
    if kind == "ring":  # CircularBufferManager: one block for the request's lifetime
        return 1
    return None


@record
class DecodeFit:
    """--max-num-seqs from vLLM's own pool: seqs requests of context_tokens decoding at once."""

    seqs: int
    blocks_per_request: int
    usable_blocks: int  # the pool's blocks less the null block
    context_tokens: int
    parts: tuple[tuple[str, int, int], ...]  # (group label, groups, blocks each group holds)

    @property
    def parts_text(self) -> str:
        return " + ".join(f"{n} x {held} {label}" if n > 1 else f"{held} {label}" for label, n, held in self.parts)


def decode_blocks(pool, context_tokens: int, rules) -> tuple[int, tuple[tuple[str, int, int], ...]] | None:
    """(blocks one decoding request of context_tokens holds, summed over the groups; (label, groups, blocks) per
    kind of group), None where a group is of a kind kvplan has not read."""
    length = min(context_tokens, pool.max_model_len)
    lag = 1 if rules.decode_frees_processed_tokens else 0
    groups = pool.groups[:1] if pool.uniform_type else pool.groups  # one block table for every layer
    parts: dict[tuple[str, int], int] = {}
    for group in groups:
        held = held_blocks(group.spec, length, lag)
        if held is None:
            return None
        key = (group.spec.label, held)
        parts[key] = parts.get(key, 0) + 1
    total = sum(held * n for (_, held), n in parts.items())
    return total, tuple((label, n, held) for (label, held), n in parts.items())


def decode_fit(pool, context_tokens: int, rules) -> DecodeFit | None:
    """The requests of context_tokens vLLM's pool keeps decoding at once (None: a group kvplan has not read)."""
    found = decode_blocks(pool, context_tokens, rules)
    if found is None:
        return None
    held, parts = found
    usable = pool.num_blocks - 1  # BlockPool.null_block
    return DecodeFit(max(usable, 0) // held, held, usable, min(context_tokens, pool.max_model_len), parts)


__all__ = ["held_blocks", "decode_blocks", "decode_fit", "DecodeFit"]
