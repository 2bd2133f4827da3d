"""Audio-text models vLLM 0.33 serves whose text model is not where the image-text wrappers keep it
(configs/vl_wrappers.py), with the defaults their config classes fill in.

- Qwen3-ASR (model_type qwen3_asr; Qwen3ASRForConditionalGeneration and Qwen3ASRRealtimeGeneration): the text
  model two levels down, thinker_config.text_config, read as vLLM 0.33's own Qwen3ASRTextConfig
  (transformers_utils/configs/qwen3_asr.py) and built as Qwen3ForCausalLM (model_executor/models/qwen3_asr.py
  Qwen3ASRForConditionalGeneration.__init__). The realtime class (qwen3_asr_realtime.py Qwen3ASRRealtimeGeneration)
  subclasses it and only cuts the audio into 5-second segments, each sent as its own prompt: no encoder cache.
- Voxtral (model_type voxtral): text_config over transformers VoxtralConfig._default_text_config_kwargs, by its
  model_type (llama when it names none); the Whisper encoder is non-causal (voxtral.py VoxtralEncoderModel builds
  WhisperEncoder unless audio_config.is_causal) and keeps no cache. A causal encoder (Voxtral Realtime,
  VoxtralRealtimeGeneration: whisper_causal.py WhisperCausalAttentionWithBlockPooling) keeps its own sliding-window
  K/V in vLLM's pool, block-pooled at one entry per block_pool_size audio frames: refused by name.
- Kimi-Audio (model_type moonshot_kimia, as moonshotai/Kimi-Audio-7B-Instruct's config.json writes it, and
  kimi_audio): saved flat, a Qwen2Config subclass (the checkpoint's remote code configuration_moonshot_kimia.py
  KimiAudioConfig) with its own defaults; vLLM 0.33 has no config class of its own for it (none in
  transformers_utils/configs: it loads the remote class), and kimi_audio.py builds Qwen2ForCausalLM on it and drops
  the MIMO (speech output) layers' weights, so only the num_hidden_layers text layers cache.
- transformers 5.20's speech-to-text wrappers (SPEECH_TEXT_WRAPPERS): Granite Speech and Granite Speech Plus (text
  model granite), VibeVoice-ASR (qwen2) and Fun-ASR-Nano (qwen3) keep their decoder in text_config, built by
  AutoConfig from its model_type or the class's default one (SubConfigSpec); only that decoder caches. Kyutai
  speech-to-text is refused by name (SPEECH_REFUSED).
"""

from __future__ import annotations

from ..errors import ConfigError

