"""--plot for `kvplan sweep`: memory and concurrency against context, one line per
series. matplotlib is optional (`pip install 'kvplan[plot]'`) and imported here only.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import KvplanError
from ..units import GIB, format_tokens


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise KvplanError("--plot needs matplotlib, which is not installed", "pip install 'kvplan[plot]' (or matplotlib)") from None


def _token_label(value, _pos=None) -> str:
    n = int(round(value))
    return format_tokens(n) if n > 0 else ""


def plot_sweep(df, path: Path) -> None:
    """Two panels: stored bytes (GiB, log) and max concurrency against context (log2)."""
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator

    first = df.iloc[0]
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    memory, concurrency = fig.subplots(1, 2)
    for label, group in df.groupby("series", sort=False):
        memory.plot(group["context_tokens"], group["stored_bytes"] / GIB, label=label, linewidth=1.6)
        concurrency.plot(group["context_tokens"], group["max_concurrency"], label=label, linewidth=1.6)
    batch = int(first["batch"])
    memory.set_title(f"KV cache stored, batch {batch}")
    memory.set_ylabel("stored bytes (GiB, 2^30 B)")
    memory.set_yscale("log")
    concurrency.set_title(f"Sequences that fit on {first['tp'] * first['pp']} x {first['gpu']} (tp {first['tp']}, pp {first['pp']})")
    concurrency.set_ylabel("max concurrent sequences")
    positive = (df["max_concurrency"] > 0).all()
    concurrency.set_yscale("log" if positive else "symlog", **({} if positive else {"linthresh": 1}))
    for ax in (memory, concurrency):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(LogLocator(base=2, numticks=24))
        ax.xaxis.set_major_formatter(FuncFormatter(_token_label))
        ax.set_xlabel("context (tokens per sequence)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(f"{first['model']} ({first['kv_dtype']} KV before techniques)")
    fig.savefig(path)
