"""The family table: one record per model_type kvplan reads exactly.

Each record is data: field aliases and defaults (as in transformers'
configuration_<family>.py), the layer kinds the family can have, the markers it
writes, and the rule that derives kinds when a config lists none. Every row has
a golden test (tests/test_golden_models.py, tests/test_families.py) and, where
transformers 5 can build the model, a parity test against its cache
(tests/parity/).
"""

from __future__ import annotations

from . import kinds as K
from . import (audio_wrappers, bailing, block_sparse, compressed, deepseek_moe, domyn_edge, k2_horizon, kolibri,
               looped, nemotron_nas, openpangu, params, remote_decoders, rnj1, step5, pooled_sparse, qsa,
               shared_compressed, vl_wrappers, vla_wrappers, vllm_own)
from . import (params_decoder, params_dense_special, params_generic, params_linear_mixers, params_mla_more,
               params_moe_more, params_ssm)
from .attention import (chatglm_kv_heads, decompressed_latent_dims, explicit_head_dim, falcon_kv_heads,
                        gqa_from_hidden, jetmoe_dims, mha_from_hidden, mimo_v2_flash_window, mpt_dims,
                        multi_query_kv_heads, step3_kv_heads, window_plus_one, zamba_dims)
from .family import Family
from .keye import KEYE_VL1_5_TEXT_DEFAULTS
from . import sarvam
from . import encoder_decoders
from . import encoders_refused
from . import speech_wrappers
from . import zaya_layout
from . import params_classic  # StableLM, ChatGLM, OPT counters (helper tabclassic)
from . import vllm34_text  # vLLM 0.34's new text architectures (helper vllm34reg)
from . import params_muse, params_step  # Muse Spark's and Step-3.5's counters (helper step35)
from .params_moondream import moondream3_params
from .hybrid import (gated_deltanet_state, inkling_conv_state, inkling_mtp, kda_state, lightning_state,
                     mamba1_state, mamba2_state, nemotron_h_mtp_attention, olmo_hybrid_state, rg_lru_state,
                     rwkv_state, short_conv_state, zaya_cca_state)
from .markers import (alternate_sliding_first, bailing_kinds, cohere2_moe_windows, dots3_dsa, dots3_kinds, dots3_layer_dims,
                      every_period, first_of_four_full, from_max_window_layers, gemma4_layer_dims,
                      gemma4_kinds, glm_dsa_indexers, gpt_neo_attention_types, hy_v4_indexers,
                      inkling2_kinds, inkling_dims, inkling_kinds, kimi_default, last_of_four_full,
                      lfm2_kinds, lfm3_kinds, llama4_kinds, marker_length, mimo_v2_flash_dims, mimo_v2_flash_kinds,
                      mistral_large4_indexers, mistral_large4_rope, olmo3_windows, olmo_hybrid_default,
                      pattern_default, per_layer_config_dims, qwen2_moe_windows, smollm3_windows, step3p5_kinds,
                      zamba2_default, zamba_default)
from .step3p5_mtp import step3p5_mtp

# Sarvam's original configs (transformers' attribute_map): num_experts, num_shared_experts
SARVAM_NAMES = {"n_routed_experts": ("num_experts",), "n_shared_experts": ("num_shared_experts",)}
ATTN = frozenset({K.FULL, K.SLIDING})
ATTN_CHUNKED = frozenset({K.FULL, K.SLIDING, K.CHUNKED})
MAMBA_HYBRID = frozenset({K.FULL, K.LINEAR, K.NONE})

GENERIC = Family(
    types=("(unknown)",),
    kinds=ATTN_CHUNKED,
    params=params_generic.attention_decoder,
    # vLLM's ModelConfig.get_hf_config_sliding_window: an explicit use_sliding_window false means no window
    # (MiMo, other Qwen2 derivatives that keep sliding_window beside it)
    window_gate="use_sliding_window", window_gate_default=True,
    rules=("guessed: transformers' generic rule (layer_types, else sliding_window on every layer, else full; "
           "no window when use_sliding_window is false, as vLLM reads it)",),
)

# GEMMA3_TEXT_DEFAULTS: transformers' Gemma3TextConfig defaults, for the sparse
# text_config of multimodal checkpoints.
GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
    "sliding_window": 4096, "sliding_window_pattern": 6, "tie_word_embeddings": True,
}

GPT2_NAMES = {"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",), "hidden_size": ("n_embd",),
              "max_position_embeddings": ("n_positions",), "intermediate_size": ("n_inner",)}
MAMBA2_MIXER_DEFAULTS = {"mamba_n_heads": 128, "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 256,
                         "mamba_d_conv": 4, "mamba_expand": 2}
FULL_ONLY = frozenset({K.FULL})
CROSS_ATTENTION = ("add_cross_attention", "cross-attention to an encoder")
KOSMOS_TEXT_NAMES = {"num_hidden_layers": ("layers",), "num_attention_heads": ("attention_heads",),
                     "hidden_size": ("embed_dim",), "intermediate_size": ("ffn_dim",)}


