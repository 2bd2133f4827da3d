"""MLA latent cache write: one paged tensor per layer holding, per token, the
compressed latent c_kv (kv_lora_rank wide) followed by the decoupled RoPE key
k_rope (rope_dim wide).

Layout: ``latent_cache [num_blocks, block_size, kv_lora_rank + rope_dim]``
(DeepSeek-V2/V3: 512 + 64 = 576). Token ``t`` with ``slot = slot_mapping[t]``
goes to block ``slot // block_size``, offset ``slot % block_size``; slot -1 is
padding and is skipped.

Storage dtype: bf16 / fp16 (cast, round to nearest even) or float8_e4m3fn with
one per-tensor fp32 scale: stored = e4m3(clamp(x / scale, +-448)), read back as
stored * scale.

Bytes stored per token per layer: ``(kv_lora_rank + rope_dim) * elem_bytes``
(bf16: 1152 B for 512 + 64; fp8: 576 B) plus 4 B per layer for the fp8 scale.
No head dimension: one latent row serves every head.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._sparse_common import (
    CACHE_DTYPES,
    FLOAT_DTYPES,
    INTERPRET,
    check_scale,
    check_tensor,
    next_pow2,
    out_kind,
    store_rounded,
)


@triton.jit
def _mla_write_kernel(
    c_ptr, r_ptr, cache_ptr, slot_ptr, scale_ptr,
    stride_c, stride_r,  # row strides of c_kv [T, R] and k_rope [T, P]
    R: tl.constexpr, P: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_P: tl.constexpr,
    HAS_SCALE: tl.constexpr, OUT_KIND: tl.constexpr, INTERP: tl.constexpr,
):
    t = tl.program_id(0)
    slot = tl.load(slot_ptr + t)
    if slot >= 0:
        row = cache_ptr + slot * (R + P)  # cache rows are contiguous: block*bs + off == slot
        offs_r = tl.arange(0, BLOCK_R)
        offs_p = tl.arange(0, BLOCK_P)
        c = tl.load(c_ptr + t * stride_c + offs_r, mask=offs_r < R, other=0.0).to(tl.float32)
        kr = tl.load(r_ptr + t * stride_r + offs_p, mask=offs_p < P, other=0.0).to(tl.float32)
        if HAS_SCALE:
            inv = 1.0 / tl.load(scale_ptr)
            c = c * inv
            kr = kr * inv
        store_rounded(row + offs_r, c, offs_r < R, OUT_KIND, INTERP)
        store_rounded(row + R + offs_p, kr, offs_p < P, OUT_KIND, INTERP)


def alloc_mla_cache(num_blocks: int, block_size: int, kv_lora_rank: int, rope_dim: int,
                    dtype: torch.dtype = torch.bfloat16, device="cpu") -> torch.Tensor:
    """NaN-poisoned latent cache [num_blocks, block_size, R + P] (e4m3fn NaN is 0x7F)."""
    t = torch.empty(num_blocks, block_size, kv_lora_rank + rope_dim, dtype=dtype, device=device)
    if dtype == torch.float8_e4m3fn:
        t.view(torch.uint8).fill_(0x7F)
    else:
        t.fill_(float("nan"))
    return t


def mla_cache_bytes(num_tokens: int, kv_lora_rank: int, rope_dim: int, elem_bytes: int,
                    *, fp8_scale: bool = False) -> int:
    """Exact bytes of latent rows for ``num_tokens`` tokens of one layer (+4 B fp8 scale)."""
    return num_tokens * (kv_lora_rank + rope_dim) * elem_bytes + (4 if fp8_scale else 0)


def _check(c_kv, k_rope, latent_cache, slot_mapping, scale):
    check_tensor("latent_cache", latent_cache, ndim=3, dtypes=CACHE_DTYPES)
    dev = latent_cache.device
    if not isinstance(c_kv, torch.Tensor) or c_kv.dim() != 2 or c_kv.dtype not in FLOAT_DTYPES:
        raise ValueError("c_kv: expected a float tensor [num_tokens, kv_lora_rank]")
    if not isinstance(k_rope, torch.Tensor) or k_rope.dim() != 2 or k_rope.dtype not in FLOAT_DTYPES:
        raise ValueError("k_rope: expected a float tensor [num_tokens, rope_dim]")
    if c_kv.stride(-1) != 1 or k_rope.stride(-1) != 1:
        raise ValueError("c_kv/k_rope: last dim must be contiguous")
    if c_kv.device != dev or k_rope.device != dev:
        raise ValueError("c_kv: must be on latent_cache's device")
    T, R = c_kv.shape
    if k_rope.shape[0] != T:
        raise ValueError(f"k_rope: {k_rope.shape[0]} tokens != c_kv {T}")
    P = k_rope.shape[1]
    if R + P != latent_cache.shape[2]:
        raise ValueError(
            f"latent_cache: width {latent_cache.shape[2]} != kv_lora_rank {R} + rope_dim {P}")
    check_tensor("slot_mapping", slot_mapping, ndim=1, dtypes=(torch.int64,), device=dev)
    if slot_mapping.shape[0] != T:
        raise ValueError(f"slot_mapping: {slot_mapping.shape[0]} slots != {T} tokens")
    n_slots = latent_cache.shape[0] * latent_cache.shape[1]
    if T and (int(slot_mapping.max()) >= n_slots or int(slot_mapping.min()) < -1):
        raise ValueError(f"slot_mapping: slot outside [-1, {n_slots})")
    fp8 = latent_cache.dtype == torch.float8_e4m3fn
    if fp8 and scale is None:
        raise ValueError("scale: required for a float8_e4m3fn latent_cache")
    if not fp8 and scale is not None:
        raise ValueError("scale: only valid for a float8_e4m3fn latent_cache")
    s = check_scale("scale", scale, 1, dev)
    if s is not None and s.numel() != 1:
        raise ValueError("scale: the latent cache uses one per-tensor scale")
    return T, R, P, s


def mla_write(c_kv: torch.Tensor, k_rope: torch.Tensor, latent_cache: torch.Tensor,
              slot_mapping: torch.Tensor, *, scale=None) -> None:
    """Write c_kv [T, kv_lora_rank] and k_rope [T, rope_dim] into latent_cache
    [num_blocks, block_size, kv_lora_rank + rope_dim] at slot_mapping int64 [T] (-1 = skip).
    fp8 cache: ``scale`` (float or [1] fp32 tensor) is required."""
    T, R, P, s = _check(c_kv, k_rope, latent_cache, slot_mapping, scale)
    if T == 0:
        return
    _mla_write_kernel[(T,)](
        c_kv, k_rope, latent_cache, slot_mapping, s if s is not None else slot_mapping,
        c_kv.stride(0), k_rope.stride(0),
        R=R, P=P, BLOCK_R=next_pow2(R), BLOCK_P=next_pow2(P),
        HAS_SCALE=s is not None, OUT_KIND=out_kind(latent_cache.dtype), INTERP=INTERPRET,
    )


def mla_write_reference(c_kv, k_rope, latent_cache, slot_mapping, *, scale=None) -> None:
    """Plain torch version of :func:`mla_write` (same rounding: torch casts)."""
    T, R, P, s = _check(c_kv, k_rope, latent_cache, slot_mapping, scale)
    rows = torch.cat([c_kv.float(), k_rope.float()], dim=1)
    if s is not None:
        rows = (rows / s).clamp(-448.0, 448.0)
    keep = slot_mapping >= 0
    flat = latent_cache.view(-1, R + P)
    flat[slot_mapping[keep]] = rows[keep].to(latent_cache.dtype)


def mla_read_dense(latent_cache, block_table_row, seq_len: int, *, scale=None) -> torch.Tensor:
    """Dequantized fp32 latent rows [seq_len, R + P] of one sequence (for references)."""
    bs = latent_cache.shape[1]
    t = torch.arange(seq_len, device=latent_cache.device)
    blocks = block_table_row.long()[t // bs]
    rows = latent_cache[blocks, t % bs].float()
    if scale is not None:
        rows = rows * (scale if isinstance(scale, float) else scale.float().reshape(-1)[0])
    return rows
