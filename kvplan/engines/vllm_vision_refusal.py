"""The vision towers vLLM 0.34 fails to build at a TP size that does not divide their attention heads or the width of a
linear of theirs it splits (MLP, merger), refused in one line (the shared check: engines/vision_heads.py; SGLang's: engines/sglang_vision_refusal.py). Read in the wheel
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
  (gemma3_mm.py, llava.py, llava_next.py, mistral3.py). kvplan models it for the Qwen2.5-VL / Qwen3-VL / Qwen3.5 /
  GLM-4.1V / 4.5V classes (engines/vllm_encoder_dp.py: check is not applied there), not for the others.
- Phi-3-vision's CLIP: phi3v.py _init_img_processor builds clip.py CLIPVisionModel from CLIP_VIT_LARGE_PATCH14_336_CONFIG
  (16 heads, intermediate_size 4,096, fixed in code, not read from the config's img_processor): checked with those.
- Qwen2.5-Omni (qwen2_5_omni_thinker.py builds qwen2_5_vl.py Qwen2_5_VisionTransformer) and Qwen3-Omni
  (qwen3_omni_moe_thinker.py Qwen3Omni_VisionTransformer: Qwen3_VisionBlock's Qwen2_5_VisionAttention,
  Qwen3_VisionMLP, Qwen3_VisionPatchMerger) split their towers alike; their settings are thinker_config.vision_config.
  MiniCPM-o (minicpmo.py MiniCPMO derives MiniCPMV2_6: minicpmv.py init_vision_module builds
  idefics2_vision_model.py Idefics2VisionTransformer) as MiniCPM-V.

The widths (_WIDTHS), read the same way: each family's vision MLP and merger / projector linears are
ColumnParallelLinear (layers/linear.py __init__: divide(output_size, tp_size)), MergedColumnParallelLinear (asserts
every output size % tp_size == 0) and RowParallelLinear (divide(input_size, tp_size)), built with disable_tp only
under data parallelism (is_vit_use_data_parallel(), False under the default mode, as above), so a --tp that does not
divide a split width fails at start as for the heads. Where vLLM takes each width from (do not assume
vision_config.intermediate_size): qwen2_5_vl.py Qwen2_5_VisionTransformer passes mlp_hidden_dim =
vision_config.intermediate_size to Qwen2_5_VisionMLP.gate_up_proj (unpadded: Qwen2.5-VL-3B / 7B's 3,420 at TP 8
fails, 3,420 % 8 = 4), and Qwen2_5_VisionPatchMerger's mlp.0 is hidden_size x spatial_merge_size^2 wide; qwen3_vl.py
Qwen3_VisionMLP.linear_fc1 (intermediate_size) and Qwen3_VisionPatchMerger.linear_fc1 (hidden x merge^2);
glm4_1v.py Glm4vVisionBlock's Glm4vVisionMLP is out_hidden_size wide (mlp_hidden_dim=vision_config.out_hidden_size)
and Glm4vPatchMerger's gate_up_proj intermediate_size (its proj out_hidden_size); mllama4.py Llama4VisionMLP.fc1
(intermediate_size), Llama4VisionPixelShuffleMLP's fc1 (projector_input_dim), Llama4UnfoldConvolution.linear
(hidden_size); pixtral.py PixtralHFMLP.gate_up_proj, moonvit.py MLP2.fc0 (MoonVitPretrainedModel: mlp_dim =
intermediate_size), idefics2_vision_model.py Idefics2VisionMLP.fc1, siglip.py SiglipMLP.fc1, clip.py CLIPMLP.fc1,
intern_vit.py InternMLP.fc1 (split even where InternParallelAttention falls back whole: InternViT-300M's 4,096 at
TP 3 / 5 / 6 / 7 fails) and interns1_vit.py InternS1VisionMLP.fc1 (transformers' internvl; its attention is
nn.Linear, whole): intermediate_size. Whole, not checked: Gemma 3's projector (an nn.Parameter), Mistral 3's
patch merger and InternVL's mlp1 (nn.Linear), Kimi-VL's projector (ReplicatedLinear), MiniCPM-V's resampler
(resampler.py kv_proj ReplicatedLinear). Not checked: the projectors' text-hidden widths (llava.py / mistral3.py
linear_1 ColumnParallelLinear to text_config.hidden_size, mllama4.py Llama4MultiModalProjector), the text model's.
"""

