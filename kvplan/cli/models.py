"""`kvplan models`, `kvplan techniques`, `kvplan gpus`: the catalogs."""

from __future__ import annotations

import typer

from .common import emit
from .options import FormatOpt


def models_command(
    fmt: FormatOpt = "table",
    family: bool = typer.Option(False, "--family", help="List every model_type kvplan reads, with its layer kinds."),
) -> None:
    """List the bundled models: layers, KV heads, head dim, layer kinds, bytes per token."""
    from ..reports.catalogs import families_report, models_report

    emit(families_report() if family else models_report(), fmt)


def techniques_command(fmt: FormatOpt = "table") -> None:
    """List the techniques, their spec syntax, the term each reduces and its caveat."""
    from ..reports.catalogs import techniques_report

    emit(techniques_report(), fmt)


def gpus_command(fmt: FormatOpt = "table") -> None:
    """List the GPU catalog: memory, HBM bandwidth, host link, dense bf16 TFLOP/s."""
    from ..reports.catalogs import gpus_report

    emit(gpus_report(), fmt)
