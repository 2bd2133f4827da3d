"""Text architectures of vLLM 0.33's registry that kvplan read only as a guess or misread: openPangu-Ultra-MoE
(model_type pangu_ultra_moe, kvplan/configs/openpangu.py), Rnj-1 (a gemma3_text config naming
Rnj1ForCausalLM, kvplan/configs/rnj1.py), K2-Horizon (k2_horizon) and AliceAI (alice_ai) (kvplan/configs/k2_horizon.py:
caches exact; parameter counts in tests/test_k2_alice_params.py), DeepSeek-MoE (deepseek) and TeleChat3 (telechat3).

Configs: no public config.json of either was found in the code index (find_string on PanguUltraMoEForCausalLM,
"model_type": "pangu_ultra_moe", Rnj1ForCausalLM and "model_type": "rnj1" turned up registries, ports and test
scaffolds only). The tests therefore use hand-written configs:
- ULTRA: the shape of the remote OpenPanguMoEConfig's defaults (configuration_openpangu_moe.py, "openPanguUltraMoE
  718B": hidden 7,680, 61 layers, 128 heads, kv lora 512, q lora 1,536, rope 64, nope 128, v 128, 256 routed
  experts of 2,048, top 8, one shared expert, 3 dense layers of 18,432, vocab 153,600, untied) written with the
  field names vLLM 0.33's openpangu.py reads (kv_lora_rank, n_routed_experts, first_k_dense_replace ...).
- RNJ1: a small gemma3_text config with chunked_attention layers, the layer type vLLM 0.33's rnj1.py handles.
Expected values are worked out by hand from vLLM 0.33's openpangu.py (OpenPanguMLAAttention, OpenPanguMoE,
OpenPanguMLP, OpenPanguDecoderLayer) and rnj1.py (Rnj1Attention, Rnj1MLP, Rnj1DecoderLayer).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

from kvplan_inprocess import kvplan

ULTRA = {
    "architectures": ["PanguUltraMoEForCausalLM"], "model_type": "pangu_ultra_moe", "vocab_size": 153600,
    "hidden_size": 7680, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
    "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256,
    "num_experts_per_tok": 8, "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "routed_scaling_factor": 2.5,
    "norm_topk_prob": True, "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False, "rope_theta": 25600000, "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16",
}

RNJ1 = {
    "architectures": ["Rnj1ForCausalLM"], "model_type": "gemma3_text", "vocab_size": 128256, "hidden_size": 4096,
    "intermediate_size": 16384, "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 8,
    "head_dim": 128, "sliding_window": 4096, "query_pre_attn_scalar": 128, "tie_word_embeddings": True,
    "layer_types": ["chunked_attention"] * 3 + ["full_attention"] + ["chunked_attention"] * 3 + ["full_attention"],
    "torch_dtype": "bfloat16",
}


def _cli(tmp_path, raw: dict, *args: str):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return CliRunner().invoke(app, ["estimate", str(path), "--gpu", "h100", "--engine", "vllm", *args])


def _one_line_error(tmp_path, raw: dict) -> str:
    """Runs `kvplan estimate CFG --gpu h100 --engine vllm` as a user would; returns its one error line."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    r = kvplan("estimate", str(path), "--gpu", "h100", "--engine", "vllm")
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), r.stderr
    return lines[0]


# -- openPangu-Ultra-MoE ------------------------------------------------------------------------------------

def test_pangu_ultra_moe_caches_one_latent_a_layer():
    model = build_model(ULTRA, "ultra")
    assert model.reading == "exact" and model.family == "pangu_ultra_moe" and model.num_layers == 61
    cache = model.layers[0].caches[0]
    assert cache.kind == "latent" and cache.heads == 1 and cache.key_dim == 512 + 64
    # MLAAttentionSpec: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per token and layer, bf16:
    # 61 x (512 + 64) x 2 B
    assert estimate(model, 4096).bytes_per_token == 61 * (512 + 64) * 2 == 70_272


