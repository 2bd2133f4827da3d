"""The vision tower of an image-text MoE under SGLang 0.5.23's data-parallel attention (engines/sglang_dp.py).

kvplan's tower (configs/vision_towers.py, ModelSpec.weight_vision) is split as vLLM 0.34 splits it, over a DP rank's
TP ranks: under SGLang's attention DP that is the attention TP group (capacity/weights.stage_weight_bytes, tp =
attn_tp). SGLang builds each tower module on the group its model file names (layers/linear.py
_resolve_linear_group: "tp" is all --tp GPUs, "attn_tp" the attention TP group; nn.Linear / nn.Parameter /
ReplicatedLinear / convolutions / norms whole), so this module corrects kvplan's split family by family, as read
in the 0.5.23 wheel (python/sglang/srt/...):

- Llama 4 (models/mllama4.py): Llama4VisionEncoderLayer's VisionAttention (layers/attention/vision.py: qkv_proj
  QKVParallelLinear and proj RowParallelLinear on "attn_tp", tp_size = attn_tp_size) is built without
  use_dp_attention_reduce, so VisionAttention.__init__ calls dp_attention.reject_attn_tp_shard_with_tp_reduce,
  which raises a ValueError when 1 < attention TP < --tp and the encoder runs on the instance
  (multimodal_encoder_runs_here): refused. At attention TP 1 (--dp = --tp) the attention is whole on every GPU,
  while Llama4VisionMLP fc1 / fc2 (ColumnParallelLinear / RowParallelLinear, default group "tp"),
  Llama4UnfoldConvolution's linear (ColumnParallelLinear, "tp") and the vision_adapter's MLP (Llama4VisionMLP,
  "tp") are split over all --tp GPUs (use_data_parallel False: Llama4VisionModel never passes it), and
  Llama4MultiModalProjector is transformers' (modeling_llama4.py: linear_1 an nn.Linear): whole. class_embedding,
  positional_embedding_vlm and the LayerNorms whole; fc2's bias (RowParallelLinear: "bias is not parallelized")
  whole.
- Qwen3-VL-MoE (models/qwen3_vl_moe.py Qwen3VLMoeForConditionalGeneration(Qwen3VLForConditionalGeneration), its
  tower qwen3_vl.py Qwen3VLMoeVisionModel): _resolve_vision_parallel_group puts Qwen3_VisionMLP and the patch
  mergers on "attn_tp", VisionAttention on "attn_tp" with use_dp_attention_reduce=is_dp_attention_enabled() (no
  refusal), the patch embedding a Conv3dLayer (whole) and pos_embed a VocabParallelEmbedding with
  use_attn_tp_group=is_dp_attention_enabled(): its num_position_embeddings rows padded to 64
  (vocab_parallel_embedding.pad_vocab_size) and split over the attention TP group, where vLLM 0.34 holds it whole
  (nn.Embedding). The rest as vLLM splits it, over the attention TP group. Its vision heads must divide by the
  attention TP size (VisionAttention: dist_utils.divide asserts): refused otherwise
  (engines/sglang_vision_refusal.py, as under plain --tp).
- Kimi-K2.5 (models/kimi_k25.py KimiK25ForConditionalGeneration): MoonViTEncoderLayer's VisionAttention on
  "attn_tp" with use_dp_attention_reduce; its MLP2 (kimi_vl_moonvit.py, use_tensor_parallel False) two nn.Linear,
  K2VLMultiModalProjector's linear_1 / linear_2 ReplicatedLinear, the Conv2dLayer, the pos_emb nn.Parameter and the
  LayerNorms whole. kvplan has no count of that tower (configs/vision_towers.py), so nothing is corrected: the note
  says so.

- GLM-4.5V (models/glm4v_moe.py Glm4vMoeForConditionalGeneration, its tower glm4v.py Glm4vVisionModel):
  _glm4v_vision_parallel_group gives "attn_tp" under DP attention, and the blocks' VisionAttention and
  Glm4vVisionMLP, and the merger's gate_up_proj / down_proj, take it (reducing over the attention TP group);
  Glm4vPatchMerger.proj is a ReplicatedLinear (whole; vLLM 0.34 glm4_1v.py splits it), the embeddings an
  nn.Embedding, the downsample an nn.Conv2d, the patch embedding a Conv3dLayer, the norms whole.
  vision_utils.update_vit_attn_dummy_heads_config pads the vision heads to a multiple of the attention TP size
  (num_dummy_heads): VisionAttention builds qkv_proj and proj for heads + dummy heads, zero-filled at load.

--mm-enable-dp-encoder (the tower "replicated", whole on every GPU): engines/sglang_groups.py for qwen3_vl.py's
families (Qwen3-VL-MoE here), instead of this module; not modelled for kimi_k25.py and glm4v.py. Not modelled: a tower
under engine-side online quantization (its linears' bytes not at the float width: not corrected, noted). Without
attention DP, engines/sglang_tower.py splits the tower as SGLang does (weights/vision_tp.py SGLANG_TOWERS, whose
Qwen3-VL and GLM-4V rules _by_table applies here over the attention TP group).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..capacity.shard import _ceil_div
from ..errors import UsageError


@dataclass(frozen=True)
class DpTower:
    """A tower's parameters as SGLang places them under attention DP."""
    whole: int  # on every GPU
    attn: int  # split over the attention TP group
    full: int  # split over all --tp GPUs


