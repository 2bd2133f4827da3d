"""Real configs from the fifth sweep (docs/models.md "Sweep 5"): each checkpoint's model.safetensors.index.json
gives metadata.total_size, the bytes of every tensor it stores, and its weight_map names every tensor; each
expected figure here is that total_size, checked against a count by hand from the config's shapes.

tests/data/configs/:
- granite-3b-code-instruct-128k.json: ibm-granite/granite-3b-code-instruct-128k's config.json as the public repo
  ashishn-08/granite-3b-code-instruct-128k holds it (commit 6c2060816a990f5e7f85ea034fbe17deca0b9ba3), unchanged
"""

from __future__ import annotations

from pathlib import Path

from tests.kvplan_inprocess import estimate_json

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"


def test_llama_mlp_bias_is_counted():
    # granite-3b-code-instruct-128k: a LlamaForCausalLM config with attention_bias and mlp_bias true; its index
    # (same repo and commit) lists mlp.gate_proj.bias, up_proj.bias and down_proj.bias on each of the 32 layers
    # and gives total_size 6,965,007,360 B. By hand, BF16: tied embeddings 49,152 x 2,560, final norm 2,560; a
    # layer: q/k/v/o 4 x 2,560 x 2,560 with biases 4 x 2,560 (32 heads = 32 KV heads of 80), MLP 3 x 2,560 x
    # 10,240 with biases 2 x 10,240 + 2,560, two norms 2 x 2,560
    layer = 4 * 2560 * 2560 + 4 * 2560 + 3 * 2560 * 10240 + 2 * 10240 + 2560 + 2 * 2560
    params = 49152 * 2560 + 2560 + 32 * layer
    assert 2 * params == 6_965_007_360
    m = estimate_json(str(CONFIGS / "granite-3b-code-instruct-128k.json"))["model"]
    # before: the MLP biases were left out (737,280 parameters, 1,474,560 B, 0.021% under)
    assert m["param_count"] == params
    assert m["weight_bytes"] == 6_965_007_360


def _vision_qwen3_5(out_hidden: int) -> int:
    """Qwen3.5's vision tower (vision_config: depth 27, hidden 1,152, MLP 4,304, patch 16 x 16 x 2 frames, 2,304
    positions, 2 x 2 merge), by hand: patch_embed Conv3d 3 x 2 x 16 x 16 -> 1,152 with bias, pos_embed; a block:
    two LayerNorms (weight, bias), qkv and proj, linear_fc1 / fc2, all biased; merger: a LayerNorm over 1,152,
    linear_fc1 4,608 -> 4,608 and linear_fc2 4,608 -> out_hidden, biased."""
    block = 4 * 1152 + (1152 * 3456 + 3456) + (1152 * 1152 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152)
    merger = 2 * 1152 + (4608 * 4608 + 4608) + (4608 * out_hidden + out_hidden)
    return (3 * 2 * 16 * 16 * 1152 + 1152) + 2304 * 1152 + 27 * block + merger


