"""A quantized checkpoint sized from its config without a list of kept modules (kvplan/configs/build.py
_weight_format): where kvplan has a per-module count of the family (configs/weight_tables/__init__.py) the norms, biases and
MoE routers stay in the float dtype and what the format stores once per quantized tensor is added; elsewhere the
old estimate (everything but the embeddings and a kept head at the quantized width) stands, and the note says so.

Per-tensor bytes, as vLLM 0.34 creates the parameters it loads the checkpoint into (model_executor/layers/
quantization): compressed-tensors NVFP4 W4A4 an F32 weight_global_scale and an F32 input_global_scale
(compressed_tensors_w4a4_nvfp4.py CompressedTensorsW4A4Fp4.create_weights); fp8 without weight_block_size an F32
weight_scale, and an F32 input_scale when activation_scheme is static (fp8.py Fp8LinearMethod.create_weights).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.configs import build_model

SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def _spec(name: str, quant: dict) -> dict:
    return dict(json.loads((SPECS / f"{name}.json").read_text()), quantization_config=quant)


def _note(model) -> str:
    return next(n for n in model.notes if n.startswith("weights estimated"))


NVFP4 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": True}


def test_qwen3_30b_a3b_nvfp4_keeps_its_routers_and_norms_in_bf16():
    # llm-compressor's NVFP4 preset on Qwen3-30B-A3B (Qwen3MoeForCausalLM): every Linear but the head and the routers
    quant = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
             "ignore": ["lm_head", "re:.*mlp.gate$"],
             "config_groups": {"group_0": {"targets": ["Linear"], "weights": NVFP4,
                                           "input_activations": dict(NVFP4, dynamic="local")}}}
    model = build_model(_spec("qwen3-30b-a3b", quant), "qwen3-30b-a3b-nvfp4")
    # hidden 2,048, 48 layers of 32 query and 4 KV heads of 128, 128 experts of 768, vocab 151,936, untied.
    # quantized a layer: q 2,048 x 4,096 + k, v 2,048 x 512 + o 4,096 x 2,048 = 18,874,368 and the experts
    # 128 x 3 x 2,048 x 768 = 603,979,776: x 48 = 29,896,998,912 at 1/2 + 1/16 B = 16,817,061,888 B
    quantized = 48 * (18_874_368 + 603_979_776)
    # BF16: embeddings and head 2 x 151,936 x 2,048 = 622,329,856; routers 48 x 2,048 x 128 = 12,582,912; norms
    # 48 x (2 x 2,048 + q_norm, k_norm 2 x 128) + final 2,048 = 210,944: 635,123,712 parameters, 1,270,247,424 B
    floats = 622_329_856 + 12_582_912 + 210_944
    # Qwen/Qwen3-30B-A3B's index: total_size 61,064,245,248 B in BF16
    assert model.param_count == quantized + floats == 61_064_245_248 // 2
    # per quantized tensor (48 x (4 + 128 x 3) = 18,624) weight_global_scale + input_global_scale, F32 each: 148,992 B
    assert model.weight_bytes == quantized * 9 // 16 + floats * 2 + 18_624 * 8 == 18_087_458_304
    assert model.weight_dtype == "nvfp4 + bfloat16" and model.weight_plain_params == floats
    assert "18,624 quantized tensors with 8 B each" in _note(model)
    # NVFP4A16 (no input_activations: CompressedTensorsW4A4Fp4(use_a16=True)) stores the weight_global_scale only
    del quant["config_groups"]["group_0"]["input_activations"]
    a16 = build_model(_spec("qwen3-30b-a3b", quant), "qwen3-30b-a3b-nvfp4a16")
    assert model.weight_bytes - a16.weight_bytes == 18_624 * 4


def test_fp8_per_tensor_scales_follow_the_activation_scheme():
    # Llama-3.1-8B: 8,030,261,248 parameters; embeddings and head 2 x 128,256 x 4,096 = 1,050,673,152 and norms
    # 32 x 2 x 4,096 + 4,096 = 266,240 at 2 B = 2,101,878,784 B; the linear weights, 6,979,321,856, at 1 B (FP8
    # keeps the head); 32 x 7 linear tensors with an F32 weight_scale, + an F32 input_scale when static
    floats, linear = 1_050_673_152 + 266_240, 6_979_321_856
    static = build_model(_spec("llama-3.1-8b", {"quant_method": "fp8", "activation_scheme": "static"}), "fp8s")
    dynamic = build_model(_spec("llama-3.1-8b", {"quant_method": "fp8", "activation_scheme": "dynamic"}), "fp8d")
    assert static.param_count == floats + linear == 8_030_261_248
    assert static.weight_bytes == linear + floats * 2 + 224 * 8 == 9_081_202_432
    assert dynamic.weight_bytes == linear + floats * 2 + 224 * 4
    assert "the LM head, the embeddings, norms, routers and biases" in _note(static)


def test_a_family_without_a_per_module_count_keeps_the_old_estimate_and_says_so(monkeypatch):
    # RWKV-4-430M (model_type rwkv) with its per-module count taken away (configs/weight_tables/hybrid_more.py has
    # one now, as InternLM2 and GPT-Neo, which this test used, have: weight_tables/classic.py, weight_tables/rest.py;
    # tests/test_tables_hybrid_more.py sizes RWKV's AWQ module by module): 24 blocks of hidden 1,024: time-mix
    # 2 x 1,024 + 3 x 1,024 + key, value, receptance 3 x 1,024 x 1,024 + output 1,024 x 1,024 = 4,199,424,
    # channel-mix 2 x 1,024 + key 1,024 x 4,096 + value 4,096 x 1,024 + receptance 1,024 x 1,024 = 9,439,232, two
    # LayerNorms 4,096; + embeddings and the untied head 2 x 50,277 x 1,024, the first block's pre-LayerNorm and
    # ln_out 4 x 1,024
    from kvplan.configs import weight_tables

    monkeypatch.delitem(weight_tables.TABLES, "rwkv")
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True}
    model = build_model(_spec("rwkv-4-430m-pile", awq), "rwkv-awq")
    assert model.param_count == 24 * (4_199_424 + 9_439_232 + 4_096) + 2 * 50_277 * 1_024 + 4_096 == 430_397_440
    # AWQ keeps the embeddings and head in float16 (102,967,296 at 2 B: AutoAWQ quantizes a float16 model whatever
    # the config's float32 says, quant_bytes._awq); everything else, norms included, at 1/2 + (2 + 1/2) / 128 B =
    # 133/256 B: 327,430,144 x 133 / 256 = 170,110,192 B
    assert model.weight_bytes == 327_430_144 * 133 // 256 + 102_967_296 * 2 == 376_044_784
    assert "norms, biases and routers counted at the quantized width" in _note(model)
    assert "no per-module count of model_type 'rwkv'" in _note(model)


def test_phi3_awq_is_split_module_by_module():
    # Phi-3-mini (model_type phi3, per-module count in configs/weight_tables/more.py): 32 layers of qkv 3,072 x
    # 9,216 + o 3,072 x 3,072 + gate_up 3,072 x 16,384 + down 8,192 x 3,072 = 113,246,208 linear weights, + 2 norms
    # x 3,072; + embeddings and the untied head 2 x 32,064 x 3,072 + final norm 3,072 = 3,821,079,552
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True}
    model = build_model(_spec("phi-3-mini-4k", awq), "phi3-awq")
    assert model.param_count == 32 * (113_246_208 + 6_144) + 2 * 32_064 * 3_072 + 3_072 == 3_821_079_552
    # the linear weights but the head, 32 x 113,246,208 = 3,623,878,656, at 133/256 B = 1,882,718,208 B; the
    # embeddings, head and norms, 197,001,216 + 32 x 6,144 + 3,072 = 197,200,896, at 2 B (before: the norms at
    # 133/256 B, 2,276,824,380 B in all)
    assert model.weight_bytes == 3_623_878_656 * 133 // 256 + 197_200_896 * 2 == 2_277_120_000
    assert "read module by module" in _note(model)
    # whole on each TP rank: the 32 x 2 + 1 norms of 3,072, in fp16
    assert model.weight_replicated_bytes == 65 * 3_072 * 2 == 399_360