def test_pangu_ultra_moe_parameters_by_hand():
    model = build_model(ULTRA, "ultra")
    h = 7680
    # OpenPanguMLAAttention: fused_qkv_a_proj 7,680 x (1,536 + 512 + 64), q_a_layernorm 1,536, q_b_proj
    # 1,536 x 128 x (128 + 64), kv_a_layernorm 512, kv_b_proj 512 x 128 x (128 + 128), o_proj 128 x 128 x 7,680
    attn = h * (1536 + 576) + 1536 + 1536 * 128 * 192 + 512 + 512 * 128 * 256 + 128 * 128 * h
    assert attn == 196_577_280
    norms = 2 * h  # input_layernorm, post_attention_layernorm (no sandwich_norm)
    dense = 3 * h * 18432  # OpenPanguMLP gate_up + down at intermediate_size, layers 0-2
    expert = 3 * h * 2048
    router = h * 256  # GateLinear, no bias; no router_enable_expert_bias, so no e_score_correction_bias
    shared = 3 * h * (2048 * 1)  # moe_intermediate_size x n_shared_experts
    embed_head = 2 * 153600 * h  # untied
    total = embed_head + h + 3 * (attn + norms + dense) + 58 * (attn + norms + router + shared + 256 * expert)
    active = embed_head + h + 3 * (attn + norms + dense) + 58 * (attn + norms + router + shared + 8 * expert)
    # the checkpoint's name says 718B total, its model card 39B active
    assert model.param_count == total == 719_092_830_720
    assert model.active_param_count == active == 40_370_557_440


def test_pangu_ultra_moe_sandwich_norm_and_expert_bias():
    base = build_model(ULTRA, "ultra").param_count
    raw = {**ULTRA, "sandwich_norm": True, "router_enable_expert_bias": True}
    # two more RMSNorms on every layer (pre_mlp_layernorm, post_mlp_layernorm); one fp32 bias an expert on the
    # 58 MoE layers
    assert build_model(raw, "ultra").param_count == base + 61 * 2 * 7680 + 58 * 256


def test_pangu_ultra_moe_with_the_remote_names_only_is_refused():
    raw = {k: v for k, v in ULTRA.items() if k not in ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim",
                                                       "qk_nope_head_dim", "v_head_dim")}
    raw.update({"attention_kv_lora_dim": 512, "attention_qk_rope_dim": 64})
    with pytest.raises(ConfigError, match="attention_kv_lora_dim.*vLLM 0.33 does not read"):
        build_model(raw, "ultra-remote-names")


def test_pangu_sink_attention_is_refused_by_name():
    raw = {k: v for k, v in ULTRA.items() if k != "kv_lora_rank"}
    raw.update({"param_sink_number": 128, "qk_nope_dim": 128, "qk_rope_dim": 64, "v_channels": 128})
    with pytest.raises(ConfigError, match="SinkFullAttentionSpec"):
        build_model(raw, "pangu-sink")


def test_pangu_ultra_moe_cli(tmp_path):
    # 1.44 TB of bf16 weights on one H100: one clear line
    assert "does not fit on 1 x h100" in _one_line_error(tmp_path, ULTRA)
    spread = _cli(tmp_path, ULTRA, "--tp", "8", "--pp", "4", "--format", "json")
    assert spread.exit_code == 0, spread.output
    assert json.loads(spread.stdout)["bytes_per_token"] == 70_272


# -- Rnj-1 --------------------------------------------------------------------------------------------------

def test_rnj1_chunked_layers_slide_and_the_rest_are_full():
    model = build_model(RNJ1, "rnj1")
    assert model.reading == "exact" and model.family == "rnj1"
    windows = [layer.caches[0].policy.window_tokens for layer in model.layers]
    assert windows == [4096, 4096, 4096, None] * 2
    # K and V of 8 KV heads x 128 on every layer, bf16: 2 x 8 x 8 x 128 x 2 B
    assert estimate(model, 4096).bytes_per_token == 2 * 8 * 8 * 128 * 2 == 32_768


