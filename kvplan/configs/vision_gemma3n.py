"""Gemma 3n's encoders counted by hand: the MobileNetV5 vision tower (timm) and the Conformer audio encoder.

transformers 5.25 builds Gemma3nModel.vision_tower with AutoModel on a gemma3n_vision config (TimmWrapperModel:
timm.create_model(architecture, num_classes=0, **model_args)), so the tower's layout is timm's, not transformers':
timm 1.0.31 models/mobilenetv5.py (_gen_mobilenet_v5, MobileNetV5Encoder, MobileNetV5MultiScaleFusionAdapter) and
the blocks models/_efficientnet_builder.py decodes (_decode_block_str) into models/_efficientnet_blocks.py
(EdgeResidual, UniversalInvertedResidual, MobileAttention) and layers/attention2d.py MultiQueryAttention2d.
The audio encoder is transformers 5.25 gemma3n/modeling_gemma3n.py Gemma3nAudioEncoder. Both return parameter
counts; configs/vision_gemma.py gemma3n adds the embedders and vLLM 0.34's TP split.
"""

from __future__ import annotations

from .fields import Fields

# timm 1.0.31 mobilenetv5.py _gen_mobilenet_v5 arch_def for every variant but mobilenetv5_base (so
# mobilenetv5_300m_enc), decoded once by _efficientnet_builder.py _decode_block_str ("er_r1_k3_s2_e4_c128" ...):
# (times, block, dw start kernel "a", mid kernel "k" (er: its expansion conv), expansion "e", heads "h",
#  key = value dim "d", kv stride "v", out channels "c"). Strides other than kv's hold no parameters.
MOBILENETV5_300M = (
    # stage 0
    (1, "er", 0, 3, 4, 0, 0, 1, 128),             # er_r1_k3_s2_e4_c128
    (2, "er", 0, 3, 4, 0, 0, 1, 128),             # er_r1_k3_s1_e4_c128
    # stage 1
    (1, "uir", 3, 5, 6, 0, 0, 1, 256),            # uir_r1_a3_k5_s2_e6_c256
    (2, "uir", 5, 0, 4, 0, 0, 1, 256),            # uir_r1_a5_k0_s1_e4_c256, then a3 / a5 / a3 alternating
    (2, "uir", 3, 0, 4, 0, 0, 1, 256),            # (counted as 2 x a5 + 2 x a3: order holds no parameters)
    # stage 2
    (1, "uir", 5, 5, 6, 0, 0, 1, 640),            # uir_r1_a5_k5_s2_e6_c640
    (7, "uir", 5, 0, 4, 0, 0, 1, 640),            # uir_r1_a5_k0_s1_e4_c640
    (1, "uir", 0, 0, 1, 0, 0, 1, 640),            # uir_r1_a0_k0_s1_e1_c640
    (14, "mqa", 0, 3, 0, 12, 64, 2, 640),         # mqa_r1_k3_h12_v2_s1_d64_c640, each followed by
    (14, "uir", 0, 0, 2, 0, 0, 1, 640),           # uir_r1_a0_k0_s1_e2_c640
    # stage 3
    (1, "uir", 5, 5, 6, 0, 0, 1, 1280),           # uir_r1_a5_k5_s2_e6_c1280
    (19, "mqa", 0, 3, 0, 16, 96, 1, 1280),        # mqa_r1_k3_h16_s1_d96_c1280, each followed by
    (19, "uir", 0, 0, 2, 0, 0, 1, 1280),          # uir_r1_a0_k0_s1_e2_c1280
)
MOBILENETV5_STEM = 64  # MobileNetV5Encoder stem_size (round_channels(64) = 64)
MOBILENETV5_FEATURES = 2048  # MobileNetV5Encoder num_features: the fusion adapter's output channels


def _block(kind: str, c: int, start: int, mid: int, exp: int, heads: int, dim: int, kv_stride: int, out: int) -> int:
    """One block from c input channels. Convolutions have no bias (create_conv2d); every norm is an RmsNorm2d /
    RmsNormAct2d with a weight [channels] (layers/norm.py, norm_act.py, affine True); LayerScale2d a gamma [out]
    (layer_scale_init_value 1e-5 from _gen_mobilenet_v5). No squeeze-excite (no "se" option)."""
    if kind == "er":  # EdgeResidual: conv_exp k x k (groups 1) + bn1, conv_pwl 1 x 1 + bn2; no layer scale
        m = c * exp
        return c * m * mid * mid + m + m * out + out
    if kind == "uir":  # UniversalInvertedResidual: dw_start, pw_exp, dw_mid (depthwise), pw_proj, each + norm
        m = c * exp
        return ((c * start * start + c if start else 0) + c * m + m + (m * mid * mid + m if mid else 0)
                + m * out + out + out)
    # MobileAttention with MultiQueryAttention2d: norm [c]; query.proj c -> heads x dim, key.proj and value.proj
    # c -> dim (one shared head), output.proj heads x dim -> out; with kv_stride > 1 key and value each add a
    # depthwise k x k down_conv and a norm; layer scale [out]
    down = 2 * (c * mid * mid + c) if kv_stride > 1 else 0
    return c + c * heads * dim + 2 * c * dim + heads * dim * out + down + out


