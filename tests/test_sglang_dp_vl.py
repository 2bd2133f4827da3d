"""Image-text MoE models under SGLang 0.5.23's data-parallel attention: the vision tower as SGLang places it
(kvplan.engines.sglang_dp_vision), Qwen3-VL-MoE and Kimi-K2.5 planned (engines/sglang_dp.py DP_FAMILIES).

Read in the sglang 0.5.23 wheel (python/sglang/srt/...):
- models/mllama4.py: Llama4VisionEncoderLayer's VisionAttention (layers/attention/vision.py: qkv_proj / proj on
  "attn_tp") has no use_dp_attention_reduce, so reject_attn_tp_shard_with_tp_reduce (layers/dp_attention.py) raises
  at 1 < attention TP < --tp; at attention TP 1 the attention is whole, Llama4VisionMLP fc1 / fc2, the unfold linear
  and the adapter MLP are on "tp" (all GPUs), Llama4MultiModalProjector is transformers' nn.Linear (whole).
- models/qwen3_vl.py Qwen3VLMoeVisionModel (qwen3_vl_moe.py builds it): blocks and mergers on "attn_tp"
  (_resolve_vision_parallel_group), pos_embed a VocabParallelEmbedding over the attention TP group, the Conv3dLayer
  and LayerNorms whole. The text model is qwen3_moe.py's.
- models/kimi_k25.py: a DeepseekV3ForCausalLM language model; its tower is not counted by kvplan.
- models/glm4v_moe.py (glm4v.py Glm4vVisionModel): blocks and merger MLP on "attn_tp" under DP attention
  (_glm4v_vision_parallel_group), the merger's proj a ReplicatedLinear (whole; vLLM splits it), the vision heads
  padded with dummy heads to a multiple of the attention TP size (vision_utils.update_vit_attn_dummy_heads_config).

Shapes (the bundled config.json's vision_config; bf16, 2 B a parameter):
Llama-4-Scout: hidden 1,408, intermediate 5,632, 34 layers, patch 14, image 336 (577 positions), 3 channels,
projector_input / output / vision_output 4,096, text hidden 5,120.
  whole at attention TP 1: class + 577 positions + 2 LayerNorms = 582 x 1,408 = 819,456; per layer 2 LayerNorms
  5,632 + qkv 1,408 x 4,224 + 4,224 = 5,951,616 + proj 1,408 x 1,408 = 1,982,464 + its bias 1,408 + fc2's bias
  1,408 = 7,942,528, x 34 = 270,045,952; projector 4,096 x 5,120 = 20,971,520: 291,836,928 parameters.
  over all GPUs: unfold linear 588 x 1,408 = 827,904; per layer fc1 1,408 x 5,632 + 5,632 = 7,935,488 and fc2's
  weight 5,632 x 1,408 = 7,929,856, x 34 = 539,421,696; adapter 5,632 x 4,096 + 4,096 x 4,096 = 39,845,888:
  580,095,488 parameters (the tower's 871,932,416 in all).
  --tp 8 --dp 8: 2 x 291,836,928 + 2 x 580,095,488 / 8 = 583,673,856 + 145,023,872 = 728,697,728 B a GPU (before:
  the whole tower, 1,743,864,832 B, kvplan's split over attention TP 1).
Qwen3-VL-30B-A3B: hidden 1,152, intermediate 4,304, depth 27, 2,304 positions, out 2,048, merge 2 (4,608), 3
deepstack mergers, patch 16, temporal 2, 3 channels: 538,631,408 parameters.
  whole: Conv3d 1,536 x 1,152 + 1,152 = 1,770,624; per block 2 LayerNorms 4,608 + proj and fc2 biases 2 x 1,152 =
  6,912, x 27 = 186,624; mergers: LayerNorm 2,304 + fc2 bias 2,048, deepstack 3 x (LayerNorm 9,216 + 2,048) =
  38,144: 1,995,392 parameters (vLLM also holds pos_embed 2,304 x 1,152 = 2,654,208 whole).
  over the attention TP group: the rest, 538,631,408 - 1,995,392 - 2,654,208 = 533,981,808, and pos_embed (2,304
  rows, a multiple of 64: no padding).
  --tp 8 --dp 2 (attention TP 4): 2 x 1,995,392 + 2 x 533,981,808 / 4 + 2 x 576 x 1,152 = 3,990,784 + 266,990,904
  + 1,327,104 = 272,308,792 B (before: 9,299,200 + 266,990,904 = 276,290,104 B, pos_embed whole).
  --tp 4 --dp 2 (attention TP 2): 3,990,784 + 533,981,808 + 2 x 1,152 x 1,152 = 540,626,800 B.
GLM-4.5V (tests/data/configs/glm-4.5v-transformers5.json): hidden 1,536, 12 heads of 128, depth 24, out 4,096,
intermediate 10,944, patch 14, image 336, temporal 2, merge 2: 858,681,856 parameters.
  vLLM's whole: Conv3d 1,176 x 1,536 + 1,536 = 1,807,872, positions 576 x 1,536 = 884,736, 24 x 2 RMSNorms 73,728,
  post norms 3,072, downsample 1,536 x 4 x 4,096 + 4,096 = 25,169,920, merger LayerNorm 8,192: 27,947,520; SGLang
  also the merger's proj 4,096 x 4,096 = 16,777,216: 44,724,736; the rest 813,957,120 over the attention TP group.
  attention TP 4 (no dummy heads): kvplan 2 x 27,947,520 + 2 x 830,734,336 / 4 = 471,262,208 B, SGLang
  2 x 44,724,736 + 2 x 813,957,120 / 4 = 496,428,032 B: 25,165,824 B more.
  attention TP 8: 4 dummy heads, 24 x 4 x 4 x 128 x 1,536 = 75,497,472 more parameters split: SGLang 89,449,472 +
  2 x 889,454,592 / 8 = 311,813,120 B, kvplan 55,895,040 + 207,683,584 = 263,578,624 B: 48,234,496 B more.
"""

