"""The vision tower and multimodal projector of an image-text wrapper, counted from its vision_config.

kvplan's parameter count is the text model's (configs/params*.py); a wrapper's checkpoint also holds the image
encoder and the projector into the text model, and vLLM 0.34 loads them on every GPU unless images are off. This
module counts them module by module as transformers 5.25 builds them, for the families below (one counter a
wrapper model_type, VISION_TOWERS), and says which of their parameters vLLM 0.34 holds whole on every TP rank under
its default `mm_encoder_tp_mode` "weights" (config/multimodal.py): the tower's linears are QKVParallelLinear /
MergedColumnParallelLinear / ColumnParallelLinear (split, bias too) and RowParallelLinear (weight split, bias
whole: layers/linear.py); patch convolutions (layers/conv.py Conv2dLayer / Conv3dLayer), position embeddings,
class embeddings, LayerNorm / RMSNorm weights and any nn.Linear / ReplicatedLinear are whole. With
`--mm-encoder-tp-mode data`, or where a family passes its vision heads and TP does not divide them (models/vision.py
is_vit_use_data_parallel falls back to data parallelism), every tower linear is whole on every rank: not modelled.

vLLM 0.34 skips the modules a model builds under `_mark_tower_model` (models/interfaces.py SupportsMultiModal:
StageMissingLayer) when `--limit-mm-per-prompt` is 0 for every image modality or `--language-model-only` is set
(config/multimodal.py MultiModalConfig.get_limit_per_prompt answers 0), and on every pipeline stage but the first.
Every family here builds its tower and projector under it. Plan such a start with `--set vision_config=null`
(docs/weights.md): a config without a vision_config counts no tower.

A wrapper whose config has no vision_config object counts none: Gemma4Config's is optional (no tower; kvplan's
bundled gemma-4-31b keeps only text_config), and for the others a checkpoint saved by save_pretrained always writes
the one its class builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import ConfigError
from .fields import Fields


@dataclass(frozen=True)
class Linear:
    """A tower linear vLLM 0.34 builds as a LinearBase with the model's quant_config (the weight alone; its bias stays
    in the float dtype): what an engine's online FP8 quantizes (configs/quant_online.py quantized_tower)."""
    inputs: int
    outputs: int
    row_parallel: bool  # a RowParallelLinear: its per-output-row scales are whole on every TP rank
    aligned: bool = True  # False: vLLM 0.34 siglip.py SiglipMLP builds it without the quant_config (sizes not % 64)


@dataclass(frozen=True)
class Tower:
    params: int  # the vision tower and the projector, as transformers 5.25 builds them
    whole: int  # of params, what vLLM 0.34 holds whole on every TP rank (mm_encoder_tp_mode "weights")
    what: str  # the modules, for notes
    linears: tuple[Linear, ...] = ()  # of params, the quantizable linears' weights

    def sized(self, width: int, quant=None, unaligned: bool = False) -> tuple[int, int, int, int]:
        """(bytes, bytes whole on every TP rank, parameters quantized, their bytes) with the float parameters at
        `width` B and, under an engine's online quantization (quant: its QuantBytes), the linears' weights in its
        layout: bytes_per_weight each, per_tensor_bytes a module (whole on every rank, as the text model's), and
        per_output_row_bytes an output row (whole for a row-parallel module). unaligned: the linears vLLM builds
        without the quant_config quantized too (the engine's own tower builds them with it)."""
        if quant is None:
            return self.params * width, self.whole * width, 0, 0
        chosen = [m for m in self.linears if m.aligned or unaligned]
        params = sum(m.inputs * m.outputs for m in chosen)
        rows = sum(m.outputs for m in chosen)
        held_rows = sum(m.outputs for m in chosen if m.row_parallel) if quant.row_scales_whole else 0
        scales = len(chosen) * quant.per_tensor_bytes
        quantized = int(round(params * quant.bytes_per_weight)) + scales + rows * quant.per_output_row_bytes
        whole = self.whole * width + scales + held_rows * quant.per_output_row_bytes
        return (self.params - params) * width + quantized, whole, params, quantized

    def note(self, bytes_per_param: float, quantized: tuple[int, str] | None = None) -> str:
        held = ("holds all of them whole on every TP rank" if self.whole == self.params else
                f"holds {self.whole:,} of them whole on every TP rank and splits the rest")
        at = f"at {bytes_per_param:g} B"
        if quantized:
            at = f"{quantized[0]:,} of them (linear weights) {quantized[1]}, the rest {at}"
        at = f": {at}" if quantized else f" {at}"
        return (f"vision tower counted: {self.what}, {self.params:,} parameters{at}; vLLM 0.34 "
                f"{held}, and skips the tower with --language-model-only or --limit-mm-per-prompt 0 for images (plan "
                "that with --set vision_config=null)")


