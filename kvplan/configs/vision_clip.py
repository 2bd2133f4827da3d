"""The CLIP and SigLIP towers (transformers 5.25 modeling_clip.py, modeling_siglip.py; vLLM 0.34 clip.py,
siglip.py) and the wrappers built on them: LLaVA / LLaVA-NeXT, Phi-3 / 3.5-vision (a CLIP ViT-L/14 at 336),
MiniCPM-V 2.5 / 2.6 / 4.0 / 4.5 and MiniCPM-o (SigLIP + resampler, MiniCPM-o's Whisper encoder), and Kimi-VL's
MoonViT (SigLIP-shaped layers). Each counter is `counter(raw, f, v) -> (_Count, what)` (configs/vision_towers.py
VISION_TOWERS); Gemma 3's and Phi-4-multimodal's SigLIP towers are counted by siglip() from their own modules.
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import MAX_LAYERS, Fields
from .vision_count import NotCounted, _audio_layers, _built_layers, _conv, _Count, _encoder_layers, _with


# -- SigLIP, CLIP (Gemma 3, LLaVA with a SigLIP or CLIP tower) -----------------------------------------------------

# transformers 5.25 siglip/configuration_siglip.py SiglipVisionConfig
_SIGLIP = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_channels": 3,
           "image_size": 224, "patch_size": 16, "vision_use_head": True, "num_attention_heads": 12}


# transformers 5.25 clip/configuration_clip.py CLIPVisionConfig
_CLIP = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_channels": 3,
         "image_size": 224, "patch_size": 32}


def siglip(v: Fields, layers: int | None = None, post_norm: bool = True) -> _Count:
    """SiglipVisionModel (transformers 5.25 modeling_siglip.py SiglipVisionTransformer): patch_embedding Conv2d with
    bias, position_embedding of (image_size / patch_size)^2 rows, the encoder layers, post_layernorm, and the
    attention-pooling head when vision_use_head (Gemma 3 turns it off). vLLM 0.34 siglip.py builds the same
    (Conv2dLayer and nn.Embedding whole). layers / post_norm: the layers vLLM builds (num_hidden_layers_override)
    and whether it keeps post_layernorm (require_post_norm)."""
    c = _Count()
    h, inter = v.int("hidden_size"), v.int("intermediate_size")
    patch, image = v.int("patch_size"), v.int("image_size")
    _conv(c, v.int("num_channels"), patch * patch, h, bias=True)
    c.held((image // patch) ** 2 * h)
    _encoder_layers(c, h, inter, layers or v.int("num_hidden_layers"), mlp_aligned=h % 64 == 0 and inter % 64 == 0)
    c.held(2 * h if post_norm else 0)
    if v.flag("vision_use_head", default=True):
        raise NotCounted("vision_use_head: the SigLIP pooling head is not in kvplan's count of the tower")
    return c


def clip(v: Fields, layers: int | None = None, post_norm: bool = True) -> _Count:
    """CLIPVisionModel (transformers 5.25 modeling_clip.py CLIPVisionTransformer): class_embedding, patch_embedding
    Conv2d without bias, position_embedding of (image_size / patch_size)^2 + 1 rows, pre_layrnorm, the encoder
    layers, post_layernorm. vLLM 0.34 clip.py holds the embeddings and norms whole; layers / post_norm as for
    siglip()."""
    c = _Count()
    h, inter = v.int("hidden_size"), v.int("intermediate_size")
    patch, image = v.int("patch_size"), v.int("image_size")
    c.held(h)
    _conv(c, v.int("num_channels"), patch * patch, h, bias=False)
    c.held(((image // patch) ** 2 + 1) * h)
    c.held(2 * h)
    _encoder_layers(c, h, inter, layers or v.int("num_hidden_layers"))
    c.held(2 * h if post_norm else 0)
    return c


def _llava_projector(c: _Count, raw: dict, f: Fields, vh: int) -> None:
    """LlavaMultiModalProjector (transformers 5.25 modeling_llava.py; vLLM 0.34 llava.py: linear_1
    ColumnParallelLinear, linear_2 RowParallelLinear): vision hidden x the feature layers -> text hidden -> text
    hidden, biased unless multimodal_projector_bias is false (LlavaConfig's default True)."""
    w = Fields(raw, f.source, {"multimodal_projector_bias": True, "vision_feature_layer": -2})
    layers = w.get("vision_feature_layer")
    n = len(layers) if isinstance(layers, list) else 1
    th, bias = f.int("hidden_size"), w.flag("multimodal_projector_bias", default=True)
    c.split(vh * n, th, bias)
    c.row(th, th, bias)


def llava(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """LlavaForConditionalGeneration / LlavaNextForConditionalGeneration: a CLIP (or SigLIP) tower and
    LlavaMultiModalProjector; LLaVA-NeXT adds image_newline [text hidden] (modeling_llava_next.py; vLLM 0.34
    llava_next.py, an nn.Parameter). vLLM 0.34 builds the tower only up to vision_feature_layer (llava.py
    init_vision_tower_for_llava, _get_num_hidden_layers: 23 of LLaVA-1.5's 24 CLIP layers for -2) and without
    post_layernorm (require_post_norm=False in llava.py and llava_next.py), and that is what is counted: the
    checkpoint's later layers are not loaded."""
    w = Fields(raw, f.source, {"vision_feature_layer": -2})
    if v.model_type == "siglip_vision_model":
        v, name, build = _with(v, _SIGLIP), "SigLIP", siglip
    elif v.model_type in ("clip_vision_model", raw.get("model_type")):  # LlavaConfig's default tower is CLIP's
        v, name, build = _with(v, _CLIP), "CLIP", clip
    else:
        raise NotCounted(f"vision_config model_type {v.model_type!r} is not one kvplan counts (CLIP, SigLIP)")
    feature = w.get("vision_feature_layer")
    layers = _built_layers(v.int("num_hidden_layers"), feature, f"{f.source}: vision_feature_layer")
    c = build(v, layers, post_norm=False)
    _llava_projector(c, raw, f, v.int("hidden_size"))
    if raw.get("model_type") == "llava_next":
        c.held(f.int("hidden_size"))
    return c, f"{name} + LlavaMultiModalProjector"


# -- Phi-3 / 3.5-vision --------------------------------------------------------------------------------------------

# vLLM 0.34 phi3v.py CLIP_VIT_LARGE_PATCH14_336_CONFIG: the tower's shape is fixed, not read from the config
_CLIP_L_336 = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24, "num_channels": 3,
               "image_size": 336, "patch_size": 14}


def phi3_v(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Phi3HDImageEmbedding (vLLM 0.34 phi3v.py; the remote code's the same): a CLIP ViT-L/14 at 336 (clip(),
    CLIP_VIT_LARGE_PATCH14_336_CONFIG), glb_GN and sub_GN of 4 x img_processor.image_dim_out, and img_projection:
    nn.Linear(4 x image_dim_out, text hidden) and nn.Linear(text hidden, text hidden), biased (nn.Linear: whole
    on every rank, as the GN parameters). vLLM builds the CLIP only up to img_processor.layer_idx (phi3v.py
    _init_img_processor: 24 + layer_idx + 1 layers for a negative one, layer_idx + 1 otherwise; -2 by default: 23),
    and keeps post_layernorm only with every layer (clip.py require_post_norm None): that is what is counted."""
    index = v.get("layer_idx", default=-2)
    if not isinstance(index, int) or isinstance(index, bool) or not -24 <= index < 24:
        raise ConfigError(f"{v.source} layer_idx {index!r} is not a layer of the 24-layer CLIP")
    layers = 24 + index + 1 if index < 0 else index + 1
    c = clip(Fields({}, v.source, _CLIP_L_336), layers, post_norm=layers == 24)
    dim, th = v.int("image_dim_out"), f.int("hidden_size")
    c.held(2 * 4 * dim + 4 * dim * th + th + th * th + th)
    return c, "CLIP ViT-L/14-336 + Phi-3-vision image projection"


# -- MiniCPM-V 2.5 / 2.6 / 4.0 / 4.5 -------------------------------------------------------------------------------

# the remote code's MiniCPMVConfig (MiniCPM-V 2.6, 4.0): drop_vision_last_layer defaults to True, and vision_config
# is a transformers SiglipVisionConfig (its defaults below, as in _SIGLIP)
_MINICPMV = {"drop_vision_last_layer": True, "query_num": 64}


def minicpmv(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """MiniCPM-V's vpm and resampler as vLLM 0.34 minicpmv.py builds them for 2.5, 2.6, 4.0 and 4.5 (the version by
    get_version_by_config: `version`, else 2.0 for hidden_size 2304 with query_num 64, else 2.5):
    Idefics2VisionTransformer (idefics2_vision_model.py: patch Conv2dLayer with bias, a position nn.Embedding of
    (image_size / patch_size)^2 rows, SigLIP's encoder layers, post_layernorm; the last layer dropped with
    drop_vision_last_layer, as the checkpoint saved it) and Resampler2_5 / Resampler4_5 (layers/resampler.py
    BaseResampler, whole on every rank: query [query_num, text hidden], kv_proj a ReplicatedLinear from the vision
    hidden without bias, nn.MultiheadAttention over the text hidden (in_proj and out_proj with biases), ln_q /
    ln_kv / ln_post and proj [text hidden, text hidden]; its sin-cos positions are computed). MiniCPM-V 2.0's
    timm tower is not counted."""
    w = Fields(raw, f.source, _MINICPMV)
    version = raw.get("version")
    if version is None:
        old = f.int("hidden_size") == 2304 and w.int("query_num") == 64
        version = 2.0 if old else 2.5
    if str(version) not in ("2.5", "2.6", "4.0", "4.5"):  # vLLM: tuple(int(x) for x in str(version).split("."))
        raise NotCounted(f"MiniCPM-V version {version!r}: kvplan counts the towers of 2.5, 2.6, 4.0 and 4.5")
    v = _with(v, _SIGLIP)
    c = _Count()
    h, patch = v.int("hidden_size"), v.int("patch_size")
    _conv(c, v.int("num_channels"), patch * patch, h, bias=True)
    c.held((v.int("image_size") // patch) ** 2 * h)
    _encoder_layers(c, h, v.int("intermediate_size"), v.int("num_hidden_layers") - w.flag("drop_vision_last_layer",
                                                                                              default=True))
    c.held(2 * h)
    e = f.int("hidden_size")
    if h != e:  # resampler.py BaseResampler: kv_proj a ReplicatedLinear with the quant_config (minicpmv.py passes it)
        c.replicated(h, e)
    c.held(w.int("query_num") * e + 3 * e * e + 3 * e + e * e + e + 3 * 2 * e + e * e)
    return c, f"SigLIP + Resampler (MiniCPM-V {version})"


# transformers 5.25 whisper/configuration_whisper.py WhisperConfig (MiniCPM-o's audio_config)
_WHISPER = {"num_mel_bins": 80, "encoder_layers": 4, "encoder_ffn_dim": 1536, "d_model": 384,
            "max_source_positions": 1500}


def minicpmo(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """MiniCPM-o as vLLM 0.34 minicpmo.py builds it: MiniCPMO.__new__ picks MiniCPMO2_6 (a MiniCPMV2_6; `version`
    absent: 2.6) or MiniCPMO4_5 (a MiniCPMV4_5), whose SigLIP tower and resampler minicpmv() counts; under
    _mark_tower_model(..., "audio") the apm, MiniCPMWhisperEncoder (transformers' WhisperEncoder: conv1
    num_mel_bins -> d_model and conv2 d_model -> d_model, kernel 3 with biases, embed_positions [max_source_positions,
    d_model], layers of WhisperAttention (k_proj without bias) and fc1 / fc2 with biases and two LayerNorms, a final
    layer_norm), and audio_projection_layer (MultiModalProjector: encoder_ffn_dim / 4 -> text hidden -> text
    hidden, biased nn.Linear); all of the audio part plain nn modules, whole on every rank. The TTS module's
    weights are dropped (hf_to_vllm_mapper "tts": None), not counted."""
    version = raw.get("version", 2.6)
    if str(version) not in ("2.6", "4.5"):
        raise NotCounted(f"MiniCPM-o version {version!r}: vLLM 0.34 serves 2.6 and 4.5")
    c, what = minicpmv(dict(raw, version=version), f, v)
    if not isinstance(raw.get("audio_config"), dict):
        raise NotCounted("MiniCPM-o has no audio_config object (its config class would build a default Whisper)")
    a = Fields(raw["audio_config"], v.source, _WHISPER)
    h, ffn, mel = a.int("d_model"), a.int("encoder_ffn_dim"), a.int("num_mel_bins")
    c.held(mel * 3 * h + h + h * 3 * h + h + a.int("max_source_positions") * h)
    _audio_layers(c, h, ffn, a.int("encoder_layers", maximum=MAX_LAYERS), split=False, k_bias=False)
    e = f.int("hidden_size")
    c.held(2 * h + (ffn // 4) * e + e + e * e + e)
    return c, f"{what} and the Whisper encoder + audio projection (MiniCPM-o)"


# -- Kimi-VL (MoonViT) ---------------------------------------------------------------------------------------------

# vLLM 0.34 transformers_utils/configs/moonvit.py MoonViTConfig (transformers 5.25 has no Kimi-VL classes)
_MOONVIT = {"patch_size": 14, "init_pos_emb_height": 64, "init_pos_emb_width": 64, "num_hidden_layers": 27,
            "hidden_size": 1152, "intermediate_size": 4304, "merge_kernel_size": [2, 2]}


def kimi_vl(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """MoonViT and KimiVLMultiModalProjector as vLLM 0.34 builds them (moonvit.py MoonVitPretrainedModel,
    kimi_vl.py): patch_embed.proj (Conv2dLayer with bias, 3 channels) and pos_emb [init_pos_emb_height,
    init_pos_emb_width, hidden] (Learnable2DInterpPosEmb), both whole; blocks of norm0 / norm1 (LayerNorm), wqkv
    (QKVParallelLinear with bias), wo (RowParallelLinear with bias), mlp.fc0 / fc1 (Column / RowParallelLinear with
    biases); final_layernorm; the projector's pre_norm (LayerNorm over the vision hidden), linear_1 (hidden x
    merge^2 -> the same) and linear_2 (-> text hidden), both ReplicatedLinear with biases: whole. The rotary table
    (Rope2DPosEmb) is computed, not loaded."""
    v = _with(v, _MOONVIT)
    c = _Count()
    h, inter, patch = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size")
    kernel = v.int_list("merge_kernel_size", 2, minimum=1) or _MOONVIT["merge_kernel_size"]
    _conv(c, 3, patch * patch, h, bias=True)
    c.held(v.int("init_pos_emb_height") * v.int("init_pos_emb_width") * h)
    _encoder_layers(c, h, inter, v.int("num_hidden_layers"))  # the same layer shapes
    m, th = h * kernel[0] * kernel[1], f.int("hidden_size")
    c.held(2 * h + 2 * h + m * m + m + m * th + th)
    return c, "MoonViT + KimiVLMultiModalProjector"
