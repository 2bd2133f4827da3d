"""Quest page metadata: per page (= KV block), per kv head, per channel min and
max of the (dequantized) keys, maintained on every KV write.

Layout: ``k_min, k_max`` ``[num_blocks, num_kv_heads, head_dim]``, fp32 or bf16,
indexed by physical block id like the paged cache ``k_cache [num_blocks,
block_size, num_kv_heads, head_dim]``. Bytes per page per layer:
``2 * num_kv_heads * head_dim * meta_elem_bytes`` (min + max; 4 for fp32, 2 for
bf16), whether the page is full or not. With page 16 and a bf16 KV cache, fp32
metadata is 1/8 of the page's K+V bytes and bf16 metadata 1/16, which matters
when Quest reads 1/8 of the pages. bf16 metadata is rounded outward (min toward
-inf, max toward +inf), so the Quest score stays an upper bound.

Update rule (kernel ``quest_meta_update``): after ``paged_write(..., slot_mapping)``
every page touched by the write is recomputed from the cache over its valid
prefix, i.e. offsets ``0 .. o_max`` where ``o_max`` is the largest offset this
write stored into that page. Sequences fill pages in token order, so that prefix
is exactly the page's live tokens, and stale rows left by a previous owner of a
recycled block are ignored (no reset step needed). One program per written
token; only the token with the page's largest offset does the work, so each
touched page is read once (block_size * num_kv_heads * head_dim elements).
fp8 caches are dequantized with ``k_scale`` (per-tensor [1] or per-head [num_kv_heads]).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._sparse_common import CACHE_DTYPES, check_scale, check_tensor, next_pow2

META_DTYPES = (torch.float32, torch.bfloat16)


@triton.jit
def _bf16_outward(x, UP: tl.constexpr):
    """fp32 -> fp32 on the bf16 grid, rounded toward +inf (UP) or -inf."""
    bits = x.to(tl.uint32, bitcast=True)
    t = bits & 0xFFFF0000
    away = (x >= 0) if UP else (x < 0)  # moving away from zero goes the wanted way
    t = tl.where((t != bits) & away, t + 0x10000, t)
    return t.to(tl.float32, bitcast=True)


@triton.jit
def _quest_meta_kernel(
    k_ptr, slot_ptr, last_ptr, scale_ptr, kmin_ptr, kmax_ptr,
    BS: tl.constexpr, HD: tl.constexpr, D: tl.constexpr,
    BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr,
    HAS_SCALE: tl.constexpr, SCALE_PER_HEAD: tl.constexpr, META_BF16: tl.constexpr,
):
    i = tl.program_id(0)
    slot = tl.load(slot_ptr + i)
    blk = tl.where(slot >= 0, slot // BS, 0)
    off = slot % BS
    last = tl.load(last_ptr + blk)
    if (slot >= 0) & (off == last):
        for c0 in range(0, HD, BLOCK_C):
            offs_c = c0 + tl.arange(0, BLOCK_C)  # flattened (head, channel)
            mc = offs_c < HD
            mn = tl.full([BLOCK_C], float("inf"), tl.float32)
            mx = tl.full([BLOCK_C], float("-inf"), tl.float32)
            if HAS_SCALE:
                if SCALE_PER_HEAD:
                    sc = tl.load(scale_ptr + offs_c // D, mask=mc, other=1.0)
                else:
                    sc = tl.load(scale_ptr + offs_c * 0)
            for t0 in range(0, off + 1, BLOCK_T):
                t = t0 + tl.arange(0, BLOCK_T)
                mt = t <= off
                m2 = mt[:, None] & mc[None, :]
                k = tl.load(k_ptr + (blk * BS + t)[:, None].to(tl.int64) * HD + offs_c[None, :],
                            mask=m2, other=0.0).to(tl.float32)
                if HAS_SCALE:
                    k = k * sc[None, :]
                mn = tl.minimum(mn, tl.min(tl.where(m2, k, float("inf")), 0))
                mx = tl.maximum(mx, tl.max(tl.where(m2, k, float("-inf")), 0))
            if META_BF16:
                mn = _bf16_outward(mn, False)
                mx = _bf16_outward(mx, True)
            tl.store(kmin_ptr + blk.to(tl.int64) * HD + offs_c, mn.to(kmin_ptr.dtype.element_ty), mask=mc)
            tl.store(kmax_ptr + blk.to(tl.int64) * HD + offs_c, mx.to(kmax_ptr.dtype.element_ty), mask=mc)


def alloc_quest_meta(num_blocks: int, num_kv_heads: int, head_dim: int, device="cpu",
                     dtype: torch.dtype = torch.float32):
    """NaN-poisoned (k_min, k_max) [num_blocks, num_kv_heads, head_dim] (fp32 or bf16)."""
    if dtype not in META_DTYPES:
        raise ValueError(f"dtype: Quest metadata is float32 or bfloat16, got {dtype}")
    shape = (num_blocks, num_kv_heads, head_dim)
    return (torch.full(shape, float("nan"), device=device, dtype=dtype),
            torch.full(shape, float("nan"), device=device, dtype=dtype))


def quest_meta_bytes_per_page(num_kv_heads: int, head_dim: int, meta_elem_bytes: int = 4) -> int:
    """Exact bytes of Quest metadata per page per layer (min + max)."""
    return 2 * num_kv_heads * head_dim * meta_elem_bytes


def bf16_outward_reference(x: torch.Tensor, up: bool) -> torch.Tensor:
    """Torch twin of the kernel's outward bf16 rounding (returns bf16)."""
    bits = x.float().contiguous().view(torch.int32)
    t = bits & ~0xFFFF
    away = (x >= 0) if up else (x < 0)
    t = torch.where((t != bits) & away, t + 0x10000, t)
    return t.view(torch.float32).to(torch.bfloat16)


