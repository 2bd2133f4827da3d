"""`kvplan estimate` through the real entry point: formats, options, bad input."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from kvplan.errors import UsageError
from kvplan.units import parse_size, parse_tokens

GIB = 1024**3


def test_json_has_the_documented_keys(cli):
    code, out, err = cli("estimate", "llama-3.1-70b", "--context", "128k", "--batch", "4", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    for key in ("bytes_per_token", "kv_bytes_per_sequence", "state_bytes_per_sequence", "bytes_per_sequence",
                "total_bytes", "layer_kinds", "context_tokens", "batch", "schema_version"):
        assert key in data
    assert data["bytes_per_token"] == 327_680
    assert data["kv_bytes_per_sequence"] == 40 * GIB
    assert data["total_bytes"] == 160 * GIB
    assert data["layer_kinds"][0]["layers"] == 80


@pytest.mark.parametrize("dtype, bytes_per_token", [("bf16", 327_680), ("fp16", 327_680), ("fp32", 655_360), ("fp8", 163_840)])
def test_kv_dtype(cli, dtype, bytes_per_token):
    code, out, _ = cli("estimate", "llama-3.1-70b", "--kv-dtype", dtype, "--format", "json")
    assert json.loads(out)["bytes_per_token"] == bytes_per_token


@pytest.mark.parametrize("model, label, bytes_per_token", [
    # StarCoder's float32 checkpoint: 40 layers x 1 KV head (multi-query) x 128 x (K + V) x 2 B = 20,480,
    # sized at 2 B as engines serve it; the title said "fp32 KV cache" over these bf16 bytes
    ("starcoder", "bf16", 40 * 1 * 128 * 2 * 2),
    # Mamba has no K/V: the label names its fixed state, float32 as the config says
    ("mamba-2.8b", "fp32", 0),
])
def test_auto_kv_dtype_of_a_float32_checkpoint_names_the_bytes_sized(cli, model, label, bytes_per_token):
    code, out, err = cli("estimate", model, "--context", "8k", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["kv_dtype"] == label and data["bytes_per_token"] == bytes_per_token, err


def test_int4_counts_scales_and_zero_points(cli):
    code, out, _ = cli("estimate", "llama-3.1-8b", "--kv-dtype", "int4", "--format", "json")
    # per token per layer, K and V each: 8 heads x 128 x 4 bits = 512 B, plus
    # 8 heads x (128/64 groups) x (fp16 scale + fp16 zero) = 64 B
    assert json.loads(out)["bytes_per_token"] == 32 * 2 * (512 + 64)


def test_set_overrides_a_config_field(cli):
    code, out, _ = cli("estimate", "llama-3.1-70b", "--context", "128k", "--set", "num_key_value_heads=64", "--format", "json")
    assert json.loads(out)["kv_bytes_per_sequence"] == 320 * GIB


def test_csv_and_markdown(cli):
    code, out, _ = cli("estimate", "mistral-7b-v0.1", "--context", "32k", "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert len(rows) == 2  # one tidy table: the header and the run's row
    row = dict(zip(rows[0], rows[1]))
    assert row["context_tokens"] == str(32 * 1024) and row["kv_bytes_per_sequence"] == str(4096 * 131_072)
    code, out, _ = cli("estimate", "mistral-7b-v0.1", "--format", "markdown")
    assert out.startswith("### ") and "| sliding window 4096 |" in out


def test_table_shows_gib_and_gb(cli):
    code, out, _ = cli("estimate", "llama-3.1-70b", "--context", "128k")
    assert "40.00 GiB (42.95 GB)" in out


def test_explain_substitutes_the_numbers(cli):
    code, out, _ = cli("estimate", "gemma-3-27b", "--context", "128k", "--explain")
    assert code == 0
    assert "16 KV heads x (128 + 128) x 16/8 B" in out
    assert "min(131,072, 1,024) -> 1,024" in out


def test_python_dash_m_matches_the_command(tmp_path):
    args = ["estimate", "llama-3.1-8b", "--format", "json"]
    a = subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True, text=True, cwd=tmp_path)
    exe = os.path.join(os.path.dirname(sys.executable), "kvplan")
    b = subprocess.run([exe, *args], capture_output=True, text=True, cwd=tmp_path)
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout


def test_local_config_file_and_folder(cli, tmp_path):
    cfg = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 1, "intermediate_size": 512, "vocab_size": 100}
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg))
    for target in (str(folder), str(folder / "config.json")):
        code, out, err = cli("estimate", target, "--format", "json")
        assert code == 0, err
        assert json.loads(out)["bytes_per_token"] == 2 * 2 * 1 * 64 * 2


@pytest.mark.parametrize(
    "text, tokens", [("4096", 4096), ("128k", 131_072), ("128K", 131_072), ("1m", 1_048_576), ("131072", 131_072)]
)
def test_context_sizes(text, tokens):
    assert parse_tokens(text) == tokens


@pytest.mark.parametrize("text, size", [("64GiB", 64 * GIB), ("80GB", 80 * 10**9), ("512MiB", 512 * 1024**2), ("1.5GiB", 3 * GIB // 2)])
def test_byte_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["12x", "0", "-5", "1.5", "", "k"])
def test_bad_context_sizes(text):
    with pytest.raises(UsageError):
        parse_tokens(text)


def _one_line(err: str) -> None:
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["estimate", "llama-3.1-70b", "--context", "12x"], 2, "cannot read '12x' as a token count"),
        (["estimate", "llama-3.1-70b", "--context", "0"], 2, "must be a positive number"),
        (["estimate", "llama-3.1-70b", "--batch", "-1"], 2, "must be a positive integer"),
        (["estimate", "llama-3.1-70b", "--batch", "2.5"], 2, "expected a positive integer"),
        (["estimate", "llama-3.1-70b", "--kv-dtype", "int3"], 2, "--kv-dtype 'int3'"),
        (["estimate", "llama-3.1-70b", "--format", "yaml"], 2, "--format 'yaml'"),
        (["estimate", "lama-3.1-70b"], 1, "did you mean llama-3.1-70b"),
        (["estimate", "/nonexistent/config.json"], 1, "no such file"),
        (["estimate", "llama-3.1-70b", "--set", "nonsense"], 2, "expected key=value"),
        (["estimate", "llama-3.1-70b", "--set", "num_hidden_layers=0"], 1, "'num_hidden_layers' must be >= 1"),
    ],
)
def test_bad_input_is_one_line(cli, args, code, message):
    got, out, err = cli(*args)
    assert got == code, (out, err)
    assert message in err
    _one_line(err)


def test_error_map_works_with_a_typer_older_than_0_26(cli, monkeypatch):
    """typer < 0.26 has no TyperException and raises click's exceptions (the CUDA
    image kvplan bench may run on is not bound by our pins): errors stay one line."""
    import types

    import typer

    class ClickException(Exception):
        exit_code = 2

        def show(self):
            sys.stderr.write(f"Error: {self}\n")

    monkeypatch.delattr(typer, "TyperException")
    monkeypatch.setitem(sys.modules, "click", types.SimpleNamespace(ClickException=ClickException))
    code, _, err = cli("estimate", "lama-3.1-70b")
    assert code == 1 and "did you mean llama-3.1-70b" in err
    _one_line(err)

    from kvplan.cli import common

    def parse_failure(**_):
        raise ClickException("No such option: --bogus")

    assert common.run(parse_failure) == 2


def test_malformed_json_and_missing_field(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"model_type": "llama", ')
    code, _, err = cli("estimate", str(bad))
    assert code == 1 and "malformed JSON at line 1" in err
    _one_line(err)
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4}))
    code, _, err = cli("estimate", str(missing))
    assert code == 1 and "'num_hidden_layers'" in err and "'llama'" in err
    _one_line(err)


def test_debug_variable_shows_the_traceback(tmp_path):
    env = dict(os.environ, KVPLAN_DEBUG="1")
    proc = subprocess.run([sys.executable, "-m", "kvplan", "estimate", "nope-model"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_estimate_imports_neither_torch_triton_nor_pandas(tmp_path):
    code = (
        "import sys, runpy; sys.argv=['kvplan','estimate','llama-3.1-8b','--format','json'];\n"
        "from kvplan.cli.app import app; from kvplan.cli.common import run; run(app);\n"
        "bad=[m for m in ('torch','triton','pandas','huggingface_hub') if m in sys.modules]; print('HEAVY', bad, file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "HEAVY []" in proc.stderr, proc.stderr


@pytest.mark.parametrize("engine, label", [("vllm", "vLLM"), ("sglang", "SGLang")])
def test_capacity_table_says_it_is_kvplans_plan_when_an_engine_is_given(cli, engine, label):
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--engine", engine)
    assert code == 0, err
    assert f"capacity (kvplan's own plan; {label}'s figures below)" in out
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100")
    assert code == 0, err
    assert "\ncapacity" in out and "kvplan's own plan" not in out


@pytest.mark.parametrize("where", [["--gpu", "h200"], ["--kv-memory", "80GiB"]])
def test_blocks_in_the_pool_sit_under_the_pool_they_divide(cli, where):
    # the blocks row was inserted at a fixed index, written before the "memory per GPU" row existed: with a GPU it
    # landed between the weights and the pool. Llama-3.1-70B at TP 4: 80 layers x 2 of the 8 KV heads x (128 + 128)
    # x 2 B = 81,920 B/token per GPU; 80 GiB in blocks of 16 tokens: 80 x 2^30 / (16 x 81,920) = 65,536
    code, out, err = cli("estimate", "llama-3.1-70b", "-c", "128k", "--tp", "4", *where, "-t", "page:16",
                         "--format", "markdown")
    assert code == 0, err
    names = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")]
    assert names[names.index("KV pool per GPU") + 1] == "blocks in the pool"
    assert names[names.index("blocks in the pool") + 1] == "tokens in the pool"
    if "--kv-memory" in where:
        assert "| blocks in the pool | 65,536 |" in out


def test_decode_floor_names_the_sequences_it_counts_under_offload(cli):
    # offload:active=2 keeps 2 of the 8 sequences on the GPU; the floor reads the weights and those 2 caches, as a
    # batch of 2 without offload does, but the row said "batch 8"
    def floor(*args):
        code, out, err = cli("estimate", "llama-3.1-8b", "-c", "8k", "--gpu", "h100", *args, "--format", "markdown")
        assert code == 0, err
        return next(line for line in out.splitlines() if line.startswith("| decode floor"))

    offloaded = floor("--batch", "8", "-t", "offload:cpu=256GiB,active=2")
    assert offloaded.startswith("| decode floor, batch 2 (6 offloaded) |")
    assert offloaded.split("|")[2] == floor("--batch", "2").split("|")[2]
