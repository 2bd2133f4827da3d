"""The vision towers vLLM 0.34 fails to build at a TP size that does not divide their attention heads, refused in one
line (the shared check: engines/vision_heads.py; SGLang's: engines/sglang_vision_refusal.py). Read in the wheel
(vllm/model_executor/...):

- Under the default --mm-encoder-tp-mode "weights" (config/multimodal.py MultiModalConfig) each family's vision
  attention splits its heads over the whole --tp: models/vision.py is_vit_use_data_parallel() is False, so the
  layers are built with disable_tp=False, and layers/linear.py QKVParallelLinear.__init__ takes num_heads =
  divide(total_num_heads, tp_size), where distributed/utils.py divide asserts ensure_divisibility ("12 is not
  divisible by 8": GLM-4.5V at --tp 8, vllm-project/vllm issue #24004). The attention classes divide the heads
  themselves as well (siglip.py SiglipAttention, clip.py CLIPAttention, qwen2_5_vl.py Qwen2_5_VisionAttention, which
  qwen3_vl.py Qwen3_VisionBlock builds for Qwen3-VL / Qwen3-VL-MoE / Qwen3.5 (vllm/models/qwen3_5 builds
  Qwen3_VisionTransformer), glm4_1v.py Glm4vVisionAttention, pixtral.py PixtralHFAttention and moonvit.py
  MoonVitEncoderLayer by divide; mllama4.py Llama4VisionAttention and idefics2_vision_model.py
  Idefics2VisionAttention by a plain assert). None pads: unlike SGLang, vLLM gives GLM-4.1V / 4.5V no dummy heads.
  vLLM 0.11's glm4_1v.py and qwen2_5_vl.py divide the same way; the rule is applied at every release kvplan models.
- is_vit_use_data_parallel(num_heads) falls back to data parallelism where TP does not divide the heads, but only
  kimi_k25.py, kimi_k25_vit.py and muse_glimmer.py pass the heads, none of the families below.
- InternViT (intern_vit.py InternParallelAttention, the internvl_chat / NVLM_D / h2ovl_chat / skywork_chat
  wrappers) builds its qkv / proj whole (disable_tp) where TP does not divide heads + num_dummy_heads (7 in
  nvlm_d.py, 0 in the others): not refused; kvplan counts that attention whole for an odd head count
  (configs/vision_internvl.py vllm_splits_attention).
- --mm-encoder-tp-mode data builds every tower linear whole (disable_tp) in the classes that set
  supports_encoder_tp_data (glm4_1v.py, qwen2_5_vl.py, qwen3_vl.py and the Qwen3.5 classes deriving from it,
  mllama4.py, kimi_vl.py, minicpmv.py but MiniCPMV2_0); config/model.py falls back to "weights" for the others
  (gemma3_mm.py, llava.py, llava_next.py, mistral3.py). kvplan does not model the data mode.
- Phi-3-vision's CLIP (phi3v.py CLIP_VIT_LARGE_PATCH14_336_CONFIG) has 16 heads fixed, not in the config: not checked.
"""

from __future__ import annotations

from .vision_heads import HeadsTable, raise_refusal, undivided_heads

_QWEN3 = "qwen3_vl.py Qwen3_VisionBlock's Qwen2_5_VisionAttention"
_CLIP = {"clip_vision_model": ("num_attention_heads", "clip.py CLIPAttention"),
         "siglip_vision_model": ("num_attention_heads", "siglip.py SiglipAttention")}
_GLM4V = ("num_heads", "glm4_1v.py Glm4vVisionAttention")
# model_type -> (the vision_config field of the heads, the vLLM 0.34 class splitting them over --tp); a LLaVA
# by its tower's vision_config model_type (a Pixtral tower kvplan does not count: not checked)
_SPLIT: HeadsTable = {
    "gemma3": ("num_attention_heads", "siglip.py SiglipAttention"),
    "qwen2_5_vl": ("num_heads", "qwen2_5_vl.py Qwen2_5_VisionAttention"), "qwen3_vl": ("num_heads", _QWEN3),
    "qwen3_vl_moe": ("num_heads", _QWEN3), "qwen3_5": ("num_heads", _QWEN3), "qwen3_5_moe": ("num_heads", _QWEN3),
    "glm4v": _GLM4V, "glm4v_moe": _GLM4V,
    "llama4": ("num_attention_heads", "mllama4.py Llama4VisionAttention"),
    "mistral3": ("num_attention_heads", "pixtral.py PixtralHFAttention"),
    "kimi_vl": ("num_attention_heads", "moonvit.py MoonVitEncoderLayer"),
    "minicpmv": ("num_attention_heads", "idefics2_vision_model.py Idefics2VisionAttention"),
    "llava": _CLIP, "llava_next": _CLIP,
}


def refusal(model, tp: int) -> str | None:
    """Why vLLM 0.34 fails to build this model's vision attention at --tp tp; None if it builds it. fit screens each
    split by it (fit/search.py _screen), `kvplan estimate --engine vllm` by check (engines/vllm.py simulate)."""
    found = undivided_heads(model, _SPLIT, tp)
    if found is None:
        return None
    heads, cls = found
    return (f"--tp {tp} with --engine vllm: vLLM 0.34 splits the {heads} vision heads over TP {tp}, which does not "
            f"divide them ({cls} and QKVParallelLinear: no dummy heads, no fallback to a whole tower under the "
            "default --mm-encoder-tp-mode weights; distributed/utils.py divide asserts)")


def check(model, tp: int) -> None:
    """Raise the refusal line where vLLM 0.34 fails to build the tower at --tp tp."""
    why = refusal(model, tp)
    if why:
        raise_refusal(why)


__all__ = ["check", "refusal"]
