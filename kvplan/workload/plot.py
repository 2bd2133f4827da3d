"""Plots: `kvplan sweep --plot` (and `kvplan fit --plot`) draw through plot_panels.

One figure, one panel per quantity, context (tokens) on a shared log2 axis:
every series gets its own colour, marker and line style (so identical series
stay visible, one drawn over the other), reference lines (the model's maximum
context, the KV pool) are labelled in the legend, and ticks read as 4K, 128K,
1M. matplotlib is optional (`pip install 'kvplan[plot]'`) and imported here only.

For another command: build Series, Ref and Panel values and call plot_panels
(x_tokens=False for an axis that is not a context; kvplan fit's Pareto view does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import KvplanError
from ..units import GIB, format_bytes, format_tokens

PLOT_SUFFIXES = (".png", ".svg")  # the file types --plot writes (sweep, fit)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
COLORS = ("#1b6fb5", "#d9541e", "#2a9d4a", "#8e44ad", "#c0392b", "#7f6000", "#e377c2", "#17becf", "#555555", "#bcbd22")


@dataclass(frozen=True)
class Series:
    label: str
    x: Sequence[float]
    y: Sequence[float]
    steps: bool = False  # a step line (the value holds until the next x), as fit's Pareto fronts


@dataclass(frozen=True)
class Ref:
    """A reference line: at x (vertical, a context) or at y (horizontal, on one panel)."""
    value: float
    label: str
    axis: str = "y"  # "x" | "y"


@dataclass
class Panel:
    title: str
    ylabel: str
    series: list[Series]
    refs: list[Ref] = field(default_factory=list)
    yscale: str = "log"  # "log" | "linear" | "symlog"
    y_gib: bool = False  # y values are bytes: draw them in GiB


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise KvplanError("--plot needs matplotlib, which is not installed", "pip install 'kvplan[plot]' (or matplotlib)") from None


def _token_label(value, _pos=None) -> str:
    n = int(round(value))
    return format_tokens(n) if n > 0 else ""


def _pow2_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Powers of two spanning [low, high], every k-th so that at most `most` remain."""
    import math

    a, b = math.floor(math.log2(max(low, 1))), math.ceil(math.log2(max(high, 1)))
    exps = list(range(a, b + 1))
    step = max(1, math.ceil(len(exps) / most))
    return [2.0 ** e for e in exps[::step]]


def style(i: int) -> dict:
    """The i-th series' look: colour, marker and line style all change together."""
    # later series are drawn on top with smaller markers, so a series equal to an
    # earlier one shows inside it instead of hiding it
    return {"color": COLORS[i % len(COLORS)], "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[i % len(LINESTYLES)], "markersize": max(3.5, 10 - 1.5 * i),
            "markerfacecolor": "none" if i % 2 == 0 and i else COLORS[i % len(COLORS)],
            "linewidth": max(1.0, 2.4 - 0.3 * i)}


