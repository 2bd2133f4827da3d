"""Bad input found by a second fuzzing pass over every subcommand (Dec 2026, branch fuzz18): paths no file can
have, JSON strings that are not text, scenario values pasted whole into messages, logs given whole. Each was a
traceback-free but wrong answer (an internal error, a 500 KB error line, half a minute of searching); each now
gets one clear line or the right answer fast."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "model_specs"
LOGS = ROOT / "tests" / "data" / "vllm_logs"
LOG = LOGS / "v0191_qwen3_8b_a100_40gb_tokenkaki.log"

LONG = "m" * 300  # one path component above NAME_MAX (255 bytes on ext4, xfs, btrfs, tmpfs)


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


def _scenario(tmp_path, **overrides) -> str:
    body = {"name": "x", "model": "llama-3.1-8b", "deployment": {"gpu": "h100"},
            "workload": {"prompt_tokens": 100, "output_tokens": 10, "concurrency": 1}}
    body.update(overrides)
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps(body), encoding="utf-8")  # JSON is YAML
    return str(path)


@pytest.mark.parametrize("args, flag", [
    # each was "internal error: OSError: [Errno 36] File name too long": pathlib's is_dir / exists raise
    # ENAMETOOLONG where they answer False for a missing file
    (["estimate", LONG], "the model"),
    (["estimate", LONG + ".json"], "the model"),
    (["weights", f"{LONG}/config.json"], "the model"),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--weights", LONG], "--weights"),
    (["plan", LONG + ".yaml"], "the scenario"),
    # these passed the up-front output check (os.path answers False), then the run failed at the write
    (["sweep", "llama-3.1-8b", "--out", LONG + ".csv"], "--out"),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--plot", LONG + ".png"], "--plot"),
])
def test_a_path_too_long_for_the_file_system_is_one_line(cli, tmp_path, monkeypatch, args, flag):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(*args)
    line = one_line(err)
    assert code == 2 and line.startswith(f"kvplan: error: {flag} mmm") and "too long for the file system" in line
    assert len(line) < 400  # the name is clipped, not repeated whole
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_scenario_model_path_holding_a_nul_is_one_line(cli, tmp_path):
    # YAML can write "\0" in a string; os.stat raises ValueError on it (an internal error before)
    code, _, err = cli("plan", _scenario(tmp_path, model="models/a\x00b.json"))
    assert code == 2 and "cannot hold a NUL character" in one_line(err)


def test_a_json_string_that_is_not_text_is_one_line(cli, tmp_path):
    # "\ud800" is valid JSON but half a UTF-16 pair: json.loads keeps it, and --format csv (UTF-8 stdout) failed
    # with an internal UnicodeEncodeError; it is refused where the config is read, naming the key
    raw = json.loads((SPECS / "llama-3.1-8b.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(raw, rope_scaling=dict(raw["rope_scaling"], note=["ok", "\ud800"]))))
    code, _, err = cli("estimate", str(path), "--format", "csv")
    line = one_line(err)
    assert code == 1 and "rope_scaling.note[1] holds a lone UTF-16 surrogate" in line
    # a whole pair (an emoji) is text and reads; Llama 3.1 8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B
    # = 131,072 B per token
    path.write_text(json.dumps(dict(raw, note="\U0001F600")))
    code, out, err = cli("estimate", str(path), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["bytes_per_token"] == 131_072


@pytest.mark.parametrize("overrides, words", [
    # each error line repeated the whole value: 500 KB on one line
    ({"deployment": {"gpu": "h" * 500_000}}, "deployment.gpu: 'hhh"),
    ({"workload": "w" * 500_000}, "workload: expected a mapping"),
    ({"techniques": ["x" * 100_000]}, "techniques[0]: 'xxx"),
    ({"model": "m" * 100_000}, "model: 'mmm"),
])
def test_a_scenario_value_is_clipped_in_its_error(cli, tmp_path, overrides, words):
    code, _, err = cli("plan", _scenario(tmp_path, **overrides))
    line = one_line(err)
    assert code == 2 and words in line and "characters)" in line and len(line) < 400, line[:500]


def test_a_long_scenario_text_is_refused(cli, tmp_path):
    # a 100,000-character name planned and printed whole; 4,096 characters is the most a scenario's text takes
    code, _, err = cli("plan", _scenario(tmp_path, name="n" * 100_000))
    assert code == 2 and "longer than the 4,096 characters" in one_line(err)


def test_sglang_without_a_release_after_the_at_is_refused(cli):
    # 'sglang@' planned as the newest release without a word, where 'vllm@' was refused
    for flag in ("--engine", "--emit"):
        code, _, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", flag, "sglang@")
        assert code == 2 and f"{flag} 'sglang@': give a release after @" in one_line(err)


def test_a_log_is_read_up_to_the_servers_ready_line():
    from kvplan.engines.vllm_log import startup_text

    start = "INFO Available KV cache memory: 19.36 GiB\nINFO:     Application startup complete.\n"
    served = "INFO Engine 000: Avg prompt throughput: 1.0 tokens/s\n" * 1000
    assert startup_text(start + served) == start
    # SGLang's own ready line too; the last ready line of a log with two start-ups
    sglang = "KV Cache is allocated. #tokens: 1000\nThe server is fired up and ready to roll!\n"
    assert startup_text(sglang + served) == sglang
    assert startup_text(start + start + served) == start + start
    # a line longer than any server prints (64 KiB) is dropped, the lines around it kept
    junk = "y" * (64 * 1024 + 1)
    assert startup_text(junk + "\n" + start + served) == start


def test_a_log_given_whole_is_calibrated_fast(cli, tmp_path):
    # the start-up log, uvicorn's ready line, then 8 MiB of request lines and a 4 MiB line of junk: the 60-odd
    # searches ran through all of it (a 64 MiB log took half a minute); now only the start-up part is searched
    served = b"INFO 12-06 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 1234.5 tokens/s\n"
    path = tmp_path / "server.log"
    path.write_bytes(LOG.read_bytes() + b"INFO:     Application startup complete.\n"
                     + served * (8 * 1024**2 // len(served)) + b"z" * (4 * 1024**2))
    begin = time.monotonic()
    code, out, err = cli("calibrate", str(path), "--model", "qwen3-8b", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["log"]["available_kv_gib"] == 19.36  # the log's "Available KV cache memory: 19.36 GiB"
    assert time.monotonic() - begin < 10


def test_links_and_odd_files_say_what_they_are(cli, tmp_path, monkeypatch):
    # each named the wrong thing: a symlink loop as --weights was "no such file or folder", a dangling --out link
    # "the folder . does not exist", a model folder whose config.json is a folder or a pipe "has no config.json"
    import os

    monkeypatch.chdir(tmp_path)
    os.symlink("b.json", "a.json")
    os.symlink("a.json", "b.json")
    code, _, err = cli("weights", "llama-3.1-8b", "--weights", "a.json")
    assert code == 1 and "a symlink that leads to no file" in one_line(err)
    os.symlink(str(tmp_path / "gone" / "x.csv"), "out.csv")
    code, _, err = cli("sweep", "llama-3.1-8b", "-n", "2", "--out", "out.csv")
    assert code == 2 and "out.csv: a symlink to" in one_line(err) and "in a folder that does not exist" in err
    (tmp_path / "model" / "config.json").mkdir(parents=True)
    code, _, err = cli("estimate", "model")
    assert code == 1 and "model/config.json: is a folder, not a JSON file" in one_line(err)
    os.mkfifo(tmp_path / "piped.json")
    (tmp_path / "model2").mkdir()
    os.symlink(str(tmp_path / "piped.json"), tmp_path / "model2" / "config.json")
    code, _, err = cli("estimate", "model2")
    assert code == 1 and "not a regular file" in one_line(err)
