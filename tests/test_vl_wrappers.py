"""Image/audio-text wrappers vLLM 0.33 serves through its own or remote-code configs (configs/vl_wrappers.py):
the text model nested under text_config, llm_config or language_config, or saved flat and picked by a field.

Expected bytes are worked out by hand from the config's numbers and the layout vLLM 0.33's model file builds
(cited on each test), in bf16 (2 bytes). Parameters are the text model's only, as for every wrapper.

Configs (tests/data/configs/):
- kimi-vl-a3b-instruct.json: moonshotai/Kimi-VL-A3B-Instruct's config.json (revision 398eede0903c...), verbatim
  as a public architecture-recognizer fixture quotes it (code index file id 62088705044,
  receipts/headless/ARCHITECTURE_RECOGNIZER_FIXTURES.json of joshuahickscorp/hawking; its text_config names no
  model_type, so KimiVLConfig's DeepseekV2Config reads it);
- internvl3-1b-pretrained.json: OpenGVLab/InternVL3-1B-Pretrained's config as transformers printed it after
  loading (`print(model.config)`) in a public notes file (code index id 20795796944), re-keyed as JSON; a
  print shows the loaded config, so llm_config carries the layer_types newer transformers derive, and fields
  left at their class defaults (tie_word_embeddings of llm_config) are absent there as in the file;
- phi-3-vision-128k-instruct.json: microsoft/Phi-3-vision-128k-instruct's config.json as a public model-zoo
  test module transcribes it (code index id 32332034728, get_phi_3_vision_128k_instruct), less the
  `_attn_implementation` key that module adds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.configs.families import FAMILIES
from kvplan.configs.vl_wrappers import minicpmv_text
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def _model(name: str):
    return build_model(_raw(name), name)


def test_kimi_vl_reads_its_deepseek_v2_text_model():
    # vLLM 0.33 kimi_vl.py builds DeepseekV2ForCausalLM from text_config (MLA: kv_lora_rank 512 is set):
    # 27 layers x one latent of kv_lora_rank 512 + qk_rope_head_dim 64 x 2 B = 27 x 576 x 2 = 31,104 B per token
    model = _model("kimi-vl-a3b-instruct.json")
    assert model.reading == "exact" and model.family == "deepseek_v2"
    assert model.architecture == "KimiVLForConditionalGeneration"
    assert estimate(model, 4096).bytes_per_token == 27 * (512 + 64) * 2 == 31_104
    # the text model only: Kimi-VL-A3B is 16.4B with MoonViT (about 0.4B), so the text model is below 16.2B
    assert 15_500_000_000 < model.param_count < 16_200_000_000


def test_kimi_vl_without_text_config_is_refused_not_read_flat():
    # KimiVLConfig builds a default DeepseekV2Config when text_config is absent; the top-level fields are not read
    raw = {k: v for k, v in _raw("kimi-vl-a3b-instruct.json").items() if k != "text_config"}
    raw.update(num_hidden_layers=32, num_attention_heads=32, hidden_size=4096)
    with pytest.raises(ConfigError, match="keeps its text model under 'text_config'"):
        build_model(raw, "flat-kimi-vl")


def test_internvl_chat_reads_llm_config():
    # vLLM 0.33 renames llm_config to text_config (transformers_utils/config.py _CONFIG_ATTRS_MAPPING) and
    # internvl.py builds that qwen2 model: 24 layers x 2 KV heads x 64 (896 / 14) x 2 (K, V) x 2 B = 12,288 B
    model = _model("internvl3-1b-pretrained.json")
    assert model.reading == "exact" and model.family == "qwen2"
    assert estimate(model, 4096).bytes_per_token == 24 * 2 * (896 // 14) * 2 * 2 == 12_288
    # untied LM head (tie_word_embeddings false, inherited from the top level): Qwen2.5-0.5B's 24 layers with
    # biases on q, k, v: 24 x (896 x (896 + 2 x 128) + (896 + 2 x 128) + 896 x 896 + 3 x 896 x 4,864 + 2 x 896)
    # + 2 x 151,674 x 896 (embeddings and head) + 896 (final norm)
    per_layer = 896 * (896 + 2 * 128) + (896 + 2 * 128) + 896 * 896 + 3 * 896 * 4864 + 2 * 896
    assert model.param_count == 24 * per_layer + 2 * 151674 * 896 + 896


def test_internvl_chat_needs_its_llm_config():
    raw = {k: v for k, v in _raw("internvl3-1b-pretrained.json").items() if k != "llm_config"}
    with pytest.raises(ConfigError, match="keeps its text model under 'llm_config', which the config lacks"):
        build_model(raw, "no-llm-config")
    raw = _raw("internvl3-1b-pretrained.json")
    del raw["llm_config"]["model_type"]
    with pytest.raises(ConfigError, match="llm_config names no model_type"):
        build_model(raw, "llm-config-without-type")
    raw["llm_config"] = [1, 2]
    with pytest.raises(ConfigError, match="'llm_config' must be a JSON object, got list"):
        build_model(raw, "llm-config-list")


def test_phi3_v_runs_as_llama_with_its_window_on_every_layer():
    # vLLM 0.33 phi3v.py builds LlamaForCausalLM from the flat config; without layer_types its Attention takes
    # cache_config.sliding_window (the config's 131,072) on every layer: 32 layers x 32 KV heads x 96
    # (3072 / 32) x 2 x 2 B = 393,216 B per token, and a sequence keeps at most 131,072 tokens a layer
    model = _model("phi-3-vision-128k-instruct.json")
    e = estimate(model, 200_000)
    assert e.bytes_per_token == 32 * 32 * 96 * 2 * 2 == 393_216
    assert e.kv_bytes_per_sequence == 131_072 * 393_216
    # text model only (4.2B published with CLIP ViT-L/14, about 0.3B): 32 layers of 4 x 3072^2 attention and
    # 3 x 3072 x 8192 MLP plus 2 norms, embeddings and untied head of 32,064 x 3072, final norm
    per_layer = 4 * 3072 * 3072 + 3 * 3072 * 8192 + 2 * 3072
    assert model.param_count == 32 * per_layer + 2 * 32064 * 3072 + 3072


@pytest.mark.parametrize("version, text", [(None, "llama"), (2.5, "llama"), (2.6, "qwen2"), (4.0, "llama"),
                                           (4.5, "qwen3")])
def test_minicpmv_version_picks_the_text_model(version, text):
    # vLLM 0.33 minicpmv.py get_version_by_config and each MiniCPMV*.init_llm; a minimal flat config
    # (hand-written: 2 layers, 4 heads, 2 KV heads of 64): 2 x 2 x 64 x 2 x 2 B = 1,024 B per token
    raw = {"model_type": "minicpmv", "architectures": ["MiniCPMV"], "hidden_size": 256, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
           "vocab_size": 1000, "query_num": 64}
    if version is not None:
        raw["version"] = version
    assert minicpmv_text(raw, "minicpmv") == text
    model = build_model(raw, "minicpmv")
    assert model.family == FAMILIES[text].name and model.reading == "exact"
    assert estimate(model, 1024).bytes_per_token == 2 * 2 * 64 * 2 * 2 == 1_024


def test_minicpmv_unserved_version_is_one_line():
    raw = {"model_type": "minicpmv", "version": 3.0, "hidden_size": 256, "num_hidden_layers": 2,
           "num_attention_heads": 4}
    with pytest.raises(ConfigError, match="MiniCPM-V version 3.0 is not one vLLM 0.33 serves"):
        build_model(raw, "minicpmv")
    raw["version"] = "x.y"
    with pytest.raises(ConfigError, match="'version' must be a number"):
        build_model(raw, "minicpmv")


def test_deepseek_vl_v2_without_mla_reads_plain_attention():
    # DeepSeek-OCR's language_config (kv_lora_rank null, qk head dims 0, use_mla false: 12 layers, 10 heads of
    # 1280) as a public MLX-conversion test quotes its config.json (code index id 55483100742, which re-keys
    # the top-level model_type; the upstream file says deepseek_vl_v2, id 67433323869). vLLM 0.33 builds
    # DeepseekAttention (plain MHA, deepseek_v2.py use_mha): 10 KV heads x 1280 / 10 = 128 on 12 layers:
    # 2 x 12 x 10 x 128 x 2 B = 61,440 B per token (tests/test_vla_wrappers.py reads the whole config)
    raw = {"model_type": "deepseek_vl_v2", "language_config": {
        "kv_lora_rank": None, "qk_nope_head_dim": 0, "qk_rope_head_dim": 0, "hidden_size": 1280,
        "num_hidden_layers": 12, "num_attention_heads": 10, "num_key_value_heads": 10}}
    model = build_model(raw, "deepseek-ocr-like")
    assert model.family == "deepseek"
    assert estimate(model, 1024).bytes_per_token == 2 * 12 * 10 * 128 * 2 == 61_440
    # kv_lora_rank null with nonzero qk head dims: DeepseekV2Attention without a latent, refused by name
    raw["language_config"].update(qk_nope_head_dim=128, qk_rope_head_dim=64)
    with pytest.raises(ConfigError, match="kv_lora_rank null"):
        build_model(raw, "deepseek-vl2-tiny-like")


@pytest.mark.parametrize("key", ["llm_config", "language_config", "text_config"])
def test_unknown_type_with_a_nested_text_model_is_refused(key):
    raw = {"model_type": "some_new_vlm", "num_hidden_layers": 2, "num_attention_heads": 4,
           key: {"model_type": "qwen2", "num_hidden_layers": 28}}
    with pytest.raises(ConfigError, match=f"carries '{key}'"):
        build_model(raw, "unknown")


def test_set_reaches_llm_config(cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text((DATA / "internvl3-1b-pretrained.json").read_text())
    code, out, err = cli("estimate", str(path), "--set", "num_key_value_heads=7", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    # 24 layers x 7 KV heads x 64 x 2 x 2 B = 43,008 B per token
    assert data["bytes_per_token"] == 24 * 7 * 64 * 2 * 2
    assert data["overrides"][0]["section"] == "llm_config"


def test_bad_llm_config_is_one_line_on_the_cli(cli, tmp_path):
    raw = _raw("internvl3-1b-pretrained.json")
    raw["llm_config"] = "qwen2"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    code, out, err = cli("estimate", str(path))
    assert code != 0 and "Traceback" not in err
    assert "'llm_config' must be a JSON object, got str" in err


def test_vllm_profile_reads_the_vocabulary_under_llm_config():
    # vLLM renames llm_config to text_config, so its sampler profile sees llm_config's vocab_size (151,674)
    from kvplan.engines.vllm_profile import vocab_size

    model = build_model(_raw("internvl3-1b-pretrained.json"), "internvl3-1b-pretrained",
                        str(DATA / "internvl3-1b-pretrained.json"))
    assert vocab_size(model) == 151_674


# Minimal hand-written configs (no public copy of these checkpoints' config.json was found in the code index):
# each is the wrapper's shape (its model_type, its nested key, the text model's model_type) with small dims.
_QWEN2 = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 512, "num_hidden_layers": 3,
          "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 1024, "vocab_size": 1000,
          "use_sliding_window": False}
_LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512, "num_hidden_layers": 3,
          "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 1024, "vocab_size": 1000}


@pytest.mark.parametrize("wrapper, text, kv_heads", [
    ("NVLM_D", _QWEN2, 2), ("h2ovl_chat", _LLAMA, 4), ("skywork_chat", _QWEN2, 2),
    ("Llama_Nemotron_Nano_VL", _LLAMA, 4)])
def test_llm_config_wrappers_read_their_text_model(wrapper, text, kv_heads):
    # vLLM 0.33 nvlm_d.py / h2ovl.py (InternVLChatModel subclasses), skyworkr1v.py, nemotron_vl.py build
    # text_config, renamed from llm_config: 3 layers x kv_heads x 64 (512 / 8) x 2 x 2 B
    model = build_model({"model_type": wrapper, "llm_config": dict(text)}, wrapper)
    assert model.reading == "exact" and model.model_type == text["model_type"]
    assert estimate(model, 1024).bytes_per_token == 3 * kv_heads * 64 * 2 * 2


def test_nemotron_h_nano_vl_v2_reads_its_hybrid_text_model():
    # llm_config nemotron_h with hybrid_override_pattern "M*M-": one attention layer of 2 KV heads x head_dim 64
    # (2 x 64 x 2 x 2 B = 512 B per token) and two Mamba-2 layers, whose state does not grow with the tokens
    raw = {"model_type": "NemotronH_Nano_VL_V2", "architectures": ["NemotronH_Nano_VL_V2"], "llm_config": {
        "model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"], "num_hidden_layers": 4,
        "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
        "hybrid_override_pattern": "M*M-", "mamba_num_heads": 16, "mamba_head_dim": 32, "ssm_state_size": 128,
        "n_groups": 8, "conv_kernel": 4, "intermediate_size": 1024, "vocab_size": 1000}}
    model = build_model(raw, "nemotron-nano-vl-v2-shape")
    e = estimate(model, 1024)
    assert e.bytes_per_token == 2 * 64 * 2 * 2 == 512
    assert sum(1 for layer in model.layers if layer.state is not None) == 2


def test_deepseek_vl_v2_reads_language_config_as_mla():
    # DeepseekVLV2TextConfig (a DeepseekV2Config) from language_config; vLLM 0.33 deepseek_vl2.py builds it
    # with MLA (kv_lora_rank set): 4 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B = 4,608 B
    raw = {"model_type": "deepseek_vl_v2", "architectures": ["DeepseekVLV2ForCausalLM"], "language_config": {
        "model_type": "deepseek_v2", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 8, "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "v_head_dim": 128, "intermediate_size": 2048, "vocab_size": 1000}}
    model = build_model(raw, "deepseek-vl2-shape")
    assert model.reading == "exact" and model.family == "deepseek_v2"
    assert estimate(model, 1024).bytes_per_token == 4 * (512 + 64) * 2 == 4_608
    del raw["language_config"]
    with pytest.raises(ConfigError, match="under 'language_config'"):
        build_model(raw, "deepseek-vl2-flat")


def test_ultravox_reads_text_config_or_names_the_text_model_id():
    # UltravoxConfig: text_config (llama by default) when text_model_id is unset; 3 x 4 x 64 x 2 x 2 B = 3,072 B
    text = {k: v for k, v in _LLAMA.items() if k != "model_type"}
    model = build_model({"model_type": "ultravox", "text_config": text}, "ultravox-shape")
    assert model.family == "llama" and estimate(model, 1024).bytes_per_token == 3 * 4 * 64 * 2 * 2
    with pytest.raises(ConfigError, match="text_model_id 'meta-llama/Llama-3.1-8B-Instruct'"):
        build_model({"model_type": "ultravox", "text_model_id": "meta-llama/Llama-3.1-8B-Instruct",
                     "text_config": text}, "ultravox-by-id")


def test_molmo_reads_its_flat_fields_as_vllm_does():
    # vLLM 0.33 molmo.py MolmoAttention: num_key_value_heads or num_attention_heads KV heads of hidden / heads
    # (hand-written shape): 2 layers x 4 x 64 (512 / 8) x 2 x 2 B = 2,048 B per token; null KV heads: 8 heads
    raw = {"model_type": "molmo", "architectures": ["MolmoForCausalLM"], "hidden_size": 512,
           "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 32,
           "intermediate_size": 1024, "vocab_size": 1000, "embedding_size": 1024, "qkv_bias": True}
    model = build_model(raw, "molmo-shape")
    assert model.reading == "exact" and estimate(model, 1024).bytes_per_token == 2 * 4 * 64 * 2 * 2
    raw["num_key_value_heads"] = None
    assert estimate(build_model(raw, "molmo-shape"), 1024).bytes_per_token == 2 * 8 * 64 * 2 * 2
