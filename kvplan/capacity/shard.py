"""Tensor and pipeline parallelism: what one GPU of a (tp, pp) replica holds.

TP: KV heads per rank = max(1, kv_heads // tp); heads are replicated when tp
exceeds them. An MLA latent (and the V3.2 indexer) is replicated on every rank.
Recurrent states split their heads across ranks (ceil; DeepSeek-V4's compressor
state, like its single shared K/V head, is replicated); Mamba-2 groups are
first padded to a multiple of TP (a single group is replicated). PP: layers are split
into contiguous stages as vLLM splits them (the extra layers of an uneven split go
to the stages before the last).
"""

from __future__ import annotations

from dataclasses import replace

from ..core.layers import LayerSpec, RecurrentState
from ..core.model import ModelSpec
from ..core.transform import hold_borrowed
from ..errors import UsageError


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def shard_layer(layer: LayerSpec, tp: int) -> LayerSpec:
    if tp == 1:
        return layer
    def one(c):
        return replace(c, heads=max(1, c.heads // tp)) if c.kind == "attention" else c

    state = layer.state
    if state is not None:
        state = shard_state(state, tp)
    return replace(layer, caches=tuple(map(one, layer.caches)), borrows=tuple(map(one, layer.borrows)), state=state)


def extra_groups_for_head_shards(n_groups: int, tp: int) -> int:
    """Groups vLLM adds so every head's group lands on its rank: 0 when TP
    divides the groups, else tp - n_groups (vLLM's MambaStateShapeCalculator
    .extra_groups_for_head_shards, exact for n_groups == 1)."""
    return 0 if n_groups % tp == 0 else tp - n_groups


def shard_state(state: RecurrentState, tp: int) -> RecurrentState:
    """One rank's share of a recurrent state. Mamba-2 with a known shape pads
    its groups to TP before splitting the conv channels (a single group is
    replicated on every rank); other states split their elements (ceil)."""
    if state.also and tp > 1:  # each further state by its own rule
        return replace(shard_state(replace(state, also=()), tp), also=tuple(shard_state(s, tp) for s in state.also))
    if tp == 1 or state.tp_replicated:
        return state
    if state.kind == "mamba2" and None not in (state.n_groups, state.d_state, state.d_inner, state.heads,
                                               state.head_dim, state.conv_kernel):
        groups = state.n_groups + extra_groups_for_head_shards(state.n_groups, tp)
        conv_dim = state.d_inner + 2 * groups * state.d_state
        conv = (state.conv_kernel - 1 + state.conv_extra_rows) * _ceil_div(conv_dim, tp)
        ssm = _ceil_div(state.heads, tp) * state.head_dim * state.d_state
        return replace(state, conv_elements=conv, ssm_elements=ssm)
    return replace(state, conv_elements=_ceil_div(state.conv_elements, tp),
                   ssm_elements=_ceil_div(state.ssm_elements, tp))


def check_pp(num_layers: int, pp: int) -> None:
    """No engine gives a pipeline stage no layer: --pp above the layer count is refused (the number clipped)."""
    if pp > num_layers:
        from ..units import count_text

        raise UsageError(f"--pp {count_text(pp)} exceeds the model's {num_layers} layers")


def stage_bounds(num_layers: int, pp: int) -> list[tuple[int, int]]:
    """Contiguous layer ranges per pipeline stage, as vLLM splits them
    (vllm/distributed/utils.py: get_pp_indices): num_layers // pp each, and the
    remaining layers one each to the stages counted back from the second-to-last
    (the last stage holds the final norm and head, the first the embeddings)."""
    check_pp(num_layers, pp)
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    bounds, start = [], 0
    for size in sizes:
        bounds.append((start, start + size))
        start += size
    return bounds


def sglang_stage_bounds(num_layers: int, pp: int) -> list[tuple[int, int]]:
    """Contiguous layer ranges per pipeline stage, as SGLang splits them (srt/distributed/utils.py get_pp_indices,
    0.5.9 and 0.5.23, without SGLANG_PP_LAYER_PARTITION): num_layers // pp each, and the last num_layers % pp
    stages one more."""
    check_pp(num_layers, pp)
    base, extra = divmod(num_layers, pp)
    bounds, start = [], 0
    for rank in range(pp):
        size = base + (1 if rank >= pp - extra else 0)
        bounds.append((start, start + size))
        start += size
    return bounds


def shard(model: ModelSpec, tp: int = 1, pp: int = 1) -> list[ModelSpec]:
    return model.memo(("shard", tp, pp), lambda: _shard(model, tp, pp))


def check_tp(model: ModelSpec, tp: int) -> None:
    """Called by the commands (not by `shard`, which stays the formula for any tp):
    refuse a TP degree the engines refuse (vLLM's ModelConfig.verify_with_parallel_config:
    the attention heads must divide evenly; QKVParallelLinear: the KV heads must
    divide tp, or tp divide them, since they are split or replicated whole)."""
    if tp == 1:
        return
    heads = model.num_attention_heads
    if heads and heads % tp:
        fits = [d for d in range(2, min(heads, 64) + 1) if heads % d == 0][:6]
        raise UsageError(f"--tp {tp} does not divide the {heads} attention heads of {model.name}",
                         "serving engines refuse it; " + (f"use --tp {', '.join(map(str, fits))}" if fits else "use --tp 1"))
    kv_heads = sorted({c.heads for layer, _ in model.groups for c in layer.caches if c.kind == "attention"})
    for kv in kv_heads:
        if kv and kv % tp and tp % kv:
            raise UsageError(f"--tp {tp} and the {kv} KV heads of {model.name} do not divide one another",
                             "serving engines split KV heads evenly across ranks or replicate them whole")


def _shard(model: ModelSpec, tp: int, pp: int) -> list[ModelSpec]:
    """One ModelSpec per pipeline stage, as seen by one TP rank of that stage.

    A layer that reuses the cache of a layer on another stage becomes an owner
    there (the stage must hold the cache itself).
    """
    if tp < 1 or pp < 1:
        raise UsageError("--tp and --pp must be >= 1")
    stages = []
    sharded = {}
    for start, end in stage_bounds(model.num_layers, pp):
        layers = []
        for i in range(start, end):
            original = model.layers[i]
            layer = sharded.get(id(original))
            if layer is None:
                layer = sharded[id(original)] = shard_layer(original, tp)
            if layer.shares_cache_of is not None and layer.shares_cache_of < start:
                layer = replace(layer, shares_cache_of=None)
            layers.append(layer)
        layers = hold_borrowed(layers, start)
        stages.append(replace(model, layers=tuple(layers), param_count=model.param_count // (tp * pp),
                              active_param_count=model.active_param_count // (tp * pp)))
    return stages
