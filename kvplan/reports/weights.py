"""Report for `kvplan weights`: a checkpoint's bytes by dtype and by role, and per GPU."""

from __future__ import annotations

from ..capacity.weights import kv_note, mtp_bytes, stage_weight_bytes
from ..core.model import ModelSpec
from ..render import Report, Table
from ..units import format_bytes
from ..weights.record import REPLICATED, Weights


def _share(n: int, total: int) -> str:
    return f"{100 * n / total:.2f}%" if total else "-"


def build(model: ModelSpec, weights: Weights, tp: int = 1, pp: int = 1) -> Report:
    total = weights.total_bytes
    stages = stage_weight_bytes(weights, model.num_layers, tp, pp)
    mtp = mtp_bytes(weights, model.num_layers)
    data = {
        "model": {"name": model.name, "source": model.source, "model_type": model.model_type, "layers": model.num_layers,
                  "param_count_from_config": model.param_count},
        "weights": weights.to_json(),
        "tp": tp, "pp": pp,
        "weight_bytes_per_gpu_by_stage": stages,
        "weight_bytes_per_gpu": max(stages),
        "mtp_bytes": mtp,
    }
    summary = [
        ["source", weights.source],
        ["read from", weights.origin or "-"],
        ["total", f"{total:,} B = {format_bytes(total)}"],
        ["quantization", weights.quantization or "none"],
    ]
    if weights.files:
        summary.append(["files / tensors", f"{weights.files:,} / {weights.tensors:,}"])
    if weights.parts:
        summary.append(["tied embeddings", weights.tied_embeddings])
    if mtp:
        est = ", estimated from the config" if weights.mtp_estimated_bytes else ""
        summary.append(["MTP module", f"{mtp:,} B = {format_bytes(mtp)}{est}, not loaded unless MTP speculative "
                                      "decoding is on"])
    summary.append([f"per GPU (tp {tp}, pp {pp})" + (", without MTP" if mtp else ""),
                    " | ".join(format_bytes(s) for s in stages)])
    tables = [Table(f"{model.name}: weights", ["quantity", "value"], summary)]
    if weights.by_dtype:
        rows = [[d.dtype, d.bytes, format_bytes(d.bytes), d.elements or None, d.tensors or None, _share(d.bytes, total)]
                for d in weights.by_dtype]
        tables.append(Table("by dtype (as stored)", ["dtype", "bytes", "size", "elements", "tensors", "share"], rows, {1, 3, 4, 5}))
    roles = weights.by_role
    if roles:
        rows = [[role, n, format_bytes(n), _share(n, total), "replicated" if role in REPLICATED else "split"]
                for role, n in roles.items()]
        tables.append(Table("by role", ["role", "bytes", "size", "share", "under TP"], rows, {1, 3}))
    lines = [note for note in weights.notes if note]
    line = kv_note(weights, model, tp)
    if line is not None:
        lines.append(line)
        data["weights"]["notes"].append(line)
    from . import tidy

    return Report(data, tables, lines, tidy=tidy.weights(data))
