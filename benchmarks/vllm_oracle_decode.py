"""kvplan's blocks a decoding request holds (kvplan.engines.vllm_decode.held_blocks) against vLLM's own KV cache
manager, run on CPU (no GPU, no model).

For each kind of group (full attention, sliding window, chunked local attention, Mamba in 'none' and 'align'
mode) this builds a one-group KVCacheConfig and vLLM's KVCacheManager, then decodes one request step by step
through KVCacheManager.allocate_slots as the scheduler does under async scheduling (v1/core/sched/scheduler.py:
a step is scheduled while the previous one is in flight, so request.num_in_flight_tokens is that step's tokens,
and num_computed_tokens already counts them), and records the blocks the request holds (its block table less the
null blocks) after each step. With k = 1, 2, 3 draft tokens a step schedules 1 + k tokens with k lookahead slots
(num_lookahead_tokens, as for eagle / mtp / draft_model), its drafts all accepted, all rejected or every other
step's rejected; each run is repeated without async scheduling. The most held by any length <= L (over the
acceptance patterns) is compared with held_blocks(spec, L, ...) with decode_slots' figures (0.34's rules; 0.25's
for the synchronous runs) and max_model_len 3,000. Last run (Dec 2026, 0.34.0): async 56 agree, 0 differ; sync
56 agree, 0 differ (14 cases x k = 0-3).

    PYTHONPATH=/tmp/vsd/vllm-0.34.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle_decode.py

(the packages: see benchmarks/vllm_oracle.py; vLLM's structured-output imports, llguidance and xgrammar, are
stubbed here, as the managers never call them). Prints one line per case: "agree" or both figures, and exits 1
on any difference.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import SimpleNamespace
from unittest import mock

STUBBED = ("llguidance", "xgrammar")


class _Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Empty stand-ins for vLLM's structured-output backends (imported by v1/request.py's chain, never called)."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = mock.MagicMock(name=spec.name)
        module.__path__, module.__spec__ = [], spec
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Stubs())

import torch  # noqa: E402

from vllm.v1.core.kv_cache_manager import KVCacheManager  # noqa: E402
from vllm.v1.kv_cache_interface import (ChunkedLocalAttentionSpec, FullAttentionSpec, KVCacheConfig,  # noqa: E402
                                        KVCacheGroupSpec, MambaSpec, SlidingWindowSpec)
from vllm.v1.request import RequestStatus  # noqa: E402

from kvplan.engines.vllm_pages import PageSpec  # noqa: E402
from kvplan.engines.vllm_decode import decode_slots, held_blocks  # noqa: E402
from kvplan.engines.vllm_rules import V0_25, V0_34  # noqa: E402

MAX_LEN = 3_000
POOL_BLOCKS = 4_096


def vllm_spec(kind: str, block: int, window: int, retained: int = 0):
    head = dict(block_size=block, num_kv_heads=1, head_size=8, dtype=torch.bfloat16)
    if kind == "full":
        return FullAttentionSpec(**head)
    if kind == "sliding":
        return SlidingWindowSpec(**head, sliding_window=window, extra_retained_tokens=retained)
    if kind == "chunked":
        return ChunkedLocalAttentionSpec(**head, attention_chunk_size=window)
    align = kind == "mamba-align"
    return MambaSpec(block_size=block if align else MAX_LEN, shapes=((4, 8),), dtypes=(torch.bfloat16,),
                     mamba_cache_mode="align" if align else "none",
                     num_prefill_checkpoint_blocks=1 if align else 0)


def kvplan_spec(kind: str, block: int, window: int, retained: int = 0) -> PageSpec:
    if kind.startswith("mamba"):  # 'align' with a prefill checkpoint: 3 pages at start-up (Mamba-2, 0.32+)
        return PageSpec("mamba", block if kind == "mamba-align" else MAX_LEN, state_bytes=64,
                        state_pages=3 if kind == "mamba-align" else 1)
    return PageSpec(kind, block, token_bytes=32, window_tokens=window if kind != "full" else None,
                    retained_tokens=retained)


def decode(kind: str, block: int, window: int, retained: int, prompt: int, drafts: int = 0,
           accept: str = "all", sync: bool = False) -> dict[int, int]:
    """{length: the most blocks a request holds at a step scheduled for it} over a decode from `prompt` tokens to
    MAX_LEN, `drafts` speculative tokens a step. Each step is scheduled as Scheduler.schedule does under async
    scheduling: while the step before is in flight (request.num_in_flight_tokens its tokens; num_computed_tokens
    already counts them, its drafts as if accepted), 1 + drafts tokens (the last sampled token and the drafts),
    at most max_model_len - computed - 1, through allocate_slots with num_lookahead_tokens = drafts (eagle, mtp,
    draft_model). The step's output is processed after the next is scheduled: its rejected drafts (accept "all":
    none; "none": every one; "alternate": every other step's) leave num_computed_tokens. A step scheduled with p
    tokens processed is taken by every request of more than p + 2 tokens (the scheduler skips one whose step in
    flight reaches max_tokens: computed + 2 - placeholders >= prompt + max_tokens), keyed p + 2, the length
    kvplan's held_blocks counts in (the k = 0 step keyed so holds cdiv(p + 2, block) full blocks); the
    prefill step is keyed by the prompt. sync: without async scheduling (--no-async-scheduling; draft_model in
    0.26-0.27, every method before 0.26): nothing is in flight, each step's output is processed before the next
    is scheduled, and a step with p tokens processed is taken by every request of more than p + 1 tokens."""
    spec = vllm_spec(kind, block, window, retained)
    config = KVCacheConfig(num_blocks=POOL_BLOCKS, kv_cache_tensors=[],
                           kv_cache_groups=[KVCacheGroupSpec(["layer.0"], spec)])
    manager = KVCacheManager(config, max_model_len=MAX_LEN, scheduler_block_size=spec.block_size,
                             hash_block_size=spec.block_size, enable_caching=False)
    group = manager.coordinator.single_type_managers[0]
    request = SimpleNamespace(request_id="r", num_computed_tokens=0, num_in_flight_tokens=0,
                              num_prompt_tokens=prompt, num_tokens=prompt, status=RequestStatus.RUNNING,
                              block_hashes=[], num_output_placeholders=0)
    held: dict[int, int] = {}
    new, key, step = prompt, prompt, 0
    in_flight = (0, 0)  # (tokens, drafts rejected) of the step in flight
    while new > 0:
        request.num_in_flight_tokens = in_flight[0]
        assert manager.allocate_slots(request, new, num_lookahead_tokens=drafts) is not None
        blocks = group.req_to_blocks["r"]
        held[key] = max(held.get(key, 0), sum(1 for b in blocks if not b.is_null))
        request.num_computed_tokens += new  # _update_after_schedule
        request.num_computed_tokens -= in_flight[1]  # update_from_output of the step before
        scheduled_drafts = new - 1 if step else 0
        rejected = scheduled_drafts if accept == "none" or (accept == "alternate" and step % 2) else 0
        in_flight = (new, rejected)
        if sync:  # this step's output processed at once
            request.num_computed_tokens -= rejected
            in_flight = (0, 0)
        processed = request.num_computed_tokens - in_flight[0]
        request.num_tokens = processed + 1  # the tokens known once the step before is in
        step += 1
        key = processed + (1 if sync else 2)
        new = min(1 + drafts, MAX_LEN - request.num_computed_tokens - 1)
    return held


ACCEPTS = ("none", "all", "alternate")


def compare(kind: str, block: int, window: int, retained: int, drafts: int, lengths, sync: bool = False) -> int:
    """The lengths where kvplan's held_blocks differs from the most vLLM's decode holds over the acceptance
    patterns (printed), under async scheduling at 0.34 (decode_slots; sync: without it, as 0.25's rules
    count). The held count depends only on the
    processed tokens, so rejecting every draft (each processed count is scheduled once) reaches the most: kvplan
    counts that worst case; accepted drafts skip lengths and may hold a block less, printed as a note."""
    spec = kvplan_spec(kind, block, window, retained)
    slots = decode_slots(V0_25 if sync else V0_34, drafts, "mtp" if drafts else "")
    runs = {accept: decode(kind, block, window, retained, prompt=1, drafts=drafts, accept=accept, sync=sync)
            for accept in (ACCEPTS if drafts else ("all",))}
    bad, fewer = 0, 0
    for length in lengths:
        by_accept = {accept: max(n for key, n in held.items() if key <= length) for accept, held in runs.items()}
        theirs = max(by_accept.values())
        fewer += sum(n < theirs for n in by_accept.values())
        ours = held_blocks(spec, length, slots.lag_tokens, slots.ahead_tokens, slots.state_ahead_tokens, MAX_LEN)
        if ours != theirs:
            bad += 1
            print(f"{'sync ' if sync else ''}{kind} block {block} window {window} k {drafts} L {length}: "
                  f"vLLM {by_accept}, kvplan {ours}")
    note = f"; {fewer} (length, acceptance) pairs hold less than the worst" if fewer else ""
    print(f"{'sync ' if sync else ''}{kind} block {block} window {window} retained {retained} k {drafts}: "
          f"{'agree' if not bad else 'differ'} ({len(lengths)} lengths, most held "
          f"{max(max(h.values()) for h in runs.values())}{note})")
    return bad


def main() -> int:
    # (kind, block, window or chunk, extra_retained_tokens): block 16 / window 513 and block 8 / window 4 + 2
    # retained are where the token in flight adds a block
    cases = [("full", 64, 0, 0), ("full", 16, 0, 0), ("sliding", 64, 1024, 0), ("sliding", 16, 1024, 0),
             ("sliding", 64, 100, 0), ("sliding", 8, 4, 0), ("sliding", 16, 513, 0), ("sliding", 64, 512, 2),
             ("sliding", 8, 4, 2), ("chunked", 64, 512, 0), ("chunked", 16, 200, 0), ("mamba-none", 64, 0, 0),
             ("mamba-align", 64, 0, 0), ("mamba-align", 448, 0, 0)]
    # near MAX_LEN allocate_slots stops at max_model_len (2990 ... 3000); with draft tokens length 1 is left out:
    # a one-token request has only its prefill step, which reserves the lookahead but no drafts
    # (58, 60, 62 and 442 ... 446: where Mamba 'align' crosses its block with the drafts but not the lookahead)
    lengths = (5, 58, 60, 62, 63, 64, 65, 100, 442, 444, 446, 512, 513, 514, 1024, 1025, 1026, 1089, 2000, 2048,
               2990, 2995, 2999, 3000)
    total = 0
    for sync in (False, True):
        cases_bad = [compare(*case, k, ((1,) if k == 0 else ()) + lengths, sync) > 0
                     for k in (0, 1, 2, 3) for case in cases]
        print(f"{'sync' if sync else 'async'} scheduling: {len(cases_bad) - sum(cases_bad)} agree, {sum(cases_bad)} "
              f"differ (cases x draft tokens 0-3; {len(lengths)} lengths each, {len(lengths) + 1} at k = 0)")
        total += sum(cases_bad)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
