"""KIVI-style int4 / int2 KV cache write: asymmetric group quantization, packed into uint8.

Quantization of a group x (fp32), ``MAXQ = 2**bits - 1``::

    scale = fp16((max(x) - min(x)) / MAXQ)        zero = fp16(min(x))
    code  = clamp(floor((x - zero) / scale + 0.5), 0, MAXQ)   (0 if scale == 0)
    dequant = code * scale + zero                 (fp32, scale/zero as stored)

* Keys are grouped **per channel over ``group_k_tokens`` consecutive tokens**
  (KIVI: keys have outlier channels). ``group_k_tokens`` must divide
  ``block_size``, so a group never straddles a block. Until a group is complete
  its keys wait, in full precision, in a per-sequence residual buffer; when its
  last token arrives the whole group is quantized and written.
* Values are grouped **per token over ``group_v_channels`` channels** and are
  quantized immediately.

Layout of one layer (``QuantKV``), H = num_kv_heads, D = head_dim, b = bits,
BS = block_size, GK = group_k_tokens, GV = group_v_channels::

    k_codes, v_codes : uint8 [num_blocks, BS, H, D*b/8]
        channel d of a token is bits (d % (8/b))*b .. +b of byte d // (8/b)
    k_scale, k_zero  : fp16  [num_blocks, BS/GK, H, D]   (one per channel per key group)
    v_scale, v_zero  : fp16  [num_blocks, BS, H, D/GV]   (one per token per channel group)
    k_residual       : residual dtype [max_batch, GK, H, D]; row b is batch row b
                       of the decode call; slot j holds the key of position
                       p = j (mod GK) of the unfinished last group

Exact bytes (``quant_cache_bytes``): per token per layer
``2*H*D*b/8 + 4*H*D/GK + 4*H*D/GV`` (codes K+V, fp16 scale+zero K, V) plus, per
sequence, ``GK*H*D*residual_bytes`` of full-precision buffer. Example H=8,
D=128, int4, GK=16, GV=32: 1024 + 256 + 128 = 1408 B/token (bf16: 4096 B/token)
plus 32 KiB per sequence (fp16 residual).

``quant_write(k, v, cache, slot_mapping, batch_index)``: tokens of a sequence
must come in position order (one chunk may complete several key groups).
Two Triton kernels: value quantization (one program per token and kv head) and
key-group quantization (one program per completed group and kv head); the
gathering of a group from the residual buffer and the new tokens, and the
residual update, are small torch index operations.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import torch
import triton
import triton.language as tl

from ._checks import check, check_shape, check_tensor
from ._interp import INTERPRET  # interpreter fix-ups; many tokens per program there

__all__ = ["QuantKV", "quant_write", "quant_write_reference", "quant_cache_bytes",
           "quant_bytes_per_token", "quant_dequant_reference", "quantize_groups_reference"]


@dataclass
class QuantKV:
    bits: int
    group_k_tokens: int
    group_v_channels: int
    k_codes: torch.Tensor  # uint8 [num_blocks, block_size, H, D*bits/8]
    v_codes: torch.Tensor  # uint8 [num_blocks, block_size, H, D*bits/8]
    k_scale: torch.Tensor  # fp16 [num_blocks, block_size/GK, H, D]
    k_zero: torch.Tensor
    v_scale: torch.Tensor  # fp16 [num_blocks, block_size, H, D/GV]
    v_zero: torch.Tensor
    k_residual: torch.Tensor  # [max_batch, GK, H, D]

    @classmethod
    def empty(cls, num_blocks, block_size, num_kv_heads, head_dim, *, bits=4, group_k_tokens=None,
              group_v_channels=32, max_batch=1, residual_dtype=torch.float16, device="cpu"):
        gk = group_k_tokens or block_size
        check(bits in (2, 4), "bits", f"must be 2 or 4, got {bits}")
        check(head_dim > 0 and head_dim & (head_dim - 1) == 0, "head_dim",
              f"must be a power of two, got {head_dim}")
        check(gk > 0 and block_size % gk == 0, "group_k_tokens",
              f"must divide block_size {block_size}, got {gk}")
        check(group_v_channels >= 8 // bits and head_dim % group_v_channels == 0
              and group_v_channels & (group_v_channels - 1) == 0, "group_v_channels",
              f"must be a power of two >= {8 // bits} dividing head_dim {head_dim}, got {group_v_channels}")
        row = head_dim * bits // 8
        f16 = dict(dtype=torch.float16, device=device)
        return cls(
            bits=bits, group_k_tokens=gk, group_v_channels=group_v_channels,
            k_codes=torch.zeros(num_blocks, block_size, num_kv_heads, row, dtype=torch.uint8, device=device),
            v_codes=torch.zeros(num_blocks, block_size, num_kv_heads, row, dtype=torch.uint8, device=device),
            k_scale=torch.zeros(num_blocks, block_size // gk, num_kv_heads, head_dim, **f16),
            k_zero=torch.zeros(num_blocks, block_size // gk, num_kv_heads, head_dim, **f16),
            v_scale=torch.zeros(num_blocks, block_size, num_kv_heads, head_dim // group_v_channels, **f16),
            v_zero=torch.zeros(num_blocks, block_size, num_kv_heads, head_dim // group_v_channels, **f16),
            k_residual=torch.zeros(max_batch, gk, num_kv_heads, head_dim, dtype=residual_dtype, device=device),
        )

    @property
    def shape(self):
        """(num_blocks, block_size, num_kv_heads, head_dim)."""
        nb, bs, h, row = self.k_codes.shape
        return nb, bs, h, row * 8 // self.bits

    def tensors(self) -> list[torch.Tensor]:
        return [self.k_codes, self.v_codes, self.k_scale, self.k_zero, self.v_scale, self.v_zero,
                self.k_residual]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.tensors())

    def check(self, k_cache=None, v_cache=None, *, head_dim=None, batch=None) -> None:
        """Validate shapes/dtypes; ``k_cache``/``v_cache`` must be this cache's code tensors' shape."""
        check(self.bits in (2, 4), "quant.bits", f"must be 2 or 4, got {self.bits}")
        nb, bs, h, row = self.k_codes.shape
        d = row * 8 // self.bits
        gk, gv = self.group_k_tokens, self.group_v_channels
        check(bs % gk == 0, "quant.group_k_tokens", f"must divide block_size {bs}")
        check(d % gv == 0 and gv % (8 // self.bits) == 0 and gv & (gv - 1) == 0,
              "quant.group_v_channels", f"must be a power of two dividing head_dim {d}, >= {8 // self.bits}")
        check(d & (d - 1) == 0, "k_cache", f"head_dim {d} must be a power of two for packed codes")
        if head_dim is not None:
            check(d == head_dim, "k_cache", f"packed rows hold head_dim {d}, q has {head_dim}")
        for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
            if t is not None:
                check_shape(t, name, (nb, bs, h, row))
        check_tensor(self.k_codes, "quant.k_codes", dtypes=(torch.uint8,), contiguous=True)
        check_tensor(self.v_codes, "quant.v_codes", dtypes=(torch.uint8,), contiguous=True)
        check_shape(self.v_codes, "quant.v_codes", (nb, bs, h, row))
        for name in ("k_scale", "k_zero"):
            t = getattr(self, name)
            check_tensor(t, f"quant.{name}", dtypes=(torch.float16,), contiguous=True)
            check_shape(t, f"quant.{name}", (nb, bs // gk, h, d))
        for name in ("v_scale", "v_zero"):
            t = getattr(self, name)
            check_tensor(t, f"quant.{name}", dtypes=(torch.float16,), contiguous=True)
            check_shape(t, f"quant.{name}", (nb, bs, h, d // gv))
        check_tensor(self.k_residual, "quant.k_residual", ndim=4, contiguous=True,
                     dtypes=(torch.float16, torch.bfloat16, torch.float32))
        check_shape(self.k_residual, "quant.k_residual", (None, gk, h, d))
        if batch is not None:
            check(self.k_residual.shape[0] >= batch, "quant.k_residual",
                  f"has {self.k_residual.shape[0]} rows for batch {batch}")
        dev = self.k_codes.device
        for t in self.tensors():
            check(t.device == dev, "quant", "all tensors must be on one device")


def quant_bytes_per_token(num_kv_heads, head_dim, bits, group_k_tokens, group_v_channels) -> Fraction:
    """Exact cache bytes per token per layer (codes + fp16 scales/zeros), excluding the residual."""
    h, d = num_kv_heads, head_dim
    return (Fraction(2 * h * d * bits, 8) + Fraction(4 * h * d, group_k_tokens)
            + Fraction(4 * h * d, group_v_channels))


def quant_cache_bytes(num_blocks, block_size, num_kv_heads, head_dim, *, bits=4, group_k_tokens=None,
                      group_v_channels=32, max_batch=1, residual_bytes=2) -> dict:
    """Exact byte count of ``QuantKV.empty(...)`` with the same arguments (all ints)."""
    gk = group_k_tokens or block_size
    nb, bs, h, d = num_blocks, block_size, num_kv_heads, head_dim
    out = {
        "k_codes": nb * bs * h * d * bits // 8,
        "v_codes": nb * bs * h * d * bits // 8,
        "k_scale_zero": 2 * 2 * nb * (bs // gk) * h * d,
        "v_scale_zero": 2 * 2 * nb * bs * h * (d // group_v_channels),
        "k_residual": max_batch * gk * h * d * residual_bytes,
    }
    out["total"] = sum(out.values())
    out["block_bytes"] = (out["k_codes"] + out["v_codes"] + out["k_scale_zero"] + out["v_scale_zero"]) // max(nb, 1)
    return out


# ------------------------------------------------------------------ kernels
@triton.jit
def _quant_pack(x, valid, ROWS: tl.constexpr, COLS: tl.constexpr, AXIS: tl.constexpr,
                BITS: tl.constexpr):
    """Quantize x [ROWS, COLS] over AXIS (masked by valid); returns (bytes [ROWS, COLS/per_byte], scale16, zero16)."""
    MAXQ: tl.constexpr = (1 << BITS) - 1
    PER_BYTE: tl.constexpr = 8 // BITS
    mn = tl.min(tl.where(valid, x, float("inf")), axis=AXIS)
    mx = tl.max(tl.where(valid, x, float("-inf")), axis=AXIS)
    scale16 = ((mx - mn) / MAXQ).to(tl.float16)
    zero16 = mn.to(tl.float16)
    s = tl.expand_dims(scale16.to(tl.float32), AXIS)
    z = tl.expand_dims(zero16.to(tl.float32), AXIS)
    q = tl.floor((x - z) / tl.where(s > 0, s, 1.0) + 0.5)
    q = tl.minimum(tl.maximum(q, 0.0), MAXQ)
    q = tl.where(s > 0, q, 0.0).to(tl.int32)
    q = tl.reshape(q, [ROWS, COLS // PER_BYTE, PER_BYTE])
    shift = tl.arange(0, PER_BYTE) * BITS
    packed = tl.sum(q << shift[None, None, :], axis=2)
    return packed.to(tl.uint8), scale16, zero16


@triton.jit
def _quant_values_kernel(
    v_ptr, slot_ptr, codes_ptr, scale_ptr, zero_ptr,
    stride_vt, stride_vh, num_tokens, num_kv_heads,
    HEAD_DIM: tl.constexpr, GROUP_V: tl.constexpr, BITS: tl.constexpr,
    BLOCK_T: tl.constexpr,  # tokens per program: 1 on a GPU, many under the interpreter
):
    h = tl.program_id(1)
    NG: tl.constexpr = HEAD_DIM // GROUP_V
    ROW: tl.constexpr = HEAD_DIM * BITS // 8
    PB: tl.constexpr = GROUP_V * BITS // 8
    # one row per (token, channel group): [BLOCK_T * NG, GROUP_V]
    offs_r = tl.arange(0, BLOCK_T * NG)
    tok = tl.program_id(0) * BLOCK_T + offs_r // NG
    grp = offs_r % NG
    offs_c = tl.arange(0, GROUP_V)
    slot = tl.load(slot_ptr + tok, mask=tok < num_tokens, other=-1)  # -1: padding, or past the end
    live = slot >= 0
    x = tl.load(v_ptr + tok[:, None] * stride_vt + h * stride_vh + grp[:, None] * GROUP_V + offs_c[None, :],
                mask=live[:, None], other=0.0).to(tl.float32)
    packed, sc, ze = _quant_pack(x, x == x, BLOCK_T * NG, GROUP_V, 1, BITS)
    row = slot * num_kv_heads + h
    tl.store(codes_ptr + row[:, None] * ROW + grp[:, None] * PB + tl.arange(0, PB)[None, :], packed,
             mask=live[:, None])
    tl.store(scale_ptr + row * NG + grp, sc, mask=live)
    tl.store(zero_ptr + row * NG + grp, ze, mask=live)


# Under the interpreter each program runs as Python over numpy tiles; one program
# quantizes up to this many tokens there, one on a GPU.
INTERPRET_TOKENS_PER_PROGRAM = 64


@triton.jit
def _quant_key_groups_kernel(
    x_ptr, first_slot_ptr, codes_ptr, scale_ptr, zero_ptr,
    num_kv_heads,
    HEAD_DIM: tl.constexpr, GROUP_K: tl.constexpr, BLOCK_GK: tl.constexpr, BITS: tl.constexpr,
):
    g = tl.program_id(0)
    h = tl.program_id(1)
    first = tl.load(first_slot_ptr + g)  # slot of the group's first token
    ROW: tl.constexpr = HEAD_DIM * BITS // 8
    offs_t = tl.arange(0, BLOCK_GK)
    offs_d = tl.arange(0, HEAD_DIM)
    valid = (offs_t < GROUP_K)[:, None] & (offs_d < HEAD_DIM)[None, :]
    # [BLOCK_GK, HEAD_DIM] staged keys of group g, head h (x: [groups, GK, H, D])
    x = tl.load(x_ptr + ((g * GROUP_K + offs_t[:, None]) * num_kv_heads + h) * HEAD_DIM + offs_d[None, :],
                mask=valid, other=0.0).to(tl.float32)
    packed, sc, ze = _quant_pack(x, valid, BLOCK_GK, HEAD_DIM, 0, BITS)
    rows = (first + offs_t) * num_kv_heads + h
    tl.store(codes_ptr + rows[:, None] * ROW + tl.arange(0, ROW)[None, :], packed,
             mask=(offs_t < GROUP_K)[:, None])
    # scale index: group number first // GROUP_K (groups are block aligned)
    srow = ((first // GROUP_K) * num_kv_heads + h) * HEAD_DIM
    tl.store(scale_ptr + srow + offs_d, sc)
    tl.store(zero_ptr + srow + offs_d, ze)


# ------------------------------------------------------------ launcher glue
def _stage_key_groups(k, cache: QuantKV, slot_mapping, batch_index):
    """Complete key groups of this chunk -> (staged [G, GK, H, D], first_slot [G]); updates the residual."""
    gk = cache.group_k_tokens
    dev = k.device
    valid = slot_mapping >= 0
    j = torch.where(valid, slot_mapping % gk, torch.full_like(slot_mapping, -1))
    done = (j == gk - 1).nonzero().flatten()  # tokens that complete a group
    jj = torch.arange(gk, device=dev)
    src = done[:, None] - (gk - 1) + jj[None, :]  # [G, GK] candidate token indices
    srcc = src.clamp_min(0)
    first = slot_mapping[done] - (gk - 1)
    from_chunk = (src >= 0) & (slot_mapping[srcc] == first[:, None] + jj[None, :]) \
        & (batch_index[srcc] == batch_index[done][:, None])
    res = cache.k_residual[batch_index[done].long()]  # [G, GK, H, D]
    staged = torch.where(from_chunk[..., None, None], k[srcc].float(), res.float())
    # tokens of groups still open after this chunk go to the residual buffer
    grp = torch.where(valid, slot_mapping // gk, torch.full_like(slot_mapping, -1))
    pending = valid & ~torch.isin(grp, grp[done])
    idx = pending.nonzero().flatten()
    cache.k_residual[batch_index[idx].long(), j[idx]] = k[idx].to(cache.k_residual.dtype)
    return staged.contiguous(), first.contiguous()


def _check_write_args(k, v, cache, slot_mapping, batch_index):
    cache.check()
    nb, bs, h, d = cache.shape
    check_tensor(k, "k", ndim=3, dtypes=(torch.float16, torch.bfloat16, torch.float32))
    check_tensor(v, "v", ndim=3, dtypes=(torch.float16, torch.bfloat16, torch.float32))
    check_shape(k, "k", (None, h, d))
    check_shape(v, "v", tuple(k.shape))
    check(k.stride(2) == 1, "k", "last dim must be contiguous")
    check(v.stride(2) == 1, "v", "last dim must be contiguous")
    check_tensor(slot_mapping, "slot_mapping", ndim=1, dtypes=(torch.int64,), contiguous=True)
    check(slot_mapping.shape[0] == k.shape[0], "slot_mapping", f"has {slot_mapping.shape[0]} entries for {k.shape[0]} tokens")
    check_tensor(batch_index, "batch_index", ndim=1, dtypes=(torch.int32, torch.int64))
    check(batch_index.shape[0] == k.shape[0], "batch_index", f"has {batch_index.shape[0]} entries for {k.shape[0]} tokens")
    for name, t in (("k", k), ("v", v), ("slot_mapping", slot_mapping), ("batch_index", batch_index)):
        check(t.device == cache.k_codes.device, name, f"is on {t.device}, cache on {cache.k_codes.device}")
    if slot_mapping.numel():
        lo, hi = int(slot_mapping.min()), int(slot_mapping.max())
        check(lo >= -1 and hi < nb * bs, "slot_mapping",
              f"slots must be -1 or in [0, {nb * bs}), got range [{lo}, {hi}]")
        bi = batch_index[slot_mapping >= 0]
        if bi.numel():
            check(int(bi.min()) >= 0 and int(bi.max()) < cache.k_residual.shape[0], "batch_index",
                  f"must be in [0, {cache.k_residual.shape[0]})")


def quant_write(k, v, cache: QuantKV, slot_mapping, batch_index) -> None:
    """Quantize and write ``k``, ``v`` [num_tokens, H, D] at ``slot_mapping`` (int64, -1 = skip).

    ``batch_index[i]``: row of ``cache.k_residual`` owned by token i's sequence.
    """
    _check_write_args(k, v, cache, slot_mapping, batch_index)
    nb, bs, h, d = cache.shape
    if k.shape[0] == 0:
        return
    num_tokens = k.shape[0]
    block_t = min(triton.next_power_of_2(num_tokens), INTERPRET_TOKENS_PER_PROGRAM) if INTERPRET else 1
    _quant_values_kernel[(triton.cdiv(num_tokens, block_t), h)](
        v, slot_mapping, cache.v_codes, cache.v_scale, cache.v_zero,
        v.stride(0), v.stride(1), num_tokens, h,
        HEAD_DIM=d, GROUP_V=cache.group_v_channels, BITS=cache.bits, BLOCK_T=block_t,
    )
    staged, first = _stage_key_groups(k, cache, slot_mapping, batch_index)
    if staged.shape[0]:
        _quant_key_groups_kernel[(staged.shape[0], h)](
            staged, first, cache.k_codes, cache.k_scale, cache.k_zero, h,
            HEAD_DIM=d, GROUP_K=cache.group_k_tokens,
            BLOCK_GK=triton.next_power_of_2(cache.group_k_tokens), BITS=cache.bits,
        )


# --------------------------------------------------------------- references
def quantize_groups_reference(x: torch.Tensor, dim: int, bits: int):
    """Quantize fp32 ``x`` in groups along ``dim``; returns (codes int32, scale16, zero16)."""
    maxq = (1 << bits) - 1
    x = x.float()
    mn = x.amin(dim=dim, keepdim=True)
    mx = x.amax(dim=dim, keepdim=True)
    scale16 = ((mx - mn) / maxq).to(torch.float16)
    zero16 = mn.to(torch.float16)
    s, z = scale16.float(), zero16.float()
    q = torch.floor((x - z) / torch.where(s > 0, s, torch.ones_like(s)) + 0.5).clamp(0, maxq)
    q = torch.where(s > 0, q, torch.zeros_like(q)).to(torch.int32)
    return q, scale16.squeeze(dim), zero16.squeeze(dim)


def _pack(codes: torch.Tensor, bits: int) -> torch.Tensor:
    per = 8 // bits
    c = codes.reshape(*codes.shape[:-1], codes.shape[-1] // per, per)
    shifts = torch.arange(per, device=codes.device, dtype=torch.int32) * bits
    return (c << shifts).sum(-1).to(torch.uint8)


def _unpack(packed: torch.Tensor, bits: int) -> torch.Tensor:
    per = 8 // bits
    shifts = torch.arange(per, device=packed.device, dtype=torch.int32) * bits
    c = (packed.to(torch.int32)[..., None] >> shifts) & ((1 << bits) - 1)
    return c.reshape(*packed.shape[:-1], packed.shape[-1] * per)


def quant_write_reference(k, v, cache: QuantKV, slot_mapping, batch_index) -> None:
    """Torch version of ``quant_write`` (same staging, quantization in torch)."""
    _check_write_args(k, v, cache, slot_mapping, batch_index)
    nb, bs, h, d = cache.shape
    gv, bits = cache.group_v_channels, cache.bits
    keep = slot_mapping >= 0
    slots = slot_mapping[keep]
    x = v[keep].float().reshape(-1, h, d // gv, gv)
    q, sc, ze = quantize_groups_reference(x, -1, bits)
    cache.v_codes.view(nb * bs, h, -1)[slots] = _pack(q.reshape(-1, h, d), bits)
    cache.v_scale.view(nb * bs, h, -1)[slots] = sc
    cache.v_zero.view(nb * bs, h, -1)[slots] = ze
    staged, first = _stage_key_groups(k, cache, slot_mapping, batch_index)
    gk = cache.group_k_tokens
    if staged.shape[0]:
        q, sc, ze = quantize_groups_reference(staged, 1, bits)  # over the GK tokens
        rows = first[:, None] + torch.arange(gk, device=k.device)[None, :]
        cache.k_codes.view(nb * bs, h, -1)[rows.flatten()] = _pack(q, bits).reshape(-1, h, d * bits // 8)
        cache.k_scale.view(-1, h, d)[first // gk] = sc
        cache.k_zero.view(-1, h, d)[first // gk] = ze


def quant_dequant_reference(k_codes, v_codes, cache: QuantKV, block_table_row, seq_len: int, b: int):
    """Dequantized fp32 K, V [seq_len, H, D] of one sequence in token order (keys of the open group from the residual)."""
    nb, bs, h, d = cache.shape
    gk, gv, bits = cache.group_k_tokens, cache.group_v_channels, cache.bits
    t = torch.arange(seq_len, device=k_codes.device)
    blk = block_table_row.long()[t // bs]
    off = t % bs
    kq = _unpack(k_codes[blk, off], bits).float()
    k = kq * cache.k_scale[blk, off // gk].float() + cache.k_zero[blk, off // gk].float()
    vq = _unpack(v_codes[blk, off], bits).float().reshape(seq_len, h, d // gv, gv)
    v = vq * cache.v_scale[blk, off][..., None].float() + cache.v_zero[blk, off][..., None].float()
    v = v.reshape(seq_len, h, d)
    quant_len = seq_len - seq_len % gk
    if quant_len < seq_len:
        k[quant_len:] = cache.k_residual[b, : seq_len - quant_len].float()
    return k, v
