"""Family records of multimodal wrappers (the text model nested under text_config) and of the text models of
image-text wrappers, and the audio/speech wrappers new in vLLM 0.34 (kvplan/configs/families.py joins them)."""

from __future__ import annotations

from . import kinds as K
from . import bailing, block_sparse, params, vl_wrappers
from . import params_decoder, params_generic, params_moe_more, params_ssm
from .attention import (explicit_head_dim, gqa_from_hidden)
from .family import Family
from . import speech_wrappers
from . import params_muse, params_step  # Muse Spark's and Step-3.5's counters
from .hybrid import rg_lru_state
from .markers import (from_max_window_layers, gemma4_layer_dims, gemma4_kinds, last_of_four_full, llama4_kinds, pattern_default,
                      per_layer_config_dims, step3p5_kinds)
from .step3p5_mtp import step3p5_mtp
from .family_common import (ATTN, FULL_ONLY)


ROWS: list[Family] = [
    # -- multimodal wrappers: the text model is nested under text_config
    Family(("gemma4",), text="gemma4_text", rules=("text model in text_config",)),
    Family(("gemma4_text",), kinds=ATTN, derive=pattern_default(6), refine=gemma4_kinds, per_layer=gemma4_layer_dims,
           params=params.by_type,
           rules=("5 sliding : 1 full, last layer always full; use_bidirectional_attention 'vision' (image "
                  "tokens only) keeps the text cache causal, 'all' is refused; full layers use global_head_dim (and "
                  "num_global_key_value_heads with attention_k_eq_v) or per_layer_config; the last "
                  "num_kv_shared_layers reuse earlier layers' caches",)),
    Family(("gemma4_unified",), text="gemma4_unified_text", rules=("text model in text_config",)),
    Family(("gemma4_unified_text",), kinds=ATTN, derive=pattern_default(6), refine=gemma4_kinds,
           per_layer=gemma4_layer_dims, params=params.by_type, defaults={"sliding_window": 1024},
           rules=("as gemma4_text (5 sliding : 1 full, last layer full, global_head_dim on full layers, shared "
                  "last layers), sliding_window 1024 by default; use_bidirectional_attention 'vision' (the "
                  "default) leaves the text cache causal, 'all' is refused",)),
    Family(("step3p7",), text="step3p5", rules=("text model in text_config (step3p5 by default)",)),
    # num_attention_groups: the hub configs' name, which Step3p7TextConfig's attribute_map reads as num_key_value_heads
    Family(("step3p5",), kinds=ATTN, derive=step3p5_kinds, per_layer=per_layer_config_dims,
           trailing="num_nextn_predict_layers", params=params_step.step3p5, mtp=step3p5_mtp,
           defaults={"num_key_value_heads": 8, "head_dim": 128},
           aliases={"num_key_value_heads": ("num_attention_groups",)},
           rules=("layer_types (legacy files: trailing num_nextn_predict_layers MTP entries dropped; absent: all "
                  "full); K/V heads num_key_value_heads (hub configs: num_attention_groups); per_layer_config may "
                  "change a layer's KV heads or head_dim (sliding layers usually only their query heads); "
                  "lightning-index sparse layers are refused",)),
    Family(("minimax_m3_vl",), text="minimax_m3_vl_text", rules=("text model in text_config",)),
    # minimax_m3_text: vLLM's own MiniMaxM3TextConfig (transformers_utils/configs/minimax_m3.py, 0.24-0.29), the
    # flat text config 'minimax_m3' checkpoints carry: the same fields (sparse_attention_config, moe_layer_freq,
    # dense_intermediate_size ...)
    Family(("minimax_m3_vl_text", "minimax_m3_text", "minimax_m3"), kinds=frozenset({K.FULL, K.BLOCK_SPARSE}),
           derive=block_sparse.minimax_m3_kinds,
           refine=block_sparse.check_index_values, params=params.by_type,
           defaults={"num_key_value_heads": 4, "head_dim": 128},
           rules=("full attention (4 KV heads x 128 by default); block-sparse layers ('minimax_m3_sparse', or "
                  "sparse_attention_config.sparse_attention_freq non-zero) also cache one index key of "
                  "index_head_dim (128) per token and read the index_topk_blocks (16) best blocks of "
                  "index_block_size (128) tokens, the current block among them",)),
    Family(("recurrent_gemma",), kinds=frozenset({K.SLIDING, K.LINEAR}), state=rg_lru_state,
           markers=("block_types", "_block_types"), params=params_ssm.recurrent_gemma,
           aliases={"sliding_window": ("attention_window_size",)},
           defaults={"block_types": ["recurrent", "recurrent", "attention"], "sliding_window": 2048},
           rules=("block_types tiled over the layers: 'recurrent' RG-LRU state, 'attention' local attention "
                  "of attention_window_size tokens",)),
    Family(("gemma3",), text="gemma3_text", rules=("text model in text_config (gemma3_text defaults fill it)",)),
    Family(("gemma3n",), text="gemma3n_text", rules=("text model in text_config",)),
    Family(("llava",), text="llama", rules=("text model in text_config (llama by default)",)),
    Family(("mistral3",), text="mistral", rules=("text model in text_config (mistral by default, or ministral3)",)),
    Family(("qwen2_5_vl",), text="qwen2_5_vl_text", rules=("text model in text_config, or flat",)),
    Family(("qwen2_vl",), text="qwen2_vl_text", rules=("text model in text_config, or flat",)),
    Family(("qwen2_5_vl_text", "qwen2_vl_text"), kinds=ATTN, window_gate="use_sliding_window",
           derive=from_max_window_layers, dims=gqa_from_hidden, params=params_generic.attention_decoder,
           defaults={"max_window_layers": 80},
           rules=("qwen2 window rules (max_window_layers 80 by default); width hidden_size / heads (a head_dim "
                  "key is not read)",)),
    # -- text models of image-text wrappers: full attention on every layer; the attention reads no window
    Family(("glm4v",), text="glm4v_text", rules=("text model in text_config (glm4v_text by default)",)),
    Family(("glm46v", "glmga"), text="glm4v_text", rules=("text model in text_config (glm4v_text by default)",)),
    # GLM-Image (transformers 5.25 models/glm_image; SGLang 0.5.23 glm_image_vl.py GlmImageForConditionalGeneration
    # serves it, vLLM 0.34 registers no GLM-Image class): the generator is a GLM-4-style decoder whose attention
    # reads head_dim when the config has it (getattr fallback hidden_size / heads), unlike glm4v_text
    Family(("glm_image",), text="glm_image_text",
           rules=("GLM-Image: the autoregressive generator in text_config (glm_image_text by default) caches; the "
                  "vision encoder and VQ tokenizer run once over an input image, whose tokens are prompt tokens",)),
    Family(("glm_image_text",), kinds=FULL_ONLY, defaults={"num_key_value_heads": 2}, params=params.by_type,
           rules=("full attention on every layer (GlmImageTextAttention, SGLang's RadixAttention without a "
                  "window): K/V of num_key_value_heads (2 by default) x head_dim, else hidden_size / heads; "
                  "parameters: the text model and its lm_head of vision_vocab_size rows (vision encoder and "
                  "VQ-VAE not counted)",)),
    Family(("glm4v_text",), kinds=FULL_ONLY, dims=gqa_from_hidden, defaults={"num_key_value_heads": 2},
           params=params_generic.attention_decoder,
           rules=("full attention; num_key_value_heads (2 by default) heads of hidden_size / heads (a head_dim key "
                  "is not read)",)),
    *(Family((name,), text=f"{name}_text", rules=(f"text model in text_config ({name}_text by default)",))
      for name in ("glm4v_moe", "glm_ocr", "ernie4_5_vl_moe", "granite4_vision", "granite_docling", "paddleocr_vl",
                   "hunyuan_vl")),
    # params.by_type: ERNIE-4.5-VL's text and vision experts (params_moe.ernie4_5_vl_moe_text), the others
    # params_generic.attention_decoder
    *(Family((name,), kinds=FULL_ONLY, defaults=defaults, params=params.by_type,
             rules=(f"full attention; num_key_value_heads ({kv} by default) heads of head_dim "
                    f"({dim} by default)",))
      for name, defaults, kv, dim in (
          ("glm4v_moe_text", {"num_key_value_heads": 8}, "8", "hidden_size / heads"),
          ("glm_ocr_text", {"num_key_value_heads": 8}, "8", "hidden_size / heads"),
          ("ernie4_5_vl_moe_text", {"num_key_value_heads": 4}, "4", "hidden_size / heads"),
          ("granite4_vision_text", {}, "num_attention_heads", "hidden_size / heads"),
          ("granite_docling_text", {"num_key_value_heads": 4}, "4", "hidden_size / heads"),
          ("paddleocr_vl_text", {"num_key_value_heads": 2, "head_dim": 128}, "2", "128"))),
    Family(("hunyuan_vl_text",), kinds=FULL_ONLY, dims=explicit_head_dim, params=params_generic.attention_decoder,
           rules=("full attention; num_key_value_heads (default num_attention_heads) heads of head_dim, which "
                  "the config must give (transformers' attention reads it and has no fallback)",)),
    Family(("aria",), text="aria_text", rules=("text model in text_config (aria_text by default)",)),
    *(Family((name,), text=text, rules=(f"text model in text_config ({text} by default)",)) for name, text in (
        ("molmo2", "molmo2_text"), ("cosmos3_edge", "cosmos3_edge_text"), ("deepseek_ocr2", "deepseek_ocr2_text"),
        ("muse_spark", "muse_spark_text"), ("muse_glimmer", "muse_glimmer_text"))),
    # the Qwen-Omni thinkers (transformers Qwen2_5OmniThinkerConfig, Qwen3OmniMoeThinkerConfig) build their text
    # model from text_config alone (its class's defaults without it), so a thinker without one is refused
    *(Family((name,), text=text, text_rule=vl_wrappers.nested_only("text_config", name),
             rules=(f"text model in text_config ({text} by default; absent: refused, its config class would build a "
                    "default text model)",))
      for name, text in (("qwen2_5_omni_thinker", "qwen2_5_omni_text"),
                         ("qwen3_omni_moe_thinker", "qwen3_omni_moe_text"))),
    # Qwen-Omni checkpoints: the text model two levels down (thinker_config, then its text_config); vLLM 0.33
    # serves only the thinker (registry.py maps the top-level architectures to *ThinkerForConditionalGeneration,
    # whose hf_to_vllm_mapper drops the talker. / token2wav. / code2wav. weights), so the talker keeps no cache
    *(Family((name,), text=thinker, text_key="thinker_config",
             text_rule=vl_wrappers.fixed_text(thinker, "thinker_config", name),
             rules=(f"{who}: the thinker's text model (thinker_config.text_config, read by {text}) is the one "
                    f"vLLM 0.33 caches and counts: {where}; the config class ({cls}) reads thinker_config as "
                    "the thinker whatever its model_type says, and builds a default thinker without it, so such "
                    "a file is refused; the talker"
                    f"{talker} keeps no cache (vLLM does not build it); {sglang}; parameters: the text model "
                    "and the thinker's vision and audio towers (configs/vision_towers.py); talker and codec not counted",))
      for name, thinker, text, who, where, cls, talker, sglang in (
          ("qwen2_5_omni", "qwen2_5_omni_thinker", "qwen2_5_omni_text", "Qwen2.5-Omni",
           "qwen2_5_omni_thinker.py Qwen2_5OmniThinkerForConditionalGeneration builds Qwen2ForCausalLM on it",
           "transformers Qwen2_5OmniConfig", " (and token2wav)",
           "--engine sglang is refused: SGLang 0.5.23 registers no Qwen2.5-Omni model"),
          ("qwen3_omni_moe", "qwen3_omni_moe_thinker", "qwen3_omni_moe_text", "Qwen3-Omni",
           "qwen3_omni_moe_thinker.py Qwen3OmniMoeThinkerForConditionalGeneration builds Qwen3MoeLLMForCausalLM "
           "(Qwen3MoeForCausalLM) on it", "transformers Qwen3OmniMoeConfig", " (and code2wav)",
           "SGLang 0.5.23 (qwen3_omni_moe.py, enable_talker False) builds the thinker alone too, on "
           "thinker_config.text_config as its get_hf_text_config picks it"))),
    Family(("qwen2_5_omni_text",), kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           params=params_generic.attention_decoder,  # transformers Qwen2_5OmniTextConfig's defaults
           defaults={"num_key_value_heads": 4, "max_window_layers": 28, "intermediate_size": 18944,
                     "vocab_size": 152064, "tie_word_embeddings": True},
           rules=("qwen2 window rules (max_window_layers 28 by default); 4 KV heads by default",)),
    # params.by_type: Molmo2's own counter (params_dense.molmo2_text), the others params_generic.attention_decoder
    *(Family((name,), kinds=FULL_ONLY, defaults=defaults, params=params.by_type,
             rules=(f"full attention (the attention reads no window); num_key_value_heads ({kv} by default) heads "
                    f"of head_dim ({dim} by default)",))
      for name, defaults, kv, dim in (
          ("qwen3_omni_moe_text", {"num_key_value_heads": 4}, "4", "hidden_size / heads"),
          ("molmo2_text", {"num_key_value_heads": 8, "head_dim": 128}, "8", "128"),
          ("emu3_text_model", {"num_key_value_heads": 8}, "8", "hidden_size / heads"))),
    # transformers Cosmos3EdgeTextConfig's defaults fill a sparse text_config (saved as a diff of them)
    Family(("cosmos3_edge_text",), kinds=FULL_ONLY,
           defaults={"num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 28, "num_attention_heads": 16,
                     "hidden_size": 2048, "intermediate_size": 9216, "vocab_size": 131072,
                     "max_position_embeddings": 131072},
           params=params_decoder.decoder(mlp="plain", mlp_bias=("mlp_bias", False), norm_bias=False, tied=False),
           rules=("Cosmos3-Edge's text model (vLLM 0.33 cosmos3_edge.py: Nemotron-H attention and MLP layers, "
                  "NemotronHAttention K/V of num_key_value_heads (8) x head_dim (128) on every layer, no window); "
                  "Cosmos3EdgeTextConfig's defaults fill a sparse text_config; parameters: un-gated relu2 MLP "
                  "(up and down), no attention biases, untied head by default",)),
    Family(("deepseek_ocr2_text",), kinds=FULL_ONLY, dims=gqa_from_hidden, params=params_generic.attention_decoder,
           rules=("full attention; num_key_value_heads (default num_attention_heads) heads of hidden_size / heads "
                  "(DeepseekOcr2TextConfig overwrites head_dim with it)",)),
    *(Family((name,), kinds=ATTN, derive=last_of_four_full, defaults=defaults,
             params=params_muse.muse_spark_text if name == "muse_spark_text" else params_generic.attention_decoder,
             rules=("layer_types; else full when (n - 1 - i) % 4 == 0 (every 4th counted back from the last), "
                    f"the rest sliding ({defaults['sliding_window']}); {defaults['num_key_value_heads']} KV heads of "
                    f"{defaults['head_dim']} by default",))
      for name, defaults in (
          ("muse_spark_text", {"num_key_value_heads": 16, "head_dim": 64, "sliding_window": 2048}),
          ("muse_glimmer_text", {"num_key_value_heads": 2, "head_dim": 128, "sliding_window": 2048}))),
    Family(("qwen3_vl",), text="qwen3_vl_text", rules=("text model in text_config",)),
    Family(("qwen3_vl_moe",), text="qwen3_vl_moe_text", rules=("text model in text_config",)),
    Family(("qwen3_vl_moe_text",), kinds=FULL_ONLY, params=params_generic.attention_decoder,
           rules=("full attention on every layer (the config's sliding_window is forced to None)",)),
    Family(("llava_next",), text="llama", rules=("text model in text_config (llama by default)",)),
    Family(("llava_onevision",), text="qwen2", rules=("text model in text_config (qwen2 by default)",)),
    Family(("llama4",), text="llama4_text", rules=("text model in text_config",)),
    Family(("llama4_text",), kinds=frozenset({K.FULL, K.CHUNKED}), derive=llama4_kinds,
           params=params_moe_more.llama4,
           defaults={"num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
                     "hidden_size": 5120, "attention_chunk_size": 8192},
           rules=("RoPE layers keep the current chunk of attention_chunk_size tokens; every "
                  "no_rope_layer_interval-th (NoPE) layer is full",)),
    Family(("mllama",), text="mllama_text_model", rules=("text model in text_config",)),
    Family(("mllama_text_model",), kinds=frozenset({K.FULL, K.CROSS}), dims=gqa_from_hidden,
           markers=("cross_attention_layers",), params=params.by_type,  # params_dense.mllama_text
           defaults={"cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38], "num_key_value_heads": 8},
           rules=("cross_attention_layers cache image tokens only (a constant per image, not counted); "
                  "the others are full self-attention",)),
]


# -- audio/speech models new in vLLM 0.34 and transformers 5.21-5.25 (configs/speech_wrappers.py); a wrapper's
# parameters are its decoder's only (encoders, projectors and speech heads not counted)
SPEECH_V034_ROWS: list[Family] = [
    Family(("lfm3_audio",), text="lfm3", text_key_first="lfm", text_rule=speech_wrappers.lfm3_audio_text,
           text_defaults=speech_wrappers.LFM3_TEXT_DEFAULTS,
           rules=("LFM3-Audio (vLLM 0.34 configs/lfm3_audio.py Lfm3AudioConfig, lfm3_audio.py): the text model under "
                  "'lfm' (the hub checkpoints' training export), else text_config, read as vLLM's Lfm3Config over its "
                  "defaults (24 layers, 4 KV heads of 128, sliding window 256; neither key: those alone) and built as "
                  "Lfm3ForCausalLM: lfm3's conv and attention layers; the LFM2 audio encoder runs with "
                  "use_cache=False when the audio is embedded and the speech output head is not built, so neither "
                  "caches; parameters: the text model only",)),
    Family(("ming_v3_asr",), text="bailing_hybrid", text_rule=speech_wrappers.ming_v3_asr_text,
           text_defaults=bailing.V3_VL_TEXT_DEFAULTS,
           rules=("Ming V3 ASR (vLLM 0.34 configs/ming_v3_asr.py MingV3ASRConfig, ming_v3_asr.py): text_config read as "
                  "BailingMoeV3TextConfig whatever its model_type (absent: that class's defaults, 20 layers, "
                  "layer_group_size 5) and built as BailingMoeV3ForCausalLM: Ling 3.0's rule (MLA latent where (i + 1) "
                  "% layer_group_size == 0 and on the n % layer_group_size trailing layers, Kimi Delta Attention "
                  "state elsewhere); the Whisper-style encoder runs per audio chunk and keeps no cache; a "
                  "text_config naming another architecture is refused; parameters: the text model only",)),
    Family(("nemo_speechlm",), text="nemotron_h", text_key_first="llm_config", text_rule=speech_wrappers.nemo_speechlm_text,
           rules=("Nemotron-3.5-Transcribe (vLLM 0.34 configs/nemotron3_5_transcribe.py Nemotron3_5TranscribeConfig, "
                  "nemotron3_5_transcribe.py; transformers 5.25 Nemotron3_5TranscribeConfig): the NemotronH decoder "
                  "under llm_config (the NeMo checkpoint), else text_config, read by nemotron_h's rules (Mamba-2 "
                  "states, attention K/V); the audio tower's speaker cache lives only while one clip is encoded; "
                  "configs naming another architecture, lacking both keys, or whose decoder is not nemotron_h are "
                  "refused; vLLM 0.34 loads only the NeMo layout (its audio tower reads perception and "
                  "pe_encoder_config, which transformers' audio_config does not carry); its MTP head (Nemotron3_5TranscribeMTPModel) drafts from the decoder's "
                  "num_nextn_predict_layers, its own draft class, which kvplan has not read, so --mtp is refused "
                  "(a bare nemotron_h decoder's NemotronHMTPModel is modelled); parameters: the decoder as its config gives "
                  "vocab_size (vLLM appends 10 embedding and LM-head rows to an llm_config's vocabulary, "
                  "SPEECHLM_EMBED_EXTRA_ROWS, not counted)",)),
    Family(("omniasr",), text="llama", text_rule=vl_wrappers.nested_only("text_config", "omniasr"),
           rules=("OmniASR-LLM (transformers 5.25 OmniASRConfig: text_config by AutoConfig, llama by default; "
                  "OmniASRModel builds it with AutoModel.from_config): the projected wav2vec2-style encoder frames "
                  "replace audio placeholder tokens, so the decoder's K/V is the only cache; a file without "
                  "text_config is refused (the class builds llama with its own init_kwargs); vLLM 0.34 does not "
                  "serve it; parameters: the text model only",)),
    # Audio Flamingo 3 (served by vLLM 0.34) and Music Flamingo (vLLM served it up to 0.24, registry.py): older
    # audio-text wrappers kvplan had no row for
    Family(("audioflamingo3",), text="qwen2", text_rule=vl_wrappers.fixed_text("qwen2", "text_config", "audioflamingo3"),
           rules=("Audio Flamingo 3 (transformers AudioFlamingo3Config: text_config by AutoConfig, qwen2 by default): "
                  "vLLM 0.34 audioflamingo3.py builds Qwen2ForCausalLM on text_config, the only cache (the Whisper-style "
                  "encoder keeps none); a file without text_config is refused; parameters: the text model only",)),
    Family(("musicflamingo",), text="qwen2", text_rule=vl_wrappers.fixed_text("qwen2", "text_config", "musicflamingo"),
           rules=("Music Flamingo (transformers 5.25 MusicFlamingoConfig: text_config by AutoConfig, qwen2 by default, "
                  "built with AutoModel.from_config; its rotary time embedding is applied to the audio features before the projector): the "
                  "text model's K/V is the only cache; vLLM 0.34 no longer serves it (registry.py: removed after "
                  "0.24.0); a file without text_config is refused; parameters: the text model only",)),
    Family(("pocket_tts",), kinds=FULL_ONLY, defaults=speech_wrappers.POCKET_TTS_DEFAULTS,
           rules=("Pocket TTS (transformers 5.25 PocketTTSConfig, modeling_pocket_tts.py): a causal backbone over "
                  "text tokens, voice-prompt frames and audio latents (12.5 a second of speech), K/V of "
                  "num_key_value_heads (default: the heads) x head_dim (default: hidden_size / heads) on every layer, "
                  "no window; the flow head and the codec keep no K/V; no engine kvplan models serves it; parameters "
                  "not counted",)),
    Family(("higgs_audio_v2",), kinds=FULL_ONLY, defaults={"num_key_value_heads": 8, "head_dim": 128},
           params=params.by_type,
           rules=("Higgs Audio v2 (transformers 5.25 HiggsAudioV2Config, modeling_higgs_audio_v2.py): a Llama decoder "
                  "over text tokens and audio frames (a frame's num_codebooks tokens are summed into one embedding, "
                  "one position), DualFFN layers routing audio positions to their own MLP; K/V of "
                  "num_key_value_heads (8 by default) x head_dim (128 by default; null: hidden_size / heads) on "
                  "every layer, no window (DynamicCache); no engine kvplan models serves it; parameters: both MLPs, "
                  "the audio embeddings and audio_lm_head (no text head)",)),
    Family(("gradium_phonon_tts",), kinds=FULL_ONLY, defaults=speech_wrappers.GRADIUM_PHONON_TTS_DEFAULTS,
           rules=("Gradium Phonon TTS (transformers 5.25 GradiumPhononTTSConfig, modeling_gradium_phonon_tts.py): as "
                  "Pocket TTS, a causal backbone over the voice prompt, text and audio latents (12.5 a second), K/V "
                  "of num_key_value_heads x head_dim on every layer, no window; parameters not counted",)),
]
