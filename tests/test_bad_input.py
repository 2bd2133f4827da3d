"""Bad command-line values: each gets its exit code and one line naming the problem,
never a traceback, and no file is created or changed (issue 12, items 2 and 7)."""

from __future__ import annotations

import json
import os

import pytest

from kvplan.errors import UsageError
from kvplan.units import MAX_TOKENS, parse_positive_int, parse_size, parse_tokens

T40 = 2**40  # 1,099,511,627,776


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run in an empty folder holding one file of the user's; check nothing changed after."""
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "config.json"
    mine.write_text(json.dumps({"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 4,
                                "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 1024,
                                "vocab_size": 1000, "max_position_embeddings": 2048}))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    yield tmp_path
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert lines[0].startswith("kvplan: error: "), err
    return lines[0]


CASES = [
    # contexts, batches, sizes: finite, bounded, read exactly
    (["estimate", "llama-3.1-8b", "--context", str(T40 + 1)], 2, ["--context", "above the limit of 2^40"]),
    (["estimate", "llama-3.1-8b", "--context", "9" * 400], 2, ["--context", "too large", "400 characters"]),
    (["estimate", "llama-3.1-8b", "--context", "1.5"], 2, ["--context", "not a whole number"]),
    (["estimate", "llama-3.1-8b", "--context", "inf"], 2, ["--context", "cannot read 'inf'"]),
    (["estimate", "llama-3.1-8b", "--context", "nan"], 2, ["--context", "cannot read 'nan'"]),
    (["estimate", "llama-3.1-8b", "--batch", str(T40 + 1)], 2, ["--batch", "above the limit"]),
    (["estimate", "llama-3.1-8b", "--batch", "1e3"], 2, ["--batch", "expected a positive integer"]),
    (["estimate", "llama-3.1-8b", "--max-model-len", "0"], 2, ["--max-model-len", "positive"]),
    # --max-model-len is vLLM's / SGLang's: without an engine it would be dropped without a word
    (["estimate", "llama-3.1-8b", "--max-model-len", "1k"], 2, ["--max-model-len is an engine setting", "--engine"]),
    # an option given as an empty string is not the option left out (it was ignored, or read as '.')
    (["estimate", "llama-3.1-8b", "--weights", ""], 2, ["--weights is an empty string"]),
    (["sweep", "llama-3.1-8b", "--out", ""], 2, ["--out is an empty string"]),
    (["fit", "llama-3.1-8b", "--context", "8k", "-n", "4", "--gpu", "h100", "--plot", ""], 2,
     ["--plot is an empty string"]),
    # the same GPU priced twice: the last one silently won
    (["fit", "llama-3.1-8b", "--context", "8k", "-n", "4", "--gpu", "h100", "--price", "h100=2", "--price", "h100=3"],
     2, ["--price 'h100=3'", "h100-sxm is priced twice"]),
    (["compare", "llama-3.1-8b", "qwen3-8b", "--context", "2000000000000"], 2, ["--context", "2^40"]),
    (["sweep", "llama-3.1-8b", "--context", f"1k..{T40 * 2}"], 2, ["--context (high end)", "2^40"]),
    # sizes need a unit where the docs say so
    (["estimate", "llama-3.1-8b", "--gpu-memory", "80"], 2, ["--gpu-memory", "'80' has no unit", "80GiB"]),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--reserve", "2"], 2, ["--reserve", "has no unit"]),
    (["estimate", "llama-3.1-8b", "--kv-memory", "40"], 2, ["--kv-memory", "has no unit"]),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--weights", "16"], 2, ["--weights", "has no unit"]),
    (["estimate", "llama-3.1-8b", "--gpu-memory", "2000PiB"], 2, ["--gpu-memory", "cannot read"]),
    (["estimate", "llama-3.1-8b", "-t", "offload:cpu=64"], 2, ["offload:cpu=64", "cpu must be a size"]),
    # --tp as engines require it
    (["estimate", "llama-3.1-8b", "--tp", "3"], 2, ["--tp 3 does not divide the 32 attention heads", "--tp 2"]),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--tp", "5"], 2, ["--tp 5"]),
    (["compare", "llama-3.1-8b", "qwen3-8b", "--tp", "3"], 2, ["--tp 3"]),
    (["sweep", "llama-3.1-8b", "--tp", "6"], 2, ["--tp 6"]),
    (["estimate", "qwen3-8b", "--tp", "16", "-t", "gqa:2"], 2, []),  # 32 heads ok, KV 8 -> 2: 16 % 2 == 0 passes
    # number options: negative, zero or NaN are usage errors
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--hbm-gbps", "-3350"], 2, ["--hbm-gbps", "> 0"]),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--hbm-gbps", "nan"], 2, ["--hbm-gbps", "finite"]),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--hbm-gbps", "inf"], 2, ["--hbm-gbps", "finite"]),
    (["estimate", "llama-3.1-8b", "--max-kv-gib", "-1"], 2, ["--max-kv-gib", "> 0"]),
    (["estimate", "llama-3.1-8b", "--max-kv-gib", "nan"], 2, ["--max-kv-gib", "finite"]),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--min-concurrency", "-4"], 2, ["--min-concurrency", ">= 1"]),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--mem-util", "nan"], 2, ["--mem-util"]),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--mem-util", "1.5"], 2, ["--mem-util"]),
    # a technique, or one of its options, given twice
    (["estimate", "llama-3.1-8b", "-t", "fp8", "-t", "fp8"], 2, ["technique 'fp8' is given twice"]),
    (["estimate", "llama-3.1-8b", "-t", "fp8_e4m3", "-t", "fp8"], 2, ["'fp8' is given twice"]),
    (["estimate", "llama-3.1-8b", "-t", "window:1024", "-t", "window:2048"], 2, ["'window' is given twice"]),
    (["estimate", "llama-3.1-8b", "-t", "int4:group=32,group=64"], 2, ["option 'group' is given twice"]),
    (["estimate", "llama-3.1-8b", "-t", "cla:2,factor=4"], 2, ["factor is given twice"]),
    (["compare", "llama-3.1-8b", "qwen3-8b", "-t", "mqa", "-t", "mqa"], 2, ["'mqa' is given twice"]),
    (["sweep", "llama-3.1-8b", "-t", "fp8+page:16+fp8"], 2, ["'fp8' is given twice"]),
    # --set: only keys the config has; --set-new only keys it lacks; each key once
    (["estimate", "llama-3.1-8b", "--set", "num_kv_heads=4"], 2, ["--set num_kv_heads", "no field", "--set-new"]),
    (["estimate", "llama-3.1-8b", "--set", "num_key_value_head=4"], 2, ["did you mean num_key_value_heads"]),
    (["estimate", "llama-3.1-8b", "--set-new", "num_key_value_heads=4"], 2, ["already has", "use --set"]),
    (["estimate", "llama-3.1-8b", "--set", "num_key_value_heads=4", "--set", "num_key_value_heads=2"], 2,
     ["given twice"]),
    (["estimate", "config.json", "--set", "=4"], 2, ["empty key"]),
    # an empty --gpu: sweep and compare ended in an internal error (AttributeError), estimate planned without
    # a GPU; every option given as '' is refused by name now (tests/test_bad_input_audit.py)
    (["sweep", "llama-3.1-8b", "--gpu", ""], 2, ["--gpu is an empty string"]),
    (["compare", "llama-3.1-8b", "qwen3-8b", "--gpu", ""], 2, ["--gpu is an empty string"]),
    (["estimate", "llama-3.1-8b", "--gpu", ""], 2, ["--gpu is an empty string"]),
    # --revision with a bundled name said "unknown model 'llama-3.1-8b' (did you mean llama-3.1-8b, ...?)"
    (["estimate", "llama-3.1-8b", "--revision", "main"], 2,
     ["--revision main", "'llama-3.1-8b' is a bundled model", "give the Hub id meta-llama/Llama-3.1-8B"]),
    (["weights", "qwen3-8b", "--revision", "v1"], 2, ["--revision v1", "bundled model", "Qwen/Qwen3-8B"]),
    # an empty name or path: Path('') is '.', so these said ".: folder has no config.json", ": is a folder,
    # not a scenario file", ": no such file"; gate --update-baseline tried to write '' (a folder)
    (["estimate", ""], 2, ["the model is an empty string", "kvplan models"]),
    (["compare", "llama-3.1-8b", ""], 2, ["the model is an empty string"]),
    (["plan", ""], 2, ["the scenario is an empty string", "chat-shared-prompt"]),
    (["calibrate", ""], 2, ["the path is an empty string, not a log file"]),
    (["gate", "", "--baseline", "config.json"], 2, ["the bench JSON of this run is an empty string"]),
    (["gate", "config.json", "--baseline", "", "--update-baseline"], 2, ["--baseline is an empty string"]),
]


