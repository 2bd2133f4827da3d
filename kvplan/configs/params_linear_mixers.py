"""Parameter counters of the hybrids whose other layers mix without softmax attention: Gated DeltaNet (Qwen3.5,
Lara mini, Qwen4-Exp with its hyper-connections and PLE n-gram tables), KDA with DSA latent attention
(GLM-5-Next), lightning attention (MiniMax-Text-01 / M1) and LFM2's short convolution. Each counter is
`count(f, layers, dims) -> (total, active)`, read from the module shapes of the transformers modeling code (5.23;
5.25 and vLLM 0.34 where cited at a counter).
"""

from __future__ import annotations

import math

from ..errors import ConfigError
from .fields import Fields
from .param_parts import (_attention_plain, _ffn_moe, _gdn_block, _kinds_of, dense_first, embeddings, gated_mlp, mla,
                          mlp_layer_types, moe_stack)


def qwen3_5(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Qwen3.5 text model: Gated DeltaNet or gated attention (q_proj doubled for the output gate when
    attn_output_gate, q/k norms), then a dense SwiGLU MLP (qwen3_5_text) or a MoE block with a gated
    shared expert (qwen3_5_moe_text) on every layer. The MTP module and vision tower are not counted."""
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    attn = hidden * heads * head_dim * (2 if f.flag("attn_output_gate", default=True) else 1)
    attn += 2 * hidden * kv * head_dim + heads * head_dim * hidden + 2 * head_dim
    experts = f.int("num_experts", default=0, minimum=0)
    if experts:
        shared_inter = f.int("shared_expert_intermediate_size", default=0, minimum=0)
        ffn_t, ffn_a = _ffn_moe(hidden, experts, f.int("num_experts_per_tok"), f.int("moe_intermediate_size"),
                                shared=3 * hidden * shared_inter + hidden if shared_inter else 0)
    else:
        ffn_t = ffn_a = gated_mlp(hidden, f.int("intermediate_size"))
    total = active = embeddings(f, hidden, False, 0) + hidden
    gdn = None
    for kind in _kinds_of(layers):
        if kind == "attention":
            mixer = attn
        else:
            gdn = _gdn_block(f, hidden) if gdn is None else gdn
            mixer = gdn
        total += mixer + 2 * hidden + ffn_t
        active += mixer + 2 * hidden + ffn_a
    return total, active


def minimax(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiniMax-Text-01 / M1: softmax attention or lightning attention (fused qkv of heads x head_dim,
    an output gate, an RMSNorm over heads x head_dim, out_proj), then a MoE of num_local_experts SwiGLU
    experts with a router on every layer."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    width = heads * head_dim
    softmax = _attention_plain(hidden, heads, kv, head_dim)
    lightning = 3 * hidden * width + width * hidden + hidden * width + width
    moe = _ffn_moe(hidden, f.int("num_local_experts"), f.int("num_experts_per_tok", default=2),
                   f.int("intermediate_size"))
    total = active = embeddings(f, hidden, False, 0) + hidden
    for layer in layers:
        mixer = softmax if layer.state is None else lightning
        total += mixer + 2 * hidden + moe[0]
        active += mixer + 2 * hidden + moe[1]
    return total, active


def lfm2_dense_width(f: Fields) -> int:
    """LFM2's dense MLP width: intermediate_size (or block_ff_dim), which LFM2 (no experts) shrinks to 2/3 and
    rounds up to block_multiple_of when block_auto_adjust_ff_dim; LFM2-MoE's dense layers use it as it is."""
    inter = f.int("intermediate_size", "block_ff_dim", default=12288, maximum=10**8)
    if not f.int("num_experts", default=0, minimum=0) and f.flag("block_auto_adjust_ff_dim", default=True):
        inter = int(2 * inter / 3)
        if f.get("block_ffn_dim_multiplier", default=1.0) is not None:
            inter = int(f.number("block_ffn_dim_multiplier", default=1.0) * inter)
            step = f.int("block_multiple_of", default=256)
            inter = step * ((inter + step - 1) // step)
    return inter


def lfm2(f: Fields, layers: list, dims) -> tuple[int, int]:
    """LFM2 / LFM2-MoE: a short-conv operator (in_proj to 3 x hidden, depthwise conv of conv_L_cache,
    out_proj) or GQA attention with q/k RMSNorms; then a SwiGLU MLP (LFM2: intermediate_size, shrunk to
    2/3 and rounded up to block_multiple_of when block_auto_adjust_ff_dim) or, after num_dense_layers,
    a MoE with an expert_bias; two RMSNorms a layer; embeddings tied by default."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    bias = f.flag("conv_bias")
    conv = 3 * hidden * hidden + hidden * f.int("conv_L_cache", default=3) + hidden * hidden
    conv += (3 * hidden + hidden + hidden) if bias else 0
    attn = _attention_plain(hidden, heads, kv, head_dim) + 2 * head_dim
    experts = f.int("num_experts", default=0, minimum=0)
    dense = gated_mlp(hidden, lfm2_dense_width(f))
    first_dense = f.int("num_dense_layers", default=2, minimum=0) if experts else len(layers)
    moe = (_ffn_moe(hidden, experts, f.int("num_experts_per_tok", default=4), f.int("moe_intermediate_size"),
                    router_bias=experts if f.flag("use_expert_bias", default=True) else 0) if experts else None)
    total = active = embeddings(f, hidden, True, 0) + hidden
    for i, layer in enumerate(layers):
        base = (attn if layer.caches else conv) + 2 * hidden
        t, a = (dense, dense) if i < first_dense else moe
        total += base + t
        active += base + a
    return total, active


def glm5_next_kda_widths(f: Fields) -> tuple[int, int, int]:
    """(heads, head_dim, conv kernel) of GLM-5-Next's KDA as transformers 5.25 reads them
    (configuration_glm5_next.py Glm5NextTextConfig: linear_attn_config's num_heads / head_dim /
    short_conv_kernel_size where the config has one, else linear_num_heads / linear_head_dim /
    linear_conv_kernel_dim, defaulting to 64 / 128 / 4; vLLM 0.34 kda.py reads the same attributes)."""
    return (f.int("linear_attn_config.num_heads", "linear_num_heads", default=64),
            f.int("linear_attn_config.head_dim", "linear_head_dim", default=128),
            f.int("linear_attn_config.short_conv_kernel_size", "linear_conv_kernel_dim", default=4))


def glm5_next(f: Fields, layers: list, dims) -> tuple[int, int]:
    """GLM-5-Next's text model as transformers 5.23 builds it (modeling_glm5_next.py: Glm5NextTextModel and the
    untied lm_head; the router's e_score_correction_bias is a buffer). Every layer: two norms and two
    hyper-connection mixers ((2 + hc) x hc x (hc x hidden + 1) + 3 each). A KDA layer: q, k, v and o projections
    of heads x head_dim, the conv over q, k and v (kernel taps), the forget gate (dt_bias, A_log, a low-rank
    hidden -> head_dim -> heads x head_dim) and the output gate (the same low rank), b_proj (one per head) and
    o_norm. A DSA layer: MLA (q_a, its norm, q_b to qk_head_dim per head, kv_a to kv_lora_rank +
    qk_rope_head_dim, its norm, kv_b to qk_nope_head_dim + v_head_dim per head, o) and the indexer (its pool's
    positional table and gate, wq_b, wk, k_norm with bias, weights_proj). The MLP: mlp_layer_types 'dense' a
    SwiGLU of intermediate_size, 'sparse' the routed and shared experts, the router and its
    e_score_correction_bias (one a routed expert: a buffer in transformers, a tensor of the checkpoints, which vLLM
    0.34 glm5next/common/model.py Glm5NextMoE loads under topk_method noaux_tc, as DeepSeek-V3's count holds it).
    The MTP layer and the vision tower are not counted."""
    hidden, heads = f.int("hidden_size"), f.int("num_attention_heads")
    lin_heads, lin_dim, kernel = glm5_next_kda_widths(f)
    qkv = lin_heads * lin_dim
    kda = (4 * hidden * qkv + 3 * qkv * kernel + qkv + lin_heads + 2 * (hidden * lin_dim + lin_dim * qkv)
           + hidden * lin_heads + lin_dim)
    q_rank, kv_rank = f.int("q_lora_rank"), f.int("kv_lora_rank")
    rope = f.int("qk_rope_head_dim", default=0, minimum=0)
    nope, v_dim = f.int("qk_nope_head_dim"), f.int("v_head_dim")
    index, index_heads, kpool = f.int("index_head_dim"), f.int("index_n_heads"), f.int("index_kpool", default=16)
    latent = mla(hidden, heads, q_rank or None, kv_rank, rope, nope, v_dim)
    indexer = kpool * index + index * hidden + q_rank * index_heads * index + index * hidden + 2 * index \
        + index_heads * hidden
    hc = f.int("hc_mult", default=4)
    common = 2 * hidden + 2 * ((2 + hc) * hc * (hc * hidden + 1) + 3)
    experts, top_k = f.int("n_routed_experts"), f.int("num_experts_per_tok")
    per_expert = 3 * hidden * f.int("moe_intermediate_size")
    sparse_mlp = (experts * per_expert + f.int("n_shared_experts", default=1, minimum=0) * per_expert
                  + experts * hidden + experts)
    dense_mlp = 3 * hidden * f.int("intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=0, minimum=0)))
    ends = 2 * f.int("vocab_size") * hidden + hidden  # embeddings and lm_head (untied), the final norm
    bases = [common + ((latent + indexer) if spec.caches else kda) for spec in layers]
    return moe_stack(ends, bases, kinds, sparse_mlp, dense_mlp, (experts - top_k) * per_expert)


def _is_prime(value: int) -> bool:
    if value < 2 or value % 2 == 0:
        return value == 2
    return all(value % d for d in range(3, math.isqrt(value) + 1, 2))


def _ngram_rows(f: Fields, ple_index: int) -> int:
    """Rows of a PLE layer's n-gram table: one prime-sized vocabulary per n-gram head, the next primes above
    ngram_vocab_size_base for this PLE layer's heads, summed and padded to make_ngram_vocab_size_divisible_by
    (Qwen4ExpTextNGramEmbedding)."""
    heads = (f.int("ngram_size", default=3, minimum=2) - 1) * f.int("heads_per_ngram", default=8)
    base = f.int("ngram_vocab_size_base", default=20_000_000, maximum=10**9)
    prime, sizes = base - 1, []
    for _ in range((ple_index + 1) * heads):  # the primes of earlier PLE layers' heads come first
        prime += 1
        while not _is_prime(prime):
            prime += 1
        sizes.append(prime)
    divisor = f.int("make_ngram_vocab_size_divisible_by", default=128)
    return -(-sum(sizes[-heads:]) // divisor) * divisor


def qwen4_exp(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Qwen4-Exp's text model as transformers 5.25 builds it (Qwen4ExpTextModel, no vision tower, no MTP layer),
    plus the untied lm_head: hyper-connected residuals (hc_count streams: two gated residuals a layer and a final
    mixer, each an RMSNorm over hc_count x hidden, a low-rank mix and an injection to the streams), a MoE on every
    layer (router, routed experts, a gated shared expert), Gated DeltaNet or gated attention (with the QSA
    indexer's joint q/k projection and norms), and on each ple_layer_ids layer the PLE: an n-gram embedding table,
    key and value projections, three norms and a depthwise conv."""
    if f.flag("attention_bias"):
        raise ConfigError(f"{f.source}: attention_bias is set, whose biases kvplan's Qwen4-Exp count has not read")
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    streams = f.int("hc_count", default=4, minimum=2) * hidden
    low = f.int("hc_lowrank")
    residual = streams + 2 * low * streams  # hc_norm, input_mix_weight_down / up
    experts, top_k = f.int("num_experts"), f.int("num_experts_per_tok")
    inter, shared = f.int("moe_intermediate_size"), f.int("shared_expert_intermediate_size")
    moe = experts * hidden + experts * 3 * hidden * inter + 3 * hidden * shared + hidden
    gdn = _gdn_block(f, hidden)  # the Gated DeltaNet mixer, as Qwen3-Next's
    heads, kv, head = f.int("num_attention_heads"), f.int("num_key_value_heads"), f.int("head_dim")
    attention = 2 * heads * head * hidden + 2 * kv * head * hidden + heads * head * hidden + 2 * head
    if f.get("indexer_n_heads") is not None:
        index = f.int("indexer_head_dim")
        attention += (f.int("indexer_n_heads") + f.int("indexer_kv_heads")) * index * hidden + 2 * index
    width = f.int("ple_embed_dim", default=hidden)
    ngram_heads = (f.int("ngram_size", default=3, minimum=2) - 1) * f.int("heads_per_ngram", default=8)
    ple_ids = sorted(set(f.int_list("ple_layer_ids") or []))
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + residual  # + the final mixer
    for i, layer in enumerate(layers):
        total += 2 * (residual + f.int("hc_count", default=4) * streams) + moe
        total += attention if layer.caches else gdn
        if i + 1 in ple_ids:
            rows = _ngram_rows(f, ple_ids.index(i + 1))
            total += (rows * (width // ngram_heads) + width * streams + width * hidden + 3 * streams
                      + streams * f.int("ple_conv_kernel_size", default=4))
    return total, total - len(layers) * (experts - top_k) * 3 * hidden * inter


def lara_mini(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Lara mini as transformers 5.25 builds it: plain GQA with q/k norms on the full and sliding layers, the Gated
    DeltaNet of Qwen3-Next on the linear ones, a MoE (routed experts, router, a shared expert) and two norms on
    every layer."""
    heads, kv, head, _ = dims
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    attention = 2 * heads * head * hidden + 2 * kv * head * hidden + 2 * head
    gdn = _gdn_block(f, hidden)  # the Gated DeltaNet mixer, as Qwen3-Next's
    experts, top_k, inter = f.int("num_experts"), f.int("num_experts_per_tok"), f.int("moe_intermediate_size")
    moe = experts * 3 * hidden * inter + experts * hidden + 3 * hidden * f.int("shared_expert_intermediate_size")
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings", default=True) else 2) + hidden
    for layer in layers:
        total += moe + 2 * hidden + (attention if layer.caches else gdn)
    return total, total - len(layers) * (experts - top_k) * 3 * hidden * inter
