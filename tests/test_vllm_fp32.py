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
from kvplan.engines.vllm_fp32 import upcast
from kvplan.engines.vllm_profile import predict_available
from kvplan.engines.vllm_load import config_weights_per_gpu, load_buffers, rope_bytes
from kvplan.sources import load_model
from kvplan.units import GIB
from kvplan.weights.record import DtypeBytes, Weights

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
SPECS = Path(__file__).resolve().parent.parent / "model_specs"
ERNIE = str(CONFIGS / "ernie-4.5-21b-a3b-quoted.json")


def _profile_weights(model, tp=1, pp=1, version="0.34.0", weights=None, gpu="h200") -> int:
    """(vLLM's per-GPU weight bytes less the rotary tables and DSA load buffers, the estimate)."""
    est = predict_available(model, total_bytes=int(140 * GIB), gpu_memory_utilization=0.9, tp=tp, pp=pp,
                            max_model_len=8192, version=version, gpu=gpu, weights=weights)
    built = load_buffers(model, version, 8192, tp)[0]
    return est.weight_bytes - (rope_bytes(model, version, 8192) or 0) - built, est


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
    # a float32 checkpoint is served in bf16 (vllm_load.served_from_float32): every other float loads at 2 B,
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


@pytest.mark.parametrize("name,params", [
    # Qwen3-Next-80B-A3B: 48 layers, every 4th full attention: 36 Gated DeltaNet layers x linear_num_value_heads 32
    ("qwen3-next-80b-a3b", 36 * 32),
    # Qwen3.5-35B-A3B: 40 layers, 30 Gated DeltaNet layers x 32 value heads
    ("qwen3.5-35b-a3b", 30 * 32),
])
def test_gated_deltanet_a_log_in_float32_from_0_19(name, params):
    # layers/mamba/gdn_linear_attn.py (0.19-0.21), gdn/qwen_gdn_linear_attn.py (0.22+): A_log = nn.Parameter(
    # torch.empty(num_v_heads // tp, dtype=torch.float32)), split over TP; 0.18.1's qwen3_next.py
    # Qwen3NextGatedDeltaNet (Qwen3.5's base too) built it without a dtype: nothing added
    from kvplan.engines.vllm_fp32 import upcast

    model = load_model(name)
    up = upcast(model, "0.34.0")
    assert (up.whole_params, up.split_params, up.extra_bytes_per_param) == (0, params, 2)
    assert up.per_gpu_bytes(tp=4) == params * 2 // 4
    assert upcast(model, "0.19.0").split_params == params
    assert upcast(model, "0.18.1") is None


def test_ernie_4_5_vl_routers_and_score_bias_in_float32(tmp_path):
    # ernie45_vl_moe.py Ernie4_5_VLMoeMoE (vLLM 0.11.1+; SGLang 0.5.9 / 0.5.23 ernie45_moe_vl.py the same): the text and
    # vision routers ReplicatedLinear(params_dtype=torch.float32) [64, 2,560] each and the [2, 64] score bias float32.
    # ERNIE-4.5-VL-28B-A3B (tests/test_tables_vl_more.py's config): 27 MoE layers x (2 x 64 x 2,560 + 2 x 64) =
    # 27 x 327,808 = 8,850,816 parameters, whole on every rank, + 2 B each
    from kvplan.engines.sglang_fp32 import upcast as sglang_upcast
    from kvplan.engines.vllm_fp32 import upcast
    from test_tables_vl_more import ERNIE_VL

    (tmp_path / "ernie-vl.json").write_text(json.dumps(ERNIE_VL))
    model = load_model(str(tmp_path / "ernie-vl.json"))
    up = upcast(model, "0.34.0")
    assert (up.whole_params, up.split_params, up.extra_bytes_per_param) == (8_850_816, 0, 2)
    assert upcast(model, "0.11.0") is None
    for release in ("0.5.9", "0.5.23"):
        sg = sglang_upcast(model, release, tp=4)
        assert (sg.params, sg.stage_bytes) == (8_850_816, (17_701_632,))


