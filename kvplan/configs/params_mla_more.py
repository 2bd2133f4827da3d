"""Parameter counters of latent-attention models outside params_mla.py's group: MiniCPM3 (MLA, dense),
DeepSeek-V4 and V4.1 (low-rank q, one shared K/V projection, compressors and indexers, hyper-connections) and HY-V4
(MLA with an indexer and hyper-connections). Each counter is `count(f, layers, dims) -> (total, active)`, read from
the module shapes of transformers 5.25 (vLLM 0.33 for V4.1), cited at each counter.
"""

from __future__ import annotations

from .fields import Fields
from .param_parts import dense_first, embeddings, gated_mlp, mla, mlp_layer_types, moe_stack


def minicpm3(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiniCPM3: MLA projections (v_head_dim defaults to hidden / heads), a SwiGLU MLP and two norms a
    layer; embeddings tied by default. (The cache is read decompressed, as vLLM keeps it; the weights
    are the compressed projections.) Biases as transformers 5.25 modeling_minicpm3.py builds them:
    attention_bias on q_a_proj, kv_a_proj_with_mqa and o_proj, mlp_bias on the three MLP projections."""
    hidden = f.int("hidden_size")
    heads, inter = f.int("num_attention_heads"), f.int("intermediate_size")
    v_dim = f.int("v_head_dim", default=hidden // heads)
    q_lora = f.int("q_lora_rank", default=0, minimum=0)
    attention = mla(hidden, heads, q_lora or None, f.int("kv_lora_rank"), f.int("qk_rope_head_dim"),
                    f.int("qk_nope_head_dim"), v_dim, f.flag("attention_bias"))
    mlp_bias = 2 * inter + hidden if f.flag("mlp_bias") else 0
    per_layer = attention + gated_mlp(hidden, inter) + mlp_bias + 2 * hidden
    n = embeddings(f, hidden, True, 0) + hidden + len(layers) * per_layer
    return n, n


def deepseek_v4_hashed(f: Fields, n: int) -> list[bool]:
    """Whether each layer is routed by token hash (DeepseekV4HashRouter: no e_score_correction_bias):
    mlp_layer_types' 'hash_moe' entries, else the first num_hash_layers (default 3), as transformers 5.25
    configuration_deepseek_v4.py __post_init__ reads them."""
    if f.has("mlp_layer_types"):
        kinds = f.list("mlp_layer_types")
        return [i < len(kinds) and kinds[i] == "hash_moe" for i in range(n)]
    first = f.int("num_hash_layers", default=3, minimum=0)
    return [i < first for i in range(n)]


def deepseek_v4(f: Fields, layers: list, dims) -> tuple[int, int]:
    """DeepSeek-V4 as transformers 5.25 builds it (modeling_deepseek_v4.py; 284,332,240,471 for
    V4-Flash, 1,572,997,201,763 for V4-Pro: the published 284B and 1.6T without the MTP layer).
    Every layer: low-rank q (q_a, q_a_norm, q_b), one shared K/V projection and its norm, the grouped
    output projection (o_a over o_groups, o_b), attention sinks, a MoE block (routed experts, one shared
    expert, the router), two hyper-connection mixers (attn_hc, ffn_hc) and two norms. Compressed layers
    add their compressor (kv and gate projections to coff x head_dim, position bias, norm; coff = 2 on
    CSA's overlapping windows); CSA adds the indexer (its own compressor at index_head_dim, q_b and the
    head-weight projection). The router's float32 e_score_correction_bias (the checkpoint's ffn.gate.bias; a
    buffer in transformers, counted as for DeepSeek-V3) sits on the layers that are not hash-routed
    (deepseek_v4_hashed: mlp_layer_types, else the first num_hash_layers, 3); hash-routed layers hold the
    tid2eid buffer instead, an integer table, not counted."""

    hidden, heads, head = f.int("hidden_size"), f.int("num_attention_heads"), f.int("head_dim")
    q_rank, o_rank, groups = f.int("q_lora_rank"), f.int("o_lora_rank"), f.int("o_groups")
    experts, top_k = f.int("n_routed_experts"), f.int("num_experts_per_tok")
    inter, shared = f.int("moe_intermediate_size"), f.int("n_shared_experts", default=1, minimum=0)
    hc = f.int("hc_mult", default=4)
    index, index_heads = f.int("index_head_dim"), f.int("index_n_heads", default=64)
    per_expert = 3 * hidden * inter
    mixer = (2 + hc) * hc * (hc * hidden + 1) + 3  # hc fn, base and scale
    layer = (hidden * q_rank + q_rank + q_rank * heads * head + hidden * head + head
             + heads * head // groups * o_rank * groups + groups * o_rank * hidden + heads
             + experts * per_expert + shared * per_expert + experts * hidden + 2 * mixer + 2 * hidden)

    def compressor(width: int, coff: int, ratio: int) -> int:
        return 2 * hidden * coff * width + ratio * coff * width + width

    total = f.int("vocab_size") * hidden * (1 if f.flag("tie_word_embeddings") else 2)
    total += hc * hc * hidden + hc + 1 + hidden  # hc_head and the final norm
    for spec, by_hash in zip(layers, deepseek_v4_hashed(f, len(layers))):
        total += layer + (0 if by_hash else experts)
        ratio = next((c.policy.compress_ratio for c in spec.caches if c.policy.compress_ratio), None)
        if ratio is None:
            continue
        if any(c.kind == "indexer" for c in spec.caches):  # CSA
            total += compressor(head, 2, ratio) + compressor(index, 2, ratio)
            total += q_rank * index_heads * index + hidden * index_heads
        else:
            total += compressor(head, 1, ratio)
    active = total - len(layers) * (experts - top_k) * per_expert
    return total, active


def deepseek_v41_parts(f: Fields, layers: list) -> dict[str, int]:
    """DeepSeek-V4.1's text-model parameters by the dtype vLLM 0.33 holds them in (models/deepseek_v41:
    nvidia/model.py DeepseekV4DecoderLayer, attention.py, compressor.py, common/engram.py; the MoE of
    models/deepseek_v4/nvidia/model.py): {"experts": routed experts (expert_dtype), "fp8": the quantized
    linears, "bf16", "fp32"}. Every layer has V4's attention (low-rank q, one shared K/V projection, the
    grouped output projection, sinks), a MoE (routed experts, one shared expert, the router and its two
    float32 biases: e_score_correction_bias and the image-token bias_vl), two hyper-connection mixers and
    two norms. A KV source adds its compressor (kv projection, and at ratio 2 the gate, to head_dim; a
    norm; no positional bias); an index source its indexer's q_b and head weights, and a KV source that
    owns the index keys their projection from the latent and its norm; an Engram layer its key/value
    projection and two gate vectors. Not counted: the Engram n-gram tables (kept in pinned host memory by
    default), the DSpark drafter under mtp.* (loaded only for speculative decoding) and the vision tower;
    V4.1 has no hc_head."""
    hidden, heads, head = f.int("hidden_size"), f.int("num_attention_heads"), f.int("head_dim")
    q_rank, o_rank, groups = f.int("q_lora_rank"), f.int("o_lora_rank"), f.int("o_groups")
    experts, inter = f.int("n_routed_experts"), f.int("moe_intermediate_size")
    shared = f.int("n_shared_experts", default=1, minimum=0)
    hc = f.int("hc_mult", default=4)
    index, index_heads = f.int("index_head_dim"), f.int("index_n_heads", default=32)
    per_expert = 3 * hidden * inter
    mixer = (2 + hc) * hc * (hc * hidden + 1) + 3  # hc fn, base and scale, float32
    n = len(layers)
    parts = {"experts": n * experts * per_expert,
             "fp8": n * (hidden * (q_rank + head) + q_rank * heads * head + heads * head // groups * o_rank * groups
                         + groups * o_rank * hidden + shared * per_expert),
             "bf16": n * (q_rank + head + experts * hidden + 2 * hidden),
             "fp32": n * (heads + 2 * experts + 2 * mixer)}
    for spec in layers:
        main = spec.caches[0] if spec.caches and not spec.borrows else None
        ratio = main.policy.compress_ratio if main is not None else None
        if ratio:  # a KV source: its compressor, and the index keys it owns
            parts["bf16"] += hidden * head * (2 if ratio > 1 else 1) + head + index * head + index
        if any(c.kind == "indexer" for c in spec.caches + spec.borrows):  # an index source
            parts["fp8"] += q_rank * index_heads * index
            parts["bf16"] += hidden * index_heads
    engram = f.list("engram_layer_ids") if f.has("engram_layer_ids") else []
    if engram:
        ngram, e_heads = f.int("engram_max_ngram_size", minimum=2), f.int("engram_n_heads", minimum=1)
        e_dim = f.int("engram_head_dim", minimum=1)
        parts["fp8"] += len(engram) * (ngram - 1) * e_heads * e_dim * (hc + 1) * hidden
        parts["bf16"] += len(engram) * 2 * hc * hidden
    parts["bf16"] += f.int("vocab_size") * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden
    return parts


def deepseek_v41(f: Fields, layers: list, dims) -> tuple[int, int]:
    """deepseek_v41_parts summed (551,880,835,184 for V4.1-Flash: its published 552B backbone less the
    0.49B vision tower); active: the routed experts but num_experts_per_tok of them a layer."""
    total = sum(deepseek_v41_parts(f, layers).values())
    idle = f.int("n_routed_experts") - f.int("num_experts_per_tok")
    return total, total - len(layers) * idle * 3 * f.int("hidden_size") * f.int("moe_intermediate_size")


def hy_v4(f: Fields, layers: list, dims) -> tuple[int, int]:
    """HY-V4 as transformers 5.25 builds it (HYV4ForCausalLM): MLA with low-rank q (attention_bias on q_a_proj,
    kv_a_proj_with_mqa and o_proj), an output gate and per-head sinks; the indexer (q from the q latent, one key
    projection with a LayerNorm, head weights) only on layers that keep index keys; two hyper-connections a layer
    (hc_mult streams) and the head's; a dense MLP on the mlp_layer_types "dense" layers (absent: layer 0), else
    routed experts with a router (and its e_score_correction_bias, which the checkpoint holds), and shared experts."""
    hidden, vocab, heads = f.int("hidden_size"), f.int("vocab_size"), f.int("num_attention_heads")
    q, r = f.int("q_lora_rank"), f.int("kv_lora_rank")
    nope, rope, v = f.int("qk_nope_head_dim"), f.int("qk_rope_head_dim"), f.int("v_head_dim")
    attention = (hidden * q + q + q * heads * (nope + rope) + hidden * (r + rope) + r + r * heads * (nope + v)
                 + 2 * heads * v * hidden + heads)
    if f.flag("attention_bias"):  # HYV4Attention: biases on q_a_proj, kv_a_proj_with_mqa and o_proj
        attention += q + r + rope + hidden
    index_heads, index = f.int("index_n_heads", default=16), f.int("index_head_dim", default=128)
    indexer = q * index_heads * index + hidden * index + 2 * index + hidden * index_heads
    hc = f.int("hc_mult", default=4)
    residual = 2 * (2 * hc * hc * hidden + 2 * hc + 2)
    experts, top_k, inter = f.int("n_routed_experts"), f.int("num_experts_per_tok"), f.int("moe_intermediate_size")
    sparse = 3 * experts * hidden * inter + experts * hidden + experts + 3 * hidden * inter * f.int("n_shared_experts",
                                                                                                     default=1)
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=1, minimum=0)))
    ends = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden + hc * hc * hidden + hc + 1
    bases = [attention + 2 * hidden + residual + (indexer if any(c.kind == "indexer" for c in layer.caches) else 0)
             for layer in layers]
    return moe_stack(ends, bases, kinds, sparse, 3 * hidden * f.int("intermediate_size"),
                     (experts - top_k) * 3 * hidden * inter)
