"""Draw the README's plots from real sweeps (needs matplotlib: kvplan[plot]).

    python benchmarks/readme_plots.py            # writes docs/images/*.png

Small PNGs (72 dpi) so the repository stays light; rerun after a change to the
planner or to kvplan/workload/plot.py and commit the images.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvplan.workload.plot import plot_sweep  # noqa: E402
from kvplan.workload.sweep import sweep_frame  # noqa: E402

IMAGES = ROOT / "docs" / "images"
PLOTS = [
    # (file, model, contexts, series, gpu, tp)
    ("sweep-llama-3.1-70b.png", "llama-3.1-70b", (1024, 1024 * 1024), ["fp8", "fp8+evict:0.5", "cla:2"], "h200", 4),
    ("sweep-gemma-3-27b.png", "gemma-3-27b", (1024, 1024 * 1024), ["fp8", "kivi", "fp8+evict:0.5"], "h100", 1),
]


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    for name, model, (low, high), series, gpu, tp in PLOTS:
        df = sweep_frame(model, low=low, high=high, points=11, series=series, gpu=gpu, tp=tp)
        path = IMAGES / name
        plot_sweep(df, path, dpi=72, width_in=4.6, height_in=3.6)
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
