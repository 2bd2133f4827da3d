"""Phi-4-multimodal's encoders (phi4mm remote code) as vLLM 0.34 phi4mm.py, phi4mm_audio.py and phi4mm_utils.py
build them: the fixed SigLIP-NaViT image tower with its projection, and the "cascades" Conformer audio encoder
(AudioEmbedding) with its projections. `counter(raw, f, v) -> (_Count, what)` (configs/vision_towers.py
VISION_TOWERS).
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import MAX_LAYERS, Fields
from .vision_clip import siglip
from .vision_count import NotCounted, _Count


# -- Phi-4-multimodal (phi4mm remote code) -------------------------------------------------------------------------

# vLLM 0.34 phi4mm_audio.py ConformerEncoder's defaults for the fields kvplan reads (num_lang, chunk settings and
# dropouts shape nothing)
_CONFORMER = {"attention_dim": 256, "attention_heads": 4, "linear_units": 2048, "num_blocks": 6,
              "ext_pw_out_channel": 0, "ext_pw_kernel_size": 1, "depthwise_seperable_out_channel": 256,
              "depthwise_multiplier": 1, "kernel_size": 3, "time_reduction": 4, "input_layer": "nemo_conv"}


# phi4mm.py get_navit_vision_model: the SigLIP-NaViT tower's fixed shape
_PHI4MM_NAVIT = {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27, "image_size": 448,
                 "patch_size": 14, "num_channels": 3}


def _conformer(a: Fields, text_hidden: int, projection: str) -> int:
    """AudioEmbedding with a "cascades" ConformerEncoder (vLLM 0.34 phi4mm_audio.py, phi4mm_utils.py): every module
    is a plain nn.Conv / nn.Linear / nn.Embedding / nn.Parameter, whole on every rank. embed: NemoConvSubsampling
    "dw_striding" (a 3 x 3 stride-2 Conv2d 1 -> conv_channels, then log2(time_reduction) - 1 times a depthwise 3 x 3
    stride-2 Conv2d and a pointwise one, all biased, and `out` conv_channels x the input_size left after the strides
    -> attention_dim, biased); relative_attention_bias_layer (T5RelativeAttentionLogitBias: an nn.Embedding of 2 x
    t5_bias_max_distance rows, asymmetric, by heads); encoder_embedding (MeanVarianceNormLayer: global_mean and
    global_invstd [input_size]); per block two FeedForwards (a LayerNorm, GLULinear d -> 2 x linear_units biased
    with bias_in_glu, linear_units -> d biased), MultiHeadedAttention (linear_q/k/v/out with biases), ConvModule (a
    LayerNorm; ext_pw_conv_1d d -> ext_pw_out_channel and GLUPointWiseConv's own d -> 2 x ext_pw_out_channel, each
    kernel ext_pw_kernel_size and biased, and its b1 / b2 [ext_pw_out_channel] with bias_in_glu; ln1 where those
    differ from d; the depthwise conv (kernel_size, multiplier) and pointwise conv to depthwise_seperable_out_channel,
    biased; ln2 where that differs from d), two LayerNorms; and the projection (projection_cls "mlp":
    audio_projection and audio_projection_for_vision, d -> text hidden -> text hidden, biased; "linear":
    audio_projection d -> text hidden, biased)."""
    for name, value in (("input_layer", "nemo_conv"),):
        if a.get(name, default=value) != value:
            raise NotCounted(f"audio_processor {name} {a.get(name)!r}: kvplan counts the {value} encoder only")
    for name in ("batch_norm", "linear_glu_in_convm"):
        if a.flag(name):
            raise NotCounted(f"audio_processor {name}: not in kvplan's count of the conformer")
    if a.get("attention_group_size", default=1) != 1 or a.get("attention_inner_dim", default=-1) != -1:
        raise NotCounted("audio_processor attention_group_size / attention_inner_dim: not in kvplan's count")
    bias = a.get("relative_attention_bias_args")
    if not isinstance(bias, dict) or bias.get("type") != "t5" or bias.get("t5_bias_symmetric"):
        raise NotCounted("audio_processor relative_attention_bias_args: vLLM 0.34 builds the asymmetric t5 bias only")
    distance = bias.get("t5_bias_max_distance", 1000)
    d, heads, ffn = a.int("attention_dim"), a.int("attention_heads"), a.int("linear_units")
    mel, reduction = a.int("input_size"), a.int("time_reduction")
    nemo = a.get("nemo_conv_settings") or {}
    if not isinstance(nemo, dict) or nemo.get("subsampling", "dw_striding") != "dw_striding" or \
            nemo.get("is_causal") or set(nemo) - {"conv_channels", "subsampling"}:
        raise NotCounted("audio_processor nemo_conv_settings: kvplan counts the default dw_striding subsampling")
    ch = a.check_int("nemo_conv_settings.conv_channels", nemo.get("conv_channels", 256))
    steps = reduction.bit_length() - 1
    if reduction != 2 ** steps or steps < 1 or not isinstance(distance, int) or distance < 1:
        raise NotCounted(f"audio_processor time_reduction {reduction}: not a power of two (NemoConvSubsampling)")
    left = mel
    for _ in range(steps):  # phi4mm_utils.py calc_length_int: paddings 2, kernel 3, stride 2, floor
        left = (left - 1) // 2 + 1
    total = 9 * ch + ch + (steps - 1) * (9 * ch + ch + ch * ch + ch) + ch * left * d + d
    total += 2 * distance * heads + 2 * mel
    ext, sep = a.int("ext_pw_out_channel", minimum=0), a.int("depthwise_seperable_out_channel", minimum=0)
    mult, kernel, pw_kernel = a.int("depthwise_multiplier"), a.int("kernel_size"), a.int("ext_pw_kernel_size")
    glu_bias = a.flag("bias_in_glu", default=True)
    feed_forward = 2 * d + d * 2 * ffn + (2 * ffn if glu_bias else 0) + ffn * d + d
    conv = 2 * d
    if ext:
        conv += d * ext * pw_kernel + ext + d * 2 * ext * pw_kernel + 2 * ext + (2 * ext if glu_bias else 0)
        conv += ext * d + d if ext != d else 0
    else:
        conv += 6  # pw_conv_simplify_w / _b
    conv += d * mult * kernel + d * mult
    if sep:
        conv += d * mult * sep + sep + (sep * d + d if sep != d else 0)
    elif mult != 1:
        conv += d * mult * d + d
    total += a.int("num_blocks", maximum=MAX_LAYERS) * (2 * feed_forward + 4 * (d * d + d) + conv + 4 * d)
    th = text_hidden
    return total + (2 * (d * th + th + th * th + th) if projection == "mlp" else d * th + th)


def phi4mm(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Phi4MMForCausalLM's encoders as vLLM 0.34 phi4mm.py builds them (v: embd_layer): under
    _mark_tower_model(..., {"image", "video"}) Phi4MMImageEncoder, get_navit_vision_model's fixed SigLIP-NaViT
    (Idefics2VisionTransformer of 1,152 hidden, 27 layers at 448 / 14, built up to img_processor.layer_idx (-2 without
    one: 26 layers) without post_layernorm; split as SigLIP's), glb_GN / sub_GN [1,152] and img_projection (1,152 ->
    text hidden -> text hidden, biased nn.Linear, whole); under _mark_tower_model(..., "audio") AudioEmbedding
    (_conformer) from audio_processor.config, whole, with embd_layer.audio_embd_layer's projection_cls."""
    processor = raw.get("audio_processor")
    if not isinstance(processor, dict) or processor.get("name") != "cascades" or \
            not isinstance(processor.get("config"), dict):
        raise NotCounted("no audio_processor of name 'cascades' with a config (vLLM 0.34 phi4mm_audio.py builds "
                          "that audio encoder only)")
    audio = v.get("audio_embd_layer")
    audio = audio if isinstance(audio, dict) else {}
    for name, default in (("use_qformer", False), ("use_conv_downsample", False), ("downsample_rate", 1)):
        if audio.get(name, default) != default:
            raise NotCounted(f"embd_layer.audio_embd_layer {name}: not in kvplan's count of the audio embedding")
    projection = audio.get("projection_cls", "linear")
    if projection not in ("linear", "mlp"):
        raise NotCounted(f"embd_layer.audio_embd_layer projection_cls {projection!r} is not linear or mlp")
    image = raw.get("img_processor")
    index = image.get("layer_idx", -2) if isinstance(image, dict) else -2
    if not isinstance(index, int) or isinstance(index, bool) or not -27 <= index < 27:
        raise ConfigError(f"{f.source}: img_processor layer_idx {index!r} is not a layer of the 27-layer SigLIP-NaViT")
    layers = 27 + index + 1 if index < 0 else index + 1
    c = siglip(Fields({"vision_use_head": False}, v.source, _PHI4MM_NAVIT), layers, post_norm=False)
    th = f.int("hidden_size")
    c.held(2 * 1152 + 1152 * th + th + th * th + th)
    c.held(_conformer(Fields(processor["config"], v.source, _CONFORMER), th, projection))
    return c, "SigLIP-NaViT + image projection and the Conformer audio encoder + projections (Phi-4-multimodal)"
