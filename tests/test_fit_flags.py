"""`kvplan fit` with estimate's deployment flags (kvplan/fit/flags.py): each candidate split is screened, sized and
checked with the flags as `kvplan estimate` would plan that split with them.

Figures worked by hand elsewhere and reused here:
- Qwen2.5-VL-7B's vision tower in bf16 (tests/test_sglang_groups.py, from its config.json vision_config and SGLang
  0.5.23's qwen2_5_vl.py, the MLP padded to 3,424): 1,354,083,840 B whole, 341,031,936 B split over TP 4, so
  --mm-enable-dp-encoder adds 1,013,051,904 B to each GPU of a TP 4 split (and nothing at TP 1, whole already).
- the same tower as vLLM 0.34 builds it (tests/test_vllm_encoder_dp.py, MLP unpadded 3,420): 1,353,100,288 B whole,
  340,786,048 B over TP 4: --mm-encoder-tp-mode data adds 1,012,314,240 B a GPU at TP 4.
- Qwen3-VL-8B: 16 vision heads, 32 query heads, 8 KV heads (its config.json): TP 32 divides the text model's heads
  (the 8 KV heads replicated) but not the tower's; with the tower whole on every GPU nothing is left to divide
  (tests/test_sglang_groups.py, tests/test_vllm_encoder_dp.py test_*_lifts_the_vision_heads_refusal).
- DeepSeek-V3 with moe_intermediate_size 1,536 (tests/test_vllm_widths_shared.py): at TP 8 the shared expert's
  down_proj gets 1,536 / 8 = 192 inputs a rank, not a multiple of the FP8 block_k 128, unless vLLM 0.34 runs the
  sequence-parallel MoE (EP, tp > 1, dp > 1, an all2all backend in use_sequence_parallel_moe's list), which holds it
  whole (1,536 = 12 x 128); flashinfer_nvlink_two_sided is outside that list, deepep_high_throughput inside.
"""

from __future__ import annotations

import json
import shlex

import pytest

from kvplan_inprocess import kvplan

TOWER_WHOLE_SGLANG, TOWER_TP4_SGLANG = 1_354_083_840, 341_031_936
TOWER_WHOLE_VLLM, TOWER_TP4_VLLM = 1_353_100_288, 340_786_048


def _fit(model: str, *args: str) -> dict:
    out = kvplan("fit", model, "--gpu", "h100", "--context", "8k", "--concurrency", "4", "--kv-dtype", "auto",
                 "--top", "0", *args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _option(data: dict, tp: int, pp: int = 1, dp: int = 1) -> dict | None:
    got = [o for o in data["options"] if (o["tp"], o["pp"], o["dp"]) == (tp, pp, dp)]
    assert len(got) <= 1
    return got[0] if got else None


def _estimate(option: dict) -> dict:
    """The option's own check command (the flags included), run."""
    out = kvplan(*shlex.split(option["estimate_command"])[1:], "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("engine, flag, more", [
    (["--engine", "sglang"], ["--mm-enable-dp-encoder"], TOWER_WHOLE_SGLANG - TOWER_TP4_SGLANG),
    (["--engine", "vllm"], ["--mm-encoder-tp-mode", "data"], TOWER_WHOLE_VLLM - TOWER_TP4_VLLM),
])
def test_encoder_whole_tower_on_every_gpu(engine, flag, more):
    assert TOWER_WHOLE_SGLANG - TOWER_TP4_SGLANG == 1_013_051_904
    assert TOWER_WHOLE_VLLM - TOWER_TP4_VLLM == 1_012_314_240
    before = _fit("qwen2.5-vl-7b", "--max-gpus", "4", *engine)
    after = _fit("qwen2.5-vl-7b", "--max-gpus", "4", *engine, *flag)
    assert _option(after, 4)["weight_bytes_per_gpu"] - _option(before, 4)["weight_bytes_per_gpu"] == more
    assert _option(after, 1)["weight_bytes_per_gpu"] == _option(before, 1)["weight_bytes_per_gpu"]  # whole at TP 1
    assert _option(after, 4)["max_concurrency"] < _option(before, 4)["max_concurrency"]
    assert after["settings"]["deployment_flags"] == flag and before["settings"]["deployment_flags"] == []
    option = _option(after, 4)
    assert " ".join(flag) in option["estimate_command"]
    checked = _estimate(option)  # the check command plans the same weights and engine pool
    assert checked["capacity"]["weight_bytes_per_gpu"] == option["weight_bytes_per_gpu"]
    assert abs(checked["engine"]["max_concurrency"] - option["engine_max_concurrency"]) < 1e-5


