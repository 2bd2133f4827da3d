"""`kvplan gate`: fail CI when a bench run regresses against a baseline."""

from __future__ import annotations

import math
from typing import Annotated, List, Optional

import typer

from ..errors import KvplanError, UsageError


def _fraction(text: str, what: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(f"{what} {text!r} is not a fraction such as 10% or 0.1") from None
    if not math.isfinite(value) or not 0 <= value < 1:
        raise UsageError(f"{what} must be in [0%, 100%), got {text}")
    return value


def _escape(text: str, prop: bool = False) -> str:
    """GitHub workflow-command escaping (% CR LF, and : , in properties)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _annotations(findings, current: str) -> str:
    """One '::error' workflow command per failed check (GitHub shows them on the run)."""
    return "".join(f"::error file={_escape(current, True)},title={_escape(f'kvplan gate: {f.technique} {f.check}', True)}"
                   f"::{_escape(f.detail)}\n" for f in findings if f.verdict == "fail")


def gate_command(
    current: Annotated[str, typer.Argument(help="The bench JSON of this run (kvplan bench --json).")],
    baseline: Annotated[str, typer.Option("--baseline", help="The baseline bench JSON.")],
    max_regression: Annotated[str, typer.Option(
        "--max-regression", help="Largest efficiency drop tolerated (CUDA runs only), e.g. 10%.")] = "10%",
    error_tolerance: Annotated[str, typer.Option(
        "--error-tolerance", help="Relative growth of error_rel tolerated (plus 1e-4 absolute).")] = "10%",
    mass_tolerance: Annotated[float, typer.Option(
        "--mass-tolerance", help="Drop of attention mass kept tolerated (absolute).")] = 0.01,
    accept_mismatch: Annotated[Optional[List[str]], typer.Option(
        "--accept-mismatch", help="Waive a known prediction/measurement gap for this technique (repeatable); "
                                  "its figures must still equal the baseline's.")] = None,
    p_value: Annotated[float, typer.Option(
        "--p-value", help="Significance level of the latency test on raw samples (CUDA runs only).")] = 0.01,
    annotate: Annotated[Optional[bool], typer.Option(
        "--annotate/--no-annotate", help="Print a GitHub '::error' line per failed check (default: when "
                                         "$GITHUB_ACTIONS is true).", show_default=False)] = None,
    update: Annotated[bool, typer.Option(
        "--update-baseline", help="Replace the baseline with this run (atomically) when the run is "
                                  "self-consistent; a missing baseline is created.")] = False,
) -> None:
    """Compare a bench run with a baseline: exit 0 clean, 1 regression, 2 unusable input.

    Fails on any byte or block mismatch (prediction vs measurement, or vs the
    baseline when shapes match), accuracy loss beyond tolerance, and on CUDA an
    efficiency drop beyond --max-regression outside the measured p20..p80 spread.
    Prints a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when set).

    Examples:

      kvplan gate bench.json --baseline benchmarks/baseline-cpu.json

      kvplan gate bench.json --baseline gpu-baseline.json --max-regression 5%

      kvplan gate bench.json --baseline benchmarks/baseline-cpu.json --update-baseline
    """
    from ..bench import gate

    for flag, path in (("the bench JSON of this run", current), ("--baseline", baseline)):
        if not path.strip():  # "baseline : no such file", or --update-baseline writing '' (a folder)
            raise UsageError(f"{flag} is an empty string", "give the path of a bench JSON (kvplan bench --json FILE)")
    reg = _fraction(max_regression, "--max-regression")
    tol = _fraction(error_tolerance, "--error-tolerance")
    if not math.isfinite(mass_tolerance) or not 0 <= mass_tolerance <= 1:
        raise UsageError(f"--mass-tolerance must be in [0, 1], got {mass_tolerance}")
    if not math.isfinite(p_value) or not 0 < p_value < 1:
        raise UsageError(f"--p-value must be between 0 and 1, got {p_value}")
    if annotate is None:
        import os

        annotate = os.environ.get("GITHUB_ACTIONS") == "true"
    waived = tuple(accept_mismatch or ())
    cur = gate.load(current, "current")
    known = {r["technique"] for r in cur["results"]}
    for name in waived:
        if name not in known:
            raise UsageError(f"--accept-mismatch {name!r}: no such technique in {current}",
                             f"techniques in this run: {', '.join(sorted(known))}")
    if update:
        _update(gate, cur, current, baseline, reg, tol, mass_tolerance, waived)
        return
    base = gate.load(baseline, "baseline")
    gate.check_comparable(cur, base, current, baseline)
    findings, notes = gate.compare(cur, base, max_regression=reg, error_tolerance=tol,
                                   mass_tolerance=mass_tolerance, accept_mismatch=waived, latency_alpha=p_value)
    bad = gate.failed(findings)
    text = gate.markdown(findings, notes, cur, base, "FAIL" if bad else "PASS")
    _write(text + (_annotations(findings, current) if annotate and bad else ""))
    gate.append_step_summary(text)
    if bad:
        raise typer.Exit(1)


def _write(text: str) -> None:
    """The summary on stdout; a reader that went away (`| head`) changes nothing: the exit code stays the verdict's
    (click turned the BrokenPipeError into exit 1, a PASS read as a regression)."""
    import sys

    from .common import _silence_stdout

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


def _report(gate, findings, notes, cur, base, verdict) -> None:
    text = gate.markdown(findings, notes, cur, base, verdict)
    _write(text)
    gate.append_step_summary(text)


def _update(gate, cur, current, baseline, reg, tol, mass_tolerance, waived) -> None:
    """--update-baseline: replace (or create) the baseline when this run matches its own
    predictions. The old file must be a kvplan bench document (never overwrite
    someone else's file); one of another schema, model, shape or technique set is
    replaced, and the summary says so."""
    import os

    from ..files import read_only

    base, notes = None, []
    target = os.path.realpath(baseline)
    if os.path.isfile(target) and read_only(os.stat(target), target):
        raise gate.GateInputError(f"--update-baseline {baseline}: the file is read-only (mode "
                                  f"{os.stat(target).st_mode & 0o7777:04o}), not replaced",
                                  "make it writable (chmod u+w) or give another --baseline path")
    if os.path.exists(baseline):
        try:
            old = gate.read_document(baseline, "baseline")
        except gate.GateInputError as exc:  # said what the file is not, not what to do about it
            raise gate.GateInputError(f"{exc.message}; --update-baseline replaces only a kvplan bench document",
                                      "give another --baseline path, or move that file away first") from None
        try:
            base = gate.validate(old, baseline, "baseline")
        except gate.GateInputError as exc:
            notes.append(f"the old baseline was unusable and is replaced: {exc.message}")
        else:
            notes += [f"the old baseline differs and is replaced: {d}" for d in gate.differences(cur, base)]
    if not gate.internally_consistent(cur, waived):
        findings, more = gate.compare(cur, cur, accept_mismatch=waived)
        verdict = "FAIL (baseline not " + ("updated" if base is not None or notes else "created") + \
                  ": this run does not match its own prediction)"
        _report(gate, findings, notes + more, cur, base, verdict)
        raise typer.Exit(1)
    if base is None:
        findings, more = [], []
    else:
        findings, more = gate.compare(cur, base, max_regression=reg, error_tolerance=tol,
                                      mass_tolerance=mass_tolerance, accept_mismatch=waived)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(baseline)), exist_ok=True)  # a first run's new folder
        written = gate.update_baseline(baseline, cur)
    except OSError as exc:
        raise KvplanError(f"--update-baseline {baseline}: cannot write ({exc.strerror or exc}); the old baseline "
                          f"is unchanged and this run stays in {current}") from None
    where = baseline if os.path.abspath(baseline) == written else f"{baseline} (-> {written})"
    if base is None and not notes:
        verdict = "baseline created"
        notes.append(f"wrote {where} from {current}")
        notes.append("first run: nothing was compared; keep this file as the baseline of the next runs")
    else:
        verdict = "baseline updated" + (" (differences above accepted)" if gate.failed(findings) or notes else "")
        notes.append(f"wrote {where} from {current}")
    _report(gate, findings, notes + more, cur, base, verdict)
