"""InternViT and its projector: the remote-code InternVLChatModel wrappers (internvl_chat, NVLM_D, h2ovl_chat,
skywork_chat; vLLM 0.34 internvl.py, intern_vit.py, nvlm_d.py, h2ovl.py, skyworkr1v.py) and transformers 5.25's
internvl (modeling_internvl.py; vLLM 0.34 interns1.py, interns1_vit.py). `counter(raw, f, v) -> (_Count, what)`
(configs/vision_towers.py VISION_TOWERS).
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .vision_count import NotCounted, _conv, _Count, _with


# -- InternVL ------------------------------------------------------------------------------------------------------

# transformers 5.25 internvl/configuration_internvl.py InternVLVisionConfig (internvl_chat's remote-code
# InternVisionConfig has no defaults here: its configs write every field read below)
_INTERNVL = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
             "attention_bias": False, "use_qk_norm": False, "norm_type": "layer_norm", "image_size": 448,
             "patch_size": 14, "num_channels": 3, "use_mask_token": False,
             "use_absolute_position_embeddings": True, "use_mean_pooling": True}


def _side(v: Fields, name: str) -> int:
    """image_size / patch_size as an int or a square [h, w] (InternVLVisionConfig writes a pair)."""
    value = v.get(name)
    if isinstance(value, list) and len(value) == 2 and value[0] == value[1]:
        return v.check_int(name, value[0])
    return v.int(name)


def _need(v: Fields, *names: str) -> None:
    for name in names:
        if v.get(name) is None:
            raise NotCounted(f"vision_config has no {name!r}")


def vllm_splits_attention(heads: int) -> bool:
    """Whether kvplan counts InternViT's qkv / proj split over TP as vLLM 0.34 builds them (intern_vit.py
    InternParallelAttention, whole under data parallelism where TP does not divide the heads): for an even head
    count (an odd one, InternViT-6B's 25, is whole at any even TP)."""
    return heads % 2 == 0


# the InternViT wrappers vLLM 0.34 builds as InternVLChatModel (remote code: vision_config holds every field)
_INTERNVIT_CHAT = ("internvl_chat", "NVLM_D", "h2ovl_chat", "skywork_chat")


def internvl(raw: dict, f: Fields, v: Fields) -> tuple[_Count, str]:
    """InternViT and its projector (mlp1: a LayerNorm over vision hidden x (1 / downsample_ratio)^2, a biased linear
    to the text hidden and one text hidden -> text hidden), as vLLM 0.34 builds them.

    internvl_chat (remote code; vLLM 0.34 internvl.py InternVLChatModel, intern_vit.py InternVisionModel): class
    embedding, patch embedding (Conv2dLayer with bias, 3 channels), (image_size / patch_size)^2 + 1 positions;
    layers of norm1 / norm2 (norm_type layer_norm: weight and bias; rms_norm: weight), ls1 / ls2, qkv
    (QKVParallelLinear, biased with qkv_bias), q_norm / k_norm over hidden with qk_normalization (RMSNorm, whole),
    proj (RowParallelLinear with bias), fc1 / fc2 with biases (Column / RowParallelLinear); no final norm; mlp1 of
    nn.LayerNorm and nn.Linear, whole on every rank. InternParallelAttention falls back to data parallelism where TP
    does not divide the heads: for an odd count (InternViT-6B's 25) qkv and proj are whole at any even TP, counted
    so here (InternMLP still splits).

    internvl (transformers 5.25 modeling_internvl.py InternVLVisionModel + InternVLMultiModalProjector; vLLM 0.34
    registry.py builds it as interns1.py InternS1ForConditionalGeneration, interns1_vit.py): cls_token,
    mask_token with use_mask_token, patch Conv2d with bias, position_embeddings with
    use_absolute_position_embeddings; layers of layernorm_before / after, lambda_1 / lambda_2, q/k/v_proj (biased
    with attention_bias), q_norm / k_norm over hidden with use_qk_norm, projection_layer with bias, fc1 / fc2 with
    biases; a final LayerNorm unless use_mean_pooling. vLLM's attention linears are nn.Linear (whole), fc1 / fc2
    Column / RowParallelLinear, the projector nn.Linear (whole).

    The other InternViT wrappers vLLM 0.34 builds as an InternVLChatModel: H2OVL (h2ovl.py H2OVLChatModel, the same
    modules), NVLM-D (nvlm_d.py NVLM_D_Model: InternVisionModel with num_dummy_heads=7, so qkv, q_norm / k_norm and
    proj span heads + 7 heads of zeros, which vLLM holds; its mlp1 is a LayerNorm and nn.Linear to the text
    intermediate_size and back to the text hidden, both without bias) and Skywork-R1V (skyworkr1v.py: mlp1's two
    linears ReplicatedLinear with biases, the same shapes as InternVL's).

    The remote-code wrappers build InternViT only up to select_layer (internvl.py, h2ovl.py, nvlm_d.py,
    skyworkr1v.py _init_vision_model: num_hidden_layers + select_layer + 1 layers, InternVLChatConfig's default -1:
    every layer), and that many are counted; interns1.py builds every layer of the transformers format."""
    chat = raw.get("model_type") in _INTERNVIT_CHAT
    if chat:
        _need(v, "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "image_size",
              "patch_size", "qkv_bias", "qk_normalization", "norm_type")
    else:
        v = _with(v, _INTERNVL)
    w = Fields(raw, f.source, {"downsample_ratio": 0.5})
    c = _Count()
    h, inter, heads = v.int("hidden_size"), v.int("intermediate_size"), v.int("num_attention_heads")
    patch, image = _side(v, "patch_size"), _side(v, "image_size")
    norm = v.text("norm_type")
    if norm not in ("layer_norm", "rms_norm"):
        raise NotCounted(f"vision_config norm_type {norm!r} is not layer_norm or rms_norm")
    norm_params = 2 * h if norm == "layer_norm" else h
    bias = v.flag("qkv_bias" if chat else "attention_bias")
    qk_norm = v.flag("qk_normalization" if chat else "use_qk_norm")
    layers = v.int("num_hidden_layers")
    if chat:  # the layers up to select_layer (vLLM 0.34 internvl.py InternVLChatModel._init_vision_model)
        select = Fields(raw, f.source, {"select_layer": -1}).get("select_layer")
        if not isinstance(select, int) or isinstance(select, bool) or not -layers <= select < layers:
            raise ConfigError(f"{f.source}: select_layer {select!r} is not a layer of the {layers}-layer vision tower")
        layers = layers + select + 1 if select < 0 else select + 1
    dim = (heads + (7 if raw.get("model_type") == "NVLM_D" else 0)) * (h // heads)  # nvlm_d.py num_dummy_heads
    c.held(h * (2 if not chat and v.flag("use_mask_token") else 1))
    _conv(c, 3 if chat else v.int("num_channels"), patch * patch, h, bias=True)
    if chat or v.flag("use_absolute_position_embeddings", default=True):
        c.held(((image // patch) ** 2 + 1) * h)
    for _ in range(layers):
        c.held(2 * norm_params + 2 * h + (2 * dim if qk_norm else 0))
        if chat and vllm_splits_attention(dim // (h // heads)):
            c.split(h, 3 * dim, bias)
            c.row(dim, h, bias=True)
        else:
            c.held(3 * h * dim + (3 * dim if bias else 0) + dim * h + h)
        c.split(h, inter, bias=True)
        c.row(inter, h, bias=True)
    if not chat and not v.flag("use_mean_pooling", default=True):
        c.held(2 * h)
    ratio = w.number("downsample_ratio")
    m, th = h * int(1 / ratio) ** 2, f.int("hidden_size")
    if raw.get("model_type") == "NVLM_D":
        ti = f.int("intermediate_size")
        c.held(2 * m + m * ti + ti * th)
    elif raw.get("model_type") == "skywork_chat":  # skyworkr1v.py _init_mlp1: ReplicatedLinears with the quant_config
        c.held(2 * m + th + th)
        c.replicated(m, th)
        c.replicated(th, th)
    else:
        c.held(2 * m + m * th + th + th * th + th)
    return c, ("InternViT + mlp1" if chat else "InternVLVisionModel + InternVLMultiModalProjector")
