"""vLLM's "Available KV cache memory" from seven more starts of one public study (issue 14 item 6; collected Dec 2026,
session 28, docs/engines.md "Error per log"): the smart-grid study's committed server logs
(HPML6998-S26-Team13/hpml-assetopsbench-smart-grid-mcp, benchmarks/*/raw/*/vllm.log), all vLLM 0.19.0, one GPU,
Llama-3.1-8B-Instruct served in float16 (`--dtype float16`) or the study's int8 W8A8 checkpoint in bf16 with an fp8 KV
cache; the card of each run is named by the study (its compute-environment note, a run's harness.log or its GCP
summary), never by the vLLM log. tests/test_vllm_logs_s28.py has the study's first two rows (A100 40GB, H100 NVL).

Every expected figure is worked out by hand below from the published numbers, the model's shapes and the rules of
the vllm_profile module doc (GiB = 2**30 B; a published x GiB enters as int(x x GiB) bytes):

    available = int(driver total x 0.9) - weights - peak activation - non-torch

0.19's v1 sampler (Triton top-k/top-p in place, from 0.17) holds sequences x 128,256 x 14 B; with `vllm serve`'s
defaults (below 70 GiB: 2,048 batched tokens and 256 sequences; 70 GiB or more: 8,192 and 1,024) it is above the
forward, 2,048 x 4,096 x 26 = 218,103,808 B and 8,192 x 4,096 x 26 = 872,415,232 B. Non-torch: int(0.13 GiB) =
139,586,437 B at TP 1. No CUDA-graph estimate is subtracted in 0.19 (printed, not applied). KV, 32 layers x 8 heads x
128 x 2 (K, V): 128 KiB a token and 2 MiB a 16-token block in float16; 64 KiB and 1 MiB in fp8. One group: tokens =
num_blocks x 16, concurrency = num_blocks / (max_model_len / 16).

Cold starts: every start of this study that compiled its graph cold on the 2,048-token range ("Compiling a graph
for compile range (1, 2048)") printed 0.50-0.51 GiB less than its warm repeats ("Directly load the compiled graph(s)
... from the cache"); kvplan predicts the warm start, so the cold rows carry that gap (+2.3% to +3.0%).
"""

from __future__ import annotations

import pytest
from test_calibrate import calibrate, figures

from kvplan import load_model
from kvplan.capacity.gpus import CATALOG
from kvplan.engines.vllm_profile import predict_available

GIB = 2**30
NON_TORCH = 139_586_437  # int(0.13 GiB)
FP16_LOAD = int(14.99 * GIB)  # "Model loading took 14.99 GiB": 16,095,389,941 B
W8A8_LOAD = int(8.49 * GIB)  # "Model loading took 8.49 GiB": 9,116,068,085 B
SAMPLER_256 = 256 * 128_256 * 14  # 459,669,504 B > the 2,048-token forward 218,103,808 B
SAMPLER_1024 = 1024 * 128_256 * 14  # 1,838,678,016 B > the 8,192-token forward 872,415,232 B

# Requested memory, int(driver total x 0.9), from the catalog's driver totals (docs/engines.md):
REQ_A6000 = 45_941_117_680  # RTX A6000, ECC off, 47.54 GiB = 51,045,686,312 B
REQ_H100_PCIE = 76_449_344_126  # H100 PCIe 79.11 GiB = 84,943,715,696 B
REQ_H100_SXM = 76_516_989_861  # 79.18 GiB = 85,018,877,624 B (the log does not say which total this card's driver gives)
REQ_A100_40 = 38_171_521_843  # A100 40GB 39.50 GiB = 42,412,802,048 B


def test_requested_memory_from_the_driver_totals():
    assert int(CATALOG["rtx-a6000"].driver_bytes * 0.9) == REQ_A6000
    assert int(CATALOG["h100-pcie"].driver_bytes * 0.9) == REQ_H100_PCIE
    assert int(CATALOG["h100-sxm"].driver_bytes * 0.9) == REQ_H100_SXM
    assert int(CATALOG["a100-40gb"].driver_bytes * 0.9) == REQ_A100_40
    assert SAMPLER_256 == 459_669_504 > 2048 * 4096 * 26 and SAMPLER_1024 == 1_838_678_016 > 8192 * 4096 * 26


def test_w8a8_load_by_hand():
    # The int8 checkpoint's load, worked out from Llama-3.1-8B's shapes: the embedding and the (unquantized) lm_head
    # 2 x 128,256 x 4,096 x 2 B = 2,101,346,304; the 32 layers' linear weights at 1 B, (2 x 4,096^2 + 2 x 4,096 x 1,024
    # + 3 x 4,096 x 14,336) x 32 = 6,979,321,856; per-channel scales (6,144 + 4,096 + 28,672 + 4,096) x 32 = 1,376,256
    # at 4 B (or 2 B); norms 65 x 4,096 x 2 = 532,480; the 32 MiB rotary table: 9,120,260,096 B = 8.494 GiB
    # (8.491 with 2-byte scales), the logged "8.49 GiB" either way
    total = 2 * 128_256 * 4096 * 2 + 6_979_321_856 + 1_376_256 * 4 + 65 * 4096 * 2 + 32 * 2**20
    assert total == 9_120_260_096 and round(total / GIB, 2) == round((total - 1_376_256 * 2) / GIB, 2) == 8.49


