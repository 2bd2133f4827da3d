"""The CPU shrink: a smaller ModelSpec with the same per-layer structure, so the
Triton interpreter benches a technique in seconds.

What is kept: the kinds of layer and their order (full, sliding window, latent,
recurrent state, shared with an earlier layer), the head width (key_dim,
value_dim), the storage of every cache, and the query-to-KV head ratio (capped).
What shrinks:

- layers: the first layers that contain every distinct layer spec once
  (Gemma 3's 5 local : 1 global -> 6 layers, Qwen3-Next's 3 : 1 -> 4), or a
  strided sample plus one layer of each missing kind when that takes more than
  `MAX_LAYERS`; a kept layer that reuses another layer's cache keeps its owner.
- KV heads: at most `MAX_KV_HEADS`; query heads = KV heads x min(group, 4).
- latent (MLA): rank at most 128, rope at most 32 (the 512 + 64 tile is slow in
  the interpreter; the latent stays one row per token).
- sliding windows: at most a quarter of the benched context (at least one
  block), so a window still drops blocks at the shrunk context.
- recurrent states: at most `MAX_STATE_ELEMENTS` elements per part; a Mamba-2
  state with a known shape keeps its groups and shrinks heads, head_dim and
  d_state instead, so its elements still follow from its shape (TP pads and
  splits that shape).

Pure and torch-free: the bench predicts with it and builds the real caches
from it, so prediction and measurement see the same shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.layers import LayerSpec, RecurrentState, TokenCache
from ..core.model import ModelSpec
from ..core.transform import intern, with_policy

MAX_LAYERS = 8
MAX_KV_HEADS = 2
MAX_GROUP = 4
MAX_LATENT_RANK = 128
MAX_ROPE = 32
MAX_STATE_ELEMENTS = 16384
MAX_MAMBA2_HEADS = 8
MAX_MAMBA2_DIM = 16


@dataclass(frozen=True)
class Shrink:
    """What the shrink did, for the JSON document and the table footer."""

    layers_before: int
    layers_after: int
    kept_layers: tuple[int, ...]
    kv_heads_before: int | None
    kv_heads_after: int | None
    q_heads_before: int
    q_heads_after: int
    window_cap_tokens: int | None

    def as_dict(self) -> dict:
        return {
            "layers": [self.layers_before, self.layers_after],
            "kept_layers": list(self.kept_layers),
            "kv_heads": [self.kv_heads_before, self.kv_heads_after],
            "q_heads": [self.q_heads_before, self.q_heads_after],
            "window_cap_tokens": self.window_cap_tokens,
        }


def _pick_layers(model: ModelSpec) -> list[int]:
    layers = model.layers
    distinct: list[LayerSpec] = []
    for layer in layers:
        if layer not in distinct:
            distinct.append(layer)
    seen: set[int] = set()
    first_all = None
    for i, layer in enumerate(layers):
        seen.add(distinct.index(layer))
        if len(seen) == len(distinct):
            first_all = i + 1
            break
    if first_all is not None and first_all <= MAX_LAYERS:
        keep = list(range(max(first_all, min(len(layers), 4))))
    else:
        stride = max(1, len(layers) // MAX_LAYERS)
        keep = list(range(0, len(layers), stride))[:MAX_LAYERS]
        for d in distinct:  # one layer of each kind the sample missed
            if not any(layers[i] == d for i in keep):
                keep.append(layers.index(d))
    # a kept layer that reuses another's cache needs that owner
    for i in list(keep):
        owner = layers[i].shares_cache_of
        if owner is not None and owner not in keep:
            keep.append(owner)
    return sorted(set(keep))


def _shrink_cache(cache: TokenCache, kv_heads: int, window_cap: int | None) -> TokenCache:
    if cache.kind == "latent":
        rope = min(cache.rope_dim, MAX_ROPE)
        rank = min(cache.key_dim - cache.rope_dim, MAX_LATENT_RANK)
        cache = replace(cache, key_dim=rank + rope, rope_dim=rope)
    else:
        cache = replace(cache, heads=min(cache.heads, kv_heads))
    window = cache.policy.window_tokens
    if window is not None and window_cap is not None and window > window_cap:
        cache = with_policy(cache, window_tokens=window_cap)
    return cache


def _shrink_state(state: RecurrentState | None) -> RecurrentState | None:
    if state is None:
        return None
    shape = (state.n_groups, state.d_state, state.d_inner, state.heads, state.head_dim, state.conv_kernel)
    if state.kind == "mamba2" and None not in shape:
        return _shrink_mamba2(state)
    return replace(
        state,
        conv_elements=min(state.conv_elements, MAX_STATE_ELEMENTS),
        ssm_elements=min(state.ssm_elements, MAX_STATE_ELEMENTS),
    )


def _shrink_mamba2(state: RecurrentState) -> RecurrentState:
    """A smaller Mamba-2 shape, consistent with its element counts so TP can
    still pad and split it: the groups stay (they decide the padding), heads
    become 8 (a multiple of the groups), head_dim and d_state at most
    MAX_MAMBA2_DIM."""
    groups = state.n_groups
    heads = groups * max(1, min(state.heads // groups, MAX_MAMBA2_HEADS // groups))
    head_dim = min(state.head_dim, MAX_MAMBA2_DIM)
    d_state = min(state.d_state, MAX_MAMBA2_DIM)
    d_inner = heads * head_dim
    conv = (state.conv_kernel - 1) * (d_inner + 2 * groups * d_state)
    return replace(state, conv_elements=conv, ssm_elements=heads * head_dim * d_state, heads=heads,
                   head_dim=head_dim, d_state=d_state, d_inner=d_inner)


def shrink_model(model: ModelSpec, context_tokens: int, block_tokens: int = 16) -> tuple[ModelSpec, Shrink]:
    """The CPU-sized model for a bench at `context_tokens` (see module doc)."""
    keep = _pick_layers(model)
    index = {old: new for new, old in enumerate(keep)}
    shape = model.attention_shape()
    kv_before = shape[0] if shape else None
    kv_after = min(kv_before, MAX_KV_HEADS) if kv_before else None
    q_before = model.num_attention_heads or (kv_before or 1)
    group = max(1, q_before // kv_before) if kv_before else 1
    q_after = (kv_after or 1) * min(group, MAX_GROUP) if kv_before else min(q_before, 16)
    window_cap = max(block_tokens, context_tokens // 4)
    layers = []
    for old in keep:
        layer = model.layers[old]
        caches = tuple(_shrink_cache(c, kv_after or 1, window_cap) for c in layer.caches)
        owner = layer.shares_cache_of
        layers.append(replace(
            layer, caches=caches, state=_shrink_state(layer.state),
            shares_cache_of=index[owner] if owner is not None else None,
        ))
    small = replace(
        model,
        name=f"{model.name} (cpu shrink)",
        layers=intern(layers),
        num_attention_heads=q_after,
        max_context_tokens=None,
    )
    info = Shrink(len(model.layers), len(layers), tuple(keep), kv_before, kv_after, q_before, q_after, window_cap)
    return small, info
