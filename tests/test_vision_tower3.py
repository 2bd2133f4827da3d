"""Session 26's tower follow-up (tower3): a checkpoint's Llama 4 and Kimi-VL tower tensors split over TP by module
as vLLM 0.34 builds them (weights/vision_tp.py), not wholesale."""

from __future__ import annotations

from test_vision_tower2 import _table

from kvplan.capacity.weights import stage_weight_bytes


def test_llama4_tower_tensors_split_by_module(tmp_path):
    # vLLM 0.34 mllama4.py: Llama4UnfoldConvolution.linear, q/k/v_proj (qkv_proj), Llama4VisionMLP fc1 (the
    # encoder's and the vision_adapter's) and Llama4MultiModalProjector.linear_1 column-parallel, split with their
    # biases; o_proj / fc2 row-parallel, split but for their biases; class_embedding, positional_embedding_vlm and
    # the LayerNorms whole on every rank
    layer = "vision_model.model.layers.0."
    w = _table(tmp_path, "llama-4-scout.json", {
        "language_model.model.layers.0.self_attn.o_proj.weight": ("BF16", [64, 128], 2),       # 16,384 split
        "vision_model.patch_embedding.linear.weight": ("BF16", [64, 588], 2),                  # 75,264 split
        "vision_model.class_embedding": ("BF16", [64], 2),                                      # 128 whole
        "vision_model.positional_embedding_vlm": ("BF16", [17, 64], 2),                         # 2,176 whole
        "vision_model.layernorm_pre.weight": ("BF16", [64], 2),                                 # 128 whole
        layer + "self_attn.q_proj.weight": ("BF16", [64, 64], 2),                               # 8,192 split
        layer + "self_attn.q_proj.bias": ("BF16", [64], 2),                                     # 128 split
        layer + "self_attn.o_proj.weight": ("BF16", [64, 64], 2),                               # 8,192 split
        layer + "self_attn.o_proj.bias": ("BF16", [64], 2),                                     # 128 whole
        layer + "mlp.fc1.weight": ("BF16", [128, 64], 2),                                       # 16,384 split
        layer + "mlp.fc2.weight": ("BF16", [64, 128], 2),                                       # 16,384 split
        layer + "mlp.fc2.bias": ("BF16", [64], 2),                                              # 128 whole
        "vision_model.vision_adapter.mlp.fc1.weight": ("BF16", [64, 128], 2),                   # 16,384 split
        "vision_model.vision_adapter.mlp.fc2.weight": ("BF16", [64, 64], 2),                    # 8,192 split
        "multi_modal_projector.linear_1.weight": ("BF16", [32, 64], 2),                         # 4,096 split
    })
    split = 16_384 + 75_264 + 8_192 + 128 + 8_192 + 16_384 + 16_384 + 16_384 + 8_192 + 4_096
    whole = 128 + 2_176 + 128 + 128 + 128
    assert (split, whole) == (169_600, 2_688)
    assert stage_weight_bytes(w, 48, tp=1) == [split + whole]
    assert stage_weight_bytes(w, 48, tp=4) == [split // 4 + whole]  # 45,088 (before: all split, 43,072)


def test_kimi_vl_tower_tensors_split_by_module(tmp_path):
    # vLLM 0.34 moonvit.py: wqkv (QKVParallelLinear) and mlp.fc0 (Column) split with their biases; wo and mlp.fc1
    # (RowParallelLinear) split but for their biases; patch_embed.proj (Conv2dLayer), pos_emb, the LayerNorms whole;
    # kimi_vl.py KimiVLMultiModalProjector: pre_norm and linear_1 / linear_2 (ReplicatedLinear) whole
    block = "vision_tower.encoder.blocks.0."
    w = _table(tmp_path, "tests/data/configs/kimi-vl-a3b-instruct.json", {
        "language_model.model.layers.0.mlp.down_proj.weight": ("BF16", [64, 128], 2),           # 16,384 split
        "vision_tower.patch_embed.proj.weight": ("BF16", [64, 3, 14, 14], 2),                   # 75,264 whole
        "vision_tower.patch_embed.proj.bias": ("BF16", [64], 2),                                # 128 whole
        "vision_tower.patch_embed.pos_emb.weight": ("BF16", [4, 4, 64], 2),                     # 2,048 whole
        block + "norm0.weight": ("BF16", [64], 2),                                              # 128 whole
        block + "wqkv.weight": ("BF16", [192, 64], 2),                                          # 24,576 split
        block + "wqkv.bias": ("BF16", [192], 2),                                                # 384 split
        block + "wo.weight": ("BF16", [64, 64], 2),                                             # 8,192 split
        block + "wo.bias": ("BF16", [64], 2),                                                   # 128 whole
        block + "mlp.fc0.weight": ("BF16", [128, 64], 2),                                       # 16,384 split
        block + "mlp.fc0.bias": ("BF16", [128], 2),                                             # 256 split
        block + "mlp.fc1.weight": ("BF16", [64, 128], 2),                                       # 16,384 split
        block + "mlp.fc1.bias": ("BF16", [64], 2),                                              # 128 whole
        "vision_tower.encoder.final_layernorm.weight": ("BF16", [64], 2),                       # 128 whole
        "multi_modal_projector.pre_norm.weight": ("BF16", [64], 2),                             # 128 whole
        "multi_modal_projector.linear_1.weight": ("BF16", [256, 256], 2),                       # 131,072 whole
        "multi_modal_projector.linear_1.bias": ("BF16", [256], 2),                              # 512 whole
        "multi_modal_projector.linear_2.weight": ("BF16", [32, 256], 2),                        # 16,384 whole
    })
    split = 16_384 + 24_576 + 384 + 8_192 + 16_384 + 256 + 16_384
    whole = 75_264 + 128 + 2_048 + 128 + 128 + 128 + 128 + 128 + 131_072 + 512 + 16_384
    assert (split, whole) == (82_560, 226_048)
    assert stage_weight_bytes(w, 27, tp=1) == [split + whole]
    assert stage_weight_bytes(w, 27, tp=2) == [split // 2 + whole]  # 267,328 (before: all split, 154,304)


def test_a_projector_named_at_the_checkpoints_top_splits(tmp_path):
    # llava-hf checkpoints name the projector at the top (multi_modal_projector.linear_1, not model.-prefixed):
    # vLLM 0.34 llava.py LlavaMultiModalProjector linear_1 ColumnParallelLinear (split with its bias), linear_2
    # RowParallelLinear (its bias whole)
    w = _table(tmp_path, "llava-1.5-7b.json", {
        "language_model.model.layers.0.mlp.down_proj.weight": ("BF16", [64, 128], 2),           # 16,384 split
        "multi_modal_projector.linear_1.weight": ("BF16", [128, 64], 2),                        # 16,384 split
        "multi_modal_projector.linear_1.bias": ("BF16", [128], 2),                              # 256 split
        "multi_modal_projector.linear_2.weight": ("BF16", [64, 128], 2),                        # 16,384 split
        "multi_modal_projector.linear_2.bias": ("BF16", [64], 2),                               # 128 whole
    })
    # 24,832 (before: the projector's linear_1 and linear_2 whole, 41,344)
    assert stage_weight_bytes(w, 32, tp=2) == [(16_384 + 16_384 + 256 + 16_384) // 2 + 128]


def test_vllm_online_fp8_quantizes_minicpmv_and_skyworks_replicated_linears(tmp_path):
    # vLLM 0.34 minicpmv.py MiniCPMV2_6 init_vision_module: Idefics2VisionTransformer with the quant_config
    # (idefics2_vision_model.py: qkv_proj, out_proj, fc1 / fc2 all take it); init_resampler: Resampler2_5, whose
    # kv_proj (layers/resampler.py BaseResampler) is a ReplicatedLinear with it: whole on every rank, 1 B a weight;
    # the nn.MultiheadAttention and proj stay at 2 B. MiniCPM-V 2.6: 27 SigLIP layers (hidden 1,152, MLP 4,304),
    # kv_proj 1,152 -> 3,584
    import json

    from test_vision_tower2 import _vllm_fp8
    from test_vision_towers import MINICPMV_2_6

    h, e = 1152, 3584
    kv = h * e
    linears = 27 * h * (3 * h + h + 4304 + 4304) + kv
    scales = (27 * 4 + 1) * 4
    resampler = 64 * e + kv + (3 * e * e + 3 * e) + (e * e + e) + 3 * 2 * e + e * e
    siglip_whole = (3 * 14 * 14 * h + h) + (980 // 14) ** 2 * h + 27 * (4 * h + h + h) + 2 * h
    layer = 4 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * 4304 + 4304) + (4304 * h + h)
    total = (3 * 14 * 14 * h + h) + (980 // 14) ** 2 * h + 27 * layer + 2 * h + resampler
    path = tmp_path / "minicpmv.json"
    path.write_text(json.dumps(MINICPMV_2_6))
    model = _vllm_fp8(str(path))
    assert model.weight_vision_quantized == (linears, linears + scales)  # before: (0, 0)
    assert model.weight_vision == (total, 2 * (total - linears) + linears + scales,
                                   2 * (siglip_whole + resampler - kv) + kv + scales)
    # skyworkr1v.py _init_mlp1: two biased ReplicatedLinears with the quant_config (InternViT-6B's 45 layers, 25
    # heads: qkv / proj whole, counted at 2 B; fc1 / fc2 3,200 x 12,800 quantized), 12,800 -> 512 and 512 -> 512
    from test_vision_towers3 import _wrapper

    from kvplan.sources import load_model_and_weights

    mlp1 = 12800 * 512 + 512 * 512
    path = tmp_path / "skywork.json"
    path.write_text(json.dumps(_wrapper("skywork_chat", "SkyworkR1VChatModel")))
    model, _ = load_model_and_weights(str(path), quantization=("fp8", "vllm"))
    fc = 45 * 2 * 3200 * 12800
    assert model.weight_vision_quantized == (fc + mlp1, fc + mlp1 + (90 + 2) * 4)  # before: fc alone
    path.write_text(json.dumps(_wrapper("h2ovl_chat", "H2OVLChatModel")))  # its mlp1 nn.Linear: 2 B, whole
    h2ovl, _ = load_model_and_weights(str(path), quantization=("fp8", "vllm"))
    assert h2ovl.weight_vision_quantized == (fc, fc + 90 * 4)
    assert model.weight_vision[2] == h2ovl.weight_vision[2] - mlp1 + 2 * 4
