"""The shipped GitHub workflow (.github/workflows/kvplan-bench.yml), CPU job, run
step by step as written: on a clean copy of the repository (the files git
tracks, as a clone has them), in a fresh venv made by the workflow's own install
step, with GitHub's step environment emulated (RUNNER_TEMP, GITHUB_OUTPUT,
GITHUB_PATH, GITHUB_STEP_SUMMARY, `bash -eo pipefail`, `${{ }}` values passed
through env). It must pass as is, fail on a planted regression with one
::error annotation per failed check, and say what it does on a first run.

`uses:` steps are stood in for: checkout = the clean copy, setup-python = this
machine's python3, upload-artifact = the folder must hold the JSON. The install
step's pip reads the pins of ci-constraints.txt from this machine's own package
index (torch-index ''), as a hosted runner reads the PyTorch CPU index.

The shapes are those of benchmarks/ci_bench_gate.sh, whose gate then runs on
the job's bench (BENCH_JSON), so the project's own CI gate and the shipped
workflow cost one bench run (about a minute on 2 cores) plus the install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("torch")
pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "kvplan-bench.yml"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
pytestmark = pytest.mark.slow


class Runner:
    """Just enough of a GitHub runner to run one job's steps as written."""

    def __init__(self, workspace: Path, temp: Path, inputs: dict):
        self.workspace, self.temp = workspace, temp
        doc = yaml.safe_load(WORKFLOW.read_text())
        spec = doc[True]["workflow_call"]["inputs"] if True in doc else doc["on"]["workflow_call"]["inputs"]
        unknown = set(inputs) - set(spec)
        assert not unknown, f"not inputs of the workflow: {unknown}"
        self.inputs = {k: v.get("default", "") for k, v in spec.items()} | inputs
        self.steps = doc["jobs"]["bench"]["steps"]
        self.outputs: dict[str, dict] = {}
        self.path: list[str] = []
        self.summary = temp / "summary.md"
        self.summary.touch()

    def value(self, text) -> str:
        def one(m):
            expr = m.group(1)
            if expr.startswith("inputs."):
                v = self.inputs[expr[7:]]
                return str(v).lower() if isinstance(v, bool) else str(v)
            if expr == "runner.temp":
                return str(self.temp)
            if expr == "always()":
                return "true"
            got = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
            if got:
                return self.outputs.get(got.group(1), {}).get(got.group(2), "")
            raise AssertionError(f"the emulator does not know ${{{{ {expr} }}}}")

        return EXPR.sub(one, str(text))

    def run_step(self, step: dict) -> subprocess.CompletedProcess | None:
        if "if" in step and self.value(step["if"]) not in ("true", "True"):
            return None
        if "uses" in step:
            action = step["uses"].split("@")[0]
            if action == "actions/upload-artifact":
                folder = Path(self.value(step["with"]["path"]))
                assert (folder / "bench.json").is_file(), f"nothing to upload in {folder}"
                return None
            assert action in ("actions/checkout", "actions/setup-python"), action
            return None
        assert step.get("shell", "bash") == "bash"
        script = self.temp / "step.sh"
        script.write_text(step["run"])
        out_file, path_file = self.temp / "output", self.temp / "path"
        out_file.write_text("")
        path_file.write_text("")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "VIRTUAL_ENV", "PYTHON"))}
        env["PATH"] = os.pathsep.join(self.path + [p for p in env.get("PATH", "").split(os.pathsep)
                                                   if ".venv" not in p])
        env |= {"CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(self.temp),
                "GITHUB_WORKSPACE": str(self.workspace), "GITHUB_OUTPUT": str(out_file),
                "GITHUB_PATH": str(path_file), "GITHUB_STEP_SUMMARY": str(self.summary)}
        env |= {k: self.value(v) for k, v in (step.get("env") or {}).items()}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.workspace,
                              env=env, capture_output=True, text=True, timeout=900)
        if "id" in step:
            self.outputs[step["id"]] = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
        self.path = [p for p in path_file.read_text().splitlines() if p][::-1] + self.path
        return proc

    def step(self, name: str) -> dict:
        return next(s for s in self.steps if s.get("name") == name)


def _clean_copy(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True)
    if files.returncode != 0:
        pytest.skip("not a git checkout")
    for name in filter(None, files.stdout.split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="module")
