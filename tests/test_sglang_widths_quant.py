"""SGLang 0.5.23's per-rank alignment of weight-only kernels at a TP split (kvplan.engines.sglang_widths_quant), read
in the wheel: awq/awq.py AWQMarlinConfig.get_quant_method judges Marlin on the whole layer (check_marlin_supports_layer
runs in LinearBase.__init__ before the per-rank sizes exist), then AWQMarlinLinearScheme.create_weights calls
marlin_utils.py verify_marlin_supports_shape on the rank's sizes (output % min_thread_n 64, input % min_thread_k 128);
gptq_marlin checks no shape at build, but gptq_marlin_repack.cuh refuses size_k % 16 / size_n % 64 after loading and
gptq_marlin.cuh has no thread tile for K % 64 with N % 128 or K % 128 with N % 64 at the first forward (run at
start-up: decode CUDA graph capture or the server warmup), after gptq_marlin_gemm's size_k % num_groups check (a
rank holds K // group_size scale rows without desc_act); FP8 weights on
an SM 8.0-8.8 card go through the same repack (marlin_utils_fp8.py prepare_fp8_layer_for_marlin). Every value below
is worked by hand from those rules, each against a public figure where one is cited.
"""

from __future__ import annotations

import json

from kvplan_inprocess import estimate_json, refused_line, bundled_variant

AWQ = {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq", "version": "gemm",
       "zero_point": True}  # Qwen/Qwen2.5-72B-Instruct-AWQ's quantization_config
GPTQ = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "static_groups": False, "true_sequential": True,
        "damp_percent": 0.01, "quant_method": "gptq"}  # Qwen2-72B-Instruct-GPTQ-Int4's (AutoGPTQ) fields
H100 = ("--gpu", "h100", "--context", "4k", "--engine", "sglang")
A100 = ("--gpu", "a100", "--context", "4k", "--engine", "sglang")


def _qwen72(tmp_path, quant: dict, intermediate: int, name: str) -> str:
    # Qwen2-72B-Instruct's text shape (hidden 8,192, 64 heads / 8 KV heads, 80 layers) on the qwen2.5-7b spec
    return bundled_variant(tmp_path, "qwen2.5-7b", name, hidden_size=8192, intermediate_size=intermediate,
                   num_attention_heads=64, num_key_value_heads=8, num_hidden_layers=80, vocab_size=152064,
                   torch_dtype="float16", quantization_config=quant)


