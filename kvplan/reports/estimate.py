"""Report for `kvplan estimate`: the JSON document (stable keys, see
docs/json.md) and the tables people read."""

from __future__ import annotations

from ..capacity.weights import mtp_bytes, vision_bytes
from ..planner import PlanResult, as_number
from ..render import Report, Table
from ..units import GIB, format_bytes, format_tokens
from ..weights.estimate import estimated

SCHEMA_VERSION = 1


def explain_lines(result: PlanResult) -> list[str]:
    """The formula with the model's numbers substituted, one line per layer kind."""
    est = result.estimate
    n = est.context_tokens
    lines = [f"KV bytes per sequence = sum over layer kinds of layers x entries kept x bytes per entry (n = {n:,} tokens)"]
    lines += [f"  note: {note}" for note in result.plan.model.notes]
    for layer, count in result.plan.model.groups:
        if layer.shares_cache_of is not None:
            lines.append(f"  {count} x [{layer.kind}]: 0 B (reads another layer's cache)")
            continue
        for cache in layer.caches:
            kept = cache.policy.stored_entries(n)
            per = as_number(cache.bytes_per_token())
            if cache.kind == "attention":
                shape = f"{cache.heads} KV heads x ({cache.key_dim} + {cache.value_dim}) x {cache.storage.bits}/8 B"
            else:
                shape = f"{cache.key_dim} elements x {cache.storage.bits}/8 B"
            extra = " + scales" if cache.storage.is_quantized and cache.storage.granularity not in ("tensor", "head") else ""
            policy = cache.policy
            unit = "B/token"
            if policy.compress_ratio and not policy.window_tokens and not policy.chunk_tokens:
                unit = "B/entry"
                cap = f"{n:,} // {policy.compress_ratio}" + (
                    f" + min({n:,}, {policy.compress_window:,})" if policy.compress_window else "")
            elif cache.policy.window_tokens:
                cap = f"min({n:,}, {cache.policy.window_tokens:,})"
            elif cache.policy.chunk_tokens:
                cap = f"current chunk: ({n:,} - 1) % {cache.policy.chunk_tokens:,} + 1"
            else:
                cap = f"{n:,}"
            lines.append(
                f"  {count} x [{cache.label or cache.kind}] {shape}{extra} = {per:,} {unit}; entries {cap} -> {kept:,}; "
                f"{count} x {kept:,} x {per:,} = {format_bytes(count * cache.stored_bytes(n))}"
            )
        if layer.state is not None:
            s = layer.state
            parts = f"{s.ssm_elements:,} x {s.ssm_storage.bits}/8" if not s.conv_elements else (
                f"{s.conv_elements:,} conv x {s.conv_storage.bits}/8 + {s.ssm_elements:,} ssm x {s.ssm_storage.bits}/8")
            lines.append(
                f"  {count} x [{s.kind} state] ({parts}) B = {count} x {s.bytes:,} B = "
                f"{format_bytes(count * s.bytes)} per sequence"
            )
    lines.append(
        f"  total for batch {est.batch}: {est.batch} x ({est.kv_bytes_per_sequence:,} + {est.state_bytes_per_sequence:,})"
        f" = {format_bytes(result.batch.total_bytes)}"
    )
    return lines


