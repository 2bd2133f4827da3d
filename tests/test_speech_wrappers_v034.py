"""Audio/speech models new in vLLM 0.34 and transformers 5.21-5.25 (configs/speech_wrappers.py): LFM3-Audio, Ming V3
ASR, Nemotron-3.5-Transcribe (nemo_speechlm), OmniASR-LLM, Pocket TTS and Gradium Phonon TTS read exactly; Canary,
Cohere ASR, OmniASR-CTC, JEV, PI0.5, UltraVBERT, the codecs and the encoder sub-configs refused by name.

Expected bytes are worked out by hand from each config's numbers and the layout the cited model file builds, in bf16
(2 bytes). Configs, all hand-written (no public config.json of these checkpoints was found in the code or page
indexes):
- tests/data/configs/lfm3-audio-training-export-handwritten.json: vLLM 0.34 tests/models/multimodal/processing/
  test_lfm3_audio.py TRAINING_EXPORT ("the hub checkpoints (training export)"), with architectures and model_type
  added;
- ming-v3-asr-handwritten.json: MingV3ASRConfig's layout (vLLM 0.34 configs/ming_v3_asr.py) with
  BailingMoeV3TextConfig's defaults written out as text_config;
- nemotron-3.5-transcribe-nemo-layout-handwritten.json: vLLM 0.34 test_nemotron3_5_transcribe.py CHECKPOINT_CONFIG's
  NeMo layout with llm_config = model_specs/nemotron-3-nano-30b-a3b.json (the decoder shape transformers 5.25's
  Nemotron3_5TranscribeConfig init_kwargs give: hidden 2688, the same hybrid_override_pattern, 128 experts, 2 KV
  heads);
- transformers-5.25-speech-defaults.json: each type's default config as transformers 5.25 builds it
  (`CONFIG_MAPPING[type]().to_dict()`, top-level bookkeeping keys dropped: transformers_version, return_dict,
  output_*, id2label, label2id, problem_type, chunk_size_feed_forward, _name_or_path, is_encoder_decoder,
  tie_encoder_decoder), generated with transformers 5.25.0 on the path.
Parameter counts quoted as transformers 5.25's are meta-device counts (sum of numel) of the causal LM, measured once.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.configs.families import FAMILIES, REFUSED
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"
SPECS = Path(__file__).parents[1] / "model_specs"
DEFAULTS = json.loads((DATA / "transformers-5.25-speech-defaults.json").read_text())


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def _kinds(model) -> dict[str, int]:
    out: dict[str, int] = {}
    for layer in model.layers:
        out[layer.kind] = out.get(layer.kind, 0) + 1
    return out


# -- LFM3-Audio ------------------------------------------------------------------------------------------------

LFM3_AUDIO = "lfm3-audio-training-export-handwritten.json"


def test_lfm3_audio_reads_lfm3_defaults_under_the_training_exports_lfm_key():
    # Lfm3AudioConfig: text_config = kwargs.pop("lfm", ...); {"model_type": "lfm3", "dtype": "float32"} is built as
    # Lfm3Config() over those two keys: 24 layers, full where i % 4 == 2 (6), sliding (256) where i % 4 == 0 and
    # i > 0 (5), short conv elsewhere (13)
    model = build_model(_raw(LFM3_AUDIO), "lfm3-audio")
    assert model.reading == "exact" and model.model_type == "lfm3" and model.num_layers == 24
    assert _kinds(model) == {"full attention": 6, "sliding window 256": 5, "short_conv state": 13}
    n = 8192
    e = estimate(model, n)
    per_layer = 2 * 4 * 128 * 2  # K and V of 4 KV heads x 128, 2 B
    assert e.bytes_per_token == 11 * per_layer == 22_528
    assert e.kv_bytes_per_sequence == 6 * n * per_layer + 5 * 256 * per_layer
    # the conv layers' state: (conv_L_cache 7 - 1) x hidden 2,048 columns each, in the checkpoint's float32
    assert e.state_bytes_per_sequence == 13 * 6 * 2048 * 4
    # transformers 5.25's meta count of Lfm3ForCausalLM(Lfm3Config()) (tied embeddings): vLLM's Lfm3Config has the
    # same defaults; the encoder, projector and speech head are not counted
    assert model.param_count == 1_728_801_536
    assert model.max_context_tokens == 128_000


def test_lfm3_audio_transformers_layout_and_overrides():
    raw = _raw(LFM3_AUDIO)
    raw.pop("lfm")
    raw["text_config"] = {"model_type": "lfm3", "num_hidden_layers": 8, "num_key_value_heads": 8}
    # 8 layers: full at 2 and 6, sliding at 4, conv at 0, 1, 3, 5, 7; 8 KV heads x 128
    model = build_model(raw, "lfm3-audio-native")
    assert _kinds(model) == {"full attention": 2, "sliding window 256": 1, "short_conv state": 5}
    assert estimate(model, 100).bytes_per_token == 3 * 2 * 8 * 128 * 2
    # `lfm` beats text_config (Lfm3AudioConfig pops it first)
    both = {**raw, "lfm": {"model_type": "lfm3", "num_hidden_layers": 4}}
    assert build_model(both, "both").num_layers == 4
    # neither: Lfm3Config() alone, the top-level fields are not read
    bare = {"model_type": "lfm3_audio", "num_hidden_layers": 3}
    assert build_model(bare, "bare").num_layers == 24
    with pytest.raises(ConfigError, match="'lfm' is null"):
        build_model({**raw, "lfm": None}, "null-lfm")


# -- Ming V3 ASR -----------------------------------------------------------------------------------------------

def test_ming_v3_asr_reads_ling3s_kda_and_mla_layers():
    # ming_v3_asr.py: BailingMoeV3ForCausalLM on text_config; bailing_moe_v3.py _is_kda_layer: MLA where
    # (i + 1) % 5 == 0 (4, 9, 14, 19) and on the 20 - 20 // 5 * 5 = 0 trailing layers, KDA on the other 16
    model = build_model(_raw("ming-v3-asr-handwritten.json"), "ming")
    assert model.reading == "exact" and model.model_type == "bailing_hybrid"
    assert [i for i, layer in enumerate(model.layers) if layer.caches] == [4, 9, 14, 19]
    e = estimate(model, 8192)
    assert e.bytes_per_token == 4 * (512 + 64) * 2 == 4608  # MLA latent + rope key, 2 B
    # MambaStateShapeCalculator.kda_state_shape: conv (4 - 1) x (16 x 128 + 2 x 16 x 128) in bf16, recurrent
    # 16 x 128 x 128 in float32 (kda_state_dtype)
    assert e.state_bytes_per_sequence == 16 * (3 * 6144 * 2 + 16 * 128 * 128 * 4) == 17_367_040
    assert model.max_context_tokens == 32768


def test_ming_v3_asr_trailing_layers_follow_ling3_not_ling25():
    raw = _raw("ming-v3-asr-handwritten.json")
    raw["text_config"] = {**raw["text_config"], "num_hidden_layers": 22}
    # 22 layers, groups of 5: MLA at 4, 9, 14, 19 and the 22 - 20 = 2 trailing layers 20, 21 (Ling 3.0's rule,
    # which the top-level MingV3ASRForConditionalGeneration builds)
    model = build_model(raw, "ming22")
    assert [i for i, layer in enumerate(model.layers) if layer.caches] == [4, 9, 14, 19, 20, 21]


def test_ming_v3_asr_defaults_and_refusals():
    # no text_config: BailingMoeV3TextConfig() (the same 20 layers), not the top-level fields
    bare = build_model({"model_type": "ming_v3_asr", "architectures": ["MingV3ASRForConditionalGeneration"],
                        "num_hidden_layers": 3}, "bare")
    full = build_model(_raw("ming-v3-asr-handwritten.json"), "ming")
    assert bare.num_layers == 20 and estimate(bare, 1000).bytes_per_token == estimate(full, 1000).bytes_per_token
    # the same decoder as a plain Ling 3.0 config counts the same parameters, once that config also says no gate
    # projection (BailingMoeV3TextConfig's default is None; a bare bailing_hybrid file's is not)
    ling3 = {**_raw("ming-v3-asr-handwritten.json")["text_config"], "architectures": ["BailingMoeV3ForCausalLM"],
             "gated_attention_proj_granularity_type": None}
    assert full.param_count == build_model(ling3, "ling3").param_count > 0
    raw = _raw("ming-v3-asr-handwritten.json")
    raw["text_config"]["architectures"] = ["BailingMoeV2_5ForCausalLM"]
    with pytest.raises(ConfigError, match="always builds BailingMoeV3ForCausalLM"):
        build_model(raw, "bad")


# -- Nemotron-3.5-Transcribe -----------------------------------------------------------------------------------

NEMO = "nemotron-3.5-transcribe-nemo-layout-handwritten.json"


def test_nemotron_transcribe_reads_the_nemotron_h_decoder_under_llm_config():
    model = build_model(_raw(NEMO), "transcribe")
    assert model.reading == "exact" and model.model_type == "nemotron_h" and model.num_layers == 52
    e = estimate(model, 8192)
    # hybrid_override_pattern: 6 '*' attention layers, K/V of 2 KV heads x 128 in bf16
    assert e.bytes_per_token == 6 * 2 * 2 * 128 * 2 == 6144
    # 23 'M' Mamba-2 layers: conv (4 - 1) x (64 x 64 + 2 x 8 x 128) in bf16, SSM 64 x 64 x 128 in float32
    # (mamba_ssm_cache_dtype)
    assert e.state_bytes_per_sequence == 23 * (3 * 6144 * 2 + 64 * 64 * 128 * 4) == 49_082_368
    nano = build_model(json.loads((SPECS / "nemotron-3-nano-30b-a3b.json").read_text()), "nano")
    assert model.param_count == nano.param_count  # the decoder only (vLLM's 10 extra vocabulary rows not counted)


def test_nemotron_transcribe_transformers_layout_reads_text_config():
    # transformers 5.25 Nemotron3_5TranscribeConfig(): text_config = nemotron_h with the init_kwargs (the Nano
    # shape above), so the same cache
    model = build_model(copy.deepcopy(DEFAULTS["nemo_speechlm"]), "transcribe-tf")
    assert model.model_type == "nemotron_h"
    assert estimate(model, 8192).bytes_per_token == 6144


@pytest.mark.parametrize("change, match", [
    ({"architectures": ["NemoSpeechLMForConditionalGeneration"]}, "serves only Nemotron3_5Transcribe"),
    ({"llm_config": None}, "lacks"),
    ({"llm_config": {"hidden_size": 64}}, "declares no model_type"),
    ({"llm_config": {"model_type": "llama", "hidden_size": 64}}, "has model_type 'llama'"),
])
def test_nemotron_transcribe_refusals(change, match):
    raw = {**_raw(NEMO), **change}
    with pytest.raises(ConfigError, match=match):
        build_model(raw, "bad")


# -- OmniASR-LLM, Pocket TTS, Gradium Phonon TTS ---------------------------------------------------------------

def test_omniasr_reads_its_llama_decoder():
    # OmniASRConfig(): text_config llama with hidden 4096, 8 heads (head_dim 512), 8 KV heads, 12 layers
    model = build_model(copy.deepcopy(DEFAULTS["omniasr"]), "omniasr")
    assert model.reading == "exact" and model.model_type == "llama"
    assert estimate(model, 1000).bytes_per_token == 12 * 2 * 8 * 512 * 2 == 196_608
    # by hand, untied: embeddings and LM head 11,984 x 4,096 each; a layer's q, k, v, o 4 x 4,096^2, MLP
    # 3 x 4,096 x 2,816, two norms of 4,096; a final norm (transformers 5.25's meta count agrees)
    layer = 4 * 4096 * 4096 + 3 * 4096 * 2816 + 2 * 4096
    assert model.param_count == 2 * 11984 * 4096 + 12 * layer + 4096 == 1_318_817_792
    with pytest.raises(ConfigError, match="text_config"):
        build_model({"model_type": "omniasr"}, "bare")


@pytest.mark.parametrize("model_type, layers, kv_heads, head_dim", [
    ("pocket_tts", 6, 16, 64),  # hidden 1024 / 16 heads; num_key_value_heads None -> the heads
    ("gradium_phonon_tts", 6, 12, 64),  # hidden 768 / 12 heads
])
def test_tts_backbones_cache_kv_on_every_layer(model_type, layers, kv_heads, head_dim):
    model = build_model(copy.deepcopy(DEFAULTS[model_type]), model_type)
    assert model.reading == "exact" and _kinds(model) == {"full attention": layers}
    assert estimate(model, 1000).bytes_per_token == layers * 2 * kv_heads * head_dim * 2
    # GQA and an explicit head_dim (transformers 5.25 checked: a tiny model's DynamicCache holds num_key_value_heads
    # x head_dim per token and layer)
    gqa = build_model({**DEFAULTS[model_type], "num_key_value_heads": 2, "head_dim": 96}, model_type)
    assert estimate(gqa, 1000).bytes_per_token == layers * 2 * 2 * 96 * 2


@pytest.mark.parametrize("model_type", ["audioflamingo3", "musicflamingo"])
def test_flamingo_wrappers_read_their_qwen2_decoder(model_type):
    # text_config = Qwen2Config(): 32 layers, 32 KV heads x 128 (hidden 4,096 / 32), no window
    model = build_model(copy.deepcopy(DEFAULTS[model_type]), model_type)
    assert model.reading == "exact" and model.model_type == "qwen2"
    assert estimate(model, 1000).bytes_per_token == 32 * 2 * 32 * 128 * 2 == 524_288
    # by hand, untied: embeddings and LM head 151,936 x 4,096 each; a layer's q, k, v (with biases) and o
    # 4 x 4,096^2 + 3 x 4,096, MLP 3 x 4,096 x 22,016, two norms; a final norm (transformers 5.25's meta count of
    # Qwen2ForCausalLM(Qwen2Config()) agrees: 12,049,846,272)
    layer = 4 * 4096 * 4096 + 3 * 4096 + 3 * 4096 * 22016 + 2 * 4096
    assert model.param_count == 2 * 151936 * 4096 + 32 * layer + 4096 == 12_049_846_272
    with pytest.raises(ConfigError, match="text_config"):
        build_model({"model_type": model_type}, "bare")


# -- refused by name -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model_type, match", [
    ("canary", "encoder-decoder"),
    ("omniasr_ctc", "CTC head"),
    ("omniasr_audio", "no decoder"),
    ("jev", "decision head"),
    ("pi05", "vision-language-action"),
    ("ultravbert", "retrieval model"),
    ("pocket_tts_audio_tokenizer", "neural audio codec"),
    ("wavtokenizer", "neural audio codec"),
    ("nemotron3_5_transcribe_asr_audio", "ASR encoder"),
    # audio parts kvplan used to read as guessed decoders
    ("csm", "depth decoder"),
    ("voxtral_realtime_encoder", "causal audio encoder"),
    ("moonshine_streaming", "encoder-decoder"),
    ("qwen3_omni_moe_talker_text", "talker"),
])
def test_transformers_525_defaults_are_refused_by_name(model_type, match):
    with pytest.raises(ConfigError, match=match):
        build_model(copy.deepcopy(DEFAULTS[model_type]), model_type)


def test_every_new_speech_type_is_read_or_refused():
    # transformers 5.25 config types new since 5.20 (models/auto/auto_mappings.py and configuration_auto.py) in this
    # task's scope, and vLLM 0.34's new audio model types
    read = {"lfm3_audio", "ming_v3_asr", "nemo_speechlm", "omniasr", "pocket_tts", "gradium_phonon_tts",
            "audioflamingo3", "musicflamingo"}
    refused = {"canary", "canary_decoder", "cohere_asr", "omniasr_ctc", "omniasr_audio", "jev", "pi05", "ultravbert",
               "pocket_tts_audio_tokenizer", "pocket_tts_audio_tokenizer_encoder",
               "pocket_tts_audio_tokenizer_decoder", "wavtokenizer", "wavtokenizer_encoder", "mimi", "mimi_encoder",
               "mimi_decoder", "nemotron3_5_transcribe_audio", "nemotron3_5_transcribe_asr_audio",
               "nemotron3_5_transcribe_word_timestamp"}
    assert read <= set(FAMILIES) and not read & set(REFUSED)
    assert refused <= set(REFUSED) and not refused & set(FAMILIES)


def test_a_nested_model_type_that_is_not_a_string_is_refused_in_one_line():
    # wrappers that read their text model as one class ignore the nested model_type, but a list there reached the
    # vLLM profile's vocabulary lookup by name and crashed (a fuzz probe found it with LFM3-Audio, and BAGEL's
    # llm_config had the same path): refused by name now
    lfm3 = _raw(LFM3_AUDIO)
    lfm3["lfm"]["model_type"] = ["nan", None]
    ming = _raw("ming-v3-asr-handwritten.json")
    ming["text_config"]["model_type"] = 3
    bagel = {"model_type": "bagel", "llm_config": {"model_type": ["x"], "num_hidden_layers": 2, "hidden_size": 64,
                                                    "num_attention_heads": 4}}
    for raw, key in ((lfm3, "lfm"), (ming, "text_config"), (bagel, "llm_config")):
        with pytest.raises(ConfigError, match=f"{key}.model_type must be a string"):
            build_model(raw, "bad")


def test_nemotron_transcribe_mtp_is_refused_the_bare_decoders_modelled():
    # vLLM 0.34 config/speculative.py turns the wrapper into Nemotron3_5TranscribeMTPModel on the decoder's
    # num_nextn_predict_layers (its own class, not read); the bare decoder (NemotronHForCausalLM) gets
    # NemotronHMTPModel, whose one attention layer ('*E', the default pattern) kvplan models from 0.17
    from kvplan.engines.vllm_speculative import draft_layer_count
    from kvplan.errors import KvplanError

    raw = _raw(NEMO)
    raw["llm_config"]["num_nextn_predict_layers"] = 1
    wrapper, decoder = build_model(raw, "transcribe"), build_model(raw["llm_config"], "nano")
    assert wrapper.mtp_layers == decoder.mtp_layers == 1
    with pytest.raises(KvplanError, match="Nemotron3_5TranscribeMTPModel"):
        draft_layer_count(wrapper)
    assert draft_layer_count(decoder) == 1
