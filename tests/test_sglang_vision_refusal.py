"""The vision towers SGLang 0.5.23 fails to build, refused in one line (kvplan.engines.sglang_vision_refusal).

Read in the sglang 0.5.23 wheel (python/sglang/srt/...):
- layers/attention/vision.py VisionAttention.__init__: num_attention_heads_per_partition =
  dist_utils.divide(num_dummy_heads + num_heads, attn_tp_size), and distributed/utils.py divide asserts the
  division. qwen2_5_vl.py Qwen2_5_VisionBlock, siglip.py, pixtral.py, mllama4.py, qwen3_vl.py, kimi_vl_moonvit.py,
  idefics2.py (MiniCPM-V / o) and mllama.py (over attention_heads) build it with no dummy heads; internvl.py and glm4v.py pad the heads to a multiple of the TP size
  (vision_utils.update_vit_attn_dummy_heads_config), so InternViT-6B's 25 heads and GLM-4.5V's 12 build at any TP
  (tests/test_sglang_vision_tp.py plans them at TP 2 / 8).
- llava.py LlavaForConditionalGeneration builds its tower as SGLang's ModelRegistry entry for the class transformers'
  AutoModel maps the vision_config to (CLIPVisionConfig -> CLIPVisionModel, SiglipVisionConfig -> SiglipVisionModel);
  no model file registers either (clip.py's EntryClass is CLIPModel, siglip.py has none), so resolve_model_cls
  raises and the server does not start.

No bundled or public config of these families met in this work has a TP kvplan searches (1-8) that divides the text
model's query and KV heads but not its 16 vision heads (Qwen2.5-VL-7B at TP 7: its 4 KV heads refuse it first;
Gemma 3, Llama 4, Mistral 3, Qwen3-VL / 3.5, Kimi-VL: powers of two or 40 / 8 heads). The refusal is shown on
Qwen2.5-VL-7B's config with its text model made multi-head (num_key_value_heads 28), where TP 7 divides the text
heads (28 / 7 = 4) and not the 16 vision heads (16 / 7 = 2.29).
"""

from __future__ import annotations

import json

from kvplan_inprocess import estimate_json, kvplan, refused_line

SGL = ("--gpu", "h200", "--context", "4k", "--engine", "sglang")


def _qwen_mha(tmp_path) -> str:
    from kvplan.sources import bundled_config, bundled_index

    # the MLP made 18,956 wide (7 x 2,708 = 4 x 4,739): the text model divides at TP 7 and 4, as SGLang's dense-MLP
    # width rule (engines/sglang_widths.py) asks, so only the tower's heads decide
    raw = dict(bundled_config(bundled_index()["qwen2.5-vl-7b"]), num_key_value_heads=28, intermediate_size=18956)
    assert raw["num_attention_heads"] == 28 and raw["vision_config"]["num_heads"] == 16
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return str(path)


def test_vision_heads_not_divided_by_tp_refused(tmp_path):
    path = _qwen_mha(tmp_path)
    line = refused_line(path, *SGL, "--tp", "7")
    assert "--tp 7 with --engine sglang" in line and "16 vision heads over TP 7" in line
    assert "qwen2_5_vl.py Qwen2_5_VisionBlock" in line and "--set vision_config=null" in line
    # 16 / 4 = 4 heads a GPU: planned; the text model alone at TP 7 too (no tower, no vision attention)
    assert estimate_json(path, *SGL, "--tp", "4")["capacity"]["tp"] == 4
    assert estimate_json(path, *SGL, "--tp", "7", "--set", "vision_config=null")["capacity"]["tp"] == 7
    # vLLM's plan is not refused by SGLang's rule
    assert estimate_json(path, "--gpu", "h200", "--context", "4k", "--tp", "7")["capacity"]["tp"] == 7


def test_fit_screens_the_vision_heads_per_split(tmp_path):
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    req = FitRequest(_qwen_mha(tmp_path), 4096, 1, tuple(parse_gpus("h200")), max_gpus=7, engine="sglang")
    by_split = {(c.tp, c.pp): c for c in search(req, verify_top=1).candidates if c.kv_dtype == "bf16"}
    seven = by_split[(7, 1)]
    assert not seven.ok and seven.constraint == "heads" and "16 vision heads over TP 7" in seven.reason
    assert by_split[(1, 7)].ok and by_split[(4, 1)].ok  # TP 1 and TP 4 divide the 16 heads


