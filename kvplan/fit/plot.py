"""--plot for `kvplan fit`: GPUs (or cost per hour) against achievable
concurrency, one step line per technique set, the budget as a horizontal line.
matplotlib is optional (`pip install 'kvplan[plot]'`) and imported here only."""

from __future__ import annotations

from pathlib import Path


def plot_pareto(fronts: dict, budget: int, axis: str, title: str, path: Path) -> None:
    """One step line per technique set through the shared plotting module
    (kvplan.workload.plot: distinct colour, marker and dash per series)."""
    from ..reports.fit import _achievable
    from ..workload.plot import Panel, Ref, Series, plot_panels

    series = [Series(label, [c.cost_per_hour if axis == "cost" else c.gpus for c in cands],
                     [_achievable(c) for c in cands], steps=True)
              for label, cands in fronts.items() if cands]
    xlabel = "USD per hour (list prices)" if axis == "cost" else "GPUs"
    panel = Panel("sequences that fit at the context", "sequences", series,
                  [Ref(budget, f"budget: {budget} sequences")], "linear")
    plot_panels(path, [panel], title=title, xlabel=xlabel, x_tokens=False, width_in=8.0, height_in=5.0)
