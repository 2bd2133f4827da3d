"""Run `kvplan fit` on every bundled model under each engine; count the options the planner dropped.

    python benchmarks/fit_screen_scan.py                      # every bundled model, engines ideal, vllm, sglang
    python benchmarks/fit_screen_scan.py --engines sglang --models qwen3-8b,gemma-3-12b

fit screens thousands of deployments with a fast model of the planner, then evaluates the best through the
planner itself (`kvplan estimate`'s path) and drops any option where the two disagree, printing "dropped (the
screen and the planner disagree, please report)". Such a row is a bug in the screen, and a whole-catalog search
finds what one model on one GPU does not: in Dec 2026 this scan found SGLang's pool cached once per (plan, TP, PP)
for every GPU kind (2 rows dropped for almost every model) and vLLM's Mamba start refusal missing from the screen.
Prints per engine the models searched, refused (one-line errors: families an engine does not serve), with dropped
rows, and the first dropped rows; exits 1 when any row was dropped.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvplan.capacity.gpus import CATALOG  # noqa: E402
from kvplan.errors import KvplanError  # noqa: E402
from kvplan.fit.search import FitRequest, search  # noqa: E402


def bundled_models() -> list[str]:
    return sorted(p.stem for p in (ROOT / "model_specs").glob("*.json") if p.stem not in ("index", "weights"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="ideal,vllm,sglang", help="comma list (default ideal,vllm,sglang)")
    parser.add_argument("--models", default=None, help="comma list of bundled names or config paths (default: all)")
    parser.add_argument("--data", action="store_true", help="also every tests/data/configs/*.json")
    parser.add_argument("--context", type=int, default=4096, help="tokens a sequence (default 4,096)")
    parser.add_argument("--show", type=int, default=10, help="dropped rows to print (default 10)")
    args = parser.parse_args(argv)
    models = args.models.split(",") if args.models else bundled_models()
    if args.data:
        models += sorted(str(p) for p in (ROOT / "tests" / "data" / "configs").glob("*.json"))
    gpus = tuple(CATALOG.values())
    shown = 0
    any_dropped = False
    for engine in args.engines.split(","):
        searched = refused = with_dropped = rows = 0
        start = time.perf_counter()
        for name in models:
            try:
                result = search(FitRequest(model=name, context_tokens=args.context, concurrency=1, gpus=gpus,
                                           engine=engine))
            except KvplanError:
                refused += 1
                continue
            searched += 1
            if result.dropped:
                with_dropped += 1
                rows += len(result.dropped)
                for c, why in result.dropped:
                    if shown < args.show:
                        print(f"  {engine} {name}: {c.label()}: {why}")
                        shown += 1
        any_dropped |= rows > 0
        print(f"{engine}: {searched} models searched, {refused} refused, {with_dropped} with dropped rows "
              f"({rows} rows), {time.perf_counter() - start:.0f} s")
    return 1 if any_dropped else 0


if __name__ == "__main__":
    raise SystemExit(main())
