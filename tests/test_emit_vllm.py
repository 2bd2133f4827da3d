"""`--emit vllm`: the `vllm serve` command for a plan, and the techniques vLLM cannot apply."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.capacity.hardware import make_deployment
from kvplan.cli.app import app
from kvplan.engines import vllm_flags
from kvplan.planner import evaluate
from kvplan.render import Report
from kvplan.sources import load_model
from kvplan.techniques.registry import build_all

GIB = 1024**3


def emit(*args):
    r = CliRunner().invoke(app, ["estimate", *args, "--emit", "vllm", "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["emit"]


def flag(argv, name):
    return argv[argv.index(name) + 1]


def test_plain_model_uses_auto_dtype():
    out = emit("llama-3.1-8b", "--context", "8192")
    assert out["argv"][:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B"]
    assert flag(out["argv"], "--kv-cache-dtype") == "auto"
    assert flag(out["argv"], "--max-model-len") == "8192"
    assert "--block-size" not in out["argv"]
    assert out["not_applied"] == []
    assert out["command"].startswith("vllm serve meta-llama/Llama-3.1-8B --kv-cache-dtype auto")


def test_serving_techniques_become_flags():
    out = emit("llama-3.1-8b", "--context", "8192", "--max-model-len", "16k", "--kv-memory", "10GiB", "--tp", "2",
               "--pp", "2", "-t", "fp8", "-t", "page:32", "-t", "prefix:tokens=2000,requests=8",
               "-t", "offload:cpu=64GiB")
    argv = out["argv"]
    assert flag(argv, "--kv-cache-dtype") == "fp8"
    assert flag(argv, "--block-size") == "32"
    assert flag(argv, "--max-model-len") == "16384"
    assert "--enable-prefix-caching" in argv
    assert flag(argv, "--kv-offloading-size") == "64"  # 64 GiB, vLLM's unit
    assert flag(argv, "--kv-offloading-backend") == "native"
    assert flag(argv, "--tensor-parallel-size") == "2"
    assert flag(argv, "--pipeline-parallel-size") == "2"
    assert flag(argv, "--kv-cache-memory-bytes") == str(10 * GIB)
    assert out["not_applied"] == []


def test_max_num_seqs_from_capacity():
    # 10 GiB pool, 128 KiB/token x 8,192 tokens = 1 GiB per sequence -> 10 sequences
    out = emit("llama-3.1-8b", "--context", "8192", "--kv-memory", "10GiB")
    assert flag(out["argv"], "--max-num-seqs") == "10"


def test_fp8_e5m2():
    assert flag(emit("llama-3.1-8b", "-t", "fp8:e5m2")["argv"], "--kv-cache-dtype") == "fp8_e5m2"


def test_skip_sliding_layers():
    argv = emit("gpt-oss-20b", "-t", "fp8:skip=sliding")["argv"]
    assert flag(argv, "--kv-cache-dtype") == "fp8"
    assert flag(argv, "--kv-cache-dtype-skip-layers") == "sliding_window"
    # without skip no such flag
    assert "--kv-cache-dtype-skip-layers" not in emit("gpt-oss-20b", "-t", "fp8")["argv"]


@pytest.mark.parametrize("technique, words", [
    ("cla:2", "trained"),
    ("mla", "trained"),
    ("hybrid:3:1", "trained"),
    ("csa:m=4,k=512,window=128", "trained"),
    ("window:4096", "trained"),
    ("gqa:2", "uptrained"),
    ("mqa", "uptrained"),
    ("evict:0.5", "engine support"),
    ("pyramid:0.12", "engine support"),
    ("quest:page=16,topk=64", "engine support"),
    ("int4", "not a vLLM KV cache dtype"),
    ("int2", "not a vLLM KV cache dtype"),
    ("kivi", "not a vLLM KV cache dtype"),
])
def test_techniques_vllm_cannot_apply(technique, words):
    out = emit("llama-3.1-8b", "-t", technique)
    assert [s["spec"] for s in out["not_applied"]] == [technique]
    assert words in out["not_applied"][0]["reason"]
    if technique in ("int4", "int2", "kivi"):
        assert flag(out["argv"], "--kv-cache-dtype") == "auto"


def test_table_output_prints_the_command():
    r = CliRunner().invoke(app, ["estimate", "llama-3.1-8b", "-t", "fp8", "-t", "cla:2", "--emit", "vllm"])
    assert r.exit_code == 0, r.output
    assert "vllm serve meta-llama/Llama-3.1-8B --kv-cache-dtype fp8" in r.stdout
    assert "not applied by vLLM: cla:2" in r.stdout


def test_python_api():
    chain = build_all(["fp8", "page:16", "evict:0.5"])
    result = evaluate(load_model("llama-3.1-8b"), chain, 8192, 1, make_deployment(None, kv_memory_bytes=10 * GIB))
    report = Report({})
    vllm_flags.add_to_report(report, result, chain, "bf16", 8192)
    data = report.data["emit"]
    assert data["engine"] == "vllm"
    assert flag(data["argv"], "--block-size") == "16"
    assert [s["spec"] for s in data["not_applied"]] == ["evict:0.5"]
    assert any(line.strip().startswith("vllm serve") for line in report.lines)
