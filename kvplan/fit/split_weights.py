"""The weights by split in the `kvplan fit` screen (split_weight_bytes): each pipeline stage's weight bytes on one
GPU of a (tp, pp, dp) split, as capacity.pool counts them: capacity.weights.stage_weight_bytes, less the routed experts
a DP + EP split (or SGLang's group flags) spreads (capacity.experts_pp.stage_savings), plus the engine's own vision
tower split (capacity.weights.engine_stage_delta). The screen computes it once per split and reuses it over GPU kinds
and KV dtypes."""

from __future__ import annotations

from ..capacity.weights import engine_stage_delta, stage_weight_bytes


def split_weight_bytes(model, record, tp: int, pp: int, dp: int, ep: bool, engine: str, flags: dict,
                       placement) -> list[int]:
    """Weight bytes on one GPU of each stage. engine: the accounting's name (ideal, vllm, sglang); flags: the
    split's Deployment fields (fit/flags.py split_flags); placement: its Deployment.placement."""
    weight_bytes = stage_weight_bytes(record, model.num_layers, tp, pp)
    # each stage's routed experts split by expert over its dp x tp GPUs, SGLang's group flags, as
    # capacity.pool does (pool_bytes_per_stage)
    if dp > 1 or flags.get("sglang_groups") is not None:
        from ..capacity.experts_pp import stage_savings

        savings = stage_savings(model, record, tp, dp, ep, pp, dense_over_all=dp > 1 and engine == "sglang",
                                redundant=flags.get("redundant_experts"), a2a=flags.get("a2a"), replicated_shared=flags.get("replicated_shared", False),
                                placement=placement)
        weight_bytes = [w - saving for w, saving in zip(weight_bytes, savings)]
    extra = engine_stage_delta(model, record, tp, pp, dp, placement)
    if extra is not None:  # SGLang's vision tower split, as capacity.pool counts it
        weight_bytes = [w + more for w, more in zip(weight_bytes, extra)]
    return weight_bytes


__all__ = ["split_weight_bytes"]
