"""Parameter counters of MoE decoders outside params_moe.py's group: DBRX, Llama 4's text model (MoE and dense
layers interleaved), Ergo, MiniCPM5-MoE and Kolibri 1.1. Each counter is `count(f, layers, dims) -> (total,
active)`: active drops the (experts - top_k) routed experts a token does not use, per MoE layer. Read from the
module shapes of the transformers modeling code (5.23; 5.25 where cited at a counter).
"""

from __future__ import annotations

from .fields import Fields
from .param_parts import _attention_plain, _ffn_moe, dense_first, embeddings, gated_mlp, mlp_layer_types


def dbrx(f: Fields, layers: list, dims) -> tuple[int, int]:
    """DBRX: fused Wqkv and out_proj (no biases), two bias-free LayerNorms, and a MoE of
    ffn_config.moe_num_experts GLU experts (w1, v1, w2 of ffn_hidden_size) with a router."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    ffn = f.sub("ffn_config")
    experts = ffn.int("moe_num_experts", default=4)
    moe = _ffn_moe(hidden, experts, ffn.int("moe_top_k", default=1), ffn.int("ffn_hidden_size", default=3584))
    attn = _attention_plain(hidden, heads, kv, head_dim)
    total = active = embeddings(f, hidden, False, 0) + hidden
    total += len(layers) * (attn + 2 * hidden + moe[0])
    active += len(layers) * (attn + 2 * hidden + moe[1])
    return total, active


def llama4_moe_layers(f: Fields, n: int) -> set[int]:
    """Llama 4's MoE layers: moe_layers, else every interleave_moe_layer_step-th from step - 1."""
    step = f.int("interleave_moe_layer_step", default=1)
    moe_layers = f.int_list("moe_layers", None, maximum=n - 1)
    return set(moe_layers) if moe_layers is not None else set(range(step - 1, n, step))


def llama4(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Llama 4 text model: MoE on the layers moe_layers lists (by default every interleave_moe_layer_step-th,
    from step - 1), each a router, num_local_experts experts of intermediate_size and one shared expert of
    the same width; the other layers a dense MLP of intermediate_size_mlp. The qk norm has no weights."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    n = len(layers)
    moe_set = llama4_moe_layers(f, n)
    inter = f.int("intermediate_size", default=8192)
    moe = _ffn_moe(hidden, f.int("num_local_experts", default=16), f.int("num_experts_per_tok", default=1), inter,
                   shared=3 * hidden * inter)
    dense = gated_mlp(hidden, f.int("intermediate_size_mlp", default=16384))
    base = _attention_plain(hidden, heads, kv, head_dim) + 2 * hidden
    total = active = embeddings(f, hidden, False, 0) + hidden
    for i in range(n):
        t, a = moe if i in moe_set else (dense, dense)
        total += base + t
        active += base + a
    return total, active


def ergo(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Ergo as transformers 5.25 builds it: fused qkv, q/k norms, four norms and two residual gates a layer;
    two-matrix MLPs (up, down): a dense one on the dense layers, else routed experts each with its own output
    norm, a router with its e_score_correction_bias (ErgoTopKRouter: a buffer of num_experts, the checkpoints'
    feed_forward.router_bias) and a normed shared expert."""
    heads, kv, head_dim, _ = dims
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    attention = (heads + 2 * kv) * head_dim * hidden + heads * head_dim * hidden + 2 * head_dim + 6 * hidden
    experts, top_k = f.int("num_experts"), f.int("num_experts_per_tok")
    expert = 2 * hidden * f.int("moe_intermediate_size") + hidden  # up, down and its post-expert norm
    sparse = experts * expert + experts * hidden + experts + 2 * hidden * f.int("shared_intermediate_size") + hidden
    dense = 2 * hidden * f.int("first_dense_intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("num_dense_blocks", default=1, minimum=0)))
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden
    total += sum(attention + (dense if k == "dense" else sparse) for k in kinds)
    return total, total - kinds.count("sparse") * (experts - top_k) * expert


def minicpm5_moe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiniCPM5-MoE as transformers 5.25 builds it (modeling_minicpm5_moe.py): gated attention (q_gate_proj: query
    and gate), GQA K/V, all four projections biased with attention_bias, two norms a layer; gated MLPs: a dense one
    on the dense layers, else routed experts, a router with its e_score_correction_bias (MiniCPM5MoeTopkRouter: a
    buffer of n_routed_experts, which the checkpoints hold) and n_shared_experts shared experts."""
    heads, kv, head_dim, _ = dims
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    attention = 2 * heads * head_dim * hidden + 2 * kv * head_dim * hidden + heads * head_dim * hidden + 2 * hidden
    if f.flag("attention_bias"):
        attention += 2 * heads * head_dim + 2 * kv * head_dim + hidden
    experts, top_k, inter = f.int("n_routed_experts"), f.int("num_experts_per_tok"), f.int("moe_intermediate_size")
    sparse = (experts * 3 * hidden * inter + experts * hidden + experts
              + f.int("n_shared_experts", default=1) * 3 * hidden * inter)
    dense = 3 * hidden * f.int("intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=1, minimum=0)))
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden
    total += sum(attention + (dense if k == "dense" else sparse) for k in kinds)
    return total, total - kinds.count("sparse") * (experts - top_k) * 3 * hidden * inter


def kolibri_dense_layers(f: Fields, n: int) -> set[int]:
    """Kolibri 1.1's layers with a dense MLP: mlp_only_layers, else (absent or null) layers 0 and 1
    (Kolibri1_1Config.__post_init__)."""
    written = f.int_list("mlp_only_layers", minimum=0)
    return set(written) if written is not None else {i for i in (0, 1) if i < n}


def kolibri1_1(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Kolibri 1.1 as transformers 5.25 builds it: q and o projections and a q norm on every layer, k and v
    projections and a k norm only on layers that keep their own K/V; four norms a layer; a dense MLP on
    mlp_only_layers, else routed experts, a router (with its e_score_correction_bias, one value an expert, which
    the checkpoint holds) and a shared expert."""
    heads, kv, head, _ = dims
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    # Kolibri1_1Config.attribute_map reads num_experts as num_local_experts: a file may write either
    experts = f.int("num_local_experts", "num_experts")
    top_k, inter = f.int("num_experts_per_tok"), f.int("moe_intermediate_size")
    dense_layers = kolibri_dense_layers(f, len(layers))
    moe = experts * 3 * hidden * inter + experts * hidden + experts + 3 * hidden * f.int("shared_expert_intermediate_size")
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden
    moe_layers = 0
    for i, layer in enumerate(layers):
        total += 2 * heads * head * hidden + head + 4 * hidden
        if layer.shares_cache_of is None:
            total += 2 * kv * head * hidden + head
        if i in dense_layers:
            total += 3 * hidden * f.int("mlp_only_intermediate_size")
        else:
            total, moe_layers = total + moe, moe_layers + 1
    return total, total - moe_layers * (experts - top_k) * 3 * hidden * inter
