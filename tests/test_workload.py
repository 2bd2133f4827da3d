"""Scenario files: schema errors (file:line, field, what was expected), bundled
scenarios, and budgets checked against numbers worked out by hand.

Hand arithmetic used below (bf16 = 2 bytes, K and V = 2 tensors):
  Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 x 2 B = 131,072 B/token;
    8,030,261,248 parameters x 2 B = 16,060,522,496 B of weights.
  H100 (80 GiB): usable = floor(0.9 x 85,899,345,920) = 77,309,411,328 B;
    KV pool = 77,309,411,328 - 16,060,522,496 - 2 GiB reserve = 59,101,405,184 B.
  A 4,096-token sequence: 131,072 x 4,096 = 536,870,912 B = 0.5 GiB.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from kvplan.workload import loader, run
from kvplan.workload.schema import SCHEMA, ScenarioError

GIB = 1024**3
LLAMA8_PER_TOKEN = 32 * 8 * 128 * 2 * 2
LLAMA8_WEIGHTS = 8_030_261_248 * 2
H100_POOL = int(0.9 * int(79.18 * GIB)) - LLAMA8_WEIGHTS - 2 * GIB  # the H100 as its driver reports it
SEQ_4K = LLAMA8_PER_TOKEN * 4096
H100_GBPS = 3350e9

BASE = """\
name: test
model: llama-3.1-8b
deployment:
  gpu: h100
workload:
  prompt_tokens: 3000
  output_tokens: 1096
  concurrency: 10
