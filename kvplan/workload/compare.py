"""`kvplan compare`: several models side by side under the same workload
(context, batch, KV dtype, techniques) on the same GPUs."""

from __future__ import annotations

from ..capacity.hardware import make_deployment
from ..errors import PlanError, UsageError
from ..planner import as_number, evaluate
from ..render import Report, Table
from ..request import online_without_engine
from ..sources import load_model_and_weights
from ..techniques.registry import build_all
from ..units import format_bytes, format_tokens, parse_positive_int, parse_tokens
from ..workflows import apply_kv_dtype, check_prefix_within, check_tp_after, warn_above_max_context


def _column(name: str, spec, chain, tokens: int, batch: int, deployment, weights=None) -> dict:
    """One model's numbers; capacity stays empty when its weights do not fit."""
    note = None
    try:
        result = evaluate(spec, chain, tokens, batch, deployment, weights=weights)
    except PlanError as exc:
        result = evaluate(spec, chain, tokens, batch, None, weights=weights)
        note = exc.message
    est, cap, dec = result.estimate, result.capacity, result.decode
    return {
        "model": name,
        "name": result.plan.model.name,
        "bytes_per_token": as_number(est.bytes_per_token),
        "kv_bytes_per_sequence": est.kv_bytes_per_sequence,
        "state_bytes_per_sequence": est.state_bytes_per_sequence,
        "bytes_per_sequence": est.bytes_per_sequence,
        "total_bytes": result.batch.total_bytes,
        "read_bytes_per_step": est.read_bytes_per_step,
        "weight_bytes": result.weights.total_bytes if result.weights.known else None,
        "weights_source": result.weights.source,
        "weight_bytes_per_gpu": cap.weight_bytes_per_gpu if cap else None,
        "pool_bytes": cap.pool_bytes if cap else None,
        "pool_tokens": cap.pool_tokens if cap else None,
        "max_concurrency": cap.max_concurrency if cap else None,
        "step_ms": round(dec.step_ms, 6) if dec else None,
        "fits": note is None,
        "note": note,
    }


SIDE_BY_SIDE_MOST = 4  # models shown as columns; more are listed a row each (95 made 95 empty columns)


def _rows_per_model(title: str, cols: list[dict], ctx: str, batch_n: int) -> Table:
    """The same numbers a row per model, binary units only; the KV dtype and the fixed state only where
    they tell the models apart (the JSON and CSV keep every field)."""
    def size(v):
        return "-" if v is None else format_bytes(v, decimal=False)

    def count(v):
        return "-" if v is None else f"{v:,}"

    columns = [("model", lambda c: c["model"])]
    if len({c["kv_dtype"] for c in cols}) > 1:
        columns.append(("KV dtype", lambda c: c["kv_dtype"]))
    columns += [("B/token", lambda c: count(c["bytes_per_token"])), (f"KV/seq {ctx}", lambda c: size(c["kv_bytes_per_sequence"]))]
    if any(c["state_bytes_per_sequence"] for c in cols):
        columns.append(("state/seq", lambda c: size(c["state_bytes_per_sequence"])))
    columns += [("weights/GPU", lambda c: size(c["weight_bytes_per_gpu"])), ("pool/GPU", lambda c: size(c["pool_bytes"])),
                (f"seqs {ctx}", lambda c: count(c["max_concurrency"])),
                ("decode ms", lambda c: "-" if c["step_ms"] is None else f"{c['step_ms']:,.2f}")]
    title += f"; seqs: most concurrent sequences, decode ms: floor at batch {batch_n}"
    return Table(title, [h for h, _ in columns], [[f(c) for _, f in columns] for c in cols],
                 set(range(1, len(columns))))


