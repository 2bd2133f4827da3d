"""Session 26's vision-tower follow-up (tower2): a text-only start planned with `--set KEY=null` on whichever key the
family's tower is read from (configs/vision_towers.py tower_key) emits the engine's text-only flag."""

from __future__ import annotations

import json

from test_vision_towers3 import _phi4mm

PHI3_V = "tests/data/configs/phi-3-vision-128k-instruct.json"


def _emit(cli, *args, engine="vllm"):
    code, out, err = cli("estimate", *args, "--context", "8192", "--gpu", "h100", "--emit", engine, "--format", "json")
    assert code == 0, err
    return json.loads(out)["emit"]


def test_a_text_only_plan_on_a_nested_tower_key_emits_language_model_only(cli, tmp_path):
    # vLLM 0.34 phi3v.py Phi3VForCausalLM and phi4mm.py Phi4MMForCausalLM build their encoders under
    # _mark_tower_model, which --language-model-only skips (config/multimodal.py get_limit_per_prompt answers 0 for
    # every modality); kvplan reads their towers from img_processor / embd_layer, not vision_config
    text_only = _emit(cli, PHI3_V, "--set", "img_processor=null")
    assert "--language-model-only" in text_only["argv"]
    assert any("(--set img_processor=null)" in n for n in text_only["notes"])
    assert "--language-model-only" not in _emit(cli, PHI3_V)["argv"]
    phi4mm = tmp_path / "phi4mm.json"
    phi4mm.write_text(json.dumps(_phi4mm()))
    assert "--language-model-only" in _emit(cli, str(phi4mm), "--set", "embd_layer=null")["argv"]
    assert "--language-model-only" not in _emit(cli, str(phi4mm))["argv"]
    # vision_config on a config whose tower is read from elsewhere drops nothing: no flag
    assert "--language-model-only" not in _emit(cli, PHI3_V, "--set-new", "vision_config=null")["argv"]


def test_sglangs_text_only_note_names_the_key_that_dropped_the_tower(cli):
    notes = _emit(cli, PHI3_V, "--set", "img_processor=null", engine="sglang")["notes"]
    assert any("the plan leaves the vision tower out (--set img_processor=null)" in n for n in notes)


def _vllm_fp8(path):
    from kvplan.sources import load_model_and_weights

    model, _ = load_model_and_weights(path, quantization=("fp8", "vllm"))
    return model