def build(result: PlanResult, *, kv_dtype: str, explain: bool = False, engine: str | None = None) -> Report:
    """The estimate's report. engine: the serving engine whose own figures follow ("vLLM", "SGLang"), named in
    the capacity table's title, which stays kvplan's own plan."""
    est = result.estimate
    model = result.plan.model
    weights = result.weights or estimated(model)
    b = result.batch
    kinds = [
        {
            "kind": k.kind,
            "layers": k.layers,
            "cache_layers": k.cache_layers,
            "bytes_per_token": as_number(k.bytes_per_token),
            "cap_tokens": k.cap_tokens,
            "retained_tokens": k.retained_tokens,
            "kv_bytes_per_sequence": k.kv_bytes_per_sequence,
            "state_bytes_per_sequence": k.state_bytes_per_sequence,
            "read_bytes_per_step": k.read_bytes_per_step,
        }
        for k in est.kinds
    ]
    data = {
        "schema_version": SCHEMA_VERSION,
        "model": {
            "name": model.name,
            "source": model.source,
            "model_type": model.model_type,
            "layers": model.num_layers,
            "param_count": model.param_count,
            "active_param_count": model.active_param_count,
            "weight_dtype": model.weight_dtype,
            "weight_bytes": weights.total_bytes if weights.known else None,  # null: not known from the config
            "mtp_weight_bytes": mtp_bytes(weights, model.num_layers),  # in weight_bytes, not loaded (see capacity.weights)
            "weights": weights.to_json(),
            # the engine's --quantization that quantizes the float checkpoint as it loads (configs/quant_online.py):
            # the weights are then sized as the engine holds them; null: served as stored
            "online_quantization": model.online_quantization or None,
            "max_context_tokens": model.max_context_tokens,
            "family": model.family,
            "architecture": model.architecture,
            "reading": model.reading,
            "notes": list(model.notes),
        },
        "context_tokens": est.context_tokens,
        "batch": est.batch,
        "kv_dtype": kv_dtype,
        "bytes_per_token": as_number(est.bytes_per_token),
        "kv_bytes_per_sequence": est.kv_bytes_per_sequence,
        "state_bytes_per_sequence": est.state_bytes_per_sequence,
        "bytes_per_sequence": est.bytes_per_sequence,
        "total_bytes": b.total_bytes,
        "read_bytes_per_step": est.read_bytes_per_step,
        "kv_bytes_per_gpu": result.kv_bytes_per_gpu,
        "layer_kinds": kinds,
        "techniques": [
            {
                "spec": s.spec, "label": s.label, "term": s.term, "caveat": s.caveat,
                "gpu_bytes": s.gpu_bytes, "stored_bytes": s.stored_bytes,
                "read_bytes_per_step": s.read_bytes_per_step, "factor": round(s.factor, 6),
            }
            for s in result.steps
        ],
    }
    if result.plan.block_size:
        data["paging"] = {
            "block_tokens": result.plan.block_size,
            "kv_bytes_per_sequence": b.kv_bytes_per_sequence,
            "fragmentation_bytes": b.fragmentation_bytes,
            "fragmentation_pct": round(100 * b.fragmentation_bytes / b.kv_bytes_per_sequence, 3) if b.kv_bytes_per_sequence else 0.0,
        }
    if result.plan.prefix is not None:
        p = result.plan.prefix
        block = result.plan.block_size or 16
        full = (min(p.tokens, est.context_tokens) // block) * block
        data["prefix"] = {
            "prefix_tokens": p.tokens,
            "requests": p.requests,
            "sharing_sequences": b.prefix_sharers,
            "shared_tokens": full,
            "shared_bytes": b.prefix_shared_bytes,
            "saved_bytes": b.saved_bytes,
            "hit_rate": round((b.prefix_sharers - 1) / b.prefix_sharers * full / p.tokens, 6) if b.prefix_sharers else 0.0,
        }
    rows = [
        ["bytes per token", as_number(est.bytes_per_token), format_bytes(as_number(est.bytes_per_token))],
        [f"KV per sequence at {format_tokens(est.context_tokens)}", est.kv_bytes_per_sequence, format_bytes(est.kv_bytes_per_sequence)],
        ["fixed state per sequence", est.state_bytes_per_sequence, format_bytes(est.state_bytes_per_sequence)],
        [f"total for batch {est.batch}", b.total_bytes, format_bytes(b.total_bytes)],
        ["KV read per decode step (1 seq)", est.read_bytes_per_step, format_bytes(est.read_bytes_per_step)],
    ]
    applied = len(result.steps) - 1
    title = f"{model.name}: {kv_dtype} KV cache" + (f", after {applied} technique{'s' if applied > 1 else ''}" if applied else "")
    if model.reading == "guessed":
        title += f" (GUESSED reading: unknown model_type {model.model_type!r})"
    tables = [Table(title, ["quantity", "bytes", "size"], rows, {1})]
    kind_rows = [
        [k["kind"], k["layers"], k["cache_layers"], k["bytes_per_token"], k["cap_tokens"], k["retained_tokens"],
         format_bytes(k["kv_bytes_per_sequence"], decimal=False), format_bytes(k["state_bytes_per_sequence"], decimal=False)]
        for k in kinds
    ]
    tables.append(Table("by layer kind", ["kind", "layers", "own cache", "B/token per layer", "cap", "kept tokens", "KV/seq", "state/seq"], kind_rows, {1, 2, 3, 4, 5}))
    if len(result.steps) > 1:
        wf = [
            [s.spec, s.label, s.term, format_bytes(s.gpu_bytes, decimal=False), f"x{s.factor:.3f}" if s.spec != "baseline" else "",
             format_bytes(s.read_bytes_per_step, decimal=False), s.caveat]
            for s in result.steps
        ]
        tables.append(Table("techniques, in order (batch on GPU)", ["step", "what", "term", "GPU bytes", "factor", "read/step", "caveat"], wf, {3, 4, 5}))
    lines = explain_lines(result) if explain else []
    data["explain"] = list(lines)  # --explain's lines; [] without it
    data_extra(result, data, tables, lines, engine)
    return Report(data, tables, lines)


def _gpu_memory(dep) -> dict:
    """The card's total the pool is sized from, and where it comes from."""
    if dep.gpu is None or dep.kv_memory_bytes is not None:
        return {}
    return {"gpu_memory_bytes": dep.gpu.usable_bytes, "gpu_memory_from": _memory_source(dep.gpu)}


def _memory_source(gpu) -> str:
    from ..capacity.gpus import CATALOG

    if gpu.driver_bytes:
        return "driver"
    if gpu.name not in CATALOG or gpu.memory_bytes != CATALOG[gpu.name].memory_bytes:
        return "--gpu-memory"
    # a card whose catalog total is nvidia-smi's memory.total (the B300), not the datasheet's
    return "nvidia-smi" if gpu.smi_mib and gpu.memory_bytes == gpu.smi_mib * 1024**2 else "datasheet"


def _gpu_memory_text(dep) -> str:
    gpu = dep.gpu
    text = f"{format_bytes(gpu.usable_bytes)} x {dep.mem_util:g}"
    source = _memory_source(gpu)
    if source == "driver":
        return text + f" (what the driver reports of the {gpu.memory_bytes / GIB:g} GiB on the datasheet)"
    if source == "datasheet":
        return text + " (the datasheet's; the driver reports less: give --gpu-memory for an exact pool)"
    if source == "nvidia-smi":
        return text + (" (nvidia-smi's total; the driver's, which engines size from, is a little less: give "
                       "--gpu-memory for an exact pool)")
    return text + " (--gpu-memory)"


def data_extra(result: PlanResult, data: dict, tables: list, lines: list, engine: str | None = None) -> None:
    """Capacity, decode and offload sections, when a deployment is given (engine: as in build)."""
    cap, dec, off, dep = result.capacity, result.decode, result.offload, result.deployment
    if cap is not None:
        data["pool_bytes"] = cap.pool_bytes
        data["pool_tokens"] = cap.pool_tokens
        data["max_concurrency"] = cap.max_concurrency
        data["capacity"] = {
            "gpu": dep.gpu.name if dep.gpu else None,
            "gpus": dep.gpus, "tp": dep.tp, "pp": dep.pp, "dp": dep.dp, "ep": dep.ep,
            "redundant_experts": dep.redundant_experts,  # EPLB's (capacity/eplb.py); null without EPLB
            "mem_util": dep.mem_util, "reserve_bytes": dep.reserve_bytes,
            **_gpu_memory(dep),
            "weight_bytes_per_gpu": cap.weight_bytes_per_gpu,
            "pool_bytes": cap.pool_bytes, "pool_blocks": cap.pool_blocks, "pool_tokens": cap.pool_tokens,
            "max_concurrency": cap.max_concurrency, "binding_stage": cap.binding_stage,
        }
        rows = [
            ["GPUs", f"{dep.gpus} x {dep.gpu.name if dep.gpu else 'given pool'} ({dep.layout_text})"],
            *([["memory per GPU", _gpu_memory_text(dep)]] if dep.gpu and dep.kv_memory_bytes is None else []),
            ["weights (whole model)", _weights_origin(result)],
            ["weights per GPU", format_bytes(cap.weight_bytes_per_gpu)],
            ["KV pool per GPU", format_bytes(cap.pool_bytes)],
            ["tokens in the pool", "-" if cap.pool_tokens is None else f"{cap.pool_tokens:,}"],
            [f"max concurrent sequences at {format_tokens(result.estimate.context_tokens)}", f"{cap.max_concurrency:,}"],
        ]
        if dep.dp > 1:  # each DP rank its own pool and requests (capacity.experts)
            rows[-2][0] = "tokens in the pool (one DP rank)"
            rows[-1][1] += f" ({dep.dp} DP ranks x {cap.max_concurrency // dep.dp:,})"
            if cap.pool_tokens is not None:
                rows.insert(len(rows) - 1, [f"tokens in the {dep.dp} DP ranks' pools", f"{cap.pool_tokens * dep.dp:,}"])
        if cap.pool_blocks is not None:  # right under the pool it divides
            at = next(i for i, row in enumerate(rows) if row[0] == "KV pool per GPU") + 1
            rows.insert(at, ["blocks in the pool", f"{cap.pool_blocks:,}"])
        if dec is not None:
            moved = result.estimate.batch - result.decoding  # offloaded sequences are not decoding
            rows.append([f"decode floor, batch {result.decoding}" + (f" ({moved:,} offloaded)" if moved > 0 else ""),
                         f"{dec.step_ms:.2f} ms/token, {dec.tokens_per_s:,.0f} tokens/s"])
        title = f"capacity (kvplan's own plan; {engine}'s figures below)" if engine else "capacity"
        tables.append(Table(title, ["quantity", "value"], rows))
    if dec is not None:
        data["decode"] = {
            "weight_read_bytes_per_gpu": dec.weight_read_bytes_per_gpu,
            "kv_read_bytes_per_gpu": dec.kv_read_bytes_per_gpu,
            "step_ms": round(dec.step_ms, 6),
            "tokens_per_s": round(dec.tokens_per_s, 3),
        }
    if off is not None:
        data["offload"] = {
            "offloaded_bytes": off.offloaded_bytes,
            "resident_bytes": off.resident_bytes,
            "sessions_on_cpu": off.sessions_on_cpu,
        }
        if off.resume is not None:
            r = off.resume
            data["offload"].update({
                "resume_bytes_per_gpu": r.bytes_per_gpu, "resume_ms": round(r.copy_ms, 6),
                "recompute_ms": round(r.recompute_ms, 6), "cheaper": r.cheaper,
            })
            lines.append(
                f"resume one sequence: {format_bytes(r.bytes_per_gpu)} per GPU over the host link = {r.copy_ms:,.1f} ms; "
                f"recompute = {r.recompute_ms:,.1f} ms -> {r.cheaper} is cheaper"
            )
        lines.append(f"offloaded to CPU: {format_bytes(off.offloaded_bytes)} ({off.sessions_on_cpu} sequences); resident on GPU: {format_bytes(off.resident_bytes)}")


def _weights_origin(result: PlanResult) -> str:
    w = result.weights
    if w is None:
        return "estimated from config"
    total = format_bytes(w.total_bytes)
    mtp = mtp_bytes(w, result.plan.model.num_layers)
    est = "an estimated " if w.mtp_estimated_bytes else ""
    served = (f"; of it, {est}{format_bytes(mtp)} is the MTP module, which only MTP speculative decoding loads"
              if mtp else "")
    vision = vision_bytes(w)  # in the total, on the first pipeline stage (capacity.weights.stage_weight_bytes)
    tower = (f"; of it, {format_bytes(vision)} is the vision tower, which --set vision_config=null leaves out "
             "(text only)" if vision else "")
    return (f"{total}, {w.source}" + (f", {w.quantization}" if w.quantization not in ("none", "") else "")
            + served + tower)
