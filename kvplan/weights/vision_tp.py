"""Which of a checkpoint's vision-tower tensors vLLM 0.34 holds whole on every TP rank: the per-module rule the config
estimate counts (configs/vision_count.py _Count: a column-parallel linear split, bias too; a RowParallelLinear's
weight split, its bias and per-output-row scales whole; convolutions, position / class embeddings, norms,
nn.Parameters and nn.Linear / ReplicatedLinear projectors whole), read from the tensor names the checkpoints give
the modules. The families whose names are read here (RULE_FAMILIES); a tower of another family is split over TP
whole, as before, and Gemma 4's is whole (weights/roles.py _VISION_WHOLE_FAMILIES). Below, SGLang 0.5.23's
differences from that rule a family (SGLANG_TOWERS), by tensor name and from the vision_config, for
engines/sglang_tower.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ..configs.fields import Fields

# the model_types whose tower modules below were read in vLLM 0.34: siglip.py (SiglipAttention's q/k/v_proj into
# QKVParallelLinear, out_proj RowParallelLinear; SiglipMLP fc1 Column-, fc2 RowParallelLinear) for gemma3_mm.py;
# clip.py (the same names) and llava.py LlavaMultiModalProjector (linear_1 Column-, linear_2 RowParallelLinear);
# pixtral.py (attention q/k/v_proj, o_proj; feed_forward gate_proj / up_proj, down_proj) and mistral3.py's projector
# (linear_1 / linear_2 as LLaVA's; patch_merger.merging_layer an nn.Linear); qwen2_5_vl.py (attn.qkv QKVParallelLinear,
# attn.proj Row; mlp gate_proj / up_proj into gate_up_proj, down_proj Row; merger.mlp.0 Column, merger.mlp.2 Row);
# qwen3_vl.py (attn.qkv / attn.proj, mlp.linear_fc1 / linear_fc2, the mergers' linear_fc1 / linear_fc2);
# glm4_1v.py (attn.qkv / attn.proj, mlp gate_proj / up_proj, down_proj; Glm4vPatchMerger proj ColumnParallelLinear,
# gate_proj / up_proj, down_proj; the downsample Conv2dLayer whole); phi3v.py (clip.py's names; img_projection.0 / .2
# nn.Linear, glb_GN / sub_GN whole); mllama4.py (Llama4UnfoldConvolution's patch_embedding.linear Column; the
# layers' q/k/v_proj into qkv_proj, o_proj Row; Llama4VisionMLP fc1 Column, fc2 Row, the vision_adapter's too;
# Llama4MultiModalProjector linear_1 Column; class_embedding, positional_embedding_vlm, the LayerNorms whole)
_COLUMN = re.compile(r"(?:^|\.)(?:q_proj|k_proj|v_proj|attn\.qkv|fc1|gate_proj|up_proj|linear_fc1|merger\.mlp\.0|merger\.proj"
                     r"|multi_modal_projector\.linear_1|patch_embedding\.linear)$")
_ROW = re.compile(r"(?:^|\.)(?:out_proj|o_proj|attn\.proj|fc2|down_proj|linear_fc2|merger\.mlp\.2"
                  r"|multi_modal_projector\.linear_2)$")
# (?:^|\.): a checkpoint names its projector at the top (llava-hf's and Llama 4's multi_modal_projector.linear_1)
# Kimi-VL, vLLM 0.34 moonvit.py MoonVitEncoderLayer: wqkv QKVParallelLinear, wo RowParallelLinear, MLP2 fc0
# Column-, fc1 RowParallelLinear (so fc1 is row-parallel here); kimi_vl.py KimiVLMultiModalProjector linear_1 /
# linear_2 ReplicatedLinear (whole), like patch_embed, pos_emb and the LayerNorms
_KIMI_COLUMN = re.compile(r"(?:^|\.)(?:wqkv|mlp\.fc0)$")
_KIMI_ROW = re.compile(r"(?:^|\.)(?:wo|mlp\.fc1)$")
_RULES = {family: (_COLUMN, _ROW) for family in (
    "gemma3", "llava", "llava_next", "mistral3", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe",
    "glm4v", "glm4v_moe", "phi3_v", "llama4")}
_RULES["kimi_vl"] = (_KIMI_COLUMN, _KIMI_ROW)
RULE_FAMILIES = frozenset(_RULES)
# a linear's tensors besides its weight: the bias, and the quantization's scales and zero points
_SUFFIX = re.compile(r"\.(?:weight|bias|weight_scale|weight_scale_inv|input_scale|weight_zero_point)$")


def per_output_row(shape: tuple[int, ...]) -> bool:
    """A scale or zero point with one entry per output row: [rows], [rows, 1] or [experts, rows, 1] (rows > 1)."""
    return (len(shape) >= 2 and shape[-1] == 1 and shape[-2] > 1) or (len(shape) == 1 and shape[0] > 1)


def vision_whole(name: str, family: str, elements: int | None = None, shape: tuple[int, ...] = ()) -> bool | None:
    """Whether vLLM 0.34 holds this vision tensor whole on every TP rank (True) or splits it (False); None where the
    family's tower names are not read here (RULE_FAMILIES). A one-element tensor (a per-tensor scale) is whole."""
    rules = _RULES.get(family)
    if rules is None:
        return None
    column, row = rules
    low = name.lower()
    suffix = _SUFFIX.search(low)
    module = low[:suffix.start()] if suffix else low
    if elements == 1:
        return True
    if column.search(module):
        return False
    if row.search(module):  # the weight split by input; the bias and a per-output-row scale [rows] / [rows, 1] whole
        kind = suffix.group(0) if suffix else ""
        return kind == ".bias" or (kind in (".weight_scale", ".weight_zero_point") and per_output_row(shape))
    return True