def test_qwen3_5_mlx_is_sized_as_mlx_lm_stores_it():
    # leo-kreisman/Qwen3.5-9B-MLX-8bit (commit 57b661376e13233dcd17a91f69f6fd00ada7f1c6): config.json (its
    # layer_types list written on one line) and model.safetensors.index.json, total_size 10,426,433,504 B. The
    # index holds the vision tower in bf16 (vision_tower.*, no scales), which kvplan counts at the float dtype
    # (configs/vision_towers.py), and the text model's linear layers and embeddings as MLX 8-bit (weight, scales,
    # biases): 1 + 2 x 2 / 64 B a weight.
    vision = _vision_qwen3_5(4096)
    assert vision == 456_010_480
    # By hand: embed_tokens and lm_head 248,320 x 4,096; 8 full-attention layers: q_proj 4,096 -> 16 x 256 x 2
    # (the output gate), k/v_proj -> 4 x 256, o_proj 4,096 -> 4,096, q/k norms 256 each; 24 Gated DeltaNet
    # layers: in_proj_qkv 4,096 -> 2 x 2,048 + 4,096, in_proj_z -> 4,096, in_proj_b / in_proj_a -> 32, out_proj
    # 4,096 -> 4,096; conv1d 8,192 x 4, dt_bias and A_log 32, norm 128; MLP 3 x 4,096 x 12,288; two norms a layer
    quantized = (2 * 248320 * 4096 + 8 * (4096 * 8192 + 2 * 4096 * 1024 + 4096 * 4096)
                 + 24 * (4096 * 8192 + 4096 * 4096 + 2 * 4096 * 32 + 4096 * 4096) + 32 * 3 * 4096 * 12288)
    floats = 8 * 512 + 24 * (8192 * 4 + 32 + 32 + 128) + 32 * 2 * 4096 + 4096
    text = quantized * 17 // 16 + 2 * floats
    # the index's total: the text model, the vision tower at 2 B, and A_log, which mlx-lm's qwen3_5.py
    # cast_predicate leaves in the source checkpoint's dtype (float32: 24 x 32 x 2 B more than kvplan's 2 B)
    assert text + 2 * vision + 24 * 32 * 2 == 10_426_433_504
    m = estimate_json(str(CONFIGS / "qwen3.5-9b-mlx-8bit.json"))["model"]
    # before: no figure (qwen3_5's mlx-lm layout not read), then the text model alone (9,514,411,008 B); now the
    # index's total less A_log's 1,536 B
    assert text == 9_514_411_008
    assert m["weight_bytes"] == text + 2 * vision == 10_426_433_504 - 24 * 32 * 2
    assert m["weight_dtype"] == "mlx-int8 + bfloat16"


def test_qwen3_5_mlx_entries_name_the_language_model(tmp_path):
    # mlx-lm's per-module entries name Qwen3.5's modules under its wrapper (qwen3_5.py Model.language_model), as
    # Arp1tMoga/fast_qwen's config (commit 0d831f79f3973cedf6ce8179ccde739ba488d5cd) writes them:
    # "language_model.lm_head", "language_model.model.layers.N.mlp.down_proj". The head at 4 bits, group 64
    # (0.5 + 4 / 64 B a weight) instead of 8 (1.0625 B): 248,320 x 4,096 x 0.5 B less
    import json

    raw = json.loads((CONFIGS / "qwen3.5-9b-mlx-8bit.json").read_text())
    for key in ("quantization", "quantization_config"):
        raw[key] = dict(raw[key], **{"language_model.lm_head": {"bits": 4, "group_size": 64}})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    m = estimate_json(str(path))["model"]
    assert m["weight_bytes"] == 9_514_411_008 - 248320 * 4096 // 2 + 2 * _vision_qwen3_5(4096)


