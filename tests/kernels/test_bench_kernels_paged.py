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


def test_predict_prints_the_floor_worked_out_by_hand():
    """bf16, batch 128 x 16384 tokens, Hq 32, Hkv 8, D 128, block 16, 1 split:
    KV 128*16384*8*2*128*2 = 8,589,934,592; block table + lengths 128*1024*4 + 128*4 = 524,800;
    q (bf16) 1,048,576; out (fp32) 2,097,152; partials + LSE 2*128*32*1*129*4 = 4,227,072:
    8,597,832,192 bytes = 8597.8 MB, floor at 4300 GB/s = 1.9995 ms."""
    r = subprocess.run([sys.executable, str(SCRIPT), "--predict", "4300"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    row = next(line.split() for line in r.stdout.splitlines() if line.split()[:3] == ["bf16", "128", "16384"])
    assert row[3:6] == ["1", "8597.8", "1.9995"]
