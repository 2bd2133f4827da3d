"""Shared helpers for the planning tests (no torch needed here)."""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import PathFinder
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app

GIB = 1024**3

_REPO_ROOT = Path(__file__).resolve().parents[1]


class _InstalledKernelsFirst(MetaPathFinder):
    """Finds the top-level name `kernels` anywhere on sys.path but the repository root.

    transformers 5.25 requires the PyPI package `kernels` (its hub kernels) and imports it from
    integrations/hub_kernels.py once importlib finds that name. `python -m pytest` puts the repository root first
    on sys.path, where the repository's own kernels/ (shipped as kvplan.kernels, never imported by its top-level
    name) would be found instead, and every model transformers builds would then fail to import. This finder
    only locates; nothing is imported until transformers asks, and where no `kernels` is installed (transformers
    up to 5.23) it finds nothing and the lookup goes on as before."""

    def find_spec(self, name, path=None, target=None):
        if name != "kernels":
            return None
        elsewhere = [p for p in sys.path if Path(p or ".").resolve() != _REPO_ROOT]
        return PathFinder.find_spec(name, elsewhere)


if not any(isinstance(finder, _InstalledKernelsFirst) for finder in sys.meta_path):
    sys.meta_path.insert(0, _InstalledKernelsFirst())


@pytest.fixture(scope="session")
def click_app():
    """The full app as the click command typer builds from it, built once per test process.

    typer builds that command (inspecting the signature of all 12 commands) on every call of the Typer app; in
    the suite that was most of an in-process test's cost (test_gguf_bad_metadata.py, one call per test: 37 s of
    CPU for 131 tests before, 5 s after), and the in-process tests make hundreds of calls.
    The command is the one every call would build (typer.main.get_command, typer's documented way to
    reach it) and click parses each call in a fresh context, so no state passes between tests."""
    import typer

    return typer.main.get_command(app)


@pytest.fixture
def cli(click_app):
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
            code = common.run(click_app)  # common.run only calls it, as it calls the Typer app
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


def _marks_slow(path: Path) -> bool:
    """Whether a test file names the slow marker (`pytest.mark.slow` in a decorator, pytestmark or param marks)."""
    return "mark.slow" in path.read_text(encoding="utf-8")


def pytest_ignore_collect(collection_path, config):
    """`pytest -m slow` (.ci/run's second step) collects only the test files that mark a test slow.

    Every other file's tests would all be deselected, and collecting them (importing torch, transformers and the
    parity cases, and rewriting the asserts of every test module) cost that step 18.5 s of CPU to run one test.
    pytest_collection_modifyitems below refuses, in any run that collects them, a slow test whose file does not
    say so, so this can never drop one."""
    if config.getoption("markexpr", "") != "slow":
        return None
    path = Path(collection_path)
    if path.is_dir():
        return None if any(_marks_slow(p) for p in path.rglob("test_*.py")) else True
    if path.suffix == ".py" and path.name.startswith("test_") and not _marks_slow(path):
        return True
    return None


def pytest_collection_modifyitems(config, items):
    """Tests marked slow (minutes: a fresh venv install, a whole bench) run only
    with KVPLAN_SLOW=1, so `pytest -q -n auto` stays within a few minutes; .ci/run runs
    them as a second step (`KVPLAN_SLOW=1 pytest -q -m slow`)."""
    import os

    hidden = sorted({item.nodeid.split("::")[0] for item in items
                     if item.get_closest_marker("slow") and not _marks_slow(Path(item.path))})
    if hidden:  # pytest_ignore_collect would leave them out of `pytest -m slow`
        raise pytest.UsageError(f"tests marked slow in {', '.join(hidden)}, whose text never says 'mark.slow': "
                                "mark them with @pytest.mark.slow or pytestmark = pytest.mark.slow")
    if os.environ.get("KVPLAN_SLOW", "") not in ("", "0"):
        return
    skip = pytest.mark.skip(reason="slow: set KVPLAN_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
