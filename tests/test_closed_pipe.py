"""A reader that goes away (`kvplan ... | head -1`) is not an error: kvplan exits 0 and prints nothing on stderr.
Rich's own Console.on_broken_pipe exits with status 1, the code kvplan keeps for a broken budget, so every table
kvplan prints goes through render.console, whose broken pipe the CLI handles (cli/common.py run / emit).

The pipe's read end is closed before kvplan starts, so the first write fails every time (no race with a reader)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _run_into_closed_pipe(*args: str) -> subprocess.CompletedProcess:
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "kvplan", *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, "COLUMNS": "120"})
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [
    ("estimate", "llama-3.1-8b"),
    ("fit", "llama-3.1-70b", "--context", "32k", "--concurrency", "50", "--gpu", "h100"),
    ("estimate", "llama-3.1-8b", "--format", "json"),
])
def test_a_closed_pipe_exits_0_quietly(args):
    got = _run_into_closed_pipe(*args)
    assert (got.returncode, got.stderr) == (0, "")


def _run_closed(args, *, stderr_too: bool, unbuffered: bool) -> subprocess.CompletedProcess:
    """kvplan with stdout (and, for `2>&1 | head`, stderr) on a pipe whose reader is gone; Python's stdout buffered
    (a pipe's default) or not (PYTHONUNBUFFERED, where the first write fails at once)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update({"COLUMNS": "120", "HF_HUB_OFFLINE": "1", **({"PYTHONUNBUFFERED": "1"} if unbuffered else {})})
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "kvplan", *args], stdout=write,
                              stderr=write if stderr_too else subprocess.PIPE, text=True, env=env)
    finally:
        os.close(write)


def _bench_doc(tmp_path, name, **row_changes):
    # a one-technique CPU bench document (the shape tests/test_gate.py's gate reads)
    import json

    from kvplan.bench.report import SCHEMA_VERSION

    row = {"technique": "baseline", "status": "ok", "message": "", "predicted_bytes": 2_097_152,
           "measured_bytes": 2_097_152, "bytes_match": True, "predicted_blocks": 32, "measured_blocks": 32,
           "blocks_match": True, "predicted_offloaded_bytes": None, "measured_offloaded_bytes": None,
           "latency_ms_median": 1.0, "latency_ms_p20": 0.99, "latency_ms_p80": 1.01, "floor_ms": 0.6,
           "efficiency": 0.6, "efficiency_p20": 0.59, "efficiency_p80": 0.61, "error_rel": 0.0, "attention_mass": 1.0,
           **row_changes}
    doc = {"schema_version": SCHEMA_VERSION, "kind": "kvplan-bench", "created": "2026-01-01T00:00:00Z",
           "environment": {"device_kind": "cpu", "device_name": "x86_64", "torch": "2", "triton": "3",
                           "kvplan": "0.1.0", "git_commit": "abc"},
           "config": {"model": "llama-3.1-8b", "context_tokens": 4096, "batch": 8, "block_tokens": 16, "shrink": False},
           "shapes": {"layers": 32, "groups": []}, "ceiling": {"copy_gbps": 0.0, "meaningful": False},
           "results": [row]}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("unbuffered", [False, True])
def test_gate_into_a_closed_pipe_exits_with_its_verdict(tmp_path, unbuffered):
    # a run equal to its baseline PASSes: exit 0 whether or not anyone reads the summary (click turned the write's
    # BrokenPipeError into exit 1, a regression to a CI step); a run whose measured bytes differ from the
    # prediction (2,097,152 vs 2,097,168) FAILs: exit 1 still
    base = _bench_doc(tmp_path, "base.json")
    same = _run_closed(("gate", _bench_doc(tmp_path, "same.json"), "--baseline", base), stderr_too=False,
                       unbuffered=unbuffered)
    assert (same.returncode, same.stderr) == (0, "")
    worse = _bench_doc(tmp_path, "worse.json", measured_bytes=2_097_168, bytes_match=False)
    failed = _run_closed(("gate", worse, "--baseline", base), stderr_too=False, unbuffered=unbuffered)
    assert failed.returncode == 1


@pytest.mark.parametrize("stderr_too", [False, True])
def test_bench_writes_its_files_after_a_closed_pipe(tmp_path, stderr_too):
    # `kvplan bench ... | head` and `... 2>&1 | head`: the table, and with stderr the progress bar, go nowhere, the
    # --json and --csv files are written and the exit code is the run's (rich's stderr console exited 1 at the
    # progress bar's stop, before the files: none written, status 120)
    pytest.importorskip("torch")
    out_json, out_csv = tmp_path / "b.json", tmp_path / "b.csv"
    got = _run_closed(("bench", "gemma-3-1b", "-t", "fp8", "--device", "cpu", "--json", str(out_json),
                       "--csv", str(out_csv)), stderr_too=stderr_too, unbuffered=False)
    assert got.returncode == 0
    assert out_json.exists() and out_csv.exists()
