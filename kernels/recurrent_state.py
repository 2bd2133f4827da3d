"""Fixed-size recurrent state updated by a linear-attention recurrence.

Per sequence b and head h the state S is an fp32 matrix ``[d_k, d_v]``; for each
token t (in order, t < seq_lens[b])::

    S   = decay[h] * S + k_t^T v_t        (outer product, [d_k, d_v])
    o_t = q_t . S                          ([d_v]; includes the current token)

The state ``[batch, heads, d_k, d_v]`` is the whole memory of the layer: its size
``heads * d_k * d_v * 4`` bytes per sequence does not depend on the context
length, unlike a KV cache (``2 * kv_heads * head_dim * elem_bytes`` per token).
This stands in for the memory behaviour of Mamba / Gated DeltaNet layers (fixed
size, independent of context); it is NOT those models' exact update (no
input-dependent gates, no delta rule, no convolution, no normalisation).

Kernel: grid (batch, heads, cdiv(d_v, BLOCK_V)); the program keeps its
[d_k, BLOCK_V] slice of S in registers, walks the tokens, writes o_t and stores
the final state back in place. Outputs at padding positions t >= seq_lens[b] are
not written. Reference: :func:`recurrent_reference` (python loop, float64).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._sparse_common import FLOAT_DTYPES, check_tensor, next_pow2


@triton.jit
def _recurrent_kernel(q_ptr, k_ptr, v_ptr, s_ptr, decay_ptr, lens_ptr, o_ptr,
                      T, H,
                      DK: tl.constexpr, DV: tl.constexpr, BLOCK_K: tl.constexpr,
                      BLOCK_V: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    offs_k = tl.arange(0, BLOCK_K)
    offs_v = tl.program_id(2) * BLOCK_V + tl.arange(0, BLOCK_V)
    mk = offs_k < DK
    mv = offs_v < DV
    m2 = mk[:, None] & mv[None, :]
    s_base = (b * H + h).to(tl.int64) * DK * DV
    S = tl.load(s_ptr + s_base + offs_k[:, None] * DV + offs_v[None, :], mask=m2, other=0.0)
    decay = tl.load(decay_ptr + h)
    n = tl.load(lens_ptr + b)
    for t in range(0, n):
        row = (b * T + t).to(tl.int64) * H + h
        kt = tl.load(k_ptr + row * DK + offs_k, mask=mk, other=0.0).to(tl.float32)
        qt = tl.load(q_ptr + row * DK + offs_k, mask=mk, other=0.0).to(tl.float32)
        vt = tl.load(v_ptr + row * DV + offs_v, mask=mv, other=0.0).to(tl.float32)
        S = decay * S + kt[:, None] * vt[None, :]
        o = tl.sum(qt[:, None] * S, 0)
        tl.store(o_ptr + row * DV + offs_v, o.to(o_ptr.dtype.element_ty), mask=mv)
    tl.store(s_ptr + s_base + offs_k[:, None] * DV + offs_v[None, :], S, mask=m2)


def _check(q, k, v, state, decay, seq_lens, check_bounds=True):
    check_tensor("q", q, ndim=4, dtypes=FLOAT_DTYPES)
    dev = q.device
    check_tensor("k", k, ndim=4, dtypes=FLOAT_DTYPES, device=dev)
    check_tensor("v", v, ndim=4, dtypes=FLOAT_DTYPES, device=dev)
    B, T, H, DK = q.shape
    if k.shape != q.shape:
        raise ValueError(f"k: shape {tuple(k.shape)} != q {tuple(q.shape)}")
    if v.shape[:3] != (B, T, H):
        raise ValueError(f"v: expected [{B}, {T}, {H}, d_v], got {tuple(v.shape)}")
    DV = v.shape[3]
    check_tensor("state", state, ndim=4, dtypes=(torch.float32,), device=dev)
    if state.shape != (B, H, DK, DV):
        raise ValueError(f"state: expected fp32 [{B}, {H}, {DK}, {DV}], got {tuple(state.shape)}")
    if isinstance(decay, (int, float)):
        if not 0.0 <= float(decay) <= 1.0:
            raise ValueError("decay: values must lie in [0, 1]")
    d = torch.as_tensor(decay, dtype=torch.float32, device=dev).reshape(-1)
    if d.numel() == 1:
        d = d.expand(H)
    if d.numel() != H:
        raise ValueError(f"decay: expected a float or [{H}] values, got {d.numel()}")
    if check_bounds and not bool(((d >= 0) & (d <= 1)).all()):
        raise ValueError("decay: values must lie in [0, 1]")
    if seq_lens is None:
        seq_lens = torch.full((B,), T, dtype=torch.int32, device=dev)
    check_tensor("seq_lens", seq_lens, ndim=1, dtypes=(torch.int32,), device=dev)
    if seq_lens.shape[0] != B:
        raise ValueError(f"seq_lens: expected [{B}] values in [0, {T}]")
    if check_bounds and B and (int(seq_lens.min()) < 0 or int(seq_lens.max()) > T):
        raise ValueError(f"seq_lens: expected [{B}] values in [0, {T}]")
    return B, T, H, DK, DV, d.contiguous(), seq_lens


def recurrent_update(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, state: torch.Tensor, *,
                     decay=1.0, seq_lens: torch.Tensor | None = None,
                     out: torch.Tensor | None = None, check_bounds: bool = True) -> torch.Tensor:
    """q, k [B, T, H, d_k], v [B, T, H, d_v]; state fp32 [B, H, d_k, d_v] updated in place;
    decay float or [H] in [0, 1]; seq_lens int32 [B] (default T). Returns o [B, T, H, d_v]
    (dtype of v; positions t >= seq_lens[b] untouched). ``check_bounds=False`` skips the
    device-side range checks of decay / seq_lens (syncs)."""
    B, T, H, DK, DV, d, lens = _check(q, k, v, state, decay, seq_lens, check_bounds)
    if out is None:
        out = torch.empty_like(v)
    elif out.shape != v.shape or not out.is_contiguous():
        raise ValueError(f"out: expected contiguous {tuple(v.shape)}")
    if B == 0 or H == 0:
        return out
    BLOCK_V = min(next_pow2(DV), 64)
    _recurrent_kernel[(B, H, triton.cdiv(DV, BLOCK_V))](
        q, k, v, state, d, lens, out, T, H,
        DK=DK, DV=DV, BLOCK_K=next_pow2(DK), BLOCK_V=BLOCK_V)
    return out


def recurrent_reference(q, k, v, state, *, decay=1.0, seq_lens=None):
    """Token-by-token float64 loop. Returns (o float64 [B, T, H, d_v] (NaN at padding),
    new state float64 [B, H, d_k, d_v]); ``state`` is not modified."""
    B, T, H, DK, DV, d, lens = _check(q, k, v, state, decay, seq_lens)
    S = state.double().clone()
    o = torch.full((B, T, H, DV), float("nan"), dtype=torch.float64, device=q.device)
    dd = d.double()
    for b in range(B):
        for t in range(int(lens[b])):
            for h in range(H):
                S[b, h] = dd[h] * S[b, h] + torch.outer(k[b, t, h].double(), v[b, t, h].double())
                o[b, t, h] = q[b, t, h].double() @ S[b, h]
    return o, S


def recurrent_state_bytes(num_heads: int, d_k: int, d_v: int, elem_bytes: int = 4) -> int:
    """Bytes of the fixed state of one sequence in one layer (fp32 by default)."""
    return num_heads * d_k * d_v * elem_bytes


def kv_cache_bytes(num_tokens: int, num_kv_heads: int, head_dim: int, elem_bytes: int = 2) -> int:
    """Bytes of a plain KV cache (K and V) for one sequence in one layer, for comparison."""
    return 2 * num_tokens * num_kv_heads * head_dim * elem_bytes
