"""Ring-buffer sliding-window KV cache: W slots per sequence, position p -> ring slot p mod W.

A sequence owns ``ceil(W / block_size)`` blocks (its row of ``block_table``);
ring slot r lives in block ``block_table[b, r // block_size]`` at offset
``r % block_size``. Writing position p overwrites the token of position p - W,
so the cache holds exactly the last min(L, W) tokens and never grows.

Decode reuses ``paged_decode`` with the ring's block table and
``seq_lens = min(L, W)``: the kernel then attends over ring slots
0 .. min(L, W) - 1, which are exactly the live window. They are visited in
physical (rotated) order, not logical order; attention is a sum over keys, so
the order only changes fp32 summation order (RoPE is applied before the write,
so a key carries its own position). ``ring_gather_logical`` returns the window
in logical order (oldest first) for references and debugging.

Writes go through ``paged_write`` (bf16 / fp16 / fp32 / fp8). Within one write
call, a token that a later token of the same sequence overwrites (more than W
new tokens) is dropped first, so the result does not depend on program order.
"""
from __future__ import annotations

import torch

from ._checks import check, check_tensor
from .paged_decode import paged_decode, paged_decode_reference
from .paged_write import paged_write

__all__ = ["RingWindowCache", "ring_slot_mapping", "ring_write", "ring_decode", "ring_decode_reference",
           "ring_gather_logical"]


def ring_slot_mapping(positions, batch_index, block_table, block_size: int, window_tokens: int):
    """int64 slots for tokens at ``positions`` of sequences ``batch_index`` (-1: padding / overwritten here)."""
    check_tensor(positions, "positions", ndim=1, dtypes=(torch.int32, torch.int64))
    check_tensor(batch_index, "batch_index", ndim=1, dtypes=(torch.int32, torch.int64))
    check(batch_index.shape == positions.shape, "batch_index", "must have the shape of positions")
    check_tensor(block_table, "block_table", ndim=2, dtypes=(torch.int32,))
    W = int(window_tokens)
    check(W >= 1, "window_tokens", f"must be >= 1, got {W}")
    check(block_table.shape[1] * block_size >= W, "block_table",
          f"{block_table.shape[1]} blocks of {block_size} cannot hold {W} ring slots")
    pos = positions.long()
    bi = batch_index.long()
    valid = pos >= 0
    if valid.any():
        check(int(bi[valid].min()) >= 0 and int(bi[valid].max()) < block_table.shape[0], "batch_index",
              f"must be in [0, {block_table.shape[0]})")
    bi_safe = torch.where(valid, bi, torch.zeros_like(bi))
    # newest position per sequence in this call; older ones >= W back are overwritten here
    last = torch.full((block_table.shape[0],), -1, dtype=torch.long, device=pos.device)
    last.scatter_reduce_(0, bi_safe[valid], pos[valid], reduce="amax")
    keep = valid & (pos > last[bi_safe] - W)
    r = pos.clamp_min(0) % W
    blk = block_table.long()[bi_safe, r // block_size]
    return torch.where(keep, blk * block_size + r % block_size, torch.full_like(pos, -1))


def ring_write(k, v, k_cache, v_cache, block_table, positions, batch_index, window_tokens, *,
               k_scale=None, v_scale=None) -> None:
    slots = ring_slot_mapping(positions, batch_index, block_table, k_cache.shape[1], window_tokens)
    paged_write(k, v, k_cache, v_cache, slots, k_scale=k_scale, v_scale=v_scale)


def ring_decode(q, k_cache, v_cache, block_table, seq_lens, window_tokens, **kw):
    """Attention of q over the last min(L, W) tokens held in the ring (float32 out)."""
    check_tensor(seq_lens, "seq_lens", ndim=1, dtypes=(torch.int32,))
    live = seq_lens.clamp(max=int(window_tokens)).to(torch.int32).contiguous()
    return paged_decode(q, k_cache, v_cache, block_table, live, **kw)


def ring_gather_logical(k_cache, v_cache, block_table, seq_len: int, b: int, window_tokens: int):
    """K, V [min(L, W), H, D] (as stored) of sequence b, oldest position first."""
    W, bs = int(window_tokens), k_cache.shape[1]
    pos = torch.arange(max(0, seq_len - W), seq_len, device=k_cache.device)
    r = pos % W
    blk = block_table[b].long()[r // bs]
    return k_cache[blk, r % bs], v_cache[blk, r % bs]


def ring_decode_reference(q, k_cache, v_cache, block_table, seq_lens, window_tokens, *, k_scale=None,
                          v_scale=None, scale=None):
    """float64 attention over the window gathered in logical order."""
    W = int(window_tokens)
    out = []
    for b in range(q.shape[0]):
        L = int(seq_lens[b])
        k, v = ring_gather_logical(k_cache, v_cache, block_table, L, b, W)
        n = k.shape[0]
        # lay the logical window out as a contiguous one-sequence cache and reuse the paged reference
        kc = k.reshape(1, n, *k.shape[1:]) if n else k_cache[:1, :0]
        vc = v.reshape(1, n, *v.shape[1:]) if n else v_cache[:1, :0]
        bt = torch.zeros(1, 1, dtype=torch.int32, device=q.device)
        lens = torch.tensor([n], dtype=torch.int32, device=q.device)
        out.append(paged_decode_reference(q[b:b + 1], kc, vc, bt, lens, scale=scale,
                                          k_scale=k_scale, v_scale=v_scale)[0])
    return torch.stack(out)


class RingWindowCache:
    """One layer's ring cache for ``batch`` sequences with its own block table."""

    def __init__(self, window_tokens: int, batch: int, block_size: int, num_kv_heads: int, head_dim: int,
                 *, dtype=torch.bfloat16, device="cpu", k_scale=None, v_scale=None):
        check(int(window_tokens) >= 1, "window_tokens", f"must be >= 1, got {window_tokens}")
        self.window_tokens = int(window_tokens)
        self.block_size = int(block_size)
        per_seq = -(-self.window_tokens // self.block_size)
        shape = (batch * per_seq, block_size, num_kv_heads, head_dim)
        self.k_cache = torch.zeros(shape, dtype=dtype, device=device)
        self.v_cache = torch.zeros(shape, dtype=dtype, device=device)
        self.block_table = torch.arange(batch * per_seq, dtype=torch.int32, device=device).view(batch, per_seq)
        self.k_scale, self.v_scale = k_scale, v_scale

    def nbytes(self) -> int:
        """Resident bytes: K + V ring blocks (independent of sequence length)."""
        return 2 * self.k_cache.numel() * self.k_cache.element_size()

    def write(self, k, v, positions, batch_index) -> None:
        ring_write(k, v, self.k_cache, self.v_cache, self.block_table, positions, batch_index,
                   self.window_tokens, k_scale=self.k_scale, v_scale=self.v_scale)

    def decode(self, q, seq_lens, **kw):
        return ring_decode(q, self.k_cache, self.v_cache, self.block_table, seq_lens, self.window_tokens,
                           k_scale=self.k_scale, v_scale=self.v_scale, **kw)
