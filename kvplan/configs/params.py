"""Exact parameter counts from the architecture, MoE experts included.

Counts follow the module shapes of the transformers implementations (weights,
biases and norms). They give weight bytes for capacity planning; a safetensors
index, when given, overrides them. Returns (total, active per token).
"""

from __future__ import annotations

from .fields import Fields


def _vocab_embed(f: Fields, hidden: int) -> int:
    vocab = f.int("vocab_size", default=0, minimum=0)
    tied = f.flag("tie_word_embeddings", default=f.model_type in _TIED_BY_DEFAULT)
    return vocab * hidden * (1 if tied else 2)


_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gpt_bigcode", "mamba", "mamba2", "falcon"}


def _gated_mlp(hidden: int, inter: int, bias: bool = False) -> int:
    return 3 * hidden * inter + (2 * inter + hidden if bias else 0)


def _attention(f: Fields, hidden: int, heads: int, kv: int, head_dim: int) -> int:
    qkv_bias = f.flag("attention_bias") or f.model_type in ("qwen2", "qwen2_moe")
    o_bias = f.flag("attention_bias") and f.model_type not in ("qwen2", "qwen2_moe")
    n = hidden * heads * head_dim + 2 * hidden * kv * head_dim + heads * head_dim * hidden
    if qkv_bias:
        n += heads * head_dim + 2 * kv * head_dim
    if o_bias:
        n += hidden
    if f.model_type in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", "gemma3n_text", "gemma3n", "qwen3_next"):
        n += 2 * head_dim  # q_norm and k_norm
    return n


def _moe(f: Fields, hidden: int) -> tuple[int, int]:
    """(total, active) params of one MoE block, or (0, 0) when not MoE."""
    experts = f.int("num_local_experts", "num_experts", "n_routed_experts", default=0, minimum=0)
    if not experts:
        return 0, 0
    top_k = f.int("num_experts_per_tok", "experts_per_token", default=2)
    inter = f.int("moe_intermediate_size", "intermediate_size")
    per_expert = 3 * hidden * inter
    router = hidden * experts
    shared_inter = f.int("shared_expert_intermediate_size", default=0, minimum=0)
    shared = 0
    if shared_inter:
        shared = 3 * hidden * shared_inter + hidden  # shared expert + its sigmoid gate
    n_shared = f.int("n_shared_experts", default=0, minimum=0)
    if n_shared:
        shared = n_shared * per_expert
    extra = experts if f.model_type in ("deepseek_v3", "deepseek_v32", "kimi_k2") else 0  # e_score_correction_bias
    total = experts * per_expert + router + shared + extra
    active = top_k * per_expert + router + shared + extra
    return total, active


def _is_moe_layer(f: Fields, i: int) -> bool:
    mt = f.model_type
    if mt in ("deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2"):
        k = f.int("first_k_dense_replace", default=0, minimum=0)
        freq = f.int("moe_layer_freq", default=1)
        return i >= k and i % freq == 0
    if mt in ("qwen2_moe", "qwen3_moe", "qwen3_next"):
        if i in (f.get("mlp_only_layers") or []):
            return False
        step = f.int("decoder_sparse_step", default=1)
        return (i + 1) % step == 0
    if mt == "jamba":
        period = f.int("expert_layer_period", default=2)
        offset = f.int("expert_layer_offset", default=1, minimum=0)
        return i % period == offset
    return True


