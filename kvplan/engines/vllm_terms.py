"""vLLM's profile terms as one start-up log printed them, beside kvplan's prediction of each.

vLLM sets (v1/worker/gpu_worker.py determine_available_memory)

    available = requested - non-KV memory of the profile run [- the CUDA-graph estimate, when applied]

and, after the CUDA-graph capture, prints the terms in one line (compile_or_warm_up_model; read
by kvplan.engines.vllm_log). What each printed figure is depends on the release (read in each
release's gpu_worker.py and utils/mem_utils.py memory_profiling):

- 0.10.2-0.26: "W GiB for weight" is model_memory_usage (the "Model loading took" figure),
  "P GiB for peak activation" torch_peak_increase of the profile run, "N GiB for non-torch
  memory" non_torch_increase (since the first snapshot); non-KV = W + P + N. In 0.18.x only,
  peak_activation_memory also holds the applied CUDA-graph estimate.
- 0.27+: "C GiB for consumed memory (weights + non-torch)" is total_consumed (free memory before
  the instance minus free memory after the profile run: the weights, the non-torch growth and
  whatever torch kept allocated), "P GiB for peak activation" the transient headroom (torch peak
  minus torch allocated after the run) plus the applied CUDA-graph estimate; non-KV = C + (P -
  estimate). kvplan's non-torch term is compared with C - W.
- "G GiB for CUDAGraph memory" is the capture's own pool, taken after the KV cache was
  allocated: it is not subtracted from the available memory (the estimate is, from 0.20.0 by
  default: "Estimated CUDA graph memory: X GiB total" and "CUDA graph memory profiling is
  enabled").

Every logged figure is round(x, 2) GiB, so a difference under 0.01-0.02 GiB is the printing.
From 0.34.0 with the extensible KV cache (kvplan.engines.vllm_extensible) the "Available KV cache memory" these
terms add up to is the reserved capacity at the resolved utilization (1.0 by default); the pool is the "Memory
after warmup" line's, which calibrate compares separately.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..units import GIB
from .vllm_log import VllmLog
from .vllm_cudagraph import CUDA_GRAPH_ESTIMATE_FROM as ESTIMATE_DEFAULT_ON_FROM
from .vllm_profile import CONSUMED_FROM, ProfileEstimate
from .vllm_release import at_least, release_key, within

ESTIMATE_IN_PEAK = ((0, 18, 0), (0, 19, 0))  # 0.18.x: peak_activation_memory = torch peak + applied estimate


@dataclass(frozen=True)
class LoggedTerms:
    """The profile's terms in GiB as the log gives them (None: not printed and not derivable)."""

    total_gib: float | None
    requested_gib: float | None
    weights_gib: float | None
    activation_gib: float | None  # without the CUDA-graph estimate
    non_torch_gib: float | None
    graph_estimate_gib: float | None  # what the profile subtracted (0 when printed but not applied)
    graph_captured_gib: float | None  # the capture's pool, not subtracted
    available_gib: float | None
    notes: tuple[str, ...] = field(default=())
    activation_holds_estimate: bool = False  # the printed peak still holds an estimate the excerpt does not print

    @property
    def unexplained_gib(self) -> float | None:
        """requested - weights - activation - non-torch - estimate - available: the printing's rounding
        when the breakdown is read right (0.27+: also what torch kept allocated, inside 'consumed')."""
        parts = (self.requested_gib, self.weights_gib, self.activation_gib, self.non_torch_gib,
                 self.available_gib)
        if any(p is None for p in parts):
            return None
        return round(self.requested_gib - self.weights_gib - self.activation_gib - self.non_torch_gib
                     - (self.graph_estimate_gib or 0.0) - self.available_gib, 2)


def estimate_applied(log: VllmLog) -> bool | None:
    """Whether the profile subtracted the printed CUDA-graph estimate: the log's own line when it
    printed one, else the release's default (on from 0.20.0); None when no estimate was printed."""
    if log.cuda_graph_estimate_gib is None:
        return None
    if log.cuda_graph_estimate_applied is not None:
        return log.cuda_graph_estimate_applied
    return at_least(log.version, ESTIMATE_DEFAULT_ON_FROM) if release_key(log.version) is not None else None


