"""Data / expert parallelism with pipeline stages (vLLM 0.34 `--data-parallel-size N --pipeline-parallel-size P`):
what one GPU of each stage holds less than the (tp, pp) split gives it.

vLLM 0.34 takes DP with PP: config/parallel.py ParallelConfig.__post_init__ sets world_size = pp x tp x pcp for one
DP rank and refuses PP only with elastic EP; engine/arg_utils.py counts world_size_within_dp = pp x tp x pcp and the
DP world dp x that. distributed/parallel_state.py initialize_model_parallel lays the ranks out as (dp, pp, pcp, tp):
the DP group joins one stage's TP rank across the DP ranks, and the EP group (all_ranks.transpose(1, 2) reshaped to
dp x pcp x tp) is one stage's GPUs of every DP rank. So each DP rank is a TP x PP engine core with its own pool,
and a stage's FusedMoE layers are split (or placed by expert) over that stage's dp x tp GPUs
(model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make flattens tp over dp; pp plays no part):
capacity.experts.placement_saving for the stage's own routed experts. The pool is the smallest stage's, as
without DP (capacity.pool).

A tensor table's stages hold the routed experts of their own layers (the split of capacity/shard.stage_bounds);
a record without one is split evenly over the stages (capacity.weights.stage_weight_bytes), so its saving is too
(rounded down: a few bytes high on the weights rather than low).
"""

from __future__ import annotations

from dataclasses import replace

from ..core.model import ModelSpec
from ..weights.record import Weights
from .experts import placement_saving
from .placement import VLLM_SPLIT, Placement
from .shard import stage_bounds


def stage_savings(model: ModelSpec, weights: Weights, tp: int, dp: int, ep: bool, pp: int,
                  dense_over_all: bool = False, redundant: int | None = None, a2a: str | None = None,
                  replicated_shared: bool = False, placement: Placement = VLLM_SPLIT) -> list[int]:
    """placement_saving for each pipeline stage's GPUs (one entry a stage); `redundant`: EPLB's redundant experts
    (capacity/eplb.py), spread over every stage's MoE layers alike; `a2a`: vLLM's all2all backend, `replicated_shared`:
    SGLang's whole shared experts, `placement`: the engine's (Deployment.placement: SGLang's --enable-dp-lm-head /
    --moe-dense-tp-size and its tower under attention DP; placement_saving)."""
    if pp <= 1:
        return [placement_saving(model, weights, tp, dp, ep, dense_over_all, redundant, a2a, replicated_shared,
                                 placement)]
    if not weights.parts:
        return [placement_saving(model, weights, tp, dp, ep, dense_over_all, redundant, a2a,
                                 replicated_shared, placement) // pp] * pp
    out = []
    for start, end in stage_bounds(model.num_layers, pp):
        parts = tuple(p for p in weights.parts if p[0] != "experts" or start <= p[1] < end)
        out.append(placement_saving(model, replace(weights, parts=parts), tp, dp, ep, dense_over_all, redundant,
                                    a2a, replicated_shared, placement))
    return out