def cpu_job(tmp_path_factory) -> tuple[Runner, Path, Path]:
    """The CPU job's steps as written, run once for this module: (runner, clean copy, runner temp)."""
    tmp_path = tmp_path_factory.mktemp("workflow")
    work = _clean_copy(tmp_path / "repo")
    temp = tmp_path / "runner"
    temp.mkdir()
    base_python = shutil.which("python3") or sys.executable
    runner = Runner(work, temp, {"torch-index": "", "python": base_python})
    for step in runner.steps:
        proc = runner.run_step(step)
        if proc is not None:
            assert proc.returncode == 0, f"step {step.get('name')}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return runner, work, temp


def test_cpu_workflow_passes_then_fails_on_a_planted_regression(cpu_job):
    runner, work, temp = cpu_job
    venv = temp / "kvplan-venv"
    assert (venv / "bin" / "kvplan").exists()
    # the package under test is the clean copy, installed (not the developer's editable one)
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import kvplan; print(kvplan.__file__)"],
                           capture_output=True, text=True, cwd=temp).stdout
    assert str(venv) in where
    bench = json.loads((temp / "kvplan-out" / "bench.json").read_text())
    assert bench["config"]["model"] == "llama-3.1-8b" and bench["summary"]["ok"] >= 10
    assert all(len(r["latency_samples_ms"]) == 1 for r in bench["results"] if r["status"] == "ok")  # --repeats 1
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(bench, json.loads((ROOT / "docs" / "schema" / "bench.schema.json").read_text()))
    summary = runner.summary.read_text()
    assert "## kvplan gate: PASS" in summary and "latency not gated" in summary

    # planted regression: the baseline's fp8 row held fewer bytes than this run now does
    baseline_path = work / "benchmarks" / "baseline-cpu.json"
    baseline = json.loads(baseline_path.read_text())
    row = next(r for r in baseline["results"] if r["technique"].startswith("fp8"))
    row["measured_bytes"] -= 4096
    row["predicted_bytes"] -= 4096
    baseline_path.write_text(json.dumps(baseline))
    proc = runner.run_step(runner.step("Gate against the baseline"))
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    checks = sorted(line.split("title=", 1)[1].split("::", 1)[0] for line in errors)
    tech = row["technique"].replace(":", "%3A").replace(",", "%2C")
    assert checks == [f"kvplan gate%3A {tech} measured_bytes", f"kvplan gate%3A {tech} predicted_bytes"]
    assert "## kvplan gate: FAIL" in runner.summary.read_text()

    # first run, said explicitly: no baseline -> 'create' saves this run as one (uploaded), 'fail' stops
    baseline_path.unlink()
    proc = runner.run_step(runner.step("Gate against the baseline"))
    assert proc.returncode == 0 and "::warning title=kvplan gate::no baseline" in proc.stdout
    assert (temp / "kvplan-out" / "baseline" / "baseline-cpu.json").is_file()
    assert "baseline created" in runner.summary.read_text()
    runner.inputs["first-run"] = "fail"
    proc = runner.run_step(runner.step("Gate against the baseline"))
    assert proc.returncode == 1 and "::error title=kvplan gate::no baseline" in proc.stdout


def test_cpu_bench_of_every_technique_passes_the_gate(cpu_job):
    """The project's own CI gate, benchmarks/ci_bench_gate.sh, gating the bench the job above ran (BENCH_JSON):
    the job's default inputs are the script's BENCH_ARGS (checked here, and the gate refuses a run of another
    model, shape or technique set), so CI spends the bench's minute of CPU once. It ran the same bench again in
    the main suite (tests/test_ci_bench_gate.py) before."""
    runner, _, temp = cpu_job
    script = ROOT / "benchmarks" / "ci_bench_gate.sh"
    bench_args = re.search(r"^BENCH_ARGS=\((.*)\)$", script.read_text(), re.M).group(1).split()
    job = runner.inputs
    assert bench_args == [job["model"], "-t", job["techniques"], "--device", job["device"], "--context", job["context"],
                          "--batch", job["batch"], "--repeats", job["repeats"], "--quiet"] and not job["bench-args"]
    bench = temp / "kvplan-out" / "bench.json"
    env = dict(os.environ, KVPLAN=f"{sys.executable} -m kvplan", BENCH_JSON=str(bench))
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert bench.is_file()
    assert "| prediction | ok |" in proc.stdout