class _Count:
    """Parameters added module by module, with vLLM 0.34's TP rule for each."""

    def __init__(self):
        self.params = self.whole = 0
        self.linears: list[Linear] = []

    def split(self, i: int, o: int, bias: bool = False, aligned: bool = True) -> None:
        """A column-parallel linear (QKVParallelLinear, MergedColumnParallelLinear, ColumnParallelLinear): weight
        and bias split over the ranks."""
        self.params += i * o + (o if bias else 0)
        self.linears.append(Linear(i, o, False, aligned))

    def row(self, i: int, o: int, bias: bool = False, aligned: bool = True) -> None:
        """A RowParallelLinear: weight split, its bias ([output_size]) whole on every rank (layers/linear.py)."""
        self.params += i * o + (o if bias else 0)
        self.whole += o if bias else 0
        self.linears.append(Linear(i, o, True, aligned))

    def held(self, n: int) -> None:
        """Whole on every rank: a norm, a convolution, an embedding, an nn.Parameter, an nn.Linear."""
        self.params += n
        self.whole += n


class NotCounted(ConfigError):
    """A valid vision_config whose tower kvplan does not count (a pooling head, adapter biases, a tower class it has no
    count of): the estimate keeps the text model's weights, with a note. A malformed value (a negative depth, a
    string where a number goes) is a ConfigError like any other field's."""


def _with(v: Fields, defaults: dict) -> Fields:
    """The vision_config's fields over a tower class's defaults, keeping its model_type for messages."""
    return Fields(v.raw, v.source, defaults, model_type=v.model_type)


def _conv(c: _Count, channels: int, kernel: int, out: int, bias: bool) -> None:
    c.held(channels * kernel * out + (out if bias else 0))


# -- SigLIP (Gemma 3, LLaVA with a SigLIP tower) ------------------------------------------------------------------

# transformers 5.25 siglip/configuration_siglip.py SiglipVisionConfig
_SIGLIP = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_channels": 3,
           "image_size": 224, "patch_size": 16, "vision_use_head": True, "num_attention_heads": 12}
# transformers 5.25 clip/configuration_clip.py CLIPVisionConfig
_CLIP = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_channels": 3,
         "image_size": 224, "patch_size": 32}


def _encoder_layers(c: _Count, h: int, inter: int, n: int, mlp_aligned: bool = True) -> None:
    """n CLIP / SigLIP encoder layers (modeling_siglip.py SiglipEncoderLayer, modeling_clip.py CLIPEncoderLayer):
    layer_norm1 / layer_norm2 (weight and bias), q/k/v_proj and out_proj with biases, fc1 / fc2 with biases.
    vLLM 0.34 siglip.py / clip.py: qkv_proj QKVParallelLinear, out_proj and fc2 RowParallelLinear, fc1
    ColumnParallelLinear, the LayerNorms whole. mlp_aligned: False where vLLM's SiglipMLP builds fc1 / fc2 without
    the quant_config (siglip.py: hidden or intermediate size not a multiple of 64, but for bitsandbytes / torchao)."""
    for _ in range(n):
        c.held(4 * h)
        c.split(h, 3 * h, bias=True)
        c.row(h, h, bias=True)
        c.split(h, inter, bias=True, aligned=mlp_aligned)
        c.row(inter, h, bias=True, aligned=mlp_aligned)


