"""Parameter counts of K2-Horizon (k2_horizon) and AliceAI (alice_ai) as vLLM 0.33 builds them
(kvplan/configs/k2_horizon.py: k2_horizon_params, alice_params), worked out by hand from
vllm/model_executor/models/k2_horizon.py (K2HorizonAttention, K2HorizonMoVAAttention, K2HorizonSparseMoeBlock,
K2HorizonMLP, K2HorizonDecoderLayer, K2HorizonModel, K2HorizonForCausalLM) and alice_ai.py (AliceAIDecoderBlock,
AliceAISparseMoeBlock, _AttentionResidualFinal, AliceAIModel, AliceAIForCausalLM; Qwen3NextAttention from
qwen3_next.py, KimiGatedDeltaNetAttention from layers/mamba/gdn/kimi_gdn_linear_attn.py).

Configs: tests/test_families_registry_text.py's K2 (K2-Horizon-MoVA-36B-A4B's shape from a public port's
descriptor) and ALICE (hand-written: no AliceAI config.json was found in the code index; its MoE is Qwen3-Next-80B-
A3B's shape). No published safetensors total was found for either; the names' sizes are checked loosely below.
"""

from __future__ import annotations

import pytest

from kvplan.configs.build import build_model

from test_families_registry_text import ALICE, K2


def test_k2_horizon_mova_36b_a4b():
    model = build_model(K2, "k2")
    h, q, k = 2560, 32 * 128, 8 * 128
    # every layer: o_proj 4,096 x 2,560, gate_proj (attention_gate_func softplus) 2,560 x 4,096, two norms
    common = q * h + h * q + 2 * h
    plain = h * (q + 2 * k)  # qkv_proj, dense layers 0-2
    # sparse layers 3-47: MoVA qk_proj 2,560 x (4,096 + 1,024), v_router 2,560 x 64 + its bias (moe_gate_bias),
    # 64 value experts 2,560 x 1,024
    mova = h * (q + k) + h * 64 + 64 + 64 * h * k
    # MoE: gate 2,560 x 100 + bias, 100 experts 3 x 2,560 x 768, one shared expert of 768
    moe = h * 100 + 100 + 100 * 3 * h * 768 + 3 * h * 768
    dense = 3 * h * 6144
    assert (common, plain, mova, moe, dense) == (20_976_640, 15_728_640, 181_043_264, 595_978_340, 47_185_920)
    ends = 2 * 250_624 * h + h  # embed_tokens, untied lm_head, final norm
    total = 3 * (common + plain + dense) + 45 * (common + mova + moe) + ends
    assert model.param_count == total == 37_444_792_020
    # a token leaves 92 routed experts and 60 value experts of each sparse layer idle
    assert model.active_param_count == total - 45 * (92 * 3 * h * 768 + 60 * h * k) == 5_948_190_420
    # the name: 36B without the embeddings and head (37.44 - 1.28), about 4.7B active without them
    assert round((total - ends) / 1e9) == 36


def test_k2_horizon_dense_defaults():
    # K2HorizonConfig's defaults: num_experts 0 (dense), no norms on q/k, no gate, untied, vocab 64,256
    raw = {"model_type": "k2_horizon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 96}
    # qkv 64 x (64 + 2 x 32) + o 64 x 64 + mlp 3 x 64 x 96 + two norms, per layer
    layer = 64 * 128 + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert build_model(raw, "k2").param_count == 2 * layer + 2 * 64_256 * 64 + 64 == 8_286_528


def test_k2_horizon_query_key_norm_and_biases():
    raw = {"model_type": "k2_horizon", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 96, "vocab_size": 10,
           "query_key_norm": True, "attention_bias": True, "tie_word_embeddings": True}
    # qkv 64 x 128 + 128 bias, o 64 x 64 + 64 bias, q_norm 64 + k_norm 32 (all heads), mlp, two norms;
    # embeddings tied: 10 x 64, final norm 64
    layer = 64 * 128 + 128 + 64 * 64 + 64 + 64 + 32 + 3 * 64 * 96 + 2 * 64
    assert build_model(raw, "k2").param_count == layer + 10 * 64 + 64 == 31_840


def test_alice_ai_counts_attention_kda_moe_and_residual_blocks():
    model = build_model(ALICE, "alice")
    h = 2048
    # Qwen3NextAttention (12 layers): qkv_proj 2,048 x (2 x 16 + 2 x 2) x 256 (queries, their gate, K, V),
    # o_proj 4,096 x 2,048, q/k norms 2 x 256
    full = h * (2 * 16 + 2 * 2) * 256 + 4096 * h + 2 * 256
    # KDA (36 layers), 16 heads of 128, P = 2,048, kernel 4: q/k/v 3 x 2,048 x 2,048, conv 3 x 2,048 x 4,
    # f_a 2,048 x 128, f_b 128 x 2,048, dt_bias 2,048, A_log 16, b 2,048 x 16, g_a 2,048 x 128, g_b 128 x 2,048,
    # o_norm 128, o_proj 2,048 x 2,048
    kda = (3 * h * 2048 + 3 * 2048 * 4 + h * 128 + 128 * 2048 + 2048 + 16 + h * 16 + h * 128 + 128 * 2048 + 128
           + 2048 * h)
    # MoE on every layer: gate 2,048 x 512 + e_score_correction_bias 512, 512 experts 3 x 2,048 x 512,
    # shared_expert_gate 2,048 x 1, shared expert 3 x 2,048 x 512
    moe = h * 512 + 512 + 512 * 3 * h * 512 + h + 3 * h * 512
    assert (full, kda, moe) == (27_263_488, 17_885_328, 1_614_809_600)
    # two norms and mlp_res_proj + mlp_res_norm_weight a layer, attn_res_proj + attn_res_norm_weight on 47;
    # embed_tokens and the never-tied lm_head 151,936 x 2,048, final norm, attnres_final's proj and norm
    rest = 48 * 4 * h + 47 * 2 * h + 2 * 151_936 * h + h + 2 * h
    total = 12 * full + 36 * kda + 48 * moe + rest
    assert model.param_count == total == 79_104_816_192
    # 502 of 512 routed experts idle a layer
    assert model.active_param_count == total - 48 * 502 * 3 * h * 512 == 3_305_354_304
    # Qwen3-Next-80B-A3B's shape: about 80B total, 3B active, as a public GGUF converter names the AliceAI
    # foundation model (AliceAI-Foundation-80B-A3B, code index id 68482645588)
    assert round(total / 1e9) == 79 and round(model.active_param_count / 1e9) == 3


def test_alice_ai_without_shared_expert_keeps_its_gate():
    # shared_expert_intermediate_size 0: no Qwen2MoeMLP, but AliceAISparseMoeBlock builds shared_expert_gate
    with_shared = build_model(ALICE, "alice").param_count
    without = build_model({**ALICE, "shared_expert_intermediate_size": 0}, "alice").param_count
    assert with_shared - without == 48 * 3 * 2048 * 512


@pytest.mark.parametrize("field", ["num_experts", "shared_expert_intermediate_size", "linear_conv_kernel_dim"])
def test_alice_ai_fields_vllm_reads_are_required(field):
    # vLLM 0.33 ships no AliceAI config class, so no default stands in for a field the model reads
    model = build_model({k: v for k, v in ALICE.items() if k != field}, "alice")
    assert model.param_count == 0 and any(field in n for n in model.notes)
