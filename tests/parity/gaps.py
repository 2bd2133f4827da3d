"""Model types kvplan does not read exactly: refused, or read as a guess.

The parity test fails for a model_type that kvplan refuses or guesses unless it is
listed here, and fails for a listed type that kvplan now reads (remove it then:
its numbers are checked from that moment on). A guessed type fails even when
transformers cannot run it (nothing to compare, but a guess is never silent).
Shrink this list by adding families to kvplan/configs/families.py.

Only the types the parity test runs need an entry: transformers' causal-LM and image-text-to-text types
(harness.causal_types, harness.wrapper_types). The vision towers, encoders, backbones and sub-configs refused
in kvplan/configs/encoders_refused.py are none of those (tests/test_encoders_refused.py checks it), so none is
listed here.
"""

# kvplan refuses these by design, with a reason (kvplan/configs/families.py REFUSED): encoders with a
# causal head, encoder-decoder models, and models whose memory is not a per-token KV cache.
_REFUSED_BY_DESIGN = (
    "bart", "bert", "bert-generation", "big_bird", "bigbird_pegasus", "blenderbot", "blenderbot-small", "camembert",
    "cpmant", "data2vec-text", "electra", "ernie", "marian", "mbart", "megatron-bert", "moshi",
    "musicgen", "musicgen_melody", "mvp", "openai-gpt", "pegasus", "plbart", "prophetnet", "reformer", "rembert",
    "roberta", "roberta-prelayernorm", "roc_bert", "roformer", "trocr", "whisper", "xlm", "xlm-roberta",
    "xlm-roberta-xl", "xlnet", "xlstm", "xmod",
)

# Image-text-to-text types built on an encoder-decoder or a cross-attending text model.
_ENCODER_DECODER_WRAPPERS = (
    "blip", "evolla", "florence2", "pix2struct", "pp_formulanet", "t5gemma2", "udop",
    "vision-encoder-decoder",
)

# Other non-text or byte-level decoders kvplan has no family for (pi05: transformers 5.25's PI0.5, an
# image-text-to-text type there, refused as PI0 is).
_LEGACY_OR_MULTIMODAL = ("blt", "pi0", "pi05")

# Decoder LLM families transformers ships that kvplan refuses, each with its reason in kvplan/configs/families.py
# REFUSED: gemma4_unified_assistant, a draft model whose every layer reads the target's cache (transformers 5.25
# builds it; it keeps no K/V of its own, and vLLM 0.34 / SGLang 0.5.23 run it only as a draft of the target).
_DECODERS_REFUSED = ("gemma4_unified_assistant",)

# Decoder families kvplan refuses because their cache could not be checked: transformers cannot build or run
# their defaults here (chameleon: 5.25's ChameleonForConditionalGeneration fails on its default config; idefics:
# cross-attention to image tokens); kvplan would otherwise read them by the generic rule, as a guess.
# (cohere_compass_text's default cannot build either, KeyError 'full_attention': harness.OVERRIDES gives it the
# per-layer-type rope_parameters a real config carries, and it is checked.)
_DECODERS_UNCHECKED = ("chameleon", "idefics")

# Image-text-to-text wrappers of text models kvplan does not read (refused, each with its reason in REFUSED):
# block diffusion (diffusion_gemma), a pooled indexer whose prompt-plus-ring windows (unlimited_ocr).
_WRAPPERS_OF_UNREAD_TEXT = ("diffusion_gemma", "unlimited_ocr")

KNOWN_GAPS: dict[str, str] = {
    **dict.fromkeys(_REFUSED_BY_DESIGN, "refused by design: not a decoder with a per-token KV cache"),
    **dict.fromkeys(_ENCODER_DECODER_WRAPPERS, "image-text model on an encoder-decoder text model"),
    **dict.fromkeys(_LEGACY_OR_MULTIMODAL, "non-text or byte-level decoder: no kvplan family"),
    **dict.fromkeys(_DECODERS_REFUSED, "decoder family not read yet"),
    **dict.fromkeys(_DECODERS_UNCHECKED, "refused: transformers cannot run it here, so its cache is unchecked"),
    **dict.fromkeys(_WRAPPERS_OF_UNREAD_TEXT, "wrapper of a text model kvplan does not read"),
}
