"""Time costs: the memory-bound decode floor, and resuming an offloaded sequence
versus recomputing it.

Decode: every step reads the weights once (MoE: the experts the batch routes
to, at most all of them) plus each sequence's KV as read by the kernels (windows,
Quest and CSA reduce it). With TP each GPU reads its shard in parallel; pipeline
stages run one after another for a token. Floor = bytes per GPU / HBM bandwidth.

Recompute: prefill FLOPs = 2 x active params x tokens + attention, where one
attention layer costs 2 x query heads x (key width + value width) x the number
of (query, key) pairs, pairs = sum over positions of the keys each sees.
"""

from __future__ import annotations

from .._record import record
from ..core.estimate import terms
from ..core.model import ModelSpec
from .hardware import Deployment
from .shard import shard


def _stage_read(stage: ModelSpec, tokens: int) -> int:
    return terms(stage).read_bytes(tokens)


@record
class DecodeCost:
    weight_read_bytes_per_gpu: int
    kv_read_bytes_per_gpu: int  # the whole batch, one step
    step_ms: float  # memory-bound floor on time per output token
    tokens_per_s: float  # batch / step time


def decode_cost(model: ModelSpec, deployment: Deployment, tokens: int, batch: int, weight_bytes: int) -> DecodeCost:
    routed = min(model.param_count, model.active_param_count * batch)
    weight_read = weight_bytes * routed / model.param_count if model.param_count else 0
    weights_per_gpu = int(weight_read / deployment.tp)  # summed over the stages of one rank
    stages = shard(model, deployment.tp, deployment.pp)
    kv = sum(batch * _stage_read(s, tokens) for s in stages)
    seconds = (weights_per_gpu + kv) / (deployment.gpu.hbm_gbps * 1e9)
    return DecodeCost(weights_per_gpu, kv, seconds * 1e3, batch / seconds if seconds else float("inf"))


def attention_pairs(tokens: int, window: int | None) -> int:
    """Sum over positions t = 1..n of the keys position t attends to."""
    if window is None or window >= tokens:
        return tokens * (tokens + 1) // 2
    return window * (window + 1) // 2 + (tokens - window) * window


def _floor_sum(n: int, m: int) -> int:
    """Sum over t = 1..n of floor(t / m)."""
    q, r = divmod(n, m)
    return m * q * (q - 1) // 2 + q * (r + 1)


def compressed_pairs(tokens: int, ratio: int, topk: int | None, window: int) -> int:
    """Sum over positions t = 1..n of the entries position t attends to in a compressed cache:
    min(k, floor(t / m)) compressed entries (all of them when k is None) plus min(t, window) raw ones."""
    if topk is None or tokens < topk * ratio:
        chosen = _floor_sum(tokens, ratio)
    else:
        chosen = _floor_sum(topk * ratio - 1, ratio) + topk * (tokens - topk * ratio + 1)
    return chosen + (attention_pairs(tokens, window) if window else 0)


def prefill_flops(model: ModelSpec, tokens: int) -> int:
    flops = 2 * model.active_param_count * tokens
    q_heads = model.num_attention_heads or 1
    for layer, count in model.groups:
        for cache in layer.caches:
            if cache.kind == "indexer":
                continue
            value = cache.key_dim - cache.rope_dim if cache.kind == "latent" else cache.value_dim
            policy = cache.policy
            if policy.compress_ratio is not None:
                pairs = compressed_pairs(policy.retained_tokens(tokens), policy.compress_ratio, policy.compress_topk,
                                         policy.compress_window)
            else:
                pairs = attention_pairs(tokens, policy.window_tokens)
            flops += count * 2 * q_heads * (cache.key_dim + value) * pairs
    return flops


@record
class ResumeCost:
    bytes_per_gpu: int  # one sequence's cache on one GPU
    copy_ms: float  # bring it back over the host link
    recompute_ms: float  # prefill it again
    cheaper: str  # "resume" or "recompute"


def resume_cost(model: ModelSpec, deployment: Deployment, tokens: int, seq_bytes_per_gpu: int, link_gbps: float | None, mfu: float) -> ResumeCost:
    link = link_gbps or deployment.gpu.link_gbps
    copy_ms = seq_bytes_per_gpu / (link * 1e9) * 1e3
    flops = prefill_flops(model, tokens)
    recompute_ms = flops / (deployment.gpu.bf16_tflops * 1e12 * mfu * deployment.tp) * 1e3
    return ResumeCost(seq_bytes_per_gpu, copy_ms, recompute_ms, "resume" if copy_ms <= recompute_ms else "recompute")
