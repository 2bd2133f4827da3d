"""SGLang 0.5.23's routed experts under GPTQ / AWQ / compressed-tensors WNA16 at a TP split
(kvplan.engines.sglang_widths_moe), read in the wheel. A rank holds p = moe_intermediate_size / TP of each expert
(the whole width with --ep) and the whole hidden size h:

- GPTQ on Marlin MoE (gptq/schemes/gptq_moe.py GPTQMarlinMoEScheme, no fallback): gptq_marlin_moe_repack after
  loading needs the gate_up N = 2p % 64; the first forward's Marlin MoE tiles need K % 64 with N % 128 (gate_up: K h,
  N 2p; down: K p, N h); without desc_act a rank holds the whole width's W // group down scale rows
  (create_weights' w2_scales_size = p x moe_tp), so the kernel derives group_size = p // (W // group) = group / TP,
  and only group_size / 16 in -1, 2, 4, 8 has a kernel (moe_wna16_marlin.cuh COMMON_GET_IF; 0 divides by zero).
- AWQ: Marlin MoE where h % 128 and p % max(64, group), else moe_wna16.py MoeWNA16Method, whose create_weights
  halves the group while it does not divide p and h and asserts group_size >= 32.
- compressed-tensors WNA16 on Marlin MoE: the same repack and tiles, p // group down scale rows a rank (no actorder).
Every value below is worked by hand from those rules.
"""

from __future__ import annotations

from kvplan_inprocess import bundled_variant, estimate_json, refused_line

# Qwen/Qwen3-30B-A3B-GPTQ-Int4's quantization_config fields (AutoGPTQ / GPTQModel style)
# (the GPTQ variants below say torch_dtype float16: SGLang serves the config's dtype under --dtype auto
# (configs/model_config.py _get_and_verify_dtype), and a BF16 GPTQ MoE fails fused_marlin_moe's scale-dtype assert at
# every TP, sgl-project/sglang#20599: test_bf16_gptq_experts_fail_at_every_split)
GPTQ = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "quant_method": "gptq"}
AWQ = {"bits": 4, "group_size": 128, "zero_point": True, "quant_method": "awq", "version": "gemm"}
CT = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
      "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None, "weights": {
          "num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": 128, "dynamic": False,
          "actorder": None}}}}
H100 = ("--gpu", "h100", "--context", "4k", "--engine", "sglang")
A100 = ("--gpu", "a100", "--context", "4k", "--engine", "sglang")


def _tp(path: str, *args: str) -> int:
    return estimate_json(path, *args)["capacity"]["tp"]


def test_qwen3_30b_a3b_gptq_int4(tmp_path):
    # Qwen3-30B-A3B: moe_intermediate_size W = 768, hidden h = 2,048, group 128, no desc_act
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", "q30gptq.json", quantization_config=GPTQ, torch_dtype="float16")
    # TP 1: p 768, gate_up N 1,536 = 12 x 128, down K 768 = 12 x 64, 6 scale rows -> group 768 // 6 = 128 (blocks 8)
    # TP 2: p 384 (N 768 = 6 x 128, K 384 = 6 x 64), rows 768 // 128 = 6 -> group 384 // 6 = 64 (blocks 4)
    # TP 4: p 192 (N 384 = 3 x 128, K 192 = 3 x 64), rows 6 -> group 192 // 6 = 32 (blocks 2): all start
    for tp in (1, 2, 4):
        assert _tp(path, *H100, "--tp", str(tp)) == tp
    # TP 8: p 96: repack N 192 = 3 x 64 passes; the gate_up gemm's N 192 = 128 + 64 has no thread_n 128 tile
    line = refused_line(path, *H100, "--tp", "8")
    assert "GPTQ experts on Marlin MoE" in line and "'Invalid thread config' (MKN = [M, 2048, 192]" in line
    assert "96 of the intermediate 768 a rank (768 / 8)" in line and "moe_wna16_marlin.cuh" in line
    # TP 16: p 48: gptq_marlin_repack of gate_up N 96 = 64 + 32, after loading
    line = refused_line(path, *H100, "--tp", "16")
    assert "'size_n = 96 is not divisible by tile_n_size = 64'" in line and "gptq_marlin_moe_repack" in line
    # --ep: the experts whole on every rank (moe_tp 1): p 768 as at TP 1
    assert _tp(path, *H100, "--tp", "8", "--ep") == 8


