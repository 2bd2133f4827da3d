"""`kvplan fit --engine sglang` where the KV dtype does not move SGLang's figure, and a pure state-space model's token
pool. Read in sglang 0.5.23 (python/sglang/srt/...):
- DeepSeek-V4: arg_groups/overrides.py _deepseek_v4_kv_cache_dtype (auto = fp8_e4m3) and DSV4PoolConfigurator
  (model_executor/pool_configurator.py) size the pool in KVLayout.V4 whatever kvplan's kv dtype; deepseek_v4_hook.py
  caps max_running_requests at 256.
- Mamba (pure SSM): pool_configurator.DefaultPoolConfigurator._zero_kv_max_tokens: the token pool is
  --max-total-tokens (kept by kv_cache_configurator._apply_token_constraints), else context_len; --emit sglang sets it
  for the requests asked for, at most the state pool's (resolve_max_num_reqs: states // 3).
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kvplan.cli.app import app


def _fit(*args):
    r = CliRunner().invoke(app, ["fit", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_dsv4_sglang_column_is_its_own_fp8_layout_for_both_kv_dtypes():
    data = _fit("deepseek-v4-flash", "--engine", "sglang", "--gpu", "h200", "-c", "32k", "-n", "64")
    by = {(o["kv_dtype"], o["tp"]): o for o in data["options"]}
    # 4 x h200 holds more than the 256 requests deepseek_v4_hook.py caps SGLang at, under either kv dtype
    assert by[("bf16", 4)]["engine_max_concurrency"] == by[("fp8_e4m3", 4)]["engine_max_concurrency"] == 256
    assert {o["engine_kv_dtype"] for o in data["options"]} == {"fp8_e4m3"}
    assert by[("bf16", 4)]["max_concurrency"] != by[("fp8_e4m3", 4)]["max_concurrency"]  # the planner's do differ
    assert "same for kv bf16 and kv fp8_e4m3" in data["engine"]["same_kv_layout"]


def test_sglang_column_follows_the_kv_dtype_elsewhere():
    # Llama 3.1 8B: SGLang stores bf16 (auto) or fp8_e4m3 as asked: no note
    data = _fit("llama-3.1-8b", "--engine", "sglang", "--gpu", "h100", "-c", "32k", "-n", "8", "--max-gpus", "2",
                "--top", "0")
    assert {o["engine_kv_dtype"] for o in data["options"]} == {"auto", "fp8_e4m3"}
    assert "same_kv_layout" not in data["engine"]


def test_pure_ssm_fit_sizes_the_token_pool_and_lists_one_kv_dtype():
    # mamba-2.8b on one h200: the state pool runs hundreds of requests (test_sglang_pure_ssm: 892), so the token
    # pool sized for 64 requests of 4,096 tokens (262,144 tokens) holds exactly 64; without it, one.
    data = _fit("mamba-2.8b", "--engine", "sglang", "--gpu", "h200", "-c", "4k", "-n", "64")
    one = [o for o in data["options"] if o["gpus"] == 1]
    assert [o["engine_max_concurrency"] for o in one] == [64]
    # no K/V cache: the fp8 KV dtype changes nothing, so it is not a second option
    assert {o["kv_dtype"] for o in data["options"]} == {"fp32"}
    assert any(s["set"] == "kv fp8_e4m3" and "no K/V cache" in s["why"] for s in data["skipped_technique_sets"])
