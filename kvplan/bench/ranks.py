"""A distributed bench document: every rank's rows, a total row per technique,
and the imbalance between ranks. Torch-free (rank 0 builds it from gathered
payloads; `kvplan gate` reads it like any bench document).

`results` keeps the single-device row keys, so the gate checks every row on
its own and against a baseline of the same placement:

- one total row per technique, `technique` = the spec: predicted and measured
  bytes, blocks and offloaded bytes summed over the ranks, status the worst of
  the ranks, latency the slowest rank's, plus `slowest_rank`,
  `fullest_rank`, `bytes_imbalance`, `latency_imbalance`;
- one row per rank, `technique` = "SPEC @ rank R" (the gate keys rows by it),
  `spec` = the spec.

Every row has `scope` ("total" | "rank"), `rank`, `world_size`, `tp_rank`
and `pp_stage` (None on totals). `shapes.parallel` holds {tp, pp, world_size},
so a single-device baseline never counts as the same shapes.

Imbalance = largest rank / mean of the ranks - 1: 0 when every rank holds the
same (TP, replicated or not), 0.11 for PP stages of 5 and 4 layers. The
fullest rank is the one whose memory runs out first.
"""

from __future__ import annotations

import csv
import io

from .report import ROW_FIELDS, document

RANK_FIELDS = ["scope", "rank", "world_size", "tp_rank", "pp_stage"]
_WORST = ("error", "oom", "mismatch")


def imbalance(values: list) -> float | None:
    vals = [v for v in values if v is not None]
    if len(vals) != len(values) or not vals:
        return None
    mean = sum(vals) / len(vals)
    return max(vals) / mean - 1 if mean else 0.0


def _sum(rows: list[dict], key: str):
    vals = [r.get(key) for r in rows]
    return None if any(v is None for v in vals) else sum(vals)


def _failed_row(spec: str, place: dict, failure: str, block_tokens: int) -> dict:
    from .cases import make_case
    from .runner import _empty_row  # torch-free: runner imports torch only inside functions

    message = f"rank {place['rank']}: {failure}"
    try:
        return _empty_row(make_case(spec, block_tokens)).fail("error", message).to_json()
    except Exception:
        return {"technique": spec, "groups": [], "status": "error", "message": message}


def total_row(spec: str, rows: list[dict], world_size: int) -> dict:
    """The technique over all ranks (rows: one per rank, in rank order)."""
    total = {k: None for k in ROW_FIELDS}
    total.update(technique=spec, scope="total", rank=None, world_size=world_size, tp_rank=None, pp_stage=None,
                 block_tokens=rows[0].get("block_tokens"), engine=rows[0].get("engine"), groups=[])
    statuses = [r.get("status") for r in rows]
    status = next((s for s in _WORST if s in statuses), None)
    if status is None:
        status = "ok" if all(s == "ok" for s in statuses) else statuses[0]
    total["status"] = status
    total["message"] = "; ".join(f"rank {r['rank']}: {r['message']}" for r in rows
                                 if r.get("status") != "ok" and r.get("message"))
    for key in ("predicted_bytes", "measured_bytes", "predicted_blocks", "measured_blocks",
                "predicted_offloaded_bytes", "measured_offloaded_bytes", "pool_bytes", "block_table_bytes",
                "blocks_shared", "blocks_free", "waste_slots", "read_bytes_per_step", "cuda_allocated_delta"):
        total[key] = _sum(rows, key)
    for what in ("bytes", "blocks"):
        matches = [r.get(what + "_match") for r in rows]
        total[what + "_match"] = None if all(m is None for m in matches) else all(m is True for m in matches)
    timed = [r for r in rows if r.get("latency_ms_median") is not None]
    if timed:
        slow = max(timed, key=lambda r: r["latency_ms_median"])
        for key in ("latency_ms_median", "latency_ms_p20", "latency_ms_p80", "latency_method", "floor_ms",
                    "achieved_gbps", "efficiency", "efficiency_p20", "efficiency_p80"):
            total[key] = slow.get(key)
        total["slowest_rank"] = slow["rank"]
    for key in ("prefill_ms", "offload_ms_median", "resume_ms_median", "resume_first_step_ms_median",
                "recompute_ms_predicted"):
        vals = [r.get(key) for r in rows if r.get(key) is not None]
        total[key] = max(vals) if vals else None
    errors = [r["error_rel"] for r in rows if r.get("error_rel") is not None]
    masses = [r["attention_mass"] for r in rows if r.get("attention_mass") is not None]
    total["error_rel"] = max(errors) if errors else None
    total["attention_mass"] = min(masses) if masses else None
    measured = [r.get("measured_bytes") for r in rows]
    if all(m is not None for m in measured):
        total["fullest_rank"] = rows[measured.index(max(measured))]["rank"]
    total["bytes_imbalance"] = imbalance(measured)
    total["latency_imbalance"] = imbalance([r.get("latency_ms_median") for r in rows])
    return total