# vLLM 0.33 transformers_utils/configs/qwen3_asr.py Qwen3ASRTextConfig.__init__ defaults (the class
# Qwen3ASRThinkerConfig builds text_config as, and builds with these alone when the thinker has none)
QWEN3_ASR_TEXT_DEFAULTS = {
    "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 128000,
    "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "attention_bias": False}

# transformers VoxtralConfig._default_text_config_kwargs (models/voxtral/configuration_voxtral.py): merged under
# text_config whatever its model_type, or used alone when the config has none
VOXTRAL_TEXT_DEFAULTS = {
    "vocab_size": 131072, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 30,
    "num_key_value_heads": 8, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "head_dim": 128}

# Kimi-Audio's remote-code KimiAudioConfig(Qwen2Config).__init__ defaults (configuration_moonshot_kimia.py, as
# the Kimi-Audio repository's finetune_codes/ copy gives it, e.g. zhangshengoo/Kimi-Audio-Training); num_key_value_heads
# None -> the heads, as Qwen2Config reads it
KIMI_AUDIO_DEFAULTS = {
    "vocab_size": 163840, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "rms_norm_eps": 1e-6, "tie_word_embeddings": False}


def qwen3_asr_text(raw: dict, source: str) -> str:
    """Qwen3-ASR's thinker, read from thinker_config. Qwen3ASRConfig builds the thinker from the top-level
    audio_config / text_config when thinker_config is absent, and a default thinker when those are absent too;
    kvplan reads only the nested layout the checkpoints ship, so either such file is refused by name."""
    if "thinker_config" in raw:
        return "qwen3_asr_thinker"
    where = ("keeps text_config at the top level, which Qwen3ASRConfig moves into its thinker"
             if "text_config" in raw else
             "has no thinker_config, so Qwen3ASRConfig would build its default thinker")
    raise ConfigError(f"{source}: this Qwen3-ASR config {where}; kvplan reads the text model from "
                      "thinker_config.text_config only (model_type 'qwen3_asr')",
                      "nest the text model as thinker_config.text_config, as the Qwen3-ASR checkpoints do")


def voxtral_text(raw: dict, source: str) -> None:
    """Voxtral's text model is text_config by its model_type (build.py reads it); a causal Whisper encoder
    (VoxtralRealtimeGeneration, or audio_config.is_causal) caches its own block-pooled sliding-window K/V in
    vLLM's pool beside the decoder's, which kvplan does not size: refused by name."""
    names = raw.get("architectures")
    realtime = isinstance(names, list) and "VoxtralRealtimeGeneration" in names
    audio = raw.get("audio_config")
    if realtime or (isinstance(audio, dict) and audio.get("is_causal") is True):
        raise ConfigError(f"{source}: Voxtral Realtime (a causal Whisper encoder): vLLM 0.33 keeps the encoder's "
                          "own sliding-window K/V in the KV pool beside the decoder's, block-pooled "
                          "(whisper_causal.py WhisperCausalAttentionWithBlockPooling), which kvplan does not size "
                          "yet (model_type 'voxtral')", "this variant is not supported yet")
    return None


# transformers 5.20 speech-to-text wrappers whose decoder is text_config, read by its model_type (the config
# class's SubConfigSpec default when it names none): (model_type, default text model_type, rule). Absent, the
# class builds its default text model (with Fun-ASR-Nano's init_kwargs, which are not merged under a given
# text_config), not the top-level fields, so build.py refuses such a file (vl_wrappers.nested_only).
SPEECH_TEXT_WRAPPERS = (
    ("granite_speech", "granite",
     "Granite Speech (transformers GraniteSpeechConfig: text_config by AutoConfig, granite by default): vLLM 0.33 "
     "granite_speech.py GraniteSpeechForConditionalGeneration builds the text model with "
     "init_vllm_registered_model(hf_config=config.text_config), the only cache (the Conformer CTC encoder and "
     "Q-Former projector keep none); a file without text_config is refused; parameters: the text model only "
     "(encoder and projector not counted)"),
    ("granite_speech_plus", "granite",
     "Granite Speech Plus (transformers GraniteSpeechPlusConfig: text_config by AutoConfig, granite by default): "
     "vLLM 0.33 granite_speech_plus.py GraniteSpeechPlusForConditionalGeneration subclasses Granite Speech's class "
     "and changes only the encoder, so the text model in text_config is the only cache; a file without text_config "
     "is refused; parameters: the text model only"),
    ("vibevoice_asr", "qwen2",
     "VibeVoice-ASR (transformers VibeVoiceAsrConfig: text_config by AutoConfig, qwen2 by default; "
     "VibeVoiceAsrModel builds it with AutoModel.from_config): vLLM 0.33 serves it through its Transformers "
     "backend (registry.py: VibeVoiceAsrForConditionalGeneration -> TransformersMultiModalForCausalLM), whose "
     "cache is the text model's K/V; the acoustic and semantic tokenizer encoders keep only conv padding while "
     "encoding the audio; a file without text_config is refused; parameters: the text model only"),
    ("fun_asr_nano", "qwen3",
     "Fun-ASR-Nano in transformers' layout (FunAsrNanoConfig: text_config by AutoConfig, qwen3 by default; "
     "FunAsrNanoModel builds it with AutoModel.from_config), the only cache; vLLM 0.33 has no class for "
     "FunAsrNanoForConditionalGeneration (its funasr.py serves the flat FunASR layout, read as qwen3); a file "
     "without text_config is refused (the class would build Qwen3Config with its own init_kwargs); parameters: "
     "the text model only"),
)

# speech-to-text model_types refused by name
SPEECH_REFUSED = {
    "kyutai_speech_to_text": (
        "Kyutai speech-to-text (transformers KyutaiSpeechToTextConfig): beside the decoder's K/V (sliding_window "
        "375 by default), generation keeps the Mimi codec encoder's own streaming K/V cache (codec_config."
        "sliding_window) and its conv padding caches (modeling_kyutai_speech_to_text.py "
        "KyutaiSpeechToTextForConditionalGeneration), which kvplan does not size; vLLM 0.33 does not serve it"),
}
