"""Parameters vLLM builds in float32 whatever the checkpoint's dtype (configs/param_fp32.py), which vLLM's profile
weights hold at 4 B where kvplan's plan sizes them at the checkpoint's 2 B (engines/vllm_fp32.py). Each figure is
worked out by hand from the config and the vLLM class that builds the parameter (vLLM 0.34 unless a release is
named); kvplan's own plan of the checkpoint does not change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from kvplan.engines.vllm_profile import config_weights_per_gpu, predict_available, rope_bytes
from kvplan.sources import load_model
from kvplan.units import GIB
from kvplan.weights.record import DtypeBytes, Weights

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
SPECS = Path(__file__).resolve().parent.parent / "model_specs"
ERNIE = str(CONFIGS / "ernie-4.5-21b-a3b-quoted.json")


def _profile_weights(model, tp=1, pp=1, version="0.34.0", weights=None, gpu="h200") -> int:
    """(vLLM's per-GPU weight bytes less the rotary tables, the estimate)."""
    est = predict_available(model, total_bytes=int(140 * GIB), gpu_memory_utilization=0.9, tp=tp, pp=pp,
                            max_model_len=8192, version=version, gpu=gpu, weights=weights)
    return est.weight_bytes - (rope_bytes(model, version, 8192) or 0), est


def test_longcat_flash_router_in_float32_at_tp_8():
    # longcat_flash.py LongcatMoe: router_params_dtype = torch.float32 for LongcatRouter's classifier (GateLinear
    # [n_routed_experts + zero_expert_num, hidden], no bias: router_bias unset) and e_score_correction_bias; both
    # replicated on every TP rank. 28 layers x (6144 x (512 + 256) + 768) = 28 x 4,719,360 = 132,142,080
    # parameters, + 2 B each = 264,284,160 B on every GPU
    model = load_model("longcat-flash-chat")
    weights, est = _profile_weights(model, tp=8)
    assert weights == config_weights_per_gpu(model, 8) + 264_284_160
    assert "252.0 MiB" in est.weights_from  # 264,284,160 / 2**20
    from kvplan.engines.vllm_fp32 import upcast

    up = upcast(model, "0.34.0")
    assert (up.whole_params, up.split_params, up.extra_bytes_per_param) == (132_142_080, 0, 2)
    # PP 2 x TP 4: each stage holds its 14 layers' routers: 132,142,080 B on every GPU
    weights, _ = _profile_weights(model, tp=4, pp=2)
    assert weights == config_weights_per_gpu(model, 4, 2) + 132_142_080


def test_ernie_4_5_moe_gate_and_score_bias_in_float32_from_0_11_1():
    # ernie45_moe.py Ernie4_5_MoeMoE: gate = GateLinear(params_dtype=torch.float32) [64, 2560] and
    # gate.e_score_correction_bias float32 [64], on the 27 MoE layers (1 to 27, interval 1): 27 x (163,840 + 64)
    # = 4,425,408 parameters, + 2 B each = 8,850,816 B on every GPU (replicated), whatever the TP size
    model = load_model(ERNIE)
    for tp in (1, 2, 4):
        weights, _ = _profile_weights(model, tp=tp)
        assert weights == config_weights_per_gpu(model, tp) + 8_850_816
    # vLLM 0.11.0 built both in the model dtype (ReplicatedLinear without params_dtype; torch.empty(E))
    weights, _ = _profile_weights(model, tp=2, version="0.11.0")
    assert weights == config_weights_per_gpu(model, 2)
    weights, _ = _profile_weights(model, tp=2, version="0.11.1")
    assert weights == config_weights_per_gpu(model, 2) + 8_850_816
    # kvplan's plan of the checkpoint is unchanged: 2 B a parameter
    assert model.weight_bytes == 2 * model.param_count


@pytest.mark.parametrize("name, extra_bytes", [
    # lfm2_moe.py: gate.e_score_correction_bias float32 (the checkpoint's expert_bias), the gate in bf16;
    # 24 layers less num_dense_layers 2 = 22 MoE layers x 32 experts = 704 parameters -> 1,408 B
    ("lfm2-8b-a1b", 1_408),
    # glm4_moe.py Glm4MoE: gate (params_dtype float32) [128, 4096] and e_score_correction_bias [128] on 46 - 1 = 45
    # layers: 45 x 524,416 = 23,598,720 parameters -> 47,197,440 B
    ("glm-4.5-air", 47_197_440),
    # minimax_m2.py MiniMaxM2MoE: gate (params_dtype float32) [256, 3072] and e_score_correction_bias
    # (use_routing_bias) on all 62 layers: 62 x 786,688 = 48,774,656 parameters -> 97,549,312 B
    ("minimax-m2", 97_549_312),
    # deepseek_v2.py DeepseekV2MoE: gate.e_score_correction_bias float32 under topk_method noaux_tc, on 61 - 3 = 58
    # layers x 256 = 14,848; DeepseekV32Indexer.k_norm LayerNorm(dtype=float32) weight + bias 2 x 128 on all 61
    # layers = 15,616: 30,464 parameters -> 60,928 B
    ("deepseek-v3.2-exp", 60_928),
    # glm4_moe_lite.py Glm4MoeLite (a Glm4MoE): gate [64, 2048] and e_score_correction_bias on 47 - 1 = 46 layers:
    # 46 x 131,136 = 6,032,256 parameters -> 12,064,512 B
    ("glm-4.7-flash", 12_064_512),
    # laguna.py: mlp.experts.e_score_correction_bias float32 on the 39 'sparse' of 40 mlp_layer_types x 256 = 9,984
    # -> 19,968 B (an FP8 checkpoint whose router and bias stay in bf16)
    (str(CONFIGS / "laguna-xs.2-fp8.json"), 19_968),
    # kimi_k3/nvidia/model.py: gate.e_score_correction_bias float32 on 27 - 1 = 26 layers x 256 = 6,656 -> 13,312 B
    ("kimi-linear-48b-a3b", 13_312),
    # nemotron_h.py NemotronHMoE: gate.e_score_correction_bias float32 on the 23 'E' layers x 128 = 2,944 -> 5,888 B;
    # mamba_mixer2.py MambaMixer2's A (the checkpoint's A_log) float32 on the 23 'M' layers x 64 heads = 1,472, split
    # over the 2 ranks -> 1,472 B
    ("nemotron-3-nano-30b-a3b", 5_888 + 1_472),
])
def test_other_families_float32_routers(name, extra_bytes):
    model = load_model(name)
    weights, _ = _profile_weights(model, tp=2)
    assert weights - config_weights_per_gpu(model, 2) == extra_bytes


def test_releases_before_the_rule_add_nothing():
    # DeepSeek-V3.2's indexer k_norm is float32 from 0.32.0 (0.31.0: LayerNorm in the model dtype): 0.31 adds only
    # the 14,848 score biases (29,696 B); Kimi-Linear's score bias is float32 from 0.27.0 (0.26.0's kimi_linear.py
    # used the model dtype)
    v32 = load_model("deepseek-v3.2-exp")
    assert _profile_weights(v32, tp=2, version="0.31.0")[0] - config_weights_per_gpu(v32, 2) == 29_696
    kimi = load_model("kimi-linear-48b-a3b")
    assert _profile_weights(kimi, tp=2, version="0.26.0")[0] == config_weights_per_gpu(kimi, 2)


def test_nemotron_h_gate_in_float32_off_hopper_and_blackwell():
    # NemotronHMoE's gate = GateLinear(force_fp32_compute=True) from 0.17.0: float32 where GateLinear has no kernel
    # of its own (not capability 9.0 / 10.x), else bf16; 0.11.1-0.16 params_dtype=torch.float32 on every GPU. The
    # 23 'E' layers' gates, 23 x 128 x 2688 = 7,913,472 parameters (+ 15,826,944 B), whole on every rank, beside
    # the 5,888 B of score biases and the 1,472 B of the Mamba mixers' float32 A (23 x 64 heads, split in two)
    model = load_model("nemotron-3-nano-30b-a3b")
    split = config_weights_per_gpu(model, 2)
    other = 5_888 + 1_472
    assert _profile_weights(model, tp=2, gpu="a100-80gb")[0] - split == 15_826_944 + other
    assert _profile_weights(model, tp=2, gpu="l40s")[0] - split == 15_826_944 + other
    assert _profile_weights(model, tp=2, gpu="b200")[0] - split == other
    assert _profile_weights(model, tp=2, gpu="h200", version="0.16.0")[0] - split == 15_826_944 + other
    # a GPU kvplan cannot place: the gates are a note, not added
    weights, est = _profile_weights(model, tp=2, gpu=None)
    assert weights - split == other and any("7,913,472 more parameters" in n for n in est.notes)


def test_score_bias_only_with_noaux_tc():
    # DeepseekV2MoE builds no e_score_correction_bias for another topk_method: nothing to upcast
    from kvplan.engines.vllm_fp32 import fp32_params

    family, f, _, layers, dims = _read({**_raw_v3(), "topk_method": "greedy"}, "v3-greedy")
    assert fp32_params(table(f, layers, dims)) == (0, 0, 0)
    family, f, _, layers, dims = _read(_raw_v3(), "v3")
    assert fp32_params(table(f, layers, dims)) == (58 * 256, 0, 0)


def test_minimax_m2_score_bias_only_with_use_routing_bias():
    # MiniMaxM2MoE builds e_score_correction_bias only with use_routing_bias: without it only the float32 gate,
    # 62 x 3072 x 256 = 48,758,784 parameters (kvplan's table keeps the bias, at the checkpoint's width)
    from kvplan.engines.vllm_fp32 import fp32_params

    raw = json.loads((SPECS / "minimax-m2.json").read_text())
    family, f, _, layers, dims = _read({**raw, "use_routing_bias": False}, "m2-no-bias")
    assert fp32_params(table(f, layers, dims)) == (48_758_784, 0, 0)


def _raw_v3() -> dict:
    return json.loads((SPECS / "deepseek-v3.json").read_text())


def test_a_tensor_table_is_not_counted_twice():
    model = load_model(ERNIE)
    base, _ = _profile_weights(model, tp=2, weights=_record(model, ("BF16",)))
    # a table with float32 tensors may hold the router in float32 already: nothing added, a note
    with_f32, est = _profile_weights(model, tp=2, weights=_record(model, ("BF16", "F32")))
    assert any("not counted" in n and "4,425,408" in n for n in est.notes)
    # a table of BF16 only stores them at 2 B: vLLM's 4 B adds 8,850,816 B on each GPU
    assert base - with_f32 == 8_850_816


def _record(model, dtypes) -> Weights:
    total = model.weight_bytes
    by_dtype = tuple(DtypeBytes(d, total // len(dtypes), total // len(dtypes) // 2, 1) for d in dtypes)
    return Weights(total_bytes=total, source="safetensors", by_dtype=by_dtype, tensors=len(dtypes))


def test_a_float32_checkpoint_keeps_them_at_4_bytes(tmp_path):
    # a float32 checkpoint is served in bf16 (vllm_profile.served_from_float32): every other float loads at 2 B,
    # the router and score bias at 4 B, the stored width: 8,850,816 B a GPU above the halved config split
    raw = json.loads(Path(ERNIE).read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**raw, "torch_dtype": "float32"}))
    model = load_model(str(path))
    weights, _ = _profile_weights(model, tp=2)
    assert weights == config_weights_per_gpu(model, 2, halve=True) + 8_850_816


def test_mamba_mixers_hold_a_in_float32():
    # layers/mamba/mamba_mixer.py MambaMixer builds A [inner, state] with dtype=torch.float32 (0.11.0 to 0.34.0);
    # falcon-mamba-7b (bf16): 64 layers x 8,192 x 16 = 8,388,608 parameters, split over TP 2: 4,194,304 a rank at
    # + 2 B = 8,388,608 B
    model = load_model("falcon-mamba-7b")
    assert _profile_weights(model, tp=2)[0] - config_weights_per_gpu(model, 2) == 8_388_608
    # mamba_mixer2.py MambaMixer2's A, one a head: Mamba-Codestral 64 layers x 128 heads = 8,192 -> 4,096 a rank,
    # 8,192 B
    model = load_model("mamba-codestral-7b")
    assert _profile_weights(model, tp=2)[0] - config_weights_per_gpu(model, 2) == 8_192


def test_mimo_v2_gate_and_score_bias_by_moe_router_dtype_and_release(tmp_path):
    # mimo_v2.py MiMoV2MoE (mimo_v2_flash.py MiMoV2FlashMoE in 0.14-0.20): the gate in moe_router_dtype (float32 where
    # the config leaves it out) and e_score_correction_bias in the gate's dtype up to 0.30, in GateLinear's
    # out_dtype float32 from 0.31.0. MiMo-V2.6-Flash: 47 MoE layers (moe_layer_freq [0, 1 x 47]), gate [256, 4096],
    # bias [256]; both whole on every rank (nn.Linear / GateLinear), + 2 B a parameter
    from kvplan.engines.vllm_fp32 import upcast

    raw = json.loads((CONFIGS / "mimo-v2.6-flash.json").read_text())
    assert raw["moe_router_dtype"] == "bfloat16"
    model = load_model(str(CONFIGS / "mimo-v2.6-flash.json"))
    # "bfloat16": the bias alone from 0.31 (47 x 256 = 12,032), nothing up to 0.30
    up = upcast(model, "0.34.0")
    assert (up.whole_params, up.split_params, up.extra_bytes_per_param) == (12_032, 0, 2)
    assert up.per_gpu_bytes(tp=8) == 24_064
    assert upcast(model, "0.30.0") is None
    # left out: gate and bias in float32 from 0.14.0 (47 x 1,048,832 = 49,295,104), none before (no MiMo-V2 file)
    raw.pop("moe_router_dtype")
    (tmp_path / "mimo.json").write_text(json.dumps(raw))
    model = load_model(str(tmp_path / "mimo.json"))
    for version in ("0.14.0", "0.30.0", "0.34.0"):
        up = upcast(model, version)
        assert (up.whole_params, up.split_params) == (49_295_104, 0)
    assert upcast(model, "0.13.0") is None
