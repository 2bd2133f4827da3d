"""MLX checkpoints (mlx-lm): the "quantization" block of config.json sized module by module (configs/quant_mlx.py).

Rules read in ml-explore/mlx-lm d78bf58 mlx_lm/utils.py (quantize_model: every module with to_quantized whose
weight's last dimension divides by the group size, at the config's per-module entry where one names it;
save_config copies "quantization" to "quantization_config") and ml-explore/mlx 846d176 (mlx/ops.cpp
affine_quantize: uint32 packed weights, scales and biases [out, in / group] in the weights' dtype;
python/mlx/nn/layers/quantized.py QuantizedLinear / QuantizedEmbedding).

The real config: tests/data/configs/telechat3-36b-thinking-mlx-4bit.json, mlx-community/Telechat3-36B-Thinking-4bit's
config.json as a public port quotes it field for field (code index id 60982996768; tests/test_families_registry_text.py
gives the source): "quantization": {"group_size": 64, "bits": 4, "mode": "affine"}, torch_dtype bfloat16, no
quantization_config.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs import quant_mlx
from kvplan.configs.build import build_model
from kvplan.weights.estimate import estimated
from kvplan.weights.quant import identify

CONFIG = Path(__file__).parent / "data" / "configs" / "telechat3-36b-thinking-mlx-4bit.json"

# TeleChat3-36B: hidden 6,144, 48 query heads and 8 KV heads of 128, MLP 24,576, 64 layers, vocabulary 131,072,
# separate head; every linear's inputs (6,144 or 24,576) and the embedding's width divide by 64
H, LAYERS, VOCAB = 6144, 64, 131072
NORMS = LAYERS * 2 * H + H  # two RMSNorms a layer and the final one stay bfloat16
TOTAL = 2 * VOCAB * H + H + LAYERS * (H * 6144 + 2 * H * 1024 + 6144 * H + 3 * H * 24576 + 2 * H)
# 4-bit affine, group 64: 4/8 B of packed weight + a bfloat16 scale and a bfloat16 bias per 64 weights
RATE = 4 / 8 + 2 * 2 / 64  # 0.5625 B


def _raw() -> dict:
    return json.loads(CONFIG.read_text())


def test_telechat3_mlx_4bit_is_sized_as_mlx_stores_it():
    model = build_model(_raw(), "telechat3-36b-thinking-mlx-4bit")
    assert model.param_count == TOTAL == 36_239_579_136 and NORMS == 792_576
    quantized = TOTAL - NORMS  # linear weights, the embeddings and the head
    expected = quantized * 9 // 16 + NORMS * 2  # RATE = 9/16
    assert expected == 20_384_317_440 + 1_585_152 == 20_385_902_592  # read as bf16 before: 72,479,158,272
    assert model.weight_bytes == expected
    w = estimated(model, identify(_raw()["quantization"]))
    assert w.quantization == "MLX 4-bit affine, group 64"
    assert {row.dtype: (row.bytes, row.elements) for row in w.by_dtype} == {
        "mlx-int4": (20_384_317_440, quantized), "bfloat16": (1_585_152, NORMS)}


def test_mlx_block_copied_as_quantization_config_reads_the_same():
    """mlx-lm writes the block twice ("support hf model tree"): a quantization_config without quant_method."""
    raw = _raw()
    raw["quantization_config"] = dict(raw["quantization"])
    assert build_model(raw, "t").weight_bytes == 20_385_902_592
    only_copy = {k: v for k, v in raw.items() if k != "quantization"}
    assert build_model(only_copy, "t").weight_bytes == 20_385_902_592


def _tiny_qwen3_moe(quantization: dict) -> dict:
    return {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 128,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
            "intermediate_size": 256, "moe_intermediate_size": 96, "num_experts": 4, "num_experts_per_tok": 2,
            "vocab_size": 1000, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
            "quantization": quantization}


def test_mlx_overrides_and_groups_that_do_not_divide():
    """qwen3_moe as mlx-lm builds it: the router mlp.gate an nn.Linear (8-bit by the config's entries, as
    mlx-lm's qwen3_moe quant_predicate writes them), the experts SwitchLinear; down_proj's 96 inputs do not
    divide by 64, so mlx-lm leaves the experts' down_proj in bfloat16."""
    q = {"group_size": 64, "bits": 4, "mode": "affine",
         "model.layers.0.mlp.gate": {"group_size": 64, "bits": 8},
         "model.layers.1.mlp.gate": {"group_size": 64, "bits": 8}}
    model = build_model(_tiny_qwen3_moe(q), "tiny")
    # per layer: q 128x128, k and v 128x64, o 128x128 (49,152); q_norm and k_norm 32 each; two norms of 128;
    # router 128x4; experts 4 x (2 x 128x96 + 96x128) (147,456); then embeddings and head 1000x128 each, final norm
    attention, experts_gate_up, experts_down = 49_152, 4 * 2 * 128 * 96, 4 * 96 * 128
    layer = attention + 64 + 256 + 512 + experts_gate_up + experts_down
    assert model.param_count == 2 * layer + 2 * 128_000 + 128 == 651_008
    four_bit = 2 * (attention + experts_gate_up) + 2 * 128_000  # 550,912 at 0.5 + 4/64
    eight_bit = 2 * 512  # the routers at 1 + 4/64
    plain = 2 * (experts_down + 64 + 256) + 128  # 99,072 at 2 B
    assert four_bit + eight_bit + plain == 651_008
    assert model.weight_bytes == four_bit * 9 // 16 + eight_bit * 17 // 16 + plain * 2 == 509_120


def test_mlx_entries_kvplan_cannot_place_give_no_figure():
    # an entry for the stacked experts (MLX's switch_mlp path), which kvplan's table holds per checkpoint name
    q = {"group_size": 64, "bits": 4, "model.layers.0.mlp.switch_mlp.up_proj": {"group_size": 64, "bits": 8}}
    model = build_model(_tiny_qwen3_moe(q), "tiny")
    assert model.weight_bytes == 0
    assert any("switch_mlp.up_proj" in n and n.startswith("weights not sized") for n in model.notes)
    # a family whose mlx-lm module layout kvplan has not read
    raw = json.loads((CONFIG.parent / "deepseek-moe-16b-base.json").read_text())
    raw["quantization"] = {"group_size": 64, "bits": 4}
    model = build_model(raw, "deepseek-moe-mlx")
    assert model.weight_bytes == 0 and any("mlx-lm module layout" in n for n in model.notes)


@pytest.mark.parametrize("setting, rate", [
    ({"group_size": 32, "bits": 8}, 1 + 4 / 32),  # affine: bits/8 + a 2-byte scale and bias per group
    ({"group_size": 32, "bits": 4, "mode": "mxfp4"}, 0.5 + 1 / 32),  # one uint8 E8M0 scale, no biases
    ({"group_size": 16, "bits": 4, "mode": "nvfp4"}, 0.5 + 1 / 16),  # one uint8 (FP8) scale
    ({"group_size": 32, "bits": 8, "mode": "mxfp8"}, 1 + 1 / 32),
])
def test_mlx_modes(setting, rate):
    assert quant_mlx.read(setting).default.bytes_per_weight(2) == rate


def test_mlx_settings_mlx_would_refuse_give_no_figure():
    with pytest.raises(quant_mlx.Unsized, match="group 48"):
        quant_mlx.read({"group_size": 48, "bits": 4})  # affine_quantize takes groups of 32, 64, 128


def test_mlx_refused_by_vllm_and_sglang_in_one_line(cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_raw()))
    for engine in ("vllm", "sglang"):
        code, out, err = cli("estimate", str(path), "--gpu", "h100", "--context", "8k", "--engine", engine)
        lines = err.strip().splitlines()
        assert code != 0 and len(lines) == 1 and "MLX checkpoint" in lines[0], err
    code, out, err = cli("estimate", str(path), "--gpu", "h100", "--context", "8k")
    assert code == 0, err
