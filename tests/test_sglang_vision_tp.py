"""The vision tower on one GPU as SGLang 0.5.23 splits it under plain --tp (weights/vision_tp.py SGLANG_TOWERS,
engines/sglang_tower.py), where it differs from vLLM 0.34's split that kvplan's plan follows.

Read in the sglang 0.5.23 wheel (python/sglang/srt/...):
- models/gemma3_mm.py builds models/siglip.py SiglipVisionModel, whose SiglipVisionEmbeddings.position_embedding is
  a VocabParallelEmbedding (layers/vocab_parallel_embedding.py: rows padded to 64, split over TP); vLLM 0.34
  siglip.py holds it whole (nn.Embedding). The attention (layers/attention/vision.py VisionAttention: qkv_proj
  QKVParallelLinear, proj RowParallelLinear), fc1 / fc2 and the projector's nn.Parameter as vLLM.
- models/mllama4.py builds transformers' Llama4MultiModalProjector: linear_1 an nn.Linear, whole (vLLM:
  ColumnParallelLinear). The rest as vLLM (unfold linear Column, fc1 Column, fc2 Row, VisionAttention).
- models/glm4v.py (glm4v_moe.py): Glm4vPatchMerger.proj a ReplicatedLinear (whole; vLLM: ColumnParallelLinear), and
  the vision heads padded with zero heads to a multiple of TP (vision_utils.update_vit_attn_dummy_heads_config;
  VisionAttention builds qkv_proj and proj over heads + dummy heads).
- models/internvl.py InternVLChatModel: InternViT's VisionAttention with those dummy heads, so qkv / proj split even
  for InternViT-6B's 25 heads (vLLM 0.34 InternParallelAttention falls back to data parallelism: whole), its
  q_norm / k_norm RMSNorm over the padded width (whole), mlp1 nn.Linear whole.
- models/qwen2_5_vl.py: mlp_hidden_size = ((intermediate_size + 7) // 8) * 8 (3,420 -> 3,424).

Tower bytes a GPU = the engine's weights a GPU less those of the text model alone (--set vision_config=null), bf16.
"""

from __future__ import annotations

import json

import pytest

from kvplan_inprocess import estimate_json

BIG = ("--gpu", "h200", "--gpu-memory", "2TB", "--context", "4k", "--engine", "sglang")


def _local(tmp_path, name: str, **vision) -> str:
    from kvplan.sources import bundled_config, bundled_index

    raw = bundled_config(bundled_index()[name]) if not name.endswith(".json") else json.load(open(name))
    if vision:
        raw = dict(raw, vision_config=dict(raw["vision_config"], **vision))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return str(path)


def _tower(path: str, tp: int) -> tuple[int, int]:
    """(SGLang's tower bytes a GPU, kvplan's vLLM-split figure: its plan without --engine sglang) at --tp tp."""
    split = ("--tp", str(tp))
    with_tower = estimate_json(path, *BIG, *split)
    text = estimate_json(path, *BIG, *split, "--set", "vision_config=null")
    plain = [estimate_json(path, *BIG[:-2], *split, *more)["capacity"]["weight_bytes_per_gpu"]
             for more in ((), ("--set", "vision_config=null"))]
    return (with_tower["engine"]["weight_bytes_per_gpu"] - text["engine"]["weight_bytes_per_gpu"], plain[0] - plain[1])


