"""vLLM's profile breakdown and CUDA-graph lines (kvplan/engines/vllm_log.py) and the per-term
comparison `kvplan calibrate` shows (kvplan/engines/vllm_terms.py).

Every expected figure is typed by hand from the quoted line (its source named beside it) or worked
out in the comment from vLLM's own arithmetic (gpu_worker.py determine_available_memory), never read
from kvplan's output. GiB = 2**30 B.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.engines.vllm_log import parse_log, read_log
from kvplan.engines.vllm_terms import compare, estimate_applied, largest_term_gap, logged_terms
from kvplan.engines.vllm_profile import ProfileEstimate

LOGS = Path(__file__).parent / "data" / "vllm_logs"
GIB = 2**30

# vllm-project/vllm PR #21489 (the PR that adds the line; a July 2025 build): "for weight" wording
PR21489 = LOGS / "v010dev_gemma3_4b_b200_breakdown_pr21489.log"

# wtdcode/vllm-backport issue #34 (vitabis, 2026-08-31; 8 x RTX 3090, PP 2 x TP 4): a backport build, quoted
# here for the 0.27+ wording its gpu_worker.py prints unchanged ("consumed memory (weights + non-torch)")
CONSUMED = (
    "(Worker_PP1_TP3 pid=4365) INFO 08-31 15:25:55 [gpu_worker.py:805] Free memory on device (22.93/23.56 GiB) on "
    "startup. Desired GPU memory utilization is (0.935, 22.03 GiB). Actual usage is 19.47 GiB for consumed memory "
    "(weights + non-torch), 0.6 GiB for peak activation, and 0.1 GiB for CUDAGraph memory. Replace "
    "gpu_memory_utilization config with `--kv-cache-memory=1828800984` (1.7 GiB) to fit into requested memory, or "
    "`--kv-cache-memory=2798683648` (2.61 GiB) to fully utilize gpu memory. Current kv cache memory in use is "
    "1.95 GiB.\n"
    "(Worker_PP1_TP2 pid=4364) INFO 08-31 15:25:55 [gpu_worker.py:742] CUDA graph pool memory: 0.1 GiB (actual), "
    "0.58 GiB (estimated), difference: 0.47 GiB (457.5%).\n"
)

# LMCache/LMCache issue #3430 (yangyonggit, 2026-05-28, Qwen3-8B): the CUDA-graph estimate lines of a 0.2x build
ESTIMATE = (
    "(EngineCore pid=4108) INFO 05-28 08:00:24 [gpu_model_runner.py:6063] Profiling CUDA graph memory: "
    "PIECEWISE=51 (largest=512), FULL=35 (largest=256)\n"
    "(EngineCore pid=4108) INFO 05-28 08:00:25 [gpu_model_runner.py:6142] Estimated CUDA graph memory: 0.52 GiB total\n"
    "(EngineCore pid=4108) INFO 05-28 08:00:26 [gpu_worker.py:462] Available KV cache memory: 6.37 GiB\n"
    "(EngineCore pid=4108) INFO 05-28 08:00:26 [gpu_worker.py:477] CUDA graph memory profiling is enabled (default "
    "since v0.21.0). The current --gpu-memory-utilization=0.9764 is equivalent to --gpu-memory-utilization=0.9543 "
    "without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase "
    "--gpu-memory-utilization to 0.9984. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.\n"
)


def test_breakdown_weight_wording_pr21489():
    log = read_log(str(PR21489))
    assert log.breakdown == "weight"
    assert (log.device_free_gib, log.device_total_gib) == (177.66, 178.36)
    assert (log.gpu_memory_utilization, log.requested_gib) == (0.9, 160.53)
    assert (log.breakdown_weights_gib, log.breakdown_activation_gib, log.breakdown_non_torch_gib,
            log.breakdown_cuda_graph_gib) == (8.58, 9.96, 0.07, 0.65)
    # no "Model loading took" line: the breakdown's weight is the load's figure (model_memory_usage)
    assert log.weights_gib == 8.58
    # the driver's total is the GPU's memory for calibrate
    assert log.total_gpu_memory_gib == 178.36 and "driver" in log.total_memory_from
    assert "profile breakdown" in log.found


def test_breakdown_consumed_wording_and_graph_pool():
    log = parse_log(CONSUMED)
    assert log.breakdown == "consumed"
    assert (log.device_free_gib, log.device_total_gib, log.gpu_memory_utilization, log.requested_gib) == (
        22.93, 23.56, 0.935, 22.03)
    assert (log.breakdown_consumed_gib, log.breakdown_activation_gib, log.breakdown_cuda_graph_gib) == (19.47, 0.6, 0.1)
    assert log.breakdown_weights_gib is None and log.breakdown_non_torch_gib is None
    assert log.kv_in_use_gib == 1.95
    assert log.cuda_graph_actual_gib == 0.1  # "CUDA graph pool memory: 0.1 GiB (actual)"


def test_cuda_graph_estimate_lines():
    log = parse_log(ESTIMATE)
    assert log.cuda_graph_modes == {"PIECEWISE": (51, 512), "FULL": (35, 256)}
    assert log.cuda_graph_estimate_gib == 0.52 and log.cuda_graph_estimate_applied is True
    assert estimate_applied(log) is True
    assert log.available_kv_gib == 6.37 and log.breakdown is None and logged_terms(log) is None


def test_refusal_and_older_byte_wordings():
    # vLLM 0.28 v1/worker/utils.py: f"Free memory on device {device} ({free}/{total} GiB) on startup is less than
    # desired GPU memory utilization ({util}, {requested} GiB). ..." (the figures here are an example's)
    log = parse_log("ValueError: Free memory on device cuda:0 (7.06/79.18 GiB) on startup is less than desired GPU "
                    "memory utilization (0.9, 71.26 GiB). Decrease GPU memory utilization or reduce GPU memory used "
                    "by other processes.")
    assert (log.device_free_gib, log.device_total_gib, log.gpu_memory_utilization, log.requested_gib) == (
        7.06, 79.18, 0.9, 71.26)
    assert log.breakdown is None
    # vLLM 0.10.2 gpu_worker.py ends the breakdown "Current kv cache memory in use is {int(bytes)} bytes."
    log = parse_log("Free memory on device (23.08/23.53 GiB) on startup. Desired GPU memory utilization is (0.8, "
                    "18.82 GiB). Actual usage is 8.8 GiB for weight, 1.4 GiB for peak activation, 0.02 GiB for "
                    "non-torch memory, and 0.68 GiB for CUDAGraph memory. Replace gpu_memory_utilization config with "
                    "`--kv-cache-memory=8347223347` to fit into requested memory, or `--kv-cache-memory=12923195904` "
                    "to fully utilize gpu memory. Current kv cache memory in use is 9232221491 bytes.")
    assert log.breakdown == "weight" and abs(log.kv_in_use_gib - 9232221491 / GIB) < 1e-9


def test_consumed_terms_take_out_the_estimate_and_the_weights():
    # 0.27+: "peak activation" = transient headroom + the applied estimate; "consumed" = weights + non-torch.
    # With "Model loading took 19.3 GiB" added (an example figure): non-torch 19.47 - 19.3 = 0.17 GiB; with the
    # 0.58 GiB estimate applied (the "profiling is enabled" line): activation 0.6 - 0.58 = 0.02 GiB.
    text = CONSUMED + ESTIMATE.replace("0.52 GiB total", "0.58 GiB total") + \
        "INFO [gpu_model_runner.py] Model loading took 19.3 GiB memory and 9.1 seconds\n"
    log = parse_log(text)
    terms = logged_terms(log)
    assert terms.weights_gib == 19.3 and terms.non_torch_gib == 0.17 and terms.activation_gib == 0.02
    assert terms.graph_estimate_gib == 0.58 and terms.requested_gib == 22.03
    # requested - weights - activation - non-torch - estimate - available: 22.03 - 19.3 - 0.02 - 0.17 - 0.58 - 6.37
    assert terms.unexplained_gib == -4.41  # the example pieces come from different servers: nothing ties them


def test_weight_wording_terms_and_comparison():
    log = read_log(str(PR21489))
    log.available_kv_gib = 141.92  # not in the PR: 160.53 - 8.58 - 9.96 - 0.07 (no estimate in that build)
    terms = logged_terms(log)
    assert (terms.requested_gib, terms.weights_gib, terms.activation_gib, terms.non_torch_gib) == (
        160.53, 8.58, 9.96, 0.07)
    assert terms.graph_estimate_gib is None and terms.graph_captured_gib == 0.65 and terms.unexplained_gib == 0.0
    est = ProfileEstimate(total_bytes=int(178.36 * GIB), gpu_memory_utilization=0.9, weight_bytes=int(8.58 * GIB),
                          activation_bytes=int(9.6 * GIB), non_torch_bytes=int(0.13 * GIB), cuda_graph_bytes=0,
                          profiled_tokens=8192, weights_from="given", activation_from="sampler")
    rows = {r.name: r for r in compare(est, terms)}
    assert rows["peak activation"].difference_gib == -0.36 and rows["non-torch"].difference_gib == 0.06
    assert rows["weights"].difference_gib == 0.0
    # 160.524 - 8.58 - 9.6 - 0.13 = 142.214 GiB predicted against 141.92
    assert rows["available KV cache memory"].difference_gib == 0.29
    assert largest_term_gap(list(rows.values())).name == "peak activation"


def test_calibrate_shows_the_terms_gemma3_b200(cli, tmp_path):
    # PR #21489's line plus the available memory vLLM's arithmetic gives it (160.53 - 8.58 - 9.96 - 0.07 = 141.92;
    # an added line, the PR quotes none). kvplan, by hand: requested int(178.36 GiB) x 0.9 = 172,361,332,555 B
    # (160.52 GiB); weights 8.58 (given); the sampler over 1,024 rows of Gemma 3's 262,208-token vocabulary
    # (transformers' Gemma3TextConfig default: the bundled config leaves vocab_size out): int(9.6 x 1,024 x
    # 262,208 x 4) = 10,310,438,092 B (9.602 GiB) > the forward (8,192 x 2,560 x 26 B); non-torch int(0.13 GiB);
    # available 172,361,332,555 - 9,212,704,849 - 10,310,438,092 - 139,586,437 = 142.21 GiB (+0.2% on 141.92)
    log = tmp_path / "gemma.log"
    log.write_text(PR21489.read_text(encoding="utf-8") + "Available KV cache memory: 141.92 GiB\n", encoding="utf-8")
    code, out, err = cli("calibrate", str(log), "--model", "gemma-3-4b", "--gpu", "b200", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    terms = {t["name"]: t for t in data["profile_terms"]}
    assert terms["requested (total x utilization)"]["logged_gib"] == 160.53
    assert abs(terms["requested (total x utilization)"]["predicted_gib"] - 160.524) < 0.001
    assert terms["peak activation"]["logged_gib"] == 9.96 and terms["peak activation"]["predicted_gib"] == 9.602
    assert terms["non-torch"]["difference_gib"] == 0.06
    assert terms["available KV cache memory"]["logged_gib"] == 141.92
    assert abs(terms["available KV cache memory"]["predicted_gib"] - 142.212) < 0.001
    assert terms["CUDA graphs captured (after the KV cache; not subtracted)"]["logged_gib"] == 0.65
    assert data["profile_terms_unexplained_gib"] == 0.0
    assert any("largest gap in the profile terms: peak activation" in n for n in data["notes"])
    assert data["log"]["device_total_gib"] == 178.36
    # the table view names each term
    code, out, _ = cli("calibrate", str(log), "--model", "gemma-3-4b", "--gpu", "b200")
    assert "vLLM profile terms: logged vs kvplan" in out and "peak activation" in out


def test_no_terms_table_without_the_breakdown(cli):
    code, out, _ = cli("calibrate", str(LOGS / "v010_gpt_oss_120b_h100_no_memory.log"), "--model", "gpt-oss-120b",
                       "--gpu", "h100", "--format", "json")
    data = json.loads(out)
    assert data["profile_terms"] == [] and data["profile_terms_unexplained_gib"] is None
