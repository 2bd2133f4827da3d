"""Text and image-text architectures new in vLLM 0.34.0's registry (kvplan/configs/vllm34_text.py and the rows
they touch), each read exactly or refused by name.

Configs: no public config.json of Ripple (ricursiveAI/Ripple-65B-Preview, vLLM 0.34 tests/models/registry.py),
Kimi K3.1 (moonshotai/Kimi-K3.1, is_available_online=False) or Unlimited-OCR-2 was found in the code index
(find_string "model_type": "ricursive" and "Ripple-65B": no hits; search on the repo names: none), so the configs
below are hand-written:
- RIPPLE: RicursiveConfig's own defaults (vLLM 0.34 transformers_utils/configs/ricursive.py: vocab 100,352,
  hidden 5,120, MLP 40,960, 80 layers, 80 heads, 8 KV heads of 128, sliding_window 1,024, gated attention, untied),
  the 65B shape, written out.
- LFM3 / ZAYA: small configs with the field names vLLM 0.34's lfm3.py (Lfm3Config) and zaya.py read.
Expected values are worked out by hand from vLLM 0.34's ricursive.py (RicursiveAttention, RicursiveMLP,
RicursiveDecoderLayer, RicursiveModel, RicursiveForCausalLM), lfm3.py (_short_conv_state_shape: short conv over
hidden_size channels, conv_L_cache - 1 columns; per_layer_sliding_window on sliding_attention layers) and zaya.py
(_cca_state_shapes: (heads + KV heads) x head_dim channels over cca_time0 + cca_time1 - 2 columns, and
KV heads x head_dim / 2 delayed values).
"""

from __future__ import annotations

import json

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

from kvplan_inprocess import kvplan

RIPPLE = {
    "architectures": ["RicursiveForCausalLM"], "model_type": "ricursive", "vocab_size": 100352, "hidden_size": 5120,
    "intermediate_size": 40960, "num_hidden_layers": 80, "num_attention_heads": 80, "num_key_value_heads": 8,
    "head_dim": 128, "max_position_embeddings": 2097152, "sliding_window": 1024, "use_gated_attention": True,
    "use_valres": False, "tie_word_embeddings": False, "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16",
}


