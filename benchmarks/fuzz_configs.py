"""Fuzz `kvplan estimate` with mutated copies of every bundled config; print crashes per thousand.

    python benchmarks/fuzz_configs.py              # 10,000 mutated configs, each run 3 ways
    python benchmarks/fuzz_configs.py -n 500 --seed 7

Each mutated config (tests/config_fuzz.py: drop a field, or give it NaN, Infinity,
a huge or negative number, another JSON type, nested junk) is run through
`kvplan estimate` in-process with no GPU, with `--gpu h100 --engine vllm`, and with
a GPU, fp8 and paging on 1 GiB of weights. A crash is anything but a result or
kvplan's own one-line error (exit 1/2), or an answer slower than 2 s. Prints the
rate and the first example of each distinct crash site (innermost kvplan frame).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import HealthCheck, given, settings  # noqa: E402

import config_fuzz  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--examples", type=int, default=10_000, help="mutated configs (default 10,000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--show", type=int, default=12, help="distinct crash sites to print (default 12)")
    parser.add_argument("--memory-gib", type=float, default=3.0,
                        help="address-space limit of this process (default 3 GiB): a config that makes kvplan "
                             "allocate without bound raises MemoryError (a crash) instead of waking the OOM killer")
    args = parser.parse_args(argv)
    try:
        import resource

        limit = int(args.memory_gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ImportError, ValueError, OSError):  # not on this platform
        pass

    runs = Counter()
    sites: dict[str, tuple[str, str, str, tuple]] = {}
    per_site = Counter()
    slowest = [0.0, ""]
    folder = Path(tempfile.mkdtemp(prefix="kvplan-fuzz-"))
    start = time.perf_counter()

    @settings(max_examples=args.examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(config_fuzz.mutated_configs())
    def one(case):
        name, mutations, config = case
        runs["configs"] += 1
        if runs["configs"] % 500 == 0:
            done = runs["runs"]
            print(f"... {runs['configs']:,} configs, {done:,} runs, {runs['crashes']:,} crashes "
                  f"({1000 * runs['crashes'] / max(done, 1):.2f} per thousand), {time.perf_counter() - start:.0f} s",
                  file=sys.stderr, flush=True)
        for variant in config_fuzz.VARIANTS:
            outcome = config_fuzz.run_estimate(config, variant, folder)
            runs["runs"] += 1
            runs["ok" if outcome.code == 0 else f"exit {outcome.code}"] += 1
            if outcome.seconds > slowest[0]:
                slowest[:] = [outcome.seconds, f"{name} {' '.join(m.describe() for m in mutations)} {' '.join(variant)}"]
            if outcome.crash is not None:
                runs["crashes"] += 1
                per_site[outcome.site] += 1
                sites.setdefault(outcome.site, (name, "; ".join(m.describe() for m in mutations), outcome.crash, variant))

    import hypothesis

    hypothesis.seed(args.seed)(one)()
    elapsed = time.perf_counter() - start
    configs, total, crashes = runs["configs"], runs["runs"], runs["crashes"]
    print(f"kvplan estimate fuzz: {configs:,} mutated configs x {len(config_fuzz.VARIANTS)} variants = {total:,} runs "
          f"in {elapsed:.1f} s ({1e3 * elapsed / max(total, 1):.1f} ms per run)")
    print(f"outcomes: " + ", ".join(f"{k} {v:,}" for k, v in sorted(runs.items()) if k not in ("configs", "runs")))
    print(f"crashes: {crashes:,} runs = {1000 * crashes / max(total, 1):.2f} per thousand runs; "
          f"configs with a crash: see sites below")
    print(f"slowest run: {slowest[0] * 1e3:.0f} ms ({slowest[1][:160]})")
    for site, count in per_site.most_common(args.show):
        name, mutation, crash, variant = sites[site]
        print(f"- {count:,} x {site}\n    first: {name} {mutation} {' '.join(variant)}\n    {crash[:200]}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