# -- SGLang 0.5.23 ---------------------------------------------------------------------------------------------------
# What SGLang 0.5.23 builds otherwise than vLLM 0.34 under plain --tp (no attention DP: there every "attn_tp" module
# is on all --tp GPUs; under DP, engines/sglang_dp_vision.py), read in the wheel (python/sglang/srt/...). Each family
# maps to the modules SGLang holds whole where vLLM splits them (`whole`), the modules it splits where vLLM holds them
# whole (`split`), matched on a checkpoint's tensor names like the vLLM rules above, and `moves`: the same from the
# vision_config, with the parameters SGLang adds (TowerMoves). Shared rules read in layers/attention/vision.py
# VisionAttention (qkv_proj QKVParallelLinear, proj RowParallelLinear, both on "attn_tp"; num_dummy_heads: heads of
# zeros added to qkv_proj's rows and proj's columns, and to the q_norm / k_norm RMSNorm(dummy_dim) of
# qk_normalization, whole) and layers/vocab_parallel_embedding.py VocabParallelEmbedding (rows padded to 64, to 64 x
# TP where TP does not divide that: pad_vocab_size; split over TP).


@dataclass(frozen=True)
class TowerMoves:
    """Parameters of a tower SGLang 0.5.23 places otherwise than vLLM 0.34, at one TP size."""
    whole: int = 0  # SGLang holds whole on every GPU, vLLM splits
    split: int = 0  # SGLang splits over TP, vLLM holds whole
    added: int = 0  # SGLang adds, split over TP (dummy heads, padded rows)
    added_whole: int = 0  # SGLang adds, whole on every GPU (the dummy heads' q / k norm weights)
    # SGLang builds, kvplan's count of vLLM's tower leaves out (InternViT's layers past select_layer), as (whole,
    # split): added to a config's tower, already in a tensor table's
    uncounted: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class SglangTower:
    whole: re.Pattern | None  # tensor modules (the name less its _SUFFIX) SGLang holds whole, vLLM splits
    split: re.Pattern | None  # tensor modules SGLang splits, vLLM holds whole
    moves: Callable[[dict, Fields, Fields, int], TowerMoves]  # (config, text fields, vision_config fields, TP)
    source: str  # the SGLang file and classes, for the note


