"""Bytes per sequence (ideal or paged, with prefix sharing) and the KV pool they fill."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._record import record
from ..core.estimate import terms
from ..core.model import ModelSpec
from ..errors import PlanError
from ..techniques.base import Plan
from ..units import format_bytes
from .experts import check_placement
from .experts_pp import stage_savings
from .shard import shard
from .weights import engine_stage_delta, plan_weights, require_known, stage_weight_bytes

if TYPE_CHECKING:
    from .hardware import Deployment

DEFAULT_PREFIX_BLOCK = 16  # vLLM's block size, used for prefix sharing without page:


def sequence_bytes(model: ModelSpec, tokens: int, block_tokens: int | None) -> tuple[int, int]:
    """(KV bytes, fixed state bytes) of one sequence; block-rounded when paged."""
    t = terms(model)
    if not block_tokens:
        return t.kv_bytes(tokens), t.state
    return t.paged_kv_bytes(tokens, block_tokens), t.state


def prefix_shared_bytes(model: ModelSpec, tokens: int, prefix_tokens: int, block_tokens: int) -> int:
    """Bytes of one copy of the shared prefix's full blocks that a sequence of
    `tokens` still keeps (a window that moved past the prefix keeps none;
    evicted or compressed caches are per-sequence and share nothing)."""
    shared_tokens = (min(prefix_tokens, tokens) // block_tokens) * block_tokens
    total = 0
    for layer, count in model.groups:
        if layer.shares_cache_of is not None:
            continue
        for cache in layer.caches:
            p = cache.policy
            if p.per_sequence_selection:
                continue
            kept_from = tokens - p.retained_tokens(tokens)  # first position still kept
            first_block = kept_from // block_tokens * block_tokens
            overlap = max(0, shared_tokens - first_block)
            total += count * cache.entry_bytes(overlap)
    return total


@record
class BatchBytes:
    kv_bytes_per_sequence: int  # as allocated (paged when paging is on)
    state_bytes_per_sequence: int
    ideal_kv_bytes_per_sequence: int
    prefix_shared_bytes: int  # one copy of the shared prefix blocks
    prefix_sharers: int  # sequences of the batch that share it
    saved_bytes: int  # duplicates avoided by prefix sharing
    total_bytes: int  # the batch, prefix shared once, before offloading

    @property
    def fragmentation_bytes(self) -> int:
        return self.kv_bytes_per_sequence - self.ideal_kv_bytes_per_sequence


def batch_bytes(plan: Plan, tokens: int, batch: int, model: ModelSpec | None = None) -> BatchBytes:
    model = model or plan.model
    block = plan.block_size
    t = terms(model)
    ideal = t.kv_bytes(tokens)
    kv = t.paged_kv_bytes(tokens, block) if block else ideal
    state = t.state
    shared = sharers = saved = 0
    if plan.prefix is not None:
        sharers = min(plan.prefix.requests, batch)
        shared = prefix_shared_bytes(model, tokens, plan.prefix.tokens, block or DEFAULT_PREFIX_BLOCK)
        saved = max(sharers - 1, 0) * shared
    total = batch * (kv + state) - saved + t.shared  # per-tensor scales once
    return BatchBytes(kv, state, ideal, shared, sharers, saved, total)


@record
class Capacity:
    pool_bytes: int  # KV pool on the fullest GPU (the smallest pool of the stages)
    weight_bytes_per_gpu: int  # weights on the fullest GPU (the largest of the stages)
    pool_tokens: int | None  # tokens the pool holds (None: no growing cache)
    pool_blocks: int | None  # when paged
    max_concurrency: int  # sequences of `tokens` tokens that fit at once: in the replica, dp x one DP rank's
    binding_stage: int  # pipeline stage that limits concurrency


def pool_bytes_per_stage(plan: Plan, deployment: Deployment) -> tuple[list[int], list[int]]:
    """(KV pool bytes per GPU, weight bytes per GPU), one entry per pipeline stage."""
    model = plan.model
    weights = plan_weights(model, deployment)
    stage_weights = stage_weight_bytes(weights, model.num_layers, deployment.tp, deployment.pp)
    # the routed experts over a stage's dp x tp GPUs (capacity.experts_pp); SGLang's group flags (sglang_groups)
    if deployment.dp > 1 or deployment.ep or deployment.sglang_groups is not None:
        check_placement(model, weights, deployment.dp, deployment.ep, deployment.pp)
        savings = stage_savings(model, weights, deployment.tp, deployment.dp, deployment.ep, deployment.pp,
                                deployment.dense_over_all,  # SGLang's attention DP: engines/sglang_dp.py
                                deployment.redundant_experts,  # EPLB: capacity/eplb.py
                                deployment.a2a,  # vLLM's all2all backend: its shared experts (engines/vllm_a2a.py)
                                deployment.replicated_shared,  # SGLang's backend: shared experts whole (sglang_a2a)
                                deployment.placement)  # SGLang's --enable-dp-lm-head, --moe-dense-tp-size, DP tower
        stage_weights = [w - saving for w, saving in zip(stage_weights, savings)]
    extra = engine_stage_delta(model, weights, deployment.tp, deployment.pp, deployment.dp, deployment.placement)
    # SGLang's vision tower split (engines/sglang_tower.py), as its report counts it; vLLM's tower whole under
    # --mm-encoder-tp-mode data (engines/vllm_encoder_dp.py): capacity/placement.py
    if extra is not None:
        stage_weights = [w + more for w, more in zip(stage_weights, extra)]
    if deployment.kv_memory_bytes is not None:
        return [deployment.kv_memory_bytes] * len(stage_weights), stage_weights
    require_known(weights, model.name)
    gpu = deployment.gpu
    budget = int(gpu.usable_bytes * deployment.mem_util)
    pools = [budget - w - deployment.reserve_bytes for w in stage_weights]
    worst = min(range(len(pools)), key=lambda s: pools[s])
    if pools[worst] <= 0:
        stage = f" (pipeline stage {worst})" if len(pools) > 1 else ""
        raise PlanError(
            f"{model.name} does not fit on {deployment.gpus} x {gpu.name}: weights {format_bytes(stage_weights[worst])} "
            f"+ reserve {format_bytes(deployment.reserve_bytes)} per GPU{stage} exceed the usable "
            f"{format_bytes(budget)} by {format_bytes(-pools[worst])}",
            "use more GPUs (--tp/--pp), a bigger GPU, quantized weights (a quantized checkpoint, the engine's "
            "--quantization fp8 for a float one, or --weights SIZE), or a lower --reserve",
        )
    return pools, stage_weights


def pool_bytes_per_gpu(plan: Plan, deployment: Deployment) -> tuple[int, int]:
    """(KV pool bytes, weight bytes) on the fullest GPU."""
    pools, weights = pool_bytes_per_stage(plan, deployment)
    return min(pools), max(weights)


def _pool_terms(plan: Plan, deployment: Deployment) -> tuple:
    """What capacity() needs that does not depend on the context: the pool and
    weights on the fullest GPU, the tokens (and blocks) the pool holds, and each
    pipeline stage with its usable bytes (its own GPU memory minus its own
    weights). Kept on the plan's model per (plan, deployment), held by identity
    (the objects are kept with the entry, so ids stay valid)."""
    memo = plan.model.__dict__.setdefault("_memo", {})
    key = ("pool-terms", id(plan), id(deployment))
    entry = memo.get(key)
    if entry is not None and entry[0] is plan and entry[1] is deployment:
        return entry[2]
    pools, stage_weights = pool_bytes_per_stage(plan, deployment)
    block = plan.block_size
    best_tokens = best_blocks = None
    stages = []
    for index, stage in enumerate(shard(plan.model, deployment.tp, deployment.pp)):
        t = terms(stage)
        per_token, fixed = t.per_token, t.shared
        usable = pools[index] - fixed
        if per_token:
            if block:
                blocks = int(usable // (per_token * block))
                stage_tokens = blocks * block
            else:
                blocks, stage_tokens = None, int(usable // per_token)
            if best_tokens is None or stage_tokens < best_tokens:
                best_tokens, best_blocks = stage_tokens, blocks
        stages.append((stage, usable))
    value = (min(pools), max(stage_weights), best_tokens, best_blocks, tuple(stages))
    memo[key] = (plan, deployment, value)
    return value


def capacity(plan: Plan, deployment: Deployment, tokens: int) -> Capacity:
    pool, weights, best_tokens, best_blocks, stages = _pool_terms(plan, deployment)
    concurrency, binding = None, 0
    for index, (stage, usable) in enumerate(stages):
        seq = batch_bytes(plan, tokens, 1, stage)
        unique = seq.kv_bytes_per_sequence + seq.state_bytes_per_sequence
        shared = seq.prefix_shared_bytes if plan.prefix is not None else 0
        if plan.prefix is not None and plan.prefix.requests > 1 and usable >= unique:
            fit = 1 + int((usable - unique) // max(unique - shared, 1))
        else:
            fit = int(usable // unique) if unique else 0
        if concurrency is None or fit < concurrency:
            concurrency, binding = fit, index
    # each DP rank has its own pool and its own requests (vLLM: one engine core a rank), so the replica holds dp x
    return Capacity(pool, weights, best_tokens, best_blocks, max(concurrency or 0, 0) * deployment.dp, binding)