def logged_terms(log: VllmLog) -> LoggedTerms | None:
    """The terms a log with the profile breakdown gives; None without the breakdown."""
    if log.breakdown is None:
        return None
    notes = []
    applied = estimate_applied(log)
    estimate = (log.cuda_graph_estimate_gib if applied else 0.0) if applied is not None else None
    peak_has_estimate = log.breakdown == "consumed" or within(log.version, *ESTIMATE_IN_PEAK)
    activation = log.breakdown_activation_gib
    holds = False
    if activation is not None and peak_has_estimate:
        if estimate is None and (log.version is None or at_least(log.version, ESTIMATE_DEFAULT_ON_FROM)):
            holds = True
            notes.append("the printed peak activation includes the CUDA-graph estimate, which this excerpt "
                         "does not print: both sides of the activation row hold it")
        else:
            activation = round(activation - (estimate or 0.0), 2)
            if estimate:
                notes.append(f"peak activation {log.breakdown_activation_gib:.2f} GiB as printed, less the "
                             f"applied CUDA-graph estimate {estimate:.2f} GiB")
    weights = log.weights_gib if log.weights_gib is not None else log.breakdown_weights_gib
    if log.breakdown == "consumed":
        non_torch = None
        if log.breakdown_consumed_gib is not None and weights is not None:
            non_torch = round(log.breakdown_consumed_gib - weights, 2)
            notes.append(f"non-torch = consumed {log.breakdown_consumed_gib:.2f} GiB (weights + non-torch + what "
                         f"torch kept allocated) - weights {weights:.2f} GiB")
    else:
        non_torch = log.breakdown_non_torch_gib
    requested = log.requested_gib
    if requested is None and log.device_total_gib is not None and log.gpu_memory_utilization is not None:
        requested = round(log.device_total_gib * log.gpu_memory_utilization, 2)
    return LoggedTerms(log.device_total_gib, requested, weights, activation, non_torch, estimate,
                       log.breakdown_cuda_graph_gib if log.breakdown_cuda_graph_gib is not None
                       else log.cuda_graph_actual_gib, log.available_kv_gib, tuple(notes), holds)


@dataclass(frozen=True)
class TermRow:
    name: str
    logged_gib: float | None
    predicted_gib: float | None
    source: str = ""  # where kvplan's figure comes from

    @property
    def difference_gib(self) -> float | None:
        if self.logged_gib is None or self.predicted_gib is None:
            return None
        return round(self.predicted_gib - self.logged_gib, 2)


def compare(estimate: ProfileEstimate, logged: LoggedTerms) -> list[TermRow]:
    """One row per profile term: logged (from the breakdown) vs predicted (vllm_profile), GiB."""
    g = GIB
    graph_note = (estimate.cuda_graph_from or "given") if estimate.cuda_graph_bytes else "not modelled"
    activation, activation_from = estimate.activation_bytes, estimate.activation_from
    if logged.activation_holds_estimate:
        activation += estimate.cuda_graph_bytes
        activation_from += " + the CUDA-graph estimate, as the log prints it"
    rows = [
        TermRow("requested (total x utilization)", logged.requested_gib, estimate.requested_bytes / g,
                f"{estimate.total_bytes / g:.2f} GiB x {estimate.gpu_memory_utilization:g}"),
        TermRow("weights", logged.weights_gib, estimate.weight_bytes / g, estimate.weights_from),
        TermRow("peak activation", logged.activation_gib, activation / g, activation_from),
        TermRow("non-torch", logged.non_torch_gib, (estimate.non_torch_bytes + estimate.buffer_bytes) / g,
                "per-release constant + TP term" + (f" + {estimate.buffers_from}" if estimate.buffer_bytes else "")),
        TermRow("CUDA-graph estimate (subtracted)", logged.graph_estimate_gib, estimate.cuda_graph_bytes / g,
                graph_note),
        TermRow("available KV cache memory", logged.available_gib, estimate.available_bytes / g, "the difference"),
    ]
    if logged.graph_captured_gib is not None:
        rows.append(TermRow("CUDA graphs captured (after the KV cache; not subtracted)", logged.graph_captured_gib,
                            None, ""))
    return rows


def largest_term_gap(rows: list[TermRow]) -> TermRow | None:
    """The profile term (not the total or the result) whose prediction is furthest off."""
    terms = [r for r in rows if r.name in ("weights", "peak activation", "non-torch",
                                          "CUDA-graph estimate (subtracted)", "requested (total x utilization)")
             and r.difference_gib is not None]
    return max(terms, key=lambda r: abs(r.difference_gib), default=None)


__all__ = ["LoggedTerms", "TermRow", "logged_terms", "compare", "estimate_applied", "largest_term_gap",
           "CONSUMED_FROM", "ESTIMATE_IN_PEAK", "ESTIMATE_DEFAULT_ON_FROM"]
