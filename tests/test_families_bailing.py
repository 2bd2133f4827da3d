"""Ling / Ring (inclusionAI's Bailing models) as vLLM 0.33 serves them: bailing_moe (BailingMoeForCausalLM,
BailingMoeV2ForCausalLM: models/bailing_moe.py) and bailing_hybrid with BailingMoeV2_5ForCausalLM
(bailing_moe_linear.py) or BailingMoeV3ForCausalLM (bailing_moe_v3.py), and bailing_moe_v3_vl (bailing_moe_v3_vl.py,
its text model a BailingMoeV3TextConfig: transformers_utils/configs/bailing_moe_v3_vl.py).

Configs (tests/data/configs/):
- ling-lite-1.5.json: inclusionAI/Ling-lite-1.5's config.json as a public Rust test embeds it "field for field"
  (code index file id 58554451241, constant LING_LITE_CONFIG), verbatim.
- ling-mini-2.0-trimmed.json: inclusionAI/Ling-mini-2.0's config.json values as a public Swift fixture transcribes
  them, "trimmed to the architecture keys" (code index id 70927169011, BailingSyntheticConfig): the keys are the
  real ones, the file is not whole (no torch_dtype, num_nextn_predict_layers, use_rmsnorm, auto_map).
- ling-flash-2.0-handwritten.json: NOT a verbatim file (none was found): the Ling-flash-2.0 fields vLLM reads,
  written by hand. The Hub API record of inclusionAI/Ling-flash-2.0 (code index id 42479899402) gives the
  architecture (BailingMoeV2ForCausalLM, model_type bailing_moe) and the checkpoint's safetensors total,
  102,889,705,216 parameters (BF16 102,889,697,280 + F32 7,936 = 31 MoE layers' 256 expert biases); a public
  llama.cpp thread (id 39015846408) quotes its moe_shared_expert_intermediate_size 1024; the count below
  matches that total to the parameter, which no other set of these widths does by chance.
- edge0-8b-a1b-preview.json: Edge0/Edge0-8B-A1B-preview's config.json (a BailingMoeV3ForCausalLM checkpoint,
  MLX 4-bit) as a public Swift test embeds it verbatim (id 68927070218); that copy has no model_type, so
  "model_type": "bailing_hybrid" was added (the type Ling 3.0 configs carry, e.g. id 65882770861).
No real Ling / Ring 2.5 (BailingMoeV2_5ForCausalLM) config.json was found: its test reads the defaults of the
checkpoints' BailingMoeV2_5Config (inclusionAI/Ring-V2.5 models/configuration_bailing_moe_v2_5.py).
Every expected value is worked out by hand below from vLLM 0.33's modules.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.engines.vllm import simulate
from kvplan.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"
GIB = 2**30
V25 = {"model_type": "bailing_hybrid", "architectures": ["BailingMoeV2_5ForCausalLM"], "torch_dtype": "bfloat16"}


def _model(name: str):
    return build_model(json.loads((DATA / name).read_text()), name)


# -- bailing_moe ------------------------------------------------------------------------------------------

def test_ling_lite_kv_and_parameters():
    model = _model("ling-lite-1.5.json")
    assert model.reading == "exact" and model.family == "bailing_moe" and model.num_layers == 28
    # no head_dim: hidden / heads = 2048 / 16 = 128; K and V of 4 KV heads on 28 layers, bf16
    assert estimate(model, 1).bytes_per_token == 2 * 28 * 4 * 128 * 2 == 57_344
    # published (inclusionAI/Ling README): 16.8B total, 2.75B activated. By hand:
    embed = 2 * 126464 * 2048  # word embeddings + untied LM head
    attention = 2048 * (16 + 2 * 4) * 128 + 16 * 128 * 2048  # query_key_value, dense; use_bias false
    expert = 3 * 2048 * 1408
    moe = 64 * expert + 2048 * 64 + 3 * 2048 * (2 * 1408)  # 64 experts, router, shared MLP of 2 x 1408
    total = embed + 2048 + 28 * (attention + 2 * 2048 + moe)  # first_k_dense_replace 0: every layer MoE
    assert model.param_count == total == 16_801_974_272
    assert model.active_param_count == total - 28 * (64 - 6) * expert == 2_753_153_024
    # the published figures are rounded to three digits: within half a unit of the last
    assert abs(total - 16.8e9) <= 0.05e9 and abs(model.active_param_count - 2.75e9) <= 0.005e9


def test_ling_lite_says_how_vllm_reads_its_window():
    # BailingMoeConfig sets sliding_window = 4096 whatever use_sliding_window says, and vLLM 0.33's
    # ModelConfig.get_sliding_window reads it ungated: kvplan plans full attention and says so
    model = _model("ling-lite-1.5.json")
    assert not any(c.policy.window_tokens for layer in model.layers for c in layer.caches)
    assert any("4,096-token window" in note for note in model.notes)


def test_ling_mini_2_kv_and_parameters():
    model = _model("ling-mini-2.0-trimmed.json")
    assert model.reading == "exact" and model.architecture == "BailingMoeV2ForCausalLM"
    assert estimate(model, 1).bytes_per_token == 2 * 20 * 4 * 128 * 2 == 40_960
    # Ling-mini-2.0 README: 16B total, 1.4B activated, "non-embedding 789M"
    embed = 2 * 157184 * 2048
    attention = 2048 * 24 * 128 + 16 * 128 * 2048 + 2 * 128 * 2  # + query/key nn.LayerNorm (no use_rmsnorm)
    expert = 3 * 2048 * 512
    moe = 256 * expert + 2048 * 256 + 256 + 3 * 2048 * 512  # experts, router, expert_bias, one shared MLP
    dense = 3 * 2048 * 5120  # layer 0 (first_k_dense_replace 1)
    total = embed + 2048 + 20 * (attention + 2 * 2048) + dense + 19 * moe
    assert model.param_count == total == 16_255_648_512
    active = total - 19 * (256 - 8) * expert
    assert model.active_param_count == active == 1_432_978_176
    assert abs(active - embed - 789e6) <= 0.5e6  # 789,152,512 non-embedding: the published 789M
    assert abs(total - 16e9) <= 0.5e9  # "16B", rounded to whole billions


def test_ling_flash_2_matches_the_checkpoint_total():
    model = _model("ling-flash-2.0-handwritten.json")
    assert estimate(model, 1).bytes_per_token == 2 * 32 * 4 * 128 * 2 == 65_536
    embed = 2 * 157184 * 4096
    attention = 4096 * (32 + 8) * 128 + 32 * 128 * 4096 + 2 * 128  # query/key RMSNorms (use_rmsnorm)
    expert = 3 * 4096 * 1024
    moe = 256 * expert + 4096 * 256 + 256 + 3 * 4096 * 1024
    total = embed + 4096 + 32 * (attention + 2 * 4096) + 3 * 4096 * 9216 + 31 * moe
    # the Hub's safetensors total for inclusionAI/Ling-flash-2.0: exact
    assert model.param_count == total == 102_889_705_216
    # "6.1B activated parameters (4.8B non-embedding)", truncated to one decimal
    assert 6.1e9 <= model.active_param_count < 6.2e9
    assert 4.8e9 <= model.active_param_count - embed < 4.9e9


def test_bailing_moe_refuses_zero_kv_heads():
    # BailingMoeConfig's default num_key_value_heads is 0, which vLLM's BailingAttention cannot build
    raw = json.loads((DATA / "ling-lite-1.5.json").read_text())
    del raw["num_key_value_heads"]
    with pytest.raises(ConfigError, match="num_key_value_heads is 0"):
        build_model(raw, "lite")


def test_bailing_moe_v2_needs_the_fields_its_class_defaults_kvplan_has_not_read():
    # the Ling 2.0 class's own default for first_k_dense_replace is not read: the count is left out, said once
    raw = json.loads((DATA / "ling-mini-2.0-trimmed.json").read_text())
    del raw["first_k_dense_replace"]
    model = build_model(raw, "mini")
    assert model.param_count == 0 and any("first_k_dense_replace" in note for note in model.notes)
    assert estimate(model, 1).bytes_per_token == 40_960  # the cache does not depend on it


# -- bailing_hybrid: Ling / Ring 2.5 (lightning attention) ---------------------------------------------------

def test_v25_lightning_state_and_mla_from_the_class_defaults():
    model = build_model(dict(V25), "v25")
    # BailingMoeV2_5Config: 20 layers, layer_group_size 5: MLA on 4, 9, 14, 19 (no tail rule in V2.5)
    assert [i for i, layer in enumerate(model.layers) if layer.caches] == [4, 9, 14, 19]
    est = estimate(model, 1)
    assert est.bytes_per_token == 4 * (512 + 64) * 2 == 4_608  # kv_lora_rank + qk_rope_head_dim, bf16
    # 16 lightning layers: 16 heads x 128 x 128 in the model dtype, no conv (linear_attention_state_shape)
    assert est.state_bytes_per_sequence == 16 * 16 * 128 * 128 * 2 == 8_388_608
    assert {layer.state.kind for layer in model.layers if layer.state} == {"lightning"}


def test_v25_parameters_by_hand():
    model = build_model(dict(V25), "v25")
    linear = 2048 * 3 * 2048 + 2 * 128 + 2048 * 2048 + 2048 + 2048 * 2048  # qkv, q/k norm, g_proj, g_norm, dense
    mla = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048  # no q LoRA by default
    expert = 3 * 2048 * 512
    moe = 256 * expert + 2048 * 256 + 256 + 3 * 2048 * 512
    total = (2 * 157184 * 2048 + 2048 + 16 * linear + 4 * mla + 20 * 2 * 2048 + 3 * 2048 * 5120 + 19 * moe)
    assert model.param_count == total == 16_436_556_544
    assert model.active_param_count == total - 19 * (256 - 8) * expert


def test_v25_head_dim_null_is_hidden_over_heads():
    # BailingMoeV2_5Config: head_dim = head_dim or hidden_size // num_attention_heads
    model = build_model(dict(V25, head_dim=None, hidden_size=4096, num_attention_heads=32), "v25")
    state = next(layer.state for layer in model.layers if layer.state)
    assert state.ssm_elements == 32 * 128 * 128


# -- bailing_hybrid: Ling 3.0 (Kimi Delta Attention) --------------------------------------------------------

def test_edge0_v3_layers_state_and_parameters():
    model = _model("edge0-8b-a1b-preview.json")
    # _is_kda_layer: MLA when (i + 1) % 4 == 0 or i >= 24 // 4 * 4 (no tail here)
    assert [i for i, layer in enumerate(model.layers) if layer.caches] == [3, 7, 11, 15, 19, 23]
    est = estimate(model, 1)
    assert est.bytes_per_token == 6 * (512 + 64) * 2 == 6_912
    # 18 KDA layers: conv (4 - 1) x 3 x 16 x 128 bf16 + 16 x 128 x 128 float32
    assert est.state_bytes_per_sequence == 18 * (3 * 3 * 2048 * 2 + 16 * 128 * 128 * 4) == 19_537_920
    kda = (1536 * (3 * 2048 + 16) + 1536 * 2048 + 2048 + 3 * 2048 * 4 + 16  # qkvb, f_proj, dt_bias, convs, A_log
           + 1536 * 2048 + 128 + 2048 * 1536)  # g_proj, o_norm, o_proj
    mla = (1536 * (256 + 576) + 256 + 256 * 16 * 192  # q LoRA (q_lora_rank 256): fused_qkv_a, q_a_layernorm, q_b
           + 512 + 512 * 16 * 256 + 1536 * 16 + 2048 * 1536)  # kv_a_layernorm, kv_b, head-wise g_proj, dense
    expert = 3 * 1536 * 512
    moe = 128 * expert + 1536 * 128 + 128 + 3 * 1536 * 512  # shared: moe_shared_expert_intermediate_size 512
    total = 2 * 157184 * 1536 + 1536 + 24 * 2 * 1536 + 18 * kda + 6 * mla + 3 * 1536 * 4608 + 23 * moe
    assert model.param_count == total == 7_893_392_800
    assert model.active_param_count == total - 23 * (128 - 8) * expert == 1_381_735_840
    assert abs(total - 8e9) <= 0.5e9  # "8B-A1B": whole billions


# -- vLLM 0.33's pool ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, blocks", [
    # 4 KV heads at TP 8: one replicated head a rank; a block of 16 tokens, 2 x 128 x 2 B: 8,192 B a layer
    ("ling-lite-1.5.json", 10 * GIB // (28 * 16 * 2 * 128 * 2)),  # 46,811
    ("ling-flash-2.0-handwritten.json", 10 * GIB // (32 * 16 * 2 * 128 * 2)),  # 40,960
    # 4 groups of 6 layers (3 KDA, 1 MLA); pages of 128 tokens x 576 x 2 B = 147,456 B hold a KDA state
    # (2 heads a rank: 3 x 768 x 2 B conv + 2 x 128 x 128 x 4 B = 135,680 B)
    ("edge0-8b-a1b-preview.json", 10 * GIB // (6 * 128 * 576 * 2)),  # 12,136
])
def test_vllm_pool_tp8(name, blocks):
    from kvplan.engines.vllm_rules import V0_33

    # vLLM 0.33's 16-token default block (0.34's is 64: tests/test_vllm_versions.py)
    pool = simulate(_model(name), kv_memory_bytes=10 * GIB, max_model_len=32768, tp=8, gpu="h200", rules=V0_33)
    assert pool.num_blocks == blocks


def test_vllm_pool_v25_tp8():
    # 5 groups of 4 layers (4 lightning groups, 1 MLA); a page of 128 x 576 x 2 B = 147,456 B holds a lightning
    # state of 2 heads a rank x 128 x 128 x 2 B = 65,536 B
    pool = simulate(build_model(dict(V25), "v25"), kv_memory_bytes=10 * GIB, max_model_len=32768, tp=8, gpu="h200")
    assert pool.num_blocks == 10 * GIB // (4 * 128 * 576 * 2) == 18_204


def test_v3_vl_reads_its_text_model_with_vllms_text_config_defaults():
    # vLLM 0.33 BailingMoeV3VLConfig: text_config is a BailingMoeV3TextConfig (20 layers, layer_group_size 5,
    # 16 heads of 128, no MLA output gate), built as BailingMoeV3ForCausalLM (the tail rule: none at 20 / 5)
    raw = {"model_type": "bailing_moe_v3_vl", "architectures": ["BailingMoeV3VLForConditionalGeneration"],
           "text_config": {"no_kda_lora": True}, "torch_dtype": "bfloat16"}
    model = build_model(raw, "vl")
    assert model.reading == "exact" and model.family == "bailing_hybrid"
    assert [i for i, layer in enumerate(model.layers) if layer.caches] == [4, 9, 14, 19]
    est = estimate(model, 1)
    assert est.bytes_per_token == 4 * (512 + 64) * 2
    assert est.state_bytes_per_sequence == 16 * (3 * 3 * 2048 * 2 + 16 * 128 * 128 * 4) == 17_367_040
    kda = 2048 * (3 * 2048 + 16) + 2048 * 2048 + 2048 + 3 * 2048 * 4 + 16 + 2048 * 2048 + 128 + 2048 * 2048
    mla = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048  # gate None: no g_proj
    moe = 256 * 3 * 2048 * 512 + 2048 * 256 + 256 + 3 * 2048 * 512
    total = 2 * 157184 * 2048 + 2048 + 20 * 2 * 2048 + 16 * kda + 4 * mla + 3 * 2048 * 5120 + 19 * moe
    assert model.param_count == total == 16_504_581_120