def test_qwen2_72b_awq_unpadded_refused_at_tp_2_4_8(tmp_path):
    # Qwen2-72B's intermediate 29,568 = 231 x 128: the whole down_proj passes Marlin's check, so awq_marlin builds it
    # and verify_marlin_supports_shape sees the rank's share. TP 2: 14,784 = 115 x 128 + 64 (the figure of
    # vllm-project/vllm#13640, Qwen2.5-VL-72B-AWQ at TP 2, the same Marlin check); TP 4: 7,392 = 57 x 128 + 96.
    path = _qwen72(tmp_path, AWQ, 29568, "q72awq.json")
    line = refused_line(path, *H100, "--tp", "2")
    assert "'Weight input_size_per_partition = 14784 is not divisible by min_thread_k = 128.'" in line
    assert "qwen2.py Qwen2MLP.down_proj" in line and "AWQMarlinLinearScheme.create_weights" in line
    assert "input_size_per_partition = 7392 is not divisible by min_thread_k = 128" in refused_line(
        path, *H100, "--tp", "4")
    # TP 8: the gate_up_proj first (built before down_proj): 2 x 29,568 / 8 = 7,392 outputs = 115 x 64 + 32
    line = refused_line(path, *H100, "--tp", "8")
    assert "'Weight output_size_per_partition = 7392 is not divisible by  min_thread_n = 64.'" in line
    assert "Qwen2MLP.gate_up_proj" in line
    # an AutoAWQ-style config (w_bit / q_group_size): awq.py is_awq_marlin_compatible reads only bits / group_size,
    # so plain AWQ serves it (AWQConfig.from_config takes w_bit): TP 2 down_proj input 14,784 = 115 x 128 + 64 is not
    # a multiple of group_size 128 -> awq_linear.py's 'The input size is not aligned ...', not Marlin's message
    autoawq = {"w_bit": 4, "q_group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True}
    line = refused_line(_qwen72(tmp_path, autoawq, 29568, "q72autoawq.json"), *H100, "--tp", "2")
    assert "'The input size is not aligned with the quantized weight shape.'" in line and "14,784 inputs" in line
    # Qwen re-released the 72B AWQ / GPTQ checkpoints padded to 29,696 (QwenLM/Qwen3-VL#230, #231), the width of
    # Qwen2.5-72B-Instruct-AWQ: TP 4: down 7,424 = 58 x 128, gate_up 14,848 = 232 x 64; TP 8: 3,712 = 29 x 128,
    # gate_up 7,424 = 116 x 64
    path = _qwen72(tmp_path, AWQ, 29696, "q25awq.json")
    for tp in (4, 8):
        assert estimate_json(path, *H100, "--tp", str(tp))["capacity"]["tp"] == tp
    # Qwen3-32B-AWQ (hidden 5,120, intermediate 25,600): TP 2: 12,800 = 100 x 128; TP 4: 6,400 = 50 x 128; the
    # gate_up_proj 25,600 / 12,800 outputs a rank, multiples of 64
    qwen = bundled_variant(tmp_path, "qwen3-8b", "q32awq.json", hidden_size=5120, intermediate_size=25600,
                   num_attention_heads=64, num_key_value_heads=8, num_hidden_layers=64, quantization_config=AWQ)
    for tp in (2, 4):
        assert estimate_json(qwen, *H100, "--tp", str(tp))["capacity"]["tp"] == tp


def test_qwen2_72b_gptq_marlin_repack_and_tile(tmp_path):
    # a GPTQ-Int4 Llama-3.1-8B (intermediate 14,336, hidden 4,096): TP 2 / 4 / 8 give down_proj 7,168 / 3,584 /
    # 1,792 inputs, all multiples of 128 (repack % 16 and a (128, 64) tile); gate_up 14,336 / 7,168 / 3,584
    # outputs (2 x 14,336 / TP), multiples of 64, with K 4,096 = 32 x 128: builds
    llama = bundled_variant(tmp_path, "llama-3.1-8b", "l8gptq.json", quantization_config=GPTQ, torch_dtype="float16")
    for tp in (2, 4, 8):
        assert estimate_json(llama, *H100, "--tp", str(tp))["capacity"]["tp"] == tp
    # gptq_marlin (4-bit, sym, group 128, desc_act given, an SM 9.0 card) on the unpadded 29,568:
    path = _qwen72(tmp_path, GPTQ, 29568, "q72gptq.json")
    # TP 8: gate_up_proj 2 x 29,568 / 8 = 7,392 outputs, 7,392 % 64 = 32: gptq_marlin_repack.cuh after loading
    line = refused_line(path, *H100, "--tp", "8")
    assert "'size_n = 7392 is not divisible by tile_n_size = 64'" in line and "gptq_marlin_repack.cuh" in line
    # TP 4: repacks (gate_up 14,784 = 231 x 64; down_proj K 7,392 = 462 x 16), but without desc_act the rank holds
    # 7,392 // 128 = 57 scale rows (7,392 = 57 x 128 + 96; gptq_marlin.py create_weights) and gptq_marlin.cuh
    # gptq_marlin_gemm wants size_k % num_groups: 7,392 = 129 x 57 + 39 -> fails at start-up's first forward
    line = refused_line(path, *H100, "--tp", "4")
    assert "'size_k = 7392, is not divisible by num_groups = 57' at start-up's first forward" in line
    assert "7,392 in x 8,192 out" in line and "fails before it serves" in line
    # TP 2: K 14,784 = 115 x 128 + 64 -> 115 scale rows, 14,784 = 128 x 115 + 64: refused the same way (the tile
    # alone, K 14,784 = 231 x 64 with N 8,192, would run)
    assert "'size_k = 14784, is not divisible by num_groups = 115'" in refused_line(path, *H100, "--tp", "2")
    # with desc_act the scales stay whole on every rank and the down_proj's K is not full (marlin_utils.py
    # marlin_repeat_scales_on_all_ranks / marlin_is_k_full): group_size 0, no num_groups check. TP 4: K 7,392 =
    # 115 x 64 + 32 fits no (thread_k, thread_n) tile -> "Invalid thread config"; TP 2: (64, 128) tile, builds
    act = _qwen72(tmp_path, dict(GPTQ, desc_act=True), 29568, "q72gptq_act.json")
    line = refused_line(act, *H100, "--tp", "4")
    assert "'Invalid thread config' at start-up's first forward" in line and "7,392 in x 8,192 out" in line
    assert estimate_json(act, *H100, "--tp", "2")["capacity"]["tp"] == 2
    # Qwen2.5-72B-Instruct-GPTQ-Int4's padded 29,696 = 232 x 128: TP 2 / 4 / 8 give K 14,848 / 7,424 / 3,712, all
    # multiples of 128 (116 / 58 / 29 groups), gate_up N 29,696 / 14,848 / 7,424 multiples of 64: builds
    padded = _qwen72(tmp_path, GPTQ, 29696, "q25gptq.json")
    for tp in (2, 4, 8):
        assert estimate_json(padded, *H100, "--tp", str(tp))["capacity"]["tp"] == tp


def test_glm45_air_fp8_on_marlin_below_sm89(tmp_path):
    # zai-org/GLM-4.5#23: GLM-4.5-Air-FP8 at --tp 4 under SGLang: "size_n = 5472 is not divisible by tile_n_size =
    # 64": the dense MLP of layer 0 (first_k_dense_replace 1), gate_up_proj 2 x 10,944 / 4 = 5,472 = 85 x 64 + 32,
    # repacked for Marlin where the card lacks FP8 (SM 8.0-8.8: an A100 here). Per-channel FP8 (the issue's own
    # checkpoint config is not read here): as Fp8Config and as compressed-tensors W8A16Fp8.
    channel = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
               "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                   "num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False},
                   "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True}}}}
    for quant in ({"quant_method": "fp8", "activation_scheme": "dynamic"}, channel):
        path = bundled_variant(tmp_path, "glm-4.5-air", "air.json", quantization_config=quant)
        line = refused_line(path, *A100, "--tp", "4")
        assert "'size_n = 5472 is not divisible by tile_n_size = 64'" in line
        assert "glm4_moe.py Glm4MoeMLP.gate_up_proj" in line and "prepare_fp8_layer_for_marlin" in line
        # an H100 (SM 9.0) has FP8: no Marlin, builds
        assert estimate_json(path, *H100, "--tp", "4")["capacity"]["tp"] == 4


