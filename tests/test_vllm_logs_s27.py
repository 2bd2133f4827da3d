"""vLLM's "Available KV cache memory" from two more public starts that state the GPU (issue 14 item 6; collected
Dec 2026, session 27, docs/engines.md "Error per log"): llm-d's GKE pod-snapshot benchmark of Qwen3-32B on one
H100 with vLLM 0.26.0 (a note of figures, no log file) and a Ray start of Qwen2-7B-Instruct at TP 2 over two nodes
of one A100 40GB each with vLLM 0.10.1.1 (tests/data/vllm_logs/v01011_qwen2_7b_tp2_a100_40gb_diff_nodes_sort.log).

Every expected figure is worked out by hand below from the published numbers, the model's shapes and the rules of
the vllm_profile module doc (GiB = 2**30 B; a published x GiB enters as int(x x GiB) bytes):

    available = int(driver total x utilization) - weights - peak activation - non-torch

The search that found them looked for pipeline-parallel starts and for one-card starts of models whose MLP is wide
against the hidden size (the two unexplained Qwen3-32B rows of 0.27.1); neither row changes a rule, so these tests
pin kvplan's present figures against the hand arithmetic and state each row's error band.
"""

from __future__ import annotations

import json

from test_calibrate import calibrate, figures

from kvplan import load_model
from kvplan.capacity.gpus import CATALOG
from kvplan.engines.vllm_profile import predict_available

GIB = 2**30
NON_TORCH = 139_586_437  # int(0.13 GiB), the v1 engine at TP 1
# Qwen/Qwen3-32B's config.json fields, as tests/test_vllm_logs_qwen3_32b.py quotes them
QWEN3_32B = {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "head_dim": 128, "hidden_act": "silu",
             "hidden_size": 5120, "intermediate_size": 25600, "max_position_embeddings": 40960,
             "max_window_layers": 64, "model_type": "qwen3", "num_attention_heads": 64, "num_hidden_layers": 64,
             "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "tie_word_embeddings": False,
             "torch_dtype": "bfloat16", "use_sliding_window": False, "vocab_size": 151936}
