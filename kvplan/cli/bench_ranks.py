"""`kvplan bench --tp T --pp P` (under torchrun) and `--launch N`: the CLI side
of bench.distributed. Input is checked on every rank before the process group
starts; rank 0 prints and writes the document."""

from __future__ import annotations

import os
import sys

import typer

from ..errors import UsageError
from ..files import check_output


def _child_args(cfg, tp: int, pp: int, timeout: float, json_path, csv_path, quiet: bool, force: bool) -> list[str]:
    args = [cfg.model_name]
    for spec in cfg.specs or ["baseline"]:  # none: the baseline alone (no -t would mean all)
        args += ["-t", spec]
    args += ["--context", str(cfg.context_tokens), "--batch", str(cfg.batch), "--device", cfg.device,
             "--repeats", str(cfg.repeats), "--block", str(cfg.block_tokens),
             "--shrink" if cfg.shrink else "--no-shrink", "--tp", str(tp), "--pp", str(pp), "--timeout", f"{timeout:g}"]
    if json_path:
        args += ["--json", json_path]
    if csv_path:
        args += ["--csv", csv_path]
    return args + (["--quiet"] if quiet else []) + (["--force"] if force else [])


def bench_ranks(cfg, tp: int, pp: int, launch: int | None, timeout: float, json_path, csv_path,
                quiet: bool, force: bool) -> None:
    from ..bench.distributed import launch as run_torchrun
    from ..bench.distributed import prepare, run
    from ..bench.placement import check_sizes
    from ..bench.ranks import failed, render, to_csv
    from ..bench.report import to_json, write_atomic

    if timeout <= 0:
        raise UsageError(f"--timeout must be > 0 seconds, got {timeout:g}")
    check_sizes(tp, pp)
    cfg.specs = [s for s in cfg.specs if s != "baseline"]  # it always runs first; -t baseline runs it alone
    if launch is not None:
        if launch != tp * pp:
            raise UsageError(f"--launch {launch} differs from --tp {tp} x --pp {pp} = {tp * pp}",
                             f"use --launch {tp * pp}")
        for flag, path in (("--json", json_path), ("--csv", csv_path)):
            check_output(path, flag, force)
        # every check a rank makes, here once, before torchrun starts anything
        prepare(cfg, tp, pp, env={"RANK": "0", "WORLD_SIZE": str(launch), "LOCAL_RANK": "0",
                                  "MASTER_ADDR": "localhost", "MASTER_PORT": "0"})
        raise typer.Exit(run_torchrun(launch, _child_args(cfg, tp, pp, timeout, json_path, csv_path, quiet, force)))
    first_on_node = os.environ.get("LOCAL_RANK", "0") in ("", "0")
    try:
        if os.environ.get("RANK", "0") in ("", "0"):
            for flag, path in (("--json", json_path), ("--csv", csv_path)):
                check_output(path, flag, force)
        prep = prepare(cfg, tp, pp)
    except UsageError:
        if not first_on_node:  # every rank fails alike: one line per node, not one per rank
            raise typer.Exit(2) from None
        raise
    if prep.place.rank == 0 and not quiet:
        from ..render import console

        console(stderr=True).print(f"bench on {prep.place.world_size} ranks (tp {tp} x pp {pp}): "
                                   f"{len(cfg.specs) + 1} techniques", highlight=False)  # quiet on a closed stderr
    doc = run(prep, timeout)
    if doc is None:  # not rank 0: rank 0 reports
        return
    if json_path:
        write_atomic(json_path, to_json(doc))
    if csv_path:
        write_atomic(csv_path, to_csv(doc))
    from ..render import console

    render(doc, console(file=sys.stdout, width=160))
    if failed(doc):
        raise typer.Exit(1)
