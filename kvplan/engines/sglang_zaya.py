"""ZAYA1 (ZayaForCausalLM, model_type zaya) as SGLang 0.5.23 pools it: the attention K/V cell and the CCA state
SGLang keeps in its Mamba state pool (HybridReqToTokenPool / MambaPool).

Read in the 0.5.23 wheel (python/sglang/srt/...):
- configs/zaya.py ZayaConfig, which SGLang registers over transformers' own (AutoConfig.register exist_ok=True),
  read in the Megatron-style layout (kvplan.configs.zaya_layout holds that reading, shared with kvplan's own):
  full_attention_layer_ids are the "a" entries of zaya_layers, num_attention_heads the first non-zero
  cca_num_q_heads, num_query_groups the first non-zero num_query_groups_list entry, asserted equal to
  num_key_value_heads (default 2); head_dim defaults to 128 (kv_channels when head_dim is null).
- models/zaya.py ZayaForCausalLM.load_weights knows the Megatron-style names only (self_attn.qkv.linear_q ...,
  zaya_block.experts.local_experts.<i>.linear_fc1 on odd layer ids) and skips any other key with a warning, so
  a checkpoint in transformers' layout (no zaya_layers: q_proj / mlp.experts.gate_up_proj names, attention and
  MoE in one layer) would be served with unloaded weights: refused.
- configs/hybrid_arch.py mamba2_config takes a ZayaConfig: a state model (mambaish_config); the KV cell counts
  full_attention_layer_ids (model_executor/pool_configurator.py), the state pool linear_layer_ids, the same layers.
- ZayaConfig.mamba2_cache_params: per attention layer conv [((heads + KV heads) x head_dim / TP,
  (cca_time0 - 1) + (cca_time1 - 1)), (hidden_size, 1)] (the conv_qk padding, split by TP, and prev_hs, the whole
  hidden state on every rank), temporal (1, 1, 0): nothing; conv dtype SGLANG_MAMBA_CONV_DTYPE (bfloat16). The
  per-request bytes are BaseLinearStateParams.mamba_cache_per_req: the conv shapes' elements x 2 B x layers.
- models/zaya.py ZayaAttention asserts attention TP == global TP (no DP attention), num_attention_heads % TP == 0
  and num_query_groups % TP == 0; RadixAttention takes KV heads / TP and no sliding window (swa_layers is stored,
  not read). ZayaBlock raises ValueError when TP > num_experts (default 16).
- arg_groups/overrides.py: ZayaForCausalLM is in _MAMBA_RADIX_CACHE_ARCHS but not _MAMBA_EXTRA_BUFFER_ARCHS, so its
  radix cache runs no_buffer: three state slots a request (as LFM2).
Where kvplan's reading of the K/V shape and SGLang's differ, or SGLang would not start, the plan is refused."""

from __future__ import annotations

from ..configs.zaya_layout import first_nonzero, is_megatron
from ..core.model import ModelSpec
from ..errors import UsageError

ZAYA = "ZayaForCausalLM"
CONV_DTYPE_BYTES = 2  # mamba2_state_dtype: SGLANG_MAMBA_CONV_DTYPE, bfloat16 unless set
# ZayaConfig's defaults for the fields read here (0.5.23 configs/zaya.py)
_DEFAULTS = {"num_hidden_layers": 80, "num_attention_heads": 8, "num_query_groups": 2, "num_key_value_heads": 2,
             "head_dim": 128, "hidden_size": 2048, "cca_time0": 2, "cca_time1": 2, "num_experts": 16}


