"""Predictions for one bench row, through the code path of `kvplan estimate`:
`planner.evaluate` (compose + batch_bytes) on the same (shrunk) ModelSpec the
bench builds. Block counts come from `TokenCache.paged_entries` and
`capacity.pool.prefix_shared_bytes`, the functions the byte figures use.

Pure and torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..capacity.hardware import Deployment
from ..capacity.pool import DEFAULT_PREFIX_BLOCK, batch_bytes, prefix_shared_bytes
from ..core.layers import LayerSpec
from ..core.model import ModelSpec
from ..planner import PlanResult, evaluate
from ..techniques.base import Plan
from .cases import BenchCase


@dataclass(frozen=True)
class GroupPrediction:
    index: int  # position in plan.model.groups
    kind: str
    layers: int  # layers of this spec
    bytes: int  # the batch, all layers of this group, prefix shared once, before offload
    resident_bytes: int  # after offloading idle sequences
    blocks: int | None  # per layer, resident (None: not paged)
    read_bytes_per_step: int  # the batch, all layers of this group


@dataclass(frozen=True)
class Prediction:
    result: PlanResult
    model: ModelSpec  # the model the plan ends with
    bytes: int  # resident on the device (PlanResult.gpu_bytes)
    offloaded_bytes: int
    sessions_offloaded: int
    blocks: int | None  # sum over layers of blocks held (None: not paged)
    read_bytes_per_step: int  # KV one decode step reads for the batch
    groups: tuple[GroupPrediction, ...]


def _group_plan(plan: Plan, layer: LayerSpec, count: int) -> Plan:
    model = replace(plan.model, layers=(replace(layer, shares_cache_of=None),) * count)
    return replace(plan, model=model)


def _blocks_per_layer(plan: Plan, layer: LayerSpec, tokens: int, sequences: int) -> int | None:
    block = plan.block_size
    if block is None:
        return None
    total = 0
    one = replace(plan.model, layers=(replace(layer, shares_cache_of=None),))
    for cache in layer.caches:
        per_seq = cache.paged_entries(tokens, block) // block
        total += sequences * per_seq
    if plan.prefix is not None and layer.caches:
        sharers = min(plan.prefix.requests, sequences)
        shared_bytes = prefix_shared_bytes(one, tokens, plan.prefix.tokens, block or DEFAULT_PREFIX_BLOCK)
        per_block = sum(c.entry_bytes(block) for c in layer.caches)
        if shared_bytes and sharers > 1:
            total -= (sharers - 1) * (shared_bytes // per_block)
    return total


def predict(model: ModelSpec, case: BenchCase, tokens: int, batch: int,
            deployment: Deployment | None = None) -> Prediction:
    model = case.prepare(model)
    result = evaluate(model, list(case.chain), tokens, batch, deployment)
    plan = result.plan
    sessions = result.offload.sessions_on_cpu if result.offload else 0
    offloaded = result.offload.offloaded_bytes if result.offload else 0
    resident_seqs = batch - sessions
    groups = []
    blocks_total: int | None = 0 if plan.block_size else None
    for index, (layer, count) in enumerate(plan.model.groups):
        if layer.shares_cache_of is not None or (not layer.caches and layer.state is None):
            continue
        gplan = _group_plan(plan, layer, count)
        b_all = batch_bytes(gplan, tokens, batch)
        b_res = batch_bytes(gplan, tokens, resident_seqs)
        resident = b_res.total_bytes if sessions else b_all.total_bytes
        per_layer = _blocks_per_layer(plan, layer, tokens, resident_seqs) if layer.caches else 0
        if blocks_total is not None and per_layer is not None:
            blocks_total += per_layer * count
        read = sum(c.read_bytes(tokens) for c in layer.caches + layer.borrows) * count * batch
        groups.append(GroupPrediction(index, layer.kind, count, b_all.total_bytes, resident, per_layer, read))
    return Prediction(
        result=result, model=plan.model, bytes=result.gpu_bytes, offloaded_bytes=offloaded,
        sessions_offloaded=sessions, blocks=blocks_total,
        read_bytes_per_step=result.steps[-1].read_bytes_per_step, groups=tuple(groups),
    )


def predict_rank(model: ModelSpec, case: BenchCase, tokens: int, batch: int, tp: int, pp: int, pp_stage: int,
                 deployment: Deployment | None = None) -> Prediction:
    """One GPU's prediction in a (tp, pp) replica: the techniques applied to the
    whole model (as `kvplan estimate` does), then the planner's own
    `capacity.shard` for this rank's stage, and the per-GPU bytes line of
    `planner.evaluate` (its shard of every resident sequence, prefix once)."""
    from ..capacity.shard import shard

    full = predict(model, case, tokens, batch, deployment)
    plan = full.result.plan
    stage = shard(plan.model, tp, pp)[pp_stage]
    splan = replace(plan, model=stage)
    sessions = full.sessions_offloaded
    resident_seqs = batch - sessions
    resident = batch_bytes(plan, tokens, resident_seqs, stage).total_bytes if resident_seqs else 0
    groups = []
    blocks_total: int | None = 0 if plan.block_size else None
    for index, (layer, count) in enumerate(stage.groups):
        if layer.shares_cache_of is not None or (not layer.caches and layer.state is None):
            continue
        gplan = _group_plan(splan, layer, count)
        g_all = batch_bytes(gplan, tokens, batch).total_bytes
        g_res = batch_bytes(gplan, tokens, resident_seqs).total_bytes if sessions else g_all
        per_layer = _blocks_per_layer(splan, layer, tokens, resident_seqs) if layer.caches else 0
        if blocks_total is not None and per_layer is not None:
            blocks_total += per_layer * count
        read = sum(c.read_bytes(tokens) for c in layer.caches + layer.borrows) * count * batch
        groups.append(GroupPrediction(index, layer.kind, count, g_all, g_res, per_layer, read))
    offloaded = 0
    if sessions:
        b = batch_bytes(plan, tokens, batch, stage)  # planner._offload's per-sequence share, on this stage
        shared = b.prefix_shared_bytes if b.prefix_sharers > 1 else 0
        offloaded = sessions * (b.kv_bytes_per_sequence + b.state_bytes_per_sequence - shared)
    return Prediction(
        result=full.result, model=stage, bytes=resident, offloaded_bytes=offloaded, sessions_offloaded=sessions,
        blocks=blocks_total, read_bytes_per_step=sum(g.read_bytes_per_step for g in groups), groups=tuple(groups),
    )