def _fields(model, key: str, defaults: dict):
    from ..configs.fields import Fields
    from .vllm_load import raw_config

    raw = raw_config(model)
    nested = (raw or {}).get(key)
    return Fields(nested, f"{model.name}: {key}", defaults) if isinstance(nested, dict) else None


def _llama4(model, attn_tp: int) -> DpTower | None:
    """At attention TP 1: the VisionAttention modules (qkv_proj with bias, proj) and the projector's linear_1 whole
    beside what vLLM holds whole; the rest over all GPUs (see the module docstring)."""
    from ..configs.vision_llama import _LLAMA4

    v = _fields(model, "vision_config", _LLAMA4)
    if v is None:
        return None
    h, layers = v.int("hidden_size"), v.int("num_hidden_layers")
    params, _, whole_bytes = model.weight_vision
    width = model.weight_vision[1] // params
    attention = layers * (h * 3 * h + 3 * h + h * h)  # qkv weight and bias, proj weight (its bias vLLM's whole)
    whole = whole_bytes // width + attention + v.int("vision_output_dim") * model.hidden_size
    return DpTower(whole, 0, params - whole)


def _by_table(model, attn_tp: int) -> DpTower | None:
    """Qwen3-VL-MoE and GLM-4.5V: as SGLang builds the tower under plain TP (weights/vision_tp.py SGLANG_TOWERS:
    Qwen3-VL's pos_embed vocab-parallel, GLM's merger proj whole and dummy heads), over the attention TP group."""
    from ..weights.vision_tp import SGLANG_TOWERS
    from .sglang_tower import tower_fields
    from .vllm_load import raw_config

    raw = raw_config(model) or {}
    rule = SGLANG_TOWERS.get(raw.get("model_type"))
    fields = tower_fields(model, raw) if rule is not None else None
    if fields is None:
        return None
    moves = rule.moves(raw, *fields, attn_tp)
    params, _, whole_bytes = model.weight_vision
    whole = whole_bytes // (model.weight_vision[1] // params) + moves.whole - moves.split + moves.added_whole
    return DpTower(whole, params + moves.added + moves.added_whole - whole, 0)


