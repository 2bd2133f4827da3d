"""vLLM's "Available KV cache memory" from two more public starts that state the GPU (issue 14 item 6; collected
Dec 2026, session 26, docs/engines.md "Error per log"): a project's pinned vLLM 0.30.0 server of Qwen3-8B-AWQ on
an RTX 5070 Ti (results notes, no log lines) and a blog's vLLM 0.19 start of gemma-4-26B-A4B on an A100 80GB.

Every expected figure is worked out by hand below from the published numbers, the model's shapes and the rules of
the vllm_profile module doc (GiB = 2**30 B; a published x GiB enters as int(x x GiB) bytes):

    available = int(driver total x utilization) - weights - peak activation - non-torch - V2's kept buffers
                - the CUDA-graph estimate

No vLLM 0.32-0.34 start was found (the searches are listed in docs/engines.md); neither row changes a rule, so
these tests pin kvplan's present figures against the hand arithmetic and state each row's error band.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan import load_model
from kvplan.capacity.gpus import CATALOG
from kvplan.engines.vllm_profile import predict_available

GIB = 2**30
NON_TORCH = 139_586_437  # int(0.13 GiB), the v1 engine at TP 1
GRAPH_FIRST, GRAPH_PER_LAYER = 380_807_580, 74_828  # the empirical CUDA-graph estimate (vllm_cudagraph)

# Qwen/Qwen3-8B-AWQ: Qwen3-8B's shapes (model_specs/qwen3-8b.json) with the quantization_config of Qwen's AWQ
# releases (AutoAWQ GEMM, int4, group 128, zero point; the checkpoint's torch_dtype float16)
AWQ = {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq", "version": "gemm",
       "zero_point": True}


ROOT = Path(__file__).parent.parent


def _write(tmp_path, name, config):
    path = tmp_path / name
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def _qwen3_8b_awq(tmp_path):
    config = json.loads((ROOT / "model_specs" / "qwen3-8b.json").read_text(encoding="utf-8"))
    return _write(tmp_path, "qwen3-8b-awq.json", dict(config, torch_dtype="float16", quantization_config=AWQ))


# Burbanit0/Vote-App, fast_api_voter/scripts/check_vllm_030_bump_results.md (code-index id 68516711290), measured
# 2026-09-24: image vllm/vllm-openai:v0.30.0, "Using V2 Model Runner", speculative_config=None, a cold start:
# "KV cache 3.67 GiB (26,704 tokens, 1.63x concurrency at 16,384)". The flags are the pinned
# fast_api_voter/docker-compose.llm.yml of that bump (id 68518044014): --model Qwen/Qwen3-8B-AWQ --quantization
# awq_marlin --max-model-len 16384 --gpu-memory-utilization 0.80, xgrammar structured outputs, nothing else that
# sizes memory, so `vllm serve`'s defaults below 70 GiB: 2,048 batched tokens, 256 sequences
# (engine/arg_utils.py get_batch_defaults). The card is the project's RTX 5070 Ti ("16.3GB"; nvidia-smi 16,303 MiB
# in public tables). Its CUDA total is not printed, so the row is judged at both ends of what it can be: 15.92 GiB,
# what vLLM prints for the RTX 5080, the same 16,303 MiB part, under WSL2 (vLLM #30707: 'Free memory on device
# (14.55/15.92 GiB)'), and 15.47 GiB, a native Blackwell GeForce holding back about 0.48 GiB of its nvidia-smi total
# as the catalog's RTX 5090 does (31.36 GiB of 32,607 MiB) and as public 16 GB prints of 15.47 GiB suggest.
TOTAL_5070TI = int(15.92 * GIB)  # 17,093,969,838 B
REQUESTED_5070TI = 13_675_175_870  # int(17,093,969,838 x 0.8)
# weights by hand: 36 layers x (4,096 x (4,096 + 1,024 + 1,024 + 4,096) + 3 x 4,096 x 12,288) = 6,945,767,424
# linear weights at 0.51953125 B (int4 + a 4-bit zero and an fp16 scale per 128) = 3,608,543,232; fp16 embedding and
# untied head 2 x 151,936 x 4,096 x 2 B = 2,489,319,424; norms (36 x (2 x 4,096 + 2 x 128) + 4,096) x 2 B = 616,448;
# the 10 MiB rotary table 40,960 x 128 x 2 B = 10,485,760
AWQ_WEIGHTS = 3_608_543_232 + 2_489_319_424 + 616_448 + 10_485_760  # 6,108,964,864 B (5.69 GiB)
FORWARD_2048 = 2048 * 4096 * 26  # 218,103,808 B, above V2's sampler pass 256 x 151,936 x 2 B = 77,791,232
KEPT_256 = 256 * 151936 * 4 + 2 * 256 * (151936 // 32) * 4  # bin counts + the two int32 bitmasks: 165,306,368 B
# 0.30 serve defaults at 256 sequences: 51 PIECEWISE graphs (largest 512) and 35 FULL (largest 256)
GRAPHS_5070TI = GRAPH_FIRST + GRAPH_PER_LAYER * 36 * (51 + 35 - 2)  # 607,087,452 B
AVAILABLE_5070TI = REQUESTED_5070TI - AWQ_WEIGHTS - FORWARD_2048 - NON_TORCH - KEPT_256 - GRAPHS_5070TI


def test_v030_qwen3_8b_awq_rtx5070ti_terms_by_hand(tmp_path):
    # 13,675,175,870 - 6,108,964,864 - 218,103,808 - 139,586,437 - 165,306,368 - 607,087,452 = 6,436,126,941 B
    # = 5.99 GiB against the logged 3.67: +63%. Two effects the same project measured account for about 2.2 GiB
    # of the gap (2.32 GiB here, 1.96 at 15.47 GiB) and are not modelled: the figure is a cold start (its 0.31.0
    # bump, same flags plus EAGLE-3: 4.34 GiB cold, 5.47 GiB after each warm restart: 1.13 GiB to the
    # torch.compile cache miss), and 0.31.0 kept 1.09 GiB more than 0.30.0 cold with identical flags (3.25 ->
    # 4.34 GiB), where 0.31.0's gpu_worker.py determine_available_memory first limits allocator splitting around
    # the profile run (docs/engines.md)
    assert AWQ_WEIGHTS == 6_108_964_864 and AVAILABLE_5070TI == 6_436_126_941
    spec = load_model(_qwen3_8b_awq(tmp_path))
    est = predict_available(spec, total_bytes=TOTAL_5070TI, gpu_memory_utilization=0.8, max_num_batched_tokens=2048,
                            max_num_seqs=256, max_model_len=16384, version="0.30.0")
    assert est.weight_bytes == AWQ_WEIGHTS
    assert est.activation_bytes == FORWARD_2048 and est.buffer_bytes == KEPT_256
    assert est.non_torch_bytes == NON_TORCH and est.cuda_graph_bytes == GRAPHS_5070TI
    assert est.available_bytes == AVAILABLE_5070TI
    assert 62 < 100 * (est.available_bytes / GIB - 3.67) / 3.67 < 65
    # at 15.47 GiB: int(int(15.47 GiB) x 0.8) = 13,288,628,813 B requested, the other terms unchanged:
    # 6,049,579,884 B = 5.63 GiB, +53%; above 5% at either end
    low = predict_available(spec, total_bytes=int(15.47 * GIB), gpu_memory_utilization=0.8,
                            max_num_batched_tokens=2048, max_num_seqs=256, max_model_len=16384, version="0.30.0")
    assert int(int(15.47 * GIB) * 0.8) == 13_288_628_813
    assert low.available_bytes == 13_288_628_813 - (REQUESTED_5070TI - AVAILABLE_5070TI) == 6_049_579_884
    assert 52 < 100 * (low.available_bytes / GIB - 3.67) / 3.67 < 55


def test_v030_qwen3_8b_awq_rtx5070ti_from_the_cli(cli, tmp_path):
    # `kvplan estimate --gpu-memory 15.92GiB --engine vllm@0.30.0` takes the serve defaults by itself (2,048 tokens
    # and 256 sequences below 70 GiB) and gives the hand figure
    code, out, err = cli("estimate", _qwen3_8b_awq(tmp_path), "--gpu-memory", "15.92GiB", "--engine", "vllm@0.30.0",
                         "--context", "16384", "--max-model-len", "16384", "--mem-util", "0.8", "--format", "json")
    assert code == 0, err
    engine = json.loads(out)["engine"]
    assert (engine["max_num_batched_tokens"], engine["max_num_seqs"]) == (2048, 256)
    assert engine["kv_memory_bytes"] == AVAILABLE_5070TI


def test_v030_qwen3_8b_awq_tokens_from_the_logged_memory(cli, tmp_path):
    # 147,456 B a token (36 layers x 8 KV heads x 128 x 2 x 2 B), blocks of 16 tokens (2,359,296 B): "3.67 GiB" is
    # [3.665, 3.675) GiB, 1,667.98-1,672.53 blocks: 1,667-1,672 blocks, 26,672-26,752 tokens; the logged 26,704 is
    # 1,669 blocks, and 26,704 / 16,384 = 1.63x (1.63x at both ends)
    def engine(gib):
        code, out, err = cli("estimate", _qwen3_8b_awq(tmp_path), "--engine", "vllm@0.30.0", "--kv-memory",
                             f"{gib}GiB", "--context", "16384", "--max-model-len", "16384", "--format", "json")
        assert code == 0, err
        return json.loads(out)["engine"]

    low, high = engine(3.665), engine(3.675)
    assert (low["num_blocks"], high["num_blocks"]) == (1667, 1672)
    assert low["gpu_kv_cache_tokens"] <= 26_704 <= high["gpu_kv_cache_tokens"]
    assert low["max_concurrency_text"] == high["max_concurrency_text"] == "1.63x"


# myoceane.fr, "[AI] vLLM 部署地端模型系統訊息記錄 A100" (post 10289, the revision of 2026-04-18 09:53): `vllm serve
# google/gemma-4-26B-A4B --max-model-len 131072 --enforce-eager --enable-chunked-prefill --gpu-memory-utilization 0.9`
# (tool and reasoning parsers besides) on the blog's A100 80GB, whose gpt-oss-20b start on the same host the next day
# is the v019_gpt_oss_20b_a100_myoceane row; the post quotes "Model loading took 48.5 GiB memory" and "Available KV
# cache memory: 21.5 GiB". The stored excerpt stops before the banner's version; 0.19 is an inference: the banner
# line is utils.py:299 as in that 0.19.0 start, and Gemma 4 arrived in 0.19. A100: 2,048 tokens and 256 sequences
# by default (get_batch_defaults excludes the A100 from the 70 GiB tier); the v1 runner (V2 from 0.29); eager: no
# graph estimate. The config: text_config of tests/data/configs/gemma-4-26b-a4b-nvfp4.json (NVIDIA's repack keeps the
# base model's shapes) without its quantization_config.
A100_REQUESTED = int(CATALOG["a100-80gb"].driver_bytes * 0.9)  # int(85,094,039,552 x 0.9) = 76,584,635,596
GEMMA_LOGGED_WEIGHTS = int(48.5 * GIB)  # 52,076,478,464 B
# the v1 runner's Triton top-k/top-p sampler (0.17+): 256 x 262,144 logits x 14 B (bf16 logits + three fp32 copies)
# = 939,524,096 B, above the forward 2,048 x 2,816 x 26 = 149,946,368
GEMMA_SAMPLER = 256 * 262144 * 14


def _gemma4_26b_a4b(tmp_path):
    source = ROOT / "tests" / "data" / "configs" / "gemma-4-26b-a4b-nvfp4.json"
    config = json.loads(source.read_text(encoding="utf-8"))
    config.pop("quantization_config")
    return _write(tmp_path, "gemma-4-26b-a4b.json", config)


def test_v019_gemma4_26b_a4b_a100_eager(tmp_path):
    spec = load_model(_gemma4_26b_a4b(tmp_path))
    common = dict(total_bytes=CATALOG["a100-80gb"].driver_bytes, gpu_memory_utilization=0.9,
                  max_num_batched_tokens=2048, max_num_seqs=256, max_model_len=131072, version="0.19.0",
                  gpu="a100-80gb", enforce_eager=True)
    # the routed experts (gemma4.py: FusedMoE of num_experts 128, top_k = config.top_k_experts 8, moe_intermediate_size
    # 704, hidden 2,816) run TritonExperts, whose persistent workspace stays beside the sampler's peak:
    # workspace13 2,048 x 8 x max(704, 2,816) and workspace2 2,048 x 8 x max(1,408, 2,816), 46,137,344 bf16 elements
    # each (the 2,048 x 2,816 output shares workspace13) = 184,549,376 B
    workspace = 2 * (2048 * 8 * 2816) * 2
    # with the logged weights: 76,584,635,596 - 52,076,478,464 - (939,524,096 + 184,549,376) - 139,586,437
    # = 23,244,497,223 B = 21.65 GiB against 21.5: +0.69% (+1.5% before top_k_experts was read, 2026-12-08)
    est = predict_available(spec, weight_bytes=GEMMA_LOGGED_WEIGHTS, **common)
    assert A100_REQUESTED == 76_584_635_596 and workspace == 184_549_376
    assert est.activation_bytes == GEMMA_SAMPLER + workspace and est.non_torch_bytes == NON_TORCH
    assert est.buffer_bytes == 0 and est.cuda_graph_bytes == 0
    assert est.available_bytes == A100_REQUESTED - GEMMA_LOGGED_WEIGHTS - GEMMA_SAMPLER - workspace - NON_TORCH
    assert est.available_bytes == 23_244_497_223
    assert 0.6 < 100 * (est.available_bytes / GIB - 21.5) / 21.5 < 0.8
    # with kvplan's weights: the text model's 25,233,141,760 parameters x 2 B (tests/test_quant_module_tables.py
    # counts them) + the 14,417,920 vLLM builds for k_eq_v (27.5 MiB) + the checkpoint's vision tower and embedder
    # (1,145,588,832 B in BF16, 1.07 GiB, the published inventory's: configs/vision_towers.py) = 51,640,708,192 B,
    # 0.41 GiB under the load (not assigned). 76,584,635,596 - 51,640,708,192 - 1,124,073,472 - 139,586,437
    # = 23,680,267,495 B = 22.05 GiB: +2.6% (+3.4% before the experts' workspace, +8.3% before the tower was counted)
    est = predict_available(spec, **common)
    assert est.weight_bytes == 25_233_141_760 * 2 + 14_417_920 * 2 + 1_145_588_832 == 51_640_708_192
    assert est.available_bytes == 23_680_267_495
    assert 2.5 < 100 * (est.available_bytes / GIB - 21.5) / 21.5 < 2.7
