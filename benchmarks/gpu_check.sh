#!/usr/bin/env bash
# The one prepared run for a CUDA machine: everything issues 4, 5 and 6 still
# need measured on a GPU, most important first, each step time-boxed.
#
#   benchmarks/gpu_check.sh [STEP ...]   steps: tests paged sparse bench (default: all four)
#
# - tests   the kernel suite natively (tests/kernels, GPU-only tests included)
# - paged   benchmarks/bench_kernels_paged.py: decode GB/s vs copy, fp8 and int4
#           speed ratios, offload/resume vs pinned copies (issue 4 targets)
# - sparse  benchmarks/bench_kernels_sparse.py: Quest at 32K, MLA, CSA, state (issue 5)
# - bench   kvplan bench -t all at real shapes twice (the second gated against the
#           first: latency gating on one device), and a --shrink run gated against
#           the committed CPU baseline (same inputs, cross-device rules) (issue 6)
#
# Output goes to $OUT when set (the device tool brings back at most 8 files),
# else ./gpu-out: tests.log paged.log sparse.log bench.log bench-gpu.json
# bench-gpu-rerun.json bench-gpu-shrunk.json summary.txt. The last lines printed
# are the summary.
#
# Nothing is downloaded or installed: the machine's python3 must have torch,
# triton, pytest and kvplan's runtime packages (typer, rich, pyyaml, pandas,
# huggingface-hub). kvplan runs from a staged copy of this tree laid out as the
# wheel is (kernels/, model_specs/, scenarios/ inside kvplan/), with python -P so
# the source folder does not shadow it. The step limits add up to 545 s (the
# device tool allows 600 s a call); to spend less per call, run it as two calls,
# `gpu_check.sh tests paged sparse` and `gpu_check.sh bench`.
#
# GPU_CHECK_SMOKE=1 runs the same steps on a machine without CUDA (interpreter,
# tiny shapes, GPU_CHECK_TESTS picks the test files): it checks this script's
# wiring, its numbers mean nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
STEPS=("$@")
[ ${#STEPS[@]} -eq 0 ] && STEPS=(tests paged sparse bench)
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
SMOKE=${GPU_CHECK_SMOKE:-0}
TESTS=${GPU_CHECK_TESTS:-tests/kernels}
if [ "$SMOKE" = 1 ]; then
    export TRITON_INTERPRET=1
    SMOKE_FLAG=(--cpu-smoke)
    REAL=(--device cpu --context 64 --batch 2 --repeats 1)  # stands in for real shapes
    SHRUNK=(--device cpu)
    TSCALE=3  # the interpreter is slower than a GPU
else
    unset TRITON_INTERPRET
    SMOKE_FLAG=()
    REAL=(--device cuda)
    SHRUNK=(--device cuda)
    TSCALE=1
fi
SUMMARY=$OUTDIR/summary.txt
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

STAGE=$(mktemp -d)
mkdir -p "$STAGE/kvplan"
cp -r kvplan/. "$STAGE/kvplan/"
for d in kernels model_specs scenarios; do cp -r "$d" "$STAGE/kvplan/$d"; done
export PYTHONPATH=$STAGE
PY=(python3 -P)

note "== gpu_check $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 \
    | sed 's/^/gpu: /' | tee -a "$SUMMARY"
"${PY[@]}" -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__,
'triton', triton.__version__, 'cuda', torch.cuda.is_available())" 2>&1 | tee -a "$SUMMARY"
if [ "$SMOKE" != 1 ] && ! "${PY[@]}" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    note "gpu_check: torch sees no CUDA device; nothing to do"
    exit 2
fi

status=0
step() {  # step NAME SECONDS LOG CMD...
    local name=$1 limit=$(($2 * TSCALE)) log=$3
    shift 3
    local t0=$SECONDS
    timeout "$limit" "$@" >>"$log" 2>&1
    local rc=$?
    [ $rc -eq 124 ] && echo "(timed out after ${limit} s)" >>"$log"
    note "step $name: exit $rc in $((SECONDS - t0)) s"
    [ $rc -ne 0 ] && status=1
    return 0
}

for s in "${STEPS[@]}"; do
    case $s in
    tests)
        par=()
        "${PY[@]}" -c "import xdist" 2>/dev/null && par=(-n 8)
        step tests 120 "$OUTDIR/tests.log" "${PY[@]}" -m pytest -q -p no:cacheprovider "${par[@]}" $TESTS -rs
        grep -E "passed|failed|error" "$OUTDIR/tests.log" | tail -1 | sed 's/^/tests: /' | tee -a "$SUMMARY"
        grep -E "^(FAILED|ERROR)" "$OUTDIR/tests.log" | head -10 | tee -a "$SUMMARY"
        ;;
    paged)
        step paged 75 "$OUTDIR/paged.log" "${PY[@]}" benchmarks/bench_kernels_paged.py "${SMOKE_FLAG[@]}"
        grep -E "copy:|^ *(bf16|fp8|int4) +(64|128) +16384|batch +128 ctx +16384|pinned|offload \(|resume +\(" \
            "$OUTDIR/paged.log" | sed 's/^/paged: /' | tee -a "$SUMMARY"
        ;;
    sparse)
        step sparse 60 "$OUTDIR/sparse.log" "${PY[@]}" benchmarks/bench_kernels_sparse.py "${SMOKE_FLAG[@]}"
        grep -E "copy:|fraction|speedup|mass captured|GB/s|stored" "$OUTDIR/sparse.log" | head -16 | sed 's/^/sparse: /' \
            | tee -a "$SUMMARY"
        ;;
    bench)
        log=$OUTDIR/bench.log
        step bench 150 "$log" "${PY[@]}" -m kvplan bench llama-3.1-8b -t all "${REAL[@]}" --quiet --force \
            --json "$OUTDIR/bench-gpu.json"
        step bench-rerun 60 "$log" "${PY[@]}" -m kvplan bench llama-3.1-8b -t all "${REAL[@]}" --quiet --force \
            --json "$OUTDIR/bench-gpu-rerun.json"
        step gate-rerun 20 "$log" "${PY[@]}" -m kvplan gate "$OUTDIR/bench-gpu-rerun.json" \
            --baseline "$OUTDIR/bench-gpu.json"
        # the CPU baseline's exact arguments (benchmarks/ci_bench_gate.sh), on CUDA
        step bench-shrunk 40 "$log" "${PY[@]}" -m kvplan bench llama-3.1-8b -t all "${SHRUNK[@]}" --shrink \
            --context 128 --batch 2 --repeats 1 --quiet --force --json "$OUTDIR/bench-gpu-shrunk.json"
        step gate-cpu-baseline 20 "$log" "${PY[@]}" -m kvplan gate "$OUTDIR/bench-gpu-shrunk.json" \
            --baseline benchmarks/baseline-cpu.json
        grep -E "^## kvplan gate|\| FAIL \||^- (baseline ran|shapes differ|latency)|^kvplan: error" "$log" \
            | head -24 | sed 's/^/bench: /' | tee -a "$SUMMARY"
        [ -s "$OUTDIR/bench-gpu.json" ] && "${PY[@]}" - "$OUTDIR/bench-gpu.json" <<'PYEOF' 2>&1 \
            | sed 's/^/bench: /' | tee -a "$SUMMARY"
import json, sys
doc = json.load(open(sys.argv[1]))
print(f"copy ceiling {doc['ceiling'].get('copy_gbps', 0):.0f} GB/s; technique status efficiency error_rel"
      " [offload / resume / resume+first step ms]")
for r in doc["results"]:
    eff = f"{100 * r['efficiency']:.1f}%" if r.get("efficiency") else "-"
    err = f"{r['error_rel']:.3g}" if r.get("error_rel") is not None else "-"
    off = ""
    if r.get("resume_ms_median") is not None:
        off = " [%.3g / %.3g / %.3g]" % (r["offload_ms_median"], r["resume_ms_median"],
                                         r["resume_first_step_ms_median"])
    print(f"{r['technique']} {r['status']} {eff} {err}{off}")
PYEOF
        ;;
    *)
        note "gpu_check: unknown step '$s' (tests, paged, sparse, bench)"
        status=2
        ;;
    esac
done
rm -rf "$STAGE"
note "gpu_check: done, exit $status"
exit $status
