"""vLLM's "Available KV cache memory" from two more public starts that state the GPU (issue 14 item 6; collected
Dec 2026, session 29, docs/engines.md "Error per log"): a lab's vLLM 0.16.0 start of Llama-3-70B-Instruct-AWQ at
TP 2 over two L40S (a full log excerpt, tests/data/vllm_logs/v0160_llama3_70b_awq_tp2_l40s_shockwave.log), and a
benchmark's vLLM 0.21.0 start of Qwen2.5-14B-Instruct on one H100 80GB HBM3 (three quoted lines and the pinned
command, no log file).

Every expected figure is worked out by hand below from the published numbers, the model's shapes and the rules of
the vllm_profile module doc (GiB = 2**30 B; a published x GiB enters as int(x x GiB) bytes):

    available = int(driver total x utilization) - weights - peak activation - non-torch - the CUDA-graph estimate

No vLLM 0.32-0.34 start was found (docs/engines.md lists the searches); neither row changes a rule, so these tests
pin kvplan's present figures against the hand arithmetic and state each row's error band.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_calibrate import calibrate, figures

from kvplan import load_model
from kvplan.capacity.gpus import CATALOG
from kvplan.engines.vllm_profile import predict_available

GIB = 2**30
NON_TORCH = 139_586_437  # int(0.13 GiB), the v1 engine at TP 1 (and the base of every TP)
PCIE_TP = 53_687_091  # int(0.05 GiB): the TP > 1 term on a PCIe-only group (NON_TORCH_TP_BYTES_PCIE)
GRAPH_FIRST, GRAPH_PER_LAYER = 380_807_580, 74_828  # the empirical CUDA-graph estimate (vllm_cudagraph)
ROOT = Path(__file__).parent.parent

# TechxGenus/Meta-Llama-3-70B-Instruct-AWQ: Meta-Llama-3-70B's shapes (those of model_specs/llama-3.1-70b.json but
# max_position_embeddings 8,192, which the log's "Using max model len 8192" shows, and no llama3 rope scaling) with
# the AutoAWQ GEMM quantization_config (int4, group 128, zero point; float16: the log's dtype=torch.float16)
AWQ = {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq", "version": "gemm",
       "zero_point": True}


def _llama3_70b_awq(tmp_path):
    config = json.loads((ROOT / "model_specs" / "llama-3.1-70b.json").read_text(encoding="utf-8"))
    config.update(max_position_embeddings=8192, rope_scaling=None, torch_dtype="float16", quantization_config=AWQ)
    path = tmp_path / "llama-3-70b-instruct-awq.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


# Qwen/Qwen2.5-14B-Instruct: Qwen2's layout (model_specs/qwen2.5-7b.json: q/k/v biases, untied head) at the 14B
# release's published sizes: hidden 5,120, MLP 13,824, 48 layers, 40 query and 8 KV heads, vocabulary 152,064,
# 32,768 positions. The log's pool confirms layers x KV heads: 226,240 tokens x 196,608 B (48 x 8 x 128 x 2 x 2 B)
# = 41.43 GiB; the parameters by hand below come to the release's "14.7B".
QWEN25_14B = {"hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 48, "num_attention_heads": 40,
              "num_key_value_heads": 8, "vocab_size": 152064, "max_position_embeddings": 32768,
              "max_window_layers": 70, "tie_word_embeddings": False}


def _qwen25_14b(tmp_path):
    config = json.loads((ROOT / "model_specs" / "qwen2.5-7b.json").read_text(encoding="utf-8"))
    config.update(QWEN25_14B)
    path = tmp_path / "qwen2.5-14b-instruct.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


# ---- L40S x 2, TP 2, vLLM 0.16.0, Llama-3-70B-Instruct-AWQ (code-index id 10876549642) ----
# `vllm serve ... --tensor-parallel-size 2`: utilization 0.9, 256 sequences and (below 70 GiB) 2,048 batched tokens.
L40S_REQUESTED = 42_926_050_639  # int(CATALOG l40s 47,695,611,822 B (44.42 GiB) x 0.9)
L40S_LOGGED_WEIGHTS = int(18.55 * GIB)  # "Model loading took 18.55 GiB": 19,917,910,835 B
# weights by hand, per rank: linear 80 x (2 x 8,192^2 + 2 x 8,192 x 1,024 + 3 x 8,192 x 28,672) = 68,451,041,280
# parameters, half a rank, at 0.51953125 B (int4 + a 4-bit zero and an fp16 scale per 128): 17,781,227,520 B;
# embedding and untied head, vocabulary-parallel: 2 x 64,128 x 8,192 x 2 B = 2,101,346,304; norms, whole on each
# rank: 161 x 8,192 x 2 B = 2,637,824; the rotary table 8,192 x 128 x 2 B = 2,097,152
L40S_WEIGHTS = 17_781_227_520 + 2_101_346_304 + 2_637_824 + 2_097_152  # 19,887,308,800 B (18.52 GiB)
# 0.16 is before 0.17's Triton top-k/top-p: the v1 sampler's sort pipeline, 9.6 fp32 copies of 256 x 128,256
# logits = int(1,260,807,782.4), above the 2,048-token forward (2,048 x 8,192 x 26 = 436,207,616)
L40S_SAMPLER = 1_260_807_782
# 0.16 subtracts no CUDA-graph estimate (it is applied from 0.21)
L40S_AVAILABLE_LOGGED = L40S_REQUESTED - L40S_LOGGED_WEIGHTS - L40S_SAMPLER - NON_TORCH - PCIE_TP
L40S_AVAILABLE_MODEL = L40S_REQUESTED - L40S_WEIGHTS - L40S_SAMPLER - NON_TORCH - PCIE_TP


def test_v0160_l40s_tp2_terms_by_hand(tmp_path):
    # 42,926,050,639 - 19,917,910,835 - 1,260,807,782 - 139,586,437 - 53,687,091 = 21,554,058,494 B = 20.074 GiB
    # against the logged 20.16: -0.43%; with kvplan's 18.52 GiB of weights 21,584,660,529 B = 20.102 GiB: -0.29%.
    # The start compiled cold ("Compiling a graph for compile range (1, 2048) takes 13.42 s"), which elsewhere cost
    # 0.5 GiB; here the log sits above kvplan all the same.
    assert int(CATALOG["l40s"].driver_bytes * 0.9) == L40S_REQUESTED and CATALOG["l40s"].pcie_only
    assert 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672) == 68_451_041_280
    assert 68_451_041_280 // 2 * 133 // 256 == 17_781_227_520  # 0.51953125 = 133 / 256
    assert L40S_WEIGHTS == 19_887_308_800 and int(256 * 128256 * 4 * 9.6) == L40S_SAMPLER > 2048 * 8192 * 26
    assert L40S_AVAILABLE_LOGGED == 21_554_058_494 and L40S_AVAILABLE_MODEL == 21_584_660_529
    spec = load_model(_llama3_70b_awq(tmp_path))
    kwargs = dict(total_bytes=CATALOG["l40s"].driver_bytes, gpu_memory_utilization=0.9, tp=2,
                  max_num_batched_tokens=2048, max_num_seqs=256, max_model_len=8192, version="0.16.0", gpu="l40s")
    est = predict_available(spec, weight_bytes=L40S_LOGGED_WEIGHTS, **kwargs)
    assert est.activation_bytes == L40S_SAMPLER and est.non_torch_bytes == NON_TORCH + PCIE_TP
    assert est.cuda_graph_bytes == 0 and est.available_bytes == L40S_AVAILABLE_LOGGED
    assert -0.45 < 100 * (est.available_bytes / GIB - 20.16) / 20.16 < -0.40
    model = predict_available(spec, **kwargs)
    assert model.weight_bytes == L40S_WEIGHTS and model.available_bytes == L40S_AVAILABLE_MODEL
    assert -0.31 < 100 * (model.available_bytes / GIB - 20.16) / 20.16 < -0.26


def test_v0160_l40s_tp2_calibrate(cli, tmp_path):
    # 163,840 B a token at TP 2 (80 layers x 4 KV heads x 128 x 2 x 2 B), 2,621,440 B a block of 16: "20.16 GiB" is
    # [20.155, 20.165) GiB, 8,255-8,259 blocks, 132,080-132,144 tokens; the logged 132,128 is 8,258 blocks, and
    # 8,258 / (8,192 / 16) = 16.13x
    code, data, err = calibrate(cli, "v0160_llama3_70b_awq_tp2_l40s_shockwave.log", "--model",
                                _llama3_70b_awq(tmp_path), "--gpu", "l40s")
    assert code == 0, err
    figs = figures(data)
    fig = figs["Available KV cache memory (from the GPU and the logged weights)"]
    assert fig["logged"] == "20.16 GiB" and fig["predicted"] == "20.07 GiB" and -0.45 < fig["deviation_pct"] < -0.40
    fig = figs["Available KV cache memory (from the GPU and the model)"]
    assert fig["predicted"] == "20.10 GiB" and -0.31 < fig["deviation_pct"] < -0.26
    tok = figs["GPU KV cache size (tokens)"]
    assert tok["logged"] == "132,128" and "132,080-132,144" in tok["predicted"] and tok["within_rounding"] is True
    assert 8258 * 16 == 132_128 and f"{8258 / 512:.2f}x" == "16.13x"
    assert "TP 2 over PCIe only" in fig["explanation"]


# ---- H100 80GB HBM3, vLLM 0.21.0, Qwen2.5-14B-Instruct (code-index id 61926285156) ----
# A benchmark's README quotes the start's three KV lines (results/vllm-startup-calibration.txt: "Available KV cache
# memory: 41.43 GiB", "GPU KV cache size: 226,240 tokens", "Maximum concurrency for 4,096 tokens per request:
# 55.23x") and names the cluster's "NVIDIA-H100-80GB-HBM3" nodes and vllm/vllm-openai:v0.21.0; the command is the
# project's deployment (code-index id 55669478842: `vllm serve Qwen/Qwen2.5-14B-Instruct --no-enable-prefix-caching
# --dtype bfloat16 --max-model-len 4096 --gpu-memory-utilization 0.90`) with --max-num-seqs 256, the run's own edit.
# No load line is quoted, so only kvplan's weights size the row; whether torch.compile's cache was warm is not said.
H100_REQUESTED = 76_516_989_861  # int(CATALOG h100-sxm 85,018,877,624 B (79.18 GiB) x 0.9)
# parameters by hand: per layer q and o 2 x 5,120^2, k and v 2 x 5,120 x 1,024, MLP 3 x 5,120 x 13,824, the q/k/v
# biases 5,120 + 2 x 1,024 and two norms 2 x 5,120: 275,268,608; x 48 + the final norm 5,120 = 13,212,898,304;
# embedding and untied head 2 x 152,064 x 5,120 = 1,557,135,360; 14,770,033,664 parameters ("14.7B") x 2 B, + the
# 8 MiB rotary table 32,768 x 128 x 2 B
QWEN_WEIGHTS = 14_770_033_664 * 2 + 32768 * 128 * 2  # 29,548,455,936 B (27.52 GiB)
QWEN_FORWARD = 8192 * 5120 * 26  # 1,090,519,040 B: `vllm serve`'s 8,192 tokens on a card of 70 GiB or more, above
# the 0.17+ sampler 256 x 152,064 x 14 B = 545,009,664
# 0.21 subtracts the CUDA-graph estimate: 51 PIECEWISE + 35 FULL graphs at 256 sequences (largest 512)
QWEN_GRAPHS = GRAPH_FIRST + GRAPH_PER_LAYER * 48 * (51 + 35 - 2)  # 682,514,076 B
QWEN_AVAILABLE = H100_REQUESTED - QWEN_WEIGHTS - QWEN_FORWARD - NON_TORCH - QWEN_GRAPHS


def test_v0210_qwen25_14b_h100_terms_by_hand(tmp_path):
    # 76,516,989,861 - 29,548,455,936 - 1,090,519,040 - 139,586,437 - 682,514,076 = 45,055,914,372 B = 41.962 GiB
    # against the logged 41.43: +1.28%
    assert int(CATALOG["h100-sxm"].driver_bytes * 0.9) == H100_REQUESTED
    layer = 2 * 5120**2 + 2 * 5120 * 1024 + 3 * 5120 * 13824 + 5120 + 2 * 1024 + 2 * 5120
    assert layer == 275_268_608 and layer * 48 + 5120 + 2 * 152064 * 5120 == 14_770_033_664
    assert QWEN_FORWARD > 256 * 152064 * 14 and QWEN_GRAPHS == 682_514_076
    assert QWEN_AVAILABLE == 45_055_914_372
    spec = load_model(_qwen25_14b(tmp_path))
    est = predict_available(spec, total_bytes=CATALOG["h100-sxm"].driver_bytes, gpu_memory_utilization=0.9,
                            max_num_batched_tokens=8192, max_num_seqs=256, max_model_len=4096, version="0.21.0",
                            gpu="h100-sxm")
    assert est.weight_bytes == QWEN_WEIGHTS and est.activation_bytes == QWEN_FORWARD
    assert est.non_torch_bytes == NON_TORCH and est.cuda_graph_bytes == QWEN_GRAPHS
    assert est.available_bytes == QWEN_AVAILABLE
    assert 1.25 < 100 * (est.available_bytes / GIB - 41.43) / 41.43 < 1.31


def test_v0210_qwen25_14b_h100_tokens_from_the_logged_memory(cli, tmp_path):
    # 196,608 B a token, 3,145,728 B a block of 16: "41.43 GiB" is [41.425, 41.435) GiB, 14,139-14,143 blocks,
    # 226,224-226,288 tokens; the logged 226,240 is 14,140 blocks, and 14,140 / (4,096 / 16) = 55.23x (55.23x-55.25x
    # over the range)
    def engine(gib):
        code, out, err = cli("estimate", _qwen25_14b(tmp_path), "--engine", "vllm@0.21.0", "--kv-memory",
                             f"{gib}GiB", "--context", "4096", "--max-model-len", "4096", "--format", "json")
        assert code == 0, err
        return json.loads(out)["engine"]

    low, high = engine(41.425), engine(41.435)
    assert (int(41.425 * GIB) // 3_145_728, int(41.435 * GIB) // 3_145_728) == (14_139, 14_143)
    assert (low["num_blocks"], high["num_blocks"]) == (14_139, 14_143)
    assert low["gpu_kv_cache_tokens"] <= 226_240 <= high["gpu_kv_cache_tokens"]
    assert f"{14_140 / 256:.2f}x" == "55.23x" and low["max_concurrency_text"] == "55.23x"


def test_v0210_qwen25_14b_h100_from_the_cli(cli, tmp_path):
    # `kvplan estimate --gpu h100-sxm --engine vllm@0.21.0` with the deployment's flags (its utilization 0.90 given:
    # kvplan's default for the release is 0.92) gives the hand figure
    code, out, err = cli("estimate", _qwen25_14b(tmp_path), "--gpu", "h100-sxm", "--engine", "vllm@0.21.0",
                         "--context", "4096", "--max-model-len", "4096", "--max-num-seqs", "256", "--mem-util", "0.9",
                         "--format", "json")
    assert code == 0, err
    engine = json.loads(out)["engine"]
    assert engine["max_num_batched_tokens"] == 8192 and engine["kv_memory_bytes"] == QWEN_AVAILABLE