def test_qwen3_30b_a3b_awq_falls_back_to_moe_wna16(tmp_path):
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", "q30awq.json", quantization_config=AWQ, torch_dtype="float16")
    # TP 8: p 96: Marlin MoE wants p % max(64, 128) -> moe_wna16; halving 128 -> 64 (96 % 64 = 32) -> 32 divides
    # 96 and 2,048: builds. TP 1 / 2 / 4: p 768 / 384 / 192, multiples of 128 / 128 / 64 (the halved group)
    for tp in (1, 2, 4, 8):
        assert _tp(path, *H100, "--tp", str(tp)) == tp
    # TP 16: p 48: 128 -> 64 -> 32 (48 % 32 = 16) -> 16 < 32: the assert at build, on an A100 too
    for gpu in (H100, A100):
        line = refused_line(path, *gpu, "--tp", "16")
        assert "AWQ experts: 'assert group_size >= 32'" in line and "48 of the intermediate 768 a rank" in line
        assert "MoeWNA16Method" in line and "check_moe_marlin_supports_layer" in line


def test_mixtral_8x7b_gptq_scale_rows(tmp_path):
    # Mixtral-8x7B: W 14,336 (mixtral has no moe_intermediate_size: intermediate_size), h 4,096, group 128
    path = bundled_variant(tmp_path, "mixtral-8x7b", "mixgptq.json", quantization_config=GPTQ, torch_dtype="float16")
    # the down scale rows a rank: 14,336 // 128 = 112 at every TP (no desc_act); TP 2: p 7,168 -> group 64;
    # TP 4: p 3,584 -> group 32; tiles: 3,584 = 56 x 64, gate_up 7,168 = 56 x 128
    for tp in (2, 4):
        assert _tp(path, *H100, "--tp", str(tp)) == tp
    # TP 8: p 1,792 = 16 x 112 -> group_size 16, group_blocks 1: no int kernel
    line = refused_line(path, *H100, "--tp", "8")
    assert "'Invalid thread config' (MKN = [M, 1792, 4096]" in line and "no int kernel for group_blocks 1" in line
    assert "a rank holds 112 down scale rows, the whole width's (14,336 // 128" in line
    # TP 16: p 896 = 8 x 112 -> group_size 8, group_blocks 0: marlin_mm's prob_k % group_blocks divides by zero
    line = refused_line(path, *H100, "--tp", "16")
    assert "group_size 8" in line and "group_blocks 0 (a zero divisor)" in line
    # desc_act true: a rank holds p // 128 rows and, at TP > 1, is_k_full is false: group_size 0 (the act-order
    # kernel), so only the tiles count: TP 8 p 1,792 = 28 x 64, N 3,584 = 28 x 128; TP 16 p 896 = 14 x 64
    act = bundled_variant(tmp_path, "mixtral-8x7b", "mixact.json", quantization_config=dict(GPTQ, desc_act=True),
                          torch_dtype="float16")
    for tp in (8, 16):
        assert _tp(act, *H100, "--tp", str(tp)) == tp
    # by channel (group_size -1): one scale row, group -1: TP 16 builds
    chan = bundled_variant(tmp_path, "mixtral-8x7b", "mixchan.json",
                           quantization_config=dict(GPTQ, group_size=-1), torch_dtype="float16")
    assert _tp(chan, *H100, "--tp", "16") == 16