# Qwen/Qwen2-7B-Instruct's, as tests/test_vllm_logs_recent.py quotes them
QWEN2_7B = {"architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584,
            "intermediate_size": 18944, "max_position_embeddings": 32768, "max_window_layers": 28, "model_type": "qwen2",
            "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "use_sliding_window": False, "vocab_size": 152064}


def _config(tmp_path, name, raw):
    path = tmp_path / name
    path.write_text(json.dumps(raw), encoding="utf-8")
    return str(path)


# llm-d's "Qwen/Qwen3-32B Snapshot & Restore Benchmark on vLLM (1xH100)" (code-index ids 69473596825 and
# 69881097476, two revisions of one note): a3-highgpu-1g (one H100 80GB HBM3, driver 580.126.20), gVisor, vLLM
# v0.26.0, --gpu-memory-utilization 0.90 --max-model-len 8192, CUDA graphs on, sleep mode (the snapshot is taken
# after engine.sleep(level=1)); the first pod, which creates the snapshot: a cold start. The note quotes "Model
# loading took 61.03 GiB" and the sleep line "CuMemAllocator: sleep freed 70.20 GiB memory in total, of which
# 61.68 GiB is backed up in CPU and the rest 8.52 GiB is discarded". Read in 0.26.0: device_allocator/cumem.py
# CuMemAllocator.sleep backs up the "weights"-tagged allocations and discards the rest, and v1/worker/gpu_worker.py
# allocates the KV cache alone under the "kv_cache" tag (initialize_from_config): 8.52 GiB is the pool vLLM built,
# num_blocks x 64 layers x 64 KiB, within one 4 MiB block row of "Available KV cache memory", which the note does
# not quote. The weights pool's 61.68 GiB is the load plus what Model Runner V2's load_model allocates beside it in
# that pool (its int32 penalty bin counts 1,024 x 151,936 x 4 B = 0.58 GiB and bitmasks 0.04 GiB: 61.65), which
# 0.26.0's profile does not subtract (torch allocations before the profile; counted from 0.27.0).
# `vllm serve` on an H100 (70 GiB or more): 8,192 batched tokens, 1,024 sequences (engine/arg_utils.py
# get_batch_defaults); V2 runs Qwen3ForCausalLM in 0.26 and profiles no CUDA graphs before 0.29.
H100_REQUESTED = int(CATALOG["h100-sxm"].driver_bytes * 0.9)  # int(85,018,877,624 x 0.9) = 76,516,989,861
QWEN3_32B_LOADED = int(61.03 * GIB)  # 65,530,463,518 B
FORWARD_8192 = 8192 * 5120 * 26  # 1,090,519,040 B, above V2's sampler pass 1,024 x 151,936 x 2 B = 311,164,928


def test_v0260_qwen3_32b_one_h100_snapshot_guide(tmp_path):
    spec = load_model(_config(tmp_path, "qwen3-32b.json", QWEN3_32B))
    common = dict(total_bytes=CATALOG["h100-sxm"].driver_bytes, gpu_memory_utilization=0.9,
                  max_num_batched_tokens=8192, max_num_seqs=1024, max_model_len=8192, version="0.26.0",
                  gpu="h100-sxm")
    # with the logged load: 76,516,989,861 - 65,530,463,518 - 1,090,519,040 - 139,586,437 = 9,756,420,866 B
    # = 9.09 GiB against the 8.52 GiB pool: +6.6%. The start held 71.26 - 61.03 - 8.52 = 1.71 GiB beside its
    # weights, kvplan 1.15 (forward 1.02, non-torch 0.13): 0.56 GiB more, on a cold start (the 0.28-0.31 cold
    # boots above kept 0.47-1.18 GiB less than warm ones; docs/engines.md)
    est = predict_available(spec, weight_bytes=QWEN3_32B_LOADED, **common)
    assert H100_REQUESTED == 76_516_989_861
    assert est.activation_bytes == FORWARD_8192 and est.non_torch_bytes == NON_TORCH
    assert est.buffer_bytes == 0 and est.cuda_graph_bytes == 0
    assert est.available_bytes == H100_REQUESTED - QWEN3_32B_LOADED - FORWARD_8192 - NON_TORCH == 9_756_420_866
    assert 6.5 < 100 * (est.available_bytes / GIB - 8.52) / 8.52 < 6.8
    # with kvplan's weights: 32,762,123,264 parameters x 2 B + the 10 MiB rotary table (40,960 x 128 x 2 B)
    # = 65,534,732,288 B; 76,516,989,861 - 65,534,732,288 - 1,090,519,040 - 139,586,437 = 9,752,152,096 B
    # = 9.08 GiB: +6.6%
    est = predict_available(spec, **common)
    assert est.weight_bytes == 32_762_123_264 * 2 + 40_960 * 128 * 2 == 65_534_732_288
    assert est.available_bytes == 9_752_152_096
    assert 6.5 < 100 * (est.available_bytes / GIB - 8.52) / 8.52 < 6.7


def test_v0260_qwen3_32b_one_h100_from_the_cli(cli, tmp_path):
    # `kvplan estimate --gpu h100-sxm --engine vllm@0.26.0 --weights 61.03GiB` takes the serve defaults itself;
    # --weights is a checkpoint's size, so the 10 MiB rotary table joins it, and a size is rounded to the byte:
    # 61.03 x 2**30 = 65,530,463,518.72 -> 65,530,463,519 B, one more than int(); 9,756,420,866 - 1 - 10,485,760
    # = 9,745,935,105 B
    code, out, err = cli("estimate", _config(tmp_path, "qwen3-32b.json", QWEN3_32B), "--gpu", "h100-sxm",
                         "--engine", "vllm@0.26.0", "--mem-util", "0.9", "--context", "8192", "--max-model-len",
                         "8192", "--weights", "61.03GiB", "--format", "json")
    assert code == 0, err
    engine = json.loads(out)["engine"]
    assert (engine["max_num_batched_tokens"], engine["max_num_seqs"]) == (8192, 1024)
    assert engine["kv_memory_bytes"] == 9_756_420_866 - 1 - 40_960 * 128 * 2 == 9_745_935_105


def test_v01011_qwen2_7b_tp2_over_two_nodes_a100_40gb(cli, tmp_path):
    # dennislee22/vLLM-benchmarking's Ray start over two nodes of one A100 40GB each: TP 2, utilization 0.5, 2,048
    # batched tokens (printed) and 256 sequences (the A100 is never in the 70 GiB tier); "FlashInfer is not
    # available": the sort's int(9.6 x 256 x 152,064 x 4) = 1,494,849,945 B (the forward 2,048 x 3,584 x 26 B =
    # 190,840,832 is below); non-torch before 0.11's snapshot move, NVLink-class: 139,586,437 + int(1.25 GiB)
    # 1,342,177,280 = 1,481,763,717 B.
    # int(int(39.50 GiB) 42,412,802,048 x 0.5) = 21,206,401,024 - int(7.1217 GiB) 7,646,867,147 - 1,494,849,945
    # - 1,481,763,717 = 10,582,920,215 B = 9.86 GiB against 11.03: -10.6%. The start held 21,206,401,024 -
    # 7,646,867,147 - 1,494,849,945 - int(11.03 GiB) 11,843,480,698 = 221,203,234 B (0.21 GiB) of non-torch, the
    # PCIe-only figure (0.13 + 0.05 GiB). The line this log prints, "Custom allreduce is disabled because this
    # process group spans across nodes", at TP 2 puts the group's two GPUs on two nodes, no NVLink between them:
    # calibrate reads it as PCIe-only (vllm_log.py), 10,582,920,215 + 1,342,177,280 - int(0.05 GiB) 53,687,091 =
    # 11,871,410,404 B = 11.056 GiB against 11.03: +0.24%
    assert int(9.6 * 256 * 152_064 * 4) == 1_494_849_945
    code, data, err = calibrate(cli, "v01011_qwen2_7b_tp2_a100_40gb_diff_nodes_sort.log", "--model",
                                _config(tmp_path, "qwen2-7b.json", QWEN2_7B), "--gpu", "a100-40gb")
    assert code == 0, err
    logged = figures(data)["Available KV cache memory (from the GPU and the logged weights)"]
    assert logged["logged"] == "11.03 GiB" and logged["predicted"] == "11.06 GiB"
    assert 0.1 < logged["deviation_pct"] < 0.4
    spec = load_model(_config(tmp_path, "qwen2-7b.json", QWEN2_7B))
    est = predict_available(spec, total_bytes=CATALOG["a100-40gb"].driver_bytes, gpu_memory_utilization=0.5, tp=2,
                            max_num_batched_tokens=2048, max_num_seqs=256, max_model_len=16384, version="0.10.1.1",
                            gpu="a100-40gb", weight_bytes=int(7.1217 * GIB), flashinfer_sampler=False)
    assert est.activation_bytes == 1_494_849_945 and est.non_torch_bytes == 1_481_763_717
    assert est.available_bytes == 21_206_401_024 - 7_646_867_147 - 1_494_849_945 - 1_481_763_717 == 10_582_920_215
    pcie = predict_available(spec, total_bytes=CATALOG["a100-40gb"].driver_bytes, gpu_memory_utilization=0.5, tp=2,
                             max_num_batched_tokens=2048, max_num_seqs=256, max_model_len=16384, version="0.10.1.1",
                             gpu="a100-40gb", weight_bytes=int(7.1217 * GIB), flashinfer_sampler=False,
                             pcie_only=True)
    assert pcie.available_bytes == 10_582_920_215 + 1_342_177_280 - int(0.05 * GIB) == 11_871_410_404
