"""Modules vLLM 0.34 builds whole on every TP rank (ReplicatedLinear, a linear with disable_tp=True, a merged linear
whose shard every rank loads from rank 0, a plain nn.Parameter), in the config estimate and in a checkpoint's tensor
table alike, and what SGLang 0.5.23 builds otherwise (engines/sglang_whole.py).

Read in vLLM 0.34: model_executor/models/gemma4.py Gemma4DecoderLayer (per_layer_input_gate, per_layer_projection:
ReplicatedLinear; per_layer_model_projection a ColumnParallelLinear), gemma3n.py Gemma3nAltUp (correction_coefs,
prediction_coefs, modality_router: ReplicatedLinear; correct_output_scale an nn.Parameter) and Gemma3nDecoderLayer
(per_layer_input_gate, per_layer_projection: ReplicatedLinear; laurel split), layers/mamba/gdn/
kimi_gdn_linear_attn.py KimiLinearGatedDeltaNetAttention (f_a_proj: in_proj_qkvgfab's shard 4, replicated_shard_id;
g_a_proj a ReplicatedLinear), models/deepseek_v4/attention.py DeepseekV4Attention (fused_wqa_wkv = wq_a + wkv,
disable_tp=True) and nvidia/model.py DeepseekV4DecoderLayer (hc_attn_fn, an nn.Parameter), layers/mamba/
mamba_mixer2.py Mixer2RMSNormGated (full_hidden_size // tp a rank). SGLang 0.5.23: models/gemma4_causal.py
Gemma4TextModel.per_layer_model_projection, a ReplicatedLinear.

Figures: hand-worked from the configs' shapes, in bfloat16 (2 B) unless a tensor says otherwise; on one GPU of TP t
each rank holds the whole modules and norms and 1 / t of the rest (rounded up).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.sources import load_model
from kvplan.weights.estimate import estimated
from kvplan.weights.load import from_safetensors
from safetensors_files import write_safetensors

SPECS = Path(__file__).resolve().parent.parent / "model_specs"

# a small Gemma 4 text model with per-layer inputs: hidden 64, 2 layers (sliding, full), 2 heads and 2 KV heads of
# 16, MLP 128, per-layer inputs of 8, vocabulary 100 (tied), per-layer vocabulary 100
GEMMA4 = {"model_type": "gemma4_text", "architectures": ["Gemma4ForCausalLM"], "torch_dtype": "bfloat16",
          "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
          "head_dim": 16, "global_head_dim": 16, "num_global_key_value_heads": 2, "intermediate_size": 128,
          "hidden_size_per_layer_input": 8, "vocab_size": 100, "vocab_size_per_layer_input": 100,
          "num_kv_shared_layers": 0, "tie_word_embeddings": True, "sliding_window": 32,
          "layer_types": ["sliding_attention", "full_attention"], "attention_k_eq_v": False,
          "max_position_embeddings": 4096}


def _gemma4(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GEMMA4))
    return load_model(str(path))


def test_gemma4_per_layer_input_gate_and_projection_whole_on_every_rank(tmp_path):
    # parameters: embed_tokens 100 x 64 = 6,400; embed_tokens_per_layer 100 x 2 x 8 = 1,600; per_layer_model_projection
    # 64 -> 16 = 1,024; per_layer_projection_norm 8; norm 64; per layer q/k/v_proj 64 -> 32 (3 x 2,048), o_proj
    # 2,048, q_norm / k_norm 16 each, MLP 3 x 64 x 128 = 24,576, four norms 256, per_layer_input_gate 64 -> 8 = 512,
    # per_layer_projection 8 -> 64 = 512, post_per_layer_input_norm 64: 34,144 a layer
    model = _gemma4(tmp_path)
    total = 2 * (6_400 + 1_600 + 1_024 + 8 + 64 + 2 * 34_144)
    assert model.weight_bytes == total == 154_768
    # whole: the norms 2 x (16 + 16 + 256 + 64) + 8 + 64 = 776 and the two ReplicatedLinear 2 x (512 + 512) = 2,048
    whole = 2 * (776 + 2_048)
    assert model.weight_replicated_bytes == whole == 5_648
    # TP 2: (154,768 - 5,648) / 2 + 5,648 = 80,208 B a GPU (before: the two split, (154,768 - 1,552) / 2 + 1,552 = 78,160)
    assert stage_weight_bytes(estimated(model), 2, tp=2) == [(total - whole) // 2 + whole] == [80_208]


def test_sglang_holds_gemma4_per_layer_model_projection_whole(tmp_path, cli):
    # SGLang 0.5.23 builds per_layer_model_projection (64 -> 16, 1,024 parameters, 2,048 B) as a ReplicatedLinear on
    # the first pipeline rank, where vLLM splits it: at TP 2 each GPU holds 2,048 - 1,024 = 1,024 B more than
    # kvplan's vLLM split, 80,208 + 1,024 = 81,232 B
    from kvplan.engines.sglang_whole import whole_delta

    model = _gemma4(tmp_path)
    got = whole_delta(model, tp=2)
    assert got is not None and got.stage_bytes == (1_024,)
    assert whole_delta(model, tp=1) is None
    assert whole_delta(model, tp=2, pp=2).stage_bytes == (1_024, 0)
    from kvplan.capacity.gpus import lookup
    from kvplan.engines.sglang_report import PRELOAD_BYTES, PRELOAD_TP_BYTES
    from kvplan.engines.vllm_profile import driver_total_bytes

    rc, out, err = cli("estimate", str(tmp_path / "config.json"), "--engine", "sglang", "--gpu", "h200", "--tp", "2",
                       "--context", "1k", "--mem-util", "0.85", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["capacity"]["weight_bytes_per_gpu"] == 80_208
    t0 = driver_total_bytes(lookup("h200")) - PRELOAD_BYTES - PRELOAD_TP_BYTES
    assert data["engine"]["kv_memory_bytes"] == int(t0 * 0.85) - 81_232


def test_kimi_linear_kda_f_a_proj_and_g_a_proj_whole():
    # Kimi-Linear-48B-A3B (its config: hidden 2,304, 27 layers, MLA on 7 (full_attn_layers) without a q_lora_rank,
    # kv_lora_rank 512 + rope 64, KDA on 20 with head_dim 128, the first layer dense, 256 experts), bf16. Whole:
    #   norms 27 x 2 x 2,304 + 2,304 + MLA kv_a_layernorm 7 x 512 + KDA o_norm 20 x 128 = 132,864
    #   routers 26 x (2,304 x 256 + 256) = 15,342,080; kv_a_proj_with_mqa 7 x 2,304 x 576 = 9,289,728
    #   KDA f_a_proj and g_a_proj 20 x 2 x 2,304 x 128 = 11,796,480 (before: split)
    model = load_model("kimi-linear-48b-a3b")
    whole = 2 * (132_864 + 15_342_080 + 9_289_728 + 11_796_480)
    assert model.weight_replicated_bytes == whole == 73_122_304  # before: 49,529,344
    total = model.weight_bytes
    # TP 8: 12,344,652,448 B a GPU (before: 12,324,008,608)
    assert stage_weight_bytes(estimated(model), 27, tp=8) == [-(-(total - whole) // 8) + whole] == [12_344_652_448]


def test_a_deepseek_v4_tensor_table_keeps_wq_a_wkv_and_hc_fn_whole(tmp_path):
    # DeepSeek-V4-Flash's layer 0 as its checkpoint stores it (hidden 4,096, q_lora_rank 1,024, head_dim 512, 64
    # heads, hc_mult 4; FP8 weights with 128 x 128 block scales in ue8m0, one byte each)
    a = "layers.0.attn."
    write_safetensors(tmp_path / "model.safetensors", {
        a + "wq_a.weight": ("F8_E4M3", [1024, 4096], 1),   # 4,194,304 B, whole (fused_wqa_wkv, disable_tp)
        a + "wq_a.scale": ("F8_E8M0", [8, 32], 1),         # 256 B, whole with it
        a + "wkv.weight": ("F8_E4M3", [512, 4096], 1),     # 2,097,152 B, whole
        a + "wkv.scale": ("F8_E8M0", [4, 32], 1),          # 128 B, whole
        a + "wq_b.weight": ("F8_E4M3", [32768, 1024], 1),  # 33,554,432 B, split with the heads
        a + "wq_b.scale": ("F8_E8M0", [256, 8], 1),        # 2,048 B, split
        "layers.0.hc_attn_fn": ("F32", [24, 16384], 4),    # (2 + 4) x 4 x 4 x 4,096 float32: 1,572,864 B, whole
        "layers.0.attn_norm.weight": ("BF16", [4096], 2),  # 8,192 B, a norm
    })
    raw = json.loads((SPECS / "deepseek-v4-flash.json").read_text())
    w = from_safetensors(tmp_path, raw)
    whole = 4_194_304 + 256 + 2_097_152 + 128 + 1_572_864 + 8_192
    # TP 8: 7,872,896 whole + (33,554,432 + 2,048) / 8 = 12,067,456 B (before: 8,192 + 41,421,184 / 8 = 5,185,840)
    assert stage_weight_bytes(w, 43, tp=8) == [whole + (33_554_432 + 2_048) // 8] == [12_067_456]


def test_a_gemma3n_tensor_table_keeps_altup_and_per_layer_projections_whole(tmp_path):
    # Gemma 3n E4B's layer 0 (hidden 2,048, altup_num_inputs 4, hidden_size_per_layer_input 256, laurel_rank 64), bf16
    l0 = "model.language_model.layers.0."
    write_safetensors(tmp_path / "model.safetensors", {
        l0 + "altup.correction_coefs.weight": ("BF16", [4, 4], 2),     # 32 B, whole
        l0 + "altup.prediction_coefs.weight": ("BF16", [16, 4], 2),    # 128 B, whole
        l0 + "altup.modality_router.weight": ("BF16", [4, 2048], 2),   # 16,384 B, whole
        l0 + "altup.correct_output_scale": ("BF16", [2048], 2),        # 4,096 B, whole (an nn.Parameter)
        l0 + "per_layer_input_gate.weight": ("BF16", [256, 2048], 2),  # 1,048,576 B, whole
        l0 + "per_layer_projection.weight": ("BF16", [2048, 256], 2),  # 1,048,576 B, whole
        l0 + "laurel.linear_left.weight": ("BF16", [64, 2048], 2),     # 262,144 B, split (column-parallel)
        l0 + "laurel.linear_right.weight": ("BF16", [2048, 64], 2),    # 262,144 B, split (row-parallel)
    })
    raw = json.loads((SPECS / "gemma-3n-e4b.json").read_text())
    w = from_safetensors(tmp_path, raw)
    whole = 32 + 128 + 16_384 + 4_096 + 1_048_576 + 1_048_576
    # TP 2: 2,117,792 whole + 524,288 / 2 = 2,379,936 B (before: all split, 2,642,080 / 2 = 1,321,040)
    assert stage_weight_bytes(w, 35, tp=2) == [whole + 262_144] == [2_379_936]


def test_a_nemotron_h_tensor_table_splits_the_mamba_mixer_norm(tmp_path):
    # Nemotron-H-8B's first Mamba layer: mixer.norm is a Mixer2RMSNormGated over the 128 x 64 = 8,192 inner channels,
    # split over TP (as kvplan's config estimate has it), though its name reads as a norm; the layer's own norm whole
    write_safetensors(tmp_path / "model.safetensors", {
        "backbone.layers.0.mixer.norm.weight": ("BF16", [8192], 2),  # 16,384 B, split
        "backbone.layers.0.norm.weight": ("BF16", [4096], 2),        # 8,192 B, whole
    })
    raw = json.loads((SPECS / "nemotron-h-8b.json").read_text())
    w = from_safetensors(tmp_path, raw)
    # TP 2: 16,384 / 2 + 8,192 = 16,384 B (before: 24,576, the mixer's norm whole)
    assert stage_weight_bytes(w, 52, tp=2) == [8_192 + 8_192] == [16_384]
