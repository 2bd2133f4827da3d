"""Kimi K3's text model: a kimi_linear config with Kimi K3's fields, counted as vLLM 0.33 builds it.

transformers 5.23's modeling_kimi_linear.py knows none of routed_expert_hidden_size, latent_moe_use_norm,
mla_use_output_gate, attn_res_block_size or linear_attn_config.use_full_rank_gate, so a config that writes
one of them is counted from vLLM 0.33 (models/kimi_k3/nvidia/model.py KimiLinearForCausalLM, mla.py
MultiHeadLatentAttention, kda.py KimiK3DeltaAttention; model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py
without the full-rank gate) and vLLM's own KimiLinearConfig (transformers_utils/configs/kimi_linear.py), whose
defaults apply where the config is silent. vLLM reads only the names below (no transformers aliases).

Rows vLLM pads at load time (the KDA in_proj to 16 rows a rank, moe_intermediate_size to 256 a rank under
TP without EP) are zeros no checkpoint holds, and are not counted. The vision tower and the MTP layers
(KimiK3MTP, num_nextn_predict_layers) are not counted, as for every other model type.
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .param_parts import embeddings, mla, moe_stack

# fields transformers 5.23 builds nothing for; any of them written (true / not null) selects this counter
K3_FIELDS = ("routed_expert_hidden_size", "attn_res_block_size", "mla_use_output_gate", "latent_moe_use_norm",
             "linear_attn_config.use_full_rank_gate")


def uses_k3_fields(f: Fields) -> bool:
    """Whether the config writes one of Kimi K3's fields (a flag only when true, as vLLM tests them)."""
    return (f.has("routed_expert_hidden_size") or f.has("attn_res_block_size") or f.flag("mla_use_output_gate")
            or f.flag("latent_moe_use_norm") or f.flag("linear_attn_config.use_full_rank_gate"))


def _refuse(f: Fields, what: str, hint: str) -> ConfigError:
    return ConfigError(f"{f.source}: {what} (model_type {f.model_type!r} with Kimi K3's fields, counted as "
                       f"vLLM 0.33 builds it)", hint)


def _mla(f: Fields, hidden: int) -> int:
    """MultiHeadLatentAttention (mla.py), no biases: q_a_proj (hidden -> q_lora_rank), q_a_layernorm, q_b_proj
    (q_lora_rank -> heads x (nope + rope)), or q_proj (hidden -> heads x (nope + rope)) without q LoRA;
    kv_a_proj_with_mqa (hidden -> kv_lora_rank + rope), kv_a_layernorm, kv_b_proj (kv_lora_rank -> heads x
    (nope + v)), o_proj (heads x v -> hidden); with mla_use_output_gate the g_proj (hidden -> heads x v), fused
    into fused_qkv_a_g_proj beside q_a / kv_a under q LoRA. RoPE (off for K3's NoPE layers) holds no weights."""
    heads = f.int("num_attention_heads", default=32)
    q_lora = f.opt_int("q_lora_rank")
    rank = f.int("kv_lora_rank")
    nope = f.int("qk_nope_head_dim")
    rope = f.int("qk_rope_head_dim")
    v_dim = f.int("v_head_dim")
    gate = hidden * heads * v_dim if f.flag("mla_use_output_gate") else 0
    return mla(hidden, heads, q_lora or None, rank, rope, nope, v_dim) + gate


def _kda(f: Fields, hidden: int) -> int:
    """Kimi Delta Attention over linear_attn_config's num_heads x head_dim (P) and short_conv_kernel_size, no
    biases: in_proj_qkvgfab (q, k, v; g hidden -> P when use_full_rank_gate; f_a hidden -> head_dim; b
    hidden -> heads), f_b_proj (head_dim -> P), dt_bias (P), conv1d (3P x kernel, float32), A_log (heads),
    o_norm (head_dim), o_proj (P -> hidden); without the full-rank gate g_a_proj (hidden -> head_dim) and
    g_b_proj (head_dim -> P) instead of g."""
    heads = f.int("linear_attn_config.num_heads")
    head_dim = f.int("linear_attn_config.head_dim")
    kernel = f.int("linear_attn_config.short_conv_kernel_size")
    p = heads * head_dim
    gate = hidden * p if f.flag("linear_attn_config.use_full_rank_gate") else hidden * head_dim + head_dim * p
    return (3 * hidden * p + gate + hidden * head_dim + hidden * heads  # q, k, v, g, f_a, b
            + head_dim * p + p + 3 * p * kernel + heads + head_dim + p * hidden)  # f_b, dt_bias, conv, A_log, o


