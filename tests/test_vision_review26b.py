"""Second review of the vision / onlineq2 merges: the tower where a quantized or online-quantized estimate meets it,
and malformed vision_configs. Figures are worked by hand from the bundled configs' shapes (tests/test_vision_towers.py
derives Qwen2.5-VL-7B's tower, 676,550,144 parameters, the same way)."""

from __future__ import annotations

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