# name, --gpu, requested bytes, load, sampler, max_model_len, logged GiB, predicted available bytes (by hand),
# predicted "x.xx GiB", deviation bounds (%), logged tokens, token range from the logged GiB's rounding, concurrency
ROWS = [
    # RTX A6000 (ins083), warm: 45,941,117,680 - 16,095,389,941 - 459,669,504 - 139,586,437 = 29,246,471,798 B
    # = 27.238 GiB against 27.08: +0.58%. 27.075-27.085 GiB: 13,862-13,867 blocks of 2 MiB, 221,792-221,872 tokens;
    # the logged 221,824 is 13,864 blocks, 13,864 / 2,048 = 6.77x
    ("v0190_llama31_8b_fp16_rtx_a6000_insomnia_smartgrid.log", "rtx-a6000", REQ_A6000, FP16_LOAD, SAMPLER_256,
     32768, "27.08", 29_246_471_798, "27.24", (0.55, 0.62), "221,824", "221,792-221,872", 13_864, "6.77x"),
    # The same settings on an A6000 (ins081), cold compile: the same prediction, 27.238 GiB against 26.57: +2.51%.
    # 26.565-26.575 GiB: 13,601-13,606 blocks, 217,616-217,696 tokens; 217,632 = 13,602 blocks, / 2,048 = 6.64x
    ("v0190_llama31_8b_fp16_rtx_a6000_cold_insomnia_smartgrid.log", "rtx-a6000", REQ_A6000, FP16_LOAD, SAMPLER_256,
     32768, "26.57", 29_246_471_798, "27.24", (2.48, 2.55), "217,632", "217,616-217,696", 13_602, "6.64x"),
    # H100 PCIe (ins048), 79.11 GiB: 76,449,344,126 - 16,095,389,941 - 1,838,678,016 - 139,586,437 = 58,375,689,732 B
    # = 54.367 GiB against 54.09: +0.51%. 54.085-54.095 GiB: 27,691-27,696 blocks, 443,056-443,136 tokens; 443,088 =
    # 27,693 blocks, / 2,048 = 13.52x
    ("v0190_llama31_8b_fp16_h100_pcie_insomnia_smartgrid.log", "h100-pcie", REQ_H100_PCIE, FP16_LOAD, SAMPLER_1024,
     32768, "54.09", 58_375_689_732, "54.37", (0.48, 0.54), "443,088", "443,056-443,136", 27_693, "13.52x"),
    # W8A8 + fp8 KV on an A6000 (ins084): 45,941,117,680 - 9,116,068,085 - 459,669,504 - 139,586,437 = 36,225,793,654 B
    # = 33.738 GiB against 33.57: +0.50%. 33.565-33.575 GiB: 34,370-34,380 blocks of 1 MiB, 549,920-550,080 tokens;
    # 550,032 = 34,377 blocks, / (8,192 / 16 = 512) = 67.14x
    ("v0190_llama31_8b_w8a8_fp8kv_rtx_a6000_insomnia_smartgrid.log", "rtx-a6000", REQ_A6000, W8A8_LOAD, SAMPLER_256,
     8192, "33.57", 36_225_793_654, "33.74", (0.47, 0.53), "550,032", "549,920-550,080", 34_377, "67.14x"),
    # W8A8 + fp8 KV on a GCP A100 40GB, warm: 38,171,521,843 - 9,116,068,085 - 459,669,504 - 139,586,437
    # = 28,456,197,817 B = 26.502 GiB against 26.41: +0.35%. 26.405-26.415: 27,038-27,048 blocks, 432,608-432,768
    # tokens; 432,704 = 27,044 blocks, / 512 = 52.82x
    ("v0190_llama31_8b_w8a8_fp8kv_a100_40gb_gcp_smartgrid.log", "a100-40gb", REQ_A100_40, W8A8_LOAD, SAMPLER_256,
     8192, "26.41", 28_456_197_817, "26.50", (0.32, 0.38), "432,704", "432,608-432,768", 27_044, "52.82x"),
    # The same on the documented a2-highgpu-1g A100-SXM4-40GB, cold: 26.502 against 25.91: +2.28%. 25.905-25.915:
    # 26,526-26,536 blocks, 424,416-424,576 tokens; 424,512 = 26,532 blocks, / 512 = 51.82x
    ("v0190_llama31_8b_w8a8_fp8kv_a100_40gb_cold_gcp_smartgrid.log", "a100-40gb", REQ_A100_40, W8A8_LOAD, SAMPLER_256,
     8192, "25.91", 28_456_197_817, "26.50", (2.25, 2.32), "424,512", "424,416-424,576", 26_532, "51.82x"),
    # float16 on the same A100 40GB, cold: 38,171,521,843 - 16,095,389,941 - 459,669,504 - 139,586,437
    # = 21,476,875,961 B = 20.002 GiB against 19.42: +3.00% (the warm starts' 19.92: +0.41%, tests/test_vllm_logs_s28.py).
    # 19.415-19.425: 9,940-9,945 blocks of 2 MiB, 159,040-159,120 tokens; 159,056 = 9,941 blocks, / 2,048 = 4.85x
    ("v0190_llama31_8b_fp16_a100_40gb_cold_gcp_smartgrid.log", "a100-40gb", REQ_A100_40, FP16_LOAD, SAMPLER_256,
     32768, "19.42", 21_476_875_961, "20.00", (2.97, 3.03), "159,056", "159,040-159,120", 9_941, "4.85x"),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0][6:-4] for r in ROWS])
