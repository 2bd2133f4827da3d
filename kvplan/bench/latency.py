"""Latency regressions decided on raw samples: a one-sided Mann-Whitney U test.

Each bench row keeps every timed decode step (`latency_samples_ms`). The gate
turns the samples of both runs into efficiencies (the run's own memory-bound
floor / each sample), so a slower machine alone does not fail, and asks whether
this run's efficiencies are stochastically below the baseline's scaled down by
the threshold:

    H0: current >= (1 - max_regression) x baseline   (in distribution)
    H1: current <  (1 - max_regression) x baseline

scipy.stats.mannwhitneyu(current, (1 - max_regression) x baseline,
alternative="less") gives the p-value; the step regressed when p < alpha.
A drop smaller than the threshold can never fail, however certain; a drop
beyond it fails only when the samples show it beyond chance. When the sample
counts are too small for any p-value below alpha (3 against 3 cannot go below
1/20), the row is a note, never a pass or a fail.

Torch-free; scipy is imported only when two runs with samples are compared on
CUDA (`pip install 'kvplan[gate]'`).
"""

from __future__ import annotations

from math import comb
from statistics import median

from .row import LatencyFigures

ALPHA = 0.01
METHOD = "Mann-Whitney U, one-sided, on per-step efficiency samples"


def efficiency_samples(latency: LatencyFigures) -> list[float]:
    floor = latency.floor_ms
    samples = latency.samples_ms or []
    if not floor or not samples:
        return []
    return [floor / s for s in samples if s and s > 0]


def smallest_p(n_current: int, n_baseline: int) -> float:
    """The smallest one-sided p-value the exact test can give for these sample counts."""
    return 1 / comb(n_current + n_baseline, n_current)


def gate_samples(row: LatencyFigures, base: LatencyFigures, max_regression: float,
                 alpha: float = ALPHA) -> tuple[str, str]:
    """(verdict 'pass' | 'fail' | 'note', detail with the threshold and the p-value)."""
    cur, ref = efficiency_samples(row), efficiency_samples(base)
    if not cur or not ref:
        return "note", "no latency samples to compare"
    ratio = median(cur) / median(ref)
    head = (f"median efficiency {100 * median(cur):.3g}% vs baseline {100 * median(ref):.3g}% "
            f"(ratio {ratio:.3f}, threshold -{100 * max_regression:.3g}%, n={len(cur)}/{len(ref)})")
    if smallest_p(len(cur), len(ref)) >= alpha:
        return "note", f"{head}: too few samples for p < {alpha:g}, not gated"
    try:
        from scipy.stats import mannwhitneyu
    except ImportError:
        return "note", f"{head}: scipy is not installed (pip install 'kvplan[gate]'), not gated"
    scaled = [(1 - max_regression) * x for x in ref]
    p = float(mannwhitneyu(cur, scaled, alternative="less").pvalue)
    verdict = "fail" if p < alpha else "pass"
    word = "slower beyond the threshold" if verdict == "fail" else "no significant regression"
    return verdict, f"{head}: {METHOD}, p = {p:.3g} (alpha {alpha:g}): {word}"
