"""Image-text wrappers vLLM 0.33 serves with remote-code configs (families.py, configs/keye.py): Keye-VL-1.5
(KeyeVL1_5), OpenCUA (opencua), Kanana-1.5-V (kanana-1.5-v), Step3-VL-10B (step_robotics) and
Phi-4-reasoning-vision (phi4-siglip).

Expected bytes are worked out by hand from the config's numbers and the layout vLLM 0.33's model file builds
(cited on each test), in bf16 (2 bytes). Parameters are the text model's only, as for every wrapper.

Configs: no public copy of any of these checkpoints' config.json was found in the code index, so every config
below is hand-written and minimal: only the fields the reading needs, shaped as the config classes read them
(the classes: KeyeVL1_5Config / KeyeVL1_5TextConfig in the Keye team's transformers port, code index id
3679558319; OpenCUAConfig, id 12595724108; KananaVConfig / KananaLanguageConfig, id 52080513166;
StepRoboticsConfig, id 56350981303; Phi4VisionRConfig as vLLM vendors it, id 59014844376). The model_types are
those classes' own (vLLM's mrope code tests "KeyeVL1_5" in hf_config.model_type, id 44678055134).
"""

from __future__ import annotations

import pytest

from kvplan.configs.build import build_model
from kvplan.configs.families import FAMILIES
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

