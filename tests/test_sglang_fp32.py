"""Parameters SGLang builds in float32 whatever the checkpoint's dtype (configs/param_fp32.py, Fp32Rule.sglang), which
SGLang's weights hold at 4 B where kvplan sizes them at the checkpoint's 2 B (engines/sglang_fp32.py), so its pool
is smaller by as much. Each figure is worked out by hand from the bundled config and the SGLang class that builds
the parameter (the 0.5.23 wheel's python/sglang/srt/models, 0.5.9's sdist where it differs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.engines.sglang_fp32 import upcast
from kvplan.sources import load_model

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def _figures(up):
    return None if up is None else (up.params, up.extra_bytes_per_param, up.stage_bytes)


def test_longcat_flash_router_in_float32_whole_on_every_rank():
    # longcat_flash.py LongcatFlashRouter: classifier = ReplicatedLinear(params_dtype=rounter_params_dtype, "float32"
    # by SGLang's own LongcatFlashConfig) [n_routed_experts + zero_expert_num = 512 + 256, 6144], no bias
    # (router_bias False), and e_score_correction_bias float32 [768]; 28 decoder layers:
    # 28 x (768 x 6144 + 768) = 28 x 4,719,360 = 132,142,080 parameters, + 2 B each, whole on every TP rank
    model = load_model("longcat-flash-chat")
    assert _figures(upcast(model, "0.5.23", tp=8)) == (132_142_080, 2, (264_284_160,))
    assert _figures(upcast(model, "0.5.9", tp=8)) == (132_142_080, 2, (264_284_160,))
    # PP 2: get_pp_indices(28, 2) gives each stage 14 decoder layers, so 14 x 4,719,360 x 2 B = 132,142,080 B each
    assert _figures(upcast(model, "0.5.23", tp=4, pp=2)) == (132_142_080, 2, (132_142_080, 132_142_080))


def test_the_sglang_pool_loses_the_float32_bytes(cli):
    # SGLang's pool is int(T0 x mem_fraction_static) - the weights on a GPU: with the fraction given (--mem-util),
    # it is kvplan's own per-GPU weights (capacity) + LongCat-Flash's routers less than that: at TP 16 (SGLang
    # refuses PP for LongcatFlashForCausalLM: tests/test_sglang_pp.py), all 28 decoder layers' routers whole on
    # every GPU, 264,284,160 B (above)
    from kvplan.engines.sglang_report import PRELOAD_BYTES, PRELOAD_TP_BYTES
    from kvplan.capacity.gpus import lookup
    from kvplan.engines.vllm_profile import driver_total_bytes

    rc, out, err = cli("estimate", "longcat-flash-chat", "--engine", "sglang", "--gpu", "h200", "--tp", "16",
                       "--context", "8k", "--mem-util", "0.85", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    t0 = driver_total_bytes(lookup("h200")) - PRELOAD_BYTES - PRELOAD_TP_BYTES
    weights = data["capacity"]["weight_bytes_per_gpu"] + 264_284_160
    assert data["engine"]["kv_memory_bytes"] == int(t0 * 0.85) - weights
    assert any("132,142,080 parameters SGLang holds in float32" in n for n in data["engine"]["notes"])


def test_glm_gate_in_float32_from_0_5_23_only():
    # glm4_moe_lite.py Glm4MoeLiteGate: weight [64, 2048] and e_score_correction_bias [64] both float32 in 0.5.23;
    # 0.5.9 built the weight in the model dtype. GLM-4.7-Flash: 47 layers, the first dense, 46 MoE layers:
    # 0.5.23: 46 x (131,072 + 64) = 6,032,256 parameters, x 2 B = 12,064,512 B on every GPU (whole)
    # 0.5.9: 46 x 64 = 2,944, x 2 B = 5,888 B
    model = load_model("glm-4.7-flash")
    assert _figures(upcast(model, "0.5.23", tp=2)) == (6_032_256, 2, (12_064_512,))
    assert _figures(upcast(model, "0.5.9", tp=2)) == (2_944, 2, (5_888,))


def test_each_release_takes_its_own_float32_bytes_from_the_pool(cli):
    # the same fraction (--mem-util) and GPU: the two releases' pools differ by the gate weights alone,
    # 12,064,512 - 5,888 = 12,058,624 B (46 x 131,072 x 2 B)
    pools = {}
    for engine in ("sglang", "sglang@0.5.9"):
        rc, out, err = cli("estimate", "glm-4.7-flash", "--engine", engine, "--gpu", "h100", "--tp", "2",
                           "--context", "8k", "--mem-util", "0.8", "--format", "json")
        assert rc == 0, err
        pools[engine] = json.loads(out)["engine"]["kv_memory_bytes"]
    assert pools["sglang@0.5.9"] - pools["sglang"] == 46 * 131_072 * 2 == 12_058_624


def test_deepseek_score_bias_and_dsa_k_norm():
    # deepseek_v2.py MoEGate: noaux_tc -> e_score_correction_bias float32 [256]; the gate weight in the model dtype
    # (float32 only with router_fp32). DeepSeek-V3: 61 layers, 3 dense, 58 x 256 = 14,848 parameters -> 29,696 B
    # a GPU, whatever the TP
    assert _figures(upcast(load_model("deepseek-v3"), "0.5.23", tp=8)) == (14_848, 2, (29_696,))
    # DeepSeek-V3.2: + the DSA indexer's k_norm, LayerNorm(index_head_dim 128, float32: weight and bias) on each of
    # 61 layers (dsa_indexer.py Indexer; 0.5.9 nsa_indexer.py): 14,848 + 61 x 256 = 30,464 -> 60,928 B
    assert _figures(upcast(load_model("deepseek-v3.2-exp"), "0.5.23", tp=8)) == (30_464, 2, (60_928,))


def test_deepseek_v3_tensor_table_with_float32_tensors_adds_nothing(cli):
    # the bundled DeepSeek-V3 record holds F32 tensors (the checkpoint stores e_score_correction_bias so): the
    # 29,696 B are not added twice, a note says so
    rc, out, err = cli("estimate", "deepseek-v3", "--engine", "sglang", "--gpu", "h200", "--tp", "8", "--context",
                       "8k", "--format", "json")
    assert rc == 0, err
    notes = json.loads(out)["engine"]["notes"]
    assert any("may store them in float32 already" in n and "29,696 B" in n for n in notes)
    assert not any(n.startswith("weights include +") for n in notes)


def test_families_sglang_builds_in_the_model_dtype():
    # ernie4.py MoEGate: weight and e_score_correction_bias torch.empty without a dtype (0.5.9, 0.5.23), where vLLM
    # 0.34 holds both in float32; Qwen3-MoE's gate ReplicatedLinear without params_dtype; Llama: nothing
    for name in ("qwen3-30b-a3b", "llama-3.1-8b"):
        assert upcast(load_model(name), "0.5.23", tp=2) is None
    from kvplan.configs.param_fp32 import FP32_RULES, SGLANG_FP32, VLLM_FP32

    assert "ernie4_5_moe" in VLLM_FP32 and "ernie4_5_moe" not in SGLANG_FP32
    # one record for a module both engines hold in float32, not a copy
    assert SGLANG_FP32["lfm2_moe"] == VLLM_FP32["lfm2_moe"] == FP32_RULES["lfm2_moe"]
    assert SGLANG_FP32["deepseek_v3"][0] is VLLM_FP32["deepseek_v3"][0]


def _model(path: Path, tmp_path: Path, **changes):
    """The model of the config at `path` with `changes` (None: the key left out), read from a file as a user's
    local config is (the engines' float32 additions read the config's own file)."""
    raw = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    out = tmp_path / f"{path.stem}-{len(list(tmp_path.iterdir()))}.json"
    out.write_text(json.dumps(raw))
    return load_model(str(out))


def test_longcat_router_follows_rounter_params_dtype(tmp_path):
    # longcat_flash.py LongcatFlashMoE (0.5.9 and 0.5.23): `if config.rounter_params_dtype == "float32"` float32,
    # else torch.bfloat16; the bundled config leaves it out (SGLang's LongcatFlashConfig default "float32": the test
    # above). Named "bfloat16": nothing in float32. vLLM 0.34 sets torch.float32 whatever the config says.
    from kvplan.engines.vllm_fp32 import upcast as vllm_upcast

    model = _model(SPECS / "longcat-flash-chat.json", tmp_path, rounter_params_dtype="bfloat16")
    assert upcast(model, "0.5.23", tp=8) is None and upcast(model, "0.5.9", tp=8) is None
    assert vllm_upcast(model, "0.34.0").whole_params == 132_142_080


def test_mimo_v2_router_follows_moe_router_dtype(tmp_path):
    # MiMo-V2.6-Flash: 48 layers, moe_layer_freq [0, 1 x 47]: 47 MoE layers, gate [256, 4096] = 1,048,576 and
    # e_score_correction_bias [256] (topk_method noaux_tc); the config's moe_router_dtype "bfloat16".
    # SGLang 0.5.23 mimo_v2.py MoEGate: the gate in moe_router_dtype (bf16), the bias float32: 47 x 256 = 12,032
    # parameters, + 2 B each, whole: 24,064 B. 0.5.9 mimo_v2_flash.py MoEGate: both float32 whatever the config says:
    # 47 x 1,048,832 = 49,295,104 parameters, 98,590,208 B on every GPU
    model = _model(CONFIGS / "mimo-v2.6-flash.json", tmp_path)
    assert _figures(upcast(model, "0.5.23", tp=8)) == (12_032, 2, (24_064,))
    assert _figures(upcast(model, "0.5.9", tp=8)) == (49_295_104, 2, (98_590_208,))
    # moe_router_dtype left out: float32 in both releases
    model = _model(CONFIGS / "mimo-v2.6-flash.json", tmp_path, moe_router_dtype=None)
    assert _figures(upcast(model, "0.5.23", tp=8)) == (49_295_104, 2, (98_590_208,))


def test_kimi_linear_kda_state_parameters_split_over_tp():
    # kimi_linear.py KimiDeltaAttention, float32: qkv_conv1d (0.5.9 q/k/v_conv1d) 3 x [projection 32 x 128 = 4,096,
    # kernel 4] = 49,152, dt_bias [4,096], A_log [32], each split over TP; the MoE gate's e_score_correction_bias in
    # the model dtype (torch.empty(num_experts)). 20 KDA layers (kda_layers): 20 x 53,280 = 1,065,600 parameters,
    # x 2 B = 2,131,200 B, / 2 ranks = 1,065,600 B a GPU
    model = load_model("kimi-linear-48b-a3b")
    assert _figures(upcast(model, "0.5.23", tp=2)) == (1_065_600, 2, (1_065_600,))


@pytest.mark.parametrize("name,release,params", [
    # qwen3_next.py: A_log float32 [linear_num_value_heads 32 / TP]; 48 layers, every 4th full: 36 x 32 = 1,152
    ("qwen3-next-80b-a3b", "0.5.23", 1_152),
    ("qwen3-next-80b-a3b", "0.5.9", 1_152),
    # qwen3_5.py: the same from 0.5.23 (0.5.9 torch.empty without a dtype); 40 layers: 30 x 32 = 960
    ("qwen3.5-35b-a3b", "0.5.23", 960),
    ("qwen3.5-35b-a3b", "0.5.9", None),
    # mamba.py MambaMixer2: A float32 [mamba_num_heads 128 / TP]; Nemotron-H 8B's pattern has 24 M layers: 3,072
    ("nemotron-h-8b", "0.5.23", 3_072),
])
def test_recurrent_a_log_in_float32(name, release, params):
    # split over TP 2: params x 2 B / 2 = params B a GPU
    up = upcast(load_model(name), release, tp=2)
    assert _figures(up) == (None if params is None else (params, 2, (params,)))


def test_sglang_holds_whole_what_vllm_does_and_no_float32_for_qwen3_moe(cli):
    # a pin (the same before this change): SGLang 0.5.23 holds Qwen3-MoE's norms (RMSNorm) and router
    # (qwen3_moe.py ReplicatedLinear, no params_dtype: the model dtype) whole on every rank and, above the 4 KV
    # heads, one whole KV head a rank (layers/linear.py QKVParallelLinear: num_kv_heads 1, num_kv_head_replicas
    # tp / kv heads), as vLLM. Qwen3-30B-A3B at TP 8 (tests/test_kv_head_replication.py works it out):
    # (61,064,245,248 - 25,587,712 - 201,326,592) / 8 + 25,587,712 + 201,326,592 / 4 = 7,680,585,728 B a GPU
    from kvplan.capacity.gpus import lookup
    from kvplan.engines.sglang_report import PRELOAD_BYTES, PRELOAD_TP_BYTES
    from kvplan.engines.vllm_profile import driver_total_bytes

    rc, out, err = cli("estimate", "qwen3-30b-a3b", "--engine", "sglang", "--gpu", "h100", "--tp", "8",
                       "--context", "8k", "--mem-util", "0.8", "--format", "json")
    assert rc == 0, err
    t0 = driver_total_bytes(lookup("h100")) - PRELOAD_BYTES - PRELOAD_TP_BYTES
    assert json.loads(out)["engine"]["kv_memory_bytes"] == int(t0 * 0.8) - 7_680_585_728


# -- the families of configs/weight_tables/moe_more.py and vl_more.py (configs of tests/test_vllm_fp32.py) ------

def _load(tmp_path, raw: dict, name: str):
    (tmp_path / f"{name}.json").write_text(json.dumps(raw))
    return load_model(str(tmp_path / f"{name}.json"))


def test_exaone_moe_and_afmoe_score_biases_alone(tmp_path):
    # exaone_moe.py (0.5.9, 0.5.23): e_score_correction_bias float32, the gate (ReplicatedLinear) in the model dtype:
    # 3 MoE layers x 128 = 384 parameters -> 768 B a GPU. afmoe.py (both): expert_bias float32 (torch.zeros
    # dtype=torch.float32), the gate ReplicatedLinear in the model dtype: Trinity Nano's 54 MoE layers x 128 = 6,912
    # -> 13,824 B a GPU
    from test_tables_moe_more import TRINITY_NANO
    from test_vllm_fp32 import EXAONE_MOE

    exaone = _load(tmp_path, EXAONE_MOE, "exaone-moe")
    afmoe = _load(tmp_path, TRINITY_NANO, "trinity-nano")
    for release in ("0.5.9", "0.5.23"):
        assert _figures(upcast(exaone, release, tp=4)) == (384, 2, (768,))
        assert _figures(upcast(afmoe, release, tp=2)) == (6_912, 2, (13_824,))


def test_hy_v3_and_beam_routers_in_float32_from_0_5_23(tmp_path):
    # hunyuan_v3.py HYV3MoEFused: gate ReplicatedLinear(params_dtype=torch.float32) and expert_bias float32: 79 x
    # (192 x 4,096 + 192) = 62,143,296 -> 124,286,592 B. beam.py: gate ReplicatedLinear(params_dtype=torch.float32)
    # and gate.e_score_correction_bias float32: 49 x (256 x 5,120 + 256) = 64,237,824 -> 128,475,648 B. 0.5.9 has
    # neither model
    from test_vllm_fp32 import BEAM, HY_V3

    hy = _load(tmp_path, HY_V3, "hy-v3")
    beam = _load(tmp_path, BEAM, "beam")
    assert _figures(upcast(hy, "0.5.23", tp=8)) == (62_143_296, 2, (124_286_592,))
    assert _figures(upcast(beam, "0.5.23", tp=8)) == (64_237_824, 2, (128_475_648,))
    assert upcast(hy, "0.5.9", tp=8) is None and upcast(beam, "0.5.9", tp=8) is None


def test_minimax_m3_score_bias_only_with_use_routing_bias(tmp_path):
    # minimax_m3.py MiniMaxM3MoE: e_score_correction_bias float32 only with use_routing_bias; the router bfloat16
    # under SGLANG_OPT_USE_BF16_ROUTER_GEMM (on by default): 60 layers x 128 = 7,680 -> 15,360 B a GPU
    from test_tables_vl_more import M3

    assert upcast(_load(tmp_path, M3, "m3"), "0.5.23", tp=4) is None
    model = _load(tmp_path, {**M3, "use_routing_bias": True}, "m3-bias")
    assert _figures(upcast(model, "0.5.23", tp=4)) == (7_680, 2, (15_360,))


def test_sarvam_moe_as_ling_from_0_5_23(tmp_path):
    # sarvam_moe.py SarvamMoEForCausalLM is bailing_moe.py's BailingMoEForCausalLM: router in float32 with router_dtype
    # "fp32", expert_bias float32 with moe_router_enable_expert_bias; SarvamMoeConfig's defaults: 18 MoE layers x
    # (128 x 4,096 + 128) = 9,439,488 -> 18,878,976 B. 0.5.9 has no Sarvam-MoE
    defaults = json.loads((CONFIGS / "transformers-5.25-defaults.json").read_text())
    raw = dict(defaults["sarvam_moe"], architectures=["SarvamMoEForCausalLM"], router_dtype="fp32",
               moe_router_enable_expert_bias=True)
    model = _load(tmp_path, raw, "sarvam")
    assert _figures(upcast(model, "0.5.23", tp=2)) == (9_439_488, 2, (18_878_976,))
    assert upcast(model, "0.5.9", tp=2) is None


def test_inkling_gate_bias_and_global_scale_from_0_5_23(tmp_path):
    # inkling_common/moe.py InklingGate: bias float32 with use_gate_bias, global_scale float32 with use_global_scale:
    # 40 MoE layers x (256 + 1) = 10,280 -> 20,560 B a GPU; 0.5.9 has no Inkling
    from test_tables_hybrid_more import _inkling

    model = _load(tmp_path, {**_inkling(), "use_gate_bias": True, "use_global_scale": True}, "inkling")
    assert _figures(upcast(model, "0.5.23", tp=8)) == (10_280, 2, (20_560,))
    assert upcast(model, "0.5.9", tp=8) is None


def test_glm5_next_hyper_connections_score_bias_and_kda_from_0_5_23(tmp_path):
    # glm5_next.py (0.5.23; 0.5.9 has no GLM-5-Next): whole in float32 the hyper-connections (hc_* nn.Parameters)
    # 45 x 786,486 = 35,391,870 and DeepseekV2MoE's score biases 42 x 256 = 10,752 (35,402,622); split, KDA's
    # dt_bias 64 x 128, A_log 64 and qkv_conv1d 3 x 8,192 x 4 on 34 layers: 34 x (8,192 + 64 + 98,304) = 3,623,040
    # (the indexer's parameters not read in SGLang: left out). TP 8: 2 B x (35,402,622 + 3,623,040 / 8) = 71,711,004
    from test_tables_hybrid_more import _glm53

    model = _glm53(tmp_path)
    assert _figures(upcast(model, "0.5.23", tp=8)) == (35_402_622 + 3_623_040, 2, (71_711_004,))
    assert upcast(model, "0.5.9", tp=8) is None
    # mhc false: neither engine builds the hyper-connections (SGLang's Glm5NextTextConfig defaults it so); vLLM's
    # whole float32 are then the score biases 10,752, the k-pool ape 5,632 and indexer k_norm 2,816 = 19,200
    from kvplan.engines.vllm_fp32 import upcast as vllm_upcast

    raw = json.loads((tmp_path / "config.json").read_text())
    raw["text_config"]["mhc"] = False
    model = _load(tmp_path, raw, "glm53-no-mhc")
    assert _figures(upcast(model, "0.5.23", tp=8)) == (10_752 + 3_623_040, 2, (2 * (10_752 + 452_880),))
    up = vllm_upcast(model, "0.34.0")
    assert (up.whole_params, up.split_params) == (19_200, 3_623_040)
