"""The sweep plot: one panel per quantity, every series distinguishable, the
model's maximum context and the KV pool drawn as labelled reference lines,
readable context ticks; the same plot_panels serves other commands."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")
pd = pytest.importorskip("pandas")

from kvplan.units import GIB  # noqa: E402
from kvplan.workload.plot import Panel, Ref, Series, plot_panels, plot_sweep  # noqa: E402
from kvplan.workload.sweep import sweep_frame  # noqa: E402


def _data_lines(ax):
    return [line for line in ax.get_lines() if not line.get_label().startswith(("model max", "KV pool"))]


def test_sweep_plot_panels_series_and_reference_lines(tmp_path):
    df = sweep_frame("llama-3.1-8b", low=1024, high=1024 * 1024, points=11, series=["fp8", "cla:2"], gpu="h100")
    fig = plot_sweep(df, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 10_000
    axes = [ax for ax in fig.axes if ax.get_visible()]
    titles = [ax.get_title() for ax in axes]
    assert len(axes) == 3 and "read per decode step" in titles[1]
    for ax in axes:
        lines = _data_lines(ax)
        assert [ln.get_label() for ln in lines] == ["baseline", "fp8", "cla:2"]
        # fp8 and cla:2 both halve the bytes: equal series, told apart by marker, dash and size
        looks = {(ln.get_marker(), ln.get_linestyle(), ln.get_markersize()) for ln in lines}
        assert len(looks) == 3
        # Llama 3.1's max_position_embeddings is 131,072: a vertical line there on every panel
        ref = [ln for ln in ax.get_lines() if ln.get_label().startswith("model max context")]
        assert len(ref) == 1 and list(ref[0].get_xdata()) == [131072, 131072]
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert 2 <= len(labels) <= 8 and "1K" in labels and "1M" in labels
    # the pool line on the memory panel, in GiB: the pool the sweep itself used
    pool = [ln for ln in axes[0].get_lines() if ln.get_label().startswith("KV pool per GPU")]
    assert len(pool) == 1 and pool[0].get_ydata()[0] == pytest.approx(df.attrs["pool_bytes_per_gpu"] / GIB)
    # the stored bytes panel plots stored_bytes in GiB: 128 KiB per token (32 x 8 x 256 x 2 B) at 1K = 0.125 GiB
    base = _data_lines(axes[0])[0]
    assert base.get_ydata()[0] == pytest.approx(131072 * 1024 / GIB)


def test_plot_panels_takes_any_series(tmp_path):
    fig = plot_panels(tmp_path / "fit.svg", [
        Panel("measured vs fitted", "bytes", [Series("measured", [1024, 4096], [10, 40]),
                                               Series("fitted", [1024, 4096], [10, 40])],
              [Ref(30, "pool")], "linear"),
    ], title="fit", x_refs=[Ref(2048, "max context", "x")])
    assert (tmp_path / "fit.svg").read_text().lstrip().startswith("<?xml")
    ax = fig.axes[0]
    assert {ln.get_label() for ln in ax.get_lines()} == {"measured", "fitted", "pool", "max context"}
