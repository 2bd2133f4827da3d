"""Kimi K3's parameter count and cache, worked out by hand from its config and vLLM 0.33's module list.

Config: tests/data/configs/kimi-k3.json (moonshotai/Kimi-K3's config.json, byte-identical to the sweep's copy;
see tests/test_families_2026.py for its provenance). Its text_config is model_type kimi_linear with Kimi K3's
fields, which transformers 5.23 does not build; vLLM 0.33 builds them in models/kimi_k3/nvidia (model.py
KimiLinearForCausalLM / KimiMoE / KimiDecoderLayer, mla.py MultiHeadLatentAttention, kda.py
KimiK3DeltaAttention) from its own KimiLinearConfig (transformers_utils/configs/kimi_linear.py).

text_config: hidden H = 7168, vocab 163,840 (untied), 93 layers; MLA: 96 heads, q_lora_rank 1536,
kv_lora_rank 512, nope 128, rope 64, v 128, mla_use_output_gate; KDA (linear_attn_config): 96 heads x 128
(P = 12,288), kernel 4, use_full_rank_gate; layer i is KDA when i + 1 is in kda_layers (69 layers, layer 0
among them), MLA otherwise (24: full_attn_layers 4, 8, ..., 92, 93); MoE: 896 experts, top 16, 2 shared,
moe_intermediate_size 3072, routed_expert_hidden_size 3584, latent_moe_use_norm; first_k_dense_replace 1
(layer 0 a dense MLP of intermediate_size 33,792, layers 1-92 MoE); attn_res_block_size 12.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate

DATA = Path(__file__).parent / "data" / "configs"
H, VOCAB = 7168, 163_840

# MLA (mla.py, no biases): fused_qkv_a_g_proj = q_a (H x 1536) + kv_a (H x 576) + output gate g (H x 96 x 128),
# q_a_layernorm 1536, q_b (1536 x 96 x 192), kv_a_layernorm 512, kv_b (512 x 96 x 256), o_proj (12,288 x H)
MLA = (H * 1536 + H * 576 + H * 12_288 + 1536 + 1536 * 96 * 192 + 512 + 512 * 96 * 256 + 12_288 * H)
# KDA (kda.py): in_proj_qkvgfab H x (4 x P + 128 + 96) (q, k, v, full-rank g, f_a, b), f_b_proj 128 x P,
# dt_bias P, conv1d 3P x 4, A_log 96, o_norm 128, o_proj P x H
KDA = H * (4 * 12_288 + 128 + 96) + 128 * 12_288 + 12_288 + 3 * 12_288 * 4 + 96 + 128 + 12_288 * H
EXPERT = 3 * 3584 * 3072  # gate_up + down at the latent width 3584, moe_intermediate_size 3072
# KimiMoE: gate H x 896 + e_score_correction_bias 896, 896 experts, shared experts (H x 3072 x 2, gated),
# routed_expert_down_proj H x 3584, routed_expert_norm 3584, routed_expert_up_proj 3584 x H
MOE = H * 896 + 896 + 896 * EXPERT + 3 * H * 6144 + H * 3584 + 3584 + 3584 * H
DENSE = 3 * H * 33_792  # layer 0's KimiMLP
NORMS = 6 * H  # input/post-attention norms, self_attention_res_norm, mlp_res_norm, two H -> 1 res projections
OUTER = 2 * VOCAB * H + 3 * H  # embed_tokens, lm_head, norm, output_attn_res_norm, output_attn_res_proj


def _k3(**text):
    raw = json.loads((DATA / "kimi-k3.json").read_text())
    raw["text_config"].update(text)
    return build_model(raw, "kimi-k3.json")


def test_hand_figures():
    assert MLA == 232_196_096
    assert KDA == 443_740_384
    assert EXPERT == 33_030_144
    assert MOE == 29_784_936_832
    assert DENSE == 726_663_168


def test_kimi_k3_total_and_active_parameters():
    model = _k3()
    total = 24 * MLA + 69 * KDA + 92 * MOE + DENSE + 93 * NORMS + OUTER
    assert total == 2_779_484_476_000
    # active: 16 of the 896 routed experts in each of the 92 MoE layers
    active = total - 92 * (896 - 16) * EXPERT
    assert active == 105_364_017_760
    assert (model.param_count, model.active_param_count) == (total, active)


def test_kimi_k3_cache_is_unchanged_by_its_new_fields():
    # mla.py: the cache holds kv_lora_rank + qk_rope_head_dim a token whether or not RoPE runs (mla_use_nope);
    # the output gate and the attention residuals hold weights and activations only
    est = estimate(_k3(), 32768)
    assert est.bytes_per_token == 24 * (512 + 64) * 2 == 27_648
    assert est.state_bytes_per_sequence == 69 * (96 * 128 * 128 * 4 + 3 * 3 * 96 * 128 * 2) == 449_372_160


@pytest.mark.parametrize("edit, delta", [
    # no latent MoE: the routed experts at hidden width, no down/up projections or norm
    ({"routed_expert_hidden_size": None},
     92 * (896 * 3 * H * 3072 - 896 * EXPERT - 2 * H * 3584 - 3584)),
    ({"latent_moe_use_norm": False}, -92 * 3584),
    ({"mla_use_output_gate": False}, -24 * H * 12_288),
    ({"attn_res_block_size": None}, -93 * 4 * H - 2 * H),
])
def test_each_field_has_its_modules(edit, delta):
    assert _k3(**edit).param_count - _k3().param_count == delta


def test_low_rank_kda_gate():
    # without use_full_rank_gate: g_a (H x 128) and g_b (128 x P) instead of g (H x P)
    raw = json.loads((DATA / "kimi-k3.json").read_text())
    raw["text_config"]["linear_attn_config"]["use_full_rank_gate"] = False
    model = build_model(raw, "kimi-k3.json")
    assert model.param_count - _k3().param_count == 69 * (H * 128 + 128 * 12_288 - H * 12_288)


@pytest.mark.parametrize("edit, message", [
    ({"attention_bias": True}, "without biases"),
    ({"mlp_layer_types": ["sparse"] * 93}, "mlp_layer_types disagrees"),
])
def test_what_vllm_would_not_build_is_not_counted(edit, message):
    model = _k3(**edit)
    assert model.param_count == 0
    assert any("parameters not counted" in n and message in n for n in model.notes)


def test_kimi_linear_48b_is_unchanged():
    """Kimi-Linear-48B-A3B writes none of K3's fields: transformers' count, as before; vLLM 0.33's layout
    (the same KimiLinearForCausalLM, low-rank KDA gate, no latent MoE) counts it the same."""
    from kvplan.configs.build import _read
    from kvplan.configs.params_kimi_k3 import kimi_k3_text
    from kvplan.sources import bundled_config, bundled_index, load_model

    model = load_model("kimi-linear-48b-a3b")
    assert (model.param_count, model.active_param_count) == (49_122_681_728, 3_484_459_904)
    _, f, _, layers, dims = _read(bundled_config(bundled_index()["kimi-linear-48b-a3b"]), "kimi-linear-48b-a3b")
    assert kimi_k3_text(f, layers, dims) == (49_122_681_728, 3_484_459_904)