def test_qwen3_5_moe_mlx_routers_at_their_entries(tmp_path):
    # A small Qwen3.5 MoE as mlx-lm quantizes it (mlx_lm/models/qwen3_5.py TextModel.quant_predicate: mlp.gate and
    # mlp.shared_expert_gate at 8 bits, group 64, written as per-module entries under `language_model.`; the rest
    # at the default 4 bits, group 64: 0.5625 B a weight in bf16, 8 bits 1.0625 B). Counted by hand: hidden 256;
    # layers 0-2 Gated DeltaNet (in_proj_qkv 256 -> 256, in_proj_z -> 128, in_proj_b / a -> 4, out_proj 128 -> 256;
    # conv1d 256 x 4, dt_bias and A_log 4, norm 32), layer 3 attention (q_proj 256 -> 2 x 64 x 2, k/v_proj -> 64,
    # o_proj 128 -> 256, q/k norms 64); each layer 4 experts and a shared expert of 3 x 256 x 128, a router 256 x 4,
    # a shared_expert_gate 256 x 1, two norms; embed_tokens and lm_head 1,024 x 256; the final norm
    import json

    text = {"model_type": "qwen3_5_moe_text", "hidden_size": 256, "num_hidden_layers": 4,
            "layer_types": ["linear_attention"] * 3 + ["full_attention"], "full_attention_interval": 4,
            "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 64, "attn_output_gate": True,
            "linear_num_key_heads": 2, "linear_key_head_dim": 32, "linear_num_value_heads": 4,
            "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4, "num_experts": 4, "num_experts_per_tok": 2,
            "moe_intermediate_size": 128, "shared_expert_intermediate_size": 128, "vocab_size": 1024,
            "max_position_embeddings": 4096, "tie_word_embeddings": False, "dtype": "bfloat16"}
    q = {"group_size": 64, "bits": 4, "mode": "affine"}
    for i in range(4):
        for m in ("mlp.gate", "mlp.shared_expert_gate"):
            q[f"language_model.model.layers.{i}.{m}"] = {"group_size": 64, "bits": 8}
    raw = {"model_type": "qwen3_5_moe", "architectures": ["Qwen3_5MoeForConditionalGeneration"],
           "text_config": text, "tie_word_embeddings": False, "quantization": q, "quantization_config": q}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    four_bit = (2 * 1024 * 256 + 3 * (256 * 256 + 256 * 128 + 2 * 256 * 4 + 128 * 256)
                + (256 * 256 + 2 * 256 * 64 + 128 * 256) + 4 * 5 * 3 * 256 * 128)
    eight_bit = 4 * (256 * 4 + 256)
    floats = 3 * (256 * 4 + 4 + 4 + 32) + 2 * 64 + 4 * 2 * 256 + 256
    expected = four_bit * 9 // 16 + eight_bit * 17 // 16 + 2 * floats
    assert expected == 1_715_888
    m = estimate_json(str(path))["model"]
    assert m["weight_bytes"] == expected  # before: no figure (qwen3_5_moe's mlx-lm layout not read)


def test_qwen1_as_sglang_serves_it():
    # Qwen (1), model_type "qwen" (remote QWenConfig), was refused as an unknown type. SGLang 0.5.23 qwen.py
    # (QWenLMHeadModel; vLLM served it until 0.23) builds multi-head attention of hidden / heads, c_attn with a bias,
    # c_proj, w1 / w2 of intermediate_size // 2 and mlp.c_proj, two RMSNorms, an untied head.
    # Qwen-7B-Chat-Cantonese's index (same commit) gives total_size 15,442,649,088 B, float16. By hand: wte and
    # lm_head 2 x 151,936 x 4,096; a layer c_attn 4,096 x 12,288 + 12,288, c_proj 4,096 x 4,096, w1 / w2
    # 2 x 4,096 x 11,008, mlp.c_proj 11,008 x 4,096, ln_1 / ln_2 2 x 4,096; ln_f 4,096
    layer = 4096 * 12288 + 12288 + 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096
    params = 2 * 151936 * 4096 + 32 * layer + 4096
    assert 2 * params == 15_442_649_088
    path = str(CONFIGS / "qwen-7b-chat-cantonese.json")
    d = estimate_json(path)
    m = d["model"]
    assert m["reading"] == "exact" and m["param_count"] == params and m["weight_bytes"] == 15_442_649_088
    # K/V: 32 layers x 2 x 32 heads x 128 x 2 B
    assert d["bytes_per_token"] == 2 * 32 * 2 * 32 * 128 == 524_288


def test_qwen1_72b(tmp_path):
    # mapengAdam/qianwen-72B (commit 3334bfe3d6d9d445cbe54185cd6aaef7e1e3c068): Qwen-72B's config, of the 7B's
    # fields but hidden 8,192, intermediate 49,152, 80 layers, 64 heads, vocab 152,064, bfloat16; its index gives
    # total_size 144,575,840,256 B
    import json

    raw = json.loads((CONFIGS / "qwen-7b-chat-cantonese.json").read_text())
    raw.update(hidden_size=8192, intermediate_size=49152, num_hidden_layers=80, num_attention_heads=64,
               vocab_size=152064, torch_dtype="bfloat16")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    layer = 8192 * 3 * 8192 + 3 * 8192 + 8192 * 8192 + 3 * 8192 * 24576 + 2 * 8192
    assert 2 * (2 * 152064 * 8192 + 80 * layer + 8192) == 144_575_840_256
    assert estimate_json(str(path))["model"]["weight_bytes"] == 144_575_840_256