def merge(payloads: list[dict], prep, timeout_s: float) -> dict:
    """The document rank 0 writes, from every rank's payload (in rank order)."""
    from .runner import BenchRun, _shapes

    cfg, place = prep.cfg, prep.place
    specs = ["baseline", *cfg.specs]
    by_spec: dict[str, list[dict]] = {s: [] for s in specs}
    ranks, failures = [], []
    for p in payloads:
        pl = p["placement"]
        ranks.append({**pl, "shapes": p.get("shapes"), "failure": p.get("failure"),
                      "device_name": (p.get("environment") or {}).get("device_name")})
        if p.get("failure"):
            failures.append(f"rank {pl['rank']}: {p['failure']}")
        rows = p.get("rows") or []
        for i, spec in enumerate(specs):
            row = dict(rows[i]) if i < len(rows) else _failed_row(spec, pl, p.get("failure") or "no result",
                                                                          cfg.block_tokens)
            row.update(technique=f"{spec} @ rank {pl['rank']}", spec=spec, scope="rank", rank=pl["rank"],
                       world_size=place.world_size, tp_rank=pl["tp_rank"], pp_stage=pl["pp_stage"])
            by_spec[spec].append(row)
    results = []
    for spec in specs:
        results.append(total_row(spec, by_spec[spec], place.world_size))
        results.extend(by_spec[spec])
    first = payloads[0]
    shapes = _shapes(prep.model)
    shapes.update(context_tokens=cfg.context_tokens, batch=cfg.batch,
                  shrink=prep.shrink.as_dict() if prep.shrink else None,
                  parallel={"tp": place.tp, "pp": place.pp, "world_size": place.world_size})
    env = dict(first.get("environment") or {})
    env["world_size"] = place.world_size
    run = BenchRun(
        env=env,
        config={"model": cfg.model_name, "techniques": cfg.specs, "context_tokens": cfg.context_tokens,
                "batch": cfg.batch, "repeats": cfg.repeats, "block_tokens": cfg.block_tokens,
                "shrink": cfg.shrink, "seed": cfg.seed, "tp": place.tp, "pp": place.pp},
        shapes=shapes,
        ceiling=first.get("ceiling") or {"copy_gbps": None, "copy_bytes": None, "meaningful": False},
        results=results,
    )
    doc = document(run)
    totals = [r for r in results if r["scope"] == "total"]
    doc["summary"] = {s: sum(1 for r in totals if r["status"] == s)
                      for s in ("ok", "mismatch", "unsupported", "n/a", "error", "oom")}
    doc["distributed"] = {
        "tp": place.tp, "pp": place.pp, "world_size": place.world_size,
        "backend": "nccl" if cfg.device == "cuda" else "gloo", "timeout_s": timeout_s,
        "failures": failures, "ranks": ranks,
    }
    return doc


def failed(doc: dict) -> bool:
    return bool(doc["distributed"]["failures"]) or any(r["status"] in _WORST for r in doc["results"])


def to_csv(doc: dict) -> str:
    env = doc["environment"]
    extra = ["device_kind", "device_name", "model", "context_tokens", "batch", "tp", "pp"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(RANK_FIELDS + ROW_FIELDS + extra)
    cfg = doc["config"]
    for row in doc["results"]:
        writer.writerow([row.get(f) for f in RANK_FIELDS] + [row.get(f) for f in ROW_FIELDS] + [
            env.get("device_kind"), env.get("device_name"), cfg.get("model"), cfg.get("context_tokens"),
            cfg.get("batch"), cfg.get("tp"), cfg.get("pp")])
    return out.getvalue()


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:+.3g}%"


def render(doc: dict, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    from .report import _fmt_bytes

    env, cfg, d = doc["environment"], doc["config"], doc["distributed"]
    title = (f"kvplan bench: {cfg['model']}{' (cpu shrink)' if cfg.get('shrink') else ''}, "
             f"{cfg['context_tokens']} tokens x {cfg['batch']}, tp {d['tp']} x pp {d['pp']} = {d['world_size']} "
             f"ranks on {env.get('device_name')} ({env.get('device_kind')}, {d['backend']})")
    table = Table(title=title)
    for i, c in enumerate(["technique", "rank", "tp", "pp", "status", "predicted", "measured",
                           "blocks pred/meas", "decode ms (p20-p80)"]):
        table.add_column(c, justify="left" if i in (0, 4) else "right")
    styles = {"ok": "green", "mismatch": "bold red", "oom": "red", "error": "red", "unsupported": "yellow",
              "n/a": "dim"}
    for r in doc["results"]:
        total = r["scope"] == "total"
        blocks = "-" if r.get("predicted_blocks") is None else f"{r['predicted_blocks']}/{r.get('measured_blocks')}"
        lat = "-" if r.get("latency_ms_median") is None else (
            f"{r['latency_ms_median']:.3g} ({r['latency_ms_p20']:.3g}-{r['latency_ms_p80']:.3g})")
        cells = [r["technique"] if total else "", "all" if total else str(r["rank"]),
                 "" if total else str(r["tp_rank"]), "" if total else str(r["pp_stage"]), r["status"],
                 _fmt_bytes(r.get("predicted_bytes")), _fmt_bytes(r.get("measured_bytes")), blocks, lat]
        table.add_row(*(escape(c) for c in cells), style=styles.get(r["status"]) if total else None)
    console.print(table)
    console.print("per rank: exact tensor bytes of its own shard (its KV heads or the replicated ones, its "
                  "latents, its stage's layers, its padded Mamba groups) against the planner's per-GPU "
                  "prediction (capacity.shard, as kvplan estimate --tp/--pp); totals sum the ranks; the total's "
                  "latency is the slowest rank's.", markup=False, highlight=False)
    for r in doc["results"]:
        if r["scope"] != "total":
            continue
        console.print(f"{r['technique']}: fullest rank {r.get('fullest_rank', '-')}, bytes imbalance "
                      f"{_pct(r.get('bytes_imbalance'))}; slowest rank {r.get('slowest_rank', '-')}, latency "
                      f"imbalance {_pct(r.get('latency_imbalance'))} (largest rank / mean - 1)",
                      markup=False, highlight=False)
        if r["status"] != "ok" and r.get("message"):
            console.print(f"{r['technique']}: {r['status']}: {r['message']}", style=styles.get(r["status"]),
                          markup=False, highlight=False)
    for f in d["failures"]:
        console.print(f"failed: {f}", style="red", markup=False, highlight=False)
