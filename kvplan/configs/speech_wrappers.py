"""Audio/speech models new in vLLM 0.34 and transformers 5.21-5.25, read by the decoder they build or refused by
name (the older audio-text wrappers are in configs/audio_wrappers.py).

Read exactly: the decoder's cache is the model's only cache in the pool (each encoder runs once over the audio
when the prompt is embedded and keeps nothing):
- LFM3-Audio (model_type lfm3_audio; vLLM 0.34 transformers_utils/configs/lfm3_audio.py Lfm3AudioConfig,
  model_executor/models/lfm3_audio.py): the text model under `lfm` (the hub checkpoints' training export) before
  `text_config` (the transformers-native export), read as vLLM's Lfm3Config whatever its model_type
  (Lfm3Config(**text_config); neither key: Lfm3Config()), built as Lfm3ForCausalLM; the audio encoder is an LFM2
  stack run with use_cache=False under a causal sliding-window mask; the speech output head is not built.
- Ming V3 ASR (ming_v3_asr; vLLM 0.34 configs/ming_v3_asr.py MingV3ASRConfig, ming_v3_asr.py): text_config read as
  BailingMoeV3TextConfig whatever its model_type (absent: that class's defaults), built as BailingMoeV3ForCausalLM
  (Ling 3.0: Kimi Delta Attention and MLA layers); the Whisper-style encoder keeps no cache.
- Nemotron-3.5-Transcribe (nemo_speechlm; vLLM 0.34 configs/nemotron3_5_transcribe.py Nemotron3_5TranscribeConfig,
  nemotron3_5_transcribe.py; transformers 5.25 models/nemotron3_5_transcribe): a NemotronH decoder under
  `llm_config` (the released NeMo checkpoint, as vLLM reads it) or `text_config` (transformers' layout); the
  Parallel Expert Encoder's speaker cache and FIFO live only while one clip is encoded
  (nemotron3_5_transcribe_audio.py), outside the KV pool.
- OmniASR-LLM (omniasr; transformers 5.25 OmniASRConfig, modeling_omniasr.py OmniASRModel): a wav2vec2-style
  encoder whose projected frames replace audio placeholder tokens of a Llama decoder (text_config by AutoConfig,
  llama by default); vLLM 0.34 does not serve it.
- Pocket TTS and Gradium Phonon TTS (pocket_tts, gradium_phonon_tts; transformers 5.25): a causal transformer
  backbone over one stream of text tokens, voice-prompt frames and audio latents (frame_rate 12.5 a second), K/V
  of num_key_value_heads x head_dim on every layer (DynamicCache); the flow head that samples each latent is an MLP
  and caches nothing; the audio codec decodes the latents afterwards. No engine kvplan models serves them.
"""

from __future__ import annotations

from ..errors import ConfigError
from .vl_wrappers import text_type_is_text

# vLLM 0.34 transformers_utils/configs/lfm3.py Lfm3Config.__init__ defaults (transformers 5.25's Lfm3Config gives the
# same), which Lfm3AudioConfig builds its text model from: merged under a sparse `lfm` / text_config (the training
# export writes only {"model_type": "lfm3", "dtype": ...}: vLLM 0.34 tests/models/multimodal/processing/
# test_lfm3_audio.py TRAINING_EXPORT) or used alone when the config has neither
LFM3_TEXT_DEFAULTS = {
    "vocab_size": 128_000, "hidden_size": 2048, "intermediate_size": 7680, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 4, "max_position_embeddings": 128_000, "head_dim": 128,
    "sliding_window": 256, "conv_L_cache": 7, "tie_word_embeddings": True}

# transformers 5.25 PocketTTSConfig / GradiumPhononTTSConfig defaults (num_key_value_heads None -> the heads and
# head_dim None -> hidden_size / heads, both set in __post_init__)
POCKET_TTS_DEFAULTS = {"vocab_size": 4004, "hidden_size": 1024, "num_hidden_layers": 6, "num_attention_heads": 16,
                       "intermediate_size": 4096, "max_position_embeddings": 8192}