def test_vllm_online_fp8_quantizes_the_towers_its_model_files_build_with_the_quant_config():
    # vLLM 0.34 fp8: each tower linear built with the quant_config is 1 B a weight and a float32 scale a module
    # phi3v.py _init_img_processor passes it to the CLIP ViT-L/14-336, built to layer_idx -2: 23 layers of qkv
    # 1,024 x 3,072, out_proj 1,024^2, fc1 / fc2 1,024 x 4,096; 312,943,616 parameters in all (docs/weights.md)
    linears = 23 * 1024 * (3072 + 1024 + 4096 + 4096)
    assert linears == 289_406_976
    model = _vllm_fp8(PHI3_V)
    assert model.weight_vision_quantized == (linears, linears + 23 * 4 * 4)
    assert model.weight_vision[:2] == (312_943_616, 2 * (312_943_616 - linears) + linears + 23 * 4 * 4)  # was 2 B each
    # glm4_1v.py Glm4vVisionTransformer(quant_config): GLM-4.5V's 24 blocks (hidden 1,536: qkv x 3, proj, gate_up to
    # 2 x 4,096, down) and the merger (proj 4,096^2, gate_up to 2 x 10,944, down)
    blocks = 24 * (1536 * 4608 + 1536 * 1536 + 1536 * 8192 + 4096 * 1536)
    merger = 4096 * 4096 + 4096 * 21888 + 10944 * 4096
    model = _vllm_fp8("tests/data/configs/glm-4.5v-transformers5.json")
    assert model.weight_vision_quantized == (blocks + merger, blocks + merger + (24 * 4 + 3) * 4)
    # intern_vit.py InternVisionModel (qkv, proj, fc1 / fc2 with the quant_config): InternVL3-1B's 24 layers, hidden
    # 1,024, MLP 4,096
    model = _vllm_fp8("tests/data/configs/internvl3-1b-pretrained.json")
    assert model.weight_vision_quantized == (24 * 1024 * 12288, 24 * 1024 * 12288 + 24 * 4 * 4)
    # qwen3_omni_moe_thinker.py: visual takes the quant_config (27 blocks of hidden 1,152 / MLP 4,304, the merger and
    # 3 deepstack mergers 4,608 -> 4,608 -> 2,048); Qwen3OmniMoeAudioEncoder does not: its 32 layers stay at 2 B
    vision = 27 * 1152 * (3456 + 1152 + 4304 + 4304) + 4 * (4608 * 4608 + 4608 * 2048)
    model = _vllm_fp8("tests/data/configs/qwen3-omni-30b-a3b-instruct-tf5-trimmed.json")
    assert model.weight_vision_quantized == (vision, vision + (27 * 4 + 4 * 2) * 4)
    # SGLang 0.5.23 glm4v_moe.py builds Glm4vVisionModel with the quant_config (the same linears); its internvl.py
    # builds InternVisionModel without one
    from kvplan.sources import load_model_and_weights

    model, _ = load_model_and_weights("tests/data/configs/glm-4.5v-transformers5.json", quantization=("fp8", "sglang"))
    assert model.weight_vision_quantized[0] == blocks + merger
    model, _ = load_model_and_weights("tests/data/configs/internvl3-1b-pretrained.json", quantization=("fp8", "sglang"))
    assert model.weight_vision_quantized == (0, 0)
    # kimi_vl.py builds MoonViT and its projector without one: all at 2 B
    model = _vllm_fp8("tests/data/configs/kimi-vl-a3b-instruct.json")
    assert model.weight_vision_quantized == (0, 0) and model.weight_vision[1] == 2 * model.weight_vision[0]


def _table(tmp_path, spec, tensors):
    from pathlib import Path

    from safetensors_files import write_safetensors

    from kvplan.weights.load import from_safetensors

    write_safetensors(tmp_path / "model.safetensors", tensors)
    root = Path(__file__).resolve().parent.parent
    raw = json.loads((root / (spec if "/" in spec else f"model_specs/{spec}")).read_text())
    return from_safetensors(tmp_path, raw)


