"""vLLM 0.34's NVFP4 routed experts at a TP split, by card (kvplan.engines.vllm_nvfp4_moe). Read in the vllm 0.34.0
wheel: fused_moe/oracle/nvfp4.py select_nvfp4_moe_backend picks FLASHINFER_TRTLLM on SM 10.x (B200 10.0), which pads
the intermediate a rank to 64 (flashinfer_fp4_moe.py prepare_nvfp4_moe_layer_for_fi_or_cutlass ->
align_fp4_moe_weights_for_fi); FLASHINFER_CUTLASS on SM 12.x (RTX PRO 6000 12.0), whose swizzle_blockscale rounds the
gate/up scale rows (2 x intermediate a rank) up to 128 and which raises NotImplementedError for gated experts when that
padded anything; Humming / Marlin on SM 9.0 and below, which pad. So: refused exactly where the card is SM 12.x and
(2 x width / split) % 128 != 0, every width worked by hand below.

Configs: tests/data/configs/gemma-4-26b-a4b-nvfp4.json (nvidia/Gemma-4-26B-A4B-NVFP4's config.json: text_config
moe_intermediate_size 704, quant_algo NVFP4, every layer's mlp* / self_attn* / router* ignored, so only the routed
experts ("<layer>.experts", gemma4.py) are NVFP4); tests/data/modelopt_published (nvidia/Qwen3-235B-A22B-NVFP4,
nvidia/DeepSeek-V3.1-NVFP4); tests/data/hf_quant_config/qwen3-30b-a3b-nvfp4.json (nvidia/Qwen3-30B-A3B-NVFP4's
hf_quant_config.json, beside the bundled Qwen3-30B-A3B config.json as that repository ships it).
"""

from __future__ import annotations

from functools import partial

import pytest

from kvplan_inprocess import bundled_variant
from nvfp4_fixtures import GEMMA, ct_nvfp4, planned_tp, published, qwen3_30b_nvfp4, refusal

_tp = partial(planned_tp, "vllm")
_line = partial(refusal, "vllm")


@pytest.mark.parametrize("tp", [2, 4])
def test_gemma4_26b_nvfp4_refused_on_sm120(tp):
    # 704 / 2 = 352, 2 x 352 = 704 = 5 x 128 + 64; 704 / 4 = 176, 2 x 176 = 352 = 2 x 128 + 96: FLASHINFER_CUTLASS
    # pads the scale rows and raises (vllm-project/vllm#39595: Gemma-4-26B NVFP4 fails at TP 2)
    per_rank = 704 // tp
    line = _line(GEMMA, "rtx-pro-6000", tp)
    assert (f"ModelOpt NVFP4 experts' intermediate size of 704 into {per_rank} a rank (704 / {tp}); on an SM 12.0 card"
            in line)
    assert f"2 x {per_rank} = {2 * per_rank} is not a multiple of 128" in line
    assert "NotImplementedError('Intermediate size padding for w1 and w3" in line


@pytest.mark.parametrize("gpu", ["b200", "h100-sxm"])
def test_gemma4_26b_nvfp4_tp4_planned_where_the_backend_pads(gpu):
    # B200 (SM 10.0): FLASHINFER_TRTLLM pads 176 to round_up(176, 64) = 192 (the #46880 fix, in 0.34: the
    # "Gemma-4-26B-A4B at tp4" of its comment); H100 (SM 9.0): HUMMING / MARLIN pad (176 -> 192)
    assert _tp(GEMMA, gpu, 4) == 4


def test_gemma4_26b_nvfp4_tp1_and_ep_planned_on_sm120():
    # TP 1: 2 x 704 = 1,408 = 11 x 128; --ep keeps each expert whole (FusedMoEParallelConfig: tp_size 1), 1,408 again
    assert _tp(GEMMA, "rtx-pro-6000", 1) == 1
    assert _tp(GEMMA, "rtx-pro-6000", 2, "--ep") == 2


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_qwen3_30b_a3b_nvfp4_on_b200_planned(tmp_path, tp):
    # nvidia/Qwen3-30B-A3B-NVFP4 (moe_intermediate_size 768): TRT-LLM pads whatever the split; 768 / 8 = 96 -> 128
    assert _tp(qwen3_30b_nvfp4(tmp_path), "b200", tp) == tp


def test_qwen3_30b_a3b_nvfp4_tp8_refused_on_sm120_tp4_not(tmp_path):
    # 768 / 8 = 96, 2 x 96 = 192 = 128 + 64 -> refused; 768 / 4 = 192, 2 x 192 = 384 = 3 x 128 -> planned
    path = qwen3_30b_nvfp4(tmp_path)
    assert "into 96 a rank (768 / 8)" in _line(path, "rtx-pro-6000", 8)
    assert _tp(path, "rtx-pro-6000", 4) == 4