GRADIUM_PHONON_TTS_DEFAULTS = {"vocab_size": 4001, "hidden_size": 768, "num_hidden_layers": 6,
                               "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 8192}

NEMOTRON_TRANSCRIBE = "Nemotron3_5TranscribeForConditionalGeneration"
# vLLM 0.34 configs/nemotron3_5_transcribe.py SPEECHLM_EMBED_EXTRA_ROWS: rows appended to an llm_config's vocabulary
SPEECHLM_EMBED_EXTRA_ROWS = 10


def lfm3_audio_text(raw: dict, source: str) -> str:
    """LFM3-Audio's text model is always an Lfm3Config (Lfm3AudioConfig.__init__: `lfm` beats text_config); an
    explicit `lfm: null` would make vLLM build Lfm3Config's defaults whatever text_config says: refused."""
    if "lfm" in raw and raw["lfm"] is None and raw.get("text_config") is not None:
        raise ConfigError(f"{source}: 'lfm' is null beside a text_config: Lfm3AudioConfig pops 'lfm' before "
                          "text_config, so vLLM 0.34 would build Lfm3Config's defaults, not text_config "
                          "(model_type 'lfm3_audio')", "drop the null 'lfm' key")
    text_type_is_text(raw, "lfm" if raw.get("lfm") is not None else "text_config", source, "lfm3_audio")
    return "lfm3"


def ming_v3_asr_text(raw: dict, source: str) -> str:
    """Ming V3 ASR: vLLM 0.34 builds BailingMoeV3ForCausalLM on text_config whatever architectures it names
    (ming_v3_asr.py); kvplan's bailing_hybrid record picks Ling 2.5's lightning layers for a text_config naming
    BailingMoeV2_5ForCausalLM, so such a file is refused rather than read as the wrong model."""
    text_type_is_text(raw, "text_config", source, "ming_v3_asr")
    nested = raw.get("text_config")
    names = nested.get("architectures") if isinstance(nested, dict) else None
    if isinstance(names, list) and names and names[0] != "BailingMoeV3ForCausalLM":
        raise ConfigError(f"{source}: text_config names architectures {names[:2]!r}, but vLLM 0.34's "
                          "MingV3ASRForConditionalGeneration always builds BailingMoeV3ForCausalLM on it "
                          "(model_type 'ming_v3_asr')",
                          "drop text_config.architectures, or set it to [\"BailingMoeV3ForCausalLM\"]")
    return "bailing_hybrid"


def nemo_speechlm_text(raw: dict, source: str) -> str:
    """Nemotron-3.5-Transcribe (model_type nemo_speechlm, NeMo's type for all its SpeechLM checkpoints). vLLM 0.34's
    Nemotron3_5TranscribeConfig accepts only this architecture, builds the decoder from llm_config (else text_config)
    by the model_type it must declare (AutoConfig.for_model), and requires a NemotronH decoder. Without either key
    vLLM builds NemotronHConfig's defaults and transformers 5.25 its own nemotron_h init_kwargs: refused, as for the
    other wrappers whose default text model is not in the file."""
    names = raw.get("architectures")
    if isinstance(names, list) and names and names != [NEMOTRON_TRANSCRIBE]:
        raise ConfigError(f"{source}: a NeMo SpeechLM config naming {names[:2]!r}: vLLM 0.34 serves only "
                          f"{NEMOTRON_TRANSCRIBE} under model_type 'nemo_speechlm' "
                          "(transformers_utils/configs/nemotron3_5_transcribe.py)",
                          "other NeMo SpeechLM checkpoints need the NeMo Speech vLLM plugin, which kvplan does not "
                          "model")
    key = "llm_config" if raw.get("llm_config") is not None else "text_config"
    nested = raw.get(key)
    if nested is None:
        raise ConfigError(f"{source}: model_type 'nemo_speechlm' keeps its decoder under 'llm_config' (the NeMo "
                          "checkpoint) or 'text_config' (transformers' layout), which the config lacks (vLLM 0.34 "
                          "would build NemotronHConfig's defaults, transformers 5.25 its own)",
                          "add llm_config (the decoder's config) to the config")
    if not isinstance(nested, dict):
        return "nemotron_h"  # build.py names the bad type
    text_type = nested.get("model_type")
    if text_type != "nemotron_h":
        what = "declares no model_type" if text_type is None else f"has model_type {text_type!r}"
        raise ConfigError(f"{source}: {key} {what}: vLLM 0.34's Nemotron3_5TranscribeConfig builds the decoder by the "
                          "model_type it declares and requires a NemotronH decoder (model_type 'nemo_speechlm')",
                          f"set {key}.model_type to 'nemotron_h'")
    return "nemotron_h"


_ENCODER_DECODER = ("an encoder-decoder model: its decoder cross-attends to the encoded audio, a cache sized by the "
                    "input, not the generated tokens")
_CODEC = ("a neural audio codec (audio to discrete codes and back), not a language model: whatever it keeps while "
          "streaming (conv padding, Mimi-style sliding-window K/V) is sized by audio frames, and no engine serves it "
          "with a KV cache")

# model_type -> why kvplan refuses it (vLLM 0.34 model_executor/models/*.py, transformers 5.25 models/*)
SPEECH_REFUSED_V034 = {
    "canary": (f"NVIDIA Canary, {_ENCODER_DECODER} (transformers CanaryConfig: a FastConformer encoder and a "
               "Transformer decoder; vLLM 0.34 canary.py CanaryDecoderLayer keeps self-attention K/V and "
               "cross-attention K/V over the encoder's frames, AttentionType.ENCODER_DECODER)"),
    "canary_decoder": "Canary's decoder config (a sub-config of canary, which is an encoder-decoder model)",
    "cohere_asr": (f"Cohere ASR, {_ENCODER_DECODER} (vLLM 0.34 cohere_asr.py CohereASRCrossAttention, served as an "
                   "encoder-decoder model like Whisper)"),
    "omniasr_ctc": ("OmniASR-CTC (transformers 5.25 OmniASRForCTC): a wav2vec2-style encoder with a CTC head that "
                    "labels every audio frame in one pass; there is no decoder and no KV cache"),
    "omniasr_audio": ("OmniASR's audio encoder (OmniASRAudioConfig, a wav2vec2-style bidirectional encoder): no "
                      "decoder, no KV cache; plan the omniasr model whose text_config is its decoder"),
    "nemotron3_5_transcribe_audio": ("Nemotron-3.5-Transcribe's audio tower config (ASR encoder and Sortformer "
                                     "speaker encoder): encoders run once per clip, no KV cache; plan the "
                                     "nemo_speechlm model"),
    "nemotron3_5_transcribe_asr_audio": ("Nemotron-3.5-Transcribe's ASR encoder config (a bidirectional "
                                         "transformer over stacked mel frames): no KV cache; plan the nemo_speechlm "
                                         "model"),
    "nemotron3_5_transcribe_word_timestamp": ("Nemotron-3.5-Transcribe's word-timestamp head (a small encoder and "
                                              "a CTC classifier over the ASR encoder's frames): no KV cache; vLLM "
                                              "0.34 does not load it"),
    "jev": ("JEV, a decision head (transformers 5.25 JevForDecision): one forward pass with use_cache=False that "
            "scores single-token labels at marked positions; nothing is generated, so there is no KV cache to plan "
            "(plan its text_config's model to generate with it)"),
    "pi05": ("PI0.5, a vision-language-action model: a PaliGemma prefix cache that a Gemma action expert attends to "
             "over num_inference_steps flow-matching steps to emit a chunk of actions, not generated tokens "
             "(transformers 5.25 modeling_pi05.py); vLLM 0.34 does not serve it"),
    "ultravbert": ("UltraVBERT, a bidirectional vision-text encoder (an ultrabert text encoder with a SigLIP tower): "
                   "vLLM 0.34 serves its checkpoints as a retrieval model (colultravbert.py "
                   "ColUltraVBertForRetrieval, EncoderOnlyAttention), which keeps no KV cache (its text tower, "
                   "ultrabert, is refused in configs/vllm_own.py)"),
    "pocket_tts_audio_tokenizer": f"Pocket TTS's audio tokenizer, {_CODEC}",
    "pocket_tts_audio_tokenizer_encoder": f"Pocket TTS's audio tokenizer encoder, {_CODEC}",
    "pocket_tts_audio_tokenizer_decoder": f"Pocket TTS's audio tokenizer decoder, {_CODEC}",
    "wavtokenizer": f"WavTokenizer, {_CODEC}",
    "wavtokenizer_encoder": f"WavTokenizer's encoder, {_CODEC}",
    "mimi": f"Mimi, {_CODEC}",
    "mimi_encoder": f"Mimi's encoder, {_CODEC}",
    "mimi_decoder": f"Mimi's decoder, {_CODEC}",
}

_PART = "not a decoder with a KV cache"
# audio sub-configs and parts that kvplan used to read as guessed decoders (transformers 5.25 models/*): each is an
# encoder run once over the audio, a codec, or a speech-output part no engine kvplan models builds
AUDIO_PARTS_REFUSED = {
    **{name: f"{what}'s audio encoder config: it runs once over the audio when the prompt is embedded, {_PART}; "
             f"plan {whole}"
       for name, what, whole in (
           ("audioflamingo3_encoder", "Audio Flamingo 3 / Music Flamingo", "audioflamingo3 or musicflamingo"),
           ("fun_asr_nano_encoder", "Fun-ASR-Nano", "fun_asr_nano"),
           ("glmasr_encoder", "GLM-ASR", "glmasr"),
           ("voxtral_encoder", "Voxtral", "voxtral"),
           ("moss_transcribe_diarize_audio", "MOSS-Transcribe-Diarize", "moss_transcribe_diarize"),
           ("nemotron3_diarization_audio", "Nemotron 3 Diarization (a Sortformer speaker model)",
            "the model it belongs to"),
           ("pe_audio_encoder", "Perception Encoder Audio", "the model it belongs to"),
           ("pe_audio_video_encoder", "Perception Encoder Audio-Video", "the model it belongs to"))},
    "voxtral_realtime_encoder": ("Voxtral Realtime's causal audio encoder config: its sliding-window K/V sits in "
                                 "vLLM's pool beside the decoder's, which kvplan does not size (voxtral_realtime is "
                                 "refused)"),
    "audio-spectrogram-transformer": f"the Audio Spectrogram Transformer, an audio classifier encoder, {_PART}",
    "clvp_encoder": f"CLVP's text / speech encoder (a CLIP-style scorer of Tortoise TTS), {_PART}",
    "neucodec": f"NeuCodec, {_CODEC}",
    "xcodec2": f"X-Codec 2, {_CODEC}",
    "qwen2_5_omni_dit": ("Qwen2.5-Omni's token2wav diffusion transformer (codes to mel frames), not a decoder LLM; "
                         "vLLM does not build it: plan qwen2_5_omni, whose thinker is read"),
    "qwen3_omni_moe_talker_text": ("Qwen3-Omni's talker (the speech-output decoder), which vLLM does not build: plan "
                                   "qwen3_omni_moe, whose thinker is read"),
    "qwen3_omni_moe_talker_code_predictor": ("Qwen3-Omni's talker code predictor (speech output), which vLLM does not "
                                             "build: plan qwen3_omni_moe, whose thinker is read"),
    "csm": ("Sesame CSM (transformers CsmConfig): every generated audio frame runs a depth decoder over the "
            "codebooks with its own cache beside the backbone's, a second cache kvplan does not size; vLLM does not "
            "serve it"),
    "csm_depth_decoder_model": "CSM's depth decoder config (a sub-config of csm, which is refused)",
    "moshi_depth": "Moshi's depth decoder config (a sub-config of moshi, which is refused)",
    "dia": (f"Dia, a text-to-speech {_ENCODER_DECODER} (DiaConfig is_encoder_decoder); vLLM does not serve it"),
    "dia_encoder": "Dia's encoder config (Dia is an encoder-decoder model)",
    "dia_decoder": "Dia's decoder config (it cross-attends to Dia's encoder: an encoder-decoder model)",
    "moonshine_streaming": (f"Moonshine Streaming, {_ENCODER_DECODER} (MoonshineStreamingConfig "
                            "is_encoder_decoder)"),
}