_NOT_DP_ENCODER = " (--mm-enable-dp-encoder, which holds it whole on every GPU, not modelled)"
_DP_ENCODER = " (without --mm-enable-dp-encoder, which holds it whole on every GPU: engines/sglang_groups.py)"
# architecture -> (the tower's placement, or None where kvplan does not count the tower; the SGLang file read; what
# the note says, {tp}: the attention TP size, {gpus}: all --tp GPUs)
DP_TOWERS = {
    "Llama4ForConditionalGeneration": (_llama4, "mllama4.py", "its attention whole on every GPU, its MLPs, patch "
                                       "linear and adapter over all {gpus} GPUs, the projector whole"),
    "Qwen3VLMoeForConditionalGeneration": (_by_table, "qwen3_vl.py Qwen3VLMoeVisionModel", "over the attention TP "
                                           "group of {tp}, pos_embed vocab-parallel there too" + _DP_ENCODER),
    "KimiK25ForConditionalGeneration": (None, "kimi_k25.py", ""),
    "Glm4vMoeForConditionalGeneration": (_by_table, "glm4v.py Glm4vVisionModel", "over the attention TP group of {tp}, "
                                         "its heads padded to a multiple of {tp} with dummy heads, the merger's proj "
                                         "whole" + _NOT_DP_ENCODER),
}


def refusal(model, attn_tp: int, dp: int) -> str | None:
    """Why SGLang 0.5.23 refuses this model's counted tower at (attention TP attn_tp, --dp dp); None if it builds."""
    if dp <= 1 or not model.weight_vision[0]:
        return None
    arch = model.architecture or ""
    if arch == "Llama4ForConditionalGeneration" and 1 < attn_tp:
        return (f"--dp {dp} with --engine sglang: SGLang 0.5.23 refuses Llama 4's vision tower at attention TP "
                f"{attn_tp} of --tp {attn_tp * dp} (mllama4.py builds its VisionAttention on the attention TP group "
                "without use_dp_attention_reduce: dp_attention.reject_attn_tp_shard_with_tp_reduce raises)")
    return None


def check_tower(model, attn_tp: int, dp: int) -> None:
    """Raise the refusal line where SGLang refuses the tower (refusal)."""
    why = refusal(model, attn_tp, dp)
    if why:
        raise UsageError(why, "choose --tp / --dp that SGLang builds (for Llama 4, --dp equal to --tp: attention TP "
                         "1), or plan the text model alone with --set vision_config=null")


def tower_saving(model, weights, tp: int, dp: int) -> int:
    """Bytes of the tower one GPU holds less than kvplan's split over the attention TP group gives it (negative:
    more); 0 where nothing is corrected (no counted tower, a family not read, an online-quantized tower, a record
    whose vision bytes are not the config estimate's)."""
    if dp <= 1 or not model.weight_vision[0] or model.weight_vision_quantized[0]:
        return 0
    family = DP_TOWERS.get(model.architecture or "", (None,))[0]
    placed = family(model, tp) if family is not None else None
    if placed is None:
        return 0
    from ..capacity.weights import vision_bytes

    params, total, whole = model.weight_vision
    if vision_bytes(weights) != total:
        return 0
    width = total // params
    kvplan_split = (whole + _ceil_div(total - whole, tp)) if tp > 1 else total  # stage_weight_bytes' first stage
    sglang = (placed.whole * width + _ceil_div(placed.attn * width, tp)
              + _ceil_div(placed.full * width, tp * dp))
    return kvplan_split - sglang


def tower_note(model, tp: int, dp: int) -> str:
    """The plan's line on the tower under attention DP ("" where the model has none and none is expected)."""
    arch = model.architecture or ""
    if arch not in DP_TOWERS:
        return ""
    family, source, where = DP_TOWERS[arch]
    if family is None:
        return (f"the vision tower, which SGLang's {source} builds with its attention over the attention TP group "
                "and its MLPs and projector whole on every GPU, is not placed so: kvplan has no count of it from the "
                "config, and splits a tensor table's vision tensors over the attention TP group")
    if not model.weight_vision[0]:
        return ""
    if model.weight_vision_quantized[0] or family(model, tp) is None:
        why = "under online quantization" if model.weight_vision_quantized[0] else "without the config.json at hand"
        return (f"the vision tower's SGLang placement ({source}) not corrected {why}: split over the attention TP "
                "group as vLLM splits it")
    return f"the vision tower as SGLang's {source} places it: " + where.format(tp=tp, gpus=tp * dp)
