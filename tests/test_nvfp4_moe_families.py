"""The families engines/nvfp4_experts.py EXPERTS gained (Qwen3-VL-MoE, Qwen3.5 / 3.6 MoE, Llama 4, GLM-4.7-Flash,
Kimi K2 / K2.5, DeepSeek-V3.2), through both engines' per-card NVFP4 routed-expert rules (engines/vllm_nvfp4_moe.py,
engines/sglang_nvfp4_moe.py). The rule itself is tests/test_vllm_nvfp4_moe.py's: on an SM 12.x card (RTX PRO 6000,
SM 12.0) the CUTLASS backend vLLM 0.34 picks raises for gated experts where 2 x (width / split) is not a multiple of
128, and SGLang 0.5.23's flashinfer_cutlass asserts on the same; SM 10.x (B200) pads.

Widths, read by hand from the bundled base configs (model_specs/*.json; an NVFP4 export keeps the base config's
shape and adds its quantization config):
  Qwen/Qwen3-VL-30B-A3B      text_config.moe_intermediate_size   768
  Qwen/Qwen3.5-35B-A3B       text_config.moe_intermediate_size   512
  Llama-4-Scout / Maverick   text_config.intermediate_size      8192 (intermediate_size_mlp 16384: the dense layers)
  zai-org/GLM-4.7-Flash      moe_intermediate_size              1536
  moonshotai/Kimi-K2         moe_intermediate_size              2048 (Kimi-K2.5: text_config, 2048)
  DeepSeek-V3.2-Exp          moe_intermediate_size              2048
The ModelOpt NVFP4 quantization_config below is the layout of nvidia's config.json exports (quant_method modelopt,
quant_algo NVFP4, an ignore list of attention, routers, shared experts, vision tower: as nvidia/Gemma-4-26B-A4B-NVFP4
in tests/data/configs and the nvidia/Kimi-K2.6-NVFP4 card describes), so only the routed experts are NVFP4.
Published splits: Kimi-K2-Thinking NVFP4 on one 8 x B200 node (baseten.co/blog/kimi-k2-thinking-at-140-tps-on-nvidia-
blackwell); Kimi-K2.5 NVFP4 at --tensor-parallel-size 4 on 4 x B200 (huggingface.co/ISTA-DASLab/Kimi-K2.5-P48-NVFP4-
W4A4-Preview, whose serve line friendli.ai repeats); Llama 4 at --tensor-parallel-size 8 (blog.vllm.ai/2025/04/05/
llama4.html; nvidia/Llama-4-*-FP4 are the NVFP4 exports for Blackwell, docs.vllm.ai recipes Llama4-Scout).
"""

from __future__ import annotations

import json

import pytest

from nvfp4_fixtures import ct_nvfp4, planned_tp, refusal

MODELOPT_NVFP4 = {
    "quant_method": "modelopt", "quant_algo": "NVFP4", "producer": {"name": "modelopt"},
    "config_groups": {"group_0": {"targets": ["Linear"],
                                  "weights": {"num_bits": 4, "type": "float", "group_size": 16},
                                  "input_activations": {"num_bits": 4, "type": "float", "group_size": 16}}},
    "ignore": ["lm_head", "*self_attn*", "*linear_attn*", "*.mlp.gate", "*shared_expert*", "*visual*",
               "*vision_tower*", "*mm_projector*", "*router*"]}
CUTLASS = "prepare_nvfp4_moe_layer_for_fi_or_cutlass raises NotImplementedError"
SGLANG_ASSERT = "asserts 'The intermediate size required padding"


def _nvfp4(tmp_path, bundled: str) -> str:
    """The bundled base config with the ModelOpt NVFP4 quantization_config (the nested one, if any, dropped)."""
    from kvplan.sources import bundled_config, bundled_index

    raw = json.loads(json.dumps(bundled_config(bundled_index()[bundled])))
    if isinstance(raw.get("text_config"), dict):
        raw["text_config"].pop("quantization_config", None)
    raw["quantization_config"] = MODELOPT_NVFP4
    path = tmp_path / f"{bundled}-nvfp4.json"
    path.write_text(json.dumps(raw))
    return str(path)


def _kimi_k25(tmp_path) -> str:
    """tests/data/configs/kimi-k2.5-int4.json (moonshotai/Kimi-K2.5's config.json: model_type kimi_k25, text_config
    model_type kimi_k2, moe_intermediate_size 2048) with its INT4 text_config quantization swapped for NVFP4."""
    from pathlib import Path

    raw = json.loads((Path(__file__).resolve().parent / "data" / "configs" / "kimi-k2.5-int4.json").read_text())
    raw["text_config"].pop("quantization_config", None)
    raw["quantization_config"] = MODELOPT_NVFP4
    path = tmp_path / "kimi-k2.5-nvfp4.json"
    path.write_text(json.dumps(raw))
    return str(path)


