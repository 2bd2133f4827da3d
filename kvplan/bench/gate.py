"""`kvplan gate`: compare a bench document with a baseline; torch-free.

Checks, per technique (a row of `results`):

1. The current run on its own: a prediction that differs from the measurement
   (bytes, offloaded bytes or blocks), an out-of-memory or an error fails.
   `accept_mismatch` names techniques whose known layout gap is waived; their
   figures must still equal the baseline's (so the gap cannot drift).
2. Against the baseline, when both ran the same shapes (model, shrink, context,
   batch, blocks): predicted bytes, measured bytes and blocks must be equal.
3. Accuracy, also across device kinds: error_rel may grow by `error_tolerance`
   (relative) + `error_floor` (absolute); attention mass kept may drop by
   `mass_tolerance`. Across device kinds the floor is at least
   CROSS_DEVICE_ERROR_FLOOR: on CUDA the kernels round the softmax weights to
   bf16 for the tensor-core dot (about 1.3e-3 relative error on the bench's
   inputs, worked out with torch), under the interpreter they stay fp32 (3e-7).
4. Latency, only when both runs are on CUDA (the interpreter's wall clock says
   nothing about a kernel): efficiency = memory-bound floor at the copy ceiling
   measured in the same run / median step time, so a slower machine alone does
   not fail. With raw samples in both runs (`latency_samples_ms`) the decision
   is kvplan.bench.latency's one-sided Mann-Whitney U test (threshold and
   p-value in the summary); older documents fall back to: a drop beyond
   `max_regression` fails unless the two runs' spreads (efficiency at p80..p20
   latency) overlap.

Bad input raises GateInputError, exit 2: a missing file, not JSON, not a bench
document, another schema version, no results, a row twice, an unknown status,
a NaN, infinite, negative or non-numeric figure (the field is named), a
device kind that is not text, and a baseline of
another model, shape (shrink, context, batch, block, layer shapes) or technique
set (`check_comparable`; --update-baseline replaces such a baseline instead).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import KvplanError, UsageError
from ..files import write_atomic
from .report import KIND, NUMERIC_FIELDS, SCHEMA_VERSION, STATUSES, to_json
from .row import AccuracyFigures, BenchRow, LatencyFigures


# bf16 operands give 1e-3..1e-2 relative error; emulating the CUDA kernels' bf16
# softmax weights on the bench's own inputs gave 1.3e-3 (256 tokens) and 1.6e-3
# (4096 tokens), so 5e-3 admits the arithmetic and still catches a broken kernel.
CROSS_DEVICE_ERROR_FLOOR = 5e-3


# Row figures that may be below zero: the change of CUDA's allocated bytes (memory freed meanwhile).
SIGNED_FIELDS = ("cuda_allocated_delta",)


class GateInputError(UsageError):
    """A bench document that cannot be used (exit 2)."""


@dataclass(frozen=True)
class Finding:
    technique: str
    check: str
    verdict: str  # "fail" | "pass" | "note" | "waived"
    detail: str


def read_document(path: str, what: str) -> dict:
    """The JSON object of a kvplan bench document; GateInputError when it is none."""
    from ..sources import read_json_file

    if not os.path.exists(path):
        raise GateInputError(f"{what} {path}: no such file",
                             "run 'kvplan bench --json FILE' first" if what == "current" else
                             "create one with --update-baseline")
    try:
        doc = read_json_file(Path(path))
    except KvplanError as exc:  # unreadable, malformed, not an object: unusable input, exit 2
        raise GateInputError(f"{what} {exc.message}") from None
    if doc.get("kind") != KIND:
        raise GateInputError(f"{what} {path}: not a kvplan bench document")
    return doc


def validate(doc: dict, path: str, what: str) -> dict:
    """Every field the gate reads has its type: a document that could pass by accident
    (no rows, a NaN, a number written as text, a row twice) is refused, naming the field."""
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise GateInputError(f"{what} {path}: schema_version {version!r}, this kvplan reads {SCHEMA_VERSION}",
                             "rerun the bench with this kvplan version")
    for key in ("environment", "config", "shapes", "ceiling"):
        if key not in doc or doc[key] is None:
            raise GateInputError(f"{what} {path}: missing '{key}'")
        if not isinstance(doc[key], dict):  # "missing 'config'" for a list or a string there misled
            raise GateInputError(f"{what} {path}: '{key}' must be an object ({{...}}), found {type(doc[key]).__name__}")
    results = doc.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) and "technique" in r for r in results):
        raise GateInputError(f"{what} {path}: 'results' must be a list of rows with a 'technique'")
    if not results:
        raise GateInputError(f"{what} {path}: no results (an empty bench run proves nothing)",
                             "rerun the bench with at least one technique")
    seen = set()
    for i, row in enumerate(results):
        name = row["technique"]
        if not isinstance(name, str) or not name:
            raise GateInputError(f"{what} {path}: results[{i}].technique must be a non-empty string, got {name!r}")
        where = f"{what} {path}: results[{i}] ({name})"
        if name in seen:
            raise GateInputError(f"{where}: the technique appears twice")
        seen.add(name)
        if row.get("status") not in STATUSES:
            raise GateInputError(f"{where}: status {row.get('status')!r} is not one of {', '.join(STATUSES)}")
        if row.get("message") is not None and not isinstance(row.get("message"), str):
            raise GateInputError(f"{where}.message must be text, found {type(row.get('message')).__name__}")
        for key in NUMERIC_FIELDS:
            _check_number(row.get(key), f"{where}.{key}")
            if key not in SIGNED_FIELDS and row.get(key) is not None and row[key] < 0:
                # an error_rel of -1 passed every accuracy check: bytes, blocks, times and errors are never negative
                raise GateInputError(f"{where}.{key} is {row[key]!r}: this figure is never negative",
                                     "the run that wrote it is broken; rerun the bench")
        samples = row.get("latency_samples_ms")
        if samples is not None and not isinstance(samples, list):
            raise GateInputError(f"{where}.latency_samples_ms is not a list of numbers: {samples!r}")
        for j, sample in enumerate(samples or ()):
            _check_number(sample, f"{where}.latency_samples_ms[{j}]")
            if sample is not None and sample < 0:  # a time cannot be negative: a broken run, not "no samples"
                raise GateInputError(f"{where}.latency_samples_ms[{j}] is {sample!r}: a latency is not negative",
                                     "the run that wrote it is broken; rerun the bench")
    _check_number(doc["ceiling"].get("copy_gbps"), f"{what} {path}: ceiling.copy_gbps")
    # what decides whether latency is gated at all: "cuda" in a list, or "no" as text (true), passed unread
    kind = doc["environment"].get("device_kind")
    if kind is not None and not isinstance(kind, str):
        raise GateInputError(f"{what} {path}: environment.device_kind must be text such as cuda or cpu, "
                             f"found {type(kind).__name__} {kind!r}")
    meaningful = doc["ceiling"].get("meaningful")
    if meaningful is not None and not isinstance(meaningful, bool):
        raise GateInputError(f"{what} {path}: ceiling.meaningful must be true or false, found "
                             f"{type(meaningful).__name__} {meaningful!r}")
    return doc


def _check_number(value, where: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GateInputError(f"{where} is not a number: {value!r}")
    if isinstance(value, int) and abs(value) > 2**63:  # beyond any counter a bench writes (and a float)
        raise GateInputError(f"{where} is beyond 2^63: not a figure a bench writes",
                             "the run that wrote it is broken; rerun the bench")
    if not math.isfinite(value):
        raise GateInputError(f"{where} is {value!r}: NaN or infinite figures cannot be gated",
                             "the run that wrote it is broken; rerun the bench")


def load(path: str, what: str) -> dict:
    """A bench document checked field by field (exit 2 when unusable)."""
    return validate(read_document(path, what), path, what)


# What must be equal for two runs to be compared at all: (label, getter).
_IDENTITY = (
    ("model", lambda d: d["config"].get("model")),
    ("shrink", lambda d: d["config"].get("shrink")),
    ("context_tokens", lambda d: d["config"].get("context_tokens")),
    ("batch", lambda d: d["config"].get("batch")),
    ("block_tokens", lambda d: d["config"].get("block_tokens")),
    ("layer shapes", lambda d: d["shapes"]),
    ("technique set", lambda d: sorted(r["technique"] for r in d["results"])),
)


def differences(current: dict, baseline: dict) -> list[str]:
    """Why two documents are not runs of the same bench ([] when they are)."""
    out = []
    for label, get in _IDENTITY:
        now, then = get(current), get(baseline)
        if now == then:
            continue
        if label == "technique set":
            gone = sorted(set(then) - set(now))
            new = sorted(set(now) - set(then))
            out.append("technique set differs (" + "; ".join(
                part for part in (f"only in the baseline: {', '.join(gone)}" if gone else "",
                                  f"only in this run: {', '.join(new)}" if new else "") if part) + ")")
        elif label == "layer shapes":
            out.append("layer shapes differ")
        else:
            out.append(f"{label} {then!r} in the baseline, {now!r} in this run")
    return out


def check_comparable(current: dict, baseline: dict, current_path: str, baseline_path: str) -> None:
    """Refuse (exit 2) a baseline of another model, shape or technique set."""
    diff = differences(current, baseline)
    if diff:
        raise GateInputError(f"baseline {baseline_path} is not a run of the same bench as {current_path}: "
                             + "; ".join(diff), "gate against a baseline made with the same arguments, "
                             "or replace it with --update-baseline")


def _same_shapes(a: dict, b: dict) -> bool:
    return not [d for d in differences(a, b) if not d.startswith("technique set")]


def _internal(row: BenchRow, waived: bool) -> list[Finding]:
    t, status = row.technique, row.status
    if status == "ok":
        problems = row.mismatches()
        if problems:  # the figures disagree whatever the status says
            return [Finding(t, "prediction", "waived" if waived else "fail", "; ".join(problems))]
        return [Finding(t, "prediction", "pass", f"bytes {row.bytes.measured} = predicted"
                        + (f", blocks {row.blocks.measured}" if row.blocks.measured is not None else ""))]
    if status == "mismatch":
        return [Finding(t, "prediction", "waived" if waived else "fail", row.message or "")]
    if status in ("oom", "error"):
        return [Finding(t, status, "fail", row.message or "")]
    return [Finding(t, status or "?", "note", row.message or "")]


def _rows(doc: dict) -> dict[str, BenchRow]:
    return {r["technique"]: BenchRow.from_json(r) for r in doc["results"]}


# figures two runs of the same shapes must share exactly: (JSON key, getter)
_SAME = (
    ("predicted_bytes", lambda r: r.bytes.predicted), ("measured_bytes", lambda r: r.bytes.measured),
    ("predicted_blocks", lambda r: r.blocks.predicted), ("measured_blocks", lambda r: r.blocks.measured),
    ("measured_offloaded_bytes", lambda r: r.bytes.measured_offloaded),
)
_GATED = ("ok", "mismatch")


def compare(current: dict, baseline: dict, *, max_regression: float = 0.10, error_tolerance: float = 0.10,
            error_floor: float = 1e-4, mass_tolerance: float = 0.01,
            accept_mismatch: tuple[str, ...] = (), latency_alpha: float | None = None) -> tuple[list[Finding], list[str]]:
    """(findings, notes). The gate fails when any finding's verdict is 'fail'."""
    findings: list[Finding] = []
    notes: list[str] = []
    cur_env, base_env = current["environment"], baseline["environment"]
    same_shapes = _same_shapes(current, baseline)
    cur_kind, base_kind = cur_env.get("device_kind"), base_env.get("device_kind")
    latency = cur_kind == base_kind == "cuda" and current["ceiling"].get("meaningful") and baseline["ceiling"].get("meaningful")
    if cur_kind != base_kind:
        error_floor = max(error_floor, CROSS_DEVICE_ERROR_FLOOR)
        notes.append(f"baseline ran on {base_kind} ({base_env.get('device_name')}), this run on {cur_kind} "
                     f"({cur_env.get('device_name')}): bytes, blocks and accuracy compared, latency not; "
                     f"error_rel may also differ by {error_floor:g} (bf16 tensor-core dots on CUDA, "
                     "fp32 in the interpreter)")
    elif not latency:
        notes.append("latency not gated: interpreter wall clock (CPU) measures the interpreter, not the kernel")
    if not same_shapes:
        notes.append("shapes differ from the baseline (model, shrink, context, batch or block): bytes and blocks "
                     "checked against this run's prediction only")
    base_rows, cur_rows = _rows(baseline), _rows(current)
    for name in base_rows:
        if name not in cur_rows:
            findings.append(Finding(name, "missing", "fail", "in the baseline but not in this run"))
    for name, row in cur_rows.items():
        findings.extend(_internal(row, name in accept_mismatch))
        base = base_rows.get(name)
        if base is None:
            findings.append(Finding(name, "baseline", "note", "new technique: no baseline row"))
            continue
        if base.status in _GATED and row.status not in _GATED:
            findings.append(Finding(name, "status", "fail", f"{base.status} in the baseline, {row.status} now"))
            continue
        if row.status not in _GATED or base.status not in _GATED:
            continue
        if same_shapes:
            for key, get in _SAME:
                if get(row) != get(base):
                    findings.append(Finding(name, key, "fail", f"baseline {get(base)}, now {get(row)}"))
        findings.extend(_accuracy(name, row.accuracy, base.accuracy, error_tolerance, error_floor, mass_tolerance))
        if latency:
            findings.extend(_latency(name, row.latency, base.latency, max_regression, latency_alpha))
    return findings, notes


