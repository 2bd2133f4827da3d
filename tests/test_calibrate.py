"""`kvplan calibrate LOG`: real public vLLM start-up logs (tests/data/vllm_logs/, each with its
source URL in its header) reproduced by kvplan's engine model.

Expected values are worked out by hand in the comments from the printed figures and the
model's shape, never read from kvplan's output. A printed GiB figure is rounded to 0.01 GiB,
so a block count is reproduced when it lies in the interval that rounding allows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest


from kvplan.engines.vllm_log import parse_log

LOGS = Path(__file__).parent / "data" / "vllm_logs"


def calibrate(cli, name, *args):
    code, out, err = cli("calibrate", str(LOGS / name), *args, "--format", "json")
    return code, (json.loads(out) if out else None), err


def figures(data):
    return {f["name"]: f for f in data["figures"]}


def test_every_log_names_its_source():
    logs = sorted(LOGS.glob("*.log"))
    assert len(logs) >= 16
    for path in logs:
        head = path.read_text(encoding="utf-8").splitlines()[0]
        # a public thread (GitHub issue or PR) or, for a post quoting its own server's log, the post's address;
        # or a public file the code-search index holds without its repository: its file id, to find it again
        assert head.startswith("# source: https://") or re.match(r"# source: public-code search index, file id \d+ ", head), \
            path.name


def test_v0_llama_8b_rtx3090_20k(cli):
    # page of one block over 32 layers: 16 x 8 x 256 x 2 B x 32 = 2 MiB
    # kv_cache_size 3.81 GiB means [3.805, 3.815) GiB -> [1,948.2, 1,953.3] blocks: 1,952 lies in it
    # concurrency 1,952 x 16 / 20,000 = 1.5616 -> "1.56"
    code, data, _ = calibrate(cli, "v0_llama31_8b_rtx3090_20k.log", "--model", "llama-3.1-8b")
    assert code == 0 and data["reproduced"]
    f = figures(data)
    assert f["GPU blocks"]["within_rounding"] and f["GPU blocks"]["logged"] == "1,952"
    assert "(1,948-1,953)" in f["GPU blocks"]["predicted"]
    assert f["Maximum concurrency for 20,000 tokens"]["predicted"] == "1.56x"


def test_v0_refusal_29k(cli):
    # 2.89 GiB -> [1,477.1, 1,482.2] blocks, 1,478 in it; 1,478 x 16 / 29,000 = 0.815 -> "0.82";
    # the refusal's token figure is 1,478 x 16 = 23,648
    code, data, _ = calibrate(cli, "v0_llama31_8b_rtx3090_29k_refused.log", "--model", "llama-3.1-8b")
    assert code == 0 and data["reproduced"]
    f = figures(data)
    assert f["Maximum concurrency for 29,000 tokens"]["predicted"] == "0.82x"
    assert f["tokens the cache can hold (refusal)"]["predicted"] == "23,648"


def test_v0_llama3_8b_a100_sentence_format(cli):
    # 0.6/0.7 sentence: "the rest of the memory reserved for KV Cache is 11.12GiB" -> [5,690.9, 5,696.0] blocks
    # of 2 MiB; logged 5,691; concurrency 5,691 x 16 / 8,192 = 11.115 -> "11.12"
    code, data, _ = calibrate(cli, "v06_llama3_8b_a100_40gb.log", "--model", "llama-3.1-8b")
    assert code == 0 and data["reproduced"]
    assert figures(data)["Maximum concurrency for 8,192 tokens"]["predicted"] == "11.12x"
    assert data["log"]["total_gpu_memory_gib"] == 39.5 and data["log"]["weights_gib"] == 14.9595  # the finer of the two lines


def test_v0_llama3_70b_refusal_blocks_only(cli):
    # no memory figure: 378 blocks x 16 = 6,048 tokens, the refusal's figure
    code, data, _ = calibrate(cli, "v05_llama3_70b_refused_openrlhf.log", "--model", "llama-3.1-70b")
    assert code == 0 and data["reproduced"]
    assert figures(data)["tokens the cache can hold (refusal)"]["predicted"] == "6,048"


def test_v085_qwen3_moe_tp4_tokens_and_concurrency(cli):
    # 198,784 tokens / 16 = 12,424 blocks, one group; 8,192 / 16 = 512 per request -> 24.266 -> "24.27"
    code, data, _ = calibrate(cli, "v085_qwen3_30b_a3b_tp4_a10.log", "--tp", "4")
    assert code == 0 and data["model"] == "qwen3-30b-a3b" and data["log"]["version"] == "0.8.5"
    assert figures(data)["Maximum concurrency for 8,192 tokens"]["predicted"] == "24.27x"
    assert data["reproduced"]


def test_what_if_fp8_and_longer_context(cli):
    # the same pool (12,424 blocks of 48 layers x 16 x 1 head x 256 x 2 B = 393,216 B, plus half a block):
    # fp8 halves the block to 196,608 B -> 24,849 blocks -> 397,584 tokens; 32,768 / 16 = 2,048 per request
    # -> 24,849 / 2,048 = 12.13x
    code, data, _ = calibrate(cli, "v085_qwen3_30b_a3b_tp4_a10.log", "--tp", "4", "-t", "fp8",
                              "--max-model-len", "32k")
    assert code == 0
    what = data["what_if"]
    assert what["num_blocks"] == 24_849 and what["gpu_kv_cache_tokens"] == 397_584
    assert what["log"][1:] == ["GPU KV cache size: 397,584 tokens",
                               "Maximum concurrency for 32,768 tokens per request: 12.13x"]
    # the same what-if under 0.33's rules prints one line with int(12.13... x 32,768) tokens:
    # 24,849 x 32,768 / 2,048 = 397,584 exactly
    code, data, _ = calibrate(cli, "v085_qwen3_30b_a3b_tp4_a10.log", "--tp", "4", "-t", "fp8",
                              "--max-model-len", "32k", "--as-version", "0.33")
    assert data["what_if"]["log"][1] == ("GPU KV cache size: 397,584 tokens, "
                                         "Maximum concurrency for 32,768 tokens per request: 12.13x")


def test_difference_beyond_rounding_is_explained(cli):
    # Qwen3-235B-A22B (94 layers, 4 KV heads x 128) at TP 4: 94 x 16 x 1 x 256 x 2 B = 770,048 B per block;
    # 8.11 GiB -> [11,301.5, 11,315.4] blocks -> 180,816-181,040 tokens, but the log says 178,880
    # (11,180 blocks, 1.1% fewer): TP's other workers had less memory (the minimum wins)
    code, data, _ = calibrate(cli, "v09_qwen3_235b_a22b_fp8_tp4_lmcache.log", "--model", "qwen3-30b-a3b",
                              "--set", "num_hidden_layers=94")
    assert code == 0 and not data["reproduced"]
    f = figures(data)["GPU KV cache size (tokens)"]
    assert f["within_rounding"] is False and "(180,816-181,040)" in f["predicted"]
    assert "one worker's" in f["explanation"]


def test_negative_memory_is_vllms_refusal(cli):
    code, data, _ = calibrate(cli, "v010_gpt_oss_120b_h100_no_memory.log", "--model", "gpt-oss-120b")
    assert code == 0 and data["reproduced"]
    assert figures(data)["start check"]["predicted"].startswith("refused")


def test_unknown_model_shows_what_was_read_and_exits_1(cli):
    code, out, err = cli("calibrate", str(LOGS / "v09_qwen3_235b_a22b_fp8_tp4_lmcache.log"))
    assert code == 1
    assert "178,880" in out and "8.11" in out  # the figures read are shown
    assert err.startswith("kvplan: error: the log's model") and err.count("\n") == 1


def test_log_without_vllm_lines_exits_2(cli, tmp_path):
    path = tmp_path / "other.log"
    path.write_text("hello\nworld\n", encoding="utf-8")
    code, out, err = cli("calibrate", str(path))
    assert code == 2 and "no vLLM start-up lines" in err and err.count("\n") == 1


def test_profile_excerpt_without_kv_lines_says_what_it_read(cli):
    # PR #21489 quotes only the profile breakdown of gemma-3-4b on a B200: the weights (8.58 GiB) and the
    # breakdown are shown, and the line says the KV lines are what is missing, not that nothing was found
    code, out, err = cli("calibrate", str(LOGS / "v010dev_gemma3_4b_b200_breakdown_pr21489.log"))
    assert code == 2 and err.count("\n") == 1
    assert "8.58" in out and "no KV cache lines found" in err and "shown above" in err


@pytest.mark.parametrize("text", ["", "\x00\x01binary\xff", "hello\nworld\n"])
def test_a_log_with_nothing_read_is_one_line_and_no_table(cli, tmp_path, text):
    # an empty file printed an empty 'read from the log' table and a note on 0.11's rules before the error
    path = tmp_path / "other.log"
    path.write_bytes(text.encode("latin-1"))
    code, out, err = cli("calibrate", str(path))
    assert code == 2 and out == "" and "no vLLM start-up lines" in err and err.count("\n") == 1, (out, err)


def test_a_log_cut_after_its_config_line_shows_the_settings_read(cli, tmp_path):
    path = tmp_path / "cut.log"
    path.write_text("INFO 01-01 12:00:00 [core.py:1] Initializing a V1 LLM engine (v0.11.0) with config: "
                    "model='meta-llama/Llama-3.1-8B', max_seq_len=8192, tensor_parallel_size=1\n", encoding="utf-8")
    code, out, err = cli("calibrate", str(path))
    assert code == 2 and "0.11.0" in out and "8,192" in out
    assert "no KV cache lines found" in err and "what was read is shown above" in err and err.count("\n") == 1


def test_truncated_log_says_what_is_missing(cli, tmp_path):
    # only the memory line made it into the file
    path = tmp_path / "cut.log"
    path.write_text("INFO [gpu_worker.py:298] Available KV cache memory: 10.00 GiB\n"
                    "INFO [api_server.py] vLLM API server version 0.10.1\n"
                    "non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192}\n",
                    encoding="utf-8")
    code, out, err = cli("calibrate", str(path))
    # 10.00 GiB -> [5,117.4, 5,122.6] blocks of 2 MiB: no logged block or token figure to compare, but the
    # figures read are shown and the run succeeds with nothing to contradict
    assert code == 0, err
    assert "10.00" in out or "10.0" in out


def test_missing_file_and_unknown_version(cli):
    code, _, err = cli("calibrate", str(LOGS / "nope.log"))
    assert code == 2 and "nope.log: no such file" in err
    code, _, err = cli("calibrate", str(LOGS / "v085_qwen3_30b_a3b_tp4_a10.log"), "--version", "9.9")
    assert code == 2 and err.count("\n") == 1


def test_parser_reads_the_0_33_one_line_format():
    # the line as vllm/v1/core/kv_cache_utils.py: update_kv_cache_capacity (0.33) formats it
    log = parse_log("INFO [kv_cache_utils.py:1147] GPU KV cache size: 81,702 tokens, Maximum concurrency for "
                    "3,000 tokens per request: 27.23x\n")
    assert (log.gpu_kv_cache_tokens, log.concurrency_len, log.concurrency, log.one_line) == (81_702, 3_000, 27.23, True)


def test_parser_reads_the_config_line():
    # the 0.10/0.11 engine line (vllm/v1/engine/core.py) as it appears in public logs
    log = parse_log("Initializing a V1 LLM engine (v0.10.1.1) with config: model='Qwen/Qwen3-8B', "
                    "speculative_config=None, dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=2, "
                    "pipeline_parallel_size=1, kv_cache_dtype=fp8, enable_prefix_caching=True")
    assert (log.version, log.model, log.max_model_len, log.tp, log.pp, log.kv_cache_dtype) == (
        "0.10.1.1", "Qwen/Qwen3-8B", 32_768, 2, 1, "fp8")
    assert log.dtype == "bfloat16" and log.enable_prefix_caching is True


def test_available_memory_predicted_from_the_gpu(cli):
    # RTX 3090, 20k log: 23.58 GiB x 0.90 = 21.222 GiB; weights 8,030,261,248 params x 2 B = 14.958 GiB + the
    # rotary table 131,072 x 128 x 2 B = 0.031 GiB; v0 profiles 20,000 tokens x 4,096 hidden x 26 B = 1.984 GiB;
    # non-torch 0.35 GiB -> 3.90 GiB vs 3.81 logged
    code, data, _ = calibrate(cli, "v0_llama31_8b_rtx3090_20k.log", "--model", "llama-3.1-8b")
    pred = figures(data)["Available KV cache memory (from the GPU and the model)"]
    assert pred["predicted"] == "3.90 GiB" and pred["kind"] == "prediction"
    assert abs(pred["deviation_pct"]) < 5
    # the prediction is not a rounding check: the log still counts as reproduced
    assert data["reproduced"]


def test_estimate_with_a_gpu_predicts_the_pool(cli):
    # H100 as its driver reports it, 79.18 GiB = 85,018,877,624 B; x 0.9 = 76,516,989,861 B
    # weights 8,030,261,248 x 2 = 16,060,522,496 B; non-torch 0.13 GiB = 139,586,437 B
    # (--mem-util 0.9 as llm-d's run; without it 0.33's default 0.92 applies)
    # 0.33 (the latest rules) runs Model Runner V2 (0.29+): its dummy sampler, read in source, keeps the bf16
    # logits, their fp32 copy and FlashInfer's masked fp32 logits and fp32 probs: 1,024 x 128,256 x 14 B =
    # 1,838,678,016 B (> the forward, 8,192 x 4,096 x 26 = 872,415,232), plus the int32 penalty bin counts
    # 1,024 x 128,256 x 4 = 525,336,576 B and the two int32 bitmasks (prompt bin mask, grammar bitmask)
    # 2 x 1,024 x cdiv(128,256, 32) x 4 = 2 x 1,024 x 4,008 x 4 = 32,833,536 B -> 76,516,989,861 - 16,060,522,496
    # - 1,838,678,016 - 525,336,576 - 32,833,536 - 139,586,437 = 57,920,032,800 B, less the rotary table vLLM's load
    # builds (131,072 rows x 128 x 2 B = 33,554,432 B): 57,886,478,368 B before the CUDA graphs.
    # It also subtracts the CUDA-graph estimate (0.20+): 51 PIECEWISE + 51 FULL graphs on an H100 at 1,024
    # sequences (sizes up to 512), 100 beyond the first of each mode, modelled as first capture + 32 layers x
    # 100 x per layer-graph (kvplan.engines.vllm_cudagraph)
    from kvplan.engines.vllm_cudagraph import GRAPH_FIRST_BYTES, GRAPH_PER_LAYER_GRAPH_BYTES

    graphs = GRAPH_FIRST_BYTES + 32 * 100 * GRAPH_PER_LAYER_GRAPH_BYTES
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.33", "--max-model-len",
                         "8192", "--mem-util", "0.9", "--format", "json")
    assert code == 0, err
    engine = json.loads(out)["engine"]
    assert engine["kv_memory_bytes"] == 57_886_478_368 - graphs
    assert engine["num_blocks"] == (57_886_478_368 - graphs) // (2 * 2**20)
    assert engine["kv_memory_source"].startswith("predicted")
    # the v1 runner (llm-d-benchmark's H100 log of this model, a release before both V2 and the graph
    # estimate) printed 51.38 GiB; the v1 sampler, 9.6 x 1,024 x 128,256 x 4 B = 5,043,231,129 B, gives
    # 76,516,989,861 - 16,060,522,496 - 33,554,432 - 5,043,231,129 - 139,586,437 = 55,240,095,367 B = 51.45 GiB,
    # +0.1%
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.11", "--max-model-len",
                         "8192", "--mem-util", "0.9", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["engine"]["kv_memory_bytes"] == 55_240_095_367
    assert abs(55_273_649_799 / 2**30 - 51.38) / 51.38 < 0.005


def test_gpt_oss_120b_h100_prediction_with_the_logged_weights(cli):
    # 79.18 GiB x 0.9 = 71.262 GiB - 65.9651 GiB weights (logged, MXFP4) - sampler 9.6 x 1,024 x 201,088 x 4 B
    # (7.364 GiB) - 0.13 GiB non-torch = -2.197 GiB: "-2.20 GiB" against the logged -2.14 GiB
    code, data, _ = calibrate(cli, "v010_gpt_oss_120b_h100_no_memory.log", "--model", "gpt-oss-120b", "--gpu", "h100")
    pred = figures(data)["Available KV cache memory (from the GPU and the logged weights)"]
    assert pred["predicted"] == "-2.20 GiB" and abs(pred["deviation_pct"]) < 5


def test_v1_blocks_tokens_and_concurrency_agree(cli):
    # PR #13596: 127,626 blocks x 16 = 2,042,016 tokens; 127,626 / (2,048 / 16 = 128) = 997.08x
    code, data, _ = calibrate(cli, "v07_v1_blocks_to_tokens_pr13596.log", "--model", "llama-3.1-8b")
    assert code == 0 and data["reproduced"]
    f = figures(data)
    assert f["GPU blocks (from the KV cache size)"]["predicted"] == "127,626"
    assert f["Maximum concurrency for 2,048 tokens"]["predicted"] == "997.08x"


def test_0_33_one_line_log_is_reproduced(cli, tmp_path):
    # lines as vLLM 0.33 formats them (not a collected log): Llama-3.1-8B, max_model_len 3,000
    # 10.00 GiB -> [5,117.4, 5,122.6] blocks of 2 MiB; 0.33 prints int(n / cdiv(3000, 16) x 3000):
    # n = 5,120 -> int(5,120 / 188 x 3,000) = int(81,702.1) = 81,702 and 27.23x; n = 5,119 would print 81,686
    path = tmp_path / "v033.log"
    path.write_text(
        "INFO [core.py:114] Initializing a V1 LLM engine (v0.33.0) with config: model='meta-llama/Llama-3.1-8B', "
        "dtype=torch.bfloat16, max_seq_len=3000, tensor_parallel_size=1, kv_cache_dtype=auto\n"
        "INFO [gpu_worker.py:772] Available KV cache memory: 10.00 GiB\n"
        "INFO [kv_cache_utils.py:1147] GPU KV cache size: 81,702 tokens, Maximum concurrency for 3,000 tokens per "
        "request: 27.23x\n", encoding="utf-8")
    code, out, err = cli("calibrate", str(path), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["engine"]["version"] == "0.33" and data["model"] == "llama-3.1-8b" and data["reproduced"]
    f = figures(data)
    assert f["GPU KV cache size (tokens)"]["within_rounding"]
    assert f["Maximum concurrency for 3,000 tokens"]["predicted"] == "27.23x"
    # under 0.11's rules the same pool would have printed 5,120 x 16 = 81,920 tokens: outside, flagged
    code, out, _ = cli("calibrate", str(path), "--version", "0.11", "--format", "json")
    assert not json.loads(out)["reproduced"]


# vLLM 0.34's format strings (no public 0.34 log was found): v1/engine/core.py EngineCore.__init__ ("Initializing a
# V1 LLM engine (v%s) with config: %s"), v1/worker/gpu_worker.py determine_available_memory ("Available KV cache
# memory: %s GiB", format_gib), v1/worker/extensible_kv_cache.py measure_kv_cache_blocks ("Memory after warmup: %s
# GiB free, %s GiB committed to the KV cache, %s GiB kept for transient activations (%s GiB allocated at peak, %s
# GiB of torch reservation growth); %d KV cache blocks (%s GiB) fit within the requested %s GiB. Torch may reserve
# up to %s GiB.") and extend_kv_cache ("Extended KV cache to %d blocks (%.2f GiB)."), v1/core/kv_cache_utils.py
# update_kv_cache_capacity ("%s KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx").
V034_LOG = (
    "INFO [core.py:154] Initializing a V1 LLM engine (v0.34.0) with config: model='meta-llama/Llama-3.1-8B-Instruct', "
    "dtype=torch.bfloat16, max_seq_len=8200, tensor_parallel_size=1, kv_cache_dtype=auto\n"
    "INFO [gpu_worker.py:797] Available KV cache memory: 66.5 GiB\n"
    "(Worker_TP0 pid=11) INFO [extensible_kv_cache.py:693] Memory after warmup: 11.02 GiB free, 2.0 GiB committed to "
    "the KV cache, 1.25 GiB kept for transient activations (1.25 GiB allocated at peak, 0.5 GiB of torch reservation "
    "growth); {blocks} KV cache blocks ({gib} GiB) fit within the requested 79.18 GiB. Torch may reserve up to "
    "4.1 GiB.\n"
    "INFO [extensible_kv_cache.py:566] Extended KV cache to {blocks} blocks ({gib} GiB).\n"
    "INFO [kv_cache_utils.py:1168] GPU KV cache size: {tokens} tokens, Maximum concurrency for 8,200 tokens per "
    "request: {conc}x\n")


def test_0_34_extensible_log_is_judged_with_its_block_count(cli, tmp_path):
    # Llama-3.1-8B under 0.34: 64-token blocks (CacheConfig.DEFAULT_BLOCK_SIZE) of 64 x 32 x 8 x 256 x 2 B = 8 MiB.
    # The extensible KV cache measured 1,200 blocks after warmup: format_gib(1,200 x 8 MiB) = round(9.375, 2) = "9.38";
    # cdiv(8,200, 64) = 129 blocks a request: 1,200 / 129 = 9.3023 -> "9.30x", int(9.3023 x 8,200) = 76,279 tokens.
    # The 66.5 GiB the profile reserved hold (66.505 GiB) // 8 MiB = 8,512 blocks: 1,200 fit in that capacity.
    path = tmp_path / "v034.log"
    path.write_text(V034_LOG.format(blocks=1200, gib="9.38", tokens="76,279", conc="9.30"), encoding="utf-8")
    code, out, err = cli("calibrate", str(path), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["engine"]["version"] == "0.34" and data["model"] == "llama-3.1-8b" and data["reproduced"]
    f = figures(data)
    assert f["KV cache blocks after warmup (1,200 blocks)"]["within_rounding"]
    assert f["KV cache blocks after warmup (1,200 blocks)"]["predicted"].startswith("9.38 GiB (8,388,608 B")
    assert f["blocks within the reserved capacity"]["predicted"].startswith("at most 8,512")
    assert f["GPU KV cache size (tokens)"]["predicted"] == "76,279"
    assert f["Maximum concurrency for 8,200 tokens"]["predicted"] == "9.30x"
    # 0.33's 16-token blocks are 2 MiB: 1,200 of them would print 2.34 GiB, not 9.38: flagged
    code, out, _ = cli("calibrate", str(path), "--version", "0.33", "--format", "json")
    assert not json.loads(out)["reproduced"]
    # a log whose counts do not follow from its blocks is flagged: 9.31x would need more blocks than 1,200
    path.write_text(V034_LOG.format(blocks=1200, gib="9.38", tokens="76,340", conc="9.31"), encoding="utf-8")
    code, out, _ = cli("calibrate", str(path), "--format", "json")
    assert not json.loads(out)["reproduced"]


def test_0_34_log_without_a_version_is_read_with_0_34s_rules(cli, tmp_path):
    # the "Memory after warmup ... KV cache blocks" line exists only in 0.34's extensible KV cache
    path = tmp_path / "v034_noversion.log"
    text = V034_LOG.format(blocks=1200, gib="9.38", tokens="76,279", conc="9.30").replace(" (v0.34.0)", "")
    path.write_text(text, encoding="utf-8")
    code, out, err = cli("calibrate", str(path), "--format", "json")
    data = json.loads(out)
    assert code == 0, err
    assert data["engine"]["version"] == "0.34" and data["reproduced"]
    assert any("0.34's extensible KV cache" in n for n in data["notes"])


def test_0_34_warmup_lines_of_every_worker_give_the_smallest_count():
    # finalize_extensible_kv_cache: every rank must agree, so the minimum over the workers' measurements is the pool
    text = ("(Worker_TP0 pid=1) INFO Memory after warmup: 9.1 GiB free, 2.0 GiB committed to the KV cache, 1.0 GiB "
            "kept for transient activations (1.0 GiB allocated at peak, 0.0 GiB of torch reservation growth); 1207 KV "
            "cache blocks (9.43 GiB) fit within the requested 79.18 GiB. Torch may reserve up to 4.0 GiB.\n"
            "(Worker_TP1 pid=2) INFO Memory after warmup: 9.0 GiB free, 2.0 GiB committed to the KV cache, 1.0 GiB "
            "kept for transient activations (1.0 GiB allocated at peak, 0.0 GiB of torch reservation growth); 1200 KV "
            "cache blocks (9.38 GiB) fit within the requested 79.18 GiB. Torch may reserve up to 4.0 GiB.\n")
    log = parse_log(text)
    assert (log.warmup_kv_blocks, log.warmup_kv_text, log.extended_kv_blocks) == (1_200, "9.38", None)


# ---- the second batch of collected logs (each file's header names its source) ----


def test_v010_qwen3_14b_lmcache_tokens_and_concurrency(cli):
    # Qwen3-14B (40 layers x 8 KV heads x 128, replayed as qwen3-8b with 40 layers): one block of 16 tokens is
    # 40 x 16 x 8 x 128 x 2 x 2 B = 2,621,440 B. 6.51 GiB means [6.505, 6.515) GiB = [2,664.4, 2,668.5] blocks
    # -> 42,624-42,688 tokens; logged 42,656 = 2,666 blocks, inside. 32,768 / 16 = 2,048 blocks per request:
    # 2,666 / 2,048 = 1.3018 -> "1.30"
    code, data, _ = calibrate(cli, "v010_qwen3_14b_lmcache1739.log", "--model", "qwen3-8b",
                              "--set", "num_hidden_layers=40")
    assert code == 0 and data["reproduced"]
    f = figures(data)
    assert f["GPU KV cache size (tokens)"]["within_rounding"]
    assert "(42,624-42,688)" in f["GPU KV cache size (tokens)"]["predicted"]
    assert f["Maximum concurrency for 32,768 tokens"]["predicted"] == "1.30x"


def test_v010_fp8_kv_cache_halves_the_page(cli):
    # kv-cache-dtype fp8, max_model_len 100,000; 49,152 B per token (48 x 4 x 128 x 2 x 1 B, the shape of
    # Qwen3-30B-A3B) -> 786,432 B per block of 16. 10.55 GiB -> [14,397.4, 14,411.1] blocks -> 230,352-230,576
    # tokens; logged 230,528 = 14,408 blocks. 100,000 / 16 = 6,250 blocks per request -> 2.3053 -> "2.31"
    code, data, _ = calibrate(cli, "v010_fp8_kv_100k_issue25350.log", "--model", "qwen3-30b-a3b")
    assert code == 0 and data["reproduced"] and data["log"]["kv_cache_dtype"] == "fp8"
    f = figures(data)
    assert "(230,352-230,576)" in f["GPU KV cache size (tokens)"]["predicted"]
    assert f["Maximum concurrency for 100,000 tokens"]["predicted"] == "2.31x"
    # the KV dtype comes from the prose ("with kv-cache-dtype fp8 ..."): without it the page doubles
    assert parse_log("with kv-cache-dtype fp8 and --max-model-len 100000").kv_cache_dtype == "fp8"


def test_v010_refusal_estimate_within_rounding(cli):
    # the same server at 221,000 tokens: the refusal's memory "(5.59 GiB)" is [5.585, 5.595) GiB ->
    # [7,625.3, 7,639.0] blocks of 786,432 B; vLLM's estimate is the longest length whose blocks fit:
    # 7,625 x 16 = 122,000 to 7,639 x 16 = 122,224; logged 122,080 (7,630 blocks) lies inside.
    # (The refusal's "10.12 GiB KV cache is needed" is 221,000 x 49,152 B = 10.117 GiB.)
    code, data, _ = calibrate(cli, "v010_fp8_kv_221k_refused_issue25350.log", "--model", "qwen3-30b-a3b")
    assert code == 0 and data["reproduced"]
    assert data["log"]["available_kv_gib"] == 5.59 and data["log"]["refused_estimate"] == 122_080
    f = figures(data)["start check (refusal)"]
    assert f["within_rounding"] and "(122,000-122,224)" in f["predicted"] and f["predicted"].startswith("refused")


def test_v0101_dp8_refusals_of_a_62_layer_model(cli):
    # Qwen3-Coder-480B-A35B (62 layers x 8 KV heads x 128) on one H20 per engine (-dp=8, TP 1): a block of
    # 16 is 62 x 16 x 8 x 128 x 2 x 2 B = 4,063,232 B; 262,144 tokens need 16,384 blocks = 62.00 GiB (logged).
    # 48.66 GiB -> [12,857.0, 12,860.0] blocks -> estimate 205,712-205,760; logged 205,728 (12,858 blocks)
    # 55.65 GiB -> [14,704.0, 14,707.0] blocks -> 235,264-235,312; logged 235,296 (14,706 blocks)
    for name, interval in (("a", "(205,712-205,760)"), ("b", "(235,264-235,312)")):
        code, data, _ = calibrate(cli, f"v0101_qwen3_coder_480b_fp8_dp8_refused_recipes12_{name}.log",
                                  "--model", "qwen3-30b-a3b", "--set", "num_hidden_layers=62",
                                  "--set", "num_key_value_heads=8")
        assert code == 0 and data["reproduced"], name
        assert interval in figures(data)["start check (refusal)"]["predicted"]
    assert data["log"]["gpu_memory_utilization"] == 0.95


def test_v083_deepseek_v2_lite_mla_refusal(cli):
    # MLA: one latent of 512 + 64 rope values x 2 B = 1,152 B per token per layer, 27 layers = 31,104 B per
    # token; 32,768 tokens need 1,019,215,872 B = 0.949 GiB ("0.95 GiB KV cache is needed"), while 0.93 GiB
    # (at most 0.935 GiB = 32,277 tokens) is available: refused. 0.8.3 prints no estimate.
    code, data, _ = calibrate(cli, "v083_deepseek_v2_lite_mla_refused_issue15871.log")
    assert code == 0 and data["model"] == "deepseek-v2-lite" and data["reproduced"]
    assert data["log"]["version"] == "0.8.3.dev172+g2b93162f" and data["log"]["refused"]
    assert figures(data)["start check (refusal)"]["predicted"].startswith("refused")


def test_v071_v1_blocks_and_concurrency_llama_70b(cli):
    # V1 in 0.7.1 still printed "# GPU blocks": 1,381 blocks x 16 / 2,048 = 10.789 -> "10.79"
    code, data, _ = calibrate(cli, "v071_v1_llama31_70b_w8a8_pr12569.log", "--model", "llama-3.1-70b")
    assert code == 0 and data["reproduced"]
    f = figures(data)
    assert f["Maximum concurrency for 2,048 tokens"]["predicted"] == "10.79x"
    assert data["log"]["gpu_memory_utilization"] == 0.98 and data["log"]["weights_gib"] == 67.7229


def test_v024_hybrid_gdn_fp32_ssm_prefix_caching_reproduced(cli):
    # Qwen3.6-35B-A3B (published layout: 40 layers, 10 x (3 GDN + 1 attention), GDN 16 QK / 32 V heads of 128,
    # attention 2 KV heads of 256: the same cache shape as the bundled qwen3.5-35b-a3b), vLLM 0.24.0, fp8 KV,
    # --enable-prefix-caching, max_model_len 131,072. vLLM 0.24's rules:
    # - SSM state in the config's mamba_ssm_dtype (float32; Qwen3_5ForConditionalGenerationConfig, 0.17+):
    #   conv 3 x (2 x 16 x 128 + 32 x 128) x 2 B = 49,152 + SSM 32 x 128 x 128 x 4 B = 2,097,152 -> 2,146,304 B
    # - attention page per token (fp8): 2 x (256 + 256) x 1 B = 1,024 B; block 16 x cdiv(2,146,304, 16,384)
    #   = 16 x 131 = 2,096 tokens, page 2,096 x 1,024 = 2,146,304 B (the state fills it exactly)
    # - 4 groups of 10 layers (3 GDN + 1 full): 21,463,040 B per block; 5.98 GiB +- 0.005 -> 298-299 blocks
    # - per request: full cdiv(131,072, 2,096) = 63 + 3 GDN groups x 2 pages ('align', prefix caching on) = 69
    # - 299 / 69 = 4.3333 -> "4.33x", tokens int(4.3333 x 131,072) = 567,978 (0.20.1+); 298 -> 566,079
    code, data, _ = calibrate(cli, "v024_qwen36_35b_a3b_nvfp4_fp8kv_club3090_612.log", "--model", "qwen3.5-35b-a3b")
    assert code == 0 and data["reproduced"] and data["log"]["version"] == "0.24.0"
    # 'max_num_seqs': 1 in its non-default args: 299 blocks cover it (0.20+ refuses a Mamba model with fewer
    # blocks than max_num_seqs; at the default 1,024 this server would not have started)
    assert data["log"]["max_num_seqs"] == 1
    f = figures(data)
    assert f["GPU KV cache size (tokens)"]["predicted"] == "567,978 (566,079-567,978)"
    assert f["Maximum concurrency for 131,072 tokens"]["predicted"] == "4.33x"
    # the SSM state in bf16 (kvplan's rule before, and vLLM < 0.17's) gives 1,097,728 B, block 16 x 67 = 1,072,
    # 584 blocks / (123 + 6) = 4.53x: the +4.5% kvplan printed before
    code, data, _ = calibrate(cli, "v024_qwen36_35b_a3b_nvfp4_fp8kv_club3090_612.log", "--model", "qwen3.5-35b-a3b",
                              "--version", "0.16")
    assert not data["reproduced"] and figures(data)["Maximum concurrency for 131,072 tokens"]["predicted"] == "4.53x"


def test_prediction_uses_the_logs_max_num_seqs(cli, tmp_path):
    # The sampler's dummy run has one logit row per sequence: with the log's 'max_num_seqs': 6 (added here to the
    # A100 log) the sampler (6 x 201,088 x 14 B = 17 MB) falls below the forward, 2,048 x 2,880 x 26 B =
    # 153,354,240 B. 55,311,125,708 (the A100 80 GB's 79.25 GiB x 0.65) - int(13.72 GiB) 14,731,737,825
    # - 153,354,240 - 139,586,437 = 40,286,447,206 B; less 0.19's persistent MarlinExperts workspace, live beside
    # the sampler (146,800,640 B, tests/test_vllm_moe_workspace.py): 40,139,646,566 B = 37.38 GiB (the server's
    # default 256 sequences gave 36.85)
    text = (LOGS / "v019_gpt_oss_20b_a100_myoceane.log").read_text(encoding="utf-8")
    log = tmp_path / "seqs.log"
    log.write_text(text.replace("'gpu_memory_utilization': 0.65}", "'gpu_memory_utilization': 0.65, "
                                "'max_num_seqs': 6}"), encoding="utf-8")
    code, out, err = cli("calibrate", str(log), "--gpu", "a100-80gb", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    fig = figures(data)["Available KV cache memory (from the GPU and the logged weights)"]
    assert fig["predicted"] == "37.38 GiB" and "(forward + the fused-MoE workspace 0.14 GiB" in fig["explanation"]


@pytest.mark.parametrize("line", [
    "image vllm/vllm-openai:v0.31.0, `--model meta-llama/Llama-3.1-8B-Instruct`, no other flags",
    'vllm serve "meta-llama/Llama-3.1-8B-Instruct" --max-model-len 8192',
    "(vllm serve meta-llama/Llama-3.1-8B-Instruct)",
])
def test_model_quoted_in_prose_is_read_without_its_quotes(line):
    # the v031 A100 notes quote the command in markdown; the model was read as
    # "meta-llama/Llama-3.1-8B-Instruct`," and calibrate without --model refused it
    assert parse_log(line).model == "meta-llama/Llama-3.1-8B-Instruct"


def test_version_from_the_docker_image_tag():
    # `docker run ... vllm/vllm-openai:v0.31.0-ubuntu2404 ...`: the release is the tag's, without the OS suffix
    assert parse_log("image vllm/vllm-openai:v0.31.0-ubuntu2404, `--model x/y`").version == "0.31.0"
    assert parse_log("docker run vllm/vllm-openai:v0.10.1.post1 --model x/y").version == "0.10.1.post1"
    assert parse_log("docker run vllm/vllm-openai:latest --model x/y").version is None


def test_log_model_not_bundled_says_why_it_cannot_be_read(cli, monkeypatch):
    # Qwen/Qwen3-0.6B is not bundled; offline and not cached, the reason is the Hub's, not "cannot read"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", "/nonexistent-kvplan-cache")
    code, _, err = cli("calibrate", str(LOGS / "v0190_qwen3_06b_rtx3060_retriva.log"))
    assert code == 1
    line = err.strip().splitlines()[-1]
    assert "'Qwen/Qwen3-0.6B' is not bundled" in line and "offline" in line and "--model" in line


def test_log_model_read_from_its_local_folder(cli, tmp_path):
    # a server started with `--model /srv/tiny` on this machine: calibrate reads that folder's config.
    # 4 layers x 2 KV heads x 64 x 2 (K, V) x 2 B = 2,048 B per token; 1.00 GiB / 2,048 B = 524,288 tokens
    # = 32,768 blocks of 16; 524,288 / 4,096 = 128.00x
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 1024, "vocab_size": 1000,
        "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}))
    log = tmp_path / "server.log"
    log.write_text(
        f"INFO Initializing a V1 LLM engine (v0.10.1.1) with config: model='{folder}', max_seq_len=4096, "
        "tensor_parallel_size=1\n"
        "INFO Available KV cache memory: 1.00 GiB\n"
        "INFO GPU KV cache size: 524,288 tokens\n"
        "INFO Maximum concurrency for 4,096 tokens per request: 128.00x\n")
    code, out, err = cli("calibrate", str(log), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    f = figures(data)
    assert data["reproduced"] and f["Maximum concurrency for 4,096 tokens"]["predicted"] == "128.00x"


def test_v031_qwen25_7b_awq_h200_one_line(cli):
    # vLLM 0.31.0 (its one-line size and concurrency format), Qwen2.5-7B-Instruct-AWQ (bundled qwen2.5-7b: AWQ
    # quantizes the weights, not the cache): 28 layers x 4 KV heads x 128 x 2 (K, V) x 2 B = 57,344 B per token,
    # block 16: 917,504 B. "34.79 GiB" is 34.785-34.795 GiB: int(x GiB) // 917,504 = 40,708-40,720 blocks; a
    # 4,096-token request takes 256 blocks, so tokens = int(blocks / 256 x 4,096) = 16 x blocks: 651,328-651,520,
    # which holds the logged 651,504 (40,719 blocks: 159.06x)
    code, data, err = calibrate(cli, "v031_qwen25_7b_awq_h200_smoke.log")
    assert code == 0, err
    f = figures(data)
    tokens = f["GPU KV cache size (tokens)"]
    assert tokens["logged"] == "651,504" and tokens["within_rounding"] is True
    assert "(651,328-651,520)" in tokens["predicted"]
    assert f["Maximum concurrency for 4,096 tokens"]["within_rounding"] is True


def test_hugging_face_cache_paths_name_their_hub_id():
    # vLLM prints the local path of a downloaded model: the cache folder models--{owner}--{name}, or one of its
    # snapshots; the owner may hold hyphens
    from kvplan.engines.vllm_calibrate import hub_cache_id, match_bundled

    snapshot = "/root/.cache/huggingface/hub/models--deepseek-ai--DeepSeek-V4-Flash/snapshots/60d8d70770c6"
    assert hub_cache_id(snapshot) == "deepseek-ai/DeepSeek-V4-Flash"
    assert hub_cache_id("/hf/models--Qwen--Qwen3-8B/") == "Qwen/Qwen3-8B"
    assert hub_cache_id("/models/Meta-Llama-3.1-8B-Instruct") == "/models/Meta-Llama-3.1-8B-Instruct"
    assert match_bundled(snapshot) == "deepseek-v4-flash"
    assert match_bundled("/hf/models--meta-llama--Meta-Llama-3.1-8B-Instruct") == "llama-3.1-8b"


def test_quantized_and_repackaged_checkpoints_match_their_base():
    # the weights change, the cache shape does not: NVFP4 / AutoRound / "-Text" / "-MTP" repackagings of Qwen3.6-27B
    from kvplan.engines.vllm_calibrate import match_bundled

    assert match_bundled("sakamakismile/Qwen3.6-27B-Text-NVFP4-MTP") == "qwen3.6-27b"
    assert match_bundled("~/.cache/huggingface/qwen3.6-27b-autoround-int4") == "qwen3.6-27b"
    assert match_bundled("nvidia/Qwen3.6-35B-A3B-NVFP4") is None  # not bundled: the user names a stand-in
