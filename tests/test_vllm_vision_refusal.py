"""The vision towers vLLM 0.34 fails to build at a TP that does not divide their heads (kvplan.engines.
vllm_vision_refusal; the check shared with SGLang's: kvplan.engines.vision_heads).

Read in the vllm 0.34.0 wheel (vllm/model_executor/...): layers/linear.py QKVParallelLinear.__init__ takes num_heads =
divide(total_num_heads, tp_size) and distributed/utils.py divide asserts; under the default --mm-encoder-tp-mode
weights models/vision.py is_vit_use_data_parallel() is False, so glm4_1v.py Glm4vVisionAttention, qwen2_5_vl.py
Qwen2_5_VisionAttention and siglip.py SiglipAttention split their heads over the whole --tp, with no dummy heads
(SGLang 0.5.23 pads GLM-4.1V / 4.5V's: tests/test_sglang_vision_tp.py plans GLM-4.5V at TP 8). Published:
vllm-project/vllm issue #24004, "GLM-4.5V - AssertionError: 12 is not divisible by 8".
"""

from __future__ import annotations

import json

from kvplan_inprocess import estimate_json, refused_line

GLM45V = "tests/data/configs/glm-4.5v-transformers5.json"
VLLM = ("--gpu", "h200", "--context", "4k", "--engine", "vllm")


def _config(tmp_path, raw: dict) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return str(path)


def test_glm45v_refused_at_tp8_by_vllm_not_by_sglang():
    # GLM-4.5V: vision_config num_heads 12; text 96 query / 8 KV heads. TP 8: the text splits (96 / 8 = 12,
    # 8 / 8 = 1), the vision heads do not (12 / 8 = 1.5); TP 4: 12 / 4 = 3
    raw = json.loads(open(GLM45V).read())
    assert raw["vision_config"]["num_heads"] == 12 and raw["text_config"]["num_attention_heads"] == 96
    line = refused_line(GLM45V, *VLLM, "--tp", "8")
    assert "--tp 8 with --engine vllm" in line and "12 vision heads over TP 8" in line
    assert "glm4_1v.py Glm4vVisionAttention" in line and "--set vision_config=null" in line
    assert estimate_json(GLM45V, *VLLM, "--tp", "4")["capacity"]["tp"] == 4
    assert estimate_json(GLM45V, *VLLM, "--tp", "8", "--set", "vision_config=null")["capacity"]["tp"] == 8
    # SGLang pads the 12 heads to 16 with dummy heads (vision_utils.update_vit_attn_dummy_heads_config)
    sgl = ("--gpu", "h200", "--context", "4k", "--engine", "sglang", "--tp", "8")
    assert estimate_json(GLM45V, *sgl)["capacity"]["tp"] == 8


def _qwen_mha(tmp_path) -> str:
    # Qwen2.5-VL-7B with its text model multi-head (28 KV heads), so that TP 7 divides the text (28 / 7 = 4) and
    # not the 16 vision heads (16 / 7 = 2.29), as tests/test_sglang_vision_refusal.py does
    from kvplan.sources import bundled_config, bundled_index

    raw = dict(bundled_config(bundled_index()["qwen2.5-vl-7b"]), num_key_value_heads=28)
    assert raw["num_attention_heads"] == 28 and raw["vision_config"]["num_heads"] == 16
    return _config(tmp_path, raw)


def test_qwen2_5_vl_heads_refused_estimate_and_fit(tmp_path):
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    path = _qwen_mha(tmp_path)
    line = refused_line(path, *VLLM, "--tp", "7")
    assert "16 vision heads over TP 7" in line and "qwen2_5_vl.py Qwen2_5_VisionAttention" in line
    req = FitRequest(path, 4096, 1, tuple(parse_gpus("h200")), max_gpus=7, engine="vllm")
    by_split = {(c.tp, c.pp): c for c in search(req, verify_top=1).candidates if c.kv_dtype == "bf16"}
    seven = by_split[(7, 1)]
    assert not seven.ok and seven.constraint == "heads" and "16 vision heads over TP 7" in seven.reason
    assert by_split[(1, 7)].ok and by_split[(4, 1)].ok  # TP 1 and TP 4 divide the 16 heads


def test_gemma3_siglip_heads_refused(tmp_path):
    # Gemma 3 27B (32 query / 16 KV text heads: TP 8 splits them) with a SigLIP of 12 heads (its 1,152 hidden /
    # 12 = 96 a head): 12 / 8 = 1.5
    from kvplan.sources import bundled_config, bundled_index

    raw = bundled_config(bundled_index()["gemma-3-27b"])
    raw = dict(raw, vision_config=dict(raw["vision_config"], num_attention_heads=12))
    line = refused_line(_config(tmp_path, raw), *VLLM, "--tp", "8")
    assert "12 vision heads over TP 8" in line and "siglip.py SiglipAttention" in line


def test_fit_glm45v_tp8_screened():
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    req = FitRequest(GLM45V, 4096, 1, tuple(parse_gpus("h200")), max_gpus=8, engine="vllm")
    by_split = {(c.tp, c.pp): c for c in search(req, verify_top=1).candidates if c.kv_dtype == "bf16"}
    eight = by_split[(8, 1)]
    assert not eight.ok and eight.constraint == "heads" and "12 vision heads over TP 8" in eight.reason
    assert by_split[(4, 1)].ok and by_split[(4, 2)].ok  # 12 / 4 = 3; --tp 4 --pp 2 (as zai-org/GLM-V issue #111 ran it)