# -- the families of configs/weight_tables/moe_more.py and vl_more.py (each model file read in every release's wheel)

def _load(tmp_path, raw: dict, name: str):
    (tmp_path / f"{name}.json").write_text(json.dumps(raw))
    return load_model(str(tmp_path / f"{name}.json"))


def _figures(up):
    return None if up is None else (up.whole_params, up.split_params, up.extra_bytes_per_param)


# the configs of tests/test_tables_moe_more.py (there each table's sizes are worked by hand)
EXAONE_MOE = {"architectures": ["ExaoneMoEForCausalLM"], "model_type": "exaone_moe", "first_k_dense_replace": 1,
              "head_dim": 128, "hidden_act": "silu", "hidden_size": 6144, "intermediate_size": 18432,
              "layer_types": ["sliding_attention"] * 3 + ["full_attention"], "max_position_embeddings": 262144,
              "moe_intermediate_size": 2048, "num_attention_heads": 64, "num_experts": 128, "num_experts_per_tok": 8,
              "num_hidden_layers": 4, "num_key_value_heads": 8, "num_shared_experts": 1, "sliding_window": 4,
              "tie_word_embeddings": False, "topk_method": "noaux_tc", "vocab_size": 153600}
HY_V3 = {"model_type": "hy_v3", "architectures": ["HYV3ForCausalLM"], "vocab_size": 120832, "hidden_size": 4096,
         "intermediate_size": 13312, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
         "head_dim": 128, "num_experts": 192, "num_experts_per_tok": 8, "num_shared_experts": 1,
         "moe_intermediate_size": 1536, "max_position_embeddings": 131072}
BEAM = {"model_type": "beam", "architectures": ["BeamForCausalLM"], "vocab_size": 151936, "hidden_size": 5120,
        "intermediate_size": 20480, "num_hidden_layers": 52, "num_attention_heads": 48, "num_key_value_heads": 8,
        "head_dim": 128, "moe_intermediate_size": 2560, "num_experts": 256, "num_experts_per_tok": 8,
        "sliding_window": 512, "max_position_embeddings": 8192}


def _defaults(model_type: str, arch: str) -> dict:
    defaults = json.loads((CONFIGS / "transformers-5.25-defaults.json").read_text())
    return dict(defaults[model_type], architectures=[arch])


def test_exaone_moe_score_bias_in_float32_from_0_14(tmp_path):
    # exaone_moe.py ExaoneMoe: e_score_correction_bias = nn.Parameter(torch.empty(num_experts, dtype=torch.float32))
    # (0.14.0, the file's first release, to 0.34.0); the gate (ReplicatedLinear, GateLinear from 0.31) has no
    # params_dtype: the model dtype. 4 layers, layer 0 dense: 3 MoE layers x 128 = 384 parameters, + 2 B each =
    # 768 B on every GPU (whole), whatever the TP
    model = _load(tmp_path, EXAONE_MOE, "exaone-moe")
    assert _figures(upcast(model, "0.34.0")) == (384, 0, 2)
    assert _figures(upcast(model, "0.14.0")) == (384, 0, 2)
    for tp in (1, 8):
        weights, _ = _profile_weights(model, tp=tp)
        assert weights - config_weights_per_gpu(model, tp) == 768
    assert upcast(model, "0.13.0") is None  # no exaone_moe.py