@pytest.mark.parametrize("engine, flag", [
    (["--engine", "sglang"], ["--mm-enable-dp-encoder"]),
    (["--engine", "vllm"], ["--mm-encoder-tp-mode", "data"]),
])
def test_encoder_whole_lifts_the_vision_heads_refusal(engine, flag):
    # TP 32: 16 vision heads do not divide; the tower whole on every GPU has none to split
    assert 16 % 32 and not 32 % 32 and not 32 % 8
    assert _option(_fit("qwen3-vl-8b", "--max-gpus", "32", *engine), 32) is None
    assert _option(_fit("qwen3-vl-8b", "--max-gpus", "32", *engine, *flag), 32) is not None


def _deepseek(tmp_path) -> str:
    from kvplan.sources import bundled_config, bundled_index

    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(bundled_config(bundled_index()["deepseek-v3"]), moe_intermediate_size=1536)))
    return str(path)


def _dp2_tp8(path: str, **flags):
    """fit's screen of DeepSeek-V3-like `path` on H200s, --dp-ep under vLLM: (the result, the dp 2 x tp 8 candidate)."""
    from kvplan.fit.run import request_from_options
    from kvplan.fit.search import search

    req = request_from_options(
        model=path, context="4k", concurrency="1", gpu="h200", max_gpus="16", allow=None, kv_dtypes="auto",
        engine="vllm", objective="gpus", prices=None, max_kv_gib=None, max_decode_ms=None, mem_util=None,
        reserve="2GiB", weights="auto", overrides=None, revision=None, quality_first=True, dp_ep=True, **flags)
    result = search(req, verify_top=1)
    (c,) = [c for c in result.candidates if (c.dp, c.tp, c.pp) == (2, 8, 1)]
    return result, c


def test_all2all_backend_changes_the_shared_expert_verdict(tmp_path):
    from kvplan.reports.fit import estimate_command

    path = _deepseek(tmp_path)
    assert 1_536 // 8 == 192 and 192 % 128 == 64 and 1_536 % 128 == 0
    # the default backend (allgather_reducescatter) runs the sequence-parallel MoE: the shared expert whole
    result, default = _dp2_tp8(path)
    assert default.ok
    result.check_engine(default)
    # outside use_sequence_parallel_moe's list: split over TP 8, 192 a rank -> refused at this split only
    result, two_sided = _dp2_tp8(path, all2all_backend="flashinfer_nvlink_two_sided")
    assert two_sided.constraint == "split" and "input_size_per_partition = 192" in two_sided.reason
    (dp2_tp4,) = [c for c in result.candidates if (c.dp, c.tp, c.pp) == (2, 4, 1)]
    assert dp2_tp4.ok  # 1,536 / 4 = 384 = 3 x 128
    tp_only = next(c for c in result.candidates if c.dp == 1 and c.ok)
    assert "--all2all-backend" not in estimate_command(result.request, tp_only)  # TP-only splits never take it
    # DeepEP high throughput is in the list: dp 2 x tp 8 passes again, and its buffers come out of vLLM's KV cache
    # (engines/vllm_a2a.py): fewer sequences than under the default
    result, deepep = _dp2_tp8(path, all2all_backend="deepep_high_throughput")
    assert deepep.ok
    result.check_engine(deepep)
    assert deepep.engine_concurrency < default.engine_concurrency
    # its check command names the backend and plans the same pool (vLLM's figure: one rank's, the replica 2 x it)
    command = estimate_command(result.request, deepep)
    assert "--dp 2 --ep" in command and "--all2all-backend deepep_high_throughput" in command
    checked = _estimate({"estimate_command": command})
    assert abs(2 * checked["engine"]["max_concurrency"] - deepep.engine_concurrency) < 1e-5


