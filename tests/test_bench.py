"""kvplan bench on CPU (Triton interpreter): predictions equal measurements,
bad input exits 2, an out-of-memory is reported with its shape and the run goes on.

Tiny runs (context 32, batch 2, one repeat) keep these to a few seconds each.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from typer.testing import CliRunner  # noqa: E402

from kvplan.cli.app import app  # noqa: E402

TINY = ["--context", "32", "--batch", "2", "--repeats", "1", "--device", "cpu", "--quiet"]


def test_estimate_does_not_import_torch():
    code = ("import sys; from kvplan.cli.app import app; from kvplan.workflows import estimate_workflow; "
            "import kvplan.bench.cases, kvplan.bench.predict, kvplan.bench.gate, kvplan.bench.shrink; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'triton')]; "
            "sys.exit(1 if bad else 0)")
    import subprocess

    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_cpu_bench_predicted_equals_measured(tmp_path):
    out = tmp_path / "bench.json"
    csv_out = tmp_path / "bench.csv"
    result = CliRunner().invoke(app, ["bench", "llama-3.1-8b", "-t", "fp8", "-t", "window:16", *TINY,
                                      "--json", str(out), "--csv", str(csv_out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["environment"]["device_kind"] == "cpu"
    assert doc["shapes"]["shrink"]["kv_heads"] == [8, 2]
    rows = {r["technique"]: r for r in doc["results"]}
    assert list(rows) == ["baseline", "fp8", "window:16"]
    for r in rows.values():
        assert r["status"] == "ok", r
        assert r["predicted_bytes"] == r["measured_bytes"] > 0
        assert r["predicted_blocks"] == r["measured_blocks"] > 0
        assert r["latency_ms_p20"] <= r["latency_ms_median"] <= r["latency_ms_p80"]
    assert (rows["fp8"]["measured_bytes"] - 4 * 2 * 4) * 2 == rows["baseline"]["measured_bytes"]  # fp32 scales: 4 layers x K,V
    assert rows["window:16"]["attention_mass"] < 1.0
    assert rows["baseline"]["error_rel"] < 1e-5 and 1e-3 < rows["fp8"]["error_rel"] < 0.1
    lines = csv_out.read_text().splitlines()
    assert len(lines) == 4 and lines[0].startswith("technique,status,predicted_bytes,measured_bytes")


def test_kivi_kernel_layout_matches_its_prediction(tmp_path):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "llama-3.1-8b", "-t", "int4:group=32", *TINY, "--json", str(out)])
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text())["results"][1]
    assert row["status"] == "ok"
    assert row["predicted_bytes"] == row["measured_bytes"] and row["predicted_blocks"] == row["measured_blocks"]


def test_a_prediction_mismatch_is_reported_with_both_numbers(tmp_path, monkeypatch):
    from dataclasses import replace

    from kvplan.bench import runner

    real = runner.predict

    def one_block_off(*args, **kwargs):
        p = real(*args, **kwargs)
        return replace(p, bytes=p.bytes + 4096)

    monkeypatch.setattr(runner, "predict", one_block_off)
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "llama-3.1-8b", "-t", "fp8", *TINY, "--json", str(out)])
    assert result.exit_code == 1
    row = json.loads(out.read_text())["results"][1]
    assert row["status"] == "mismatch"
    assert f"predicted {row['predicted_bytes']} measured {row['measured_bytes']}" in row["message"]
    assert row["predicted_bytes"] - row["measured_bytes"] == 4096


def test_unknown_technique_exits_2_before_running(cli, tmp_path):
    out = tmp_path / "bench.json"
    code, _, err = cli("bench", "llama-3.1-8b", "-t", "fp8", "-t", "turbo", *TINY, "--json", str(out))
    assert code == 2 and "unknown technique 'turbo'" in err
    assert not out.exists()
    out.write_text("previous results\n")  # an existing file is left alone on bad input
    code, _, _ = cli("bench", "llama-3.1-8b", "-t", "fp8:e9m9", *TINY, "--json", str(out))
    assert code == 2 and out.read_text() == "previous results\n"
    # and on good input too, unless --force
    code, _, err = cli("bench", "llama-3.1-8b", "-t", "fp8", *TINY, "--json", str(out))
    assert code == 2 and "the file exists" in err and out.read_text() == "previous results\n"


def test_unknown_model_exits_2(cli):
    code, _, err = cli("bench", "no-such-model-xyz", "-t", "fp8", *TINY)
    assert code != 0 and "kvplan: error:" in err


def test_out_of_memory_reported_with_shape_and_run_continues(tmp_path, monkeypatch):
    from kvplan.bench import runner

    def hook(spec, shapes):
        if spec == "fp8":
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(runner, "BEFORE_TECHNIQUE_HOOKS", [hook])
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "llama-3.1-8b", "-t", "fp8", "-t", "mqa", *TINY, "--json", str(out)])
    assert result.exit_code == 1
    rows = {r["technique"]: r for r in json.loads(out.read_text())["results"]}
    assert rows["fp8"]["status"] == "oom"
    assert "batch 2 x 32 tokens" in rows["fp8"]["message"] and "attention 2x128 fp8_e4m3" in rows["fp8"]["message"]
    assert rows["mqa"]["status"] == "ok" and rows["mqa"]["predicted_bytes"] == rows["mqa"]["measured_bytes"]
    assert rows["baseline"]["status"] == "ok"


def test_offload_cycle_keeps_the_sequence_state_consistent():
    """Each timed call is undone untimed; the cycle starts and ends offloaded, and the
    first decode step only ever runs on a resident sequence."""
    from kvplan.bench.timing import time_offload_cycle

    state = {"resident": False, "steps": 0}

    def offload():
        assert state["resident"], "offloaded twice"
        state["resident"] = False

    def resume():
        assert not state["resident"], "resumed twice"
        state["resident"] = True

    def first_step():
        assert state["resident"], "decoded an offloaded sequence"
        state["steps"] += 1

    cycle = time_offload_cycle(offload, resume, first_step, torch.device("cpu"), repeats=3)
    assert state == {"resident": False, "steps": 4}  # one warm-up + 3 timed
    for t in (cycle.offload, cycle.resume, cycle.resume_first_step):
        assert t.repeats == 3 and t.p20_ms <= t.median_ms <= t.p80_ms


@pytest.mark.parametrize("model", ["llama-3.1-8b", "deepseek-v2-lite"])  # paged K/V and an MLA latent
def test_offload_row_reports_copy_out_copy_back_and_first_step(tmp_path, model):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", model, "-t", "offload:cpu=1GiB,active=1", *TINY, "--json", str(out)])
    assert result.exit_code == 0, result.output
    row = {r["technique"]: r for r in json.loads(out.read_text())["results"]}["offload:cpu=1GiB,active=1"]
    assert row["status"] == "ok" and row["measured_offloaded_bytes"] == row["predicted_offloaded_bytes"] > 0
    for key in ("offload_ms_median", "resume_ms_median", "resume_first_step_ms_median"):
        assert row[key] > 0, key
    assert "copy back + first decode step" in " ".join(result.output.split())  # the console wraps


def test_device_capability_gates_bf16_and_fp8_kernels():
    """An A100 (8.0) runs bf16 but not fp8 e4m3; a T4 (7.5) neither; the interpreter anything."""
    from dataclasses import replace

    from kvplan import load_model
    from kvplan.bench.cases import check_device_supported
    from kvplan.core.storage import kv_storage

    bf16 = load_model("llama-3.1-8b").groups[0][0].caches[0]
    fp8 = replace(bf16, storage=kv_storage("fp8_e4m3"))
    assert check_device_supported(bf16, None) is None and check_device_supported(fp8, None) is None
    assert check_device_supported(bf16, (8, 0)) is None and check_device_supported(fp8, (8, 9)) is None
    assert check_device_supported(fp8, (9, 0)) is None
    assert "8.0 or newer" in check_device_supported(bf16, (7, 5))
    assert "8.9 or newer" in check_device_supported(fp8, (8, 0))


# Output paths are checked before any work; results are never lost; NaN fails a run.

@pytest.mark.parametrize("where, words", [
    ("missing/bench.json", ["the folder", "does not exist"]),
    (".", ["is a folder"]),
    ("file.txt/bench.json", ["file.txt is a file, not a folder"]),  # said "the folder file.txt does not exist"
])
def test_unusable_output_paths_exit_2_before_any_work(cli, tmp_path, monkeypatch, where, words):
    from kvplan.bench import runner

    (tmp_path / "file.txt").write_text("mine\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "run_bench", lambda cfg: pytest.fail("the bench ran"))
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = cli("bench", "llama-3.1-8b", "-t", "fp8", *TINY, "--json", where)
    line = err.strip()
    assert code == 2 and "\n" not in line and "--json" in line and "Traceback" not in err, err
    for word in words:
        assert word in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "file.txt").read_text() == "mine\n"


def test_json_and_csv_on_the_same_file_is_refused(cli, tmp_path):
    path = str(tmp_path / "out")
    code, _, err = cli("bench", "llama-3.1-8b", "-t", "fp8", *TINY, "--json", path, "--csv", path)
    assert code == 2 and "same file" in err and not os.path.exists(path)


def test_a_failed_final_write_keeps_the_results(cli, tmp_path, monkeypatch):
    import kvplan.files as kfiles

    out = tmp_path / "bench.json"
    real_replace = os.replace

    def refuse_target(src, dst):
        if os.path.basename(dst) == "bench.json":
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(kfiles.os, "replace", refuse_target)
    code, stdout, err = cli("bench", "llama-3.1-8b", "-t", "fp8", *TINY, "--json", str(out))
    assert code == 1 and not out.exists()
    rescued = [p for p in tmp_path.iterdir() if p.name.startswith("bench.json.rescued-")]
    assert len(rescued) == 1, list(tmp_path.iterdir())
    assert f"saved to {rescued[0]}" in err and "No space left on device" in err
    doc = json.loads(rescued[0].read_text())
    assert [r["technique"] for r in doc["results"]] == ["baseline", "fp8"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".kvplan-")]


def test_nothing_writable_prints_the_results(tmp_path, monkeypatch, capsys):
    import kvplan.files as kfiles

    monkeypatch.setattr(kfiles, "write_atomic", lambda *a, **k: (_ for _ in ()).throw(OSError(30, "Read-only file system")))
    line = kfiles.save_or_rescue(str(tmp_path / "bench.json"), '{"results": []}\n', "--json")
    assert "printed on stdout" in line and "Read-only file system" in line
    assert capsys.readouterr().out == '{"results": []}\n'


def test_a_nan_error_fails_the_run(tmp_path, monkeypatch):
    from kvplan.bench import runner

    real_fill = runner._fill

    def nan_error(row, *args):
        real_fill(row, *args)
        if row.technique == "fp8":
            row.accuracy.error_rel = float("nan")
            row.groups[0]["error_rel"] = float("nan")

    monkeypatch.setattr(runner, "_fill", nan_error)
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "llama-3.1-8b", "-t", "fp8", *TINY, "--json", str(out)])
    assert result.exit_code == 1, result.output
    text = out.read_text()
    rows = {r["technique"]: r for r in json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))["results"]}
    assert rows["fp8"]["status"] == "error" and rows["fp8"]["error_rel"] is None
    assert "error_rel" in rows["fp8"]["message"] and "groups[0].error_rel" in rows["fp8"]["message"]
    assert rows["baseline"]["status"] == "ok"


def test_worst_never_skips_a_nan():
    from kvplan.bench.runner import _worst

    assert _worst([0.1, float("nan")], max) != _worst([0.1, float("nan")], max)  # NaN, wherever it stands
    assert _worst([float("nan"), 0.1], min) != _worst([float("nan"), 0.1], min)
    assert _worst([0.1, 0.3], max) == 0.3 and _worst([], max) is None
