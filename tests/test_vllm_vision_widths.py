"""vLLM 0.34's vision towers beyond their heads (kvplan.engines.vllm_vision_refusal): the split MLP / merger widths a
--tp must divide, Phi-3-vision's CLIP fixed in code, Qwen-Omni's thinker towers.

Read in the vllm 0.34.0 wheel (vllm/model_executor/...): layers/linear.py ColumnParallelLinear divides its output
size by tp (distributed/utils.py divide asserts ensure_divisibility), MergedColumnParallelLinear asserts each output
size % tp == 0, RowParallelLinear divides its input size; the towers build them with disable_tp only under data
parallelism (models/vision.py is_vit_use_data_parallel(), False under the default --mm-encoder-tp-mode weights).
qwen2_5_vl.py Qwen2_5_VisionTransformer passes mlp_hidden_dim=vision_config.intermediate_size (unpadded) to
Qwen2_5_VisionMLP's gate_up_proj (MergedColumnParallelLinear); glm4_1v.py passes vision_config.out_hidden_size to
Glm4vVisionMLP; intern_vit.py InternMLP.fc1 is a ColumnParallelLinear of intermediate_size even where
InternParallelAttention falls back to a whole attention; phi3v.py builds its CLIP from
CLIP_VIT_LARGE_PATCH14_336_CONFIG (16 heads, intermediate 4,096). Every value asserted below is worked by hand.
"""

from __future__ import annotations

import json

from kvplan_inprocess import estimate_json, refused_line

VLLM = ("--gpu", "h200", "--context", "4k", "--engine", "vllm")
GLM45V = "tests/data/configs/glm-4.5v-transformers5.json"
INTERNVL3_1B = "tests/data/configs/internvl3-1b-pretrained.json"
PHI3V = "tests/data/configs/phi-3-vision-128k-instruct.json"
QWEN3_OMNI = "tests/data/configs/qwen3-omni-30b-a3b-instruct-tf5-trimmed.json"


