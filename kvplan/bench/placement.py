"""Where one rank of a distributed bench sits, and the cache it builds.

A `Placement` is read from the rendezvous environment torchrun sets (RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT). Ranks are laid out as
vLLM and Megatron do: TP innermost, so rank = pp_stage x tp + tp_rank and the
TP ranks of a stage share a node when they fit.

`rank_model` is the measuring side's own reading of what the rank holds,
written from the engine rules rather than through `capacity.shard`, so that
the bench's comparison with the planner's prediction (which does go through
`shard`) can expose a bug in either:

- layers: vLLM's `get_pp_indices`: every stage gets layers // pp, and the
  remainder goes one layer each to the stages counted back from the
  second-to-last (the last stage also runs the LM head);
- attention KV heads: a contiguous slice of kv_heads / tp heads; with more
  ranks than heads each rank holds the one head its slice of query heads
  reads (heads replicated tp / kv_heads times);
- MLA latents and the V3.2 indexer key: one per token, on every rank;
- Mamba-2: groups padded to TP (n_groups == 1 is replicated: vLLM's
  extra_groups_for_head_shards), then conv channels
  d_inner / tp + 2 x (padded groups / tp) x d_state and SSM heads / tp x
  head_dim x d_state; other recurrent states split their elements (ceil).

Pure and torch-free: `--launch` checks its input with it before any rank starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from ..core.layers import LayerSpec, RecurrentState, TokenCache
from ..core.model import ModelSpec
from ..core.transform import hold_borrowed
from ..errors import UsageError

RENDEZVOUS_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class Placement:
    rank: int
    world_size: int
    device: str  # "cpu" or "cuda:<local rank>"
    tp_rank: int
    pp_stage: int
    tp: int = 1
    pp: int = 1
    local_rank: int = 0

    def as_dict(self) -> dict:
        return {"rank": self.rank, "world_size": self.world_size, "device": self.device,
                "tp_rank": self.tp_rank, "pp_stage": self.pp_stage, "local_rank": self.local_rank}


def check_sizes(tp: int, pp: int) -> None:
    if tp < 1 or pp < 1:
        raise UsageError(f"--tp {tp} --pp {pp}: both must be >= 1")


def rendezvous(env=None) -> tuple[int, int, int]:
    """(rank, world_size, local_rank) from torchrun's variables; UsageError when absent."""
    env = os.environ if env is None else env
    missing = [v for v in RENDEZVOUS_VARS if not env.get(v)]
    if missing:
        raise UsageError(f"no torch.distributed rendezvous: {', '.join(missing)} not set",
                         "start the ranks with torchrun --nproc-per-node N -m kvplan bench ..., "
                         "or use kvplan bench --launch N on one node")
    try:
        rank, world, local = int(env["RANK"]), int(env["WORLD_SIZE"]), int(env["LOCAL_RANK"])
    except ValueError:
        raise UsageError("RANK, WORLD_SIZE and LOCAL_RANK must be integers "
                         f"(got {env['RANK']!r}, {env['WORLD_SIZE']!r}, {env['LOCAL_RANK']!r})") from None
    if not 0 <= rank < world:
        raise UsageError(f"RANK {rank} is outside WORLD_SIZE {world}")
    return rank, world, local