@pytest.mark.parametrize("args, code, words", CASES, ids=[" ".join(c[0][1:])[:60] for c in CASES])
def test_bad_value_is_one_line(cli, in_tmp, args, code, words):
    got, out, err = cli(*args)
    if not words:  # a case that must be accepted
        assert got == 0, err
        return
    line = one_line(err)
    assert got == code, err
    assert out == ""
    for word in words:
        assert word in line, line


# --- the parsers, against values worked out by hand -----------------------------------------

def test_token_bound_is_exactly_two_to_the_forty():
    assert MAX_TOKENS == 1_099_511_627_776
    assert parse_tokens("1099511627776") == 2**40
    assert parse_tokens("1073741824k") == 2**40  # 2^30 x 2^10
    assert parse_tokens("1048576m") == 2**40  # 2^20 x 2^20
    with pytest.raises(UsageError):
        parse_tokens("1048577m")
    assert parse_tokens("0.5k") == 512  # exact, no float step
    with pytest.raises(UsageError, match="whole number"):
        parse_tokens("0.0001k")  # 0.1024 tokens


def test_sizes_are_exact_and_need_units():
    assert parse_size("80GB") == 80_000_000_000
    assert parse_size("0.1GiB") == round(0.1 * 2**30) == 107_374_182  # 107,374,182.4 rounds down
    assert parse_size("4096B") == 4096
    assert parse_size("1024PiB".replace("PiB", "TiB")) == 2**50
    for bad in ("80", 80, "1.5", True, "12 bananas"):
        with pytest.raises(UsageError):
            parse_size(bad)
    with pytest.raises(UsageError, match="2\\^60"):
        parse_size("1048577TiB")  # 2^20 + 1 TiB: just above 2^60


