"""SGLang 0.5.23's NVFP4 routed experts at a TP split, by card (kvplan.engines.sglang_nvfp4_moe). Read in the sglang
0.5.23 wheel (python/sglang/srt/...), p = the intermediate a rank:

- SM 10.x (B200 10.0): the model overrides (overrides.py _deepseek_moe_quant_resolution, model_overrides/qwen3_moe.py,
  gemma4.py) set --moe-runner-backend flashinfer_trtllm; modelopt_quant.py ModelOptNvFp4FusedMoEMethod.create_weights
  rounds p up to 64 for gated experts: nothing refused.
- SM 12.x (RTX PRO 6000 12.0): flashinfer_cutlass (overrides.py _moe_runner_backend_quant_constraints); its
  process_weights_after_loading pads the gate/up scale rows (2p) to 128 (utils.py swizzle_blockscale) and asserts the
  experts are not gated where that padded: refused where 2p % 128 != 0.
- SM 8.0 - 9.x (H100 9.0): FP4 Marlin (sgl-project/sglang#25655), gated experts unpadded
  (marlin_utils_fp4.py prepare_moe_nvfp4_layer_for_marlin): the repack needs 2p % 64 (gptq_marlin_repack tile_n 64), the
  first forward's moe_wna16_marlin gemm N = 2p % 128 (its thread tiles (128, 128), (64, 128), (64, 256)); before
  that gemm the Marlin runner (moe_runner/marlin.py fused_experts_none_to_marlin) asserts gated SiLU / SiTU, which
  Gemma 4's GELU experts are not.
- compressed-tensors NVFP4 W4A16 (and W4A4 below SM 10.0): CompressedTensorsW4A16Nvfp4MoE raises ValueError where
  p % 64 != 0.

Configs as tests/test_vllm_nvfp4_moe.py reads them: Gemma-4-26B-A4B-NVFP4 (moe_intermediate_size 704, hidden 2,816),
Qwen3-30B-A3B-NVFP4 (768, hidden 2,048), Qwen3-235B-A22B-NVFP4 (1,536, hidden 4,096), DeepSeek-V3.1-NVFP4 (2,048,
hidden 7,168).
"""

from __future__ import annotations

from functools import partial

import pytest

from kvplan_inprocess import bundled_variant
from nvfp4_fixtures import GEMMA, ct_nvfp4, planned_tp, published, qwen3_30b_nvfp4, refusal

LATE = "SGLang 0.5.23 builds the MLPs but fails before it serves: "
_tp = partial(planned_tp, "sglang")
_line = partial(refusal, "sglang")


# --- B200 (SM 10.0): flashinfer_trtllm pads p to a multiple of 64 -------------------------------------------------

@pytest.mark.parametrize("tp", [1, 2, 4])
def test_gemma4_26b_nvfp4_planned_on_b200(tp):
    # sgl-project/sglang#25054 serves it at --tp-size 1 on flashinfer_trtllm (gemma4.py); 704 / 4 = 176 -> 192
    assert _tp(GEMMA, "b200", tp) == tp


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_qwen3_30b_a3b_nvfp4_planned_on_b200(tmp_path, tp):
    # 768 / 8 = 96 -> round_up(96, 64) = 128 in create_weights
    assert _tp(qwen3_30b_nvfp4(tmp_path), "b200", tp) == tp


@pytest.mark.parametrize("name,tp", [("qwen3-235b-a22b-nvfp4", 4), ("qwen3-235b-a22b-nvfp4", 8),
                                     ("deepseek-v3.1-nvfp4", 4), ("deepseek-v3.1-nvfp4", 8)])
def test_published_nvfp4_moe_at_their_tp_planned_on_b200(tmp_path, name, tp):
    # 1,536 / 4 = 384, / 8 = 192; 2,048 / 4 = 512, / 8 = 256: multiples of 64 already
    assert _tp(published(tmp_path, name), "b200", tp) == tp