"""


def write(tmp_path, text: str, name: str = "s.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def bad(cli, path):
    """Run `kvplan plan PATH`, expect a usage error, return the one stderr line."""
    code, out, err = cli("plan", path)
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --- numbers -------------------------------------------------------------------------------


def test_hand_figures_agree():
    assert LLAMA8_PER_TOKEN == 131_072
    assert H100_POOL == 58_308_983_717
    assert SEQ_4K == GIB // 2


def test_plan_within_budgets_exits_0(tmp_path, cli):
    path = write(tmp_path, BASE + "budgets:\n  max_kv_gib_per_gpu: 5\n  min_concurrency: 108\n  max_tpot_ms: 6.5\n")
    code, out, err = cli("plan", path, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    s = doc["scenarios"][0]
    assert doc["ok"] and s["budgets"]["ok"]
    # 10 sequences of 4,096 tokens: 10 x 0.5 GiB on the one GPU
    assert s["kv_bytes_per_gpu"] == 10 * SEQ_4K == 5 * GIB
    assert s["workload"]["context_tokens"] == 4096
    assert s["plan"]["bytes_per_token"] == 131_072
    # pool / per-sequence bytes: 58,308,983,717 // 536,870,912 = 108
    assert s["plan"]["max_concurrency"] == H100_POOL // SEQ_4K == 108
    # decode floor: (weights + 10 sequences of KV) / 3,350 GB/s = 6.3968 ms
    assert s["tpot_ms"] == pytest.approx((LLAMA8_WEIGHTS + 10 * SEQ_4K) / H100_GBPS * 1e3, abs=1e-6)  # JSON keeps 6 decimals
    assert s["tpot_ms"] == pytest.approx(6.3968, abs=1e-4)


def test_every_broken_budget_is_listed_and_exit_1(tmp_path, cli):
    path = write(tmp_path, BASE + "budgets:\n  max_kv_gib_per_gpu: 4\n  min_concurrency: 200\n  max_tpot_ms: 5\n")
    code, out, err = cli("plan", path)
    assert code == 1
    broken = [line for line in err.splitlines() if "budget exceeded" in line]
    assert len(broken) == 3
    assert "max_kv_gib_per_gpu: planned 5.00 GiB exceeds the limit 4.00 GiB" in err
    assert "min_concurrency: 108 sequences fit, fewer than the required 200" in err
    assert "max_tpot_ms: planned 6.40 ms exceeds the limit 5.00 ms" in err
    assert out.count("BROKEN") >= 3  # in the budget table and the lines under it


def test_one_broken_budget_among_files_fails_the_run(tmp_path, cli):
    good = write(tmp_path, BASE + "budgets:\n  max_kv_gib_per_gpu: 5\n", "good.yaml")
    over = write(tmp_path, BASE.replace("name: test", "name: over") + "budgets:\n  max_kv_gib_per_gpu: 4.99\n", "over.yaml")
    code, out, err = cli("plan", good, over, "--format", "json")
    assert code == 1
    doc = json.loads(out)
    assert [s["budgets"]["ok"] for s in doc["scenarios"]] == [True, False]
    assert doc["violations"] == ["over: max_kv_gib_per_gpu: planned 5.00 GiB exceeds the limit 4.99 GiB"]


def test_shared_prefix_saves_its_full_blocks(tmp_path):
    # 2,000 shared tokens = 125 full blocks of 16 = 2,000 tokens; 10 sharers keep 1 copy, save 9
    path = write(tmp_path, BASE.replace("  concurrency: 10\n", "  concurrency: 10\n  shared_prefix_tokens: 2000\n"))
    p = run.plan_one(loader.resolve(loader.read(path)))
    assert p.resolved.scenario.technique_specs == ("prefix:tokens=2000,requests=10",)
    assert p.kv_bytes_per_gpu == 10 * SEQ_4K - 9 * 2000 * LLAMA8_PER_TOKEN


def test_offloaded_sessions_leave_the_gpu(tmp_path):
    # 10 sessions of 0.5 GiB, 4 must stay; a 2 GiB CPU tier takes 4 of the other 6 -> 6 resident
    path = write(tmp_path, BASE + "techniques: ['offload:cpu=2GiB,active=4']\nbudgets:\n  max_kv_gib_per_gpu: 3\n  max_tpot_ms: 10\n")
    p = run.plan_one(loader.resolve(loader.read(path)))
    assert p.resident_sequences == 6
    assert p.kv_bytes_per_gpu == 6 * SEQ_4K == 3 * GIB
    assert p.tpot_ms == pytest.approx((LLAMA8_WEIGHTS + 6 * SEQ_4K) / H100_GBPS * 1e3, rel=1e-9)
    assert not p.violations


def test_kv_per_gpu_counts_replicated_latents(tmp_path):
    # DeepSeek-V3: 61 layers x (512 + 64) x 2 B = 70,272 B/token; the MLA latent is
    # replicated on all 8 TP ranks, so each GPU holds the whole cache of every sequence.
    text = """\
    model: deepseek-v3
    deployment: {gpu: h200, tp: 8}
    workload: {prompt_tokens: 4096, output_tokens: 4096, concurrency: 4}
    budgets: {max_kv_gib_per_gpu: 2}
    """
    p = run.plan_one(loader.resolve(loader.read(write(tmp_path, text))))
    assert 61 * (512 + 64) * 2 == 70_272
    assert p.kv_bytes_per_gpu == 4 * 8192 * 70_272 == 2_302_672_896
    assert [b.key for b in p.violations] == ["max_kv_gib_per_gpu"]


def test_tensor_parallel_splits_kv_heads(tmp_path):
    # Llama-3.1-70B: 80 x 8 x 128 x 2 x 2 = 327,680 B/token; tp 4 -> 2 KV heads per GPU
    text = """\
    model: llama-3.1-70b
    deployment: {gpu: h200, tp: 4}
    workload: {prompt_tokens: 8k, output_tokens: 0k, concurrency: 2}
    """
    # output_tokens 0k is not positive: rejected
    with pytest.raises(ScenarioError, match="output_tokens"):
        loader.read(write(tmp_path, text))
    p = run.plan_one(loader.resolve(loader.read(write(tmp_path, text.replace("0k", "1")))))
    assert p.kv_bytes_per_gpu == 2 * 8193 * 327_680 // 4


# --- bundled scenarios -----------------------------------------------------------------------


def test_bundled_scenarios_cover_the_five_workloads():
    names = loader.bundled_names()
    assert {"chat-shared-prompt", "rag-128k", "agent-tool-loop", "batch-summarisation", "multi-tenant-offload"} <= set(names)
    for name in names:
        s = loader.read(name)
        assert s.model and s.gpu and s.tp >= 1 and s.prompt_tokens and s.output_tokens and s.concurrency
        assert None not in (s.max_kv_gib_per_gpu, s.min_concurrency), name
        # the decode floor is not modelled under dp / ep (planner.evaluate): deepseek-dp-ep has no max_tpot_ms
        assert s.max_tpot_ms is not None or dict(s.options).get("dp", 1) > 1, name
        assert s.description
    assert loader.read("rag-128k").context_tokens == 128 * 1024
    assert loader.read("chat-shared-prompt").shared_prefix_tokens > 0
    assert loader.read("agent-tool-loop").shared_prefix_tokens > 0
    assert any(t.startswith("offload:") for t in loader.read("multi-tenant-offload").techniques)


def test_bundled_scenarios_plan_within_their_budgets(cli):
    code, out, err = cli("plan", *loader.bundled_names(), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["scenarios"]) == len(loader.bundled_names()) >= 5


def test_plan_by_name_through_clirunner():
    from typer.testing import CliRunner

    from kvplan.cli.app import app

    result = CliRunner().invoke(app, ["plan", "chat-shared-prompt"])
    assert result.exit_code == 0, result.output
    assert "scenario chat-shared-prompt" in result.output
    assert "chat-shared-prompt: budgets" in result.output
    listing = CliRunner().invoke(app, ["plan", "--list", "--format", "json"])
    assert listing.exit_code == 0
    assert {s["name"] for s in json.loads(listing.output)["scenarios"]} == set(loader.bundled_names())


def test_unknown_bundled_name_suggests(cli):
    line = bad(cli, "chat-shared")
    assert "chat-shared: no such file or bundled scenario" in line
    assert "did you mean chat-shared-prompt" in line


def test_no_argument_is_a_usage_error(cli):
    code, _, err = cli("plan")
    assert code == 2 and "no scenario given" in err


# --- schema errors: file:line, field, what was expected ----------------------------------------


def test_unknown_top_level_key_suggests_the_closest(tmp_path, cli):
    path = write(tmp_path, BASE.replace("model:", "modle:"))
    line = bad(cli, path)
    assert line == f"kvplan: error: {path}:2: unknown key 'modle' in the file (did you mean 'model'?)"


def test_unknown_nested_key_names_its_line_and_section(tmp_path, cli):
    path = write(tmp_path, BASE.replace("prompt_tokens", "prompt_token"))
    line = bad(cli, path)
    assert f"{path}:6: unknown key 'prompt_token' in workload (did you mean 'prompt_tokens'?)" in line


def test_unknown_key_without_a_close_match_lists_valid_keys(tmp_path, cli):
    path = write(tmp_path, BASE + "zzz: 1\n")
    assert "valid keys: name, description, model" in bad(cli, path)


@pytest.mark.parametrize(
    "old, new, line_no, expected",
    [
        ("prompt_tokens: 3000", "prompt_tokens: -5", 6, "workload.prompt_tokens: expected a positive token count such as 4096 or 128k, got -5"),
        ("output_tokens: 1096", "output_tokens: 0", 7, "workload.output_tokens: expected a positive token count"),
        ("output_tokens: 1096", "output_tokens: 1.3k", 7, "got '1.3k'"),
        ("concurrency: 10", "concurrency: many", 8, "workload.concurrency: expected a positive integer, got 'many'"),
        ("concurrency: 10", "concurrency: -3", 8, "workload.concurrency: expected a positive integer, got -3"),
        ("concurrency: 10", "concurrency: true", 8, "workload.concurrency: expected a positive integer, got True"),
        ("gpu: h100", "gpu: [h100]", 4, "deployment.gpu: expected a string, got ['h100']"),
        ("model: llama-3.1-8b", "model: 8", 2, "model: expected a string, got 8"),
    ],
)
def test_wrong_types_and_negative_lengths(tmp_path, cli, old, new, line_no, expected):
    path = write(tmp_path, BASE.replace(old, new))
    line = bad(cli, path)
    assert line.startswith(f"kvplan: error: {path}:{line_no}: ")
    assert expected in line


@pytest.mark.parametrize(
    "extra, line_no, expected",
    [
        ("  tp: 0\n", 5, "deployment.tp: expected a positive integer, got 0"),
        ("  mem_util: 1.5\n", 5, "deployment.mem_util: expected a number in (0, 1], got 1.5"),
        ("  reserve: lots\n", 5, "deployment.reserve: expected 0 or a size with a unit such as 2GiB, got 'lots'"),
        ("  reserve: -2GiB\n", 5, "deployment.reserve: expected 0 or a size with a unit such as 2GiB, got '-2GiB'"),
        ("  weights: heavy\n", 5, "deployment.weights: expected auto or a size with a unit such as 140GB, got 'heavy'"),
    ],
)
def test_bad_deployment_values(tmp_path, cli, extra, line_no, expected):
    path = write(tmp_path, BASE.replace("  gpu: h100\n", "  gpu: h100\n" + extra))
    line = bad(cli, path)
    assert f"{path}:{line_no}: {expected}" in line


def test_zero_reserve_and_given_weights(tmp_path):
    # no reserve: pool = 76,516,989,861 (0.9 of the driver's 79.18 GiB) - weights; weights given as 8 GB
    path = write(tmp_path, BASE.replace("  gpu: h100\n", "  gpu: h100\n  reserve: 0\n  weights: 8GB\n"))
    p = run.plan_one(loader.resolve(loader.read(path)))
    assert p.result.capacity.pool_bytes == int(0.9 * int(79.18 * GIB)) - 8 * 10**9 == 68_516_989_861
    assert p.result.capacity.max_concurrency == (int(0.9 * int(79.18 * GIB)) - 8 * 10**9) // SEQ_4K


def test_bad_budget_value(tmp_path, cli):
    path = write(tmp_path, BASE + "budgets:\n  max_tpot_ms: -1\n")
    assert f"{path}:10: budgets.max_tpot_ms: expected a positive number, got -1" in bad(cli, path)


def test_unknown_model_names_its_line(tmp_path, cli):
    path = write(tmp_path, BASE.replace("llama-3.1-8b", "llama-3.1-9b"))
    line = bad(cli, path)
    assert f"{path}:2: model: unknown model 'llama-3.1-9b'" in line
    assert "did you mean" in line and "llama-3.1-8b" in line


def test_unknown_gpu_names_its_line(tmp_path, cli):
    path = write(tmp_path, BASE.replace("gpu: h100", "gpu: h1000"))
    line = bad(cli, path)
    assert f"{path}:4: deployment.gpu: unknown GPU 'h1000'" in line
    assert "did you mean" in line


def test_unknown_technique_names_its_list_item(tmp_path, cli):
    path = write(tmp_path, BASE + "techniques:\n  - page:16\n  - fp9\n")
    line = bad(cli, path)
    assert f"{path}:11: techniques[1]: unknown technique 'fp9'" in line
    assert "did you mean fp8" in line


def test_technique_that_cannot_apply_names_its_line(tmp_path, cli):
    path = write(tmp_path, BASE.replace("llama-3.1-8b", "mamba-2.8b") + "techniques: [fp8]\n")
    line = bad(cli, path)
    assert f"{path}:9: techniques[0]: technique 'fp8' cannot apply" in line


def test_bad_kv_dtype(tmp_path, cli):
    path = write(tmp_path, BASE + "kv_dtype: fp7\n")
    assert f"{path}:9: kv_dtype: kv_dtype 'fp7' is not one of" in bad(cli, path)


def test_missing_required_key(tmp_path, cli):
    path = write(tmp_path, BASE.replace("  concurrency: 10\n", ""))
    line = bad(cli, path)
    assert f"{path}:5: workload: missing required key 'concurrency'" in line


def test_missing_section(tmp_path, cli):
    path = write(tmp_path, "model: llama-3.1-8b\nworkload: {prompt_tokens: 1, output_tokens: 1, concurrency: 1}\n")
    assert "missing required key 'deployment'" in bad(cli, path)


def test_section_of_the_wrong_type(tmp_path, cli):
    path = write(tmp_path, BASE.replace("deployment:\n  gpu: h100\n", "deployment: h100\n"))
    assert f"{path}:3: deployment: expected a mapping with gpu, got str 'h100'" in bad(cli, path)


def test_top_level_must_be_a_mapping(tmp_path, cli):
    path = write(tmp_path, "- model: llama-3.1-8b\n")
    assert "the file: expected a mapping with model, deployment, workload, got list" in bad(cli, path)


def test_empty_file(tmp_path, cli):
    path = write(tmp_path, "# nothing yet\n")
    assert f"{path}: the file is empty" in bad(cli, path)


def test_invalid_yaml_gives_line_and_column(tmp_path, cli):
    path = write(tmp_path, BASE.replace("  concurrency: 10", "  concurrency: [10"))
    line = bad(cli, path)
    assert f"{path}:" in line and "not valid YAML" in line


def test_python_tags_are_refused(tmp_path, cli):
    path = write(tmp_path, BASE.replace("name: test", "name: !!python/object/apply:os.getcwd []"))
    line = bad(cli, path)
    assert f"{path}:1:" in line and "not valid YAML" in line


def test_duplicate_key(tmp_path, cli):
    path = write(tmp_path, BASE + "model: qwen3-8b\n")
    assert f"{path}:9: duplicate key 'model'" in bad(cli, path)


def test_shared_prefix_longer_than_the_prompt(tmp_path, cli):
    path = write(tmp_path, BASE.replace("  concurrency: 10\n", "  concurrency: 10\n  shared_prefix_tokens: 4000\n"))
    assert f"{path}:9: workload.shared_prefix_tokens (4,000) exceeds workload.prompt_tokens (3,000)" in bad(cli, path)


def test_prefix_given_twice(tmp_path, cli):
    path = write(tmp_path, BASE.replace("  concurrency: 10\n", "  concurrency: 10\n  shared_prefix_tokens: 1000\n")
                 + "techniques: ['prefix:tokens=1000,requests=4']\n")
    assert "repeats workload.shared_prefix_tokens" in bad(cli, path)


def test_prefix_sharers_above_concurrency(tmp_path, cli):
    path = write(tmp_path, BASE.replace("  concurrency: 10\n", "  concurrency: 10\n  shared_prefix_tokens: 1000\n  prefix_sharers: 11\n"))
    assert "workload.prefix_sharers (11) exceeds workload.concurrency (10)" in bad(cli, path)


def test_a_folder_is_not_a_scenario(tmp_path, cli):
    assert "is a folder" in bad(cli, str(tmp_path))


def test_missing_file(tmp_path, cli):
    assert "no such file or bundled scenario" in bad(cli, str(tmp_path / "nope.yaml"))


def test_weights_that_do_not_fit_exit_1_naming_the_scenario(tmp_path, cli):
    path = write(tmp_path, BASE.replace("llama-3.1-8b", "llama-3.1-405b").replace("gpu: h100", "gpu: l4"))
    code, out, err = cli("plan", path)
    assert code == 1 and out == ""
    assert err.startswith(f"kvplan: error: scenario test ({path}): meta-llama/Llama-3.1-405B does not fit on 1 x l4")


def test_a_bad_file_stops_before_any_plan_prints(tmp_path, cli):
    good = write(tmp_path, BASE, "good.yaml")
    broken = write(tmp_path, BASE.replace("gpu: h100", "gpu: h1000"), "broken.yaml")
    code, out, _ = cli("plan", good, broken)
    assert code == 2 and out == ""


def test_schema_keys_are_the_documented_ones():
    assert list(SCHEMA) == ["name", "description", "model", "kv_dtype", "deployment", "engine", "workload", "techniques",
                            "budgets"]
    assert set(SCHEMA["budgets"].children) == {"max_kv_gib_per_gpu", "min_concurrency", "max_tpot_ms"}


def test_context_beyond_the_model_maximum_is_flagged(tmp_path, cli):
    # Llama-3.1-8B's max_position_embeddings is 131,072
    path = write(tmp_path, BASE.replace("prompt_tokens: 3000", "prompt_tokens: 131072").replace("concurrency: 10", "concurrency: 1"))
    code, out, _ = cli("plan", path, "--format", "json")
    assert code == 0
    assert json.loads(out)["scenarios"][0]["exceeds_max_context"] is True
    code, out, _ = cli("plan", path)
    assert "WARNING: prompt + output = 132,168 tokens exceeds the model's maximum context of 131,072" in out


# --- YAML: parsed once, aliases limited, lines without walking expansions (issue 12 item 4) ---

def _bomb(levels: int) -> str:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return BASE + "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_at_once(tmp_path, cli):
    import time

    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(12))  # 9^12 = 282 billion strings if expanded
    start = time.monotonic()
    code, out, err = cli("plan", str(path))
    elapsed = time.monotonic() - start
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "aliases expand to" in lines[0] and str(path) in lines[0], err
    assert elapsed < 2, elapsed


def test_expanded_size_counts_without_expanding():
    import yaml

    # a0 is a 10-node sequence (itself + 9 scalars); each level adds 1 + 9 x the level below
    root = yaml.compose(_bomb(4), Loader=loader.LOADER)
    sizes = [10]
    for _ in range(3):
        sizes.append(1 + 9 * sizes[-1])
    base_nodes = loader.expanded_size(yaml.compose(BASE, Loader=loader.LOADER))
    # the mapping adds each a_i key scalar and value: total = base mapping + 4 keys + the four levels
    assert loader.expanded_size(root) == base_nodes + 4 + sum(sizes)


def test_a_few_aliases_are_fine_and_lines_stay_right(tmp_path):
    text = BASE + "techniques: &t\n  - fp8\n  - page:16\nnotes: *t\n"
    path = tmp_path / "alias.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as exc:  # 'notes' is not a key: reported at its own line
        loader.read(str(path))
    assert f"{path}:{text.splitlines().index('notes: *t') + 1}" in exc.value.message
    good = tmp_path / "good.yaml"
    good.write_text(BASE + "techniques: &t [fp8, page:16]\n")
    assert tuple(loader.read(str(good)).techniques) == ("fp8", "page:16")


def test_yaml_is_parsed_once_with_the_c_loader(monkeypatch):
    import yaml

    if getattr(yaml, "__with_libyaml__", False):  # libyaml's loader, less YAML 1.1's base-60 numbers
        assert issubclass(loader.LOADER, yaml.CSafeLoader)
    for name in ("safe_load", "load", "compose"):
        monkeypatch.setattr(yaml, name, lambda *a, **k: pytest.fail("a second parse"))
    scenario = loader.parse(BASE, "x.yaml", "x")
    assert scenario.concurrency == 10


def test_deep_nesting_and_huge_files_are_one_line(tmp_path, cli):
    deep = tmp_path / "deep.yaml"
    deep.write_text(BASE + "techniques: " + "[" * 5000 + "]" * 5000 + "\n")
    code, _, err = cli("plan", str(deep))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    huge = tmp_path / "huge.yaml"
    huge.write_text(BASE + "#" * (1024 * 1024 + 1) + "\n")
    code, _, err = cli("plan", str(huge))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "above the 1 MiB limit for a scenario file" in err, err


def test_a_technique_twice_in_a_scenario_names_its_line(tmp_path, cli):
    path = tmp_path / "twice.yaml"
    path.write_text(BASE + "techniques:\n  - fp8\n  - fp8\n")
    code, _, err = cli("plan", str(path))
    assert code == 2 and "'fp8' is given twice" in err and f"{path}:" in err