def test_a_checkpoints_tower_tensors_are_split_by_module_as_the_config_estimate_counts_them(tmp_path):
    # vLLM 0.34 siglip.py / gemma3_mm.py: q/k/v_proj (QKVParallelLinear) and fc1 (Column) split with their biases,
    # out_proj / fc2 (RowParallelLinear) split but for their biases; the patch Conv2dLayer, the position nn.Embedding,
    # the LayerNorms, mm_input_projection_weight (an nn.Parameter) and mm_soft_emb_norm whole on every rank
    from kvplan.capacity.weights import stage_weight_bytes

    layer = "vision_tower.vision_model.encoder.layers.0."
    w = _table(tmp_path, "gemma-3-27b.json", {
        "language_model.model.layers.0.mlp.down_proj.weight": ("BF16", [64, 128], 2),          # 16,384 split
        "vision_tower.vision_model.embeddings.patch_embedding.weight": ("BF16", [64, 3, 14, 14], 2),  # 75,264 whole
        "vision_tower.vision_model.embeddings.position_embedding.weight": ("BF16", [16, 64], 2),      # 2,048 whole
        layer + "layer_norm1.weight": ("BF16", [64], 2),                                        # 128 whole
        layer + "self_attn.q_proj.weight": ("BF16", [64, 64], 2),                               # 8,192 split
        layer + "self_attn.q_proj.bias": ("BF16", [64], 2),                                     # 128 split
        layer + "self_attn.out_proj.weight": ("BF16", [64, 64], 2),                             # 8,192 split
        layer + "self_attn.out_proj.bias": ("BF16", [64], 2),                                   # 128 whole
        layer + "mlp.fc1.weight": ("BF16", [128, 64], 2),                                       # 16,384 split
        layer + "mlp.fc1.bias": ("BF16", [128], 2),                                             # 256 split
        layer + "mlp.fc2.weight": ("BF16", [64, 128], 2),                                       # 16,384 split
        layer + "mlp.fc2.bias": ("BF16", [64], 2),                                              # 128 whole
        "multi_modal_projector.mm_input_projection_weight": ("BF16", [64, 32], 2),              # 4,096 whole
        "multi_modal_projector.mm_soft_emb_norm.weight": ("BF16", [64], 2),                     # 128 whole
    })
    split = 16_384 + 8_192 + 128 + 8_192 + 16_384 + 256 + 16_384
    whole = 75_264 + 2_048 + 128 + 128 + 128 + 4_096 + 128
    assert (split, whole) == (65_920, 81_920)
    assert stage_weight_bytes(w, 62, tp=1) == [split + whole]
    assert stage_weight_bytes(w, 62, tp=2) == [split // 2 + whole]  # 114,880 (before: all split, 73,920)
    # qwen2_5_vl.py: the patch Conv3dLayer and merger.ln_q whole, attn.proj's and merger.mlp.2's biases whole,
    # merger.mlp.0 (ColumnParallelLinear) split with its bias
    w = _table(tmp_path, "qwen2.5-vl-7b.json", {
        "visual.patch_embed.proj.weight": ("BF16", [64, 3, 2, 14, 14], 2),                      # 150,528 whole
        "visual.blocks.0.attn.proj.weight": ("BF16", [64, 64], 2),                              # 8,192 split
        "visual.blocks.0.attn.proj.bias": ("BF16", [64], 2),                                    # 128 whole
        "visual.merger.ln_q.weight": ("BF16", [64], 2),                                         # 128 whole
        "visual.merger.mlp.0.weight": ("BF16", [256, 256], 2),                                  # 131,072 split
        "visual.merger.mlp.0.bias": ("BF16", [256], 2),                                         # 512 split
        "visual.merger.mlp.2.bias": ("BF16", [64], 2),                                          # 128 whole
    })
    assert stage_weight_bytes(w, 28, tp=4) == [(8_192 + 131_072 + 512) // 4 + 150_528 + 128 + 128 + 128]
    # glm4_1v.py: the merger's proj is a ColumnParallelLinear (split), its post_projection_norm and the downsample
    # Conv2dLayer whole, down_proj split
    w = _table(tmp_path, "tests/data/configs/glm-4.5v-transformers5.json", {
        "model.visual.downsample.weight": ("BF16", [32, 64, 2, 2], 2),                          # 16,384 whole
        "model.visual.merger.proj.weight": ("BF16", [32, 32], 2),                               # 2,048 split
        "model.visual.merger.post_projection_norm.weight": ("BF16", [32], 2),                   # 64 whole
        "model.visual.merger.down_proj.weight": ("BF16", [32, 64], 2),                          # 4,096 split
    })
    assert stage_weight_bytes(w, 46, tp=2) == [(2_048 + 4_096) // 2 + 16_384 + 64]
    # phi3v.py: the CLIP's q_proj split, img_projection.0 (nn.Linear) and glb_GN whole
    w = _table(tmp_path, PHI3_V, {
        "model.vision_embed_tokens.img_processor.vision_model.encoder.layers.0.self_attn.q_proj.weight":
            ("BF16", [64, 64], 2),                                                              # 8,192 split
        "model.vision_embed_tokens.img_projection.0.weight": ("BF16", [32, 64], 2),             # 4,096 whole
        "model.vision_embed_tokens.glb_GN": ("BF16", [1, 1, 64], 2),                            # 128 whole
    })
    assert stage_weight_bytes(w, 32, tp=2) == [8_192 // 2 + 4_096 + 128]