# a Qwen3-shaped text model (hand-written): 36 layers, 32 heads, 8 KV heads of head_dim 128
QWEN3_TEXT = {"hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
              "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936, "max_position_embeddings": 40960}
QWEN3_BYTES = 36 * 8 * 128 * 2 * 2  # layers x KV heads x head_dim x (K, V) x 2 B = 147,456 B per token

# a small Qwen2-shaped text model (hand-written): 4 layers, 8 heads of 64 (512 / 8), 2 KV heads
QWEN2_TEXT = {"hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
              "intermediate_size": 1024, "vocab_size": 1000, "max_position_embeddings": 32768}


def test_keye_vl1_5_reads_its_text_config_or_the_top_level_as_qwen3():
    # vLLM 0.33 keye_vl1_5.py KeyeVL1_5ForConditionalGeneration (BaseKeyeModule, keye.py) builds
    # Qwen3ForCausalLM on hf_config; its Qwen2Model reads get_text_config(): the KeyeVL1_5TextConfig that
    # KeyeVL1_5Config builds from text_config, else from the top-level fields. 36 x 8 x 128 x 2 x 2 = 147,456 B
    flat = build_model({**QWEN3_TEXT, "model_type": "KeyeVL1_5",
                        "architectures": ["KeyeVL1_5ForConditionalGeneration"],
                        "vision_config": {"hidden_size": 1152, "spatial_merge_size": 2}}, "keye-flat")
    nested = build_model({"model_type": "KeyeVL1_5", "text_config": {**QWEN3_TEXT, "model_type": "qwen3"},
                          "vision_config": {"hidden_size": 1152}}, "keye-nested")
    for model in (flat, nested):
        assert model.reading == "exact" and model.family == FAMILIES["qwen3"].name
        assert estimate(model, 4096).bytes_per_token == QWEN3_BYTES == 147_456
        # the text model's parameters, flat or nested, q/k norms included: Qwen3-8B's, its index total_size
        # 16,381,470,720 B / 2 B (model_specs/weights.json)
        assert model.param_count == 8_190_735_360


def test_keye_vl1_5_fills_missing_fields_from_its_text_config_class():
    # KeyeVL1_5TextConfig's defaults, not Qwen3Config's: num_key_value_heads 8 (Qwen3Config: 32) and no head_dim,
    # so vLLM's Qwen3Attention takes hidden_size / heads: 36 layers x 8 x (4096 / 32 = 128) x 2 x 2 B = 147,456
    sparse = {"model_type": "KeyeVL1_5", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32}
    assert estimate(build_model(sparse, "keye-sparse"), 4096).bytes_per_token == 36 * 8 * 128 * 2 * 2 == 147_456
    # nothing set: the class defaults alone, 80 layers x 8 KV heads x (8192 / 64 = 128) x 2 x 2 B = 327,680
    bare = build_model({"model_type": "KeyeVL1_5"}, "keye-bare")
    assert estimate(bare, 4096).bytes_per_token == 80 * 8 * 128 * 2 * 2 == 327_680
    # the same defaults under a nested text_config (KeyeVL1_5TextConfig(**text_config))
    nested = build_model({"model_type": "KeyeVL1_5", "text_config": {"num_hidden_layers": 36}}, "keye-nested")
    assert estimate(nested, 4096).bytes_per_token == 36 * 8 * 128 * 2 * 2


def test_opencua_reads_text_config_as_qwen2_whatever_it_names():
    # OpenCUAConfig: text_config -> Qwen2Config(**text_config) (its model_type is not looked at); vLLM 0.33
    # opencua.py builds Qwen2ForCausalLM with hf_config=config.text_config:
    # 4 layers x 2 KV heads x 64 (512 / 8) x 2 x 2 B = 2,048 B per token
    for name in ("qwen2", "some_other_type"):
        raw = {"model_type": "opencua", "architectures": ["OpenCUAForConditionalGeneration"],
               "text_config": {**QWEN2_TEXT, "model_type": name}, "vision_config": {"depth": 32}}
        model = build_model(raw, "opencua")
        assert model.reading == "exact" and model.family == "qwen2"
        assert estimate(model, 1024).bytes_per_token == 4 * 2 * 64 * 2 * 2 == 2_048
    # Qwen2's q/k/v biases; untied embeddings and LM head (Qwen2Config's default) of 1000 x 512; final norm
    per_layer = 512 * (512 + 2 * 128) + (512 + 2 * 128) + 512 * 512 + 3 * 512 * 1024 + 2 * 512
    assert model.param_count == 4 * per_layer + 2 * 1000 * 512 + 512
    # without text_config OpenCUAConfig runs Qwen2Config(): refused rather than read flat
    with pytest.raises(ConfigError, match="keeps its text model under 'text_config'"):
        build_model({**QWEN2_TEXT, "model_type": "opencua"}, "opencua-flat")


def test_kanana_v_reads_text_config_as_llama_with_llama_defaults():
    # KananaVConfig: text_config -> KananaLanguageConfig(**text_config), a LlamaConfig whose model_type is
    # "kanana-1.5-3b-instruct"; vLLM 0.33 kanana_v.py builds LlamaForCausalLM with hf_config=config.text_config:
    # 32 layers x 8 KV heads x 128 x 2 x 2 B = 131,072 B per token
    text = {"model_type": "kanana-1.5-3b-instruct", "hidden_size": 2048, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192,
            "vocab_size": 128256}
    model = build_model({"model_type": "kanana-1.5-v", "text_config": text,
                         "projector_config": {"depth": 2}, "vision_config": {"depth": 32}}, "kanana")
    assert model.reading == "exact" and model.family == "llama"
    assert estimate(model, 4096).bytes_per_token == 32 * 8 * 128 * 2 * 2 == 131_072
    # a sparse text_config takes LlamaConfig's defaults: 32 layers, 32 heads of 4096 / 32 = 128, and KV heads =
    # heads (num_key_value_heads None): 32 x 32 x 128 x 2 x 2 B = 524,288
    sparse = build_model({"model_type": "kanana-1.5-v", "text_config": {"vocab_size": 128256}}, "kanana-sparse")
    assert estimate(sparse, 4096).bytes_per_token == 32 * 32 * 128 * 2 * 2 == 524_288
    with pytest.raises(ConfigError, match="keeps its text model under 'text_config'"):
        build_model({**text, "model_type": "kanana-1.5-v"}, "kanana-flat")


def test_step_robotics_reads_text_config_as_qwen3():
    # StepRoboticsConfig: text_config -> Qwen3Config(**text_config); vLLM 0.33 step_vl.py
    # StepVLForConditionalGeneration builds the text_config's architecture (Qwen3ForCausalLM):
    # 36 layers x 8 KV heads x 128 x 2 x 2 B = 147,456 B per token
    raw = {"model_type": "step_robotics", "architectures": ["StepVLForConditionalGeneration"],
           "text_config": {**QWEN3_TEXT, "model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]},
           "vision_config": {"width": 1536, "layers": 47}, "understand_projector_stride": 2}
    model = build_model(raw, "step_robotics")
    assert model.reading == "exact" and model.family == FAMILIES["qwen3"].name
    assert estimate(model, 4096).bytes_per_token == QWEN3_BYTES == 147_456
    with pytest.raises(ConfigError, match="keeps its text model under 'text_config'"):
        build_model({**QWEN3_TEXT, "model_type": "step_robotics"}, "step-flat")


def test_phi4_siglip_is_read_flat_as_phi3():
    # Phi4VisionRConfig is a Phi3Config saved flat; vLLM 0.33 phi4siglip.py Phi4ForCausalLMV builds
    # Phi3ForCausalLM with hf_config=config: 40 layers x 10 KV heads x 128 (5120 / 40) x 2 x 2 B = 204,800
    raw = {"model_type": "phi4-siglip", "architectures": ["Phi4ForCausalLMV"], "hidden_size": 5120,
           "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 10,
           "intermediate_size": 17920, "vocab_size": 100352, "sliding_window": None, "mm_hidden_size": 1152,
           "vision_config": {"hidden_size": 1152, "num_hidden_layers": 27}}
    model = build_model(raw, "phi4-siglip")
    assert model.reading == "exact" and model.family == FAMILIES["phi3"].name
    e = estimate(model, 32768)
    assert e.bytes_per_token == 40 * 10 * 128 * 2 * 2 == 204_800
    assert e.kv_bytes_per_sequence == 32768 * 204_800  # no window: every token on every layer
    # q, o (5120 x 5120), k, v (5120 x 1280), a 3 x 5120 x 17920 MLP and two norms a layer; untied embeddings and
    # LM head (Phi3Config's default) of 100,352 x 5120; the final norm
    per_layer = 2 * 5120 * 5120 + 2 * 5120 * 1280 + 3 * 5120 * 17920 + 2 * 5120
    assert model.param_count == 40 * per_layer + 2 * 100352 * 5120 + 5120


def test_keye_s_text_class_sets_no_head_dim_so_vllm_takes_hidden_over_heads():
    # KeyeVL1_5TextConfig has no head_dim (not Qwen3Config's 128): vLLM's Qwen3Attention takes 4096 / 64 = 64;
    # 2 layers x (K, V) x 8 KV heads (the class default) x 64 x 2 B = 4,096 B per token, flat or nested
    sparse = {"hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 64}
    for raw in ({**sparse, "model_type": "KeyeVL1_5"}, {"model_type": "KeyeVL1_5", "text_config": sparse}):
        assert estimate(build_model(raw, "keye"), 16).bytes_per_token == 2 * 2 * 8 * 64 * 2 == 4_096
