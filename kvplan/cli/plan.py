"""`kvplan plan`: plan scenario files and check their budgets."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from .common import check_format, emit
from .options import FormatOpt


def plan_command(
    scenarios: Annotated[Optional[List[str]], typer.Argument(help="Scenario .yaml files or bundled scenario names.", show_default=False)] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the bundled scenarios and exit.")] = False,
    fit: Annotated[bool, typer.Option("--fit", help="Search GPU kinds, counts and TP/PP (DP + EP too where the scenario has dp or ep: fit's --dp-ep) for the deployments that meet the scenario's budgets, with its engine and flags (as `kvplan fit`).")] = False,
    fmt: FormatOpt = "table",
) -> None:
    """Plan each scenario (model, GPUs, workload, techniques) and check its budgets.

    Exits 1 when any budget (max KV GiB per GPU, min concurrency, max time per
    output token) is broken, listing every broken budget; 2 when a file is invalid.
    The schema is in docs/scenarios.md.

    Examples:

      kvplan plan --list

      kvplan plan chat-shared-prompt

      kvplan plan scenarios/*.yaml --format json

      kvplan plan my-service.yaml

      kvplan plan rag-128k --fit
    """
    from ..workload import run

    check_format(fmt)
    if list_:
        emit(run.list_report(), fmt)
        return
    if fit:
        from ..workload.fit import fit_workflow

        emit(fit_workflow(scenarios or []), fmt)
        return
    report, broken = run.plan_workflow(scenarios or [])
    emit(report, fmt)
    if broken:
        raise typer.Exit(1)
