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
