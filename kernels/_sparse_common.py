"""Private helpers shared by the sparse / latent / eviction kernels (part 2).

* ``INTERPRET`` (re-exported from _interp.py): True when Triton runs in its CPU
  interpreter. Kernels take it as a constexpr so the same kernel is correct on
  CPU and on a GPU.
* ``store_rounded``: store fp32 values as fp32 / bf16 / fp16 / e4m3, using
  _interp.py's exact rounding helpers under the interpreter (its own fp32->bf16
  cast truncates; its fp32->fp8 cast drops carries and does not saturate).
* ``check_*``: launcher argument checks raising ValueError that names the argument.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

# INTERPRET flag, exact bf16 / e4m3 rounding helpers and the repair of
# triton.language's @jit helpers when triton was imported before
# TRITON_INTERPRET was set all come from part 1's _interp.py.
from ._interp import INTERPRET, round_to_bf16, round_to_e4m3  # noqa: E402,F401

FP8_E4M3_MAX = 448.0
CACHE_DTYPES = (torch.bfloat16, torch.float16, torch.float8_e4m3fn)
FLOAT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


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
        if not float(scale) > 0:
            raise ValueError(f"{name}: scales must be > 0")
        scale = torch.tensor([float(scale)], dtype=torch.float32, device=device)
    scale = scale.reshape(-1).to(device=device, dtype=torch.float32).contiguous()
    if scale.numel() not in (1, n_heads):
        raise ValueError(f"{name}: expected 1 or {n_heads} elements, got {scale.numel()}")
    if scale.device.type == "cpu" and not bool(torch.all(scale > 0)):  # no device sync on GPU
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
