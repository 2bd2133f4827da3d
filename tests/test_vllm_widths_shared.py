"""vLLM 0.34's shared-expert, compressed-tensors block-FP8 and more dense-family widths a TP size cannot split
(kvplan.engines.vllm_widths). Read in the vllm 0.34.0 wheel (vllm/model_executor/...):

- deepseek_v2.py DeepseekV2MoE builds shared_experts as a DeepseekV2MLP of moe_intermediate_size x n_shared_experts
  (MergedColumnParallelLinear gate_up_proj, RowParallelLinear down_proj over the TP group), with
  disable_tp=is_sequence_parallel (config/parallel.py use_sequence_parallel_moe: EP, tp > 1, dp > 1 under the default
  all2all backend allgather_reducescatter); step3p5.py FusedMoEBlock.share_expert a Step3p5MLP of share_expert_dim,
  always split. Under FP8 block [128, 128] (fp8.py) their down_proj's input per rank must be a multiple of block_k
  (quantization/utils/fp8_utils.py validate_fp8_block_shape).
- compressed-tensors block FP8 (compressed_tensors_w8a8_fp8.py CompressedTensorsW8A8Fp8.create_weights) calls the same
  validate_fp8_block_shape, but linear.py _maybe_allow_fp8_block_shape_mismatch reads quant_config.weight_block_size,
  which CompressedTensorsConfig lacks: the merged gate_up_proj is checked against block_n too; its experts
  (compressed_tensors_moe_w8a8_fp8.py CompressedTensorsW8A8Fp8MoEMethod.create_weights) call
  validate_fp8_block_shape_moe with no refinement (fp8.py's refine_fp8_moe_block_shape is not on that path).
- exaone4.py Exaone4GatedMLP, internlm2.py InternLM2MLP: gate_up_proj a MergedColumnParallelLinear of
  config.intermediate_size (linear.py MergedColumnParallelLinear.__init__ asserts every output size % tp_size == 0).
Every value asserted below is worked by hand from those rules.
"""

from __future__ import annotations

import json

from kvplan_inprocess import estimate_json, refused_line, bundled_variant

VLLM = ("--gpu", "h200", "--context", "4k", "--engine", "vllm")
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
CT_BLOCK = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
            "config_groups": {"group_0": {
                "targets": ["Linear"],
                "weights": {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128],
                            "dynamic": False, "symmetric": True},
                "input_activations": {"num_bits": 8, "type": "float", "strategy": "group", "group_size": 128,
                                      "dynamic": True, "symmetric": True}}}}


def test_deepseek_v3_shared_expert_fp8_block_split_unless_sequence_parallel(tmp_path):
    # DeepSeek-V3 (FP8 block [128, 128], 128 MLA heads, hidden 7,168, dense intermediate 18,432, n_shared_experts 1)
    # with moe_intermediate_size 1,536: at TP 8 the dense layers get 18,432 / 8 = 2,304 = 18 x 128 (fine), the
    # shared expert 1,536 x 1 / 8 = 192 = 128 + 64 inputs a rank on its down_proj -> refused (before the routed
    # experts, whose 192 gcd(128, 128, 192, 7,168) = 64 >= 32 refines). TP 4: 4,608 = 36 x 128, 384 = 3 x 128: fine.
    # --tp 8 --dp 2 without --ep: the shared expert still split over TP 8 (192); with --ep (sequence-parallel MoE:
    # EP, tp 8 > 1, dp 2 > 1) DeepseekV2MLP gets disable_tp: whole, 1,536 = 12 x 128; experts whole under EP
    path = bundled_variant(tmp_path, "deepseek-v3", moe_intermediate_size=1536)
    line = refused_line(path, *VLLM, "--tp", "8")
    assert "shared experts' down_proj (deepseek_v2.py DeepseekV2MoE.shared_experts" in line
    assert "'Weight input_size_per_partition = 192 is not divisible by weight quantization block_k = 128.'" in line
    assert "input_size_per_partition = 192" in refused_line(path, *VLLM, "--tp", "8", "--dp", "2")
    assert estimate_json(path, *VLLM, "--tp", "4")["capacity"]["tp"] == 4
    assert estimate_json(path, *VLLM, "--tp", "8", "--dp", "2", "--ep")["capacity"]["tp"] == 8
    # an all2all backend outside use_sequence_parallel_moe's list (config/parallel.py: flashinfer_nvlink_two_sided)
    # runs no sequence-parallel MoE: DeepseekV2MLP keeps its TP split, 192 a rank again -> refused
    two_sided = refused_line(path, *VLLM, "--tp", "8", "--dp", "2", "--ep", "--all2all-backend",
                             "flashinfer_nvlink_two_sided")
    assert "input_size_per_partition = 192" in two_sided
    assert estimate_json(path, *VLLM, "--tp", "8", "--dp", "2", "--ep", "--all2all-backend",
                         "deepep_high_throughput")["capacity"]["tp"] == 8


