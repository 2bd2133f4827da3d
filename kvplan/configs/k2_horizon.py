"""K2-Horizon (model_type k2_horizon) and AliceAI (model_type alice_ai) as vLLM 0.33 serves them: their cache
rules and parameter counts, read exactly.

- K2HorizonForCausalLM (vllm/model_executor/models/k2_horizon.py): every layer is K2HorizonAttention or, on a
  sparse layer with mova_num_experts > 0, K2HorizonMoVAAttention; both cache one vLLM Attention of
  num_key_value_heads heads of head_dim (config.head_dim: K2HorizonConfig's 64 when the file leaves it out) and
  pass no per-layer window; a sliding_window counts only with use_sliding_window (K2HorizonConfig.__post_init__).
  The MoVA value experts choose how V is computed, not how much is cached. Defaults the module reads without
  a getattr come from transformers' K2HorizonConfig (models/k2_horizon/configuration_k2_horizon.py).
- AliceAIForCausalLM (vllm/model_executor/models/alice_ai.py): config.layer_types says each layer's mixer:
  "full_attention" is Qwen3NextAttention (K/V of num_key_value_heads x head_dim, gated output), "linear_attention"
  is Kimi Delta Attention (KimiGatedDeltaNetAttention; its state from MambaStateShapeCalculator.kda_state_shape
  with linear_num_key_heads heads of linear_key_head_dim and linear_conv_kernel_dim, which _make_kimi_kda_config
  requires to equal the value heads and width). vLLM 0.33 ships no AliceAI config class: every field it reads
  must be in config.json (norm_topk_prob aside, which only routes).
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .param_parts import embeddings, gated_mlp, moe_stack
from .params_hybrid import kda_params

# transformers' K2HorizonConfig (models/k2_horizon/configuration_k2_horizon.py) fields the cache reads: vLLM 0.33's
# K2HorizonForCausalLM passes config.head_dim (no getattr, no hidden / heads fallback while the class fills 64)
K2_HORIZON_DEFAULTS = {"head_dim": 64, "num_key_value_heads": 8, "num_attention_heads": 32, "hidden_size": 1536,
                       "num_hidden_layers": 28}

# kda_state reads Kimi-Linear's names; AliceAI writes its own flat ones
ALICE_NAMES = {"linear_num_heads": ("linear_num_key_heads",), "linear_head_dim": ("linear_key_head_dim",)}


def alice_kinds(f: Fields, kinds: list[str]) -> list[str]:
    """_make_kimi_kda_config refuses KDA whose key and value heads or widths differ; so does kvplan."""
    heads, value_heads = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    width, value_width = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    if heads != value_heads or width != value_width:
        raise ConfigError(f"{f.source}: linear_num_key_heads / linear_key_head_dim ({heads} x {width}) differ from "
                          f"the value heads ({value_heads} x {value_width}): vLLM 0.33's AliceAI KDA requires them "
                          f"equal (model_type {f.model_type!r})", "fix the config")
    return kinds


def k2_horizon_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """K2HorizonForCausalLM's modules (vLLM 0.33 k2_horizon.py); defaults are K2HorizonConfig's.
    - layer i is sparse when i is not in mlp_only_layers, num_experts > 0 and (i + 1) % decoder_sparse_step == 0;
    - K2HorizonAttention: qkv_proj (hidden -> heads + 2 x kv heads of head_dim) and o_proj, both with a bias when
      attention_bias; on sparse layers with mova_num_experts, K2HorizonMoVAAttention instead: qk_proj (hidden ->
      heads + kv heads), v_router (ReplicatedLinear hidden -> mova_num_experts, its bias with moe_gate_bias),
      v_experts (mova_num_experts linears hidden -> kv heads x head_dim) and o_proj;
    - either: q_norm / k_norm (K2HorizonRMSNorm over all heads' queries / keys) with query_key_norm, gate_proj
      (hidden -> heads x head_dim) when attention_gate_func is set;
    - sparse layers: K2HorizonSparseMoeBlock: gate (hidden -> num_experts, with a bias when moe_gate_bias), the
      routed experts at moe_intermediate_size, shared_experts (one K2HorizonMLP of moe_intermediate_size x
      num_shared_experts, no expert gate) when num_shared_experts > 0; else K2HorizonMLP of intermediate_size;
    - two K2HorizonRMSNorms a layer (one hidden_size weight whatever layernorm_num_groups), the final norm,
      embed_tokens and lm_head (tied when tie_word_embeddings).
    A token leaves num_experts - num_experts_per_tok routed experts and mova_num_experts -
    mova_num_experts_per_tok value experts of each sparse layer idle."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    bias = f.flag("attention_bias")
    q, k = heads * head_dim, kv * head_dim
    router_bias = f.flag("moe_gate_bias")
    common = q * hidden + (hidden if bias else 0) + 2 * hidden  # o_proj, input / post-attention norms
    common += (q + k if f.flag("query_key_norm") else 0) + (hidden * q if f.get("attention_gate_func") else 0)
    plain = hidden * (q + 2 * k) + (q + 2 * k if bias else 0)  # qkv_proj
    experts = f.int("num_experts", default=0, minimum=0)
    mova = f.int("mova_num_experts", default=0, minimum=0) if experts else 0
    moe = idle = 0
    if experts:
        inter = f.int("moe_intermediate_size", default=768)
        top_k = f.int("num_experts_per_tok", default=8, maximum=experts)
        shared = f.int("num_shared_experts", default=0, minimum=0)
        moe = (hidden * experts + (experts if router_bias else 0) + experts * gated_mlp(hidden, inter)
               + (gated_mlp(hidden, inter * shared) if shared else 0))
        idle = (experts - top_k) * gated_mlp(hidden, inter)
    sparse_attention = plain
    if mova:
        sparse_attention = (hidden * (q + k) + (q + k if bias else 0)  # qk_proj
                            + hidden * mova + (mova if router_bias else 0) + mova * hidden * k)  # v_router, v_experts
        idle += (mova - f.int("mova_num_experts_per_tok", maximum=mova)) * hidden * k
    only = set(f.int_list("mlp_only_layers") or [])
    step = f.int("decoder_sparse_step", default=1)
    kinds = ["sparse" if experts and i not in only and (i + 1) % step == 0 else "dense" for i in range(len(layers))]
    bases = [common + (sparse_attention if kind == "sparse" else plain) for kind in kinds]
    dense = gated_mlp(hidden, f.int("intermediate_size", default=5120, maximum=10**8))
    return moe_stack(embeddings(f, hidden, tied_default=False, vocab_default=64256) + hidden, bases, kinds, moe,
                     dense, idle)


def alice_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """AliceAIForCausalLM's modules (vLLM 0.33 alice_ai.py), every layer an AliceAIDecoderBlock:
    - full_attention layers (those with a cache): Qwen3NextAttention with attn_output_gate True and no qkv bias
      (_make_alice_ai_full_attention_config): qkv_proj (hidden -> 2 x heads + 2 x kv heads of head_dim: the
      queries and their gate), o_proj, q_norm and k_norm (head_dim each);
    - linear_attention layers: KimiGatedDeltaNetAttention without the full-rank gate (_make_kimi_kda_config),
      linear_num_key_heads x linear_key_head_dim, kernel linear_conv_kernel_dim (params_hybrid.kda_params);
    - AliceAISparseMoeBlock on every layer (vLLM refuses num_experts <= 0): gate (hidden -> num_experts) and its
      float32 e_score_correction_bias, the routed experts at moe_intermediate_size, shared_expert_gate (hidden ->
      1, always built) and shared_expert (Qwen2MoeMLP of shared_expert_intermediate_size) when that is > 0;
    - input / post-attention GemmaRMSNorms; the attention residuals: mlp_res_proj (hidden -> 1) and
      mlp_res_norm_weight (hidden) on every layer, attn_res_proj and attn_res_norm_weight on layers after the
      first;
    - embed_tokens, the final norm, attnres_final (res_proj hidden -> 1, res_norm_weight) and an lm_head never
      tied (AliceAIForCausalLM ties nothing); the checkpoint's mtp. weights are dropped on load."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    full = hidden * (2 * heads + 2 * kv) * head_dim + heads * head_dim * hidden + 2 * head_dim
    kda = kda_params(hidden, f.int("linear_num_key_heads"), f.int("linear_key_head_dim"),
                     f.int("linear_conv_kernel_dim"))
    experts = f.int("num_experts")
    inter = f.int("moe_intermediate_size")
    shared = f.int("shared_expert_intermediate_size", minimum=0)
    moe = (hidden * experts + experts + experts * gated_mlp(hidden, inter) + hidden
           + (gated_mlp(hidden, shared) if shared else 0))
    bases = [(full if layer.caches else kda) + 2 * hidden + 2 * hidden + (2 * hidden if i else 0)
             for i, layer in enumerate(layers)]
    outside = embeddings(f, hidden, tied_default=False, tieable=False) + hidden + 2 * hidden
    idle = (experts - f.int("num_experts_per_tok", maximum=experts)) * gated_mlp(hidden, inter)
    return moe_stack(outside, bases, ["sparse"] * len(layers), moe, 0, idle)