from __future__ import annotations

import json

import pytest

from kvplan_inprocess import estimate_json, kvplan, refused_line

BIG = ("--gpu", "h200", "--gpu-memory", "2TB", "--context", "32k", "--engine", "sglang")


def _local(tmp_path, name: str) -> str:
    """The bundled config as a local file: its weights are the config estimate with or without the tower."""
    from kvplan.sources import bundled_config, bundled_index

    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(bundled_config(bundled_index()[name])))
    return str(path)


def _tower(path: str, *split: str) -> tuple[int, int]:
    """A GPU's tower bytes: the weights a GPU less those of the text model alone (--set vision_config=null), in
    SGLang's report and kvplan's plan."""
    with_tower = estimate_json(path, *BIG, *split)
    text = estimate_json(path, *BIG, *split, "--set", "vision_config=null")
    return (with_tower["engine"]["weight_bytes_per_gpu"] - text["engine"]["weight_bytes_per_gpu"],
            with_tower["capacity"]["weight_bytes_per_gpu"] - text["capacity"]["weight_bytes_per_gpu"])


def test_llama4_dp8_tower_attention_whole_mlps_over_all_eight(tmp_path):
    assert 2 * 291_836_928 + 2 * 580_095_488 // 8 == 728_697_728
    assert _tower(_local(tmp_path, "llama-4-scout"), "--tp", "8", "--dp", "8") == (728_697_728,) * 2
    out = kvplan("estimate", "llama-4-scout", *BIG, "--tp", "8", "--dp", "8")
    assert out.returncode == 0, out.stderr
    assert "the vision tower as SGLang's mllama4.py places it" in out.stdout and "overcounts" not in out.stdout


def test_llama4_tower_refused_where_attention_tp_is_between_one_and_tp(tmp_path):
    line = refused_line("llama-4-scout", *BIG, "--tp", "8", "--dp", "2")
    assert "attention TP 4 of --tp 8" in line and "reject_attn_tp_shard_with_tp_reduce" in line
    # the text model alone is planned (mllama4.py builds no tower without vision weights)
    path = _local(tmp_path, "llama-4-scout")
    assert estimate_json(path, *BIG, "--tp", "8", "--dp", "2", "--set", "vision_config=null")["engine"]["attn_tp"] == 4


