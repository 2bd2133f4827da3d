"""Write new tokens' K and V into a paged KV cache (vLLM's reshape_and_cache).

Computes, for every token i with ``slot = slot_mapping[i] >= 0``::

    k_cache[slot // block_size, slot % block_size] = store(k[i])
    v_cache[slot // block_size, slot % block_size] = store(v[i])

where ``store`` is a plain cast for a bf16 / fp16 / fp32 cache (round to nearest
even) and, for a ``torch.float8_e4m3fn`` cache,
``clamp(x / scale, -448, 448)`` cast to e4m3 (round to nearest even), with a
per-tensor (``[1]``) or per-KV-head (``[num_kv_heads]``) float32 scale.
Slot -1 marks a padding token: nothing is written for it.

Layout: ``k``, ``v``: ``[num_tokens, num_kv_heads, head_dim]`` (any float
dtype, any strides); caches ``[num_blocks, block_size, num_kv_heads, head_dim]``
contiguous. One program per token writes all its heads (a [heads, head_dim] tile);
under the interpreter one program writes up to 64 tokens at once.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._checks import KV_DTYPES, check, check_fp8_scale, check_shape, check_tensor
from ._interp import INTERPRET, round_to_bf16, round_to_e4m3

__all__ = ["paged_write", "paged_write_reference"]


@triton.jit
def _store_value(x, scale, CACHE_KIND: tl.constexpr, INTERPRET: tl.constexpr):
    """fp32 tile -> value ready to cast to the cache dtype (exact under the interpreter)."""
    if CACHE_KIND == 1:  # fp8 e4m3fn
        y = x / scale
        if INTERPRET:
            y = round_to_e4m3(y)
        else:
            y = tl.minimum(tl.maximum(y, -448.0), 448.0)
    elif CACHE_KIND == 2:  # bf16
        y = x
        if INTERPRET:
            y = round_to_bf16(x)
    else:
        y = x
    return y


@triton.jit
def _paged_write_kernel(
    k_ptr, v_ptr, k_cache_ptr, v_cache_ptr, slot_ptr, k_scale_ptr, v_scale_ptr,
    stride_kt, stride_kh, stride_kd,
    stride_vt, stride_vh, stride_vd,
    num_tokens, num_kv_heads,
    HEAD_DIM: tl.constexpr,
    BLOCK_T: tl.constexpr,  # tokens per program: 1 on a GPU, many under the interpreter
    BLOCK_H: tl.constexpr,
    BLOCK_D: tl.constexpr,
    CACHE_KIND: tl.constexpr,  # 0 fp16/fp32, 1 fp8, 2 bf16
    SCALE_PER_HEAD: tl.constexpr,
    INTERPRET: tl.constexpr,
):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    slot = tl.load(slot_ptr + offs_t, mask=offs_t < num_tokens, other=-1)  # -1: padding, or past the end
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, BLOCK_D)
    mask = ((slot >= 0)[:, None, None] & (offs_h[None, :, None] < num_kv_heads)
            & (offs_d[None, None, :] < HEAD_DIM))
    tok = offs_t[:, None, None]
    k = tl.load(k_ptr + tok * stride_kt + offs_h[None, :, None] * stride_kh
                + offs_d[None, None, :] * stride_kd, mask=mask, other=0.0).to(tl.float32)
    v = tl.load(v_ptr + tok * stride_vt + offs_h[None, :, None] * stride_vh
                + offs_d[None, None, :] * stride_vd, mask=mask, other=0.0).to(tl.float32)
    ks = 1.0
    vs = 1.0
    if CACHE_KIND == 1:
        if SCALE_PER_HEAD:
            ks = tl.load(k_scale_ptr + offs_h, mask=offs_h < num_kv_heads, other=1.0)[None, :, None]
            vs = tl.load(v_scale_ptr + offs_h, mask=offs_h < num_kv_heads, other=1.0)[None, :, None]
        else:
            ks = tl.load(k_scale_ptr)
            vs = tl.load(v_scale_ptr)
    k = _store_value(k, ks, CACHE_KIND, INTERPRET)
    v = _store_value(v, vs, CACHE_KIND, INTERPRET)
    dst = slot[:, None, None] * (num_kv_heads * HEAD_DIM) + offs_h[None, :, None] * HEAD_DIM + offs_d[None, None, :]
    tl.store(k_cache_ptr + dst, k.to(k_cache_ptr.dtype.element_ty), mask=mask)
    tl.store(v_cache_ptr + dst, v.to(v_cache_ptr.dtype.element_ty), mask=mask)


# Under the interpreter each program runs as Python over numpy tiles: a program per
# token made a 254-token prefill 254 interpreted programs. One program takes up to
# this many tokens there (a [tokens, heads, head_dim] tile); a GPU keeps one token
# per program, the layout vLLM's reshape_and_cache uses.
INTERPRET_TOKENS_PER_PROGRAM = 64


def _cache_kind(dtype: torch.dtype) -> int:
    if dtype == torch.float8_e4m3fn:
        return 1
    if dtype == torch.bfloat16:
        return 2
    return 0


def _check_args(k, v, k_cache, v_cache, slot_mapping, k_scale, v_scale, check_slots):
    check_tensor(k_cache, "k_cache", ndim=4, dtypes=KV_DTYPES, contiguous=True)
    check_tensor(v_cache, "v_cache", ndim=4, dtypes=KV_DTYPES, contiguous=True)
    check(v_cache.shape == k_cache.shape, "v_cache", f"shape {tuple(v_cache.shape)} != k_cache {tuple(k_cache.shape)}")
    check(v_cache.dtype == k_cache.dtype, "v_cache", f"dtype {v_cache.dtype} != k_cache {k_cache.dtype}")
    num_blocks, block_size, num_kv_heads, head_dim = k_cache.shape
    check_tensor(k, "k", ndim=3, dtypes=(torch.bfloat16, torch.float16, torch.float32))
    check_tensor(v, "v", ndim=3, dtypes=(torch.bfloat16, torch.float16, torch.float32))
    check_shape(k, "k", (None, num_kv_heads, head_dim))
    check_shape(v, "v", tuple(k.shape))
    check_tensor(slot_mapping, "slot_mapping", ndim=1, dtypes=(torch.int64,), contiguous=True)
    check(slot_mapping.shape[0] == k.shape[0], "slot_mapping",
          f"has {slot_mapping.shape[0]} entries for {k.shape[0]} tokens")
    for name, t in (("k", k), ("v", v), ("v_cache", v_cache), ("slot_mapping", slot_mapping)):
        check(t.device == k_cache.device, name, f"is on {t.device}, k_cache on {k_cache.device}")
    if k_cache.dtype == torch.float8_e4m3fn:
        check_fp8_scale(k_scale, "k_scale", num_kv_heads, k_cache.device)
        check_fp8_scale(v_scale, "v_scale", num_kv_heads, k_cache.device)
        check(k_scale.shape == v_scale.shape, "v_scale", "must have the shape of k_scale")
    if check_slots and slot_mapping.numel():
        lo, hi = int(slot_mapping.min()), int(slot_mapping.max())
        check(lo >= -1 and hi < num_blocks * block_size, "slot_mapping",
              f"slots must be -1 or in [0, {num_blocks * block_size}), got range [{lo}, {hi}]")


def paged_write(k, v, k_cache, v_cache, slot_mapping, *, k_scale=None, v_scale=None,
                check_slots: bool = True) -> None:
    """Write ``k``, ``v`` [num_tokens, kv_heads, head_dim] into the caches at ``slot_mapping``.

    ``check_slots`` reads slot_mapping's min/max on the host (one sync) to reject
    out-of-range slots; pass False inside a CUDA graph.
    """
    _check_args(k, v, k_cache, v_cache, slot_mapping, k_scale, v_scale, check_slots)
    num_tokens = k.shape[0]
    if num_tokens == 0:
        return
    _, _, num_kv_heads, head_dim = k_cache.shape
    fp8 = k_cache.dtype == torch.float8_e4m3fn
    dummy = slot_mapping  # never read when not fp8
    block_t = min(triton.next_power_of_2(num_tokens), INTERPRET_TOKENS_PER_PROGRAM) if INTERPRET else 1
    _paged_write_kernel[(triton.cdiv(num_tokens, block_t),)](
        k, v, k_cache, v_cache, slot_mapping,
        k_scale if fp8 else dummy, v_scale if fp8 else dummy,
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        num_tokens, num_kv_heads,
        HEAD_DIM=head_dim,
        BLOCK_T=block_t,
        BLOCK_H=triton.next_power_of_2(num_kv_heads),
        BLOCK_D=triton.next_power_of_2(head_dim),
        CACHE_KIND=_cache_kind(k_cache.dtype),
        SCALE_PER_HEAD=bool(fp8 and k_scale.numel() > 1),
        INTERPRET=INTERPRET,
    )


def quantize_fp8_reference(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """x [..., kv_heads, head_dim] -> e4m3fn with a [1] or [kv_heads] float32 scale."""
    s = scale.float().view(-1, 1) if scale.numel() > 1 else scale.float()
    return (x.float() / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


def paged_write_reference(k, v, k_cache, v_cache, slot_mapping, *, k_scale=None, v_scale=None) -> None:
    """Plain torch version of ``paged_write`` (in place, same semantics)."""
    num_blocks, block_size = k_cache.shape[:2]
    keep = slot_mapping >= 0
    slots = slot_mapping[keep]
    kb, vb = k[keep], v[keep]
    if k_cache.dtype == torch.float8_e4m3fn:
        kq, vq = quantize_fp8_reference(kb, k_scale), quantize_fp8_reference(vb, v_scale)
    else:
        kq, vq = kb.to(k_cache.dtype), vb.to(v_cache.dtype)
    k_cache.view(num_blocks * block_size, *k_cache.shape[2:])[slots] = kq
    v_cache.view(num_blocks * block_size, *v_cache.shape[2:])[slots] = vq
