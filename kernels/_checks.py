"""Argument checks shared by the launchers: every failure is a ValueError naming the argument."""
from __future__ import annotations

import torch

KV_DTYPES = (torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn)


def check(cond: bool, name: str, msg: str) -> None:
    if not cond:
        raise ValueError(f"{name}: {msg}")


def check_tensor(t, name: str, *, ndim: int | None = None, dtypes=None,
                 contiguous: bool = False, device=None) -> None:
    check(isinstance(t, torch.Tensor), name, f"expected a torch.Tensor, got {type(t).__name__}")
    if ndim is not None:
        check(t.dim() == ndim, name, f"expected {ndim} dims, got shape {tuple(t.shape)}")
    if dtypes is not None:
        check(t.dtype in tuple(dtypes), name, f"dtype {t.dtype} not in {tuple(dtypes)}")
    if contiguous:
        check(t.is_contiguous(), name, "must be contiguous")
    if device is not None:
        check(t.device == torch.device(device), name, f"is on {t.device}, expected {device}")


def check_shape(t: torch.Tensor, name: str, shape: tuple) -> None:
    """``shape`` entries may be None (any size)."""
    ok = t.dim() == len(shape) and all(s is None or s == d for s, d in zip(shape, t.shape))
    check(ok, name, f"expected shape {shape}, got {tuple(t.shape)}")


def check_fp8_scale(scale, name: str, num_kv_heads: int, device) -> torch.Tensor:
    """Per-tensor ([1]) or per-head ([num_kv_heads]) float32 scale."""
    check(scale is not None, name, "required for an fp8 cache (float32 [1] or [num_kv_heads])")
    check_tensor(scale, name, ndim=1, dtypes=(torch.float32,), contiguous=True)
    check(scale.shape[0] in (1, num_kv_heads), name,
          f"expected shape [1] or [{num_kv_heads}], got {tuple(scale.shape)}")
    check(scale.device == device, name, f"is on {scale.device}, expected {device}")
    return scale
