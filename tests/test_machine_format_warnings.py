"""A warning among a report's plain lines reaches stderr under --format json / csv / ndjson too (kvplan/render.py
render): those formats print only the data, and the `--batch N does not fit` warning (workflows.py warn_batch)
was lost there, so a script saw a clean run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B a token; a 10 GiB pool holds
# 10 x 2**30 / 131,072 = 81,920 tokens = 10 sequences of 8,192, so a batch of 100 does not fit
ARGS = ["estimate", "llama-3.1-8b", "--context", "8k", "--batch", "100", "--kv-memory", "10GiB"]


def _run(*extra):
    return subprocess.run([sys.executable, "-m", "kvplan", *ARGS, *extra], capture_output=True, text=True,
                          env={"HF_HUB_OFFLINE": "1", "PATH": ""})


@pytest.mark.parametrize("fmt", ["json", "csv", "ndjson"])
def test_batch_warning_on_stderr(fmt):
    run = _run("--format", fmt)
    assert run.returncode == 0, run.stderr
    assert "kvplan: warning: --batch 100 does not fit: kvplan's KV pool holds 10 sequences of 8K" in run.stderr
    assert "warning" not in run.stdout  # the data stays clean
    if fmt == "json":
        assert json.loads(run.stdout)["max_concurrency"] == 10


def test_table_keeps_it_on_stdout():
    run = _run()
    assert "warning: --batch 100 does not fit" in run.stdout and "warning" not in run.stderr