def test_afmoe_router_and_expert_bias_in_float32_from_0_11_1(tmp_path):
    # afmoe.py AfmoeMoE (0.11.1, its first release, to 0.34.0): the router (nn.Linear dtype=torch.float32, GateLinear
    # params_dtype=torch.float32 from 0.31; the checkpoint's mlp.router.gate) and expert_bias float32. Trinity Nano:
    # 56 layers, 2 dense, 54 x (128 x 1,024 + 128) = 54 x 131,200 = 7,084,800 parameters, whole, + 2 B each =
    # 14,169,600 B on every GPU
    from test_tables_moe_more import TRINITY_NANO

    model = _load(tmp_path, TRINITY_NANO, "trinity-nano")
    assert _figures(upcast(model, "0.34.0")) == (7_084_800, 0, 2)
    assert _figures(upcast(model, "0.11.1")) == (7_084_800, 0, 2)
    weights, _ = _profile_weights(model, tp=2)
    assert weights - config_weights_per_gpu(model, 2) == 14_169_600
    assert upcast(model, "0.11.0") is None  # no afmoe.py


def test_hy_v3_gate_from_0_20_and_expert_bias_from_0_26(tmp_path):
    # hy_v3.py HYV3MoEFused: gate = GateLinear(params_dtype=torch.float32) from 0.20.0 (the file's first release);
    # expert_bias torch.empty(num_experts) in the model dtype up to 0.25.1, dtype=torch.float32 from 0.26.0.
    # HYV3Config's defaults: 80 layers, layer 0 dense, 79 MoE layers: gates 79 x 192 x 4,096 = 62,128,128, biases
    # 79 x 192 = 15,168; whole on every GPU, + 2 B each
    model = _load(tmp_path, HY_V3, "hy-v3")
    assert _figures(upcast(model, "0.34.0")) == (62_143_296, 0, 2)
    assert upcast(model, "0.34.0").per_gpu_bytes(tp=8) == 124_286_592  # 62,143,296 x 2
    assert _figures(upcast(model, "0.26.0")) == (62_143_296, 0, 2)
    assert _figures(upcast(model, "0.25.1")) == (62_128_128, 0, 2)
    assert _figures(upcast(model, "0.20.0")) == (62_128_128, 0, 2)
    assert upcast(model, "0.19.1") is None  # no hy_v3.py


def test_param2_score_bias_from_0_20_and_gate_from_0_31(tmp_path):
    # param2moe.py Param2MoEMoEBlock: gate.e_score_correction_bias (the checkpoint's mlp.gate.expert_bias) float32
    # from 0.20.0 (the file's first release) where moe_router_enable_expert_bias is true or left out; the gate an
    # nn.Linear in the model dtype up to 0.30.0, GateLinear(params_dtype=torch.float32) from 0.31.0. Param2MoeConfig's
    # defaults: 21 layers, layer 0 dense, 20 x 64 experts: biases 1,280, gates 20 x 64 x 2,048 = 2,621,440
    raw = _defaults("param2moe", "Param2MoEForCausalLM")
    model = _load(tmp_path, raw, "param2")
    assert _figures(upcast(model, "0.34.0")) == (2_622_720, 0, 2)
    assert upcast(model, "0.31.0").per_gpu_bytes(tp=4) == 5_245_440  # 2,622,720 x 2, whole
    assert _figures(upcast(model, "0.30.0")) == (1_280, 0, 2)
    assert _figures(upcast(model, "0.20.0")) == (1_280, 0, 2)
    assert upcast(model, "0.19.1") is None  # no param2moe.py
    # moe_router_enable_expert_bias false: no score bias (vLLM sets gate.e_score_correction_bias = None)
    model = _load(tmp_path, {**raw, "moe_router_enable_expert_bias": False}, "param2-no-bias")
    assert _figures(upcast(model, "0.34.0")) == (2_621_440, 0, 2)
    assert upcast(model, "0.30.0") is None


def test_beam_router_and_score_bias_in_float32_from_0_33(tmp_path):
    # vllm/models/beam/nvidia/moe.py BeamSparseMoeBlock: gate = GateLinear(params_dtype=torch.float32) and
    # gate.e_score_correction_bias float32, from 0.33.0 (the first release with vllm/models/beam). BeamConfig's
    # defaults: 52 layers, 3 dense, 49 x (256 x 5,120 + 256) = 49 x 1,310,976 = 64,237,824 parameters, whole,
    # + 2 B each = 128,475,648 B on every GPU
    model = _load(tmp_path, BEAM, "beam")
    assert _figures(upcast(model, "0.34.0")) == (64_237_824, 0, 2)
    assert _figures(upcast(model, "0.33.0")) == (64_237_824, 0, 2)
    weights, _ = _profile_weights(model, tp=8)
    assert weights - config_weights_per_gpu(model, 8) == 128_475_648
    assert upcast(model, "0.32.0") is None


