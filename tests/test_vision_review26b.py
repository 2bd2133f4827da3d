"""Second review of the vision / onlineq2 merges: the tower where a quantized or online-quantized estimate meets it,
and malformed vision_configs. Figures are worked by hand from the bundled configs' shapes (tests/test_vision_towers.py
derives Qwen2.5-VL-7B's tower, 676,550,144 parameters, the same way)."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.configs.build import build_model
from kvplan.sources import load_config
from kvplan.weights.estimate import estimated

# Qwen2.5-VL-7B's ViT and merger (hidden 1,280, MLP 3,420, 32 blocks, merger 5,120 -> 3,584), by hand in
# tests/test_vision_towers.py::test_qwen2_5_vl_tower_by_hand
QWEN2_5_VL_7B_TOWER = 676_550_144
QWEN2_5_VL_7B_TEXT = 7_615_616_512  # the text model's parameters (Qwen2.5-7B with its untied head)

_AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}


def test_a_quantized_estimate_keeps_the_towers_parameters_in_its_float_row():
    # an AWQ checkpoint of Qwen2.5-VL-7B: the text model's linears int4, the tower kept in bf16 (the estimate's rule);
    # the dtype rows hold every parameter once: the text model's and the tower's
    raw = dict(load_config("qwen2.5-vl-7b")[0], quantization_config=_AWQ)
    model = build_model(raw, "q")
    assert model.param_count == QWEN2_5_VL_7B_TEXT
    rows = {r.dtype: r for r in estimated(model).by_dtype}
    assert sum(r.elements for r in rows.values()) == QWEN2_5_VL_7B_TEXT + QWEN2_5_VL_7B_TOWER
    assert rows["bfloat16"].elements == model.weight_plain_params + QWEN2_5_VL_7B_TOWER
    assert rows["bfloat16"].bytes == 2 * rows["bfloat16"].elements


def _one_line_error(cli, *args):
    code, out, err = cli(*args)
    assert code != 0 and "Traceback" not in out + err
    lines = [line for line in err.splitlines() if line.startswith("kvplan: error:")]
    assert len(lines) == 1
    return lines[0]


def test_a_vision_config_that_is_not_an_object_is_refused(cli):
    # transformers 5.25 refuses it too (Qwen2_5_VLConfig's vision_config is a dict or a config); it used to plan the
    # text model alone without a word
    line = _one_line_error(cli, "estimate", "qwen2.5-vl-7b", "--gpu", "h100", "--set", "vision_config=5")
    assert "'vision_config' must be an object, or null for no tower, got 5" in line


def test_a_malformed_vision_config_field_is_an_error_naming_the_vision_config(cli):
    # a negative depth used to become a note ("vision tower not counted ...") and a text-only estimate
    line = _one_line_error(cli, "estimate", "qwen2.5-vl-7b", "--set", 'vision_config={"depth": -3}')
    assert "vision_config: 'depth' must be >= 1, got -3 (model_type 'qwen2_5_vl')" in line
    assert "--set vision_config=null" in line and "--set depth=" not in line
    # a valid tower kvplan does not count (SigLIP with its pooling head under LLaVA) stays a note on the text model
    raw = dict(load_config("llava-1.5-7b")[0], vision_config={"model_type": "siglip_vision_model"})
    model = build_model(raw, "l")
    assert model.weight_vision == (0, 0, 0)
    assert any(n.startswith("vision tower not counted (vision_use_head") for n in model.notes)



# Qwen2.5-VL-7B's tower linears, weights only: a block's qkv 1,280 x 3,840, proj 1,280 x 1,280, gate_up 1,280 x 6,840
# and down 3,420 x 1,280 (32 blocks), the merger's 5,120 x 5,120 and 5,120 x 3,584: 130 modules
_QWEN_LINEARS = 32 * (1280 * 3840 + 1280 * 1280 + 1280 * 6840 + 3420 * 1280) + 5120 * 5120 + 5120 * 3584
_QWEN_ROWS = 32 * (3840 + 1280 + 6840 + 1280) + 5120 + 3584  # output rows of those modules
_QWEN_ROW_PARALLEL_ROWS = 32 * (1280 + 1280) + 3584  # proj, down_proj and the merger's second linear


def _online(name, value, engine):
    from kvplan.sources import load_model_and_weights

    return load_model_and_weights(name, quantization=(value, engine))


def test_online_fp8_quantizes_the_tower_linears_the_engine_builds_with_its_quant_config():
    assert _QWEN_LINEARS == 674_529_280
    # vLLM 0.34 fp8 (= fp8_per_tensor): qwen2_5_vl.py passes the quant_config to every tower linear, so each weight
    # is 1 B with a float32 scale a module; the other 2,020,864 parameters (conv, norms, biases) stay at 2 B
    model, record = _online("qwen2.5-vl-7b", "fp8", "vllm")
    tower = 2 * (QWEN2_5_VL_7B_TOWER - _QWEN_LINEARS) + _QWEN_LINEARS + 130 * 4
    assert tower == 678_571_528  # was 2 x 676,550,144 = 1,353,100,288 B
    assert model.weight_vision[:2] == (QWEN2_5_VL_7B_TOWER, tower)
    assert record.vision[0] == tower
    rows = {r.dtype: r for r in record.by_dtype}
    assert sum(r.elements for r in rows.values()) == QWEN2_5_VL_7B_TEXT + QWEN2_5_VL_7B_TOWER
    assert sum(r.bytes for r in rows.values()) == record.total_bytes
    # SGLang 0.5.23 fp8 (per-channel): its qwen2_5_vl.py passes the quant_config too; a float32 scale an output row,
    # the row-parallel modules' whole on every TP rank
    model, _ = _online("qwen2.5-vl-7b", "fp8", "sglang")
    whole_bf16 = 2 * 1_673_984  # the tower's whole part (tests/test_vision_towers.py), at 2 B
    assert model.weight_vision == (QWEN2_5_VL_7B_TOWER, tower - 130 * 4 + 4 * _QWEN_ROWS,
                                   whole_bf16 + 4 * _QWEN_ROW_PARALLEL_ROWS)


def test_which_tower_linears_each_engine_quantizes():
    # Gemma 3 27B's SigLIP: hidden 1,152, MLP 4,304, 27 layers. vLLM 0.34 siglip.py SiglipMLP builds fc1 / fc2 without
    # the quant_config (4,304 is not a multiple of 64): only qkv 1,152 x 3,456 and out_proj 1,152 x 1,152 are FP8;
    # SGLang 0.5.23 siglip.py passes it to fc1 / fc2 as well
    attention, mlp = 27 * (1152 * 3456 + 1152 * 1152), 27 * 2 * 1152 * 4304
    vllm, _ = _online("gemma-3-27b", "fp8", "vllm")
    sglang, _ = _online("gemma-3-27b", "fp8", "sglang")
    assert vllm.weight_vision_quantized[0] == attention == 143_327_232
    assert sglang.weight_vision_quantized[0] == attention + mlp
    # vLLM 0.34 mllama4.py builds Llama 4's vision model and projector with quant_config=None; experts_int8 leaves
    # every LinearBase unquantized; SGLang 0.5.23 qwen3_vl.py builds Qwen3-VL's tower with quant_config=None
    for name, value, engine in (("llama-4-scout", "fp8", "vllm"), ("qwen2.5-vl-7b", "experts_int8", "vllm"),
                                ("qwen3-vl-8b", "fp8", "sglang")):
        model, _ = _online(name, value, engine)
        assert model.weight_vision[1] == 2 * model.weight_vision[0], name


def _sglang_command(cli, name):
    code, out, err = cli("estimate", name, "--gpu", "h100", "--set", "vision_config=null", "--emit", "sglang")
    assert code == 0, err
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("SGLang command"))
    return lines[at + 1], "\n".join(lines[at + 2:])


def test_a_text_only_plan_emits_sglangs_language_model_only_where_its_class_skips_the_tower(cli):
    # SGLang 0.5.23 arg_groups/fields/disagg.py --language-model-only; qwen3_vl.py Qwen3VLForConditionalGeneration
    # builds no tower under it (self.visual = None), qwen2_5_vl.py builds its tower whatever it says
    argv, _ = _sglang_command(cli, "qwen3-vl-8b")
    assert argv.split()[-1] == "--language-model-only"
    argv, notes = _sglang_command(cli, "qwen2.5-vl-7b")
    assert "--language-model-only" not in argv
    assert "SGLang 0.5.23's Qwen2_5_VLForConditionalGeneration builds it whatever --language-model-only says" in notes


def test_a_gemma4_tensor_table_holds_its_towers_whole_on_every_rank(tmp_path):
    # vLLM 0.34 gemma4_mm.py: each tower is transformers' AutoModel with every nn.Linear replaced by a ReplicatedLinear
    # and the embedders' embedding_projection a ReplicatedLinear, so a GPU of TP t holds all of them (the config
    # estimate's Gemma 4 tower is whole too: tests/test_vision_towers.py); the text model's linears are split
    from safetensors_files import write_safetensors

    from kvplan.capacity.weights import stage_weight_bytes
    from kvplan.weights.load import from_safetensors

    write_safetensors(tmp_path / "model.safetensors", {
        "model.language_model.embed_tokens.weight": ("BF16", [100, 64], 2),                    # 12,800 B, split
        "model.language_model.layers.0.mlp.down_proj.weight": ("BF16", [64, 128], 2),          # 16,384 B, split
        "model.vision_tower.encoder.layers.0.self_attn.q_proj.linear.weight": ("BF16", [64, 64], 2),  # 8,192 B
        "model.embed_vision.embedding_projection.weight": ("BF16", [64, 32], 2),               # 4,096 B
        "model.audio_tower.layers.0.feed_forward1.ffw_layer_1.linear.weight": ("BF16", [32, 32], 2),  # 2,048 B
    })
    raw = json.loads((Path(__file__).resolve().parent.parent / "model_specs" / "gemma-4-31b.json").read_text())
    w = from_safetensors(tmp_path, raw)
    # TP 2: (12,800 + 16,384) / 2 + 8,192 + 4,096 + 2,048 = 28,928 B (before: all split, 43,520 / 2 = 21,760)
    assert stage_weight_bytes(w, 60, tp=2) == [28_928]
    assert stage_weight_bytes(w, 60, tp=1) == [43_520]


def test_sglangs_whole_gemma4_projection_under_its_online_fp8_is_sized_quantized(tmp_path):
    # SGLang 0.5.23 gemma4_causal.py builds per_layer_model_projection (64 -> 16, a ReplicatedLinear) with the
    # quant_config, so --quantization fp8 holds it in FP8 with a float32 scale an output row: 1,024 + 16 x 4 = 1,088 B
    # whole on each rank, 1,088 - 544 = 544 B more than vLLM's split at TP 2 (not the 16-bit 2,048 - 1,024 = 1,024 B)
    from test_whole_tp_modules import GEMMA4

    from kvplan.engines.sglang_whole import whole_delta
    from kvplan.sources import load_model_and_weights

    path = tmp_path / "config.json"
    path.write_text(json.dumps(GEMMA4))
    model, _ = load_model_and_weights(str(path), quantization=("fp8", "sglang"))
    assert whole_delta(model, tp=2).stage_bytes == (544,)