@pytest.mark.parametrize("name,tp", [("qwen3-235b-a22b-nvfp4", 4), ("qwen3-235b-a22b-nvfp4", 8),
                                     ("deepseek-v3.1-nvfp4", 4), ("deepseek-v3.1-nvfp4", 8)])
def test_published_nvfp4_moe_at_their_tp_planned_on_b200(tmp_path, name, tp):
    # Qwen3-235B-A22B: 1,536 / 4 = 384, / 8 = 192; DeepSeek-V3.1 (and R1-FP4, the same shape, published for TP 8):
    # 2,048 / 4 = 512, / 8 = 256: all padded or aligned on TRT-LLM
    assert _tp(published(tmp_path, name), "b200", tp) == tp


@pytest.mark.parametrize("tp", [8, 16])
def test_published_deepseek_v3_1_nvfp4_planned_on_sm120(tmp_path, tp):
    # 2,048 / 8 = 256, 2 x 256 = 512 = 4 x 128; 2,048 / 16 = 128, 2 x 128 = 256 = 2 x 128: FLASHINFER_CUTLASS pads
    # nothing
    assert _tp(published(tmp_path, "deepseek-v3.1-nvfp4"), "rtx-pro-6000", tp) == tp


def test_published_qwen3_235b_nvfp4_on_sm120(tmp_path):
    # 1,536 / 8 = 192, 2 x 192 = 384 = 3 x 128 -> planned; 1,536 / 16 = 96, 2 x 96 = 192 -> refused
    path = published(tmp_path, "qwen3-235b-a22b-nvfp4")
    assert _tp(path, "rtx-pro-6000", 8) == 8
    assert "into 96 a rank (1,536 / 16)" in _line(path, "rtx-pro-6000", 16)



def test_compressed_tensors_nvfp4_experts_take_the_same_oracle(tmp_path):
    # CompressedTensorsW4A4Nvfp4MoEMethod asks select_nvfp4_moe_backend too: Qwen3-30B-A3B at TP 8 on SM 12.0,
    # 96 a rank -> refused; the W4A16 form (no input_activations: activation key None, Marlin only) pads -> planned
    w4a4 = bundled_variant(tmp_path, "qwen3-30b-a3b", quantization_config=ct_nvfp4(True))
    assert "compressed-tensors NVFP4 experts' intermediate size of 768 into 96 a rank" in _line(
        w4a4, "rtx-pro-6000", 8, "--weights", "20GB")
    w4a16 = bundled_variant(tmp_path, "qwen3-30b-a3b", "a16.json", quantization_config=ct_nvfp4(False))
    assert _tp(w4a16, "rtx-pro-6000", 8, "--weights", "20GB") == 8


def test_no_card_known_refuses_nothing(tmp_path):
    # TRT-LLM, Marlin and Humming all pad: no width fails on every backend, so the card-free check says nothing
    from kvplan.engines.vllm_widths import card_refusal, refusal
    from kvplan.sources import load_model

    model = load_model(qwen3_30b_nvfp4(tmp_path))
    assert refusal(model, 8) is None and card_refusal(model, 8) is None
    assert "into 96 a rank" in refusal(model, 8, capability=(12, 0))
    assert card_refusal(model, 8, capability=(10, 0)) is None and card_refusal(model, 8, capability=(9, 0)) is None


def test_fit_refuses_the_split_on_the_sm120_card_only(tmp_path):
    # `kvplan fit` over b200 and rtx-pro-6000 (fit/screen.py asks card_refusal per GPU): TP 8 of Qwen3-30B-A3B-NVFP4
    # refused on the RTX PRO 6000 (96 a rank), not on the B200
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    req = FitRequest(qwen3_30b_nvfp4(tmp_path), 4096, 1, tuple(parse_gpus("b200,rtx-pro-6000")), max_gpus=8,
                     engine="vllm")
    found = {(c.gpu.name, c.tp): c for c in search(req, verify_top=1).candidates
             if c.kv_dtype == "bf16" and c.pp == 1 and c.dp == 1}
    assert "into 96 a rank (768 / 8)" in found[("rtx-pro-6000", 8)].reason
    assert found[("b200", 8)].reason is None or "NVFP4 experts" not in found[("b200", 8)].reason
    assert found[("rtx-pro-6000", 4)].reason is None or "NVFP4 experts" not in found[("rtx-pro-6000", 4)].reason
