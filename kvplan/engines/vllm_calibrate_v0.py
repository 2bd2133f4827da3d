"""The v0-engine reproduction of `kvplan calibrate` (vLLM 0.7 and older, "# GPU blocks"): 0.11's page rules with
the v0 accounting, blocks = kv_cache_size // (block x layers x page), concurrency = blocks x block_size /
max_model_len (vllm/worker/worker.py, v0.6-0.7)."""

from __future__ import annotations

from ..errors import UsageError
from ..units import GIB
from .vllm import simulate
from .vllm_calibrate_explain import explain
from .vllm_calibrate_records import Calibration, Figure, deviation_pct
from .vllm_log import VllmLog
from .vllm_rules import V0_11


def _v0_pool(model, log: VllmLog, kv: int, max_len: int, kv_dtype, block):
    """v0 engine: every layer full attention, blocks = kv // (block x all layers' page)."""
    pool = simulate(model, kv_memory_bytes=max(kv, 1), max_model_len=max_len, block_tokens=block, tp=log.tp or 1,
                    pp=log.pp or 1, rules=V0_11, kv_cache_dtype=kv_dtype, hybrid_manager=False,
                    allow_long_max_model_len=True)
    per_block = sum(s.page_bytes for s in pool.layer_specs)
    blocks = kv // per_block
    return pool, blocks, per_block


def reproduce_v0(cal: Calibration, spec, max_len: int, kv_dtype, block):
    """The v0 engine's figures (blocks, concurrency, a refusal's tokens) from the printed memory interval."""
    log = cal.log
    rng = log.available_kv_bytes_range
    if rng is None:
        if log.num_gpu_blocks is None:
            raise UsageError("the log has neither the KV cache size nor the block count: nothing to reproduce")
        pool, _, per_block = _v0_pool(spec, log, GIB, max_len, kv_dtype, block)
        low = high = log.num_gpu_blocks * per_block
        cal.notes.append("no memory figure in the log: the pool is inferred from the block count")
    else:
        low, high = rng
    pool, blocks_low, per_block = _v0_pool(spec, log, low, max_len, kv_dtype, block)
    _, blocks_high, _ = _v0_pool(spec, log, high, max_len, kv_dtype, block)
    block_tokens = pool.block_size
    mid = (low + high) // 2
    blocks_mid = mid // per_block
    if log.num_gpu_blocks is not None:
        within = blocks_low <= log.num_gpu_blocks <= blocks_high
        cal.figures.append(Figure("GPU blocks", f"{log.num_gpu_blocks:,}",
                                  f"{blocks_mid:,} ({blocks_low:,}-{blocks_high:,})",
                                  deviation_pct(log.num_gpu_blocks, blocks_mid), within,
                                  "" if within else explain(cal, "blocks")))
        blocks = log.num_gpu_blocks
    else:
        blocks = blocks_mid
    cal.kv_memory_bytes = blocks * per_block
    if log.concurrency is not None:
        conc = blocks * block_tokens / max_len
        text = f"{conc:.2f}"
        cal.figures.append(Figure(f"Maximum concurrency for {max_len:,} tokens", f"{log.concurrency:.2f}x",
                                  f"{text}x", deviation_pct(log.concurrency, conc), text == f"{log.concurrency:.2f}"))
    if log.refused and log.refused_estimate is not None:
        tokens = blocks * block_tokens
        cal.figures.append(Figure("tokens the cache can hold (refusal)", f"{log.refused_estimate:,}", f"{tokens:,}",
                                  deviation_pct(log.refused_estimate, tokens), tokens == log.refused_estimate))
    cal.pool = pool


__all__ = ["reproduce_v0"]
