"""transformers 5.20's speech-to-text wrappers (configs/audio_wrappers.py SPEECH_TEXT_WRAPPERS) and the model_types
refused by name (audio_wrappers.SPEECH_REFUSED, configs/encoder_decoders.py).

Each wrapper keeps its decoder in text_config, built by AutoConfig from its model_type or the config class's
SubConfigSpec default (transformers 5.20 models/<name>/configuration_<name>.py): GraniteSpeechConfig and
GraniteSpeechPlusConfig granite, VibeVoiceAsrConfig qwen2, FunAsrNanoConfig qwen3. Expected bytes are worked out by
hand from the config's numbers (bf16, 2 bytes): 2 (K, V) x layers x KV heads x head_dim x 2 B.

Configs (tests/data/configs/):
- granite-speech-4.0-1b-quoted.json: a Granite Speech config.json as a public MLX port's test quotes it "upstream"
  (code index id 54551170523, _granite_config_payload), verbatim but for JSON spelling (None/False -> null/false);
  its text model (40 layers, hidden 2048, 4 KV heads, audio_token_index 100352) is granite-4.0-1b-speech's;
- vibevoice-asr-hf-trimmed.json: microsoft/VibeVoice-ASR-HF's flat (transformers) config.json as a public Swift
  test quotes it (code index id 69223081033, flatConfigDoesNotDoubleReverseRatios), as given; its text_config names
  no model_type, so VibeVoiceAsrConfig's qwen2 default applies.
No public Granite Speech Plus or transformers-layout Fun-ASR-Nano config.json was found: Granite Speech Plus reuses
the Granite Speech file with its model_type changed (the classes differ only in the encoder), and Fun-ASR-Nano's is
hand-written below from FunAsrNanoConfig's text_config init_kwargs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.configs.families import FAMILIES
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


@pytest.mark.parametrize("model_type", ["granite_speech", "granite_speech_plus"])
def test_granite_speech_caches_its_granite_text_model(model_type):
    # vLLM 0.33 granite_speech.py GraniteSpeechForConditionalGeneration: init_vllm_registered_model on
    # config.text_config (granite.py GraniteAttention: K/V of num_key_value_heads x hidden_size / heads);
    # granite_speech_plus.py subclasses it, changing only the encoder
    raw = _raw("granite-speech-4.0-1b-quoted.json") | {"model_type": model_type}
    model = build_model(raw, "granite-speech")
    assert model.reading == "exact" and model.family == FAMILIES["granite"].name and len(model.layers) == 40
    # head_dim 2048 / 16 = 128; 2 x 40 layers x 4 KV heads x 128 x 2 B = 81,920 B per token, no state
    e = estimate(model, 8192)
    assert e.bytes_per_token == 2 * 40 * 4 * 128 * 2 == 81_920
    assert e.state_bytes_per_sequence == 0


def test_vibevoice_asr_caches_its_qwen2_text_model():
    # VibeVoiceAsrConfig: text_config without a model_type is qwen2 (SubConfigSpec default); vLLM 0.33 serves it
    # with its Transformers backend (TransformersMultiModalForCausalLM), caching the text model's K/V
    model = build_model(_raw("vibevoice-asr-hf-trimmed.json"), "vibevoice-asr")
    assert model.reading == "exact" and model.family == FAMILIES["qwen2"].name and len(model.layers) == 28
    # head_dim 3584 / 28 = 128; no use_sliding_window (Qwen2Config: False), so no window;
    # 2 x 28 layers x 4 KV heads x 128 x 2 B = 57,344 B per token
    assert estimate(model, 8192).bytes_per_token == 2 * 28 * 4 * 128 * 2 == 57_344


def test_fun_asr_nano_caches_its_qwen3_text_model():
    # hand-written (no public transformers-layout config.json found): text_config as FunAsrNanoConfig's
    # SubConfigSpec init_kwargs give it (hidden 1024, 28 layers, 16 heads, 8 KV heads), qwen3 by default, with
    # head_dim 128 written out as a saved Qwen3Config writes it (Qwen3Config's default; kvplan's qwen2/qwen3 row
    # does not fill that default, so a qwen3 text_config omitting head_dim would read hidden / heads = 64)
    raw = {"model_type": "fun_asr_nano", "architectures": ["FunAsrNanoForConditionalGeneration"],
           "text_config": {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
                           "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
                           "max_position_embeddings": 40960, "tie_word_embeddings": True}}
    model = build_model(raw, "fun-asr-nano")
    assert model.family == FAMILIES["qwen3"].name and len(model.layers) == 28
    # 2 x 28 layers x 8 KV heads x 128 x 2 B = 114,688 B per token
    assert estimate(model, 8192).bytes_per_token == 2 * 28 * 8 * 128 * 2 == 114_688


@pytest.mark.parametrize("model_type", ["granite_speech", "granite_speech_plus", "vibevoice_asr", "fun_asr_nano"])
def test_a_speech_wrapper_without_text_config_is_refused(model_type):
    # the config classes build a default text model when text_config is absent, not the top-level fields
    with pytest.raises(ConfigError, match="text_config"):
        build_model({"model_type": model_type, "num_hidden_layers": 4, "hidden_size": 256}, "x")


@pytest.mark.parametrize("model_type, words", [
    ("kyutai_speech_to_text", "Mimi codec"),
    ("florence2", "bart-plugin"),
    ("pix2struct", "encoder-decoder"),
    ("udop", "encoder-decoder"),
    ("t5gemma2", "encoder-decoder"),
    ("blip", "cross-attends"),
    ("vision-encoder-decoder", "encoder-decoder"),
    ("pp_formulanet", "cross-attend"),  # PPFormulaNetConfig is_encoder_decoder, cross_attention_cache
])
def test_refused_by_name(model_type, words):
    with pytest.raises(ConfigError, match=words):
        build_model({"model_type": model_type, "num_hidden_layers": 4, "hidden_size": 256,
                     "num_attention_heads": 4}, "x")
