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
    "xlm-roberta-xl",
)

# Older or non-text decoders (GPT-1, CTRL, image/audio/any-to-any decoders) kvplan has no family for.
_LEGACY_OR_MULTIMODAL = (
    "openai-gpt", "ctrl", "cpmant", "biogpt", "gpt_neox_japanese", "git", "fuyu", "emu3", "got_ocr2", "moshi",
    "moss_transcribe_diarize", "hrm_text",
)

# Decoder LLM families issue 11 asks kvplan to read exactly (refused today).
_ISSUE_11_FAMILIES = (
    "exaone4", "falcon_mamba", "gemma4", "gemma4_text", "lfm2", "olmo3", "olmo_hybrid", "qwen3_5", "qwen3_5_moe",
    "qwen3_5_moe_text", "qwen3_5_text", "recurrent_gemma", "rwkv",
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
)

KNOWN_GAPS: dict[str, str] = {
    **dict.fromkeys(_ENCODER_STYLE, "encoder or encoder-decoder model with a causal head: out of kvplan's scope"),
    **dict.fromkeys(_LEGACY_OR_MULTIMODAL, "legacy or non-text decoder: no kvplan family"),
    **dict.fromkeys(_ISSUE_11_FAMILIES, "issue 11 family not read yet"),
    **dict.fromkeys(_OTHER_DECODERS, "decoder family not read yet"),
}
