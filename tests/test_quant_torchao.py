"""torchao checkpoints sized from the config (kvplan/configs/quant_torchao.py).

Expected bytes are laid out tensor by tensor from torchao 0.18.0's tensor subclasses as transformers saves them
(flatten_tensor_state_dict: one tensor per tensor-data attribute), for Llama-3.1-8B and Qwen3-30B-A3B by hand. The
serialized configs follow torchao's config_to_dict as published configs spell them ("_type", "_version", "_data";
Int4WeightOnlyConfig _version 2 with int4_packing_format {"_type": "Int4PackingFormat", "_data": "PLAIN"}).
"""

from __future__ import annotations

import json

import pytest

from kvplan.configs import build_model

from kvplan_inprocess import kvplan
from test_weights_quantized_config import LINEARS, _layout_bytes, _llama8b_with, _raw


def _torchao(kind: str, data: dict, version: int = 2, skip=None) -> dict:
    return {"quant_method": "torchao", "quant_type": {"default": {"_type": kind, "_version": version, "_data": data}},
            "modules_to_not_convert": skip, "include_input_output_embeddings": False, "untie_embedding_weights": False}


def _per_row(dim: int = -1) -> dict:
    return {"_type": "PerRow", "_version": 1, "_data": {"dim": dim}}


INT4_PLAIN = {"group_size": 128, "set_inductor_config": True,
              "int4_packing_format": {"_type": "Int4PackingFormat", "_data": "PLAIN"},
              "int4_choose_qparams_algorithm": {"_type": "Int4ChooseQParamsAlgorithm", "_data": "TINYGEMM"},
              "int4_tile_packed_ntile": 8}


@pytest.mark.parametrize("quant, per_linear", [
    # Int4Tensor: qdata [out, in / 2] (two values a byte) + scale and zero_point [in / 128, out] in BF16
    (_torchao("Int4WeightOnlyConfig", INT4_PLAIN), lambda i, o: o * i // 2 + (i // 128) * o * 2 * 2),
    # Float8Tensor PerRow: float8_e4m3fn qdata [out, in] + float32 scale [out, 1]
    (_torchao("Float8DynamicActivationFloat8WeightConfig", {"granularity": [_per_row(), _per_row()]}),
     lambda i, o: i * o + o * 4),
    # granularity None: PerTensor for both (_normalize_granularity): one float32 scale [1, 1] a weight
    (_torchao("Float8DynamicActivationFloat8WeightConfig", {"granularity": None}), lambda i, o: i * o + 4),
    # Int8Tensor PerRow: int8 qdata + float32 scale [out, 1] + int8 zero_point [out, 1]
    (_torchao("Int8WeightOnlyConfig", {"group_size": None, "granularity": _per_row()}),
     lambda i, o: i * o + o * 4 + o),
])
def test_torchao_llama_by_its_tensors(quant, per_linear):
    # the head and embeddings stay BF16: vLLM 0.34 TorchAOConfig quantizes LinearBase layers only
    model = build_model(_llama8b_with(quant), "torchao")
    assert model.weight_bytes == _layout_bytes(per_linear)


def test_torchao_modules_to_not_convert_read_as_vllm_should_skip():
    # "layers.0" is layer 0 only (".layers.0." inside the name), not layers 0x
    quant = _torchao("Int8WeightOnlyConfig", {"granularity": {"_type": "PerTensor", "_version": 1, "_data": {}}},
                     skip=["layers.0"])
    model = build_model(_llama8b_with(quant), "torchao-skip")
    per_tensor = lambda i, o: i * o + 4 + 1  # int8 qdata + float32 scale [1, 1] + int8 zero_point [1, 1]
    layer0 = sum(i * o * 2 - per_tensor(i, o) for i, o in LINEARS)
    assert model.weight_bytes == _layout_bytes(per_tensor) + layer0


def test_torchao_module_fqn_to_config_with_a_default_and_none_entries():
    # vLLM 0.34 TorchAOConfig: None entries leave the module unquantized (an exact name via should_skip, a `re:`
    # pattern by re.fullmatch); every other linear takes "_default"
    default = {"_type": "Float8DynamicActivationFloat8WeightConfig", "_version": 2,
               "_data": {"granularity": [_per_row(), _per_row()]}}
    table = {"_default": default, "model.layers.31.mlp.down_proj": None, r"re:model\.layers\.1\.self_attn\..*": None}
    model = build_model(_llama8b_with(_torchao("ModuleFqnToConfig", {"module_fqn_to_config": table})), "fqn")
    per_row = lambda i, o: i * o + o * 4
    kept = [LINEARS[6]] + LINEARS[:4]  # layer 31's down_proj; layer 1's q, k, v, o
    assert model.weight_bytes == _layout_bytes(per_row) + sum(i * o * 2 - per_row(i, o) for i, o in kept)


def test_torchao_keeps_the_routed_experts():
    # Qwen3-30B-A3B: attention quantized (Int8Tensor per row); the 128 routed experts (FusedMoE in vLLM, fused 3-D
    # parameters in transformers), the router, norms, embeddings and head in BF16
    raw = _raw("qwen3-30b-a3b")
    raw["quantization_config"] = _torchao("Int8WeightOnlyConfig", {"granularity": _per_row()})
    model = build_model(raw, "qwen3-torchao")
    hidden, layers, vocab = 2048, 48, 151936
    attention = [(hidden, 4096), (hidden, 512), (hidden, 512), (4096, hidden)]
    quantized = sum(i * o + o * 5 for i, o in attention)
    floats = 128 * 3 * hidden * 768 + hidden * 128 + 2 * hidden + 2 * 128
    assert model.weight_bytes == layers * (quantized + floats * 2) + (2 * vocab * hidden + hidden) * 2


@pytest.mark.parametrize("quant, reason", [
    (_torchao("Int4WeightOnlyConfig", dict(INT4_PLAIN, int4_packing_format={"_type": "Int4PackingFormat",
                                                                            "_data": "TILE_PACKED_TO_4D"})),
     "multiple of 1024"),
    # a version-1 config, as published configs of torchao <= 0.13 spell it
    (_torchao("Int8WeightOnlyConfig", {"group_size": None}, version=1), "version 1"),
    (_torchao("ModuleFqnToConfig", {"module_fqn_to_config": {"model.layers.0.mlp.down_proj": {
        "_type": "Int8WeightOnlyConfig", "_version": 2, "_data": {}}}}), "without a '_default'"),
    (_torchao("ModuleFqnToConfig", {"module_fqn_to_config": {
        "_default": {"_type": "Int8WeightOnlyConfig", "_version": 2, "_data": {}},
        "model.layers.0.mlp.down_proj": {"_type": "Int4WeightOnlyConfig", "_version": 2, "_data": INT4_PLAIN}}}),
     "a config of its own"),
    ({"quant_method": "torchao", "quant_type": "int4_weight_only"}, "one key, 'default'"),
    (_torchao("Int4WeightOnlyConfig", [128]), "not a table"),  # read as no fields (group 128, plain) before
])
def test_torchao_layouts_kvplan_has_not_read_say_why(tmp_path, quant, reason):
    path = tmp_path / "q.json"
    path.write_text(json.dumps(_llama8b_with(quant)))
    plan = kvplan("estimate", str(path), "--context", "8k", "--format", "json")
    assert plan.returncode == 0 and json.loads(plan.stdout)["model"]["weight_bytes"] is None
    assert reason in plan.stdout, plan.stdout
