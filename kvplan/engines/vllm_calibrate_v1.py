"""The v1-engine reproduction of `kvplan calibrate` (vLLM 0.8 and later): the pool simulated at both ends of the
printed 'Available KV cache memory' interval, the block count that reproduces the logged tokens (reproduce_v1),
0.34's extensible KV cache measured after warmup (reproduce_extensible), and the prefix-caching setting a hybrid's
log does not print (a hint)."""

from __future__ import annotations

from dataclasses import replace

from ..errors import KvplanError, UsageError
from ..units import GIB
from .vllm import simulate
from .vllm_calibrate_draft import draft_layers, speculative_tokens
from .vllm_calibrate_explain import explain
from .vllm_calibrate_records import Calibration, Figure, deviation_pct
from .vllm_log import VllmLog, printed_range
from .vllm_pool import VllmPool
from .vllm_release import at_least
from .vllm_rules import VllmRules


def simulate_log(model, log: VllmLog, rules: VllmRules, kv: int, max_len: int, kv_dtype, block, mnbt, draft=None):
    """The pool vLLM would build on `kv` bytes of KV memory with the log's settings (vllm.simulate)."""
    return simulate(model, kv_memory_bytes=kv, max_model_len=max_len, block_tokens=block, tp=log.tp or 1,
                    pp=log.pp or 1, max_num_batched_tokens=mnbt, rules=rules, kv_cache_dtype=kv_dtype,
                    allow_long_max_model_len=True, prefix_caching=log.enable_prefix_caching,
                    max_num_seqs=log.max_num_seqs, enforce_eager=log.enforce_eager,
                    draft_layers=draft_layers(model, log), num_speculative_tokens=speculative_tokens(model, log),
                    draft_model=draft)


def _candidates(pool: VllmPool, log: VllmLog, max_len: int) -> list[int]:
    """Block counts that could have printed the logged token figure."""
    tokens = log.gpu_kv_cache_tokens
    if tokens is None:
        return []
    groups, block = len(pool.groups), pool.block_size
    if not pool.tokens_from_concurrency:
        base = tokens // block * groups
        return list(range(max(base - groups, 1), base + groups + 1))
    base = tokens * pool.blocks_per_request // max_len
    return list(range(max(base - 2, 1), base + 3))


# kv_cache_utils.py: before 0.12.0 each worker's config reports "GPU KV cache size" (and the concurrency) from its
# own memory, the first worker's printed first, and only then are the block counts cut to the smallest
# (get_kv_cache_config / get_kv_cache_configs); from 0.12.0 _report_kv_cache_config runs after the cut
TOKENS_AFTER_MIN_FROM = (0, 12, 0)


def _ranges(log, version: str | None):
    """(bytes range for the token and concurrency lines, bytes range for the block count)."""
    blocks = printed_range(log.available_kv_min_gib)
    first = log.available_kv_bytes_range
    return (first if first is not None and not at_least(version, TOKENS_AFTER_MIN_FROM) else blocks), blocks