def test_smartgrid_start(cli, row):
    (log, gpu, requested, load, sampler, max_len, logged, available, predicted, (lo, hi), tokens, token_range,
     blocks, concurrency) = row
    assert available == requested - load - sampler - NON_TORCH
    assert lo < 100 * (available / GIB - float(logged)) / float(logged) < hi
    block_bytes = 2**21 if load == FP16_LOAD else 2**20  # float16 or fp8 KV
    first, last = (int(v.replace(",", "")) for v in token_range.split("-"))
    assert int((float(logged) - 0.005) * GIB) // block_bytes * 16 == first
    assert int((float(logged) + 0.005) * GIB) // block_bytes * 16 == last
    assert blocks * 16 == int(tokens.replace(",", "")) and f"{blocks / (max_len // 16):.2f}x" == concurrency

    code, data, err = calibrate(cli, log, "--model", "llama-3.1-8b", "--gpu", gpu)
    assert code == 0, err
    figs = figures(data)
    fig = figs["Available KV cache memory (from the GPU and the logged weights)"]
    assert fig["logged"] == f"{logged} GiB" and fig["predicted"] == f"{predicted} GiB"
    assert lo < fig["deviation_pct"] < hi
    tok = figs["GPU KV cache size (tokens)"]
    assert tok["logged"] == tokens and token_range in tok["predicted"] and tok["within_rounding"] is True
    conc = [f for name, f in figs.items() if name.startswith("Maximum concurrency")][0]
    assert conc["logged"] == concurrency and conc["predicted"] == concurrency and conc["within_rounding"] is True

    spec = load_model("llama-3.1-8b")
    est = predict_available(spec, total_bytes=CATALOG[gpu].driver_bytes, gpu_memory_utilization=0.9,
                            max_num_batched_tokens=2048 if sampler == SAMPLER_256 else 8192,
                            max_num_seqs=256 if sampler == SAMPLER_256 else 1024, max_model_len=max_len,
                            version="0.19.0", gpu=gpu, weight_bytes=load)
    assert est.activation_bytes == sampler and est.non_torch_bytes == NON_TORCH and est.cuda_graph_bytes == 0
    assert est.available_bytes == available


def test_h100_pcie_start_at_the_sxm_total(cli):
    # The study's harness names an "H100 PCIe"; the catalog's 79.11 GiB is torch's total on an older driver (SXM
    # cards print 79.11 on driver 535 and 79.18 on newer ones), and the log prints neither. At 79.18:
    # 76,516,989,861 - 16,095,389,941 - 1,838,678,016 - 139,586,437 = 58,443,335,467 B = 54.430 GiB: +0.63%
    code, data, err = calibrate(cli, "v0190_llama31_8b_fp16_h100_pcie_insomnia_smartgrid.log", "--model",
                                "llama-3.1-8b", "--gpu", "h100-sxm")
    assert code == 0, err
    fig = figures(data)["Available KV cache memory (from the GPU and the logged weights)"]
    assert fig["predicted"] == "54.43 GiB" and 0.60 < fig["deviation_pct"] < 0.66
    assert REQ_H100_SXM - FP16_LOAD - SAMPLER_1024 - NON_TORCH == 58_443_335_467


def test_quantized_log_read_with_a_base_model_says_so(cli):
    # The int8 W8A8 start's config line prints quantization=compressed-tensors; read with the bundled float16
    # Llama-3.1-8B (no quantization_config) the "from the model" row sizes 14.99 GiB of float16 weights, not the
    # logged 8.49: the row says why, and the fp16 start (quantization=None) gets no such line
    code, data, err = calibrate(cli, "v0190_llama31_8b_w8a8_fp8kv_rtx_a6000_insomnia_smartgrid.log", "--model",
                                "llama-3.1-8b", "--gpu", "rtx-a6000")
    assert code == 0, err
    said = [n for n in data["notes"] if n.startswith("the log names quantization=compressed-tensors but the model")]
    assert len(said) == 1 and "give its own config.json with --model" in said[0]
    code, data, err = calibrate(cli, "v0190_llama31_8b_fp16_a100_40gb_cold_gcp_smartgrid.log", "--model",
                                "llama-3.1-8b", "--gpu", "a100-40gb")
    assert code == 0, err
    assert not [n for n in data["notes"] if "the log names quantization=" in n]
