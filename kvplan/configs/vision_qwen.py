"""The Qwen-style ViTs, a Conv3d patch embedding over temporal patches and a spatial patch merger: Qwen2.5-VL,
Qwen3-VL / Qwen3.5 (with the deepstack mergers), the Qwen2.5-Omni / Qwen3-Omni thinkers' vision and audio towers,
and GLM-4.1V / GLM-4.5V (glm4v, glm4v_moe). Counted as transformers 5.25 builds them, split as vLLM 0.34 does
(each counter's docstring names the files); `counter(raw, f, v) -> (_Count, what)` (configs/vision_towers.py
VISION_TOWERS).
"""

from __future__ import annotations

from .fields import MAX_LAYERS, Fields
from .vision_count import NotCounted, _audio_layers, _conv, _Count, _with


# -- Qwen2.5-VL, Qwen3-VL, Qwen3.5 ---------------------------------------------------------------------------------

# transformers 5.25 qwen2_5_vl/configuration_qwen2_5_vl.py Qwen2_5_VLVisionConfig
_QWEN2_5_VL = {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420, "in_channels": 3, "patch_size": 14,
               "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 3584}


# qwen3_vl/configuration_qwen3_vl.py Qwen3VLVisionConfig (Qwen3.5's and Qwen3.5-MoE's have the same defaults and
# no deepstack_visual_indexes)
_QWEN3_VL = {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "in_channels": 3, "patch_size": 16,
             "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 3584,
             "num_position_embeddings": 2304, "deepstack_visual_indexes": [8, 16, 24]}


def qwen2_5_vl(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Qwen2_5_VisionTransformerPretrainedModel (transformers 5.25 modeling_qwen2_5_vl.py): patch_embed Conv3d
    without bias (in_channels x temporal_patch_size x patch_size^2 -> hidden), `depth` blocks of two RMSNorms,
    qkv and proj with biases and a gated MLP with biases, and the merger (ln_q RMSNorm, two biased linears from
    hidden x spatial_merge_size^2 to out_hidden_size). vLLM 0.34 qwen2_5_vl.py: Conv3dLayer, qkv
    QKVParallelLinear, proj and down_proj RowParallelLinear, gate_up_proj MergedColumnParallelLinear, the merger's
    first linear ColumnParallelLinear and its second RowParallelLinear."""
    v = _with(v, _QWEN2_5_VL)
    c = _Count()
    h, inter, merge = v.int("hidden_size"), v.int("intermediate_size"), v.int("spatial_merge_size")
    patch = v.int("patch_size")
    _conv(c, v.int("in_channels") * v.int("temporal_patch_size"), patch * patch, h, bias=False)
    for _ in range(v.int("depth", maximum=MAX_LAYERS)):
        c.held(2 * h)
        c.split(h, 3 * h, bias=True)
        c.row(h, h, bias=True)
        c.split(h, 2 * inter, bias=True)
        c.row(inter, h, bias=True)
    m = h * merge * merge
    c.held(h)
    c.split(m, m, bias=True)
    c.row(m, v.int("out_hidden_size"), bias=True)
    return c, "Qwen2.5-VL ViT + patch merger"


def qwen3_vl(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Qwen3VLVisionModel (transformers 5.25 modeling_qwen3_vl.py; Qwen3_5VisionModel in modeling_qwen3_5.py is
    the same without the deepstack mergers): patch_embed Conv3d with bias, pos_embed of num_position_embeddings
    rows, `depth` blocks of two LayerNorms, qkv and proj with biases, linear_fc1 / linear_fc2 with biases, the
    merger (LayerNorm over hidden, linear_fc1 over hidden x spatial_merge_size^2, linear_fc2 to out_hidden_size)
    and one more merger a deepstack_visual_indexes entry (its LayerNorm over hidden x spatial_merge_size^2). vLLM
    0.34 qwen3_vl.py: Conv3dLayer and nn.Embedding whole, qkv QKVParallelLinear, proj / linear_fc2
    RowParallelLinear, linear_fc1 ColumnParallelLinear, in the blocks and the mergers alike."""
    v = _with(v, _QWEN3_VL)
    c = _Count()
    h, inter, merge = v.int("hidden_size"), v.int("intermediate_size"), v.int("spatial_merge_size")
    patch = v.int("patch_size")
    _conv(c, v.int("in_channels") * v.int("temporal_patch_size"), patch * patch, h, bias=True)
    c.held(v.int("num_position_embeddings") * h)
    for _ in range(v.int("depth", maximum=MAX_LAYERS)):
        c.held(4 * h)
        c.split(h, 3 * h, bias=True)
        c.row(h, h, bias=True)
        c.split(h, inter, bias=True)
        c.row(inter, h, bias=True)
    m, out = h * merge * merge, v.int("out_hidden_size")
    deepstack = 0 if raw.get("model_type", "").startswith("qwen3_5") else len(v.list("deepstack_visual_indexes") or ())
    for norm in [h] + [m] * deepstack:
        c.held(2 * norm)
        c.split(m, m, bias=True)
        c.row(m, out, bias=True)
    what = "Qwen3-VL ViT + patch merger" + (f" + {deepstack} deepstack mergers" if deepstack else "")
    return c, what


# -- Qwen2.5-Omni, Qwen3-Omni: the thinker's vision and audio towers -----------------------------------------------

# transformers 5.25 qwen2_5_omni/configuration_qwen2_5_omni.py Qwen2_5OmniAudioEncoderConfig and
# qwen3_omni_moe/configuration_qwen3_omni_moe.py Qwen3OmniMoeAudioEncoderConfig (their vision configs' defaults are
# Qwen2.5-VL's and Qwen3-VL's: _QWEN2_5_VL, _QWEN3_VL)
_QWEN2_5_OMNI_AUDIO = {"num_mel_bins": 128, "encoder_layers": 32, "encoder_ffn_dim": 5120, "d_model": 1280,
                       "output_dim": 3584}


_QWEN3_OMNI_AUDIO = dict(_QWEN2_5_OMNI_AUDIO, downsample_hidden_size=480)


def qwen_omni(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """The thinker's visual and audio_tower (v: thinker_config) as vLLM 0.34 builds them, each under
    _mark_tower_model: skipped with --limit-mm-per-prompt 0 for image and video (visual), for audio (audio_tower).

    qwen2_5_omni (qwen2_5_omni_thinker.py Qwen2_5OmniThinkerForConditionalGeneration): visual is qwen2_5_vl.py's
    Qwen2_5_VisionTransformer (qwen2_5_vl() above; transformers 5.25 Qwen2_5OmniVisionEncoder the same modules);
    audio_tower is transformers' own Qwen2_5OmniAudioEncoder, whose nn.Linear / nn.Conv1d vLLM holds whole on every
    rank: conv1 (num_mel_bins -> d_model, kernel 3) and conv2 (d_model -> d_model, kernel 3), both biased,
    audio_bos_eos_token [2, output_dim], the layers (k_proj without bias), ln_post and proj (d_model -> output_dim,
    biased); its sinusoidal positions are a non-persistent buffer.

    qwen3_omni_moe (qwen3_omni_moe_thinker.py): visual is Qwen3Omni_VisionTransformer, Qwen3-VL's tower (qwen3_vl()
    above; its pos_embed has (image_size / patch_size)^2 rows where transformers' Qwen3OmniMoeVisionEncoder has
    num_position_embeddings: a config where they differ is refused); audio_tower is vLLM's Qwen3OmniMoeAudioEncoder:
    conv2d1 (1 -> downsample_hidden_size), conv2d2 / conv2d3 (3 x 3, biased), conv_out (downsample_hidden_size x
    num_mel_bins / 8 -> d_model, no bias), proj1 (d_model -> d_model) and proj2 (-> output_dim), biased
    ReplicatedLinear, ln_post: whole; the layers' qkv_proj QKVParallelLinear, out_proj / fc2 RowParallelLinear, fc1
    ColumnParallelLinear. Those layers are whole where TP does not divide encoder_attention_heads (disable_tp: 20
    heads at TP 8): not modelled, the count is the split one."""
    mt = raw.get("model_type")
    for key in ("vision_config", "audio_config"):
        if not isinstance(v.get(key), dict):
            raise NotCounted(f"thinker_config has no {key} object (its config class would build a default one)")
    vision = Fields(v.raw["vision_config"], v.source, _QWEN2_5_VL if mt == "qwen2_5_omni" else _QWEN3_VL)
    a = Fields(v.raw["audio_config"], v.source, _QWEN2_5_OMNI_AUDIO if mt == "qwen2_5_omni" else _QWEN3_OMNI_AUDIO)
    h, ffn, mel, out = a.int("d_model"), a.int("encoder_ffn_dim"), a.int("num_mel_bins"), a.int("output_dim")
    if mt == "qwen2_5_omni":
        c, _ = qwen2_5_vl(raw, f, vision)
        c.held(mel * 3 * h + h + h * 3 * h + h + 2 * out)
        _audio_layers(c, h, ffn, a.int("encoder_layers", maximum=MAX_LAYERS), split=False, k_bias=False)
        c.held(2 * h + h * out + out)
        return c, "Qwen2.5-Omni thinker: Qwen2.5-VL ViT + patch merger and Qwen2_5OmniAudioEncoder"
    image, patch = vision.opt_int("image_size"), vision.int("patch_size")
    if image is not None and (image // patch) ** 2 != vision.int("num_position_embeddings"):
        raise NotCounted("vision_config: (image_size / patch_size)^2 is not num_position_embeddings (vLLM and "
                          "transformers size the position table by different fields)")
    c, what = qwen3_vl(raw, f, vision)
    d = a.int("downsample_hidden_size")
    c.held(9 * d + d + 2 * (9 * d * d + d) + d * ((((mel + 1) // 2 + 1) // 2 + 1) // 2) * h)
    _audio_layers(c, h, ffn, a.int("encoder_layers", maximum=MAX_LAYERS), split=True, k_bias=True)
    c.held(2 * h + h * h + h + h * out + out)
    return c, f"Qwen3-Omni thinker: {what} and Qwen3OmniMoeAudioEncoder"


# -- GLM-4.1V / GLM-4.5V (glm4v, glm4v_moe) ------------------------------------------------------------------------

# transformers 5.25 glm4v/configuration_glm4v.py Glm4vVisionConfig (Glm4vMoeVisionConfig has the same defaults)
_GLM4V = {"depth": 24, "hidden_size": 1536, "num_heads": 12, "in_channels": 3, "image_size": 336, "patch_size": 14,
          "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 4096, "intermediate_size": 13696,
          "attention_bias": False}


def glm4v(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Glm4vVisionModel (transformers 5.25 modeling_glm4v.py; Glm4vMoeVisionModel in modeling_glm4v_moe.py the
    same): patch_embed Conv3d with bias (in_channels x temporal_patch_size x patch^2 -> hidden), a position
    embedding of (image_size / patch_size)^2 rows; `depth` blocks of two RMSNorms, qkv (biased with
    attention_bias) and proj without bias, a gated MLP hidden -> out_hidden_size -> hidden without biases;
    post_conv_layernorm and post_layernorm (RMSNorm), downsample (Conv2d hidden -> out_hidden_size over
    spatial_merge_size^2, with bias) and the merger (proj out x out, a LayerNorm, a gated MLP out ->
    intermediate_size -> out, no biases). vLLM 0.34 glm4_1v.py Glm4vVisionTransformer: Conv3dLayer / Conv2dLayer,
    nn.Embedding, RMSNorms and the merger's LayerNorm whole; qkv QKVParallelLinear (built without bias: a config
    with attention_bias is refused), proj and down_proj RowParallelLinear, gate_up_proj MergedColumnParallelLinear,
    the merger's proj ColumnParallelLinear."""
    v = _with(v, _GLM4V)
    if v.flag("attention_bias"):
        raise NotCounted("attention_bias: vLLM 0.34 glm4_1v.py builds the vision qkv without the bias transformers "
                         "adds")
    c = _Count()
    h, out, inter = v.int("hidden_size"), v.int("out_hidden_size"), v.int("intermediate_size")
    patch, merge = v.int("patch_size"), v.int("spatial_merge_size")
    _conv(c, v.int("in_channels") * v.int("temporal_patch_size"), patch * patch, h, bias=True)
    c.held((v.int("image_size") // patch) ** 2 * h)
    for _ in range(v.int("depth", maximum=MAX_LAYERS)):
        c.held(2 * h)
        c.split(h, 3 * h)
        c.row(h, h)
        c.split(h, 2 * out)
        c.row(out, h)
    c.held(2 * h)
    _conv(c, h, merge * merge, out, bias=True)
    c.split(out, out)
    c.held(2 * out)
    c.split(out, 2 * inter)
    c.row(inter, out)
    return c, "Glm4vVisionModel (ViT + downsample + merger)"
