"""Quark, AutoRound (inc) and vLLM's alias names sized from the config (kvplan/configs/quant_quark.py, quant_bytes.py).

Expected bytes are laid out here tensor by tensor for Llama-3.1-8B from each format's own tensors, as the producer
writes them and vLLM 0.34's create_weights loads them (cited per test), not from kvplan's per-weight rates. The
configs follow the producers' published layouts: AMD's Quark FP8-KV recipe (global FP8 per-tensor static weight and
input, "*k_proj" / "*v_proj" layer entries adding the FP8 KV cache, exclude ["lm_head"]), Quark's MXFP4 export
(fp4 per_group 32 e8m0, exclude resolved to exact module names), AutoRound's quantization_config (bits, group_size,
sym, packing_format "auto_round:auto_gptq", extra_config entries of 16 bits for what it keeps).
"""

from __future__ import annotations

import json

import pytest

from kvplan.configs import build_model

from kvplan_inprocess import kvplan
from test_weights_quantized_config import HIDDEN, LINEARS, LAYERS, _layout_bytes, _llama8b_with

FP8_STATIC = {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": False, "symmetric": True, "ch_axis": None,
              "group_size": None, "observer_cls": "PerTensorMinMaxObserver"}
MXFP4 = {"dtype": "fp4", "qscheme": "per_group", "group_size": 32, "ch_axis": -1, "scale_format": "e8m0",
         "scale_type": "float", "is_dynamic": False, "symmetric": None, "observer_cls": "PerBlockMXObserver"}


def _quark(weight, inputs, exclude, layers=None, kv_group=()):
    return {"quant_method": "quark", "global_quant_config": {"weight": weight, "input_tensors": inputs,
                                                            "output_tensors": None, "bias": None},
            "layer_quant_config": layers or {}, "layer_type_quant_config": {}, "exclude": exclude,
            "export": {"kv_cache_group": list(kv_group), "pack_method": "reorder", "weight_format": "real_quantized"}}


def test_quark_fp8_kv_by_its_tensors():
    kv_entry = {"weight": FP8_STATIC, "input_tensors": FP8_STATIC, "output_tensors": FP8_STATIC, "bias": None}
    quant = _quark(FP8_STATIC, FP8_STATIC, ["lm_head"], {"*k_proj": kv_entry, "*v_proj": kv_entry},
                   ["*k_proj", "*v_proj"])
    model = build_model(_llama8b_with(quant), "fp8-kv")
    # QuarkW8A8Fp8: F8_E4M3 weight [out, in] + float32 weight_scale and input_scale per tensor (static input);
    # per layer k_proj.output_scale and v_proj.output_scale, float32 scalars (the FP8 KV cache); head in BF16
    expected = _layout_bytes(lambda i, o: i * o + 4 + 4) + LAYERS * 2 * 4
    assert model.weight_bytes == expected == 9_081_202_688
    assert model.weight_dtype == "fp8 + bfloat16"


