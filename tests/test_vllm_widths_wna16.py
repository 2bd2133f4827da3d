"""vLLM 0.34's GPTQ / AWQ / compressed-tensors WNA16 routed experts at a TP split (kvplan.engines.vllm_widths_quant
wna16_experts), read in the wheel: auto_gptq.py / auto_awq.py get_quant_method keep Marlin MoE (tile-padded) where
marlin_utils.py check_moe_marlin_supports_layer(allow_tile_padding=True) holds (hidden % 128, intermediate per rank %
group_size), else fall back to moe_wna16.py MoeWNA16Method, whose create_weights halves the group while it does not
divide the intermediate per rank and asserts group_size >= 32; compressed_tensors_moe_wna16.py
CompressedTensorsWNA16MoEMethod.create_weights raises where group_size does not divide the intermediate per rank.
Every value is worked by hand from those rules.
"""

from __future__ import annotations

from kvplan_inprocess import bundled_variant, estimate_json, refused_line

GPTQ = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "quant_method": "gptq"}
AWQ = {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True}
CT_WNA16 = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None, "weights": {
                "num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True,
                "dynamic": False}}}}
VLLM = ("--gpu", "h100", "--context", "4k", "--engine", "vllm")


def _tp(path: str, tp: int) -> int:
    return estimate_json(path, *VLLM, "--tp", str(tp))["capacity"]["tp"]


def test_qwen3_30b_a3b_gptq_awq_served_at_2_4_8_refused_at_16(tmp_path):
    # Qwen3-30B-A3B: moe_intermediate_size 768, hidden 2,048 (= 16 x 128). TP 2: 384 = 3 x 128, Marlin MoE.
    # TP 4: 192 = 128 + 64 -> MoeWNA16Method, group 128 -> 64 (192 = 3 x 64): builds. TP 8: 96 -> 64 -> 32 (96 = 3 x
    # 32): builds (the published Qwen/Qwen3-30B-A3B-GPTQ-Int4 at TP 4 / 8; vllm-project/vllm#28829 padded them for
    # XPU, whose method has no such fallback). TP 16: 48 -> 64 -> 32 -> 16 < 32: AssertionError.
    for name, quant, what in (("g.json", GPTQ, "GPTQ"), ("a.json", AWQ, "AWQ")):
        path = bundled_variant(tmp_path, "qwen3-30b-a3b", name, quantization_config=quant, torch_dtype="float16")
        for tp in (2, 4, 8):
            assert _tp(path, tp) == tp
        line = refused_line(path, *VLLM, "--tp", "16")
        assert f"the {what} experts' intermediate size of 768 into 48 a rank (768 / 16)" in line
        assert "MoeWNA16Method" in line and "'assert group_size >= 32'" in line


def test_deepseek_v2_lite_and_mixtral_gptq(tmp_path):
    # DeepSeek-V2-Lite: moe_intermediate_size 1,408, hidden 2,048. TP 2: 704 = 5 x 128 + 64 -> group 64 (704 = 11 x
    # 64): builds; TP 4: 352 -> 64 (352 = 5 x 64 + 32) -> 32 (11 x 32): builds; TP 8: 176 = 5 x 32 + 16 -> 16: refused
    path = bundled_variant(tmp_path, "deepseek-v2-lite", "d.json", quantization_config=GPTQ, torch_dtype="float16")
    for tp in (2, 4):
        assert _tp(path, tp) == tp
    assert "intermediate size of 1,408 into 176 a rank (1,408 / 8)" in refused_line(path, *VLLM, "--tp", "8")
    # Mixtral-8x7B (intermediate 14,336, hidden 4,096): TP 8 gives 1,792 = 14 x 128: Marlin MoE, builds
    path = bundled_variant(tmp_path, "mixtral-8x7b", "m.json", quantization_config=GPTQ, torch_dtype="float16")
    assert _tp(path, 8) == 8


def test_compressed_tensors_wna16_experts_need_whole_groups(tmp_path):
    # no fallback here: TP 4 gives 192 = 128 + 64 a rank, not a multiple of group_size 128 -> ValueError;
    # TP 2: 384 = 3 x 128 builds
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", "c.json", quantization_config=CT_WNA16, torch_dtype="bfloat16")
    assert _tp(path, 2) == 2
    line = refused_line(path, *VLLM, "--tp", "4")
    assert "tensor-parallel partition (192) to be divisible by group_size (128)" in line
    assert "CompressedTensorsWNA16MoEMethod.create_weights" in line