from __future__ import annotations

from typing import Callable, Mapping, Union

from .vision_heads import HINT, HeadsTable, family_entry, raise_refusal, tower, undivided_heads, undivides

_QWEN3 = "qwen3_vl.py Qwen3_VisionBlock's Qwen2_5_VisionAttention"
_CLIP = {"clip_vision_model": ("num_attention_heads", "clip.py CLIPAttention"),
         "siglip_vision_model": ("num_attention_heads", "siglip.py SiglipAttention")}
_GLM4V = ("num_heads", "glm4_1v.py Glm4vVisionAttention")
_IDEFICS2 = ("num_attention_heads", "idefics2_vision_model.py Idefics2VisionAttention")
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
    "minicpmv": _IDEFICS2,
    "llava": _CLIP, "llava_next": _CLIP,
    "minicpmo": _IDEFICS2,
    "phi3_v": ("num_attention_heads", "phi3v.py's clip.py CLIPAttention"),
    "qwen2_5_omni": ("num_heads", "qwen2_5_omni_thinker.py's Qwen2_5_VisionAttention"),
    "qwen3_omni_moe": ("num_heads", "qwen3_omni_moe_thinker.py Qwen3_VisionBlock's Qwen2_5_VisionAttention"),
}

# the tower settings vLLM 0.34 builds from instead of the config's: phi3v.py CLIP_VIT_LARGE_PATCH14_336_CONFIG
_FIXED = {"phi3_v": {"num_attention_heads": 16, "intermediate_size": 4096}}


def _field(name: str) -> Callable[[dict], object]:
    return lambda v: v.get(name)


def _merged(v: dict) -> object:
    """A Qwen patch merger's width: hidden_size x spatial_merge_size^2 (qwen2_5_vl.py / qwen3_vl.py)."""
    hidden, merge = v.get("hidden_size"), v.get("spatial_merge_size")
    ints = all(isinstance(x, int) and not isinstance(x, bool) for x in (hidden, merge))
    return hidden * merge ** 2 if ints else None


# a linear width vLLM 0.34 splits over --tp: (what it is, its value from the tower's settings, the module)
Width = tuple[str, Callable[[dict], object], str]
_MLP = ("MLP intermediate_size", _field("intermediate_size"))
_MERGER = ("merger width hidden_size x spatial_merge_size^2", _merged)
_Q25 = ((*_MLP, "Qwen2_5_VisionMLP.gate_up_proj"), (*_MERGER, "Qwen2_5_VisionPatchMerger mlp.0"))
_Q3 = ((*_MLP, "qwen3_vl.py Qwen3_VisionMLP.linear_fc1"), (*_MERGER, "qwen3_vl.py Qwen3_VisionPatchMerger.linear_fc1"))
_GLM_W = (("MLP width out_hidden_size", _field("out_hidden_size"), "glm4_1v.py Glm4vVisionMLP.gate_up_proj"),
          ("merger intermediate_size", _field("intermediate_size"), "glm4_1v.py Glm4vPatchMerger.gate_up_proj"))
_INTERN = ((*_MLP, "intern_vit.py InternMLP.fc1"),)
_IDEFICS2_W = ((*_MLP, "idefics2_vision_model.py Idefics2VisionMLP.fc1"),)
_CLIP_W = {"clip_vision_model": ((*_MLP, "clip.py CLIPMLP.fc1"),),
           "siglip_vision_model": ((*_MLP, "siglip.py SiglipMLP.fc1"),)}
