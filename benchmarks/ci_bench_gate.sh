#!/usr/bin/env bash
# CPU bench of every technique (Triton interpreter) gated against the committed
# baseline benchmarks/baseline-cpu.json. About a minute on 2 cores.
#
#   benchmarks/ci_bench_gate.sh                       # bench + gate, exit 0 / 1 / 2
#   benchmarks/ci_bench_gate.sh --update-baseline     # accept this run as the new baseline
#   BENCH_JSON=bench.json benchmarks/ci_bench_gate.sh # gate a bench already run with BENCH_ARGS below
#
# BENCH_JSON skips the bench (a minute of CPU) where it has just run with these
# arguments, as in the shipped workflow's job (tests/test_ci_workflow.py); the
# gate refuses a run of another model, shape or technique set.
#
# On CPU the gate compares bytes, blocks and accuracy (deterministic: fixed seed,
# the interpreter runs programs in order); latency is not gated because the
# interpreter's wall clock measures numpy, not the kernel (see docs/ci.md).
#
# No waivers: every technique the kernels can run must match its prediction
# exactly (the KIVI kernel's open-key-group buffer is part of kvplan's layout).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${KVPLAN:-}" ]; then
    read -r -a CMD <<<"$KVPLAN"
elif [ -x .venv/bin/kvplan ]; then
    CMD=(.venv/bin/kvplan)
elif command -v kvplan >/dev/null 2>&1; then
    CMD=(kvplan)
else
    CMD=(python3 -m kvplan)
fi

# The baseline was made with exactly these arguments; change both together.
BENCH_ARGS=(llama-3.1-8b -t all --device cpu --context 128 --batch 2 --repeats 1 --quiet)

if [ -n "${BENCH_JSON:-}" ]; then
    exec "${CMD[@]}" gate "$BENCH_JSON" --baseline benchmarks/baseline-cpu.json "$@"
fi

OUT="${BENCH_OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
export TRITON_INTERPRET=1

set +e
"${CMD[@]}" bench "${BENCH_ARGS[@]}" --json "$OUT/bench-cpu.json" --csv "$OUT/bench-cpu.csv"
rc=$?
set -e
# 1 = some row mismatched, ran out of memory or failed: the gate says which; 2 = bad input
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "ci_bench_gate: kvplan bench exited $rc" >&2
    exit "$rc"
fi
if [ ! -s "$OUT/bench-cpu.json" ]; then
    echo "ci_bench_gate: kvplan bench wrote no JSON" >&2
    exit 2
fi

exec "${CMD[@]}" gate "$OUT/bench-cpu.json" --baseline benchmarks/baseline-cpu.json "$@"
