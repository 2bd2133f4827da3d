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
"""

from __future__ import annotations

from .fp8_blocks import config_int

EXPERTS = {
    **{t: ("mlp.experts", ("moe_intermediate_size",))
       for t in ("qwen2_moe", "qwen3_moe", "qwen3_next", "deepseek_v2", "deepseek_v3", "glm4_moe")},
    "mixtral": ("block_sparse_moe.experts", ("intermediate_size",)),
    "minimax_m2": ("block_sparse_moe.experts", ("intermediate_size",)),
    "gemma4": ("experts", ("moe_intermediate_size", "expert_intermediate_size")),
}


def gated_experts(raw: dict) -> tuple[str, int] | None:
    """(the experts' module name, their intermediate width) for a family of EXPERTS, else None."""
    module, fields = EXPERTS.get(str(raw.get("model_type") or ""), (None, ()))
    width = next((w for w in (config_int(raw, f) for f in fields) if w), None)
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


def _matches(value: str, target: str, contains: bool = False) -> bool:
    """vLLM 0.34 utils/config_utils.py is_equal_or_regex_match: re.match after "re:", else equal (or, for a class
    name, contained)."""
    import re

    if target.startswith("re:"):
        return re.match(target[3:], value) is not None
    return target.lower() in value.lower() if contains else target == value


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
            target = (next((t for t in schemes if _matches(name, t)), None)
                      or next((t for t in schemes if _matches("RoutedExperts", t, contains=True)), None))
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


__all__ = ["EXPERTS", "ct_expert_group", "ct_experts_nvfp4", "ct_nvfp4", "gated_experts"]
