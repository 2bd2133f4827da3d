"""Fuzz `kvplan estimate` on every reader's input and `kvplan calibrate` on mutated logs; print crashes per thousand.

    python benchmarks/fuzz_configs.py              # 10,000 mutated inputs x 7 runs, 2,000 mutated logs
    python benchmarks/fuzz_configs.py -n 500 --logs 200 --seed 7
    python benchmarks/fuzz_configs.py --narrow     # the suite's sources and 3 variants only (the old run)

Inputs (tests/config_fuzz.py SOURCES): every bundled config, every tests/data/configs/*.json, ZAYA1's Megatron
layout, Mistral Large 4's params.json, config.json beside ModelOpt's hf_quant_config.json, GGUF files. A mutation
drops a field or gives it NaN, Infinity, a huge or negative number, another JSON type, nested junk (in a GGUF, what
its metadata can hold). Each mutated input runs through `kvplan estimate` in-process with the three suite variants
(no GPU; --gpu h100 --engine vllm; with fp8, paging and 1 GiB of weights), three of WIDE_VARIANTS' others (SGLang,
vllm@0.11, vllm@0.33, --emit vllm, --mtp, --tp 4, --pp 2, --kv-memory), and once with a `--set` of junk text.
Mutated logs (tests/log_fuzz.py: cut short, lines dropped or repeated, numbers turned to junk, bytes that are not
UTF-8) run through `kvplan calibrate`, at times with a what-if or a `--set`. A crash is anything but a result or
kvplan's own one-line error (exit 1/2), or an answer slower than 2 s. Prints the rates, the runs over 1 s and the
first example of each distinct crash site (innermost kvplan frame).
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
from hypothesis import strategies as st  # noqa: E402

import config_fuzz  # noqa: E402
import log_fuzz  # noqa: E402

SLOW_S = 1.0  # runs above this are listed (a hang risk before they reach the 2 s limit)


class Tally:
    def __init__(self, what: str):
        self.what, self.runs, self.per_site, self.sites, self.slow = what, Counter(), Counter(), {}, []
        self.start = time.perf_counter()

    def add(self, outcome, described: str) -> None:
        self.runs["runs"] += 1
        self.runs["ok" if outcome.code == 0 else f"exit {outcome.code}"] += 1
        if outcome.seconds > SLOW_S:
            self.slow.append((outcome.seconds, described))
        if outcome.crash is not None:
            self.runs["crashes"] += 1
            self.per_site[outcome.site] += 1
            self.sites.setdefault(outcome.site, (described, outcome.crash))

    def progress(self, cases: int) -> None:
        done, crashes = self.runs["runs"], self.runs["crashes"]
        print(f"... {self.what}: {cases:,} cases, {done:,} runs, {crashes:,} crashes "
              f"({1000 * crashes / max(done, 1):.2f} per thousand), {time.perf_counter() - self.start:.0f} s",
              file=sys.stderr, flush=True)

    def report(self, cases: int, show: int) -> int:
        elapsed = time.perf_counter() - self.start
        total, crashes = self.runs["runs"], self.runs["crashes"]
        print(f"{self.what}: {cases:,} mutated inputs, {total:,} runs in {elapsed:.1f} s "
              f"({1e3 * elapsed / max(total, 1):.1f} ms per run)")
        print("  outcomes: " + ", ".join(f"{k} {v:,}" for k, v in sorted(self.runs.items()) if k != "runs"))
        print(f"  crashes: {crashes:,} runs = {1000 * crashes / max(total, 1):.2f} per thousand runs, "
              f"{len(self.per_site)} distinct sites")
        self.slow.sort(reverse=True)
        print(f"  runs over {SLOW_S:g} s: {len(self.slow)}" + "".join(
            f"\n    {s * 1e3:.0f} ms: {d[:200]}" for s, d in self.slow[:5]))
        for site, count in self.per_site.most_common(show):
            described, crash = self.sites[site]
            print(f"  - {count:,} x {site}\n      first: {described[:400]}\n      {crash[:200]}")
        return crashes


def fuzz_estimate(args, folder: Path) -> tuple[Tally, int]:
    tally, cases = Tally("kvplan estimate" + (" (narrow)" if args.narrow else "")), Counter()
    extras = config_fuzz.WIDE_VARIANTS[len(config_fuzz.VARIANTS):]
    strategy = config_fuzz.mutated_configs().map(lambda c: (c[0], c[1], {"config.json": c[2]})) if args.narrow \
        else config_fuzz.mutated_inputs()

    @settings(max_examples=args.examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(strategy, st.data())
    def one(case, data):
        name, mutations, files = case
        cases["n"] += 1
        if cases["n"] % 500 == 0:
            tally.progress(cases["n"])
        variants = list(config_fuzz.VARIANTS)
        sets = ()
        if not args.narrow:
            variants += data.draw(st.lists(st.sampled_from(extras), min_size=3, max_size=3, unique=True))
            sets = data.draw(config_fuzz.overrides(files))
        runs = [(v, ()) for v in variants] + ([(data.draw(st.sampled_from(config_fuzz.WIDE_VARIANTS)), sets)]
                                             if sets else [])
        for variant, overrides in runs:
            outcome = config_fuzz.run_inputs(files, variant, folder, overrides)
            tally.add(outcome, f"{name} {'; '.join(m.describe() for m in mutations)} {' '.join(variant + overrides)}")

    import hypothesis

    for variant in config_fuzz.WIDE_VARIANTS:  # imports and first-call caches: not counted, not timed
        config_fuzz.run_inputs(config_fuzz.SOURCES["spec:llama-3.1-8b"](), variant, folder)
    tally.start = time.perf_counter()
    hypothesis.seed(args.seed)(one)()
    return tally, cases["n"]


def fuzz_calibrate(args, folder: Path) -> tuple[Tally, int]:
    tally, cases = Tally("kvplan calibrate"), Counter()

    @settings(max_examples=args.logs, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(log_fuzz.mutated_logs())
    def one(case):
        name, edits, data, extra = case
        cases["n"] += 1
        if cases["n"] % 500 == 0:
            tally.progress(cases["n"])
        outcome = log_fuzz.run_calibrate(name, data, extra, folder)
        tally.add(outcome, f"{name} {'; '.join(e.describe() for e in edits)} {' '.join(extra)}")

    import hypothesis

    for name in log_fuzz.LOG_NAMES[:3] + log_fuzz.LOG_NAMES[-3:]:  # imports: not counted, not timed
        log_fuzz.run_calibrate(name, log_fuzz.LOG_PATHS[name].read_bytes(), (), folder)
    tally.start = time.perf_counter()
    hypothesis.seed(args.seed)(one)()
    return tally, cases["n"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--examples", type=int, default=10_000, help="mutated inputs for estimate (default 10,000)")
    parser.add_argument("--logs", type=int, default=2_000, help="mutated logs for calibrate (default 2,000; 0: none)")
    parser.add_argument("--narrow", action="store_true",
                        help="estimate only the bundled configs in the suite's 3 variants (the run before Dec 2026)")
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

    folder = Path(tempfile.mkdtemp(prefix="kvplan-fuzz-"))
    crashes = 0
    if args.examples > 0:
        tally, cases = fuzz_estimate(args, folder)
        crashes += tally.report(cases, args.show)
    if args.logs > 0 and not args.narrow:
        tally, cases = fuzz_calibrate(args, folder)
        crashes += tally.report(cases, args.show)
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
