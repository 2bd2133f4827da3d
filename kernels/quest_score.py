"""Quest page scores: an upper bound on q . k over the keys of each page.

For query head h, kv head g = h // (num_q_heads // num_kv_heads) and page p
(physical block ``block_table[b, p]``)::

    bound[b, h, p] = sum_c max(q[b,h,c] * k_max[blk, g, c], q[b,h,c] * k_min[blk, g, c])

which is >= q . k for every key of the page (channel-wise the product is maximised
at one end of [min, max]). Unscaled (no 1/sqrt(d)); only the order matters.

GQA: the query heads of one kv head share its pages, so they are combined by
**max** over the group: ``score[b, g, p] = max_{h in group g} bound[b, h, p]``, the
largest logit any head of the group could reach in the page. (quest_select then
combines kv heads, by max by default, because part 1's paged_decode reads one
block table per sequence.) Pages past a sequence's end score -inf.

Kernel: grid (batch, num_kv_heads, cdiv(max_pages, BLOCK_P)); a program loads the
min/max tiles [BLOCK_P, head_dim] of its pages once and loops over the group's
query heads. Reads 2 * meta_elem_bytes * head_dim bytes per page per kv head instead of
block_size * head_dim * elem_bytes of keys (meta_elem_bytes 4 for fp32, 2 for bf16).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._sparse_common import FLOAT_DTYPES, check_tensor, next_pow2


@triton.jit
def _quest_score_kernel(
    q_ptr, kmin_ptr, kmax_ptr, bt_ptr, lens_ptr, out_ptr,
    Hkv, max_pages, stride_qb, stride_qh, stride_bt, stride_ob, stride_oh,
    BS: tl.constexpr, D: tl.constexpr, G: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr,
):
    b = tl.program_id(0)
    g = tl.program_id(1)
    pb = tl.program_id(2)
    pages = pb * BLOCK_P + tl.arange(0, BLOCK_P)
    seq_len = tl.load(lens_ptr + b)
    n_pages = (seq_len + BS - 1) // BS
    mp = pages < n_pages
    offs_d = tl.arange(0, BLOCK_D)
    md = offs_d < D
    blk = tl.load(bt_ptr + b * stride_bt + pages, mask=mp, other=0).to(tl.int64)
    row = (blk * Hkv + g) * D
    m2 = mp[:, None] & md[None, :]
    mn = tl.load(kmin_ptr + row[:, None] + offs_d[None, :], mask=m2, other=0.0).to(tl.float32)
    mx = tl.load(kmax_ptr + row[:, None] + offs_d[None, :], mask=m2, other=0.0).to(tl.float32)
    best = tl.full([BLOCK_P], float("-inf"), tl.float32)
    for i in range(G):
        q = tl.load(q_ptr + b * stride_qb + (g * G + i) * stride_qh + offs_d, mask=md, other=0.0)
        q = q.to(tl.float32)[None, :]
        s = tl.sum(tl.maximum(q * mx, q * mn), 1)
        best = tl.maximum(best, s)
    best = tl.where(mp, best, float("-inf"))
    tl.store(out_ptr + b * stride_ob + g * stride_oh + pages, best, mask=pages < max_pages)


def _check(q, k_min, k_max, block_table, seq_lens, block_size, check_bounds=True):
    check_tensor("k_min", k_min, ndim=3, dtypes=(torch.float32, torch.bfloat16))
    dev = k_min.device
    check_tensor("k_max", k_max, ndim=3, dtypes=(k_min.dtype,), device=dev)
    if k_max.shape != k_min.shape:
        raise ValueError("k_max: shape differs from k_min")
    NB, Hkv, D = k_min.shape
    check_tensor("q", q, ndim=3, dtypes=FLOAT_DTYPES, device=dev)
    B, Hq, Dq = q.shape
    if Dq != D:
        raise ValueError(f"q: head_dim {Dq} != metadata head_dim {D}")
    if Hq % Hkv:
        raise ValueError(f"q: num_q_heads {Hq} not a multiple of num_kv_heads {Hkv}")
    check_tensor("block_table", block_table, ndim=2, dtypes=(torch.int32,), device=dev)
    check_tensor("seq_lens", seq_lens, ndim=1, dtypes=(torch.int32,), device=dev)
    if block_table.shape[0] != B or seq_lens.shape[0] != B:
        raise ValueError(f"block_table/seq_lens: batch must be {B}")
    if int(block_size) <= 0:
        raise ValueError("block_size: must be > 0")
    if check_bounds and B and int(seq_lens.max()) > block_table.shape[1] * block_size:
        raise ValueError("seq_lens: longer than block_table can address")
    return B, Hq, Hkv, D


def quest_score(q: torch.Tensor, k_min: torch.Tensor, k_max: torch.Tensor,
                block_table: torch.Tensor, seq_lens: torch.Tensor, block_size: int, *,
                check_bounds: bool = True) -> torch.Tensor:
    """q [B, num_q_heads, D]; k_min/k_max fp32 or bf16 [num_blocks, num_kv_heads, D];
    block_table int32 [B, max_pages]; seq_lens int32 [B].
    Returns fp32 scores [B, num_kv_heads, max_pages] (-inf past each sequence's pages).
    ``check_bounds=False`` skips the seq_lens range check (a device sync)."""
    B, Hq, Hkv, D = _check(q, k_min, k_max, block_table, seq_lens, block_size, check_bounds)
    P = block_table.shape[1]
    out = torch.empty(B, Hkv, P, dtype=torch.float32, device=q.device)
    if B == 0 or P == 0:
        return out
    BLOCK_P = min(next_pow2(P), 16)  # [16, D] min + max tiles: no register pressure
    _quest_score_kernel[(B, Hkv, triton.cdiv(P, BLOCK_P))](
        q, k_min, k_max, block_table, seq_lens, out,
        Hkv, P, q.stride(0), q.stride(1), block_table.stride(0), out.stride(0), out.stride(1),
        BS=block_size, D=D, G=Hq // Hkv, BLOCK_P=BLOCK_P, BLOCK_D=next_pow2(D),
    )
    return out


def quest_score_reference(q, k_min, k_max, block_table, seq_lens, block_size) -> torch.Tensor:
    """Plain torch version of :func:`quest_score` (float64 math, fp32 result)."""
    B, Hq, Hkv, D = _check(q, k_min, k_max, block_table, seq_lens, block_size)
    G = Hq // Hkv
    P = block_table.shape[1]
    out = torch.full((B, Hkv, P), float("-inf"), dtype=torch.float64, device=q.device)
    for b in range(B):
        n_pages = (int(seq_lens[b]) + block_size - 1) // block_size
        blks = block_table[b, :n_pages].long()
        mn, mx = k_min[blks].double(), k_max[blks].double()  # [n_pages, Hkv, D]
        qq = q[b].double().view(Hkv, G, D)
        bound = torch.maximum(qq[None] * mx[:, :, None], qq[None] * mn[:, :, None]).sum(-1)
        out[b, :, :n_pages] = bound.amax(-1).T  # [Hkv, n_pages]
    return out.float()
