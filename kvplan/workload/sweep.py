"""`kvplan sweep`: one model over a log-spaced range of contexts, one series per
technique combination, as a pandas DataFrame (tidy: one row per context x series).

Columns (bytes are integers; GiB = 2^30 bytes):
  model, gpu, tp, pp, kv_dtype, series, context_tokens, batch,
  kv_bytes_per_sequence, state_bytes_per_sequence  (one sequence, as allocated)
  stored_bytes     the batch's cache, prefix shared once (GPU + CPU tier)
  read_bytes       KV the batch reads per decode step
  pool_tokens      tokens the KV pool of one GPU holds (constant per series)
  max_concurrency  sequences of context_tokens that fit in the pool at once

pandas and numpy are imported here, never by `kvplan estimate`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..capacity.hardware import make_deployment
from ..errors import KvplanError, UsageError
from ..planner import compose
from ..sources import load_model_and_weights
from ..techniques.registry import build_all
from ..units import parse_tokens
from ..workflows import apply_kv_dtype

MAX_POINTS = 1_000_000
OUT_SUFFIXES = (".csv", ".parquet", ".json")
PLOT_SUFFIXES = (".png", ".svg")
COLUMNS = [
    "model", "gpu", "tp", "pp", "kv_dtype", "series", "context_tokens", "batch",
    "kv_bytes_per_sequence", "state_bytes_per_sequence", "stored_bytes", "read_bytes",
    "pool_tokens", "max_concurrency",
]


def parse_range(text: str, what: str = "--context") -> tuple[int, int]:
    """'1k..1m' -> (1024, 1048576); LOW must be below HIGH."""
    low_text, sep, high_text = str(text).partition("..")
    if not sep or not low_text.strip() or not high_text.strip():
        raise UsageError(f"{what}: expected a range LOW..HIGH, got {text!r}", "for example --context 1k..1m")
    low, high = parse_tokens(low_text, f"{what} (low end)"), parse_tokens(high_text, f"{what} (high end)")
    if low > high:
        raise UsageError(f"{what} {text}: the range is reversed ({low:,} > {high:,} tokens)", f"write it low..high: {high_text.strip()}..{low_text.strip()}")
    if low == high:
        raise UsageError(f"{what} {text}: the range is empty (both ends are {low:,} tokens)", "give two different ends, such as 1k..1m")
    return low, high


def context_points(low: int, high: int, points: int):
    """`points` log-spaced integer contexts from low to high, both ends included,
    duplicates (where the spacing is under one token) removed."""
    import numpy as np

    if points < 2:
        raise UsageError(f"--points must be at least 2, got {points}")
    if points > MAX_POINTS:
        raise UsageError(f"--points must be at most {MAX_POINTS:,}, got {points:,}")
    raw = np.rint(np.geomspace(low, high, points)).astype(np.int64)
    raw[0], raw[-1] = low, high
    return np.unique(raw)


@dataclass(frozen=True)
class Series:
    label: str  # "baseline" or the -t value as written
    specs: tuple[str, ...]  # the techniques, '+' split


def parse_series(values) -> list[Series]:
    """Each -t value is one series; '+' joins techniques within it (fp8+page:16)."""
    out = [Series("baseline", ())]
    for value in values or []:
        specs = tuple(s.strip() for s in value.split("+"))
        if not all(specs):
            raise UsageError(f"-t {value!r}: empty technique around '+'", "join techniques as fp8+page:16")
        label = "+".join(specs)
        if any(s.label == label for s in out):
            raise UsageError(f"-t {value!r}: the series is given twice")
        out.append(Series(label, specs))
    return out


def check_output_path(path_text: str, suffixes: tuple[str, ...], what: str, force: bool) -> Path:
    path = Path(path_text).expanduser()
    if path.suffix.lower() not in suffixes:
        raise UsageError(f"{what} {path_text}: unsupported file type {path.suffix or '(none)'!r}", f"use one of {', '.join(suffixes)}")
    if not path.parent.is_dir():
        raise UsageError(f"{what} {path_text}: folder {str(path.parent)!r} does not exist", "create it first")
    if path.is_dir():
        raise UsageError(f"{what} {path_text}: is a folder")
    if path.exists() and not force:
        raise UsageError(f"{what} {path_text}: the file exists", "pass --force to overwrite it")
    return path


def sweep_frame(model_name: str, *, low: int, high: int, points: int = 32, series=(), gpu: str = "h100",
                tp: int = 1, pp: int = 1, kv_dtype: str = "auto", batch: int = 1, mem_util: float = 0.9):
    """The sweep as a DataFrame (see the module docstring for the columns)."""
    import numpy as np
    import pandas as pd

    from . import vector

    if batch < 1:
        raise UsageError(f"--batch must be a positive integer, got {batch}")
    n = context_points(low, high, points)
    spec, weights = load_model_and_weights(model_name)
    spec, dtype = apply_kv_dtype(spec, kv_dtype)
    deployment = replace(make_deployment(gpu, tp=tp, pp=pp, mem_util=mem_util), weights=weights)
    frames = []
    pool_bytes = None
    for s in parse_series(series):
        plan = compose(spec, build_all(s.specs))[-1]
        b = vector.batch_bytes(plan, n, batch)
        read = vector.read_bytes_per_step(plan.model, n) * batch
        try:
            fit, pool_bytes, pool_tokens = vector.max_concurrency(plan, deployment, n)
        except KvplanError as exc:
            raise type(exc)(f"series {s.label}: {exc.message}", exc.hint) from None
        frames.append(pd.DataFrame({
            "series": s.label,
            "context_tokens": n,
            "kv_bytes_per_sequence": b["kv"],
            "state_bytes_per_sequence": b["state"],
            "stored_bytes": b["total"],
            "read_bytes": read,
            "pool_tokens": pd.array(np.full(len(n), -1 if pool_tokens is None else pool_tokens), dtype="Int64"),
            "max_concurrency": fit,
        }))
    df = pd.concat(frames, ignore_index=True)
    if (df["pool_tokens"] < 0).any():
        df.loc[df["pool_tokens"] < 0, "pool_tokens"] = pd.NA  # no growing cache: the pool holds no tokens
    df.insert(0, "model", spec.name)
    df.insert(1, "gpu", deployment.gpu.name)
    df.insert(2, "tp", tp)
    df.insert(3, "pp", pp)
    df.insert(4, "kv_dtype", dtype)
    df.insert(7, "batch", batch)
    df = df[COLUMNS]
    # for --plot's reference lines (not columns: constant over the sweep)
    df.attrs["max_context_tokens"] = spec.max_context_tokens
    df.attrs["pool_bytes_per_gpu"] = pool_bytes
    return df


def write_frame(df, path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        df.to_csv(path, index=False)
    elif suffix == ".json":  # the very document --format json prints: one shape
        import json

        path.write_text(json.dumps(sweep_document(df), indent=1) + "\n", encoding="utf-8")
    else:
        try:
            df.to_parquet(path, index=False)
        except ImportError:
            raise KvplanError(f"--out {path}: writing parquet needs pyarrow", "pip install pyarrow, or use .csv or .json") from None


def sweep_document(df) -> dict:
    """The sweep's JSON document, printed (--format json) or written (--out FILE.json) alike."""
    import json

    return {"schema_version": 1, "columns": COLUMNS, "rows": json.loads(df.to_json(orient="records"))}