def test_rnj1_sliding_attention_layers_get_no_window():
    # Rnj1Attention: per_layer_sliding_window only for chunked_attention; Gemma 3 would slide these
    raw = {**RNJ1, "layer_types": ["sliding_attention"] * 7 + ["full_attention"]}
    assert {layer.caches[0].policy.window_tokens for layer in build_model(raw, "rnj1").layers} == {None}
    gemma = build_model({**raw, "architectures": ["Gemma3ForCausalLM"]}, "gemma3")
    assert gemma.family == "gemma3_text"
    assert [layer.caches[0].policy.window_tokens for layer in gemma.layers] == [4096] * 7 + [None]


def test_rnj1_without_layer_types_is_full_everywhere():
    # Gemma3TextConfig fills layer_types with sliding_attention / full_attention (pattern 6): no chunked layer
    raw = {k: v for k, v in RNJ1.items() if k != "layer_types"}
    assert {layer.caches[0].policy.window_tokens for layer in build_model(raw, "rnj1").layers} == {None}


def test_rnj1_parameters_by_hand():
    model = build_model(RNJ1, "rnj1")
    h = 4096
    # q 4,096 x 4,096, k and v 4,096 x 1,024, o 4,096 x 4,096, q_norm and k_norm 128 each; GELU-gated MLP
    # 3 x 4,096 x 16,384; four GemmaRMSNorms; tied embeddings 128,256 x 4,096 and a final norm
    layer = h * 4096 + 2 * h * 1024 + 4096 * h + 2 * 128 + 3 * h * 16384 + 4 * h
    assert model.param_count == 128256 * h + h + 8 * layer == 2_471_630_848


def test_rnj1_cli(tmp_path):
    r = _cli(tmp_path, RNJ1, "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["bytes_per_token"] == 32_768


def test_rnj1_chunked_without_window_is_one_line(tmp_path):
    assert "sliding_window is not set" in _one_line_error(tmp_path, {**RNJ1, "sliding_window": None})


# -- K2-Horizon and AliceAI: caches read exactly, parameters not counted ----------------------------------

# K2-Horizon-MoVA-36B-A4B's shape as a public port describes it (code index id 71391136681, model/k2_horizon.cpp
# make_k2 / check_k2_config: 48 layers, the first 3 dense (mlp_only_layers), 32 query heads, 8 KV heads of 128,
# hidden 2,560, 100 experts of 768 (top 8) and one shared expert, 64 MoVA value experts (top 4), router biases,
# a softplus attention gate, 2 norm groups); written here as a config
K2 = {
    "architectures": ["K2HorizonForCausalLM"], "model_type": "k2_horizon", "vocab_size": 250624, "hidden_size": 2560,
    "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "rope_head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 100,
    "num_experts_per_tok": 8, "num_shared_experts": 1, "decoder_sparse_step": 1, "mlp_only_layers": [0, 1, 2],
    "mova_num_experts": 64, "mova_num_experts_per_tok": 4, "moe_gate_bias": True, "router_score_func": "sigmoid",
    "router_scaling_factor": 2.5, "norm_topk_prob": True, "attention_gate_func": "softplus",
    "layernorm_num_groups": 2, "query_key_norm": False, "attention_bias": False, "tie_word_embeddings": False,
    "hidden_act": "silu", "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16",
}

# a hand-written AliceAI config: three KDA layers, then one full-attention layer, twelve times
ALICE = {
    "architectures": ["AliceAIForCausalLM"], "model_type": "alice_ai", "vocab_size": 151936, "hidden_size": 2048,
    "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
    "linear_num_key_heads": 16, "linear_num_value_heads": 16, "linear_key_head_dim": 128,
    "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
    "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 12, "torch_dtype": "bfloat16",
    "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512, "block_attn_res_block_size": 4, "hidden_act": "silu",
}


def test_k2_horizon_caches_kv_on_every_layer():
    model = build_model(K2, "k2")
    assert model.reading == "exact" and model.family == "k2_horizon"
    # K2HorizonAttention and K2HorizonMoVAAttention alike: K and V of 8 heads x 128, bf16, 48 layers
    assert estimate(model, 4096).bytes_per_token == 2 * 48 * 8 * 128 * 2 == 196_608


def test_alice_ai_full_layers_cache_and_kda_layers_keep_state():
    model = build_model(ALICE, "alice")
    assert model.reading == "exact" and model.family == "alice_ai"
    # 12 Qwen3NextAttention layers: K and V of 2 heads x 256, bf16
    assert estimate(model, 4096).bytes_per_token == 2 * 12 * 2 * 256 * 2 == 24_576
    # 36 KDA layers: a bf16 conv of (4 - 1) x 3 x 16 x 128 and an fp32 state of 16 x 128 x 128
    per_layer = (4 - 1) * 3 * 16 * 128 * 2 + 16 * 128 * 128 * 4
    assert estimate(model, 4096).state_bytes_per_sequence == 36 * per_layer == 39_075_840


def test_alice_ai_unequal_kda_heads_are_refused():
    with pytest.raises(ConfigError, match="requires them equal"):
        build_model({**ALICE, "linear_num_value_heads": 32}, "alice")


@pytest.mark.parametrize("raw", [K2, ALICE], ids=["k2_horizon", "alice_ai"])
def test_counted_families_run_without_weights(tmp_path, raw):
    r = _cli(tmp_path, raw, "--tp", "4", "--format", "json")
    assert r.exit_code == 0, r.output


# -- Mistral Large 3: a Mistral-format params.json (kvplan/configs/mistral_params.py) ---------------------

# Mistral-Large-3's params.json values as vLLM's own test of adapt_config_dict writes them
# (tests/transformers_utils/test_config.py, code index id 70316981193)
LARGE3_PARAMS = {
    "dim": 7168, "n_layers": 61, "head_dim": 192, "hidden_dim": 16384, "n_heads": 128, "n_kv_heads": 128,
    "norm_eps": 1e-5, "vocab_size": 131072, "rope_theta": 10000.0, "max_position_embeddings": 294912,
    "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "moe": {"num_experts": 128, "num_experts_per_tok": 4, "num_shared_experts": 1, "expert_hidden_dim": 4096,
            "first_k_dense_replace": 3, "route_every_n": 1, "routed_scale": 1.0, "num_expert_groups": 1,
            "num_expert_groups_per_tok": 1},
    "llama_4_scaling": {"beta": 0.1, "original_max_position_embeddings": 8192},
    "yarn": {"alpha": 1, "apply_scale": False, "beta": 32, "factor": 36, "original_max_position_embeddings": 8192},
}


