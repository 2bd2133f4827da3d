"""Cold-start time of `kvplan estimate` and the estimator's throughput.

Targets on a 2-core machine: cold start under 0.25 s median, at least 50,000
estimates per second from the Python API. Prints figures; asserts nothing.

    python benchmarks/bench_startup.py [--runs 15]

benchmarks/bench_speed.py prints the fuller picture in one interleaved run
(JSON and table cold start against the typer + rich floor and hf-mem, API
throughput with techniques, sweeps up to a million rows) with issue 18's targets.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def cold_start(runs: int, model: str) -> list[float]:
    exe = shutil.which("kvplan") or os.path.join(os.path.dirname(sys.executable), "kvplan")
    cmd = [exe, "estimate", model, "--context", "128k"]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def baseline_python(runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import typer, rich.console"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def throughput(seconds: float = 2.0) -> tuple[float, float]:
    from kvplan import estimate, load_model

    model = load_model("llama-3.1-70b")
    hybrid = load_model("gemma-3-27b")
    rates = []
    for m in (model, hybrid):
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / 2:
            for ctx in (1024, 8192, 131072, 1 << 20):
                estimate(m, ctx, 8)
            n += 4
        rates.append(n / (time.perf_counter() - start))
    return rates[0], rates[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--model", default="llama-3.1-70b")
    args = parser.parse_args()
    times = cold_start(args.runs, args.model)
    floor = baseline_python(max(5, args.runs // 3))
    med = statistics.median(times)
    print(f"cold start `kvplan estimate {args.model} --context 128k`: median {med * 1e3:.0f} ms, "
          f"p20 {sorted(times)[len(times) // 5] * 1e3:.0f} ms, max {max(times) * 1e3:.0f} ms (target < 250 ms)")
    print(f"python + import typer, rich alone: median {floor * 1e3:.0f} ms (kvplan adds {(med - floor) * 1e3:.0f} ms)")
    dense, local_global = throughput()
    print(f"estimator throughput: {dense:,.0f}/s (Llama-3.1-70B), {local_global:,.0f}/s (Gemma-3-27B) (target >= 50,000/s)")


if __name__ == "__main__":
    main()
