"""`kvplan fit --dp-ep --engine sglang`: SGLang 0.5.23's attention-DP splits (--tp T --dp N --enable-dp-attention,
kvplan.engines.sglang_dp) in the search, each as `kvplan estimate --tp T --dp N [--ep] --engine sglang` plans it.

Figures from test_sglang_dp.py (DeepSeek-V3): at --tp 8 --dp 8 one GPU holds 577,207,841,728 B less than at TP 1
(1/8 of the routed experts, dense MLPs, shared experts and LM head); the MLA latent, 61 x 576 x 2 B a token, is whole
in each DP rank's pool. An H200's driver total is 139.81 GiB (capacity/gpus.py); fit's --mem-util 0.9, --reserve 2 GiB.
"""

from __future__ import annotations

import json
import shlex

from kvplan_inprocess import estimate_json, kvplan

GIB = 1 << 30
DP8_SAVING = 577_207_841_728
SEQ_32K = 61 * (512 + 64) * 2 * 32_768


def _fit(model: str, *args: str) -> dict:
    out = kvplan("fit", model, "--context", "32k", *args, "--dp-ep", "--engine", "sglang", "--top", "0",
                 "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_fit_sglang_dp8_option_is_estimates_layout():
    data = _fit("deepseek-v3", "--gpu", "h200", "--concurrency", "50", "--kv-dtype", "auto")
    assert "dp_ep_skipped" not in data
    dp8 = [o for o in data["options"] if o["dp"] == 8]
    assert len(dp8) == 1
    o = dp8[0]
    # SGLang --tp 8 --dp 8: 8 GPUs, attention TP 1; 8 divides the 256 routed experts, so --ep-size 8
    assert (o["gpus"], o["tp"], o["pp"], o["ep"]) == (8, 1, 1, True)
    whole = estimate_json("deepseek-v3", "--context", "32k", "--engine", "sglang", "--gpu", "h200",
                          "--gpu-memory", "2TB")["capacity"]["weight_bytes_per_gpu"]
    assert o["weight_bytes_per_gpu"] == whole - DP8_SAVING
    # each of the 8 ranks: 0.9 of 139.81 GiB less its weights and the reserve, in whole 32k latents
    per_rank = (int(int(139.81 * GIB) * 0.9) - o["weight_bytes_per_gpu"] - 2 * GIB) // SEQ_32K
    assert o["max_concurrency"] == 8 * per_rank >= 50
    assert o["kv_bytes_per_gpu"] == -(-50 // 8) * SEQ_32K  # 7 of the 50 sequences on the fullest rank
    assert " --tp 8 --pp 1 --dp 8 --ep " in o["estimate_command"] and o["estimate_command"].endswith("--engine sglang")
    # the option's own check command plans the same layout: the same concurrency, SGLang's 8 pools
    own = kvplan(*shlex.split(o["estimate_command"])[1:], "--format", "json")
    assert own.returncode == 0, own.stderr
    est = json.loads(own.stdout)
    assert est["max_concurrency"] == o["max_concurrency"] and est["budgets"]["ok"] is True
    assert est["engine"]["attn_tp"] == 1
    assert abs(o["engine_max_concurrency"] - 8 * est["engine"]["max_concurrency"]) < 1e-5
    # --tp 8 --dp 4: attention TP 2, the same 8 GPUs
    dp4 = next(o for o in data["options"] if o["dp"] == 4)
    assert (dp4["gpus"], dp4["tp"]) == (8, 2) and " --tp 8 --pp 1 --dp 4 --ep " in dp4["estimate_command"]


def test_fit_sglang_ep_only_where_the_gpus_divide_the_experts():
    # DeepSeek-V2: 160 routed experts; --ep-size 6 is refused by FusedMoE (160 % 6), so T = 6 splits them (MoE TP 6)
    data = _fit("deepseek-v2", "--gpu", "h200", "--concurrency", "1", "--max-gpus", "8", "--kv-dtype", "auto")
    dp = {(c["dp"], c["tp"]): c["ep"] for c in data["options"] if c["dp"] > 1}
    assert dp[(2, 4)] is True and dp[(8, 1)] is True  # 8 divides 160
    # 5 divides the 160 experts, but the dense MLP (layer 0, DeepseekV2MLP over all --tp 5 GPUs) of 12,288 does not:
    # 12,288 % 5 = 3, MergedColumnParallelLinear asserts (engines/sglang_widths.py): not an option
    assert (5, 1) not in dp
    assert dp[(6, 1)] is False and dp[(3, 2)] is False  # 6 does not (and attention TP 3 splits no 128 heads)
    assert (2, 3) not in dp
    six = next(c for c in data["options"] if (c["dp"], c["tp"]) == (3, 2))
    assert " --tp 6 --pp 1 --dp 3 --kv-dtype" in six["estimate_command"]
    assert estimate_json(*shlex.split(six["estimate_command"])[2:])["max_concurrency"] == six["max_concurrency"]


def test_fit_sglang_unread_architecture_says_why():
    out = kvplan("fit", "mixtral-8x7b", "--context", "8k", "--gpu", "h100", "--dp-ep", "--engine", "sglang")
    assert out.returncode == 0, out.stderr
    assert "--dp-ep: no data-parallel + expert-parallel split searched" in out.stdout
    assert "not MixtralForCausalLM" in out.stdout
