"""Model types kvplan does not read exactly yet: refused, or read as a guess.

The parity test fails for a causal-LM model_type that kvplan refuses or guesses
unless it is listed here, and fails for a listed type that kvplan now reads
(remove it from the list then: its numbers are checked from that moment on).
Shrink this list by adding families to kvplan/configs/families.py.
"""

# Encoders with a causal-LM head (is_decoder=True) and the decoder halves of
# encoder-decoder models. kvplan plans decoder-only serving; these carry
# `add_cross_attention` or encoder/decoder layer counts instead of
# num_hidden_layers, and kvplan refuses them by name.
_ENCODER_STYLE = (
    "bart", "bert", "bert-generation", "big_bird", "bigbird_pegasus", "blenderbot-small", "camembert",
    "data2vec-text", "electra", "ernie", "marian", "mbart", "megatron-bert", "mvp", "pegasus", "prophetnet",
    "rembert", "roberta", "roberta-prelayernorm", "roc_bert", "roformer", "trocr", "xlm", "xlm-roberta",
    "xlm-roberta-xl", "blenderbot", "plbart", "whisper", "xmod", "reformer",
    # image-text-to-text types built on an encoder-decoder or a cross-attending text model
    "florence2", "pix2struct", "pp_formulanet", "t5gemma2", "udop", "vision-encoder-decoder", "evolla", "blip",
    "kosmos-2", "kosmos-2.5",
)

# Older or non-text decoders (GPT-1, CTRL, image/audio/any-to-any decoders) kvplan has no family for.
_LEGACY_OR_MULTIMODAL = (
    "openai-gpt", "ctrl", "cpmant", "biogpt", "gpt_neox_japanese", "git", "fuyu", "emu3", "got_ocr2", "moshi",
    "moss_transcribe_diarize", "hrm_text", "musicgen", "musicgen_melody", "blt", "xlstm", "pi0",
)

# Decoder LLM families issue 11 asks kvplan to read exactly (refused today).
_ISSUE_11_FAMILIES = (
    "exaone4", "falcon_mamba", "gemma4", "gemma4_text", "lfm2", "olmo3", "olmo_hybrid", "qwen3_5", "qwen3_5_moe",
    "qwen3_5_moe_text", "qwen3_5_text", "recurrent_gemma", "rwkv", "zamba", "zamba2",
    # image-text-to-text wrappers whose text model is one of these
    "exaone4_5", "lfm2_vl", "minicpm_ocr", "minicpmv4_6", "minicpmv4_7",
)

# Image-text-to-text wrappers whose text model kvplan ALREADY reads (its model_type in the comment):
# a family record with `text=` would read them; run on text tokens only, they cache what their text model does.
_WRAPPERS_OF_READ_TEXT = (
    "aya_vision",  # cohere2
    "cohere2_vision",  # cohere2
    "blip-2", "instructblip", "instructblipvideo",  # opt (need pixel_values to run: skipped by transformers)
    "cosmos3_omni",  # qwen3_vl_text
    "deepseek_vl", "deepseek_vl_hybrid", "idefics3", "janus", "llava_next_video", "perception_lm", "smolvlm",
    "video_llava", "vipllava",  # llama
    "fast_vlm", "internvl", "ovis2", "pp_chart2table", "video_llama_3",  # qwen2
    "idefics2",  # mistral
    "kimi_k25",  # deepseek_v3
    "lighton_ocr", "qianfan_ocr",  # qwen3
    "nemotron_h_omni",  # nemotron_h
    "paligemma",  # gemma
    "shieldgemma2",  # gemma3_text
)

# Other decoder LLM families transformers 5.23 ships: refused (a structural field kvplan does not
# know) or guessed (plain fields, read by transformers' generic rule and marked "guessed").
_OTHER_DECODERS = (
    "afmoe", "apertus", "arcee", "aria_text", "axk1", "axk2", "bailing_hybrid", "beam", "bitnet", "cohere",
    "cohere2_moe", "cwm", "deepseek_v4", "diffllama", "doge", "ernie4_5", "ernie4_5_moe", "exaone_moe",
    "flex_olmo", "flint", "gemma4_unified", "gemma4_unified_text", "granite_swa", "granitemoe", "granitemoe_swa",
    "granitemoeshared", "helium", "hy_v3", "hy_v4", "hyperclovax", "inkling2_text", "inkling_text", "iquestcoder",
    "jais2", "kolibri1", "laguna", "lfm3", "mellum", "mimo_v2_flash", "minimax_m3_vl_text", "modernbert-decoder",
    "nanochat", "olmo", "olmoe", "phimoe", "seed_oss", "smollm3", "solar_open", "vaultgemma", "youtu",
    "gemma4_unified_assistant", "lfm2_moe", "qwen4_exp", "qwen4_exp_text",
    # image-text-to-text wrappers of text models kvplan does not read (text model_type not a family)
    "aria", "cohere_compass", "cosmos3_edge", "deepseek_ocr2", "diffusion_gemma", "ernie4_5_vl_moe", "glm46v",
    "glm4v", "glm4v_moe", "glm_ocr", "glmga", "granite4_vision", "hunyuan_vl", "hyperclovax_vision_v2",
    "inkling_mm_model", "lfm3_vl", "minimax_m3_vl", "mistral4", "mistral_large4", "molmo2", "muse_glimmer",
    "paddleocr_vl", "qwen2_5_omni_thinker", "qwen2_vl", "qwen3_omni_moe_thinker", "step3p7", "unlimited_ocr",
)

KNOWN_GAPS: dict[str, str] = {
    **dict.fromkeys(_ENCODER_STYLE, "encoder or encoder-decoder model with a causal head: out of kvplan's scope"),
    **dict.fromkeys(_LEGACY_OR_MULTIMODAL, "legacy or non-text decoder: no kvplan family"),
    **dict.fromkeys(_ISSUE_11_FAMILIES, "issue 11 family not read yet"),
    **dict.fromkeys(_OTHER_DECODERS, "decoder family not read yet"),
    **dict.fromkeys(_WRAPPERS_OF_READ_TEXT, "wrapper of a text model kvplan reads: family entry missing"),
}
