"""Exact parameter counts from the architecture, MoE experts included.

Counts follow the module shapes of the transformers implementations (weights,
biases and norms). They give weight bytes for capacity planning; a safetensors
index, when given, overrides them. Returns (total, active per token).
"""

from __future__ import annotations

from ..core.layers import LayerSpec
from .fields import Fields


# -- entry points named by the family records: (fields, layers, dims) -> (total, active)

def attention_decoder(f: Fields, layers: list, dims) -> tuple[int, int]:
    heads, kv, head_dim, _ = dims
    return count_params(f, len(layers), heads, kv, head_dim)


def latent(f: Fields, layers: list, dims) -> tuple[int, int]:
    return count_latent_params(f, len(layers))


def hybrid(f: Fields, layers: list, dims) -> tuple[int, int]:
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    return _hybrid_params(f, layers, heads, kv, head_dim)


def falcon(f: Fields, layers: list, dims) -> tuple[int, int]:
    return _falcon_params(f, len(layers), dims[0], dims[1])


def bigcode(f: Fields, layers: list, dims) -> tuple[int, int]:
    return _bigcode_params(f, len(layers))


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
        if i in (f.int_list("mlp_only_layers", minimum=0, maximum=10**6) or []):
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
    if isinstance(f.get("intermediate_size", "n_inner"), list):  # one width per layer (Gemma 3n)
        inters = f.int_list("intermediate_size", num_layers, minimum=1, maximum=10**8)
    else:
        inters = [f.int("intermediate_size", "n_inner", default=4 * hidden, maximum=10**8)] * num_layers
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


def _hybrid_params(f: Fields, layers: list[LayerSpec], heads: int, kv: int, head_dim: int) -> tuple[int, int]:
    mt = f.model_type
    hidden = f.int("hidden_size", "d_model")
    total = active = _vocab_embed(f, hidden) + hidden
    inter = f.int("intermediate_size", default=0, minimum=0)
    for i, layer in enumerate(layers):
        block = 0
        if layer.caches:
            block += _attention(f, hidden, heads, kv, head_dim)
            if mt == "qwen3_next":
                block += hidden * heads * head_dim  # output gate doubles q_proj
        if layer.state is not None:
            if layer.state.kind == "mamba":
                d_inner = f.int("mamba_d_inner", default=int(f.number("mamba_expand", default=2) * hidden))
                d_state = f.int("state_size", "mamba_d_state", default=16)
                d_conv = f.int("conv_kernel", "mamba_d_conv", default=4)
                dt_rank = f.get("time_step_rank", "mamba_dt_rank", default="auto")
                dt_rank = -(-hidden // 16) if dt_rank == "auto" else f.int("time_step_rank", "mamba_dt_rank")
                block += mamba1_block(hidden, d_inner, d_state, d_conv, dt_rank, mt == "jamba")
            elif layer.state.kind == "gated_deltanet":
                kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
                kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
                kernel = f.int("linear_conv_kernel_dim", default=4)
                key_dim, value_dim = kh * kd, vh * vd
                block += hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * vh
                block += (2 * key_dim + value_dim) * kernel + 2 * vh + vd + value_dim * hidden
            elif layer.state.kind == "mamba2":
                p = "" if mt == "mamba2" else "mamba_"
                nh = f.int(f"{p}n_heads", f"{p}num_heads", "num_heads")
                hd = f.int(f"{p}d_head", f"{p}head_dim", "head_dim")
                block += mamba2_block(
                    hidden, nh, hd, f.int(f"{p}n_groups", "n_groups", default=1),
                    f.int(f"{p}d_state", "ssm_state_size", "state_size", default=128),
                    f.int(f"{p}d_conv", "conv_kernel", default=4), f.opt_int(f"{p}d_ssm"),
                )
        norms = hidden if mt in ("mamba", "mamba2", "nemotron_h") else 2 * hidden
        moe_t, moe_a = (_moe(f, hidden) if mt in ("jamba", "qwen3_next") and _is_moe_layer(f, i) else (0, 0))
        if moe_t:
            total += block + norms + moe_t
            active += block + norms + moe_a
            continue
        mlp = 0
        if mt in ("jamba", "falcon_h1") and inter:
            mlp = _gated_mlp(hidden, inter)
        elif mt == "nemotron_h" and not layer.caches and layer.state is None:
            mlp = 2 * hidden * inter  # squared-ReLU MLP: up and down
            norms = hidden
        if mt == "nemotron_h" and not layer.caches and layer.state is None and not inter:
            norms = hidden
        total += block + norms + mlp
        active += block + norms + mlp
    return total, active


def _falcon_params(f: Fields, num_layers: int, heads: int, kv: int) -> tuple[int, int]:
    hidden = f.int("hidden_size")
    hd = hidden // heads
    ln = 2 * hidden
    per_layer = hidden * (heads + 2 * kv) * hd + hidden * hidden + 8 * hidden * hidden
    per_layer += (2 if f.flag("new_decoder_architecture") else 1) * ln
    if f.flag("bias"):
        per_layer += (heads + 2 * kv) * hd + hidden + 4 * hidden + hidden
    n = _vocab_embed(f, hidden) + ln + num_layers * per_layer
    return n, n


def _bigcode_params(f: Fields, num_layers: int) -> tuple[int, int]:
    hidden = f.int("n_embd", "hidden_size")
    heads = f.int("n_head", "num_attention_heads")
    inner = f.int("n_inner", default=4 * hidden)
    kv_width = (hidden // heads) * (1 if f.flag("multi_query", default=True) else heads)
    per_layer = hidden * (hidden + 2 * kv_width) + hidden + 2 * kv_width  # c_attn
    per_layer += hidden * hidden + hidden  # c_proj
    per_layer += hidden * inner + inner + inner * hidden + hidden  # mlp
    per_layer += 4 * hidden  # ln_1, ln_2
    n = _vocab_embed(f, hidden) + f.int("n_positions", default=0, minimum=0) * hidden + 2 * hidden
    n += num_layers * per_layer
    return n, n
