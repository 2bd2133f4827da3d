"""`kvplan gate`: fail CI when a bench run regresses against a baseline."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from ..errors import UsageError


def _fraction(text: str, what: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(f"{what} {text!r} is not a fraction such as 10% or 0.1") from None
    if not 0 <= value < 1:
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
    import os
    import sys

    from ..bench import gate

    reg = _fraction(max_regression, "--max-regression")
    tol = _fraction(error_tolerance, "--error-tolerance")
    if mass_tolerance < 0:
        raise UsageError(f"--mass-tolerance must be >= 0, got {mass_tolerance}")
    if not 0 < p_value < 1:
        raise UsageError(f"--p-value must be between 0 and 1, got {p_value}")
    if annotate is None:
        annotate = os.environ.get("GITHUB_ACTIONS") == "true"
    waived = tuple(accept_mismatch or ())
    cur = gate.load(current, "current")
    known = {r["technique"] for r in cur["results"]}
    for name in waived:
        if name not in known:
            raise UsageError(f"--accept-mismatch {name!r}: no such technique in {current}",
                             f"techniques in this run: {', '.join(sorted(known))}")
    if update and not os.path.exists(baseline):
        if not gate.internally_consistent(cur, waived):
            findings, notes = gate.compare(cur, cur, accept_mismatch=waived)
            text = gate.markdown(findings, notes, cur, None, "FAIL (baseline not created)")
            sys.stdout.write(text)
            gate.append_step_summary(text)
            raise typer.Exit(1)
        os.makedirs(os.path.dirname(os.path.abspath(baseline)), exist_ok=True)
        gate.update_baseline(baseline, cur)
        text = (f"## kvplan gate: baseline created\n\n- wrote {baseline} from {current}\n"
                "- first run: nothing was compared; keep this file as the baseline of the next runs\n")
        sys.stdout.write(text)
        gate.append_step_summary(text)
        return
    base = gate.load(baseline, "baseline")
    findings, notes = gate.compare(cur, base, max_regression=reg, error_tolerance=tol,
                                   mass_tolerance=mass_tolerance, accept_mismatch=waived, latency_alpha=p_value)
    bad = gate.failed(findings)
    if update:
        if gate.internally_consistent(cur, waived):
            gate.update_baseline(baseline, cur)
            verdict = "baseline updated" + (" (differences above accepted)" if bad else "")
            bad = False
        else:
            verdict = "FAIL (baseline not updated: this run does not match its own prediction)"
            bad = True
    else:
        verdict = "FAIL" if bad else "PASS"
    text = gate.markdown(findings, notes, cur, base, verdict)
    sys.stdout.write(text)
    gate.append_step_summary(text)
    if annotate and bad:
        sys.stdout.write(_annotations(findings, current))
    if bad:
        raise typer.Exit(1)