def test_redundant_experts_on_the_dp_ep_candidates():
    # DeepSeek-V3 (tests/test_fit_dp_ep.py): 256 routed experts, one expert over its 58 MoE layers
    # 58 x 3 x (7,168 x 2,048 + 16 x 56 x 4) = 2,554,954,752 B (FP8 weights and their 128 x 128 block scales).
    # --redundant-experts 32: 288 physical experts; DP 8 (EP 8) holds 36 a GPU instead of 32: 4 experts more;
    # EP 5 and EP 7 do not divide 288 (vLLM 0.34 FusedMoE: even distribution only) -> refused
    from kvplan.fit.run import request_from_options
    from kvplan.fit.search import search
    from kvplan.reports.fit import estimate_command

    expert = 58 * 3 * (7_168 * 2_048 + 16 * 56 * 4)
    assert expert == 2_554_954_752 and 288 % 8 == 0 and 288 % 5 and 288 % 7

    def screen(**flags):
        req = request_from_options(
            model="deepseek-v3", context="4k", concurrency="8", gpu="h200", max_gpus="8", allow=None,
            kv_dtypes="auto", engine="vllm", objective="gpus", prices=None, max_kv_gib=None, max_decode_ms=None,
            mem_util=None, reserve="2GiB", weights="auto", overrides=None, revision=None, quality_first=True,
            dp_ep=True, **flags)
        result = search(req, verify_top=1)
        return result, {(c.dp, c.tp, c.pp): c for c in result.candidates}

    _, plain = screen()
    result, eplb = screen(redundant_experts="32")
    assert eplb[8, 1, 1].weight_bytes_per_gpu - plain[8, 1, 1].weight_bytes_per_gpu == 4 * expert
    for dp in (5, 7):
        assert plain[dp, 1, 1].constraint != "split"
        assert eplb[dp, 1, 1].constraint == "split" and f"do not divide over EP {dp}" in eplb[dp, 1, 1].reason
    assert "--redundant-experts 32" in estimate_command(result.request, eplb[8, 1, 1])
    assert "--redundant-experts" not in estimate_command(result.request, eplb[1, 8, 1])  # TP only: no EPLB


@pytest.mark.parametrize("args, said", [
    (["--engine", "vllm", "--all2all-backend", "deepep_low_latency"], "needs --dp-ep"),
    (["--engine", "sglang", "--dp-ep", "--all2all-backend", "deepep_low_latency"], "vLLM's flag"),
    (["--engine", "vllm", "--dp-ep", "--moe-a2a-backend", "deepep"], "SGLang's flag"),
    (["--engine", "vllm", "--dp-ep", "--all2all-backend", "nope"], "not one of vLLM 0.34's"),
    (["--engine", "vllm", "--mm-enable-dp-encoder"], "SGLang's flag"),
    (["--engine", "sglang", "--mm-encoder-tp-mode", "data"], "--mm-enable-dp-encoder"),
    (["--mm-encoder-tp-mode", "data"], "vLLM's flag"),
    (["--enable-dp-lm-head"], "SGLang's flag"),
    (["--engine", "vllm", "--gpus-per-node", "0"], "positive integer"),
    (["--engine", "vllm", "--redundant-experts", "8"], "needs --dp-ep"),
    (["--engine", "vllm", "--dp-ep", "--redundant-experts", "-1"], "0 or more"),
    (["--engine", "sglang", "--dp-ep", "--redundant-experts", "auto"], "SGLang"),
])
def test_refused_in_one_line(args, said):
    out = kvplan("fit", "qwen2.5-vl-7b", "--gpu", "h100", "--context", "4k", *args)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and said in lines[0], out.stderr
