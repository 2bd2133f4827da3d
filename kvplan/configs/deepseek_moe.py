"""DeepSeek-MoE (model_type deepseek, DeepseekForCausalLM) as vLLM 0.33 serves it: vllm/model_executor/models/
deepseek_v2.py, whose DeepseekV2DecoderLayer builds DeepseekAttention for model_type 'deepseek' (plain multi-head
attention, no MLA) and DeepseekV2MoE on the MoE layers.

The config class is the checkpoint's remote configuration_deepseek.py (DeepseekConfig); kvplan reads what the
config says and takes no class default it has not read.
"""

from __future__ import annotations

from .fields import Fields
from .param_parts import embeddings, gated_mlp


def params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """DeepseekForCausalLM's modules:
    - DeepseekAttention: qkv_proj (hidden -> heads + 2 x kv heads of hidden / heads) and o_proj, no biases;
    - layer i is a MoE (DeepseekV2MoE) when n_routed_experts is set, i >= first_k_dense_replace and
      i % moe_layer_freq == 0: a router (GateLinear hidden -> experts, no bias; its e_score_correction_bias only
      for topk_method noaux_tc), n_routed_experts experts at moe_intermediate_size and one shared MLP of
      moe_intermediate_size x n_shared_experts; else a gated MLP at intermediate_size;
    - two RMSNorms a layer, a final norm, the head unless tie_word_embeddings."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    attn = hidden * (heads + 2 * kv) * head_dim + heads * head_dim * hidden
    dense = gated_mlp(hidden, f.int("intermediate_size", maximum=10**8))
    experts = f.opt_int("n_routed_experts")
    total = active = embeddings(f, hidden, tied_default=False) + hidden
    for i in range(len(layers)):
        base = attn + 2 * hidden
        moe = (experts is not None and i >= f.int("first_k_dense_replace", minimum=0)
               and i % f.int("moe_layer_freq", default=1) == 0)
        if not moe:
            total, active = total + base + dense, active + base + dense
            continue
        inter = f.int("moe_intermediate_size", maximum=10**8)
        router = hidden * experts + (experts if f.get("topk_method") == "noaux_tc" else 0)
        shared = gated_mlp(hidden, inter * f.int("n_shared_experts")) if f.get("n_shared_experts") else 0
        top_k = f.int("num_experts_per_tok", maximum=experts)
        total += base + router + shared + experts * gated_mlp(hidden, inter)
        active += base + router + shared + top_k * gated_mlp(hidden, inter)
    return total, active
