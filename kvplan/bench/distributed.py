"""`kvplan bench --tp T --pp P` on T x P ranks started by torchrun.

Every rank: reads its Placement from torchrun's environment, checks the
input (before any allocation), joins the process group (NCCL on CUDA plus a
gloo group for the result objects, gloo alone on CPU), and runs the same cases
as the single-device bench on its own shard: predicted through the planner's
`capacity.shard` (`predict.predict_rank`), built from `placement.rank_model`.
Rank 0 gathers every rank's rows with one `gather_object` and writes the
document (`ranks.merge`). Every collective has the process group's timeout, so
a rank that dies makes the others fail after at most that long, never hang.

`launch` runs torchrun for one node (`kvplan bench --launch N`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

from ..errors import KvplanError, UsageError
from .placement import Placement, check_parallel, make_placement, rank_model, rendezvous
from .predict import Prediction, predict_rank
from .runner import BenchConfig


@dataclass
class RankShard:
    """What run_case needs to bench one rank (see runner.run_case's `rank`)."""

    place: Placement

    def predict(self, model, case, tokens, batch, deployment) -> Prediction:
        return predict_rank(model, case, tokens, batch, self.place.tp, self.place.pp, self.place.pp_stage, deployment)

    def build(self, final_model):
        return rank_model(final_model, self.place)


@dataclass
class Prepared:
    cfg: BenchConfig
    place: Placement
    model: object  # the ModelSpec benched (shrunk when cfg.shrink)
    shrink: object  # bench.shrink.Shrink or None


def prepare(cfg: BenchConfig, tp: int, pp: int, env=None) -> Prepared:
    """Every check that can fail on input, torch-free and before any allocation."""
    from ..sources import load_model
    from .cases import make_case

    rank, world, local = rendezvous(env)
    place = make_placement(rank, world, local, tp, pp, cfg.device)
    if cfg.device == "cuda":
        import torch

        visible = torch.cuda.device_count()
        if local >= visible:
            raise UsageError(f"LOCAL_RANK {local}, but this node shows {visible} CUDA devices",
                             "start at most one rank per GPU on each node (--nproc-per-node)")
    base = load_model(cfg.model_name)
    check_parallel(base, tp, pp, base.name)
    model, info = base, None
    if cfg.shrink:
        from .shrink import shrink_model

        model, info = shrink_model(base, cfg.context_tokens, cfg.block_tokens)
        check_parallel(model, tp, pp, f"the CPU shrink of {base.name} (--no-shrink benches the full model)")
    for s in cfg.specs:
        make_case(s, cfg.block_tokens)
    return Prepared(cfg, place, model, info)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _bench_rank(prep: Prepared) -> dict:
    """This rank's rows and shapes (runs the cases; raises on a failure outside a row)."""
    import torch

    from .cases import make_case
    from .runner import _deployment, _shapes, environment, run_case
    from .timing import copy_ceiling_gbps

    cfg, place = prep.cfg, prep.place
    dev = torch.device(place.device)
    gbps, copy_bytes = copy_ceiling_gbps(dev)
    shard = RankShard(place)
    deployment = _deployment(cfg.device)
    cases = [make_case("baseline", cfg.block_tokens)] + [make_case(s, cfg.block_tokens) for s in cfg.specs]
    rows = []
    for i, case in enumerate(cases):
        if cfg.progress:
            cfg.progress(i, len(cases), case.spec)
        rows.append(run_case(case, prep.model, cfg, dev, gbps, deployment, rank=shard).to_json())
    mine = rank_model(prep.model, place)
    return {"rows": rows, "shapes": _shapes(mine), "environment": environment(cfg.device),
            "ceiling": {"copy_gbps": gbps, "copy_bytes": copy_bytes, "meaningful": cfg.device == "cuda"}}


def run(prep: Prepared, timeout_s: float) -> dict | None:
    """Bench this rank, gather on rank 0. Rank 0 returns the merged document
    (ranks.merge), the others None. Raises RankFailure when the gather itself fails."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    place = prep.place
    timeout = timedelta(seconds=timeout_s)
    try:
        if prep.cfg.device == "cuda":
            torch.cuda.set_device(place.local_rank)
            dist.init_process_group("nccl", timeout=timeout, device_id=torch.device(place.device))
            objects = dist.new_group(backend="gloo", timeout=timeout)  # result objects: CPU, no NCCL stream
        else:
            dist.init_process_group("gloo", timeout=timeout)
            objects = None
    except Exception as exc:
        where = f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"
        raise RankFailure(f"rank {place.rank}: could not join the process group at {where} "
                          f"({_first_line(exc)})", "are all ranks started with the same rendezvous?") from None
    payload = {"placement": place.as_dict(), "failure": None}
    try:
        payload.update(_bench_rank(prep))
    except BaseException as exc:  # reported by rank 0, whatever it was (OOM, a bug, Ctrl-C)
        payload["failure"] = _first_line(exc)
    got = [None] * place.world_size if place.rank == 0 else None
    try:
        dist.gather_object(payload, got, dst=0, group=objects)
    except Exception as exc:
        raise RankFailure(f"rank {place.rank}: gathering the results failed ({_first_line(exc)}): "
                          f"a rank died or did not answer within {timeout_s:g} s") from None
    finally:
        try:
            dist.destroy_process_group()
        except Exception:
            pass
    if place.rank != 0:
        if payload["failure"]:
            raise RankFailure(f"rank {place.rank}: {payload['failure']}")
        return None
    from .ranks import merge

    return merge(got, prep, timeout_s)


class RankFailure(KvplanError):
    """A rank that failed or a collective that timed out: exit 1."""

    exit_code = 1


def launch(nproc: int, bench_args: list[str]) -> int:
    """torchrun --standalone --nproc-per-node N -m kvplan bench ARGS; its exit status."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
           "-m", "kvplan", "bench", *bench_args]
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's default too; said here so it does not warn
    return subprocess.run(cmd, env=env).returncode
