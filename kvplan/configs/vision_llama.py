"""The Llama and Mistral towers: Llama 4 (Llama4VisionModel + Llama4MultiModalProjector), Llama 3.2 Vision (mllama:
no vLLM after 0.10.1 builds it, split as SGLang 0.5.23's mllama.py; configs/vision_towers.py SPLIT_BY) and
Mistral 3's Pixtral (PixtralVisionModel + Mistral3MultiModalProjector). Counted as transformers 5.25 builds them
(modeling_llama4.py, modeling_mllama.py, modeling_pixtral.py, modeling_mistral3.py); `counter(raw, f, v) ->
(_Count, what)` (configs/vision_towers.py VISION_TOWERS).
"""

from __future__ import annotations

from .fields import MAX_LAYERS, Fields
from .vision_count import NotCounted, _conv, _Count, _encoder_layers, _with


# -- Llama 4 -------------------------------------------------------------------------------------------------------

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
    _encoder_layers(c, h, inter, v.int("num_hidden_layers"))  # the same layer shapes
    if v.flag("multi_modal_projector_bias"):
        raise NotCounted("multi_modal_projector_bias: the adapter biases vLLM adds are not in kvplan's count")
    c.split(inter, v.int("projector_input_dim"))
    c.row(v.int("projector_output_dim"), v.int("projector_output_dim"))
    c.split(v.int("vision_output_dim"), f.int("hidden_size"))
    return c, "Llama4VisionModel + Llama4MultiModalProjector"


# -- Llama 3.2 Vision (mllama) -------------------------------------------------------------------------------------

# transformers 5.25 mllama/configuration_mllama.py MllamaVisionConfig (supported_aspect_ratios: the 8 of max_num_tiles
# 4 when absent)
_MLLAMA = {"hidden_size": 1280, "intermediate_size": 5120, "num_hidden_layers": 32, "num_global_layers": 8,
           "num_channels": 3, "image_size": 448, "patch_size": 14, "max_num_tiles": 4, "vision_output_dim": 7680,
           "supported_aspect_ratios": [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]}


def mllama(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """MllamaVisionModel and multi_modal_projector (transformers 5.25 modeling_mllama.py): patch_embedding Conv2d
    without bias, class_embedding, gated_positional_embedding (a gate, (image_size / patch_size)^2 + 1 positions and
    a tile_embedding of len(supported_aspect_ratios) + 1 rows of max_num_tiles x positions x hidden), pre / post
    tile embeddings (len(supported_aspect_ratios) + 1 rows of max_num_tiles x hidden and a gate each),
    layernorm_pre / layernorm_post, num_hidden_layers local and num_global_layers global layers (two LayerNorms,
    q/k/v/o_proj without biases, fc1 / fc2 with biases; a global layer adds gate_attn and gate_ffn), and the
    projector nn.Linear(vision_output_dim, text hidden) with bias. No vLLM release after 0.10.1 builds Mllama
    (vLLM 0.34 registry.py _PREVIOUSLY_SUPPORTED_MODELS: 0.10.2); the TP split is SGLang 0.5.23's mllama.py (the
    port of vLLM's): the patch embedding a ColumnParallelLinear (ColumnParallelConv2dPatch), qkv_proj
    QKVParallelLinear and proj RowParallelLinear (VisionAttention), fc1 ColumnParallelLinear, fc2
    RowParallelLinear, the embeddings, gates and LayerNorms whole, and multi_modal_projector a ReplicatedLinear
    (whole). SGLang's VisionAttention also builds qkv and proj biases the checkpoint lacks: not counted."""
    v = _with(v, _MLLAMA)
    c = _Count()
    h, inter, patch, image = (v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size"),
                              v.int("image_size"))
    tiles, ratios = v.int("max_num_tiles"), len(v.list("supported_aspect_ratios") or _MLLAMA["supported_aspect_ratios"])
    positions = (image // patch) ** 2 + 1
    c.split(v.int("num_channels") * patch * patch, h)
    c.held(h + 1 + positions * h + (ratios + 1) * tiles * positions * h + 2 * ((ratios + 1) * tiles * h + 1) + 4 * h)
    local, glob = v.int("num_hidden_layers"), v.int("num_global_layers", minimum=0, maximum=MAX_LAYERS)
    for gated in [False] * local + [True] * glob:
        c.held(4 * h + (2 if gated else 0))
        c.split(h, 3 * h)
        c.row(h, h)
        c.split(h, inter, bias=True)
        c.row(inter, h, bias=True)
    out = v.int("vision_output_dim")
    c.held(out * f.int("hidden_size") + f.int("hidden_size"))
    return c, "MllamaVisionModel + multi_modal_projector"


# -- Mistral 3 (Pixtral) -------------------------------------------------------------------------------------------

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
    mistral3_projector(c, raw, f, h)
    return c, "PixtralVisionModel + Mistral3MultiModalProjector"


def mistral3_projector(c: _Count, raw: dict, f: Fields, h: int) -> None:
    """Mistral3MultiModalProjector over a vision hidden h (see mistral3): the norm and patch_merger.merging_layer
    whole, linear_1 split, linear_2 row-parallel."""
    w = Fields(raw, f.source, {"spatial_merge_size": 2, "multimodal_projector_bias": False, "vision_feature_layer": -1})
    merge = w.int("spatial_merge_size")
    layers = w.get("vision_feature_layer")
    th, bias = f.int("hidden_size"), w.flag("multimodal_projector_bias")
    c.held(h + h * merge * merge * h)
    c.split(h * (len(layers) if isinstance(layers, list) else 1), th, bias)
    c.row(th, th, bias)
