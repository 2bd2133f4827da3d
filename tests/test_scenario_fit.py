"""`kvplan plan SCENARIO --fit` with a scenario's engine section and deployment flags (docs/scenarios.md, "Engine
and parallelism"; docs/fit.md "From a scenario"): the search `kvplan fit` runs with the same settings.

Hand arithmetic (bf16 = 2 B):
  DeepSeek-V3 (MLA): one 576-wide latent (kv_lora_rank 512 + qk_rope_head_dim 64) a token and layer, 576 x 2 B =
    1,152 B, 61 layers, whole on every rank (MLA has one latent "head"). The bundled deepseek-dp-ep: 256 sequences of
    8,192 + 1,024 = 9,216 tokens, max_kv_gib_per_gpu 16 (= 17,179,869,184 B).
    - dp 5 x tp 1 x pp 2 + EP (10 GPUs): a DP rank holds ceil(256 / 5) = 52 sequences; vLLM's pipeline split of 61
      layers over 2 stages is 31 + 30 (vllm/distributed/utils.py get_pp_indices: 61 // 2 = 30 each, the remaining
      layer to the first stage), so the fullest GPU holds 52 x 9,216 x 31 x 1,152 = 17,114,333,184 B (15.94 GiB).
    - dp 10 x tp 1 + EP (10 GPUs): ceil(256 / 10) = 26 sequences x 9,216 x 61 x 1,152 = 16,838,295,552 B (15.68 GiB).
    - fewer GPUs miss 16 GiB, e.g. dp 9: 29 x 9,216 x 61 x 1,152 = 18,781,175,808 B; dp 4 x pp 2: 64 x 9,216 x 31 x
      1,152 = 21,063,794,688 B; dp 3 x pp 3: 86 x 9,216 x 21 x 1,152 = 19,173,998,592 B; tp / pp only, pp 9 (61 ->
      7 layers a stage): 256 x 9,216 x 7 x 1,152 = 19,025,362,944 B; so the fewest GPUs that meet it is 10, found
      only because a scenario's dp searches fit's DP + EP splits (--dp-ep) and its 16 GPUs raise --max-gpus 8 to 16.
  SGLang's --enable-dp-lm-head (vocab_parallel_embedding.py use_attn_tp_group): the LM head, 129,280 x 7,168 x 2 B =
    1,853,358,080 B, split over the attention TP group instead of all dp x tp GPUs. On dp 8 x attention tp 1 a GPU
    holds all of it instead of 1/8: + 1,853,358,080 x 7 / 8 = 1,621,688,320 B a GPU; on dp 4 x attention tp 2, 1/2
    instead of 1/8: + 1,853,358,080 x 3 / 8 = 695,009,280 B.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace

from kvplan.workload import loader

SGLANG = """\
name: sg-dp-lm-head
model: deepseek-v3
deployment:
  gpu: h200
  tp: 8
  dp: 8
{flag}engine:
  name: sglang
workload:
  prompt_tokens: 8k
  output_tokens: 1k
  concurrency: 64
budgets:
  max_kv_gib_per_gpu: 16