def _tp(path: str, engine: str, gpu: str, tp: int, *extra: str) -> int:
    return planned_tp(engine, path, gpu, tp, *extra)


def _line(path: str, engine: str, gpu: str, tp: int, *extra: str) -> str:
    return refusal(engine, path, gpu, tp, *extra)


@pytest.mark.parametrize("bundled,expected", [
    ("qwen3-vl-30b-a3b", ("mlp.experts", 768)),
    ("qwen3.5-35b-a3b", ("mlp.experts", 512)),
    ("llama-4-scout", ("feed_forward.experts", 8192)),  # not intermediate_size_mlp 16,384
    ("llama-4-maverick", ("feed_forward.experts", 8192)),
    ("glm-4.7-flash", ("mlp.experts", 1536)),
    ("kimi-k2", ("mlp.experts", 2048)),
    ("deepseek-v3.2-exp", ("mlp.experts", 2048)),
    ("nemotron-3-nano-30b-a3b", None),  # relu2 experts, ungated (nemotron_h.py activation_without_mul): padded
    ("gpt-oss-20b", None),  # published as MXFP4, not NVFP4
])
def test_gated_experts_of_each_family(bundled, expected):
    from kvplan.engines.nvfp4_experts import gated_experts
    from kvplan.sources import bundled_config, bundled_index

    assert gated_experts(bundled_config(bundled_index()[bundled])) == expected


def test_a_wrapper_reads_its_text_configs_width_first():
    # vLLM builds the language model from hf_text_config (mllama4.py: config.text_config); a stray top-level field
    # of the wrapper is not the experts' width
    from kvplan.engines.nvfp4_experts import gated_experts

    raw = {"model_type": "llama4", "intermediate_size": 999,
           "text_config": {"model_type": "llama4_text", "intermediate_size": 8192, "intermediate_size_mlp": 16384}}
    assert gated_experts(raw) == ("feed_forward.experts", 8192)
    assert gated_experts({"model_type": "kimi_k25", "text_config": {"moe_intermediate_size": 2048}}) == (
        "mlp.experts", 2048)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_qwen3_vl_30b_nvfp4_tp8_refused_on_sm120(tmp_path, engine):
    # 768 / 8 = 96 a rank; 2 x 96 = 192 = 128 + 64: not a multiple of 128
    path = _nvfp4(tmp_path, "qwen3-vl-30b-a3b")
    line = _line(path, engine, "rtx-pro-6000", 8)
    if engine == "vllm":
        assert "ModelOpt NVFP4 experts' intermediate size of 768 into 96 a rank (768 / 8); on an SM 12.0 card" in line
        assert "2 x 96 = 192 is not a multiple of 128" in line and CUTLASS in line
    else:
        assert "96 of the intermediate 768 a rank (768 / 8)" in line and "2 x 96 = 192 to 256" in line
        assert SGLANG_ASSERT in line


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_qwen3_vl_30b_nvfp4_planned_where_aligned_or_padded(tmp_path, engine):
    # RTX PRO 6000 at TP 4: 768 / 4 = 192, 2 x 192 = 384 = 3 x 128; B200 at TP 8: TRT-LLM pads 96 to 128
    path = _nvfp4(tmp_path, "qwen3-vl-30b-a3b")
    assert _tp(path, engine, "rtx-pro-6000", 4) == 4
    assert _tp(path, engine, "b200", 8) == 8


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_qwen3_5_35b_nvfp4_tp16_refused_on_sm120_tp8_not(tmp_path, engine):
    # 512 / 16 = 32, 2 x 32 = 64 -> refused; 512 / 8 = 64, 2 x 64 = 128 -> planned; Qwen3.6-35B-A3B NVFP4 serves on
    # one RTX PRO 6000 (huggingface.co/Infatoshi/Qwen3.6-35B-A3B-NVFP4-FP8): TP 1, 2 x 512 = 1,024 = 8 x 128
    path = _nvfp4(tmp_path, "qwen3.5-35b-a3b")
    line = _line(path, engine, "rtx-pro-6000", 16)
    assert ("into 32 a rank (512 / 16)" if engine == "vllm" else "32 of the intermediate 512 a rank (512 / 16)") in line
    assert _tp(path, engine, "rtx-pro-6000", 8) == 8
    assert _tp(path, engine, "rtx-pro-6000", 1) == 1


