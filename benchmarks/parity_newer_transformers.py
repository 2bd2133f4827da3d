"""Run the parity harness (tests/parity) against whatever transformers is importable, for model types the suite's
pinned transformers may lack.

The suite checks kvplan's cache against transformers 5.25's (tests/parity, the pin in ci-constraints.txt). A newer transformers adds model types
the suite cannot see; this prints, for each type given (or, with --new, every type of the importable transformers
that kvplan neither reads by a family record nor lists in tests/parity/gaps.py), whether kvplan refuses, guesses
or reads it, and whether its cache equals the one transformers builds after a short prompt.

Run it from a folder other than the repository's root (the repository's kernels/ shadows a package transformers
imports), with the newer transformers first on the path:
    cd /tmp && PYTHONPATH=<transformers 5.25 and its deps> $REPO/.venv/bin/python \\
        $REPO/benchmarks/parity_newer_transformers.py [--new] [MODEL_TYPE ...]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("types", nargs="*", help="model types to check")
    parser.add_argument("--new", action="store_true", help="every type kvplan has no record or gap entry for")
    parser.add_argument("--wrapper", action="store_true", help="build the image-text model (wrappers)")
    args = parser.parse_args()
    sys.path.insert(0, str(TESTS))
    warnings.simplefilter("ignore")
    import transformers
    from parity import check, gaps

    from kvplan.configs.families import FAMILIES, REFUSED

    types = list(args.types)
    if args.new:
        known = set(FAMILIES) | set(REFUSED) | set(gaps.KNOWN_GAPS)
        types += sorted(t for t in transformers.CONFIG_MAPPING.keys() if t not in known)
    print(f"transformers {transformers.__version__}: {len(types)} model types")
    for model_type in types:
        try:
            out = check.evaluate(model_type, wrapper=args.wrapper)
            print(f"{model_type:24s} {out.status:17s} {out.reading or '':8s} {out.detail[:160]}")
        except Exception as exc:  # a harness failure on one type must not stop the list
            print(f"{model_type:24s} harness error: {type(exc).__name__}: {str(exc)[:160]}")


if __name__ == "__main__":
    main()
