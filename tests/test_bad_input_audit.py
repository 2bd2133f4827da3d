"""Bad input and user-owned files, from a fresh audit of every command (Dec 2026, branch badinput): option
values given as empty strings, links that lead nowhere, files kvplan writes, scenario sizes and bench documents
with figures no run writes. Each case was a silent wrong answer, a misleading line or a file left half-written
before; each is one clear line now (exit 2 for usage), or the user's file untouched."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "model_specs"


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    assert lines[0].startswith("kvplan: error: "), err
    return lines[0]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".kvplan-"))


# -- files kvplan writes: the whole new file or the user's old one, never half of either --------------------

@pytest.mark.parametrize("failure", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_sweep_out_cut_off_halfway_keeps_the_users_file(cli, tmp_path, monkeypatch, failure):
    # `open(path, "w")` emptied the file the user asked to replace (--force) before the first row was written:
    # a full disk or Ctrl-C halfway left 'model,series' and nothing else where their table had been
    from kvplan.workload import sweep

    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "table.csv"
    mine.write_text("the user's table\n")

    def cut_off(result, stream):
        stream.write("model,series\n")
        raise failure

    monkeypatch.setattr(sweep, "write_csv", cut_off)
    code, _, err = cli("sweep", "llama-3.1-8b", "-n", "2", "--out", "table.csv", "--force")
    assert code != 0 and "Traceback" not in err
    assert mine.read_text() == "the user's table\n"
    assert _leftovers(tmp_path) == []
    # no --force, no file before: no cut-off table left behind either
    code, _, err = cli("sweep", "llama-3.1-8b", "-n", "2", "--out", "new.csv")
    assert code != 0 and not (tmp_path / "new.csv").exists() and _leftovers(tmp_path) == []


@pytest.mark.parametrize("args", [
    ["sweep", "llama-3.1-8b", "-n", "2", "--plot", "chart.png", "--force"],
    ["fit", "llama-3.1-8b", "--gpu", "h100", "--max-gpus", "1", "--plot", "chart.png", "--force"],
])
def test_a_plot_that_fails_to_save_keeps_the_users_file(cli, tmp_path, monkeypatch, args):
    # matplotlib's savefig wrote straight into the target: a failure halfway left a broken image there
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "chart.png"
    mine.write_bytes(b"the user's chart")

    def half_saved(self, fname, *a, **k):
        Path(fname).write_bytes(b"\x89PNG half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", half_saved)
    code, _, err = cli(*args)
    assert code == 1 and "No space left on device" in one_line(err)
    assert mine.read_bytes() == b"the user's chart"
    assert _leftovers(tmp_path) == []


def test_a_plot_still_replaces_a_file_with_force(cli, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chart.svg").write_text("old")
    os.chmod(tmp_path / "chart.svg", 0o640)
    code, _, err = cli("sweep", "llama-3.1-8b", "-n", "2", "--plot", "chart.svg", "--force")
    assert code == 0, err
    assert (tmp_path / "chart.svg").read_text().lstrip().startswith("<?xml")  # matplotlib's SVG, not the old text
    assert (os.stat(tmp_path / "chart.svg").st_mode & 0o777) == 0o640  # the user's permissions kept
    assert _leftovers(tmp_path) == []


def test_fit_plot_never_replaces_a_file_of_the_model(cli, tmp_path, monkeypatch):
    # sweep refused an --out/--plot inside the model's folder (--force or not); fit --plot overwrote it
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_bytes((SPECS / "llama-3.1-8b.json").read_bytes())
    (folder / "architecture.png").write_bytes(b"the model card's figure")
    code, _, err = cli("fit", "my-model", "--gpu", "h100", "--max-gpus", "1", "--plot", "my-model/architecture.png",
                       "--force")
    line = one_line(err)
    assert code == 2 and "--plot my-model/architecture.png is an input of this run (my-model)" in line, line
    assert (folder / "architecture.png").read_bytes() == b"the model card's figure"


# -- an option given as an empty string is not the option left out ------------------------------------------

LOG = ROOT / "tests" / "data" / "vllm_logs" / "v0191_qwen3_8b_a100_40gb_tokenkaki.log"


@pytest.mark.parametrize("args, flag", [
    # each ran with the option's default, exit 0, without a word ('' is false where the value was tested)
    (["estimate", "llama-3.1-8b", "--kv-memory", ""], "--kv-memory"),
    (["estimate", "llama-3.1-8b", "--gpu-memory="], "--gpu-memory"),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--emit", "vllm", "--max-model-len", ""], "--max-model-len"),
    (["calibrate", str(LOG), "--model", ""], "--model"),
    (["calibrate", str(LOG), "--model", "qwen3-8b", "--version", ""], "--version"),
    (["calibrate", str(LOG), "--model", "qwen3-8b", "--as-version", ""], "--as-version"),
    (["calibrate", str(LOG), "--model", "qwen3-8b", "--kv-dtype", ""], "--kv-dtype"),
    (["calibrate", str(LOG), "--model", "qwen3-8b", "--max-model-len", ""], "--max-model-len"),
    # this one said "--num-speculative-tokens sizes a draft: it needs --mtp or --draft-model"
    (["estimate", "llama-3.1-8b", "--engine", "vllm", "--gpu", "h100", "--draft-model", "",
      "--num-speculative-tokens", "3"], "--draft-model"),
    # and this one ran a 256-token CPU bench (the default) before anything was said
    (["bench", "--device", "cpu", "-t", "fp8", "--context", ""], "--context"),
])
def test_an_option_given_as_an_empty_string_is_refused(cli, args, flag):
    code, out, err = cli(*args)
    line = one_line(err)
    assert code == 2 and out == "" and line.startswith(f"kvplan: error: {flag} is an empty string"), line
    assert "leave the option out" in line


REQUIRED = {"estimate": ["m"], "sweep": ["m"], "compare": ["m", "n"], "fit": ["m"], "weights": ["m"],
            "calibrate": ["x.log"], "gate": ["a.json", "--baseline", "b.json"]}


def _single_valued_options():
    import typer

    from kvplan.cli.app import COMMANDS, app

    group = typer.main.get_command(app)
    for name in COMMANDS:
        for param in group.commands[name].params:
            if param.param_type_name == "option" and not param.multiple and not param.is_flag \
                    and param.type.name in ("text", "str"):
                yield name, max(param.opts, key=len)


def test_every_text_option_of_every_command_refuses_an_empty_string(cli):
    # refused once, where click has read the options (kvplan.cli.common.refuse_empty_options), before any work
    seen = list(_single_valued_options())
    assert len(seen) > 40 and ("calibrate", "--as-version") in seen
    for name, flag in seen:
        code, out, err = cli(name, *REQUIRED.get(name, []), f"{flag}=")
        assert code == 2 and one_line(err).startswith(f"kvplan: error: {flag} is an empty string"), (name, flag, err)


# -- a link that leads nowhere is said to be one ------------------------------------------------------------

@pytest.mark.parametrize("args, hint", [
    # each said "unknown model 'loop': not a bundled name, a file, or a Hub repo id (did you mean bloom?)",
    # or for plan "no such file or bundled scenario", where the user's link was there and broken
    (["estimate", "loop"], "the config's real path"),
    (["weights", "loop"], "the config's real path"),
    (["compare", "llama-3.1-8b", "loop"], "the config's real path"),
    (["calibrate", str(LOG), "--model", "loop"], "the config's real path"),
    (["plan", "loop"], "the scenario's real path"),
])
def test_a_link_loop_given_as_the_model_or_scenario_is_named(cli, tmp_path, monkeypatch, args, hint):
    monkeypatch.chdir(tmp_path)
    os.symlink("loop2", "loop")
    os.symlink("loop", "loop2")
    code, _, err = cli(*args)
    line = one_line(err)
    assert code in (1, 2) and "loop: a symlink that leads to no file (dangling, or a loop of links)" in line, line
    assert hint in line


def test_a_config_json_in_the_working_folder_is_named_by_that_folder(cli, tmp_path, monkeypatch):
    # `kvplan weights config.json` titled its table ": weights" (the parent of a bare 'config.json' is '')
    folder = tmp_path / "my-llama"
    folder.mkdir()
    (folder / "config.json").write_bytes((SPECS / "llama-3.1-8b.json").read_bytes())
    monkeypatch.chdir(folder)
    for command in ("weights", "estimate"):
        code, out, err = cli(command, "config.json", "--format", "json")
        assert code == 0, err
        assert json.loads(out)["model"]["name"] == "my-llama"


# -- bench documents with figures no run writes ------------------------------------------------------------

BASELINE = ROOT / "benchmarks" / "baseline-cpu.json"


@pytest.mark.parametrize("edit, words", [
    # each passed the gate (exit 0, "PASS"): an error of -1 is below any limit
    (lambda d: d["results"][0].update(error_rel=-1.0), "results[0] (baseline).error_rel is -1.0: this figure is never negative"),
    (lambda d: d["results"][0].update(predicted_bytes=-4096, measured_bytes=-4096), "predicted_bytes is -4096"),
    # a list or a number as the device kind, "no" as text for meaningful (true): read without a word
    (lambda d: d["environment"].update(device_kind=["cuda"]), "environment.device_kind must be text such as cuda or cpu"),
    (lambda d: d["ceiling"].update(meaningful="no"), "ceiling.meaningful must be true or false, found str 'no'"),
])
def test_gate_refuses_a_run_with_figures_no_bench_writes(cli, tmp_path, edit, words):
    doc = json.loads(BASELINE.read_text())
    edit(doc)
    current = tmp_path / "bench.json"
    current.write_text(json.dumps(doc))
    code, out, err = cli("gate", str(current), "--baseline", str(BASELINE))
    line = one_line(err)
    assert code == 2 and out == "" and words in line, line


def test_gate_still_reads_a_negative_allocation_change(cli, tmp_path):
    # CUDA's allocated bytes may drop while a cache is built (memory freed): the one signed figure
    doc = json.loads(BASELINE.read_text())
    doc["results"][0]["cuda_allocated_delta"] = -2048
    current = tmp_path / "bench.json"
    current.write_text(json.dumps(doc))
    code, out, err = cli("gate", str(current), "--baseline", str(BASELINE))
    assert code == 0 and "kvplan gate: PASS" in out, err


# -- a scenario too big is said to be big, not an alias bomb -----------------------------------------------

def test_a_scenario_of_many_plain_keys_is_not_called_an_alias_bomb(cli, tmp_path, monkeypatch):
    # 50,001 plain keys (100,003 nodes with their values and the mapping, past the limit of 100,000; here the
    # limit is lowered to 1,000 and 501 keys make 1,003, to keep the test fast), no alias at all: the line said
    # "YAML aliases expand to 100,003 nodes ... write the values out instead of nesting aliases"
    from kvplan.workload import loader

    monkeypatch.setattr(loader, "MAX_EXPANDED_NODES", 1_000)
    path = tmp_path / "keys.yaml"
    path.write_text("".join(f"k{i}: {i}\n" for i in range(501)))
    code, _, err = cli("plan", str(path))
    line = one_line(err)
    assert code == 2 and "the file holds 1,003 YAML nodes (keys, values and items), more than a scenario's 1,000" \
        in line, line
    assert "alias" not in line
    # 9 nodes x 9 per level, 8 levels of aliases: still named as what it is
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{b}: &{b} [{','.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefg", "bcdefgh"))
    path.write_text(bomb)
    code, _, err = cli("plan", str(path))
    assert code == 2 and "YAML aliases expand to" in one_line(err)


# -- limits said in full ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    # said "must be at most 2.14748e+09, got 1e+11": the limit (request.py) is 2^31 - 1 = 2,147,483,647
    (["estimate", "llama-3.1-8b", "--engine", "vllm", "--gpu", "h100", "--max-num-seqs", "99999999999"],
     "--max-num-seqs: must be at most 2,147,483,647, got 99,999,999,999"),
    # said "must be at most 1e+06, got 2e+06"
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--hbm-gbps", "2000000"], "--hbm-gbps: must be at most 1,000,000, got 2,000,000"),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--mem-util", "1.5"], "--mem-util: must be at most 1, got 1.5"),
])
def test_number_limits_are_written_in_full(cli, args, words):
    code, _, err = cli(*args)
    line = one_line(err)
    assert code == 2 and words in line, line


@pytest.mark.parametrize("value", ["0B", "0GiB", "0.0 GB"])
def test_a_zero_reserve_reads_with_any_unit(cli, tmp_path, value):
    # '--reserve 0' and '0B' were taken by estimate, '0GiB' refused ("must be positive"); fit took only '0', a
    # scenario only 0 and '0': a reserve of none, written with a unit, was refused in each in some spelling
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--reserve", value, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["capacity"]["reserve_bytes"] == 0
    code, out, err = cli("fit", "llama-3.1-8b", "--gpu", "h100", "--max-gpus", "1", "--reserve", value)
    assert code == 0, err
    scenario = (ROOT / "scenarios" / "agent-tool-loop.yaml").read_text()
    path = tmp_path / "s.yaml"
    path.write_text(scenario.replace("  pp: 1\n", f"  pp: 1\n  reserve: {value}\n"))
    code, out, err = cli("plan", str(path), "--format", "json")
    assert code in (0, 1) and "error" not in err, err


def test_a_size_that_rounds_to_no_byte_is_still_refused(cli):
    code, _, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--reserve", "0.1B")
    assert code == 2 and "--reserve: must be positive, got '0.1B'" in one_line(err)


# -- an empty or non-text JSON file is said to be one ------------------------------------------------------

@pytest.mark.parametrize("body, args, words", [
    # "malformed JSON at line 1, column 1: Expecting value" of a file with nothing in it
    (b"", ["estimate", "{path}"], "x.json: empty (no JSON in it)"),
    (b" \r\n", ["compare", "llama-3.1-8b", "{path}"], "x.json: empty (no JSON in it)"),
    (b"", ["gate", "{path}", "--baseline", str(BASELINE)], "x.json: empty (no JSON in it)"),
    # the index's were Python's own: "(Expecting value: line 1 column 1 (char 0))", "('utf-8' codec can't
    # decode byte 0xeb in position 1: invalid continuation byte)"
    (b"", ["weights", "llama-3.1-8b", "--weights", "{path}"], "x.json: not a readable safetensors index (the file is empty)"),
    (b"{\xeb\x01", ["weights", "llama-3.1-8b", "--weights", "{path}"], "x.json: not a readable safetensors index (not UTF-8 text)"),
    (b'{"weight_map": ', ["weights", "llama-3.1-8b", "--weights", "{path}"],
     "not a readable safetensors index (malformed JSON at line 1, column 16: Expecting value)"),
])
def test_an_empty_or_unreadable_json_file_says_what_it_is(cli, tmp_path, body, args, words):
    path = tmp_path / "x.json"
    path.write_bytes(body)
    code, out, err = cli(*[str(path) if a == "{path}" else a for a in args])
    line = one_line(err)
    assert code in (1, 2) and out == "" and words in line and "codec" not in line and "char 0" not in line, line


# -- a log saved as UTF-16 (Windows PowerShell's `vllm serve ... > server.log`) ------------------------------

@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_utf16_log_reads_as_its_utf8_copy(cli, tmp_path, encoding):
    # read as UTF-8 every other byte was a NUL: "no vLLM start-up lines found"
    text = LOG.read_text(encoding="utf-8")
    path = tmp_path / "server.log"
    path.write_bytes(("\ufeff" + text).encode(encoding) if encoding == "utf-16-be" else text.encode(encoding))
    assert path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")  # the byte-order mark is what tells it apart
    code, out, err = cli("calibrate", str(path), "--model", "qwen3-8b", "--format", "json")
    assert code == 0, err
    code8, out8, _ = cli("calibrate", str(LOG), "--model", "qwen3-8b", "--format", "json")
    read, read8 = json.loads(out)["log"], json.loads(out8)["log"]
    assert read.pop("path") == str(path) and read8.pop("path") == str(LOG)
    assert read == read8
    assert json.loads(out)["log"]["available_kv_gib"] == 19.36  # the log's "Available KV cache memory: 19.36 GiB"


@pytest.mark.parametrize("body", [b'{"model_type": "llama"}', b"my notes\n", b"", b"\xff\xfe\x00"])
def test_update_baseline_never_replaces_a_file_that_is_no_bench_document(cli, tmp_path, body):
    # refused before too, but the line said only "not a kvplan bench document" / "malformed JSON", not that the
    # file was kept or what to do
    mine = tmp_path / "mine.json"
    mine.write_bytes(body)
    code, out, err = cli("gate", str(BASELINE), "--baseline", str(mine), "--update-baseline")
    line = one_line(err)
    assert code == 2 and "--update-baseline replaces only a kvplan bench document" in line, line
    assert "give another --baseline path, or move that file away first" in line
    assert mine.read_bytes() == body and _leftovers(tmp_path) == []


def test_a_step_summary_pipe_nobody_reads_does_not_hold_the_gate(tmp_path):
    # open(GITHUB_STEP_SUMMARY, "a") of a named pipe without a reader blocked for ever: the gate never ended
    import subprocess
    import sys

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    pipe = tmp_path / "summary"
    os.mkfifo(pipe)
    r = subprocess.run([sys.executable, "-m", "kvplan", "gate", str(BASELINE), "--baseline", str(BASELINE)],
                       capture_output=True, text=True, timeout=30,
                       env={**os.environ, "GITHUB_STEP_SUMMARY": str(pipe), "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0 and "kvplan gate: PASS" in r.stdout, r.stderr
    assert "GITHUB_STEP_SUMMARY" in r.stderr and "a named pipe that nobody reads" in r.stderr


def test_a_pipe_named_safetensors_is_said_to_be_a_pipe(cli, tmp_path):
    # said "not a safetensors file or folder, an index.json or a .gguf" of a file named model.safetensors
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    pipe = tmp_path / "model.safetensors"
    os.mkfifo(pipe)
    code, _, err = cli("weights", "llama-3.1-8b", "--weights", str(pipe))
    line = one_line(err)
    assert code == 1 and "model.safetensors: not a regular file (a device, pipe or socket)" in line, line


# -- found by benchmarks/audit_bad_input.py: integers no float holds, a --pp held in memory ---------------

DIGITS_400 = "9" * 400  # click reads it as an int; float() of it overflows


@pytest.mark.parametrize("args, words", [
    # each was "internal error: OverflowError: int too large to convert to float" (math.isfinite of the int)
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--min-concurrency", DIGITS_400],
     "--min-concurrency: must be at most 1,099,511,627,776, got 999999999999... (400 digits)"),
    (["estimate", "llama-3.1-8b", "--engine", "vllm", "--gpu", "h100", "--max-num-seqs", DIGITS_400],
     "--max-num-seqs: must be at most 2,147,483,647"),
    (["fit", "llama-3.1-8b", "--engine", "vllm", "--mtp", "--num-speculative-tokens", DIGITS_400],
     "--num-speculative-tokens: must be at most 64"),
    # "internal error: OverflowError: cannot fit 'int' into an index-sized integer"
    (["sweep", "llama-3.1-8b", "-n", "2", "--pp", DIGITS_400], "--pp 999999999999... (400 digits) exceeds the model's 32 layers"),
])
def test_an_integer_option_no_float_holds_is_one_line(cli, args, words):
    code, _, err = cli(*args)
    line = one_line(err)
    assert code == 2 and words in line and len(line) < 300, line


def test_a_pipeline_split_is_checked_before_it_is_built():
    # sweep --pp 100000000 built a list of 10^8 stage figures (4.7 GB, 43 s) before it said the model has 32
    # layers: the even split of unparted weights came before the check in stage_bounds
    import tracemalloc

    from kvplan.capacity.weights import stage_weight_bytes
    from kvplan.errors import UsageError
    from kvplan.weights.estimate import given

    tracemalloc.start()
    try:
        with pytest.raises(UsageError, match="--pp 100,000,000 exceeds the model's 32 layers"):
            stage_weight_bytes(given(16 * 10**9, "16GB"), 32, tp=1, pp=100_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 1024**2


@pytest.mark.parametrize("value", ["", " ", ","])
def test_a_price_that_names_nothing_is_refused(cli, value):
    # ran as if --price were not given (each empty item was skipped), where --gpu '' and --allow '' say so
    code, _, err = cli("fit", "llama-3.1-8b", "--gpu", "h100", "--max-gpus", "1", "--price", value)
    line = one_line(err)
    assert code == 2 and f"--price {value!r} names nothing" in line, line


def test_a_scenario_model_beside_the_file_says_where_paths_are_read_from(cli, tmp_path, monkeypatch):
    # "model: cfg.json: no such file" of the config next to the scenario: a relative path is read from the
    # working folder; the line now says so and gives the path that names the file beside the scenario
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "cfg.json").write_bytes((SPECS / "qwen3-8b.json").read_bytes())
    text = (ROOT / "scenarios" / "agent-tool-loop.yaml").read_text().replace("model: qwen3-8b", "model: cfg.json")
    (folder / "s.yaml").write_text(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = cli("plan", str(folder / "s.yaml"))
    line = one_line(err)
    assert code == 2 and "s.yaml:7: model: cfg.json: no such file in the working folder" in line, line
    assert f"write model: {folder / 'cfg.json'}, or run kvplan from the scenario's folder" in line
    monkeypatch.chdir(folder)  # from its own folder the same file plans
    code, out, err = cli("plan", "s.yaml", "--format", "json")
    assert code in (0, 1) and "error" not in err, err
    # a name no file can have keeps its own line
    (folder / "long.yaml").write_text(text.replace("model: cfg.json", "model: " + "m" * 300 + ".json"))
    code, _, err = cli("plan", "long.yaml")
    assert code == 2 and "too long for the file system" in one_line(err)


def test_sweep_parquet_without_pyarrow_is_said_before_the_sweep(cli, tmp_path, monkeypatch):
    # the sweep ran to its end (a million rows take seconds) before the write said pyarrow is missing
    import importlib.util

    if importlib.util.find_spec("pyarrow") is not None:
        pytest.skip("pyarrow is installed here")
    from kvplan.workload import sweep

    def never(*a, **k):
        raise AssertionError("the sweep ran")

    monkeypatch.setattr(sweep, "sweep_columns", never)
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("sweep", "llama-3.1-8b", "--out", "t.parquet")
    assert code == 1 and "--out t.parquet: writing parquet needs pyarrow" in one_line(err)
    assert list(tmp_path.iterdir()) == []


# -- options that change nothing beside --kv-memory --------------------------------------------------------

@pytest.mark.parametrize("engine", ["ideal", "vllm"])
def test_mem_util_and_reserve_beside_kv_memory_are_said_to_change_nothing(cli, engine):
    # --kv-memory is the pool itself (capacity.pool.pool_bytes_per_stage, vllm_report.kv_memory_of,
    # sglang_report): --mem-util 0.5 --reserve 5GiB were only echoed in the JSON, every figure the same, unsaid
    base = ["estimate", "llama-3.1-8b", "--gpu", "h100", "--kv-memory", "10GiB", "--engine", engine, "--format", "json"]
    code, plain, err = cli(*base)
    assert code == 0 and "warning" not in err, err
    code, out, err = cli(*base, "--mem-util", "0.5", "--reserve", "5GiB")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("kvplan: warning:")]
    assert warnings == ["kvplan: warning: --mem-util and --reserve change nothing here: --kv-memory gives the KV pool "
                        "per GPU directly (without it, they size the pool from the GPU's memory)"], err
    same, given = json.loads(plain), json.loads(out)
    # what the warning says: the pool is --kv-memory, 10 GiB, either way
    assert given["capacity"]["pool_bytes"] == same["capacity"]["pool_bytes"] == 10 * 1024**3
    code, _, err = cli(*base, "--reserve", "5GiB")
    assert "kvplan: warning: --reserve changes nothing here" in err


def test_mem_util_beside_kv_memory_still_counts_for_sglang(cli):
    # SGLang's launch line takes --mem-util as --mem-fraction-static (it has no KV-memory flag): no warning there
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--kv-memory", "10GiB", "--emit", "sglang",
                         "--mem-util", "0.5", "--reserve", "5GiB")
    assert code == 0 and "--mem-fraction-static 0.5" in out, err
    assert [line for line in err.splitlines() if "warning" in line] == [
        "kvplan: warning: --reserve changes nothing here: --kv-memory gives the KV pool per GPU directly (without it, "
        "it sizes the pool from the GPU's memory)"]


@pytest.mark.parametrize("args", [
    ["estimate", "llama-3.1-8b", "--context", "1k", "-t", "prefix:tokens=99999,requests=3"],
    ["compare", "llama-3.1-8b", "qwen3-8b", "--context", "1k", "-t", "prefix:tokens=99999,requests=3"],
    ["fit", "llama-3.1-8b", "--context", "1k", "--gpu", "h100", "--max-gpus", "1", "--allow",
     "fp8,prefix:tokens=99999,requests=3"],
])
def test_a_shared_prefix_longer_than_the_context_is_refused(cli, args):
    # planned with the prefix capped at the context, unsaid, under the title "99999-token prefix shared by 3
    # requests" (a scenario refuses shared_prefix_tokens above prompt_tokens)
    code, out, err = cli(*args)
    line = one_line(err)
    assert code == 2 and out == "" and "a shared prefix of 99,999 tokens is longer than the 1,024-token context" \
        in line, line


def test_a_shared_prefix_as_long_as_the_context_plans(cli):
    # the boundary: a prefix as long as the context (the whole sequence shared) still plans
    code, out, err = cli("estimate", "llama-3.1-8b", "--context", "1k", "-t", "prefix:tokens=1024,requests=3",
                         "--format", "json")
    assert code == 0, err


@pytest.mark.parametrize("name", ["a/b c", "a/..", "owner/name?rev=1", "\u00c4/\u00fc", "a/" + "b" * 97, "a/b--c",
                                  "a/b.git"])
def test_a_name_no_hub_repo_can_have_is_refused_before_any_request(cli, monkeypatch, name):
    # each went to the Hub (or its cache) and came back "cannot reach the Hub" / "offline and not in the local
    # cache" / HTTP 404: none can name a repository (huggingface_hub.utils.validate_repo_id's rules)
    from kvplan import hub

    def no_request(*a, **k):
        raise AssertionError("asked the Hub")

    monkeypatch.setattr(hub, "config_lookup", no_request)
    code, _, err = cli("estimate", name)
    line = one_line(err)
    assert code == 1 and "no such file here, and not a Hub repo id" in line, line


def test_a_well_formed_hub_id_still_asks_the_hub(cli, monkeypatch):
    from kvplan import hub
    from kvplan.errors import SourceError

    asked = []

    def lookup(repo_id, revision):
        asked.append(repo_id)
        raise SourceError(f"{repo_id}: offline (test)")

    monkeypatch.setattr(hub, "config_lookup", lookup)
    code, _, err = cli("estimate", "fake-org-zz/definitely-not-a-repo-xyz")
    assert code == 1 and asked == ["fake-org-zz/definitely-not-a-repo-xyz"], err


@pytest.mark.slow
def test_the_curated_audit_finds_nothing():
    # benchmarks/audit_bad_input.py --curated: about 70 runs (paths that are no file, scenario YAML, bench
    # documents, every option that writes) in a scratch folder of user files; exit 1 on a crash, a hang, a case
    # accepted that must be refused, or a user file changed
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "audit_bad_input.py"), "--curated"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert ": 0 problems" in r.stdout


@pytest.mark.parametrize("name, body, hint", [
    # "not UTF-8 text" said what, not what to do; a UTF-16 file (Windows PowerShell's '>') is named as one
    ("config.json", (SPECS / "llama-3.1-8b.json").read_text().encode("utf-16"), "it is UTF-16 text, as Windows "
     "PowerShell's '>' writes: save it as UTF-8"),
    ("config.json", b'{"model_type": "caf\xe9"}', "save it as UTF-8 text, or check that the path names the right file"),
    ("s.yaml", (ROOT / "scenarios" / "agent-tool-loop.yaml").read_text().encode("utf-16"), "it is UTF-16 text"),
])
def test_a_file_that_is_not_utf8_says_what_to_do(cli, tmp_path, name, body, hint):
    path = tmp_path / name
    path.write_bytes(body)
    code, _, err = cli("plan" if name.endswith(".yaml") else "estimate", str(path))
    line = one_line(err)
    assert code in (1, 2) and f"{name}: not UTF-8 text ({hint}" in line, line


@pytest.mark.parametrize("args", [
    ["sweep", "llama-3.1-8b", "-n", "2", "--out", "loop.csv"],
    ["sweep", "llama-3.1-8b", "-n", "2", "--plot", "loop.png"],
    ["fit", "llama-3.1-8b", "--gpu", "h100", "--max-gpus", "1", "--plot", "loop.png"],
    ["bench", "--device", "cpu", "-t", "fp8", "--json", "loop.json"],
])
def test_an_output_that_is_a_loop_of_links_is_refused_before_the_run(cli, tmp_path, monkeypatch, args):
    # sweep --out on a loop of links ran the sweep, then "internal error: OSError: [Errno 40] Too many levels of
    # symbolic links" at the write
    monkeypatch.chdir(tmp_path)
    name = args[args.index(next(a for a in args if a.startswith("loop")))]
    os.symlink(name + ".b", name)
    os.symlink(name, name + ".b")
    code, _, err = cli(*args)
    line = one_line(err)
    assert code == 2 and f"{name}: a loop of symlinks, with no file at its end to write" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, name + ".b"])


@pytest.mark.parametrize("link", [False, True])
@pytest.mark.parametrize("args, name", [
    (["sweep", "llama-3.1-8b", "-n", "2", "--force", "--out"], "pipe.csv"),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--max-gpus", "1", "--force", "--plot"], "pipe.png"),
])
def test_an_output_on_a_pipe_or_device_is_refused_and_the_node_kept(cli, tmp_path, monkeypatch, args, name, link):
    # os.replace put a regular file where the node was: `--out null.csv --force` with null.csv -> /dev/null turned
    # /dev/null into a file (run as root); a named pipe here stands for any such node
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    import stat

    monkeypatch.chdir(tmp_path)
    os.mkfifo("node")
    if link:
        os.symlink("node", name)
    else:
        os.rename("node", name)
    code, _, err = cli(*args, name)
    line = one_line(err)
    assert code == 2 and "not a regular file (a device, pipe or socket)" in line, line
    assert stat.S_ISFIFO(os.stat(name).st_mode)  # still the pipe
    assert _leftovers(tmp_path) == []


def test_write_atomic_never_replaces_a_pipe(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    import stat

    from kvplan.files import write_atomic

    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        write_atomic(str(tmp_path / "pipe"), "text")
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe").st_mode) and _leftovers(tmp_path) == []


@pytest.mark.parametrize("args", [
    ["sweep", "llama-3.1-8b", "-n", "2", "--out", "notes.txt/t.csv"],
    ["fit", "llama-3.1-8b", "--gpu", "h100", "--plot", "notes.txt/f.png"],
    ["bench", "--device", "cpu", "-t", "fp8", "--json", "notes.txt/b.json"],
])
def test_an_output_inside_a_file_names_the_file(cli, tmp_path, monkeypatch, args):
    # said "the folder notes.txt does not exist (create it first (mkdir -p) ...)" of a file the user can see
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("the user's notes\n")
    code, _, err = cli(*args)
    line = one_line(err)
    assert code == 2 and "notes.txt is a file, not a folder" in line and "mkdir" not in line, line
    assert (tmp_path / "notes.txt").read_text() == "the user's notes\n"