def count_params(f: Fields, num_layers: int, heads: int, kv: int, head_dim: int) -> tuple[int, int]:
    """Attention decoders (llama-like, MoE variants, gemma, phi3, gpt-oss)."""
    mt = f.model_type
    hidden = f.int("hidden_size", "n_embd")
    inter_raw = f.get("intermediate_size", "n_inner", default=4 * hidden)
    inters = inter_raw if isinstance(inter_raw, list) else [inter_raw] * num_layers
    attn = _attention(f, hidden, heads, kv, head_dim)
    norms = (4 if mt in ("gemma2", "gemma3", "gemma3_text") else 2) * hidden
    if mt == "gpt_oss":
        attn += heads  # attention sinks
        attn += heads * head_dim + 2 * kv * head_dim + hidden  # qkv and o biases
    total = active = _vocab_embed(f, hidden) + hidden  # embeddings (+ head) and final norm
    for i in range(num_layers):
        moe_total, moe_active = _moe(f, hidden) if _is_moe_layer(f, i) else (0, 0)
        if mt == "gpt_oss" and moe_total:
            experts = f.int("num_local_experts")
            top_k = f.int("num_experts_per_tok", "experts_per_token")
            per_expert = 3 * hidden * int(inters[i]) + 2 * int(inters[i]) + hidden  # gate_up and down, with biases
            moe_total = experts * per_expert + hidden * experts + experts
            moe_active = top_k * per_expert + hidden * experts + experts
        if moe_total:
            total += attn + norms + moe_total
            active += attn + norms + moe_active
        else:
            dense = _gated_mlp(hidden, int(inters[i]))
            total += attn + norms + dense
            active += attn + norms + dense
    return total, active


def count_latent_params(f: Fields, num_layers: int) -> tuple[int, int]:
    """DeepSeek-V2/V3 style: MLA projections, dense first layers, routed + shared experts.

    The multi-token-prediction module (num_nextn_predict_layers) is not counted:
    it is not used for ordinary decoding.
    """
    hidden = f.int("hidden_size")
    heads = f.int("num_attention_heads")
    q_lora = f.int("q_lora_rank", default=0, minimum=0)
    rank = f.int("kv_lora_rank")
    rope = f.int("qk_rope_head_dim")
    nope = f.int("qk_nope_head_dim")
    v_dim = f.int("v_head_dim")
    q_head = nope + rope
    if q_lora:
        q = hidden * q_lora + q_lora + q_lora * heads * q_head
    else:
        q = hidden * heads * q_head
    attn = q + hidden * (rank + rope) + rank + rank * heads * (nope + v_dim) + heads * v_dim * hidden
    if f.has("index_head_dim"):
        ih, nh = f.int("index_head_dim"), f.int("index_n_heads")
        attn += q_lora * nh * ih + hidden * ih + 2 * ih + hidden * nh  # wq_b, wk, k_norm (w+b), weights_proj
    inter = f.int("intermediate_size")
    total = active = _vocab_embed(f, hidden) + hidden
    for i in range(num_layers):
        base = attn + 2 * hidden
        if _is_moe_layer(f, i):
            t, a = _moe(f, hidden)
        else:
            t = a = _gated_mlp(hidden, inter)
        total += base + t
        active += base + a
    return total, active


def mamba1_block(hidden: int, d_inner: int, d_state: int, d_conv: int, dt_rank: int, jamba: bool) -> int:
    n = hidden * 2 * d_inner  # in_proj
    n += d_inner * d_conv + d_inner  # conv1d with bias
    n += d_inner * (dt_rank + 2 * d_state)  # x_proj
    n += dt_rank * d_inner + d_inner  # dt_proj
    n += d_inner * d_state + d_inner  # A_log, D
    n += d_inner * hidden  # out_proj
    if jamba:
        n += dt_rank + 2 * d_state  # dt, B, C layernorms
    return n


def mamba2_block(hidden: int, n_heads: int, head_dim: int, n_groups: int, d_state: int, d_conv: int, d_inner: int | None = None) -> int:
    d_inner = d_inner or n_heads * head_dim
    conv_dim = d_inner + 2 * n_groups * d_state
    n = hidden * (2 * d_inner + 2 * n_groups * d_state + n_heads)  # in_proj
    n += conv_dim * d_conv + conv_dim  # conv1d with bias
    n += 3 * n_heads  # dt_bias, A_log, D
    n += d_inner  # gated norm
    n += d_inner * hidden  # out_proj
    return n
