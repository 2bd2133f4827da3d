"""vLLM 0.34's text widths a TP size cannot split (kvplan.engines.vllm_widths): the dense MLP, the routed experts, FP8
blocks. Read in the vllm 0.34.0 wheel (vllm/model_executor/...): layers/linear.py MergedColumnParallelLinear.__init__
asserts every output size % tp_size == 0 (qwen2.py Qwen2MLP.gate_up_proj of config.intermediate_size);
fused_moe/config.py FusedMoEConfig.__post_init__ asserts intermediate_size % tp_size == 0, tp_size being tp x dp
without --enable-expert-parallel and 1 with it (FusedMoEParallelConfig.make); FP8 block [128, 128]: the row-parallel
down_proj's input per rank must be a multiple of block_k (quantization/utils/fp8_utils.py validate_fp8_block_shape),
and the experts' intermediate per rank of the blocks unless fused_moe/oracle/fp8.py refine_fp8_moe_block_shape finds
gcd(128, 128, per rank, hidden) >= 32 (validate_fp8_block_shape_moe otherwise). GPTQ's kernel list ends in
HummingLinearKernel (kernels/linear/__init__.py _POSSIBLE_KERNELS, humming.py can_implement), so a GPTQ group a rank
splits is not refused in 0.34. Every value asserted below is worked by hand from those rules.
"""

from __future__ import annotations

from kvplan_inprocess import estimate_json, refused_line, bundled_variant

VLLM = ("--gpu", "h200", "--context", "4k", "--engine", "vllm")
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}


def test_dense_mlp_width_refused_where_tp_does_not_divide_it(tmp_path):
    # Qwen2.5-7B (28 query / 4 KV heads: TP 4 gives 7 and 1) with intermediate_size 18,950 = 2 x 9,475:
    # 18,950 % 4 = 2 -> Qwen2MLP.gate_up_proj's assert; TP 2: 9,475 a rank
    path = bundled_variant(tmp_path, "qwen2.5-7b", intermediate_size=18950)
    line = refused_line(path, *VLLM, "--tp", "4")
    assert "MLP intermediate_size of 18,950 over TP 4" in line and "18,950 % 4 = 2" in line
    assert "qwen2.py Qwen2MLP.gate_up_proj" in line and "MergedColumnParallelLinear" in line
    assert estimate_json(path, *VLLM, "--tp", "2")["capacity"]["tp"] == 2


def test_fp8_block_down_proj_refused_qwen2_72b_width(tmp_path):
    # Qwen2-72B's intermediate_size 29,568 (= 231 x 128) under FP8 block [128, 128]: TP 2 -> 14,784 a rank,
    # 14,784 = 115 x 128 + 64; TP 4 -> 7,392 = 57 x 128 + 96: validate_fp8_block_shape's row-parallel check on
    # down_proj (gate_up_proj's mismatch is allowed). 29,696 = 232 x 128: TP 4 -> 7,424 = 58 x 128, accepted
    path = bundled_variant(tmp_path, "qwen2.5-7b", intermediate_size=29568, quantization_config=FP8_BLOCK)
    line = refused_line(path, *VLLM, "--tp", "2")
    assert "'Weight input_size_per_partition = 14784 is not divisible by weight quantization block_k = 128.'" in line
    assert "validate_fp8_block_shape" in line
    assert "input_size_per_partition = 7392 is not divisible" in refused_line(path, *VLLM, "--tp", "4")
    ok = bundled_variant(tmp_path, "qwen2.5-7b", "ok.json", intermediate_size=29696, quantization_config=FP8_BLOCK)
    assert estimate_json(ok, *VLLM, "--tp", "4")["capacity"]["tp"] == 4


def test_gptq_group_split_by_tp_is_not_refused_in_0_34(tmp_path):
    # GPTQ int4 group 128 at 29,568: TP 2 gives 14,784 % 128 = 64 a rank, which Marlin refuses, but 0.34's kernel
    # list goes on to HummingLinearKernel (CUDA SM 7.5+, any 16-bit-activation layer): planned, not refused
    gptq = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
    path = bundled_variant(tmp_path, "qwen2.5-7b", intermediate_size=29568, torch_dtype="float16", quantization_config=gptq)
    assert estimate_json(path, *VLLM, "--tp", "2")["capacity"]["tp"] == 2


