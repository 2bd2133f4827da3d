"""SGLang 0.5.23's text widths a TP size cannot split (kvplan.engines.sglang_widths), read in the wheel
(python/sglang/srt/...): layers/linear.py MergedColumnParallelLinear.__init__ asserts every output size % tp_size == 0;
layers/quantization/fp8.py Fp8LinearMethod.validate_block_quant_shapes wants each output partition of a merged
gate_up_proj (width / --tp) a multiple of block_n; Fp8MoEMethod.create_fp8_moe_weight_ wants the routed experts'
intermediate per MoE-TP rank (moe_tp = --tp / --ep-size) a multiple of block_n (no refinement, unlike vLLM 0.34), and
FusedMoE.__init__ pads it to 128 under flashinfer_trtllm, 0.5.23's default MoE runner for an fp8 DeepSeek / Qwen3-MoE
family checkpoint on an SM 10.x card (arg_groups/overrides.py, model_overrides/qwen3_moe.py). The shared experts
are an MLP over the whole --tp, whole under an a2a backend such as DeepEP. Every value asserted is worked by hand
from those rules, each against a public failure where one is cited.
"""

from __future__ import annotations

import json

from kvplan_inprocess import estimate_json, refused_line, bundled_variant

SGLANG = ("--gpu", "h200", "--context", "4k", "--engine", "sglang")
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}


def test_deepseek_r1_fp8_at_tp32_dense_mlp(tmp_path):
    # sgl-project/sglang#3345: DeepSeek-R1 / V3 FP8 (block [128, 128]) at TP 32: layer 0's dense DeepseekV2MLP of
    # 18,432 -> 18,432 / 32 = 576 = 4 x 128 + 64 a rank. TP 16: 1,152 = 9 x 128, experts 2,048 / 16 = 128: builds
    line = refused_line("deepseek-v3", *SGLANG, "--tp", "32")
    assert ("'Weight output_partition_size = 576 is not divisible by weight quantization block_n = 128.'" in line
            and "deepseek_v2.py DeepseekV2MLP.gate_up_proj" in line and "validate_block_quant_shapes" in line)
    assert estimate_json("deepseek-v3", *SGLANG, "--tp", "16")["capacity"]["tp"] == 16
    # --moe-dense-tp-size 1: the dense MLP whole (18,432 = 144 x 128); the routed experts (the fused shared expert
    # with them) 2,048 / 32 = 64 a rank: "output_size of gate's and up's weight = 64" (as sgl-project/sglang#10641)
    line = refused_line("deepseek-v3", *SGLANG, "--tp", "32", "--moe-dense-tp-size", "1")
    assert "'The output_size of gate's and up's weight = 64 is not divisible by weight quantization block_n = 128.'" \
        in line and "Fp8MoEMethod" in line and "--ep" in line
    # with --ep too the routed experts are whole (2,048 = 16 x 128), and the shared expert, unfused under EP on CUDA
    # (shared_experts_fusion_disable_reason), is a DeepseekV2MLP of 2,048 over 32: 64 a rank
    line = refused_line("deepseek-v3", *SGLANG, "--tp", "32", "--ep", "--moe-dense-tp-size", "1")
    assert "'Weight output_partition_size = 64 is not divisible" in line and "DeepseekV2MoE.shared_experts" in line


def test_glm47_fp8_at_tp32_experts_then_shared_then_deepep(tmp_path):
    # THUDM/slime#1796: GLM-4.7 FP8 at TP 32: moe_intermediate 1,536 / 32 = 48 a rank (dense 12,288 / 32 = 384 =
    # 3 x 128 passes). Without --ep the routed experts refuse first; with --ep (160 experts / 32 = 5 a GPU) they
    # are whole and the shared experts' Glm4MoeMLP (1,536 x 1) over 32 gives the issue's output_partition_size 48;
    # DeepEP builds the shared experts whole (the answer): it builds. TP 4: 1,536 / 4 = 384 = 3 x 128
    path = bundled_variant(tmp_path, "glm-4.7", quantization_config=FP8_BLOCK)
    assert "weight = 48 is not divisible by weight quantization block_n = 128" in refused_line(
        path, *SGLANG, "--tp", "32")
    line = refused_line(path, *SGLANG, "--tp", "32", "--ep")
    assert "'Weight output_partition_size = 48 is not divisible by weight quantization block_n = 128.'" in line
    assert "glm4_moe.py Glm4MoeMLP (Glm4MoeSparseMoeBlock.shared_experts)" in line
    assert estimate_json(path, *SGLANG, "--tp", "32", "--ep", "--moe-a2a-backend", "deepep")["capacity"]["tp"] == 32
    assert estimate_json(path, *SGLANG, "--tp", "4")["capacity"]["tp"] == 4


