"""Weights records that need no file: the config estimate and a size given by the user."""

from __future__ import annotations

from ..core.model import ModelSpec
from .record import DtypeBytes, Weights


def estimated(model: ModelSpec, quantization: str = "none", note: str | None = None) -> Weights:
    """Parameter count x bytes per parameter (kvplan/configs/params.py), the last resort."""
    total = model.weight_bytes
    notes = (f"parameter count {model.param_count:,} x {model.weight_bytes_per_param:g} B ({model.weight_dtype});"
             " not read from a checkpoint",)
    if note:
        notes += (note,)
    notes += tuple(n for n in model.notes if n.startswith(("parameters not counted", "weights not sized",
                                                           "weights estimated as", "parameter count approximate")))
    if " experts + " in model.weight_dtype:  # DeepSeek-V4: the routed experts in their own dtype
        quantization = f"{quantization}; routed experts {model.weight_dtype.split()[0]}"
    return Weights(
        total_bytes=total,
        source="estimated from config",
        origin=model.source,
        quantization=quantization,
        by_dtype=(DtypeBytes(model.weight_dtype, total, model.param_count, 0),),
        notes=notes,
    )


def given(total_bytes: int, origin: str = "--weights") -> Weights:
    return Weights(total_bytes=int(total_bytes), source="given", origin=origin, notes=("size given on the command line or in a scenario",))
