"""Inputs and references shared by the bench measurements: structured K/V with a
few heavy tokens (so eviction, Quest and CSA keep a meaningful share of the
attention mass), queries, the float64 reference, exact tensor bytes, and the
measurement record of one layer group."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .timing import OffloadCycle, Timing

FLOAT_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def nbytes(*tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def _block_bytes(*tensors) -> int:
    return sum(t[0].numel() * t.element_size() for t in tensors if t is not None)


@dataclass
class GroupMeasure:
    """What one layer of a group measured (bytes already for the whole batch, one layer)."""

    cache_bytes: int  # resident: used blocks x block bytes + scales + per-sequence buffers + states
    pool_bytes: int  # every tensor allocated, free blocks included
    block_table_bytes: int
    offloaded_bytes: int = 0
    blocks_used: int | None = None
    blocks_shared: int | None = None
    blocks_free: int | None = None
    waste_slots: int | None = None  # token slots allocated but empty (partial blocks)
    cuda_allocated_delta: int | None = None
    prefill: Timing | None = None
    decode: Timing | None = None
    offload_cycle: OffloadCycle | None = None
    error_rel: float | None = None
    attention_mass: float | None = None
    engine: str = "triton"
    breakdown: dict = field(default_factory=dict)


# ------------------------------------------------------------------ inputs
def _structured_kv(gen, B, T, H, D, device, shared_prefix: int, sharers: int):
    """K, V [B, T, H, D] bf16 with a few heavy-hitter keys (so eviction, Quest and
    CSA have attention worth keeping); sequences < sharers share the first
    `shared_prefix` positions."""
    k = torch.randn(B, T, H, D, generator=gen) * 0.5
    v = torch.randn(B, T, H, D, generator=gen)
    heavy = torch.rand(B, T, generator=gen) < 0.05
    direction = torch.randn(H, D, generator=gen)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    # q . k_heavy / sqrt(D) is about 6 above the rest: ~95% of the attention mass
    # falls on the 5% heavy tokens, as in real decode attention
    scale = math.sqrt(6.0 * math.sqrt(D))
    k = k + heavy[..., None, None] * scale * direction
    if sharers > 1 and shared_prefix:
        k[1:sharers, :shared_prefix] = k[0, :shared_prefix]
        v[1:sharers, :shared_prefix] = v[0, :shared_prefix]
    q = torch.randn(B, H, D, generator=gen) * 0.3 + direction[None] * scale
    return k.to(device, torch.bfloat16), v.to(device, torch.bfloat16), q, direction


def _queries(q_kv, Hq, H, gen, device):
    """q [B, Hq, D] bf16: the query heads of one KV head near that head's direction."""
    B, _, D = q_kv.shape
    rep = q_kv.repeat_interleave(Hq // H, dim=1)
    return (rep + 0.2 * torch.randn(B, Hq, D, generator=gen)).to(device, torch.bfloat16)


def _reference(q, k, v, positions_per_seq, Hkv):
    """float64 attention of q [B, Hq, D] over k/v [B, T, H, D] (bf16 values) at the
    given positions per sequence; returns (out [B, Hq, D], probs list [Hq, n])."""
    B, Hq, D = q.shape
    outs, probs = [], []
    for b in range(B):
        pos = positions_per_seq[b]
        kk = k[b, pos].double().repeat_interleave(Hq // Hkv, dim=1)
        vv = v[b, pos].double().repeat_interleave(Hq // Hkv, dim=1)
        s = torch.einsum("hd,thd->ht", q[b].double(), kk) / math.sqrt(D)
        p = torch.softmax(s, dim=-1)
        outs.append(torch.einsum("ht,thd->hd", p, vv))
        probs.append(p)
    return torch.stack(outs), probs


def _rel_err(out, ref) -> float:
    out = out.double().to(ref.device)
    return float((out - ref).norm() / ref.norm().clamp_min(1e-30))


# ------------------------------------------------------------------ paged K/V
@dataclass
class Setup:
    device: torch.device
    batch: int
    tokens: int
    q_heads: int
    block_tokens: int | None
    repeats: int
    prefix_tokens: int = 0
    prefix_requests: int = 0
    offload_sessions: int = 0
    reference_window: int | None = None  # the window of the full-cache reference
    quant_groups: tuple[int, int] | None = None
    seed: int = 0


def one_sequence_table(alloc, seq_id, device):
    """Block table [1, n] and length [1] (int32) of one sequence, as decode reads them."""
    table = torch.tensor([alloc.block_table(seq_id)], dtype=torch.int32, device=device)
    return table, torch.tensor([alloc.seq_len(seq_id)], dtype=torch.int32, device=device)


def _token_ids(setup: Setup, b: int) -> list[int]:
    share = b < setup.prefix_requests and setup.prefix_requests > 1
    return [t if share and t < setup.prefix_tokens else (b + 1) * 10_000_000 + t for t in range(setup.tokens)]
