"""How kvplan counts a vision tower and projector (configs/vision_towers.py): the result (Tower, with the quantizable
Linear weights), the counter every tower family adds its modules to (_Count, with vLLM 0.34's TP rule for each),
NotCounted for a valid tower kvplan does not count, and the layer builders several families share (CLIP / SigLIP
encoder layers, Whisper-style audio encoder layers, the layers built for a feature layer).

The TP rule: which parameters vLLM 0.34 holds whole on every TP rank under its default `mm_encoder_tp_mode`
"weights" (config/multimodal.py): the tower's linears are QKVParallelLinear / MergedColumnParallelLinear /
ColumnParallelLinear (split, bias too) and RowParallelLinear (weight split, bias whole: layers/linear.py); patch
convolutions (layers/conv.py Conv2dLayer / Conv3dLayer), position embeddings, class embeddings, LayerNorm / RMSNorm
weights and any nn.Linear / ReplicatedLinear are whole. With `--mm-encoder-tp-mode data`, or where a family passes
its vision heads and TP does not divide them (models/vision.py is_vit_use_data_parallel falls back to data
parallelism: kimi_k25.py and muse_glimmer.py only), every tower linear is whole on every rank: the data mode is
applied on top of this count for the classes read for it (engines/vllm_encoder_dp.py), the fallback not. The
families counted here fail at such a TP instead (engines/vllm_vision_refusal.py refuses it), InternViT but for its
attention (configs/vision_internvl.py vllm_splits_attention).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from .fields import Fields

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
