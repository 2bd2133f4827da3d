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
    """"W4A4" where every config group of a compressed-tensors config quantizes weights and input activations to
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


__all__ = ["EXPERTS", "ct_nvfp4", "gated_experts"]