def _longcat_layers(f) -> int:
    """LongCat-Flash: every decoder layer holds two MLA sublayers, each with its own cache;
    transformers counts num_hidden_layers = 2 x num_layers."""
    if f.has("num_layers"):
        return 2 * f.int("num_layers", maximum=5_000)
    return 2 * (f.int("num_hidden_layers") // 2)


def _marker_layers(*markers: str):
    """The layer count a per-layer list or pattern implies (Nemotron-H ignores num_hidden_layers)."""
    def count(f) -> int:
        for marker in markers:
            length = marker_length(f, marker) if f.has(marker) else None
            if length:
                return f.check_int(marker, length)
        return f.int("num_hidden_layers")
    return count


# -- audio/speech models new in vLLM 0.34 and transformers 5.21-5.25 (configs/speech_wrappers.py); a wrapper's
# parameters are its decoder's only (encoders, projectors and speech heads not counted)
_SPEECH_V034_ROWS: list[Family] = [
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

_ROWS: list[Family] = [
    # -- decoders with one window for all layers or none (transformers' generic rule)
    Family(("llama",), kinds=ATTN, params=params_generic.attention_decoder,
           nested_defaults={"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
                            "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 2048},
           rules=("K/V on every layer; sliding_window (when set) on every layer; LlamaConfig defaults fill a "
                  "sparse text_config",)),
    Family(("mixtral", "phi3", "phi4_multimodal", "granite", "olmo2", "starcoder2", "internlm2",
            "phi", "gemma", "glm4_moe", "ministral", "qwen3_vl_text"),
           kinds=ATTN, params=params.by_type,
           rules=("K/V on every layer; sliding_window (when set) on every layer",)),
    # EXAONE 3.0 / 3.5's config.json writes num_layers (its remote ExaoneConfig; transformers 5.25 ExaoneConfig's
    # attribute_map reads it as num_hidden_layers)
    Family(("exaone",), kinds=ATTN, params=params.by_type, aliases={"num_hidden_layers": ("num_layers",)},
           rules=("K/V on every layer; sliding_window (when set) on every layer; num_layers is the layer count",)),
    # decoders whose cache follows transformers' generic rule exactly (layer_types, else sliding_window on
    # every layer, else full), each checked against the cache transformers builds by tests/parity
    Family(("afmoe", "apertus", "apertus1p5_text", "arcee", "aria_text", "beam", "biogpt", "bitnet", "cohere", "cwm",
            "diffllama",
            "ernie4_5", "ernie4_5_moe", "flex_olmo", "flint", "git", "gpt_neox_japanese", "granitemoe",
            "granitemoeshared", "helium", "hrm_text", "hy_v3", "hyperclovax", "iquestcoder", "jais2", "kolibri1",
            "mellum", "modernbert-decoder", "nanochat", "olmo", "olmoe", "phimoe", "seed_oss", "solar_open",
            "vaultgemma", "dots1", "hunyuan_v1_dense", "hunyuan_v1_moe", "nemotron"),
           kinds=ATTN_CHUNKED, params=params.by_type,
           rules=("transformers' generic cache rule (layer_types, else sliding_window on every layer), "
                  "checked against transformers' own cache by tests/parity",)),
    Family(("ergo",), kinds=ATTN, aliases={"sliding_window": ("local_attention_window",)},
           defaults={"sliding_window": 512},
           derive=every_period("global_attention_every_n_layers", 4, hit=K.FULL, miss=K.SLIDING, one_based=True),
           params=params_moe_more.ergo,
           rules=("layer_types; else full every global_attention_every_n_layers-th layer (4), sliding_window (512; "
                  "the checkpoints write local_attention_window) elsewhere",)),
    Family(("minicpm5_moe",), kinds=FULL_ONLY, defaults={"head_dim": 128}, params=params_moe_more.minicpm5_moe,
           rules=("K/V of num_key_value_heads x head_dim on every layer, no window",)),
    # -- Llama-like decoders vLLM 0.33 serves through remote-code configs (remote_decoders.py: heads, widths, parameters)
    Family(("minicpm",), kinds=ATTN, dims=remote_decoders.minicpm_dims, params=remote_decoders.minicpm_params,
           notes=remote_decoders.minicpm_notes,
           rules=("vLLM 0.33 minicpm.py MiniCPMAttention: K/V of num_key_value_heads (absent: num_attention_heads, "
                  "the remote MiniCPMConfig) x hidden_size / num_attention_heads (head_dim is not read) on every "
                  "layer; sliding_window, when set, on every layer (vLLM's cache_config); MiniCPM4's sparse_config "
                  "(InfLLM v2) is not read by vLLM: every token is cached",)),
    Family(("mimo",), kinds=ATTN, dims=gqa_from_hidden, window_gate="use_sliding_window", refine=remote_decoders.mimo_kinds,
           params=remote_decoders.mimo_params,
           rules=("vLLM 0.33 mimo.py (Qwen2Model): K/V of num_key_value_heads x hidden_size / num_attention_heads "
                  "on every layer; MiMoConfig (a Qwen2Config) drops sliding_window unless use_sliding_window, and "
                  "then vLLM slides every layer (max_window_layers below the layer count is refused, as vLLM "
                  "asserts); the num_nextn_predict_layers MTP layers are not loaded or cached",)),
    Family(("telechat",), kinds=ATTN, aliases=remote_decoders.TELECHAT_NAMES, kv_rule=remote_decoders.telechat_kv_heads,
           params=remote_decoders.telechat_params,
           refuse=(("num_moe_experts", "a TeleChat MoE variant: vLLM 0.33's TeleChat2ForCausalLM builds dense MLPs "
                                       "only"),),
           rules=("vLLM 0.33 telechat2.py (LlamaModel with n_layer, n_head, ffn_hidden_size): K/V of "
                  "num_key_value_heads (which the config must give: Telechat2Config keeps it None otherwise) x "
                  "head_dim (else hidden_size / n_head) on every layer; layer_types / sliding_window as Llama",)),
    Family(("orion",), kinds=ATTN, dims=gqa_from_hidden, params=remote_decoders.orion_params,
           rules=("vLLM 0.33 orion.py: K/V of num_key_value_heads x hidden_size / num_attention_heads on every "
                  "layer (sliding_window, when set, on every layer)",)),
    Family(("qwen",), kinds=FULL_ONLY, dims=remote_decoders.qwen_dims, params=remote_decoders.qwen_params,
           rules=("Qwen (1), remote QWenConfig, as SGLang 0.5.23 qwen.py serves it (vLLM until 0.23): K/V of "
                  "num_attention_heads x hidden_size / num_attention_heads on every layer, no window (kv_channels, "
                  "use_dynamic_ntk and use_logn_attn change no cache; use_cache_quantization is not read)",)),
    Family(("solar",), kinds=ATTN, params=remote_decoders.llama_params,
           rules=("vLLM 0.33 solar.py: K/V of num_key_value_heads x head_dim (else hidden_size / heads) on every "
                  "layer (sliding_window, when set, on every layer); the bskcn_* skip connections cache nothing",)),
    Family(("telechat3",), kinds=ATTN, params=remote_decoders.llama_params,
           rules=("vLLM 0.33 registers TeleChat3ForCausalLM as LlamaForCausalLM (llama.py): Llama's cache rule "
                  "(layer_types, else sliding_window on every layer); its telechat3-yarn rope is read as yarn",)),
    Family(("teleflm",), kinds=ATTN, params=remote_decoders.llama_params,
           rules=("vLLM 0.33 teleflm.py (LlamaForCausalLM): Llama's cache rule (layer_types, else sliding_window on "
                  "every layer); the muP fields scale the logits only",)),
    Family(("PanguEmbedded",), kinds=ATTN, derive=remote_decoders.pangu_embedded_kinds, window=remote_decoders.pangu_embedded_window,
           params=remote_decoders.pangu_embedded_params,
           refuse=(("param_sink_number", "openPangu's sink attention (StaticSinkAttention, K and V of different "
                                         "widths plus static sink tokens) is not read yet"),
                   ("kv_lora_rank", "openPangu's MLA attention is not read under this model_type")),
           rules=("vLLM 0.33 openpangu.py OpenPanguEmbeddedAttention: K/V of num_key_value_heads x head_dim (else "
                  "hidden_size / heads) on every layer; layer i slides over interleaved_sliding_window[i % len] (an "
                  "int: every layer; a null entry: full), else sliding_window on every layer; sink-attention and "
                  "MLA configs are refused",)),
    Family(("domynedge",), kinds=ATTN, derive=domyn_edge.kinds, window=domyn_edge.window,
           per_layer=domyn_edge.per_layer, params=domyn_edge.params, defaults=domyn_edge.DEFAULTS,
           rules=("vLLM 0.33 domyn_edge.py DomynEdgeAttention (model_type from DomynEdgeConfig): K/V of "
                  "num_key_value_heads (8) x layer i's head_dim (per_layer_config[i].head_dim, else head_sizes[i]: "
                  "256 on NoPE layers, 64 on RoPE layers by default) on every layer; layer i slides over "
                  "window_sizes[i][0] + 1 tokens when that is above 0 (1,025 by default; vLLM adds the query "
                  "itself), else full; parameters: sandwich RMSNorms, k_norm, Qwen2MLP (domyn_edge.params)",)),
    Family(("plamo3",), kinds=ATTN, derive=remote_decoders.plamo3_kinds, window=remote_decoders.plamo3_window,
           params=remote_decoders.plamo3_params, defaults=remote_decoders.PLAMO3_DEFAULTS,
           rules=("vLLM 0.33 plamo3.py: K/V of num_key_value_heads (4) x head_dim (128) on every layer; layer i full "
                  "when (i + 1) % sliding_window_pattern == 0 (8), else sliding over window_size (2048) tokens "
                  "(Plamo3Config's interleaved_sliding_window; a saved list is read as written)",)),
    Family(("step1",), kinds=ATTN, dims=remote_decoders.step1_dims, params=remote_decoders.step1_params,
           defaults={"num_attention_groups": 8}, aliases={"max_position_embeddings": ("max_seq_len",)},
           refuse=(("use_moe", "vLLM 0.33's Step1ForCausalLM builds dense MLPs only"),),
           rules=("vLLM 0.33 step1.py StepAttention: K/V of num_attention_groups (StepConfig: 8) x hidden_size / "
                  "num_attention_heads on every layer, ALiBi positions (sliding_window, when set, on every "
                  "layer)",)),
    Family(("dory",), kinds=frozenset({K.FULL, K.SLIDING, K.NONE}), derive=looped.default_kinds, layers=looped.layers,
           defaults={"head_dim": 256, "sliding_window": 1024, "num_key_value_heads": 4},
           params=params_dense_special.dory,
           rules=("layer_types (released configs interleave 'mlp' blocks); else sliding, sliding, sliding, full "
                  "repeated. The n_recurrent_layers after n_input_layers run n_recurrent_loops times: per_loop "
                  "(default) keeps a cache per loop, last_loop one cache read by every loop",)),
    Family(("kolibri1_1",), kinds=frozenset({K.SLIDING, K.INDEXED}), derive=kolibri.default_kinds,
           layers=kolibri.layers, params=params_moe_more.kolibri1_1, defaults={"sliding_window": 513, "head_dim": 128},
           rules=("layer_types; else every 5th layer indexed_attention, the rest sliding (sliding_window 513). "
                  "indexed_attention here is plain NoPE K/V of every token (no latent, no index keys), shared by "
                  "the layers kv_source_layers points at an earlier one; a step attends to index_topk + local + "
                  "sink tokens (2,184)",)),
    Family(("iquestloopcoder",), kinds=FULL_ONLY, dims=gqa_from_hidden, repeat=looped.iquest_loops,
           params=params_dense_special.iquest_loop,
           rules=("the stack runs loop_num (2) times: loop 0 keeps K/V of every token (num_key_value_heads x "
                  "hidden / heads), each later loop its own K/V over loop_window_size (64) tokens and reads loop 0's",)),
    Family(("step3_vl",), text="step3_text", rules=("Step-3: its text model in text_config",)),
    Family(("step3_text",), kinds=FULL_ONLY, kv_rule=step3_kv_heads, defaults={"head_dim": 256},
           aliases={"max_position_embeddings": ("max_position_embedding", "max_seq_len")},
           rules=("multi-matrix factorization attention: K/V of one head of head_dim (256) on every layer, as "
                  "vLLM 0.33's Step3TextForCausalLM keeps it",)),
    Family(("step5_vl",), text="step5", rules=("Step-5: its text model in text_config",)),
    Family(("step5",), kinds=frozenset({K.FULL, K.SLIDING}), derive=step5.default_kinds, layers=step5.layers,
           trailing="num_nextn_predict_layers", params=params_step.step5,
           rules=("layer_types (else even layers sliding); K/V of num_attention_groups x head_dim, sliding over "
                  "sliding_window; the full_attention layers are DSA: one 256-B FP8 region summary per 8 tokens and "
                  "a per-request ring of the open region's 7 index rows (bf16), as vLLM 0.33 keeps them; a step "
                  "reads the top sparse_config.topk regions plus the open one",)),
    Family(("nemotron-nas",), kinds=frozenset({K.FULL, K.NONE}), derive=nemotron_nas.kinds, dims=nemotron_nas.dims,
           per_layer=nemotron_nas.layer_dims, params=params_dense_special.nemotron_nas, notes=nemotron_nas.notes,
           refuse=(("layer_types", "neither the remote code nor vLLM reads it: block_configs gives each layer"),),
           rules=("block_configs, one a layer (DeciLMForCausalLM's remote code, vLLM's nemotron_nas.py): K/V of "
                  "num_attention_heads // n_heads_in_group heads x head_dim (else hidden / heads) on every "
                  "attention that is neither no_op nor replace_with_linear, nothing elsewhere; a window_length, "
                  "attention sinks or a block field block_config.py lacks are refused; --engine vllm and sglang refuse "
                  "linear replacements, which neither builds",)),
    Family(("doge",), kinds=ATTN, params=params.by_type,
           rules=("K/V of every token on every layer (sliding_window, when set, on every layer); keep_window_size "
                  "only picks which cached keys a query attends to (dynamic mask attention), it evicts nothing",)),
    Family(("smollm3",), kinds=ATTN, window_gate="use_sliding_window", derive=smollm3_windows,
           params=params_generic.attention_decoder,
           rules=("with use_sliding_window the NoPE layers (every no_rope_layer_interval-th) slide",)),
    Family(("fuyu",), text="persimmon", rules=("text model (persimmon) in text_config, or flat",)),
    # image-text wrappers: the text model in text_config is read by its own family (its model_type, or the
    # wrapper's default below); image tokens are ordinary cached tokens
    *(Family((name,), text=text, rules=(f"text model in text_config ({text} by default)",)) for name, text in (
        ("aya_vision", "cohere2"), ("cohere2_vision", "cohere2"), ("blip-2", "opt"), ("instructblip", "opt"),
        ("instructblipvideo", "opt"), ("cosmos3_omni", "qwen3_vl_text"), ("deepseek_vl", "llama"),
        ("deepseek_vl_hybrid", "llama"), ("idefics3", "llama"), ("janus", "llama"), ("llava_next_video", "llama"),
        ("perception_lm", "llama"), ("smolvlm", "llama"), ("video_llava", "llama"), ("vipllava", "llama"),
        ("fast_vlm", "qwen2"), ("internvl", "qwen2"), ("ovis2", "qwen2"), ("pp_chart2table", "qwen2"),
        ("video_llama_3", "qwen2"), ("idefics2", "mistral"), ("kimi_k25", "deepseek_v3"),
        ("lighton_ocr", "qwen3"), ("qianfan_ocr", "qwen3"), ("nemotron_h_omni", "nemotron_h"),
        ("paligemma", "gemma"), ("shieldgemma2", "gemma3_text"), ("exaone4_5", "exaone4"), ("lfm2_vl", "lfm2"),
        ("lfm3_vl", "lfm3"), ("hyperclovax_vision_v2", "hyperclovax"), ("inkling_mm_model", "inkling_text"),
        ("got_ocr2", "qwen2"), ("moss_transcribe_diarize", "qwen3"), ("emu3", "emu3_text_model"),
        ("inkling2", "inkling2_text"), ("llava_onevision1_5", "qwen3"), ("ovis2_5", "qwen3"),
        ("hy_v4_vl", "hy_v4_vl_text"), ("apertus1p5", "apertus1p5_text"),
        ("minicpm_ocr", "qwen3_5_text"), ("minicpmv4_6", "qwen3_5_text"), ("minicpmv4_7", "qwen3_5_text"))),
    # image/audio-text wrappers vLLM 0.33 serves through its own or remote-code configs (configs/vl_wrappers.py);
    # as for every wrapper, the parameters counted are the text model's: vision/audio towers and projectors are not
    Family(("kimi_vl",), text="deepseek_v2", text_rule=vl_wrappers.nested_only("text_config", "kimi_vl", "deepseek_v2"),
           rules=("Kimi-VL: text model in text_config, a DeepseekV2Config (vLLM 0.33 configs/kimi_vl.py; kimi_vl.py "
                  "builds DeepseekV2ForCausalLM): one MLA latent of kv_lora_rank + qk_rope_head_dim per token and "
                  "layer; parameters: the text model only; the weights add MoonViT and its projector "
                  "(configs/vision_towers.py)",)),
    Family(("deepseek_vl_v2",), text="deepseek_v2", text_key="language_config", text_rule=vl_wrappers.deepseek_vl2_text,
           rules=("DeepSeek-VL2: text model in language_config, a DeepseekV2Config (vLLM 0.33 configs/deepseek_vl2.py "
                  "DeepseekVLV2TextConfig): one MLA latent of kv_lora_rank + qk_rope_head_dim per token and layer; "
                  "qk_nope_head_dim and qk_rope_head_dim both 0 (DeepSeek-OCR, DeepseekOCRForCausalLM: vLLM 0.33 "
                  "deepseek_v2.py use_mha, DeepseekAttention) is read as deepseek: K/V of num_key_value_heads x "
                  "hidden_size / num_attention_heads on every layer (DeepSeek-VL2-Tiny: use_mla false, both qk dims 0, "
                  "as in DeepSeek-OCR's); kv_lora_rank null with nonzero qk dims is refused (DeepseekV2Attention "
                  "cannot build kv_a_proj_with_mqa with a null rank, so vLLM 0.33 does not load it); parameters: "
                  "the text model only (SigLIP or SAM + CLIP towers and projector not counted)",)),
    # vision-language(-action) wrappers vLLM 0.33 serves through its own config classes (configs/vla_wrappers.py)
    Family(("openvla",), text="llama", text_rule=vl_wrappers.fixed_text("llama", "text_config", "openvla"),
           rules=("OpenVLA (vLLM 0.33 configs/openvla.py OpenVLAConfig): text_config is always read as a LlamaConfig "
                  "(its model_type is not consulted; LlamaConfig's defaults fill the sparse text_config the "
                  "checkpoints ship), openvla.py builds it with init_vllm_registered_model: K/V of "
                  "num_key_value_heads (absent: num_attention_heads) x head_dim (else hidden_size / heads) on every "
                  "layer; a config without text_config is refused (the class would run LlamaConfig's defaults); "
                  "parameters: the Llama text model only (DINOv2 + SigLIP towers and projector not counted)",)),
    Family(("moondream3",), kinds=FULL_ONLY, aliases=vla_wrappers.MOONDREAM3_NAMES,
           defaults=vla_wrappers.MOONDREAM3_DEFAULTS, dims=vla_wrappers.moondream3_dims, params=moondream3_params,
           rules=("Moondream 3 (HfMoondream, Moondream3ForCausalLM; vLLM 0.33 configs/moondream3.py Moondream3Config): "
                  "the text model is config.text with Moondream's names (n_layers 24, dim 2048, n_heads 32, "
                  "n_kv_heads 32 by default); moondream3.py Moondream3Attention keeps K/V of n_kv_heads x dim / "
                  "n_heads on every layer, no window (prefix_attn only masks the image prefix bidirectionally); "
                  "parameters: the text model as moondream3.py builds it (params_moondream.py: MoE from "
                  "config.text.moe start_layer 4, n_experts 64, n_experts_per_tok 8, expert_inner_dim 1024 by "
                  "default; vision encoder and projection not counted)",)),
    Family(("alpamayo2_super",), text="qwen3_vl", text_key="vlm_config",
           text_rule=vl_wrappers.fixed_text("qwen3_vl", "vlm_config", "alpamayo2_super"),
           rules=("Alpamayo 2 Super (vLLM 0.33 configs/alpamayo2_super.py Alpamayo2SuperConfig, a Qwen3VLConfig): "
                  "vlm_config is a Qwen3-VL config whose text_config (qwen3_vl_text) is the model vLLM caches "
                  "(alpamayo2_super.py, a Qwen3VLForConditionalGeneration); the trajectory expert is not built; a "
                  "config without vlm_config is refused; parameters: the text model only (vision tower and "
                  "expert not counted)",)),
    # llm_config wrappers (remote code): no default text model (their config classes need llm_config); vLLM 0.33
    # renames llm_config to text_config (transformers_utils/config.py _CONFIG_ATTRS_MAPPING) and builds that model
    *(Family((name,), text_key="llm_config",
             rules=(f"{who}: text model in llm_config, read by its model_type's family ({texts}); vLLM 0.33 "
                    f"{where} builds it from text_config (renamed from llm_config); parameters: the text model "
                    + (f"only ({tower} not counted)" if name not in ("internvl_chat", "NVLM_D", "h2ovl_chat", "skywork_chat") else
                       f"only; the weights add {tower} (configs/vision_towers.py)"),))
      for name, who, texts, where, tower in (
          ("internvl_chat", "InternVL 1.5/2/2.5/3 (InternVLChatConfig)", "qwen2, llama, internlm2, phi3, qwen3 ...",
           "internvl.py InternVLChatModel", "InternViT and mlp1"),
          ("NVLM_D", "NVLM-D (NVLM_D_Config)", "qwen2", "nvlm_d.py NVLM_D_Model (an InternVLChatModel)",
           "InternViT and mlp1"),
          ("h2ovl_chat", "H2OVL Mississippi (H2OVLChatConfig, an InternVLChatConfig)", "llama ...",
           "h2ovl.py H2OVLChatModel (an InternVLChatModel)", "InternViT and mlp1"),
          ("skywork_chat", "Skywork-R1V (SkyworkChatConfig)", "qwen2 ...", "skyworkr1v.py SkyworkR1VChatModel",
           "InternViT and mlp1"),
          ("Llama_Nemotron_Nano_VL", "Llama Nemotron Nano VL", "llama", "nemotron_vl.py LlamaNemotronVLChatModel",
           "RADIO tower and mlp1"),
          ("NemotronH_Nano_VL_V2", "Nemotron Nano VL V2", "nemotron_h", "nano_nemotron_vl.py NemotronH_Nano_VL_V2",
           "RADIO tower and projector"),
          # registry.py maps the three Omni V3 architectures to the same NemotronH_Nano_VL_V2 class; its Parakeet
          # sound encoder (parakeet.py ProjectedParakeet) runs outside the KV pool
          *((name, f"Nemotron {size} Omni V3", "nemotron_h", "nano_nemotron_vl.py NemotronH_Nano_VL_V2",
             "RADIO tower, Parakeet sound encoder and projectors")
            for name, size in (("NemotronH_Nano_Omni_Reasoning_V3", "3 Nano"),
                               ("NemotronH_Super_Omni_Reasoning_V3", "3 Super"),
                               ("NemotronH_Omni_Reasoning_V3", "3"))),
          # vLLM's own OvisConfig (transformers_utils/configs/ovis.py) builds text_config from llm_config by its
          # model_type (AutoConfig.for_model) and ovis.py Ovis builds config.get_text_config()
          ("ovis", "Ovis 1.6/2 (vLLM 0.33 configs/ovis.py OvisConfig)", "gemma2, llama, qwen2 ...", "ovis.py Ovis",
           "visual tokenizer and its embedding table"))),
    Family(("ultravox",), text="llama", text_rule=vl_wrappers.ultravox_text,
           rules=("Ultravox: text model in text_config (llama by default), which vLLM 0.33 ultravox.py builds "
                  "(UltravoxConfig.wrapped_model_config); a text_model_id makes vLLM read that repository's config "
                  "instead, so such a file is refused with the id to plan; parameters: the text model only "
                  "(Whisper encoder and projector not counted)",)),
    Family(("minicpmv",), text="llama", text_rule=vl_wrappers.minicpmv_text,
           rules=("MiniCPM-V (remote code, saved flat): its version picks the text model vLLM 0.33 builds "
                  "(minicpmv.py): 2.0 minicpm, 2.5 and 4.0 llama, 2.6 qwen2, 4.5 qwen3; no version: 2.0 when "
                  "hidden_size 2304 and query_num 64, else 2.5; the flat fields are read by that family; "
                  "parameters: the text model only (the weights add the SigLIP tower and resampler from 2.5 on: "
                  "configs/vision_towers.py), with the text model's "
                  "modules (Qwen2's q/k/v biases for 2.6, Qwen3's q/k norms for 4.5)",)),
    Family(("phi3_v",), kinds=ATTN, params=params_generic.attention_decoder,
           rules=("Phi-3/3.5-vision (remote code, saved flat): vLLM 0.33 phi3v.py runs the text model as "
                  "LlamaForCausalLM: K/V of num_key_value_heads x head_dim (else hidden_size / heads) on every "
                  "layer; without layer_types its attention takes the model-level sliding_window "
                  "(cache_config.sliding_window, layers/attention/attention.py) on every layer; parameters: the "
                  "text model only; the weights add the CLIP tower and projection (configs/vision_towers.py)",)),
    Family(("molmo",), kinds=ATTN, dims=gqa_from_hidden,
           rules=("Molmo (remote code, saved flat): vLLM 0.33 molmo.py MolmoAttention keeps K/V of "
                  "num_key_value_heads (null or absent: num_attention_heads) x hidden_size / heads on every layer "
                  "(a model-level sliding_window, when set, on every layer); parameters not counted (kvplan has no "
                  "counter for its text model)",)),
    # more wrappers vLLM 0.33 serves (configs/vl_wrappers.py): flat ones read by the family of the text model
    # vLLM builds; nested ones by the class their config reads the nested fields as
    Family(("minicpmo",), text="qwen2", text_rule=vl_wrappers.minicpmo_text,
           rules=("MiniCPM-o (remote code, saved flat): its version picks the text model vLLM 0.33 builds "
                  "(minicpmo.py MiniCPMO.__new__): 2.6 (also when absent) qwen2, 4.5 qwen3; the flat fields are read "
                  "by that family; parameters: the text model (the weights add SigLIP, the resampler and the Whisper "
                  "encoder: configs/vision_towers.py; the TTS is not built), with the text model's modules (Qwen2's q/k/v biases for 2.6, Qwen3's q/k norms "
                  "for 4.5)",)),
    Family(("phi4mm",), kinds=ATTN, params=params_generic.attention_decoder,
           rules=("Phi-4-multimodal (remote code, saved flat): vLLM 0.33 phi4mm.py Phi4MMForCausalLM builds a "
                  "LlamaModel on the flat config: K/V of num_key_value_heads x head_dim (else hidden_size / "
                  "heads) on every layer; without layer_types its attention takes the model-level sliding_window "
                  "(cache_config.sliding_window) on every layer; parameters: the text model (the weights add the "
                  "image and audio encoders and projectors: configs/vision_towers.py; LoRA adapters not counted)",)),
    Family(("dots_ocr",), text="qwen2",
           rules=("dots.ocr (vLLM 0.33 configs/dotsocr.py DotsOCRConfig, a Qwen2Config, saved flat): dots_ocr.py "
                  "builds Qwen2ForCausalLM on the config itself, so its flat fields are read by qwen2 with "
                  "Qwen2Config's defaults; parameters: the text model only (vision tower not counted)",)),
    Family(("bagel",), text="qwen2", text_key="llm_config",
           text_rule=vl_wrappers.fixed_text("qwen2", "llm_config", "bagel"),
           rules=("BAGEL (vLLM 0.33 configs/bagel.py BagelConfig): llm_config read as a Qwen2Config whatever its "
                  "model_type says, and bagel.py builds Qwen2ForCausalLM on it; a config without llm_config would "
                  "run Qwen2Config's defaults and is refused; parameters: the text model only (SigLIP, VAE and "
                  "connectors not counted)",)),
    # Kosmos-2 / Kosmos-2.5 (transformers 5.20 Kosmos2Config / Kosmos2_5Config): the text model in text_config
    # (absent: the class's default text config, so such a file is refused, not read flat); image tokens are
    # prompt tokens of the text model. vLLM 0.33 registers neither (no native model)
    *(Family((name,), text=text, text_rule=vl_wrappers.nested_only("text_config", name),
             rules=(f"text model in text_config ({text}); a config without text_config is refused (its config "
                    "class would build the default text model); vLLM 0.33 has no native model for it (registry.py); "
                    "parameters not counted",))
      for name, text in (("kosmos-2", "kosmos_2_text_model"), ("kosmos-2.5", "kosmos_2_5_text_model"))),
    Family(("qwen2_audio",), text="qwen2", text_rule=vl_wrappers.nested_only("text_config", "qwen2_audio"),
           rules=("Qwen2-Audio (transformers Qwen2AudioConfig): text model in text_config (qwen2 when it names no "
                  "model_type; absent: Qwen2Config's defaults, so such a file is refused), which vLLM 0.33 "
                  "qwen2_audio.py builds as Qwen2ForCausalLM; parameters: the text model only (Whisper-style "
                  "encoder and projector not counted)",)),
    # audio-text wrappers whose config class fills the text model from its own defaults
    Family(("glmasr",), text="llama", text_rule=vl_wrappers.fixed_text("llama"),
           text_defaults={  # transformers GlmAsrConfig._default_text_config_kwargs (GLM-ASR-Nano-2512's decoder)
               "vocab_size": 59264, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 28,
               "num_attention_heads": 16, "num_key_value_heads": 4, "max_position_embeddings": 8192,
               "rms_norm_eps": 1e-05},
           rules=("GLM-ASR (transformers GlmAsrConfig): text_config over GlmAsrConfig's own text defaults (28 "
                  "layers, 16 heads, 4 KV heads, hidden 2048; absent: those alone), which vLLM 0.33 glmasr.py "
                  "builds as LlamaForCausalLM; parameters: the text model only (audio encoder and projector not "
                  "counted)",)),
    Family(("midashenglm",), text="qwen2", text_rule=vl_wrappers.fixed_text("qwen2"),
           text_defaults={  # transformers Qwen2_5OmniTextConfig's defaults (Qwen2.5-Omni-7B's thinker)
               "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
               "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
               "rms_norm_eps": 1e-06, "use_sliding_window": False, "sliding_window": 32768,
               "max_window_layers": 28, "tie_word_embeddings": True},
           rules=("MiDashengLM (vLLM 0.33 configs/midashenglm.py MiDashengLMConfig): text_config read as a "
                  "Qwen2_5OmniTextConfig (its defaults; absent or empty: those alone), which midashenglm.py builds "
                  "as Qwen2ForCausalLM; parameters: the text model only (Dasheng audio encoder and projector not "
                  "counted)",)),
    # audio-text models of configs/audio_wrappers.py; parameters: the text model only, as for every wrapper
    Family(("qwen3_asr",), text="qwen3_asr_thinker", text_key="thinker_config", text_rule=audio_wrappers.qwen3_asr_text,
           rules=("Qwen3-ASR (vLLM 0.33 configs/qwen3_asr.py Qwen3ASRConfig; qwen3_asr.py and qwen3_asr_realtime.py): "
                  "the thinker's text model (thinker_config.text_config, read as Qwen3ASRTextConfig) is built as "
                  "Qwen3ForCausalLM and is the only cache; the audio encoder keeps none, and the realtime class sends "
                  "each 5-second segment as its own prompt; a file without thinker_config is refused; parameters: "
                  "the text model only (audio encoder not counted)",)),
    Family(("qwen3_asr_thinker",), text="qwen3_asr_text", text_rule=vl_wrappers.fixed_text("qwen3_asr_text"),
           text_defaults=audio_wrappers.QWEN3_ASR_TEXT_DEFAULTS,
           rules=("Qwen3-ASR's thinker (Qwen3ASRThinkerConfig): text_config read as Qwen3ASRTextConfig whatever its "
                  "model_type says (absent: that class's defaults alone)",)),
    Family(("qwen3_asr_text",), kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           defaults=audio_wrappers.QWEN3_ASR_TEXT_DEFAULTS, params=params_generic.attention_decoder,
           rules=("Qwen3ASRTextConfig (defaults: 32 layers, 32 KV heads of head_dim 128) run as Qwen3ForCausalLM: "
                  "K/V of num_key_value_heads x head_dim on every layer; the class defines no window, so one counts "
                  "only where the file adds qwen3's use_sliding_window",)),
    Family(("voxtral",), text="llama", text_rule=audio_wrappers.voxtral_text,
           text_defaults=audio_wrappers.VOXTRAL_TEXT_DEFAULTS,
           rules=("Voxtral (transformers VoxtralConfig): text_config by its model_type (llama when it names none) "
                  "over VoxtralConfig's own text defaults (30 layers, 8 KV heads of 128, hidden 3072; absent: those "
                  "alone), which vLLM 0.33 voxtral.py builds; its Whisper encoder is non-causal and keeps no cache; "
                  "Voxtral Realtime (VoxtralRealtimeGeneration or audio_config.is_causal: a causal encoder with its "
                  "own block-pooled sliding-window K/V in the pool) is refused; parameters: the text model only "
                  "(Whisper encoder and adapter not counted)",)),
    Family(("kimi_audio", "moonshot_kimia"), kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           defaults=audio_wrappers.KIMI_AUDIO_DEFAULTS, params=params_generic.attention_decoder,
           rules=("Kimi-Audio (model_type moonshot_kimia, as moonshotai/Kimi-Audio-7B-Instruct's config.json writes "
                  "it by a public guide that quotes the file; kimi_audio read alike; vLLM 0.33 has no config class "
                  "of its own and loads the remote code KimiAudioConfig, a Qwen2Config saved flat; kimi_audio.py builds "
                  "Qwen2ForCausalLM on it): qwen2's rules over KimiAudioConfig's defaults (32 layers, 32 heads, KV "
                  "heads = heads); the kimia_mimo_layers speech-output layers are dropped at load, so they keep no "
                  "cache, and the Whisper encoder keeps none; parameters: the text model only (Whisper encoder, "
                  "VQ adaptor and MIMO layers not counted)",)),
    Family(("moss_audio",), text="qwen3", text_key="language_config",
           text_rule=vl_wrappers.fixed_text("qwen3", "language_config", "moss_audio"),
           rules=("MOSS-Audio (vLLM 0.33 moss_audio.py MossAudioConfig): language_config read as a Qwen3Config "
                  "whatever its model_type says and built as Qwen3ForCausalLM (deepstack audio features are added to "
                  "its first layers' hidden states, no cache of their own); a config without language_config would "
                  "run Qwen3Config's defaults and is refused; parameters: the text model only (audio encoder, "
                  "adapter and deepstack mergers not counted)",)),
    # transformers 5.20 speech-to-text wrappers (configs/audio_wrappers.py): the text model in text_config, by its
    # model_type (the class's default type when it names none); absent, the config class builds a default text
    # model, so such a file is refused; parameters: the text model only
    *(Family((name,), text=text, text_rule=vl_wrappers.nested_only("text_config", name), rules=(rule,))
      for name, text, rule in audio_wrappers.SPEECH_TEXT_WRAPPERS),
    Family(("isaac",), text="qwen3", text_rule=vl_wrappers.fixed_text("qwen3"),
           rules=("Isaac (vLLM 0.33 configs/isaac.py IsaacConfig): text_config read as a Qwen3Config whatever its "
                  "model_type says (absent: the top-level fields, as IsaacConfig builds Qwen3Config(**kwargs)); "
                  "isaac.py builds Qwen3ForCausalLM; parameters: the text model only (SigLIP2 tower not counted), "
                  "Qwen3's q/k norms included, nested or flat",)),
    # more image-text wrappers vLLM 0.33 serves (remote-code configs); parameters: the text model only
    Family(("KeyeVL1_5",), text="qwen3", text_rule=vl_wrappers.fixed_text("qwen3"), defaults=KEYE_VL1_5_TEXT_DEFAULTS,
           rules=("Keye-VL-1.5 (remote code KeyeVL1_5Config, configs/keye.py): text_config, else the top-level fields, "
                  "read as a KeyeVL1_5TextConfig (its defaults: 8 KV heads, no head_dim so hidden_size / heads, no "
                  "window unless use_sliding_window); vLLM 0.33 keye_vl1_5.py builds Qwen3ForCausalLM on it: K/V of "
                  "num_key_value_heads x head_dim on every layer; parameters: the text model only (SigLIP tower and "
                  "mlp_AR projector not counted; Qwen3's q/k norms counted, nested or flat)",)),
    Family(("opencua",), text="qwen2", text_rule=vl_wrappers.fixed_text("qwen2", "text_config", "opencua"),
           rules=("OpenCUA (remote code OpenCUAConfig): text_config read as a Qwen2Config whatever its model_type "
                  "says (absent: Qwen2Config's defaults, so such a file is refused); vLLM 0.33 opencua.py builds "
                  "Qwen2ForCausalLM on it; parameters: the text model only (Qwen2.5-VL-style vision tower with 1D "
                  "RoPE and its merger not counted)",)),
    Family(("kanana-1.5-v",), text="llama", text_rule=vl_wrappers.fixed_text("llama", "text_config", "kanana-1.5-v"),
           rules=("Kanana-1.5-V (remote code KananaVConfig): text_config read as a KananaLanguageConfig, a "
                  "LlamaConfig (its defaults fill a sparse one; absent: LlamaConfig's defaults alone, so such a file "
                  "is refused); vLLM 0.33 kanana_v.py builds LlamaForCausalLM on it; parameters: the text model only "
                  "(Qwen2-VL vision encoder and C-Abstractor projector not counted)",)),
    Family(("step_robotics",), text="qwen3", text_rule=vl_wrappers.fixed_text("qwen3", "text_config", "step_robotics"),
           rules=("Step3-VL-10B (remote code StepRoboticsConfig): text_config read as a Qwen3Config whatever its "
                  "model_type says (absent: Qwen3Config's defaults, so such a file is refused); vLLM 0.33 step_vl.py "
                  "StepVLForConditionalGeneration builds the text_config's architecture (a Qwen3Config names "
                  "Qwen3ForCausalLM); parameters: the text model only (Perception Encoder tower and projector not "
                  "counted)",)),
    Family(("phi4-siglip",), text="phi3",
           rules=("Phi-4-reasoning-vision (remote code Phi4VisionRConfig, a Phi3Config, saved flat): vLLM 0.33 "
                  "phi4siglip.py Phi4ForCausalLMV builds Phi3ForCausalLM on the config itself, so its flat fields are "
                  "read by phi3: K/V of num_key_value_heads x head_dim (else hidden_size / heads) on every layer (sliding_window, "
                  "when set, on every layer); parameters: the text model only (SigLIP2 tower and projector not "
                  "counted)",)),
    Family(("mistral",), kinds=ATTN, defaults={"sliding_window": 4096}, params=params_generic.attention_decoder,
           rules=("MistralConfig's default window is 4096 on every layer; an explicit null means none",)),
    Family(("ministral3",), kinds=ATTN, defaults={"head_dim": 128}, params=params_generic.attention_decoder,
           rules=("as mistral, with no default window",)),
    # GlmConfig's and Glm4Config's defaults (transformers 5.25 configuration_glm.py, configuration_glm4.py)
    Family(("glm", "glm4"), kinds=FULL_ONLY, params=params_generic.attention_decoder,
           defaults={"num_key_value_heads": 2, "head_dim": 128, "vocab_size": 151552, "intermediate_size": 13696,
                     "attention_bias": True},
           rules=("GQA; an absent num_key_value_heads means 2 (GlmConfig)",)),
    Family(("internlm3",), kinds=FULL_ONLY, defaults={"num_key_value_heads": 2, "head_dim": 128},
           params=params_generic.attention_decoder, rules=("an absent num_key_value_heads means 2 (InternLM3Config)",)),
    Family(("minimax_m2",), kinds=FULL_ONLY, defaults={"head_dim": 128}, markers=("attn_type_list",),
           params=params_generic.attention_decoder,
           rules=("full attention everywhere (attn_type_list must be all 1); head_dim 128 by default",)),
    # -- MHA families whose attention reads neither num_key_value_heads nor head_dim
    # gpt-sw3: transformers 5.20 configuration_auto.py maps it to GPT2Config and modeling_auto.py to GPT2LMHeadModel;
    # vLLM 0.33 serves that architecture natively (registry.py GPT2LMHeadModel -> gpt2.py)
    Family(("gpt2", "gpt-sw3"), kinds=FULL_ONLY, aliases=GPT2_NAMES, dims=mha_from_hidden, refuse=(CROSS_ATTENTION,),
           params=params_decoder.decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True,
                                         positions="max_position_embeddings"),
           rules=("MHA: n_head heads of n_embd / n_head (gpt-sw3 is GPT2Config with GPT-SW3's tokenizer)",)),
    Family(("gptj", "codegen"), kinds=FULL_ONLY, aliases=GPT2_NAMES, dims=mha_from_hidden,
           params=params_decoder.decoder(mlp="plain", mlp_bias=True, norms=1, head_bias=True, tied=False),
           rules=("MHA: n_head heads of n_embd / n_head",)),
    Family(("ctrl",), kinds=FULL_ONLY, aliases=GPT2_NAMES, dims=mha_from_hidden,
           params=params.by_type, rules=("MHA: n_head heads of n_embd / n_head",)),
    Family(("gpt_neox",), kinds=FULL_ONLY, dims=mha_from_hidden,
           # GPTNeoXAttention: query_key_value and dense biased with attention_bias (default true)
           params=params_decoder.decoder(mlp="plain", qkv_bias=("attention_bias", True),
                                         o_bias=("attention_bias", True), mlp_bias=True, tied=False),
           rules=("MHA: num_attention_heads heads of hidden_size / heads",)),
    Family(("opt",), kinds=FULL_ONLY, dims=mha_from_hidden, params=params_classic.opt,
           rules=("MHA: num_attention_heads heads of hidden_size / heads",)),
    Family(("persimmon",), kinds=FULL_ONLY, dims=mha_from_hidden, params=params_classic.persimmon,
           rules=("MHA: num_attention_heads heads of hidden_size / heads",)),
    Family(("baichuan",), kinds=FULL_ONLY, dims=mha_from_hidden, params=params_generic.attention_decoder,
           aliases={"max_position_embeddings": ("model_max_length",)},
           rules=("MHA (fused W_pack); remote code",)),
    Family(("bloom",), kinds=FULL_ONLY, dims=mha_from_hidden,
           params=params_decoder.decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True, embed_norm=True),
           aliases={"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",), "hidden_size": ("n_embed",)},
           rules=("MHA with ALiBi: no position limit",)),
    Family(("xglm",), kinds=FULL_ONLY, dims=mha_from_hidden, refuse=(CROSS_ATTENTION,),
           params=params_decoder.decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True),
           aliases={"num_hidden_layers": ("num_layers",), "num_attention_heads": ("attention_heads",),
                    "hidden_size": ("d_model",), "intermediate_size": ("ffn_dim",)},
           rules=("MHA: attention_heads heads of d_model / heads",)),
    # Kosmos-2 / Kosmos-2.5 text models (transformers 5.20 configuration_kosmos2.py Kosmos2TextConfig,
    # configuration_kosmos2_5.py Kosmos2_5TextConfig: attribute_map layers / attention_heads / embed_dim)
    Family(("kosmos_2_text_model",), kinds=FULL_ONLY, aliases=KOSMOS_TEXT_NAMES, dims=mha_from_hidden,
           refuse=(CROSS_ATTENTION,),
           defaults={"num_hidden_layers": 24, "num_attention_heads": 32, "hidden_size": 2048,
                     "intermediate_size": 8192, "vocab_size": 65037, "max_position_embeddings": 2048},
           params=params.by_type,  # params_dense.kosmos_2_text
           rules=("MHA: attention_heads heads of embed_dim / attention_heads on every layer (transformers 5.20 "
                  "modeling_kosmos2.py KosmosTextAttention; defaults 24 layers, 32 heads, embed_dim 2048); "
                  "add_cross_attention is refused; parameters: the text model and its head (the vision model and "
                  "image-to-text projection not counted)",)),
    Family(("kosmos_2_5_text_model",), kinds=FULL_ONLY, aliases=KOSMOS_TEXT_NAMES, dims=mha_from_hidden,
           defaults={"num_hidden_layers": 24, "num_attention_heads": 16, "hidden_size": 1536,
                     "intermediate_size": 6144, "vocab_size": 108481, "max_position_embeddings": 4096},
           params=params.by_type,  # params_dense.kosmos_2_text
           rules=("MHA: attention_heads heads of embed_dim / attention_heads on every layer (transformers 5.20 "
                  "modeling_kosmos2_5.py Kosmos2_5TextAttention; defaults 24 layers, 16 heads, embed_dim 1536); "
                  "parameters: the text model and its head (the vision model and image-to-text projection not "
                  "counted)",)),
    Family(("gpt_neo",), kinds=ATTN, dims=mha_from_hidden, derive=gpt_neo_attention_types,
           params=params_decoder.decoder(mlp="plain", o_bias=True, mlp_bias=True, positions="max_position_embeddings"),
           aliases={"num_hidden_layers": ("num_layers",), "num_attention_heads": ("num_heads",),
                    "sliding_window": ("window_size",)},
           defaults={"sliding_window": 256},
           rules=("attention_types: 'global' layers full, 'local' layers keep window_size tokens "
                  "(transformers' cache keeps every token on local layers too: a parity rule)",)),
    Family(("stablelm",), kinds=FULL_ONLY, dims=gqa_from_hidden, params=params_classic.stablelm,
           rules=("GQA; width hidden_size / heads (a head_dim key is not read)",)),
    Family(("mpt",), kinds=FULL_ONLY, dims=mpt_dims,
           params=params_decoder.decoder(mlp="plain", norm_bias=False, inter=(), expansion="expansion_ratio"),
           aliases={"num_hidden_layers": ("n_layers",), "num_attention_heads": ("n_heads",), "hidden_size": ("d_model",),
                    "max_position_embeddings": ("max_seq_len",)},
           rules=("KV heads attn_config.kv_n_heads when set (vLLM), else n_heads; width d_model / n_heads",)),
    Family(("dbrx",), kinds=FULL_ONLY, dims=gqa_from_hidden, params=params_moe_more.dbrx,
           aliases={"num_hidden_layers": ("n_layers",), "num_attention_heads": ("n_heads",), "hidden_size": ("d_model",),
                    "max_position_embeddings": ("max_seq_len",), "num_key_value_heads": ("attn_config.kv_n_heads",)},
           defaults={"num_key_value_heads": 1},
           rules=("KV heads attn_config.kv_n_heads (default 1); width d_model / n_heads",)),
    Family(("jetmoe",), kinds=FULL_ONLY, dims=jetmoe_dims, params=params.by_type,
           aliases={"head_dim": ("kv_channels",)},
           rules=("num_key_value_heads heads of kv_channels; query heads derived from the experts",)),
    # Qwen2Config / Qwen3Config (transformers 5.20): num_key_value_heads defaults to 32 (heads only when given as
    # null), and Qwen3Config's head_dim to 128, which vLLM 0.33's Qwen3Attention reads from the config
    Family(("qwen2",),
           kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           defaults={"num_key_value_heads": 32}, params=params_generic.attention_decoder,
           rules=("sliding_window counts only with use_sliding_window; then layers >= max_window_layers slide",)),
    Family(("qwen3",),
           kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           defaults={"num_key_value_heads": 32, "head_dim": 128}, params=params_generic.attention_decoder,
           rules=("sliding_window counts only with use_sliding_window; then layers >= max_window_layers slide; "
                  "Qwen3Config's head_dim 128 when the config leaves it out",)),
    Family(("qwen2_moe",), kinds=ATTN, window_gate="use_sliding_window", derive=qwen2_moe_windows,
           params=params_generic.attention_decoder,
           rules=("with use_sliding_window: even layers below max_window_layers slide, the rest are full",)),
    Family(("qwen3_moe",), kinds=ATTN, window_gate="use_sliding_window", params=params_generic.attention_decoder,
           rules=("with use_sliding_window every layer slides (max_window_layers is not read)",)),
    Family(("exaone4", "exaone_moe"), kinds=ATTN, markers=("sliding_window_pattern",), derive=pattern_default(4),
           params=params.by_type,
           rules=("sliding_window_pattern (int, or letters L local / G global); no window: all full",)),
    Family(("olmo3",), kinds=ATTN, derive=olmo3_windows, params=params_generic.attention_decoder,
           rules=("layer_types; by default every 4th layer full, the rest sliding",)),
    Family(("gemma2",), kinds=ATTN, derive=alternate_sliding_first, params=params_generic.attention_decoder,
           rules=("even layers slide, odd layers are full",)),
    Family(("gpt_oss",), kinds=ATTN, derive=alternate_sliding_first, params=params_generic.attention_decoder,
           defaults={"attention_bias": True},  # GptOssConfig's default
           rules=("layer_types; even layers slide (window 128), odd layers are full",)),
    Family(("gemma3_text",), kinds=ATTN, defaults=GEMMA3_TEXT_DEFAULTS, markers=("sliding_window_pattern",),
           derive=pattern_default(6), params=params_generic.attention_decoder,
           rules=("layer i is full when (i + 1) % sliding_window_pattern == 0 (default 6), else sliding",
                  "a config naming Rnj1ForCausalLM is read by vLLM 0.33's rnj1.py rule instead (BY_ARCHITECTURE: "
                  "only chunked_attention layers keep a window)")),
    # Gemma3nTextConfig's num_kv_shared_layers defaults to 15 (transformers 5.25 configuration_gemma3n.py)
    Family(("gemma3n_text",), kinds=ATTN, derive=pattern_default(5), params=params_dense_special.gemma3n,
           defaults={"num_kv_shared_layers": 15},
           rules=("full every 5th layer; the last num_kv_shared_layers reuse an earlier layer's cache",)),
    Family(("cohere2_moe",), kinds=ATTN, derive=cohere2_moe_windows, params=params.by_type,
           defaults={"head_dim": 128, "sliding_window": 4096}, window=window_plus_one,
           rules=("layer_types; else the first first_k_dense_replace layers by prefix_dense_sliding_window_pattern "
                  "(default 1: full), the rest full when (i + 1) % sliding_window_pattern == 0 (default 4); "
                  "head_dim 128 and sliding_window 4096 by default; a sliding layer keeps sliding_window + 1 tokens "
                  "(vLLM 0.33 cohere2_moe.py Cohere2MoeAttention)",)),
    *(Family((name,), kinds=ATTN, derive=first_of_four_full, params=params.by_type,  # granite_swa's sinks
             defaults={"sliding_window": 128, **kv},
             rules=("layer_types; else layer i full when i % 4 == 0, the rest sliding (sliding_window 128 by "
                    f"default); KV heads {kv_text} by default (the attention sink is a weight, not cached)",))
      for name, kv, kv_text in (("granite_swa", {"num_key_value_heads": 4}, "4"),
                                ("granitemoe_swa", {}, "= query heads"))),
    Family(("mimo_v2_flash", "mimo_v2"), kinds=ATTN, derive=mimo_v2_flash_kinds, per_layer=mimo_v2_flash_dims,
           window=mimo_v2_flash_window, params=params.by_type, aliases={"value_head_dim": ("v_head_dim",)},
           defaults={"num_key_value_heads": 4, "head_dim": 192, "value_head_dim": 128, "sliding_window": 129},
           rules=("layer_types; else layer 0 and every 6th layer full, the rest sliding; sliding layers keep "
                  "2 x num_key_value_heads; K head_dim (192) and V v_head_dim (128) wide; window "
                  "sliding_window_size + 1 when given, else sliding_window (129); mimo_v2 (MiMo-V2.x, remote code) "
                  "as vLLM 0.34 mimo_v2.py reads it: hybrid_layer_pattern (1 sliding) and swa_num_key_value_heads",)),
    Family(("laguna",), kinds=ATTN, derive=lambda f, n: [K.FULL] * n, params=params.by_type,
           defaults={"num_key_value_heads": 8, "head_dim": 128, "sliding_window": 512},
           rules=("layer_types (absent: every layer full); sliding layers keep sliding_window (512 by default); "
                  "num_attention_heads_per_layer varies the query heads only: K/V num_key_value_heads (8) x "
                  "head_dim (128) on every layer",)),
    Family(("cohere2",), kinds=ATTN, markers=("sliding_window_pattern",), derive=pattern_default(4),
           # Cohere2Attention: q/k/v/o_proj biased with attention_bias (transformers 5.25 modeling_cohere2.py)
           params=params_decoder.decoder(norm_bias=False, norms=1, qkv_bias=("attention_bias", False),
                                         o_bias=("attention_bias", False)), window=window_plus_one,
           rules=("layer i is full when (i + 1) % sliding_window_pattern == 0; a sliding layer keeps sliding_window "
                  "+ 1 tokens (vLLM 0.33 commandr.py CohereAttention: it sees [pos - sliding_window, pos])",)),
    # Cohere Compass (North Vision): vLLM 0.34 cohere_compass.py CohereCompassForConditionalGeneration (0.30+) builds
    # its own attention, Attention(per_layer_sliding_window=sliding_window) on 'sliding_attention' layers: no +1 as
    # commandr.py's; transformers 5.25 CohereCompassTextConfig.__post_init__ fills layer_types with full_attention
    # (its sliding_window_pattern branch never runs) and sets head_dim = hidden_size // heads whatever the file says
    Family(("cohere_compass",), text="cohere_compass_text",
           rules=("Cohere Compass: the text model in text_config (cohere_compass_text by default); the vision tower "
                  "and its deepstack features keep no cache",)),
    Family(("cohere_compass_text",), kinds=ATTN, derive=lambda f, n: [K.FULL] * n, dims=gqa_from_hidden,
           params=params_decoder.decoder(qkv_bias=("attention_bias", False), o_bias=("attention_bias", False),
                                         norm_bias=False, norms=1),
           rules=("layer_types (absent: every layer full, sliding_window_pattern is not read); a sliding layer "
                  "keeps sliding_window tokens (4096 by default); K/V of num_key_value_heads (default: the heads) x "
                  "hidden_size / heads (a head_dim key is overwritten); parameters: the text model with its LM "
                  "head tied, as vLLM 0.34 builds it (CohereCompassForCausalLM asserts tie_word_embeddings)",)),
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
    # -- other KV-head rules
    Family(("falcon",), kinds=FULL_ONLY, kv_rule=falcon_kv_heads, params=params.by_type,
           aliases={"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",)},
           rules=("KV heads: num_kv_heads only with new_decoder_architecture; multi_query means 1",)),
    Family(("gpt_bigcode",), kinds=FULL_ONLY, kv_rule=multi_query_kv_heads, params=params_decoder.bigcode,
           aliases={"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",), "hidden_size": ("n_embd",),
                    "max_position_embeddings": ("n_positions",), "intermediate_size": ("n_inner",)},
           rules=("multi_query (default true): one KV head",)),
    Family(("chatglm",), kinds=FULL_ONLY, kv_rule=chatglm_kv_heads, params=params_classic.chatglm,
           refuse=(("pre_seq_len", "P-tuning prefix tokens on every layer"),),
           aliases={"num_hidden_layers": ("num_layers",), "head_dim": ("kv_channels",),
                    "intermediate_size": ("ffn_hidden_size",), "vocab_size": ("padded_vocab_size",),
                    "max_position_embeddings": ("seq_length",)},
           rules=("KV heads = multi_query_group_num when multi_query_attention; head width kv_channels",)),
    Family(("phi3small",), kinds=FULL_ONLY, params=params_classic.phi3small,
           aliases={"intermediate_size": ("ff_intermediate_size",), "rope_theta": ("rope_embedding_base",)},
           rules=("Phi-3-small (remote code; SGLang 0.5.23 phi3_small.py): RadixAttention on every layer, the "
                  "blocksparse ones too: K/V of num_key_value_heads x hidden_size / heads on every layer",)),
    # -- latent attention (MLA)
    Family(("deepseek_v2", "deepseek_v3", "kimi_k2", "mistral4"), kinds=FULL_ONLY, attention="latent",
           params=params_generic.latent, rules=("one latent of kv_lora_rank + qk_rope_head_dim per token and layer",)),
    Family(("deepseek",), kinds=ATTN, dims=gqa_from_hidden, params=deepseek_moe.params,
           refuse=(("rswa_window", "vLLM 0.33's DeepseekAttention then builds RSWAAttention, which kvplan does not "
                                   "size"),),
           rules=("vLLM 0.33 deepseek_v2.py DeepseekAttention (DeepSeek-MoE, model_type deepseek: no MLA): K/V of "
                  "num_key_value_heads x hidden_size / num_attention_heads on every layer",)),
    Family(("pangu_ultra_moe",), kinds=FULL_ONLY, attention="latent", refine=openpangu.ultra_kinds,
           params=openpangu.ultra_params,
           rules=("vLLM 0.33 openpangu.py OpenPanguMLAAttention (PanguUltraMoEForCausalLM): one latent of "
                  "kv_lora_rank + qk_rope_head_dim per token and layer (MLAAttentionSpec), no window; a config "
                  "without kv_lora_rank / qk_nope_head_dim / qk_rope_head_dim / v_head_dim is refused (vLLM "
                  "would build sink or plain attention instead)",)),
    Family(("sarvam_mla",), kinds=FULL_ONLY, attention="latent", params=params_generic.latent, aliases=SARVAM_NAMES,
           rules=("DeepSeek-V3's MLA (transformers runs it as DeepseekV3ForCausalLM): one latent of kv_lora_rank + "
                  "qk_rope_head_dim per token and layer; the original configs' num_experts / num_shared_experts "
                  "are read as n_routed_experts / n_shared_experts",)),
    Family(("param2moe",), kinds=ATTN, params=params_generic.attention_decoder, aliases=SARVAM_NAMES,
           rules=("GLM-4-MoE's model (GQA K/V on every layer); Sarvam's original num_experts / num_shared_experts "
                  "are read as n_routed_experts / n_shared_experts",)),
    Family(("sarvam_moe",), kinds=FULL_ONLY, dims=sarvam.dims, params=bailing.moe_params, defaults=sarvam.DEFAULTS,
           aliases=sarvam.NAMES,
           rules=("vLLM 0.33 sarvam.py SarvamMoEForCausalLM is bailing_moe.py's BailingMoeForCausalLM: K/V of "
                  "num_key_value_heads x head_dim on every layer (BailingAttention); defaults from the checkpoint's "
                  "remote SarvamMoEConfig (sarvamai/mlx-lm configuration_sarvam_moe.py), num_attention_heads and "
                  "head_dim required (transformers' later SarvamMoeConfig defaults them differently); parameters "
                  "as BailingMoeForCausalLM builds them: fused query_key_value, query / key norms (LayerNorm with "
                  "a bias unless use_rmsnorm), the router's expert_bias, one shared expert of moe_intermediate_size "
                  "x num_shared_experts",)),
    Family(("youtu", "axk1"), kinds=FULL_ONLY, attention="latent", params=params.by_type,
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64},
           rules=("one latent of kv_lora_rank (512) + qk_rope_head_dim (64) per token and layer",)),
    Family(("deepseek_v32",), kinds=frozenset({K.INDEXED}), attention="latent", params=params_generic.latent,
           derive=lambda f, n: [K.INDEXED] * n,
           rules=("MLA latent plus indexer keys (index_head_dim, fp8 + fp32 scale per 128) on every layer",)),
    Family(("deepseek_v4",), kinds=frozenset({K.SLIDING, K.CSA, K.HCA}), attention="compressed",
           markers=("compress_ratios",), derive=compressed.default_kinds, trailing="num_nextn_predict_layers",
           defaults=compressed.DEFAULTS, params=params_mla_more.deepseek_v4,
           weight_format=compressed.weight_format,
           rules=("one shared K/V head (head_dim, rope in its last qk_rope_head_dim columns) for the newest "
                  "sliding_window tokens on every layer; compressed sparse layers (compress_ratios 4) add one "
                  "entry per 4 tokens plus indexer keys (index_head_dim) per entry and read index_topk of them; "
                  "heavily compressed layers (128) add one entry per 128 tokens, all read; compressor state "
                  "float32 as vLLM keeps it; the MTP layer is not cached",)),
    Family(("deepseek_v41",), text="deepseek_v41_text", rules=("text model in text_config",)),
    Family(("deepseek_v41_text",), kinds=frozenset({K.SLIDING, K.CSA}), attention="compressed",
           derive=shared_compressed.kinds, layers=shared_compressed.layers, defaults=shared_compressed.DEFAULTS,
           params=params_mla_more.deepseek_v41, weight_format=shared_compressed.weight_format,
           notes=shared_compressed.engram_note,
           rules=("one shared K/V head (head_dim) for the newest sliding_window tokens on every layer; "
                  "compress_ratios 1 or 2: the KV sources (kv_source_layer_ids) store one entry per 1 or 2 tokens "
                  "and its index keys (index_head_dim), the later layers read the newest source's entries and "
                  "store only their window; a step reads index_topk entries, and index sources "
                  "(index_source_layer_ids) every index key of their source; ratio-2 sources keep the open group "
                  "(2 rows of kv and score, float32); the MTP layers are not cached",)),
    Family(("axk2",), kinds=frozenset({K.INDEXED}), attention="latent", params=params.by_type,
           derive=lambda f, n: [K.INDEXED] * n,
           defaults={"kv_lora_rank": 128, "qk_rope_head_dim": 32, "index_head_dim": 128},
           rules=("as deepseek_v32: MLA latent (kv_lora_rank 128 + qk_rope_head_dim 32 by default) plus indexer "
                  "keys (index_head_dim 128, fp8 + fp32 scale per 128) on every layer",)),
    Family(("glm4_moe_lite",), kinds=FULL_ONLY, attention="latent", params=params.by_type,
           rules=("one latent of kv_lora_rank + qk_rope_head_dim per token and layer (head_dim is not a width)",)),
    Family(("glm_moe_dsa",), kinds=frozenset({K.INDEXED, K.FULL}), attention="latent", params=params.by_type,
           derive=lambda f, n: [K.INDEXED] * n, refine=glm_dsa_indexers,
           rules=("MLA latent on every layer; indexer keys only on layers whose indexer_types is 'full'",)),
    Family(("hy_v4", "hy_v4_vl_text"), kinds=frozenset({K.INDEXED, K.FULL}), attention="latent",
           params=params_mla_more.hy_v4,
           derive=lambda f, n: [K.INDEXED] * n, refine=hy_v4_indexers,
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": 128},
           rules=("MLA latent on every layer; indexer keys only where indexer_types is 'full' (absent: layer 0 "
                  "and every layer with (i - 1) % 4 == 0)",)),
    Family(("mistral_large4",), text="mistral_large4_text", rules=("text model in text_config",)),
    Family(("mistral_large4_text",), kinds=frozenset({K.INDEXED, K.FULL}), attention="latent", params=params.by_type,
           derive=lambda f, n: [K.INDEXED] * n, refine=mistral_large4_indexers, per_layer=mistral_large4_rope,
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": 128},
           rules=("as glm_moe_dsa: MLA latent on every layer, indexer keys where indexer_types is 'full'; NoPE "
                  "layers (no_rope_layers 0, else every 4th) cache the latent without the rope key; KV sharing "
                  "between layers (kv_source_layers) is refused",)),
    Family(("dots3_note",), text="dots3_note_text", rules=("text model in text_config, or flat",)),
    Family(("dots3_note_text",), kinds=frozenset({K.INDEXED, K.FULL, K.SLIDING}), attention="latent",
           params=params.by_type, derive=dots3_kinds, refine=dots3_dsa, per_layer=dots3_layer_dims,
           window=lambda f: f.opt_int("sliding_window") or f.int("sliding_window_size", default=512),
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": 128},
           rules=("MLA on every layer: DSA layers (latent + indexer keys; 'full_attention' with use_dsa) where "
                  "i < 2 or i % 4 == 1, sliding-window latents (sliding_window, else sliding_window_size 512) "
                  "elsewhere, their own kv_lora_rank / qk_rope_head_dim (per_layer_config, else swa_* fields)",)),
    Family(("longcat_flash",), kinds=FULL_ONLY, attention="latent", params=params.by_type, layers_rule=_longcat_layers,
           aliases={"intermediate_size": ("ffn_hidden_size",), "moe_intermediate_size": ("expert_ffn_hidden_size",),
                    "num_experts_per_tok": ("moe_topk",)},
           rules=("two MLA sublayers per decoder layer: 2 x num_layers latent caches",)),
    Family(("minicpm3",), kinds=FULL_ONLY, dims=decompressed_latent_dims, params=params_mla_more.minicpm3,
           rules=("vLLM decompresses the latent: K and V of heads x (qk_nope + qk_rope) per token "
                  "(transformers caches the 288-wide latent: a parity rule)",)),
    Family(("glm5_next",), text="glm5_next_text", rules=("GLM-5-Next: its text model in text_config",)),
    Family(("glm5_next_text",), kinds=frozenset({K.LINEAR, K.INDEXED}), attention="latent",
           derive=pooled_sparse.require_layer_types, layers=pooled_sparse.layers, state=kda_state,
           params=params_linear_mixers.glm5_next,
           rules=("layer_types: linear_attention = Kimi Delta Attention (conv in the model dtype, float32 "
                  "heads x head_dim^2 state, from linear_attn_config); deepseek_sparse_attention = an MLA latent "
                  "(kv_lora_rank + qk_rope_head_dim) per token, one fp8 index key (index_head_dim + an fp32 scale) "
                  "per index_kpool tokens, and a ring of the unfinished pool (kpool rows of 2 x index_head_dim, "
                  "bf16), as vLLM 0.33 keeps them; a step reads the top index_topk / kpool pools",)),
    Family(("kimi_k3",), text="kimi_linear", rules=("Kimi K3: its text model (kimi_linear) in text_config",)),
    Family(("alice_ai",), kinds=frozenset({K.FULL, K.LINEAR}), state=kda_state, aliases=k2_horizon.ALICE_NAMES,
           refine=k2_horizon.alice_kinds, params=k2_horizon.alice_params,
           rules=("vLLM 0.33 alice_ai.py: layer_types (which vLLM requires): full_attention is Qwen3NextAttention, K/V "
                  "of num_key_value_heads x head_dim; linear_attention is Kimi Delta Attention, a conv of "
                  "(linear_conv_kernel_dim - 1) x 3 x linear_num_key_heads x linear_key_head_dim and an fp32 state "
                  "of heads x head_dim x head_dim; parameters: Qwen3NextAttention, KDA, the MoE and the attention-residual "
                  "projections and norms (k2_horizon.alice_params)",)),
    Family(("k2_horizon",), kinds=ATTN, params=k2_horizon.k2_horizon_params, defaults=k2_horizon.K2_HORIZON_DEFAULTS,
           window_gate="use_sliding_window",
           rules=("vLLM 0.33 k2_horizon.py K2HorizonAttention / K2HorizonMoVAAttention: K/V of num_key_value_heads "
                  "(8) x head_dim (64: vLLM reads config.head_dim, K2HorizonConfig's default when absent) on every "
                  "layer, no per-layer window (sliding_window on every layer only with use_sliding_window, which "
                  "K2HorizonConfig.__post_init__ requires); parameters with MoVA value experts, MoE and shared "
                  "experts (k2_horizon.k2_horizon_params)",)),
    Family(("kimi_linear",), kinds=frozenset({K.FULL, K.LINEAR}), attention="latent", state=kda_state,
           markers=("linear_attn_config.full_attn_layers",), derive=kimi_default, params=params.by_type,
           aliases={"max_position_embeddings": ("model_max_length",)},
           refuse=(("dsa_config", vllm34_text.KIMI_DSA_REFUSED),),
           rules=("MLA latent on full_attn_layers (1-based), KDA state (conv + fp32 recurrent) on kda_layers",)),
    Family(("bailing_hybrid",), kinds=frozenset({K.FULL, K.LINEAR}), attention="latent", state=bailing.hybrid_state,
           derive=bailing_kinds, params=bailing.hybrid_params, layers_rule=bailing.hybrid_layer_count,
           defaults={"kv_lora_rank": 512, "qk_rope_head_dim": 64}, nested_defaults=bailing.V3_VL_TEXT_DEFAULTS,
           rules=("layer_types; else full when (i + 1) % layer_group_size == 0 (6; 5 for BailingMoeV2_5ForCausalLM), "
                  "and on Ling 3.0 (BailingMoeV3ForCausalLM) the n % layer_group_size trailing layers: MLA latent "
                  "(kv_lora_rank + qk_rope_head_dim); the rest, on Ling / Ring 2.5 (BailingMoeV2_5ForCausalLM, vLLM "
                  "0.33 bailing_moe_linear.py), lightning attention: heads x head_dim^2 in the model dtype, no conv; "
                  "else (Ling 3.0, or no architecture) Kimi Delta Attention: conv (short_conv_kernel_size - 1) x 3 x "
                  "heads x linear_head_dim, fp32 state heads x linear_head_dim^2 (linear_head_dim = head_dim, 128)",)),
    Family(("bailing_moe_v3_vl",), text="bailing_hybrid",
           rules=("Ling 3.0 VL (BailingMoeV3VLForConditionalGeneration, vLLM 0.33 bailing_moe_v3_vl.py): its text "
                  "model (BailingMoeV3TextConfig, built as BailingMoeV3ForCausalLM) in text_config",)),
    Family(("bailing_moe",), kinds=FULL_ONLY, dims=bailing.moe_dims, layers_rule=bailing.layer_count,
           params=bailing.moe_params, notes=bailing.window_note,
           rules=("Ling / Ring 1.x and 2.0 (BailingMoeForCausalLM, BailingMoeV2ForCausalLM; vLLM 0.33 "
                  "bailing_moe.py BailingAttention): K/V of num_key_value_heads x head_dim (else hidden / heads) on "
                  "every layer, no window (BailingMoeConfig's use_sliding_window is false); partial rotary and qk "
                  "norm change no cache; the MTP layers (num_nextn_predict_layers) are not built",)),
    Family(("minimax", "minimax_m1", "minimax_text_01"), kinds=frozenset({K.FULL, K.LINEAR}), state=lightning_state,
           markers=("attn_type_list",), derive=lambda f, n: [K.FULL if i % 2 == 0 else K.LINEAR for i in range(n)],
           params=params_linear_mixers.minimax,
           rules=("layer_types or attn_type_list (1 softmax, 0 lightning); lightning keeps heads x head_dim^2",)),
    # -- hybrids and recurrent models
    Family(("qwen3_next",), kinds=MAMBA_HYBRID, state=gated_deltanet_state, params=params_ssm.hybrid,
           derive=every_period("full_attention_interval", 4, hit=K.FULL, one_based=True),
           rules=("full attention when (i + 1) % full_attention_interval == 0, else Gated DeltaNet state",)),
    Family(("lara_mini",), kinds=frozenset({K.LINEAR, K.SLIDING, K.FULL}),
           state=lambda f: gated_deltanet_state(f, fp32_state=True), params=params_linear_mixers.lara_mini,
           derive=lambda f, n: [(K.LINEAR, K.SLIDING, K.LINEAR, K.FULL, K.SLIDING)[i % 5] for i in range(n)],
           defaults={"sliding_window": 512, "head_dim": 128, "tie_word_embeddings": True},
           rules=("layer_types; else linear, sliding, linear, full, sliding repeated. Linear layers keep a Gated "
                  "DeltaNet state (conv in the model dtype, the recurrent state in float32, as transformers' kernels "
                  "keep it); sliding layers sliding_window tokens (512); full layers (NoPE) every token",)),
    Family(("jamba",), kinds=frozenset({K.FULL, K.LINEAR}), state=mamba1_state, params=params_ssm.hybrid,
           derive=every_period("attn_layer_period", 8, "attn_layer_offset", 4),
           rules=("attention (always full: JambaConfig reads no sliding_window) when "
                  "i % attn_layer_period == attn_layer_offset, else Mamba state",)),
    Family(("qwen4_exp", "qwen3_8_flash_next"), text="qwen4_exp_text",
           rules=("Qwen4-Exp (Qwen3.8-Flash-Next): its text model in text_config",)),
    Family(("qwen4_exp_text", "qwen3_8_flash_next_text"), kinds=frozenset({K.LINEAR, K.FULL, K.INDEXED}),
           derive=every_period("full_attention_interval", 4, hit=K.INDEXED, one_based=True),
           layers=qsa.layers, state=gated_deltanet_state, params=params_linear_mixers.qwen4_exp,
           rules=("layer_types; else indexed (QSA) every full_attention_interval-th layer (4), Gated DeltaNet "
                  "state elsewhere. QSA: K/V of num_key_value_heads x head_dim per token, one bf16 index key of "
                  "indexer_head_dim per indexer_compress_ratio tokens and a per-request ring of the open group's "
                  "raw keys (+ MRoPE positions), as vLLM 0.33 and 0.34 keep them; a step reads the tokens of the top "
                  "indexer_budget / ratio groups plus the open group. ple_layer_ids (one-based) add the PLE's "
                  "short conv (hc_count x hidden_size channels, (ple_conv_kernel_size - 1) x ngram_size rows), "
                  "whole on every TP rank",)),
    Family(("qwen3_5", "qwen3_5_moe"), text="qwen3_5_text", rules=("text model in text_config",)),
    Family(("qwen3_5_text", "qwen3_5_moe_text"), kinds=MAMBA_HYBRID, state=gated_deltanet_state,
           params=params_linear_mixers.qwen3_5,
           derive=every_period("full_attention_interval", 4, hit=K.FULL, one_based=True),
           nested_defaults={"num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 256, "hidden_size": 4096, "linear_conv_kernel_dim": 4,
                            "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
                            "linear_num_value_heads": 32},
           rules=("layer_types; full every full_attention_interval-th layer, Gated DeltaNet state elsewhere "
                  "(its SSM dtype from mamba_ssm_dtype)",)),
    Family(("lfm2", "lfm2_moe"), kinds=frozenset({K.FULL, K.CONV}), conv=short_conv_state, derive=lfm2_kinds,
           params=params_linear_mixers.lfm2,
           rules=("layer_types 'conv' / 'full_attention', or full_attn_idxs; conv layers keep a short-conv "
                  "state of (conv_L_cache - 1) x hidden_size",)),
    Family(("lfm3",), kinds=frozenset({K.FULL, K.SLIDING, K.CONV}), conv=short_conv_state, derive=lfm3_kinds,
           params=params.by_type,
           defaults={"num_key_value_heads": 4, "head_dim": 128, "sliding_window": 256, "conv_L_cache": 7},
           rules=("layer_types 'conv' / 'sliding_attention' / 'full_attention'; absent: full when i % 4 == 2, "
                  "sliding (256) when i % 4 == 0 and i > 0, else conv; conv layers keep (conv_L_cache - 1) x "
                  "hidden_size (conv_L_cache 7 by default)",)),
    Family(("olmo_hybrid",), kinds=MAMBA_HYBRID, state=olmo_hybrid_state, derive=olmo_hybrid_default,
           params=params.by_type,
           rules=("layer_types; by default full attention where i % 4 == 3, Gated DeltaNet (fp32 state) elsewhere",)),
    Family(("zamba",), kinds=frozenset({K.LINEAR, K.HYBRID}), state=mamba1_state, dims=zamba_dims,
           markers=("layers_block_type",), derive=zamba_default, params=params_ssm.zamba,
           aliases={"head_dim": ("attention_head_dim",)},
           rules=("a Mamba state on every layer; 'hybrid' layers also keep K/V of the shared attention block "
                  "(each its own cache), heads attention_head_dim = 2 x hidden / heads wide",)),
    Family(("zamba2",), kinds=frozenset({K.LINEAR, K.HYBRID}), state=lambda f: mamba2_state(f, "mamba_"),
           dims=zamba_dims, markers=("layers_block_type",), derive=zamba2_default, params=params_ssm.zamba2,
           aliases={"head_dim": ("attention_head_dim",), "mamba_n_heads": ("n_mamba_heads",),
                    "mamba_d_head": ("mamba_headdim",), "mamba_n_groups": ("mamba_ngroups",)},
           defaults={"mamba_d_head": "auto", "n_mamba_heads": 8, "mamba_d_state": 64, "mamba_d_conv": 4,
                     "mamba_expand": 2},
           rules=("a Mamba-2 state on every layer; 'hybrid' layers also keep K/V of a shared transformer "
                  "block (each its own cache)",)),
    Family(("zaya",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), state=zaya_cca_state,
           derive=lambda f, n: [K.HYBRID] * n, params=params.by_type, layers_rule=zaya_layout.zaya_layers,
           dims=zaya_layout.zaya_head_dims, notes=zaya_layout.zaya_notes,
           defaults={"num_key_value_heads": 2, "head_dim": 128, "cca_time0": 2, "cca_time1": 2},
           rules=("layer_types 'hybrid' / 'hybrid_sliding' (absent: all 'hybrid'): K/V of num_key_value_heads x "
                  "head_dim (full, or sliding_window) plus the CCA state: (cca_time0 - 1) + (cca_time1 - 1) conv "
                  "columns of (heads + KV heads) x head_dim and the delayed value half, KV heads x head_dim / 2",
                  "Megatron-style configs (zaya_layers, as ZAYA1-base): one full-attention layer per 'a' entry "
                  "(MoE half-layers cache nothing), heads the first non-zero cca_num_q_heads, KV heads the first "
                  "non-zero num_query_groups_list, head_dim kv_channels (SGLang 0.5.23's ZayaConfig); swa_layers "
                  "refused; parameters not counted",)),
    Family(("inkling_text",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), kind_state=inkling_conv_state,
           mtp=inkling_mtp,
           derive=inkling_kinds, per_layer=inkling_dims, params=params.by_type,
           aliases={"sliding_window": ("sliding_window_size",)},
           defaults={"num_key_value_heads": 8, "head_dim": 128, "swa_num_key_value_heads": 16, "swa_head_dim": 128,
                     "sliding_window": 512, "conv_kernel_size": 4},
           rules=("layer_types 'hybrid' / 'hybrid_sliding' (else local_layer_ids, else sliding when (i + 1) % 6 "
                  "!= 0): K/V of num_key_value_heads x head_dim, or on sliding layers swa_num_key_value_heads x "
                  "swa_head_dim over sliding_window_size tokens; plus four short-conv states (K, V and twice "
                  "hidden_size), conv_kernel_size - 1 columns each",)),
    Family(("inkling2_text",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), kind_state=inkling_conv_state,
           derive=inkling2_kinds, per_layer=inkling_dims, params=params.by_type,
           aliases={"sliding_window": ("sliding_window_size",)},
           defaults={"num_key_value_heads": 8, "head_dim": 128, "swa_num_key_value_heads": 8, "swa_head_dim": 128,
                     "sliding_window": 1024, "conv_kernel_size": 4},
           rules=("as inkling_text (K/V plus four short-conv states a layer; the full layers' K/V convolutions "
                  "are dynamic, the same state); absent layer_types: 'hybrid' when (i + 1) % 6 == 0, else "
                  "'hybrid_sliding' over sliding_window_size (1024) tokens",)),
    Family(("inkling2_loop_text",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), kind_state=inkling_conv_state,
           derive=inkling2_kinds, per_layer=inkling_dims, repeat=looped.inkling2_passes, params=params.by_type,
           aliases={"sliding_window": ("sliding_window_size",)},
           defaults={"num_key_value_heads": 8, "head_dim": 128, "swa_num_key_value_heads": 8, "swa_head_dim": 128,
                     "sliding_window": 1024, "conv_kernel_size": 4},
           rules=("as inkling2_text, and layers [loop_layer_index_start, loop_layer_index_end) (6, 18) run "
                  "loop_num_passes (3) times, each pass with its own K/V and conv states",)),
    Family(("inkling2_loop",), text="inkling2_loop_text", rules=("text model in text_config",)),
    Family(("rwkv",), kinds=frozenset({K.LINEAR}), state=rwkv_state, derive=lambda f, n: [K.LINEAR] * n,
           aliases={"max_position_embeddings": ("context_length",)}, params=params_ssm.rwkv,
           rules=("no KV cache: per layer two token-shift vectors (model dtype) and the WKV numerator, "
                  "denominator and max (float32)",)),
    Family(("falcon_mamba",), kinds=frozenset({K.LINEAR}), state=mamba1_state, params=params_ssm.hybrid,
           aliases={"mamba_d_inner": ("intermediate_size",), "mamba_expand": ("expand",)},
           derive=lambda f, n: [K.LINEAR] * n,
           rules=("a Mamba state on every layer; d_inner = intermediate_size when set (not expand x hidden)",)),
    Family(("falcon_h1",), kinds=frozenset({K.HYBRID}), state=lambda f: mamba2_state(f, "mamba_"),
           params=params_ssm.hybrid, derive=lambda f, n: [K.HYBRID] * n,
           rules=("every layer keeps attention K/V and a Mamba-2 state side by side",)),
    Family(("nemotron_h",), kinds=MAMBA_HYBRID, state=lambda f: mamba2_state(f, "mamba_"), params=params.by_type,
           markers=("layers_block_type", "hybrid_override_pattern"),
           layers_rule=_marker_layers("layer_types", "layers_block_type", "hybrid_override_pattern"),
           defaults={"head_dim": 128, "mamba_ssm_cache_dtype": "float32"}, mtp_attention=nemotron_h_mtp_attention,
           rules=("layers_block_type (or the older hybrid_override_pattern: M Mamba-2, * attention, - MLP, E MoE); "
                  "NemotronHConfig's default SSM cache dtype is float32",)),
    Family(("granitemoehybrid",), kinds=MAMBA_HYBRID, state=lambda f: mamba2_state(f, "mamba_"),
           params=params_ssm.granite_hybrid,
           derive=lambda f, n: [K.LINEAR] * n, defaults=MAMBA2_MIXER_DEFAULTS,
           rules=("layer_types 'mamba' / 'attention'; absent: every layer Mamba-2",)),
    Family(("bamba",), kinds=MAMBA_HYBRID, state=lambda f: mamba2_state(f, "mamba_"), params=params_ssm.bamba,
           markers=("attn_layer_indices",), derive=lambda f, n: [K.LINEAR] * n, defaults=MAMBA2_MIXER_DEFAULTS,
           rules=("attention on attn_layer_indices, Mamba-2 elsewhere",)),
    Family(("mamba",), kinds=frozenset({K.LINEAR}), state=mamba1_state, params=params_ssm.hybrid,
           aliases={"mamba_d_inner": ("intermediate_size",), "mamba_expand": ("expand",)},
           derive=lambda f, n: [K.LINEAR] * n, rules=("a Mamba state on every layer",)),
    Family(("mamba2",), kinds=frozenset({K.LINEAR}), state=lambda f: mamba2_state(f, ""), params=params_ssm.hybrid,
           derive=lambda f, n: [K.LINEAR] * n, rules=("a Mamba-2 state on every layer",)),
    # -- model_types vLLM 0.34 reads with config classes of its own (configs/vllm_own.py)
    *vllm_own.ROWS,
    # -- vLLM 0.34's new text architectures (configs/vllm34_text.py)
    *vllm34_text.ROWS,
    *_SPEECH_V034_ROWS,
]


