"""Per-module weight tables of Gemma 4 Unified's text model (gemma4_unified_text) and plain Kimi-Linear (kimi_linear
without Kimi K3's fields), kvplan/configs/weight_tables/wrapped.py: each mirrors its counter
(params_dense.gemma4_unified_text through gemma4_fields; params_hybrid.kimi_linear through kimi_linear_fields and
latent_delta_moe) and must add up to the family's own count, or the table is not used.

Test data:
- tests/data/configs/gemma-4-12b-unified.json: the Gemma 4 Unified 12B config.json (text_config and vision_config)
  as a public test quotes it whole (code-index id 56164536748, gemma4Unified12BConfigDecode; the text it decodes
  mirrors mlx-community/gemma-4-12B-it's); no quantized checkpoint of it was found, so the ignore list below is
  written by hand on the pattern of nvidia/Gemma-4-31B-IT-NVFP4's (lm_head and every layer's self_attn*);
- Kimi-Linear-48B-A3B-Instruct: kvplan's bundled verbatim config.json (kvplan/sources, kimi-linear-48b-a3b); no
  quantized checkpoint with an ignore list was found, so the FP8 list below is written by hand on the pattern of
  moonshotai/Kimi-K3's published one (self_attn, shared_experts, the dense mlp, lm_head).
Module names: vLLM 0.33 gemma4_unified.py (hf_to_vllm_mapper: model.language_model. -> language_model.model.) and
gemma4.py; models/kimi_k3/nvidia/model.py KimiLinearModel.load_weights (stacked_params_mapping, experts w1/w2/w3).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.configs import build_model
from kvplan.configs.fields import Fields
from kvplan.configs.weight_tables import table
from kvplan.sources import bundled_config, bundled_index

DATA = Path(__file__).resolve().parent / "data" / "configs"

NVFP4_KEEP_ATTENTION = {"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["lm_head", "*self_attn*"]}
FP8_CHANNEL = {
    "quant_method": "compressed-tensors", "format": "float-quantized",
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
        "num_bits": 8, "type": "float", "strategy": "channel", "dynamic": False, "symmetric": True}}},
    "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", r"re:.*mlp\..*"],
}


def _note(model) -> str:
    return next(n for n in model.notes if n.startswith("weights estimated"))


def _gemma4_unified(quant: dict | None = None):
    raw = json.loads((DATA / "gemma-4-12b-unified.json").read_text())
    if quant is not None:
        raw["quantization_config"] = quant
    return build_model(raw, "gemma-4-12b-unified")


def _kimi_linear(quant: dict | None = None):
    raw = bundled_config(bundled_index()["kimi-linear-48b-a3b"])
    if quant is not None:
        raw["quantization_config"] = quant
    return build_model(raw, "kimi-linear-48b-a3b")


# -- Gemma 4 Unified 12B -----------------------------------------------------------------------------------------

def test_gemma4_unified_12b_nvfp4_keeps_attention_in_bf16():
    model = _gemma4_unified(NVFP4_KEEP_ATTENTION)
    assert model.family == "gemma4_unified_text"
    # hidden 3,840, 48 layers (40 sliding, 8 full: every 6th), 16 query heads; sliding: 8 KV heads of 256;
    # full: global_head_dim 512, 1 KV head (num_global_key_value_heads), attention_k_eq_v (no v_proj); MLP 15,360
    sliding = 3840 * 4096 + 2 * 3840 * 2048 + 4096 * 3840  # q, k, v, o = 47,185,920
    full = 3840 * 8192 + 3840 * 512 + 8192 * 3840  # q, k, o = 64,880,640
    attention = 40 * sliding + 8 * full
    mlp = 48 * 3 * 3840 * 15360
    assert (attention, mlp) == (2_406_481_920, 8_493_465_600)
    # BF16 besides: embeddings 262,144 x 3,840 (tied head), final norm, q/k norms 2 x 256 or 2 x 512, 4 norms a
    # layer; no per-layer inputs and no MoE block (gemma4_fields(unified=True))
    floats = 262_144 * 3840 + 3840 + 40 * 512 + 8 * 1024 + 48 * 4 * 3840
    assert floats == 1_007_402_752
    assert model.param_count == attention + mlp + floats == 11_907_350_272
    # NVFP4: 1/2 B + an fp8 scale per 16 = 0.5625 B a weight, on the MLPs only, + weight_scale_2 and input_scale
    # (F32 each) for each of the 48 x 3 MLP tensors
    assert model.weight_bytes == mlp * 9 // 16 + 144 * 8 + (attention + floats) * 2 == 11_605_344_896
    assert "(attention 2,406,481,920)" in _note(model)


def test_gemma4_unified_table_adds_up_to_its_counter():
    model = _gemma4_unified()
    raw = json.loads((DATA / "gemma-4-12b-unified.json").read_text())["text_config"]
    modules = table(Fields(raw, "t"), model.layers, None)
    assert sum(m.weight + m.other for m in modules) == model.param_count
    names = {n for m in modules for n in m.names()}
    # the full layers have no v_proj (k_eq_v), the sliding ones do; no per-layer-input modules
    assert "model.language_model.layers.0.self_attn.v_proj" in names
    assert "model.language_model.layers.5.self_attn.v_proj" not in names
    assert not any("per_layer" in n for n in names)


# -- Kimi-Linear-48B-A3B -----------------------------------------------------------------------------------------

def test_kimi_linear_48b_fp8_quantizes_the_routed_experts():
    model = _kimi_linear(FP8_CHANNEL)
    # hidden 2,304, 27 layers: 7 MLA (full_attn_layers 4, 8, 12, 16, 20, 24, 27, 1-based), 20 KDA (32 heads of 128,
    # P = 4,096, kernel 4); layer 0 a dense MLP of 9,216, 26 MoE layers of 256 experts of 1,024 and one shared
    # expert of 1,024; vocab 163,840, untied.
    # MLA a layer (no q LoRA, 32 heads, rank 512, rope 64, nope 128, v 128): q 2,304 x 32 x 192, kv_a 2,304 x 576,
    #   kv_b 512 x 32 x 256, o 32 x 128 x 2,304
    mla = 2304 * 32 * 192 + 2304 * 576 + 512 * 32 * 256 + 32 * 128 * 2304
    # KDA linears a layer: q, k, v 2,304 x 4,096, g_a and f_a 2,304 x 128, g_b and f_b 128 x 4,096, b 2,304 x 32,
    #   o 4,096 x 2,304
    kda = 3 * 2304 * 4096 + 2 * 2304 * 128 + 2 * 128 * 4096 + 2304 * 32 + 4096 * 2304
    assert (mla, kda) == (29_114_368, 39_460_864)
    head, dense, shared = 163_840 * 2304, 3 * 2304 * 9216, 26 * 3 * 2304 * 1024
    kept = head + 7 * mla + 20 * kda + dense + shared
    assert kept == 1_618_231_296
    experts = 26 * 256 * 3 * 2304 * 1024
    assert experts == 47_110_422_528
    # BF16 besides: embeddings, final norm, two norms a layer, kv_a_layernorm 512 (MLA), KDA's dt_bias 4,096,
    # q/k/v_conv1d 3 x 4,096 x 4, A_log 32, o_norm 128; routers 2,304 x 256 + e_score_correction_bias 256
    floats = (163_840 * 2304 + 2304 + 27 * 2 * 2304 + 7 * 512 + 20 * (4096 + 3 * 4096 * 4 + 32 + 128)
              + 26 * (2304 * 256 + 256))
    assert floats == 394_027_904
    assert model.param_count == experts + kept + floats == 49_122_681_728
    # FP8 per channel: 1 B a weight and a float32 scale per output row, 26 x 256 x (1,024 + 1,024 + 2,304) rows
    rows = 26 * 256 * (1024 + 1024 + 2304)
    assert model.weight_bytes == experts + rows * 4 + (kept + floats) * 2 == 51_250_808_576
    assert ("lm_head 377,487,360; linear attention 789,217,280; mlp 63,700,992; shared experts 184,025,088; "
            "attention 203,800,576") in _note(model)


def test_kimi_linear_table_names_vllm_loads():
    model = _kimi_linear()
    raw = bundled_config(bundled_index()["kimi-linear-48b-a3b"])
    modules = table(Fields(raw, "k"), model.layers, None)
    assert sum(m.weight + m.other for m in modules) == model.param_count
    names = {n for m in modules for n in m.names(0)}
    for name in ("model.layers.0.self_attn.q_conv1d", "model.layers.0.self_attn.f_a_proj",
                 "model.layers.0.mlp.gate_proj", "model.layers.3.self_attn.kv_a_proj_with_mqa",
                 "model.layers.1.block_sparse_moe.experts.0.w1",
                 "model.layers.1.block_sparse_moe.shared_experts.down_proj",
                 "model.layers.1.block_sparse_moe.gate.e_score_correction_bias", "lm_head"):
        assert name in names, name