# Gemma 3 27B: SigLIP hidden 1,152, MLP 4,304, 27 layers, patch 14 on 896 (64^2 = 4,096 positions), text hidden 5,376.
#   423,060,336 parameters (docs/weights.md). vLLM's whole: patch conv 588 x 1,152 + 1,152 = 678,528, positions
#   4,096 x 1,152 = 4,718,592, per layer two LayerNorms 4,608 + out_proj / fc2 biases 2,304 = 6,912 (x 27 = 186,624),
#   post_layernorm 2,304, projector 1,152 x 5,376 + its norm 1,152 = 6,194,304: 11,780,352; split 411,279,984.
#   SGLang: the positions split too (4,096 rows, a multiple of 64: no padding): whole 7,061,760, split 415,998,576.
#   TP 2: 2 x 7,061,760 + 2 x 415,998,576 / 2 = 14,123,520 + 415,998,576 = 430,122,096 B
#   TP 4: 14,123,520 + 207,999,288 = 222,122,808 B;  TP 8: 14,123,520 + 103,999,644 = 118,123,164 B
#   (vLLM at TP 4: 23,560,704 + 822,559,968 / 4 = 229,200,696 B)
# Llama 4 Scout: 871,932,416 parameters (tests/test_sglang_dp_vl.py). vLLM's whole: class + 577 positions + two
#   LayerNorms = 582 x 1,408 = 819,456, per layer two LayerNorms 5,632 + o_proj / fc2 biases 2,816 = 8,448 (x 34 =
#   287,232): 1,106,688. SGLang also the projector's linear_1 4,096 x 5,120 = 20,971,520: 22,078,208 whole,
#   849,854,208 split.
#   TP 2: 44,156,416 + 849,854,208 = 894,010,624 B;  TP 4: 44,156,416 + 424,927,104 = 469,083,520 B
#   TP 8: 44,156,416 + 212,463,552 = 256,619,968 B  (vLLM at TP 4: 2,213,376 + 435,412,864 = 437,626,240 B)
# GLM-4.5V (tests/data/configs/glm-4.5v-transformers5.json): 858,681,856 parameters; vLLM's whole 27,947,520
#   (tests/test_sglang_dp_vl.py), SGLang's also the merger's proj 4,096 x 4,096 = 16,777,216: 44,724,736 whole,
#   813,957,120 split. 12 heads of 128: no dummy heads at TP 2 / 4, 4 at TP 8 (16 heads): 24 blocks x (3 x 4 x 128
#   q/k/v rows + 4 x 128 proj columns) x 1,536 = 75,497,472 more, split.
#   TP 2: 89,449,472 + 813,957,120 = 903,406,592 B;  TP 4: 89,449,472 + 406,978,560 = 496,428,032 B
#   TP 8: 89,449,472 + 2 x 889,454,592 / 8 = 89,449,472 + 222,363,648 = 311,813,120 B
@pytest.mark.parametrize("name,tp,sglang,vllm", [
    ("gemma-3-27b", 2, 430_122_096, None),
    ("gemma-3-27b", 4, 222_122_808, 229_200_696),
    ("gemma-3-27b", 8, 118_123_164, None),
    ("llama-4-scout", 2, 894_010_624, None),
    ("llama-4-scout", 4, 469_083_520, 437_626_240),
    ("llama-4-scout", 8, 256_619_968, None),
    ("tests/data/configs/glm-4.5v-transformers5.json", 2, 903_406_592, None),
    ("tests/data/configs/glm-4.5v-transformers5.json", 4, 496_428_032, None),
    ("tests/data/configs/glm-4.5v-transformers5.json", 8, 311_813_120, None),
])
def test_tower_bytes_a_gpu_as_sglang_splits_it(tmp_path, name, tp, sglang, vllm):
    got = _tower(_local(tmp_path, name), tp)
    assert got[0] == sglang
    if vllm is not None:  # kvplan's own plan without --engine sglang keeps vLLM's split
        assert got[1] == vllm


def test_internvit_6b_attention_split_with_a_dummy_head(tmp_path):
    # InternVL3-1B's config with InternViT-6B's tower (hidden 3,200, MLP 12,800, 25 heads of 128, 45 layers, RMSNorm,
    # qk_normalization, no qkv bias; tests/test_vision_towers.py): 5,548,795,008 parameters, vLLM's whole
    # 1,861,819,008 (the attention whole: 25 heads). SGLang at TP 2: one dummy head (26), 128 more wide:
    #   whole: embeddings 3,200 + (588 x 3,200 + 3,200) + 1,025 x 3,200 = 5,168,000, mlp1 12,299,008, per layer
    #   norm1 / norm2 6,400 + ls1 / ls2 6,400 + q_norm / k_norm 2 x 3,328 = 6,656 + proj and fc2 biases 6,400 =
    #   25,856 (x 45 = 1,163,520): 18,630,528
    #   split: per layer qkv 3 x 3,328 x 3,200 = 31,948,800 + proj 3,328 x 3,200 = 10,649,600 + fc1 3,200 x 12,800
    #   + 12,800 = 40,972,800 + fc2 12,800 x 3,200 = 40,960,000: 124,531,200 (x 45 = 5,603,904,000)
    #   2 x 18,630,528 + 2 x 5,603,904,000 / 2 = 37,261,056 + 5,603,904,000 = 5,641,165,056 B
    #   (vLLM: 2 x 1,861,819,008 + 2 x 3,686,976,000 / 2 = 7,410,614,016 B)
    path = _local(tmp_path, "tests/data/configs/internvl3-1b-pretrained.json", hidden_size=3200,
                  intermediate_size=12800, num_attention_heads=25, num_hidden_layers=45, norm_type="rms_norm",
                  qk_normalization=True, qkv_bias=False)
    assert _tower(path, 2) == (5_641_165_056, 7_410_614_016)


def test_qwen2_5_vl_mlp_rounded_to_eight(tmp_path):
    # Qwen2.5-VL-7B: 32 blocks, hidden 1,280, intermediate 3,420 -> 3,424 in SGLang: per block gate_up_proj 2 x 4
    # rows of 1,280 and their biases 8, down_proj 4 columns of 1,280: 15,368 (x 32 = 491,776) parameters more,
    # split: 2 x 491,776 / 4 = 245,888 B a GPU more at TP 4, whatever vLLM's figure
    sglang, vllm = _tower(_local(tmp_path, "qwen2.5-vl-7b"), 4)
    assert sglang - vllm == 245_888


