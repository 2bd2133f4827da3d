"""Which routed experts are NVFP4 and how wide, for the engines' per-card NVFP4 MoE rules
(engines/vllm_nvfp4_moe.py for vLLM 0.34, engines/sglang_nvfp4_moe.py for SGLang 0.5.23).

EXPERTS names, by config model_type, the routed experts' module under a decoder layer (as vLLM 0.34 prefixes it; the
ModelOpt exclusion list is matched against it by engines/modelopt_config.py, for both engines) and the config fields of
their intermediate width, the first found. Every family here builds gated experts (gate and up projections fused
into w13: is_act_and_mul in vLLM, MoeRunnerConfig.is_gated in SGLang): SILU, Gemma 4 GELU_TANH.
vLLM 0.34: qwen2_moe.py, qwen3_moe.py, qwen3_next.py, deepseek_v2.py, glm4_moe.py prefix "<layer>.mlp.experts" of
moe_intermediate_size; mixtral.py MixtralMoE, minimax_m2.py MiniMaxM2MoE under block_sparse_moe of intermediate_size;
gemma4.py Gemma4DecoderLayer.experts (FusedMoEFactory, activation "gelu_tanh") of moe_intermediate_size, else
expert_intermediate_size. SGLang 0.5.23 builds the same FusedMoE widths (qwen3_moe.py / mixtral.py
add_prefix("experts", prefix) under the MLP block; gemma4_causal.py Gemma4MoE.experts under "<layer>.moe", of
config.moe_intermediate_size).

Added from the same wheels (vLLM module / class, then SGLang's), all gated (FusedMoE's default activation SILU,
is_act_and_mul / is_gated; SGLang fused_moe_triton/layer.py FusedMoE activation "silu", is_gated True):
- deepseek_v32 (vLLM vllm/models/deepseek_v32/nvidia/model.py, its decoder layer builds deepseek_v2.py DeepseekV2MoE
  under "<layer>.mlp"; SGLang deepseek_v2.py DeepseekV32ForCausalLM) and kimi_k2 (architectures
  DeepseekV3ForCausalLM: deepseek_v2.py on both): "<layer>.mlp.experts" of moe_intermediate_size.
- glm4_moe_lite: vLLM glm4_moe_lite.py Glm4MoeLite (glm4_moe.py Glm4MoE, FusedMoEFactory prefix "<mlp>.experts", of
  config.moe_intermediate_size); SGLang glm4_moe_lite.py Glm4MoeLiteSparseMoeBlock, the same.
- qwen3_vl_moe: vLLM qwen3_vl_moe.py Qwen3VLMoeForConditionalGeneration builds Qwen3MoeLLMForCausalLM on
  config.text_config under "language_model" (Qwen3VLMoeDecoderLayer = qwen3_moe.py Qwen3MoeSparseMoeBlock:
  "language_model.model.layers.<i>.mlp.experts", text_config.moe_intermediate_size; qwen3_vl.py's hf_to_vllm_mapper
  renames the checkpoint's "model.language_model." to "language_model.model."); SGLang qwen3_vl.py
  Qwen3VLForConditionalGeneration builds qwen3_vl_moe.py Qwen3MoeLLMModel on config.text_config under
  "model.language_model" (qwen3_moe.py Qwen3MoeDecoderLayer).
- qwen3_5_moe, and qwen3_5_moe_text saved flat (Qwen3_5MoeForCausalLM): vLLM vllm/models/qwen3_5/nvidia/model.py
  Qwen3_5MoeForConditionalGeneration -> Qwen3_5MoeForCausalLM under "language_model", whose Qwen3_5DecoderLayer
  (hf_text_config, model_type qwen3_5_moe_text) builds qwen3_next.py Qwen3NextSparseMoeBlock under "<layer>.mlp":
  FusedMoEFactory "<mlp>.experts" of moe_intermediate_size; SGLang qwen3_5.py Qwen3_5MoeForConditionalGeneration ->
  Qwen3_5MoeForCausalLM, qwen2_moe.py Qwen2MoeSparseMoeBlock ("<mlp>.experts", config.moe_intermediate_size).
- llama4, and llama4_text saved flat (Llama4ForCausalLM): vLLM mllama4.py Llama4ForConditionalGeneration builds
  llama4.py Llama4ForCausalLM on config.text_config under "language_model"; Llama4DecoderLayer's MoE layers build
  Llama4MoE under "<layer>.feed_forward", whose FusedMoEFactory "<feed_forward>.experts" is of config.intermediate_size
  (the dense layers' LlamaMLP takes intermediate_size_mlp); SGLang llama4.py Llama4MoE the same (mllama4.py builds
  Llama4ForCausalLM on text_config under "language_model").
- kimi_k25: vLLM kimi_k25.py KimiK25ForConditionalGeneration builds DeepseekV2ForCausalLM on config.text_config under
  "language_model" (its mapper renames nvidia/Kimi-K2.5-NVFP4's "language_model.layers." to
  "language_model.model.layers."); SGLang kimi_k25.py builds deepseek_v2.py DeepseekV3ForCausalLM on
  config.text_config. "<layer>.mlp.experts" of text_config.moe_intermediate_size.
A wrapper's width is read from its nested text config first (configs/resolve_family.py nested_text: what vLLM reads
as hf_text_config and both engines build the language model from), then the top level (a config saved flat).

Not in the table, so nothing checked: nemotron_h (nemotron_h.py: activation_without_mul(relu2), ungated experts,
which every NVFP4 backend pads); gpt_oss (its published checkpoints are MXFP4, quant_method mxfp4, not NVFP4; an
NVFP4 gpt-oss path was not read); minimax_m3_vl (vllm/models/minimax_m3/nvidia/model.py MiniMaxM3MoE: NVFP4 experts
come under ModelOpt MXFP8 with moe_quant_algo NVFP4 and qat_activation_key kNvfp4DynamicToken, which
FlashInferExperts / CutlassExpertsFp4 do not take: not modelled); kimi_linear, lfm2_moe, longcat_flash,
granitemoehybrid, jamba, dbrx (their experts' modules and widths not read against these backends here).
"""

