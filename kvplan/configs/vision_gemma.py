"""The Gemma wrappers' towers: Gemma 3 (SigLIP + Gemma3MultiModalProjector), Gemma 4 (Gemma4VisionModel +
embed_vision, and its audio tower) and Gemma 3n (timm MobileNetV5 and the Conformer audio encoder, whose arithmetic
is configs/vision_gemma3n.py, + the embedders). Counted as transformers 5.25 builds them (modeling_gemma3.py,
modeling_gemma4.py, modeling_gemma3n.py), split as vLLM 0.34 does (gemma3_mm.py, gemma4_mm.py, gemma3n_mm.py);
`counter(raw, f, v) -> (_Count, what)` (configs/vision_towers.py VISION_TOWERS).
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .vision_clip import siglip
from .vision_count import NotCounted, _Count, _with
from .vision_gemma3n import GEMMA3N_AUDIO, audio_encoder_params, mobilenetv5_300m_params


# -- Gemma 3 (SigLIP) ----------------------------------------------------------------------------------------------

def gemma3(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Gemma3ForConditionalGeneration: SigLIP, and Gemma3MultiModalProjector (transformers 5.25 modeling_gemma3.py;
    vLLM 0.34 gemma3_mm.py the same): mm_input_projection_weight [vision hidden, text hidden] (an nn.Parameter,
    whole on every rank in vLLM) and mm_soft_emb_norm over the vision hidden size."""
    c = siglip(v)
    vh = v.int("hidden_size")
    c.held(vh * f.int("hidden_size") + vh)
    return c, "SigLIP + Gemma3MultiModalProjector"


# -- Gemma 4 -------------------------------------------------------------------------------------------------------

# transformers 5.25 gemma4/configuration_gemma4.py Gemma4VisionConfig
_GEMMA4 = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 16, "num_attention_heads": 12,
           "num_key_value_heads": 12, "head_dim": 64, "patch_size": 16, "position_embedding_size": 10 * 1024,
           "standardize": False, "use_clipped_linears": False}