def _accuracy(name, row: AccuracyFigures, base: AccuracyFigures, tol, floor, mass_tol) -> list[Finding]:
    out = []
    e, b = row.error_rel, base.error_rel
    if e is not None and b is not None:
        limit = b * (1 + tol) + floor
        verdict = "fail" if e > limit else "pass"
        out.append(Finding(name, "error_rel", verdict, f"{e:.4g} (baseline {b:.4g}, limit {limit:.4g})"))
    elif b is not None and e is None:
        out.append(Finding(name, "error_rel", "fail", "baseline has an error figure, this run none"))
    m, bm = row.attention_mass, base.attention_mass
    if m is not None and bm is not None:
        verdict = "fail" if m < bm - mass_tol else "pass"
        out.append(Finding(name, "attention_mass", verdict, f"{m:.4g} (baseline {bm:.4g}, tolerance {mass_tol})"))
    return out


def _latency(name, row: LatencyFigures, base: LatencyFigures, max_regression, alpha=None) -> list[Finding]:
    if row.samples_ms and base.samples_ms:  # raw samples: a statistical test
        from .latency import ALPHA, gate_samples

        return [Finding(name, "latency", *gate_samples(row, base, max_regression, alpha or ALPHA))]
    e, b = row.efficiency, base.efficiency
    if e is None or b is None or b <= 0:
        return []
    change = e / b - 1
    detail = f"efficiency {100 * e:.3g}% vs baseline {100 * b:.3g}% ({100 * change:+.1f}%)"
    if change >= -max_regression:
        return [Finding(name, "efficiency", "pass", detail)]
    fast_now = row.efficiency_p80  # efficiency at the p20 (fast) latency
    slow_base = base.efficiency_p20  # efficiency at the p80 (slow) latency
    if fast_now is not None and slow_base is not None and fast_now >= slow_base:
        return [Finding(name, "efficiency", "note", detail + ": inside the measured spread (p20..p80), ignored")]
    return [Finding(name, "efficiency", "fail", detail + f": beyond the {100 * max_regression:.3g}% threshold")]