def test_step35_flash_share_expert(tmp_path):
    # sgl-project/sglang#26107: Step-3.5-Flash FP8 at TP 4, share_expert_dim 1,280 / 4 = 320 = 2 x 128 + 64. The
    # routed experts (moe_intermediate 1,280) are built first (Step3p5MoEMLP before share_expert): without --ep they
    # refuse at 320; with --ep they are whole and the share_expert Step3p5MLP gives the line. TP 2: 640
    cfg = {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 4096,
           "num_hidden_layers": 45, "num_attention_heads": 64, "num_attention_groups": 8, "head_dim": 128,
           "intermediate_size": 11264, "moe_intermediate_size": 1280, "share_expert_dim": 1280,
           "moe_num_experts": 288, "moe_top_k": 8, "vocab_size": 128896, "max_position_embeddings": 65536,
           "torch_dtype": "bfloat16", "quantization_config": FP8_BLOCK}
    path = tmp_path / "step.json"
    path.write_text(json.dumps(cfg))
    assert "weight = 320 is not divisible" in refused_line(str(path), *SGLANG, "--tp", "4")
    line = refused_line(str(path), *SGLANG, "--tp", "4", "--ep")
    assert "'Weight output_partition_size = 320 is not divisible by weight quantization block_n = 128.'" in line
    assert "Step3p5DecoderLayer.share_expert" in line
    assert estimate_json(str(path), *SGLANG, "--tp", "2", "--ep")["capacity"]["tp"] == 2


def test_width_2112_at_tp16_and_bare_assert(tmp_path):
    # inclusionAI/humming#69 (Kimi-K3 FP8, SGLang 0.5.17, TP 16): output_partition_size 2,112 = 16.5 x 128, i.e. a
    # merged width of 2,112 x 16 = 33,792; here on a DeepSeek-V3 dense MLP of that width (Kimi-K3's own config and
    # kimi_k3.py are not modelled), TP 8: 4,224 = 33 x 128
    path = bundled_variant(tmp_path, "deepseek-v3", intermediate_size=33792)
    assert "output_partition_size = 2112 is not divisible" in refused_line(path, *SGLANG, "--tp", "16")
    assert estimate_json(path, *SGLANG, "--tp", "8")["capacity"]["tp"] == 8
    # a bf16 Qwen2.5-7B with intermediate_size 18,950: 18,950 % 4 = 2 -> MergedColumnParallelLinear's assert
    dense = bundled_variant(tmp_path, "qwen2.5-7b", "dense.json", intermediate_size=18950)
    line = refused_line(dense, *SGLANG, "--tp", "4")
    assert "18,950 % 4 = 2" in line and "qwen2.py Qwen2MLP.gate_up_proj" in line
    assert estimate_json(dense, *SGLANG, "--tp", "2")["capacity"]["tp"] == 2


def test_sm100_flashinfer_trtllm_pads_qwen3_moe_experts(tmp_path):
    # Qwen3-30B-A3B FP8: moe_intermediate 768 / 8 = 96 a rank: H200 (SM 9.0, Triton runner) refuses; B200 (SM 10.0)
    # runs flashinfer_trtllm by default for Qwen3MoeForCausalLM, which pads 96 up to 128: builds
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", quantization_config=FP8_BLOCK)
    assert "weight = 96 is not divisible" in refused_line(path, *SGLANG, "--tp", "8")
    b200 = ("--gpu", "b200", *SGLANG[2:])
    assert estimate_json(path, *b200, "--tp", "8")["capacity"]["tp"] == 8



def test_sm100_flashinfer_trtllm_block_check_on_the_padded_width(tmp_path):
    # constructed: Qwen3-30B-A3B with FP8 blocks [96, 96] on a B200 (flashinfer_trtllm by default): moe_intermediate
    # 768 / 8 = 96 a rank, which FusedMoE.__init__ rounds up to 128 before Fp8MoEMethod.create_fp8_moe_weight_ checks
    # it, so SGLang raises on 128 (128 % 96 = 32), not on the unpadded 96 (a multiple of 96, which H200 builds)
    block96 = dict(FP8_BLOCK, weight_block_size=[96, 96])
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", quantization_config=block96)
    b200 = ("--gpu", "b200", *SGLANG[2:])
    line = refused_line(path, *b200, "--tp", "8")
    assert "'The output_size of gate's and up's weight = 128 is not divisible by weight quantization block_n = 96.'" \
        in line and "768 into 96 a rank (768 / 8), padded to 128" in line
    assert estimate_json(path, *SGLANG, "--tp", "8")["capacity"]["tp"] == 8

def test_fit_screens_sglang_split_per_card(tmp_path):
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    # GLM-4.7 FP8 on H200: TP 8 (1,536 / 8 = 192 = 128 + 64) refused by the experts' block check; TP 4 (384) fits
    path = bundled_variant(tmp_path, "glm-4.7", quantization_config=FP8_BLOCK)
    req = FitRequest(path, 4096, 1, tuple(parse_gpus("h200")), max_gpus=8, engine="sglang")
    result = search(req, verify_top=1)
    by_split = {(c.tp, c.pp): c for c in result.candidates if c.kv_dtype == "bf16" and c.dp == 1}
    c = by_split[(8, 1)]
    assert not c.ok and c.constraint == "split" and "weight = 192 is not divisible" in c.reason
    assert by_split[(4, 1)].ok
    assert all(c.tp != 8 for c in result.passing)
