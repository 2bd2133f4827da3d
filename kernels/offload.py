"""Offload a sequence's KV blocks to host memory and resume it (block gather / scatter kernel).

``copy_blocks`` (the Triton kernel) copies whole blocks between two
block-major buffers viewed as rows of ``block_bytes`` bytes::

    dst[dst_ids[i]] = src[src_ids[i]]        (ids = None: i itself)

so one kernel does the gather (cache -> contiguous staging buffer), the
scatter (staging buffer -> cache) and copy-on-write block copies. It copies
4-byte words when the block size in bytes allows it, else bytes; one program
per (block, chunk of the row).

Offload of sequence s over ``tensors`` (every per-block tensor of every
layer: K and V caches, fp8 or KIVI codes and per-block scales; dim 0 must be
num_blocks):

1. gather its live blocks of each tensor into one device staging buffer
   ``[sum over tensors of n_blocks * block_bytes]`` (uint8);
2. one bulk copy to pinned host memory (plain host memory without CUDA);
3. ``allocator.free(s)``.

Resume: ``allocator.allocate(s, token_ids)`` (leading blocks may come back
from the prefix cache: they already hold these tokens' KV and are not
written), one bulk host -> device copy, scatter into the new blocks. Blocks
that ``release_outside_window`` had dropped (-1) are not saved and are
released again after the allocation. The KIVI per-sequence residual buffer
is not per block: the caller keeps that row.

Host layout: tensor after tensor, each ``n_blocks * block_bytes`` bytes, blocks in
block-table order.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import triton
import triton.language as tl

from ._checks import check, check_tensor
from ._interp import INTERPRET  # noqa: F401  (interpreter fix-ups)
from .allocator import BlockAllocator

__all__ = ["copy_blocks", "copy_blocks_reference", "OffloadedSeq", "offload_sequence", "resume_sequence",
           "gather_blocks", "scatter_blocks"]


@triton.jit
def _copy_blocks_kernel(src_ptr, dst_ptr, src_ids_ptr, dst_ids_ptr, row_words,
                        HAS_SRC_IDS: tl.constexpr, HAS_DST_IDS: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    chunk = tl.program_id(1)
    s = i.to(tl.int64)
    d = i.to(tl.int64)
    if HAS_SRC_IDS:
        s = tl.load(src_ids_ptr + i).to(tl.int64)
    if HAS_DST_IDS:
        d = tl.load(dst_ids_ptr + i).to(tl.int64)
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < row_words
    x = tl.load(src_ptr + s * row_words + offs, mask=mask)
    tl.store(dst_ptr + d * row_words + offs, x, mask=mask)


def _rows(t: torch.Tensor) -> torch.Tensor:
    """Contiguous tensor -> [dim0, row] view of int32 words (or uint8 if the row is not word aligned)."""
    b = t.reshape(t.shape[0], -1).view(torch.uint8)
    if b.shape[1] % 4 == 0 and b.storage_offset() % 4 == 0:
        return b.view(torch.int32)
    return b


def copy_blocks(src: torch.Tensor, dst: torch.Tensor, src_ids=None, dst_ids=None) -> None:
    """``dst[dst_ids[i]] = src[src_ids[i]]`` for whole blocks (dim 0); same bytes per block."""
    check_tensor(src, "src", contiguous=True)
    check_tensor(dst, "dst", contiguous=True)
    check(src.dim() >= 1 and dst.dim() >= 1, "src", "needs a block dimension")
    check(src.device == dst.device, "dst", f"is on {dst.device}, src on {src.device}")
    rs, rd = _rows(src), _rows(dst)
    check(rs.shape[1] * rs.element_size() == rd.shape[1] * rd.element_size(), "dst",
          f"block of {rd.shape[1] * rd.element_size()} bytes, src block {rs.shape[1] * rs.element_size()} bytes")
    if rs.dtype != rd.dtype:
        rs, rd = rs.view(torch.uint8), rd.view(torch.uint8)
    n = None
    for name, ids, rows in (("src_ids", src_ids, rs), ("dst_ids", dst_ids, rd)):
        if ids is None:
            continue
        check_tensor(ids, name, ndim=1, dtypes=(torch.int32, torch.int64), contiguous=True)
        check(ids.device == src.device, name, f"is on {ids.device}, src on {src.device}")
        if ids.numel():
            check(int(ids.min()) >= 0 and int(ids.max()) < rows.shape[0], name,
                  f"block ids must be in [0, {rows.shape[0]})")
        check(n is None or n == ids.numel(), name, "src_ids and dst_ids differ in length")
        n = ids.numel()
    if n is None:
        check(rs.shape[0] == rd.shape[0], "dst", "needs ids or equal block counts")
        n = rs.shape[0]
    else:
        if src_ids is None:
            check(rs.shape[0] >= n, "src", f"has {rs.shape[0]} blocks, {n} requested")
        if dst_ids is None:
            check(rd.shape[0] >= n, "dst", f"has {rd.shape[0]} blocks, {n} requested")
    row = rs.shape[1]
    if n == 0 or row == 0:
        return
    BLOCK = min(4096, triton.next_power_of_2(row))
    dummy = rs
    _copy_blocks_kernel[(n, triton.cdiv(row, BLOCK))](
        rs, rd, src_ids if src_ids is not None else dummy, dst_ids if dst_ids is not None else dummy, row,
        HAS_SRC_IDS=src_ids is not None, HAS_DST_IDS=dst_ids is not None, BLOCK=BLOCK,
    )


def copy_blocks_reference(src, dst, src_ids=None, dst_ids=None) -> None:
    rs, rd = src.reshape(src.shape[0], -1).view(torch.uint8), dst.reshape(dst.shape[0], -1).view(torch.uint8)
    n = (src_ids if src_ids is not None else dst_ids).numel() if (src_ids is not None or dst_ids is not None) \
        else rs.shape[0]
    si = src_ids.long() if src_ids is not None else torch.arange(n, device=src.device)
    di = dst_ids.long() if dst_ids is not None else torch.arange(n, device=src.device)
    rd[di] = rs[si]


def _block_bytes(t: torch.Tensor) -> int:
    return t[0].numel() * t.element_size() if t.shape[0] else 0


def gather_blocks(tensors, block_ids: torch.Tensor, staging: torch.Tensor | None = None) -> torch.Tensor:
    """Device staging buffer (uint8) with the blocks ``block_ids`` of each tensor, tensor after tensor."""
    n = block_ids.numel()
    total = sum(n * _block_bytes(t) for t in tensors)
    dev = tensors[0].device
    if staging is None:
        staging = torch.empty(total, dtype=torch.uint8, device=dev)
    check(staging.numel() >= total, "staging", f"needs {total} bytes")
    off = 0
    for t in tensors:
        nb = n * _block_bytes(t)
        copy_blocks(t, staging[off:off + nb].view(n, -1), src_ids=block_ids)
        off += nb
    return staging[:total]


def scatter_blocks(staging: torch.Tensor, tensors, block_ids: torch.Tensor, skip_leading: int = 0) -> None:
    """Inverse of ``gather_blocks``; the first ``skip_leading`` blocks of each tensor are not written."""
    n = block_ids.numel()
    off = 0
    for t in tensors:
        bb = _block_bytes(t)
        part = staging[off:off + n * bb].view(n, -1)
        if n > skip_leading:
            copy_blocks(part[skip_leading:], t, dst_ids=block_ids[skip_leading:].contiguous())
        off += n * bb


@dataclass
class OffloadedSeq:
    seq_id: object
    token_ids: list[int]
    n_released: int  # leading block-table entries that were -1 (outside a window)
    n_blocks: int  # live blocks saved
    host: torch.Tensor  # uint8, pinned when CUDA is available
    block_bytes: list[int] = field(default_factory=list)  # per tensor

    @property
    def nbytes(self) -> int:
        return self.host.numel()


def _check_tensors(tensors, num_blocks):
    check(len(tensors) > 0, "tensors", "need at least one per-block tensor")
    dev = tensors[0].device
    for i, t in enumerate(tensors):
        check_tensor(t, f"tensors[{i}]", contiguous=True)
        check(t.dim() >= 1 and t.shape[0] == num_blocks, f"tensors[{i}]",
              f"dim 0 must be num_blocks {num_blocks}, got shape {tuple(t.shape)}")
        check(t.device == dev, f"tensors[{i}]", f"is on {t.device}, tensors[0] on {dev}")


def offload_sequence(allocator: BlockAllocator, seq_id, tensors) -> OffloadedSeq:
    """Save ``seq_id``'s blocks of every tensor to host memory and free them in the allocator."""
    _check_tensors(tensors, allocator.num_blocks)
    table = allocator.block_table(seq_id)
    n_released = 0
    while n_released < len(table) and table[n_released] < 0:
        n_released += 1
    live = table[n_released:]
    check(all(b >= 0 for b in live), "seq_id", "released blocks must form a prefix of the block table")
    dev = tensors[0].device
    ids = torch.tensor(live, dtype=torch.int64, device=dev)
    staging = gather_blocks(tensors, ids)
    host = torch.empty(staging.numel(), dtype=torch.uint8, pin_memory=dev.type == "cuda")
    host.copy_(staging, non_blocking=True)
    if dev.type == "cuda":
        torch.cuda.current_stream(dev).synchronize()
    off = OffloadedSeq(seq_id, allocator.token_ids(seq_id), n_released, len(live), host,
                       [_block_bytes(t) for t in tensors])
    allocator.free(seq_id)
    return off