def reproduce_v1(cal: Calibration, spec, rules: VllmRules, max_len: int, kv_dtype, block, mnbt):
    """The v1 engine's figures (tokens, blocks, concurrency, the start check) from the printed memory interval."""
    log = cal.log
    rng, block_rng = _ranges(log, log.version or rules.version)
    probe = simulate_log(spec, log, rules, GIB, max_len, kv_dtype, block, mnbt, cal.draft)
    cal.notes.extend(probe.notes)
    bpb = probe.bytes_per_block
    if log.extensible_kv_cache:  # a warmup or "Extended KV cache" line: 0.34's extensible KV cache
        reproduce_extensible(cal, spec, rules, probe, max_len, kv_dtype, block, mnbt)
        return
    if log.available_kv_gib is not None and log.available_kv_gib <= 0:
        cal.figures.append(Figure("start check", f"no memory for the KV cache ({log.available_kv_text} GiB)",
                                  "refused: no memory for the cache blocks", None, True))
        cal.pool = probe
        cal.notes.append("vLLM raises 'No available memory for the cache blocks' when the available memory is <= 0")
        return
    if rng is None:
        if log.gpu_kv_cache_tokens is None:
            if log.refused:
                raise UsageError("the log's KV memory is negative or absent: vLLM had no memory for the cache",
                                 "raise --gpu-memory-utilization or lower --max-model-len")
            raise UsageError("the log has neither 'Available KV cache memory' nor 'GPU KV cache size'")
        low, high = 0, None
        cal.notes.append("no 'Available KV cache memory' in the log: the pool is inferred from the KV cache size")
    else:
        low, high = rng
    def simulated(bounds):
        if bounds is None:
            return {}
        lo, hi = bounds
        return {name: simulate_log(spec, log, rules, kv, max_len, kv_dtype, block, mnbt, cal.draft)
                for name, kv in (("low", lo), ("high", hi), ("mid", (lo + hi) // 2))}

    pools = simulated(rng if high is not None else None)
    block_pools = pools if block_rng == rng else simulated(block_rng)
    # the block count that reproduces the logged tokens, inside the printed interval
    chosen = None
    for n in _candidates(probe, log, max_len):
        kv = n * bpb
        if high is not None and not (low - bpb < kv <= high):
            continue
        p = simulate_log(spec, log, rules, kv, max_len, kv_dtype, block, mnbt, cal.draft)
        if p.gpu_kv_cache_tokens == log.gpu_kv_cache_tokens:
            chosen = p
            break
    if log.gpu_kv_cache_tokens is not None and pools:
        lo_t, hi_t, mid_t = (pools[k].gpu_kv_cache_tokens for k in ("low", "high", "mid"))
        within = lo_t <= log.gpu_kv_cache_tokens <= hi_t
        if not within and high is not None:
            _probe_prefix_caching(cal, probe, spec, rules, (low, high), max_len, kv_dtype, block, mnbt)
        cal.figures.append(Figure("GPU KV cache size (tokens)", f"{log.gpu_kv_cache_tokens:,}",
                                  f"{mid_t:,} ({lo_t:,}-{hi_t:,})", deviation_pct(log.gpu_kv_cache_tokens, mid_t),
                                  within,
                                  "" if within else explain(cal, "tokens")))
    if log.num_gpu_blocks is not None and block_pools:
        lo_b, hi_b, mid_b = (block_pools[k].num_blocks for k in ("low", "high", "mid"))
        within = lo_b <= log.num_gpu_blocks <= hi_b
        cal.figures.append(Figure("GPU blocks", f"{log.num_gpu_blocks:,}", f"{mid_b:,} ({lo_b:,}-{hi_b:,})",
                                  deviation_pct(log.num_gpu_blocks, mid_b), within,
                                  "" if within else explain(cal, "blocks")))
        if chosen is None:
            chosen = simulate_log(spec, log, rules, log.num_gpu_blocks * bpb, max_len, kv_dtype, block, mnbt,
                                 cal.draft)
    if log.num_gpu_blocks is not None and not pools and chosen is not None:
        same = chosen.num_blocks == log.num_gpu_blocks
        cal.figures.append(Figure("GPU blocks (from the KV cache size)", f"{log.num_gpu_blocks:,}",
                                  f"{chosen.num_blocks:,}", deviation_pct(log.num_gpu_blocks, chosen.num_blocks), same))
    reference = chosen or pools.get("mid")
    if reference is None:
        raise UsageError(f"no block count reproduces the logged {log.gpu_kv_cache_tokens:,} tokens under vLLM "
                         f"{rules.version}'s rules for {cal.model_alias}",
                         "check --model, --version, the KV dtype and TP the server ran with")
    if chosen is None and log.gpu_kv_cache_tokens is not None:
        cal.notes.append("no block count inside the printed memory interval reproduces the logged tokens: "
                         "the concurrency below uses the interval's middle")
    cal.pool = reference
    cal.kv_memory_bytes = reference.num_blocks * bpb + bpb // 2 if chosen else (low + high) // 2
    if log.concurrency is not None:
        text = f"{reference.max_concurrency:.2f}"
        cal.figures.append(Figure(f"Maximum concurrency for {max_len:,} tokens", f"{log.concurrency:.2f}x", f"{text}x",
                                  deviation_pct(log.concurrency, reference.max_concurrency),
                                  text == f"{log.concurrency:.2f}",
                                  "" if text == f"{log.concurrency:.2f}" else explain(cal, "concurrency")))
    if log.refused:
        predicted = reference.estimated_max_model_len
        logged = log.refused_estimate
        shown = f", estimate {predicted:,}" if predicted else ""
        if logged is not None and pools and None not in (pools["low"].estimated_max_model_len,
                                                         pools["high"].estimated_max_model_len):
            # the estimate, like the blocks, is within the log's rounding when it lies between the
            # estimates at the two ends of the printed memory interval
            lo_e, hi_e = pools["low"].estimated_max_model_len, pools["high"].estimated_max_model_len
            same = lo_e <= logged <= hi_e
            shown += f" ({lo_e:,}-{hi_e:,})"
        else:
            same = logged is None or predicted == logged
        ok = (not reference.fits) and same
        cal.figures.append(Figure("start check (refusal)", "refused" + (f", estimate {logged:,}" if logged else ""),
                                  ("refused" if not reference.fits else "starts") + shown,
                                  deviation_pct(logged, predicted) if logged and predicted else None, ok))


def reproduce_extensible(cal: Calibration, spec, rules: VllmRules, probe: VllmPool, max_len: int, kv_dtype, block,
                          mnbt):
    """0.34's extensible KV cache: the blocks were measured after warmup (v1/worker/extensible_kv_cache.py
    measure_kv_cache_blocks; the smallest over the workers, kv_cache_planning.py finalize_extensible_kv_cache),
    so the logged count is the pool. kvplan checks the bytes of a block against the GiB that line printed
    (format_gib of blocks x bytes per block), the count against the capacity reserved from 'Available KV cache
    memory' (finalize takes at most that), and the size line and the start check (shrink_kv_cache_configs:
    blocks less the null block) from those blocks."""
    log = cal.log
    bpb = probe.bytes_per_block
    blocks = log.extended_kv_blocks if log.extended_kv_blocks is not None else log.warmup_kv_blocks
    if not rules.extensible_kv_cache:
        cal.notes.append(f"the log sized its KV cache after warmup (the extensible KV cache of vLLM 0.34 and later), "
                         f"which vLLM {rules.version}'s rules do not have: the logged block count is used as the pool")
    cal.notes.append(f"extensible KV cache: {blocks:,} blocks measured after warmup (the smallest over the workers) "
                     "are the pool; 'Available KV cache memory' sized only the reserved capacity")
    if log.warmup_kv_blocks is not None and log.warmup_kv_gib is not None:
        shown = log.warmup_kv_blocks * bpb / GIB
        within = abs(shown - log.warmup_kv_gib) <= 0.005 + 1e-9
        cal.figures.append(Figure(f"KV cache blocks after warmup ({log.warmup_kv_blocks:,} blocks)",
                                  f"{log.warmup_kv_text} GiB", f"{round(shown, 2)} GiB ({bpb:,} B a block)",
                                  deviation_pct(log.warmup_kv_gib, shown), within,
                                  "" if within else "the bytes of one block (page x layers per group) differ "
                                  "from vLLM's: kvplan's page or grouping of this layer mix"))
    if log.extended_kv_blocks is not None and log.warmup_kv_blocks is not None:
        same = log.extended_kv_blocks == log.warmup_kv_blocks
        cal.figures.append(Figure("blocks committed (Extended KV cache to N blocks)", f"{log.extended_kv_blocks:,}",
                                  f"{log.warmup_kv_blocks:,}",
                                  deviation_pct(log.extended_kv_blocks, log.warmup_kv_blocks),
                                  same, "" if same else "the workers measured different counts, or the capacity "
                                  "reserved from 'Available KV cache memory' was smaller"))
    rng = printed_range(log.available_kv_min_gib)
    if rng is not None:
        capacity = rng[1] // bpb
        ok = blocks <= capacity
        cal.figures.append(Figure("blocks within the reserved capacity", f"{blocks:,}",
                                  f"at most {capacity:,} ({log.available_kv_min_gib} GiB / {bpb:,} B)", None, ok,
                                  "" if ok else "more blocks than 'Available KV cache memory' reserves room for: "
                                  "kvplan's bytes per block are too large"))
    pool = simulate_log(spec, log, rules, blocks * bpb, max_len, kv_dtype, block, mnbt, cal.draft)
    cal.pool = pool
    cal.kv_memory_bytes = blocks * bpb
    if log.gpu_kv_cache_tokens is not None:
        same = pool.gpu_kv_cache_tokens == log.gpu_kv_cache_tokens
        cal.figures.append(Figure("GPU KV cache size (tokens)", f"{log.gpu_kv_cache_tokens:,}",
                                  f"{pool.gpu_kv_cache_tokens:,}", deviation_pct(log.gpu_kv_cache_tokens,
                                                                         pool.gpu_kv_cache_tokens),
                                  same, "" if same else explain(cal, "tokens")))
    if log.concurrency is not None:
        text = f"{pool.max_concurrency:.2f}"
        same = text == f"{log.concurrency:.2f}"
        cal.figures.append(Figure(f"Maximum concurrency for {max_len:,} tokens", f"{log.concurrency:.2f}x", f"{text}x",
                                  deviation_pct(log.concurrency, pool.max_concurrency), same,
                                  "" if same else explain(cal, "concurrency")))
    if log.refused:
        ok = not pool.fits
        cal.figures.append(Figure("start check (refusal)", "refused", "refused" if ok else "starts", None, ok))


def _probe_prefix_caching(cal: Calibration, probe: VllmPool, spec, rules: VllmRules, bounds, max_len: int, kv_dtype,
                          block, mnbt):
    """A hybrid's state pages per request depend on prefix caching ('align' mode), which many logs do not
    print: when the other setting reproduces the logged tokens inside the printed interval, say so."""
    log = cal.log
    if log.enable_prefix_caching is not None or not any(s.kind == "mamba" for s in probe.layer_specs):
        return
    default = rules.mamba_align_mode
    other = replace(log, enable_prefix_caching=not default)
    try:
        low, high = (simulate_log(spec, other, rules, kv, max_len, kv_dtype, block, mnbt,
                               cal.draft).gpu_kv_cache_tokens for kv in bounds)
    except KvplanError:
        return
    if low <= log.gpu_kv_cache_tokens <= high:
        setting = "on (--enable-prefix-caching)" if not default else "off (--no-enable-prefix-caching)"
        cal.hints.append(f"with prefix caching {setting}, which the log does not print, kvplan gives "
                         f"{low:,}-{high:,} tokens: the logged figure (the release's default is "
                         f"{'on' if default else 'off'})")


__all__ = ["reproduce_v1", "reproduce_extensible", "simulate_log", "TOKENS_AFTER_MIN_FROM"]
