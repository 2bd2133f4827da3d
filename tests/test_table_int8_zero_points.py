"""A tensor table's int8 zero points held as vLLM 0.34 holds them under TP, and torchao's flattened tensor names read
as the parameters they stand for (kvplan/weights/roles.py: _SCALAR_SCALES, _ROW_SCALE_SUFFIXES, param_name).

Read in vLLM 0.34.0: quark/schemes/quark_w8a8_int8.py QuarkW8A8Int8.create_weights (per_channel: weight_scale and
weight_zero_point both ChannelQuantScaleParameter [rows, 1], which a RowParallelLinear loads as they are; per_tensor:
both PerTensorScaleParameter; a static input's input_scale and input_zero_point one-element BasevLLMParameter), and
torchao 0.18.0: prototype/safetensors/safetensors_support.py flatten_tensor_state_dict (`<module>._weight_qdata`,
`._weight_scale`, `._weight_zero_point`), quantize_/workflows/int8/int8_tensor.py (from_hp: PerRow float32 scale and
int8 zero_point [rows, 1]; aten.slice: a row-parallel slice over inputs keeps the per-row scale and zero point).

One Llama decoder layer (hidden 64, 4 heads and 4 KV heads of 16, intermediate 128): q/k/v/o_proj 64 x 64,
gate/up_proj 128 x 64, down_proj 64 x 128; two BF16 norms of 64. Per GPU at TP t (worked by hand): the split
tensors / t, plus what each rank holds whole.
"""

from __future__ import annotations

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.weights.load import from_safetensors
from kvplan.weights.quant import identify
from kvplan.weights.safetensors import read_file

from safetensors_files import write_safetensors

A, M = "model.layers.0.self_attn.", "model.layers.0.mlp."
LINEARS = {A + "q_proj": (64, 64), A + "k_proj": (64, 64), A + "v_proj": (64, 64), A + "o_proj": (64, 64),
           M + "gate_proj": (128, 64), M + "up_proj": (128, 64), M + "down_proj": (64, 128)}  # (rows, inputs)
NORMS = {"model.layers.0.input_layernorm.weight": ("BF16", [64], 2),
         "model.layers.0.post_attention_layernorm.weight": ("BF16", [64], 2)}  # 256 B, whole
WEIGHTS = 4 * 64 * 64 + 2 * 128 * 64 + 64 * 128  # 40,960 B of int8 values, split over TP
assert WEIGHTS == 40_960
COLUMN_ROWS = 64 * 3 + 128 * 2  # q, k, v, gate, up: their per-row tensors split with their rows
ROW_ROWS = 64 + 64  # o_proj, down_proj: RowParallelLinear, per-row tensors whole on every rank


def _per_gpu(tmp_path, tensors: dict, tp: int) -> int:
    write_safetensors(tmp_path / "model.safetensors", tensors)
    w = from_safetensors(tmp_path, {"model_type": "llama"})
    return w.total_bytes, stage_weight_bytes(w, 1, tp=tp)[0]


def _quark_per_channel() -> dict:
    # Quark W8A8 int8 per_channel, static per-tensor input: int8 weight, 1-D float32 weight_scale and int8
    # weight_zero_point a row (vLLM's _scale_weight_loader reshapes [N] to [N, 1]), one-element input_scale (F32) and
    # input_zero_point (I8)
    tensors = dict(NORMS)
    for stem, (rows, inputs) in LINEARS.items():
        tensors |= {stem + ".weight": ("I8", [rows, inputs], 1), stem + ".weight_scale": ("F32", [rows], 4),
                    stem + ".weight_zero_point": ("I8", [rows], 1), stem + ".input_scale": ("F32", [], 4),
                    stem + ".input_zero_point": ("I8", [], 1)}
    return tensors