# model_type -> the widths its tower splits (module docstring), a LLaVA by its vision_config model_type
_WIDTHS: Mapping[str, Union[tuple[Width, ...], Mapping[str, tuple[Width, ...]]]] = {
    "gemma3": ((*_MLP, "siglip.py SiglipMLP.fc1"),),
    "qwen2_5_vl": tuple((w, f, f"qwen2_5_vl.py {c}") for w, f, c in _Q25),
    "qwen2_5_omni": tuple((w, f, f"qwen2_5_omni_thinker.py's qwen2_5_vl.py {c}") for w, f, c in _Q25),
    "qwen3_vl": _Q3, "qwen3_vl_moe": _Q3, "qwen3_5": _Q3, "qwen3_5_moe": _Q3,
    "qwen3_omni_moe": ((*_MLP, "qwen3_omni_moe_thinker.py Qwen3_VisionMLP.linear_fc1"),
                       (*_MERGER, "qwen3_omni_moe_thinker.py Qwen3_VisionPatchMerger mlp.0")),
    "glm4v": _GLM_W, "glm4v_moe": _GLM_W,
    "llama4": ((*_MLP, "mllama4.py Llama4VisionMLP.fc1"),
               ("projector_input_dim", _field("projector_input_dim"), "mllama4.py Llama4VisionPixelShuffleMLP fc1"),
               ("hidden_size", _field("hidden_size"), "mllama4.py Llama4UnfoldConvolution.linear")),
    "mistral3": ((*_MLP, "pixtral.py PixtralHFMLP.gate_up_proj"),),
    "kimi_vl": ((*_MLP, "moonvit.py MLP2.fc0"),),
    "minicpmv": _IDEFICS2_W, "minicpmo": _IDEFICS2_W,
    "llava": _CLIP_W, "llava_next": _CLIP_W,
    "phi3_v": ((*_MLP, "phi3v.py's clip.py CLIPMLP.fc1"),),
    "internvl_chat": _INTERN, "NVLM_D": _INTERN, "h2ovl_chat": _INTERN, "skywork_chat": _INTERN,
    "internvl": ((*_MLP, "interns1_vit.py InternS1VisionMLP.fc1"),),
}


def undivided_width(model, tp: int) -> tuple[str, int, str] | None:
    """(what, width, the module) of the first linear width of the tower vLLM 0.34 splits over --tp tp that tp does
    not divide; None where it divides them all, or nothing is checked (a field the settings lack)."""
    found = family_entry(model, _WIDTHS, _FIXED) if tp > 1 else None
    if found is None:
        return None
    widths, settings = found
    for what, value_of, cls in widths:
        width = value_of(settings)
        if undivides(width, tp):
            return what, width, cls
    return None


def refusal(model, tp: int) -> str | None:
    """Why vLLM 0.34 fails to build this model's vision tower at --tp tp (its heads, then its widths); None if it
    builds it. fit screens each split by it (fit/screen.py screen), `kvplan estimate --engine vllm` by check
    (engines/vllm.py simulate)."""
    found = undivided_heads(model, _SPLIT, tp, _FIXED)
    if found is not None:
        heads, cls = found
        return (f"--tp {tp} with --engine vllm: vLLM 0.34 splits the {heads} vision heads over TP {tp}, which does "
                f"not divide them ({cls} and QKVParallelLinear: no dummy heads, no fallback to a whole tower under "
                "the default --mm-encoder-tp-mode weights; distributed/utils.py divide asserts)")
    width = undivided_width(model, tp)
    if width is None:
        return None
    what, size, cls = width
    return (f"--tp {tp} with --engine vllm: vLLM 0.34 splits the vision tower's {what} of {size:,} over TP {tp}, "
            f"which does not divide it ({size:,} % {tp} = {size % tp}: {cls}, a tensor-parallel linear; "
            "layers/linear.py asserts the split, no fallback to a whole tower under the default "
            "--mm-encoder-tp-mode weights)")


def _hint(model) -> str:
    """The refusal's hint: drop the tower where --set reaches it (configs/vision_towers.py tower_key)."""
    from ..configs.vision_towers import tower_key

    key = tower_key((tower(model) or ("",))[0])
    if key == "thinker_config":  # --set does not reach thinker_config's towers (configs/vision_count.py Tower.note)
        return "choose a --tp that divides the vision tower's heads and split widths"
    return HINT.replace("the vision heads", "the vision heads and split widths").replace("vision_config", key)


def check(model, tp: int, whole: bool = False) -> None:
    """Raise the refusal line where vLLM 0.34 fails to build the tower at --tp tp; whole: built whole on every GPU
    (--mm-encoder-tp-mode data, engines/vllm_encoder_dp.py tower_whole), nothing to divide."""
    why = None if whole else refusal(model, tp)
    if why:
        raise_refusal(why, _hint(model))


__all__ = ["check", "refusal", "undivided_width"]
