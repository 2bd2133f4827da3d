"""`kvplan sweep`: one model over a log-spaced range of contexts, one series per
technique combination (tidy: one row per context x series).

Columns (bytes are integers; GiB = 2^30 bytes):
  model, gpu, tp, pp, kv_dtype, series, context_tokens, batch,
  kv_bytes_per_sequence, state_bytes_per_sequence  (one sequence, as allocated)
  stored_bytes     the batch's cache, prefix shared once (GPU + CPU tier)
  read_bytes       KV the batch reads per decode step
  pool_tokens      tokens the KV pool of one GPU holds (constant per series)
  max_concurrency  sequences of context_tokens that fit in the pool at once

The rows are computed as numpy columns (workload/vector.py) and written from
them in chunks: CSV and JSON at a million rows take seconds and a bounded amount
of memory, and need no pandas (sweep_frame builds a DataFrame for the API and
--plot; Parquet goes through pyarrow). numpy is imported here, never by
`kvplan estimate`. On a terminal the table is a summary: a few contexts per
series, and a line saying how to get every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._record import record
from ..capacity.shard import check_tp
from ..errors import KvplanError, UsageError
from ..planner import compose
from ..request import DeploymentRequest, online_without_engine
from ..sources import load_model_and_weights
from ..units import parse_tokens
from ..workflows import apply_kv_dtype, warn_above_max_context
from .plot import PLOT_SUFFIXES

MAX_POINTS = 1_000_000
OUT_SUFFIXES = (".csv", ".parquet", ".json")
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


@record
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


def check_output_path(path_text: str, suffixes: tuple[str, ...], what: str, force: bool,
                      inputs: tuple[str, ...] = ()) -> Path:
    from ..files import check_output

    path = Path(path_text).expanduser()
    # type, folder, exists without --force, unwritable, an input of the run; an empty path (Path('') is '.')
    check_output(str(path) if path_text.strip() else path_text, what, force, suffixes, inputs)
    return path


SUMMARY_CONTEXTS = 9  # contexts per series in the terminal table when there are more
CHUNK_ROWS = 65_536  # rows formatted at a time when writing CSV or JSON


@dataclass
class SweepSeries:
    label: str
    kv: object  # numpy int64 arrays, one entry per context
    state_bytes: int
    stored: object
    read: object
    pool_tokens: int | None  # constant over the series (None: no growing cache)
    max_concurrency: object


@dataclass
class SweepResult:
    """The sweep as columns: shared values once, one set of arrays per series."""

    model: str
    gpu: str
    tp: int
    pp: int
    kv_dtype: str
    batch: int
    contexts: object  # numpy int64 array
    series: list[SweepSeries]
    # for --plot's reference lines (constant over the sweep, so not columns)
    max_context_tokens: int | None = None
    pool_bytes_per_gpu: int | None = None

    @property
    def rows(self) -> int:
        return len(self.series) * len(self.contexts)


def sweep_columns(model_name: str, *, low: int, high: int, points: int = 32, series=(), gpu: str = "h100",
                  tp: int = 1, pp: int = 1, kv_dtype: str = "auto", batch: int = 1, mem_util: float = 0.9,
                  quantization: str | None = None) -> SweepResult:
    """The sweep's numbers (see the module docstring for the columns). quantization: vLLM 0.34's --quantization
    of a float checkpoint (request.online_without_engine), which sizes the weights the pool is left beside."""
    from . import vector

    if batch < 1:
        raise UsageError(f"--batch must be a positive integer, got {batch}")
    online = online_without_engine(quantization)
    n = context_points(low, high, points)
    spec, weights = load_model_and_weights(model_name, quantization=online)
    spec, dtype = apply_kv_dtype(spec, kv_dtype)
    warn_above_max_context(spec, high, "--context (high end)")
    deployment = DeploymentRequest(gpu=gpu, tp=tp, pp=pp, mem_util=mem_util).build(weights)
    out = []
    pool_bytes = None
    for s in parse_series(series):
        chain = []
        if s.specs:
            from ..techniques.registry import build_all

            chain = build_all(s.specs)
        plan = compose(spec, chain)[-1]
        check_tp(plan.model, tp)
        _check_int64(plan, high, batch, s.label)
        b = vector.batch_bytes(plan, n, batch)
        read = vector.read_bytes_per_step(plan.model, n) * batch
        try:
            fit, pool_bytes, pool_tokens = vector.max_concurrency(plan, deployment, n)
        except KvplanError as exc:
            raise type(exc)(f"series {s.label}: {exc.message}", exc.hint) from None
        out.append(SweepSeries(s.label, b["kv"], int(b["state"][0]) if len(n) else 0, b["total"], read, pool_tokens, fit))
    return SweepResult(spec.name, deployment.gpu.name, tp, pp, dtype, batch, n, out, spec.max_context_tokens,
                       None if pool_bytes is None else int(pool_bytes))


def sweep_frame(model_name: str, **kwargs):
    """The sweep as a pandas DataFrame, one row per context x series (the API, --plot)."""
    return to_frame(sweep_columns(model_name, **kwargs))


def to_frame(result: SweepResult):
    import numpy as np
    import pandas as pd

    frames = []
    for s in result.series:
        count = len(result.contexts)
        frames.append(pd.DataFrame({
            "series": s.label,
            "context_tokens": result.contexts,
            "kv_bytes_per_sequence": s.kv,
            "state_bytes_per_sequence": np.full(count, s.state_bytes, dtype=np.int64),
            "stored_bytes": s.stored,
            "read_bytes": s.read,
            "pool_tokens": pd.array([s.pool_tokens] * count, dtype="Int64"),
            "max_concurrency": s.max_concurrency,
        }))
    df = pd.concat(frames, ignore_index=True)
    df.insert(0, "model", result.model)
    df.insert(1, "gpu", result.gpu)
    df.insert(2, "tp", result.tp)
    df.insert(3, "pp", result.pp)
    df.insert(4, "kv_dtype", result.kv_dtype)
    df.insert(7, "batch", result.batch)
    df = df[COLUMNS]
    df.attrs["max_context_tokens"] = result.max_context_tokens  # --plot's reference lines
    df.attrs["pool_bytes_per_gpu"] = result.pool_bytes_per_gpu
    return df


def _chunks(result: SweepResult, row_format):
    """Text of every row, CHUNK_ROWS at a time: row_format(series) gives a
    %-format taking (context, kv, stored, read, max concurrency)."""
    for s in result.series:
        fmt = row_format(s)
        for start in range(0, len(result.contexts), CHUNK_ROWS):
            stop = start + CHUNK_ROWS
            columns = (result.contexts[start:stop].tolist(), s.kv[start:stop].tolist(), s.stored[start:stop].tolist(),
                       s.read[start:stop].tolist(), s.max_concurrency[start:stop].tolist())
            yield map(fmt.__mod__, zip(*columns))


def write_csv(result: SweepResult, stream) -> None:
    """Every row as CSV with a header (what pandas' to_csv writes: no index, empty for a missing pool)."""
    import csv
    import io

    def quoted(*values) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(values)
        return buf.getvalue().replace("%", "%%")

    def row_format(s: SweepSeries) -> str:
        shared = quoted(result.model, result.gpu, result.tp, result.pp, result.kv_dtype, s.label)
        pool = "" if s.pool_tokens is None else s.pool_tokens
        return f"{shared},%d,{result.batch},%d,{s.state_bytes},%d,%d,{pool},%d"

    stream.write(",".join(COLUMNS) + "\n")
    for lines in _chunks(result, row_format):
        stream.write("\n".join(lines))
        stream.write("\n")


def _json_row_format(result: SweepResult):
    import json

    def row_format(s: SweepSeries) -> str:
        fixed = {"model": result.model, "gpu": result.gpu, "tp": result.tp, "pp": result.pp, "kv_dtype": result.kv_dtype,
                 "series": s.label}
        head = json.dumps(fixed)[:-1].replace("%", "%%")
        pool = "null" if s.pool_tokens is None else s.pool_tokens
        return (f'{head}, "context_tokens": %d, "batch": {result.batch}, "kv_bytes_per_sequence": %d, '
                f'"state_bytes_per_sequence": {s.state_bytes}, "stored_bytes": %d, "read_bytes": %d, '
                f'"pool_tokens": {pool}, "max_concurrency": %d}}')

    return row_format


def write_json_rows(result: SweepResult, stream) -> None:
    """The rows as a JSON list of objects, one per line."""
    first = True
    stream.write("[")
    for lines in _chunks(result, _json_row_format(result)):
        stream.write(("\n" if first else ",\n") + ",\n".join(lines))
        first = False
    stream.write("\n]\n")


def write_ndjson(result: SweepResult, stream) -> None:
    """The rows as NDJSON: one JSON object per line, keys = COLUMNS (what --format ndjson prints)."""
    for lines in _chunks(result, _json_row_format(result)):
        stream.write("\n".join(lines))
        stream.write("\n")


def write_json_document(result: SweepResult, stream) -> None:
    """What `--format json` prints: {"schema_version", "columns", "rows": [...]}."""
    import json

    stream.write(f'{{"schema_version": 1, "columns": {json.dumps(COLUMNS)}, "rows": ')
    write_json_rows(result, stream)
    stream.write("}\n")


def require_pyarrow(path: Path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise KvplanError(f"--out {path}: writing parquet needs pyarrow",
                          "pip install pyarrow, or use .csv or .json") from None


def write_parquet(result: SweepResult, path: Path, shown: Path | None = None) -> None:
    """Parquet through pandas and pyarrow (columnar already: one frame, one write); `shown`: the path the
    user gave, for the message (`path` may be the temp file that replaces it)."""
    require_pyarrow(shown or path)
    to_frame(result).to_parquet(path, index=False)


def write_out(result: SweepResult, path: Path) -> None:
    """The whole table to `path`, or nothing: written to a temp file beside it that replaces it at the end
    (kvplan.files.replacing), so an error, Ctrl-C or a full disk halfway leaves the file the user had (with
    --force) or no file, never a cut-off table."""
    from ..files import replacing

    suffix = path.suffix.lower()
    with replacing(path) as tmp:
        if suffix == ".parquet":
            write_parquet(result, Path(tmp), shown=path)
            return
        with open(tmp, "w", encoding="utf-8", newline="") as f:  # .json: the document --format json prints
            (write_csv if suffix == ".csv" else write_json_document)(result, f)


def _summary_indices(count: int) -> list[int]:
    """Which contexts the terminal table shows: all of a short sweep, else
    SUMMARY_CONTEXTS spread evenly over the (log-spaced) range, both ends included."""
    if count <= SUMMARY_CONTEXTS + 3:
        return list(range(count))
    step = (count - 1) / (SUMMARY_CONTEXTS - 1)
    return sorted({round(i * step) for i in range(SUMMARY_CONTEXTS)})


def sweep_report(result: SweepResult, fmt: str):
    """A Report of the sweep: every row for csv and json (streamed), a summary table
    for the terminal and markdown."""
    from ..render import Report, Table
    from ..units import format_bytes

    if fmt in ("csv", "json", "ndjson"):
        writer = {"csv": write_csv, "json": write_json_document, "ndjson": write_ndjson}[fmt]
        return Report({}, streams={fmt: lambda stream: writer(result, stream)})
    human = fmt == "table"
    title = (f"{result.model}: {result.kv_dtype} KV, batch {result.batch}, {result.tp * result.pp} x {result.gpu} "
             f"(tp {result.tp}, pp {result.pp})")
    shown = _summary_indices(len(result.contexts))
    contexts = result.contexts.tolist()
    rows = []
    for s in result.series:
        for i in shown:
            stored, read = int(s.stored[i]), int(s.read[i])
            rows.append([s.label, contexts[i], format_bytes(stored) if human else stored, format_bytes(read) if human else read,
                         s.pool_tokens, int(s.max_concurrency[i])])
    table = Table(title, ["series", "context tokens", "stored", "read per step", "pool tokens", "max concurrency"], rows,
                  {1, 2, 3, 4, 5})
    lines = []
    if len(shown) < len(contexts):
        lines.append(f"showing {len(shown)} of {len(contexts):,} contexts per series ({result.rows:,} rows in all); "
                     f"every row: --format csv, ndjson or json, or --out FILE.csv / FILE.parquet / FILE.json")
    data = {"schema_version": 1, "columns": COLUMNS, "rows_total": result.rows}
    return Report(data, [table], lines)


INT64_SAFE = 2**62  # the vectorised columns are int64: refuse what they cannot hold


def _check_int64(plan, high: int, batch: int, series: str) -> None:
    """The largest figure of the sweep, in exact Python ints, must fit the int64 columns
    (a silent overflow would print 0 B or a negative size)."""
    from ..capacity.pool import batch_bytes
    from ..core.estimate import estimate

    largest = max(batch_bytes(plan, high, batch).total_bytes, estimate(plan.model, high, batch).read_bytes_per_step)
    if largest >= INT64_SAFE:
        raise UsageError(f"series {series}: {largest:,} bytes at {high:,} tokens x batch {batch:,} is beyond what "
                         "the sweep's 64-bit columns hold", "lower --batch or the high end of --context")


def sweep_workflow(*, model, context, points, techniques, gpu, tp, pp, kv_dtype, batch, mem_util, out, plot, force, fmt,
                   quantization: str | None = None):
    """Run the sweep; write --out / --plot; return the Report to print (None when writing files)."""
    import sys

    low, high = parse_range(context)
    out_path = check_output_path(out, OUT_SUFFIXES, "--out", force, (model,)) if out is not None else None
    plot_path = check_output_path(plot, PLOT_SUFFIXES, "--plot", force, (model,)) if plot is not None else None
    if plot_path is not None:
        from .plot import require_matplotlib

        require_matplotlib()
    if out_path is not None and out_path.suffix.lower() == ".parquet":  # before the sweep, as matplotlib is
        require_pyarrow(out_path)
    result = sweep_columns(model, low=low, high=high, points=points, series=techniques, gpu=gpu, tp=tp, pp=pp,
                           kv_dtype=kv_dtype, batch=batch, mem_util=mem_util, quantization=quantization)
    if out_path is not None:
        write_out(result, out_path)
        sys.stderr.write(f"kvplan: wrote {result.rows:,} rows ({len(result.series)} series x {len(result.contexts):,} "
                         f"contexts) to {out_path}\n")
    if plot_path is not None:
        from .plot import plot_sweep

        plot_sweep(to_frame(result), plot_path)
        sys.stderr.write(f"kvplan: wrote the plot to {plot_path}\n")
    if out_path is None and plot_path is None:
        return sweep_report(result, fmt)
    return None