def _params_json(tmp_path, raw: dict):
    folder = tmp_path / "mistral-large-3"
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps(raw))
    return folder


def test_mistral_large_3_params_json_is_read_as_vllm_adapts_it(tmp_path):
    from kvplan.sources import load_model

    model = load_model(str(_params_json(tmp_path, LARGE3_PARAMS)))  # a folder with params.json only
    # adapt_config_dict: shared experts + MLA -> model_type deepseek_v3, MistralLarge3ForCausalLM
    assert model.model_type == "deepseek_v3" and model.reading == "exact" and model.num_layers == 61
    # one MLA latent of 512 + 64 per token and layer, bf16: 61 x 576 x 2 B
    assert estimate(model, 4096).bytes_per_token == 61 * (512 + 64) * 2 == 70_272
    h = 7168
    # DeepseekV2 MLA with q_lora_rank: q_a 7,168 x 1,536, q_a_layernorm, q_b 1,536 x 128 x 192, kv_a 7,168 x 576,
    # kv_a_layernorm 512, kv_b 512 x 128 x 256, o 128 x 128 x 7,168
    attn = h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h
    dense, expert, shared = 3 * h * 16384, 3 * h * 4096, 3 * h * 4096 * 1
    router = h * 128  # topk_method None (as _remap_moe_args sets it): no e_score_correction_bias in vLLM
    embed_head = 2 * 131072 * h  # tied_embeddings absent: False
    total = embed_head + h + 3 * (attn + 2 * h + dense) + 58 * (attn + 2 * h + router + shared + 128 * expert)
    active = embed_head + h + 3 * (attn + 2 * h + dense) + 58 * (attn + 2 * h + router + shared + 4 * expert)
    assert model.param_count == total == 673_421_089_792  # Mistral's 675B less its 2.5B vision encoder
    assert model.active_param_count == active == 39_946_968_064


