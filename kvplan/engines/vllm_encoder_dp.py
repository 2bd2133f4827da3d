"""vLLM's `--mm-encoder-tp-mode data`: the vision encoder data parallel, the tower whole on every GPU of the TP group.

Read in the vllm 0.34.0 wheel (vllm/...):
- config/multimodal.py MultiModalConfig.mm_encoder_tp_mode: MMEncoderTPMode = Literal["weights", "data"], default
  "weights" (each tower layer's weights split over the TP ranks); "data" splits the batched images over the TP ranks
  "while hosting the full weights on each TP rank" (engine/arg_utils.py: `--mm-encoder-tp-mode`).
- config/model.py ModelConfig.__post_init__: "data" on a class without supports_encoder_tp_data (models/interfaces.py
  SupportsMultiModal, default False) warns "This model does not support `--mm-encoder-tp-mode data`. Falling back to
  `--mm-encoder-tp-mode weights`." and goes on under "weights": nothing changes (a note here). Nothing else refuses
  the flag: no check of TP 1 (the tower is whole already) or of PP (the tower sits on the first stage as before).
- The classes setting supports_encoder_tp_data = True: qwen2_5_vl.py Qwen2_5_VLForConditionalGeneration, qwen3_vl.py
  Qwen3VLForConditionalGeneration (subclassed by qwen3_vl_moe.py Qwen3VLMoeForConditionalGeneration and qwen3_5.py
  Qwen3_5ForConditionalGeneration / Qwen3_5MoeForConditionalGeneration), glm4_1v.py Glm4vForConditionalGeneration
  (and its subclass Glm4vMoeForConditionalGeneration), mllama4.py Llama4ForConditionalGeneration, kimi_vl.py
  KimiVLForConditionalGeneration, internvl.py InternVLChatModel, minicpmv.py MiniCPMVBaseModel (MiniCPMV2_0 sets it
  False), gemma4_mm.py Gemma4ForConditionalGeneration, and families kvplan does not count a tower of (qwen2_vl.py,
  step3_vl.py, dots_ocr.py, kimi_k25.py, ...). Not among them: llava.py, llava_next.py, gemma3_mm.py, mistral3.py,
  phi3v.py, qwen2_5_omni_thinker.py, qwen3_omni_moe_thinker.py (fall back).
- What "data" builds, read for the families below (WHOLE_UNDER_DATA): models/vision.py is_vit_use_data_parallel() is
  `mm_encoder_tp_mode == "data"`, and every tower linear takes disable_tp=is_vit_use_data_parallel(): qwen2_5_vl.py
  Qwen2_5_VisionAttention (qkv QKVParallelLinear, proj RowParallelLinear), Qwen2_5_VisionMLP (gate_up_proj, down_proj)
  and Qwen2_5_VisionPatchMerger (mlp.0 ColumnParallelLinear, mlp.2 RowParallelLinear); qwen3_vl.py Qwen3_VisionBlock
  (that Qwen2_5_VisionAttention), Qwen3_VisionMLP (linear_fc1 / fc2) and Qwen3_VisionPatchMerger (linear_fc1 / fc2,
  the deepstack mergers too); glm4_1v.py Glm4vVisionAttention, Glm4vVisionMLP and Glm4vPatchMerger (proj, gate_up_proj,
  down_proj). layers/linear.py: disable_tp gives tp_size 1, so each linear is whole, its bias too; the convolutions,
  norms and embeddings were whole already. So the tower and projector are whole on every GPU: kvplan's tower bytes
  (configs/vision_towers.py, the same modules) held whole instead of split (stage_delta), and no heads or widths to
  divide (engines/vllm_vision_refusal.py does not apply). The text model is untouched.
- The other supporting classes (mllama4.py, kimi_vl.py, internvl.py, minicpmv.py, gemma4_mm.py) were not read for what
  they build whole: a note, kvplan keeps the split (and the refusal) of "weights".
- vLLM 0.11.0 has the flag too (config/multimodal.py mm_encoder_tp_mode, the same default and fallback in
  config/model.py), and its qwen2_5_vl.py, qwen3_vl.py and glm4_1v.py set supports_encoder_tp_data and build the
  same linears with disable_tp: the rule holds at every release kvplan models.
"""

