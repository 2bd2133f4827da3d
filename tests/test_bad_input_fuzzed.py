"""Bad input found by fuzzing every subcommand (Dec 2026): each case gets one clear line and a non-zero exit, or
the right answer, never a traceback, a hang or a lost file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Qwen3-0.6B's shape (hidden 1,024, 28 layers of 8 KV heads x 128, vocab 151,936, 40,960 positions)
QWEN3_06B = json.loads((ROOT / "tests" / "data" / "configs" / "qwen3-0.6b-shape.json").read_text())


def _write(tmp_path, name, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


@pytest.mark.parametrize("text", [
    "&a [*a]\n",
    "name: x\nmodel: llama-3.1-8b\ndeployment: &d {gpu: h100, self: *d}\n",
    "name: x\nmodel: llama-3.1-8b\ntechniques: &t [fp8, *t]\n",
])
def test_a_recursive_yaml_alias_is_refused_not_expanded_forever(tmp_path, cli, text):
    code, _, err = cli("plan", _write(tmp_path, "rec.yaml", text))
    assert code == 2 and "alias refers to the node it sits in" in _one_line(err)


@pytest.mark.parametrize("quant", [
    {"quant_method": "compressed-tensors", "config_groups": "x"},
    {"quant_method": "modelopt", "quantization": "x"},
])
def test_a_quantization_config_of_the_wrong_shape_is_one_line(tmp_path, cli, quant):
    path = _write(tmp_path, "q.json", dict(QWEN3_06B, quantization_config=quant))
    code, _, err = cli("weights", path)
    assert code == 2 and "not known from its config" in _one_line(err)


def test_an_absurd_rope_factor_is_refused_by_sglang_and_not_modelled_by_vllm(tmp_path, cli):
    path = _write(tmp_path, "rope.json", dict(QWEN3_06B, rope_scaling={"rope_type": "linear", "factor": 1e308}))
    code, _, err = cli("estimate", path, "--gpu", "h100", "--engine", "sglang")
    assert code == 1 and "is not a context length" in _one_line(err)
    # vLLM's rotary table is left out (a note), the rest of the plan stands
    code, out, err = cli("estimate", path, "--gpu", "h100", "--engine", "vllm", "--format", "json")
    assert code == 0, err
    assert any("rotary cos/sin tables (counted in its load) are not modelled" in n
               for n in json.loads(out)["engine"]["notes"])


def test_gate_refuses_a_message_that_is_not_text(tmp_path, cli):
    doc = json.loads((ROOT / "benchmarks" / "baseline-cpu.json").read_text())
    doc["results"][0]["message"] = -1
    code, _, err = cli("gate", _write(tmp_path, "run.json", doc), "--baseline",
                       str(ROOT / "benchmarks" / "baseline-cpu.json"))
    assert code == 2 and ".message must be text" in _one_line(err)  # 2: unusable input, not a regression


@pytest.mark.parametrize("endpoint", ["huggingface.co", "http://127.0.0.1:99999", "http://[::1", "http://a b", "//x"])
def test_a_malformed_hf_endpoint_is_one_line(cli, monkeypatch, endpoint):
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    code, _, err = cli("estimate", "some-org/some-model")
    assert code == 2 and "HF_ENDPOINT" in _one_line(err)


def test_a_set_value_past_pythons_digit_limit_is_one_line(cli):
    code, _, err = cli("estimate", "llama-3.1-8b", "--set", "num_hidden_layers=" + "9" * 5000)
    assert code == 2 and "not a number kvplan can read" in _one_line(err)


def _kvplan(*args, **kw):
    return subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True, text=True, **kw)


def test_closed_stdout_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "kvplan", "models"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 1 and "standard output is closed" in _one_line(proc.stderr)


def test_a_reader_that_goes_away_is_not_an_error():
    proc = subprocess.Popen([sys.executable, "-m", "kvplan", "sweep", "llama-3.1-8b", "-n", "100000", "-f", "csv"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(200)
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and err == ""


def test_an_output_that_is_the_input_is_never_overwritten(tmp_path, cli):
    path = _write(tmp_path, "config.json", QWEN3_06B)
    before = Path(path).read_bytes()
    code, _, err = cli("sweep", path, "--out", path, "--force")
    assert code == 2 and "is an input of this run" in _one_line(err)
    assert Path(path).read_bytes() == before
    # a file inside a model folder given as the model is an input too
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_bytes(before)
    code, _, err = cli("sweep", str(folder), "--out", str(folder / "config.json"), "--force")
    assert code == 2 and (folder / "config.json").read_bytes() == before


def test_a_cpu_bench_too_large_for_the_interpreter_is_refused_up_front(cli):
    code, _, err = cli("bench", "llama-3.1-8b", "-t", "fp8", "--device", "cpu", "-c", "1m", "-b", "1")
    assert code == 2 and "Triton's interpreter" in _one_line(err)


def test_kivi_takes_its_bits_positionally(cli):
    def per_token(spec):
        code, out, err = cli("estimate", "llama-3.1-8b", "-c", "32k", "-t", spec, "--format", "json")
        assert code == 0, err
        return json.loads(out)["bytes_per_token"]

    assert per_token("kivi:4") == per_token("kivi:bits=4") != per_token("kivi")
    code, _, err = cli("estimate", "llama-3.1-8b", "-t", "kivi:junk")
    assert code == 2 and "bits must be" in _one_line(err)


def test_a_junk_torch_dtype_is_noted_and_sized_as_bf16(tmp_path, cli):
    code, out, err = cli("estimate", _write(tmp_path, "d.json", dict(QWEN3_06B, torch_dtype="junk")), "--format", "json")
    assert code == 0, err
    model = json.loads(out)["model"]
    assert model["weight_dtype"] == "bfloat16"
    assert any("torch_dtype 'junk' is not a dtype" in n for n in model["notes"])


@pytest.mark.parametrize("args", [("--gpu", ""), ("--gpu", "h100,,h200"), ("--gpu", "h100,h100"), ("--kv-dtype", ""),
                                  ("--allow", "fp8,,kivi"), ("--allow", "fp8,fp8")])
def test_fit_lists_with_empty_or_repeated_items_are_refused(cli, args):
    code, _, err = cli("fit", "llama-3.1-8b", "-c", "8k", "-n", "4", *args)
    assert code == 2 and _one_line(err)


def test_fit_options_may_repeat_inside_different_techniques(cli):
    code, _, err = cli("fit", "llama-3.1-8b", "-c", "8k", "-n", "4", "--gpu", "h100",
                       "--allow", "evict:0.5,recent=64,evict:0.25,recent=64")
    assert code == 0, err


def test_calibrating_an_sglang_log_checks_the_tp_degree(cli):
    code, _, err = cli("calibrate", str(ROOT / "tests" / "data" / "sglang_logs" / "v041_llama31_8b_h100_docs.log"),
                       "--tp", "3")
    assert code == 2 and "does not divide the 32 attention heads" in err and "Traceback" not in err


@pytest.mark.parametrize("version", ["0.0", "0.5", "0.10.2"])
def test_a_plan_for_a_release_before_0_11_is_refused(cli, version):
    code, _, err = cli("estimate", "llama-3.1-8b", "--kv-memory", "10GiB", "--engine", f"vllm@{version}")
    assert code == 2 and "older than the oldest release kvplan models" in _one_line(err)


def test_set_overrides_reach_the_engine_models(tmp_path, cli):
    path = _write(tmp_path, "c.json", QWEN3_06B)
    # SGLang's context limit follows the overridden max_position_embeddings (40,960 -> 163,840)
    code, _, err = cli("estimate", path, "--gpu", "h100", "--engine", "sglang", "-c", "100000",
                       "--set", "max_position_embeddings=163840")
    assert code == 0, err
    # vLLM's rotary table follows an added linear rope scaling: 40,960 x 4 rows x 128 x 2 B = 40 MiB, as the same
    # edit made in the file gives
    scaled = _write(tmp_path, "scaled.json", dict(QWEN3_06B, rope_scaling={"rope_type": "linear", "factor": 4}))
    code, from_file, _ = cli("estimate", scaled, "--gpu", "h100", "--engine", "vllm", "--format", "json")
    code2, from_set, err = cli("estimate", path, "--gpu", "h100", "--engine", "vllm", "--format", "json",
                               "--set-new", 'rope_scaling={"rope_type": "linear", "factor": 4}')
    assert code == code2 == 0, err
    assert json.loads(from_set)["engine"]["kv_memory_bytes"] == json.loads(from_file)["engine"]["kv_memory_bytes"]


def test_kvplan_debug_false_means_off():
    env = {**os.environ, "KVPLAN_DEBUG": "false"}
    proc = _kvplan("estimate", "llama-3.1-8b", "-c", "abc", env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_budgets_list_names_the_keys_it_takes(tmp_path, cli):
    text = ("name: x\nmodel: llama-3.1-8b\nworkload: {prompt_tokens: 1024, output_tokens: 128, concurrency: 1}\n"
            "deployment: {gpu: h100}\nbudgets: [1, 2]\n")
    code, _, err = cli("plan", _write(tmp_path, "b.yaml", text))
    assert code == 2 and "any of max_kv_gib_per_gpu, min_concurrency, max_tpot_ms" in _one_line(err)


def test_control_characters_from_a_file_do_not_reach_the_terminal(tmp_path, cli):
    text = ('name: "x\\e[31mRED\\e[0m"\nmodel: llama-3.1-8b\nworkload: {prompt_tokens: 1024, output_tokens: 128, '
            'concurrency: 1}\ndeployment: {gpu: h100}\n')
    code, out, err = cli("plan", _write(tmp_path, "n.yaml", text))
    assert code == 0, err
    assert "\x1b" not in out and "x\\x1b[31mRED" in out


def test_a_number_yaml_reads_as_text_says_why(tmp_path, cli):
    text = ("name: x\nmodel: llama-3.1-8b\nworkload: {prompt_tokens: 1024, output_tokens: 128, concurrency: 1}\n"
            "deployment: {gpu: h100}\nbudgets: {max_tpot_ms: 1e-3}\n")
    code, _, err = cli("plan", _write(tmp_path, "t.yaml", text))
    assert code == 2 and "YAML reads 1e-3 as text" in _one_line(err)


def test_a_junk_sglang_ssm_dtype_is_ignored_with_a_warning_as_sglang_does(cli, monkeypatch):
    # SGLang's mamba2_state_dtype (0.5.9, 0.5.23) warns about a value outside its map and keeps the config's dtype
    args = ("estimate", "qwen3-next-80b-a3b", "--engine", "sglang", "--gpu", "h200", "--tp", "2", "--format", "json")
    code, plain, err = cli(*args)
    assert code == 0, err
    monkeypatch.setenv("SGLANG_MAMBA_SSM_DTYPE", "junk")
    code, junk, err = cli(*args)
    assert code == 0 and "SGLANG_MAMBA_SSM_DTYPE='junk' is not one of" in err

    def pool(doc):
        engine = json.loads(doc)["engine"]
        return engine["max_total_num_tokens"], engine["max_running_requests"]

    assert pool(junk) == pool(plain)
    monkeypatch.setenv("SGLANG_MAMBA_SSM_DTYPE", "bfloat16")  # a valid value does change the pool
    assert pool(cli(*args)[1]) != pool(plain)


@pytest.mark.parametrize("deployment, key, words", [
    ("{gpu: h100, pp: 9999}", "deployment.pp", "pp 9,999 exceeds the model's 32 layers"),
    ("{gpu: h100, tp: 3}", "deployment.tp", "tp 3 does not divide the 32 attention heads"),
])
def test_scenario_errors_name_the_scenario_key_and_line(tmp_path, cli, deployment, key, words):
    text = ("name: x\nmodel: llama-3.1-8b\nworkload: {prompt_tokens: 1024, output_tokens: 128, concurrency: 1}\n"
            f"deployment: {deployment}\n")
    code, _, err = cli("plan", _write(tmp_path, "d.yaml", text))
    line = _one_line(err)
    assert code == 2 and f"d.yaml:4: {key}: {words}" in line and "--tp" not in line and "--pp" not in line
