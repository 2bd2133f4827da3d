"""A scenario that names the serving engine and estimate's deployment options (docs/scenarios.md, engine section):
planned as `kvplan estimate` plans the same settings, its engine section the same, its budgets still checked.

Hand arithmetic (bf16 = 2 B, K and V = 2 tensors):
  Llama-3.1-8B: 8 KV heads x 128 x 2 x 2 B = 4,096 B per token and layer, 32 layers. With kv_memory 20 GiB vLLM's
    page of B tokens is B x 4,096 B a layer and a block holds all 32 layers' pages (vLLM 0.34
    v1/core/kv_cache_planning.py: num_blocks = available_memory // bytes_per_block): 20 GiB // (32 x 64 x 4,096)
    = 2,560 blocks of 64. A 3,500-token request takes cdiv(3,500, 64) = 55 blocks: 2,560 / 55 = 46.55 requests
    (kv_cache_utils.py get_max_concurrency_for_kv_cache_config: num_blocks / num_blocks_per_request); kvplan's
    own pool: 20 GiB / (3,500 x 131,072 B) = 46.8 -> 46 sequences.
  DeepSeek-V3 (MLA): one 576-wide latent (512 + 64 rope) a token and layer, 1,152 B; vLLM's MLA block of 64 on
    Hopper: a page of 64 x 1,152 = 73,728 B, 61 layers: 4,497,408 B a block. A 9,216-token request takes
    9,216 / 64 = 144 blocks; 16 DP ranks with one pool each.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from kvplan.workload import loader

GIB = 1024**3

LLAMA = """\
name: e1
model: llama-3.1-8b
deployment:
  gpu: h100
workload:
  prompt_tokens: 3000
  output_tokens: 500
  concurrency: 64
engine:
  name: vllm
  kv_memory: 20GiB
