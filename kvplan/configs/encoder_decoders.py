"""Encoder-decoder model_types of transformers 5.20 that kvplan refuses by name, each with what it is.

Like the seq2seq models families.py refuses (_SEQ2SEQ), each decoder cross-attends to an encoder's output, so
part of its cache is sized by the input (image, document), not by the generated tokens; vLLM 0.33 serves none of
them in its own tree (model_executor/models/registry.py).
"""

from __future__ import annotations

_CROSS = "an encoder-decoder model: its cross-attention cache is sized by the input, not the generated tokens"

# model_type -> reason (transformers 5.20 models/<name>/configuration_<name>.py)
ENCODER_DECODER_REFUSED = {
    "florence2": (f"Florence-2, {_CROSS} (Florence2Config: a DaViT vision tower and a BART encoder-decoder in "
                  "text_config); vLLM 0.33 serves it only through the out-of-tree bart-plugin (registry.py "
                  "_OOT_SUPPORTED_MODELS)"),
    "pix2struct": (f"Pix2Struct, {_CROSS} (Pix2StructConfig, is_encoder_decoder: a T5-style text decoder over "
                   "the vision encoder's patches)"),
    "udop": f"UDOP, {_CROSS} (UdopConfig, is_encoder_decoder: a T5-style document model)",
    "t5gemma2": (f"T5Gemma 2, {_CROSS} (T5Gemma2Config, is_encoder_decoder: encoder and decoder configs, a "
                 "SigLIP vision tower in the encoder)"),
    "blip": (f"BLIP, {_CROSS} (BlipConfig: BlipTextConfig is_decoder, each text layer cross-attends to the vision "
             "model's output); vLLM 0.33's blip.py is only BLIP-2's vision tower"),
    "pp_formulanet": (f"PP-FormulaNet, {_CROSS} (PPFormulaNetConfig, is_encoder_decoder: an mBART-style text "
                      "decoder whose layers cross-attend to the vision encoder's features, cross_attention_cache)"),
    "vision-encoder-decoder": (f"a vision encoder-decoder, {_CROSS} (VisionEncoderDecoderConfig: a decoder "
                               "config with add_cross_attention over an image encoder, e.g. TrOCR, Donut)"),
}