def sweep_report(df, fmt: str):
    """A Report of the sweep for the terminal (table, csv, markdown, json)."""

    import pandas as pd

    from ..render import Report, Table
    from ..units import format_bytes

    data = sweep_document(df)
    first = df.iloc[0]
    if fmt in ("csv", "ndjson"):  # machines: every column, raw integers, as --out FILE.csv writes them
        rows = [[None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in r] for r in df.itertuples(index=False)]
        return Report(data, [], tidy=Table("sweep", list(COLUMNS), rows))
    title = f"{first['model']}: {first['kv_dtype']} KV, batch {first['batch']}, {first['tp'] * first['pp']} x {first['gpu']} (tp {first['tp']}, pp {first['pp']})"
    rows = []
    for r in df.itertuples(index=False):
        stored = r.stored_bytes if fmt != "table" else format_bytes(r.stored_bytes)
        read = r.read_bytes if fmt != "table" else format_bytes(r.read_bytes)
        pool = None if pd.isna(r.pool_tokens) else int(r.pool_tokens)
        rows.append([r.series, int(r.context_tokens), stored, read, pool, int(r.max_concurrency)])
    table = Table(title, ["series", "context tokens", "stored", "read per step", "pool tokens", "max concurrency"], rows, {1, 2, 3, 4, 5})
    return Report(data, [table])


def sweep_workflow(*, model, context, points, techniques, gpu, tp, pp, kv_dtype, batch, mem_util, out, plot, force, fmt):
    """Run the sweep; write --out / --plot; return the Report to print (None when writing files)."""
    import sys

    low, high = parse_range(context)
    out_path = check_output_path(out, OUT_SUFFIXES, "--out", force) if out else None
    plot_path = check_output_path(plot, PLOT_SUFFIXES, "--plot", force) if plot else None
    if plot_path is not None:
        from .plot import require_matplotlib

        require_matplotlib()
    df = sweep_frame(model, low=low, high=high, points=points, series=techniques, gpu=gpu, tp=tp, pp=pp,
                     kv_dtype=kv_dtype, batch=batch, mem_util=mem_util)
    if out_path is not None:
        write_frame(df, out_path)
        sys.stderr.write(f"kvplan: wrote {len(df):,} rows ({df['series'].nunique()} series x {df['context_tokens'].nunique()} contexts) to {out_path}\n")
    if plot_path is not None:
        from .plot import plot_sweep

        plot_sweep(df, plot_path)
        sys.stderr.write(f"kvplan: wrote the plot to {plot_path}\n")
    if out_path is None and plot_path is None:
        return sweep_report(df, fmt)
    return None
