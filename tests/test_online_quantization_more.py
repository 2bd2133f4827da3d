"""--quantization beyond estimate and fit: compare, sweep and scenario files (vLLM 0.34's rule, as estimate takes it
without --engine), fit's screen of SGLang 0.5.23's float load, and the scales each engine holds; bytes worked out by
hand from the configs' shapes (tests/test_online_quantization.py has the same Llama-3.1-8B figure)."""

from __future__ import annotations

import json

from kvplan.capacity.gpus import lookup

# Llama-3.1-8B (bundled config): hidden 4096, 32 layers, 32 heads and 8 KV heads of 128, intermediate 14336,
# vocab 128256, untied LM head. vLLM fp8 (= fp8_per_tensor): every decoder linear weight at 1 B, the embeddings,
# head and norms at 2 B, a float32 scale per quantized checkpoint tensor (7 a layer)
H, L, KV, I, V = 4096, 32, 8 * 128, 14336, 128256
LINEAR = L * (H * H + 2 * H * KV + H * H + 3 * H * I)
PLAIN = 2 * V * H + L * 2 * H + H
LLAMA_VLLM = LINEAR + 2 * PLAIN + L * 7 * 4  # 9,081,201,536 B
KV_BYTES_PER_TOKEN = L * 2 * KV * 2  # K and V, 8 heads of 128, bf16: 131,072 B
RESERVE = 2 * 2**30  # the default --reserve


def _json(cli, *args):
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _pool_tokens(weights: int, mem_util: float = 0.9) -> int:
    """An H100's KV pool in tokens beside `weights` (the catalog's usable memory x mem_util, less the reserve)."""
    return (int(lookup("h100").usable_bytes * mem_util) - weights - RESERVE) // KV_BYTES_PER_TOKEN


def test_compare_sizes_each_float_checkpoint_as_vllm_quantizes_it(cli):
    d = _json(cli, "compare", "llama-3.1-8b", "qwen3-8b", "-c", "8k", "--gpu", "h100", "--quantization", "fp8")
    llama = d["models"][0]
    assert LLAMA_VLLM == 9_081_201_536
    assert llama["weight_bytes"] == llama["weight_bytes_per_gpu"] == LLAMA_VLLM
    assert llama["pool_tokens"] == _pool_tokens(LLAMA_VLLM)
    # Qwen3-8B: hidden 4096, 36 layers, 32 heads and 8 KV heads of 128, intermediate 12288, vocab 151936, untied;
    # q_norm and k_norm (128 each) beside the two layer norms
    h, layers, inter, vocab = 4096, 36, 12288, 151936
    linear = layers * (h * 4096 + 2 * h * 1024 + 4096 * h + 3 * h * inter)
    plain = 2 * vocab * h + layers * (2 * h + 2 * 128) + h
    assert d["models"][1]["weight_bytes"] == linear + 2 * plain + layers * 7 * 4


def test_sweep_leaves_the_pool_beside_the_quantized_weights(cli):
    d = _json(cli, "sweep", "llama-3.1-8b", "-c", "4k..8k", "-n", "2", "--gpu", "h100", "--quantization", "fp8")
    rows = d["rows"]
    assert {r["pool_tokens"] for r in rows} == {_pool_tokens(LLAMA_VLLM)} == {498_110}
    assert rows[-1]["max_concurrency"] == _pool_tokens(LLAMA_VLLM) // 8192
    # the same pool as estimate's under the same rule
    e = _json(cli, "estimate", "llama-3.1-8b", "-c", "8k", "--gpu", "h100", "--mem-util", "0.9", "--quantization", "fp8")
    assert e["capacity"]["pool_tokens"] == rows[-1]["pool_tokens"]


def test_sweep_and_compare_refuse_a_bad_value_in_one_line(cli):
    for args in (("sweep", "llama-3.1-8b"), ("compare", "llama-3.1-8b", "qwen3-8b")):
        code, out, err = cli(*args, "--quantization", "int4")
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "--quantization 'int4'" in lines[0], err


SCENARIO = """name: q8
model: llama-3.1-8b
deployment:
  gpu: h100
  quantization: {value}
workload:
  prompt_tokens: 7k
  output_tokens: 1k
  concurrency: 4
"""


