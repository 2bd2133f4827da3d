"""`kvplan sweep`: bytes, reads and concurrency over a range of contexts."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import check_format, emit
from .options import BatchOpt, FormatOpt, KvDtypeOpt, MemUtilOpt, ModelArg, PpOpt, QuantizationOpt, TpOpt


def sweep_command(
    model: ModelArg,
    context: Annotated[str, typer.Option("--context", "-c", help="Range of contexts LOW..HIGH, e.g. 1k..1m (k = 1024).")] = "1k..128k",
    points: Annotated[int, typer.Option("--points", "-n", help="Log-spaced contexts in the range, both ends included.")] = 16,
    technique: Annotated[Optional[list[str]], typer.Option("--technique", "-t", help="One series per value; join techniques with '+' (fp8+page:16). A baseline series is always added.")] = None,
    gpu: Annotated[str, typer.Option("--gpu", help="GPU kind for the pool and concurrency (see 'kvplan gpus').")] = "h100",
    tp: TpOpt = 1,
    pp: PpOpt = 1,
    kv_dtype: KvDtypeOpt = "auto",
    batch: BatchOpt = "1",
    mem_util: MemUtilOpt = 0.9,
    quantization: QuantizationOpt = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="Write the table to FILE.csv, FILE.parquet or FILE.json instead of printing it.")] = None,
    plot: Annotated[Optional[str], typer.Option("--plot", help="Draw memory and concurrency against context to FILE.png or FILE.svg (needs matplotlib).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --out/--plot files that exist.")] = False,
    fmt: FormatOpt = "table",
) -> None:
    """Sweep one model over log-spaced contexts: stored bytes, read bytes, pool tokens
    and max concurrency, for a baseline and each technique combination.

    On a terminal the table shows a few contexts per series; --format csv or json,
    or --out, give every row (a million rows take seconds).

    Examples:

      kvplan sweep llama-3.1-70b --context 1k..1m --points 12 -t fp8 -t fp8+evict:0.5 --gpu h200 --tp 4

      kvplan sweep qwen3-8b -c 4k..128k -t fp8 -t kivi --out qwen3.csv --plot qwen3.png
    """
    from ..units import parse_positive_int
    from ..workload.sweep import sweep_workflow

    check_format(fmt)
    report = sweep_workflow(
        model=model, context=context, points=points, techniques=technique or [], gpu=gpu, tp=tp, pp=pp,
        kv_dtype=kv_dtype, batch=parse_positive_int(batch, "--batch"), mem_util=mem_util, out=out, plot=plot,
        force=force, fmt=fmt, quantization=quantization,
    )
    if report is not None:
        emit(report, fmt)
