"""Paged decode attention (one query token per sequence), split-K stage 1 + LSE merge.

For each sequence b (length L = seq_lens[b]) and query head h, with kv head
g = h // (num_q_heads // num_kv_heads) and key range T = [L - W, L) (W =
``window_tokens``; all of [0, L) without a window)::

    out[b, h] = sum_{t in T} softmax_t(scale * q[b, h] . K[b, t, g]) * V[b, t, g]

where K/V of token t are read from block ``block_table[b, t // block_size]`` at
offset ``t % block_size`` and dequantized inside the kernel:

* bf16 / fp16 / fp32 cache: as stored;
* fp8 (``torch.float8_e4m3fn``): stored * k_scale (per tensor [1] or per kv head
  [num_kv_heads]); the scale is applied to the fp32 scores / output, so the
  tensor-core dot sees exact fp8 values;
* int4 / int2 KIVI (uint8 packed codes, ``quant=QuantKV``; see quant_write.py):
  code * scale + zero, keys of the unfinished last group from the
  full-precision residual buffer ``quant.k_residual[b]``.

Stage 1 (this file): grid (batch, num_kv_heads, num_splits). One program takes
all ``num_q_heads // num_kv_heads`` query heads of one kv head (GQA packing: each
K/V tile is read once) and one contiguous chunk of T, runs an fp32 online
softmax (exp2 domain) over tiles of BLOCK_N tokens and writes a normalised
partial output [batch, num_q_heads, num_splits, head_dim] plus its natural-log
LSE [batch, num_q_heads, num_splits] (-inf for an empty chunk). Stage 2 is
``lse_merge`` (lse_merge.py). A sequence with L = 0 gets output 0.

Output: float32 [batch, num_q_heads, head_dim] (and the LSE with
``return_lse=True``, usable to merge with other attention pieces).

On a GPU the dots run on q's dtype (bf16/fp16; fp32 q -> TF32); under the
interpreter (``INTERPRET``) everything is upcast to fp32 because its bf16
``tl.dot`` is broken.
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ._checks import KV_DTYPES, check, check_fp8_scale, check_shape, check_tensor
from ._interp import INTERPRET
from .lse_merge import lse_merge

__all__ = ["paged_decode", "paged_decode_reference", "gather_kv_reference", "default_num_splits"]

LOG2E = 1.4426950408889634


@triton.jit
def _unpack_codes(row_ptrs, mask_n, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, BITS: tl.constexpr):
    """Load packed rows [BLOCK_N, HEAD_DIM*BITS/8] (contiguous bytes) -> fp32 codes [BLOCK_N, HEAD_DIM].

    Channel d lives in byte d // (8 // BITS) at bit (d % (8 // BITS)) * BITS; the
    codes of one byte are split with shifts and interleaved back with tl.join.
    """
    ROW: tl.constexpr = HEAD_DIM * BITS // 8
    MASK: tl.constexpr = (1 << BITS) - 1
    raw = tl.load(row_ptrs[:, None] + tl.arange(0, ROW)[None, :], mask=mask_n[:, None], other=0).to(tl.int32)
    if BITS == 4:
        codes = tl.join(raw & MASK, (raw >> 4) & MASK)  # [BLOCK_N, ROW, 2]
    else:
        codes = tl.join(tl.join(raw & MASK, (raw >> 4) & MASK),
                        tl.join((raw >> 2) & MASK, (raw >> 6) & MASK))  # [BLOCK_N, ROW, 2, 2]
    return tl.reshape(codes, [BLOCK_N, HEAD_DIM]).to(tl.float32)


@triton.jit
def _paged_decode_split_kernel(
    q_ptr, k_ptr, v_ptr, bt_ptr, lens_ptr,
    k_scale_ptr, v_scale_ptr,  # fp8 scales (dummy otherwise)
    kq_scale_ptr, kq_zero_ptr, vq_scale_ptr, vq_zero_ptr, k_res_ptr,  # KIVI (dummy otherwise)
    part_out_ptr, part_lse_ptr,
    stride_qb, stride_qh, stride_bt,
    num_kv_heads, num_splits, split_tokens, window_tokens, qk_scale,
    GROUP: tl.constexpr,  # query heads per kv head
    BLOCK_G: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PAGE: tl.constexpr,  # block_size (tokens per block)
    KV_KIND: tl.constexpr,  # 0 float, 1 fp8, 2 KIVI int codes
    SCALE_PER_HEAD: tl.constexpr,
    BITS: tl.constexpr,
    GROUP_K: tl.constexpr,  # KIVI key group (tokens)
    GROUP_V: tl.constexpr,  # KIVI value group (channels)
    HAS_WINDOW: tl.constexpr,
    INTERPRET: tl.constexpr,
):
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    split = tl.program_id(2)
    seq_len = tl.load(lens_ptr + b)
    start = 0
    if HAS_WINDOW:
        start = tl.maximum(seq_len - window_tokens, 0)
    lo = start + split * split_tokens
    hi = tl.minimum(lo + split_tokens, seq_len)

    offs_g = tl.arange(0, BLOCK_G)
    offs_d = tl.arange(0, BLOCK_D)
    mask_g = offs_g < GROUP
    mask_d = offs_d < HEAD_DIM
    heads = kvh * GROUP + offs_g
    # [BLOCK_G, BLOCK_D] query heads of this kv head
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
                mask=mask_g[:, None] & mask_d[None, :], other=0.0)
    if INTERPRET:
        q = q.to(tl.float32)
    dot_ty = q.dtype

    ks = 1.0
    vs = 1.0
    if KV_KIND == 1:
        if SCALE_PER_HEAD:
            ks = tl.load(k_scale_ptr + kvh)
            vs = tl.load(v_scale_ptr + kvh)
        else:
            ks = tl.load(k_scale_ptr)
            vs = tl.load(v_scale_ptr)
    score_scale = qk_scale * ks  # qk_scale = softmax scale * log2(e)

    if KV_KIND == 2:
        ROW_BYTES: tl.constexpr = HEAD_DIM * BITS // 8
        quant_len = seq_len - seq_len % GROUP_K  # keys before this are packed codes

    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)

    for t0 in range(lo, hi, BLOCK_N):
        offs_n = t0 + tl.arange(0, BLOCK_N)
        mask_n = offs_n < hi
        blk = tl.load(bt_ptr + b * stride_bt + offs_n // PAGE, mask=mask_n, other=0).to(tl.int64)
        slot = blk * PAGE + offs_n % PAGE  # [BLOCK_N]
        mask_nd = mask_n[:, None] & mask_d[None, :]
        if KV_KIND == 2:
            row_off = (slot * num_kv_heads + kvh) * ROW_BYTES  # [BLOCK_N] start of each packed row
            # keys: per channel, one scale/zero per GROUP_K tokens of a block
            in_res = offs_n >= quant_len
            mk = mask_nd & ~in_res[:, None]
            kgrp = (blk * (PAGE // GROUP_K) + (offs_n % PAGE) // GROUP_K) * num_kv_heads + kvh
            kq = (kgrp[:, None] * HEAD_DIM + offs_d[None, :])
            k = _unpack_codes(k_ptr + row_off, mask_n & ~in_res, BLOCK_N, HEAD_DIM, BITS) \
                * tl.load(kq_scale_ptr + kq, mask=mk, other=0.0).to(tl.float32) \
                + tl.load(kq_zero_ptr + kq, mask=mk, other=0.0).to(tl.float32)
            mr = mask_nd & in_res[:, None]
            res_ptr = (((b * GROUP_K + offs_n % GROUP_K) * num_kv_heads + kvh) * HEAD_DIM)[:, None] \
                + offs_d[None, :]
            k_res = tl.load(k_res_ptr + res_ptr, mask=mr, other=0.0).to(tl.float32)
            k = tl.where(in_res[:, None], k_res, k)
            # values: per token, one scale/zero per GROUP_V channels
            NGV: tl.constexpr = HEAD_DIM // GROUP_V
            vq = ((slot * num_kv_heads + kvh) * NGV)[:, None] + tl.arange(0, NGV)[None, :]  # [BLOCK_N, NGV]
            v_sc = tl.load(vq_scale_ptr + vq, mask=mask_n[:, None], other=0.0).to(tl.float32)
            v_ze = tl.load(vq_zero_ptr + vq, mask=mask_n[:, None], other=0.0).to(tl.float32)
            v = tl.reshape(_unpack_codes(v_ptr + row_off, mask_n, BLOCK_N, HEAD_DIM, BITS), [BLOCK_N, NGV, GROUP_V])
            v = tl.reshape(v * v_sc[:, :, None] + v_ze[:, :, None], [BLOCK_N, HEAD_DIM])
        else:
            kv_off = (slot * num_kv_heads + kvh)[:, None] * HEAD_DIM + offs_d[None, :]
            k = tl.load(k_ptr + kv_off, mask=mask_nd, other=0.0)  # [BLOCK_N, BLOCK_D]
            v = tl.load(v_ptr + kv_off, mask=mask_nd, other=0.0)
        # [BLOCK_G, BLOCK_N] scores in log2 units
        s = tl.dot(q, tl.trans(k.to(dot_ty))) * score_scale
        s = tl.where(mask_n[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(dot_ty), v.to(dot_ty))
        m_i = m_new

    has = l_i > 0
    out = acc * vs / tl.where(has, l_i, 1.0)[:, None]
    out = tl.where(has[:, None], out, 0.0)
    lse = tl.where(has, (m_i + tl.log2(tl.where(has, l_i, 1.0))) * 0.6931471805599453, float("-inf"))
    row = (b * (num_kv_heads * GROUP) + heads) * num_splits + split  # [BLOCK_G]
    tl.store(part_out_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], out,
             mask=mask_g[:, None] & mask_d[None, :])
    tl.store(part_lse_ptr + row, lse, mask=mask_g)


def default_num_splits(batch: int, num_kv_heads: int, max_context_tokens: int, device) -> int:
    """Enough programs to fill the device, but at least ~256 tokens per split."""
    if torch.device(device).type == "cuda":
        sms = torch.cuda.get_device_properties(device).multi_processor_count
        want = -(-4 * sms // max(1, batch * num_kv_heads))
    else:
        want = 2
    return int(max(1, min(want, -(-max_context_tokens // 256), 64)))


def _check_block_table(block_table, seq_lens, num_blocks, block_size, window_tokens):
    """Every block-table entry a sequence will read must be a valid block id."""
    max_blocks = block_table.shape[1]
    n_blocks = (seq_lens.to(torch.int64) + block_size - 1) // block_size
    check(bool((n_blocks <= max_blocks).all()), "block_table",
          f"has {max_blocks} columns, a sequence needs {int(n_blocks.max())} blocks")
    first = torch.zeros_like(n_blocks)
    if window_tokens is not None:
        first = (seq_lens.to(torch.int64) - window_tokens).clamp_min(0) // block_size
    col = torch.arange(max_blocks, device=block_table.device)[None, :]
    read = (col >= first[:, None]) & (col < n_blocks[:, None])
    bad = read & ((block_table < 0) | (block_table >= num_blocks))
    if bool(bad.any()):
        b, c = (int(x) for x in bad.nonzero()[0])
        raise ValueError(f"block_table: entry [{b}, {c}] = {int(block_table[b, c])} is read but "
                         f"not a block id in [0, {num_blocks})")


def paged_decode(q, k_cache, v_cache, block_table, seq_lens, *, scale=None, window_tokens=None,
                 k_scale=None, v_scale=None, num_splits=None, quant=None,
                 return_lse: bool = False, check_bounds: bool = True, block_n: int | None = None,
                 out=None):
    """Decode attention over a paged KV cache; returns float32 [batch, num_q_heads, head_dim].

    ``quant``: a ``QuantKV`` (quant_write.py) when k_cache / v_cache are packed
    uint8 KIVI codes. ``check_bounds`` validates seq_lens / block_table on the
    host (a sync); pass False in a CUDA graph. ``out``: optional preallocated
    float32 [batch, num_q_heads, head_dim] result. ``block_n``: tokens per tile.
    """
    check_tensor(q, "q", ndim=3, dtypes=(torch.bfloat16, torch.float16, torch.float32), contiguous=True)
    batch, num_q_heads, head_dim = q.shape
    dev = q.device
    if quant is not None:
        check_tensor(k_cache, "k_cache", ndim=4, dtypes=(torch.uint8,), contiguous=True)
        check_tensor(v_cache, "v_cache", ndim=4, dtypes=(torch.uint8,), contiguous=True)
        quant.check(k_cache, v_cache, head_dim=head_dim, batch=batch)
        check(head_dim >= 16, "q", f"head_dim {head_dim} < 16 is not supported with packed codes")
    else:
        check_tensor(k_cache, "k_cache", ndim=4, dtypes=KV_DTYPES, contiguous=True)
        check_tensor(v_cache, "v_cache", ndim=4, dtypes=KV_DTYPES, contiguous=True)
        check_shape(k_cache, "k_cache", (None, None, None, head_dim))
    check(v_cache.shape == k_cache.shape, "v_cache", f"shape {tuple(v_cache.shape)} != k_cache {tuple(k_cache.shape)}")
    check(v_cache.dtype == k_cache.dtype, "v_cache", f"dtype {v_cache.dtype} != k_cache {k_cache.dtype}")
    num_blocks, block_size, num_kv_heads = k_cache.shape[:3]
    check(num_kv_heads > 0 and num_q_heads % num_kv_heads == 0, "q",
          f"num_q_heads {num_q_heads} is not a multiple of num_kv_heads {num_kv_heads}")
    check_tensor(block_table, "block_table", ndim=2, dtypes=(torch.int32,), contiguous=True)
    check(block_table.shape[0] == batch, "block_table", f"has {block_table.shape[0]} rows for batch {batch}")
    check_tensor(seq_lens, "seq_lens", ndim=1, dtypes=(torch.int32,), contiguous=True)
    check(seq_lens.shape[0] == batch, "seq_lens", f"has {seq_lens.shape[0]} entries for batch {batch}")
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache), ("block_table", block_table),
                    ("seq_lens", seq_lens)):
        check(t.device == dev, name, f"is on {t.device}, q on {dev}")
    fp8 = k_cache.dtype == torch.float8_e4m3fn
    if fp8:
        check_fp8_scale(k_scale, "k_scale", num_kv_heads, dev)
        check_fp8_scale(v_scale, "v_scale", num_kv_heads, dev)
        check(k_scale.shape == v_scale.shape, "v_scale", "must have the shape of k_scale")
    if window_tokens is not None:
        check(int(window_tokens) >= 1, "window_tokens", f"must be >= 1, got {window_tokens}")
        window_tokens = int(window_tokens)
    if check_bounds and batch:
        check(bool((seq_lens >= 0).all()), "seq_lens", "must be >= 0")
        _check_block_table(block_table, seq_lens, num_blocks, block_size, window_tokens)
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)

    max_ctx = block_table.shape[1] * block_size
    if window_tokens is not None:
        max_ctx = min(max_ctx, window_tokens)
    if num_splits is None:
        num_splits = default_num_splits(batch, num_kv_heads, max_ctx, dev)
    check(int(num_splits) >= 1, "num_splits", f"must be >= 1, got {num_splits}")
    num_splits = int(num_splits)
    BLOCK_N = block_n or (32 if INTERPRET else 64)
    split_tokens = max(BLOCK_N, triton.cdiv(triton.cdiv(max(max_ctx, 1), num_splits), BLOCK_N) * BLOCK_N)

    group = num_q_heads // num_kv_heads
    part_out = torch.empty(batch, num_q_heads, num_splits, head_dim, dtype=torch.float32, device=dev)
    part_lse = torch.empty(batch, num_q_heads, num_splits, dtype=torch.float32, device=dev)
    if batch and num_q_heads:
        dummy = seq_lens
        kv_kind = 2 if quant is not None else (1 if fp8 else 0)
        qt = quant
        _paged_decode_split_kernel[(batch, num_kv_heads, num_splits)](
            q, k_cache, v_cache, block_table, seq_lens,
            k_scale if fp8 else dummy, v_scale if fp8 else dummy,
            qt.k_scale if qt else dummy, qt.k_zero if qt else dummy,
            qt.v_scale if qt else dummy, qt.v_zero if qt else dummy,
            qt.k_residual if qt else dummy,
            part_out, part_lse,
            q.stride(0), q.stride(1), block_table.stride(0),
            num_kv_heads, num_splits, split_tokens, window_tokens or 0, float(scale) * LOG2E,
            GROUP=group,
            BLOCK_G=max(16, triton.next_power_of_2(group)),
            HEAD_DIM=head_dim,
            BLOCK_D=max(16, triton.next_power_of_2(head_dim)),
            BLOCK_N=BLOCK_N,
            PAGE=block_size,
            KV_KIND=kv_kind,
            SCALE_PER_HEAD=bool(fp8 and k_scale.numel() > 1),
            BITS=qt.bits if qt else 8,
            GROUP_K=qt.group_k_tokens if qt else 1,
            GROUP_V=qt.group_v_channels if qt else 1,
            HAS_WINDOW=window_tokens is not None,
            INTERPRET=INTERPRET,
        )
    out, lse = lse_merge(part_out, part_lse, out=out)
    return (out, lse) if return_lse else out


def gather_kv_reference(k_cache, v_cache, block_table, seq_lens, b, *, k_scale=None, v_scale=None,
                        quant=None):
    """Dequantized float64 K, V [seq_len, num_kv_heads, head_dim] of sequence b, in token order."""
    L = int(seq_lens[b])
    if quant is not None:
        from .quant_write import quant_dequant_reference
        k, v = quant_dequant_reference(k_cache, v_cache, quant, block_table[b], L, b)
        return k.double(), v.double()
    bs = k_cache.shape[1]
    t = torch.arange(L, device=k_cache.device)
    blocks = block_table[b].long()[t // bs]
    k = k_cache[blocks, t % bs].double()
    v = v_cache[blocks, t % bs].double()
    if k_cache.dtype == torch.float8_e4m3fn:
        k = k * k_scale.double().view(1, -1, 1)
        v = v * v_scale.double().view(1, -1, 1)
    return k, v


def paged_decode_reference(q, k_cache, v_cache, block_table, seq_lens, *, scale=None,
                           window_tokens=None, k_scale=None, v_scale=None, quant=None,
                           return_lse: bool = False, **_ignored):
    """Plain torch float64 version of ``paged_decode`` (returns float64)."""
    batch, hq, d = q.shape
    hkv = k_cache.shape[2]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    out = torch.zeros(batch, hq, d, dtype=torch.float64, device=q.device)
    lse = torch.full((batch, hq), float("-inf"), dtype=torch.float64, device=q.device)
    for b in range(batch):
        k, v = gather_kv_reference(k_cache, v_cache, block_table, seq_lens, b,
                                   k_scale=k_scale, v_scale=v_scale, quant=quant)
        if window_tokens is not None:
            k, v = k[-window_tokens:], v[-window_tokens:]
        if k.shape[0] == 0:
            continue
        rep = hq // hkv
        k = k.repeat_interleave(rep, dim=1)  # [L, hq, d]
        v = v.repeat_interleave(rep, dim=1)
        s = torch.einsum("hd,thd->ht", q[b].double(), k) * scale
        lse[b] = torch.logsumexp(s, dim=1)
        out[b] = torch.einsum("ht,thd->hd", torch.softmax(s, dim=1), v)
    return (out, lse) if return_lse else out