def gemma4(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Gemma4VisionModel and embed_vision (transformers 5.25 modeling_gemma4.py): patch_embedder.input_proj
    (3 x patch^2 -> hidden, no bias) and its position_embedding_table [2, position_embedding_size, hidden]; layers
    of q/k/v/o_proj (no bias), q_norm / k_norm over head_dim (v_norm has no weight), a gated MLP without bias and
    four RMSNorms; Gemma4MultimodalEmbedder's embedding_projection (output_proj_dims, else hidden -> text hidden;
    its norm has no weight); and the checkpoint's buffers: std_bias / std_scale [hidden] with standardize, and
    with use_clipped_linears the four one-element input / output min / max of each of a layer's 7 linears.
    vLLM 0.34 gemma4_mm.py builds the tower with transformers' AutoModel and replaces every
    nn.Linear in it by a ReplicatedLinear (transformers/utils.py recursive_replace_linear, "replicate"), and
    embedding_projection is a ReplicatedLinear: the whole tower sits on every TP rank. An audio tower
    (audio_config) is counted with it (_gemma4_audio), whole as well."""
    v = _with(v, _GEMMA4)
    c = _Count()
    h, inter, patch, hd = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size"), v.int("head_dim")
    heads, kv = v.int("num_attention_heads"), v.int("num_key_value_heads")
    c.held(3 * patch * patch * h + 2 * v.int("position_embedding_size") * h)
    clips = 7 * 4 if v.flag("use_clipped_linears") else 0
    for _ in range(v.int("num_hidden_layers")):
        c.held(h * heads * hd + 2 * h * kv * hd + heads * hd * h + 2 * hd + 3 * h * inter + 4 * h + clips)
    c.held((2 * h if v.flag("standardize") else 0) + v.int("output_proj_dims", default=h) * f.int("hidden_size"))
    audio = raw.get("audio_config")
    if not isinstance(audio, dict):
        return c, "Gemma4VisionModel + embed_vision"
    c.held(_gemma4_audio(Fields(audio, v.source, _GEMMA4_AUDIO), f.int("hidden_size")))
    return c, ("Gemma4VisionModel + embed_vision, and Gemma4AudioModel + embed_audio (vLLM 0.34 skips the audio "
               "tower with --limit-mm-per-prompt 0 for audio: plan that with --set audio_config=null)")


# transformers 5.25 gemma4/configuration_gemma4.py Gemma4AudioConfig
_GEMMA4_AUDIO = {"hidden_size": 1024, "num_hidden_layers": 12, "num_attention_heads": 8,
                 "subsampling_conv_channels": [128, 32], "conv_kernel_size": 5, "use_clipped_linears": True,
                 "output_proj_dims": 1536}


def _gemma4_audio(a: Fields, text_hidden: int) -> int:
    """Gemma4AudioModel and embed_audio (transformers 5.25 modeling_gemma4.py), the checkpoint's tensors:
    subsample_conv_projection (two 3 x 3 Conv2d without bias, 1 -> c0 -> c1 channels, each with a LayerNorm weight,
    and input_proj_linear (c0 / 4) x c1 -> hidden); per layer two feed-forwards (hidden -> 4 hidden -> hidden, two
    RMSNorms), q/k/v/post (hidden x hidden), relative_k_proj and per_dim_scale [head_dim], the light conv
    (linear_start hidden -> 2 hidden, linear_end, a depthwise Conv1d of conv_kernel_size, two RMSNorms) and three
    RMSNorms; with use_clipped_linears the four one-element input / output min / max of each of a layer's 10
    Gemma4ClippableLinear; output_proj (hidden -> output_proj_dims, biased); embed_audio.embedding_projection
    (output_proj_dims -> text hidden; its norm has no weight). vLLM 0.34 gemma4_mm.py builds the tower with
    AutoModel and replaces its linears by ReplicatedLinear (recursive_replace_linear), and embedding_projection is
    a ReplicatedLinear: all of it whole on every TP rank, under _mark_tower_model(..., "audio")."""
    h, heads, kernel = a.int("hidden_size"), a.int("num_attention_heads"), a.int("conv_kernel_size")
    c0, c1 = a.int_list("subsampling_conv_channels", 2, minimum=1) or _GEMMA4_AUDIO["subsampling_conv_channels"]
    hd, out = h // heads, a.int("output_proj_dims")
    clips = 10 * 4 if a.flag("use_clipped_linears", default=True) else 0
    layer = (2 * (8 * h * h + 2 * h) + 4 * h * heads * hd + h * heads * hd + hd
             + 3 * h * h + h * kernel + 2 * h + 3 * h + clips)
    subsample = 9 * c0 + c0 + 9 * c0 * c1 + c1 + (c0 // 4) * c1 * h
    return subsample + a.int("num_hidden_layers") * layer + h * out + out + out * text_hidden


# -- Gemma 3n (timm MobileNetV5, Conformer audio encoder: configs/vision_gemma3n.py) -------------------------------

# transformers 5.25 gemma3n/configuration_gemma3n.py Gemma3nVisionConfig
_GEMMA3N_VISION = {"architecture": "mobilenetv5_300m_enc", "hidden_size": 2048, "vocab_size": 128}


def _gemma3n_embedder(c: _Count, m: Fields, text_hidden: int) -> None:
    """Gemma3nMultimodalEmbedder as vLLM 0.34 gemma3n_mm.py builds it: embedding a VocabParallelEmbedding
    (vocab_size x hidden, split over the ranks), hard / soft_embedding_norm RMSNorms [hidden] (whole),
    embedding_projection a RowParallelLinear hidden -> text hidden without bias and without the quant_config
    (split), embedding_post_projection_norm without a weight. transformers 5.25 builds the same tensors."""
    h = m.int("hidden_size")
    c.params += m.int("vocab_size") * h  # VocabParallelEmbedding: split like a column-parallel weight
    c.held(2 * h)
    c.row(h, text_hidden, aligned=False)


def gemma3n(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Gemma3nModel's vision_tower + embed_vision, and with an audio_config its audio_tower + embed_audio. The
    tower is timm's mobilenetv5_300m_enc (vision_gemma3n.py; another architecture or timm model_args are not
    counted); vLLM 0.34 gemma3n_mm.py builds both towers with transformers' AutoModel (every tensor whole on every
    TP rank, the audio one under _mark_tower_model(..., "audio")) and the embedders as _gemma3n_embedder."""
    v = _with(v, _GEMMA3N_VISION)
    arch = v.text("architecture", default="mobilenetv5_300m_enc")
    if arch != "mobilenetv5_300m_enc" or v.get("model_args") is not None:
        raise NotCounted(f"{v.source}: a Gemma 3n vision tower other than timm's mobilenetv5_300m_enc "
                         f"(architecture {arch!r}, model_args {v.get('model_args')!r})")
    c = _Count()
    c.held(mobilenetv5_300m_params())
    _gemma3n_embedder(c, v, f.int("hidden_size"))
    audio = raw.get("audio_config")
    if not isinstance(audio, dict):
        return c, "MobileNetV5 (timm mobilenetv5_300m_enc) + embed_vision"
    a = Fields(audio, f"{f.source}: audio_config", GEMMA3N_AUDIO, model_type="gemma3n_audio")
    try:
        encoder = audio_encoder_params(a)
        a.int("vocab_size")
    except ConfigError as exc:  # --set reaches audio_config only as the whole object
        raise ConfigError(exc.message, "fix the config's audio_config, or pass --set audio_config=null to plan "
                          "without the audio tower") from None
    if encoder is None:
        raise NotCounted(f"{a.source}: Gemma 3n audio subsampling convs other than 3 x 3 stride 2")
    c.held(encoder)
    _gemma3n_embedder(c, a, f.int("hidden_size"))
    return c, ("MobileNetV5 (timm mobilenetv5_300m_enc) + embed_vision, and Gemma3nAudioEncoder + embed_audio "
               "(vLLM 0.34 skips the audio tower with --limit-mm-per-prompt 0 for audio: plan that with --set "
               "audio_config=null)")