def test_minimax_m3_router_and_score_bias_in_float32_from_0_24(tmp_path):
    # vllm/models/minimax_m3/nvidia/model.py MiniMaxM3MoE: gate = GateLinear(params_dtype=torch.float32) from 0.24.0
    # (the first release with vllm/models/minimax_m3); e_score_correction_bias float32, built only with the config's
    # use_routing_bias in 0.24.0-0.33.0 and always (torch.zeros) from 0.34.0. tests/test_tables_vl_more.py's M3
    # (use_routing_bias left out): 60 MoE layers x (128 x 6,144 + 128) = 60 x 786,560 = 47,193,600 parameters in
    # 0.34, whole; 0.24.0: the routers alone, 60 x 786,432 = 47,185,920, + 2 B each = 94,371,840 B on every GPU
    from test_tables_vl_more import M3

    model = _load(tmp_path, M3, "minimax-m3")
    assert _figures(upcast(model, "0.34.0")) == (47_193_600, 0, 2)
    assert upcast(model, "0.24.0").per_gpu_bytes(tp=4) == 94_371_840
    assert upcast(model, "0.23.0") is None
    # use_routing_bias true: the bias from 0.24.0 too, 47,193,600 x 2 B = 94,387,200 B
    model = _load(tmp_path, {**M3, "use_routing_bias": True}, "minimax-m3-bias")
    assert upcast(model, "0.24.0").per_gpu_bytes(tp=4) == 94_387_200


def test_sarvam_moe_router_with_fp32_router_dtype_and_bias_with_its_flag(tmp_path):
    # bailing_moe.py BailingMoE (sarvam.py SarvamMoEForCausalLM, from 0.18.0): the router in router_dtype (nn.Linear
    # dtype=, GateLinear params_dtype= from 0.31: float32 where "fp32"), gate.expert_bias float32 with
    # moe_router_enable_expert_bias. SarvamMoeConfig's defaults: 19 layers, layer 0 dense, 18 x 128 experts: gates
    # 18 x 128 x 4,096 = 9,437,184, biases 18 x 128 = 2,304
    raw = _defaults("sarvam_moe", "SarvamMoEForCausalLM")
    model = _load(tmp_path, {**raw, "router_dtype": "fp32", "moe_router_enable_expert_bias": True}, "sarvam")
    assert _figures(upcast(model, "0.34.0")) == (9_439_488, 0, 2)
    assert _figures(upcast(model, "0.18.0")) == (9_439_488, 0, 2)
    assert upcast(model, "0.17.1") is None  # no SarvamMoEForCausalLM
    # router_dtype "bf16": the bias alone; neither field: nothing
    model = _load(tmp_path, {**raw, "router_dtype": "bf16", "moe_router_enable_expert_bias": True}, "sarvam-bf16")
    assert _figures(upcast(model, "0.34.0")) == (2_304, 0, 2)
    assert upcast(_load(tmp_path, raw, "sarvam-plain"), "0.34.0") is None