def plot_panels(path: Path, panels: list[Panel], *, title: str, xlabel: str = "context (tokens per sequence)",
                x_refs: Sequence[Ref] = (), columns: int | None = None, width_in: float = 5.0,
                height_in: float = 4.2, dpi: int = 100, x_tokens: bool = True):
    """Draw the panels side by side to path (.png or .svg); x_refs go on every panel.
    x_tokens: x is a token count (log2 axis, ticks 4K, 128K, 1M); else a plain linear axis.
    Returns the matplotlib Figure (already saved). The file is replaced whole (kvplan.files.replacing)."""
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    cols = columns or len(panels)
    rows = -(-len(panels) // cols)
    fig = Figure(figsize=(width_in * cols, height_in * rows + 0.6), layout="constrained", dpi=dpi)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    xs = [v for p in panels for s in p.series for v in s.x]
    ticks = _pow2_ticks(min(xs), max(xs)) if xs else []
    ref_styles = [("#444444", (0, (6, 3))), ("#b03030", (0, (2, 2))), ("#2d7d2d", (0, (8, 2, 2, 2)))]
    for ax, panel in zip(axes, panels):
        scale = GIB if panel.y_gib else 1
        for i, s in enumerate(panel.series):
            ax.plot(list(s.x), [v / scale for v in s.y], label=s.label, zorder=3 + i,
                    drawstyle="steps-post" if s.steps else "default", **style(i))
        refs = [r for r in x_refs] + [r for r in panel.refs]
        for j, ref in enumerate(refs):
            color, dash = ref_styles[j % len(ref_styles)]
            if ref.axis == "x":
                ax.axvline(ref.value, color=color, linestyle=dash, linewidth=1.3, label=ref.label, zorder=2)
            else:
                ax.axhline(ref.value / scale, color=color, linestyle=dash, linewidth=1.3, label=ref.label, zorder=2)
        if x_tokens:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(ticks))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(_token_label))
            if xs:
                ax.set_xlim(min(xs) / 1.15, max(xs) * 1.15)
        elif xs and all(float(v).is_integer() for v in xs):  # counts (GPUs): whole-number ticks
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if panel.yscale == "symlog":  # counts that reach 0: linear below 1, never negative
            ax.set_yscale("symlog", linthresh=1)
            ax.set_ylim(bottom=0)
        else:
            ax.set_yscale(panel.yscale)
        ax.set_title(panel.title, fontsize="medium")
        ax.set_ylabel(panel.ylabel)
        ax.set_xlabel(xlabel)
        ax.grid(True, which="major", alpha=0.3)
        ax.tick_params(axis="x", labelrotation=0, labelsize="small")
        ax.legend(fontsize="x-small", loc="best", framealpha=0.85)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(title)
    from ..files import replacing

    with replacing(path) as tmp:  # the plot whole or not at all: a --force'd file is never left half-drawn
        fig.savefig(tmp)
    return fig


def sweep_panels(df) -> tuple[list[Panel], list[Ref], str]:
    """The sweep's three panels (stored bytes, read per step, sequences that fit),
    its x reference lines and its title, from the sweep's frame. The frame's attrs
    may carry `max_context_tokens` and `pool_bytes_per_gpu` (kvplan sweep sets both)."""
    first = df.iloc[0]
    gpus = int(first["tp"]) * int(first["pp"])
    groups = list(df.groupby("series", sort=False))

    def series(col):
        return [Series(label, g["context_tokens"].tolist(), g[col].tolist()) for label, g in groups]

    x_refs = []
    longest = df.attrs.get("max_context_tokens")
    if longest:
        x_refs.append(Ref(longest, f"model max context ({format_tokens(int(longest))})", "x"))
    memory_refs = []
    pool = df.attrs.get("pool_bytes_per_gpu")
    if pool:
        label = (f"KV pool per GPU ({format_bytes(pool)})" if gpus == 1
                 else f"KV pool of {gpus} GPUs ({gpus} x {format_bytes(pool)})")
        memory_refs.append(Ref(pool * gpus, label))
    batch = int(first["batch"])
    positive = bool((df["max_concurrency"] > 0).all())
    panels = [
        Panel(f"KV cache stored, batch {batch}", "GiB (2^30 B)", series("stored_bytes"), memory_refs, "log", True),
        Panel(f"KV read per decode step, batch {batch}", "GiB read per step", series("read_bytes"), [], "log", True),
        Panel(f"sequences that fit: {gpus} x {first['gpu']} (tp {first['tp']}, pp {first['pp']})",
              "max concurrent sequences", series("max_concurrency"), [], "log" if positive else "symlog"),
    ]
    return panels, x_refs, f"{first['model']} ({first['kv_dtype']} KV before techniques)"


def plot_sweep(df, path: Path, **kwargs):
    panels, x_refs, title = sweep_panels(df)
    return plot_panels(path, panels, title=title, x_refs=x_refs, **kwargs)
