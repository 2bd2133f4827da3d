"""Weights records that need no file: the config estimate and a size given by the user."""

from __future__ import annotations

from dataclasses import replace

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
        by_dtype=_by_dtype(model, total),
        notes=notes,
        replicated=model.weight_replicated,  # a counter stays one: read only under TP
    )


def with_config_replicated(record: Weights, model: ModelSpec) -> Weights:
    """A checkpoint total without a tensor table (a bundled total, an index's total_size) that equals the config
    estimate to the byte holds the modules the config counts: it takes the estimate's bytes each TP rank holds
    whole (ModelSpec.weight_replicated, counted on first use under TP). A float32 checkpoint is left as it is
    (vLLM serves it in bf16, halving the total but not this count)."""
    if (record.parts or record.source not in ("bundled", "index") or record.replicated
            or record.total_bytes != model.weight_bytes or model.float_dtype == "float32"):
        return record
    return replace(record, replicated=model.weight_replicated)


FLOAT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def _by_dtype(model: ModelSpec, total: int) -> tuple[DtypeBytes, ...]:
    """One row, or for a quantized checkpoint two: the quantized weights (with their scales) and the parameters
    kept in the float dtype."""
    quantized, _, plain_dtype = model.weight_dtype.partition(" + ")
    plain = model.weight_plain_params
    if not plain or plain_dtype not in FLOAT_BYTES:
        return (DtypeBytes(model.weight_dtype, total, model.param_count, 0),)
    plain_bytes = plain * FLOAT_BYTES[plain_dtype]
    return (DtypeBytes(quantized, total - plain_bytes, model.param_count - plain, 0),
            DtypeBytes(plain_dtype, plain_bytes, plain, 0))


def given(total_bytes: int, origin: str = "--weights") -> Weights:
    return Weights(total_bytes=int(total_bytes), source="given", origin=origin, notes=("size given on the command line or in a scenario",))
