"""Quark W8A8 int8 (per-channel, per-tensor) and torchao (Int8 and Float8 per row) checkpoints of one small Llama,
sized from its config (configs/quant_quark.py, quant_torchao.py) and read from its own tensors (weights/roles.py):
the same bytes per GPU at TP 1, 2 and 4.

Llama (hidden 64, intermediate 128, 2 layers, vocab 256, 4 heads and 2 KV heads of 16, untied head): per layer
q_proj 64 x 64, k_proj and v_proj 32 x 64, o_proj 64 x 64, gate_proj and up_proj 128 x 64, down_proj 64 x 128
(36,864 int8 weights and 512 output rows a layer); embed_tokens and lm_head 256 x 64 and five norms of 64 in BF16
(the head kept: Quark's exclude, and vLLM 0.34 TorchAOConfig quantizes LinearBase layers only).
Per GPU at TP t, worked by hand: norms, one-element scalars and the per-row tensors of o_proj / down_proj
(RowParallelLinear: ChannelQuantScaleParameter copied whole, quark_w8a8_int8.py; torchao 0.18.0's Int8Tensor and
Float8Tensor aten.slice leave a per-row or one-element scale and zero point whole on an input slice) whole;
k_proj / v_proj with their per-row tensors by KV head (QKVParallelLinear: at TP 4 two KV heads give each rank one, half the k/v bytes; parameter.py _ColumnvLLMParameter.load_qkv_weight narrows a channel scale by
tp_rank // num_kv_head_replicas like the weight); the rest / t.
"""

from __future__ import annotations

import json

import pytest

from tests.kvplan_inprocess import estimate_json
from tests.safetensors_files import write_safetensors

H, I, L, V, HEADS, KV = 64, 128, 2, 256, 4, 2
D = H // HEADS


def _config(quant: dict) -> dict:
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": H, "intermediate_size": I,
            "num_hidden_layers": L, "num_attention_heads": HEADS, "num_key_value_heads": KV, "vocab_size": V,
            "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "quantization_config": quant}


def _linears():
    for n in range(L):
        a, m = f"model.layers.{n}.self_attn.", f"model.layers.{n}.mlp."
        yield from ((a + "q_proj", H, H), (a + "k_proj", KV * D, H), (a + "v_proj", KV * D, H), (a + "o_proj", H, H),
                    (m + "gate_proj", I, H), (m + "up_proj", I, H), (m + "down_proj", H, I))


def _plain() -> dict:
    tensors = {"model.embed_tokens.weight": ("BF16", [V, H], 2), "lm_head.weight": ("BF16", [V, H], 2),
               "model.norm.weight": ("BF16", [H], 2)}
    for n in range(L):
        tensors[f"model.layers.{n}.input_layernorm.weight"] = ("BF16", [H], 2)
        tensors[f"model.layers.{n}.post_attention_layernorm.weight"] = ("BF16", [H], 2)
    return tensors


def _quark(qscheme: str) -> dict:
    # Quark W8A8 int8: a static symmetric weight, static per-tensor input (quark.py _is_w8a8_int8)
    return {"quant_method": "quark", "exclude": ["lm_head"],
            "global_quant_config": {"weight": {"dtype": "int8", "qscheme": qscheme, "ch_axis": 0, "symmetric": True,
                                               "is_dynamic": False},
                                    "input_tensors": {"dtype": "int8", "qscheme": "per_tensor", "symmetric": True,
                                                      "is_dynamic": False}}}


def _torchao(kind: str, data: dict) -> dict:
    return {"quant_method": "torchao", "quant_type": {"default": {"_type": kind, "_version": 2, "_data": data}}}


PER_ROW = {"_type": "PerRow", "_version": 1, "_data": {"dim": -1}}


def _quark_per_channel(s: str, rows: int, inputs: int) -> dict:
    # int8 weight, 1-D float32 weight_scale and int8 weight_zero_point a row, one-element input_scale / _zero_point
    return {s + ".weight": ("I8", [rows, inputs], 1), s + ".weight_scale": ("F32", [rows], 4),
            s + ".weight_zero_point": ("I8", [rows], 1), s + ".input_scale": ("F32", [], 4),
            s + ".input_zero_point": ("I8", [], 1)}


def _quark_per_tensor(s: str, rows: int, inputs: int) -> dict:
    return {s + ".weight": ("I8", [rows, inputs], 1), s + ".weight_scale": ("F32", [], 4),
            s + ".weight_zero_point": ("I8", [], 1), s + ".input_scale": ("F32", [], 4),
            s + ".input_zero_point": ("I8", [], 1)}


