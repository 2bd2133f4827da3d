"""Ling / Ring (inclusionAI's "Bailing" models) as vLLM 0.33 builds them.

- model_type bailing_moe: BailingMoeForCausalLM (Ling-lite / plus, remote BailingMoeConfig) and
  BailingMoeV2ForCausalLM (Ling / Ring 2.0, remote BailingMoeV2Config), one class in vLLM 0.33
  (model_executor/models/bailing_moe.py): GQA K/V of num_key_value_heads x head_dim (head_dim, else
  hidden / heads) on every layer; weights: fused query_key_value [+bias with use_bias or use_qkv_bias], dense
  [+bias with use_bias], per-head query / key norms with use_qk_norm (nn.LayerNorm, with a bias, unless
  use_rmsnorm), a dense MLP on layers below first_k_dense_replace, else BailingMoE: router (hidden x experts),
  expert_bias with moe_router_enable_expert_bias, the routed experts and one shared MLP of
  (moe_shared_expert_intermediate_size, else moe_intermediate_size) x num_shared_experts; word embeddings and an
  LM head unless tie_word_embeddings. No MTP module (vLLM 0.33 has none for these two classes).
- model_type bailing_hybrid with BailingMoeV2_5ForCausalLM (Ling / Ring 2.5, 2.6: bailing_moe_linear.py):
  full layers where (i + 1) % layer_group_size == 0 are MLA, the rest lightning linear attention
  (BailingMoELinearAttention): one heads x head_dim x head_dim state in the model dtype, no conv
  (get_mamba_state_shape_from_config: MambaStateShapeCalculator.linear_attention_state_shape); defaults from
  the checkpoints' BailingMoeV2_5Config (inclusionAI/Ring-V2.5 models/configuration_bailing_moe_v2_5.py).
- bailing_hybrid with BailingMoeV3ForCausalLM (Ling 3.0) or no architecture: Kimi Delta Attention (hybrid.py
  bailing_hybrid_state, params_hybrid.bailing_hybrid).
"""

from __future__ import annotations

from ..core.layers import RecurrentState
from ..errors import ConfigError
from .fields import Fields
from .hybrid import bailing_hybrid_state, model_storage
from .param_parts import gated_mlp, mla, moe_stack

V1 = "BailingMoeForCausalLM"
V2 = "BailingMoeV2ForCausalLM"
V25 = "BailingMoeV2_5ForCausalLM"
V3 = "BailingMoeV3ForCausalLM"

# BailingMoeConfig's defaults (inclusionAI/Ling models/configuration_bailing_moe.py) for the fields vLLM's
# bailing_moe.py reads; intermediate_size and moe_intermediate_size default to None there (a config must give
# them). num_key_value_heads 0 is refused where it is read.
V1_DEFAULTS = {"vocab_size": 30592, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
               "num_key_value_heads": 0, "use_qkv_bias": False, "use_bias": True, "tie_word_embeddings": False,
               "num_experts": 16, "num_shared_experts": 0, "num_experts_per_tok": 2, "first_k_dense_replace": 0}
# BailingMoeV2Config (the Ling 2.0 checkpoints' configuration_bailing_moe_v2.py): only the defaults kvplan has
# read (its first arguments); every other field vLLM reads must be in the config.
V2_DEFAULTS = {"vocab_size": 157184, "hidden_size": 2048, "intermediate_size": 5120, "num_hidden_layers": 20,
               "num_attention_heads": 16, "num_key_value_heads": 4, "use_qkv_bias": False, "use_bias": False,
               "tie_word_embeddings": False}
