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
Every family here builds its tower and projector under it. Llama 3.2 Vision (mllama), which no vLLM after 0.10.1
builds, is split as SGLang 0.5.23 builds it (SPLIT_BY). Plan such a start with `--set vision_config=null`
(docs/weights.md): a config without a vision_config counts no tower.

A wrapper whose config has no vision_config object counts none: Gemma4Config's is optional (no tower; kvplan's
bundled gemma-4-31b keeps only text_config), and for the others a checkpoint saved by save_pretrained always writes
the one its class builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import ConfigError
from .fields import MAX_LAYERS, Fields
from .vision_gemma3n import GEMMA3N_AUDIO, audio_encoder_params, mobilenetv5_300m_params


@dataclass(frozen=True)
class Linear:
    """A tower linear vLLM 0.34 builds as a LinearBase with the model's quant_config (the weight alone; its bias stays
    in the float dtype): what an engine's online FP8 quantizes (configs/quant_online.py quantized_tower)."""
    inputs: int
    outputs: int
    row_parallel: bool  # a RowParallelLinear: its per-output-row scales are whole on every TP rank
    # False: vLLM 0.34 builds it without the quant_config: siglip.py SiglipMLP (sizes not % 64, which SGLang's
    # siglip.py quantizes: tower_unaligned), qwen3_omni_moe_thinker.py Qwen3OmniMoeAudioEncoder's layers
    aligned: bool = True
    replicated: bool = False  # a ReplicatedLinear: weight and scales whole on every TP rank


