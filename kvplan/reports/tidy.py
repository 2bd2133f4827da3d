"""The one tidy table of each command, built from its JSON document.

`--format csv` and `--format ndjson` print it: one header, one row per
observation, raw integers and plain numbers (bytes, tokens, ms), snake_case
column names that stay stable (docs/json.md lists them). Building the table from
the JSON document keeps the two in step: a figure is never formatted twice.
"""

from __future__ import annotations

from ..render import Table

# `kvplan estimate`: one row per run, every column always present (empty when
# the run has no GPU, engine or technique). Nested keys are read with '.'.
ESTIMATE_COLUMNS = [
    ("model", "model.name"), ("source", "model.source"), ("model_type", "model.model_type"),
    ("reading", "model.reading"), ("max_context_tokens", "model.max_context_tokens"),
    ("weight_bytes", "model.weight_bytes"), ("weights_source", "model.weights.source"),
    ("kv_dtype", "kv_dtype"), ("techniques", None), ("context_tokens", "context_tokens"), ("batch", "batch"),
    ("bytes_per_token", "bytes_per_token"), ("kv_bytes_per_sequence", "kv_bytes_per_sequence"),
    ("state_bytes_per_sequence", "state_bytes_per_sequence"), ("bytes_per_sequence", "bytes_per_sequence"),
    ("total_bytes", "total_bytes"), ("read_bytes_per_step", "read_bytes_per_step"),
    ("kv_bytes_per_gpu", "kv_bytes_per_gpu"),
    ("gpu", "capacity.gpu"), ("gpus", "capacity.gpus"), ("tp", "capacity.tp"), ("pp", "capacity.pp"),
    ("weight_bytes_per_gpu", "capacity.weight_bytes_per_gpu"), ("pool_bytes", "capacity.pool_bytes"),
    ("pool_tokens", "capacity.pool_tokens"), ("max_concurrency", "capacity.max_concurrency"),
    ("step_ms", "decode.step_ms"), ("tokens_per_s", "decode.tokens_per_s"),
    ("offloaded_bytes", "offload.offloaded_bytes"),
    ("engine", "engine.name"), ("engine_version", "engine.version"),
    ("engine_kv_memory_bytes", "engine.kv_memory_bytes"), ("engine_gpu_kv_cache_tokens", "engine.gpu_kv_cache_tokens"),
    ("engine_max_concurrency", "engine.max_concurrency"), ("engine_fits", "engine.fits"),
    ("budgets_ok", "budgets.ok"),
]


def _get(doc: dict, dotted: str):
    value = doc
    for key in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def estimate_row(data: dict) -> list:
    techniques = " ".join(t["spec"] for t in data.get("techniques", []) if t["spec"] != "baseline")
    return [techniques if path is None else _get(data, path) for _, path in ESTIMATE_COLUMNS]


def estimate(data: dict) -> Table:
    return Table("estimate", [name for name, _ in ESTIMATE_COLUMNS], [estimate_row(data)])


def records(title: str, items: list[dict], columns: list[str]) -> Table:
    """Rows from a list of JSON records; nested dicts and lists are left out
    unless named with a '.' path; a list of strings is joined with '; '."""
    rows = []
    for item in items:
        row = []
        for col in columns:
            value = _get(item, col)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                value = "; ".join(value)
            row.append(value)
        rows.append(row)
    return Table(title, [c.replace(".", "_") for c in columns], rows)


def plan(data: dict) -> Table:
    """`kvplan plan`: one row per scenario, the estimate's columns after the workload's."""
    lead = ["scenario", "scenario_source", "concurrency", "prompt_tokens", "output_tokens", "resident_sequences",
            "tpot_ms", "scenario_budgets_ok", "exceeds_max_context"]
    rows = []
    for s in data["scenarios"]:
        w = s["workload"]
        rows.append([s["name"], s["source"], w["concurrency"], w["prompt_tokens"], w["output_tokens"],
                     s["resident_sequences"], s["tpot_ms"], s["budgets"]["ok"], s["exceeds_max_context"]]
                    + estimate_row(s["plan"]))
    return Table("plan", lead + [name for name, _ in ESTIMATE_COLUMNS], rows)


def weights(data: dict) -> Table:
    """`kvplan weights`: one row per stored dtype, the whole model's figures repeated."""
    w = data["weights"]
    lead = [data["model"]["name"], w.get("source"), w.get("origin"), w.get("quantization"), w.get("total_bytes"),
            data["weight_bytes_per_gpu"], data["tp"], data["pp"]]
    parts = w.get("by_dtype") or [{"dtype": None, "bytes": w.get("total_bytes"), "elements": None, "tensors": None}]
    rows = [lead + [d.get("dtype"), d.get("bytes"), d.get("elements"), d.get("tensors")] for d in parts]
    return Table("weights", ["model", "source", "origin", "quantization", "total_bytes", "weight_bytes_per_gpu",
                             "tp", "pp", "dtype", "bytes", "elements", "tensors"], rows)


def calibrate(data: dict) -> Table:
    """`kvplan calibrate`: one row per figure compared (logged as vLLM printed it)."""
    items = [f | {"log": data["log"]["path"], "model": data["model"], "engine_version": data["engine"]["version"]}
             for f in data["figures"]]
    return records("calibrate", items, ["log", "model", "engine_version", "name", "kind", "logged", "predicted",
                                        "deviation_pct", "within_rounding", "explanation"])


def catalog(title: str, items: list[dict]) -> Table:
    """The catalogs (models, techniques, GPUs, families): every scalar key of the records."""
    columns = [k for k, v in items[0].items() if not isinstance(v, dict)] if items else []
    return records(title, items, columns)


FIT_COLUMNS = ["rank", "gpu", "gpus", "tp", "pp", "dp", "ep", "kv_dtype", "techniques", "max_concurrency", "engine_max_concurrency",
               "kv_bytes_per_gpu", "kv_pool_bytes_per_gpu", "weight_bytes_per_gpu", "decode_ms_per_token",
               "usd_per_hour", "usd_per_gpu_hour", "price_source", "quality", "estimate_command"]


def fit(docs: list[dict]) -> Table:
    """`kvplan fit` (and `plan --fit`): one row per option listed, the search's
    workload in front (`scenario` empty outside `plan --fit`)."""
    rows = []
    for doc in docs:
        lead = [doc.get("scenario"), doc["model"], doc["context_tokens"], doc["concurrency"], doc["objective"],
                doc["engine"]["name"], doc["engine"].get("version")]
        for option in doc["options"]:
            rows.append(lead + [" ".join(option[c]) if c == "techniques" else option.get(c) for c in FIT_COLUMNS])
    return Table("fit", ["scenario", "model", "context_tokens", "concurrency", "objective", "engine", "engine_version",
                         *FIT_COLUMNS], rows)
