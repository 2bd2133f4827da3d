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
