"""model_types and architectures kvplan refuses by name, each with the reason (not a decoder LLM a serving engine
plans, or a cache kvplan does not size yet), and the families whose parameter counter is known to be off."""

from __future__ import annotations

from . import audio_wrappers, vllm_own
from . import encoder_decoders
from . import encoders_refused
from . import speech_wrappers
from . import vllm34_text  # vLLM 0.34's new text architectures


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
