"""Weights of quantized checkpoints estimated from their config (kvplan.configs.quant_bytes).

Expected bytes come from published checkpoint sizes or are laid out here tensor by tensor from
each format's own layout (qweight, qzeros, scales ...), not from kvplan's per-weight rates.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kvplan.configs import build_model

from kvplan_inprocess import kvplan

SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def _raw(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def _cli(*args: str) -> subprocess.CompletedProcess:
    return kvplan(*args)  # `python -m kvplan ARGS`, in this process


# Llama-3.1-8B's linear layers as (inputs, outputs): q, k, v, o, gate, up, down; 32 layers, vocab 128,256,
# hidden 4,096, untied head; per layer two RMSNorm weights, one more at the end.
LINEARS = [(4096, 4096), (4096, 1024), (4096, 1024), (4096, 4096), (4096, 14336), (4096, 14336), (14336, 4096)]
LAYERS, VOCAB, HIDDEN = 32, 128256, 4096
NORM_PARAMS = 2 * HIDDEN * LAYERS + HIDDEN
EMBED_PARAMS = VOCAB * HIDDEN


def _llama8b_with(quant: dict, dtype: str = "bfloat16") -> dict:
    raw = _raw("llama-3.1-8b")
    raw["quantization_config"] = quant
    raw["torch_dtype"] = dtype
    return raw


def _layout_bytes(per_linear) -> int:
    """Every decoder layer's linears by `per_linear(inputs, outputs)`, the embeddings, the head and the norms
    in 2 B."""
    return LAYERS * sum(per_linear(i, o) for i, o in LINEARS) + (2 * EMBED_PARAMS + NORM_PARAMS) * 2


def _close(estimate: int, expected: int, tolerance: float) -> None:
    assert abs(estimate - expected) / expected < tolerance, (estimate, expected, (estimate - expected) / expected)


@pytest.mark.parametrize("name, published", [
    # model.safetensors.index.json metadata.total_size of openai/gpt-oss-120b and -20b
    ("gpt-oss-120b", 65_248_815_744),
    ("gpt-oss-20b", 13_761_264_768),
])
def test_mxfp4_gpt_oss_from_its_config_equals_the_published_checkpoint(name, published):
    model = build_model(_raw(name), name)
    assert model.weight_bytes == published


def test_gpt_oss_bias_default_is_the_config_class_default():
    raw = _raw("gpt-oss-20b")
    stated = build_model(raw, "x").param_count
    del raw["attention_bias"]  # GptOssConfig defaults attention_bias to True
    assert build_model(raw, "x").param_count == stated


def test_fp8_block_scaled_kimi_k2_within_its_file_bytes():
    # 1,029,190,981,272 B: the safetensors files of moonshotai/Kimi-K2-Instruct (model_specs/weights.json);
    # norms, routers and shard headers (a few hundred MB) are what the estimate leaves out
    _close(build_model(_raw("kimi-k2"), "k").weight_bytes, 1_029_190_981_272, 5e-4)


def test_awq_int4_group_128_by_its_tensors():
    quant = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True}
    model = build_model(_llama8b_with(quant, "float16"), "awq")
    # AutoAWQ WQLinear_GEMM: qweight int32 [in, out/8], qzeros int32 [in/128, out/8], scales fp16 [in/128, out]
    expected = _layout_bytes(lambda i, o: i * (o // 8) * 4 + (i // 128) * (o // 8) * 4 + (i // 128) * o * 2)
    assert model.weight_bytes == expected  # the norms in fp16 too: llama has a per-module count
    assert model.weight_dtype == "int4 + float16"


def test_gptq_int4_with_its_g_idx_and_a_quantized_head():
    quant = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": True, "sym": True, "lm_head": True}
    model = build_model(_llama8b_with(quant, "float16"), "gptq")

    def gptq(i, o):  # qweight int32 [in/8, out], qzeros int32 [in/128, out/8], scales fp16 [in/128, out], g_idx
        return (i // 8) * o * 4 + (i // 128) * (o // 8) * 4 + (i // 128) * o * 2 + i * 4
    # lm_head: true quantizes the head like any linear (inputs 4,096, outputs the vocabulary)
    expected = _layout_bytes(gptq) - EMBED_PARAMS * 2 + gptq(HIDDEN, VOCAB)
    # g_idx: 32 x (6 x 4,096 (q, k, v, o, gate, up) + 14,336 (down)) + 4,096 (the head) = 1,249,280 rows x 4 B
    # = 4,997,120 B (before: left out, 0.11% under)
    assert model.weight_bytes == expected
    assert model.weight_g_idx_bytes == (32 * (6 * 4096 + 14336) + 4096) * 4 == 4_997_120
    assert any("GPTQ's int32 g_idx, one per input row (1,249,280 rows, 4,997,120 B)" in n for n in model.notes)


def test_compressed_tensors_w4a16_symmetric_groups():
    quant = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
             "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                 "num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True}}}}
    model = build_model(_llama8b_with(quant), "w4a16")
    # weight_packed int32 [out, in/8], weight_scale bf16 [out, in/128], weight_shape int64 [2]; no zero point
    expected = _layout_bytes(lambda i, o: o * (i // 8) * 4 + o * (i // 128) * 2 + 16)
    assert model.weight_bytes == expected


def test_compressed_tensors_asymmetric_adds_packed_zero_points():
    group = {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                                                "group_size": 128, "symmetric": False}}
    quant = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
             "config_groups": {"group_0": group}}
    model = build_model(_llama8b_with(quant), "w4a16-asym")
    # + weight_zero_point int32 [out/8, in/128] (4-bit values packed along the output dimension)
    expected = _layout_bytes(lambda i, o: o * (i // 8) * 4 + o * (i // 128) * 2 + 16 + (o // 8) * (i // 128) * 4)
    assert model.weight_bytes == expected


NVFP4_ARGS = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": True}


@pytest.mark.parametrize("quant", [
    {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "ignore": ["lm_head"],
     "config_groups": {"group_0": {"targets": ["Linear"], "weights": NVFP4_ARGS,
                                   "input_activations": dict(NVFP4_ARGS, dynamic="local")}}},
    {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]},
])
def test_nvfp4_by_its_tensors(quant):
    model = build_model(_llama8b_with(quant), "nvfp4")
    # U8 weight [out, in/2] + F8_E4M3 weight_scale [out, in/16] + two F32 scalars (compressed-tensors
    # weight_global_scale and input_global_scale; ModelOpt weight_scale_2 and input_scale)
    expected = _layout_bytes(lambda i, o: o * i // 2 + o * i // 16 + 8)
    assert model.weight_bytes == expected


def test_bitsandbytes_nf4_double_quant_by_its_tensors():
    quant = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
             "bnb_4bit_use_double_quant": True}
    model = build_model(_llama8b_with(quant), "nf4")

    def nf4(i, o):  # U8 weight [n/2], absmax U8 per 64, nested_absmax F32 per 256 blocks, two small maps
        n = i * o
        return n // 2 + n // 64 + -(-(n // 64) // 256) * 4 + 256 * 4 + 16 * 4
    # every tensor stores also quant_state.bitsandbytes__nf4, a U8 JSON of its shape, dtypes and nested offset
    # (bitsandbytes QuantState.as_dict(packed=True)), whose length the config does not give: the estimate is the
    # rest exactly (every Llama-3.1-8B linear holds a multiple of 64 x 256 weights) and says the JSON is left out
    # (before: the two maps left out too, 0.04% under)
    assert model.weight_bytes == _layout_bytes(nf4)
    assert any("estimated: not counted" in n and "quant_state.bitsandbytes__nf4" in n for n in model.notes)


def test_bitsandbytes_int8_by_its_tensors():
    model = build_model(_llama8b_with({"quant_method": "bitsandbytes", "load_in_8bit": True}), "int8")
    # bitsandbytes Linear8bitLt._save_to_state_dict: the int8 weight [out, in], SCB float32 [out] and weight_format,
    # a uint8 scalar (before: SCB and weight_format left out, 5,505,248 B under)
    assert model.weight_bytes == _layout_bytes(lambda i, o: i * o + o * 4 + 1)


def test_fp8_keeps_embeddings_and_head_in_bf16():
    quant = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    model = build_model(_llama8b_with(quant), "fp8")
    # F8_E4M3 weight + F32 weight_scale_inv [ceil(out/128), ceil(in/128)]
    assert model.weight_bytes == _layout_bytes(lambda i, o: i * o + -(-o // 128) * -(-i // 128) * 4)


@pytest.mark.parametrize("quant, reason", [
    ({"quant_method": "exl3", "bits": 4.0}, "quant_method 'exl3'"),
    # a module class: not a module name kvplan's per-module count can map (tests/test_quant_exclude.py has the rest)
    ({"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head", "LlamaDecoderLayer"],
      "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                                                                "group_size": 128}}}}, "'LlamaDecoderLayer'"),
    ({"quant_method": "compressed-tensors", "format": "pack-quantized",
      "config_groups": {"g": {"targets": ["re:.*mlp.experts.*"], "weights": {"num_bits": 4, "type": "int",
                                                                            "strategy": "channel"}}}},
     # read module by module now (configs/quant_mixed.py): the target names no module of a dense Llama
     "none of its entries names a module"),
    ({"quant_method": "mxfp4"}, "model_type 'llama'"),
    ({"quant_method": "awq", "bits": 4, "group_size": "128", "zero_point": True}, "group_size is '128'"),
])
def test_a_format_kvplan_cannot_size_refuses_gpu_plans_and_says_why(tmp_path, quant, reason):
    path = tmp_path / "quantized.json"
    path.write_text(json.dumps(_llama8b_with(quant)))
    plan = _cli("estimate", str(path), "--gpu", "h100", "--context", "8k")
    assert plan.returncode == 2
    assert "Traceback" not in plan.stderr
    assert len(plan.stderr.strip().splitlines()) == 1
    assert "not known from its config" in plan.stderr and reason in plan.stderr and "--weights" in plan.stderr
    # the cache does not depend on the weights: the plain estimate still runs, with the reason as a note
    bare = _cli("estimate", str(path), "--context", "8k", "--format", "json")
    assert bare.returncode == 0, bare.stderr
    assert any(reason in n for n in json.loads(bare.stdout)["model"]["notes"])
    # and a size given on the command line plans it
    given = _cli("estimate", str(path), "--gpu", "h100", "--context", "8k", "--weights", "5GB", "--format", "json")
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout)["capacity"]["weight_bytes_per_gpu"] == 5 * 10**9


def test_the_gpu_plan_of_a_local_gpt_oss_copy_uses_the_mxfp4_bytes(tmp_path):
    path = tmp_path / "my-gpt-oss.json"
    path.write_text(json.dumps(_raw("gpt-oss-120b")))
    out = _cli("estimate", str(path), "--gpu", "h100", "--context", "8k", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["capacity"]["weight_bytes_per_gpu"] == 65_248_815_744


def test_an_unquantized_config_is_unchanged():
    model = build_model(_raw("llama-3.1-8b"), "l")
    assert model.weight_bytes == model.param_count * 2
    assert not any(n.startswith("weights") for n in model.notes)


# -- junk in a quantization_config: a figure, a clear refusal, never a crash

from hypothesis import given, settings, strategies as st  # noqa: E402

from kvplan.errors import KvplanError  # noqa: E402

_JUNK = st.one_of(st.none(), st.booleans(), st.integers(-2, 10**12), st.floats(allow_nan=True),
                  st.text(max_size=12), st.lists(st.integers(-3, 300), max_size=3),
                  st.dictionaries(st.text(max_size=6), st.integers(), max_size=2))
_FORMATS = [
    {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True,
     "modules_to_not_convert": ["visual"]},
    {"quant_method": "gptq", "bits": 4, "group_size": 128, "lm_head": False, "checkpoint_format": "gptq"},
    {"quant_method": "fp8", "weight_block_size": [128, 128], "scale_fmt": "ue8m0", "modules_to_not_convert": None},
    {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
     "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "block",
                                                                 "block_structure": [128, 128]}}}},
    {"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4", "exclude_modules": ["lm_head"]}},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_use_double_quant": True},
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(_FORMATS))), st.data())
def test_junk_in_a_quantization_config_never_crashes(index, data):
    quant = json.loads(json.dumps(_FORMATS[index]))
    node = quant
    if "config_groups" in quant and data.draw(st.booleans()):
        node = quant["config_groups"]["g"]["weights"] if data.draw(st.booleans()) else quant["config_groups"]["g"]
    elif "quantization" in quant and data.draw(st.booleans()):
        node = quant["quantization"]
    key = data.draw(st.sampled_from(sorted(node)))
    node[key] = data.draw(_JUNK)
    try:
        model = build_model(_llama8b_with(quant), "junk")
    except KvplanError:
        return
    assert model.weight_bytes >= 0
    assert model.weight_bytes == 0 or any(n.startswith("weights estimated as") for n in model.notes)


def test_the_estimate_splits_quantized_and_float_bytes():
    from kvplan.weights.estimate import estimated

    # gpt-oss-120b's published layout: 60,914,073,600 B of U8 expert blocks and scales, 4,334,742,144 B of BF16
    rows = estimated(build_model(_raw("gpt-oss-120b"), "g")).by_dtype
    assert [(r.dtype, r.bytes) for r in rows] == [("mxfp4", 60_914_073_600), ("bfloat16", 4_334_742_144)]
    # an unquantized checkpoint keeps one row
    assert len(estimated(build_model(_raw("llama-3.1-8b"), "l")).by_dtype) == 1


def test_a_quantized_checkpoint_serves_in_its_float_dtype():
    from kvplan.workflows import apply_kv_dtype

    quant = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": True}
    model = build_model(_llama8b_with(quant, "float16"), "awq")
    assert model.weight_dtype == "int4 + float16" and model.float_dtype == "float16"
    assert apply_kv_dtype(model, "auto")[1] == "fp16"  # the K/V in the dtype the engine runs the model in


@pytest.mark.parametrize("ignore", [
    ["lm_head", "re:.*mlp.gate$"],  # MoE routers kept in bf16 (llm-compressor's usual recipe)
    ["lm_head", "model.layers.0.mlp.gate", "re:.*shared_expert_gate$", "re:visual.*"],
    # one-dimensional tensors no format quantizes, as Qwen3-30B-A3B-FP8 and MiniMax-M2.5 list them
    ["lm_head", "model.layers.0.input_layernorm", "model.layers.0.post_attention_layernorm",
     "model.layers.0.self_attn.k_norm", "model.layers.1.self_attn.kv_a_layernorm", "e_score_correction_bias",
     "model.norm", "transformer.h.0.ln_1"],
])
def test_ignore_lists_of_routers_and_towers_keep_the_estimate(ignore):
    quant = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ignore,
             "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                                        "strategy": "group", "group_size": 128}}}}
    model = build_model(_llama8b_with(quant), "w4")
    # the same bytes as with ignore ["lm_head"]: routers are < 0.1% (counted with the linears), towers apart
    plain = dict(quant, ignore=["lm_head"])
    assert model.weight_bytes == build_model(_llama8b_with(plain), "w4").weight_bytes > 0


def test_a_quantized_name_without_a_declared_quantization_is_flagged():
    # a lone copy of nvidia/Qwen3-...-NVFP4's config.json: the format lives in hf_quant_config.json beside it, so the
    # config alone is sized at bf16; the name says otherwise, and the model says so
    raw = {k: v for k, v in _llama8b_with({"quant_method": "fp8"}).items() if k != "quantization_config"}
    flagged = build_model(raw, "nvidia/Llama-3.1-8B-Instruct-NVFP4")
    assert any("suggests a quantized checkpoint" in n and "hf_quant_config.json" in n for n in flagged.notes)
    assert not any("suggests" in n for n in build_model(raw, "meta-llama/Llama-3.1-8B-Instruct").notes)
    # declared: no such note
    assert not any("suggests" in n for n in build_model(_llama8b_with({"quant_method": "fp8"}), "x-FP8").notes)