def test_qwen3_next_and_qwen35_moe_shared_experts(tmp_path):
    # qwen3_5.py builds Qwen2MoeSparseMoeBlock without enable_cuda_shared_expert_fusion: on CUDA its shared_expert
    # is a qwen2_moe.py Qwen2MoeMLP over the whole --tp. Qwen3.5-35B-A3B with a shared width of 520 (constructed):
    # 520 % 8 = 0 but 520 / 8 = 65 fits no 128 block; with --ep the routed experts (512) are whole, and the
    # FP8 [128, 128] shared expert refuses: 'Weight output_partition_size = 65 ...'
    fp8 = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    from kvplan.sources import bundled_config, bundled_index

    raw = bundled_config(bundled_index()["qwen3.5-35b-a3b"])
    text = dict(raw["text_config"], shared_expert_intermediate_size=520)
    path = tmp_path / "q35.json"
    path.write_text(json.dumps(dict(raw, text_config=text, quantization_config=fp8)))
    line = refused_line(str(path), *H100, "--tp", "8", "--ep")
    assert "'Weight output_partition_size = 65 is not divisible by weight quantization block_n = 128.'" in line
    assert "Qwen2MoeSparseMoeBlock.shared_expert" in line
    # qwen3_next.py asks for the CUDA fusion: a shared width unlike the routed one (1,000 vs 512, constructed) is not
    # fusable (qwen2_moe.py can_fuse_shared_expert) and splits over TP 8: 1,000 % 8 = 0, 125 fits no 128 block
    nxt = bundled_variant(tmp_path, "qwen3-next-80b-a3b", "next.json", shared_expert_intermediate_size=1000,
                  quantization_config=fp8)
    line = refused_line(nxt, *H100, "--tp", "8", "--ep")
    assert "output_partition_size = 125 is not divisible" in line and "qwen3_next.py" in line


