"""`kvplan calibrate` of data- / expert-parallel starts: the placement settings a vLLM or SGLang start-up log prints
beyond TP / PP, read and fed into the calibration as estimate's flags would be."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.engines.sglang_log import parse as parse_sglang
from kvplan.engines.vllm_log import parse_log
from test_vllm_logs_recent import QWEN3_235B_2507_FP8 as QWEN3_235B_FP8  # the Qwen3-235B-A22B-FP8 config it quotes

LOGS = Path(__file__).parent / "data" / "vllm_logs"
GIB = 2**30


def _run(cli, path, *args):
    code, out, err = cli("calibrate", str(path), *args, "--format", "json")
    return code, (json.loads(out) if out else None), err


def _figures(data):
    return {f["name"]: f for f in data["figures"]}


def test_vllm_placement_settings_each_format():
    # the config line (config/vllm.py VllmConfig.__str__ prints data_parallel_size only)
    assert parse_log("Initializing a V1 LLM engine (v0.11.0) with config: model='m', tensor_parallel_size=2, "
                     "pipeline_parallel_size=1, data_parallel_size=4, disable_custom_all_reduce=False\n").dp == 4
    # the non-default args dict (as the public logs print it: 'data_parallel_size': 4, 'enable_expert_parallel': True)
    log = parse_log("INFO [utils.py:328] non-default args: {'model': 'm', 'tensor_parallel_size': 4, "
                    "'data_parallel_size': 8, 'data_parallel_size_local': 2, 'enable_expert_parallel': True, "
                    "'all2all_backend': 'deepep_low_latency', 'enable_eplb': True, "
                    "'eplb_config': {'num_redundant_experts': 32}, 'mm_encoder_tp_mode': 'data'}\n")
    assert (log.dp, log.ep, log.all2all_backend, log.enable_eplb, log.num_redundant_experts,
            log.mm_encoder_tp_mode) == (8, True, "deepep_low_latency", True, 32, "data")
    # a command line (engine/arg_utils.py: -dp, -ep, --all2all-backend, --enable-eplb, --eplb-config JSON)
    log = parse_log("vllm serve m -dp 2 -ep --all2all-backend pplx --enable-eplb "
                    "--eplb-config '{\"num_redundant_experts\": 16}' --mm-encoder-tp-mode weights\n")
    assert (log.dp, log.ep, log.all2all_backend, log.enable_eplb, log.num_redundant_experts,
            log.mm_encoder_tp_mode) == (2, True, "pplx", True, 16, "weights")
    # what an EP start prints without its flags: FusedMoE's line, the workers' _EP tags
    assert parse_log("INFO [layer.py:853] [EP Rank 0/8] Expert parallelism is enabled.\n").ep is True
    assert parse_log("(Worker_TP1_EP1 pid=2) INFO Available KV cache memory: 1.00 GiB\n").ep is True
    plain = parse_log("(Worker_TP1 pid=2) INFO Available KV cache memory: 1.00 GiB\n")
    assert (plain.dp, plain.ep, plain.enable_eplb) == (None, None, None)
    # a bare "-ep" elsewhere in the text (a model or path name) is no flag: only on a `vllm serve` command line
    stray = parse_log("INFO Loading weights from /models/run -ep 3\nStarting to load model m-ep\n")
    assert stray.ep is None
    # "--max-model-len 32K" is not 32 tokens
    assert parse_log("vllm serve m --max-model-len 32K\nMaximum concurrency for 32,768 tokens per request: "
                     "1.00x\n").max_model_len == 32768


def test_vllm_figures_of_dp_rank_0_only():
    # 0.34 multiproc_executor.py names a DP rank's workers Worker_DPd[_TPt][_EPe], core.py its engine core
    # EngineCore_DPd: each DP rank sizes its own pool; the lines of DP rank 1 (printed first here) are left out
    log = parse_log("(Worker_DP1_TP0_EP2 pid=3) INFO Available KV cache memory: 19.00 GiB\n"
                    "(EngineCore_DP1 pid=2) INFO GPU KV cache size: 207,520 tokens\n"
                    "(Worker_DP0_TP1_EP1 pid=5) INFO Available KV cache memory: 20.01 GiB\n"
                    "(Worker_DP0_TP0_EP0 pid=4) INFO Available KV cache memory: 20.00 GiB\n"
                    "(EngineCore_DP0 pid=1) INFO GPU KV cache size: 218,448 tokens\n")
    assert log.other_dp_lines == 2
    assert log.gpu_kv_cache_tokens == 218_448
    assert log.available_kv_by_worker == {"TP1": 20.01, "TP0": 20.00}
    assert log.available_kv_gib == 20.00 and log.available_kv_min_gib == 20.00


def _dp_ep_log(tmp_path, *, placement: bool) -> Path:
    # a hand-made 0.11 start of Qwen3-30B-A3B (bundled) at TP 1: per token 48 layers x 4 KV heads x 128 x 2 x 2 B =
    # 98,304 B, 1,572,864 B a 16-token block; int(20.00 GiB) = 21,474,836,480 B // 1,572,864 = 13,653 blocks
    # = 218,448 tokens
    dp = 2 if placement else 1
    lines = [f"(EngineCore_DP0 pid=1) INFO [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
             f"model='Qwen/Qwen3-30B-A3B', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, "
             f"pipeline_parallel_size=1, data_parallel_size={dp}, kv_cache_dtype=auto"]
    tag = "Worker_DP0_EP0" if placement else "Worker"
    if placement:
        lines.append("(APIServer pid=0) INFO [utils.py:328] non-default args: {'model': 'Qwen/Qwen3-30B-A3B', "
                     "'data_parallel_size': 2, 'enable_expert_parallel': True}")
        lines.append("(Worker_DP1_EP1 pid=3) INFO [gpu_worker.py:298] Available KV cache memory: 19.00 GiB")
    lines += [f"({tag} pid=2) INFO [gpu_worker.py:298] Available KV cache memory: 20.00 GiB",
              "(EngineCore_DP0 pid=1) INFO [kv_cache_utils.py:1087] GPU KV cache size: 218,448 tokens",
              "(EngineCore_DP0 pid=1) INFO [kv_cache_utils.py:1091] Maximum concurrency for 32,768 tokens per "
              "request: 6.67x"]
    path = tmp_path / f"dp{dp}.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _weights_gib(figure) -> float:
    return float(figure["explanation"].split("weights ", 1)[1].split(" GiB", 1)[0])


def test_vllm_dp_ep_start_places_the_experts(cli, tmp_path):
    code, data, err = _run(cli, _dp_ep_log(tmp_path, placement=True), "--gpu", "h100")
    assert code == 0, err
    assert data["log"]["dp"] == 2 and data["log"]["ep"] is True
    f = _figures(data)
    assert f["GPU KV cache size (tokens)"]["within_rounding"] and "218,448" in f["GPU KV cache size (tokens)"]["predicted"]
    assert f["Maximum concurrency for 32,768 tokens"]["predicted"] == "6.67x"  # 218,448 / 32,768 = 6.667
    assert any("placement read from the log: DP 2, EP on" in n for n in data["notes"])
    assert any("DP rank 0's (1 lines" in n for n in data["notes"])
    # the same start without DP / EP: every GPU holds all 128 experts of the 48 layers. Under DP 2 x TP 1 with EP a
    # GPU holds 64: the routed experts are 48 x 128 x 3 (gate, up, down) x 2,048 x 768 x 2 B = 57,982,058,496 B,
    # half of them, 28,991,029,248 B = 27.00 GiB, sit on the other DP rank's GPU
    code, plain, err = _run(cli, _dp_ep_log(tmp_path, placement=False), "--gpu", "h100")
    assert code == 0, err
    key = "Available KV cache memory (from the GPU and the model)"
    whole, placed = _weights_gib(_figures(plain)[key]), _weights_gib(f[key])
    assert abs((whole - placed) - 28_991_029_248 / GIB) <= 0.011


def test_v011_qwen3_vl_235b_tp8_ep_real_log(cli, tmp_path):
    # QuantTrio/Qwen3-VL-235B-A22B-Instruct-FP8, TP 8 with --enable-expert-parallel (the workers' _EP tags), vLLM
    # nightly of 2025-09-29 (two-line KV size: 0.11's rules). Per GPU 1 KV head (4 over 8) x 128 x 2 x 2 B x 94
    # layers = 48,128 B a token, 770,048 B a 16-token block. The first worker's 9.73 GiB (before 0.12 each worker's
    # config prints its own token line, the first first): int(9.725 x 2^30) // 770,048 = 13,560 blocks to
    # int(9.735 x 2^30) // 770,048 = 13,574, i.e. 216,960-217,184 tokens, holding the logged 217,104; the middle
    # int(9.73 x 2^30) // 770,048 = 13,567 blocks = 217,072 tokens; 217,104 / 32,768 = 6.63x.
    config = tmp_path / "config.json"
    config.write_text(json.dumps(QWEN3_235B_FP8), encoding="utf-8")
    code, data, err = _run(cli, LOGS / "v011_qwen3_vl_235b_fp8_tp8_ep_quanttrio.log", "--model", str(config))
    assert code == 0, err
    assert data["log"]["tp"] == 8 and data["log"]["ep"] is True and data["log"]["max_model_len"] == 32768
    assert data["reproduced"]
    f = _figures(data)
    assert f["GPU KV cache size (tokens)"]["predicted"] == "217,072 (216,960-217,184)"
    assert f["Maximum concurrency for 32,768 tokens"]["predicted"] == "6.63x"
    assert any("placement read from the log: DP 1, EP on" in n for n in data["notes"])


def test_real_dp_ep_logs_read(cli):
    # recipes PR 12: "-dp=8 --enable-expert-parallel" (eight engines of TP 1); the 8 x L40S note: non-default args
    # 'enable_expert_parallel': True, config line data_parallel_size=1
    code, data, _ = _run(cli, LOGS / "v0101_qwen3_coder_480b_fp8_dp8_refused_recipes12_a.log", "--model",
                         "qwen3-30b-a3b", "--set", "num_hidden_layers=62", "--set", "num_key_value_heads=8")
    assert code == 0 and data["reproduced"]
    assert data["log"]["dp"] == 8 and data["log"]["ep"] is True
    log = parse_log((LOGS / "v0102_qwen3_235b_fp8_tp8_ep_l40s_note.log").read_text(encoding="utf-8"))
    assert (log.tp, log.dp, log.ep) == (8, 1, True)


def test_sglang_placement_args_read():
    # server_args.py's ServerArgs repr, as a public 0.5.x log prints it ("ep_size=1, moe_a2a_backend='none', ...,
    # ep_num_redundant_experts=0")
    log = parse_sglang("[2026-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=8, dp_size=8, "
                       "enable_dp_attention=True, enable_dp_lm_head=True, moe_dense_tp_size=1, "
                       "mm_enable_dp_encoder=False, ep_size=8, moe_a2a_backend='deepep', "
                       "ep_num_redundant_experts=32)\n")
    assert {k: log.args[k] for k in ("dp_size", "enable_dp_attention", "enable_dp_lm_head", "moe_dense_tp_size",
                                     "mm_enable_dp_encoder", "ep_size", "moe_a2a_backend",
                                     "ep_num_redundant_experts")} == {
        "dp_size": 8, "enable_dp_attention": "True", "enable_dp_lm_head": "True", "moe_dense_tp_size": 1,
        "mm_enable_dp_encoder": "False", "ep_size": 8, "moe_a2a_backend": "deepep", "ep_num_redundant_experts": 32}


def test_sglang_attention_dp_cell_is_the_attention_groups(cli, tmp_path):
    # Llama-3.1-8B (bundled) at tp_size 8, dp_size 8, enable_dp_attention: 8 attention groups of TP 1, each holding
    # all 8 KV heads: K per token 32 layers x 8 heads x 128 x 2 B = 65,536 B; (100,000 + page 1) x 65,536 B =
    # 6,553,665,536 B = 6.1036 GiB ("6.10"). At TP 8 (the cell before) it would be 0.76 GiB.
    path = tmp_path / "sglang_dp8.log"
    path.write_text("[2026-01-01 00:00:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
                    "tp_size=8, dp_size=8, enable_dp_attention=True, page_size=1, ep_size=1, "
                    "moe_a2a_backend='none', ep_num_redundant_experts=0, enable_dp_lm_head=True)\n"
                    "[2026-01-01 00:00:01 DP0 TP0] KV Cache is allocated. #tokens: 100000, K size: 6.10 GB, "
                    "V size: 6.10 GB\n", encoding="utf-8")
    code, data, err = _run(cli, path)
    assert code == 0, err
    assert data["log"]["dp_size"] == 8 and data["log"]["enable_dp_attention"] == "True"
    f = _figures(data)
    assert f["K size (GB) of 100,000 tokens"]["predicted"] == "6.1036"
    assert f["K size (GB) of 100,000 tokens"]["within_rounding"]
    assert any("attention DP" in n and "(TP 1)" in n for n in data["notes"])
    assert any("enable_dp_lm_head True" in n for n in data["notes"])