from __future__ import annotations

from ..configs.quant_mixed import target_matches

EXPERTS = {
    **{t: ("mlp.experts", ("moe_intermediate_size",))
       for t in ("qwen2_moe", "qwen3_moe", "qwen3_next", "deepseek_v2", "deepseek_v3", "glm4_moe", "deepseek_v32",
                 "kimi_k2", "glm4_moe_lite", "qwen3_vl_moe", "qwen3_5_moe", "qwen3_5_moe_text", "kimi_k25")},
    "mixtral": ("block_sparse_moe.experts", ("intermediate_size",)),
    "minimax_m2": ("block_sparse_moe.experts", ("intermediate_size",)),
    "gemma4": ("experts", ("moe_intermediate_size", "expert_intermediate_size")),
    # the MoE layers' Llama4MoE: its experts are of intermediate_size (intermediate_size_mlp is the dense layers')
    **{t: ("feed_forward.experts", ("intermediate_size",)) for t in ("llama4", "llama4_text")},
}


# the gated experts' activation where SGLang 0.5.23 builds it other than SiLU: gemma4_causal.py Gemma4MoE's FusedMoE
# takes activation="gelu" (its default; Gemma4DecoderLayer passes none); every other family of EXPERTS builds SiLU
SGLANG_ACTIVATION = {"gemma4": "gelu"}


def sglang_activation(raw: dict) -> str:
    """The activation SGLang 0.5.23's FusedMoE runs for the routed experts of this config's family."""
    return SGLANG_ACTIVATION.get(str(raw.get("model_type") or ""), "silu")


def _width(raw: dict, field: str) -> int | None:
    """A positive int field of the text model: the nested text config's (a wrapper's language model is built from
    it), else the top level's."""
    from ..configs.resolve_family import nested_text

    for src in (nested_text(raw), raw):
        value = src.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def gated_experts(raw: dict) -> tuple[str, int] | None:
    """(the experts' module name, their intermediate width) for a family of EXPERTS, else None."""
    module, fields = EXPERTS.get(str(raw.get("model_type") or ""), (None, ()))
    width = next((w for w in (_width(raw, f) for f in fields) if w), None)
    return (module, width) if module is not None and width is not None else None


def _nvfp4_args(args) -> bool:
    """A compressed-tensors QuantizationArgs of NVFP4: tensor_group, float, 4 bits, group 16, symmetric (vLLM
    compressed_tensors.py _is_nvfp4_format; SGLang compressed_tensors.py _is_fp4a4_nvfp4 / _is_fp4a16_nvfp4)."""
    return isinstance(args, dict) and args.get("strategy") == "tensor_group" and args.get("type") == "float" \
        and args.get("num_bits") == 4 and args.get("group_size") == 16 and args.get("symmetric", True) is True


