"""Which of a checkpoint's vision-tower tensors vLLM 0.34 holds whole on every TP rank: the per-module rule the config
estimate counts (configs/vision_count.py _Count: a column-parallel linear split, bias too; a RowParallelLinear's
weight split, its bias and per-output-row scales whole; convolutions, position / class embeddings, norms,
nn.Parameters and nn.Linear / ReplicatedLinear projectors whole), read from the tensor names the checkpoints give
the modules. The families whose names are read here (RULE_FAMILIES); a tower of another family is split over TP
whole, as before, and Gemma 4's is whole (weights/roles.py _VISION_WHOLE_FAMILIES)."""

from __future__ import annotations

import re

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
