"""`kvplan bench`: build each technique's cache with the Triton kernels, measure it,
and print the prediction of `kvplan estimate` beside every figure."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from ..errors import KvplanError, UsageError
from ..files import check_output

CPU_MAX_TOKENS = 65_536  # tokens x sequences a CPU bench (Triton's interpreter) is allowed

DEFAULT_MODEL = "llama-3.1-8b"


def bench_command(
    model: Annotated[str, typer.Argument(help="Bundled model name or config (see 'kvplan models').")] = DEFAULT_MODEL,
    technique: Annotated[Optional[List[str]], typer.Option(
        "--technique", "-t", help="Technique spec to bench, repeatable; 'all' = every catalog technique.")] = None,
    context: Annotated[Optional[str], typer.Option(
        "--context", "-c", help="Tokens per sequence (default 256 on CPU, 4096 on CUDA).")] = None,
    batch: Annotated[Optional[str], typer.Option("--batch", "-b", help="Sequences (default 2 on CPU, 8 on CUDA).")] = None,
    device: Annotated[str, typer.Option("--device", help="auto, cuda or cpu (Triton interpreter).")] = "auto",
    repeats: Annotated[Optional[int], typer.Option("--repeats", help="Timed decode steps (default 3 on CPU, 50 on CUDA).")] = None,
    block: Annotated[int, typer.Option("--block", help="KV block size in tokens (Quest and KIVI may need larger).")] = 16,
    shrink: Annotated[Optional[bool], typer.Option(
        "--shrink/--no-shrink", help="CPU shrink of the model (default: on for CPU, off for CUDA).")] = None,
    json_path: Annotated[Optional[str], typer.Option("--json", help="Write every figure as JSON to FILE.")] = None,
    csv_path: Annotated[Optional[str], typer.Option("--csv", help="Write one CSV row per technique to FILE.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --json/--csv files that exist.")] = False,
    tp: Annotated[int, typer.Option("--tp", help="Tensor-parallel ranks: run under torchrun with TP x PP processes.")] = 1,
    pp: Annotated[int, typer.Option("--pp", help="Pipeline stages: run under torchrun with TP x PP processes.")] = 1,
    launch: Annotated[Optional[int], typer.Option(
        "--launch", help="Start N = TP x PP ranks on this node with torchrun (see docs/bench-distributed.md).")] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", help="Seconds a rank waits in a collective before the run fails (distributed runs).")] = 600.0,
) -> None:
    """Measure real caches built by the kernels against kvplan's predictions.

    For each technique: the cache of one layer of every distinct layer spec is
    built and timed (bytes count every layer); predicted bytes and blocks come
    from the same code path as `kvplan estimate` and must match exactly. Exit 1
    when any technique mismatches, runs out of memory or fails; 2 on bad input.

    Examples:

      kvplan bench llama-3.1-8b -t fp8 -t int4 --device cpu

      kvplan bench llama-3.1-8b -t all --context 32k --batch 16 --json bench.json

      kvplan bench gemma-3-1b -t all --device cpu --json cpu.json --csv cpu.csv

      torchrun --nproc-per-node 8 -m kvplan bench llama-3.1-70b -t fp8 --tp 4 --pp 2 --json tp4pp2.json

      kvplan bench llama-3.1-8b -t fp8 --tp 2 --launch 2 --device cpu
    """
    import os
    import sys

    from ..bench.cases import expand, make_case
    from ..bench.report import document, render_table, to_csv, to_json
    from ..files import save_or_rescue
    from ..bench.runner import BenchConfig, resolve_device, run_bench
    from ..units import check_number, parse_positive_int, parse_tokens

    check_number(timeout, "--timeout", strict=True)  # seconds: finite and > 0, checked with or without ranks

    for flag, path in (("--json", json_path), ("--csv", csv_path)):
        check_output(path, flag, force, inputs=(model,))  # folder takes a file, no clobbering: before any work
    if json_path and csv_path and os.path.realpath(json_path) == os.path.realpath(csv_path):
        raise UsageError(f"--json and --csv name the same file {json_path}")
    dev = resolve_device(device)
    cpu = dev == "cpu"
    tokens = parse_tokens(context, "--context") if context else (256 if cpu else 4096)
    batch_n = parse_positive_int(batch, "--batch") if batch else (2 if cpu else 8)
    reps = repeats if repeats is not None else (3 if cpu else 50)
    if not 1 <= reps <= 100_000:
        raise UsageError(f"--repeats must be in 1..100000, got {reps}")
    if not 1 <= block <= 1 << 20:
        raise UsageError(f"--block must be in 1..1048576 tokens, got {block}")
    if cpu and tokens * batch_n > CPU_MAX_TOKENS:
        # Triton's interpreter runs a kernel in Python: a million tokens take many minutes and gigabytes
        raise UsageError(f"--device cpu: {tokens:,} tokens x {batch_n:,} sequences is more than Triton's interpreter "
                         f"runs in reasonable time (at most {CPU_MAX_TOKENS:,} tokens x sequences on CPU)",
                         "lower --context or --batch, or run on a GPU (--device cuda)")
    small = cpu if shrink is None else shrink
    specs = expand(technique or ["all"], tokens, batch_n, small)
    for s in specs:  # unknown or malformed techniques fail before anything runs
        make_case(s, block)
    if _distributed(tp, pp, launch):
        from .bench_ranks import bench_ranks

        return bench_ranks(BenchConfig(model, specs, tokens, batch_n, dev, reps, small, block), tp, pp, launch,
                           timeout, json_path, csv_path, quiet, force)
    from ..render import console

    err = console(stderr=True)  # a closed stderr (`2>&1 | head`) stops the bar, not the run
    progress = None
    bar = None
    if not quiet:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                       TimeElapsedColumn(), console=err, transient=True)
        task = bar.add_task("bench", total=len(specs) + 1)
        bar.start()

        def progress(done, total, label):
            bar.update(task, completed=done, total=total, description=f"bench {label}")

    try:
        from ..sources import load_model

        from ..workflows import warn_above_max_context

        warn_above_max_context(load_model(model), tokens)  # a bad model name is a usage error, before torch work
        run = run_bench(BenchConfig(model, specs, tokens, batch_n, dev, reps, small, block, progress=progress))
    finally:
        if bar is not None:
            bar.stop()
    doc = document(run)
    from ..render import console
    from .common import _silence_stdout

    try:  # the terminal's width ($COLUMNS honoured); cells fold
        render_table(doc, console(file=sys.stdout))
    except BrokenPipeError:  # the reader went away (`| head`): the files below are still written
        _silence_stdout()
    # a write that still fails (disk full, folder removed meanwhile) never loses the run
    lost = [line for flag, path, make in (("--json", json_path, to_json), ("--csv", csv_path, to_csv)) if path
            for line in [save_or_rescue(path, make(doc), flag)] if line]
    if lost:
        raise KvplanError("; ".join(lost))
    bad = [r for r in doc["results"] if r["status"] in ("mismatch", "oom", "error")]
    if bad:
        raise typer.Exit(1)


def _distributed(tp: int, pp: int, launch: int | None) -> bool:
    """--tp/--pp/--launch, or started by torchrun (WORLD_SIZE set, even to 1)."""
    import os

    return launch is not None or tp != 1 or pp != 1 or bool(os.environ.get("WORLD_SIZE"))