def test_glm_4_7_flash_nvfp4_tp4_dp4_refused_on_sm120_under_vllm(tmp_path):
    # --tp 4 --data-parallel-size 4 without --ep splits the experts 16 ways: 1,536 / 16 = 96, 2 x 96 = 192 -> refused;
    # --tp 4 alone: 1,536 / 4 = 384, 2 x 384 = 768 = 6 x 128 -> planned
    path = _nvfp4(tmp_path, "glm-4.7-flash")
    line = _line(path, "vllm", "rtx-pro-6000", 4, "--dp", "4")
    assert "intermediate size of 1,536 into 96 a rank (1,536 / 16)" in line and "2 x 96 = 192" in line
    assert _tp(path, "vllm", "rtx-pro-6000", 4) == 4


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_llama4_maverick_nvfp4_tp8_planned_on_b200_and_sm120(tmp_path, engine):
    # 8,192 / 8 = 1,024, 2 x 1,024 = 2,048 = 16 x 128: aligned on every card (8,192 = 2^13: any split up to 128 is)
    path = _nvfp4(tmp_path, "llama-4-maverick")
    assert _tp(path, engine, "b200", 8) == 8
    assert _tp(path, engine, "rtx-pro-6000", 8) == 8


def test_kimi_k2_nvfp4_tp8_on_b200_planned_64_way_split_on_sm120_refused(tmp_path):
    # 8 x B200: 2,048 / 8 = 256 (aligned; TRT-LLM pads anyway); RTX PRO 6000 --tp 8 --dp 8 (experts split 64 ways):
    # 2,048 / 64 = 32, 2 x 32 = 64 -> refused
    path = _nvfp4(tmp_path, "kimi-k2")
    assert _tp(path, "vllm", "b200", 8) == 8
    line = _line(path, "vllm", "rtx-pro-6000", 8, "--dp", "8")
    assert "intermediate size of 2,048 into 32 a rank (2,048 / 64)" in line and "2 x 32 = 64" in line


def test_kimi_k25_nvfp4_reads_the_nested_width(tmp_path):
    # model_type kimi_k25: the width is text_config's 2,048; TP 4 on B200 (the published split): 512 a rank, planned;
    # --tp 8 --dp 8 on the RTX PRO 6000: 2,048 / 64 = 32, 2 x 32 = 64 -> refused
    path = _kimi_k25(tmp_path)
    assert _tp(path, "vllm", "b200", 4) == 4
    line = _line(path, "vllm", "rtx-pro-6000", 8, "--dp", "8")
    assert "intermediate size of 2,048 into 32 a rank (2,048 / 64)" in line


def test_deepseek_v3_2_nvfp4_64_way_split_refused_on_sm120(tmp_path):
    # DeepseekV2MoE as DeepSeek-V3's: 2,048 / 64 = 32, 2 x 32 = 64 -> refused; 2,048 / 16 = 128 -> 256, planned
    path = _nvfp4(tmp_path, "deepseek-v3.2-exp")
    assert "into 32 a rank (2,048 / 64)" in _line(path, "vllm", "rtx-pro-6000", 8, "--dp", "8")



def test_qwen3_vl_compressed_tensors_nvfp4_through_the_wrapper_prefix(tmp_path):
    # the "Linear" group matches "language_model.model.layers.0.mlp.experts.0.gate_proj" and the other spellings
    # alike (vLLM: CompressedTensorsW4A4Nvfp4MoEMethod, the same oracle): 96 a rank refused on SM 12.0. SGLang on an
    # H100 (SM 9.0): CompressedTensorsW4A16Nvfp4MoE (W4A4 below SM 10.0) needs p % 64: 96 % 64 = 32 -> ValueError
    from kvplan.sources import bundled_config, bundled_index

    path = tmp_path / "qwen3-vl-30b-a3b-ct-nvfp4.json"
    path.write_text(json.dumps(dict(bundled_config(bundled_index()["qwen3-vl-30b-a3b"]),
                                    quantization_config=ct_nvfp4(True, ("re:.*visual.*",)))))
    assert "compressed-tensors NVFP4 experts' intermediate size of 768 into 96 a rank (768 / 8)" in _line(
        str(path), "vllm", "rtx-pro-6000", 8)
    assert "'NVFP4 Marlin MoE requires intermediate_size_per_partition % 64 == 0, got 96.'" in _line(
        str(path), "sglang", "h100-sxm", 8)
    assert _tp(str(path), "vllm", "rtx-pro-6000", 4) == 4  # 192 a rank: 2 x 192 = 384 = 3 x 128


def test_qwen3_vl_30b_modelopt_nvfp4_tp8_on_h100_under_sglang(tmp_path):
    # SM 9.0: FP4 Marlin, gated experts unpadded. p = 768 / 8 = 96, hidden 2,048: the w13 repack (K 2,048 % 16,
    # N 2 x 96 = 192 % 64) and w2's (K 96 % 16, N 2,048 % 64) pass; the first forward's w13 gemm needs N % 128:
    # 192 = 128 + 64 -> 'Invalid thread config'. TP 4: p 192, N 384 = 3 x 128, w2 K 192 % 64 = 0 -> planned
    path = _nvfp4(tmp_path, "qwen3-vl-30b-a3b")
    assert "'Invalid thread config' for MKN = [M, 2048, 192]" in _line(path, "sglang", "h100-sxm", 8)
    assert _tp(path, "sglang", "h100-sxm", 4) == 4
