"""Model types of transformers 5.25 that are not decoders a serving engine plans, refused by name.

kvplan reads an unknown model_type with the standard decoder fields (num_hidden_layers, num_attention_heads) by
the generic rule, as a guess. A vision tower's or a text encoder's config carries those fields too, so each of
these types used to read as a guessed decoder with a KV cache it never keeps. Each was checked against its
transformers 5.25 models/<name>/configuration_<name>.py (which config holds it: the parent's sub_configs_defaults)
and modeling_<name>.py (bidirectional attention, or a causal mask over a single pass that writes no cache):

- vision towers and image / video encoders of multimodal models: they run once over the pixels when the prompt is
  embedded and keep nothing (the decoder's cache is the model's; plan the model they belong to);
- text encoders of dual-encoder models (CLIP-style contrastive, detection, segmentation, retrieval): one pass
  over the text to an embedding (CLIP's causal mask included), no generation;
- encoders (BERT-style and other bidirectional text or document models) and vision / video backbones for
  classification, detection, segmentation, pose or self-supervised features: one bidirectional pass, no cache;
- SAM-family mask decoders: a two-way transformer between prompt and image embeddings, not a token decoder;
- parts of models kvplan already refuses (BLT, DiffusionGemma, Voxtral Realtime) or of encoder-decoders (T5Gemma,
  T5Gemma 2, BLIP): read alone they would describe a cache the whole model does not have in that form (the same
  way configs/speech_wrappers.py refuses CSM's and Moshi's depth decoders).

- time-series forecasters (TimesFM 1 and 2.5): causal, but over patches of real values, with no cache in
  transformers and no engine kvplan models serving them.

Causal token decoders are not refused here: glm_image_text (GLM-Image's autoregressive generator) has a family
record (families.py), read exactly.
"""

from __future__ import annotations

_PLAN = "plan the model it belongs to"
_VISION = f"a vision tower (image / video encoder) config: it runs once over the pixels and keeps no KV cache; {_PLAN}"
_TEXT_ENCODER = ("the text encoder of a dual-encoder (contrastive, detection or retrieval) model: one pass over the "
                 "text to an embedding, no generation and no KV cache")
_ENCODER = ("an encoder (bidirectional attention over its whole input): it embeds, classifies or tags its input in "
            "one pass and keeps no decoding KV cache")
_BACKBONE = ("a vision / video backbone (classification, detection, segmentation, pose or self-supervised "
             "features): one bidirectional pass over the pixels, no KV cache")
_MASK_DECODER = (f"a SAM-family mask decoder config (a two-way transformer between prompt and image embeddings, "
                 f"not a token decoder): no KV cache; {_PLAN}")
_SEQ2SEQ_PART = ("a part of an encoder-decoder model, whose decoder cross-attends to the encoder's output (a cache "
                 "sized by the input, not the generated tokens)")

# vision towers: the parent config's vision_config (transformers 5.25 configuration_<parent>.py)
_VISION_TYPES = (
    "aimv2_vision_model", "altclip_vision_model", "blip_2_vision_model", "blip_vision_model",
    "chinese_clip_vision_model", "clip_vision_model", "clipseg_vision_model", "cosmos3_edge_vision",
    "deepseek_ocr2_encoder", "dots3_note_vision_encoder", "flava_image_model", "gemma4_vision",
    "git_vision_model", "granite_docling_vision", "groupvit_vision_model", "hunyuan_vl_vision", "hy_v4_vl_vision",
    "idefics2_vision", "idefics3_vision", "inkling2_vision", "instructblip_vision_model",
    "instructblipvideo_vision_model", "internvl_vision", "janus_vision_model", "kimi_k25_vision",
    "kosmos_2_5_vision_model", "kosmos_2_vision_model",
    "llama4_vision_model", "metaclip_2_vision_model", "minicpm_ocr_vision", "minicpmv4_6_vision",
    "minicpmv4_7_vision", "minimax_m3_vl_vision", "mlcd", "mlcd_vision_model", "molmo2_vision", "ovis2_vision",
    "owlv2_vision_model", "owlvit_vision_model", "paddleocr_vl_vision", "pe_video_encoder", "phi4_multimodal_vision",
    "pix2struct_vision_model", "qianfan_ocr_vision", "siglip2_vision_model", "siglip_vision_model", "smolvlm_vision",
    "step3p5_vision", "tipsv2_vision_model", "unlimited_ocr_vision_encoder", "video_llama_3_vision",
    "xclip_vision_model",
)
# text encoders: the parent's text_config (FLAVA's multimodal fusion encoder too; EmbeddingGemma 2's text model
# attends bidirectionally, modeling_embedding_gemma2.py create_bidirectional_mask)
_TEXT_ENCODER_TYPES = (
    "aimv2_text_model", "align_text_model", "altclip_text_model", "chinese_clip_text_model", "clap_text_model",
    "clip_text_model", "clipseg_text_model", "embedding_gemma2_text", "flava_multimodal_model", "flava_text_model",
    "groupvit_text_model", "metaclip_2_text_model", "owlv2_text_model", "owlvit_text_model",
    "sam3_lite_text_text_model", "siglip2_text_model", "siglip_text_model", "tipsv2_text_model",
    "videoprism_text_model", "xclip_text_model",
)
# stand-alone encoders (OpenAI's privacy filter: a token tagger with a bidirectional sliding-window mask,
# modeling_openai_privacy_filter.py create_bidirectional_sliding_window_mask; TVP: video grounding; ViLT and
# VisualBERT: vision-language encoders; ESM C: a protein masked LM, modeling_esmc.py create_bidirectional_mask;
# NeoMME: a text-and-image retrieval / masked-LM encoder, modeling_neomme.py NeoMMEAttention is_causal False)
_ENCODER_TYPES = (
    "albert", "canine", "deberta", "deberta-v2", "esmc", "eurobert", "gte", "ibert", "jina_embeddings_v3",
    "layoutlm", "layoutlmv3", "lilt", "luke", "markuplm", "mobilebert", "mpnet", "neomme", "nomic_bert",
    "openai_privacy_filter", "splinter", "tvp", "vilt", "visual_bert",
)
# vision / video backbones (MGP-STR: scene-text recognition heads on a ViT; LightGlue: a keypoint matcher)
_BACKBONE_TYPES = (
    "deit", "dinov2", "dinov2_with_registers", "dinov3_vit", "eomt", "eomt_dinov3", "ijepa", "lightglue",
    "lw_detr_vit", "mgp-str", "pixio", "seggpt", "timesformer", "videomae", "videomt", "vit", "vit_mae", "vit_msn",
    "vitpose_backbone", "vivit", "vjepa2", "yolos",
)
_MASK_DECODER_TYPES = (
    "edgetam_mask_decoder", "edgetam_video_mask_decoder", "sam2_mask_decoder", "sam2_video_mask_decoder",
    "sam3_tracker_mask_decoder", "sam3_tracker_video_mask_decoder", "sam_hq_mask_decoder", "sam_mask_decoder",
)
# TimesFM (transformers 5.25 models/timesfm, models/timesfm2_5): no past_key_values anywhere; vLLM 0.34 and SGLang
# 0.5.23 register no TimesFm class
_FORECASTER = ("a time-series forecaster: it embeds patches of real values, not tokens, and runs its causal decoder "
               "over the whole context with no KV cache (transformers 5.25 {how}); no engine kvplan models (vLLM 0.34, "
               "SGLang 0.5.23) serves it, so there is no cache to plan")

