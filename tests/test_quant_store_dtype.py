"""FP8 configs whose store_dtype stores the routed experts in a format of their own (configs/quant_bytes.py).

vLLM 0.24.0-0.34.0 layers/quantization/fp8.py Fp8Config.from_config reads `store_dtype`; get_quant_method gives
RoutedExperts Mxfp4MoEMethod when it is "mxfp4" (linear layers stay Fp8LinearMethod). mxfp4.py
Mxfp4MoEMethod.create_weights: w13_weight [E, 2I, H / 2] and w2_weight [E, H, I / 2] uint8 (two FP4 values a
byte), w13_ / w2_weight_scale [.., in / 32] uint8 (E8M0): 16 B + 1 B per 32 weights = 17/32 B a weight. 0.23.0's
Fp8Config has no store_dtype.

The config: tests/data/configs/mimo-v2.6-flash.json (XiaomiMiMo/MiMo-V2.6-Flash-RL, source in
tests/test_families_2026.py): quant_method fp8, weight_block_size [128, 128], store_dtype "mxfp4", every layer's
self_attn.o_proj (and the MTP decoder's) in ignored_layers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs import quant_bytes
from kvplan.configs.build import build_model
from kvplan.engines.vllm_quant_support import unsupported_note
from kvplan.weights.estimate import estimated

CONFIG = Path(__file__).parent / "data" / "configs" / "mimo-v2.6-flash.json"


def _raw() -> dict:
    return json.loads(CONFIG.read_text())


def test_mimo_v2_6_routed_experts_are_sized_as_mxfp4():
    model = build_model(_raw(), "mimo-v2.6-flash")
    # routed experts: 47 MoE layers (moe_layer_freq: all but layer 0) x 256 experts x 3 x 4096 x 2048
    experts = 47 * 256 * 3 * 4096 * 2048
    assert experts == 302_795_194_368
    # FP8 linears: fused qkv_proj (attention_projection_layout fused_qkv), 64 x 192 query + KV heads x (192 + 128):
    # 9 full layers with 4 KV heads (13,568 rows), 39 sliding layers with 8 (14,848 rows), x 4096 inputs;
    # layer 0's dense MLP 3 x 4096 x 16384
    fp8 = 9 * 13_568 * 4096 + 39 * 14_848 * 4096 + 3 * 4096 * 16_384
    assert fp8 == 3_073_376_256
    # bfloat16: embeddings and head (152,576 x 4096 each), 48 o_proj (8192 x 4096, ignored_layers), 47 routers
    # (4096 x 256 + 256 e_score_correction_bias), 97 norms of 4096, 39 x 64 attention sinks
    bf16 = 2 * 152_576 * 4096 + 48 * 8192 * 4096 + 47 * (4096 * 256 + 256) + 97 * 4096 + 39 * 64
    assert bf16 == 2_910_210_240
    assert model.param_count == experts + fp8 + bf16
    # bytes: experts 17/32 B each; FP8 1 B + a float32 scale per 128 x 128 block (1/4096 B); bfloat16 2 B
    experts_bytes = experts * 17 // 32  # 160,859,947,008
    fp8_bytes = fp8 + fp8 // 4096  # 3,073,376,256 + 750,336
    total = experts_bytes + fp8_bytes + 2 * bf16
    assert total == 169_754_494_080  # counted as all-FP8 experts it was 311,763,666,048: 142.0 GB more
    assert model.weight_bytes == total
    rows = {row.dtype: (row.bytes, row.elements) for row in estimated(model).by_dtype}
    assert rows == {"mxfp4 experts": (160_859_947_008, experts), "fp8": (3_074_126_592, fp8),
                    "bfloat16": (5_820_420_480, bf16)}
    assert model.float_dtype == "bfloat16"


def test_store_dtype_reads_only_mxfp4():
    q = quant_bytes.read({"quant_method": "fp8", "activation_scheme": "dynamic", "store_dtype": "mxfp4",
                          "weight_block_size": [128, 128]}, "mimo_v2")
    assert (q.experts_bytes_per_weight, q.experts_dtype) == (17 / 32, "mxfp4")
    assert q.bytes_per_weight == 1 + 4 / (128 * 128)
    # vLLM compares store_dtype with "mxfp4" only: any other value is a layout kvplan has not read
    with pytest.raises(quant_bytes.Unsized, match="store_dtype 'nvfp4'"):
        quant_bytes.read({"quant_method": "fp8", "activation_scheme": "dynamic", "store_dtype": "nvfp4"}, "mimo_v2")


def _tiny_qwen3_moe(quant: dict) -> dict:
    return {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
            "intermediate_size": 128, "moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2,
            "vocab_size": 100, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "quantization_config": quant}


def test_per_tensor_fp8_experts_as_mxfp4_drop_their_scales():
    """Per-tensor FP8 (no weight_block_size): each quantized tensor stores a float32 weight_scale (4 B); the
    routed experts as MXFP4 store none (Mxfp4MoEMethod creates no per-tensor scale)."""
    plain = {"quant_method": "fp8", "activation_scheme": "dynamic"}
    before = build_model(_tiny_qwen3_moe(plain), "tiny").weight_bytes
    after = build_model(_tiny_qwen3_moe({**plain, "store_dtype": "mxfp4"}), "tiny").weight_bytes
    # routed experts: 2 layers x 4 experts x 3 x 64 x 32 = 49,152 weights in 24 tensors; FP8: 1 B each + 4 B a
    # tensor = 49,248 B; MXFP4: 49,152 x 17 / 32 = 26,112 B
    assert before - after == 49_152 + 24 * 4 - 26_112 == 23_136


def test_store_dtype_without_a_module_table_gives_no_figure():
    """Without kvplan's per-module table the routed experts cannot be told from the other linears: MiMo-V2's
    table is refused when add_swa_attention_sink_bias is false (weight_tables/wrap.py mimo_v2)."""
    raw = _raw()
    raw["add_swa_attention_sink_bias"] = False
    del raw["quantization_config"]["ignored_layers"]
    model = build_model(raw, "variant")
    assert model.weight_bytes == 0
    assert any("store_dtype 'mxfp4'" in n for n in model.notes)


@pytest.mark.parametrize("version, refused", [("0.23.0", True), ("0.24.0", False), ("0.34.0", False)])
def test_vllm_before_0_24_cannot_load_mxfp4_experts(version, refused):
    note = unsupported_note(_raw()["quantization_config"], version)
    assert (note is not None) == refused
    if refused:
        assert "store_dtype" in note and "0.24.0" in note


def test_vllm_report_says_what_it_does_not_model(cli):
    code, out, err = cli("estimate", str(CONFIG), "--gpu", "h200", "--tp", "8", "--context", "32k",
                         "--engine", "vllm@0.34.0")
    assert code == 0, err
    text = " ".join(out.split())
    assert "MXFP4 weights (FP8 store_dtype) are taken as stored" in text
    assert "fused-MoE workspace not modelled: the fp8 store_dtype mxfp4 MoE kernels are not read" in text
