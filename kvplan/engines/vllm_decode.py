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
(BlockPool keeps one, every release) or vLLM preempts.

Speculative decoding (decode_slots): a decoding step with k draft tokens schedules 1 + k tokens (the last sampled
token and the k drafts to verify: Scheduler.schedule's num_new_tokens = num_tokens_with_spec +
num_output_placeholders - num_computed_tokens) and allocate_slots tops every attention group up to computed + 1 + k
+ num_lookahead_tokens (k for eagle, eagle3, mtp and draft_model), at most max_model_len. Under async scheduling
the computed tokens already count the step in flight with its k drafts (AsyncScheduler._update_after_schedule), as
if all were accepted, while the freeing counts the processed tokens only: the slots reach 3k past the k = 0 step's,
and a window keeps 3k more tokens; without async scheduling 2k. Mamba in 'align' mode sizes its blocks by the
target's tokens, without the lookahead (MambaManager.get_num_blocks_to_allocate): 2k and k. Read in 0.34.0
(v1/core/sched/scheduler.py, async_scheduler.py, kv_cache_manager.py allocate_slots); the lookahead and the
allocate_slots call compared in 0.11.0, 0.16.0, 0.17.0, 0.20.0, 0.22.0, 0.24.0, 0.25.0, 0.26.0, 0.27.1,
0.28.0, 0.29.0, 0.31.0-0.33.0 (the same for these methods). Checked against 0.34.0's KVCacheManager with
k = 1, 2, 3 by benchmarks/vllm_oracle_decode.py.

Not modelled: prefill chunks, the admission watermark (0 by default), prefix-cache sharing (shared blocks count once
in the pool), DFlash's extra lookahead slot and more than one step in flight (PP).
"""

from __future__ import annotations

import math

from .._record import record
from ..units import cdiv


# vLLM's speculative methods whose drafter writes KV past the verified tokens: Scheduler.__init__ sets
# num_lookahead_tokens = num_speculative_tokens for use_eagle() (eagle, eagle3, mtp: 0.11.0-0.27) and
# uses_draft_model() (0.16.0, 0.17.0, 0.20.0-0.27); from 0.28.0 VllmConfig.num_lookahead_tokens, in 0.34.0
# SpeculatorConfig.num_lookahead_tokens (EagleSpeculatorConfig, which MTP's configs extend, and
# StandaloneARSpeculatorConfig: num_speculative_tokens). kvplan emits only these methods.
LOOKAHEAD_METHODS = ("eagle", "eagle3", "mtp", "draft_model")


@record
class DecodeSlots:
    """What one decoding step of a request reserves around its tokens, in vLLM's allocate_slots."""

    lag_tokens: int  # the k = 0 step's tokens computed but not yet processed when blocks are freed
    ahead_tokens: int  # slots an attention group holds past that step's: drafts in flight, drafts, lookahead
    state_ahead_tokens: int  # the same for Mamba 'align' blocks, which leave the lookahead out
    draft_tokens: int = 0
    async_scheduling: bool = False


def decode_slots(rules, draft_tokens: int = 0, method: str = "") -> DecodeSlots:
    """The slots of one decoding step under `rules`' release with draft_tokens speculative tokens of `method`
    (eagle, eagle3, mtp, draft_model; "" without speculative decoding)."""
    # async scheduling (the default from 0.26.0, decode_frees_processed_tokens) keeps the step before in flight;
    # vllm/config/vllm.py turns it off by default for draft_model in 0.26.0-0.27.1 (async_draft_model)
    on = rules.decode_frees_processed_tokens and (method != "draft_model" or rules.async_draft_model)
    k = draft_tokens
    lookahead = k if method in LOOKAHEAD_METHODS else 0
    in_flight = k if on else 0  # the step in flight counted as if its k drafts were all accepted
    return DecodeSlots(1 if on else 0, in_flight + k + lookahead, in_flight + k, k, on)


def _most_held(length: int, block: int, ahead: int, lag: int, cap: int, skipped, period: int) -> int:
    """The most blocks held at any length n <= length: the slots reach min(n + ahead, cap), and the whole blocks
    below skipped(n - 1 - lag) tokens (the processed tokens' get_num_skipped_tokens) are freed. Past the tokens
    a group first frees, the count repeats every `period` lengths, so the last period (and the ahead tokens the
    cap may cut) holds the most."""
    return max(cdiv(min(n + ahead, cap), block) - max(0, skipped(n - 1 - lag)) // block
               for n in range(max(1, length - period - ahead), length + 1))


