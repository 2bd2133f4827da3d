"""The GPU benchmark script runs end to end in its --cpu-smoke mode and refuses plain CPU runs."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_kernels_paged.py"


@pytest.mark.skipif(torch.cuda.is_available(), reason="smoke mode is for machines without CUDA")
def test_cpu_smoke_runs():
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, str(SCRIPT), "--cpu-smoke"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    for needle in ("device-to-device copy", "bf16", "fp8", "int4", "speed ratios", "resume", "target"):
        assert needle in r.stdout


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA message")
def test_refuses_without_cuda():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "no CUDA device" in r.stdout