@dataclass(frozen=True)
class Tower:
    params: int  # the vision tower and the projector, as transformers 5.25 builds them
    whole: int  # of params, what vLLM 0.34 holds whole on every TP rank (mm_encoder_tp_mode "weights")
    what: str  # the modules, for notes
    split_by: str = ""  # the engine whose TP split `whole` follows where it is not vLLM 0.34 (SPLIT_BY)
    key: str = "vision_config"  # the config key whose absence drops the tower (NESTED_KEY)
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
        replicated = [m for m in chosen if m.replicated]  # counted in self.whole at `width`: at the quantized size
        whole_params = sum(m.inputs * m.outputs for m in replicated)
        held_rows += sum(m.outputs for m in replicated)
        whole = ((self.whole - whole_params) * width + int(round(whole_params * quant.bytes_per_weight)) + scales
                 + held_rows * quant.per_output_row_bytes)
        return (self.params - params) * width + quantized, whole, params, quantized

    def note(self, bytes_per_param: float, quantized: tuple[int, str] | None = None) -> str:
        held = ("holds all of them whole on every TP rank" if self.whole == self.params else
                f"holds {self.whole:,} of them whole on every TP rank and splits the rest")
        at = f"at {bytes_per_param:g} B"
        if quantized:
            at = f"{quantized[0]:,} of them (linear weights) {quantized[1]}, the rest {at}"
        at = f": {at}" if quantized else f" {at}"
        if self.key == "thinker_config":  # --set reaches the top level and the text model only (sources.py)
            return (f"vision tower counted: {self.what}, {self.params:,} parameters{at}; vLLM 0.34 {held}, and "
                    "skips the audio tower with --limit-mm-per-prompt 0 for audio and the vision tower with 0 for "
                    "image and video (kvplan cannot plan that start: --set does not reach thinker_config's towers; "
                    "give --weights)")
        if self.split_by:
            return (f"vision tower counted: {self.what}, {self.params:,} parameters{at}; "
                    f"{self.split_by} {held} (plan a text-only start with --set {self.key}=null)")
        return (f"vision tower counted: {self.what}, {self.params:,} parameters{at}; vLLM 0.34 "
                f"{held}, and skips the tower with --language-model-only or --limit-mm-per-prompt 0 for images (plan "
                f"that with --set {self.key}=null)")


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

    def replicated(self, i: int, o: int) -> None:
        """A ReplicatedLinear built with the quant_config, without bias: whole on every rank, and quantized."""
        self.params += i * o
        self.whole += i * o
        self.linears.append(Linear(i, o, False, replicated=True))

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
    """n CLIP / SigLIP encoder layers (modeling_siglip.py SiglipEncoderLayer, modeling_clip.py CLIPEncoderLayer; Llama 4's
    and MoonViT's layers have the same modules and splits):
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


def _built_layers(n: int, feature_layer: object, what: str) -> int:
    """The layers of an n-layer tower vLLM 0.34 builds for a feature layer (utils.py get_layer_index: n + index + 1
    for a negative index, the index itself otherwise; the deepest of a list)."""
    indexes = feature_layer if isinstance(feature_layer, list) and feature_layer else [feature_layer]
    if not all(isinstance(i, int) and not isinstance(i, bool) and -n <= i <= n for i in indexes):
        raise ConfigError(f"{what} {feature_layer!r} is not a layer of the {n}-layer vision tower")
    built = max(n + i + 1 if i < 0 else i for i in indexes)
    if built < 1:
        raise ConfigError(f"{what} {feature_layer!r} builds no layer of the vision tower")
    return built


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


# -- Qwen2.5-Omni, Qwen3-Omni: the thinker's vision and audio towers ----------------------------------------------

# transformers 5.25 qwen2_5_omni/configuration_qwen2_5_omni.py Qwen2_5OmniAudioEncoderConfig and
# qwen3_omni_moe/configuration_qwen3_omni_moe.py Qwen3OmniMoeAudioEncoderConfig (their vision configs' defaults are
# Qwen2.5-VL's and Qwen3-VL's: _QWEN2_5_VL, _QWEN3_VL)
_QWEN2_5_OMNI_AUDIO = {"num_mel_bins": 128, "encoder_layers": 32, "encoder_ffn_dim": 5120, "d_model": 1280,
                       "output_dim": 3584}
_QWEN3_OMNI_AUDIO = dict(_QWEN2_5_OMNI_AUDIO, downsample_hidden_size=480)


def _audio_layers(c: _Count, h: int, ffn: int, n: int, split: bool, k_bias: bool) -> None:
    """n Whisper-style audio encoder layers (self_attn_layer_norm, q/k/v/out_proj (k biased with k_bias, the others
    always), final_layer_norm, fc1 / fc2 with biases): split as vLLM 0.34 builds them (qkv QKVParallelLinear,
    out_proj / fc2 RowParallelLinear, fc1 ColumnParallelLinear; qwen3_omni_moe_thinker.py builds them without the
    quant_config: aligned=False), else all whole (plain nn.Linear)."""
    for _ in range(n):
        c.held(4 * h)
        if split:
            c.split(h, 3 * h, bias=True, aligned=False)
            c.row(h, h, bias=True, aligned=False)
            c.split(h, ffn, bias=True, aligned=False)
            c.row(ffn, h, bias=True, aligned=False)
        else:
            c.held(3 * h * h + (3 if k_bias else 2) * h + h * h + h + h * ffn + ffn + ffn * h + h)


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
    _encoder_layers(c, h, inter, v.int("num_hidden_layers"))  # the same layer shapes
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


# -- Gemma 3n (timm MobileNetV5, Conformer audio encoder: configs/vision_gemma3n.py) ----------------------------

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


# -- Llama 3.2 Vision (mllama) -----------------------------------------------------------------------------------

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


# -- InternVL ----------------------------------------------------------------------------------------------------

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
        if chat and dim // (h // heads) % 2 == 0:
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


# -- Kimi-VL (MoonViT) -------------------------------------------------------------------------------------------

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


# -- Phi-3 / 3.5-vision ------------------------------------------------------------------------------------------

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


# -- MiniCPM-V 2.5 / 2.6 / 4.0 / 4.5 ------------------------------------------------------------------------------

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


# -- Phi-4-multimodal (phi4mm remote code) ----------------------------------------------------------------------------

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


# the wrapper's model_type -> its counter; a wrapper not listed keeps the text model's count, with a note
VISION_TOWERS: dict[str, Callable[[dict, Fields, Fields], tuple[_Count, str]]] = {
    "gemma3": gemma3,
    "gemma4": gemma4,
    "gemma3n": gemma3n,
    "qwen2_5_vl": qwen2_5_vl,
    "qwen3_vl": qwen3_vl,
    "qwen3_vl_moe": qwen3_vl,
    "qwen3_5": qwen3_vl,
    "qwen3_5_moe": qwen3_vl,
    "llama4": llama4,
    "mistral3": mistral3,
    "llava": llava,
    "llava_next": llava,
    "mllama": mllama,
    "internvl_chat": internvl,
    "internvl": internvl,
    "NVLM_D": internvl,
    "h2ovl_chat": internvl,
    "skywork_chat": internvl,
    "kimi_vl": kimi_vl,
    "glm4v": glm4v,
    "glm4v_moe": glm4v,
    "phi3_v": phi3_v,
    "minicpmv": minicpmv,
    "minicpmo": minicpmo,
    "phi4mm": phi4mm,
    "qwen2_5_omni": qwen_omni,
    "qwen3_omni_moe": qwen_omni,
}

# wrapper architectures whose names do not end in ForConditionalGeneration (vLLM 0.34 registry.py)
_WRAPPER_CLASSES = {"InternVLChatModel", "Phi3VForCausalLM", "MiniCPMV", "Qwen2_5OmniModel", "NVLM_D", "H2OVLChatModel",
                    "SkyworkR1VChatModel", "MiniCPMO", "Phi4MMForCausalLM"}

# a wrapper whose tower's settings are not in vision_config -> the key that holds them (Phi-3-vision: img_processor)
NESTED_KEY = {"phi3_v": "img_processor", "phi4mm": "embd_layer", "qwen2_5_omni": "thinker_config",
              "qwen3_omni_moe": "thinker_config"}

# a wrapper vLLM 0.34 does not build -> the engine whose TP split its `whole` follows, for the note
SPLIT_BY = {"mllama": "vLLM 0.34 builds no Mllama (registry.py: last in 0.10.1); SGLang 0.5.23 mllama.py"}


def tower_key(model_type: object) -> str:
    """The config key a wrapper's tower is read from, whose null drops it (`--set KEY=null`)."""
    return NESTED_KEY.get(model_type, "vision_config")


