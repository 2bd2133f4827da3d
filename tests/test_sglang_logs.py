"""Public SGLang start-up logs (tests/data/sglang_logs, each file's header names its source) reproduced by
`kvplan calibrate` with SGLang's pool rules (kvplan.engines.sglang_calibrate). Each expected figure is
worked out by hand below from the logged lines and the model's shape; the checks are within the log's own
rounding (two decimals of GiB)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.engines.sglang_log import is_sglang, parse
from kvplan.capacity.gpus import CATALOG

LOGS = Path(__file__).parent / "data" / "sglang_logs"
CONFIGS = Path(__file__).parent / "data" / "configs"
GIB = 2**30


def _calibrate(cli, name, *extra):
    rc, out, err = cli("calibrate", str(LOGS / name), "--format", "json", *extra)
    assert rc == 0, err
    data = json.loads(out)
    assert data["engine"] == {"name": "sglang", "version": "0.5.9"}
    return {f["name"].split(" of ")[0]: f for f in data["figures"]}, data


def test_sglang_logs_are_told_apart_from_vllm_logs():
    for path in LOGS.glob("*.log"):
        assert is_sglang(path.read_text(encoding="utf-8")), path.name
    for path in (Path(__file__).parent / "data" / "vllm_logs").glob("*.log"):
        assert not is_sglang(path.read_text(encoding="utf-8")), path.name


@pytest.mark.parametrize("name,extra,tokens,cell,low,high", [
    # SGLang docs, Llama-3.1-8B on one 80 GB card, mem_fraction_static 0.88: A 63.72, T0 78.81
    # rest = 63.72 - 78.81 x 0.12 = 54.2628 GiB; / 131,072 B (8 KV heads x 256 x 32 layers x 2 B) = 444,520;
    # the printed A and T0 (+-0.005) allow 444,474-444,566; logged 444,500
    ("v041_llama31_8b_h100_docs.log", (), 444_500, 131_072, 444_474, 444_566),
    # R1-Distill-Qwen-7B (Qwen2.5-7B's shape: 28 layers, 4 KV heads of 128) on an RTX 3090, 0.88:
    # rest = 8.37 - 22.76 x 0.12 = 5.6388 GiB / 57,344 B = 105,584; logged 105,531
    ("v042_r1_distill_qwen_7b_rtx3090.log", ("--model", "qwen2.5-7b"), 105_531, 57_344, 105_479, 105_688),
    # QwQ-32B on 4 x L4 at TP 4 (2 KV heads a rank x 256 x 64 layers x 2 B = 65,536 B), 0.85:
    # rest = 6.09 - 21.63 x 0.15 = 2.8455 GiB -> 46,620; logged 46,611
    ("v043post4_qwq_32b_l4_tp4.log", ("--model", str(CONFIGS / "qwq-32b-shape.json")), 46_611, 65_536,
     46_526, 46_714),
    # Kimi-K2.5 on 8 x MI355X: MLA (512 + 64) x 61 layers x 2 B = 70,272 B, 0.8260405859375; the smallest
    # rank's A 209.96 (TP2, TP3) and T0 283.53 (TP3): rest = 209.96 - 283.53 x 0.1739594 = 160.6373 GiB
    ("v058post1_kimi_k25_mi355x_tp8.log", ("--model", "kimi-k2"), 2_454_421, 70_272, 2_454_415, 2_454_594),
    # Qwen3-14B on 4 x RTX 4090 at TP 4 (the log's abbreviated server_args: --tp and the fraction given):
    # T0 = A 16.00 + the load's 7.08 = 23.08 (two printed figures: +-0.01); rest = 16.00 - 23.08 x 0.2 =
    # 11.384 GiB, cell 2 x 256 x 40 x 2 = 40,960 B: 298,425; (15.995 - 23.09 x 0.2) and (16.005 - 23.07 x 0.2)
    # bound it at 298,241-298,608
    ("main2026_qwen3_14b_rtx4090_tp4.log", ("--model", str(CONFIGS / "qwen3-14b-shape.json"), "--tp", "4",
                                            "--mem-fraction-static", "0.8"), 298_447, 40_960, 298_241, 298_608),
])
def test_pool_tokens_reproduced(cli, name, extra, tokens, cell, low, high):
    figures, data = _calibrate(cli, name, *extra)
    tokens_figure = figures["max_total_num_tokens"]
    assert tokens_figure["logged"] == f"{tokens:,}" and tokens_figure["within_rounding"] is True
    assert f"allow {low:,}-{high:,}" in tokens_figure["explanation"]
    assert f"{cell:,} B" in tokens_figure["explanation"]
    assert data["reproduced"] is True


@pytest.mark.parametrize("name,extra,tokens,k_gib", [
    # (tokens + one page) x the cell's K share, printed with two decimals
    ("v044_llama31_8b_h100_fa3_pr4760.log", ("--model", "llama-3.1-8b"), 442_750, 442_751 * 65_536 / GIB),
    ("v049_llama31_8b_24gb_thesis.log", ("--model", "llama-3.1-8b"), 38_141, 38_142 * 65_536 / GIB),
    ("v0410_qwen3_06b_rtx5080.log", ("--model", str(CONFIGS / "qwen3-0.6b-shape.json")), 104_273,
     104_274 * 8 * 128 * 28 * 2 / GIB),
])
def test_kv_sizes_check_the_cell(cli, name, extra, tokens, k_gib):
    figures, _ = _calibrate(cli, name, *extra)
    k = figures["K size (GB)"]
    assert k["within_rounding"] is True and abs(float(k["predicted"]) - k_gib) < 1e-4
    assert abs(float(k["logged"]) - k_gib) <= 0.005


@pytest.mark.parametrize("name,extra,implied", [
    # no mem_fraction_static printed: the one the tokens imply, 1 - (A - tokens x cell) / T0
    # Llama-3.1-8B, 38,141 tokens x 131,072 B = 4.6559 GiB; T0 = 7.37 + 15.02: 1 - (7.37 - 4.6559) / 22.39
    ("v049_llama31_8b_24gb_thesis.log", ("--model", "llama-3.1-8b"), 1 - (7.37 - 38_141 * 131_072 / GIB) / 22.39),
    # PR #4760's fa3 run: 442,750 x 131,072 B = 54.047 GiB; T0 = 63.48 + 15.11: the 0.88 default of the time
    ("v044_llama31_8b_h100_fa3_pr4760.log", ("--model", "llama-3.1-8b"),
     1 - (63.48 - 442_750 * 131_072 / GIB) / 78.59),
])
def test_implied_fraction(cli, name, extra, implied):
    figures, _ = _calibrate(cli, name, *extra)
    figure = figures["mem_fraction_static (implied by the tokens)"]
    assert figure["kind"] == "prediction" and figure["predicted"] == f"{implied:.3f}"


def test_max_running_requests():
    # 0.5.9's rule from the logged tokens: Qwen3-14B int(298,447 / 40,960 x 512) = 3,730; releases up to
    # 0.4.3.post4 log one more (ReqToTokenPool(size=max_num_reqs + 1)): 2,049 for the 2,048 floor
    from kvplan.engines.sglang_calibrate import SglangCalibration, _requests

    for name, logged, predicted in (("main2026_qwen3_14b_rtx4090_tp4.log", 3730, 3730),
                                    ("v043post4_qwq_32b_l4_tp4.log", 2049, 2048)):
        cal = SglangCalibration(parse((LOGS / name).read_text(encoding="utf-8"), name))
        _requests(cal)
        (figure,) = cal.figures
        assert (figure.logged, figure.predicted, figure.within_rounding) == (f"{logged:,}", f"{predicted:,}", True)
    assert int(298_447 / 40_960 * 512) == 3730


def test_preload_constants_come_from_the_logs():
    # kvplan.engines.sglang_report: T0 = the driver's total less what the process holds before the load;
    # H100 (torch's 79.18 GiB): 78.81 at TP 1 (SGLang docs), 77.43 at TP 8 (Grok-2)
    from kvplan.engines.sglang_report import PRELOAD_BYTES, PRELOAD_TP_BYTES

    total = CATALOG["h100-sxm"].driver_bytes / GIB
    tp1 = parse((LOGS / "v041_llama31_8b_h100_docs.log").read_text(encoding="utf-8")).load_begin_avail_gib
    tp8 = parse((LOGS / "v052rc2_grok2_fp8_h100_tp8.log").read_text(encoding="utf-8")).load_begin_avail_gib
    assert round(total - tp1, 2) == round(PRELOAD_BYTES / GIB, 2) == 0.37
    assert round(total - tp8, 2) == round((PRELOAD_BYTES + PRELOAD_TP_BYTES) / GIB, 2) == 1.75


def test_bad_sglang_calibrations_get_one_line(cli, tmp_path):
    log = LOGS / "v041_llama31_8b_h100_docs.log"
    rc, out, err = cli("calibrate", str(log), "--as-version", "0.11")
    assert rc == 2 and "vLLM calibrate option" in err and len(err.strip().splitlines()) == 1
    odd = tmp_path / "odd.log"
    odd.write_text("max_total_num_tokens=12, max_prefill_tokens=16384, max_running_requests=2048, context_len=4096\n")
    rc, out, err = cli("calibrate", str(odd))
    assert rc == 2 and "names no model" in err
    odd.write_text("KV Cache is allocated.\n")  # no figures: one line, exit 2
    rc, out, err = cli("calibrate", str(odd))
    assert rc == 2 and "no SGLang memory lines" in err and len(err.strip().splitlines()) == 1
    rc, out, err = cli("calibrate", str(LOGS / "v043post4_qwq_32b_l4_tp4.log"), "--mem-fraction-static", "1.5")
    assert rc == 2 and "between 0 and 1" in err
    rc, out, err = cli("calibrate", str(Path(__file__).parent / "data" / "vllm_logs" /
                                        "v0102_qwen3_8b_fp8_24gb_notes.log"), "--mem-fraction-static", "0.8")
    assert rc == 2 and "for SGLang logs" in err


def test_hybrid_state_buffers_check_the_state_rule(cli):
    # Qwen3.5-397B-A17B through SGLang + ktransformers on 2 x RTX 4090 (TP 2): 45 Gated DeltaNet layers of 16 key
    # and 64 value heads of 128, kernel 4. Per request and GPU: conv (64 x 128 + 2 x 16 x 128) / 2 x 3 x 2 B =
    # 36,864 B a layer, 1,658,880 B; SSM 32 x 128 x 128 x 4 B (float32) = 2 MiB a layer, 94,371,840 B. The log's
    # 82 states are 83 buffers: 0.128 and 7.295 GiB, printed 0.13 and 7.29. Its 15 full-attention layers of one
    # KV head of 256 a rank: (580,364 + 1) x 256 x 2 B x 15 = 4.151 GiB of K
    figures, _ = _calibrate(cli, "main2026_qwen35_397b_ktransformers_rtx4090_tp2.log", "--model",
                            str(CONFIGS / "qwen3.5-397b-a17b-shape.json"))
    conv, ssm = figures["conv_state size (GB)"], figures["ssm_state size (GB)"]
    assert "1,658,880 B" in conv["explanation"] and conv["within_rounding"] is True
    assert "94,371,840 B" in ssm["explanation"] and ssm["within_rounding"] is True
    assert 45 * (64 * 128 + 2 * 16 * 128) // 2 * 3 * 2 == 1_658_880 and 45 * 32 * 128 * 128 * 4 == 94_371_840
    assert figures["K size (GB)"]["within_rounding"] is True
    # its max_running_requests 1 was a launch flag the log does not print: shown as the rule's, not judged
    assert figures["max_running_requests"]["kind"] == "prediction"


def test_deepseek_sparse_attention_kv_size(cli):
    # PR #11309's DeepSeek-V3.2-Exp run on B200s (fp8, SGLang's default there; page 64): 61 layers x
    # ((975,424 + 64) x 656 B + 15,242 whole pages x 64 x 132 B of indexer keys) = 46,889,757,184 B = 43.67 GiB
    figures, _ = _calibrate(cli, "v053_deepseek_v32_exp_b200_dp8_pr11309.log", "--model", "deepseek-v3.2-exp",
                            "--gpu", "b200")
    kv = figures["KV size (GB)"]
    pages = (975_424 + 64 + 1) // 64
    assert pages == 15_242
    assert 61 * (975_488 * 656 + pages * 64 * 132) == 46_889_757_184
    assert kv["within_rounding"] is True and kv["predicted"] == f"{46_889_757_184 / GIB:.4f}"


def test_pool_predicted_from_the_gpu_against_the_docs_run(cli):
    # The SGLang docs' Llama-3.1-8B start on an 80 GB card at 0.88 logged 444,500 tokens. From the GPU alone
    # (H100: T0 = 79.18 - 0.37 GiB, fitted on this same log, so what is checked is the rest: the fraction, the
    # weights as the checkpoint stores them, the cell): (78.81 x 0.88 - 14.96 GiB) / 131,072 B = 445,606, high
    # by 0.25% because SGLang's load holds 0.13 GiB beyond the checkpoint (its A is 63.72, not 63.85)
    rc, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--engine", "sglang", "--mem-util", "0.88",
                       "--context", "128k", "--format", "json")
    assert rc == 0, err
    tokens = json.loads(out)["engine"]["max_total_num_tokens"]
    assert tokens == 445_606 and abs(tokens / 444_500 - 1) < 0.005


def test_what_if_on_the_same_deployment(cli):
    # the docs' Llama-3.1-8B server, same memory (A 63.72, T0 78.81, 0.88: 54.2628 GiB), its KV in fp8_e4m3
    # (65,536 B a token) and requests of 32K: twice the tokens, max_running_requests at the 4,096 ceiling
    figures, data = _calibrate(cli, "v041_llama31_8b_h100_docs.log", "-t", "fp8_e4m3", "--max-model-len", "32k")
    what = data["what_if"]
    assert what["kv_cache_dtype"] == "fp8_e4m3"
    assert what["max_total_num_tokens"] == int((63.72 - 78.81 * 0.12) * GIB) // 65_536 == 889_041
    assert what["max_running_requests"] == 4096 and what["max_concurrency"] == round(889_041 / 32_768, 6)
    rc, out, err = cli("calibrate", str(LOGS / "v041_llama31_8b_h100_docs.log"), "-t", "int8")
    assert rc == 2 and "'int8' is not an SGLang KV dtype" in err and len(err.strip().splitlines()) == 1


def test_the_0523_log_lines_are_read():
    # 0.5.23's formats (memory_pool.py _finalize_allocation_log, swa_memory_pool.py, model_runner.py "Load weight
    # end."), as their f-strings print them: the dtype named in the KV line, "Full " / "SWA " sub-pools, "quant=..."
    # in place of "dtype=..." after the load
    text = "\n".join([
        "[2026-11-02 10:00:00 TP0] Load weight begin. avail mem=78.81 GB",
        "[2026-11-02 10:00:05 TP0] Load weight end. elapsed=4.10 s, type=GptOssForCausalLM, quant=mxfp4, "
        "avail mem=65.02 GB, mem usage=13.79 GB.",
        "[2026-11-02 10:00:05 TP0] Use sliding window memory pool. full_layer_tokens=809086, swa_layer_tokens=647268",
        "[2026-11-02 10:00:05 TP0] Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 809086, "
        "K size: 13.89 GB, V size: 13.89 GB",
        "[2026-11-02 10:00:05 TP0] SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 647268, "
        "K size: 11.11 GB, V size: 11.11 GB",
    ])
    log = parse(text)
    assert (log.load_begin_avail_gib, log.load_end_avail_gib) == (78.81, 65.02)
    assert (log.full_tokens, log.swa_tokens) == (809_086, 647_268)
    assert [line[0] for line in log.kv_lines] == [809_086, 647_268]
    # without the max_total line the pool's tokens are the "Full" line's, though it comes first (0.5.9 printed the
    # sliding pool's first and the full one's last)
    head = parse("\n".join(text.splitlines()[:5]))
    assert head.max_total_num_tokens is None and head.pool_tokens == 809_086


def test_calibrate_under_another_sglang_release(cli):
    # --version picks the rules an SGLang log is reproduced with (it prints none): the docs' Llama-3.1-8B start
    # reproduces under 0.5.23's too, the dense pool's arithmetic being the same
    rc, out, err = cli("calibrate", str(LOGS / "v041_llama31_8b_h100_docs.log"), "--version", "0.5.23", "--format",
                       "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["engine"] == {"name": "sglang", "version": "0.5.23"}
    tokens = {f["name"]: f for f in data["figures"]}["max_total_num_tokens"]
    assert tokens["logged"] == "444,500" and tokens["within_rounding"] is True
    rc, out, err = cli("calibrate", str(LOGS / "v041_llama31_8b_h100_docs.log"), "--version", "0.6")
    assert rc == 2 and "SGLang 0.6 is not a release kvplan models (0.5.9, 0.5.23)" in err


@pytest.mark.parametrize("flag, value", [("--num-speculative-tokens", "1"), ("--draft-model", "llama-3.1-8b"),
                                         ("--prefix-caching", "on"), ("--set", "num_hidden_layers=8")])
def test_a_vllm_only_calibrate_option_on_an_sglang_log_is_named_as_typed(cli, flag, value):
    # the refusal named the option by its parameter: "--spec-tokens", an option calibrate does not have
    rc, out, err = cli("calibrate", str(LOGS / "v041_llama31_8b_h100_docs.log"), flag, value)
    assert rc == 2 and err.strip().splitlines() == [err.strip()]
    assert f"error: {flag} is a vLLM calibrate option" in err, err