def _one_line_error(tmp_path, raw: dict) -> str:
    """Runs `kvplan estimate CFG` as a user would; returns its one error line."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    r = kvplan("estimate", str(path))
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), r.stderr
    return lines[0]


# -- Ripple (RicursiveForCausalLM) ----------------------------------------------------------------------------

def test_ripple_every_fifth_layer_is_full_and_the_rest_slide():
    model = build_model(RIPPLE, "ripple")
    assert model.reading == "exact" and model.family == "ricursive" and model.num_layers == 80
    # RicursiveConfig: layer_types = full_attention if i % 5 == 4 else sliding_attention; RicursiveAttention passes
    # per_layer_sliding_window = sliding_window (1,024) only to the sliding layers
    windows = [layer.caches[0].policy.window_tokens for layer in model.layers]
    assert windows == [1024, 1024, 1024, 1024, None] * 16
    cache = model.layers[0].caches[0]
    assert (cache.heads, cache.key_dim, cache.value_dim) == (8, 128, 128)
    # K and V of 8 KV heads x 128 on all 80 layers, bf16: 80 x 2 x 8 x 128 x 2 B per token below the window
    est = estimate(model, 8192)
    assert est.bytes_per_token == 80 * 2 * 8 * 128 * 2 == 327_680
    # at 8K: 16 full layers keep 8,192 tokens, 64 sliding layers 1,024 (4,096 B per token and layer)
    assert est.kv_bytes_per_sequence == 16 * 8192 * 4096 + 64 * 1024 * 4096 == 805_306_368


def test_ripple_layer_types_are_read_as_written():
    raw = {**RIPPLE, "num_hidden_layers": 4, "layer_types": ["full_attention", "sliding_attention"] * 2}
    assert [layer.caches[0].policy.window_tokens for layer in build_model(raw, "r").layers] == [None, 1024] * 2


def test_ripple_parameters_by_hand():
    model = build_model(RIPPLE, "ripple")
    h, q, kv = 5120, 80 * 128, 8 * 128
    # qkg_proj hidden -> q + k + gate (10,240 + 1,024 + 10,240), v_proj hidden -> 1,024, o_proj 10,240 -> hidden,
    # q_norm / k_norm of 128, gate_up_proj + down_proj 3 x 5,120 x 40,960, four RMSNorms of 5,120
    layer = h * (q + kv + q) + h * kv + q * h + 2 * 128 + 3 * h * 40960 + 4 * h
    assert layer == 796_938_496
    # embed_tokens and an untied lm_head of 100,352 x 5,120, the final norm: the "65B" of its name
    assert model.param_count == 80 * layer + 2 * 100352 * h + h == 64_782_689_280


def test_ripple_parameters_follow_the_switches():
    # no output gate, value residuals (one value_res_lambda a layer), tied head; 2 layers of a small shape
    raw = {**RIPPLE, "num_hidden_layers": 2, "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000, "use_gated_attention": False,
           "use_valres": True, "tie_word_embeddings": True}
    layer = 256 * (256 + 128) + 256 * 128 + 256 * 256 + 2 * 64 + 1 + 3 * 256 * 512 + 4 * 256
    assert build_model(raw, "r").param_count == 2 * layer + 1000 * 256 + 256


def test_ripple_defaults_fill_a_sparse_config():
    # RicursiveConfig's defaults: 80 layers of 8 KV heads x 128, window 1,024
    model = build_model({"model_type": "ricursive", "architectures": ["RicursiveForCausalLM"]}, "bare")
    assert model.num_layers == 80 and estimate(model, 512).bytes_per_token == 327_680


def test_ripple_bad_layer_type_is_one_line(tmp_path):
    raw = {**RIPPLE, "num_hidden_layers": 2, "layer_types": ["full_attention", "linear_attention"]}
    assert "linear_attention" in _one_line_error(tmp_path, raw)


# -- LFM3, LFM3-VL and ZAYA1 as vLLM 0.34 builds them ---------------------------------------------------------

LFM3 = {"model_type": "lfm3", "hidden_size": 2048, "num_hidden_layers": 8, "num_attention_heads": 16,
        "num_key_value_heads": 4, "head_dim": 128, "sliding_window": 256, "conv_L_cache": 7,
        "intermediate_size": 7680, "vocab_size": 128000}


def test_lfm3_and_its_vl_wrapper_agree_with_vllm_0_34():
    # Lfm3Config (vLLM 0.34 transformers_utils/configs/lfm3.py) without layer_types: full where i % 4 == 2,
    # sliding where i % 4 == 0 and i > 0, conv elsewhere -> conv, conv, full, conv, sliding, conv, full, conv
    for raw in (LFM3, {"model_type": "lfm3_vl", "architectures": ["Lfm3VlForConditionalGeneration"],
                       "text_config": LFM3}):
        model = build_model(raw, "lfm3")
        assert model.reading == "exact" and model.family == "lfm3"
        kinds = []
        for layer in model.layers:
            if layer.caches:
                kinds.append("sliding" if layer.caches[0].policy.window_tokens == 256 else "full")
            else:
                kinds.append("conv")
        assert kinds == ["conv", "conv", "full", "conv", "sliding", "conv", "full", "conv"]
        est = estimate(model, 4096)
        # attention layers: K/V of 4 KV heads x 128, bf16, 2,048 B per token; 2 full x 4,096 + 1 sliding x 256
        assert est.kv_bytes_per_sequence == (2 * 4096 + 256) * 2 * 4 * 128 * 2
        # five short-conv states of (conv_L_cache 7 - 1) x hidden 2,048 in bf16
        assert est.state_bytes_per_sequence == 5 * 6 * 2048 * 2 == 122_880


def test_zaya_state_agrees_with_vllm_0_34():
    # ZAYA1 (zaya.py): per layer K/V of 2 KV heads x 128 (hybrid: full) and the CCA state: conv over
    # (8 + 2) x 128 channels x (2 + 2 - 2) columns, delayed value 2 x 128 / 2, bf16
    raw = {"model_type": "zaya", "architectures": ["ZayaForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 4,
           "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "cca_time0": 2, "cca_time1": 2,
           "vocab_size": 1000, "torch_dtype": "bfloat16"}
    est = estimate(build_model(raw, "zaya"), 1024)
    assert est.bytes_per_token == 4 * 2 * 2 * 128 * 2
    assert est.state_bytes_per_sequence == 4 * ((8 + 2) * 128 * 2 + 2 * 128 // 2) * 2 == 21_504


ZAYA_40 = {"model_type": "zaya", "architectures": ["ZayaForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 40,
           "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "cca_time0": 2, "cca_time1": 2,
           "vocab_size": 1000, "torch_dtype": "bfloat16"}


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_zaya_caches_are_whole_on_every_tp_rank_as_vllm_0_34_builds_them(tp):
    # zaya.py ZayaAttention: ReplicatedLinear projections and Attention(num_attention_heads, head_dim, scale,
    # num_key_value_heads) with the config's counts (no division by TP); ZayaCCA.get_state_shape: the whole
    # ((8 + 2) x 128, 2) conv history and the 2 x 128 / 2 delayed value. So each vLLM rank holds all of it.
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve

    model = build_model(ZAYA_40, "zaya")
    pool = simulate(model, kv_memory_bytes=10 * 2**30, max_model_len=8192, max_num_batched_tokens=8192, tp=tp,
                    rules=resolve("0.34")[0])
    # attention page 64 x 2 heads x (128 + 128) x 2 B = 65,536 B >= the CCA page ((8 + 2) x 128 x 2 + 128 = 2,688
    # x 2 B = 5,376 B), which is padded to it; 40 full + 40 state layers: two groups of 40, a block costs
    # 40 x 65,536 = 2,621,440 B; 10 GiB // 2,621,440 = 4,096 blocks; a request 8,192 / 64 = 128 + 2 state pages
    # ('align') = 130; tokens int(4,096 / 130 x 8,192) = 258,111, whatever the TP
    assert {s.page_bytes for s in pool.layer_specs} == {65_536}
    assert pool.num_blocks == 4_096 and pool.gpu_kv_cache_tokens == 4_096 * 8192 // 130 == 258_111
    assert any("replicated" in note for note in pool.notes) == (tp > 1)


@pytest.mark.parametrize("tp", [2, 4])
def test_zaya_plan_without_an_engine_splits_the_kv_heads(tp):
    # kvplan's own plan splits the 2 KV heads by TP, as SGLang 0.5.23 serves ZAYA1 (models/zaya.py: head-parallel
    # CCA and RadixAttention over num_key_value_heads / tp_size): 40 layers x 2 x (2 / tp) x 128 x 2 B a token
    from kvplan.capacity.shard import shard

    rank = shard(build_model(ZAYA_40, "zaya"), tp)[0]
    assert estimate(rank, 8192).bytes_per_token == 40 * 2 * (2 // tp or 1) * 128 * 2


def test_zaya_speculative_decoding_is_refused_as_vllm_0_34_does():
    # ZayaForCausalLM.__init__: "ZAYA1 does not support speculative decoding." for any num_speculative_tokens
    from kvplan.engines.vllm import simulate
    from kvplan.errors import UsageError

    with pytest.raises(UsageError, match="ZayaForCausalLM raises NotImplementedError"):
        simulate(build_model(ZAYA_40, "zaya"), kv_memory_bytes=2**30, max_model_len=8192, num_speculative_tokens=1)


# -- refused by name --------------------------------------------------------------------------------------------

KIMI_TEXT = {"model_type": "kimi_linear", "hidden_size": 2304, "num_hidden_layers": 4, "num_attention_heads": 32,
             "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
             "linear_attn_config": {"full_attn_layers": [4], "kda_layers": [1, 2, 3], "num_heads": 32,
                                    "head_dim": 128, "short_conv_kernel_size": 4}}
DSA = {"dsa_layers": [4], "index_topk": 2048, "index_head_dim": 64, "index_num_heads": 16}


def test_kimi_k3_1_with_its_sparse_attention_is_refused():
    # model_type kimi_k31 is read as kimi_k3 (configs/vllm_own.py); its DSA layers (dsa_config) are refused
    raw = {"model_type": "kimi_k31", "architectures": ["KimiK31ForConditionalGeneration"],
           "text_config": {**KIMI_TEXT, "dsa_config": DSA}}
    with pytest.raises(ConfigError, match="Kimi K3.1's DeepSeek sparse attention") as err:
        build_model(raw, "k31")
    assert "indexer keys" in str(err.value)
    assert build_model({**raw, "text_config": KIMI_TEXT}, "k31").reading == "exact"


@pytest.mark.parametrize("raw", [
    {"model_type": "kimi_k3", "architectures": ["KimiK3ForConditionalGeneration"],
     "text_config": {**KIMI_TEXT, "dsa_config": DSA}},
    {**KIMI_TEXT, "architectures": ["KimiLinearForCausalLM"], "dsa_config": DSA},
])
def test_a_kimi_text_model_with_dsa_config_is_refused(raw):
    # without dsa_config the same text model reads exactly (MLA + KDA)
    plain = dict(raw)
    if "text_config" in plain:
        plain["text_config"] = KIMI_TEXT
    else:
        plain.pop("dsa_config")
    assert build_model(plain, "k3").reading == "exact"
    with pytest.raises(ConfigError, match="'dsa_config' is set .*Kimi K3.1's DeepSeek sparse attention"):
        build_model(raw, "k3")


def test_unlimited_ocr_2_text_model_is_refused_by_architecture(tmp_path):
    raw = {"model_type": "deepseek_v2", "architectures": ["UnlimitedOCR2TextForCausalLM"], "hidden_size": 1280,
           "num_hidden_layers": 12, "num_attention_heads": 10, "num_key_value_heads": 10, "use_mla": False,
           "unlimited_ocr2": True}
    line = _one_line_error(tmp_path, raw)
    assert "UnlimitedOCR2TextForCausalLM" in line and "rswa_window" in line
    # the wrapper stays refused by its model_type (Unlimited-OCR's prompt-plus-ring window), in both spellings
    # (vLLM 0.34 UnlimitedOCRConfig.model_type is "unlimited-ocr"; transformers' is "unlimited_ocr")
    for model_type in ("unlimited-ocr", "unlimited_ocr"):
        with pytest.raises(ConfigError, match="ring"):
            build_model({"model_type": model_type, "architectures": ["UnlimitedOCRForCausalLM"],
                         "text_config": {**raw, "architectures": None}}, "ocr")


@pytest.mark.parametrize("arch", ["UltraVBertModel", "ColUltraVBertForRetrieval"])
def test_colultravbert_is_refused_as_an_encoder(arch):
    with pytest.raises(ConfigError, match="retrieval encoder"):
        build_model({"model_type": "ultravbert", "architectures": [arch], "hidden_size": 768,
                     "num_hidden_layers": 22, "num_attention_heads": 12}, "ultravbert")


# -- Mistral Large 4 from its Mistral-format params.json (configs/mistral_params.py, vllm34_text.py) ---------------
# No public params.json of Mistral Large 4 was found (vLLM 0.34 tests/models/registry.py lists
# mistralai/Mistral-Large-4-1T-A52B with is_available_online=False); this one is hand-written in the keys vLLM 0.34's
# adapt_config_dict / _remap_mistral_large_4_args read: MLA without q-LoRA (MistralMLAAttention asserts it), a MoE
# with a shared expert, 8 layers with NoPE every second layer, KV sharing and a shared indexer.
LARGE4_PARAMS = {
    "dim": 7168, "n_layers": 8, "head_dim": 192, "hidden_dim": 16384, "n_heads": 128, "n_kv_heads": 128,
    "norm_eps": 1e-5, "vocab_size": 131072, "rope_theta": 10000.0, "max_position_embeddings": 262144,
    "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "moe": {"num_experts": 64, "num_experts_per_tok": 4, "num_shared_experts": 1, "expert_hidden_dim": 4096,
            "first_k_dense_replace": 1, "route_every_n": 1, "routed_scale": 1.0, "num_expert_groups": 1,
            "num_expert_groups_per_tok": 1},
    "nope": "rope,nope",
    "kv_sharing": {"source_layers_str": "0,1,2,1,4,5,4,5"},
    "dsa": {"topk": 2048, "n_heads": 64, "head_dim": 128, "norm_eps": 1e-6, "ssmax_scaling": False,
            "sharing": "full,shared,shared,shared"},
}


def _large4(raw: dict):
    from kvplan.configs.mistral_params import to_config

    return build_model(to_config(raw, "params.json"), "large4")


def test_mistral_large_4_params_json_reads_as_vllm_0_34_keeps_it(tmp_path):
    from kvplan.configs.mistral_params import to_config

    config = to_config(LARGE4_PARAMS, "params.json")
    # _remap_mistral_large_4_args: model_type mistral_large_4, MistralLarge4ForCausalLM, the patterns expanded
    assert config["model_type"] == "mistral_large_4" and config["architectures"] == ["MistralLarge4ForCausalLM"]
    assert config["nope_layer_flags"] == [False, True] * 4
    assert config["kv_source_layers"] == [0, 1, 2, 1, 4, 5, 4, 5]
    assert config["index_sharing"] == ["full", "shared", "shared", "shared"] * 2
    model = build_model(config, "large4")
    assert model.reading == "exact" and model.family == "mistral_large_4"
    assert [layer.shares_cache_of for layer in model.layers] == [None, None, None, 1, None, None, 4, 5]
    # layers 0 and 4 (index_sharing "full") keep indexer keys: 128 fp8 values + 128 // 128 x 4 B of scale
    assert [len(layer.caches) for layer in model.layers] == [2, 1, 1, 1, 2, 1, 1, 1]
    # MistralMLAAttention: "NoPE layers run the same 576-wide latent cache layout": 5 layers own a latent of
    # 512 + 64 in bf16 (1,152 B), two of them an indexer key of 132 B: 5 x 1,152 + 2 x 132 per token
    assert estimate(model, 4096).bytes_per_token == 5 * (512 + 64) * 2 + 2 * (128 + 4) == 6_024
    assert any("parameters not counted" in n for n in model.notes)


def test_mistral_large_4_nope_layers_keep_the_rope_width_unlike_transformers():
    # no KV sharing, NoPE on every second layer: vLLM 0.34 keeps 512 + 64 on all 8 layers (a zero rope key on the
    # NoPE ones), plus the indexer keys of layers 0 and 4: 8 x 576 x 2 + 2 x 132
    plain = {k: v for k, v in LARGE4_PARAMS.items() if k != "kv_sharing"}
    assert estimate(_large4(plain), 4096).bytes_per_token == 8 * 576 * 2 + 2 * 132 == 9_480
    # transformers 5.25's mistral_large4_text (the Hugging Face form, its own row) caches kv_lora_rank alone on a
    # NoPE layer (no_rope_layers 0): the same layers there hold 4 x 576 + 4 x 512 elements
    hf = {"model_type": "mistral_large4_text", "num_hidden_layers": 8, "hidden_size": 7168, "num_attention_heads": 128,
          "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
          "index_head_dim": 128, "index_topk": 2048, "no_rope_layers": [1, 0] * 4,
          "indexer_types": ["full", "shared", "shared", "shared"] * 2}
    assert estimate(build_model(hf, "hf"), 4096).bytes_per_token == (4 * 576 + 4 * 512) * 2 + 2 * 132 == 8_968


def test_mistral_large_4_without_index_topk_has_no_indexer():
    # get_layer_specs: use_sparse = index_topk is not None; vLLM 0.34's remap requires it, a hand-adapted config
    # may leave it out
    from kvplan.configs.mistral_params import to_config

    config = to_config({k: v for k, v in LARGE4_PARAMS.items() if k != "kv_sharing"}, "params.json")
    config["index_topk"] = None
    assert estimate(build_model(config, "large4"), 4096).bytes_per_token == 8 * 576 * 2


def test_mistral_large_4_fp8_latent_is_noted():
    raw = {**LARGE4_PARAMS, "dsa": {**LARGE4_PARAMS["dsa"], "fp8_kv_cache": True}}
    assert any("fp8_ds_mla" in n for n in _large4(raw).notes)
    assert not any("fp8_ds_mla" in n for n in _large4(LARGE4_PARAMS).notes)


@pytest.mark.parametrize("change, words", [
    # layer 6 shares layer 4's latent but its index_sharing entry is "full": an indexer of its own
    ({"dsa": {**LARGE4_PARAMS["dsa"], "sharing": "full,shared"}}, "runs an indexer of its own"),
    ({"kv_sharing": {"source_layers_str": "0,0,2,2,4,4,6,6"}}, "same NoPE flag"),  # 1 (NoPE) reads 0 (RoPE)
    ({"dsa": {**LARGE4_PARAMS["dsa"], "nope": True}}, "index_nope"),
    ({"dsa": {"n_heads": 64, "head_dim": 128}}, "dsa lacks index_topk"),
    ({"moe": {**LARGE4_PARAMS["moe"], "num_shared_experts": 0}}, "asserts for Mistral DSA"),
    # a count that is no number (a fuzzed params.json: it was an internal error comparing a list with 0)
    ({"moe": {**LARGE4_PARAMS["moe"], "num_shared_experts": [1, 2]}}, "num_shared_experts must be a whole number"),
])
def test_mistral_large_4_forms_vllm_refuses_are_one_line(tmp_path, change, words):
    folder = tmp_path / "large4"
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps({**LARGE4_PARAMS, **change}))
    r = kvplan("estimate", str(folder))
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and words in lines[0], r.stderr


def test_mistral_large_4_params_json_with_vision_reads_its_text_model():
    from kvplan.configs.mistral_params import to_config

    config = to_config({**LARGE4_PARAMS, "vision_encoder": {"hidden_size": 1664}}, "params.json")
    assert config["model_type"] == "pixtral" and config["text_config"]["model_type"] == "mistral_large_4"
    assert estimate(build_model(config, "large4-vision"), 4096).bytes_per_token == 6_024


def test_mistral_large_4_params_json_needs_no_remote_code():
    # vLLM's MistralConfigParser builds the config from params.json itself (adapt_config_dict), never AutoConfig
    from kvplan.engines.remote_code import check

    assert check("mistral_large_4", False, "0.34.0") == check("mistral_large_4", False, "0.33.0")
    assert check("mistral_large_4", False, "0.34.0").needed is False
    assert check("mistral_large_4", False, "0.34.0").note is None


def test_zaya_profile_loads_the_whole_model_on_every_vllm_rank():
    # every ZAYA1 linear is a ReplicatedLinear in vLLM 0.34 (zaya.py), so a TP 2 rank loads what TP 1 does
    from kvplan.engines.vllm_profile import predict_available

    model = build_model(ZAYA_40, "zaya")
    one, two = (predict_available(model, total_bytes=80 * 2**30, gpu_memory_utilization=0.9, tp=tp,
                                  version="0.34.0", gpu="h100") for tp in (1, 2))
    assert one.weight_bytes == two.weight_bytes > 0
