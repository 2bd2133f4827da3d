"""Per-module tables of Gemma 3, Phi-3 and Qwen3-Next (configs/weight_tables/more.py): they add up to the
families' own parameter counts (which the parity tests check against transformers), and what vLLM 0.34.0 holds
whole on every TP rank, worked out by hand from the bundled configs (model_specs/*.json). Whole on each rank, as
read in vLLM 0.34.0: gemma3.py GemmaRMSNorm (input / post_attention / pre_ / post_feedforward_layernorm, q_norm
and k_norm over head_dim, the final norm), llama.py's RMSNorms for phi3 (phi3.py: Phi3ForCausalLM is
LlamaForCausalLM), qwen3_next.py Qwen3NextRMSNorm, the Gated DeltaNet's RMSNormGated over head_v_dim
(layers/mamba/gdn/qwen_gdn_linear_attn.py; its conv1d, dt_bias and A_log split with the value heads), the router
(GateLinear) and shared_expert_gate (ReplicatedLinear, quant_config=None)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model, weight_tables
from kvplan.configs.build import _read
from kvplan.weights.estimate import estimated

SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def _raw(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


@pytest.mark.parametrize("name", ["gemma-3-1b", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b", "phi-3-mini-4k", "phi-4",
                                  "qwen3-next-80b-a3b"])
def test_the_table_adds_up_to_the_family_count(name):
    family, f, _, layers, dims = _read(_raw(name), name)
    assert f.model_type in ("gemma3_text", "phi3", "qwen3_next")
    modules = weight_tables.table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


def test_gemma_3_27b_bf16_keeps_its_six_norms_a_layer_whole():
    model = build_model(_raw("gemma-3-27b"), "g27")
    # text model: hidden 5,376, 62 layers, 32 heads and 16 KV heads of 128, intermediate 21,504, vocab 262,208
    # (Gemma3TextConfig's default; the head tied). A layer: q 5,376 x 4,096 + k, v 2 x 5,376 x 2,048 + o 4,096 x
    # 5,376 = 66,060,288; q/k_norm 256; mlp 3 x 5,376 x 21,504 = 346,816,512; 4 norms 21,504: 412,898,560
    total = 62 * 412_898_560 + 262_208 * 5_376 + 5_376
    assert model.param_count == total == 27_009_346_304
    # whole: 62 x (4 x 5,376 + 2 x 128) + 5,376 = 1,354,496 parameters x 2 B
    whole = (62 * (4 * 5_376 + 2 * 128) + 5_376) * 2
    # and the SigLIP tower's whole part, 11,780,352 parameters (tests/test_weights_bundled.py), of its 423,060,336
    tower, tower_whole = 2 * 423_060_336, 2 * 11_780_352
    assert model.weight_replicated_bytes == whole + tower_whole and whole == 2_708_992
    # TP 2: (54,018,692,608 - 2,708,992) / 2 + 2,708,992 (before: an even split, 27,009,346,304), + the tower's whole
    # part and half the rest (configs/vision_towers.py)
    assert stage_weight_bytes(estimated(model), 62, tp=2) == [27_010_700_800 + tower_whole + (tower - tower_whole) // 2]


def test_phi_4_bf16_keeps_two_norms_a_layer_whole():
    model = build_model(_raw("phi-4"), "phi4")
    # hidden 5,120, 40 layers, 40 heads and 10 KV heads of 128, intermediate 17,920, vocab 100,352, head untied:
    # qkv_proj 5,120 x 7,680 + o_proj 5,120 x 5,120 + gate_up_proj 5,120 x 35,840 + down_proj 17,920 x 5,120
    # + 2 norms 10,240 = 340,797,440 a layer
    assert model.param_count == 40 * 340_797_440 + 2 * 100_352 * 5_120 + 5_120 == 14_659_507_200
    whole = (40 * 2 * 5_120 + 5_120) * 2
    assert model.weight_replicated_bytes == whole == 829_440
    # TP 4: (29,319,014,400 - 829,440) / 4 + 829,440
    assert stage_weight_bytes(estimated(model), 40, tp=4) == [7_329_546_240 + 829_440] == [7_330_375_680]


# Qwen3-Next-80B-A3B: hidden 2,048, 48 layers (every 4th full attention: 12), 512 experts of 512, shared expert
# 512, attention 16 heads and 2 KV heads of 256 (q_proj doubled for the output gate), Gated DeltaNet 16 key heads
# and 32 value heads of 128, kernel 4, vocab 151,936, head untied.
NEXT_MOE = 512 * 3 * 2_048 * 512 + 2_048 * 512 + 3 * 2_048 * 512 + 2_048  # experts, router, shared expert, its gate
NEXT_ATTN = 2_048 * 8_192 + 2 * 2_048 * 512 + 4_096 * 2_048 + 2 * 256  # q, k, v, o, q/k_norm: 27,263,488
# in_proj_qkvz 2,048 x 12,288, in_proj_ba 2,048 x 64, conv1d 8,192 x 4, dt_bias, A_log 32 each, norm 128, out_proj
NEXT_GDN = 2_048 * 12_288 + 2_048 * 64 + 8_192 * 4 + 2 * 32 + 128 + 4_096 * 2_048  # 33,718,464
NEXT_TOTAL = 48 * (NEXT_MOE + 2 * 2_048) + 12 * NEXT_ATTN + 36 * NEXT_GDN + 2 * 151_936 * 2_048 + 2_048
# whole: 2 norms, router 2,048 x 512 and shared_expert_gate 2,048 a layer; q/k_norm 512 on 12 layers, the gated
# norm 128 on 36; the final norm: 50,639,360 parameters
NEXT_WHOLE = 48 * (2 * 2_048 + 2_048 * 512 + 2_048) + 12 * 512 + 36 * 128 + 2_048


def test_qwen3_next_bf16_keeps_norms_and_both_gates_whole():
    model = build_model(_raw("qwen3-next-80b-a3b"), "next")
    assert model.param_count == NEXT_TOTAL == 79_674_391_296
    assert model.weight_replicated_bytes == NEXT_WHOLE * 2 == 101_278_720
    # TP 4, above the 2 KV heads: each rank holds one KV head of k_proj / v_proj (vLLM QKVParallelLinear), half of
    # the 12 attention layers' 12 x 2 x 2,048 x 512 x 2 B = 50,331,648 B; the rest split by 4:
    # (159,348,782,592 - 101,278,720 - 50,331,648) / 4 + 101,278,720 + 50,331,648 / 2
    assert stage_weight_bytes(estimated(model), 48, tp=4) == [39_799_293_056 + 101_278_720 + 25_165_824] \
        == [39_925_737_600]


def test_qwen3_next_fp8_split_module_by_module():
    # a block-FP8 config of the bundled shapes (not a published checkpoint's list): in_proj_ba and the head kept
    raw = dict(_raw("qwen3-next-80b-a3b"), quantization_config={
        "quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128],
        "modules_to_not_convert": ["lm_head", "in_proj_ba"]})
    model = build_model(raw, "next-fp8")
    # quantized: experts 48 x 1,610,612,736 + shared experts 48 x 3,145,728 + attention 12 x 27,262,976 + the
    # DeltaNet's in_proj_qkvz and out_proj 36 x 33,554,432 = 78,995,521,536 at 1 + 4 / 16,384 B (a 4 B scale a
    # 128 x 128 block): + 19,286,016 B; the other 678,869,760 parameters at 2 B
    quantized = 48 * 1_610_612_736 + 48 * 3_145_728 + 12 * 27_262_976 + 36 * 33_554_432
    assert quantized == 78_995_521_536 and NEXT_TOTAL - quantized == 678_869_760
    assert model.weight_bytes == 78_995_521_536 + 19_286_016 + 678_869_760 * 2 == 80_372_547_072
    # whole on each rank: the same float norms and gates as in BF16
    assert model.weight_replicated_bytes == 101_278_720
    # TP 4, above the 2 KV heads: one KV head of k_proj / v_proj a rank, half of 12 x 2 x 2,048 x 512 =
    # 25,165,824 FP8 weights at 1 + 4 / 16,384 B = 25,171,968 B; (80,372,547,072 - 101,278,720 - 25,171,968) / 4
    # + 101,278,720 + 25,171,968 / 2 (before: 20,169,095,808)
    assert stage_weight_bytes(estimated(model), 48, tp=4) == [20_061_524_096 + 101_278_720 + 12_585_984] \
        == [20_175_388_800]