# --- RTX PRO 6000 (SM 12.0): flashinfer_cutlass asserts where 2p % 128 != 0 -----------------------------------------

@pytest.mark.parametrize("tp", [2, 4])
def test_gemma4_26b_nvfp4_refused_on_sm120(tp):
    # TP 2: p = 352, 2 x 352 = 704 = 5 x 128 + 64 -> padded to 768; TP 4: p = 176, 352 = 2 x 128 + 96 -> 384
    p = 704 // tp
    padded = {2: 768, 4: 384}[tp]
    line = _line(GEMMA, "rtx-pro-6000", tp)
    assert LATE + f"ModelOpt NVFP4 experts on an SM 12.0 card ({p} of the intermediate 704 a rank (704 / {tp})" in line
    assert f"2 x {p} = {2 * p} to {padded}" in line
    assert "'The intermediate size required padding, but padding is also implemented for gated activations'" in line


def test_gemma4_26b_nvfp4_tp1_and_ep_planned_on_sm120():
    # TP 1: 2 x 704 = 1,408 = 11 x 128; --ep (--ep-size 2): moe_tp 1, the whole 704 again
    assert _tp(GEMMA, "rtx-pro-6000", 1) == 1
    assert _tp(GEMMA, "rtx-pro-6000", 2, "--ep") == 2


def test_qwen3_30b_a3b_nvfp4_on_sm120(tmp_path):
    # TP 8: p = 96, 2 x 96 = 192 = 128 + 64 -> refused; TP 4: p = 192, 384 = 3 x 128 -> planned
    path = qwen3_30b_nvfp4(tmp_path)
    assert "(96 of the intermediate 768 a rank (768 / 8), hidden 2,048)" in _line(path, "rtx-pro-6000", 8)
    assert _tp(path, "rtx-pro-6000", 4) == 4


def test_deepseek_v3_1_nvfp4_tp8_planned_on_sm120(tmp_path):
    # 2,048 / 8 = 256, 2 x 256 = 512 = 4 x 128
    assert _tp(published(tmp_path, "deepseek-v3.1-nvfp4"), "rtx-pro-6000", 8) == 8


# --- H100 (SM 9.0): FP4 Marlin, gated experts unpadded -------------------------------------------------------------

def test_gemma4_26b_nvfp4_on_h100_marlin():
    # TP 4: p = 176, the w13 repack's size_n = 2 x 176 = 352 = 5 x 64 + 32 -> fails at load, before any forward
    line = _line(GEMMA, "h100-sxm", 4)
    assert "ModelOpt NVFP4 experts on FP4 Marlin" in line and "(176 of the intermediate 704 a rank (704 / 4)" in line
    assert "'size_n = 352 is not divisible by tile_n_size = 64' (the w13 (gate_up) repack, at load)" in line
    # TP 2: p = 352, 704 = 11 x 64 repacks (w2: K 352 = 22 x 16, N 2,816 = 44 x 64); TP 1: p = 704 repacks too. The
    # first forward then meets moe_runner/marlin.py fused_experts_none_to_marlin's check before any gemm: Gemma 4's
    # experts are gated GELU (gemma4_causal.py Gemma4MoE activation "gelu"), and it asserts gated SiLU / SiTU only
    for tp in (2, 1):
        line = _line(GEMMA, "h100-sxm", tp)
        assert "AssertionError 'Only gated SiLU/SiTU is supported, got gelu.'" in line
        assert "Invalid thread config" not in line


def test_gemma4_26b_compressed_tensors_nvfp4_w4a16_refused_at_tp1(tmp_path):
    # CompressedTensorsW4A16Nvfp4MoE takes the same Marlin runner (its create_moe_runner: MoeRunnerBackend.MARLIN):
    # at TP 1 its load checks pass (hidden 2,816 = 22 x 128, p 704 = 11 x 64), the GELU assertion does not
    import json

    raw = json.loads(open(GEMMA).read())
    raw["quantization_config"] = ct_nvfp4(False)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    line = _line(str(path), "rtx-pro-6000", 1, "--weights", "16GB")
    assert "compressed-tensors NVFP4 experts on FP4 Marlin (704 of the intermediate 704 a rank (704 / 1)" in line
    assert "AssertionError 'Only gated SiLU/SiTU is supported, got gelu.'" in line


