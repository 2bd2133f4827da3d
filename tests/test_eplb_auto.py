"""`--redundant-experts auto`: vLLM 0.34's default num_redundant_experts when --enable-eplb leaves it unset.

config/parallel.py ParallelConfig.compute_eplb_num_redundant_experts (called by config/vllm.py with
model_config.get_num_experts()): with EPLB on and R unset, R = (EP - E % EP) % EP, EP = TP x PCP x DP, the least R
that makes E + R divide by EP.

DeepSeek-V3: 256 routed experts; Qwen3-30B-A3B: 128.
"""

from __future__ import annotations

import pytest

from kvplan_inprocess import estimate_json, refused_line as _refused

@pytest.mark.parametrize("dp, tp, want", [
    (8, 1, 0),  # 256 % 8 = 0: R 0 (EPLB on, no redundant expert)
    (3, 1, 2),  # 256 % 3 = 1: (3 - 1) % 3 = 2, 258 / 3 = 86 a GPU
    (3, 2, 2),  # EP 6: 256 % 6 = 4: (6 - 4) % 6 = 2, 258 / 6 = 43
    (5, 1, 4),  # 256 % 5 = 1: 4, 260 / 5 = 52
])
def test_deepseek_v3_default(dp, tp, want):
    got = estimate_json("deepseek-v3", "--context", "32k", "--kv-memory", "10GiB", "--dp", str(dp), "--tp", str(tp),
                        "--ep", "--redundant-experts", "auto")
    assert got["capacity"]["redundant_experts"] == want


def test_auto_places_as_its_r():
    # DP 3 + EP: R 2, (256 + 2) / 3 = 86 experts a GPU, placed as R 2 given
    args = ("deepseek-v3", "--context", "32k", "--kv-memory", "10GiB", "--dp", "3", "--ep")
    auto = estimate_json(*args, "--redundant-experts", "auto")["capacity"]["weight_bytes_per_gpu"]
    given = estimate_json(*args, "--redundant-experts", "2")["capacity"]["weight_bytes_per_gpu"]
    assert auto == given


def test_emits_enable_eplb_alone():
    # Qwen3-30B-A3B at DP 3: 128 % 3 = 2, R = 1; vLLM computes it itself: --enable-eplb, no --eplb-config
    got = estimate_json("qwen3-30b-a3b", "--kv-memory", "10GiB", "--dp", "3", "--ep", "--redundant-experts", "auto",
                        "--emit", "vllm")
    argv = got["emit"]["argv"]
    assert got["capacity"]["redundant_experts"] == 1
    assert "--enable-eplb" in argv and "--eplb-config" not in argv


def test_auto_refusals():
    assert "without --ep" in _refused("deepseek-v3", "--dp", "8", "--redundant-experts", "auto")
    assert "SGLang" in _refused("deepseek-v3", "--tp", "8", "--ep", "--engine", "sglang", "--redundant-experts",
                                "auto")
    assert "integer or auto" in _refused("deepseek-v3", "--dp", "8", "--ep", "--redundant-experts", "some")


def test_redundant_experts_above_the_parse_limit_is_named_as_such(cli):
    # a 20-digit R is an integer: the line says it is above kvplan's limit, not that it is no integer
    code, out, err = cli("estimate", "qwen3-30b-a3b", "--gpu", "h100", "--tp", "2", "--dp", "2", "--ep",
                         "--redundant-experts", "99999999999999999999")
    assert code == 2 and "Traceback" not in err
    assert "99,999,999,999,999,999,999 is above the limit of 999,999,999" in err, err
