"""The project's own CI gate: a CPU bench of every technique (Triton interpreter)
gated against the committed baseline, exactly as benchmarks/ci_bench_gate.sh runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[1]


def test_cpu_bench_of_every_technique_passes_the_gate(tmp_path):
    env = dict(os.environ, KVPLAN=f"{sys.executable} -m kvplan", BENCH_OUT=str(tmp_path))
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(["bash", str(ROOT / "benchmarks" / "ci_bench_gate.sh")], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert (tmp_path / "bench-cpu.json").is_file()
    assert "| prediction | ok |" in proc.stdout