"""


def write(tmp_path, text: str, name: str = "s.yaml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def json_of(cli, *args):
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_dp_ep_scenario_fit_searches_dp_ep_splits_under_vllm(cli):
    fit = json_of(cli, "plan", "deepseek-dp-ep", "--fit")["fits"][0]
    same = json_of(cli, "fit", "deepseek-v3", "--engine", "vllm", "--dp-ep", "--max-gpus", "16", "-c", "9216",
                   "-n", "256", "--kv-dtype", "auto", "--max-kv-gib", "16")
    assert fit["engine"]["name"] == "vllm"
    assert fit["options"] == same["options"] and fit["searched"] == same["searched"]
    assert min(o["gpus"] for o in fit["options"]) == 10
    h200 = {(o["dp"], o["tp"], o["pp"]): o for o in fit["options"] if o["gpu"] == "h200" and o["ep"]}
    assert h200[(5, 1, 2)]["kv_bytes_per_gpu"] == 52 * 9216 * 31 * 1152 == 17_114_333_184
    assert h200[(10, 1, 1)]["kv_bytes_per_gpu"] == 26 * 9216 * 61 * 1152 == 16_838_295_552
    assert "--dp 5 --ep" in h200[(5, 1, 2)]["estimate_command"]


def test_dp_ep_scenario_fit_has_no_ignored_line(cli):
    code, out, err = cli("plan", "deepseek-dp-ep", "--fit")
    assert code == 0, err
    assert "not searched by --fit" not in out and "not used by --fit" not in out


def test_sglang_flag_of_a_scenario_is_fit_s_flag(tmp_path, cli):
    path = write(tmp_path, SGLANG.format(flag="  enable_dp_lm_head: true\n"))
    fit = json_of(cli, "plan", path, "--fit")["fits"][0]
    same = json_of(cli, "fit", "deepseek-v3", "--engine", "sglang", "--dp-ep", "-c", "9216", "-n", "64",
                   "--kv-dtype", "auto", "--max-kv-gib", "16", "--enable-dp-lm-head")
    assert fit["engine"]["name"] == "sglang"
    assert fit["options"] == same["options"]
    assert all("--enable-dp-lm-head" in o["estimate_command"] for o in fit["options"])


def test_sglang_flag_moves_the_lm_head_weights_of_each_dp_split(tmp_path):
    from kvplan.capacity.gpus import lookup
    from kvplan.fit.search import search
    from kvplan.workload.fit import request_for

    def weights_by_split(flag: str) -> dict:
        resolved = loader.resolve(loader.read(write(tmp_path, SGLANG.format(flag=flag))))
        req = replace(request_for(resolved), gpus=(lookup("h200"),))
        return {(c.dp, c.tp): c.weight_bytes_per_gpu for c in search(req, verify_top=1).candidates
                if c.dp > 1 and c.ep}

    with_flag, without = weights_by_split("  enable_dp_lm_head: true\n"), weights_by_split("")
    assert with_flag[(8, 1)] - without[(8, 1)] == 1_853_358_080 * 7 // 8 == 1_621_688_320
    assert with_flag[(4, 2)] - without[(4, 2)] == 1_853_358_080 * 3 // 8 == 695_009_280


def test_engine_key_fit_does_not_take_is_named(tmp_path, cli):
    path = write(tmp_path, SGLANG.format(flag="").replace("  name: sglang\n", "  name: sglang\n  max_num_seqs: 64\n"))
    code, out, err = cli("plan", path, "--fit")
    assert code == 0, err
    assert "engine.max_num_seqs not used by --fit" in " ".join(out.split())


def test_list_json_counts_a_dp_scenario_s_gpus(cli):
    items = {s["name"]: s for s in json_of(cli, "plan", "--list")["scenarios"]}
    # vLLM's --data-parallel-size 16 of tp 1 x pp 1: 16 GPUs
    assert {k: items["deepseek-dp-ep"][k] for k in ("gpus", "tp", "pp", "dp", "engine")} == \
        {"gpus": 16, "tp": 1, "pp": 1, "dp": 16, "engine": "vllm"}
    # rag-128k: tp 4, no engine section: 4 GPUs
    assert {k: items["rag-128k"][k] for k in ("gpus", "tp", "pp", "dp", "engine")} == \
        {"gpus": 4, "tp": 4, "pp": 1, "dp": 1, "engine": None}


def test_tp_ep_scenario_says_fit_searches_no_such_layout(tmp_path, cli):
    # ep: true on dp 1 is vLLM's TP + EP; fit's options are tp x pp (experts by TP) and dp > 1 with EP (--dp-ep)
    path = write(tmp_path, SGLANG.format(flag="").replace("  dp: 8\n", "  ep: true\n").replace("sglang", "vllm"))
    code, out, err = cli("plan", path, "--fit")
    assert code == 0, err
    assert "deployment.ep without dp (TP + EP) is not a layout --fit searches" in " ".join(out.split())
