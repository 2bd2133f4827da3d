"""A warning among a report's plain lines reaches stderr under --format json / csv / ndjson too (kvplan/render.py
render): those formats print only the data, and the `--batch N does not fit` warning (workflows.py warn_batch)
was lost there, so a script saw a clean run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from kvplan_inprocess import kvplan

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


def test_the_default_batch_of_one_is_named_as_one_sequence():
    # Llama-3.1-70B at TP 2 on H100s: 131.42 GiB of weights leave 71.26 - 65.71 - 2 = 3.55 GiB a GPU, and one 128K
    # sequence holds 131,072 x 327,680 B / 2 = 20 GiB a GPU: none fits. The default --batch 1 is not a flag the user
    # gave, so the warning names one sequence, and says nothing is "above" (it may be the only line on stderr)
    run = kvplan("estimate", "llama-3.1-70b", "--context", "128k", "--gpu", "h100", "--tp", "2")
    assert run.returncode == 0
    assert ("warning: one sequence of 128K does not fit: kvplan's KV pool holds 0 sequences of 128K; the batch "
            "totals and decode floor are for that one sequence (--min-concurrency 1 makes this an error)") in run.stdout
    assert "--batch 1" not in run.stdout and "above" not in run.stdout.split("warning:")[1]