def test_llava_clip_tower_refused_text_alone_planned():
    # llava-1.5-7b: LlavaForConditionalGeneration with a CLIP tower (vision_config model_type clip_vision_model)
    line = refused_line("llava-1.5-7b", *SGL)
    assert "does not build LLaVA's CLIPVisionModel tower" in line and "ModelRegistry" in line
    assert estimate_json("llava-1.5-7b", *SGL, "--set", "vision_config=null")["engine"]["name"] == "sglang"
    assert estimate_json("llava-1.5-7b", "--gpu", "h200", "--context", "4k")["capacity"]["tp"] == 1  # vLLM builds it
    # fit refuses it once, whatever the split (not as "no valid split")
    out = kvplan("fit", "llava-1.5-7b", "--gpu", "h200", "--context", "4k", "--concurrency", "1", "--engine", "sglang")
    assert out.returncode == 2 and "does not build LLaVA's CLIPVisionModel tower" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_llava_siglip_tower_refused(tmp_path):
    from kvplan.sources import bundled_config, bundled_index

    raw = dict(bundled_config(bundled_index()["llava-1.5-7b"]),
               vision_config={"model_type": "siglip_vision_model", "vision_use_head": False})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    assert "does not build LLaVA's SiglipVisionModel tower" in refused_line(str(path), *SGL)


def test_internvl_select_layer_past_which_sglang_builds_noted(tmp_path):
    # internvl.py InternVLChatModel builds InternVisionModel(config.vision_config): all num_hidden_layers (24 in
    # InternVL3-1B's InternViT-300M), whatever select_layer, and kvplan counts them all under SGLang. Public
    # InternVL configs give -1 (every layer: nothing to note); a config cutting the tower at -4 is noted.
    raw = json.loads(open("tests/data/configs/internvl3-1b-pretrained.json").read())
    assert raw["select_layer"] == -1 and raw["vision_config"]["num_hidden_layers"] == 24
    for select, noted in ((-1, False), (23, False), (-4, True)):
        path = tmp_path / f"config{select}.json"
        path.write_text(json.dumps(dict(raw, select_layer=select)))
        out = kvplan("estimate", str(path), *SGL)
        assert out.returncode == 0, out.stderr
        assert (f"whatever select_layer ({select}) says" in out.stdout) is noted


def test_mllama_vision_heads_not_divided_by_tp_refused():
    # mllama.py MllamaVisionEncoderLayer builds VisionAttention over vision_config.attention_heads (16 in
    # Llama-3.2-11B-Vision) with num_dummy_heads 0 (HF's config has no original_attention_heads): TP 32 divides the
    # text model's 32 query heads (8 KV heads replicated) but not 16 / 32; TP 16 gives one vision head a GPU
    line = refused_line("llama-3.2-11b-vision", *SGL, "--tp", "32")
    assert "16 vision heads over TP 32" in line and "mllama.py MllamaVisionEncoderLayer" in line
    assert estimate_json("llama-3.2-11b-vision", *SGL, "--tp", "16")["capacity"]["tp"] == 16
    assert estimate_json("llama-3.2-11b-vision", *SGL, "--tp", "32", "--set", "vision_config=null")["capacity"]["tp"] == 32


def test_minicpmo_vision_heads_not_divided_by_tp_refused(tmp_path):
    # minicpmo.py init_vision_module builds idefics2.py Idefics2VisionTransformer, whose Idefics2EncoderLayer builds
    # VisionAttention over SigLIP-400M's 16 heads with no dummy heads, as MiniCPM-V's; the text model made
    # multi-head (28 KV heads) so that TP 7 divides it (28 / 7) and not the vision heads (16 / 7)
    from tests.test_vision_towers3 import MINICPMO_2_6

    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(MINICPMO_2_6, num_key_value_heads=28)))
    line = refused_line(str(path), *SGL, "--tp", "7")
    assert "16 vision heads over TP 7" in line and "Idefics2EncoderLayer" in line
    assert estimate_json(str(path), *SGL, "--tp", "4")["capacity"]["tp"] == 4


def test_gemma4_vision_heads_not_divided_by_tp_refused(tmp_path):
    # gemma4_mm.py builds gemma4_vision.py Gemma4VisionEncoder on the first PP rank; Gemma4VisionAttention takes its
    # qkv from clippable_linear.py ClippableQKVParallelLinear, a QKVParallelLinear on the TP group whose
    # divide(total_num_heads, tp_size) asserts. Gemma4VisionConfig's defaults (transformers 5.25
    # configuration_gemma4.py: hidden 768, 12 heads and 12 KV heads of 64): on gemma-4-31b's text model (32 query,
    # 16 KV heads) TP 8 divides the text heads, not 12 / 8
    from kvplan.sources import bundled_config, bundled_index

    raw = dict(bundled_config(bundled_index()["gemma-4-31b"]),
               vision_config={"model_type": "gemma4_vision", "num_attention_heads": 12, "num_key_value_heads": 12})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    line = refused_line(str(path), *SGL, "--tp", "8")
    assert "12 vision heads over TP 8" in line and "Gemma4VisionAttention" in line and "QKVParallelLinear" in line
    assert estimate_json(str(path), *SGL, "--tp", "4")["capacity"]["tp"] == 4  # 12 / 4 = 3 a GPU
    assert estimate_json(str(path), "--gpu", "h200", "--context", "4k", "--tp", "8")["capacity"]["tp"] == 8  # vLLM
