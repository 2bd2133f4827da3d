"""Private helpers shared by the sparse / latent / eviction kernels (part 2).

* ``INTERPRET``: True when Triton runs in its CPU interpreter (TRITON_INTERPRET=1
  at import time). Kernels take it as a constexpr so the same kernel is correct
  on CPU and on a GPU.
* ``round_to_bf16`` / ``round_to_e4m3``: jit helpers that round an fp32 tensor
  to the bf16 / float8_e4m3fn grid (round to nearest even, e4m3 saturating at
  +-448) and return fp32; a following cast is then exact. The interpreter's own
  fp32->bf16 cast truncates and its fp32->fp8 cast drops rounding carries and
  does not saturate, so kernels call these only under ``INTERPRET``.
* ``check_*``: launcher argument checks raising ValueError that names the argument.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

INTERPRET: bool = os.environ.get("TRITON_INTERPRET", "0") == "1"


def _repair_interpreter_stdlib() -> None:
    """If triton was imported before TRITON_INTERPRET=1 was set (tests/kernels/conftest.py
    imports it first), the @jit functions of triton.language.standard (tl.max, tl.sum,
    tl.zeros, tl.cdiv, ...) were built as compiled JITFunctions and raise "Cannot call
    @triton.jit'd outside of the scope of a kernel" inside interpreted kernels. Re-wrap
    them as interpreted functions. Tensor member forms (x.max()) keep the old objects,
    so kernels here use the free-function forms only."""
    import triton.language.standard as st
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    fixed = {id(obj): InterpretedFunction(obj.fn)
             for obj in vars(st).values() if isinstance(obj, JITFunction)}
    if not fixed:
        return
    for mod in (st, tl):
        for name, obj in list(vars(mod).items()):
            if id(obj) in fixed:
                setattr(mod, name, fixed[id(obj)])


if INTERPRET:
    _repair_interpreter_stdlib()

FP8_E4M3_MAX = 448.0
CACHE_DTYPES = (torch.bfloat16, torch.float16, torch.float8_e4m3fn)
FLOAT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


@triton.jit
def round_to_bf16(x):
    """fp32 -> fp32 holding the nearest bf16 value (ties to even)."""
    bits = x.to(tl.uint32, bitcast=True)
    lsb = (bits >> 16) & 1
    bits = (bits + 0x7FFF + lsb) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def round_to_e4m3(x):
    """fp32 -> fp32 holding the nearest float8_e4m3fn value (ties to even, saturating)."""
    x = tl.minimum(tl.maximum(x, -448.0), 448.0)
    bits = x.to(tl.int32, bitcast=True)
    exp = ((bits >> 23) & 0xFF) - 127
    exp = tl.maximum(exp, -6)  # subnormals share the spacing of the smallest normal
    step = ((exp - 3 + 127) << 23).to(tl.float32, bitcast=True)  # 2^(exp-3): 3 mantissa bits
    y = x / step  # exact: step is a power of two, |y| < 16
    y = (y + 12582912.0) - 12582912.0  # 1.5 * 2^23: fp32 add rounds y to an integer, ties to even
    return y * step


@triton.jit
def store_rounded(ptr, x, mask, OUT_KIND: tl.constexpr, INTERP: tl.constexpr):
    """Store fp32 ``x`` to ``ptr`` (element type given by OUT_KIND: 0 fp32, 1 bf16,
    2 fp16, 3 e4m3 (x already divided by its scale)), rounding correctly on the interpreter."""
    if OUT_KIND == 3:
        if INTERP:
            x = round_to_e4m3(x)
        else:
            x = tl.minimum(tl.maximum(x, -448.0), 448.0)
    elif OUT_KIND == 1:
        if INTERP:
            x = round_to_bf16(x)
    tl.store(ptr, x.to(ptr.dtype.element_ty), mask=mask)


def out_kind(dtype: torch.dtype) -> int:
    return {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2, torch.float8_e4m3fn: 3}[dtype]


def check_tensor(name: str, t, *, ndim: int | None = None, dtypes=None, device=None) -> None:
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if ndim is not None and t.dim() != ndim:
        raise ValueError(f"{name}: expected {ndim} dims, got shape {tuple(t.shape)}")
    if dtypes is not None and t.dtype not in dtypes:
        raise ValueError(f"{name}: dtype {t.dtype} not in {[str(d) for d in dtypes]}")
    if not t.is_contiguous():
        raise ValueError(f"{name}: must be contiguous")
    if device is not None and t.device != device:
        raise ValueError(f"{name}: on {t.device}, expected {device}")


def check_scale(name: str, scale, n_heads: int, device) -> torch.Tensor | None:
    """Validate an fp8 scale: None, a float, a [1] tensor or a [n_heads] tensor -> fp32 [1 or n_heads]."""
    if scale is None:
        return None
    if not isinstance(scale, torch.Tensor):
        scale = torch.tensor([float(scale)], dtype=torch.float32, device=device)
    scale = scale.reshape(-1).to(device=device, dtype=torch.float32).contiguous()
    if scale.numel() not in (1, n_heads):
        raise ValueError(f"{name}: expected 1 or {n_heads} elements, got {scale.numel()}")
    if not bool(torch.all(scale > 0)):
        raise ValueError(f"{name}: scales must be > 0")
    return scale


def check_paged_index(block_table, seq_lens, num_blocks: int, block_size: int, device) -> None:
    """block_table int32 [batch, max_blocks], seq_lens int32 [batch] within bounds."""
    check_tensor("block_table", block_table, ndim=2, dtypes=(torch.int32,), device=device)
    check_tensor("seq_lens", seq_lens, ndim=1, dtypes=(torch.int32,), device=device)
    if seq_lens.shape[0] != block_table.shape[0]:
        raise ValueError(
            f"seq_lens: batch {seq_lens.shape[0]} != block_table batch {block_table.shape[0]}")
    if seq_lens.numel() and int(seq_lens.min()) < 0:
        raise ValueError("seq_lens: negative length")
    if seq_lens.numel() and int(seq_lens.max()) > block_table.shape[1] * block_size:
        raise ValueError("seq_lens: longer than block_table can address")
    need = (seq_lens.long() + block_size - 1) // block_size
    cols = torch.arange(block_table.shape[1], device=block_table.device)
    used = cols[None, :] < need[:, None]
    vals = block_table[used]
    if vals.numel() and (int(vals.min()) < 0 or int(vals.max()) >= num_blocks):
        raise ValueError(f"block_table: block id outside [0, {num_blocks}) inside seq_lens")


def next_pow2(n: int, lo: int = 1) -> int:
    return max(lo, triton.next_power_of_2(max(1, int(n))))