def test_tensor_table_moves_by_name():
    # a checkpoint's names: Gemma 3's position embedding split by SGLang (whole in vLLM), Llama 4's linear_1 whole
    # (split in vLLM), a q_proj split by both
    from kvplan.weights.roles import TensorEntry, fold

    def entry(name, n):
        return TensorEntry(name, "BF16", n, 2 * n, (n,))

    gemma = fold([entry("vision_tower.vision_model.embeddings.position_embedding.weight", 4096 * 1152),
                  entry("vision_tower.vision_model.encoder.layers.0.self_attn.q_proj.weight", 1152 * 1152),
                  entry("multi_modal_projector.mm_input_projection_weight", 1152 * 5376)],
                 source="safetensors", origin="x", quantization="none", files=1, family="gemma3")
    assert gemma.vision_sglang == (0, 2 * 4096 * 1152)
    llama = fold([entry("multi_modal_projector.linear_1.weight", 4096 * 5120),
                  entry("vision_model.model.layers.0.mlp.fc1.weight", 1408 * 5632)],
                 source="safetensors", origin="x", quantization="none", files=1, family="llama4")
    assert llama.vision_sglang == (2 * 4096 * 5120, 0)


def test_family_not_read_keeps_vllm_split_and_says_so(tmp_path):
    # Phi-4-multimodal / Gemma 4 ...: a family whose SGLang tower file was not read; Kimi-VL read and the same
    from kvplan.engines.sglang_tower import tower_delta
    from kvplan.weights.record import Weights

    class Model:
        name, model_type, hidden_size = "m", "gemma3n", 2048
        weight_vision, weight_vision_quantized, source = (10, 20, 4), (0, 0), ""

    got = tower_delta(Model(), Weights(total_bytes=100, source="estimated from config", vision=(20, 4)), 2)
    assert got.stage_bytes == (0,) and "was not read" in got.note


def test_tensor_table_tower_on_a_gpu():
    # a Gemma 3 27B table's tower (the bundled config at hand): the positions 4,096 x 1,152 x 2 B = 9,437,184 B, whole
    # in vLLM, split by SGLang: at TP 4 a GPU holds 9,437,184 - 2,359,296 = 7,077,888 B less; a q_proj split by both
    # (no change), Gemma 3's 4,096 rows need no padding
    from kvplan.engines.sglang_tower import tower_delta
    from kvplan.sources import load_model
    from kvplan.weights.roles import TensorEntry, fold

    record = fold([TensorEntry("vision_tower.vision_model.embeddings.position_embedding.weight", "BF16", 4096 * 1152,
                               2 * 4096 * 1152, (4096, 1152)),
                   TensorEntry("vision_tower.vision_model.encoder.layers.0.self_attn.q_proj.weight", "BF16",
                               1152 * 1152, 2 * 1152 * 1152, (1152, 1152)),
                   TensorEntry("language_model.model.layers.0.mlp.down_proj.weight", "BF16", 64, 128, (8, 8))],
                  source="safetensors", origin="x", quantization="none", files=1, family="gemma3")
    got = tower_delta(load_model("gemma-3-27b"), record, 4, pp=2)
    assert got.stage_bytes == (-7_077_888, 0)


@pytest.mark.parametrize("select_layer", [-4, -40])
def test_internvit_layers_past_select_layer_are_built_by_sglang(tmp_path, select_layer):
    # SGLang 0.5.23 internvl.py InternVisionEncoder builds config.num_hidden_layers layers whatever select_layer
    # (it picks hidden_states[select_layer] in the forward), where vLLM 0.34 builds num_hidden_layers + select_layer
    # + 1 (kvplan's count). The 45-layer tower above with select_layer -4 or -40: SGLang still holds all 45 layers,
    # the same 5,641,165,056 B a GPU at TP 2 as with select_layer -1 (not fewer bytes, nor a negative figure)
    path = _local(tmp_path, "tests/data/configs/internvl3-1b-pretrained.json", hidden_size=3200,
                  intermediate_size=12800, num_attention_heads=25, num_hidden_layers=45, norm_type="rms_norm",
                  qk_normalization=True, qkv_bias=False)
    raw = json.load(open(path))
    raw["select_layer"] = select_layer
    (tmp_path / "config.json").write_text(json.dumps(raw))
    sglang, vllm = _tower(path, 2)
    assert sglang == 5_641_165_056
    assert vllm < 7_410_614_016  # vLLM builds fewer layers than 45