def test_deepseek_v2_lite_gptq_experts(tmp_path):
    # DeepSeek-V2-Lite's experts (W 1,408, h 2,048), its dense first layer left out (first_k_dense_replace 0: the
    # dense 10,944 has its own GPTQ rule, sglang_widths_quant); shared experts 2 x 1,408 = 2,816, a DeepseekV2MLP
    path = bundled_variant(tmp_path, "deepseek-v2-lite", "dsgptq.json", quantization_config=GPTQ,
                           torch_dtype="float16", first_k_dense_replace=0)
    # TP 2: p 704 = 11 x 64, gate_up N 1,408 = 11 x 128, rows 1,408 // 128 = 11 -> group 704 // 11 = 64
    assert _tp(path, *H100, "--tp", "2") == 2
    # TP 4: p 352: repack N 704 = 11 x 64 passes; the gate_up gemm's N 704 = 5 x 128 + 64 has no tile. (The shared
    # experts' down_proj, K 704 with 704 // 128 = 5 rows, 704 % 5 = 4, would fail too: the experts' gemm runs first.)
    line = refused_line(path, *H100, "--tp", "4")
    assert "GPTQ experts on Marlin MoE" in line and "(MKN = [M, 2048, 704]" in line
    # TP 8: p 176: repack gate_up N 352 = 5 x 64 + 32
    assert "'size_n = 352 is not divisible by tile_n_size = 64'" in refused_line(path, *H100, "--tp", "8")


def test_qwen15_moe_a27b_chat_gptq_int4(tmp_path):
    # Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4's shape on the qwen2_moe spec: h 2,048, 60 experts of 1,408, a shared
    # expert of 5,632, 16 heads, 24 layers
    path = bundled_variant(tmp_path, "qwen2-57b-a14b", "q15moe.json", hidden_size=2048, intermediate_size=5632,
                           moe_intermediate_size=1408, shared_expert_intermediate_size=5632, num_experts=60,
                           num_experts_per_tok=4, num_attention_heads=16, num_key_value_heads=16,
                           num_hidden_layers=24, vocab_size=151936, quantization_config=GPTQ, torch_dtype="float16")
    # TP 1: p 1,408, rows 11 -> group 128; TP 2: p 704, rows 11 -> group 64 (tiles as DeepSeek-V2-Lite's)
    for tp in (1, 2):
        assert _tp(path, *H100, "--tp", str(tp)) == tp
    # TP 4: p 352 -> the gate_up gemm's N 704 (the shared expert builds: gate_up 2 x 5,632 / 4 = 2,816 = 44 x 64,
    # down K 1,408 = 11 x 128 with 11 rows)
    assert "(MKN = [M, 2048, 704]" in refused_line(path, *H100, "--tp", "4")
    # TP 8: p 176 -> repack N 352
    assert "'size_n = 352 is not divisible by tile_n_size = 64'" in refused_line(path, *H100, "--tp", "8")


def test_compressed_tensors_wna16_experts_sgl_37089(tmp_path):
    # sgl-project/sglang#37089: a compressed-tensors W4A16 (group 128) MoE of h 2,560 and experts of 640 on A100s at
    # TP 4 fails CUDA graph capture with "Invalid thread config ... for MKN = [64, 2560, 320]": the gate_up gemm,
    # N = 2 x 640 / 4 = 320 = 2 x 128 + 64. Its shape on the qwen3_moe spec:
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", "ct640.json", hidden_size=2560, moe_intermediate_size=640,
                           quantization_config=CT, torch_dtype="bfloat16")
    line = refused_line(path, *A100, "--tp", "4")
    assert "compressed-tensors WNA16 experts on Marlin MoE" in line and "(MKN = [M, 2560, 320]" in line
    # TP 1: p 640 = 10 x 64, 640 // 128 = 5 rows -> group 128: starts
    assert _tp(path, *A100, "--tp", "1") == 1
    # TP 2: p 320 (tiles: N 640 = 5 x 128, K 320 = 5 x 64) holds 320 // 128 = 2 rows -> group_size 160,
    # group_blocks 10: no int kernel (the down gemm, MKN = [M, 320, 2560])
    line = refused_line(path, *A100, "--tp", "2")
    assert "(MKN = [M, 320, 2560]" in line and "no int kernel for group_blocks 10" in line
    # a B200 (SM 10.0) serves symmetric 4-bit group 128 without actorder on CompressedTensorsWNA16TritonMoE: not
    # checked, so not refused there
    assert _tp(path, "--gpu", "b200", "--context", "4k", "--engine", "sglang", "--tp", "4") == 4


