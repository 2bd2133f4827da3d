"""The published JSON Schemas (docs/schema/) are current and describe what the
commands print, including runs the schemas were not generated from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan import schemas

jsonschema = pytest.importorskip("jsonschema")
ROOT = Path(__file__).resolve().parents[1]


def _schema(name: str) -> dict:
    return json.loads((ROOT / "docs" / "schema" / f"{name}.schema.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["estimate", "plan", "sweep", "bench", "fit"])
def test_committed_schema_is_the_generated_one(name):
    assert schemas.dumps(schemas.generate(name)) == (ROOT / "docs" / "schema" / f"{name}.schema.json").read_text(
        encoding="utf-8"), f"docs/schema/{name}.schema.json is stale: run python -m kvplan.schemas --write"


@pytest.mark.parametrize("argv", [
    ["estimate", "mistral-7b-v0.1", "-c", "32k"],
    ["estimate", "deepseek-v3", "-c", "8k", "-b", "4", "--gpu", "h200", "--tp", "8", "-t", "fp8", "--explain"],
    ["estimate", "llama-3.1-8b", "-c", "64k", "-b", "32", "-t", "offload:cpu=100GiB,active=8", "--gpu", "a100"],
    # weights the config does not size (a BigDL low-bit checkpoint): model.weight_bytes is null
    ["estimate", str(Path(__file__).parent / "data" / "configs" / "phi-2-bigdl-mixed-fp4.json")],
])
def test_other_estimate_runs_validate(argv):
    jsonschema.validate(schemas.run_json(*argv), _schema("estimate"))


def test_plan_and_sweep_outputs_validate(tmp_path, cli):
    jsonschema.validate(schemas.run_json("plan", "rag-128k"), _schema("plan"))
    out = tmp_path / "s.json"
    code, _, err = cli("sweep", "llama-3.1-8b", "-c", "2k..1m", "-n", "4", "-t", "kivi", "--out", str(out))
    assert code == 0, err
    written = json.loads(out.read_text())
    jsonschema.validate(written, _schema("sweep"))
    printed = schemas.run_json("sweep", "llama-3.1-8b", "-c", "2k..1m", "-n", "4", "-t", "kivi")
    assert printed == written  # one shape, printed or written


def test_a_changed_key_fails_validation():
    doc = schemas.run_json("estimate", "qwen3-8b")
    schema = _schema("estimate")
    jsonschema.validate(doc, schema)
    bad = dict(doc, kv_bytes_per_sequence="576.00 MiB")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    missing = {k: v for k, v in doc.items() if k != "explain"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(missing, schema)


def test_a_new_command_registers_its_schema(monkeypatch):
    monkeypatch.setattr(schemas, "SAMPLES", dict(schemas.SAMPLES))
    schemas.register("demo", lambda: [{"schema_version": 1, "points": [{"x": 1, "y": 2.5}]},
                                      {"schema_version": 1, "points": [], "note": None}])
    s = schemas.generate("demo")
    assert s["required"] == ["schema_version", "points"]
    assert s["properties"]["points"]["items"]["properties"]["y"]["type"] == "number"
    assert s["properties"]["note"]["type"] == "null"
    assert "demo" in schemas.names()


def test_a_cuda_bench_row_validates():
    doc = json.loads((ROOT / "benchmarks" / "baseline-cpu.json").read_text())
    row = doc["results"][0]
    row.update(cuda_allocated_delta=2_097_152, recompute_ms_predicted=1.5, latency_samples_ms=[0.25, 0.26, 0.24])
    doc["environment"]["device_kind"] = "cuda"
    jsonschema.validate(doc, _schema("bench"))
    row["latency_samples_ms"] = ["0.25 ms"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, _schema("bench"))