def vision_tower(raw: dict, f: Fields) -> Tower | None:
    """The tower and projector of the wrapper `raw` (f: its text model's fields), None where the config has no
    vision_config (null), the wrapper is not one kvplan counts, or its architecture is a text-only class (a
    Gemma3ForCausalLM on a gemma3 config builds no tower). Raises NotCounted for a valid vision_config it does not
    count, ConfigError for a malformed one (not an object, a field of the wrong type or range)."""
    counter = VISION_TOWERS.get(raw.get("model_type"))
    key = tower_key(raw.get("model_type"))
    nested = raw.get(key)
    if counter is None or nested is None:
        return None
    if not isinstance(nested, dict):  # transformers 5.25 refuses it too (the config class's field type)
        raise ConfigError(f"{f.source}: {key!r} must be an object, or null for no tower, got {nested!r} "
                          f"(model_type {raw.get('model_type')!r})")
    arch = raw.get("architectures")
    first = arch[0] if isinstance(arch, list) and arch else None
    if isinstance(first, str) and not first.endswith("ForConditionalGeneration") and first not in _WRAPPER_CLASSES:
        return None
    defaults = _SIGLIP if raw.get("model_type") == "gemma3" else None
    source = f"{f.source}: {key}"
    v = Fields(nested, source, defaults, model_type=str(nested.get("model_type", raw.get("model_type"))))
    try:
        c, what = counter(raw, f, v)
    except NotCounted:
        raise
    except ConfigError as exc:  # a field of the vision_config: --set reaches it only as the whole object
        if not exc.message.startswith(source):
            raise
        raise ConfigError(exc.message, f"fix the config's {key}, or pass --set {key}=null to plan the text model "
                          "alone") from None
    return Tower(c.params, c.whole, what, SPLIT_BY.get(raw.get("model_type"), ""), key, tuple(c.linears))