def test_step35_flash_shared_expert(tmp_path):
    from tests.test_tables_step_more import STEP35_FLASH

    # Step-3.5-Flash's shape (share_expert_dim 1,280, moe_intermediate_size 1,280, hidden 4,096, dense intermediate
    # 11,264; 64 / 96 heads over 8 groups). bf16 at TP 4: 1,280 / 4 = 320, a whole share: vLLM builds it (SGLang's
    # rules are not these). Under FP8 block [128, 128] (a hypothetical checkpoint): 320 = 2 x 128 + 64 -> the
    # share_expert's down_proj is refused; TP 2: 640 = 5 x 128, experts 640, dense 5,632 = 44 x 128: fine
    bf16 = tmp_path / "step.json"
    bf16.write_text(json.dumps(STEP35_FLASH))
    assert estimate_json(str(bf16), *VLLM, "--tp", "4")["capacity"]["tp"] == 4
    fp8 = tmp_path / "step-fp8.json"
    fp8.write_text(json.dumps(dict(STEP35_FLASH, quantization_config=FP8_BLOCK)))
    line = refused_line(str(fp8), *VLLM, "--tp", "4")
    assert "step3p5.py FusedMoEBlock.share_expert (Step3p5MLP)" in line
    assert "input_size_per_partition = 320 is not divisible by weight quantization block_k = 128" in line
    assert estimate_json(str(fp8), *VLLM, "--tp", "2")["capacity"]["tp"] == 2


def test_compressed_tensors_block_fp8_checks_gate_up_and_refines_no_expert_block(tmp_path):
    # Qwen2-72B's intermediate 29,568 on Qwen2.5-7B's shape, compressed-tensors FP8 block [128, 128], TP 2: 14,784 =
    # 115 x 128 + 64 a rank; no mismatch allowance for the merged gate_up_proj -> its column check fires first
    dense = bundled_variant(tmp_path, "qwen2.5-7b", intermediate_size=29568, quantization_config=CT_BLOCK)
    line = refused_line(dense, *VLLM, "--tp", "2")
    assert "'Weight output_partition_size = 14784 is not divisible by weight quantization block_n = 128.'" in line
    assert "compressed_tensors_w8a8_fp8.py" in line
    # Qwen3-30B-A3B (experts 768, hidden 2,048) at TP 4: 192 a rank. fp8.py refines it to 64 x 64 (accepted,
    # test_vllm_widths.py); compressed-tensors refines nothing: 192 % 128 = 64 -> gate / up refused. TP 2: 384 = 3 x 128
    moe = bundled_variant(tmp_path, "qwen3-30b-a3b", "moe.json", quantization_config=CT_BLOCK)
    line = refused_line(moe, *VLLM, "--tp", "4")
    assert ("'The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = "
            "128.'") in line and "CompressedTensorsW8A8Fp8MoEMethod" in line
    assert estimate_json(moe, *VLLM, "--tp", "2")["capacity"]["tp"] == 2


def test_more_dense_families(tmp_path):
    # EXAONE-4.0-32B (exaone4: 40 query / 8 KV heads, intermediate 27,392 = 214 x 128) under FP8 block [128, 128]:
    # TP 8 -> 3,424 = 26 x 128 + 96, TP 4 -> 6,848 = 53 x 128 + 64: refused; TP 2 -> 13,696 = 107 x 128: fine
    exaone = bundled_variant(tmp_path, "exaone-4.0-32b", quantization_config=FP8_BLOCK)
    line = refused_line(exaone, *VLLM, "--tp", "8")
    assert "exaone4.py Exaone4GatedMLP" in line and "input_size_per_partition = 3424 is not divisible" in line
    assert "input_size_per_partition = 6848 is not divisible" in refused_line(exaone, *VLLM, "--tp", "4")
    assert estimate_json(exaone, *VLLM, "--tp", "2")["capacity"]["tp"] == 2
    # InternLM2.5-7B (32 query / 8 KV heads) with intermediate_size 14,338 = 2 x 7,169: 14,338 % 4 = 2 at TP 4
    internlm = bundled_variant(tmp_path, "internlm2.5-7b-chat", "internlm.json", intermediate_size=14338)
    line = refused_line(internlm, *VLLM, "--tp", "4")
    assert "internlm2.py InternLM2MLP.gate_up_proj" in line and "14,338 % 4 = 2" in line