def make_placement(rank: int, world_size: int, local_rank: int, tp: int, pp: int, device_kind: str) -> Placement:
    check_sizes(tp, pp)
    if world_size != tp * pp:
        raise UsageError(f"world size {world_size} differs from --tp {tp} x --pp {pp} = {tp * pp}",
                         f"start {tp * pp} processes (torchrun --nproc-per-node / --nnodes) or change --tp/--pp")
    device = f"cuda:{local_rank}" if device_kind == "cuda" else "cpu"
    return Placement(rank, world_size, device, rank % tp, rank // tp, tp, pp, local_rank)


def check_parallel(model: ModelSpec, tp: int, pp: int, what: str = "the model") -> None:
    """T and P must split the model as an engine would (vLLM's asserts)."""
    check_sizes(tp, pp)
    if pp > model.num_layers:
        raise UsageError(f"--pp {pp} exceeds the {model.num_layers} layers of {what}")
    if tp == 1:
        return
    q = model.num_attention_heads
    if q and q % tp:
        raise UsageError(f"--tp {tp} does not divide the {q} query heads of {what}", "use a divisor of it")
    seen = set()
    for layer in model.layers:
        for c in layer.caches:
            if c.kind == "attention" and c.heads not in seen:
                seen.add(c.heads)
                if (c.heads >= tp and c.heads % tp) or (c.heads < tp and tp % c.heads):
                    raise UsageError(f"--tp {tp} and the {c.heads} KV heads of {what}: one must divide the other",
                                     "use a --tp that divides the KV heads or a multiple of them")
        s = layer.state
        if s is not None and s.kind == "mamba2" and s.heads is not None and ("m", s.heads, s.n_groups) not in seen:
            seen.add(("m", s.heads, s.n_groups))
            if s.heads % tp:
                raise UsageError(f"--tp {tp} does not divide the {s.heads} Mamba-2 heads of {what}")
            if s.n_groups is not None and s.n_groups % tp and s.n_groups != 1:
                raise UsageError(f"--tp {tp} does not divide the {s.n_groups} Mamba-2 groups of {what} "
                                 "(engines pad only a single group)")


def stage_layers(num_layers: int, pp: int, stage: int) -> range:
    """vLLM's get_pp_indices without VLLM_PP_LAYER_PARTITION."""
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    start = sum(sizes[:stage])
    return range(start, start + sizes[stage])


def rank_kv_heads(kv_heads: int, tp: int, tp_rank: int) -> list[int]:
    """Indices of the KV heads rank `tp_rank` stores."""
    if kv_heads >= tp:
        per = kv_heads // tp
        return list(range(tp_rank * per, (tp_rank + 1) * per))
    return [tp_rank * kv_heads // tp]  # tp / kv_heads consecutive ranks share one head


def _rank_cache(cache: TokenCache, tp: int, tp_rank: int) -> TokenCache:
    if cache.kind != "attention":  # latent (MLA) and indexer: one row per token on every rank
        return cache
    return replace(cache, heads=len(rank_kv_heads(cache.heads, tp, tp_rank)))


def _rank_state(state: RecurrentState, tp: int) -> RecurrentState:
    if tp == 1:
        return state
    shape = (state.n_groups, state.d_state, state.d_inner, state.heads, state.head_dim, state.conv_kernel)
    if state.kind == "mamba2" and None not in shape:
        groups = state.n_groups if state.n_groups % tp == 0 else tp  # one group copied to every rank
        channels = state.d_inner // tp + 2 * (groups // tp) * state.d_state
        conv = (state.conv_kernel - 1) * channels
        ssm = (state.heads // tp) * state.head_dim * state.d_state
        return replace(state, conv_elements=conv, ssm_elements=ssm)
    return replace(state, conv_elements=-(-state.conv_elements // tp), ssm_elements=-(-state.ssm_elements // tp))


def rank_model(model: ModelSpec, place: Placement) -> ModelSpec:
    """The layers this rank holds, each with this rank's share of its cache."""
    span = stage_layers(model.num_layers, place.pp, place.pp_stage)
    layers: list[LayerSpec] = []
    done: dict[int, LayerSpec] = {}
    for i in span:
        layer = model.layers[i]
        mine = done.get(id(layer))
        if mine is None:
            mine = done[id(layer)] = replace(
                layer, caches=tuple(_rank_cache(c, place.tp, place.tp_rank) for c in layer.caches),
                borrows=tuple(_rank_cache(c, place.tp, place.tp_rank) for c in layer.borrows),
                state=None if layer.state is None else _rank_state(layer.state, place.tp))
        if mine.shares_cache_of is not None and mine.shares_cache_of < span.start:
            mine = replace(mine, shares_cache_of=None)  # the owner is on another stage: hold it here
        layers.append(mine)
    layers = hold_borrowed(layers, span.start)
    q = model.num_attention_heads
    kv = max((c.heads for layer in layers for c in layer.caches if c.kind == "attention"), default=1)
    return replace(model, layers=tuple(layers), num_attention_heads=max(q // place.tp, kv) if q else q)