def test_mistral_params_json_with_audio_or_without_shared_experts_is_one_line(tmp_path):
    # a vision encoder is read as vLLM's Pixtral wrapper (tests/test_vla_wrappers.py); an audio one (Voxtral) is not
    audio = {**LARGE3_PARAMS, "multimodal": {"whisper_model_args": {"encoder_args": {"dim": 1280}}}}
    path = _params_json(tmp_path, audio) / "params.json"
    r = kvplan("estimate", str(path))
    assert r.returncode != 0 and r.stderr.count("\n") == 1 and "Voxtral" in r.stderr
    from kvplan.configs.mistral_params import to_config

    moe = {**LARGE3_PARAMS, "moe": {**LARGE3_PARAMS["moe"], "num_shared_experts": 0}}
    moe.pop("qk_nope_head_dim")
    with pytest.raises(ConfigError, match="MixtralForCausalLM"):
        to_config(moe, "params.json")


def test_mistral_large_3_params_json_with_vision_reads_its_text_model():
    # _remap_mistral_vision_args: the adapted text config (deepseek_v3, MistralLarge3ForCausalLM) under
    # text_config of a pixtral wrapper; the cache is the text model's: 61 x (512 + 64) x 2 B
    from kvplan.configs.mistral_params import to_config

    config = to_config({**LARGE3_PARAMS, "vision_encoder": {"hidden_size": 1664}}, "params.json")
    assert config["model_type"] == "pixtral" and config["text_config"]["model_type"] == "deepseek_v3"
    model = build_model(config, "large3-vision")
    assert model.model_type == "deepseek_v3"
    assert estimate(model, 4096).bytes_per_token == 61 * (512 + 64) * 2 == 70_272


def test_dense_mistral_params_json_reads_as_mistral():
    from kvplan.configs.mistral_params import to_config

    dense = {"dim": 4096, "n_layers": 32, "head_dim": 128, "hidden_dim": 14336, "n_heads": 32, "n_kv_heads": 8,
             "norm_eps": 1e-5, "vocab_size": 32768, "rope_theta": 1e6, "sliding_window": [4096, 4096, 4096, None]}
    model = build_model(to_config(dense, "params.json"), "dense")
    assert model.family == "mistral"
    # _remap_mistral_sliding_window: the pattern repeated, 24 sliding layers of 4,096 and 8 full
    windows = [layer.caches[0].policy.window_tokens for layer in model.layers]
    assert windows == [4096, 4096, 4096, None] * 8
    assert estimate(model, 4096).bytes_per_token == 2 * 32 * 8 * 128 * 2


def test_dense_mistral_params_json_without_a_window_has_none():
    # vLLM 0.33 adapt_config_dict builds a bare PreTrainedConfig (not MistralConfig, whose default window is 4,096)
    # from params.json, filled from config.json only where the repo has one: a params.json that names no
    # sliding_window gets none, so every layer keeps every token
    from kvplan.configs.mistral_params import to_config

    dense = {"dim": 4096, "n_layers": 30, "head_dim": 128, "hidden_dim": 14336, "n_heads": 32, "n_kv_heads": 8,
             "norm_eps": 1e-5, "vocab_size": 32768, "rope_theta": 1e6}
    model = build_model(to_config(dense, "params.json"), "dense")
    assert [layer.caches[0].policy.window_tokens for layer in model.layers] == [None] * 30
    assert estimate(model, 8192).bytes_per_token == 2 * 30 * 8 * 128 * 2