def _check(k_cache, k_min, k_max, slot_mapping, k_scale):
    check_tensor("k_cache", k_cache, ndim=4, dtypes=CACHE_DTYPES)
    dev = k_cache.device
    NB, BS, H, D = k_cache.shape
    for name, t in (("k_min", k_min), ("k_max", k_max)):
        check_tensor(name, t, ndim=3, dtypes=META_DTYPES, device=dev)
        if t.shape != (NB, H, D):
            raise ValueError(f"{name}: shape {tuple(t.shape)} != [{NB}, {H}, {D}]")
    check_tensor("slot_mapping", slot_mapping, ndim=1, dtypes=(torch.int64,), device=dev)
    if slot_mapping.numel() and (int(slot_mapping.max()) >= NB * BS or int(slot_mapping.min()) < -1):
        raise ValueError(f"slot_mapping: slot outside [-1, {NB * BS})")
    if k_max.dtype != k_min.dtype:
        raise ValueError("k_max: dtype differs from k_min")
    fp8 = k_cache.dtype == torch.float8_e4m3fn
    if fp8 and k_scale is None:
        raise ValueError("k_scale: required for a float8_e4m3fn k_cache")
    return check_scale("k_scale", k_scale, H, dev) if fp8 else None


def quest_meta_update(k_cache: torch.Tensor, k_min: torch.Tensor, k_max: torch.Tensor,
                      slot_mapping: torch.Tensor, *, k_scale=None) -> None:
    """Recompute k_min/k_max of every page touched by the write described by
    slot_mapping int64 [num_tokens] (-1 = padding). Call after the KV write."""
    s = _check(k_cache, k_min, k_max, slot_mapping, k_scale)
    T = slot_mapping.numel()
    if T == 0:
        return
    NB, BS, H, D = k_cache.shape
    valid = slot_mapping >= 0
    last = torch.full((NB,), -1, dtype=torch.int64, device=k_cache.device)
    last.scatter_reduce_(0, torch.where(valid, slot_mapping // BS, 0),
                         torch.where(valid, slot_mapping % BS, -1), reduce="amax")
    HD = H * D
    _quest_meta_kernel[(T,)](
        k_cache, slot_mapping, last, s if s is not None else last, k_min, k_max,
        BS=BS, HD=HD, D=D, BLOCK_T=min(next_pow2(BS), 16), BLOCK_C=min(next_pow2(HD), 256),
        HAS_SCALE=s is not None, SCALE_PER_HEAD=s is not None and s.numel() > 1,
        META_BF16=k_min.dtype == torch.bfloat16,
    )


def quest_meta_reference(k_cache, block_table, seq_lens, *, k_scale=None,
                         dtype: torch.dtype = torch.float32):
    """Torch reference: (k_min, k_max) [num_blocks, H, D] over each sequence's live
    tokens (bf16: rounded outward); pages not referenced by any sequence are NaN."""
    NB, BS, H, D = k_cache.shape
    s = check_scale("k_scale", k_scale, H, k_cache.device)
    kf = k_cache.float()
    if s is not None:
        kf = kf * s.view(1, 1, -1, 1) if s.numel() > 1 else kf * s
    k_min, k_max = alloc_quest_meta(NB, H, D, k_cache.device, dtype)
    for b in range(block_table.shape[0]):
        n = int(seq_lens[b])
        for p in range((n + BS - 1) // BS):
            blk = int(block_table[b, p])
            live = kf[blk, : min(BS, n - p * BS)]  # [tokens, H, D]
            if dtype == torch.bfloat16:
                k_min[blk] = bf16_outward_reference(live.amin(0), up=False)
                k_max[blk] = bf16_outward_reference(live.amax(0), up=True)
            else:
                k_min[blk] = live.amin(0)
                k_max[blk] = live.amax(0)
    return k_min, k_max