def test_quark_mxfp4_with_an_exclude_list_of_exact_names():
    # Quark's exporter writes exact names; layer 0's attention kept in BF16 with the head
    attn0 = [f"model.layers.0.self_attn.{p}_proj" for p in "qkvo"]
    quant = _quark(MXFP4, dict(MXFP4, is_dynamic=True), ["lm_head", *attn0])
    model = build_model(_llama8b_with(quant), "mxfp4")
    # QuarkOCP_MX: uint8 weight [out, in / 2] + uint8 E8M0 weight_scale [out, in / 32]; dynamic input: no scale
    attention = sum(i * o for i, o in LINEARS[:4])
    expected = _layout_bytes(lambda i, o: i * o // 2 + i * o // 32) + attention * 2 - attention * 17 // 32
    assert model.weight_bytes == expected


@pytest.mark.parametrize("weight, inputs, per_linear", [
    # QuarkW8A8Fp8 per_channel: F8_E4M3 weight + float32 weight_scale [out]; dynamic input: no input_scale
    (dict(FP8_STATIC, qscheme="per_channel", ch_axis=0), dict(FP8_STATIC, qscheme="per_channel", is_dynamic=True),
     lambda i, o: i * o + o * 4),
    # QuarkW8A8Fp8PerBlock 128 x 128: float32 weight_scale [ceil(out / 128), ceil(in / 128)]
    (dict(FP8_STATIC, qscheme="per_block", block_size=[128, 128]),
     dict(FP8_STATIC, qscheme="per_group", group_size=128, is_dynamic=True),
     lambda i, o: i * o + (o // 128) * (i // 128) * 4),
])
def test_quark_fp8_per_channel_and_per_block_by_their_tensors(weight, inputs, per_linear):
    model = build_model(_llama8b_with(_quark(weight, inputs, ["lm_head"])), "fp8")
    assert model.weight_bytes == _layout_bytes(per_linear)


def test_quark_int4_asymmetric_groups_by_its_tensors():
    weight = {"dtype": "uint4", "qscheme": "per_group", "group_size": 128, "symmetric": False, "is_dynamic": False,
              "ch_axis": 1}
    model = build_model(_llama8b_with(_quark(weight, None, ["lm_head"])), "w-uint4")
    # QuarkW4A16Int4: int32 weight [in, out / 8], weight_scale [in / 128, out] in the model dtype (BF16), int32
    # weight_zero_point [in / 128, out / 8]
    expected = _layout_bytes(lambda i, o: i * (o // 8) * 4 + (i // 128) * o * 2 + (i // 128) * (o // 8) * 4)
    assert model.weight_bytes == expected


# Quark's int8 templates (amd/Quark quantize_quark.py --quant_scheme w_int8_a_int8_per_tensor_sym and
# w_int8_a_int8_per_token_dynamic): int8 symmetric weights, int8 input_tensors
INT8 = {"dtype": "int8", "qscheme": "per_tensor", "is_dynamic": False, "symmetric": True, "ch_axis": None,
        "group_size": None, "observer_cls": "PerTensorMinMaxObserver"}


@pytest.mark.parametrize("weight, inputs, per_linear", [
    # QuarkW8A8Int8 per_tensor, static input: int8 weight [out, in] + float32 weight_scale and int8
    # weight_zero_point per tensor + float32 input_scale and int8 input_zero_point per tensor
    (INT8, INT8, lambda i, o: i * o + 4 + 1 + 4 + 1),
    # per_channel weight, dynamic per-token input: float32 weight_scale [out] + int8 weight_zero_point [out]
    (dict(INT8, qscheme="per_channel", ch_axis=0), dict(INT8, qscheme="per_channel", ch_axis=1, is_dynamic=True),
     lambda i, o: i * o + o * 4 + o),
    # per_channel weight, static per-tensor input
    (dict(INT8, qscheme="per_channel", ch_axis=0), INT8, lambda i, o: i * o + o * 4 + o + 4 + 1),
])
def test_quark_int8_by_its_tensors(weight, inputs, per_linear):
    model = build_model(_llama8b_with(_quark(weight, inputs, ["lm_head"])), "int8")
    assert model.weight_bytes == _layout_bytes(per_linear)
    assert model.weight_dtype == "int8 + bfloat16"


def test_quark_wildcard_exclude_read_as_quark_matches_it():
    # fnmatch's * crosses dots: layers 3, 30 and 31's MLPs stay in BF16 (Quark model_transformation.py
    # setup_config_per_layer / file2file_utils.py match_modules), the rest MXFP4, the head excluded
    quant = _quark(MXFP4, None, ["lm_head", "model.layers.3*.mlp.*"])
    model = build_model(_llama8b_with(quant), "mxfp4-wild")
    mlp = sum(i * o for i, o in LINEARS[4:])
    expected = _layout_bytes(lambda i, o: i * o // 2 + i * o // 32) + 3 * (mlp * 2 - mlp * 17 // 32)
    assert model.weight_bytes == expected


def test_quark_quantizes_the_head_unless_excluded():
    model = build_model(_llama8b_with(_quark(MXFP4, None, [])), "mxfp4-head")
    head = HIDDEN * 128256
    assert model.weight_bytes == (_layout_bytes(lambda i, o: i * o // 2 + i * o // 32) - head * 2
                                  + head // 2 + head // 32)


@pytest.mark.parametrize("quant_method", ["auto-round", "inc"])
def test_auto_round_int4_by_its_tensors(quant_method):
    quant = {"quant_method": quant_method, "bits": 4, "group_size": 128, "sym": True, "data_type": "int",
             "packing_format": "auto_round:auto_gptq", "act_bits": 16, "block_name_to_quantize": "model.layers",
             "extra_config": {"model.layers.0.input_layernorm": {"bits": 16, "data_type": "float"}}}
    model = build_model(_llama8b_with(quant), "autoround")
    # auto-round qlinear_triton QuantLinear (vLLM 0.34 inc_wna16_linear.py loads the same): int32 qweight
    # [in / 8, out], int32 qzeros [in / 128, out / 8] (written for symmetric weights too), float16 scales
    # [in / 128, out]; no g_idx; the head, outside block_name_to_quantize, in BF16
    expected = _layout_bytes(lambda i, o: (i // 8) * o * 4 + (i // 128) * (o // 8) * 4 + (i // 128) * o * 2)
    assert model.weight_bytes == expected


def test_auto_round_extra_config_keeping_a_linear_in_16_bits():
    quant = {"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": True,
             "extra_config": {"model.layers.31.mlp.down_proj": {"bits": 16, "data_type": "float"}}}
    model = build_model(_llama8b_with(quant), "autoround-kept")
    down = 14336 * 4096
    packed = (down // 8) * 4 + (14336 // 128) * (4096 // 8) * 4 + (14336 // 128) * 4096 * 2
    expected = _layout_bytes(lambda i, o: (i // 8) * o * 4 + (i // 128) * (o // 8) * 4 + (i // 128) * o * 2)
    assert model.weight_bytes == expected - packed + down * 2


def test_auto_round_mxfp4_by_its_tensors():
    quant = {"quant_method": "auto-round", "bits": 4, "group_size": 32, "sym": True, "data_type": "mx_fp",
             "act_bits": 4, "act_data_type": "mx_fp", "act_dynamic": True}
    # vLLM 0.34 inc_mxfp4_linear.py: uint8 weight_packed [out, in / 2] + uint8 E8M0 weight_scale [out, in / 32]
    model = build_model(_llama8b_with(quant), "ar-mxfp4")
    assert model.weight_bytes == _layout_bytes(lambda i, o: o * (i // 2) + o * (i // 32))


@pytest.mark.parametrize("alias, canonical", [("auto_gptq", "gptq"), ("gptq_marlin", "gptq"), ("auto_awq", "awq"),
                                              ("awq_marlin", "awq")])
def test_vllm_alias_names_size_as_their_format(alias, canonical):
    base = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "zero_point": True, "version": "gemm"}
    # GPTQ: qweight [in / 8, out], qzeros, fp16 scales and g_idx int32 [in]; AWQ the same without g_idx
    g_idx = 4 if canonical == "gptq" else 0
    expected = _layout_bytes(lambda i, o: (i // 8) * o * 4 + (i // 128) * (o // 8) * 4 + (i // 128) * o * 2
                             + i * g_idx)
    assert build_model(_llama8b_with(dict(base, quant_method=alias), "float16"), alias).weight_bytes == expected


@pytest.mark.parametrize("quant, reason", [
    ({"quant_method": "experts_int8"}, "in its float dtype"),
    ({"quant_method": "online"}, "refuses it"),
    ({"quant_method": "moe_wna16", "bits": 4}, "must be gptq or awq"),
    # no "_version": torchao's config_from_dict reads version 1, a layout kvplan has not read
    ({"quant_method": "torchao", "quant_type": {"default": {"_type": "Int4WeightOnlyConfig"}}}, "version 1"),
    ({"quant_method": "w4afp8"}, "expert scales' dtype is the producer's"),
    (_quark(MXFP4, None, [], {"*mlp*": {"weight": FP8_STATIC, "input_tensors": FP8_STATIC}}), "'*mlp*'"),
    (_quark(dict(INT8, qscheme="per_group", group_size=128), INT8, ["lm_head"]), "per_channel only"),
    (_quark(dict(INT8, qscheme="per_channel"), None, ["lm_head"]), "weight-only int8"),
    ({"quant_method": "auto-round", "bits": 4, "group_size": 128, "packing_format": "mlx"}, "'mlx'"),
    ({"quant_method": "auto-round", "bits": 4, "group_size": 128,
      "extra_config": {"model.layers.0.mlp.down_proj": {"bits": 8}}}, "mixed-precision"),
])
def test_formats_whose_bytes_the_config_cannot_give_say_why(tmp_path, quant, reason):
    path = tmp_path / "q.json"
    path.write_text(json.dumps(_llama8b_with(quant)))
    plan = kvplan("estimate", str(path), "--gpu", "h100", "--context", "8k")
    assert plan.returncode == 2 and "Traceback" not in plan.stderr
    assert len(plan.stderr.strip().splitlines()) == 1 and reason in plan.stderr, plan.stderr
    bare = kvplan("estimate", str(path), "--context", "8k", "--format", "json")
    assert bare.returncode == 0 and json.loads(bare.stdout)["model"]["weight_bytes"] is None