@pytest.mark.parametrize("name, params", [
    # dots.llm1: 62 layers, first_k_dense_replace 1: 61 MoE layers x 128 experts
    ("DOTS_LLM1", 61 * 128),
    # Solar Open 100B: 48 layers, all MoE, x 128 experts
    ("SOLAR_OPEN_100B", 48 * 128),
])
def test_transformers_backend_keeps_the_score_bias_in_float32_from_0_24(tmp_path, name, params):
    # vLLM's Transformers backend: fusers/moe.py MoEBlockFuser.gate keeps the HF gate's e_score_correction_bias as
    # a buffer of its GateLinear, and from 0.28.0 transformers/base.py keep_in_fp32 upcasts it (the HF class's
    # _keep_in_fp32_modules_strict names it); the GateLinear weight stays bf16. Whole on every GPU, + 2 B each.
    # 0.24.0-0.27.1 (transformers>=5.5.3, unbounded: the newest installs) keep the HF class's buffer, which
    # transformers 5.24+ builds with dtype=torch.float32 (Solar Open in every release); dots1.py up to 0.23.0 built
    # it in the model dtype
    import test_tables_moe_more

    model = _load(tmp_path, getattr(test_tables_moe_more, name), name)
    assert _figures(upcast(model, "0.34.0")) == (params, 0, 2)
    assert upcast(model, "0.28.0").per_gpu_bytes(tp=4) == 2 * params
    assert upcast(model, "0.27.1").per_gpu_bytes(tp=4) == 2 * params
    assert upcast(model, "0.24.0").per_gpu_bytes(tp=4) == 2 * params
    assert upcast(model, "0.23.0") is None


def test_inkling_gate_bias_and_global_scale_only_with_their_flags(tmp_path):
    # models/inkling/nvidia/moe.py InklingGate (0.26.0, the first release with vllm/models/inkling, to 0.34.0): bias
    # [n_routed_experts] float32 with use_gate_bias, global_scale [1] float32 with use_global_scale; vLLM's
    # InklingModelConfig leaves both false. tests/test_tables_hybrid_more.py's Inkling: 40 MoE layers (dense_mlp_idx
    # 2 of 42) x (256 + 1) = 10,280 parameters, whole, + 2 B each = 20,560 B on every GPU
    from test_tables_hybrid_more import _inkling

    model = _load(tmp_path, {**_inkling(), "use_gate_bias": True, "use_global_scale": True}, "inkling")
    assert _figures(upcast(model, "0.34.0")) == (10_280, 0, 2)
    assert upcast(model, "0.26.0").per_gpu_bytes(tp=8) == 20_560
    assert upcast(model, "0.25.1") is None
    # the bias alone: 40 x 256 = 10,240
    model = _load(tmp_path, {**_inkling(), "use_gate_bias": True}, "inkling-bias")
    assert _figures(upcast(model, "0.34.0")) == (10_240, 0, 2)
    assert upcast(_load(tmp_path, _inkling(), "inkling-plain"), "0.34.0") is None


def test_ling_2_0_router_and_expert_bias_by_config_flags(tmp_path):
    # bailing_moe.py BailingMoE (vLLM 0.11.0-0.34.0 alike): gate.expert_bias [E] float32 where
    # moe_router_enable_expert_bias is true; the gate [E, hidden] float32 only where router_dtype is "fp32".
    # Ling-flash-2.0 (the handwritten test config): 32 layers, the first dense (first_k_dense_replace 1): 31 MoE
    # layers, 256 experts, hidden 4,096, the flag true, router_dtype left out: 31 x 256 = 7,936 parameters, whole
    from kvplan.engines.vllm_fp32 import upcast

    path = CONFIGS / "ling-flash-2.0-handwritten.json"
    up = upcast(load_model(str(path)), "0.11.0")
    assert (up.whole_params, up.split_params, up.extra_bytes_per_param) == (7_936, 0, 2)
    # router_dtype "fp32": + 31 x 256 x 4,096 = 32,505,856 router parameters
    raw = json.loads(path.read_text())
    raw["router_dtype"] = "fp32"
    (tmp_path / "ling.json").write_text(json.dumps(raw))
    up = upcast(load_model(str(tmp_path / "ling.json")), "0.34.0")
    assert up.whole_params == 7_936 + 32_505_856
    # the flag off: nothing
    raw.pop("router_dtype")
    raw["moe_router_enable_expert_bias"] = False
    (tmp_path / "ling-off.json").write_text(json.dumps(raw))
    assert upcast(load_model(str(tmp_path / "ling-off.json")), "0.34.0") is None


