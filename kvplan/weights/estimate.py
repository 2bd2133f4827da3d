"""Weights records that need no file: the config estimate and a size given by the user."""

from __future__ import annotations

from dataclasses import replace

from ..core.model import ModelSpec
from .record import NO_LAYER, DtypeBytes, Weights


def estimated(model: ModelSpec, quantization: str = "none", note: str | None = None) -> Weights:
    """Parameter count x bytes per parameter (kvplan/configs/params.py), the last resort."""
    total = model.weight_bytes
    vision_params, vision_bytes, _ = model.weight_vision
    tower = ("" if not vision_params else f" + vision tower {vision_params:,} x {vision_bytes // vision_params:g} B"
             if not model.weight_vision_quantized[0] else f" + vision tower {vision_params:,} ({vision_bytes:,} B)")
    notes = (f"parameter count {model.param_count:,} x {model.weight_bytes_per_param:g} B ({model.weight_dtype})"
             f"{tower}; not read from a checkpoint",)
    if note:
        notes += (note,)
    notes += tuple(n for n in model.notes if n.startswith(("parameters not counted", "weights not sized",
                                                           "weights estimated as", "parameter count approximate",
                                                           "parameters counted for", "vision tower")))
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
        kv_split=config_kv_split(model),
        vision=model.weight_vision[1:],
    )


def config_kv_split(model: ModelSpec):
    """The config estimate's KV shares (ModelSpec.weight_kv) as a record's kv_split (attention, outside the
    layers, so split evenly over the stages): a counter where the model's is one (read only under TP), None where
    not known."""
    kv = model.weight_kv
    if kv is None:
        return None

    def parts(pairs):
        return None if pairs is None else tuple(("attention", NO_LAYER, n, heads) for heads, n in pairs)

    return (lambda: parts(kv())) if callable(kv) else parts(kv)


# a bundled total is the bytes of the safetensors files: each file's header (8 B and a JSON entry a tensor) sits
# above its tensors; the bundled notes put these headers under 0.01% of the total (DeepSeek-V2 3.6 MB in 471 GB)
HEADER_SHARE = 10_000


def holds_config_estimate(record: Weights, model: ModelSpec) -> bool:
    """Whether a record without a tensor table holds the modules the config counts: the config estimate itself,
    or a checkpoint total (bundled, an index's total_size) that is the estimate to the byte, less the MTP module
    estimated in it and, for a bundled total of safetensors files, up to 1 / HEADER_SHARE for the files' headers
    (a float32 checkpoint is not: vLLM serves it in bf16). The one test with_config_replicated and the routed
    experts' placement (capacity.experts) read."""
    if record.parts:
        return False
    if record.source == "estimated from config":
        return True
    if record.source not in ("bundled", "index") or model.float_dtype == "float32":
        return False
    left = record.total_bytes - record.mtp_estimated_bytes - model.weight_bytes
    return 0 <= left <= (record.total_bytes // HEADER_SHARE if record.source == "bundled" else 0)


def with_config_replicated(record: Weights, model: ModelSpec) -> Weights:
    """A checkpoint total without a tensor table (a bundled total, an index's total_size) whose bytes are the
    config estimate's, less the MTP module estimated in it (kvplan.weights.mtp: apply with_mtp_estimate first)
    and, for a bundled total of safetensors files, up to 1 / HEADER_SHARE of the total for the files' headers,
    holds the modules the config counts: it takes the estimate's bytes each TP rank holds whole
    (ModelSpec.weight_replicated, counted on first use under TP), and a note says what is assumed where the total
    is not the estimate to the byte. Any other total is left to an even split. A float32 checkpoint is left as it
    is (vLLM serves it in bf16, halving the total but not this count)."""
    if record.replicated or record.source not in ("bundled", "index") or not holds_config_estimate(record, model):
        return record
    left = record.total_bytes - record.mtp_estimated_bytes - model.weight_bytes
    if not left and not record.mtp_estimated_bytes:
        return replace(record, replicated=model.weight_replicated, kv_split=config_kv_split(model),
                       vision=model.weight_vision[1:])
    pieces = [f"{model.weight_bytes:,} B config estimate"]
    if record.mtp_estimated_bytes:
        pieces.append(f"{record.mtp_estimated_bytes:,} B MTP module estimate")
    if left:
        pieces.append(f"{left:,} B taken for the safetensors files' headers")
    note = (f"assumed to hold the modules the config counts ({record.total_bytes:,} B = " + " + ".join(pieces)
            + "), so each TP rank holds the estimate's norms, routers, biases and latent projections whole, and "
            "its KV-head share of the k/v projections")
    return replace(record, replicated=model.weight_replicated, kv_split=config_kv_split(model),
                   vision=model.weight_vision[1:],
                   notes=record.notes + (note,))


FLOAT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def _by_dtype(model: ModelSpec, total: int) -> tuple[DtypeBytes, ...]:
    """One row, or for a quantized checkpoint two: the quantized weights (with their scales) and the parameters
    kept in the float dtype; three where the routed experts are stored in a format of their own (FP8's
    store_dtype, "mxfp4 experts + fp8 + bfloat16"): theirs first."""
    quantized, _, plain_dtype = model.weight_dtype.rpartition(" + ")
    plain = model.weight_plain_params
    vision_params, vision_bytes, _ = model.weight_vision  # the tower (configs/vision_towers.py)
    # of it, the linears an engine's online quantization holds in the quantized dtype; the rest in the float dtype
    vision_q_params, vision_q_bytes = model.weight_vision_quantized
    vision_params, vision_bytes = vision_params - vision_q_params, vision_bytes - vision_q_bytes
    if not plain or plain_dtype not in FLOAT_BYTES:
        if vision_params and model.weight_dtype not in FLOAT_BYTES:  # quantized throughout: the tower a float row
            return (DtypeBytes(model.weight_dtype, total - vision_bytes, model.param_count, 0),
                    DtypeBytes("float32" if vision_bytes == 4 * vision_params else "bfloat16", vision_bytes,
                               vision_params, 0))
        return (DtypeBytes(model.weight_dtype, total, model.param_count + vision_params, 0),)
    # the tower is outside param_count (the text model's): its parameters join the float row, not the quantized one
    plain_bytes = plain * FLOAT_BYTES[plain_dtype] + vision_bytes
    rows = ()
    experts, experts_bytes = model.weight_expert_params, model.weight_expert_bytes
    if experts and " experts + " in quantized:  # FP8's store_dtype: the routed experts in their own row
        experts_dtype, _, quantized = quantized.partition(" + ")
        rows = (DtypeBytes(experts_dtype, experts_bytes, experts, 0),)
    else:
        experts = experts_bytes = 0
    return rows + (DtypeBytes(quantized, total - plain_bytes - experts_bytes,
                              model.param_count - plain - experts + vision_q_params, 0),
                   DtypeBytes(plain_dtype, plain_bytes, plain + vision_params, 0))


def given(total_bytes: int, origin: str = "--weights") -> Weights:
    return Weights(total_bytes=int(total_bytes), source="given", origin=origin, notes=("size given on the command line or in a scenario",))
