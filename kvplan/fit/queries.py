"""What a `kvplan fit` report reads from a search's result: the closest miss (closest), the cheaper options that
failed (cheaper_failures) and the Pareto front per technique set (pareto)."""

from __future__ import annotations

import math

from .records import Candidate, FitResult, achievable, objective_value, rank_key


def closest(result: FitResult) -> Candidate | None:
    """The candidate nearest to meeting every budget: the smallest worst relative miss."""
    def score(c: Candidate) -> float:
        worst = 0.0
        for name, actual, limit in c.misses:
            if name in ("concurrency", "engine"):
                worst = max(worst, (limit - actual) / limit if limit else 1.0)
            else:
                worst = max(worst, (actual - limit) / limit if limit else math.inf)
        return worst
    pool = [c for c in result.candidates if c.misses and c.constraint not in ("heads", "split", "card")]
    if not pool:
        return None
    fits = [c for c in pool if c.constraint not in ("weights", "load")]
    pick = fits or pool
    return min(pick, key=lambda c: (score(c), rank_key(c, result.request.objective, result.request.quality_first)))


def cheaper_failures(result: FitResult, winner: Candidate) -> list[Candidate]:
    """The failed candidates whose objective figure beats the winner's, best first."""
    objective = result.request.objective
    target = objective_value(winner, objective)
    failed = [c for c in result.candidates if not c.ok and c.constraint is not None]
    if objective == "headroom":
        failed = [c for c in failed if c.gpus <= winner.gpus]
    else:
        failed = [c for c in failed if objective_value(c, objective) < target]
    return sorted(failed, key=lambda c: (objective_value(c, objective) if objective != "headroom" else c.gpus,
                                         c.quality_tier, c.gpu.name, c.tp, c.pp, c.set_label))


def pareto(result: FitResult, x: str = "gpus") -> dict[str, list[Candidate]]:
    """Per technique set: the candidates no other beats on both x (GPUs or cost)
    and concurrency, among those meeting every budget but concurrency. Under an
    engine each point is checked with its accounting as the walk reaches it."""
    out: dict[str, list[Candidate]] = {}
    by_set: dict[str, list[Candidate]] = {}
    for c in result.candidates:
        if c.max_concurrency is None or any(m[0] in ("kv", "decode") for m in c.misses):
            continue
        if x == "cost" and c.cost_per_hour is None:
            continue
        by_set.setdefault(c.set_label, []).append(c)
    xs = (lambda c: c.cost_per_hour) if x == "cost" else (lambda c: c.gpus)
    for label, cands in by_set.items():
        cands.sort(key=lambda c: (xs(c), -c.max_concurrency, c.pp, c.tp, c.gpu.name))
        front, best = [], -1
        i = 0
        while i < len(cands):  # one x value at a time: its best point joins the front if it beats the last
            j = i
            top = None
            while j < len(cands) and xs(cands[j]) == xs(cands[i]):
                c = cands[j]
                j += 1
                if c.max_concurrency <= max(best, achievable(top) if top else -1):
                    continue  # vLLM's accounting can only lower it
                result.check_engine(c)
                if c.constraint == "engine" and c.engine_concurrency is None:
                    continue  # vLLM would not start
                if top is None or achievable(c) > achievable(top):
                    top = c
            if top is not None and achievable(top) > best:
                front.append(top)
                best = achievable(top)
            i = j
        out[label] = front
    return out


__all__ = ["closest", "cheaper_failures", "pareto"]
