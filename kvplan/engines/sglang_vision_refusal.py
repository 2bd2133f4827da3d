"""The vision towers SGLang 0.5.23 fails to build, refused in one line (engines/sglang_tower.py and
engines/sglang_dp_vision.py place the towers it builds). Read in the wheel (python/sglang/srt/...):

- The vision heads over the TP size. layers/attention/vision.py VisionAttention.__init__ takes
  num_attention_heads_per_partition = dist_utils.divide(num_dummy_heads + num_heads, tp_size), tp_size being
  get_parallel().attn_tp_size (the --tp size without attention DP, the attention TP group's under it); divide
  (distributed/utils.py) asserts ensure_divisibility, so a TP that does not divide the heads fails at start. InternVL
  (internvl.py InternVLChatModel) and GLM-4.1V / 4.5V (glm4v.py) pad the heads with zero heads to a multiple of the
  TP size (vision_utils.update_vit_attn_dummy_heads_config) and build at any TP; the families in _UNPADDED pass no
  dummy heads (mllama4.py Llama4VisionEncoderLayer only where the config has original_num_attention_heads, which
  HF's Llama 4 configs have not; mllama.py MllamaVisionEncoderLayer only where the config has
  original_attention_heads, which HF's Mllama configs have not, and then over attention_heads all the same; Gemma 4
  (gemma4_mm.py -> gemma4_vision.py Gemma4VisionAttention) splits its vision heads through a QKVParallelLinear on
  the TP group, whose layers/linear.py divide asserts alike;
  qwen2_5_vl.py's blocks are built with the default 0). A vision_config without its
  heads field is not checked. Under --mm-enable-dp-encoder (use_data_parallel: tp_size 1, the tower whole) the
  towers of engines/sglang_groups.py ENCODER_DP split no heads: not checked (sglang_report.check_serving).
- LLaVA with a CLIP or SigLIP tower. llava.py LlavaForConditionalGeneration.__init__ builds its tower through
  _get_sgl_model_cls(vision_config, AutoModel): transformers' AutoModel maps CLIPVisionConfig to CLIPVisionModel
  and SiglipVisionConfig to SiglipVisionModel (modeling_auto.py MODEL_MAPPING_NAMES), then
  models/registry.py ModelRegistry.resolve_model_cls looks that name up among the models' EntryClass names, where
  neither is (clip.py's EntryClass is CLIPModel, siglip.py has none; only pixtral.py registers its
  PixtralVisionModel), so it raises "failed to load it from SGLang ModelRegistry" (llava-hf/llava-1.5-7b-hf also
  fails earlier, in the multimodal processor lookup: sgl-project/sglang issue #13999). LLaVA with a Pixtral tower
  (mistral-community/pixtral-12b) builds; kvplan does not count that tower (configs/vision_clip.py llava).
"""

from __future__ import annotations

from ..errors import UsageError
from .vision_heads import DEFAULT_VISION_TYPE, raise_refusal, tower, undivided_heads

