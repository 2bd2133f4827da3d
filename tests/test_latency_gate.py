"""Latency regressions decided on raw samples (kvplan.bench.latency), the gate's
use of them, and the GitHub annotations of failed checks."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kvplan.bench import gate
from kvplan.bench.latency import gate_samples, smallest_p
from kvplan.bench.row import LatencyFigures

pytest.importorskip("scipy")
ROOT = Path(__file__).resolve().parents[1]


def _row(samples, floor_ms=1.0):
    return LatencyFigures(floor_ms=floor_ms, samples_ms=list(samples))


def test_smallest_p_is_one_over_the_arrangements():
    # exact one-sided Mann-Whitney: all C(n+m, n) orderings equally likely under H0
    assert smallest_p(3, 3) == 1 / 20
    assert smallest_p(10, 10) == 1 / 184756


def test_a_clear_slowdown_beyond_the_threshold_fails():
    base = _row([2.00 + 0.01 * i for i in range(12)])  # ~2 ms a step
    now = _row([2.60 + 0.01 * i for i in range(12)])  # ~30% slower: efficiency ratio ~0.77
    verdict, detail = gate_samples(now, base, max_regression=0.10)
    assert verdict == "fail"
    assert "threshold -10%" in detail and "p = " in detail
    p = float(detail.split("p = ")[1].split()[0])
    # every current efficiency is below every scaled baseline one: U = 0, p at its floor
    assert p < 1e-4


def test_a_slowdown_inside_the_threshold_passes_however_certain():
    base = _row([2.00 + 0.001 * i for i in range(12)])
    now = _row([2.10 + 0.001 * i for i in range(12)])  # 5% slower, perfectly separated
    verdict, detail = gate_samples(now, base, max_regression=0.10)
    assert verdict == "pass", detail


def test_noise_is_not_a_regression():
    # the same distribution of step times, shuffled: medians may differ, ranks interleave
    times = [1.6, 2.6, 1.9, 2.4, 2.0, 2.2, 1.7, 2.9, 2.1, 1.8, 2.5, 2.3]
    verdict, detail = gate_samples(_row(times[::-1]), _row(times), max_regression=0.10)
    assert verdict == "pass", detail


def test_too_few_samples_are_a_note():
    verdict, detail = gate_samples(_row([3.0, 3.1, 3.2]), _row([1.0, 1.1, 1.2]), max_regression=0.10)
    assert verdict == "note" and "too few samples" in detail


def _cuda_pair():
    doc = json.loads((ROOT / "benchmarks" / "baseline-cpu.json").read_text())
    for d in (doc,):
        d["environment"]["device_kind"] = "cuda"
        d["ceiling"]["meaningful"] = True
    base = copy.deepcopy(doc)
    now = copy.deepcopy(doc)
    for b, n in zip(base["results"], now["results"]):
        if b["status"] != "ok":
            continue
        b["floor_ms"] = n["floor_ms"] = 1.0
        b["latency_samples_ms"] = [2.0 + 0.01 * i for i in range(10)]
        n["latency_samples_ms"] = [2.0 + 0.01 * i for i in range(10)]
    slow = now["results"][0]
    slow["latency_samples_ms"] = [3.0 + 0.01 * i for i in range(10)]
    return now, base, slow["technique"]


def test_the_gate_tests_samples_when_both_runs_have_them():
    now, base, slow = _cuda_pair()
    findings, _ = gate.compare(now, base, max_regression=0.10)
    latency = [f for f in findings if f.check == "latency"]
    assert latency and {f.technique for f in latency if f.verdict == "fail"} == {slow}
    assert all(f.verdict == "pass" for f in latency if f.technique != slow)
    text = gate.markdown(findings, [], now, base, "FAIL")
    assert "Mann-Whitney" in text and "threshold -10%" in text


def test_cpu_runs_keep_latency_ungated():
    now, base, _ = _cuda_pair()
    for d in (now, base):
        d["environment"]["device_kind"] = "cpu"
        d["ceiling"]["meaningful"] = False
    findings, notes = gate.compare(now, base)
    assert not [f for f in findings if f.check in ("latency", "efficiency")]
    assert any("latency not gated" in n for n in notes)


def test_failed_checks_become_github_error_annotations(cli, tmp_path, monkeypatch):
    now, base, slow = _cuda_pair()
    (tmp_path / "now.json").write_text(json.dumps(now))
    (tmp_path / "base.json").write_text(json.dumps(base))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, out, _ = cli("gate", str(tmp_path / "now.json"), "--baseline", str(tmp_path / "base.json"))
    assert code == 1
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and f"kvplan gate%3A {slow} latency" in errors[0] and "p = " in errors[0]
    monkeypatch.delenv("GITHUB_ACTIONS")
    code, out, _ = cli("gate", str(tmp_path / "now.json"), "--baseline", str(tmp_path / "base.json"))
    assert code == 1 and "::error" not in out


def test_first_run_creates_the_baseline_folder(cli, tmp_path):
    doc = json.loads((ROOT / "benchmarks" / "baseline-cpu.json").read_text())
    (tmp_path / "now.json").write_text(json.dumps(doc))
    target = tmp_path / "new" / "folder" / "baseline.json"
    code, out, _ = cli("gate", str(tmp_path / "now.json"), "--baseline", str(target), "--update-baseline")
    assert code == 0 and target.is_file() and "first run" in out


def test_every_timed_call_is_kept():
    torch = pytest.importorskip("torch")
    from kvplan.bench.runner import _step_samples
    from kvplan.bench.timing import time_fn

    calls = []
    t = time_fn(lambda: calls.append(1), torch.device("cpu"), 7)
    import os

    warm = 0 if os.environ.get("TRITON_INTERPRET") == "1" else 1  # one untimed warm-up off the interpreter
    assert len(t.samples_ms) == 7 and len(calls) == 7 + warm
    assert t.as_dict()["samples_ms"] == list(t.samples_ms)
    assert sorted(t.samples_ms)[3] == t.median_ms
    # a model step: 30 layers of one spec + 2 of another, sample by sample, shortest run
    assert _step_samples([(30, (1.0, 2.0, 3.0)), (2, (10.0, 20.0))]) == [50.0, 100.0]
    assert _step_samples([]) is None