def test_an_unknown_type_with_pangu_sink_fields_is_not_guessed():
    # openPangu-Pro-MoE-V2 (PanguProMoEV2ForCausalLM): no public config, so no model_type to give a record; vLLM
    # 0.33's OpenPanguSinkAttention caches K of qk_nope_dim + qk_rope_dim and V of v_channels plus
    # param_sink_number sink tokens, which the generic reading (K = V = head_dim) would misstate
    raw = {"model_type": "pangu_pro_moe_v2_unknown", "architectures": ["PanguProMoEV2ForCausalLM"],
           "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 1024,
           "qk_nope_dim": 128, "qk_rope_dim": 64, "v_channels": 128, "param_sink_number": 128}
    # naming the architecture, it is refused by that name (families.REFUSED_ARCHITECTURES); without it, the
    # generic reading still refuses the sink fields
    with pytest.raises(ConfigError, match="PanguProMoEV2ForCausalLM is openPangu-Pro-MoE-V2"):
        build_model(raw, "pangu-pro-moe-v2")
    with pytest.raises(ConfigError, match="cannot read without knowing the family"):
        build_model({k: v for k, v in raw.items() if k != "architectures"}, "pangu-pro-moe-v2")


# -- DeepSeek-MoE (deepseek) and TeleChat3 (telechat3): real configs ---------------------------------------
# - deepseek-moe-16b-base.json: deepseek-ai/deepseek-moe-16b-base's config.json as a public parameter-counting
#   script quotes it in full (code index id 1570491832, a Python dict: None/False/True written back as JSON).
# - telechat3-36b-thinking-mlx-4bit.json: mlx-community/Telechat3-36B-Thinking-4bit's config.json as a public port
#   quotes it "field-for-field" (code index id 60982996768); its "quantization" block is MLX's 4-bit format,
#   which vLLM does not read, and its architecture is spelled Telechat3ForCausalLM (vLLM 0.33 registers
#   TeleChat3ForCausalLM).

def _data(name: str) -> dict:
    from pathlib import Path

    return json.loads((Path(__file__).parent / "data" / "configs" / name).read_text())


def test_deepseek_moe_16b_is_multi_head_attention_by_hand():
    model = build_model(_data("deepseek-moe-16b-base.json"), "deepseek-moe-16b")
    assert model.reading == "exact" and model.family == "deepseek"
    # DeepseekAttention: K and V of 16 heads x 2,048 / 16 = 128 on 28 layers, bf16: 2 x 28 x 16 x 128 x 2 B
    assert estimate(model, 4096).bytes_per_token == 2 * 28 * 16 * 128 * 2 == 229_376
    h = 2048
    attn = h * 3 * h + h * h  # qkv and o, no biases
    dense = 3 * h * 10944  # layer 0 (first_k_dense_replace 1)
    moe = h * 64 + 64 * 3 * h * 1408 + 3 * h * (1408 * 2)  # router, 64 experts, 2 shared experts' worth
    active_moe = h * 64 + 6 * 3 * h * 1408 + 3 * h * (1408 * 2)
    embed_head = 2 * 102400 * h
    # published: 16.4B total, 2.8B activated
    assert model.param_count == embed_head + h + attn + 2 * h + dense + 27 * (attn + 2 * h + moe) == 16_375_728_128
    active = embed_head + h + attn + 2 * h + dense + 27 * (attn + 2 * h + active_moe)
    assert model.active_param_count == active == 2_828_650_496


def test_telechat3_36b_is_llamas_rule_by_hand(tmp_path):
    raw = _data("telechat3-36b-thinking-mlx-4bit.json")
    model = build_model(raw, "telechat3-36b")
    assert model.reading == "exact" and model.family == "telechat3"
    # LlamaAttention: K and V of 8 heads x 128 on 64 layers, bf16: 2 x 64 x 8 x 128 x 2 B
    assert estimate(model, 4096).bytes_per_token == 2 * 64 * 8 * 128 * 2 == 262_144
    h = 6144
    layer = h * 48 * 128 + 2 * h * 8 * 128 + 48 * 128 * h + 3 * h * 24576 + 2 * h
    assert model.param_count == 2 * 131072 * h + h + 64 * layer == 36_239_579_136
    # vLLM cannot load the MLX checkpoint itself (tests/test_quant_mlx.py): its cache is planned without the block
    r = _cli(tmp_path, {k: v for k, v in raw.items() if k != "quantization"}, "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["bytes_per_token"] == 262_144
