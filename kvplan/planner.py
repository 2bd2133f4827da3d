"""Compose techniques in order and evaluate the plan: a waterfall of bytes, then
capacity, decode cost and offload on the chosen deployment.

This is the one code path behind `kvplan estimate`, `plan`, `sweep`, `compare`
and the predictions `kvplan bench` checks.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING

from ._record import record
from .capacity.pool import BatchBytes, Capacity, batch_bytes, capacity
from .capacity.shard import shard
from .core.estimate import Estimate, estimate, terms
from .core.model import ModelSpec
from .capacity.weights import plan_weights
from .techniques.base import Plan, Technique
from .weights.record import Weights

if TYPE_CHECKING:  # annotations only: costs and the GPU catalog load when a deployment is given
    from .capacity.costs import DecodeCost, ResumeCost
    from .capacity.hardware import Deployment


@record
class Step:
    spec: str  # "baseline" or the technique as written
    label: str
    term: str
    caveat: str
    gpu_bytes: int  # the batch's cache resident on GPUs after this step
    stored_bytes: int  # the batch's cache anywhere (GPU + CPU tier)
    read_bytes_per_step: int  # KV one decode step reads for the batch
    factor: float  # gpu_bytes / previous step's gpu_bytes


@record
class Offloaded:
    offloaded_bytes: int
    resident_bytes: int
    sessions_on_cpu: int
    resume: ResumeCost | None


@record
class PlanResult:
    plan: Plan
    estimate: Estimate
    batch: BatchBytes
    steps: tuple[Step, ...]
    deployment: Deployment | None
    capacity: Capacity | None
    decode: DecodeCost | None
    offload: Offloaded | None
    kv_bytes_per_gpu: int  # resident cache on the fullest GPU
    weights: Weights | None = None  # the checkpoint's bytes the plan used (model.weights in the JSON)

    @property
    def gpu_bytes(self) -> int:
        return self.steps[-1].gpu_bytes

    @property
    def decoding(self) -> int:
        """The sequences the decode floor counts: those whose cache stays on the GPUs (at least one)."""
        return max(self.estimate.batch - (self.offload.sessions_on_cpu if self.offload is not None else 0), 1)


def _sequence_total(b: BatchBytes) -> int:
    return b.kv_bytes_per_sequence + b.state_bytes_per_sequence


def _offload(plan: Plan, b: BatchBytes, batch: int) -> tuple[int, int]:
    """(offloaded bytes, sessions moved) for the batch under plan.offload.

    A moved sequence takes only its own blocks: shared prefix blocks stay on the
    GPU for the sequences still running there.
    """
    if plan.offload is None:
        return 0, 0
    per_seq = _sequence_total(b)
    unique = per_seq - (b.prefix_shared_bytes if b.prefix_sharers > 1 else 0)
    movable = max(batch - plan.offload.active_sequences, 0)
    sessions = min(movable, plan.offload.cpu_bytes // unique if unique else 0)
    return sessions * unique, sessions


def _step(plan: Plan, spec: str, label: str, term: str, caveat: str, tokens: int, batch: int, previous: int | None):
    """(the waterfall step, the plan's batch bytes)."""
    b = batch_bytes(plan, tokens, batch)
    offloaded, _ = _offload(plan, b, batch)
    gpu = b.total_bytes - offloaded
    factor = gpu / previous if previous else 1.0
    read = terms(plan.model).read_bytes(tokens) * batch  # the estimate's read_bytes_per_step x batch
    return Step(spec, label, term, caveat, gpu, b.total_bytes, read, factor), b


def _compose(model: ModelSpec, techniques) -> tuple[Plan, ...]:
    plans = [Plan(model)]
    for technique in techniques:
        plans.append(technique.apply(plans[-1]))
    return tuple(plans)


def compose(model: ModelSpec, techniques: list[Technique]) -> list[Plan]:
    """The plan after each technique, in order (the first is the model as configured).

    Applied once per (model, chain) and kept on the model: evaluating the same
    chain at many contexts and batches reuses the transformed models, and with
    them their groups, estimate terms and shards."""
    chain = tuple(techniques)
    # by identity first (the same Technique objects: no hashing of their fields)
    seen = model.memo(("compose-by-id", tuple(map(id, chain))), lambda: None)
    if seen is not None and all(a is b for a, b in zip(seen[0], chain)):
        return list(seen[1])
    try:
        plans = model.memo(("compose", chain), lambda: _compose(model, chain))
    except TypeError:  # a technique holding something unhashable: apply it afresh
        return list(_compose(model, chain))
    model.__dict__["_memo"][("compose-by-id", tuple(map(id, chain)))] = (chain, plans)  # holds chain: ids stay valid
    return list(plans)


def evaluate(
    model: ModelSpec,
    techniques: list[Technique],
    tokens: int,
    batch: int = 1,
    deployment: Deployment | None = None,
    weights: Weights | None = None,
) -> PlanResult:
    """weights: the checkpoint's bytes (kvplan.weights); default: the deployment's
    record or size, else the config estimate."""
    if weights is not None and deployment is not None:
        deployment = replace(deployment, weights=weights)
    weights = weights or plan_weights(model, deployment)
    plans = compose(model, techniques)
    steps: list[Step] = []
    b = None
    for plan, technique in zip(plans, [None, *techniques]):
        previous = steps[-1].gpu_bytes if steps else None
        if technique is None:
            step, b = _step(plan, "baseline", "as configured", "-", "-", tokens, batch, None)
        else:
            step, b = _step(plan, technique.spec, technique.label, technique.term, technique.caveat, tokens, batch, previous)
        steps.append(step)
    final = plans[-1]
    est = estimate(final.model, tokens, batch)
    offloaded, sessions = _offload(final, b, batch)
    resident = batch - sessions  # sequences whose cache stays on the GPUs
    tp, pp = (deployment.tp, deployment.pp) if deployment is not None else (1, 1)
    stages = shard(final.model, tp, pp)
    # the fullest GPU: its shard of every resident sequence (heads replicated past
    # their count, MLA latents on every rank), prefix blocks once
    # with data-parallel ranks each GPU holds its own rank's share of the batch (capacity.experts)
    dp = deployment.dp if deployment is not None else 1
    rank_seqs = -(-resident // dp)
    per_gpu = max(batch_bytes(final, tokens, rank_seqs, stage).total_bytes if resident else 0 for stage in stages)
    cap = dec = off = None
    if deployment is not None and (deployment.gpu is not None or deployment.kv_memory_bytes is not None):
        cap = capacity(final, deployment, tokens)
        # under data / expert parallelism a step reads the rank's own weights and the experts its tokens are sent
        # to on other ranks: the floor is not modelled there (capacity.experts)
        if deployment.gpu is not None and deployment.gpu.hbm_gbps and deployment.dp == 1 and not deployment.ep:
            from .capacity.costs import decode_cost
            from .capacity.weights import decode_read_bytes

            dec = decode_cost(final.model, deployment, tokens, max(resident, 1),
                              decode_read_bytes(weights, final.model.num_layers))
    if final.offload is not None:
        resume = None
        if deployment is not None and deployment.gpu is not None and deployment.gpu.bf16_tflops:
            from .capacity.costs import resume_cost

            # each GPU brings back its own shard in parallel: the largest stage decides
            seq_per_gpu = max(_sequence_total(batch_bytes(final, tokens, 1, stage)) for stage in stages)
            resume = resume_cost(final.model, deployment, tokens, seq_per_gpu, final.offload.link_gbps, final.offload.mfu)
        off = Offloaded(offloaded, b.total_bytes - offloaded, sessions, resume)
    return PlanResult(final, est, b, tuple(steps), deployment, cap, dec, off, per_gpu, weights)


def as_number(value: Fraction | int) -> int | float:
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    return value