def test_counts_are_bounded():
    assert parse_positive_int("+7", "--batch") == 7
    for bad in ("0", "-1", "1e3", "1.0", "", "x", str(2**40 + 1), "9" * 30):
        with pytest.raises(UsageError):
            parse_positive_int(bad, "--batch")


# --- overrides are recorded; contexts above the model's maximum warn everywhere -------------

def test_overrides_are_recorded_in_json_and_title(cli):
    code, out, err = cli("estimate", "llama-3.1-8b", "--set", "num_key_value_heads=4", "--set-new", "my_note=\"x\"",
                         "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["overrides"] == [
        {"key": "num_key_value_heads", "value": 4, "section": None, "new": False},
        {"key": "my_note", "value": "x", "section": None, "new": True},
    ]
    # 4 KV heads x 128 x 2 (K, V) x 2 B x 32 layers = 65,536 B per token (8 heads: 131,072)
    assert data["bytes_per_token"] == 4 * 128 * 2 * 2 * 32
    code, out, err = cli("estimate", "llama-3.1-8b", "--set", "num_key_value_heads=4", "--format", "markdown")
    assert "(config overridden: num_key_value_heads=4)" in out.splitlines()[0]
    code, out, err = cli("estimate", "llama-3.1-8b", "--format", "json")
    assert json.loads(out)["overrides"] == []


def test_overrides_under_text_config_are_recorded_there(cli, tmp_path):
    config = {"model_type": "gemma3", "text_config": {
        "model_type": "gemma3_text", "hidden_size": 1152, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912, "vocab_size": 1000,
        "sliding_window": 512, "layer_types": ["sliding_attention", "full_attention"]}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = cli("estimate", str(path), "--set", "num_key_value_heads=2", "--format", "json")
    assert code == 0, err
    # 2 layers x 2 KV heads x 256 x 2 (K, V) x 2 B = 4,096 B per token (1 KV head: 2,048)
    assert json.loads(out)["bytes_per_token"] == 2 * 2 * 256 * 2 * 2
    assert json.loads(out)["overrides"] == [{"key": "num_key_value_heads", "value": 2, "section": "text_config",
                                             "new": False}]


@pytest.mark.parametrize("args", [
    ["estimate", "llama-3.1-8b", "--context", "256k"],
    ["compare", "llama-3.1-8b", "qwen3-8b", "--context", "256k"],
    ["sweep", "llama-3.1-8b", "--context", "1k..256k", "--points", "3"],
])
def test_context_above_the_model_maximum_warns_everywhere(cli, args):
    code, out, err = cli(*args)
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("kvplan: warning:")]
    assert warnings and "262,144 tokens is above the maximum context of meta-llama/Llama-3.1-8B, 131,072" in warnings[0]
    code, _, err = cli(*args)  # every time, not once per process
    assert "kvplan: warning:" in err