def test_scenario_deployment_quantization(cli, tmp_path):
    path = tmp_path / "q.yaml"
    path.write_text(SCENARIO.format(value="fp8"))
    plan = _json(cli, "plan", str(path))["scenarios"][0]["plan"]
    assert plan["model"]["weight_bytes"] == LLAMA_VLLM and plan["model"]["online_quantization"] == "fp8"
    assert plan["capacity"]["pool_tokens"] == _pool_tokens(LLAMA_VLLM)
    # plan --fit searches with the same weights and prints the flag in the check command
    first = _json(cli, "plan", str(path), "--fit")["fits"][0]["options"][0]
    assert first["weight_bytes_per_gpu"] == LLAMA_VLLM and "--quantization fp8" in first["estimate_command"]
    # a bad value or one vLLM refuses for the checkpoint: one line naming the file's line 5
    path.write_text(SCENARIO.format(value="int4"))
    code, out, err = cli("plan", str(path))
    assert code == 2 and err.strip().count("\n") == 0 and f"{path}:5: deployment.quantization" in err, err
    path.write_text(SCENARIO.format(value="fp8_per_block").replace("llama-3.1-8b", "deepseek-v3"))
    code, out, err = cli("plan", str(path))
    assert code == 2 and f"{path}:5: deployment.quantization" in err and "(fp8) does not match" in err, err


def test_fit_under_sglang_drops_a_split_whose_bf16_share_does_not_fit(cli):
    # Mixtral-8x7B in bf16 is 93,405,713,504 B (published): SGLang 0.5.23 holds it whole before quantizing, so one
    # H100 (79.18 GiB usable) cannot load it, although its FP8 weights (about 47 GB) would leave room; two GPUs can
    bf16 = 93_405_713_504
    assert bf16 > lookup("h100").usable_bytes > bf16 // 2
    args = ("fit", "mixtral-8x7b", "-c", "4k", "-n", "1", "--gpu", "h100", "--engine", "sglang", "--quantization",
            "fp8", "--kv-dtype", "auto")
    d = _json(cli, *args, "--max-gpus", "2", "--explain")
    assert min(o["gpus"] for o in d["options"]) == 2  # the planner alone passes 1 x H100 first
    one = [f for f in d["explain"]["failures"] if f["gpus"] == 1]
    assert one and one[0]["constraint"] == "float checkpoint does not fit at load"
    code, out, err = cli(*args, "--max-gpus", "1")
    assert code == 1 and f"load holds the float checkpoint first: {bf16 / 2**30:,.2f} GiB per GPU" in err, err
    # vLLM quantizes module by module: one H100 serves it
    d = _json(cli, *args[:-4], "--engine", "vllm", "--quantization", "fp8", "--kv-dtype", "auto", "--max-gpus", "1")
    assert d["options"][0]["gpus"] == 1


# Qwen3-30B-A3B (bundled config): hidden 2048, 48 layers, 32 heads and 4 KV heads of 128, 128 experts of 768, vocab
# 151936, untied; q_norm and k_norm of 128 beside the two layer norms. 61,064,245,248 B in bf16 (published)
QH, QL, QE, QI, QV = 2048, 48, 128, 768, 151936
Q_ATTN = QH * 4096 + 2 * QH * 512 + 4096 * QH  # q, k, v, o weights of a layer
Q_EXPERTS = QE * 3 * QH * QI  # a layer's routed experts
Q_ROUTER = QE * QH  # mlp.gate
Q_NORMS = QL * (2 * QH + 2 * 128) + QH
Q_ENDS = 2 * QV * QH  # embeddings and LM head, never quantized


