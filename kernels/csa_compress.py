"""Compressed sparse attention (CSA) storage: every m consecutive tokens' K and V
become ONE compressed entry, plus a local window of recent raw tokens.

The compressor is a **mean pool** over the m tokens of a group. It stands in for
the learned compressor of a trained CSA model (DeepSeek V4 learns it with the
model); only the storage and read accounting are meant to be faithful, not the
model quality.

Layout (per layer):
* ``comp_k, comp_v [batch, max_groups, num_kv_heads, head_dim]``: entry g of
  sequence b = mean of tokens [g*m, (g+1)*m); ``num_groups[b] = seq_lens[b] // m``.
* local window ``local_k, local_v [batch, window_tokens, num_kv_heads, head_dim]``:
  the last ``min(n, window_tokens)`` raw tokens in order (``local_lens``).

Trailing partial group: the last ``n % m`` tokens form no compressed entry (that
would need ceil(n / m) entries); they stay uncompressed in the local window only,
and are compressed when their group completes. ``window_tokens >= m - 1`` is
required so they are always visible.

Stored entries per sequence, per layer: ``n // m`` compressed + ``min(n, window)``
raw, i.e. ``2 * num_kv_heads * head_dim * elem_bytes * (n // m + min(n, window))``
bytes (a ring-buffer implementation allocates the full ``window`` rows).

Kernel: grid (batch, max_groups, num_kv_heads); a program averages one group of
one head ([m, head_dim] tile, fp32 accumulation) and stores it in the cache dtype
(correct bf16 rounding under the interpreter). Groups past ``n // m`` are skipped.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._sparse_common import INTERPRET, check_tensor, next_pow2, out_kind, store_rounded

_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


@triton.jit
def _csa_compress_kernel(
    k_ptr, v_ptr, lens_ptr, ck_ptr, cv_ptr,
    N, G_MAX, H,
    M: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr,
    OUT_KIND: tl.constexpr, INTERP: tl.constexpr,
):
    b = tl.program_id(0)
    g = tl.program_id(1)
    h = tl.program_id(2)
    n = tl.load(lens_ptr + b)
    if g < n // M:
        offs_d = tl.arange(0, BLOCK_D)
        md = offs_d < D
        acc_k = tl.full([BLOCK_D], 0.0, tl.float32)
        acc_v = tl.full([BLOCK_D], 0.0, tl.float32)
        for t0 in range(0, M, BLOCK_M):
            t = t0 + tl.arange(0, BLOCK_M)
            mt = t < M
            row = ((b * N + g * M + t).to(tl.int64) * H + h) * D  # [BLOCK_M]
            m2 = mt[:, None] & md[None, :]
            kt = tl.load(k_ptr + row[:, None] + offs_d[None, :], mask=m2, other=0.0).to(tl.float32)
            vt = tl.load(v_ptr + row[:, None] + offs_d[None, :], mask=m2, other=0.0).to(tl.float32)
            acc_k += tl.sum(kt, 0)
            acc_v += tl.sum(vt, 0)
        out = ((b * G_MAX + g).to(tl.int64) * H + h) * D + offs_d
        store_rounded(ck_ptr + out, acc_k / M, md, OUT_KIND, INTERP)
        store_rounded(cv_ptr + out, acc_v / M, md, OUT_KIND, INTERP)


def _check(k, v, seq_lens, m, window_tokens):
    if int(m) <= 0:
        raise ValueError(f"m: group size must be > 0, got {m}")
    check_tensor("k", k, ndim=4, dtypes=_DTYPES)
    check_tensor("v", v, ndim=4, dtypes=(k.dtype,), device=k.device)
    if v.shape != k.shape:
        raise ValueError(f"v: shape {tuple(v.shape)} != k {tuple(k.shape)}")
    check_tensor("seq_lens", seq_lens, ndim=1, dtypes=(torch.int32,), device=k.device)
    B, N = k.shape[:2]
    if seq_lens.shape[0] != B:
        raise ValueError(f"seq_lens: batch {seq_lens.shape[0]} != k batch {B}")
    if B and (int(seq_lens.min()) < 0 or int(seq_lens.max()) > N):
        raise ValueError(f"seq_lens: must lie in [0, {N}]")
    if window_tokens is not None and int(window_tokens) < max(1, int(m) - 1):
        raise ValueError(f"window_tokens: must be >= max(1, m - 1) = {max(1, int(m) - 1)} so the "
                         f"trailing partial group stays visible, got {window_tokens}")


def csa_compress(k: torch.Tensor, v: torch.Tensor, seq_lens: torch.Tensor, m: int):
    """k, v [B, N, Hkv, D] (fp32/bf16/fp16, raw tokens, RoPE applied); seq_lens int32 [B].
    Returns (comp_k, comp_v [B, N // m, Hkv, D] in k.dtype, NaN past num_groups;
    num_groups int32 [B] = seq_lens // m)."""
    _check(k, v, seq_lens, m, None)
    B, N, H, D = k.shape
    G = N // int(m)
    ck = torch.full((B, G, H, D), float("nan"), dtype=k.dtype, device=k.device)
    cv = torch.full_like(ck, float("nan"))
    if B and G and H:
        _csa_compress_kernel[(B, G, H)](
            k, v, seq_lens, ck, cv, N, G, H,
            M=int(m), D=D, BLOCK_M=min(next_pow2(m), 64), BLOCK_D=next_pow2(D),
            OUT_KIND=out_kind(k.dtype), INTERP=INTERPRET,
        )
    return ck, cv, (seq_lens // int(m)).to(torch.int32)


def csa_compress_reference(k, v, seq_lens, m):
    """Torch version of :func:`csa_compress` (fp32 mean, cast to k.dtype)."""
    _check(k, v, seq_lens, m, None)
    B, N, H, D = k.shape
    G = N // int(m)
    ck = torch.full((B, G, H, D), float("nan"), dtype=k.dtype, device=k.device)
    cv = torch.full_like(ck, float("nan"))
    for b in range(B):
        g = int(seq_lens[b]) // m
        if g:
            ck[b, :g] = k[b, : g * m].float().view(g, m, H, D).mean(1).to(k.dtype)
            cv[b, :g] = v[b, : g * m].float().view(g, m, H, D).mean(1).to(k.dtype)
    return ck, cv, (seq_lens // int(m)).to(torch.int32)


def csa_local_window(k, v, seq_lens, window_tokens: int, m: int = 1):
    """The last min(n, window_tokens) raw tokens of each sequence, in order:
    (local_k, local_v [B, window_tokens, Hkv, D], NaN-padded; local_lens int32 [B])."""
    _check(k, v, seq_lens, m, window_tokens)
    B, N, H, D = k.shape
    W = int(window_tokens)
    lk = torch.full((B, W, H, D), float("nan"), dtype=k.dtype, device=k.device)
    lv = torch.full_like(lk, float("nan"))
    lens = torch.clamp(seq_lens, max=W).to(torch.int32)
    for b in range(B):
        n, w = int(seq_lens[b]), int(lens[b])
        lk[b, :w] = k[b, n - w: n]
        lv[b, :w] = v[b, n - w: n]
    return lk, lv, lens


def csa_entry_counts(n: int, m: int, window_tokens: int, top_k: int) -> dict:
    """Entries stored and read for one sequence of n tokens (per kv head, per layer)."""
    if int(m) <= 0:
        raise ValueError(f"m: group size must be > 0, got {m}")
    comp = n // m
    local = min(n, window_tokens)
    return {
        "tokens": n,
        "compressed_stored": comp,
        "partial_group_tokens": n % m,  # kept raw, inside the local window
        "local_stored": local,
        "stored_entries": comp + local,
        "read_entries": min(top_k, comp) + local,
        "full_entries": n,
    }


def csa_bytes(n: int, m: int, window_tokens: int, num_kv_heads: int, head_dim: int,
              elem_bytes: int) -> int:
    """Exact bytes one layer stores for one sequence: (n // m + min(n, window)) entries of K and V."""
    c = csa_entry_counts(n, m, window_tokens, 0)
    return 2 * num_kv_heads * head_dim * elem_bytes * c["stored_entries"]