_ENCODER = "an encoder model (transformers can run it as a decoder only for fine-tuning); nobody serves it with a KV cache"
_SEQ2SEQ = "an encoder-decoder model: its cross-attention cache is sized by the input, not the generated tokens"
# model_types refused with a reason rather than guessed: not decoder LLMs a serving engine plans.
# Families whose parameter counter misses modules transformers builds, at least for its shrunk default config
# (tests/parity/test_param_parity.py), with how far off; a config of one reads with a note saying so.
PARAMS_OFF: dict[str, str] = {
}

REFUSED: dict[str, str] = {
    **dict.fromkeys(("bert", "bert-generation", "big_bird", "camembert", "data2vec-text", "electra", "ernie",
                     "megatron-bert", "rembert", "roberta", "roberta-prelayernorm", "roc_bert", "roformer",
                     "xlm-roberta", "xlm-roberta-xl", "xmod", "xlm"), _ENCODER),
    **dict.fromkeys(("bart", "bigbird_pegasus", "blenderbot", "blenderbot-small", "marian", "mbart", "mvp",
                     "pegasus", "plbart", "prophetnet", "trocr", "whisper", "musicgen", "musicgen_melody",
                     "t5", "mt5", "umt5"), _SEQ2SEQ),
    "xlnet": "a permutation language model with its own memory, not a KV cache",
    "reformer": "LSH attention with its own bucketed cache",
    "openai-gpt": "GPT-1: transformers' implementation keeps no KV cache",
    "xlstm": "an xLSTM recurrent model whose state kvplan does not size yet",
    "cpmant": "CPM-Ant: its cache (prompt and segment positions) is not the per-token K/V kvplan sizes",
    "voxtral_realtime": "Voxtral Realtime: its causal Whisper encoder keeps its own sliding-window K/V in vLLM 0.33's "
                        "KV pool beside the decoder's, block-pooled (whisper_causal.py "
                        "WhisperCausalAttentionWithBlockPooling), which kvplan does not size yet",
    "moshi": "a speech-text model whose depth decoder keeps a second cache kvplan does not size",
    "idefics": "IDEFICS (v1): gated cross-attention layers to image tokens, whose cache kvplan does not size yet",
    "chameleon": "Chameleon: its cache has not been checked against transformers (5.25 still cannot build its "
                 "default config: ChameleonModel reads vocabulary_map, None by default), so kvplan does not read it; "
                 "vLLM served it only up to 0.28 (removed in 0.29)",
    "gemma4_unified_assistant": "Gemma 4 Unified's assistant (draft) model: every layer reads the target model's "
                                "K/V and keeps none of its own (transformers 5.25 Gemma4UnifiedAssistantConfig sets "
                                "num_kv_shared_layers to num_hidden_layers); vLLM 0.34 runs it only as a "
                                "speculative draft (config/speculative.py rewrites it to gemma4_mtp.py "
                                "Gemma4MTPModel), SGLang 0.5.23 as an MTP draft (gemma4_mtp.py), so plan the target "
                                "model",
    "pixtral": "a Pixtral vision encoder config (transformers PixtralVisionConfig) with no text model; vLLM 0.33 "
               "serves Pixtral as llava (config.json) or from a Mistral-format params.json",
    "moondream1": "Moondream 2 (HfMoondream, remote HfConfig): vLLM 0.33 maps the HfMoondream architecture to "
                  "moondream3.py Moondream3ForCausalLM, which builds Moondream 3's text model from hf_config.config "
                  "(HfConfig sets it to {}, so Moondream3TextConfig's defaults: MoE from layer 4, tau attention); "
                  "Moondream 2's dense checkpoint does not fill those weights, so vLLM 0.33 does not serve it",
    **audio_wrappers.SPEECH_REFUSED,
    **vllm_own.REFUSED,  # model_types of vLLM 0.34's own config classes (configs/vllm_own.py)
    **encoder_decoders.ENCODER_DECODER_REFUSED,
    **speech_wrappers.SPEECH_REFUSED_V034,
    **speech_wrappers.AUDIO_PARTS_REFUSED,
    **encoders_refused.ENCODERS_REFUSED,  # vision towers, text encoders, backbones, parts (configs/encoders_refused.py)
    "diffusion_gemma": "DiffusionGemma, a block-diffusion model: it denoises a canvas of tokens bidirectionally "
                       "before committing them, which kvplan does not size",
    # transformers 5.20 causal-LM / image-text types (models/auto/modeling_auto.py) vLLM 0.33 does not serve as models
    "gemma4_assistant": "Gemma 4's assistant (draft) model: every layer reads the target model's K/V and keeps none "
                        "of its own (transformers 5.20 Gemma4AssistantConfig sets num_kv_shared_layers to "
                        "num_hidden_layers); vLLM 0.33 runs it only as a speculative draft (config/speculative.py "
                        "rewrites it to gemma4_mtp.py Gemma4MTPModel, whose attention reads the target's cache), so "
                        "plan the target model",
    "blt": "BLT (Byte Latent Transformer): a byte-level local encoder and decoder that cross-attend to entropy-sized "
           "patches of a global transformer (transformers 5.20 modeling_blt.py), a cache per patch and per byte "
           "kvplan does not size; vLLM 0.33 does not serve it",
    "pi0": "PI0, a vision-language-action model: a PaliGemma prefix cache that a Gemma action expert attends to "
           "over num_inference_steps flow-matching steps to emit a chunk of actions, not generated tokens "
           "(transformers 5.20 modeling_pi0.py); vLLM 0.33 does not serve it",
    "evolla": "Evolla, a protein-text model: a Llama decoder whose every (num_hidden_layers // "
              "aligner_num_add_layers)-th layer also cross-attends to the protein encoder's resampled latents "
              "(transformers 5.20 modeling_evolla.py EvollaSequenceAlignerCrossAttention, "
              "EvollaSequenceCompressorResampler), a per-request input kvplan does not size; vLLM 0.33 does not "
              "serve it",
}