def resume_sequence(allocator: BlockAllocator, off: OffloadedSeq, tensors) -> list[int]:
    """Re-allocate ``off.seq_id``, copy its blocks back into every tensor; returns the new block table."""
    _check_tensors(tensors, allocator.num_blocks)
    check([_block_bytes(t) for t in tensors] == off.block_bytes, "tensors",
          "must be the same per-block tensors (same order) as at offload")
    hits0 = allocator.stats()["prefix_hits"]
    table = allocator.allocate(off.seq_id, off.token_ids)  # raises OutOfBlocksError cleanly
    n_hit = allocator.stats()["prefix_hits"] - hits0
    if off.n_released:
        keep_tokens = len(off.token_ids) - off.n_released * allocator.block_size
        allocator.release_outside_window(off.seq_id, keep_tokens)
        table = allocator.block_table(off.seq_id)
    live = table[off.n_released:]
    dev = tensors[0].device
    staging = torch.empty(off.host.numel(), dtype=torch.uint8, device=dev)
    staging.copy_(off.host, non_blocking=True)
    ids = torch.tensor(live, dtype=torch.int64, device=dev)
    skip = max(0, n_hit - off.n_released)  # prefix-cache hits already hold these tokens' KV
    scatter_blocks(staging, tensors, ids, skip_leading=skip)
    return table
