"""Compressed sparse attention decode: a selector picks the top-k compressed
entries for the current query, then one softmax runs over those k entries plus
the local window of recent raw tokens.

Selector (kernel ``_csa_score_kernel``, grid (batch, num_kv_heads, entry tiles)):
``score[b, g, e] = max_{h in group g} q[b,h] . comp_k[b, e, g]`` (GQA: the query
heads of kv head g share one selection, combined by max); entries past
``num_groups[b]`` score -inf. ``torch.topk`` keeps ``min(top_k, num_groups[b])``
entries per (sequence, kv head); unused slots are -1. Selection is per kv head
(the compressed store is contiguous per sequence, so heads may read different
entries).

Attention (kernel ``_csa_attn_kernel``, grid (batch, num_kv_heads)): for every
query head h of group g::

    s_e = scale * q_h . comp_k[e]   (selected e)      s_t = scale * q_h . local_k[t]
    out_h = softmax([s_e, s_t]) @ [comp_v[e], local_v[t]]

with an online softmax over two loops (selected entries, then local tokens). A
recent token may be both in a selected compressed entry and in the local window;
both are attended (the compressed entry is a summary, the window the detail).

Read entries per step per kv head: ``min(top_k, n // m) + min(n, window)``
(plus the n // m selector keys scored: the selector reads all compressed K).

Precision: fp32 math (fp32 tl.dot; TF32 on a GPU). Reference:
:func:`csa_decode_reference` (float64, same selection rule).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._sparse_common import FLOAT_DTYPES, check_tensor, next_pow2


@triton.jit
def _csa_score_kernel(q_ptr, ck_ptr, ng_ptr, out_ptr, Hkv, G_MAX,
                      stride_qb, stride_qh,
                      D: tl.constexpr, GRP: tl.constexpr, BLOCK_E: tl.constexpr,
                      BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    g = tl.program_id(1)
    e = tl.program_id(2) * BLOCK_E + tl.arange(0, BLOCK_E)
    ng = tl.load(ng_ptr + b)
    me = e < ng
    offs_d = tl.arange(0, BLOCK_D)
    md = offs_d < D
    row = ((b * G_MAX + e).to(tl.int64) * Hkv + g) * D
    k = tl.load(ck_ptr + row[:, None] + offs_d[None, :], mask=me[:, None] & md[None, :],
                other=0.0).to(tl.float32)
    best = tl.full([BLOCK_E], float("-inf"), tl.float32)
    for i in range(GRP):
        q = tl.load(q_ptr + b * stride_qb + (g * GRP + i) * stride_qh + offs_d, mask=md,
                    other=0.0).to(tl.float32)
        best = tl.maximum(best, tl.sum(k * q[None, :], 1))
    best = tl.where(me, best, float("-inf"))
    tl.store(out_ptr + (b * Hkv + g) * G_MAX + e, best, mask=e < G_MAX)


@triton.jit
def _online_step(s, vt, m_i, l_i, acc):
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p, vt)
    return m_new, l_i, acc


@triton.jit
def _csa_attn_kernel(
    q_ptr, ck_ptr, cv_ptr, sel_ptr, lk_ptr, lv_ptr, llen_ptr, out_ptr,
    Hkv, G_MAX, W, TOPK, qk_scale,
    stride_qb, stride_qh, stride_ob, stride_oh,
    D: tl.constexpr, GRP: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    b = tl.program_id(0)
    g = tl.program_id(1)
    offs_g = tl.arange(0, BLOCK_G)
    mg = offs_g < GRP
    heads = g * GRP + offs_g
    offs_d = tl.arange(0, BLOCK_D)
    md = offs_d < D
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
                mask=mg[:, None] & md[None, :], other=0.0).to(tl.float32)
    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.full([BLOCK_G], 0.0, tl.float32)
    acc = tl.full([BLOCK_G, BLOCK_D], 0.0, tl.float32)

    # 1) selected compressed entries
    for j0 in range(0, TOPK, BLOCK_N):
        j = j0 + tl.arange(0, BLOCK_N)
        e = tl.load(sel_ptr + (b * Hkv + g) * TOPK + j, mask=j < TOPK, other=-1)
        me = e >= 0
        row = ((b * G_MAX + tl.where(me, e, 0)).to(tl.int64) * Hkv + g) * D
        m2 = me[:, None] & md[None, :]
        kt = tl.load(ck_ptr + row[:, None] + offs_d[None, :], mask=m2, other=0.0).to(tl.float32)
        vt = tl.load(cv_ptr + row[:, None] + offs_d[None, :], mask=m2, other=0.0).to(tl.float32)
        s = tl.dot(q, tl.trans(kt)) * qk_scale
        s = tl.where(me[None, :], s, float("-inf"))
        if tl.max(tl.max(s, 1), 0) > float("-inf"):
            m_i, l_i, acc = _online_step(s, vt, m_i, l_i, acc)

    # 2) local window of raw tokens
    n_loc = tl.load(llen_ptr + b)
    for t0 in range(0, n_loc, BLOCK_N):
        t = t0 + tl.arange(0, BLOCK_N)
        mt = t < n_loc
        row = ((b * W + t).to(tl.int64) * Hkv + g) * D
        m2 = mt[:, None] & md[None, :]
        kt = tl.load(lk_ptr + row[:, None] + offs_d[None, :], mask=m2, other=0.0).to(tl.float32)
        vt = tl.load(lv_ptr + row[:, None] + offs_d[None, :], mask=m2, other=0.0).to(tl.float32)
        s = tl.dot(q, tl.trans(kt)) * qk_scale
        s = tl.where(mt[None, :], s, float("-inf"))
        m_i, l_i, acc = _online_step(s, vt, m_i, l_i, acc)

    o = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    tl.store(out_ptr + b * stride_ob + heads[:, None] * stride_oh + offs_d[None, :],
             o.to(out_ptr.dtype.element_ty), mask=mg[:, None] & md[None, :])


def _check(q, comp_k, comp_v, num_groups, local_k, local_v, local_lens, top_k, check_bounds=True):
    check_tensor("q", q, ndim=3, dtypes=FLOAT_DTYPES)
    dev = q.device
    B, Hq, D = q.shape
    check_tensor("comp_k", comp_k, ndim=4, dtypes=FLOAT_DTYPES, device=dev)
    check_tensor("comp_v", comp_v, ndim=4, dtypes=(comp_k.dtype,), device=dev)
    check_tensor("local_k", local_k, ndim=4, dtypes=FLOAT_DTYPES, device=dev)
    check_tensor("local_v", local_v, ndim=4, dtypes=(local_k.dtype,), device=dev)
    check_tensor("num_groups", num_groups, ndim=1, dtypes=(torch.int32,), device=dev)
    check_tensor("local_lens", local_lens, ndim=1, dtypes=(torch.int32,), device=dev)
    if comp_k.shape[0] != B or comp_k.shape[3] != D or comp_v.shape != comp_k.shape:
        raise ValueError(f"comp_k: expected [{B}, max_groups, num_kv_heads, {D}] (comp_v alike)")
    Bc, G_MAX, Hkv, _ = comp_k.shape
    if local_k.shape[0] != B or local_k.shape[2:] != (Hkv, D) or local_v.shape != local_k.shape:
        raise ValueError(f"local_k: expected [{B}, window, {Hkv}, {D}] (local_v alike)")
    if Hq % Hkv:
        raise ValueError(f"q: {Hq} query heads not a multiple of {Hkv} kv heads")
    if num_groups.shape[0] != B or local_lens.shape[0] != B:
        raise ValueError(f"num_groups/local_lens: expected [{B}]")
    if check_bounds and B and (int(num_groups.max()) > G_MAX or int(num_groups.min()) < 0):
        raise ValueError(f"num_groups: must lie in [0, {G_MAX}]")
    if check_bounds and B and (int(local_lens.max()) > local_k.shape[1] or int(local_lens.min()) < 0):
        raise ValueError(f"local_lens: must lie in [0, {local_k.shape[1]}]")
    if int(top_k) < 1 or int(top_k) > G_MAX:
        raise ValueError(f"top_k: must be in [1, max_groups={G_MAX}], got {top_k}")
    return B, Hq, Hkv, D, G_MAX


def csa_select(q, comp_k, num_groups, top_k: int) -> torch.Tensor:
    """Top-k compressed entries per (sequence, kv head): int64 [B, Hkv, top_k], -1 = unused."""
    B, Hq, D = q.shape
    _, G_MAX, Hkv, _ = comp_k.shape
    scores = torch.empty(B, Hkv, G_MAX, dtype=torch.float32, device=q.device)
    BLOCK_E = min(16, next_pow2(G_MAX))
    _csa_score_kernel[(B, Hkv, triton.cdiv(G_MAX, BLOCK_E))](
        q, comp_k, num_groups, scores, Hkv, G_MAX, q.stride(0), q.stride(1),
        D=D, GRP=Hq // Hkv, BLOCK_E=BLOCK_E, BLOCK_D=next_pow2(D))
    vals, idx = torch.topk(scores, int(top_k), dim=-1)
    return torch.where(vals > float("-inf"), idx, -1)


def csa_decode(q, comp_k, comp_v, num_groups, local_k, local_v, local_lens, *, top_k: int,
               scale: float | None = None, return_selection: bool = False,
               check_bounds: bool = True, out: torch.Tensor | None = None):
    """q [B, Hq, D]; comp_k/comp_v [B, max_groups, Hkv, D] + num_groups int32 [B]
    (csa_compress); local_k/local_v [B, window, Hkv, D] + local_lens int32 [B]
    (csa_local_window). Returns out [B, Hq, D] (q.dtype) [, selection int64 [B, Hkv, top_k]].
    ``check_bounds=False`` skips the num_groups / local_lens range checks (device syncs)."""
    B, Hq, Hkv, D, G_MAX = _check(q, comp_k, comp_v, num_groups, local_k, local_v, local_lens, top_k,
                                  check_bounds)
    scale = D ** -0.5 if scale is None else float(scale)
    sel = csa_select(q, comp_k, num_groups, top_k).contiguous()
    if out is None:
        out = torch.empty_like(q)
    elif out.shape != q.shape or not out.is_contiguous():
        raise ValueError(f"out: expected contiguous {tuple(q.shape)}")
    GRP = Hq // Hkv
    _csa_attn_kernel[(B, Hkv)](
        q, comp_k, comp_v, sel, local_k, local_v, local_lens, out,
        Hkv, G_MAX, local_k.shape[1], int(top_k), scale * 1.4426950408889634,
        q.stride(0), q.stride(1), out.stride(0), out.stride(1),
        D=D, GRP=GRP, BLOCK_G=max(16, next_pow2(GRP)), BLOCK_N=16, BLOCK_D=next_pow2(D, 16),
    )
    return (out, sel) if return_selection else out


def csa_decode_reference(q, comp_k, comp_v, num_groups, local_k, local_v, local_lens, *,
                         top_k: int, scale: float | None = None, selection=None):
    """Float64 reference. Selection by the same rule (max over the group's heads of
    q . comp_k, top-k) unless ``selection`` [B, Hkv, top_k] is given. Returns
    (out float64 [B, Hq, D], selection)."""
    B, Hq, Hkv, D, G_MAX = _check(q, comp_k, comp_v, num_groups, local_k, local_v, local_lens, top_k)
    scale = D ** -0.5 if scale is None else float(scale)
    GRP = Hq // Hkv
    out = torch.zeros(B, Hq, D, dtype=torch.float64, device=q.device)
    sel_all = torch.full((B, Hkv, int(top_k)), -1, dtype=torch.int64, device=q.device)
    for b in range(B):
        ng, nl = int(num_groups[b]), int(local_lens[b])
        for g in range(Hkv):
            qg = q[b, g * GRP:(g + 1) * GRP].double()  # [GRP, D]
            ck = comp_k[b, :ng, g].double()
            if selection is None:
                sc = (qg @ ck.T).amax(0) if ng else torch.zeros(0, dtype=torch.float64)
                idx = torch.topk(sc, min(int(top_k), ng)).indices if ng else sc.long()
            else:
                idx = selection[b, g][selection[b, g] >= 0]
            sel_all[b, g, : idx.numel()] = idx
            keys = torch.cat([ck[idx], local_k[b, :nl, g].double()])
            vals = torch.cat([comp_v[b, idx, g].double(), local_v[b, :nl, g].double()])
            if keys.shape[0]:
                p = torch.softmax(qg @ keys.T * scale, dim=-1)
                out[b, g * GRP:(g + 1) * GRP] = p @ vals
    return out, sel_all