def test_quark_int8_per_channel_zero_points_whole_on_row_parallel_ranks(tmp_path):
    tensors = _quark_per_channel()
    split = WEIGHTS + 5 * COLUMN_ROWS  # 40,960 + 2,240
    whole = 5 * ROW_ROWS + 7 * (4 + 1) + 256  # o/down scale + zero point a row 640, the scalars 35, the norms
    assert (split, whole) == (43_200, 931)
    # before: the zero points of o_proj / down_proj (128 B) and the 7 input_zero_points split with their layer:
    # (43,200 + 135) / 2 + 796 = 22,464 at TP 2 (rounded up), 11,630 at TP 4
    assert _per_gpu(tmp_path, tensors, 2) == (split + whole, split // 2 + whole) == (44_131, 22_531)
    assert _per_gpu(tmp_path, tensors, 4) == (44_131, split // 4 + whole) == (44_131, 11_731)


def test_quark_int8_per_tensor_zero_points_whole_on_every_rank(tmp_path):
    # per_tensor weight: a one-element float32 weight_scale and int8 weight_zero_point a linear
    # (PerTensorScaleParameter)
    tensors = dict(NORMS)
    for stem, (rows, inputs) in LINEARS.items():
        tensors |= {stem + ".weight": ("I8", [rows, inputs], 1), stem + ".weight_scale": ("F32", [], 4),
                    stem + ".weight_zero_point": ("I8", [], 1), stem + ".input_scale": ("F32", [], 4),
                    stem + ".input_zero_point": ("I8", [], 1)}
    whole = 7 * (4 + 1 + 4 + 1) + 256
    assert whole == 326
    assert _per_gpu(tmp_path, tensors, 4) == (WEIGHTS + whole, WEIGHTS // 4 + whole) == (41_286, 10_566)


def _torchao_int8_per_row() -> dict:
    # torchao Int8WeightOnlyConfig v2, PerRow, as transformers saves it: <module>._weight_qdata int8 [rows, inputs],
    # _weight_scale float32 [rows, 1], _weight_zero_point int8 [rows, 1]
    tensors = dict(NORMS)
    for stem, (rows, inputs) in LINEARS.items():
        tensors |= {stem + "._weight_qdata": ("I8", [rows, inputs], 1), stem + "._weight_scale": ("F32", [rows, 1], 4),
                    stem + "._weight_zero_point": ("I8", [rows, 1], 1)}
    return tensors


def test_torchao_flattened_per_row_scales_and_zero_points_whole_on_row_parallel_ranks(tmp_path):
    split = WEIGHTS + 5 * COLUMN_ROWS
    whole = 5 * ROW_ROWS + 256
    assert (split, whole) == (43_200, 896)
    # before: every torchao tensor split (its names not read): 43,840 / 2 + 256 = 22,176 at TP 2, 11,216 at TP 4
    assert _per_gpu(tmp_path, _torchao_int8_per_row(), 2) == (44_096, split // 2 + whole) == (44_096, 22_496)
    assert _per_gpu(tmp_path, _torchao_int8_per_row(), 4) == (44_096, split // 4 + whole) == (44_096, 11_696)


def test_torchao_flattened_per_tensor_float8_scales_whole_on_every_rank(tmp_path):
    # Float8DynamicActivationFloat8WeightConfig v2, PerTensor: float8_e4m3fn qdata + one float32 scale [1, 1] a
    # linear (Float8Tensor's slice keeps a one-element scale)
    tensors = dict(NORMS)
    for stem, (rows, inputs) in LINEARS.items():
        tensors |= {stem + "._weight_qdata": ("F8_E4M3", [rows, inputs], 1),
                    stem + "._weight_scale": ("F32", [1, 1], 4)}
    whole = 7 * 4 + 256
    assert _per_gpu(tmp_path, tensors, 4) == (WEIGHTS + whole, WEIGHTS // 4 + whole) == (41_244, 10_524)


def test_a_torchao_table_is_named_torchao_without_its_config(tmp_path):
    # the flattened names mark the format (before: "none", a plain checkpoint); the roles were read right already
    write_safetensors(tmp_path / "model.safetensors", _torchao_int8_per_row())
    entries, _ = read_file(tmp_path / "model.safetensors")
    assert identify(None, entries) == "torchao"
    assert identify({"quant_method": "torchao"}, entries) == "torchao"
    w = from_safetensors(tmp_path, {"model_type": "llama"})
    # attention: 4 x (4,096 + 5 x 64); mlp: 2 x (8,192 + 5 x 128) + 8,192 + 5 x 64; norms 256
    assert w.by_role == {"attention": 17_664, "mlp": 26_176, "norms": 256}
