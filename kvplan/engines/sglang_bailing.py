"""Ling 3.0 (BailingMoeV3ForCausalLM, model_type bailing_hybrid) as SGLang 0.5.23 pools it, where that differs from
kvplan's reading of the config (which follows vLLM 0.33's bailing_moe_v3.py).

Read in the 0.5.23 wheel (python/sglang/srt/...):
- configs/bailing_hybrid.py BailingHybridConfig: layers_block_type makes layer l full attention when
  (l + 1) % layer_group_size == 0 (default 1: every layer), else linear, with no tail rule (a list: 1 = linear);
  full_attention_layer_ids size the KV cell (model_executor/pool_configurator.py), linear_layer_ids the state
  pool. use_kda = short_conv_kernel_size is not None; mamba2_cache_params is then
  KimiLinearCacheParams(KimiLinearStateShape.create(num_heads=num_attention_heads, head_dim=head_dim,
  conv_kernel_size=short_conv_kernel_size)), head_dim = config head_dim or hidden_size // num_attention_heads
  (128 when absent): Kimi Linear's shape and dtype (configs/mamba_utils.py), as kvplan sizes it.
- configs/model_config.py: BailingMoeV3ForCausalLM is MLA with qk_rope_head_dim 0 under use_mla_nope;
  models/bailing_moe_v3.py BailingMoELinearDecoderLayer builds the MLA only when full_attention_type is "mla"
  (the default), else a GQA BailingMoEAttention.
- configs/model_config.py uses_kda_attention (cuda_graph_hook.disable_breakable_cudagraph_if_incompatible): true
  only for a linear_attn_config with kda_layers, or layer_types naming "linear_attention" beside linear_num_heads
  and linear_head_dim; a Ling 3.0 config without those keeps the breakable prefill CUDA graph.
Where kvplan's reading and SGLang's differ, the SGLang plan is refused with the reason."""

from __future__ import annotations

from ..core.model import ModelSpec
from ..errors import UsageError

LING3 = "BailingMoeV3ForCausalLM"
_HINT = "use --engine vllm or ideal for this model"


def _raw(model: ModelSpec) -> dict | None:
    from .vllm_profile import raw_config

    return raw_config(model)


def _int(raw: dict, key: str):
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_ling3(model: ModelSpec) -> None:
    """Refuse a Ling 3.0 plan whose SGLang pool is not the one kvplan reads (see the module's docstring)."""
    raw = _raw(model)
    name = f"SGLang: {model.name} ({LING3})"
    if raw is None:
        raise UsageError(f"{name}: kvplan checks SGLang's layer split and KDA shape in the config file itself, "
                         "which it does not have here", "pass a local or bundled config.json")
    if raw.get("short_conv_kernel_size") is None:
        raise UsageError(f"{name}: no short_conv_kernel_size, so SGLang's BailingHybridConfig has use_kda false and "
                         "pools a lightning state, which kvplan does not model for SGLang", _HINT)
    if raw.get("full_attention_type", "mla") != "mla":
        raise UsageError(f"{name}: full_attention_type {raw.get('full_attention_type')!r} makes SGLang build GQA "
                         "attention (BailingMoEAttention), not the MLA kvplan reads", _HINT)
    if raw.get("use_mla_nope"):
        raise UsageError(f"{name}: use_mla_nope makes SGLang's latent kv_lora_rank wide (qk_rope_head_dim 0), "
                         "not the kv_lora_rank + qk_rope_head_dim kvplan reads", _HINT)
    n = len(model.layers)
    group = raw.get("layer_group_size", 1)
    if isinstance(group, list) and len(group) == n:
        full = [g != 1 for g in group]
    elif isinstance(group, int) and not isinstance(group, bool) and group > 0:
        full = [(i + 1) % group == 0 for i in range(n)]
    else:
        raise UsageError(f"{name}: layer_group_size {group!r} is not one SGLang's BailingHybridConfig reads", _HINT)
    ours = [bool(layer.caches) for layer in model.layers]
    if full != ours:
        raise UsageError(f"{name}: SGLang's BailingHybridConfig makes layers {[i for i, f in enumerate(full) if f]} "
                         "full attention ((i + 1) % layer_group_size == 0, no tail rule), where kvplan reads "
                         f"{[i for i, f in enumerate(ours) if f]}", _HINT)
    heads = _int(raw, "num_attention_heads")
    # BailingHybridConfig: head_dim = head_dim or hidden_size // num_attention_heads, head_dim 128 when absent
    head_dim = _int(raw, "head_dim") if "head_dim" in raw else 128
    if not head_dim and heads and _int(raw, "hidden_size"):
        head_dim = _int(raw, "hidden_size") // heads
    for layer in model.layers:
        s = layer.state
        if s is not None and (s.kind != "kda" or s.heads != heads or s.head_dim != head_dim):
            raise UsageError(f"{name}: SGLang sizes its KDA state with num_attention_heads {heads} x head_dim "
                             f"{head_dim}, where kvplan reads {s.heads} x {s.head_dim} (linear_num_heads / "
                             "linear_head_dim)", _HINT)


def uses_kda_attention(model: ModelSpec) -> bool:
    """configs/model_config.py uses_kda_attention, for the models kvplan pools with a KDA state."""
    if not any(layer.state is not None and layer.state.kind == "kda" for layer in model.layers):
        return False
    if (model.architecture or "") != LING3:
        return True  # Kimi Linear: linear_attn_config with kda_layers
    raw = _raw(model) or {}
    texts = [raw] + [raw[k] for k in ("text_config",) if isinstance(raw.get(k), dict)]
    return any(isinstance(t.get("layer_types"), list) and "linear_attention" in t["layer_types"]
               and t.get("linear_num_heads") is not None
               and t.get("linear_head_dim") is not None for t in texts)


__all__ = ["LING3", "check_ling3", "uses_kda_attention"]
