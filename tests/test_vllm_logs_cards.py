"""Public vLLM starts on cards whose driver total the catalog gained from other public logs (kvplan/capacity/gpus.py
`driver_bytes`): the A40 (44.34 GiB) and the RTX A5000 (23.67 GiB). Neither log prints the card's total, so the
prediction rests on the catalog's figure; the expected values are worked out by hand below from the module doc of
kvplan/engines/vllm_profile.py (GiB = 2**30 B):

    available = int(driver total x utilization) - weights - peak activation - non-torch [- the CUDA-graph estimate]

Errors are asserted as they are (docs/engines.md, "Error per log", lists them with their reasons).
"""

from __future__ import annotations

from test_calibrate import calibrate, figures

from kvplan import load_model
from kvplan.engines.vllm_profile import predict_available

GIB = 2**30


def test_v0260_llama31_8b_a40(cli):
    # vLLM 0.26.0 (`vllm serve`: APIServer lines), meta-llama/Llama-3.1-8B-Instruct on one A40. The log prints no
    # flags; its header quotes the command line the same test file pins (an inference that it is this start's):
    # --max-model-len 4096 --gpu-memory-utilization 0.9 --max-num-seqs 256, which calibrate reads from it.
    # total: the catalog's A40, int(44.34 GiB) = 47,609,712,476 B x 0.9 = 42,848,741,228 B
    # weights (none logged): the bundled checkpoint 16,060,522,496 B + the rotary table 131,072 x 128 x 2 B =
    # 33,554,432 B: 16,094,076,928 B (14.99 GiB, what this model's loads print)
    # peak activation: Model Runner V2 (0.26 runs dense LlamaForCausalLM there: config/vllm.py
    # _is_default_v2_model_runner_model); `vllm serve` below 70 GiB profiles 2,048 tokens (engine/arg_utils.py
    # get_batch_defaults): forward 2,048 x 4,096 x 26 = 218,103,808 B, above V2's default sampler pass
    # 256 x 128,256 x 2 B = 65,667,072 B; non-torch 139,586,437 B; no CUDA-graph estimate (V2's
    # profile_cudagraph_memory returns 0 before 0.29; no "CUDA graph memory profiling is enabled" line follows the
    # available line in the log, as 0.26's gpu_worker.py prints only for a non-zero estimate)
    # 42,848,741,228 - 16,094,076,928 - 218,103,808 - 139,586,437 = 26,396,974,055 B = 24.58 GiB vs 23.90: +2.9%
    code, data, err = calibrate(cli, "v0260_llama31_8b_a40_idx70947466353.log", "--model", "llama-3.1-8b",
                                "--gpu", "a40")
    assert code == 0, err
    f = figures(data)
    model = f["Available KV cache memory (from the GPU and the model)"]
    assert model["logged"] == "23.90 GiB" and model["predicted"] == "24.58 GiB"
    assert 2.7 < model["deviation_pct"] < 3.0
    assert "requested 44.34 GiB x 0.9 = 39.91 GiB" in model["explanation"]
    # the token figure, from the logged memory: 23.9 GiB means [23.895, 23.905) GiB of 131,072 B tokens
    assert f["GPU KV cache size (tokens)"]["within_rounding"]


def test_v0210_qwen3_8b_rtx_a5000_lmcache(cli):
    # vLLM 0.21.0 (stated in the issue; --version), Qwen/Qwen3-8B on one RTX A5000 through LMCache's CPU-offload
    # example; utilization 0.9764 (printed by the CUDA-graph note), max_model_len 16,384 (the concurrency line).
    # total: the catalog's RTX A5000, int(23.67 GiB) = 25,415,468,974 B x 0.9764 = 24,815,663,906 B
    # weights (none logged): the bundled checkpoint 16,381,470,720 B + the rotary table 40,960 x 128 x 2 B =
    # 10,485,760 B: 16,391,956,480 B
    # the v1 runner (0.21 runs Qwen3 there); non-torch 139,586,437 B; the CUDA-graph estimate, subtracted from 0.20,
    # modelled for 51 PIECEWISE + 35 FULL graphs (the counts this log prints): 380,807,580 + 74,828 x 36 layers x
    # 84 further graphs = 607,087,452 B (0.57 GiB; the log prints 0.52, and this very figure is one the graph
    # model was fitted on, so that term tests little here)
    # The profiled tokens are not printed. calibrate takes `vllm serve`'s 2,048: the Triton sampler from 0.17,
    # 256 x 151,936 x 14 B = 544,538,624 B, is the peak (forward 2,048 x 4,096 x 26 = 218,103,808 B):
    # 24,815,663,906 - 16,391,956,480 - 544,538,624 - 139,586,437 - 607,087,452 = 7,132,494,913 B = 6.64 GiB
    # vs 6.37: +4.3%
    code, data, err = calibrate(cli, "v0210_qwen3_8b_rtxa5000_lmcache3430.log", "--model", "qwen3-8b",
                                "--gpu", "rtx-a5000", "--version", "0.21.0")
    assert code == 0, err
    f = figures(data)
    model = f["Available KV cache memory (from the GPU and the model)"]
    assert model["logged"] == "6.37 GiB" and model["predicted"] == "6.64 GiB"
    assert 4.1 < model["deviation_pct"] < 4.5
    assert f["GPU KV cache size (tokens)"]["within_rounding"]
    # LMCache's offload examples run the offline LLM() class, for which 0.21's get_batch_defaults gives 8,192
    # batched tokens below 70 GiB (UsageContext.LLM_CLASS): the forward 8,192 x 4,096 x 26 = 872,415,232 B is then
    # the peak: 24,815,663,906 - 16,391,956,480 - 872,415,232 - 139,586,437 - 607,087,452 = 6,804,618,305 B =
    # 6.34 GiB vs 6.37: -0.5% (with the printed 0.52 GiB estimate, int(0.52 GiB) = 558,345,748 B: 6.38 GiB, +0.2%)
    est = predict_available(load_model("qwen3-8b"), total_bytes=int(23.67 * GIB), gpu_memory_utilization=0.9764,
                            max_num_batched_tokens=8192, max_model_len=16384, version="0.21.0", gpu="rtx-a5000",
                            max_num_seqs=256)
    assert est.activation_bytes == 8192 * 4096 * 26 == 872_415_232
    assert est.cuda_graph_bytes == 607_087_452
    assert est.available_bytes == 6_804_618_305
    assert -0.6 < (est.available_bytes / GIB - 6.37) / 6.37 * 100 < -0.4