def test_qwen2_72b_compressed_tensors_w8a16_tile(tmp_path):
    # vllm-project/llm-compressor#57: neuralmagic/Qwen2-72B-Instruct-quantized.w8a16 at TP 4 on an A100 ("Weight
    # input_size_per_partition = 7392 is not divisible by min_thread_k = 128" under vLLM 0.5.1). SGLang 0.5.23's
    # CompressedTensorsWNA16 repacks (K 7,392 = 462 x 16; gate_up N 14,784 = 231 x 64), then no Marlin tile divides
    # K 7,392 = 115 x 64 + 32 at the first forward. TP 2: K 14,784 = 231 x 64, N 8,192 = 64 x 128: builds
    w8a16 = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
             "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None, "weights": {
                 "num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True, "dynamic": False}}}}
    path = _qwen72(tmp_path, w8a16, 29568, "q72w8a16.json")
    line = refused_line(path, *A100, "--tp", "4")
    assert "compressed-tensors WNA16 on Marlin: 'Invalid thread config'" in line and "7,392 in x 8,192 out" in line
    assert estimate_json(path, *A100, "--tp", "2")["capacity"]["tp"] == 2
    # grouped by 128 (W4A16, no actorder): compressed_tensors_wNa16.py CompressedTensorsWNA16.create_weights asserts
    # input_size_per_partition % group_size == 0 at build: TP 2 K 14,784 = 115 x 128 + 64 -> refused at build
    w4a16 = json.loads(json.dumps(w8a16))
    w4a16["config_groups"]["group_0"]["weights"].update(num_bits=4, strategy="group", group_size=128)
    line = refused_line(_qwen72(tmp_path, w4a16, 29568, "q72w4a16.json"), *A100, "--tp", "2")
    assert "AssertionError 'assert input_size_per_partition % group_size == 0'" in line and "14,784 in" in line
    assert "fails before it serves" not in line  # a build error, not a later one
    # the padded 29,696: K 14,848 = 116 x 128 at TP 2: builds
    assert estimate_json(_qwen72(tmp_path, w4a16, 29696, "q25w4a16.json"), *A100, "--tp", "2")["capacity"]["tp"] == 2


def test_modelopt_nvfp4_down_proj_input_multiple_of_16(tmp_path):
    # constructed: a ModelOpt NVFP4 Llama-3.1-8B with intermediate 14,352 (= 897 x 16). TP 2: the down_proj's
    # input 7,176 = 448 x 16 + 8 -> ModelOptFp4LinearMethod.create_weights' ValueError; TP 1: 14,352 % 16 == 0;
    # TP 4: 14,352 / 4 = 3,588 = 224 x 16 + 4 -> refused too, and W4A16_NVFP4 words it its own way
    nvfp4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}
    path = bundled_variant(tmp_path, "llama-3.1-8b", "l8nvfp4.json", intermediate_size=14352, quantization_config=nvfp4)
    line = refused_line(path, *H100, "--tp", "2")
    assert "'Unsupported model when in features size is not multiple of 16'" in line
    assert "llama.py LlamaMLP.down_proj: 7,176 in" in line
    assert estimate_json(path, *H100)["capacity"]["tp"] == 1
    a16 = bundled_variant(tmp_path, "llama-3.1-8b", "l8a16.json", intermediate_size=14352,
                  quantization_config=dict(nvfp4, quant_algo="W4A16_NVFP4"))
    assert "'Unsupported model when input feature size is not a multiple of 16'" in refused_line(
        a16, *H100, "--tp", "4", "--weights", "6GB")  # kvplan sizes no W4A16_NVFP4 weights itself
