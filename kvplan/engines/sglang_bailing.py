"""Ling 3.0 (BailingMoeV3ForCausalLM, model_type bailing_hybrid) as SGLang 0.5.23 pools it, and Ling / Ring 2.5
(BailingMoeV2_5ForCausalLM) as 0.5.9 and 0.5.23 pool it, where that differs from kvplan's reading of the config
(which follows vLLM 0.33's bailing_moe_v3.py and bailing_moe_linear.py).

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
Ling / Ring 2.5 (BailingMoeV2_5ForCausalLM), 0.5.9 and 0.5.23 alike (check_ling25):
- utils/hf_transformers (0.5.9 hf_transformers_utils.get_config): model_type bailing_hybrid is re-read through
  SGLang's own BailingHybridConfig, whose defaults are not the checkpoints' BailingMoeV2_5Config's:
  layer_group_size 1 (not 5), group_norm_size 1 (not 4); head_dim = head_dim or hidden_size // heads (128 when
  absent); num_linear_key_value_heads = num_attention_heads.
- layers_block_type: layer l full attention when (l + 1) % layer_group_size == 0, else linear (an int; 0.5.23
  also takes a list, 1 = linear, which models/bailing_moe_linear.py's is_linear_layer cannot compare, and
  BailingMoELinearModel asserts num_hidden_layers % layer_group_size == 0); full layers are MLA
  (configs/model_config.py: kv_lora_rank + qk_rope_head_dim a token) unless full_attention_type is not "mla".
- use_kda false (no short_conv_kernel_size): configs/hybrid_arch.py hybrid_lightning_config (0.5.9
  model_runner.hybrid_lightning_config) makes it a state model; mamba2_cache_params is
  Mamba2StateShape.create(intermediate_size=0, n_groups=0, num_heads=num_linear_key_value_heads, head_dim,
  state_size=head_dim, conv_kernel=1): a conv of (0, 0), temporal (heads / attn TP, head_dim, head_dim) in
  mamba2_state_dtype(None) (float32 unless SGLANG_MAMBA_SSM_DTYPE; the config's mamba_ssm_dtype is not read).
- models/bailing_moe_linear.py BailingMoELinearAttention asserts heads % attn TP == 0, tp <= group_norm_size and
  group_norm_size % tp == 0: SGLang does not start otherwise.
Where kvplan's reading and SGLang's differ, the SGLang plan is refused with the reason."""

from __future__ import annotations

from ..core.model import ModelSpec
from ..errors import UsageError

LING3 = "BailingMoeV3ForCausalLM"
LING25 = "BailingMoeV2_5ForCausalLM"
# SGLang's BailingHybridConfig defaults (0.5.9 and 0.5.23 configs/bailing_hybrid.py) for the fields check_ling25
# reads; layer_group_size (1) and group_norm_size (1) are handled where they are read
_DEFAULTS = {"num_hidden_layers": 20, "num_attention_heads": 16, "hidden_size": 2048}
_HINT = "use --engine vllm or ideal for this model"


def _raw(model: ModelSpec) -> dict | None:
    from .vllm_load import raw_config

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


