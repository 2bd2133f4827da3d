"""Per-family routes and refusals of kvplan's vLLM pool: DeepSeek-V4 and the packed-slab families pooled by modules
of their own, Kimi K3's KDA checkpoint page, Command R's q/k norm at a TP above its KV heads, and what --emit vllm
does not model."""

from __future__ import annotations

from ..core.model import ModelSpec
from ..errors import UsageError
from .vllm_rules import VllmRules


def is_deepseek_v4(model: ModelSpec) -> bool:
    """DeepSeek-V4's layers (a compressor state): vLLM pools them by their own rules (vllm_dsv4.py)."""
    return any(layer.state is not None and layer.state.kind == "compressor" for layer in model.layers)


KIMI_K3 = "KimiK3ForConditionalGeneration"


def kimi_k3_checkpoints(model: ModelSpec, rules: VllmRules, gpu: str | None, notes: list[str]) -> bool:
    """Whether Kimi K3's KDA layers keep a prefill-checkpoint state page (0.33 and 0.34 models/kimi_k3/nvidia/kda.py:
    get_kv_cache_spec sets num_prefill_checkpoint_blocks when resolve_kda_prefill_backend picks FlashKDA, which
    it does by default on SM 9, 10 and 12 for a bf16 model with a bounded gate). False for other models."""
    if model.architecture != KIMI_K3:
        return False
    from .vllm_dsv4 import require_read

    require_read("Kimi K3", rules, "kvplan read Kimi K3's KDA pages in vLLM 0.33 and 0.34 only")
    from ..capacity.gpus import CUDA_CAPABILITY

    capability = CUDA_CAPABILITY.get(gpu or "")
    if capability is None:
        notes.append("Kimi K3: no known GPU given; vLLM's FlashKDA prefill (SM 9, 10, 12) is assumed, with its "
                     "prefill-checkpoint state page")
        return True
    if capability[0] not in (9, 10, 12):
        notes.append(f"Kimi K3: FlashKDA does not run on SM {capability[0]}.{capability[1]}; vLLM's Triton KDA "
                     "prefill keeps no checkpoint page")
        return False
    return True


# Families whose vLLM pool is a packed slab kvplan models in a module of its own, by GPU: family -> (label,
# module, pool function)
PACKED_POOLS = {
    "deepseek_v41_text": ("DeepSeek-V4.1", "vllm_dsv41", "simulate_dsv41"),
    "glm5_next_text": ("GLM-5-Next", "vllm_glm5next", "simulate_glm5next"),
    "qwen4_exp_text": ("Qwen4-Exp", "vllm_qwen4exp", "simulate_qwen4exp"),
    "qwen3_8_flash_next_text": ("Qwen4-Exp", "vllm_qwen4exp", "simulate_qwen4exp"),
    "step5": ("Step-5", "vllm_step5", "simulate_step5"),
}


def check_modelled(model: ModelSpec) -> None:
    """Refuse what kvplan knows vLLM sizes by rules it has not modelled: `vllm serve` flags for DeepSeek-V4."""
    if is_deepseek_v4(model):
        raise UsageError(
            f"--emit vllm: the flags for {model.name} are not modelled (vLLM's DeepSeek-V4 pool is: use --engine vllm)",
            "drop --emit vllm")



def cohere_qk_norm_refusal(model, tp: int) -> str | None:
    """Why vLLM cannot load a Command R config with use_qk_norm at a TP above its KV heads, else None (or where the
    config cannot be read again). vLLM 0.34 commandr.py CohereAttention builds k_norm of [max(1, KV heads / TP),
    head_dim] and loads it with row_parallel_weight_loader (model_loader/weight_utils.py), which narrows the
    checkpoint's [KV heads, head_dim] at tp_rank x rows: a rank at or past the KV heads narrows outside the tensor."""
    from .vllm_load import raw_config

    raw = raw_config(model) or {}
    kv = raw.get("num_key_value_heads") or raw.get("num_attention_heads")
    if not raw.get("use_qk_norm") or not isinstance(kv, int) or kv <= 0 or tp <= kv:
        return None
    return (f"vLLM cannot load {model.name} at --tp {tp}: with use_qk_norm its k_norm holds {kv} KV heads' rows, and "
            f"vLLM 0.34 commandr.py loads them with row_parallel_weight_loader, one row a rank at rank x 1, so ranks "
            f"{kv} to {tp - 1} read past the tensor")
