"""KV compaction after eviction: gather the retained tokens of one sequence into
the first ceil(r / block_size) blocks of a fresh block list, return the rest to
the allocator, and record which original positions remain.

Kernel ``_copy_rows_kernel``: copies token rows (one row = num_kv_heads * head_dim
elements of one token, K and V together) from source slots to destination slots,
byte for byte (works for bf16 / fp16 / fp8 caches; fp8 scales are unchanged).
Compaction runs it twice per layer: retained rows -> a staging buffer
[r, row_bytes], then staging -> the new slots. Staging makes the move safe when a
destination block is also a source block (the allocator may hand back the very
blocks just freed).

Allocator protocol (part 1's ``BlockAllocator``, public methods only):
``free(seq_id)`` then ``allocate(seq_id, ids)`` with ``r`` token ids. With the
prefix cache on, ``ids`` are fresh negative placeholders: compacted blocks hold
tokens from scattered positions, so they must never be matched by (or register
under) a real token prefix. With the prefix cache off the real retained token
ids are kept. Full blocks of the old table keep their prefix keys in the
allocator's LRU and their content stays valid until reused (``_take`` forgets the
key of a block it hands out), so compaction never corrupts the prefix cache.

Positions: decode after compaction needs no positions (RoPE was applied before
caching); the next token of the sequence keeps its original position
(``old_seq_len``), which the caller tracks. ``CompactResult.retained_positions``
lists original position of compacted token i.

All layers given in ``caches`` share one retained set and one block table (one
allocator); PyramidKV's per-layer budgets need per-layer tables: call
``compact_sequence`` once per layer with that layer's allocator.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from ._sparse_common import CACHE_DTYPES, check_tensor

_placeholder = itertools.count(1)


@triton.jit
def _copy_rows_kernel(src_k, src_v, dst_k, dst_v, src_rows, dst_rows,
                      ROW: tl.constexpr, BLOCK: tl.constexpr):
    """dst_k[dst_rows[i], :] = src_k[src_rows[i], :] (and V), rows of ROW bytes."""
    i = tl.program_id(0)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = c < ROW
    s = tl.load(src_rows + i).to(tl.int64) * ROW
    d = tl.load(dst_rows + i).to(tl.int64) * ROW
    tl.store(dst_k + d + c, tl.load(src_k + s + c, mask=m), mask=m)
    tl.store(dst_v + d + c, tl.load(src_v + s + c, mask=m), mask=m)


def copy_rows(src_k, src_v, dst_k, dst_v, src_rows: torch.Tensor, dst_rows: torch.Tensor) -> None:
    """Row copy on uint8 views [rows, row_bytes]; src_rows/dst_rows int64 [r]."""
    r = src_rows.numel()
    if r == 0:
        return
    ROW = src_k.shape[1]
    BLOCK = min(1024, triton.next_power_of_2(ROW))
    _copy_rows_kernel[(r, triton.cdiv(ROW, BLOCK))](src_k, src_v, dst_k, dst_v, src_rows, dst_rows,
                                                   ROW=ROW, BLOCK=BLOCK)


@dataclass
class CompactResult:
    block_table: list[int]  # new physical blocks of the sequence
    seq_len: int  # r = number of retained tokens
    retained_positions: torch.Tensor  # int64 [r], original positions, sorted
    freed_blocks: list[int]  # old blocks now unreferenced (returned to the allocator)
    old_seq_len: int


def _rows(cache: torch.Tensor) -> torch.Tensor:
    nb, bs = cache.shape[:2]
    return cache.view(torch.uint8).view(nb * bs, -1)


def compact_sequence(caches, allocator, seq_id, retained_positions) -> CompactResult:
    """Compact ``seq_id`` in every layer of ``caches`` (list of (k_cache, v_cache),
    each [num_blocks, block_size, num_kv_heads, head_dim]) to the tokens at
    ``retained_positions`` (sorted unique ints < seq_len)."""
    if not caches:
        raise ValueError("caches: at least one (k_cache, v_cache) layer is required")
    bs = allocator.block_size
    for li, (k, v) in enumerate(caches):
        check_tensor(f"caches[{li}].k_cache", k, ndim=4, dtypes=CACHE_DTYPES)
        check_tensor(f"caches[{li}].v_cache", v, ndim=4, dtypes=(k.dtype,), device=k.device)
        if k.shape != v.shape or k.shape[1] != bs or k.shape[0] != allocator.num_blocks:
            raise ValueError(f"caches[{li}]: shape {tuple(k.shape)} does not match the allocator "
                             f"({allocator.num_blocks} blocks of {bs})")
    dev = caches[0][0].device
    n = allocator.seq_len(seq_id)
    old_blocks = allocator.block_table(seq_id)
    if any(b < 0 for b in old_blocks):
        raise ValueError("seq_id: sequence has released (-1) blocks; compact before window release")
    pos = torch.as_tensor(retained_positions, dtype=torch.int64).reshape(-1).cpu()
    if pos.numel() and (int(pos.min()) < 0 or int(pos.max()) >= n):
        raise ValueError(f"retained_positions: outside [0, {n})")
    if pos.numel() > 1 and not bool((pos[1:] > pos[:-1]).all()):
        raise ValueError("retained_positions: must be sorted and unique")
    r = pos.numel()
    old_bt = torch.tensor(old_blocks, dtype=torch.int64)
    src = (old_bt[pos // bs] * bs + pos % bs).to(dev)
    stage_rows = torch.arange(r, dtype=torch.int64, device=dev)
    staged = []
    for k, v in caches:  # 1) gather retained rows before any block changes hands
        rk, rv = _rows(k), _rows(v)
        sk = torch.empty(r, rk.shape[1], dtype=torch.uint8, device=dev)
        sv = torch.empty_like(sk)
        copy_rows(rk, rv, sk, sv, src, stage_rows)
        staged.append((sk, sv))
    need = -(-r // bs)
    sole = sum(1 for b in old_blocks if allocator.refcount(b) == 1)
    if need > allocator.num_free_blocks() + sole:
        raise ValueError(f"retained_positions: {need} blocks needed, only "
                         f"{allocator.num_free_blocks() + sole} obtainable (shared blocks)")
    if allocator.enable_prefix_cache:
        ids = [-next(_placeholder) for _ in range(r)]
    else:
        toks = allocator.token_ids(seq_id)
        ids = [toks[p] for p in pos.tolist()]
    allocator.free(seq_id)
    new_blocks = allocator.allocate(seq_id, ids)
    new_bt = torch.tensor(new_blocks, dtype=torch.int64)
    t = torch.arange(r)
    dst = (new_bt[t // bs] * bs + t % bs).to(dev) if r else stage_rows
    for (k, v), (sk, sv) in zip(caches, staged):  # 2) scatter into the new blocks
        copy_rows(sk, sv, _rows(k), _rows(v), stage_rows, dst)
    keep = set(new_blocks)
    freed = [b for b in old_blocks if b not in keep and allocator.refcount(b) == 0]
    return CompactResult(list(new_blocks), r, pos, freed, n)


def compact_sequence_reference(caches, old_block_table, retained_positions, new_block_table,
                               block_size: int):
    """Torch reference: the expected (k_cache, v_cache) contents after compaction,
    given the old and new block lists (cloned caches; only new slots are checked)."""
    pos = torch.as_tensor(retained_positions, dtype=torch.int64)
    old_bt = torch.as_tensor(old_block_table, dtype=torch.int64)
    new_bt = torch.as_tensor(new_block_table, dtype=torch.int64)
    out = []
    for k, v in caches:
        t = torch.arange(pos.numel())
        rows_k = k[old_bt[pos // block_size], pos % block_size].clone()
        rows_v = v[old_bt[pos // block_size], pos % block_size].clone()
        k2, v2 = k.clone(), v.clone()
        k2[new_bt[t // block_size], t % block_size] = rows_k
        v2[new_bt[t // block_size], t % block_size] = rows_v
        out.append((k2, v2))
    return out