def siglip(v: Fields) -> _Count:
    """SiglipVisionModel (transformers 5.25 modeling_siglip.py SiglipVisionTransformer): patch_embedding Conv2d with
    bias, position_embedding of (image_size / patch_size)^2 rows, the encoder layers, post_layernorm, and the
    attention-pooling head when vision_use_head (Gemma 3 turns it off). vLLM 0.34 siglip.py builds the same
    (Conv2dLayer and nn.Embedding whole)."""
    c = _Count()
    h, inter = v.int("hidden_size"), v.int("intermediate_size")
    patch, image = v.int("patch_size"), v.int("image_size")
    _conv(c, v.int("num_channels"), patch * patch, h, bias=True)
    c.held((image // patch) ** 2 * h)
    _encoder_layers(c, h, inter, v.int("num_hidden_layers"), mlp_aligned=h % 64 == 0 and inter % 64 == 0)
    c.held(2 * h)
    if v.flag("vision_use_head", default=True):
        raise NotCounted("vision_use_head: the SigLIP pooling head is not in kvplan's count of the tower")
    return c


def clip(v: Fields) -> _Count:
    """CLIPVisionModel (transformers 5.25 modeling_clip.py CLIPVisionTransformer): class_embedding, patch_embedding
    Conv2d without bias, position_embedding of (image_size / patch_size)^2 + 1 rows, pre_layrnorm, the encoder
    layers, post_layernorm. vLLM 0.34 clip.py holds the embeddings and norms whole."""
    c = _Count()
    h, inter = v.int("hidden_size"), v.int("intermediate_size")
    patch, image = v.int("patch_size"), v.int("image_size")
    c.held(h)
    _conv(c, v.int("num_channels"), patch * patch, h, bias=False)
    c.held(((image // patch) ** 2 + 1) * h)
    c.held(2 * h)
    _encoder_layers(c, h, inter, v.int("num_hidden_layers"))
    c.held(2 * h)
    return c


def gemma3(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Gemma3ForConditionalGeneration: SigLIP, and Gemma3MultiModalProjector (transformers 5.25 modeling_gemma3.py;
    vLLM 0.34 gemma3_mm.py the same): mm_input_projection_weight [vision hidden, text hidden] (an nn.Parameter,
    whole on every rank in vLLM) and mm_soft_emb_norm over the vision hidden size."""
    c = siglip(v)
    vh = v.int("hidden_size")
    c.held(vh * f.int("hidden_size") + vh)
    return c, "SigLIP + Gemma3MultiModalProjector"


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
    _get_num_hidden_layers: 23 of LLaVA-1.5's 24 CLIP layers, no post_layernorm), which is not modelled: the count
    is the checkpoint's."""
    if v.model_type == "siglip_vision_model":
        v = _with(v, _SIGLIP)
        c, name = siglip(v), "SigLIP"
    elif v.model_type in ("clip_vision_model", raw.get("model_type")):  # LlavaConfig's default tower is CLIP's
        v = _with(v, _CLIP)
        c, name = clip(v), "CLIP"
    else:
        raise NotCounted(f"vision_config model_type {v.model_type!r} is not one kvplan counts (CLIP, SigLIP)")
    _llava_projector(c, raw, f, v.int("hidden_size"))
    if raw.get("model_type") == "llava_next":
        c.held(f.int("hidden_size"))
    return c, f"{name} + LlavaMultiModalProjector"


# -- Qwen2.5-VL, Qwen3-VL, Qwen3.5 -----------------------------------------------------------------------------

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
    for _ in range(v.int("depth")):
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
    for _ in range(v.int("depth")):
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


# -- Llama 4 ---------------------------------------------------------------------------------------------------

# transformers 5.25 llama4/configuration_llama4.py Llama4VisionConfig
_LLAMA4 = {"hidden_size": 768, "intermediate_size": 5632, "num_hidden_layers": 34, "num_channels": 3,
           "image_size": 448, "patch_size": 14, "vision_output_dim": 7680, "projector_input_dim": 4096,
           "projector_output_dim": 4096, "multi_modal_projector_bias": False}


def llama4(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """Llama4VisionModel and Llama4MultiModalProjector (transformers 5.25 modeling_llama4.py): the unfold
    convolution's linear (channels x patch^2 -> hidden, no bias), class_embedding, positional_embedding_vlm of
    (image_size / patch_size)^2 + 1 rows, layernorm_pre / layernorm_post, layers of two LayerNorms, q/k/v/o_proj
    with biases and fc1 / fc2 with biases, the pixel-shuffle adapter (fc1 intermediate_size -> projector_input_dim,
    fc2 projector_output_dim -> projector_output_dim, no biases), and the projector's linear_1 (vision_output_dim
    -> text hidden, no bias). vLLM 0.34 mllama4.py: the unfold linear, fc1 and linear_1 ColumnParallelLinear,
    qkv_proj QKVParallelLinear, o_proj / fc2 RowParallelLinear; class and position embeddings and LayerNorms
    whole. vLLM biases the adapter by multi_modal_projector_bias (false in Llama 4's configs), transformers
    never."""
    v = _with(v, _LLAMA4)
    c = _Count()
    h, inter, patch, image = (v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size"),
                              v.int("image_size"))
    c.split(v.int("num_channels") * patch * patch, h)
    c.held(h + ((image // patch) ** 2 + 1) * h + 4 * h)
    for _ in range(v.int("num_hidden_layers")):
        c.held(4 * h)
        c.split(h, 3 * h, bias=True)
        c.row(h, h, bias=True)
        c.split(h, inter, bias=True)
        c.row(inter, h, bias=True)
    if v.flag("multi_modal_projector_bias"):
        raise NotCounted("multi_modal_projector_bias: the adapter biases vLLM adds are not in kvplan's count")
    c.split(inter, v.int("projector_input_dim"))
    c.row(v.int("projector_output_dim"), v.int("projector_output_dim"))
    c.split(v.int("vision_output_dim"), f.int("hidden_size"))
    return c, "Llama4VisionModel + Llama4MultiModalProjector"


# -- Mistral 3 (Pixtral) -----------------------------------------------------------------------------------------

# transformers 5.25 pixtral/configuration_pixtral.py PixtralVisionConfig
_PIXTRAL = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24, "num_channels": 3,
            "patch_size": 16}


def mistral3(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """PixtralVisionModel and Mistral3MultiModalProjector (transformers 5.25 modeling_pixtral.py,
    modeling_mistral3.py): patch_conv Conv2d without bias, ln_pre RMSNorm, layers of two RMSNorms, q/k/v/o_proj
    (hidden x hidden, no bias) and a gated MLP without bias; the projector's norm (RMSNorm over the vision hidden),
    patch_merger.merging_layer (vision hidden x spatial_merge_size^2 -> vision hidden, no bias), linear_1 (vision
    hidden x the feature layers -> text hidden) and linear_2 (text hidden -> text hidden), biased with
    multimodal_projector_bias (Mistral3Config's default false). vLLM 0.34 pixtral.py PixtralHFVisionModel:
    Conv2dLayer and RMSNorms whole, qkv_proj QKVParallelLinear, o_proj / down_proj RowParallelLinear, gate_up_proj
    MergedColumnParallelLinear; mistral3.py Mistral3MultiModalProjector: norm and merging_layer (an nn.Linear)
    whole, linear_1 ColumnParallelLinear, linear_2 RowParallelLinear."""
    v = _with(v, _PIXTRAL)
    w = Fields(raw, f.source, {"spatial_merge_size": 2, "multimodal_projector_bias": False, "vision_feature_layer": -1})
    c = _Count()
    h, inter, patch = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size")
    _conv(c, v.int("num_channels"), patch * patch, h, bias=False)
    c.held(h)
    for _ in range(v.int("num_hidden_layers")):
        c.held(2 * h)
        c.split(h, 3 * h)
        c.row(h, h)
        c.split(h, 2 * inter)
        c.row(inter, h)
    merge = w.int("spatial_merge_size")
    layers = w.get("vision_feature_layer")
    th, bias = f.int("hidden_size"), w.flag("multimodal_projector_bias")
    c.held(h + h * merge * merge * h)
    c.split(h * (len(layers) if isinstance(layers, list) else 1), th, bias)
    c.row(th, th, bias)
    return c, "PixtralVisionModel + Mistral3MultiModalProjector"


# -- Gemma 4 ---------------------------------------------------------------------------------------------------

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
    (audio_config) is not counted."""
    v = _with(v, _GEMMA4)
    c = _Count()
    h, inter, patch, hd = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size"), v.int("head_dim")
    heads, kv = v.int("num_attention_heads"), v.int("num_key_value_heads")
    c.held(3 * patch * patch * h + 2 * v.int("position_embedding_size") * h)
    clips = 7 * 4 if v.flag("use_clipped_linears") else 0
    for _ in range(v.int("num_hidden_layers")):
        c.held(h * heads * hd + 2 * h * kv * hd + heads * hd * h + 2 * hd + 3 * h * inter + 4 * h + clips)
    c.held((2 * h if v.flag("standardize") else 0) + v.int("output_proj_dims", default=h) * f.int("hidden_size"))
    audio = " (audio tower not counted)" if isinstance(raw.get("audio_config"), dict) else ""
    return c, "Gemma4VisionModel + embed_vision" + audio


# the wrapper's model_type -> its counter; a wrapper not listed keeps the text model's count, with a note
VISION_TOWERS: dict[str, Callable[[dict, Fields, Fields], tuple[_Count, str]]] = {
    "gemma3": gemma3,
    "gemma4": gemma4,
    "qwen2_5_vl": qwen2_5_vl,
    "qwen3_vl": qwen3_vl,
    "qwen3_vl_moe": qwen3_vl,
    "qwen3_5": qwen3_vl,
    "qwen3_5_moe": qwen3_vl,
    "llama4": llama4,
    "mistral3": mistral3,
    "llava": llava,
    "llava_next": llava,
}


def vision_tower(raw: dict, f: Fields) -> Tower | None:
    """The tower and projector of the wrapper `raw` (f: its text model's fields), None where the config has no
    vision_config (null), the wrapper is not one kvplan counts, or its architecture is a text-only class (a
    Gemma3ForCausalLM on a gemma3 config builds no tower). Raises NotCounted for a valid vision_config it does not
    count, ConfigError for a malformed one (not an object, a field of the wrong type or range)."""
    counter = VISION_TOWERS.get(raw.get("model_type"))
    nested = raw.get("vision_config")
    if counter is None or nested is None:
        return None
    if not isinstance(nested, dict):  # transformers 5.25 refuses it too (the config class's vision_config field type)
        raise ConfigError(f"{f.source}: 'vision_config' must be an object, or null for no tower, got {nested!r} "
                          f"(model_type {raw.get('model_type')!r})")
    arch = raw.get("architectures")
    first = arch[0] if isinstance(arch, list) and arch else None
    if isinstance(first, str) and not first.endswith("ForConditionalGeneration"):
        return None
    defaults = _SIGLIP if raw.get("model_type") == "gemma3" else None
    source = f"{f.source}: vision_config"
    v = Fields(nested, source, defaults, model_type=str(nested.get("model_type", raw.get("model_type"))))
    try:
        c, what = counter(raw, f, v)
    except NotCounted:
        raise
    except ConfigError as exc:  # a field of the vision_config: --set reaches it only as the whole object
        if not exc.message.startswith(source):
            raise
        raise ConfigError(exc.message, "fix the config's vision_config, or pass --set vision_config=null to plan the "
                          "text model alone") from None
    return Tower(c.params, c.whole, what, tuple(c.linears))
