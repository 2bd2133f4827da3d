"""--plot for `kvplan fit`: GPUs (or cost per hour) against achievable
concurrency, one step line per technique set, the budget as a horizontal line.
matplotlib is optional (`pip install 'kvplan[plot]'`) and imported here only."""

from __future__ import annotations

from pathlib import Path


def plot_pareto(fronts: dict, budget: int, axis: str, title: str, path: Path) -> None:
    from ..workload.plot import require_matplotlib

    require_matplotlib()
    from matplotlib.figure import Figure

    from ..reports.fit import _achievable

    fig = Figure(figsize=(8, 5), layout="constrained")
    ax = fig.subplots()
    for label, cands in fronts.items():
        if not cands:
            continue
        xs = [c.cost_per_hour if axis == "cost" else c.gpus for c in cands]
        ys = [_achievable(c) for c in cands]
        ax.step(xs, ys, where="post", marker="o", linewidth=1.5, label=label)
    ax.axhline(budget, color="black", linestyle="--", linewidth=1, label=f"budget: {budget} sequences")
    ax.set_xlabel("USD per hour (list prices)" if axis == "cost" else "GPUs")
    ax.set_ylabel("sequences that fit at the context")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.savefig(path)