# BailingMoeV2_5Config (inclusionAI/Ring-V2.5 models/configuration_bailing_moe_v2_5.py)
V25_DEFAULTS = {"vocab_size": 157184, "hidden_size": 2048, "intermediate_size": 5120, "num_hidden_layers": 20,
                "num_attention_heads": 16, "use_qkv_bias": False, "use_bias": False, "num_experts": 256,
                "num_shared_experts": 1, "num_experts_per_tok": 8, "moe_intermediate_size": 512,
                "first_k_dense_replace": 1, "head_dim": 128, "use_qk_norm": True,
                "moe_router_enable_expert_bias": True, "layer_group_size": 5, "kv_lora_rank": 512,
                "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128}


# vLLM 0.33's BailingMoeV3TextConfig (transformers_utils/configs/bailing_moe_v3_vl.py): the text model of
# BailingMoeV3VLForConditionalGeneration, for a sparse text_config (its architectures default to
# BailingMoeV3ForCausalLM, which builds it)
V3_VL_TEXT_DEFAULTS = {"vocab_size": 157184, "hidden_size": 2048, "intermediate_size": 5120, "num_hidden_layers": 20,
                       "num_attention_heads": 16, "num_key_value_heads": 4, "num_experts": 256,
                       "num_shared_experts": 1, "num_experts_per_tok": 8, "moe_intermediate_size": 512,
                       "moe_shared_expert_intermediate_size": 512, "first_k_dense_replace": 1, "head_dim": 128,
                       "layer_group_size": 5, "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64,
                       "v_head_dim": 128, "qk_nope_head_dim": 128, "gated_attention_proj_granularity_type": None,
                       "short_conv_kernel_size": 4, "tie_word_embeddings": False, "max_position_embeddings": 32768}


def architecture(f: Fields) -> str | None:
    names = f.get("architectures")
    if isinstance(names, list) and names and isinstance(names[0], str):
        return names[0].strip()
    return None


def _table(f: Fields) -> dict:
    if f.model_type == "sarvam_moe":  # its defaults are the family's (configs/sarvam.py), not a Bailing class's
        return {}
    arch = architecture(f)
    return V25_DEFAULTS if arch == V25 else V2_DEFAULTS if arch == V2 else V1_DEFAULTS


def _int(f: Fields, name: str, minimum: int = 1) -> int:
    return f.int(name, default=_table(f).get(name, ...), minimum=minimum)


def _flag(f: Fields, name: str, default: bool = False) -> bool:
    return f.flag(name, default=_table(f).get(name, default))


def layer_count(f: Fields) -> int:
    return _int(f, "num_hidden_layers")


def hybrid_layer_count(f: Fields) -> int:
    """num_hidden_layers; BailingMoeV2_5Config's 20 when a V2.5 config leaves it out (a Ling 3.0 config must
    give it)."""
    return f.int("num_hidden_layers", default=V25_DEFAULTS["num_hidden_layers"] if architecture(f) == V25 else ...)


def moe_dims(f: Fields) -> tuple[int, int, int, int]:
    """BailingAttention: heads, KV heads, head_dim = config.head_dim or hidden // heads (K and V alike)."""
    heads = _int(f, "num_attention_heads")
    kv = _int(f, "num_key_value_heads", minimum=0)
    if kv == 0:
        raise ConfigError(f"{f.source}: num_key_value_heads is 0 or missing (BailingMoeConfig's default is 0, which "
                          f"vLLM's BailingAttention cannot build) (model_type {f.model_type!r})",
                          "pass --set num_key_value_heads=N")
    head_dim = f.opt_int("head_dim")
    if head_dim is None:
        hidden = _int(f, "hidden_size")
        if hidden % heads:
            raise ConfigError(f"{f.source}: hidden_size {hidden} is not divisible by num_attention_heads {heads} "
                              f"(model_type {f.model_type!r})", "set head_dim")
        head_dim = hidden // heads
    if heads % kv:
        raise ConfigError(f"{f.source}: num_attention_heads {heads} is not a multiple of num_key_value_heads {kv} "
                          f"(model_type {f.model_type!r})", "fix the config's head counts")
    return heads, kv, head_dim, head_dim


def _moe_block(f: Fields, hidden: int, bias: bool) -> tuple[int, int]:
    """(parameters, parameters a token leaves idle) of one BailingMoE / BailingMoeV25 block."""
    experts = _int(f, "num_experts")
    top_k = _int(f, "num_experts_per_tok")
    inter = _int(f, "moe_intermediate_size")
    shared = _int(f, "num_shared_experts", minimum=0)
    shared_inter = f.int("moe_shared_expert_intermediate_size", default=inter)
    per_expert = 3 * hidden * inter
    n = experts * per_expert + hidden * experts  # experts, router (GateLinear)
    n += experts if _flag(f, "moe_router_enable_expert_bias") else 0
    n += gated_mlp(hidden, shared_inter * shared, bias) if shared else 0
    return n, (experts - top_k) * per_expert


def moe_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """BailingMoeForCausalLM / BailingMoeV2ForCausalLM as vLLM 0.33 bailing_moe.py builds them (module docstring)."""
    heads, kv, head_dim, _ = dims or moe_dims(f)
    hidden = _int(f, "hidden_size")
    bias = _flag(f, "use_bias")
    qkv = (heads + 2 * kv) * head_dim
    attention = hidden * qkv + heads * head_dim * hidden
    attention += (qkv if bias or _flag(f, "use_qkv_bias") else 0) + (hidden if bias else 0)
    if f.flag("use_qk_norm"):  # getattr(config, "use_qk_norm", False); nn.LayerNorm unless use_rmsnorm
        attention += 2 * head_dim * (1 if f.flag("use_rmsnorm") else 2)
    first_dense = _int(f, "first_k_dense_replace", minimum=0)
    kinds = ["dense" if i < first_dense else "sparse" for i in range(len(layers))]
    dense = gated_mlp(hidden, _int(f, "intermediate_size"), bias) if first_dense else 0
    moe, idle = _moe_block(f, hidden, bias)
    vocab = _int(f, "vocab_size")
    outside = vocab * hidden * (1 if _flag(f, "tie_word_embeddings") else 2) + hidden
    return moe_stack(outside, attention + 2 * hidden, kinds, moe, dense, idle)


def window_note(f: Fields) -> tuple[str, ...]:
    """vLLM 0.33 reads hf_text_config.sliding_window with no use_sliding_window gate (ModelConfig.get_sliding_window,
    EngineArgs' CacheConfig for a model without layer_types), and BailingMoeConfig sets sliding_window = 4096
    whatever use_sliding_window says."""
    if architecture(f) == V1 and not f.has("sliding_window") and not f.flag("use_sliding_window"):
        return ("vLLM 0.33 takes hf_config.sliding_window without its use_sliding_window gate, and the remote "
                "BailingMoeConfig fills sliding_window = 4096: vLLM may then keep only a 4,096-token window on every "
                "layer; kvplan plans full attention, as use_sliding_window false says",)
    return ()


# -- bailing_hybrid: dispatch on the architecture ------------------------------------------------------------

def hybrid_state(f: Fields) -> RecurrentState:
    """A linear layer's state: V2.5 lightning attention (num_attention_heads x head_dim x head_dim in the model
    dtype, head_dim = config.head_dim, else hidden // heads), else Ling 3.0's Kimi Delta Attention."""
    if architecture(f) != V25:
        return bailing_hybrid_state(f)
    heads = _int(f, "num_attention_heads")
    head_dim = _v25_head_dim(f, _int(f, "hidden_size"), heads)
    dtype = model_storage(f)
    return RecurrentState("lightning", 0, heads * head_dim * head_dim, dtype, dtype)


def _v25_head_dim(f: Fields, hidden: int, heads: int) -> int:
    """BailingMoeV2_5Config: head_dim = head_dim or hidden // heads, head_dim 128 when the config leaves it out
    (an explicit null gives hidden // heads)."""
    if "head_dim" in f.raw and f.raw["head_dim"] is None:
        return hidden // heads
    return _int(f, "head_dim")


def hybrid_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    if architecture(f) == V25:
        return v25_params(f, layers, dims)
    from .params_hybrid import bailing_hybrid
    return bailing_hybrid(f, layers, dims)


def _mla(f: Fields, hidden: int, heads: int) -> int:
    """BailingMoeV25MLAAttention: q_proj (or fused_qkv_a_proj, q_a_layernorm, q_b_proj with q_lora_rank),
    kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj; no biases."""
    return mla(hidden, heads, f.opt_int("q_lora_rank") or None, _int(f, "kv_lora_rank"), _int(f, "qk_rope_head_dim"),
               _int(f, "qk_nope_head_dim"), _int(f, "v_head_dim"))


def v25_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """BailingMoeV25ForCausalLM (vLLM 0.33 bailing_moe_linear.py): word embeddings, final norm and an LM head
    (never tied); per layer two RMSNorms and
    - full layers (those with a cache): BailingMoeV25MLAAttention (_mla);
    - linear layers: BailingMoELinearAttention: query_key_value (3 x heads x head_dim) [+bias with use_bias or
      use_qkv_bias], query / key RMSNorms (head_dim) with use_qk_norm, g_proj (hidden -> heads x head_dim),
      g_norm (heads x head_dim), dense [+bias with use_bias];
    - a BailingMoeV25 block when num_experts > 1 and i >= first_k_dense_replace (router, expert_bias with
      moe_router_enable_expert_bias, experts, shared MLP), else a BailingMLP of intermediate_size."""
    hidden = _int(f, "hidden_size")
    heads = _int(f, "num_attention_heads")
    head_dim = _v25_head_dim(f, hidden, heads)
    bias = _flag(f, "use_bias")
    inner = heads * head_dim
    linear = hidden * 3 * inner + (3 * inner if bias or _flag(f, "use_qkv_bias") else 0)
    linear += (2 * head_dim if _flag(f, "use_qk_norm") else 0) + hidden * inner + inner
    linear += inner * hidden + (hidden if bias else 0)
    mla = _mla(f, hidden, heads)
    bases = [(mla if layer.caches else linear) + 2 * hidden for layer in layers]
    experts = _int(f, "num_experts")
    first_dense = _int(f, "first_k_dense_replace", minimum=0)
    kinds = ["sparse" if experts > 1 and i >= first_dense else "dense" for i in range(len(layers))]
    dense = gated_mlp(hidden, _int(f, "intermediate_size"), bias) if "dense" in kinds else 0
    moe, idle = _moe_block(f, hidden, bias) if "sparse" in kinds else (0, 0)
    return moe_stack(2 * _int(f, "vocab_size") * hidden + hidden, bases, kinds, moe, dense, idle)