def _embedding_rows(rows: int, tp: int) -> int:
    """VocabParallelEmbedding's rows (vocab_parallel_embedding.py pad_vocab_size, padding_size 64, x TP where TP does
    not divide the padded count)."""
    padded = -(-rows // 64) * 64
    return padded if padded % tp == 0 else -(-rows // (64 * tp)) * 64 * tp


def _vocab_parallel(rows: int, h: int, tp: int) -> TowerMoves:
    return TowerMoves(split=rows * h, added=(_embedding_rows(rows, tp) - rows) * h)


def _dummy_heads(heads: int, tp: int) -> int:
    """vision_utils.update_vit_attn_dummy_heads_config: heads added to make them a multiple of the TP size."""
    return -(-heads // tp) * tp - heads


def _gemma3(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    from ..configs.vision_clip import _SIGLIP
    from ..configs.vision_count import _with

    v = _with(v, _SIGLIP)
    return _vocab_parallel((v.int("image_size") // v.int("patch_size")) ** 2, v.int("hidden_size"), tp)


def _qwen2_5_vl(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    from ..configs.vision_count import _with
    from ..configs.vision_qwen import _QWEN2_5_VL

    v = _with(v, _QWEN2_5_VL)
    inter = v.int("intermediate_size")
    more = -(-inter // 8) * 8 - inter  # mlp_hidden_size = ((intermediate_size + 7) // 8) * 8
    # gate_up_proj's two biased row blocks and down_proj's input columns, each `more` wider, in every block
    return TowerMoves(added=v.int("depth") * more * (3 * v.int("hidden_size") + 2))


def _qwen3_vl(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    from ..configs.vision_count import _with
    from ..configs.vision_qwen import _QWEN3_VL

    v = _with(v, _QWEN3_VL)
    return _vocab_parallel(v.int("num_position_embeddings"), v.int("hidden_size"), tp)


def _llama4(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    from ..configs.vision_count import _with
    from ..configs.vision_llama import _LLAMA4

    return TowerMoves(whole=_with(v, _LLAMA4).int("vision_output_dim") * f.int("hidden_size"))


def _projector(c) -> TowerMoves:
    """A projector SGLang holds whole: what vLLM's count splits of it."""
    return TowerMoves(whole=c.params - c.whole)


def _mistral3(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    from ..configs.vision_count import _Count, _with
    from ..configs.vision_llama import _PIXTRAL, mistral3_projector

    c = _Count()
    mistral3_projector(c, raw, f, _with(v, _PIXTRAL).int("hidden_size"))
    return _projector(c)


def _llava(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    from ..configs.vision_clip import _CLIP, _SIGLIP, _llava_projector
    from ..configs.vision_count import _Count, _with

    c = _Count()
    _llava_projector(c, raw, f, _with(v, _SIGLIP if v.model_type == "siglip_vision_model" else _CLIP).int(
        "hidden_size"))
    return _projector(c)


def _internvl_chat(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    from ..configs.vision_internvl import internvl, vllm_splits_attention

    h, heads = v.int("hidden_size"), v.int("num_attention_heads")
    layers = v.int("num_hidden_layers")
    bias, norm = v.flag("qkv_bias"), v.flag("qk_normalization")
    dummy = _dummy_heads(heads, tp) * (h // heads)  # the dummy heads' width
    split = 0 if vllm_splits_attention(heads) else layers * (3 * h * h + (3 * h if bias else 0) + h * h)
    # InternVisionEncoder builds all num_hidden_layers layers whatever select_layer (the forward picks
    # hidden_states[select_layer]); vLLM's, which kvplan counts, stop at it: the layers past it as vLLM's count
    # places them (whole / split: `uncounted`), `split` above moving their attention as for the others
    every, counted = internvl(dict(raw, select_layer=-1), f, v)[0], internvl(raw, f, v)[0]
    past_whole = every.whole - counted.whole
    past_split = every.params - counted.params - past_whole
    return TowerMoves(split=split, added=layers * (4 * dummy * h + (3 * dummy if bias else 0)),
                      added_whole=layers * (2 * dummy if norm else 0), uncounted=(past_whole, past_split))


def _glm4v(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    from ..configs.vision_count import _with
    from ..configs.vision_qwen import _GLM4V

    v = _with(v, _GLM4V)
    h, heads, out = v.int("hidden_size"), v.int("num_heads"), v.int("out_hidden_size")
    dummy = _dummy_heads(heads, tp) * (h // heads)
    # Glm4vPatchMerger.proj (out x out, no bias) whole; q, k, v rows and proj columns of the dummy heads (no biases:
    # attention_bias is not counted, configs/vision_qwen.py glm4v)
    return TowerMoves(whole=out * out, added=v.int("depth") * 4 * dummy * h)


def _none(raw: dict, f: Fields, v: Fields, tp: int) -> TowerMoves:
    return TowerMoves()


_POS_EMBED = re.compile(r"(?:^|\.)pos_embed$")
_QWEN3_TOWER = SglangTower(None, _POS_EMBED, _qwen3_vl, "qwen3_vl.py Qwen3VLMoeVisionModel: pos_embed a "
                           "VocabParallelEmbedding (vLLM: nn.Embedding); qwen3_5.py builds the same")
_GLM4V_TOWER = SglangTower(re.compile(r"(?:^|\.)merger\.proj$"), None, _glm4v,
                           "glm4v.py Glm4vPatchMerger.proj a ReplicatedLinear (vLLM: ColumnParallelLinear), the "
                           "vision heads padded to a multiple of TP (update_vit_attn_dummy_heads_config)")
_LINEAR_PROJECTOR = re.compile(r"(?:^|\.)multi_modal_projector\.linear_[12]$")
# model_type -> how SGLang 0.5.23 builds its tower otherwise than vLLM 0.34 (TowerMoves() where it was read and is
# the same); a family not listed keeps vLLM's split, and the plan's note says its SGLang file was not read
SGLANG_TOWERS: dict[str, SglangTower] = {
    "gemma3": SglangTower(None, re.compile(r"(?:^|\.)embeddings\.position_embedding$"), _gemma3,
                          "gemma3_mm.py builds siglip.py SiglipVisionModel: SiglipVisionEmbeddings.position_embedding "
                          "a VocabParallelEmbedding (vLLM: nn.Embedding)"),
    "qwen2_5_vl": SglangTower(None, None, _qwen2_5_vl, "qwen2_5_vl.py Qwen2_5_VisionTransformer: mlp_hidden_size "
                              "rounded up to a multiple of 8"),
    "qwen3_vl": _QWEN3_TOWER, "qwen3_vl_moe": _QWEN3_TOWER, "qwen3_5": _QWEN3_TOWER, "qwen3_5_moe": _QWEN3_TOWER,
    "llama4": SglangTower(re.compile(r"(?:^|\.)multi_modal_projector\.linear_1$"), None, _llama4,
                          "mllama4.py builds transformers' Llama4MultiModalProjector (linear_1 an nn.Linear)"),
    "mistral3": SglangTower(_LINEAR_PROJECTOR, None, _mistral3, "mistral.py Mistral3ForConditionalGeneration builds "
                            "transformers' Mistral3MultiModalProjector (nn.Linear), pixtral.py the tower as vLLM"),
    "llava": SglangTower(_LINEAR_PROJECTOR, None, _llava, "llava.py LlavaForConditionalGeneration builds "
                         "transformers' LlavaMultiModalProjector (nn.Linear); a CLIP / SigLIP tower it does not build "
                         "(engines/sglang_vision_refusal.py refuses it)"),
    "internvl_chat": SglangTower(None, None, _internvl_chat, "internvl.py InternVLChatModel: InternViT's "
                                 "VisionAttention split with dummy heads to a multiple of TP "
                                 "(update_vit_attn_dummy_heads_config), mlp1 nn.Linear"),
    "glm4v": _GLM4V_TOWER, "glm4v_moe": _GLM4V_TOWER,
    "kimi_vl": SglangTower(None, None, _none, "kimi_vl_moonvit.py MoonVitEncoderLayer (VisionAttention, MLP2 fc0 / "
                           "fc1 Column- / RowParallelLinear), kimi_vl.py's projector nn.Linear: as vLLM"),
    "minicpmv": SglangTower(None, None, _none, "minicpmv.py MiniCPMV2_6 / 4_0 / 4_5 (idefics2.py "
                            "Idefics2VisionTransformer, the resampler's kv_proj a ReplicatedLinear): as vLLM"),
}


def sglang_vision_whole(name: str, family: str) -> bool | None:
    """Whether SGLang 0.5.23 holds this vision tensor whole (True) or splits it (False) where it places its module
    otherwise than vLLM 0.34 (SGLANG_TOWERS); None where it places it as vLLM does."""
    rule = SGLANG_TOWERS.get(family)
    if rule is None:
        return None
    low = name.lower()
    suffix = _SUFFIX.search(low)
    module = low[:suffix.start()] if suffix else low
    if rule.whole is not None and rule.whole.search(module):
        return True
    if rule.split is not None and rule.split.search(module):
        return False
    return None