from __future__ import annotations

from ..capacity.placement import Placement
from ..errors import UsageError

MODES = ("weights", "data")
# the architectures whose tower kvplan holds whole under "data" (each model file read: module docstring)
WHOLE_UNDER_DATA = frozenset({
    "Qwen2_5_VLForConditionalGeneration",  # qwen2_5_vl.py
    "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",  # qwen3_vl.py, qwen3_vl_moe.py
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",  # qwen3_5.py (Qwen3VL subclasses)
    "Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration",  # glm4_1v.py
})
# supports_encoder_tp_data = True, but what the class builds whole under "data" was not read
SUPPORTS_UNREAD = frozenset({
    "Llama4ForConditionalGeneration", "KimiVLForConditionalGeneration", "InternVLChatModel",
    "Gemma4ForConditionalGeneration", "MiniCPMV", "MiniCPMO",
})


def parse(mode: str | None, engines: tuple) -> str | None:
    """--mm-encoder-tp-mode checked against the engines planned / emitted; None where not given."""
    if mode is None:
        return None
    if mode not in MODES:
        raise UsageError(f"--mm-encoder-tp-mode {mode!r}: vLLM takes weights or data (config/multimodal.py "
                         "MMEncoderTPMode)")
    from .flag_owner import require

    require("--mm-encoder-tp-mode", "vllm", engines, "SGLang's own is --mm-enable-dp-encoder" if "sglang" in engines
            else None)
    return mode


def tower_whole(model, mode: str | None) -> bool:
    """Whether vLLM builds the model's vision tower whole on every GPU (mode "data" on a class read for it)."""
    return mode == "data" and (model.architecture or "") in WHOLE_UNDER_DATA


def stage_delta(model, record, tp: int, pp: int = 1) -> list[int]:
    """Bytes one GPU of each stage holds beyond kvplan's (vLLM's "weights") split: on the first stage, the tower whole
    less its split over tp (capacity/weights.py vision_split_bytes); zeros where the tower is not whole."""
    from ..capacity.weights import vision_bytes, vision_split_bytes

    out = [0] * pp
    if record is not None and tp > 1:
        out[0] = vision_bytes(record) - vision_split_bytes(record, tp)
    return out


class EncoderData(Placement):
    """--mm-encoder-tp-mode data as Deployment.placement (capacity/placement.py; request.py placement_of): the tower
    whole on every GPU of the first stage (stage_delta), for the classes read for it (tower_whole)."""

    def stage_delta(self, model, weights, tp: int, pp: int, dp: int) -> list[int] | None:
        return stage_delta(model, weights, tp, pp) if tower_whole(model, "data") else None


ENCODER_DATA = EncoderData()


def notes(model, mode: str | None, record, tp: int) -> list[str]:
    """What the mode does to the plan, or why it does nothing."""
    if mode != "data":
        return []
    arch = model.architecture or model.model_type
    if tower_whole(model, mode):
        more = stage_delta(model, record, tp)[0]
        if not more:
            return ["--mm-encoder-tp-mode data: the vision tower whole on every GPU changes nothing here (TP 1, or no "
                    "tower kvplan sizes)"]
        return [f"--mm-encoder-tp-mode data: the vision tower whole on every GPU (models/vision.py "
                f"is_vit_use_data_parallel: every tower linear disable_tp), + {more / 2**20:,.1f} MiB a GPU against "
                f"the split over TP {tp}; no vision heads or widths to divide"]
    if (model.architecture or "") in SUPPORTS_UNREAD:
        return [f"--mm-encoder-tp-mode data: not modelled for {arch} (it sets supports_encoder_tp_data, but what it "
                "builds whole was not read): the tower as vLLM splits it under weights"]
    return [f"--mm-encoder-tp-mode data changes nothing for {arch}: vLLM falls back to weights for a class without "
            "supports_encoder_tp_data (config/model.py), or there is no vision tower"]


__all__ = ["MODES", "WHOLE_UNDER_DATA", "notes", "parse", "stage_delta", "tower_whole"]
