"""The `kvplan` command: wires one module per command; no arithmetic here."""

from __future__ import annotations

import sys

import typer

from .estimate import estimate_command
from .models import gpus_command, models_command, techniques_command

app = typer.Typer(
    name="kvplan",
    help="Plan and validate the KV cache of LLM serving.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"kvplan {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", callback=_version, is_eager=True),
) -> None:
    """Plan and validate the KV cache of LLM serving."""


app.command("estimate")(estimate_command)
app.command("models")(models_command)
app.command("techniques")(techniques_command)
app.command("gpus")(gpus_command)
from .bench import bench_command  # noqa: E402  (kvplan bench: kernels vs predictions)
from .gate import gate_command  # noqa: E402  (kvplan gate: bench vs baseline)
app.command("bench")(bench_command)
app.command("gate")(gate_command)
from .plan import plan_command  # noqa: E402  (workload commands: plan, sweep, compare)
app.command("plan")(plan_command)
from .sweep import sweep_command  # noqa: E402
app.command("sweep")(sweep_command)
from .compare import compare_command  # noqa: E402
app.command("compare")(compare_command)
from .weights import weights_command  # noqa: E402  (kvplan weights: checkpoint bytes by dtype and role)
app.command("weights")(weights_command)
from .calibrate import calibrate_command  # noqa: E402  (kvplan calibrate: a vLLM start-up log replayed)
app.command("calibrate")(calibrate_command)
from .fit import fit_command  # noqa: E402  (kvplan fit: the cheapest deployment that meets the budgets)
app.command("fit")(fit_command)


def main() -> None:
    from .common import run

    sys.exit(run(app))
