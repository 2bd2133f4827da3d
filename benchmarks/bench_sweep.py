"""Speed of `kvplan sweep`: 10,000 points (context x series) in under a second
on 2 cores. Prints figures; asserts nothing (not a timed test).

Three measurements, median of --runs:
  frame   sweep_frame(): the numpy formulas + the pandas DataFrame (imports warm)
  scalar  the same rows through the scalar core (batch_bytes + estimate + capacity
          per point), on a 1/20 sample, scaled up: what the vectorised path saves
  cli     `kvplan sweep ... --out FILE.csv` in a fresh process: imports, sweep, CSV

    python benchmarks/bench_sweep.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CASES = [
    # model, deployment, series; contexts = 10,000 / (1 + series) so rows = 10,000
    ("llama-3.1-70b", dict(gpu="h200", tp=4), ["fp8", "fp8+page:16", "fp8+evict:0.5+page:16"]),
    ("gemma-3n-e4b", dict(gpu="l4"), ["fp8", "int4+page:16", "kivi+prefix:tokens=2000,requests=32"]),
    ("deepseek-v3.2-exp", dict(gpu="h200", tp=8), ["page:64", "fp8+page:64"]),
    ("qwen3-next-80b-a3b", dict(gpu="h100", tp=4), ["fp8", "fp8+quest:page=16,topk=64"]),
]
ROWS = 10_000
LOW, HIGH = 1000, 10**8  # wide enough that 10,000 log-spaced points stay distinct


def median_s(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def scalar_rows_per_s(model: str, dep: dict, series: list[str], contexts) -> float:
    from kvplan.capacity.hardware import make_deployment
    from kvplan.capacity.pool import batch_bytes, capacity
    from kvplan.core.estimate import estimate
    from kvplan.planner import compose
    from kvplan.sources import load_model
    from kvplan.techniques.registry import build_all

    spec = load_model(model)
    deployment = make_deployment(dep["gpu"], tp=dep.get("tp", 1))
    sample = contexts[::20].tolist()
    plans = [compose(spec, build_all(s.split("+") if s else []))[-1] for s in ["", *series]]
    start = time.perf_counter()
    for plan in plans:
        for n in sample:
            batch_bytes(plan, n, 1)
            estimate(plan.model, n, 1)
            capacity(plan, deployment, n)
    return len(sample) * len(plans) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from kvplan.workload.sweep import context_points, sweep_frame

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"python {sys.version.split()[0]}, {cores} cores available; {ROWS:,} rows per sweep, median of {args.runs}")
    print(f"{'model':<20} {'series':>6} {'contexts':>8} {'frame ms':>9} {'rows/s':>12} {'scalar ms (est.)':>17} {'speed-up':>8}")
    sweep_frame("llama-3.1-8b", low=1024, high=2048, points=2)  # warm imports
    for model, dep, series in CASES:
        points = ROWS // (1 + len(series))
        contexts = context_points(LOW, HIGH, points)

        def run():
            return sweep_frame(model, low=LOW, high=HIGH, points=points, series=series, **dep)

        rows = len(run())
        frame_s = median_s(run, args.runs)
        scalar = rows / scalar_rows_per_s(model, dep, series, contexts)
        print(f"{model:<20} {1 + len(series):>6} {len(contexts):>8,} {frame_s * 1e3:>9.1f} {rows / frame_s:>12,.0f} "
              f"{scalar * 1e3:>17,.0f} {scalar / frame_s:>7.0f}x")

    exe = shutil.which("kvplan") or os.path.join(os.path.dirname(sys.executable), "kvplan")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sweep.csv")
        cmd = [exe, "sweep", "llama-3.1-70b", "--gpu", "h200", "--tp", "4", "--context", "1k..100m", "--points", "2500",
               "-t", "fp8", "-t", "fp8+page:16", "-t", "fp8+evict:0.5+page:16", "--out", out, "--force"]
        cli_s = median_s(lambda: subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL), args.runs)
        with open(out) as f:
            rows = sum(1 for _ in f) - 1
    print(f"cli: kvplan sweep, {rows:,} rows to CSV in a fresh process (imports included): {cli_s * 1e3:.0f} ms median")


if __name__ == "__main__":
    main()