def _get(raw: dict, key: str):
    value = raw.get(key, _DEFAULTS[key])
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def zaya_shape(model: ModelSpec, tp: int, release: str) -> tuple[int, int, int, int, tuple[str, ...]]:
    """(attention layers, KV heads per rank, head_dim, state bytes per request per rank, notes) of ZAYA1 as
    SGLang 0.5.23 reads its config; refused where SGLang would not start or reads a K/V other than kvplan's, and
    for a release without ZayaConfig (0.5.9: no configs/zaya.py, no state pool for it to read)."""
    from .sglang_registry_data import REGISTRY
    from .vllm_load import raw_config

    if release not in REGISTRY.get(ZAYA, ()):
        raise UsageError(f"SGLang {release} registers no {ZAYA} and has no ZayaConfig to pool its CCA state with",
                         "use --engine sglang (0.5.23), vllm or ideal for this model")
    raw = raw_config(model)
    name = f"SGLang: {model.name} ({ZAYA})"
    if raw is None:
        raise UsageError(f"{name}: kvplan reads SGLang's layer split and CCA state from the config file itself, "
                         "which it does not have here", "pass a local or bundled config.json")
    if not is_megatron(raw):
        raise UsageError(f"{name}: SGLang 0.5.23 cannot load ZAYA1 in transformers' layout (no zaya_layers): "
                         "ZayaForCausalLM.load_weights reads Megatron-style weight names only (self_attn.qkv.*, "
                         "zaya_block.*) and skips the rest, so it would serve unloaded weights",
                         "use --engine vllm for this checkpoint, or a Megatron-style one (zaya_layers) with sglang")
    heads = first_nonzero(raw, "cca_num_q_heads") or _get(raw, "num_attention_heads")
    groups = first_nonzero(raw, "num_query_groups_list") or _get(raw, "num_query_groups")
    kv_heads = _get(raw, "num_key_value_heads")
    head_dim = raw.get("head_dim", _DEFAULTS["head_dim"])
    head_dim = raw.get("kv_channels") if head_dim is None else head_dim
    hidden, t0, t1, experts = (_get(raw, k) for k in ("hidden_size", "cca_time0", "cca_time1", "num_experts"))
    if not all(isinstance(v, int) and v > 0 for v in (heads, groups, kv_heads, head_dim, hidden, t0, t1, experts)):
        raise UsageError(f"{name}: a head count, head_dim, hidden_size, cca_time0 / cca_time1 or num_experts is not a "
                         "positive integer as SGLang's ZayaConfig reads the config", "fix the config")
    if groups != kv_heads:
        raise UsageError(f"{name}: SGLang does not start: ZayaConfig asserts num_query_groups ({groups}"
                         + ("" if "num_query_groups" in raw or first_nonzero(raw, "num_query_groups_list") else
                            ", its default") + f") == num_key_value_heads ({kv_heads})",
                         "set num_query_groups to num_key_value_heads in config.json")
    if heads % tp or kv_heads % tp:
        raise UsageError(f"SGLang does not start {model.name} at --tp {tp}: ZayaAttention shards heads across ranks "
                         f"and asserts num_attention_heads ({heads}) and num_query_groups ({kv_heads}) divisible "
                         "by TP (no KV replication)", "use a TP that divides both")
    if tp > experts:
        raise UsageError(f"SGLang does not start {model.name} at --tp {tp}: ZayaBlock raises ValueError when TP is "
                         f"greater than num_experts ({experts})", f"use --tp {experts} or less")
    attn = [c for layer in model.layers for c in layer.caches if c.kind == "attention"]
    if {(c.heads, c.key_dim, c.value_dim) for c in attn} != {(kv_heads, head_dim, head_dim)}:
        raise UsageError(f"{name}: SGLang's attention is {kv_heads} KV heads x {head_dim}, which is not the K/V "
                         "kvplan reads from the config (SGLang reads kv_channels only where head_dim is written "
                         "null, else head_dim, default 128)", "write head_dim into config.json, or plan without "
                         "--engine")
    layers = len(attn)  # the "a" entries of zaya_layers, as SGLang's full_attention_layer_ids
    conv = (heads + kv_heads) * head_dim // tp * ((t0 - 1) + (t1 - 1)) + hidden * 1
    return layers, kv_heads // tp, head_dim, conv * CONV_DTYPE_BYTES * layers, ()


__all__ = ["ZAYA", "zaya_shape"]
