"""vLLM 0.33's text registry against kvplan, round 18: DomynEdge (domynedge) read exactly, openPangu-Pro-MoE-V2
refused by architecture, Cohere 2's sliding_window + 1, and three defaults / counts fixed against the real source.

Sources read (vLLM 0.33 sdist, /tmp/vsd/vllm-0.33.0):
- model_executor/models/domyn_edge.py (DomynEdgeAttention, DomynEdgeDecoderLayer: per_layer_config[i].head_dim,
  window_sizes[i][0] + 1, position_layers; Qwen2MLP; four sandwich RMSNorms; k_norm with a weight, q_norm without);
- DomynEdgeConfig (model_type "domynedge", its defaults and head_sizes) as published in igeniusai/vllm-domyn-edge
  (code index id 69023675919), whose vLLM model reads head_sizes[i];
- model_executor/models/openpangu.py (OpenPanguSinkAttention) and layers/attention/static_sink_attention.py
  (SinkFullAttentionSpec);
- model_executor/models/commandr.py and cohere2_moe.py (per_layer_sliding_window = sliding_window + 1);
- transformers_utils/configs/kimi_linear.py (vLLM's own KimiLinearConfig, registered in transformers_utils/config.py
  _CONFIG_REGISTRY: first_k_dense_replace 0, num_shared_experts 0, num_experts None);
- model_executor/models/k2_horizon.py (head_dim=config.head_dim) with transformers' K2HorizonConfig
  (src/transformers/models/k2_horizon/configuration_k2_horizon.py: head_dim 64, num_key_value_heads 8,
  sliding_window kept only with use_sliding_window);
- minicpmv.py / minicpmo.py / isaac.py: the text model is Qwen2ForCausalLM (2.6: q/k/v biases) or
  Qwen3ForCausalLM (4.5, Isaac: per-head q/k RMSNorms).

Test data:
- tests/data/configs/domyn-edge-defaults-handwritten.json: HAND-WRITTEN from DomynEdgeConfig's defaults (every field
  spelled out); no public config.json of a DomynEdge checkpoint was found in the code index (find_string on
  DomynEdgeForCausalLM, DomynEdgeConfig, "model_type": "domyn found only the config class and vLLM ports);
- Kimi-Linear-48B-A3B-Instruct: kvplan's bundled verbatim config.json (kimi-linear-48b-a3b);
- command-r7b: kvplan's bundled config.json (cohere2); gpt-j-6b: kvplan's bundled config.json (gptj);
- tests/data/configs/ernie-4.5-0.3b.json: an ERNIE-4.5-0.3B config.json (remote-code form, architecture
  Ernie4_5_ForCausalLM) as found whole in the code index (id 28060091361);
- tests/data/configs/ernie-4.5-21b-a3b-quoted.json: ERNIE-4.5-21B-A3B's fields as a public Swift test quotes its
  config.json (code index id 55221413519; architectures and auto_map not quoted);
- the MiniCPM-V / MiniCPM-o / Isaac and K2-Horizon configs below are minimal and hand-written (no whole public
  config.json of them was found), shaped as the config classes read them.
Every expected value is worked out by hand in the comment beside it, in bf16 (2 bytes).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError
from kvplan.sources import bundled_config, bundled_index

DATA = Path(__file__).parent / "data" / "configs"


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def _config(tmp_path, raw: dict) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return path


# -- DomynEdge ---------------------------------------------------------------------------------------------------

def test_domyn_edge_layers_by_hand():
    model = build_model(_raw("domyn-edge-defaults-handwritten.json"), "domyn")
    assert model.reading == "exact" and model.family == "domynedge" and model.num_layers == 36
    dims = [(layer.caches[0].key_dim, layer.caches[0].policy.window_tokens) for layer in model.layers]
    # head_sizes 256, 256, (64, 64, 64, 256) x 8, 256, 256; window_sizes (1024, 0) on the 64-wide (RoPE) layers:
    # vLLM 0.33 passes per_layer_sliding_window = 1024 + 1
    assert dims[:6] == [(256, None), (256, None), (64, 1025), (64, 1025), (64, 1025), (256, None)]
    assert dims.count((256, None)) == 12 and dims.count((64, 1025)) == 24
    e = estimate(model, 4096)
    # per token (every layer holds it at this context): K and V of 8 heads,
    # 12 full layers x 2 x 8 x 256 x 2 B = 98,304 + 24 sliding layers x 2 x 8 x 64 x 2 B = 49,152
    assert e.bytes_per_token == 12 * 2 * 8 * 256 * 2 + 24 * 2 * 8 * 64 * 2 == 147_456
    # a 4,096-token sequence: full layers 4,096 tokens, sliding layers 1,025
    assert e.kv_bytes_per_sequence == 12 * 4096 * 8192 + 24 * 1025 * 2048 == 453_033_984


def test_domyn_edge_parameters_by_hand():
    model = build_model(_raw("domyn-edge-defaults-handwritten.json"), "domyn")
    hidden, heads, kv, inter, vocab = 2560, 32, 8, 9728, 115269

    def layer(d):  # qkv_proj, o_proj (no biases), k_norm (q_norm has no weight), 4 RMSNorms, Qwen2MLP
        return hidden * (heads + 2 * kv) * d + heads * d * hidden + d + 4 * hidden + 3 * hidden * inter

    assert layer(256) == 31_457_280 + 20_971_520 + 256 + 10_240 + 74_711_040 == 127_150_336
    assert layer(64) == 7_864_320 + 5_242_880 + 64 + 10_240 + 74_711_040 == 87_828_544
    # 12 layers of 256, 24 of 64, tied embeddings (115,269 x 2,560 = 295,088,640), final norm 2,560
    total = 12 * 127_150_336 + 24 * 87_828_544 + vocab * hidden + hidden
    assert model.param_count == model.active_param_count == total == 3_928_780_288


def test_domyn_edge_config_class_defaults_fill_a_bare_config():
    bare = build_model({"model_type": "domynedge", "architectures": ["DomynEdgeForCausalLM"]}, "bare")
    full = build_model(_raw("domyn-edge-defaults-handwritten.json"), "full")
    assert estimate(bare, 4096).kv_bytes_per_sequence == estimate(full, 4096).kv_bytes_per_sequence
    assert bare.param_count == full.param_count


def test_domyn_edge_per_layer_config_beats_head_sizes():
    # per_layer_config[i].head_dim is what vLLM 0.33 reads; a layer it does not list takes the global head_dim
    raw = {"model_type": "domynedge", "num_hidden_layers": 2, "position_layers": ["rope", "nope"],
           "window_sizes": [[-1, 0], [-1, 0]], "head_sizes": [64, 64], "head_dim": 128,
           "per_layer_config": {"0": {"head_dim": 32}}}
    model = build_model(raw, "plc")
    assert [layer.caches[0].key_dim for layer in model.layers] == [32, 128]
    # 2 full layers: 2 x 8 x 32 x 2 B + 2 x 8 x 128 x 2 B
    assert estimate(model, 1024).bytes_per_token == 2 * 8 * 32 * 2 + 2 * 8 * 128 * 2 == 5_120


@pytest.mark.parametrize("change, message", [
    ({"window_sizes": [[512, 0]] + [[-1, 0]] * 34 + [[1024, 0]]}, "2 different windows"),
    ({"position_layers": ["alibi"] * 36}, "position_layers\\[0\\]"),
    ({"window_sizes": [[-1, 0]] * 35}, "window_sizes"),
    ({"window_sizes": [5] * 36}, "must be a pair"),
])
def test_domyn_edge_bad_layouts_are_refused(change, message):
    with pytest.raises(ConfigError, match=message):
        build_model({**_raw("domyn-edge-defaults-handwritten.json"), **change}, "bad")


def test_domyn_edge_bad_layout_is_one_line(tmp_path, estimate_error):
    raw = {**_raw("domyn-edge-defaults-handwritten.json"), "window_sizes": [5] * 36}
    assert "window_sizes[0] must be a pair" in estimate_error(_config(tmp_path, raw))


# -- openPangu-Pro-MoE-V2 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("model_type", ["PanguProMoE", "PanguEmbedded", "pangu_ultra_moe"])
def test_pangu_pro_moe_v2_is_refused_by_architecture(tmp_path, model_type, estimate_error):
    # the fields a PanguProMoEV2 config carries for OpenPanguSinkAttention; whatever model_type it names, vLLM builds
    # the model by architecture, and kvplan refuses it by that name
    raw = {"architectures": ["PanguProMoEV2ForCausalLM"], "model_type": model_type, "hidden_size": 512,
           "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4, "qk_nope_dim": 128,
           "qk_rope_dim": 64, "v_channels": 128, "param_sink_number": 128, "vocab_size": 1000}
    with pytest.raises(ConfigError, match="PanguProMoEV2ForCausalLM is openPangu-Pro-MoE-V2"):
        build_model(raw, "pro")
    if model_type == "PanguProMoE":
        assert "openPangu-Pro-MoE-V2" in estimate_error(_config(tmp_path, raw))


# -- Cohere 2: sliding_window + 1 ----------------------------------------------------------------------------------

def test_command_r7b_slides_over_window_plus_one():
    raw = bundled_config(bundled_index()["command-r7b"])
    model = build_model(raw, "command-r7b")
    assert raw["sliding_window"] == 4096 and raw["sliding_window_pattern"] == 4 and raw["num_hidden_layers"] == 32
    windows = [layer.caches[0].policy.window_tokens for layer in model.layers]
    # commandr.py CohereAttention: layer_types[i] == "sliding_attention" -> per_layer_sliding_window 4096 + 1
    assert windows.count(4097) == 24 and windows.count(None) == 8
    # 8 KV heads x 128: 2 x 8 x 128 x 2 B = 4,096 B a token and layer; 8 full layers x 8,192 tokens + 24 x 4,097
    assert estimate(model, 8192).kv_bytes_per_sequence == 8 * 8192 * 4096 + 24 * 4097 * 4096 == 671_186_944


# -- Kimi-Linear: first_k_dense_replace absent is vLLM's 0 ---------------------------------------------------------

def test_kimi_linear_first_k_dense_replace_default_is_vllms_zero():
    raw = bundled_config(bundled_index()["kimi-linear-48b-a3b"])
    assert raw["first_k_dense_replace"] == 1 and raw["num_experts"] == 256 and raw["hidden_size"] == 2304
    given = build_model(raw, "k")
    absent = build_model({k: v for k, v in raw.items() if k != "first_k_dense_replace"}, "k")
    zero = build_model({**raw, "first_k_dense_replace": 0}, "k")
    assert absent.param_count == zero.param_count
    # absent, vLLM's KimiLinearConfig gives 0: layer 0 is a MoE instead of the dense MLP.
    # MoE: 256 experts x 3 x 2,304 x 1,024 = 1,811,939,328, router 256 x 2,304 = 589,824, e_score_correction_bias
    # 256, one shared expert 3 x 2,304 x 1,024 = 7,077,888 -> 1,819,607,296; dense MLP 3 x 2,304 x 9,216 = 63,700,992
    moe = 256 * 3 * 2304 * 1024 + 256 * 2304 + 256 + 3 * 2304 * 1024
    dense = 3 * 2304 * 9216
    assert moe - dense == 1_755_906_304
    assert absent.param_count - given.param_count == moe - dense
    # a token runs 8 of the 256 experts: the other 248 x 3 x 2,304 x 1,024 stay idle
    assert absent.active_param_count - given.active_param_count == moe - 248 * 3 * 2304 * 1024 - dense


def test_kimi_linear_without_experts_is_dense():
    # KimiLinearConfig.is_moe is num_experts is not None: no expert field, every layer a dense MLP
    raw = bundled_config(bundled_index()["kimi-linear-48b-a3b"])
    dense_only = {k: v for k, v in raw.items() if k not in ("num_experts", "first_k_dense_replace")}
    given = build_model(raw, "k")
    model = build_model(dense_only, "k")
    moe = 256 * 3 * 2304 * 1024 + 256 * 2304 + 256 + 3 * 2304 * 1024
    dense = 3 * 2304 * 9216
    # 27 layers: the given config has 26 MoE layers and 1 dense one; now all 27 are dense
    assert given.param_count - model.param_count == 26 * (moe - dense)
    assert model.param_count == model.active_param_count


# -- K2-Horizon: head_dim absent is K2HorizonConfig's 64 -----------------------------------------------------------

K2_BARE = {"architectures": ["K2HorizonForCausalLM"], "model_type": "k2_horizon", "hidden_size": 4096,
           "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "sliding_window": 4096}


def test_k2_horizon_head_dim_default_is_64_not_hidden_over_heads():
    model = build_model(K2_BARE, "k2")
    assert model.reading == "exact"
    # vLLM 0.33 passes config.head_dim; transformers' K2HorizonConfig fills 64 (4,096 / 32 = 128 is not read)
    assert {layer.caches[0].key_dim for layer in model.layers} == {64}
    # no use_sliding_window: K2HorizonConfig.__post_init__ drops sliding_window, every layer full
    assert {layer.caches[0].policy.window_tokens for layer in model.layers} == {None}
    # 4 layers x 2 x 8 x 64 x 2 B
    assert estimate(model, 4096).bytes_per_token == 4 * 2 * 8 * 64 * 2 == 8_192


def test_k2_horizon_window_counts_with_use_sliding_window():
    model = build_model({**K2_BARE, "use_sliding_window": True}, "k2")
    assert {layer.caches[0].policy.window_tokens for layer in model.layers} == {4096}


# -- MiniCPM-V / MiniCPM-o / Isaac saved flat: the text model's biases and norms count -----------------------------

FLAT = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "intermediate_size": 128, "vocab_size": 1000, "tie_word_embeddings": False}
# per layer: q 64 x 64 = 4,096, k and v 64 x 32 = 2,048 each, o 4,096 -> 12,288; MLP 3 x 64 x 128 = 24,576; two
# RMSNorms 128. Outside: embed 64,000 + untied head 64,000 + final norm 64 = 128,064.
BASE = 2 * (12_288 + 24_576 + 128) + 128_064
QWEN2 = BASE + 2 * (64 + 32 + 32)  # Qwen2Attention: q/k/v biases (heads x 16, 2 x kv x 16)
QWEN3 = BASE + 2 * (16 + 16)  # Qwen3Attention: q_norm and k_norm of head_dim


@pytest.mark.parametrize("raw, expected", [
    ({"model_type": "minicpmv", "version": 2.6}, QWEN2),
    ({"model_type": "minicpmo", "version": "2.6"}, QWEN2),
    ({"model_type": "minicpmo"}, QWEN2),  # no version: MiniCPMO2_6
    ({"model_type": "minicpmv", "version": 4.5}, QWEN3),
    ({"model_type": "minicpmo", "version": 4.5}, QWEN3),
    ({"model_type": "isaac"}, QWEN3),
    ({"model_type": "minicpmv", "version": 2.5}, BASE),  # Llama: neither
], ids=["minicpmv-2.6", "minicpmo-2.6", "minicpmo", "minicpmv-4.5", "minicpmo-4.5", "isaac-flat", "minicpmv-2.5"])
def test_flat_wrappers_count_their_text_models_biases_and_norms(raw, expected):
    assert BASE == 202_048 and QWEN2 == 202_304 and QWEN3 == 202_112
    model = build_model({**FLAT, **raw}, "flat")
    assert model.param_count == expected
    assert model.model_type == raw["model_type"]  # the wrapper's type stays (engine rules key on it)


def test_flat_and_nested_isaac_count_alike():
    nested = build_model({"model_type": "isaac", "text_config": {**FLAT, "model_type": "qwen3"}}, "nested")
    assert nested.param_count == QWEN3


# -- registry check: text architectures vLLM 0.33 registers, read exactly from real configs -------------------------

def test_ernie_4_5_dense_by_hand():
    model = build_model(_raw("ernie-4.5-0.3b.json"), "ernie-0.3b")
    assert model.reading == "exact" and model.model_type == "ernie4_5"
    # vLLM 0.33 ernie45.py (LlamaForCausalLM): K/V of 2 heads x head_dim 128 on 18 layers
    assert estimate(model, 4096).bytes_per_token == 2 * 18 * 2 * 128 * 2 == 18_432
    # per layer: q 1,024 x 2,048 + k, v 1,024 x 256 each + o 2,048 x 1,024 = 4,718,592; MLP 3 x 1,024 x 3,072 =
    # 9,437,184; two RMSNorms 2,048 -> 14,157,824; 18 layers + tied embeddings 103,424 x 1,024 + final norm 1,024
    assert model.param_count == 18 * 14_157_824 + 103_424 * 1024 + 1024 == 360_748_032


def test_ernie_4_5_moe_cache_by_hand():
    model = build_model(_raw("ernie-4.5-21b-a3b-quoted.json"), "ernie-21b")
    assert model.reading == "exact" and model.model_type == "ernie4_5_moe"
    # ernie45_moe.py Ernie4_5_MoeAttention: head_dim null -> 2,560 / 20 = 128; K/V of 4 heads on 28 layers
    assert estimate(model, 4096).bytes_per_token == 2 * 28 * 4 * 128 * 2 == 57_344


def test_gpt_j_6b_by_hand():
    raw = bundled_config(bundled_index()["gpt-j-6b"])
    model = build_model(raw, "gpt-j-6b")
    assert model.reading == "exact" and (raw["n_layer"], raw["n_embd"], raw["n_head"]) == (28, 4096, 16)
    # gpt_j.py GPTJAttention: MHA, head_size = 4,096 / 16 = 256: 2 x 28 x 16 x 256 x 2 B
    assert estimate(model, 4096).bytes_per_token == 2 * 28 * 16 * 256 * 2 == 458_752
