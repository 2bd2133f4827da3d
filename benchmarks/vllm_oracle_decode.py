"""kvplan's blocks a decoding request holds (kvplan.engines.vllm_decode.held_blocks) against vLLM's own KV cache
manager, run on CPU (no GPU, no model).

For each kind of group (full attention, sliding window, chunked local attention, Mamba in 'none' and 'align'
mode) this builds a one-group KVCacheConfig and vLLM's KVCacheManager, then decodes one request token by token
through KVCacheManager.allocate_slots as the scheduler does under async scheduling (v1/core/sched/scheduler.py:
a step is scheduled while the previous one is in flight, so request.num_in_flight_tokens is that step's token,
and num_computed_tokens already counts it), and records the blocks the request holds (its block table less the
null blocks) after each step. The most held by any length <= L is compared with held_blocks(spec, L, lag=1).

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

from kvplan.engines.vllm import PageSpec  # noqa: E402
from kvplan.engines.vllm_decode import held_blocks  # noqa: E402

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


def decode(kind: str, block: int, window: int, retained: int, prompt: int) -> dict[int, int]:
    """{slots the request has: blocks it holds} over a decode from `prompt` tokens to MAX_LEN."""
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
    new, in_flight = prompt, 0
    while request.num_computed_tokens + new <= MAX_LEN:
        request.num_in_flight_tokens = in_flight  # the step before, not yet processed (async scheduling)
        assert manager.allocate_slots(request, new) is not None
        request.num_computed_tokens += new
        request.num_tokens = request.num_computed_tokens + 1  # the token this step samples
        blocks = group.req_to_blocks["r"]
        held[request.num_computed_tokens] = sum(1 for b in blocks if not b.is_null)
        new, in_flight = 1, new
    return held


def main() -> int:
    # (kind, block, window or chunk, extra_retained_tokens): block 16 / window 513 and block 8 / window 4 + 2
    # retained are where the token in flight adds a block
    cases = [("full", 64, 0, 0), ("full", 16, 0, 0), ("sliding", 64, 1024, 0), ("sliding", 16, 1024, 0),
             ("sliding", 64, 100, 0), ("sliding", 8, 4, 0), ("sliding", 16, 513, 0), ("sliding", 64, 512, 2),
             ("sliding", 8, 4, 2), ("chunked", 64, 512, 0), ("chunked", 16, 200, 0), ("mamba-none", 64, 0, 0),
             ("mamba-align", 64, 0, 0), ("mamba-align", 448, 0, 0)]
    lengths = (1, 5, 63, 64, 65, 100, 512, 513, 514, 1024, 1025, 1026, 1089, 2000, 2048, 2999, 3000)
    bad = 0
    for kind, block, window, retained in cases:
        held = decode(kind, block, window, retained, prompt=1)
        spec = kvplan_spec(kind, block, window, retained)
        before = bad
        for length in lengths:
            theirs = max(n for slots, n in held.items() if slots <= length) if length > 1 else held[1]
            ours = held_blocks(spec, length, lag_tokens=1)
            if ours != theirs:
                bad += 1
                print(f"{kind} block {block} window {window} L {length}: vLLM {theirs}, kvplan {ours}")
        print(f"{kind} block {block} window {window} retained {retained}: {'agree' if bad == before else 'differ'} "
              f"({len(lengths)} lengths, most held {max(held.values())})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
