"""SGLang 0.5.23's data-parallel attention beyond DeepSeek-V2 / V3 (kvplan.engines.sglang_dp.DP_FAMILIES).

Read in the sglang 0.5.23 wheel: each family's attention over the attention TP group (parallel_group="attn_tp",
num_kv_heads = max(1, kv_heads // attn_tp_size)), its embedding with use_attn_tp_group=is_dp_attention_enabled(),
and the routed experts (FusedMoE), dense MLPs, shared experts and LM head on the whole "tp" group (layers/linear.py
_resolve_linear_group: "tp" is the TP group; ParallelLMHead use_attn_tp_group only under --enable-dp-lm-head):
models/qwen3_moe.py Qwen3MoeAttention / Qwen3MoeForCausalLM, models/qwen2_moe.py Qwen2MoeSparseMoeBlock (shared_expert
Qwen2MoeMLP "tp"), models/glm4_moe.py Glm4MoeDecoderLayer (dense Glm4MoeMLP "tp") / Glm4MoeSparseMoeBlock (shared
experts "tp"). models/llama.py LlamaAttention and qwen2.py Qwen2Attention split their heads over get_parallel().tp_size
instead: refused.

At --tp 8 --dp 8 (attention TP 1) one GPU holds what TP 1 holds less 7/8 of the routed experts, dense MLPs, shared
experts and LM head (all bf16, 2 B a parameter, config.json shapes):
- Qwen3-30B-A3B: hidden 2,048, moe_intermediate 768, 128 experts in each of 48 layers, no dense layer or shared
  expert, vocab 151,936 untied; 4 KV heads of 128.
- Qwen2-57B-A14B: hidden 3,584, moe_intermediate 2,560, 64 experts in each of 28 layers, shared_expert_intermediate
  20,480, vocab 151,936 untied; 4 KV heads of 128.
- Qwen3-8B (dense, models/qwen3.py: Qwen3Attention on "attn_tp", Qwen3MLP = qwen2.Qwen2MLP on "tp"): hidden 4,096,
  intermediate 12,288, 36 layers, vocab 151,936 untied; 8 KV heads of 128.
- GLM-4.5-Air: hidden 4,096, layer 0 dense (intermediate 10,944), 45 MoE layers of 128 experts and 1 shared expert
  (moe_intermediate 1,408), vocab 151,552 untied; 46 layers of 8 KV heads of 128 (the MTP layer not loaded).
"""

from __future__ import annotations

import pytest

from kvplan_inprocess import estimate_json, kvplan, refused_line

BIG = ("--gpu", "h200", "--gpu-memory", "2TB", "--context", "32k", "--engine", "sglang")  # room for TP 1

# Qwen3-30B-A3B
Q3_EXPERT = 3 * 2_048 * 768 * 2  # gate, up, down: 9,437,184 B
Q3_ROUTED = 48 * 128 * Q3_EXPERT  # 57,982,058,496 B
Q3_HEAD = 151_936 * 2_048 * 2  # 622,329,856 B
Q3_SPLIT = Q3_ROUTED + Q3_HEAD  # 58,604,388,352 B, 7,325,548,544 B an eighth
# Qwen2-57B-A14B
Q2_ROUTED = 28 * 64 * 3 * 3_584 * 2_560 * 2  # 98,650,030,080 B
Q2_SHARED = 28 * 3 * 3_584 * 20_480 * 2  # 12,331,253,760 B
Q2_HEAD = 151_936 * 3_584 * 2  # 1,089,077,248 B
# GLM-4.5-Air
GLM_EXPERT = 3 * 4_096 * 1_408 * 2  # 34,603,008 B
GLM_SPLIT = 45 * 128 * GLM_EXPERT + 45 * GLM_EXPERT + 3 * 4_096 * 10_944 * 2 + 151_552 * 4_096 * 2


def _saving(model: str) -> tuple[int, int]:
    """Bytes a GPU holds less at --tp 8 --dp 8 than at TP 1: SGLang's report, kvplan's own plan."""
    whole, dp8 = estimate_json(model, *BIG), estimate_json(model, *BIG, "--tp", "8", "--dp", "8")
    assert dp8["engine"]["attn_tp"] == 1
    return (whole["engine"]["weight_bytes_per_gpu"] - dp8["engine"]["weight_bytes_per_gpu"],
            whole["capacity"]["weight_bytes_per_gpu"] - dp8["capacity"]["weight_bytes_per_gpu"])


def test_qwen3_moe_dp8_routed_experts_and_head_over_all_eight_kv_heads_whole():
    assert Q3_SPLIT == 58_604_388_352 and Q3_SPLIT % 8 == 0
    assert _saving("qwen3-30b-a3b") == (51_278_839_808,) * 2  # 58,604,388,352 - 7,325,548,544
    # the KV heads over the attention TP group: all 4 in each DP rank's pool, 48 x 4 x 128 x (K + V) x 2 B; at
    # --tp 8 alone each GPU keeps max(1, 4 // 8) = 1 (Qwen3MoeAttention)
    args = ("qwen3-30b-a3b", "--gpu", "h200", "--context", "32k", "--engine", "sglang", "--kv-memory", "32GiB")
    assert estimate_json(*args, "--tp", "8", "--dp", "8")["engine"]["cell_bytes"] == 48 * 4 * 128 * 2 * 2 == 98_304
    assert estimate_json(*args, "--tp", "8")["engine"]["cell_bytes"] == 48 * 1 * 128 * 2 * 2 == 24_576