# model_type -> reason
ENCODERS_REFUSED: dict[str, str] = {
    **dict.fromkeys(_VISION_TYPES, _VISION),
    **dict.fromkeys(_TEXT_ENCODER_TYPES, _TEXT_ENCODER),
    **dict.fromkeys(_ENCODER_TYPES, _ENCODER),
    **dict.fromkeys(_BACKBONE_TYPES, _BACKBONE),
    **dict.fromkeys(_MASK_DECODER_TYPES, _MASK_DECODER),
    # parts of refused models (configuration_blt.py BltConfig sub_configs_defaults: patcher_config, encoder_config,
    # decoder_config, global_config)
    **{name: f"BLT's {part} config (a sub-config of blt, which is refused: its byte and patch caches are not "
             "sized by kvplan); plan blt"
       for name, part in (("blt_patcher", "entropy patcher"), ("blt_local_encoder", "local byte encoder"),
                          ("blt_local_decoder", "local byte decoder"), ("blt_global_transformer",
                                                                        "global (patch) transformer"))},
    "diffusion_gemma_text": ("DiffusionGemma's text config (DiffusionGemmaConfig text_config): a block-diffusion "
                             "model whose decoder attends bidirectionally over the canvas (modeling_diffusion_gemma.py "
                             "DiffusionGemmaDecoderTextAttention is_causal False); diffusion_gemma is refused"),
    "voxtral_realtime_text": ("Voxtral Realtime's text decoder config (VoxtralRealtimeConfig text_config): read alone "
                              "it misses the causal audio encoder's K/V that vLLM keeps in the same pool; "
                              "voxtral_realtime is refused"),
    # encoder-decoders (configuration_t5gemma.py T5GemmaConfig encoder / decoder: T5GemmaModuleConfig;
    # configuration_t5gemma2.py T5Gemma2Config encoder text_config / decoder; configuration_blip.py BlipTextConfig,
    # whose layers cross-attend to the vision model's output)
    "t5gemma": f"T5Gemma, an encoder-decoder model: {_SEQ2SEQ_PART}",
    "t5_gemma_module": f"T5Gemma's encoder or decoder config (T5GemmaModuleConfig), {_SEQ2SEQ_PART}; t5gemma is refused",
    "t5gemma2_text": f"T5Gemma 2's encoder text config (T5Gemma2TextConfig), {_SEQ2SEQ_PART}; t5gemma2 is refused",
    "t5gemma2_decoder": f"T5Gemma 2's decoder config (T5Gemma2DecoderConfig), {_SEQ2SEQ_PART}; t5gemma2 is refused",
    "blip_text_model": f"BLIP's text model config (BlipTextConfig), {_SEQ2SEQ_PART}; blip is refused",
    "timesfm": "TimesFM, " + _FORECASTER.format(how="TimesFmModelForPrediction re-runs the decoder over context "
                                                    "and forecast for each horizon_length chunk"),
    "timesfm2_5": "TimesFM 2.5, " + _FORECASTER.format(how="TimesFm2_5Model builds its causal mask with cache=None "
                                                           "and forecasts horizon_length values in one pass"),
}
