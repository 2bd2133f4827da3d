"""vLLM's and SGLang's pools side by side for every bundled model on one deployment (no GPU, no engine).

For each bundled model both engines read: the requests of --context each holds at once, predicted from the
GPU as each engine's profile would find it (kvplan.engines.vllm_report.kv_memory_of for vLLM's newest rules,
kvplan.engines.sglang_report.memory_of for SGLang 0.5.23 and 0.5.9), with kvplan's own plan (the formula, windows
kept) beside them. Models an engine refuses, or that do not fit, print why in one column.

    .venv/bin/python benchmarks/engines_side_by_side.py [--gpu h100] [--tp 1] [--context 32k]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout

from kvplan.sources import bundled_index


def run(argv: list[str]) -> tuple[int, dict | str]:
    from kvplan.cli import common
    from kvplan.cli.app import app

    out, err = io.StringIO(), io.StringIO()
    old = sys.argv
    sys.argv = ["kvplan", *argv]
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = common.run(app)
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.argv = old
    if code != 0:
        return code, err.getvalue().strip().removeprefix("kvplan: error: ")[:60]
    return code, json.loads(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="h100")
    parser.add_argument("--tp", default="1")
    parser.add_argument("--context", default="32k")
    args = parser.parse_args()
    base = ["estimate", "--gpu", args.gpu, "--tp", args.tp, "--context", args.context, "--format", "json"]
    print(f"requests of {args.context} held at once on {args.gpu} x {args.tp}, each engine's own memory settings")
    print(f"{'model':<26} {'kvplan':>8} {'vLLM':>9} {'SGLang':>9} {'0.5.9':>9}  note")
    for name in sorted(bundled_index()):
        row, note = [], ""
        for engine in ("ideal", "vllm", "sglang", "sglang@0.5.9"):
            code, data = run([*base[:1], name, *base[1:], "--engine", engine])
            if code != 0:
                row.append("-")
                note = note or f"{engine}: {data}"
            elif engine == "ideal":
                row.append(f"{data['capacity']['max_concurrency']}")
            else:
                row.append(f"{data['engine']['max_concurrency']:.2f}")
        print(f"{name:<26} {row[0]:>8} {row[1]:>9} {row[2]:>9} {row[3]:>9}  {note}")


if __name__ == "__main__":
    main()
