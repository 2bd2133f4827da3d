"""`kvplan fit --dp-ep` with pipeline stages: dp x tp x pp splits (vLLM 0.34 takes --data-parallel-size with
--pipeline-parallel-size; capacity/experts_pp.py, tests/test_vllm_dp_pp.py for the sources).

Qwen3-30B-A3B's routed experts R = 48 layers x 128 experts x 3 x 2,048 x 768 x 2 B = 57,982,058,496 B; at --pp 2 a
GPU holds R / 2 of them (a total without a tensor table split evenly over the stages), at --dp 2 --pp 2 + EP each
stage's half is split over its 2 GPUs: R / 4 = 14,495,514,624 B less a GPU than the 1 x 2 split.
"""

from __future__ import annotations

import json
import shlex

from kvplan_inprocess import estimate_json, kvplan

R = 48 * 128 * 3 * 2_048 * 768 * 2


def _fit(*args: str) -> dict:
    out = kvplan("fit", "qwen3-30b-a3b", "--context", "32k", "--gpu", "h200", "--max-gpus", "4", "--top", "0",
                 "--kv-dtype", "auto", "--concurrency", "10", *args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_dp2_pp2_is_searched_and_ranked():
    data = _fit("--dp-ep")
    by_split = {(o["dp"], o["tp"], o["pp"]): o for o in data["options"]}
    dp_pp = by_split[(2, 1, 2)]
    assert dp_pp["ep"] is True and dp_pp["gpus"] == 4
    assert R // 4 == 14_495_514_624
    assert by_split[(1, 1, 2)]["weight_bytes_per_gpu"] - dp_pp["weight_bytes_per_gpu"] == 14_495_514_624
    # its check command carries --pp and plans the same layout
    cmd = dp_pp["estimate_command"]
    assert "--pp 2" in cmd and "--dp 2 --ep" in cmd
    checked = json.loads(kvplan(*shlex.split(cmd)[1:], "--format", "json").stdout)
    assert checked["budgets"]["ok"] is True and checked["max_concurrency"] == dp_pp["max_concurrency"]
    assert (checked["capacity"]["dp"], checked["capacity"]["pp"]) == (2, 2)


def test_under_vllm_the_engine_figure_is_estimates():
    data = _fit("--dp-ep", "--engine", "vllm")
    o = next(o for o in data["options"] if (o["dp"], o["tp"], o["pp"]) == (2, 1, 2))
    est = estimate_json("qwen3-30b-a3b", "--context", "32k", "--gpu", "h200", "--dp", "2", "--ep", "--pp", "2",
                        "--engine", "vllm", "--mem-util", "1")
    # one DP rank's pool (at --mem-util 1, as test_fit_dp_ep.py checks fit's vLLM figure): the replica serves 2 x it
    assert abs(o["engine_max_concurrency"] - 2 * est["engine"]["max_concurrency"]) < 1e-5
