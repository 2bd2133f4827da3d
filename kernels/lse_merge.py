"""Stage 2 of split-K (flash-decoding) attention: merge partial outputs by log-sum-exp.

Given S partial results of one query row, each normalised over its own keys,
``o_s`` [head_dim] with ``lse_s = log(sum_j exp(score_j))`` over that split::

    m   = max_s lse_s
    w_s = exp(lse_s - m)
    out = sum_s w_s * o_s / sum_s w_s
    lse = m + log(sum_s w_s)

Splits with ``lse = -inf`` (no keys) get weight 0; if every split is empty the
row's output is 0 and its lse -inf. All math in fp32.

Layout: ``part_out`` [..., num_splits, head_dim] float32 and ``part_lse``
[..., num_splits] float32 (the leading dims are flattened into rows, e.g.
[batch, num_q_heads]); returns ``out`` [..., head_dim] float32 and ``lse`` [...].
One program per row.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._checks import check, check_tensor
from ._interp import INTERPRET  # noqa: F401  (also makes tl.max / tl.sum usable under the interpreter)

__all__ = ["lse_merge", "lse_merge_reference"]


@triton.jit
def _lse_merge_kernel(
    part_out_ptr, part_lse_ptr, out_ptr, lse_ptr,
    num_splits, head_dim,
    BLOCK_S: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    mask_s = offs_s < num_splits
    mask_d = offs_d < head_dim
    lse = tl.load(part_lse_ptr + row * num_splits + offs_s, mask=mask_s, other=float("-inf"))
    m = tl.max(lse, axis=0)
    m_safe = tl.where(m == float("-inf"), 0.0, m)
    w = tl.exp(lse - m_safe)  # 0 for empty splits and padding
    # [BLOCK_S, BLOCK_D] partial outputs; empty splits may hold anything finite
    o = tl.load(part_out_ptr + (row * num_splits + offs_s[:, None]) * head_dim + offs_d[None, :],
                mask=mask_s[:, None] & mask_d[None, :], other=0.0)
    o = tl.where(w[:, None] > 0, o, 0.0)
    denom = tl.sum(w, axis=0)
    acc = tl.sum(o * w[:, None], axis=0)
    has = denom > 0
    out = tl.where(has, acc / tl.where(has, denom, 1.0), 0.0)
    tl.store(out_ptr + row * head_dim + offs_d, out, mask=mask_d)
    tl.store(lse_ptr + row, tl.where(has, m_safe + tl.log(tl.where(has, denom, 1.0)), float("-inf")))


def lse_merge(part_out: torch.Tensor, part_lse: torch.Tensor, *, out: torch.Tensor | None = None,
              lse: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge ``part_out`` [..., S, D] / ``part_lse`` [..., S] into ``(out [..., D], lse [...])``.

    ``out`` / ``lse``: optional preallocated contiguous float32 results.
    """
    check_tensor(part_out, "part_out", dtypes=(torch.float32,), contiguous=True)
    check_tensor(part_lse, "part_lse", dtypes=(torch.float32,), contiguous=True)
    check(part_out.dim() >= 2, "part_out", f"expected [..., num_splits, head_dim], got {tuple(part_out.shape)}")
    check(tuple(part_lse.shape) == tuple(part_out.shape[:-1]), "part_lse",
          f"expected shape {tuple(part_out.shape[:-1])}, got {tuple(part_lse.shape)}")
    check(part_lse.device == part_out.device, "part_lse", "must be on part_out's device")
    lead = tuple(part_out.shape[:-2])
    num_splits, head_dim = part_out.shape[-2:]
    rows = 1
    for d in lead:
        rows *= d
    if out is None:
        out = torch.empty(*lead, head_dim, dtype=torch.float32, device=part_out.device)
    check_tensor(out, "out", dtypes=(torch.float32,), contiguous=True, device=part_out.device)
    check(tuple(out.shape) == lead + (head_dim,), "out", f"expected shape {lead + (head_dim,)}, got {tuple(out.shape)}")
    if lse is None:
        lse = torch.empty(lead, dtype=torch.float32, device=part_out.device)
    check_tensor(lse, "lse", dtypes=(torch.float32,), contiguous=True, device=part_out.device)
    check(tuple(lse.shape) == lead, "lse", f"expected shape {lead}, got {tuple(lse.shape)}")
    if rows == 0 or head_dim == 0:
        return out, lse
    check(num_splits > 0, "part_out", "needs at least one split")
    _lse_merge_kernel[(rows,)](
        part_out, part_lse, out, lse, num_splits, head_dim,
        BLOCK_S=triton.next_power_of_2(num_splits),
        BLOCK_D=triton.next_power_of_2(head_dim),
    )
    return out, lse


def lse_merge_reference(part_out: torch.Tensor, part_lse: torch.Tensor):
    """Torch float64 version of ``lse_merge``."""
    lse = part_lse.double()
    m = lse.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    w = torch.exp(lse - m)
    o = torch.where(w[..., None] > 0, part_out.double(), torch.zeros((), dtype=torch.float64))
    denom = w.sum(-1)
    out = (o * w[..., None]).sum(-2) / denom.clamp_min(1e-300)[..., None]
    out = torch.where(denom[..., None] > 0, out, torch.zeros_like(out))
    out_lse = torch.where(denom > 0, m[..., 0] + torch.log(denom.clamp_min(1e-300)),
                          torch.full_like(denom, float("-inf")))
    return out, out_lse
