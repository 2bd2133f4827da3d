"""`kvplan fit --dp-ep`: data-parallel attention + expert-parallel splits of a MoE model in the search.

DeepSeek-V3 (see test_dp_ep.py for the shapes): the routed experts R = 654,068,416,512 B; DP 8 + EP holds 32 of
the 256 experts a GPU, 7/8 R less than one GPU holding the whole model; a 32k sequence's MLA latent is
61 x 576 x 2 B x 32,768 = 2,302,672,896 B on every GPU (not split by TP or DP). An H200's driver total is
139.81 GiB (capacity/gpus.py, a logged figure); fit's default --mem-util 0.9 and --reserve 2 GiB.
"""

from __future__ import annotations

import json

from kvplan_inprocess import estimate_json, kvplan

GIB = 1 << 30
R = 58 * 256 * 3 * (7_168 * 2_048 + (2_048 // 128) * (7_168 // 128) * 4)
SEQ_32K = 61 * (512 + 64) * 2 * 32_768


def _fit(*args: str) -> dict:
    out = kvplan("fit", "deepseek-v3", "--context", "32k", "--gpu", "h200", *args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_fit_proposes_dp8_ep_with_estimates_concurrency():
    data = _fit("--concurrency", "100", "--dp-ep", "--top", "0", "--kv-dtype", "auto")
    dp8 = [o for o in data["options"] if o["dp"] == 8]
    assert len(dp8) == 1
    o = dp8[0]
    assert (o["gpus"], o["tp"], o["pp"], o["ep"]) == (8, 1, 1, True)
    # weights: the whole model on one GPU less 7/8 of the routed experts
    whole = estimate_json("deepseek-v3", "--context", "32k", "--kv-memory", "10GiB")["capacity"]["weight_bytes_per_gpu"]
    assert o["weight_bytes_per_gpu"] == whole - R * 7 // 8
    # each of the 8 ranks: 0.9 of the H200's 139.81 GiB, less its weights and the 2 GiB reserve, in 32k latents
    per_rank = (int(int(139.81 * GIB) * 0.9) - o["weight_bytes_per_gpu"] - 2 * GIB) // SEQ_32K
    assert o["max_concurrency"] == 8 * per_rank >= 100
    assert o["kv_bytes_per_gpu"] == -(-100 // 8) * SEQ_32K  # 13 of the 100 sequences on the fullest rank
    assert "--dp 8 --ep" in o["estimate_command"]
    est = estimate_json("deepseek-v3", "--context", "32k", "--gpu", "h200", "--dp", "8", "--ep")
    assert est["max_concurrency"] == o["max_concurrency"]
    # the option's own check command plans the same layout and passes its budgets
    import shlex

    own = kvplan(*shlex.split(o["estimate_command"])[1:], "--format", "json")
    assert own.returncode == 0, own.stderr
    checked = json.loads(own.stdout)
    assert checked["budgets"]["ok"] is True and checked["max_concurrency"] == o["max_concurrency"]
    assert (checked["capacity"]["dp"], checked["capacity"]["ep"]) == (8, True)


def test_fit_dp_ep_under_vllm_matches_estimate():
    data = _fit("--concurrency", "100", "--dp-ep", "--top", "0", "--engine", "vllm", "--kv-dtype", "auto")
    o = next(o for o in data["options"] if o["dp"] == 8)
    est = estimate_json("deepseek-v3", "--context", "32k", "--gpu", "h200", "--dp", "8", "--ep", "--engine", "vllm",
                        "--mem-util", "1")
    # vLLM's figure is one rank's pool: the replica serves 8 x it
    assert abs(o["engine_max_concurrency"] - 8 * est["engine"]["max_concurrency"]) < 1e-5


def test_without_the_option_fit_searches_no_dp_split():
    data = _fit("--concurrency", "100", "--top", "0")
    assert data["options"] and all(o["dp"] == 1 and o["ep"] is False for o in data["options"])
    assert all("--dp" not in o["estimate_command"] for o in data["options"])
    # 8 GPUs at most: 20 TP x PP splits (sum of the divisors of 1..8) x 2 KV dtypes (auto, fp8) on one GPU kind
    assert data["searched"] == 20 * 2
    # with it: the DP + EP splits dp >= 2, dp x tp x pp = n <= 8, each dp | n with the d(n / dp) (tp, pp) splits of
    # the rest: n = 2..8: 1 + 1 + (2 + 1) + 1 + (2 + 2 + 1) + 1 + (3 + 2 + 1) = 18 (12 of them pp 1)
    assert _fit("--concurrency", "100", "--dp-ep", "--top", "0")["searched"] == (20 + 18) * 2


def test_dp_ep_splits_count_in_the_search_limit():
    # --max-gpus 1024: the TP x PP splits are the divisors of each n <= 1024, the DP + EP splits each divisor dp >= 2
    # of n with every (tp, pp) split of n / dp (vLLM's DP with PP; 6,238 of them pp 1)
    tp_pp = sum(1 for n in range(1, 1025) for d in range(1, n + 1) if n % d == 0)
    dp_ep = sum(1 for n in range(2, 1025) for d in range(2, n + 1) if n % d == 0
                for pp in range(1, n // d + 1) if (n // d) % pp == 0)
    assert tp_pp == 7_262
    allow = ("--allow", "kivi,evict,window,pyramid,prefix,offload,page,quest,gqa")
    # without --dp-ep this grid is 2 x 7,262 x its technique sets; with it the DP + EP splits count too and the
    # product passes the 4,000,000 limit: refused before any work, one line
    out = kvplan("fit", "deepseek-v3", "--gpu", "h200", "--max-gpus", "1024", "--dp-ep", *allow)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert f"{tp_pp + dp_ep:,} TP/PP and DP + EP splits" in lines[0]
    sets = int(lines[0].split(" KV dtypes x ")[1].split()[0].replace(",", ""))
    assert 2 * tp_pp * sets <= 4_000_000 < 2 * (tp_pp + dp_ep) * sets


def test_dense_model_dp_ep_says_why():
    out = kvplan("fit", "llama-3.1-8b", "--context", "8k", "--gpu", "h100", "--dp-ep")
    assert out.returncode == 0, out.stderr
    assert "no routed experts" in out.stdout