def test_fit_screens_the_experts_split_per_card(tmp_path):
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    # Qwen3-30B-A3B-GPTQ-Int4 (above): fit screens TP 8 out (the gate_up gemm's N 192 % 128) and keeps TP 4
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", "q30fit.json", quantization_config=GPTQ, torch_dtype="float16")
    req = FitRequest(path, 4096, 1, tuple(parse_gpus("h100")), max_gpus=8, engine="sglang")
    result = search(req, verify_top=1)
    by_split = {(c.tp, c.pp): c for c in result.candidates if c.dp == 1 and not c.ep}
    c = by_split[(8, 1)]
    assert not c.ok and c.constraint == "split" and "(MKN = [M, 2048, 192]" in c.reason
    assert by_split[(4, 1)].ok
    assert all(c.tp != 8 or c.ep for c in result.passing)


def test_bf16_gptq_experts_fail_at_every_split(tmp_path):
    # GPTQMarlinMoEScheme.create_weights allocates w13_scales / w2_scales as torch.half whatever the model dtype, and
    # fused_marlin_moe asserts hidden_states.dtype == w1_scale.dtype: a bfloat16 model (served in bfloat16 under
    # --dtype auto) fails at the first forward at every TP, --ep too (sgl-project/sglang#20599; PR #22121 reproduced it
    # with Qwen3.5-35B-A3B-GPTQ-Int4; 0.5.23 still hard-codes torch.half)
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", "q30gptq_bf16.json", quantization_config=GPTQ,
                           torch_dtype="bfloat16")
    for args in (("--tp", "1"), ("--tp", "4"), ("--tp", "8", "--ep")):
        line = refused_line(path, *H100, *args)
        assert "GPTQ experts of a bfloat16 model" in line and "w1_scale.dtype (torch.float16)" in line
        assert "sgl-project/sglang#20599" in line and "torch_dtype float16" in line
    # the same shapes in float16 start at TP 1 / 4 (test_qwen3_30b_a3b_gptq_int4); AWQ's and compressed-tensors'
    # MoE schemes allocate their scales in params_dtype (awq_moe.py AWQMoEScheme, compressed_tensors_wNa16_moe.py),
    # so a bfloat16 AWQ / W4A16 MoE is not refused for it
    ct = bundled_variant(tmp_path, "qwen3-30b-a3b", "q30ct_bf16.json", quantization_config=CT, torch_dtype="bfloat16")
    assert _tp(ct, *H100, "--tp", "2") == 2


def test_gptq_experts_split_over_tp_get_the_scale_rows_note(tmp_path):
    # float16 GPTQ experts at TP 2 start (768 / 2 = 384 a rank: test_qwen3_30b_a3b_gptq_int4) but the down scales
    # are read against groups of 128 / 2 = 64 (the whole width's 6 rows for a rank's 384 inputs): a note citing
    # sgl-project/sglang#36822; at TP 1 and with --ep (moe_tp 1) nothing is split, so no note
    path = bundled_variant(tmp_path, "qwen3-30b-a3b", "q30gptq.json", quantization_config=GPTQ, torch_dtype="float16")

    def noted(*args):
        return any("sgl-project/sglang#36822" in n for n in estimate_json(path, *H100, *args)["engine"]["notes"])

    assert noted("--tp", "2") and not noted("--tp", "1") and not noted("--tp", "8", "--ep")
