"""Why a reproduced figure of `kvplan calibrate` differs beyond the vLLM log's rounding (explain): the hints found by
trying what the log does not print, TP / PP workers, rules not read for the logged release, an unmodelled draft,
a KV connector."""

from __future__ import annotations

from .vllm_calibrate_records import Calibration, log_has
from .vllm_rules import resolve


def explain(cal: Calibration, figure: str) -> str:
    """Why `figure` (blocks, tokens, concurrency) differs beyond the log's rounding, as far as kvplan can tell."""
    log = cal.log
    reasons = list(cal.hints)
    if (log.tp or 1) > 1 or (log.pp or 1) > 1:
        reasons.append("with TP/PP the printed 'Available KV cache memory' is one worker's, the blocks the minimum "
                       "over all workers")
    if cal.rules is not None and log.version and resolve(log.version)[1]:
        reasons.append(f"vLLM {log.version}'s rules were not read; {cal.rules.version}'s were used")
    if cal.draft_unmodelled:
        reasons.append("the speculative-decoding draft's KV cache shares the pool (not modelled for this method)")
    if log_has(log, "connector") and cal.pool is not None and len(cal.pool.groups) > 1:
        reasons.append("a KV connector turns the hybrid KV cache manager off")
    return "; ".join(reasons) or f"the {figure} differ beyond the log's rounding: kvplan's model of this layer mix"


__all__ = ["explain"]