def _torchao_int8_per_row(s: str, rows: int, inputs: int) -> dict:
    # flatten_tensor_state_dict's names: int8 qdata, float32 scale [rows, 1], int8 zero_point [rows, 1]
    return {s + "._weight_qdata": ("I8", [rows, inputs], 1), s + "._weight_scale": ("F32", [rows, 1], 4),
            s + "._weight_zero_point": ("I8", [rows, 1], 1)}


def _torchao_float8_per_row(s: str, rows: int, inputs: int) -> dict:
    # Float8Tensor PerRow: float8_e4m3fn qdata, float32 scale [rows, 1]
    return {s + "._weight_qdata": ("F8_E4M3", [rows, inputs], 1), s + "._weight_scale": ("F32", [rows, 1], 4)}


INT8 = L * (4096 + 2048 + 2048 + 4096 + 8192 + 8192 + 8192)  # 73,728 one-byte weights
ROWS = L * (64 + 32 + 32 + 64 + 128 + 128 + 64)  # 1,024 output rows
LINEARS = 7 * L
PLAIN = 2 * V * H * 2 + (2 * L + 1) * H * 2  # 65,536 + 640
NORMS = (2 * L + 1) * H * 2


@pytest.mark.parametrize("quant, per_linear, row_bytes, scalar_bytes, per_gpu", [
    # a float32 scale and an int8 zero point a row (5 B), a float32 input_scale and an int8 input_zero_point a linear
    (_quark("per_channel"), _quark_per_channel, 5, 5, (73_542, 39_974)),
    # one-element weight_scale, weight_zero_point, input_scale, input_zero_point a linear (10 B)
    (_quark("per_tensor"), _quark_per_tensor, 0, 10, (70_412, 37_644)),
    (_torchao("Int8WeightOnlyConfig", {"group_size": None, "granularity": PER_ROW}), _torchao_int8_per_row, 5, 0,
     (73_472, 39_904)),
    (_torchao("Float8DynamicActivationFloat8WeightConfig", {"granularity": [PER_ROW, PER_ROW]}),
     _torchao_float8_per_row, 4, 0, (72_832, 39_424)),
], ids=["quark-per-channel", "quark-per-tensor", "torchao-int8-per-row", "torchao-float8-per-row"])
def test_config_estimate_and_tensor_table_agree_per_gpu(tmp_path, quant, per_linear, row_bytes, scalar_bytes, per_gpu):
    total = INT8 + row_bytes * ROWS + scalar_bytes * LINEARS + PLAIN
    # whole: the norms, the scalars, o_proj's and down_proj's per-row tensors; k_proj and v_proj by KV head
    whole = NORMS + scalar_bytes * LINEARS + row_bytes * L * (64 + 64)
    kv_bytes = L * 2 * (32 * 64 + row_bytes * 32)

    def by_hand(tp: int) -> int:
        return (total - whole - kv_bytes) // tp + whole + kv_bytes // min(tp, KV)  # a rank holds max(1, KV / tp) heads

    assert (by_hand(2), by_hand(4)) == per_gpu
    config = tmp_path / "config.json"  # alone: the estimate reads the config
    config.write_text(json.dumps(_config(quant)))
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    tensors = _plain()
    for s, rows, inputs in _linears():
        tensors |= per_linear(s, rows, inputs)
    write_safetensors(checkpoint / "model.safetensors", tensors)
    for tp in (1, 2, 4):
        estimated = estimate_json(str(config), "--tp", str(tp), "--gpu", "H200")
        read = estimate_json(str(config), "--tp", str(tp), "--gpu", "H200", "--weights", str(checkpoint))
        assert estimated["model"]["weights"]["source"] == "estimated from config"
        assert read["model"]["weights"]["source"] == "safetensors"
        # before, at TP 2 / 4 (estimate, table): Quark per-channel (73,542, 73,408) / (39,814, 39,774), per-tensor
        # (70,412, 70,398) / (37,644, 37,626); torchao int8 per-row (73,472, 72,832) / (39,744, 38,944), float8 per-row
        # (72,832, 72,320) / (39,296, 38,656): the table split the zero points and torchao's scales, the estimate split
        # k/v's per-row scales evenly
        assert (estimated["model"]["weight_bytes"], read["model"]["weight_bytes"]) == (total, total)
        assert (estimated["capacity"]["weight_bytes_per_gpu"], read["capacity"]["weight_bytes_per_gpu"]) == \
            (by_hand(tp), by_hand(tp)), tp