def kimi_k3_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """KimiLinearForCausalLM (vLLM 0.33 models/kimi_k3/nvidia/model.py): embed_tokens, final norm, an lm_head
    never tied; per layer input/post-attention RMSNorms, the attention (_mla on layers with a cache, _kda on the
    rest) and
    - a MoE when num_experts is set and i >= first_k_dense_replace and i % moe_layer_freq == 0 (KimiMoE): gate
      (hidden -> experts) and its float32 e_score_correction_bias; experts (gate_up, down) of
      moe_intermediate_size at moe_hidden = routed_expert_hidden_size (else hidden); shared_experts, a KimiMLP of
      hidden x moe_intermediate_size x num_shared_experts; with routed_expert_hidden_size the latent MoE's
      routed_expert_down_proj (hidden -> moe_hidden), routed_expert_norm (moe_hidden, when latent_moe_use_norm)
      and routed_expert_up_proj (moe_hidden -> hidden);
    - else a KimiMLP (gate_up, down) of intermediate_size;
    - with attn_res_block_size: self_attention_res_norm, mlp_res_norm and the two hidden -> 1 projections
      self_attention_res_proj, mlp_res_proj; the model adds output_attn_res_norm and output_attn_res_proj.
    active: all but num_experts_per_token routed experts a MoE layer (the latent projections are dense)."""
    if f.flag("attention_bias"):
        raise _refuse(f, "attention_bias is true, but vLLM 0.33 builds Kimi K3's MLA and KDA without biases "
                         "(a checkpoint's biases would not load)", "give the weights with --weights")
    hidden = f.int("hidden_size", default=4096)
    n = len(layers)
    mla = _mla(f, hidden) if any(layer.caches for layer in layers) else 0
    kda = _kda(f, hidden) if any(not layer.caches for layer in layers) else 0

    experts = f.opt_int("num_experts")
    first_dense = f.int("first_k_dense_replace", default=0, minimum=0)
    freq = f.int("moe_layer_freq", default=1)
    kinds = ["sparse" if experts is not None and i >= first_dense and i % freq == 0 else "dense" for i in range(n)]
    written = f.list("mlp_layer_types")
    if written is not None and [str(t) for t in written[:n]] != kinds:
        raise _refuse(f, "mlp_layer_types disagrees with the MoE layers vLLM 0.33 builds from num_experts, "
                         "first_k_dense_replace and moe_layer_freq (it does not read mlp_layer_types)",
                      "drop mlp_layer_types, or give the weights with --weights")
    dense = 3 * hidden * f.int("intermediate_size", default=11008)
    moe = per_expert = top_k = 0
    if experts is not None:
        top_k = f.int("num_experts_per_token")
        moe_inter = f.int("moe_intermediate_size")
        latent = f.opt_int("routed_expert_hidden_size")
        width = latent or hidden
        per_expert = 3 * width * moe_inter
        shared = f.int("num_shared_experts", default=0, minimum=0)
        moe = hidden * experts + experts + experts * per_expert + 3 * hidden * moe_inter * shared
        if latent:
            moe += 2 * hidden * latent + (latent if f.flag("latent_moe_use_norm") else 0)

    attn_res = f.has("attn_res_block_size")
    norms = (6 if attn_res else 2) * hidden  # input/post norms [+ two res norms and two hidden -> 1 projections]
    return moe_stack(embeddings(f, hidden, False, 163840, tieable=False) + (3 if attn_res else 1) * hidden,
                     [(mla if layer.caches else kda) + norms for layer in layers], kinds, moe, dense,
                     (experts - top_k if experts else 0) * per_expert)