def test_sweep_refuses_figures_beyond_int64(cli):
    code, out, err = cli("sweep", "llama-3.1-8b", "--context", f"1k..{T40}", "--batch", str(2**30), "--points", "3")
    line = one_line(err.replace(next(l for l in err.splitlines() if "warning" in l) + "\n", ""))
    assert code == 2 and "64-bit" in line


def test_tp_that_engines_accept_still_plans(cli):
    # llama-3.1-8b: 32 attention heads, 8 KV heads; tp 16 replicates each KV head on 2 ranks
    code, out, err = cli("estimate", "llama-3.1-8b", "--tp", "16", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["kv_bytes_per_gpu"] == 4096 * 32 * 1 * 128 * 2 * 2  # 1 KV head per rank
    assert os.environ.get("KVPLAN_DEBUG", "") in ("", "0")


@pytest.mark.parametrize("technique, words", [
    ("window:4096,pattern=0:1", "pattern must be LOCAL:GLOBAL"),
    ("hybrid:pattern=0:1", "pattern must be RECURRENT:ATTENTION"),
    ("offload:cpu=64GiB,mfu=1.5", "mfu a fraction in (0, 1]"),
])
def test_technique_checks_survive_python_O(technique, words):
    # the checks were asserts once: `python -O` strips those and let 0:1 patterns and mfu 1.5 through
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-O", "-m", "kvplan", "estimate", "llama-3.1-8b", "-t", technique],
                       capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=60)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, custom", [
    # the hint named --gpu-memory and --hbm-gbps on commands that have neither
    (["sweep", "llama-3.1-8b", "--gpu", "h1000"], False),
    (["compare", "llama-3.1-8b", "qwen3-8b", "--gpu", "h1000"], False),
    (["fit", "llama-3.1-8b", "--price", "h1000=2"], False),
    (["calibrate", "tests/data/vllm_logs/v0191_qwen3_8b_a100_40gb_tokenkaki.log", "--gpu", "h1000"], False),
    (["estimate", "llama-3.1-8b", "--gpu", "h1000"], True),
])
def test_unknown_gpu_hint_names_only_options_the_command_has(cli, args, custom):
    code, out, err = cli(*args)
    line = one_line(err)
    # the closest names: h800 (in the catalog since Dec 2026), then h200
    assert code == 2 and "unknown GPU 'h1000'" in line and "did you mean h800 or h200?" in line, line
    assert ("--gpu-memory and --hbm-gbps" in line) == custom, line


def test_context_above_max_model_len_is_said(cli):
    # the engine refuses requests above max_model_len: its figures are for 1,024 tokens, the planner's for 4,096
    rc, out, err = cli("estimate", "llama-3.1-8b", "--max-model-len", "1k", "--context", "4k", "--kv-memory", "10GiB",
                       "--engine", "vllm")
    assert rc == 0, err
    assert "--context 4,096 is above --max-model-len 1,024: the engine refuses longer requests" in out


@pytest.mark.parametrize("args", [
    ["estimate", "v4.json", "--gpu", "h200", "--tp", "8"],
    ["estimate", "v4.json", "--gpu", "h200", "--tp", "8", "--engine", "vllm"],
    ["fit", "v4.json", "--context", "8k", "-n", "4", "--gpu", "h200"],
])
def test_a_gpu_plan_refuses_weights_nobody_counted(cli, tmp_path, monkeypatch, args):
    """DeepSeek-V4's parameter count needs q_lora_rank; its cache does not. Without it the weights were 0 B and
    the pool the whole GPU."""
    from importlib import resources

    config = json.loads((resources.files("kvplan.model_specs") / "deepseek-v4-flash.json").read_text())
    del config["q_lora_rank"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v4.json").write_text(json.dumps(config))
    got, out, err = cli(*args)
    line = one_line(err)
    assert got == 2 and "weights of v4 are not known from its config" in line and "q_lora_rank" in line
    assert "--weights" in line
    # the cache alone still plans, and a pool given as bytes needs no weights
    assert cli("estimate", "v4.json", "--context", "8k")[0] == 0
    assert cli("estimate", "v4.json", "--context", "8k", "--kv-memory", "10GiB", "--engine", "vllm")[0] == 0