def test_sglang_fp8_moe_keeps_one_scale_per_expert_per_projection(cli):
    # SGLang 0.5.23 fp8.py: Fp8LinearMethod a float32 scale per output row of q, k, v, o; Fp8MoEMethod on a float
    # checkpoint re-makes w13_weight_scale [experts] and keeps w2_weight_scale [experts]: 2 float32 per expert; the
    # router stays bf16 (qwen3_moe.py: quant_config None)
    assert 2 * (QL * (Q_ATTN + Q_EXPERTS + Q_ROUTER) + Q_NORMS + Q_ENDS) == 61_064_245_248  # the table adds up
    rows = QL * (4096 + 512 + 512 + 2048)
    experts = QL * QE * 2 * 4
    plain = QL * Q_ROUTER + Q_NORMS + Q_ENDS
    whole = QL * (Q_ATTN + Q_EXPERTS) + 2 * plain + 4 * rows + experts
    assert whole == 31_168_671_744  # was 31,256,702,976 with a scale per expert row (0.28% more)
    args = ("estimate", "qwen3-30b-a3b", "-c", "4k", "--gpu", "h100", "--engine", "sglang", "--quantization", "fp8")
    assert _json(cli, *args)["model"]["weight_bytes"] == whole
    # TP 2: norms, router, o_proj's row scales and the experts' scales whole on each rank (every rank holds every
    # expert under TP), the rest halved
    replicated = 2 * (Q_NORMS + QL * Q_ROUTER) + 4 * QL * 2048 + experts
    d = _json(cli, *args, "--tp", "2")
    assert d["capacity"]["weight_bytes_per_gpu"] == (whole - replicated) // 2 + replicated


def test_vllm_fp8_quantizes_the_qwen3_moe_router(cli):
    # vLLM 0.34 qwen3_moe.py builds mlp.gate as GateLinear(..., quant_config=quant_config), a LinearBase the online
    # config quantizes: the router at 1 B with a float32 scale (fp8_per_tensor), the experts with 2 scales each
    # (Fp8PerTensorOnlineMoEMethod), attention with one per checkpoint tensor (4 a layer)
    linear = QL * (Q_ATTN + Q_EXPERTS + Q_ROUTER)
    plain = Q_NORMS + Q_ENDS
    per_tensor = linear + 2 * plain + QL * 5 * 4 + QL * QE * 2 * 4
    assert per_tensor == 31_154_713_536
    args = ("estimate", "qwen3-30b-a3b", "-c", "4k", "--emit", "vllm", "--quantization")
    assert _json(cli, *args, "fp8")["model"]["weight_bytes"] == per_tensor
    # fp8_per_block: 1 B a weight plus a float32 scale per 128 x 128 block, router included
    assert _json(cli, *args, "fp8_per_block")["model"]["weight_bytes"] == linear + linear * 4 // 128**2 + 2 * plain
    # fp8_per_channel: a float32 scale per output row, the router's 128 rows too
    rows = QL * (4096 + 512 + 512 + 2048 + QE * (2 * QI + QH) + QE)
    assert _json(cli, *args, "fp8_per_channel")["model"]["weight_bytes"] == linear + 2 * plain + 4 * rows
    # experts_int8 leaves every LinearBase unquantized, the router too
    int8 = QL * Q_EXPERTS + 4 * QL * QE * (2 * QI + QH) + 2 * (QL * (Q_ATTN + Q_ROUTER) + plain)
    assert _json(cli, *args, "experts_int8")["model"]["weight_bytes"] == int8


def test_vllm_fp8_quantizes_the_lfm2_moe_router_too(cli):
    # LFM2-8B-A1B (bundled config): hidden 2048, 24 layers (6 attention with q / k layernorms of 64, 18 short convs
    # with a [2048, 1, 3] conv weight), 2 dense layers then 22 MoE layers of 32 experts with an expert_bias, vocab
    # 65536, tied. vLLM 0.34 lfm2_moe.py builds the gate GateLinear(..., quant_config=quant_config): quantized; the
    # expert_bias (e_score_correction_bias), conv weights, norms and the embeddings stay bf16
    plain = 65536 * 2048 + 18 * 2048 * 3 + 24 * 2 * 2048 + 6 * 2 * 64 + 22 * 32 + 2048
    d = _json(cli, "estimate", "lfm2-8b-a1b", "-c", "4k", "--emit", "vllm", "--quantization", "fp8")
    by_dtype = {e["dtype"]: e["elements"] for e in d["model"]["weights"]["by_dtype"]}
    assert by_dtype["bfloat16"] == plain  # the routers' 22 x 32 x 2048 weights are not among them
    assert by_dtype["fp8"] + plain == d["model"]["param_count"]