@pytest.mark.parametrize("split,tower", [(("--tp", "8", "--dp", "2"), 272_308_792),
                                         (("--tp", "4", "--dp", "2"), 540_626_800)])
def test_qwen3_vl_moe_tower_over_attention_tp_pos_embed_split(tmp_path, split, tower):
    assert 3_990_784 + 2 * 533_981_808 // 4 + 2 * 576 * 1_152 == 272_308_792
    assert 3_990_784 + 2 * 533_981_808 // 2 + 2 * 1_152 * 1_152 == 540_626_800
    assert _tower(_local(tmp_path, "qwen3-vl-30b-a3b"), *split) == (tower,) * 2


def test_qwen3_vl_moe_dp8_text_placed_as_qwen3_moe():
    # the text model is Qwen3-30B-A3B's shape (hidden 2,048, 48 layers of 128 experts of moe_intermediate 768,
    # vocab 151,936 untied): routed experts 48 x 128 x 3 x 2,048 x 768 x 2 = 57,982,058,496 B and the head
    # 151,936 x 2,048 x 2 = 622,329,856 B over 8 GPUs: 58,604,388,352 x 7 / 8 = 51,278,839,808 B less a GPU than
    # at TP 1; the tower at attention TP 1 is whole in both (pos_embed over one rank)
    whole, dp8 = estimate_json("qwen3-vl-30b-a3b", *BIG), estimate_json("qwen3-vl-30b-a3b", *BIG, "--tp", "8", "--dp", "8")
    assert dp8["engine"]["attn_tp"] == 1
    assert whole["engine"]["weight_bytes_per_gpu"] - dp8["engine"]["weight_bytes_per_gpu"] == 51_278_839_808
    assert whole["capacity"]["weight_bytes_per_gpu"] - dp8["capacity"]["weight_bytes_per_gpu"] == 51_278_839_808


def test_emit_sglang_attn_dp_size_for_the_vl_models():
    for model, dp in (("qwen3-vl-30b-a3b", "2"), ("llama-4-scout", "8")):
        argv = estimate_json(model, "--context", "32k", "--gpu", "h200", "--tp", "8", "--dp", dp,
                             "--emit", "sglang")["emit"]["argv"]
        at = argv.index("--tp-size")
        assert argv[at:at + 4] == ["--tp-size", "8", "--attn-dp-size", dp]


def test_kimi_k25_planned_as_deepseek_v3_tower_not_counted_noted():
    out = kvplan("estimate", "tests/data/configs/kimi-k2.5-int4.json", "--gpu", "h200", "--context", "32k",
                 "--tp", "8", "--dp", "8", "--engine", "sglang")
    assert out.returncode == 0, out.stderr
    note = next(line for line in out.stdout.splitlines() if "--attn-dp-size" in line and "attention groups" in line)
    assert "over all 8 GPUs (deepseek_v2.py)" in note and "kimi_k25.py" in note


@pytest.mark.parametrize("attn_tp,more", [(4, 25_165_824), (8, 48_234_496)])
def test_glm45v_tower_merger_proj_whole_dummy_heads(attn_tp, more):
    from kvplan.engines.sglang_dp_vision import tower_saving
    from kvplan.sources import load_model_and_weights

    assert 2 * 44_724_736 + 2 * 813_957_120 // 4 - 471_262_208 == 25_165_824
    assert 89_449_472 + 2 * 889_454_592 // 8 - 263_578_624 == 48_234_496
    model, weights = load_model_and_weights("tests/data/configs/glm-4.5v-transformers5.json")
    assert tower_saving(model, weights, attn_tp, 2) == -more
    # kvplan has no per-module count of its text model's experts: refused before the tower
    line = refused_line("tests/data/configs/glm-4.5v-transformers5.json", *BIG, "--tp", "8", "--dp", "2")
    assert "no per-module count of model_type 'glm4v_moe_text'" in line
