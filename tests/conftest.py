"""Shared helpers for the planning tests (no torch needed here)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app

GIB = 1024**3


@pytest.fixture
def cli():
    """Invoke `kvplan ...` in-process; returns (exit code, stdout, stderr)."""
    runner = CliRunner()

    def invoke(*args: str):
        from kvplan.cli import common

        import io
        import sys

        out, err = io.StringIO(), io.StringIO()
        old_argv, old_out, old_err = sys.argv, sys.stdout, sys.stderr
        sys.argv = ["kvplan", *args]
        sys.stdout, sys.stderr = out, err
        try:
            code = common.run(app)
        finally:
            sys.argv, sys.stdout, sys.stderr = old_argv, old_out, old_err
        return code, out.getvalue(), err.getvalue()

    invoke.runner = runner
    return invoke


@pytest.fixture
def estimate_error(cli):
    """`kvplan estimate PATH --gpu h100` in-process, as a user runs it: asserts it fails with one error line, and
    returns that line."""
    def run(path) -> str:
        code, _, err = cli("estimate", str(path), "--gpu", "h100")
        lines = err.strip().splitlines()
        assert code != 0 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), err
        return lines[0]

    return run


def pytest_collection_modifyitems(config, items):
    """Tests marked slow (minutes: a fresh venv install, a whole bench) run only
    with KVPLAN_SLOW=1, so `pytest -q -n auto` stays within a few minutes; .ci/run runs
    them as a second step (`KVPLAN_SLOW=1 pytest -q -m slow`)."""
    import os

    if os.environ.get("KVPLAN_SLOW", "") not in ("", "0"):
        return
    skip = pytest.mark.skip(reason="slow: set KVPLAN_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
