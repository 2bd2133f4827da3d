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
