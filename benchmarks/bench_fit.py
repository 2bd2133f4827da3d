"""Time `kvplan fit`'s search: one model over the whole grid.

The grid of issue 15: 10 GPU kinds x up to 64 GPUs x every valid TP/PP split
x 6 technique sets (KIVI or not, times no token budget, H2O eviction or
PyramidKV), under the ideal accounting and under vLLM's. Prints the best of
--repeat runs of `kvplan.fit.search.search` (model loading included), the
grid size, and how many deployments pass.

    python benchmarks/bench_fit.py [--model llama-3.1-70b] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

from kvplan.fit.grid import parse_gpus, technique_sets
from kvplan.fit.search import FitRequest, search


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="llama-3.1-70b")
    ap.add_argument("--context", type=int, default=131072)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--max-gpus", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    allowed = ("kivi", "evict", "pyramid")
    print(f"{args.model}, {args.context:,} tokens x {args.concurrency}; 10 GPU kinds x up to {args.max_gpus} GPUs x "
          f"every TP/PP split x {len(technique_sets(list(allowed)))} technique sets")
    for engine in ("ideal", "vllm"):
        req = FitRequest(args.model, args.context, args.concurrency, tuple(parse_gpus("all")), max_gpus=args.max_gpus,
                         allowed=allowed, kv_dtypes=("auto",), engine=engine)
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = search(req)
            best = min(best, time.perf_counter() - start)
        print(f"  --engine {engine:5}: {best * 1e3:7.1f} ms (best of {args.repeat}), {len(result.candidates):,} "
              f"deployments, {len(result.passing):,} pass, top: {result.options[0].label()}")


if __name__ == "__main__":
    main()