"""


def write(tmp_path, text: str, name: str = "s.yaml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def json_of(cli, *args):
    code, out, err = cli(*args, "--format", "json")
    return code, json.loads(out), err


def test_engine_scenario_plans_as_estimate_with_the_same_settings(tmp_path, cli):
    path = write(tmp_path, LLAMA + "budgets:\n  min_concurrency: 46\n")
    code, doc, err = json_of(cli, "plan", path)
    assert code == 0, err
    plan = doc["scenarios"][0]["plan"]
    code, estimate, err = json_of(cli, "estimate", "llama-3.1-8b", "-c", "3500", "-b", "64", "--gpu", "h100",
                                  "--engine", "vllm", "--kv-memory", "20GiB")
    assert code == 0, err
    assert plan["engine"] == estimate["engine"]
    engine = plan["engine"]
    assert engine["kv_memory_bytes"] == 20 * GIB
    assert engine["page_bytes"] == engine["block_size"] * 4_096
    assert engine["num_blocks"] == 20 * GIB // (32 * engine["block_size"] * 4_096)
    if engine["block_size"] == 64:
        assert engine["num_blocks"] == 2_560 and engine["max_concurrency"] == pytest.approx(2_560 / 55, abs=1e-5)
    # budgets still apply: the fewer of kvplan's 46 and vLLM's 46.55
    check = doc["scenarios"][0]["budgets"]["checks"][0]
    assert check["key"] == "min_concurrency" and check["ok"] and check["actual"] == 46


def test_engine_emit_prints_estimate_launch_command_verbatim(tmp_path, cli):
    path = write(tmp_path, LLAMA + "  emit: vllm\n")
    code, doc, err = json_of(cli, "plan", path)
    assert code == 0, err
    code, estimate, err = json_of(cli, "estimate", "llama-3.1-8b", "-c", "3500", "-b", "64", "--gpu", "h100",
                                  "--engine", "vllm", "--kv-memory", "20GiB", "--emit", "vllm")
    assert doc["scenarios"][0]["plan"]["emit"] == estimate["emit"]
    code, out, err = cli("plan", path)
    assert "--max-model-len 3500" in out  # the launch line's flags are vLLM's, not the scenario's words


def test_min_concurrency_needs_the_engine_pool_too(tmp_path, cli):
    # 47 sequences: neither kvplan's pool (46) nor vLLM's (46.55) holds them
    path = write(tmp_path, LLAMA + "budgets:\n  min_concurrency: 47\n")
    code, doc, _ = json_of(cli, "plan", path)
    assert code == 1 and not doc["ok"]


def test_the_bundled_dp_ep_scenario_is_estimate_with_dp_16_ep(cli):
    code, doc, err = json_of(cli, "plan", "deepseek-dp-ep")
    assert code == 0, err
    scenario = doc["scenarios"][0]
    code, estimate, err = json_of(cli, "estimate", "deepseek-v3", "-c", "9216", "-b", "256", "--gpu", "h200",
                                  "--tp", "1", "--dp", "16", "--ep", "--engine", "vllm")
    assert code == 0, err
    engine = scenario["plan"]["engine"]
    assert engine == estimate["engine"]
    assert scenario["plan"]["capacity"] == estimate["capacity"]
    assert (engine["block_size"], engine["page_bytes"], engine["bytes_per_block"]) == (64, 73_728, 4_497_408)
    assert engine["num_blocks"] == engine["kv_memory_bytes"] // 4_497_408
    assert engine["max_concurrency"] == pytest.approx(engine["num_blocks"] / 144, abs=1e-5)
    check = {c["key"]: c for c in scenario["budgets"]["checks"]}["min_concurrency"]
    assert check["actual"] == pytest.approx(16 * engine["num_blocks"] / 144, abs=1e-4)  # the replica's 16 pools


def test_sglang_dp_is_its_attention_dp(tmp_path, cli):
    # SGLang --tp 16 --dp 16: 16 GPUs (attention TP 1), not vLLM's 16 x 16
    path = write(tmp_path, """\
        model: deepseek-v3
        deployment: {gpu: h200, tp: 16, dp: 16, ep: true}
        workload: {prompt_tokens: 8k, output_tokens: 1k, concurrency: 64}
        engine: {name: sglang}
        """)
    code, doc, err = json_of(cli, "plan", path)
    assert code == 0, err
    code, estimate, err = json_of(cli, "estimate", "deepseek-v3", "-c", "9216", "-b", "64", "--gpu", "h200",
                                  "--tp", "16", "--dp", "16", "--ep", "--engine", "sglang")
    assert doc["scenarios"][0]["plan"]["engine"] == estimate["engine"]
    assert doc["scenarios"][0]["plan"]["capacity"]["gpus"] == 16


@pytest.mark.parametrize("edit, line, words", [
    (("name: vllm", "name: tgi"), 10, "engine.name: engine 'tgi' is not one of"),
    (("name: vllm", "name: vllm@0.99"), 10, "engine.name: vLLM 0.99 is newer"),
    (("  gpu: h100", "  gpu: h100\n  dp: 0"), 5, "deployment.dp: expected a positive integer, got 0"),
    (("  gpu: h100", "  gpu: h100\n  ep: maybe"), 5, "deployment.ep: expected true or false"),
    (("  gpu: h100", "  gpu: h100\n  moe_a2a_backend: deepep"), 5,
     "deployment.moe_a2a_backend: moe_a2a_backend is SGLang's flag: it needs engine sglang"),
    (("  name: vllm", "  nmae: vllm"), 10, "unknown key 'nmae' in engine (did you mean 'name'?)"),
    (("  kv_memory: 20GiB", "  kv_memory: 20"), 11, "engine.kv_memory: expected a size with a unit"),
])
def test_a_bad_engine_key_or_value_is_one_line_naming_file_line_and_key(tmp_path, cli, edit, line, words):
    path = write(tmp_path, LLAMA.replace(*edit))
    code, out, err = cli("plan", path)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    assert lines[0].startswith(f"kvplan: error: {path}:{line}: {words}"), lines[0]


def test_a_setting_refused_once_the_model_is_known_names_its_key(tmp_path, cli):
    # 256 routed experts + 5 redundant = 261 do not divide over EP 16 (vLLM FusedMoE's even split)
    path = write(tmp_path, """\
        model: deepseek-v3
        deployment:
          gpu: h200
          dp: 16
          ep: true
          redundant_experts: 5
        workload: {prompt_tokens: 8k, output_tokens: 1k, concurrency: 64}
        engine: {name: vllm}
        """)
    code, out, err = cli("plan", path)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"kvplan: error: {path}:6: deployment.redundant_experts: redundant_experts 5: "
                               "256 + 5 = 261 physical experts do not divide over EP 16"), lines[0]


def test_a_split_the_engine_refuses_names_the_tp_line(tmp_path, cli):
    # DeepSeek-V3's routed experts (2,048 wide) over tp 8 x dp 3 = 24 GPUs without ep: 2,048 % 24 = 8, refused by
    # vLLM's FusedMoEConfig assert (engines/vllm_widths.py); the split is the scenario's tp / dp, not its engine line
    path = write(tmp_path, """\
        model: deepseek-v3
        deployment:
          gpu: h200
          tp: 8
          dp: 3
        workload: {prompt_tokens: 1k, output_tokens: 1k, concurrency: 8}
        engine: {name: vllm}
        """)
    code, out, err = cli("plan", path)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"kvplan: error: {path}:4: deployment.tp: tp 8 with engine vllm: "), lines[0]
    assert "2,048 % 24 = 8" in lines[0]


def test_max_tpot_is_refused_under_dp_ep_where_no_floor_is_modelled(tmp_path, cli):
    path = write(tmp_path, """\
        model: deepseek-v3
        deployment: {gpu: h200, dp: 16, ep: true}
        workload: {prompt_tokens: 8k, output_tokens: 1k, concurrency: 64}
        engine: {name: vllm}
        budgets:
          max_tpot_ms: 50
        """)
    code, out, err = cli("plan", path)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"kvplan: error: {path}:6: budgets.max_tpot_ms: the decode floor is not modelled"), err


def test_scenarios_without_estimate_options_keep_the_engine_free_plan():
    for name in loader.bundled_names():
        scenario = loader.read(name)
        assert bool(scenario.options) == (name == "deepseek-dp-ep"), name
    assert loader.resolve(loader.read("chat-shared-prompt")).request is None