def check_ling25(model: ModelSpec, tp: int, kda_by_conv: bool = True) -> tuple[int, int]:
    """(heads, head_dim) of a Ling / Ring 2.5 lightning state as SGLang's BailingHybridConfig reads them;
    refused where SGLang's reading of the config is not kvplan's, or where SGLang would not start (module
    docstring). kda_by_conv: the release's BailingHybridConfig turns use_kda on with short_conv_kernel_size
    (0.5.23; 0.5.9 pools every bailing_hybrid config as lightning)."""
    raw = _raw(model)
    name = f"SGLang: {model.name} ({LING25})"
    if raw is None:
        raise UsageError(f"{name}: kvplan checks SGLang's layer split and lightning state in the config file itself, "
                         "which it does not have here", "pass a local or bundled config.json")
    if kda_by_conv and raw.get("short_conv_kernel_size") is not None:
        raise UsageError(f"{name}: short_conv_kernel_size makes SGLang's BailingHybridConfig use_kda and pool a KDA "
                         "state (kimi_linear_config), not the lightning state kvplan reads for this architecture",
                         _HINT)
    if raw.get("full_attention_type", "mla") != "mla":
        raise UsageError(f"{name}: full_attention_type {raw.get('full_attention_type')!r} makes SGLang build GQA "
                         "attention (BailingMoEAttention) where model_config sizes an MLA pool", _HINT)
    group = raw.get("layer_group_size")
    if group is None:
        raise UsageError(f"{name}: no layer_group_size, so SGLang's BailingHybridConfig takes its default 1 (every "
                         "layer full attention) where the checkpoints' class (and kvplan) take 5", _HINT)
    n = _int(raw, "num_hidden_layers") if "num_hidden_layers" in raw else _DEFAULTS["num_hidden_layers"]
    n = len(model.layers) if n is None else n  # kvplan's reader has refused a non-integer count already
    if not isinstance(group, int) or isinstance(group, bool) or group <= 0:
        raise UsageError(f"{name}: layer_group_size {group!r}: SGLang's bailing_moe_linear.py is_linear_layer "
                         "compares it as a positive int", _HINT)
    if n % group:
        raise UsageError(f"{name}: SGLang does not start: BailingMoELinearModel asserts num_hidden_layers {n} % "
                         f"layer_group_size {group} == 0", _HINT)
    full = [(i + 1) % group == 0 for i in range(n)]
    ours = [bool(layer.caches) for layer in model.layers]
    if full != ours:
        raise UsageError(f"{name}: SGLang's BailingHybridConfig makes layers {[i for i, f in enumerate(full) if f]} "
                         "full attention ((i + 1) % layer_group_size == 0; layer_types is not read), where kvplan "
                         f"reads {[i for i, f in enumerate(ours) if f]}", _HINT)
    heads, hidden = (_int(raw, k) if k in raw else _DEFAULTS[k] for k in ("num_attention_heads", "hidden_size"))
    if not heads or not hidden:
        raise UsageError(f"{name}: num_attention_heads or hidden_size is not a positive integer in the config",
                         "fix the config")
    linear_heads = raw.get("num_linear_key_value_heads", heads)
    if linear_heads != heads:
        raise UsageError(f"{name}: num_linear_key_value_heads {linear_heads!r} sizes SGLang's lightning state while "
                         f"its layers use num_attention_heads {heads}, which kvplan does not model", _HINT)
    # BailingHybridConfig: head_dim = head_dim or hidden_size // num_attention_heads, 128 when absent
    head_dim = (_int(raw, "head_dim") if "head_dim" in raw else 128) or hidden // heads
    for layer in model.layers:
        s = layer.state
        if s is not None and (s.kind != "lightning" or s.ssm_elements != heads * head_dim * head_dim):
            raise UsageError(f"{name}: SGLang's lightning state is {heads} heads x {head_dim} x {head_dim}, which is "
                             "not the state kvplan reads", _HINT)
    if heads % tp:
        raise UsageError(f"SGLang: --tp {tp} does not divide {model.name}'s {heads} lightning heads "
                         "(BailingMoELinearAttention asserts it)", "use a TP that divides them")
    norm = raw.get("group_norm_size", 1)
    if tp > 1 and (not isinstance(norm, int) or isinstance(norm, bool) or tp > norm or norm % tp):
        raise UsageError(f"SGLang does not start {model.name} at --tp {tp}: BailingMoELinearAttention asserts "
                         f"tp <= group_norm_size and group_norm_size % tp == 0, and group_norm_size is {norm!r}"
                         + ("" if "group_norm_size" in raw else " (SGLang's BailingHybridConfig default)"),
                         "use a TP that divides group_norm_size, or --tp 1")
    return heads, head_dim


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


__all__ = ["LING3", "LING25", "check_ling3", "check_ling25", "uses_kda_attention"]
