"""The records of `kvplan calibrate` on a vLLM log: one figure logged vs predicted (Figure, shared with SGLang's
calibration), the whole calibration (Calibration), the signed deviation of a prediction (deviation_pct) and whether
the log read a flag (log_has)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import KvplanError
from .vllm_log import VllmLog
from .vllm_pool import VllmPool
from .vllm_rules import VllmRules


@dataclass
class Figure:
    name: str
    logged: str
    predicted: str
    deviation_pct: float | None
    within_rounding: bool | None
    explanation: str = ""
    kind: str = "reproduction"  # reproduction | prediction (from the GPU, item 6: not a rounding check)
    # the terminal's "why" where the explanation is the profile's whole breakdown, shown once in its own table
    # (not in the JSON, whose figures[].explanation keeps the breakdown)
    brief: str | None = None


@dataclass
class Calibration:
    log: VllmLog
    rules: VllmRules | None
    model_alias: str | None
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kv_memory_bytes: int | None = None  # the pool that reproduces the log
    pool: VllmPool | None = None
    problem: KvplanError | None = None  # what stopped the reproduction (figures read are still shown)
    what_if: dict | None = None
    predicted_available_gib: float | None = None
    terms: list = field(default_factory=list)  # vllm_terms.TermRow: each profile term logged vs predicted
    logged_terms: object | None = None  # vllm_terms.LoggedTerms when the log has the profile breakdown
    hints: list[str] = field(default_factory=list)  # reasons found by trying what the log does not print
    draft: object | None = None  # the ModelSpec of the log's separate draft checkpoint, when kvplan read it
    draft_unmodelled: bool = False  # speculative decoding is on, and its draft's cache is not in kvplan's pool
    # (column label, vllm_profile.ProfileEstimate) of each prediction from the GPU, for the profile table
    profiles: list = field(default_factory=list)
    # the log's DP / EP / EPLB / encoder settings as estimate's flags build them (capacity.hardware.Deployment);
    # None: a TP / PP start, or settings kvplan does not take (a note says which)
    deployment: object | None = None


def deviation_pct(logged: float, predicted: float) -> float | None:
    """The predicted figure's signed deviation from the logged one, in percent (None when nothing was logged)."""
    if not logged:
        return None
    return round(100 * (predicted - logged) / logged, 3)


def log_has(log: VllmLog, what: str) -> bool:
    """Whether the log's lines set `what` (VllmLog.flags: speculative, quantized, connector, ...)."""
    return what in log.flags


__all__ = ["Figure", "Calibration", "deviation_pct", "log_has"]
