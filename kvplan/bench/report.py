"""Bench documents: the JSON schema (version 1), CSV rows and the terminal table.

Torch-free, so `kvplan gate` can read bench files without the bench extra.

Document (schema_version 1)::

    {
      "schema_version": 1, "kind": "kvplan-bench", "created": "2026-...Z",
      "environment": {device_kind: cuda|cpu, device_name, interpreter, torch, triton,
                      kvplan, python, git_commit},
      "config": {model, techniques, context_tokens, batch, repeats, block_tokens, shrink, seed},
      "shapes": {layers, q_heads, groups: [...], context_tokens, batch, shrink},
      "ceiling": {copy_gbps, copy_bytes, meaningful},
      "results": [ one row per technique, "baseline" first: see ROW_FIELDS ],
      "summary": {ok, mismatch, unsupported, error, oom}
    }
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone

from ..files import write_atomic  # noqa: F401  (re-exported: bench and gate write through it)

SCHEMA_VERSION = 1
KIND = "kvplan-bench"

ROW_FIELDS = [
    "technique", "status", "predicted_bytes", "measured_bytes", "bytes_match",
    "predicted_blocks", "measured_blocks", "blocks_match", "blocks_shared", "blocks_free", "waste_slots",
    "predicted_offloaded_bytes", "measured_offloaded_bytes", "pool_bytes", "block_table_bytes",
    "cuda_allocated_delta", "latency_ms_median", "latency_ms_p20", "latency_ms_p80", "latency_method",
    "prefill_ms", "offload_ms_median", "resume_ms_median", "resume_first_step_ms_median",
    "recompute_ms_predicted", "read_bytes_per_step", "floor_ms",
    "achieved_gbps", "efficiency", "efficiency_p20", "efficiency_p80", "error_rel", "attention_mass",
    "engine", "block_tokens", "message",
]
# Row fields that are numbers or null; anything else there (NaN, a string) makes a document unusable.
TEXT_FIELDS = ("technique", "status", "latency_method", "engine", "message", "bytes_match", "blocks_match")
NUMERIC_FIELDS = tuple(f for f in ROW_FIELDS if f not in TEXT_FIELDS)
STATUSES = ("ok", "mismatch", "unsupported", "n/a", "error", "oom")


def document(run) -> dict:
    """The JSON document of a run: its results are BenchRows, or JSON rows already
    (a distributed run's merged rows, bench.ranks)."""
    results = [r if isinstance(r, dict) else r.to_json() for r in run.results]
    statuses = [r["status"] for r in results]
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "environment": run.env,
        "config": run.config,
        "shapes": run.shapes,
        "ceiling": run.ceiling,
        "results": results,
        "summary": {s: statuses.count(s) for s in STATUSES},
    }


def to_json(doc: dict) -> str:
    return json.dumps(doc, indent=2, sort_keys=False, default=str) + "\n"


def to_csv(doc: dict) -> str:
    env = doc["environment"]
    extra = ["device_kind", "device_name", "torch", "triton", "kvplan", "model", "context_tokens", "batch"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(ROW_FIELDS + extra)
    for row in doc["results"]:
        writer.writerow([row.get(f) for f in ROW_FIELDS] + [
            env.get("device_kind"), env.get("device_name"), env.get("torch"), env.get("triton"),
            env.get("kvplan"), doc["config"].get("model"), doc["config"].get("context_tokens"),
            doc["config"].get("batch"),
        ])
    return out.getvalue()


def _fmt_bytes(n) -> str:
    if n is None:
        return "-"
    from ..units import format_bytes

    return format_bytes(n)


def _num(x, digits=3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def table_rows(doc: dict) -> tuple[list[str], list[list[str]]]:
    from .row import BenchRow

    cols = ["technique", "status", "predicted", "measured", "blocks pred/meas", "decode ms (p20-p80)",
            "efficiency", "error", "mass kept"]
    rows = []
    for r in map(BenchRow.from_json, doc["results"]):
        blocks = "-" if r.blocks.predicted is None else f"{r.blocks.predicted}/{r.blocks.measured}"
        lat = r.latency
        timing = "-" if lat.median_ms is None else f"{lat.median_ms:.3g} ({lat.p20_ms:.3g}-{lat.p80_ms:.3g})"
        eff = "-" if lat.efficiency is None else f"{100 * lat.efficiency:.3g}%"
        rows.append([r.technique, r.status, _fmt_bytes(r.bytes.predicted), _fmt_bytes(r.bytes.measured), blocks,
                     timing, eff, _num(r.accuracy.error_rel), _num(r.accuracy.attention_mass)])
    return cols, rows


def render_table(doc: dict, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    env = doc["environment"]
    cfg = doc["config"]
    title = (f"kvplan bench: {cfg['model']}{' (cpu shrink)' if cfg.get('shrink') else ''}, "
             f"{cfg['context_tokens']} tokens x {cfg['batch']} on {env['device_name']} ({env['device_kind']})")
    cols, rows = table_rows(doc)
    table = Table(title=title)
    for i, c in enumerate(cols):
        table.add_column(c, justify="left" if i < 2 else "right", overflow="fold")
    styles = {"ok": "green", "mismatch": "bold red", "oom": "red", "error": "red", "unsupported": "yellow",
              "n/a": "dim"}
    for r, src in zip(rows, doc["results"]):
        table.add_row(*(escape(c) for c in r), style=styles.get(src["status"]))
    console.print(table)
    ceiling = doc["ceiling"]
    method = next((r.get("latency_method") for r in doc["results"] if r.get("latency_method")), "-")
    console.print("bytes: exact tensor bytes of pools in use, scales, metadata and per-sequence buffers "
                  "(block tables shown apart in JSON); predicted through planner.evaluate on the same ModelSpec.")
    console.print(f"latency: {method}; efficiency = memory-bound floor (KV read bytes / "
                  f"{ceiling['copy_gbps']:.3g} GB/s copy measured in this run) / median"
                  + ("" if ceiling.get("meaningful") else " - not meaningful in the interpreter"))
    for r in doc["results"]:
        if r["status"] != "ok" and r.get("message"):
            console.print(f"{r['technique']}: {r['status']}: {r['message']}", style=styles.get(r["status"]),
                          markup=False, highlight=False)
        if r.get("resume_ms_median") is not None:
            recompute = r.get("recompute_ms_predicted")
            console.print(f"{r['technique']}: one sequence, all layers: copy out {r['offload_ms_median']:.3g} ms "
                          f"(gather + to host), copy back {r['resume_ms_median']:.3g} ms (bulk copy + block "
                          f"scatter), copy back + first decode step {r['resume_first_step_ms_median']:.3g} ms; "
                          "recompute "
                          + (f"{recompute:.3g} ms (planner prefill estimate)" if recompute is not None
                             else "n/a (no catalog GPU; KV prefill writes alone took "
                                  f"{r.get('prefill_ms') or 0:.3g} ms)"), markup=False, highlight=False)
        for note in r.get("layout_notes") or []:
            console.print(f"  note {r['technique']}: {note}", markup=False, highlight=False)
