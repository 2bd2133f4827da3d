"""MLA decode attention in absorbed form over the paged latent cache.

Computes, for every sequence b and head h (all heads share the one latent row
per token, so this is MQA over a 576-wide key)::

    s[t]   = scale * (q_latent[b,h] . c[t] + q_rope[b,h] . k_rope[t])   t < seq_lens[b]
    p      = softmax(s)
    out[b,h] = sum_t p[t] * c[t]            # [kv_lora_rank], still in latent space

where row t of the cache is ``[c (kv_lora_rank) | k_rope (rope_dim)]`` (see
mla_cache.py). The caller has absorbed W_uk into the query
(q_latent = W_uk[h] @ q_nope[h]) and applies W_uv[h] (and W_o) to ``out``
afterwards, so per-head K_nope and V are never materialised.

Kernel: grid (batch, cdiv(num_heads, BLOCK_H), num_splits); a program packs
BLOCK_H heads (16 / 32 / 64, see mla_head_block) so every latent tile is read
once per head block, walks its
share of the context in BLOCK_N-token tiles through the block table (any
block_size), and keeps an online softmax. With num_splits > 1 partial results
(normalised acc + log-sum-exp) go to an fp32 workspace and a second small
kernel merges them. fp8 caches: the per-tensor scale is factored out of the
dot products (scores * scale, output * scale); e4m3 -> bf16 is exact.

Precision: on a GPU the dots run in bf16 with fp32 accumulation (q is rounded
to bf16, like FlashMLA / vLLM); under the interpreter (bf16 tl.dot is broken
there) they run in fp32.

Reference: :func:`mla_decode_reference` (absorbed, float64) and
:func:`mla_unabsorbed_reference` (per-head K_nope / V decompressed with W_uk,
W_uv in float64, plain attention), which the tests compare against.
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ._sparse_common import (
    CACHE_DTYPES,
    FLOAT_DTYPES,
    INTERPRET,
    check_paged_index,
    check_scale,
    check_tensor,
    next_pow2,
)
from .mla_cache import mla_read_dense


@triton.jit
def _mla_decode_kernel(
    ql_ptr, qr_ptr, cache_ptr, bt_ptr, lens_ptr, kscale_ptr,
    out_ptr, ws_acc_ptr, ws_lse_ptr,
    H, sm_scale_log2,
    stride_qlb, stride_qlh, stride_qrb, stride_qrh, stride_bt, stride_ob, stride_oh,
    BS: tl.constexpr, R: tl.constexpr, P: tl.constexpr,
    BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_P: tl.constexpr,
    NUM_SPLITS: tl.constexpr, HAS_SCALE: tl.constexpr, INTERP: tl.constexpr,
):
    b = tl.program_id(0)
    hb = tl.program_id(1)
    sp = tl.program_id(2)
    offs_h = hb * BLOCK_H + tl.arange(0, BLOCK_H)
    mh = offs_h < H
    offs_r = tl.arange(0, BLOCK_R)
    offs_p = tl.arange(0, BLOCK_P)
    mr = offs_r < R
    mp = offs_p < P

    # q tiles [BLOCK_H, BLOCK_R], [BLOCK_H, BLOCK_P]
    ql = tl.load(ql_ptr + b * stride_qlb + offs_h[:, None] * stride_qlh + offs_r[None, :],
                 mask=mh[:, None] & mr[None, :], other=0.0).to(tl.float32)
    qr = tl.load(qr_ptr + b * stride_qrb + offs_h[:, None] * stride_qrh + offs_p[None, :],
                 mask=mh[:, None] & mp[None, :], other=0.0).to(tl.float32)
    qk_scale = sm_scale_log2
    if HAS_SCALE:
        kscale = tl.load(kscale_ptr)
        qk_scale = qk_scale * kscale
    if not INTERP:
        ql_d = ql.to(tl.bfloat16)
        qr_d = qr.to(tl.bfloat16)
    else:
        ql_d = ql
        qr_d = qr

    seq_len = tl.load(lens_ptr + b)
    n_tiles = (seq_len + BLOCK_N - 1) // BLOCK_N
    tiles_per_split = (n_tiles + NUM_SPLITS - 1) // NUM_SPLITS
    t_begin = sp * tiles_per_split * BLOCK_N
    t_end = tl.minimum(t_begin + tiles_per_split * BLOCK_N, seq_len)

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_R], tl.float32)
    for start in range(t_begin, t_end, BLOCK_N):
        t = start + tl.arange(0, BLOCK_N)
        mt = t < t_end
        blk = tl.load(bt_ptr + b * stride_bt + t // BS, mask=mt, other=0).to(tl.int64)
        row = (blk * BS + t % BS) * (R + P)  # [BLOCK_N] element offset of each latent row
        c = tl.load(cache_ptr + row[:, None] + offs_r[None, :], mask=mt[:, None] & mr[None, :], other=0.0)
        kr = tl.load(cache_ptr + row[:, None] + R + offs_p[None, :], mask=mt[:, None] & mp[None, :], other=0.0)
        if INTERP:
            c = c.to(tl.float32)
            kr = kr.to(tl.float32)
        else:
            c = c.to(tl.bfloat16)
            kr = kr.to(tl.bfloat16)
        s = tl.dot(ql_d, tl.trans(c)) + tl.dot(qr_d, tl.trans(kr))  # [BLOCK_H, BLOCK_N]
        s = s * qk_scale
        s = tl.where(mt[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        if INTERP:
            pv = tl.dot(p, c)
        else:
            pv = tl.dot(p.to(tl.bfloat16), c)
        acc = acc * alpha[:, None] + pv
        m_i = m_new

    safe_l = tl.where(l_i > 0, l_i, 1.0)
    o = acc / safe_l[:, None]
    if HAS_SCALE:
        o = o * kscale
    if NUM_SPLITS == 1:
        tl.store(out_ptr + b * stride_ob + offs_h[:, None] * stride_oh + offs_r[None, :],
                 o.to(out_ptr.dtype.element_ty), mask=mh[:, None] & mr[None, :])
    else:
        # workspace acc [B, H, S, R], lse [B, H, S] (log2 domain; -inf for an empty split)
        lse = tl.where(l_i > 0, m_i + tl.log2(safe_l), float("-inf"))
        base = (b * H + offs_h) * NUM_SPLITS + sp
        tl.store(ws_acc_ptr + base[:, None] * R + offs_r[None, :], o, mask=mh[:, None] & mr[None, :])
        tl.store(ws_lse_ptr + base, lse, mask=mh)


@triton.jit
def _mla_merge_kernel(ws_acc_ptr, ws_lse_ptr, out_ptr, H, stride_ob, stride_oh,
                      R: tl.constexpr, BLOCK_R: tl.constexpr, NUM_SPLITS: tl.constexpr,
                      BLOCK_S: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    offs_s = tl.arange(0, BLOCK_S)
    offs_r = tl.arange(0, BLOCK_R)
    ms = offs_s < NUM_SPLITS
    base = (b * H + h) * NUM_SPLITS
    lse = tl.load(ws_lse_ptr + base + offs_s, mask=ms, other=float("-inf"))
    m = tl.max(lse, 0)
    m = tl.where(m == float("-inf"), 0.0, m)
    w = tl.exp2(lse - m)  # [BLOCK_S]; empty splits weigh 0
    acc = tl.load(ws_acc_ptr + (base + offs_s)[:, None] * R + offs_r[None, :],
                  mask=ms[:, None] & (offs_r[None, :] < R), other=0.0)
    tot = tl.sum(w, 0)
    o = tl.sum(acc * w[:, None], 0) / tl.where(tot > 0, tot, 1.0)
    tl.store(out_ptr + b * stride_ob + h * stride_oh + offs_r, o.to(out_ptr.dtype.element_ty),
             mask=offs_r < R)


def mla_head_block(num_heads: int) -> tuple[int, int]:
    """(heads per program, num_warps). Every program re-reads the whole latent context,
    so more heads per program means fewer passes over the cache: 16 (the tl.dot
    minimum; 8 warps), 32 (8 warps) or 64 (16 warps: 128 registers/thread, no spills
    for a 512-wide latent on sm_90, 128 KiB shared memory)."""
    bh = min(64, max(16, triton.next_power_of_2(max(1, num_heads))))
    return bh, (16 if bh == 64 else 8)


def _check(q_latent, q_rope, latent_cache, block_table, seq_lens, scale, cache_scale,
           check_bounds=True):
    check_tensor("latent_cache", latent_cache, ndim=3, dtypes=CACHE_DTYPES)
    dev = latent_cache.device
    check_tensor("q_latent", q_latent, ndim=3, dtypes=FLOAT_DTYPES, device=dev)
    check_tensor("q_rope", q_rope, ndim=3, dtypes=FLOAT_DTYPES, device=dev)
    B, H, R = q_latent.shape
    if q_rope.shape[:2] != (B, H):
        raise ValueError(f"q_rope: shape {tuple(q_rope.shape)} does not match q_latent [{B}, {H}, ...]")
    P = q_rope.shape[2]
    if R + P != latent_cache.shape[2]:
        raise ValueError(
            f"latent_cache: width {latent_cache.shape[2]} != kv_lora_rank {R} (q_latent) + "
            f"rope_dim {P} (q_rope)")
    num_blocks, bs, _ = latent_cache.shape
    if check_bounds:  # host syncs; pass check_bounds=False inside CUDA graphs / timing loops
        check_paged_index(block_table, seq_lens, num_blocks, bs, dev)
    else:
        check_tensor("block_table", block_table, ndim=2, dtypes=(torch.int32,), device=dev)
        check_tensor("seq_lens", seq_lens, ndim=1, dtypes=(torch.int32,), device=dev)
    if block_table.shape[0] != B:
        raise ValueError(f"block_table: batch {block_table.shape[0]} != q_latent batch {B}")
    if scale is None or not float(scale) > 0:
        raise ValueError("scale: a positive softmax scale is required (DeepSeek: 1/sqrt(qk_nope + qk_rope))")
    fp8 = latent_cache.dtype == torch.float8_e4m3fn
    if fp8 and cache_scale is None:
        raise ValueError("cache_scale: required for a float8_e4m3fn latent_cache")
    if not fp8 and cache_scale is not None:
        raise ValueError("cache_scale: only valid for a float8_e4m3fn latent_cache")
    s = check_scale("cache_scale", cache_scale, 1, dev)
    if s is not None and s.numel() != 1:
        raise ValueError("cache_scale: the latent cache uses one per-tensor scale")
    return B, H, R, P, s


def mla_decode(q_latent: torch.Tensor, q_rope: torch.Tensor, latent_cache: torch.Tensor,
               block_table: torch.Tensor, seq_lens: torch.Tensor, *, scale: float,
               cache_scale=None, num_splits: int | None = None, block_n: int = 16,
               out: torch.Tensor | None = None, check_bounds: bool = True) -> torch.Tensor:
    """Absorbed MLA decode.

    q_latent [B, H, kv_lora_rank], q_rope [B, H, rope_dim], latent_cache
    [num_blocks, block_size, kv_lora_rank + rope_dim], block_table int32 [B, max_blocks],
    seq_lens int32 [B]; ``scale`` is the softmax scale. Returns out [B, H, kv_lora_rank]
    (dtype of q_latent); a sequence of length 0 gives zeros. ``check_bounds=False``
    skips the host-side seq_lens / block_table range checks (device syncs).
    """
    B, H, R, P, s = _check(q_latent, q_rope, latent_cache, block_table, seq_lens, scale, cache_scale,
                           check_bounds)
    bs = latent_cache.shape[1]
    if out is None:
        out = torch.empty(B, H, R, dtype=q_latent.dtype, device=q_latent.device)
    elif out.shape != (B, H, R) or out.stride(-1) != 1:
        raise ValueError(f"out: expected [{B}, {H}, {R}] with a contiguous last dim")
    if B == 0 or H == 0:
        return out
    if num_splits is None:
        if INTERPRET:
            num_splits = 1
        else:  # ~1024+ tokens per split, at most 32 splits (one sync unless given)
            max_len = int(seq_lens.max()) if B else 0
            num_splits = max(1, min(32, max_len // 1024))
    if num_splits < 1:
        raise ValueError("num_splits: must be >= 1")
    BLOCK_H, warps = mla_head_block(H)
    grid = (B, triton.cdiv(H, BLOCK_H), num_splits)
    if num_splits > 1:
        ws_acc = torch.empty(B, H, num_splits, R, dtype=torch.float32, device=out.device)
        ws_lse = torch.empty(B, H, num_splits, dtype=torch.float32, device=out.device)
    else:
        ws_acc = ws_lse = out
    _mla_decode_kernel[grid](
        q_latent, q_rope, latent_cache, block_table, seq_lens, s if s is not None else seq_lens,
        out, ws_acc, ws_lse,
        H, float(scale) * 1.4426950408889634,
        q_latent.stride(0), q_latent.stride(1), q_rope.stride(0), q_rope.stride(1),
        block_table.stride(0), out.stride(0), out.stride(1),
        BS=bs, R=R, P=P, BLOCK_H=BLOCK_H, BLOCK_N=block_n, BLOCK_R=next_pow2(R),
        BLOCK_P=next_pow2(P, 16), NUM_SPLITS=num_splits, HAS_SCALE=s is not None,
        INTERP=INTERPRET, num_warps=warps if R >= 256 else 4,
    )
    if num_splits > 1:
        _mla_merge_kernel[(B, H)](ws_acc, ws_lse, out, H, out.stride(0), out.stride(1),
                                  R=R, BLOCK_R=next_pow2(R), NUM_SPLITS=num_splits,
                                  BLOCK_S=next_pow2(num_splits))
    return out


def mla_decode_reference(q_latent, q_rope, latent_cache, block_table, seq_lens, *, scale,
                         cache_scale=None) -> torch.Tensor:
    """Absorbed MLA decode in float64 torch (one sequence at a time). Returns float64 [B, H, R]."""
    B, H, R, P, s = _check(q_latent, q_rope, latent_cache, block_table, seq_lens, scale, cache_scale)
    out = torch.zeros(B, H, R, dtype=torch.float64, device=q_latent.device)
    for b in range(B):
        n = int(seq_lens[b])
        if n == 0:
            continue
        rows = mla_read_dense(latent_cache, block_table[b], n, scale=s).double()  # [n, R+P]
        sc = (q_latent[b].double() @ rows[:, :R].T + q_rope[b].double() @ rows[:, R:].T) * scale
        out[b] = torch.softmax(sc, dim=-1) @ rows[:, :R]
    return out


def mla_unabsorbed_reference(q_nope, q_rope, latent_cache, block_table, seq_lens, w_uk, w_uv,
                             *, scale, cache_scale=None) -> torch.Tensor:
    """Unabsorbed MLA attention in float64: for every head h decompress
    K_nope_h = c @ w_uk[h] ([n, d_nope]) and V_h = c @ w_uv[h] ([n, d_v]), attend
    with q_nope[b,h] . K_nope_h + q_rope[b,h] . k_rope, return [B, H, d_v].
    w_uk [H, kv_lora_rank, d_nope], w_uv [H, kv_lora_rank, d_v]."""
    B, H, d_nope = q_nope.shape
    R = w_uk.shape[1]
    if w_uk.shape != (H, R, d_nope):
        raise ValueError(f"w_uk: expected [{H}, kv_lora_rank, {d_nope}], got {tuple(w_uk.shape)}")
    if w_uv.shape[:2] != (H, R):
        raise ValueError(f"w_uv: expected [{H}, {R}, d_v], got {tuple(w_uv.shape)}")
    if R + q_rope.shape[2] != latent_cache.shape[2]:
        raise ValueError("latent_cache: width != kv_lora_rank (w_uk) + rope_dim (q_rope)")
    s = None if cache_scale is None else check_scale("cache_scale", cache_scale, 1, latent_cache.device)
    out = torch.zeros(B, H, w_uv.shape[2], dtype=torch.float64, device=q_nope.device)
    for b in range(B):
        n = int(seq_lens[b])
        if n == 0:
            continue
        rows = mla_read_dense(latent_cache, block_table[b], n, scale=s).double()
        c, kr = rows[:, :R], rows[:, R:]
        for h in range(H):
            k_nope = c @ w_uk[h].double()  # [n, d_nope]
            v = c @ w_uv[h].double()  # [n, d_v]
            sc = (k_nope @ q_nope[b, h].double() + kr @ q_rope[b, h].double()) * scale
            out[b, h] = torch.softmax(sc, dim=0) @ v
    return out


def mla_decode_bytes(seq_lens, num_heads: int, kv_lora_rank: int, rope_dim: int,
                     cache_elem_bytes: int, *, block_size: int, q_elem_bytes: int = 2,
                     num_splits: int = 1) -> int:
    """Bytes one mla_decode call must move: latent rows read (once per head block, see
    mla_head_block: ceil(num_heads / min(64, max(16, next_pow2(num_heads))))),
    block-table entries (int32), seq_lens, q read, out written, and split partials
    written and read back (fp32 acc + lse)."""
    lens = [int(x) for x in seq_lens]
    B = len(lens)
    W = kv_lora_rank + rope_dim
    head_blocks = math.ceil(num_heads / mla_head_block(num_heads)[0])
    kv = sum(lens) * W * cache_elem_bytes * head_blocks
    table = sum(math.ceil(n / block_size) for n in lens) * 4
    q_o = B * num_heads * (W + kv_lora_rank) * q_elem_bytes
    ws = 0 if num_splits == 1 else 2 * B * num_heads * num_splits * (kv_lora_rank + 1) * 4
    return kv + table + B * 4 + q_o + ws