def ct_nvfp4(q: dict) -> str | None:
    """SGLang's reading (engines/sglang_nvfp4_moe.py; its own matcher is not compared with vLLM's, so only a config
    whose every group agrees is read): "W4A4" where every config group of a compressed-tensors config quantizes weights and input activations to
    NVFP4, "W4A16" where every group has NVFP4 weights and no input quantization; None otherwise, or where the
    ignore list names experts."""
    groups = q.get("config_groups")
    if not isinstance(groups, dict) or not groups or any("expert" in str(n) for n in q.get("ignore") or []):
        return None
    if not all(isinstance(g, dict) and _nvfp4_args(g.get("weights")) for g in groups.values()):
        return None
    if all(_nvfp4_args(g.get("input_activations")) for g in groups.values()):
        return "W4A4"
    return "W4A16" if all(g.get("input_activations") is None for g in groups.values()) else None


# the checkpoint's names of the experts' gate, up and down projections (vLLM 0.34 routed_experts.py RoutedExperts
# defaults gate_proj / up_proj / down_proj; mixtral.py and minimax_m2.py pass ckpt_names ("w1", "w2", "w3") = gate,
# down, up)
_PROJ = {"mixtral": ("w1", "w3", "w2"), "minimax_m2": ("w1", "w3", "w2")}
# where vLLM's prefix differs from the checkpoint module: minimax_m2.py builds block_sparse_moe with prefix "<layer>.mlp"
_VLLM_MODULE = {"minimax_m2": "mlp.experts"}


def ct_expert_group(q: dict, model_type: str, module: str) -> dict | None:
    """The config group vLLM 0.34 serves the routed experts with (CompressedTensorsMoEMethod.get_moe_method: the
    "<layer>.0.<gate|up|down>" names through get_scheme_dict / find_matched_target, "Linear" copied to
    "RoutedExperts"); None where they match no group, an ignore entry names them, their projections match different
    groups, or the config's layer prefix spellings disagree."""
    from .modelopt_config import _LAYER_PREFIXES

    groups = q.get("config_groups")
    if not isinstance(groups, dict) or any("expert" in str(n) for n in q.get("ignore") or []):
        return None
    schemes: dict[str, dict] = {}  # target_scheme_map: targets in group order, a later group's target replacing
    for g in groups.values():
        targets = g.get("targets") if isinstance(g, dict) else None
        if not isinstance(targets, list) or (len(targets) == 1 and str(targets[0]).endswith("Attention")):
            continue  # from_config drops a group whose one target is an Attention class
        for t in targets:
            schemes[str(t)] = g
    if "Linear" in schemes and "RoutedExperts" not in schemes:  # _add_fused_moe_to_target_scheme_map
        schemes["RoutedExperts"] = schemes["Linear"]
    module = _VLLM_MODULE.get(model_type, module)
    found = []
    for pre in _LAYER_PREFIXES:
        picked = []
        for proj in _PROJ.get(model_type, ("gate_proj", "up_proj", "down_proj")):
            name = f"{pre}.0.{module}.0.{proj}"
            target = (next((t for t in schemes if target_matches(name, t)), None)
                      or next((t for t in schemes if target_matches("RoutedExperts", t, contains=True)), None))
            picked.append(None if target is None else id(schemes[target]))
        if len(set(picked)) != 1:
            return None  # get_moe_method raises for projections in different schemes (not modelled here)
        found.append(picked[0])
    if len(set(found)) != 1 or found[0] is None:
        return None
    return next(g for g in schemes.values() if id(g) == found[0])


def ct_experts_nvfp4(q: dict, model_type: str, module: str) -> str | None:
    """"W4A4" / "W4A16" as ct_nvfp4 reads them, for the one group vLLM 0.34 serves the routed experts with
    (ct_expert_group), so an FP8 attention group beside an NVFP4 experts group counts."""
    group = ct_expert_group(q, model_type, module)
    if group is None or not _nvfp4_args(group.get("weights")):
        return None
    if _nvfp4_args(group.get("input_activations")):
        return "W4A4"
    return "W4A16" if group.get("input_activations") is None else None


__all__ = ["EXPERTS", "SGLANG_ACTIVATION", "ct_expert_group", "ct_experts_nvfp4", "ct_nvfp4", "gated_experts",
           "sglang_activation"]