def failed(findings: list[Finding]) -> bool:
    return any(f.verdict == "fail" for f in findings)


def internally_consistent(current: dict, accept_mismatch=()) -> bool:
    return not failed([f for name, r in _rows(current).items() for f in _internal(r, name in accept_mismatch)])


def markdown(findings: list[Finding], notes: list[str], current: dict, baseline: dict | None,
             verdict: str) -> str:
    env = current["environment"]
    lines = [f"## kvplan gate: {verdict}", ""]
    lines.append(f"- current: {env.get('device_kind')} {env.get('device_name')}, kvplan {env.get('kvplan')}, "
                 f"commit {str(env.get('git_commit'))[:12]}, {current.get('created')}")
    if baseline is not None:
        b = baseline["environment"]
        lines.append(f"- baseline: {b.get('device_kind')} {b.get('device_name')}, kvplan {b.get('kvplan')}, "
                     f"commit {str(b.get('git_commit'))[:12]}, {baseline.get('created')}")
    for n in notes:
        lines.append(f"- {n}")
    lines += ["", "| technique | check | result | detail |", "|---|---|---|---|"]
    order = {"fail": 0, "waived": 1, "note": 2, "pass": 3}
    for f in sorted(findings, key=lambda f: order.get(f.verdict, 9)):
        mark = {"fail": "FAIL", "waived": "waived", "note": "note", "pass": "ok"}[f.verdict]
        detail = f.detail.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {f.technique} | {f.check} | {mark} | {detail} |")
    return "\n".join(lines) + "\n"


def update_baseline(path: str, current: dict) -> str:
    """Write the run as the baseline: missing folders created, a symlink followed to
    its target, the old file's permissions kept, folder fsynced (kvplan/files.py).
    Returns the file written."""
    return write_atomic(path, to_json(current), make_folders=True)


def append_step_summary(text: str) -> None:
    """Append to $GITHUB_STEP_SUMMARY when set; a summary that cannot be written is a
    warning (the verdict, already on stdout, decides the exit code)."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        import errno

        try:
            # opened without blocking: a named pipe nobody reads held the gate for ever at open(); then writes
            # block as usual (a terminal or /dev/stderr named here still shows the summary)
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o666)
            _blocking(fd)
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError as exc:
            import warnings

            from ..errors import KvplanWarning

            why = "a named pipe that nobody reads" if exc.errno == errno.ENXIO else exc.strerror or exc
            warnings.warn(f"GITHUB_STEP_SUMMARY {target}: cannot append ({why})", KvplanWarning)


def _blocking(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # no O_NONBLOCK to clear (Windows)
        return
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
