"""A Quark int8 and a torchao int8 checkpoint of one small Llama, sized from its config (configs/quant_quark.py,
quant_torchao.py) and read from its own tensors (weights/roles.py): the same bytes per GPU at TP 1, 2 and 4.

Llama (hidden 64, intermediate 128, 2 layers, vocab 256, 4 heads and 2 KV heads of 16, untied head): per layer
q_proj 64 x 64, k_proj and v_proj 32 x 64, o_proj 64 x 64, gate_proj and up_proj 128 x 64, down_proj 64 x 128
(36,864 int8 weights and 512 output rows a layer); embed_tokens and lm_head 256 x 64 and five norms of 64 in BF16
(the head kept: Quark's exclude, and vLLM 0.34 TorchAOConfig quantizes LinearBase layers only).
Per GPU at TP t, worked by hand: norms, one-element scalars and the per-row tensors of o_proj / down_proj
(RowParallelLinear: ChannelQuantScaleParameter copied whole, quark_w8a8_int8.py; torchao's Int8Tensor slice keeps
them) whole; k_proj / v_proj with their per-row tensors by KV head (QKVParallelLinear: at TP 4 two KV heads give
each rank one, half the k/v bytes; parameter.py _ColumnvLLMParameter.load_qkv_weight narrows a channel scale by
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


# Quark W8A8 int8: per_channel static symmetric weight, static per-tensor input (quark.py _is_w8a8_int8)
QUARK = {"quant_method": "quark", "exclude": ["lm_head"],
         "global_quant_config": {"weight": {"dtype": "int8", "qscheme": "per_channel", "ch_axis": 0,
                                            "symmetric": True, "is_dynamic": False},
                                 "input_tensors": {"dtype": "int8", "qscheme": "per_tensor", "symmetric": True,
                                                   "is_dynamic": False}}}
TORCHAO = {"quant_method": "torchao", "quant_type": {"default": {
    "_type": "Int8WeightOnlyConfig", "_version": 2,
    "_data": {"group_size": None, "granularity": {"_type": "PerRow", "_version": 1, "_data": {"dim": -1}}}}}}


def _quark_tensors() -> dict:
    # int8 weight, 1-D float32 weight_scale and int8 weight_zero_point a row, one-element input_scale / _zero_point
    tensors = _plain()
    for s, rows, inputs in _linears():
        tensors |= {s + ".weight": ("I8", [rows, inputs], 1), s + ".weight_scale": ("F32", [rows], 4),
                    s + ".weight_zero_point": ("I8", [rows], 1), s + ".input_scale": ("F32", [], 4),
                    s + ".input_zero_point": ("I8", [], 1)}
    return tensors


def _torchao_tensors() -> dict:
    # flatten_tensor_state_dict's names: int8 qdata, float32 scale [rows, 1], int8 zero_point [rows, 1]
    tensors = _plain()
    for s, rows, inputs in _linears():
        tensors |= {s + "._weight_qdata": ("I8", [rows, inputs], 1), s + "._weight_scale": ("F32", [rows, 1], 4),
                    s + "._weight_zero_point": ("I8", [rows, 1], 1)}
    return tensors


INT8 = L * (4096 + 2048 + 2048 + 4096 + 8192 + 8192 + 8192)  # 73,728
ROWS = L * (64 + 32 + 32 + 64 + 128 + 128 + 64)  # 1,024
PLAIN = 2 * V * H * 2 + (2 * L + 1) * H * 2  # 65,536 + 640
NORMS = (2 * L + 1) * H * 2
ROW_PARALLEL = 5 * L * (64 + 64)  # o_proj and down_proj scales and zero points: 1,280, whole
KV_BYTES = L * 2 * (32 * 64 + 5 * 32)  # k_proj and v_proj with their per-row tensors: 8,832


def _by_hand(total: int, whole: int, tp: int) -> int:
    kv = KV_BYTES // min(tp, KV)  # each rank holds max(1, KV / tp) of the 2 KV heads
    return (total - whole - KV_BYTES) // tp + whole + kv


@pytest.mark.parametrize("quant, tensors, scalars", [(QUARK, _quark_tensors, 7 * L * (4 + 1)),
                                                     (TORCHAO, _torchao_tensors, 0)], ids=["quark", "torchao"])
def test_config_estimate_and_tensor_table_agree_per_gpu(tmp_path, quant, tensors, scalars):
    total = INT8 + 5 * ROWS + scalars + PLAIN
    assert total == {"quark": 145_094, "torchao": 145_024}[quant["quant_method"]]
    whole = NORMS + scalars + ROW_PARALLEL
    config = tmp_path / "config.json"  # alone: the estimate reads the config
    config.write_text(json.dumps(_config(quant)))
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    write_safetensors(checkpoint / "model.safetensors", tensors())
    for tp in (1, 2, 4):
        expected = _by_hand(total, whole, tp)
        estimated = estimate_json(str(config), "--tp", str(tp), "--gpu", "H200")
        read = estimate_json(str(config), "--tp", str(tp), "--gpu", "H200", "--weights", str(checkpoint))
        assert estimated["model"]["weights"]["source"] == "estimated from config"
        assert read["model"]["weights"]["source"] == "safetensors"
        # before: the table split the zero points (TP 2: 73,408 Quark, 72,832 torchao) and the estimate split k/v's
        # per-row scales evenly at TP 4 (39,814 Quark, 39,744 torchao)
        assert (estimated["model"]["weight_bytes"], read["model"]["weight_bytes"]) == (total, total)
        assert (estimated["capacity"]["weight_bytes_per_gpu"], read["capacity"]["weight_bytes_per_gpu"]) == \
            (expected, expected), tp
    assert [_by_hand(total, whole, tp) for tp in (2, 4)] == ([73_542, 39_974] if scalars else [73_472, 39_904])
