"""vLLM's KV pool as simulate gives it (VllmPool: blocks, tokens, concurrency, the lines vLLM logs), the tokens in
flight a sliding window keeps, and the longest max_model_len that fits (vLLM's estimate_max_model_len)."""

from __future__ import annotations

from dataclasses import field

from .._record import record
from ..units import GIB
from .vllm_groups import CacheGroup
from .vllm_pages import PageSpec
from .vllm_rules import LATEST, VllmRules


@record
class VllmPool:
    kv_memory_bytes: int
    max_model_len: int
    max_num_batched_tokens: int
    groups: tuple[CacheGroup, ...]
    uniform_type: bool  # one group whose page is the sum of its layers' pages
    page_bytes: int  # one block of one group (summed over layers when uniform_type)
    num_blocks: int
    blocks_per_request: int
    gpu_kv_cache_tokens: int
    max_concurrency: float
    fits: bool
    estimated_max_model_len: int | None
    notes: tuple[str, ...] = field(default=())
    layer_specs: tuple[PageSpec, ...] = field(default=())  # one per vLLM cache layer, after unification
    version: str = LATEST.version
    one_log_line: bool = True
    kv_cache_dtype: str = "auto"
    bytes_per_block: int = 0  # page x layers per group: what one block costs the pool
    in_flight_tokens: int = 0  # tokens a sliding window may hold beyond W - 1
    gib_text_rounded: bool = True  # 0.14+: "Available KV cache memory" as round(x, 2), not %.2f
    tokens_from_concurrency: bool = True  # 0.20.1+: tokens = int(concurrency x max_model_len)
    max_num_seqs: int = 0  # the --max-num-seqs the start check assumed
    refusal: str | None = None  # why vLLM would refuse to start (fits is False), in one sentence
    # 0.34+'s extensible KV cache, where the pool was predicted from the GPU: the reserved capacity the
    # "Available KV cache memory" line prints (kv_memory_bytes is then the pool measured after warmup)
    reserved_bytes: int | None = None

    @property
    def block_size(self) -> int:
        return min(g.spec.block_tokens for g in self.groups)

    @property
    def concurrency_text(self) -> str:
        return f"{self.max_concurrency:.2f}x"

    def log_lines(self) -> list[str]:
        """The lines vLLM prints, formatted as this release formats them."""
        size = f"GPU KV cache size: {self.gpu_kv_cache_tokens:,} tokens"
        conc = f"Maximum concurrency for {self.max_model_len:,} tokens per request: {self.concurrency_text}"
        gib = (self.reserved_bytes if self.reserved_bytes is not None else self.kv_memory_bytes) / GIB
        head = f"Available KV cache memory: {round(gib, 2) if self.gib_text_rounded else f'{gib:.2f}'} GiB"
        if self.one_log_line:
            return [head, f"{size}, {conc}"]
        return [head, size, conc]


def in_flight_tokens(rules: VllmRules, mnbt: int, pp: int) -> int:
    """Tokens scheduled but not yet freed (0.26+ VllmConfig.max_in_flight_tokens): max_concurrent_batches
    (2 under async scheduling; with PP the PP size until 0.33, where the V1 model runner turns async
    scheduling off, and PP + 1 from 0.34, where it stays on) x max_num_batched_tokens."""
    if rules.sliding_in_flight_batches == 1:
        return mnbt
    if pp == 1:
        return mnbt * rules.sliding_in_flight_batches
    return mnbt * (pp + 1 if rules.async_scheduling_with_pp else pp)


def longest_fitting(fits, max_model_len: int) -> int:
    """The longest max_model_len below max_model_len that passes `fits` (0: none), vLLM's estimate_max_model_len."""
    lo, hi, best = 1, max_model_len, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def memory_refusal(max_model_len: int, estimate: int) -> str:
    return (f"one {max_model_len:,}-token request needs more than the KV memory; the estimated maximum "
            f"model length is {estimate:,}")