def test_qwen2_moe_dp8_shared_expert_over_all_eight():
    split = Q2_ROUTED + Q2_SHARED + Q2_HEAD  # 112,070,361,088 B
    assert split % 8 == 0 and split - split // 8 == 98_061_565_952
    assert _saving("qwen2-57b-a14b") == (98_061_565_952,) * 2


def test_glm4_moe_dp8_dense_layer_and_shared_expert_over_all_eight():
    assert GLM_SPLIT == 202_380_935_168 and GLM_SPLIT % 8 == 0
    assert _saving("glm-4.5-air") == (177_083_318_272,) * 2  # 202,380,935,168 - 25,297,616,896


def test_dense_qwen3_dp8_mlps_and_head_over_all_eight():
    split = 36 * 3 * 4_096 * 12_288 * 2 + 151_936 * 4_096 * 2  # 10,871,635,968 + 1,244,659,712 B
    assert split == 12_116_295_680 and split - split // 8 == 10_601_758_720
    assert _saving("qwen3-8b") == (10_601_758_720,) * 2
    cell = estimate_json("qwen3-8b", *BIG, "--tp", "8", "--dp", "8")["engine"]["cell_bytes"]
    assert cell == 36 * 8 * 128 * 2 * 2 == 147_456  # all 8 KV heads in each rank's pool


def test_emit_sglang_prints_attn_dp_size_for_qwen3_moe():
    argv = estimate_json("qwen3-30b-a3b", "--context", "32k", "--gpu", "h200", "--tp", "8", "--dp", "8", "--ep",
                         "--emit", "sglang")["emit"]["argv"]
    at = argv.index("--tp-size")
    assert argv[at:at + 6] == ["--tp-size", "8", "--attn-dp-size", "8", "--ep-size", "8"]  # 8 divides 128 experts


@pytest.mark.parametrize("model,source", [
    ("deepseek-v3.2-exp", "deepseek_v2.py"), ("gpt-oss-120b", "gpt_oss.py"), ("minimax-m2", "minimax_m2.py"),
    ("qwen3-next-80b-a3b", "qwen3_next.py"), ("llama-4-scout", "llama4.py"), ("glm-4.7", "glm4_moe.py"),
])
def test_read_families_planned_with_their_source_named(model, source):
    out = kvplan("estimate", model, *BIG, "--tp", "8", "--dp", "8")
    assert out.returncode == 0, out.stderr
    note = next(line for line in out.stdout.splitlines() if "--attn-dp-size" in line and "attention groups" in line)
    assert f"over all 8 GPUs ({source})" in note
    assert ("the vision tower as SGLang's mllama4.py places it" in note) == (model == "llama-4-scout")


def test_kimi_k2_is_deepseek_v3_and_planned():
    # Kimi-K2's config names DeepseekV3ForCausalLM (deepseek_v2.py): 16 x B200, attention TP 1
    out = kvplan("estimate", "kimi-k2", "--gpu", "b200", "--context", "32k", "--tp", "16", "--dp", "16",
                 "--engine", "sglang")
    assert out.returncode == 0, out.stderr
    assert "16 attention groups of attention TP 1" in out.stdout


def test_refusals_name_the_reason():
    line = refused_line("llama-3.1-8b", "--gpu", "h100", "--tp", "4", "--dp", "2", "--engine", "sglang")
    assert "not LlamaForCausalLM: models/llama.py LlamaAttention splits its heads over the whole --tp" in line
    line = refused_line("qwen2.5-7b", "--gpu", "h100", "--tp", "4", "--dp", "2", "--engine", "sglang")
    assert "qwen2.py Qwen2Attention splits its heads over the whole --tp" in line
    line = refused_line("mixtral-8x7b", "--gpu", "h100", "--tp", "4", "--dp", "2", "--engine", "sglang")
    # the read ones counted and pointed at (docs/sglang.md lists them), not spelled out in the one line
    assert "not MixtralForCausalLM" in line and "the 15 architectures" in line and "docs/sglang.md" in line


def test_fit_dp_ep_sglang_searches_qwen3_moe():
    import json

    out = kvplan("fit", "qwen3-30b-a3b", "--context", "32k", "--gpu", "h200", "--concurrency", "64", "--dp-ep",
                 "--engine", "sglang", "--top", "0", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert "dp_ep_skipped" not in data
    dp8 = next(o for o in data["options"] if o["dp"] == 8)
    whole = estimate_json("qwen3-30b-a3b", *BIG)["capacity"]["weight_bytes_per_gpu"]
    assert (dp8["gpus"], dp8["tp"], dp8["ep"]) == (8, 1, True)
    assert dp8["weight_bytes_per_gpu"] == whole - 51_278_839_808
    assert " --tp 8 --pp 1 --dp 8 --ep " in dp8["estimate_command"]