def compare_workflow(*, models, context, batch, kv_dtype, techniques, gpu, tp, pp, mem_util,
                     quantization: str | None = None) -> Report:
    if len(models) < 2:
        raise UsageError(f"compare needs at least two models, got {len(models)}", "for example: kvplan compare llama-3.1-8b qwen3-8b")
    tokens = parse_tokens(context, "--context")
    batch_n = parse_positive_int(batch, "--batch")
    chain = build_all(techniques)
    check_prefix_within(chain, tokens)
    deployment = make_deployment(gpu, tp=tp, pp=pp, mem_util=mem_util)
    online = online_without_engine(quantization)  # each float checkpoint quantized as vLLM 0.34 loads it
    cols = []
    for name in models:
        spec, weights = load_model_and_weights(name, quantization=online)
        spec, dtype = apply_kv_dtype(spec, kv_dtype)
        warn_above_max_context(spec, tokens)
        check_tp_after(spec, chain, tp)
        cols.append(_column(name, spec, chain, tokens, batch_n, deployment, weights) | {"kv_dtype": dtype})
    base = cols[0]

    def cells(key, fmt):
        return [None if c[key] is None else fmt(c[key]) for c in cols]

    ratio = [
        f"x{c['bytes_per_sequence'] / base['bytes_per_sequence']:.3f}" if base["bytes_per_sequence"] else "-" for c in cols
    ]
    ctx = format_tokens(tokens)
    rows = [
        ["KV dtype (before techniques)", *[c["kv_dtype"] for c in cols]],
        ["bytes per token", *cells("bytes_per_token", lambda v: f"{v:,}")],
        [f"KV per sequence at {ctx}", *cells("kv_bytes_per_sequence", format_bytes)],
        ["fixed state per sequence", *cells("state_bytes_per_sequence", format_bytes)],
        [f"per sequence vs {base['model']}", *ratio],
        [f"batch of {batch_n}", *cells("total_bytes", format_bytes)],
        ["KV read per decode step (1 seq)", *cells("read_bytes_per_step", format_bytes)],
        ["weights (whole model)", *[f"{format_bytes(c['weight_bytes'])}, {c['weights_source']}" for c in cols]],
        ["weights per GPU", *cells("weight_bytes_per_gpu", format_bytes)],
        ["KV pool per GPU", *cells("pool_bytes", format_bytes)],
        ["tokens in the pool", *cells("pool_tokens", lambda v: f"{v:,}")],
        [f"max concurrent sequences at {ctx}", *cells("max_concurrency", lambda v: f"{v:,}")],
        [f"decode floor, batch {batch_n} (ms/token)", *cells("step_ms", lambda v: f"{v:,.2f}")],
    ]
    title = f"same workload: {ctx} tokens, batch {batch_n}, {deployment.gpus} x {deployment.gpu.name} (tp {tp}, pp {pp})"
    if techniques:
        title += ", techniques " + ", ".join(techniques)
    if quantization is not None:
        title += f", --quantization {online[0]}"
    if len(cols) <= SIDE_BY_SIDE_MOST:
        table = Table(title, ["quantity", *[c["model"] for c in cols]], rows, set(range(1, len(cols) + 1)))
    else:  # a column per model stops being readable: a row per model, the quantities across
        table = _rows_per_model(title, cols, ctx, batch_n)
    lines = [f"{c['model']}: does not fit: {c['note']}" for c in cols if not c["fits"]]
    data = {
        "schema_version": 1,
        "context_tokens": tokens,
        "batch": batch_n,
        "gpu": deployment.gpu.name,
        "tp": tp,
        "pp": pp,
        "techniques": list(techniques),
        "models": cols,
    }
    from ..reports import tidy

    machine = tidy.records("compare", [c | {"context_tokens": tokens, "batch": batch_n, "gpu": deployment.gpu.name, "tp": tp, "pp": pp,
                                            "techniques": " ".join(techniques)} for c in cols],
                           ["model", *[k for k in cols[0] if k != "model"], "context_tokens", "batch", "gpu", "tp", "pp", "techniques"])
    return Report(data, [table], lines, tidy=machine)
