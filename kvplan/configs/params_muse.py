"""The parameter counter of Muse Spark's text model (muse_spark_text), which the generic attention counter
(params_generic.count_params) miscounts: it has no q/k norm weights, a per-head output gate (self_attn.gate_proj), five
per-layer vectors (three norms and two residual gates) and a MoE block that pools the hidden state down to
moe_hidden_size before the routed experts and back up after them.

Read from transformers 5.25 models/muse_spark (configuration_muse_spark.py MuseSparkTextConfig,
modeling_muse_spark.py MuseSparkTextModel / MuseSparkTextDecoderLayer / MuseSparkTextAttention / MuseSparkMoE /
MuseSparkExperts / MuseSparkTopkRouter / MuseSparkResidualGate) and vLLM 0.34 vllm/models/muse_spark/nvidia/model.py
(MuseSparkMoE, MuseSparkAttention, MuseSparkDecoderLayer), whose checkpoint names common/omni.py
OMNI_WEIGHTS_MAPPER maps from transformers' own. The per-module table: configs/weight_tables/step_more.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fields import Fields
from .param_parts import embeddings, gated_mlp, mlp_layer_types


@dataclass(frozen=True)
class MuseSparkFields:
    hidden: int
    heads: int
    kv: int
    head_dim: int
    bias: bool
    inter: int
    moe_inter: int
    moe_hidden: int
    experts: int
    top_k: int
    sparse: tuple[bool, ...]


def muse_spark_fields(f: Fields, n: int) -> MuseSparkFields:
    """MuseSparkTextConfig's fields with its defaults (mlp_layer_types absent: every layer sparse)."""
    hidden = f.int("hidden_size", default=8192)
    return MuseSparkFields(hidden, f.int("num_attention_heads", default=128), f.int("num_key_value_heads", default=16),
                           f.int("head_dim", default=64), f.flag("attention_bias"),
                           f.int("intermediate_size", default=16384), f.int("moe_intermediate_size", default=4096),
                           f.int("moe_hidden_size", default=4096), f.int("num_local_experts", default=256),
                           f.int("num_experts_per_tok", default=8),
                           tuple(k == "sparse" for k in mlp_layer_types(f, n, lambda i: "sparse")))


def muse_spark_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """(total, active): embed_tokens (its embed_norm has no weight), norm, lm_head (tie_word_embeddings, default
    False); per layer MuseSparkTextAttention: q_proj and gate_proj of heads x head_dim, k_proj / v_proj of the KV
    heads, o_proj (attention_bias on q/k/v/o), its qk_norm and o_norm without weights; input_layernorm,
    pre_feedforward_layernorm, post_feedforward_layernorm (hidden each; post_attention_layernorm has no weight)
    and the two residual gates (hidden each); a sparse layer's MuseSparkMoE: the router (num_local_experts x hidden)
    and its e_score_correction_bias, pre_expert_proj (hidden -> moe_hidden_size), pre_expert_norm, the routed
    experts at moe_hidden_size (gate_up_proj and down_proj of moe_intermediate_size), their post_expert_norm
    (moe_hidden_size), post_expert_proj (back to hidden); a dense layer's MLP of intermediate_size. Active: top-k
    of the routed experts."""
    s = muse_spark_fields(f, len(layers))
    h, m = s.hidden, s.moe_hidden
    q, kv = s.heads * s.head_dim, s.kv * s.head_dim
    attn = 3 * h * q + 2 * h * kv + ((q + 2 * kv + h) if s.bias else 0)
    base = attn + 5 * h
    pooling = s.experts * h + s.experts + 2 * h * m + 2 * m
    per_expert = 3 * m * s.moe_inter
    total = active = embeddings(f, h, False, 202048) + h
    for sparse in s.sparse:
        if sparse:
            total += base + pooling + s.experts * per_expert
            active += base + pooling + min(s.top_k, s.experts) * per_expert
        else:
            total += base + gated_mlp(h, s.inter)
            active += base + gated_mlp(h, s.inter)
    return total, active