def test_qwen3_nvfp4_on_h100_marlin(tmp_path):
    # Qwen3-30B-A3B TP 8: p = 96, 2p = 192 = 3 x 64 repacks, 192 % 128 = 64 -> the w13 gemm has no tile;
    # TP 4: p = 192 = 3 x 64, 384 = 3 x 128 -> served; Qwen3-235B-A22B TP 8: p = 192 -> served
    path = qwen3_30b_nvfp4(tmp_path)
    assert "'Invalid thread config' for MKN = [M, 2048, 192]" in _line(path, "h100-sxm", 8)
    assert _tp(path, "h100-sxm", 4) == 4
    assert _tp(published(tmp_path, "qwen3-235b-a22b-nvfp4"), "h100-sxm", 8) == 8


# --- compressed-tensors NVFP4 --------------------------------------------------------------------------------------


def test_compressed_tensors_nvfp4_experts(tmp_path):
    # Qwen3-30B-A3B at TP 8, p = 96: CompressedTensorsW4A16Nvfp4MoE wants p % 64 (96 = 64 + 32) on any card for W4A16,
    # below SM 10.0 for W4A4; W4A4 at SM 10.x / 12.x (CompressedTensorsW4A4Nvfp4MoE) is not settled: planned
    want = "ValueError 'NVFP4 Marlin MoE requires intermediate_size_per_partition % 64 == 0, got 96.'"
    w4a16 = bundled_variant(tmp_path, "qwen3-30b-a3b", quantization_config=ct_nvfp4(False))
    assert want in _line(w4a16, "rtx-pro-6000", 8, "--weights", "20GB")
    w4a4 = bundled_variant(tmp_path, "qwen3-30b-a3b", "a4.json", quantization_config=ct_nvfp4(True))
    assert want in _line(w4a4, "h100-sxm", 8, "--weights", "20GB")
    assert _tp(w4a4, "b200", 8, "--weights", "20GB") == 8
    assert _tp(w4a4, "rtx-pro-6000", 8, "--weights", "20GB") == 8
    assert _tp(w4a16, "rtx-pro-6000", 4, "--weights", "20GB") == 4  # p = 192 = 3 x 64


def test_no_card_known_refuses_nothing():
    from kvplan.engines.sglang_nvfp4_moe import refusal

    assert refusal("modelopt", 768, 8, 2048, None) is None
    assert refusal("modelopt", 768, 8, 2048, (10, 0)) is None
    assert refusal("modelopt", 768, 8, 2048, (7, 5)) is None  # below 8.0: engines/sglang_sm7.py refuses the method


def test_fit_refuses_per_card(tmp_path):
    # `kvplan fit --engine sglang` over b200, rtx-pro-6000, h100-sxm: TP 8 of Qwen3-30B-A3B-NVFP4 (p = 96) refused on
    # the RTX PRO 6000 and the H100, not on the B200
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    req = FitRequest(qwen3_30b_nvfp4(tmp_path), 4096, 1, tuple(parse_gpus("b200,rtx-pro-6000,h100-sxm")), max_gpus=8,
                     engine="sglang")
    found = {(c.gpu.name, c.tp): c for c in search(req, verify_top=1).candidates
             if c.kv_dtype == "bf16" and c.pp == 1 and c.dp == 1 and not c.ep}
    assert "(96 of the intermediate 768 a rank (768 / 8)" in found[("rtx-pro-6000", 8)].reason
    assert "(96 of the intermediate 768 a rank (768 / 8)" in found[("h100-sxm", 8)].reason
    assert found[("b200", 8)].reason is None or "NVFP4 experts" not in found[("b200", 8)].reason