def mobilenetv5_300m_params() -> int:
    """timm mobilenetv5_300m_enc (MobileNetV5Encoder): conv_stem (3 x 3 Conv2d 3 -> 64 with bias, stem_bias, and
    its norm), the blocks of MOBILENETV5_300M, and the fusion adapter over the last two stages' outputs
    (msfa_indices (-2, -1): 640 + 1280 channels): a UniversalInvertedResidual without depthwise convs or layer scale
    (exp 2: pw_exp 1920 -> 3840, pw_proj 3840 -> 2048, each with a norm) and its norm [2048]."""
    s = MOBILENETV5_STEM
    n = 3 * 9 * s + s + s
    c = s
    for times, kind, start, mid, exp, heads, dim, kv_stride, out in MOBILENETV5_300M:
        for _ in range(times):
            n += _block(kind, c, start, mid, exp, heads, dim, kv_stride, out)
            c = out
    fused = 640 + 1280  # the outputs of stages 2 and 3 (feature_info: the stem, then one per stage)
    m = 2 * fused  # MobileNetV5MultiScaleFusionAdapter expansion_ratio 2.0, noskip, no layer scale
    return n + fused * m + m + m * MOBILENETV5_FEATURES + MOBILENETV5_FEATURES + MOBILENETV5_FEATURES


# transformers 5.25 gemma3n/configuration_gemma3n.py Gemma3nAudioConfig (the E4B / E2B values)
GEMMA3N_AUDIO = {"hidden_size": 1536, "conf_num_attention_heads": 8, "conf_num_hidden_layers": 12,
                 "conf_conv_kernel_size": 5, "sscp_conv_channel_size": [128, 32], "input_feat_size": 128,
                 "vocab_size": 128}
_SSCP_KERNEL, _SSCP_STRIDE = [[3, 3], [3, 3]], [[2, 2], [2, 2]]


def audio_encoder_params(a: Fields) -> int | None:
    """Gemma3nAudioEncoder: subsample_conv_projection (two Conv2d without bias, 1 -> c0 -> c1 channels, 3 x 3
    kernels, each with a CumulativeGroupNorm weight [channels]; input_proj_linear c1 x f -> hidden, f the
    frequency bins after two stride-2 convs padded 1 + 1: (F + 2 - 3) // 2 + 1 twice), and per conformer block
    two feed-forwards (pre / post RMSNorm, hidden -> 4 hidden -> hidden), the attention (pre_attn_norm, q/k/v
    hidden -> heads x head_dim, per_dim_scale [head_dim], relative_position_embedding.pos_proj, post, post_norm),
    the light conv (pre_layer_norm, linear_start hidden -> 2 hidden, a depthwise Conv1d of conf_conv_kernel_size,
    conv_norm, linear_end) and the block norm. None where the subsampling convs are not the 3 x 3 stride-2 ones."""
    if a.get("sscp_conv_kernel_size", default=_SSCP_KERNEL) != _SSCP_KERNEL or \
            a.get("sscp_conv_stride_size", default=_SSCP_STRIDE) != _SSCP_STRIDE:
        return None
    h, heads, kernel = a.int("hidden_size"), a.int("conf_num_attention_heads"), a.int("conf_conv_kernel_size")
    c0, c1 = a.int_list("sscp_conv_channel_size", 2, minimum=1) or GEMMA3N_AUDIO["sscp_conv_channel_size"]
    f = a.int("input_feat_size")
    for _ in range(2):
        f = (f + 2 - 3) // 2 + 1
    inner = heads * (h // heads)
    subsample = 9 * c0 + c0 + 9 * c0 * c1 + c1 + c1 * f * h
    layer = (2 * (8 * h * h + 2 * h) + (h + 4 * h * inner + h // heads + inner * h + h)
             + (h + 2 * h * h + h * kernel + h + h * h) + h)
    return subsample + a.int("conf_num_hidden_layers") * layer