def test_step_3_5_step_5_and_muse_spark_routers_in_float32(tmp_path):
    # routers (GateLinear params_dtype float32) and their biases (float32), whole on every rank, + 2 B each
    from kvplan.engines.sglang_fp32 import upcast as sglang_upcast
    from kvplan.engines.vllm_fp32 import upcast
    from test_tables_step_more import MUSE_SPARK_TEXT, STEP35_FLASH

    # Step-3.5-Flash (vLLM step3p5.py from 0.15.1): 42 MoE layers x (288 x 4,096 + 288) = 42 x 1,179,936 = 49,557,312; SGLang
    # (step3p5.py Step3p5MoEMLP) the router_bias alone, 42 x 288 = 12,096
    model = _load(tmp_path, STEP35_FLASH, "step35")
    assert _figures(upcast(model, "0.34.0")) == (49_557_312, 0, 2)
    assert _figures(upcast(model, "0.15.1")) == (49_557_312, 0, 2)
    assert upcast(model, "0.15.0") is None
    assert sglang_upcast(model, "0.5.9", tp=4).stage_bytes == (24_192,)
    # Step-5 Preview (models/step5 from 0.33.0): 88 MoE layers x (352 x 4,096 + 352) = 126,908,672
    model = load_model(str(CONFIGS / "step-5-preview-reconstructed.json"))
    assert _figures(upcast(model, "0.33.0")) == (126_908_672, 0, 2)
    assert upcast(model, "0.32.0") is None
    # Muse Spark's text model (models/muse_spark from 0.33.0; SGLang 0.5.23): 62 MoE layers x (256 x 8,192 + 256) =
    # 130,039,296
    model = _load(tmp_path, MUSE_SPARK_TEXT, "muse")
    assert _figures(upcast(model, "0.34.0")) == (130_039_296, 0, 2)
    assert upcast(model, "0.32.0") is None
    assert sglang_upcast(model, "0.5.23", tp=8).params == 130_039_296
    assert sglang_upcast(model, "0.5.9", tp=8) is None


def test_inkling_model_gate_bias_and_scale_with_their_flags(tmp_path):
    # models/inkling/nvidia/moe.py InklingGate (vLLM 0.26+; SGLang 0.5.23 inkling_common/moe.py): its bias [routed]
    # with use_gate_bias and its global_scale [1] with use_global_scale, both float32 (off by default: nothing).
    # The quoted Inkling config (vLLM's own inkling_model): 40 MoE layers, 256 routed experts: 40 x 257 = 10,280
    from kvplan.engines.vllm_fp32 import upcast

    raw = json.loads((CONFIGS / "inkling-small-text-quoted.json").read_text())
    assert upcast(_load(tmp_path, raw, "inkling"), "0.34.0") is None
    raw["text_config"] = dict(raw["text_config"], use_gate_bias=True, use_global_scale=True)
    model = _load(tmp_path, raw, "inkling-flags")
    assert _figures(upcast(model, "0.26.0")) == (10_280, 0, 2)
    assert upcast(model, "0.25.1") is None


def test_mistral_large_4_indexer_k_norm_in_float32_from_0_34(tmp_path):
    # vllm/models/mistral/nvidia/indexer.py MistralIndexer: k_norm = LayerNorm(head_dim 128, dtype=torch.float32),
    # weight and bias, whole; tests/test_tables_mla_more.py's config has indexers on layers 0 and 4: 2 x 256 = 512
    # parameters, + 2 B each
    from kvplan.engines.vllm_fp32 import upcast
    from test_tables_mla_more import LARGE4

    model = _load(tmp_path, LARGE4, "mistral-large-4")
    assert _figures(upcast(model, "0.34.0")) == (512, 0, 2)
    assert upcast(model, "0.33.0") is None