def held_blocks(spec, length_tokens: int, lag_tokens: int, ahead_tokens: int = 0, state_ahead_tokens: int = 0,
                max_len_tokens: int | None = None) -> int | None:
    """The most blocks one request of at most length_tokens holds in one group of this PageSpec while it decodes
    (None: a kind kvplan has not read). lag_tokens: tokens computed but not yet processed (1 under async
    scheduling from 0.26.0, else 0); ahead_tokens / state_ahead_tokens: the speculative slots past them
    (DecodeSlots); max_len_tokens: max_model_len, where allocate_slots stops (default: no cap)."""
    block, kind = spec.block_tokens, spec.kind
    cap = max_len_tokens if max_len_tokens is not None else length_tokens + ahead_tokens
    if kind in ("full", "mla", "indexer"):
        # FullAttentionManager (MLA and the V3.2 indexer keys are FullAttentionSpec / MLAAttentionSpec):
        # get_num_skipped_tokens is the base class's 0, every block is kept
        return cdiv(min(length_tokens + ahead_tokens, cap), block)
    if kind == "sliding":
        # SlidingWindowManager.get_num_skipped_tokens: computed - W + 1 - extra_retained_tokens. At l slots
        # (computed l - 1) the first l - 1 - lag - W + 1 - r tokens are skipped, so W + r + lag + ahead tokens
        # stay, over at most cdiv(kept - 1, block) + 1 blocks (one token into a block, one past a boundary)
        window, retained = spec.window_tokens, spec.retained_tokens
        return _most_held(length_tokens, block, ahead_tokens, lag_tokens, cap,
                          lambda processed: processed - window + 1 - retained, block + 1)
    if kind == "chunked":
        # ChunkedLocalAttentionManager.get_num_skipped_tokens: computed // chunk x chunk, the chunks before the
        # one the next token is in; the held count repeats every lcm(chunk, block) tokens
        chunk = spec.window_tokens
        return _most_held(length_tokens, block, ahead_tokens, lag_tokens, cap,
                          lambda processed: processed // chunk * chunk, math.lcm(chunk, block) + lag_tokens + 1)
    if kind in ("mamba", "short_conv"):
        # MambaManager: mode 'none' holds one block (its block is max_model_len), 'align' the running state's
        # block and, once the target's tokens (computed + scheduled, drafts included, the lookahead left out)
        # have crossed a block boundary, the one it is copied from until the processed tokens pass it
        # (remove_skipped_blocks frees last_state_block_idx): 2. The prefill checkpoint page is not held in
        # decode (is_mamba_prefill_checkpoint_valid needs a query spanning a hash block). Both +
        # num_speculative_blocks.
        reach = min(length_tokens + state_ahead_tokens, cap)
        steady = min(spec.state_pages - spec.speculative_pages, 2, cdiv(reach, block))
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
    draft_tokens: int = 0  # speculative tokens a step
    ahead_tokens: int = 0  # the slots an attention group holds past the tokens for them (DecodeSlots)

    @property
    def parts_text(self) -> str:
        return " + ".join(f"{n} x {held} {label}" if n > 1 else f"{held} {label}" for label, n, held in self.parts)


def decode_blocks(pool, context_tokens: int, rules, slots: DecodeSlots | None = None
                  ) -> tuple[int, tuple[tuple[str, int, int], ...]] | None:
    """(blocks one decoding request of context_tokens holds, summed over the groups; (label, groups, blocks) per
    kind of group), None where a group is of a kind kvplan has not read. slots: a speculative step's
    (decode_slots; default: no draft tokens)."""
    length = min(context_tokens, pool.max_model_len)
    slots = slots or decode_slots(rules)
    groups = pool.groups[:1] if pool.uniform_type else pool.groups  # one block table for every layer
    parts: dict[tuple[str, int], int] = {}
    for group in groups:
        held = held_blocks(group.spec, length, slots.lag_tokens, slots.ahead_tokens, slots.state_ahead_tokens,
                           pool.max_model_len)
        if held is None:
            return None
        key = (group.spec.label, held)
        parts[key] = parts.get(key, 0) + 1
    total = sum(held * n for (_, held), n in parts.items())
    return total, tuple((label, n, held) for (label, held), n in parts.items())


def decode_fit(pool, context_tokens: int, rules, draft_tokens: int = 0, method: str = "") -> DecodeFit | None:
    """The requests of context_tokens vLLM's pool keeps decoding at once (None: a group kvplan has not read), with
    draft_tokens speculative tokens of `method` a step (decode_slots)."""
    slots = decode_slots(rules, draft_tokens, method)
    found = decode_blocks(pool, context_tokens, rules, slots)
    if found is None:
        return None
    held, parts = found
    usable = pool.num_blocks - 1  # BlockPool.null_block
    return DecodeFit(max(usable, 0) // held, held, usable, min(context_tokens, pool.max_model_len), parts,
                     draft_tokens, slots.ahead_tokens)


__all__ = ["held_blocks", "decode_blocks", "decode_fit", "decode_slots", "DecodeFit", "DecodeSlots",
           "LOOKAHEAD_METHODS"]