def test_expert_width_refused_unless_ep(tmp_path):
    # Qwen3-30B-A3B (32 query / 4 KV heads) with moe_intermediate_size 770: TP 4 -> 770 % 4 = 2, FusedMoEConfig's
    # assert; TP 2 -> 385; --tp 2 --dp 2 without --ep splits the experts over 4 (770 % 4 = 2); --ep: whole experts
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", moe_intermediate_size=770)
    line = refused_line(path, *VLLM, "--tp", "4")
    assert "routed expert's intermediate size of 770 over TP 4" in line and "770 % 4 = 2" in line
    assert "FusedMoEConfig.__post_init__" in line and "--ep" in line
    assert "over TP 2 x DP 2 (no --ep)" in refused_line(path, *VLLM, "--tp", "2", "--dp", "2")
    assert estimate_json(path, *VLLM, "--tp", "2")["capacity"]["tp"] == 2
    assert estimate_json(path, *VLLM, "--tp", "4", "--ep")["capacity"]["tp"] == 4


def test_fp8_block_experts_refined_or_refused(tmp_path):
    # Qwen3-30B-A3B (hidden 2,048) FP8 block [128, 128]: moe_intermediate 768 at TP 4 -> 192 = 1.5 x 128, but
    # gcd(128, 128, 192, 2,048) = 64 >= 32: the blocks are refined to 64 x 64, accepted. moe_intermediate 1,408 at
    # TP 8 -> 176: gcd(128, 128, 176, 2,048) = 16 < 32 -> validate_fp8_block_shape_moe refuses (176 % 128 = 48);
    # at TP 4 -> 352: gcd = 32, refined, accepted
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", quantization_config=FP8_BLOCK)
    assert estimate_json(path, *VLLM, "--tp", "4")["capacity"]["tp"] == 4
    wide = bundled_variant(tmp_path, "qwen3-30b-a3b", "wide.json", moe_intermediate_size=1408, quantization_config=FP8_BLOCK)
    line = refused_line(wide, *VLLM, "--tp", "8")
    assert ("'The output_size of gate's and up's weight = 176 is not divisible by weight quantization block_n = "
            "128.'") in line and "= 16 < 32" in line
    assert estimate_json(wide, *VLLM, "--tp", "4")["capacity"]["tp"] == 4


def test_fp8_block_dense_first_layer_of_a_moe(tmp_path):
    # GLM-4.5-Air (glm4_moe: 96 query / 8 KV heads, first_k_dense_replace 1, intermediate_size 10,944, experts
    # 1,408) under FP8 block [128, 128] at TP 8: layer 0's Glm4MoeMLP down_proj gets 10,944 / 8 = 1,368 =
    # 10 x 128 + 88 inputs, refused before any MoE layer
    path = bundled_variant(tmp_path, "glm-4.5-air", quantization_config=FP8_BLOCK)
    line = refused_line(path, *VLLM, "--tp", "8")
    assert "glm4_moe.py Glm4MoeMLP" in line and "input_size_per_partition = 1368 is not divisible" in line


def test_fit_screens_fp8_block_split(tmp_path):
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    # 29,568 under FP8 block: TP 2 (14,784) and TP 4 (7,392) refused as above; TP 1 whole; TP 8 is the heads'
    path = bundled_variant(tmp_path, "qwen2.5-7b", intermediate_size=29568, quantization_config=FP8_BLOCK)
    req = FitRequest(path, 4096, 1, tuple(parse_gpus("h200")), max_gpus=4, engine="vllm")
    result = search(req, verify_top=1)
    by_split = {(c.tp, c.pp): c for c in result.candidates if c.kv_dtype == "bf16"}
    for tp in (2, 4):
        c = by_split[(tp, 1)]
        assert not c.ok and c.constraint == "split" and "validate_fp8_block_shape" in c.reason
    assert by_split[(1, 1)].ok and by_split[(1, 2)].ok
    assert all(c.tp == 1 for c in result.passing)
