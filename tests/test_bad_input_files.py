"""Files that are not what a command reads: a device, a pipe, a file far too large.
Each gets one line and an exit code at once; nothing blocks on a pipe or reads
gigabytes into memory (each of these hung or was read whole before)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

LOGS = Path(__file__).parent / "data" / "vllm_logs"
SPECS = Path(__file__).parent.parent / "model_specs"


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


@pytest.fixture
def fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")

    def make(name):
        path = tmp_path / name
        os.mkfifo(path)
        return str(path)
    return make


def sparse(path: Path, size: int) -> str:
    with open(path, "wb") as fh:  # no disk used: a hole of `size` bytes
        fh.truncate(size)
    return str(path)


@pytest.mark.parametrize("args, code, what", [
    (["estimate", "{pipe}.json"], 1, "not a JSON file"),
    (["estimate", "{pipe}.gguf"], 1, "not a GGUF file"),
    (["weights", "llama-3.1-8b", "--weights", "{pipe}.index.json"], 1, "not a safetensors index"),
    (["calibrate", "{pipe}.log"], 2, "not a log file"),
    (["plan", "{pipe}.yaml"], 2, "not a scenario file"),
])
def test_a_pipe_is_refused_not_opened(cli, fifo, args, code, what):
    # opening a FIFO with no writer blocks for ever; stat tells it apart first
    got, _, err = cli(*[fifo(a.replace("{pipe}", "p")) if "{pipe}" in a else a for a in args])
    line = one_line(err)
    assert got == code and "not a regular file" in line and what in line, line


@pytest.mark.parametrize("args, code", [
    (["estimate", "/dev/zero"], 1),
    (["calibrate", "/dev/zero"], 2),
    (["plan", "/dev/zero"], 2),
])
def test_a_device_is_refused(cli, args, code):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    got, _, err = cli(*args)
    assert got == code and "not a regular file" in one_line(err)


def test_a_config_larger_than_64_mib_is_refused_unread(cli, tmp_path):
    # 64 MiB + 1 byte: one past the limit; the size is printed with its digits grouped
    path = sparse(tmp_path / "config.json", 64 * 1024**2 + 1)
    code, _, err = cli("estimate", path)
    line = one_line(err)
    assert code == 1 and "67,108,865 bytes" in line and "64 MiB" in line


def test_a_scenario_larger_than_1_mib_is_refused_unread(cli, tmp_path):
    path = sparse(tmp_path / "big.yaml", 3 * 1024**3)  # 3 GiB of nothing
    code, _, err = cli("plan", path)
    line = one_line(err)
    assert code == 2 and "3,221,225,472 bytes" in line and "1 MiB" in line


@pytest.mark.parametrize("value", ["1:30", "1:30.5"])
def test_a_base_60_number_in_a_scenario_is_text_not_90(cli, tmp_path, value):
    # PyYAML's YAML 1.1 resolver reads 1:30 as 1 x 60 + 30 = 90 (and 1:30.5 as 90.5): kvplan's loader keeps it text,
    # so the schema check names it instead of planning 90 tokens
    scenario = (Path(__file__).parents[1] / "scenarios" / "agent-tool-loop.yaml").read_text()
    path = tmp_path / "s.yaml"
    path.write_text(scenario.replace("prompt_tokens: 14000", f"prompt_tokens: {value}"))
    code, _, err = cli("plan", str(path))
    line = one_line(err)
    assert code != 0 and "workload.prompt_tokens" in line and repr(value) in line


def test_a_log_larger_than_the_head_is_read_from_its_start(cli, tmp_path, monkeypatch):
    # the start-up lines come first: a long log is read to LOG_HEAD_BYTES and says so
    from kvplan.engines import vllm_log

    text = (LOGS / "v0191_qwen3_8b_a100_40gb_tokenkaki.log").read_bytes()
    monkeypatch.setattr(vllm_log, "LOG_HEAD_BYTES", 2 * 1024**2)
    path = tmp_path / "long.log"
    path.write_bytes(text + b"x" * (3 * 1024**2))
    code, out, err = cli("calibrate", str(path), "--model", "qwen3-8b", "--format", "json")
    data = json.loads(out)
    assert code == 0, err
    assert data["log"]["available_kv_gib"] == 19.36  # the log's "Available KV cache memory: 19.36 GiB"
    assert any("first 2 MiB were read" in note for note in data["notes"])
    # with the start-up lines after the head, the line says where it looked
    path.write_bytes(b"x" * (3 * 1024**2) + text)
    code, _, err = cli("calibrate", str(path), "--model", "qwen3-8b")
    assert code == 2 and "in its first 2 MiB" in one_line(err)


@pytest.mark.parametrize("body, found", [("null", "found null"), ("[1, 2]", "found a list"),
                                         ('"llama"', "found a string"), ("3", "found a number")])
def test_json_that_is_not_an_object_names_what_it_is(cli, tmp_path, body, found):
    path = tmp_path / "config.json"
    path.write_text(body)
    code, _, err = cli("estimate", str(path))
    assert code == 1 and found in one_line(err)


def test_a_config_saved_with_a_byte_order_mark_reads(cli, tmp_path):
    # some Windows editors write UTF-8 with a BOM; json.loads refused it
    path = tmp_path / "config.json"
    path.write_bytes(b"\xef\xbb\xbf" + (SPECS / "llama-3.1-8b.json").read_bytes())
    code, out, err = cli("estimate", str(path), "--context", "1024", "--format", "json")
    assert code == 0, err
    # Llama 3.1 8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B per token
    assert json.loads(out)["bytes_per_token"] == 131_072


@pytest.mark.parametrize("text, words", [
    # each was an internal error (ValueError from float) or reproduced as if real
    ("INFO Available KV cache memory: 1.2.3 GiB\n", ["reads '1.2.3' here", "edited or cut"]),
    ("INFO Model loading took 1.2.3 GiB\nGPU KV cache size: 1,000 tokens\n", ["reads '1.2.3' here"]),
    ("Maximum concurrency for 8,192 tokens per request: 1..5x\nGPU KV cache size: 1,000 tokens\n", ["reads '1..5' here"]),
    ("INFO Available KV cache memory: 123456.00 GiB\n", ["123,456.00 GiB (available kv) is more than any GPU holds"]),
    ("INFO GPU KV cache size: 2,000,000,000,000 tokens\n", ["2,000,000,000,000 (gpu kv cache tokens) is above the limit of 2^40"]),
])
def test_a_log_with_figures_no_server_prints_is_one_line(cli, tmp_path, text, words):
    path = tmp_path / "edited.log"
    path.write_text(text, encoding="utf-8")
    code, out, err = cli("calibrate", str(path), "--model", "llama-3.1-8b")
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "internal error" not in err, err
    assert str(path) in lines[0] and all(w in lines[0] for w in words), lines[0]


BASELINE = Path(__file__).parent.parent / "benchmarks" / "baseline-cpu.json"


@pytest.mark.parametrize("samples, words", [
    # each was an internal error: TypeError comparing 'a' with 0, OverflowError turning the int to a float
    (["a", None], "latency_samples_ms[0] is not a number: 'a'"),
    ({"a": 1}, "latency_samples_ms is not a list of numbers"),
    ([float("nan")], "latency_samples_ms[0] is nan: NaN or infinite figures cannot be gated"),
    ([10**400], "latency_samples_ms[0] is beyond 2^63"),
    ([1.0, -2.5], "latency_samples_ms[1] is -2.5: a latency is not negative"),
])
def test_gate_refuses_latency_samples_that_are_not_numbers(cli, tmp_path, samples, words):
    doc = json.loads(BASELINE.read_text())
    doc["results"][0]["latency_samples_ms"] = samples
    current = tmp_path / "bench.json"
    current.write_text(json.dumps(doc))
    code, out, err = cli("gate", str(current), "--baseline", str(BASELINE))
    line = one_line(err)
    assert code == 2 and out == "" and "results[0] (baseline)" in line and words in line, line


def test_gate_refuses_a_figure_beyond_a_float(cli, tmp_path):
    doc = json.loads(BASELINE.read_text())
    doc["results"][0]["measured_bytes"] = 10**400
    current = tmp_path / "bench.json"
    current.write_text(json.dumps(doc))
    code, out, err = cli("gate", str(current), "--baseline", str(BASELINE))
    assert code == 2 and "measured_bytes is beyond 2^63" in one_line(err)


LONG = "9" * 5000  # past Python's 4,300-digit limit for reading an integer


@pytest.mark.parametrize("name, body, args, code, words", [
    # each was an internal error: ValueError (the digit limit, a date YAML reads that is none), RecursionError
    ("config.json", '{"model_type": "llama", "num_hidden_layers": ' + LONG + "}", ["estimate", "{path}"], 1,
     ["more than 4,300 digits"]),
    ("model.safetensors.index.json", '{"metadata": {"total_size": ' + LONG + '}, "weight_map": {}}',
     ["weights", "llama-3.1-8b", "--weights", "{path}"], 1, ["not a readable safetensors index", "4,300 digits"]),
    ("big.yaml", "model: llama-3.1-8b\nworkload:\n  concurrency: " + LONG + "\n", ["plan", "{path}"], 2,
     ["a value cannot be read", "4300 digits", "quotes"]),
    ("date.yaml", "name: 2024-13-45\nmodel: llama-3.1-8b\n", ["plan", "{path}"], 2,
     ["a value cannot be read: month must be in 1..12", "quotes"]),
])
def test_values_python_cannot_read_are_one_line(cli, tmp_path, name, body, args, code, words):
    path = tmp_path / name
    path.write_text(body)
    got, out, err = cli(*[str(path) if a == "{path}" else a for a in args])
    line = one_line(err)
    assert got == code and out == "" and str(path) in line and all(w in line for w in words), line


@pytest.mark.parametrize("header", [b'{"w": {"dtype": "BF16", "shape": [' + b"9" * 5000 + b"]}}",
                                    b"[" * 100_000 + b"]" * 100_000])
def test_a_safetensors_header_python_cannot_read_is_one_line(cli, tmp_path, header):
    import struct

    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    code, out, err = cli("weights", "llama-3.1-8b", "--weights", str(path))
    assert code == 1 and "the safetensors header is not valid JSON" in one_line(err)


def test_gguf_arrays_nested_without_end_are_one_line(cli, tmp_path):
    # an array of arrays 5,000 deep was an internal error (RecursionError)
    import struct

    path = tmp_path / "deep.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 4) + b"name" + struct.pack("<I", 9)
                     + struct.pack("<IQ", 9, 1) * 5000 + struct.pack("<IQ", 4, 0))
    for args in (["weights", str(path)], ["estimate", str(path)]):
        code, _, err = cli(*args)
        assert code == 1 and "GGUF metadata arrays nested more than 32 deep" in one_line(err)


def test_a_weight_map_naming_no_file_is_one_line(cli, tmp_path):
    # {"w": 5} was an internal error (TypeError joining the folder and 5)
    path = tmp_path / "model.safetensors.index.json"
    path.write_text(json.dumps({"metadata": {"total_size": 100}, "weight_map": {"w": 5}}))
    code, _, err = cli("weights", "llama-3.1-8b", "--weights", str(path))
    line = one_line(err)
    assert code == 1 and "weight_map gives tensor 'w' the shard 5, not a file name" in line, line


def test_a_checkpoint_without_tensors_is_not_zero_bytes_of_weights(cli, tmp_path):
    # a header of __metadata__ alone, or a GGUF with an empty tensor table, planned the model with 0 B of weights
    import struct

    header = json.dumps({"__metadata__": {"format": "pt"}}).encode()
    st = tmp_path / "model.safetensors"
    st.write_bytes(struct.pack("<Q", len(header)) + header)
    gguf = tmp_path / "empty.gguf"
    gguf.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    for args, words in ((["estimate", "llama-3.1-8b", "--gpu", "h100", "--weights", str(st)], "no tensors in its safetensors header"),
                        (["weights", "llama-3.1-8b", "--weights", str(tmp_path)], "no tensors in its safetensors header"),
                        (["weights", "llama-3.1-8b", "--weights", str(gguf)], "no tensors in the GGUF tensor table")):
        code, out, err = cli(*args)
        line = one_line(err)
        assert code == 1 and out == "" and words in line and "--weights SIZE" in line, line


def test_stdout_on_a_full_disk_is_one_line_not_an_internal_error():
    # `kvplan models > /dev/full` said "internal error: OSError: [Errno 28] No space left on device"
    import subprocess
    import sys

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "kvplan", "models", "--format", "json"], stdout=full,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=60)
    line = one_line(r.stderr)
    assert r.returncode == 1 and line.startswith("kvplan: error: cannot write the output: No space left on device"), line


@pytest.mark.parametrize("key, value, words", [
    ("config", [], "'config' must be an object ({...}), found list"),  # said "missing 'config'"
    ("ceiling", "x", "'ceiling' must be an object ({...}), found str"),
    ("environment", None, "missing 'environment'"),
])
def test_gate_names_a_section_of_the_wrong_type(cli, tmp_path, key, value, words):
    doc = json.loads(BASELINE.read_text())
    doc[key] = value
    current = tmp_path / "bench.json"
    current.write_text(json.dumps(doc))
    code, _, err = cli("gate", str(current), "--baseline", str(BASELINE))
    assert code == 2 and words in one_line(err)
