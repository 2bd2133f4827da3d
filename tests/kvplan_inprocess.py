"""`python -m kvplan ARGS` run in the test process, for tests that read its exit code, stdout and stderr.

The same path as the command: kvplan.cli.common.run maps every failure to one line and an exit code (an
exception it lets through fails the test instead of printing a traceback). A fresh interpreter cost 0.29 s of CPU
a call (116 calls in the files that used one); this costs the command's own work. Tests that need a process of
their own (environment, working directory, a closed or full stdout, `-O`) keep subprocess.run.
"""

from __future__ import annotations

import io
import subprocess
import sys

_COMMAND = []  # the app's click command, built once (typer rebuilds all 12 commands on every call of the app)


def kvplan(*args: str) -> subprocess.CompletedProcess:
    """What subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True, text=True) returns."""
    from kvplan.cli import common

    if not _COMMAND:
        import typer

        from kvplan.cli.app import app

        _COMMAND.append(typer.main.get_command(app))
    out, err = io.StringIO(), io.StringIO()
    old = sys.argv, sys.stdout, sys.stderr
    sys.argv, sys.stdout, sys.stderr = ["kvplan", *args], out, err
    try:
        code = common.run(_COMMAND[0])
    finally:
        sys.argv, sys.stdout, sys.stderr = old
    return subprocess.CompletedProcess(["kvplan", *args], code, out.getvalue(), err.getvalue())


def estimate_json(*args: str) -> dict:
    """`kvplan estimate ARGS --format json`, which must succeed, as a dict."""
    import json

    out = kvplan("estimate", *args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def refused_line(*args: str) -> str:
    """`kvplan estimate ARGS`'s one error line, asserting a usage refusal (exit 2, one `kvplan: error:` line)."""
    out = kvplan("estimate", *args)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), out.stderr
    return lines[0]


def bundled_variant(tmp_path, bundled: str, name: str = "config.json", **fields) -> str:
    """A bundled model's config.json with `fields` set (a real shape with one width changed, a quantization_config
    added), written as tmp_path / name; its path."""
    import json

    from kvplan.sources import bundled_config, bundled_index

    path = tmp_path / name
    path.write_text(json.dumps(dict(bundled_config(bundled_index()[bundled]), **fields)))
    return str(path)