def _write(tmp_path, raw: dict, name: str = "config.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return str(path)


def _qwen2_5_vl_3b(tmp_path) -> str:
    # Qwen/Qwen2.5-VL-3B-Instruct's config.json: text hidden 2,048, intermediate 11,008, 16 query / 2 KV heads, 36
    # layers, tied embeddings; its vision_config is the 7B's (1,280 hidden, 16 heads, intermediate_size 3,420) but
    # for out_hidden_size 2,048. Built from the bundled 7B with those values
    from kvplan.sources import bundled_config, bundled_index

    raw = dict(bundled_config(bundled_index()["qwen2.5-vl-7b"]), hidden_size=2048, intermediate_size=11008,
               num_attention_heads=16, num_key_value_heads=2, num_hidden_layers=36, tie_word_embeddings=True)
    raw["vision_config"] = dict(raw["vision_config"], out_hidden_size=2048)
    assert raw["vision_config"]["intermediate_size"] == 3420 and raw["vision_config"]["num_heads"] == 16
    return _write(tmp_path, raw)


def test_qwen2_5_vl_3b_mlp_width_refused_at_tp8(tmp_path):
    # TP 8: text 16 / 8 = 2 query heads, 8 % 2 = 0 (KV heads replicated), MLP 11,008 / 8 = 1,376; vision heads
    # 16 / 8 = 2, merger 1,280 x 2^2 = 5,120 / 8 = 640; but the vision MLP 3,420 / 8 = 427.5 (3,420 % 8 = 4).
    # TP 4: 3,420 / 4 = 855, 5,120 / 4 = 1,280
    path = _qwen2_5_vl_3b(tmp_path)
    line = refused_line(path, *VLLM, "--tp", "8")
    assert "--tp 8 with --engine vllm" in line and "MLP intermediate_size of 3,420 over TP 8" in line
    assert "3,420 % 8 = 4" in line and "qwen2_5_vl.py Qwen2_5_VisionMLP.gate_up_proj" in line
    assert "--set vision_config=null" in line
    assert estimate_json(path, *VLLM, "--tp", "4")["capacity"]["tp"] == 4
    assert estimate_json(path, *VLLM, "--tp", "8", "--set", "vision_config=null")["capacity"]["tp"] == 8


def test_fit_screens_qwen2_5_vl_3b_tp8(tmp_path):
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    req = FitRequest(_qwen2_5_vl_3b(tmp_path), 4096, 1, tuple(parse_gpus("h200")), max_gpus=8, engine="vllm")
    by_split = {(c.tp, c.pp): c for c in search(req, verify_top=1).candidates if c.kv_dtype == "bf16"}
    eight = by_split[(8, 1)]
    assert not eight.ok and eight.constraint == "split" and "MLP intermediate_size of 3,420 over TP 8" in eight.reason
    assert by_split[(4, 1)].ok and by_split[(4, 2)].ok and by_split[(1, 8)].ok  # 3,420 / 4 = 855


def test_glm4v_mlp_is_out_hidden_size_wide(tmp_path):
    # glm4_1v.py: the blocks' Glm4vVisionMLP takes mlp_hidden_dim=vision_config.out_hidden_size, the merger's
    # gate_up_proj intermediate_size. GLM-4.5V (text 96 query / 8 KV heads; 12 vision heads, intermediate 10,944)
    # at TP 2 with out_hidden_size 4,097: text 96 / 2 = 48 and 8 / 2 = 4, vision heads 12 / 2 = 6, merger
    # 10,944 / 2 = 5,472, but 4,097 % 2 = 1 -> refused by the blocks' MLP width
    raw = json.loads(open(GLM45V).read())
    assert raw["vision_config"]["intermediate_size"] == 10944 and raw["vision_config"]["num_heads"] == 12
    raw["vision_config"] = dict(raw["vision_config"], out_hidden_size=4097)
    line = refused_line(_write(tmp_path, raw), *VLLM, "--tp", "2")
    assert "MLP width out_hidden_size of 4,097 over TP 2" in line and "Glm4vVisionMLP.gate_up_proj" in line
    # the merger: intermediate_size 10,945 (odd) with the published out_hidden_size 4,096 (4,096 / 2 = 2,048)
    raw["vision_config"] = dict(raw["vision_config"], out_hidden_size=4096, intermediate_size=10945)
    line = refused_line(_write(tmp_path, raw, "merger.json"), *VLLM, "--tp", "2")
    assert "merger intermediate_size of 10,945 over TP 2" in line and "Glm4vPatchMerger.gate_up_proj" in line


def test_internvit_mlp_refused_where_its_attention_falls_back(tmp_path):
    # InternVL3-1B (InternViT-300M: 16 heads, intermediate_size 4,096) made multi-head in its text model (14 KV
    # heads) with a text MLP of 4,900 = 7 x 700, so that TP 7 divides the text (14 / 7 = 2). The 16 vision heads
    # % 7 = 2: intern_vit.py InternParallelAttention builds itself whole, not refused; InternMLP.fc1 splits
    # 4,096 over 7 (4,096 % 7 = 1): refused. TP 2: 4,096 / 2 = 2,048
    raw = json.loads(open(INTERNVL3_1B).read())
    assert raw["vision_config"]["intermediate_size"] == 4096 and raw["vision_config"]["num_attention_heads"] == 16
    raw["llm_config"] = dict(raw["llm_config"], num_key_value_heads=14, intermediate_size=4900)
    path = _write(tmp_path, raw)
    line = refused_line(path, *VLLM, "--tp", "7")
    assert "MLP intermediate_size of 4,096 over TP 7" in line and "4,096 % 7 = 1" in line
    assert "intern_vit.py InternMLP.fc1" in line and "vision heads" not in line.split("(choose")[0]
    assert estimate_json(path, *VLLM, "--tp", "2")["capacity"]["tp"] == 2


def test_phi3v_fixed_clip_heads(tmp_path):
    # Phi-3-vision's img_processor holds no heads: phi3v.py builds CLIP_VIT_LARGE_PATCH14_336_CONFIG, 16 heads.
    # Its text model made 48 query / 48 KV heads (3,072 / 48 = 64 a head) so that TP 3 divides the text (48 / 3 =
    # 16) and not the 16 vision heads (16 % 3 = 1); the tower is dropped with --set img_processor=null
    raw = json.loads(open(PHI3V).read())
    assert raw["model_type"] == "phi3_v" and "num_attention_heads" not in raw["img_processor"]
    raw = dict(raw, num_attention_heads=48, num_key_value_heads=48)
    path = _write(tmp_path, raw)
    line = refused_line(path, *VLLM, "--tp", "3")
    assert "16 vision heads over TP 3" in line and "phi3v.py's clip.py CLIPAttention" in line
    assert "--set img_processor=null" in line
    assert estimate_json(path, *VLLM, "--tp", "3", "--set", "img_processor=null")["capacity"]["tp"] == 3
    # the published config at TP 32: text 32 / 32 = 1 head, the vision 16 % 32 = 16
    assert "16 vision heads over TP 32" in refused_line(PHI3V, *VLLM, "--tp", "32")
    assert estimate_json(PHI3V, *VLLM, "--tp", "16")["capacity"]["tp"] == 16  # 16 / 16 = 1, 4,096 / 16 = 256


def test_qwen3_omni_thinker_tower(tmp_path):
    # Qwen3-Omni-30B-A3B: thinker_config.vision_config 16 heads, intermediate 4,304 (= 8 x 538), hidden 1,152 x 2^2 =
    # 4,608 (= 8 x 576); text 32 query / 4 KV heads: TP 8 builds. With 12 vision heads 12 % 8 = 4: refused;
    # with intermediate 4,300: 4,300 % 8 = 4, refused by qwen3_omni_moe_thinker.py Qwen3_VisionMLP.linear_fc1
    raw = json.loads(open(QWEN3_OMNI).read())
    vision = raw["thinker_config"]["vision_config"]
    assert (vision["num_heads"], vision["intermediate_size"], vision["hidden_size"]) == (16, 4304, 1152)
    from kvplan.engines.vllm_vision_refusal import refusal
    from kvplan.sources import load_model

    assert refusal(load_model(QWEN3_OMNI), 8) is None
    raw["thinker_config"] = dict(raw["thinker_config"], vision_config=dict(vision, num_heads=12))
    why = refusal(load_model(_write(tmp_path, raw, "heads.json")), 8)
    assert "12 vision heads over TP 8" in why and "qwen3_omni_moe_thinker.py" in why
    raw["thinker_config"] = dict(raw["thinker_config"], vision_config=dict(vision, intermediate_size=4300))
    why = refusal(load_model(_write(tmp_path, raw, "mlp.json")), 8)
    assert "MLP intermediate_size of 4,300 over TP 8" in why and "Qwen3_VisionMLP.linear_fc1" in why