_SIGLIP = "siglip.py SiglipEncoderLayer"
_QWEN3 = "qwen3_vl.py Qwen3_VisionBlock"
# model_type -> (the vision_config field of the heads, the SGLang 0.5.23 class building VisionAttention over them
# without dummy heads), an engines/vision_heads.py HeadsTable; internvl_chat and glm4v / glm4v_moe pad (module
# docstring). LLaVA's Pixtral tower (pixtral.py, unpadded too) is not counted by kvplan (configs/vision_clip.py
# llava), so not checked
_UNPADDED = {
    "gemma3": ("num_attention_heads", _SIGLIP), "qwen2_5_vl": ("num_heads", "qwen2_5_vl.py Qwen2_5_VisionBlock"),
    "qwen3_vl": ("num_heads", _QWEN3), "qwen3_vl_moe": ("num_heads", _QWEN3), "qwen3_5": ("num_heads", _QWEN3),
    "qwen3_5_moe": ("num_heads", _QWEN3), "llama4": ("num_attention_heads", "mllama4.py Llama4VisionEncoderLayer"),
    "mistral3": ("num_attention_heads", "pixtral.py PixtralHFTransformerBlock"),
    "kimi_vl": ("num_attention_heads", "kimi_vl_moonvit.py MoonVitEncoderLayer"),
    "minicpmv": ("num_attention_heads", "idefics2.py Idefics2EncoderLayer / minicpmv_vit.py"),
    "minicpmo": ("num_attention_heads", "idefics2.py Idefics2EncoderLayer (minicpmo.py init_vision_module)"),
    "mllama": ("attention_heads", "mllama.py MllamaVisionEncoderLayer"),
    "gemma4": ("num_attention_heads", "gemma4_vision.py Gemma4VisionAttention"),
}
# where the division asserts, for the families that do not build VisionAttention: Gemma 4's tower splits its heads
# in its own attention (num_attention_heads // attn_tp_size) through layers/clippable_linear.py
# ClippableQKVParallelLinear, a QKVParallelLinear on the TP group (layers/linear.py: divide(total_num_heads, tp_size))
_ASSERTS = {"gemma4": ": its ClippableQKVParallelLinear -> QKVParallelLinear has no dummy heads: linear.py divide "
                      "asserts"}
_VISION_ATTENTION = "'s VisionAttention has no dummy heads: dist_utils.divide asserts"
# LLaVA's towers SGLang's registry does not resolve (module docstring): vision_config model_type -> the class
_LLAVA_UNREGISTERED = {"clip_vision_model": "CLIPVisionModel", "siglip_vision_model": "SiglipVisionModel"}


def llava_refusal(model) -> str | None:
    """Why SGLang 0.5.23 cannot build this LLaVA's tower whatever the split; None where it can (or no LLaVA)."""
    found = tower(model)
    if found is None or found[0] != "llava" or "LlavaForConditionalGeneration" not in (model.architecture or ""):
        return None
    cls = _LLAVA_UNREGISTERED.get(found[1].get("model_type", DEFAULT_VISION_TYPE))
    if cls is None:
        return None
    return (f"--engine sglang: SGLang 0.5.23 does not build LLaVA's {cls} tower (llava.py "
            f"LlavaForConditionalGeneration._get_sgl_model_cls: {cls} is not in SGLang's ModelRegistry, which raises)")


def heads_refusal(model, attn_tp: int, dp: int = 1) -> str | None:
    """Why SGLang 0.5.23 fails to build this model's vision attention at (attention) TP attn_tp; None if it builds."""
    found = undivided_heads(model, _UNPADDED, attn_tp)
    if found is None:
        return None
    heads, cls = found
    split = f"--tp {attn_tp}" if dp <= 1 else f"attention TP {attn_tp} (--tp {attn_tp * dp} --dp {dp})"
    return (f"{split} with --engine sglang: SGLang 0.5.23 splits the {heads} vision heads over TP {attn_tp}, which "
            f"does not divide them ({cls}{_ASSERTS.get((tower(model) or ('',))[0], _VISION_ATTENTION)})")


def refusal(model, attn_tp: int, dp: int = 1) -> str | None:
    """Why SGLang 0.5.23 refuses this model's vision tower at this split (attention DP's own refusals first:
    engines/sglang_dp_vision.py); None if it builds it. fit screens each split by it (check_model before)."""
    if dp > 1:
        from .sglang_dp_vision import refusal as dp_refusal

        why = dp_refusal(model, attn_tp, dp)
        if why:
            return why
    return heads_refusal(model, attn_tp, dp)


def check_model(model) -> None:
    """Raise where SGLang refuses the tower whatever the split (llava_refusal)."""
    why = llava_refusal(model)
    if why:
        raise UsageError(why, "plan the text model alone with --set vision_config=null, or use --engine vllm")


def check(model, attn_tp: int, dp: int = 1) -> None:
    """Raise the refusal line (check_model, then refusal)."""
    check_model(model)
    why = refusal(model, attn_tp, dp)
    if why:
        raise_refusal(why)


__all__ = ["check", "check_model", "heads_refusal", "llava_refusal", "refusal"]
