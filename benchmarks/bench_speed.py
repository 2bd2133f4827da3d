"""kvplan's speed in one run: cold start, API throughput, sweeps. Prints figures and
the targets of issue 18 beside them; asserts nothing (speed is not a timed test).

    python benchmarks/bench_speed.py                 # everything (about 2 minutes on 2 cores)
    python benchmarks/bench_speed.py --only start    # start | api | sweep
    python benchmarks/bench_speed.py --runs 21 --sweep-rows 10000,100000

Cold start: the commands run interleaved (one of each per round, the order
shuffled every round), so load from other processes hits them alike; medians and
ratios to the floor (`python -c "import typer, rich"`) come from the same rounds.
hf-mem (another KV/memory CLI, not a kvplan dependency) is timed when installed.

API: calls per second of `kvplan.estimate` on a loaded model, of `estimate` on a
model whose technique chain was applied once, and of `planner.evaluate` (the
CLI's path: chain, capacity and decode cost on a GPU), for a dense, a
sliding-window, an MLA and a hybrid model, each over a spread of contexts.

Sweep: `kvplan sweep ... --out FILE` in a fresh process (imports included) at
10k / 100k / 1M rows to CSV and JSON, wall time and peak RSS of the process.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
MODEL = "llama-3.1-70b"


def _exe(name: str) -> str | None:
    local = os.path.join(BIN, name)
    return local if os.path.exists(local) else shutil.which(name)


def _run_s(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system) of one run of cmd."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def cold_start(runs: int) -> None:
    kvplan = _exe("kvplan") or "kvplan"
    cases = {
        "floor: python -c 'import typer, rich'": [sys.executable, "-c", "import typer, rich"],
        f"kvplan estimate {MODEL} --context 128k --format json": [kvplan, "estimate", MODEL, "--context", "128k", "--format", "json"],
        f"kvplan estimate {MODEL} --context 128k (table)": [kvplan, "estimate", MODEL, "--context", "128k"],
        "kvplan --version": [kvplan, "--version"],
        f"kvplan estimate {MODEL} -t fp8 --gpu h100 --tp 4 --format json": [kvplan, "estimate", MODEL, "-t", "fp8", "--gpu", "h100", "--tp", "4", "--format", "json"],
    }
    hf_mem = _exe("hf-mem")
    if hf_mem:
        cases["hf-mem --help"] = [hf_mem, "--help"]
    # pip compiles an installed package's bytecode; an editable checkout (or
    # PYTHONDONTWRITEBYTECODE=1) may hold stale .pyc files: compile them as pip would
    import compileall

    import kvplan

    compileall.compile_dir(os.path.dirname(kvplan.__file__), quiet=1)
    for cmd in cases.values():  # warm the page cache
        _run_s(cmd)
    times: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for _ in range(runs):
        random.shuffle(names)
        for name in names:
            wall, used = _run_s(cases[name])
            times[name].append(wall)
            cpu[name].append(used)
    floor_name = next(n for n in cases if n.startswith("floor"))
    floor, floor_cpu = statistics.median(times[floor_name]), statistics.median(cpu[floor_name])
    print(f"\n== cold start: {runs} interleaved rounds; wall median (p20-p80) and its ratio to the floor; "
          f"CPU (user + sys) median and its ratio")
    for name in cases:
        t = sorted(times[name])
        med, cmed = statistics.median(t), statistics.median(cpu[name])
        p20, p80 = t[len(t) // 5], t[(4 * len(t)) // 5 - 1]
        print(f"{med * 1e3:7.1f} ms ({p20 * 1e3:5.1f}-{p80 * 1e3:5.1f}) {med / floor:5.2f}x | "
              f"cpu {cmed * 1e3:6.1f} ms {cmed / floor_cpu:5.2f}x  {name}")
    json_name = next(n for n in cases if n.endswith("--format json") and "-t fp8" not in n)
    table_name = next(n for n in cases if n.endswith("(table)"))
    j, tb = statistics.median(times[json_name]) / floor, statistics.median(times[table_name]) / floor
    print(f"(load average now {os.getloadavg()[0]:.1f}; the wall ratios are the targets, CPU ratios show the same under less noise)")
    print(f"target: JSON <= 1.5x the floor: {j:.2f}x {'OK' if j <= 1.5 else 'MISSED'}; "
          f"table <= 2x the floor: {tb:.2f}x {'OK' if tb <= 2 else 'MISSED'}", end="")
    if hf_mem:
        ratio = statistics.median(times[table_name]) / statistics.median(times["hf-mem --help"])
        print(f"; table / hf-mem --help: {ratio:.2f}x {'OK' if ratio < 1 else 'MISSED'}")
    else:
        print("; hf-mem not installed (pip install hf-mem to compare)")


def _rate(fn, args_list, seconds: float, tries: int = 3) -> float:
    """Calls per CPU second of this process (time.process_time: time spent waiting
    for a core that other processes hold is not counted), the best of `tries`
    runs of `seconds / tries` each."""
    for args in args_list:  # warm: the chain composed, terms and shards built
        fn(*args)
    best = 0.0
    for _ in range(tries):
        n = 0
        start = time.process_time()
        deadline = start + seconds / tries
        while time.process_time() < deadline:
            for args in args_list:
                fn(*args)
            n += len(args_list)
        best = max(best, n / (time.process_time() - start))
    return best


def api(seconds: float) -> None:
    from kvplan import estimate, load_model
    from kvplan.capacity.hardware import make_deployment
    from kvplan.planner import compose, evaluate
    from kvplan.techniques.registry import build_all

    models = [("dense", "llama-3.1-70b"), ("sliding", "gemma-3-27b"), ("MLA", "deepseek-v3"), ("hybrid", "qwen3-next-80b-a3b")]
    techniques = ["fp8", "page:16", "evict:0.5"]
    contexts = [1024, 8192, 131072, 1 << 20]
    gpu = make_deployment("h200", tp=8)
    print(f"\n== API throughput, calls per CPU second (best of 3) over contexts {contexts}, batch 8 "
          f"(chain: {' '.join('-t ' + t for t in techniques)}; GPU: 8 x H200)")
    print(f"{'model':<28} {'estimate':>10} {'est.+chain':>11} {'evaluate':>10} {'eval.+chain':>12} {'eval.+chain+GPU':>16}")
    worst = {}
    for kind, name in models:
        model = load_model(name)
        chain = build_all(techniques)
        transformed = compose(model, chain)[-1].model
        rates = [
            _rate(estimate, [(model, n, 8) for n in contexts], seconds),
            _rate(estimate, [(transformed, n, 8) for n in contexts], seconds),
            _rate(evaluate, [(model, [], n, 8) for n in contexts], seconds),
            _rate(evaluate, [(model, chain, n, 8) for n in contexts], seconds),
            _rate(evaluate, [(model, chain, n, 8, gpu) for n in contexts], seconds),
        ]
        for i, r in enumerate(rates):
            worst[(kind, i)] = r
        print(f"{kind + ' ' + name:<28} {rates[0]:>10,.0f} {rates[1]:>11,.0f} {rates[2]:>10,.0f} {rates[3]:>12,.0f} {rates[4]:>16,.0f}")
    import numpy as np

    import kvplan

    contexts_many = np.arange(1, 1_000_001, dtype=np.int64) * 7
    for kind, name in models:
        model = load_model(name)
        kvplan.estimate_many(model, contexts_many[:10], 8)
        start = time.process_time()
        kvplan.estimate_many(model, contexts_many, 8)
        took = time.process_time() - start
        print(f"kvplan.estimate_many, {kind} {name}: 1,000,000 contexts in {took * 1e3:.0f} ms "
              f"CPU ({len(contexts_many) / took / 1e6:.1f} million contexts per CPU second)")
    dense = worst[("dense", 0)], worst[("dense", 1)], worst[("dense", 4)]
    print(f"target: dense estimate >= 200,000/s: {dense[0]:,.0f} {'OK' if dense[0] >= 2e5 else 'MISSED'}; "
          f"with a chain applied >= 200,000/s: {dense[1]:,.0f} {'OK' if dense[1] >= 2e5 else 'MISSED'}; "
          f"evaluate with techniques and a GPU >= 20,000/s: {dense[2]:,.0f} {'OK' if dense[2] >= 2e4 else 'MISSED'}")


def sweep(rows_list: list[int], runs: int) -> None:
    kvplan = _exe("kvplan") or "kvplan"
    series = ["fp8", "fp8+page:16", "fp8+evict:0.5+page:16"]
    print(f"\n== sweep: kvplan sweep {MODEL} --gpu h200 --tp 4 --context 1m..1024m -t {' -t '.join(series)} "
          f"--points ROWS/{1 + len(series)} --out FILE, fresh process (imports included), median of {runs}, peak RSS")
    print(f"{'rows':>10} {'format':>6} {'wall s':>8} {'CPU s':>7} {'peak MiB':>9}")
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rows in rows_list:
            points = rows // (1 + len(series))
            for fmt in ("csv", "json"):
                out = os.path.join(tmp, f"sweep.{fmt}")
                cmd = [kvplan, "sweep", MODEL, "--gpu", "h200", "--tp", "4", "--context", "1m..1024m",
                       "--points", str(points), *sum((["-t", s] for s in series), []), "--out", out, "--force"]
                walls, cpus, peaks = [], [], []
                for _ in range(runs):
                    # a wrapper process per measurement: ru_maxrss of children is per wrapper
                    code = ("import resource,subprocess,sys,time;s=time.perf_counter();"
                            "subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
                            "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
                            "print(time.perf_counter()-s, u.ru_utime+u.ru_stime, u.ru_maxrss)")
                    res = subprocess.run([sys.executable, "-c", code, *cmd], check=True, capture_output=True, text=True)
                    wall, used, peak_kib = res.stdout.split()
                    walls.append(float(wall))
                    cpus.append(float(used))
                    peaks.append(int(peak_kib) / 1024)
                with open(out, "rb") as f:
                    written = sum(1 for _ in f) - 1 if fmt == "csv" else None
                wall, used, peak = statistics.median(walls), statistics.median(cpus), max(peaks)
                result[(rows, fmt)] = (wall, used, peak)
                print(f"{rows:>10,} {fmt:>6} {wall:>8.2f} {used:>7.2f} {peak:>9.0f}"
                      + (f"  ({written:,} rows written)" if written is not None else ""))
    if (1_000_000, "csv") in result:
        wall, used, peak = result[(1_000_000, "csv")]
        print(f"target: 1,000,000 rows to CSV under 3 s: {wall:.2f} s wall {'OK' if wall < 3 else 'MISSED'} "
              f"({used:.2f} s CPU {'OK' if used < 3 else 'MISSED'}); "
              f"under 400 MiB peak: {peak:.0f} MiB {'OK' if peak < 400 else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("start", "api", "sweep"))
    parser.add_argument("--runs", type=int, default=15, help="cold-start rounds")
    parser.add_argument("--seconds", type=float, default=0.6, help="seconds per API measurement")
    parser.add_argument("--sweep-rows", default="10000,100000,1000000")
    parser.add_argument("--sweep-runs", type=int, default=3)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {cores} cores, load average {load:.1f}")
    if args.only in (None, "start"):
        cold_start(args.runs)
    if args.only in (None, "api"):
        api(args.seconds)
    if args.only in (None, "sweep"):
        sweep([int(r) for r in args.sweep_rows.split(",")], args.sweep_runs)


if __name__ == "__main__":
    main()
