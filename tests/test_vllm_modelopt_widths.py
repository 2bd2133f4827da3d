"""vLLM 0.34's alignment checks of ModelOpt checkpoints at a TP split (kvplan.engines.vllm_widths). Read in the vllm
0.34.0 wheel (vllm/model_executor/layers/quantization/modelopt.py): ModelOptLinearMethod.create_weights hands every
linear layer's input per rank to the weight scheme resolve() picks by quant_algo, and

- KNvfp4Static.create_weights (NVFP4, W4A16_NVFP4): input_size_per_partition % 16 != 0 -> ValueError("Unsupported
  model when in features size is not multiple of 16");
- KFp8Block128.create_weights (FP8_PB_WO): in_ % 128 != 0 -> ValueError(f"FP8_PB_WO requires in divisible by 128,
  got {in_}");
- KMxfp8Static.create_weights (MXFP8): % MXFP8_BLOCK_SIZE (32, utils/mxfp8_utils.py) -> ValueError(f"MXFP8 requires
  input size divisible by 32, got {n}"); ModelOptMxFp8FusedMoE.create_weights the same of the experts'
  intermediate_size_per_partition ("MXFP8 MoE requires intermediate_size_per_partition divisible by 32, got N.").

The layers split by input are the RowParallelLinear ones: down_proj (input intermediate_size / tp) and the attention's
o_proj (heads x head_dim / tp). A module ModelOpt's exclude list names is served unquantized (get_quant_method:
UnquantizedLinearMethod), unchecked. MXFP4 (gpt-oss: mxfp4.py GptOssMxfp4MoEMethod.maybe_roundup_sizes,
fused_moe/oracle/mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size) pads the experts' width a rank instead
of refusing it. Every width below is worked by hand; the configs named "constructed" are real shapes with one width
changed to make a split fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan_inprocess import estimate_json, refused_line, bundled_variant

VLLM = ("--gpu", "h200", "--context", "4k", "--engine", "vllm")
# nvidia/Qwen3-32B-NVFP4's hf_quant_config.json (tests/data/hf_quant_config, see tests/test_hf_quant_config.py):
# NVFP4, group 16, exclude_modules ["lm_head"]
NVFP4_FILE = Path(__file__).resolve().parent / "data" / "hf_quant_config" / "qwen3-32b-nvfp4.json"
NVFP4 = json.loads(NVFP4_FILE.read_text())


def _folder(tmp_path, bundled: str, quant: dict, name: str = "ckpt", **fields) -> str:
    """A checkpoint folder as ModelOpt up to 0.29 exports it: config.json without a quantization_config and
    hf_quant_config.json beside it."""
    from kvplan.sources import bundled_config, bundled_index

    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(dict(bundled_config(bundled_index()[bundled]), **fields)))
    (folder / "hf_quant_config.json").write_text(json.dumps(quant))
    return str(folder)


def test_nvfp4_down_proj_input_a_rank_not_a_multiple_of_16_refused(tmp_path):
    # constructed: Llama-3.1-8B (32 heads x 128: o_proj 4,096 / 2 = 2,048 = 128 x 16, fine) with intermediate_size
    # 14,344 = 14,336 + 8 under nvidia's NVFP4 hf_quant_config.json: TP 2 -> down_proj 7,172 inputs a rank,
    # 7,172 = 448 x 16 + 4 -> KNvfp4Static's ValueError; TP 8 -> 1,793 (odd) likewise
    path = _folder(tmp_path, "llama-3.1-8b", NVFP4, intermediate_size=14344)
    line = refused_line(path, *VLLM, "--tp", "2")
    assert "ModelOpt NVFP4 MLP down_proj (llama.py LlamaMLP) into 7,172 inputs a rank (14,344 / 2)" in line
    assert "not a multiple of 16: 'Unsupported model when in features size is not multiple of 16'" in line
    assert "modelopt.py KNvfp4Static.create_weights" in line
    assert "into 1,793 inputs a rank" in refused_line(path, *VLLM, "--tp", "8")
    # the same widths with every down_proj excluded (served unquantized, unchecked): planned
    kept = dict(NVFP4, quantization=dict(NVFP4["quantization"], exclude_modules=["lm_head", "*mlp.down_proj"]))
    excluded = _folder(tmp_path, "llama-3.1-8b", kept, "kept", intermediate_size=14344)
    assert estimate_json(excluded, *VLLM, "--tp", "2")["capacity"]["tp"] == 2


def test_fp8_pb_wo_down_proj_and_o_proj_need_128_a_rank(tmp_path):
    # ModelOpt FP8_PB_WO (config.json layout: quant_method modelopt, quant_algo, ignore). Qwen2-72B's
    # intermediate_size 29,568 = 231 x 128 on Qwen2.5-7B (28 heads x 128: o_proj 3,584 / 2 = 1,792 = 14 x 128):
    # TP 2 -> 14,784 = 115 x 128 + 64 -> "FP8_PB_WO requires in divisible by 128, got 14784". kvplan does not size
    # FP8_PB_WO weights: given (--weights)
    weights = ("--weights", "16GB")
    pb_wo = {"quant_method": "modelopt", "quant_algo": "FP8_PB_WO", "ignore": ["lm_head"]}
    path = bundled_variant(tmp_path, "qwen2.5-7b", intermediate_size=29568, quantization_config=pb_wo)
    line = refused_line(path, *VLLM, *weights, "--tp", "2")
    assert "'FP8_PB_WO requires in divisible by 128, got 14784'" in line and "KFp8Block128.create_weights" in line
    # constructed: Llama-3.1-8B with 28 query heads of 64 (head_dim 64) and 4 KV heads: o_proj input 28 x 64 =
    # 1,792; TP 4 -> 7 heads, 448 inputs a rank = 3 x 128 + 64 (the MLP's 14,336 / 4 = 3,584 = 28 x 128 is fine;
    # the attention is built first); TP 2 -> 896 = 7 x 128 and 7,168 = 56 x 128: planned
    heads = bundled_variant(tmp_path, "llama-3.1-8b", "heads.json", num_attention_heads=28, num_key_value_heads=4,
                    head_dim=64, quantization_config=pb_wo)
    line = refused_line(heads, *VLLM, *weights, "--tp", "4")
    assert "attention o_proj (llama.py LlamaAttention.o_proj) into 448 inputs a rank (1,792 / 4)" in line
    assert "got 448'" in line
    assert estimate_json(heads, *VLLM, *weights, "--tp", "2")["capacity"]["tp"] == 2


def test_mxfp8_experts_need_32_a_rank(tmp_path):
    # constructed: Qwen3-30B-A3B (moe_intermediate_size 768: TP 8 -> 96 = 3 x 32, fine) with 784 under ModelOpt
    # MXFP8: TP 8 -> 98 a rank = 3 x 32 + 2 -> ModelOptMxFp8FusedMoE's ValueError. Under --ep the experts are
    # whole: 784 = 24 x 32 + 16, refused as well
    mxfp8 = {"quant_method": "modelopt", "quant_algo": "MXFP8", "ignore": ["lm_head", "*mlp.gate"]}
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", moe_intermediate_size=784, quantization_config=mxfp8)
    line = refused_line(path, *VLLM, "--tp", "8")
    assert "MXFP8 experts' intermediate size of 784 into 98 a rank (784 / 8)" in line
    assert "'MXFP8 MoE requires intermediate_size_per_partition divisible by 32, got 98.'" in line
    assert "got 784." in refused_line(path, *VLLM, "--tp", "8", "--ep")
    real = bundled_variant(tmp_path, "qwen3-30b-a3b", "real.json", quantization_config=mxfp8)
    assert estimate_json(real, *VLLM, "--tp", "8")["capacity"]["tp"] == 8


def test_nvfp4_shared_expert_down_proj_checked(tmp_path):
    # constructed: Qwen2-57B-A14B (28 heads: TP 4 -> 7; routed experts 2,560 / 4 = 640) with a shared expert of
    # 20,520 (published 20,480 = 1,280 x 16): TP 4 -> 5,130 = 320 x 16 + 10 -> KNvfp4Static on
    # mlp.shared_expert.down_proj
    path = _folder(tmp_path, "qwen2-57b-a14b", NVFP4, shared_expert_intermediate_size=20520)
    line = refused_line(path, *VLLM, "--tp", "4")
    assert "ModelOpt NVFP4 shared experts' down_proj" in line and "into 5,130 inputs a rank (20,520 / 4)" in line


@pytest.mark.parametrize("bundled, fields, tps", [
    # nvidia/Llama-3.1-8B-Instruct-FP4 / Llama-3.1-70B-Instruct-FP4 (NVFP4, exclude lm_head, the layout of the
    # Qwen3-32B file): 14,336 / 8 = 1,792 = 112 x 16, 28,672 / 8 = 3,584 = 224 x 16; o_proj 4,096 / 8 = 512,
    # 8,192 / 8 = 1,024
    ("llama-3.1-8b", {}, (2, 4, 8)),
    ("llama-3.1-70b", {}, (2, 4, 8)),
    # nvidia/Qwen3-32B-NVFP4 (Qwen3-32B: hidden 5,120, intermediate 25,600, 64 layers, 64 heads of 128, 8 KV
    # heads; qwen3-8b's family): 25,600 / 8 = 3,200 = 200 x 16, o_proj 8,192 / 8 = 1,024
    ("qwen3-8b", {"hidden_size": 5120, "intermediate_size": 25600, "num_hidden_layers": 64,
                  "num_attention_heads": 64}, (2, 4, 8)),
])
def test_published_nvfp4_checkpoints_at_their_tp_are_planned(tmp_path, bundled, fields, tps):
    path = _folder(tmp_path, bundled, NVFP4, **fields)
    for tp in tps:
        assert estimate_json(path, "--gpu", "b200", "--context", "4k", "--engine", "vllm",
                             "--tp", str(tp))["capacity"]["tp"] == tp


def test_gpt_oss_120b_mxfp4_at_tp_8_is_planned():
    # openai/gpt-oss-120b (bundled, quant_method mxfp4): experts 2,880 / 8 = 360 a rank, not a multiple of the
    # MXFP4 block 32, which GptOssMxfp4MoEMethod rounds up (mxfp4_round_up_hidden_size_and_intermediate_size)
    # rather than refuses; 2,880 % 8 = 0 for FusedMoEConfig's assert. Served publicly at TP 8.
    assert estimate_json("gpt-oss-120b", *VLLM, "--tp", "8")["capacity"]["tp"] == 8