# Architectures vLLM 0.33 serves whose configs kvplan refuses whatever their model_type (vLLM picks the model class
# by architecture): what their cache is, and why kvplan does not read it.
REFUSED_ARCHITECTURES: dict[str, str] = {
    "PanguProMoEV2ForCausalLM": (
        "openPangu-Pro-MoE-V2 (vLLM 0.33 openpangu.py OpenPanguSinkAttention): K of qk_nope_dim + qk_rope_dim and V "
        "of v_channels per KV head on every layer (SinkFullAttentionSpec: no window even with "
        "interleaved_sliding_window), plus param_sink_number static sink tokens in shared blocks; no public "
        "config.json of it was found to check its field names (the ports' test configs write the remote names "
        "num_experts / mlp_only_layers, which vLLM's OpenPanguMoE does not read), so kvplan does not size it"),
    **vllm34_text.REFUSED_ARCHITECTURES,
}


def _table(rows: list[Family]) -> dict[str, Family]:
    table: dict[str, Family] = {}
    for row in rows:
        for name in row.types:
            if name in table:
                raise ValueError(f"model_type {name!r} has two family records")
            table[name] = row
    return table


FAMILIES: dict[str, Family] = _table(_ROWS)

# Families vLLM picks by architecture under another family's model_type: (model_type, architectures[0]) -> record
BY_ARCHITECTURE: dict[tuple[str, str], Family] = {
    # a Mistral-format params.json with a vision encoder, as vLLM 0.33 adapts it (configs/mistral_params.py)
    ("pixtral", "PixtralForConditionalGeneration"): Family(
        ("pixtral",), text="mistral", text_rule=vl_wrappers.nested_only("text_config", "pixtral"),
        rules=("Pixtral in Mistral format (vLLM 0.33 configs/mistral.py _remap_mistral_vision_args): the params.json "
               "text fields, adapted as for a text model, become text_config (mistral, or deepseek_v3 for Mistral "
               "Large 3), which pixtral.py PixtralForConditionalGeneration builds; parameters: the text model only "
               "(vision encoder and adapter not counted)",)),
    ("gemma3_text", "Rnj1ForCausalLM"): Family(
        ("rnj1",), kinds=frozenset({K.FULL, K.SLIDING, K.CHUNKED}), defaults=GEMMA3_TEXT_DEFAULTS,
        markers=("sliding_window_pattern",), derive=pattern_default(6), refine=rnj1.rnj1_kinds,
        params=rnj1.rnj1_params,
        rules=("vLLM 0.33 rnj1.py Rnj1Attention (a gemma3_text config naming Rnj1ForCausalLM): K/V of "
               "num_key_value_heads x head_dim on every layer; only a chunked_attention layer keeps a window "
               "(sliding_window tokens: chunks of sliding_window / 2 with one chunk of lookback); sliding_attention "
               "and full_attention layers cache every token",)),
}
