"""Parameter counts of the latent-attention families, module by module as transformers 5.23 builds them.

Types: axk1, axk2, youtu, glm4_moe_lite, glm_moe_dsa, longcat_flash, mimo_v2_flash, dots3_note (its text model).

Each counter is `count(f, layers, dims) -> (total, active)`:
- total: every parameter of the causal LM as transformers builds it (embeddings, decoder layers, final norm,
  lm_head unless tied) plus each MoE router's `e_score_correction_bias` buffer. MTP layers are not built by
  transformers and are not counted.
- active: total minus the routed experts a token does not use ((experts - top_k) x one expert, per MoE layer).

Layers are counted over `range(len(layers))` (so `count(f, layers[:-1], dims)` drops the last decoder layer);
per-layer choices (dense or MoE MLP, indexer or not, sliding or full) follow the config the way transformers'
config class derives them.

Where a config class maps a name onto another (`attribute_map`: num_local_experts -> n_routed_experts, ...),
the mapped name wins when a file writes both, as in transformers.
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .param_parts import dense_first, embeddings, gated_mlp, mla as _mla, mlp_layer_types


# -- reading helpers -------------------------------------------------------------------------------------------

def _int(f: Fields, *names: str, default, minimum: int = 0) -> int:
    """The first of `names` the file writes (not null), checked; else f.int on the last name (family default,
    else `default`). `names` run attribute_map key first, the attribute itself last."""
    for name in names:
        value = f.raw.get(name)
        if value is not None:
            return f.check_int(name, value, minimum)
    return f.int(names[-1], default=default, minimum=minimum)


def _opt_rank(f: Fields, name: str, default: int) -> int | None:
    """A LoRA rank that may be null: written null -> None; absent -> the class default."""
    if name in f.raw and f.raw[name] is None:
        return None
    return f.int(name, default=default, minimum=0)


def _need_rank(f: Fields, name: str, default: int) -> int:
    rank = _opt_rank(f, name, default)
    if rank is None:
        raise ConfigError(f"{f.source}: {name!r} is null, but transformers' {f.model_type} attention always has a "
                          f"query LoRA (model_type {f.model_type!r})", f"pass --set {name}=VALUE")
    return rank






def _first_k_rule(f: Fields, first_k_default: int):
    """DeepSeek-V3 style: sparse where i >= first_k_dense_replace and i % moe_layer_freq == 0."""
    first_k = f.int("first_k_dense_replace", default=first_k_default, minimum=0)
    freq = f.int("moe_layer_freq", default=1)
    return lambda i: "sparse" if i >= first_k and i % freq == 0 else "dense"


def _indexer(hidden: int, q_lora: int, index_head_dim: int, index_heads: int) -> int:
    """DSA indexer: wq_b (q_lora -> heads x head_dim), wk (hidden -> head_dim), k_norm (LayerNorm: weight and
    bias), weights_proj (hidden -> heads); no biases on the linears."""
    return q_lora * index_heads * index_head_dim + hidden * index_head_dim + 2 * index_head_dim + hidden * index_heads




def _routed_moe(hidden: int, experts: int, inter: int, top_k: int, shared_inter: int) -> tuple[int, int]:
    """(total, active) of a DeepSeek-V3 MoE block: experts.gate_up_proj [E, 2I, H] + experts.down_proj [E, H, I],
    gate.weight [E, H], gate.e_score_correction_bias [E] (buffer), shared_experts MLP of shared_inter."""
    per_expert = 3 * hidden * inter
    total = experts * per_expert + experts * hidden + experts + gated_mlp(hidden, shared_inter)
    return total, total - (experts - min(top_k, experts)) * per_expert


def _experts(f: Fields, default: int) -> int:
    return _int(f, "num_local_experts", "n_routed_experts", default=default)


# -- the counters ----------------------------------------------------------------------------------------------

def axk1(f: Fields, layers: list, dims) -> tuple[int, int]:
    """A.X-K1 (modeling_axk1.py): embed_tokens, final norm, lm_head (tie_word_embeddings, default False).
    Each layer: AXK1Attention (MLA that always has a query LoRA: q_a_proj, q_a_layernorm, q_b_proj,
    kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj; attention_bias on q_a / kv_a / o), input and
    post-attention RMSNorms, and by mlp_layer_types (else first_k_dense_replace 1 / moe_layer_freq 1) either
    AXK1MLP(intermediate_size) or AXK1MoE: experts (gate_up_proj, down_proj), gate (weight +
    e_score_correction_bias), shared_experts MLP (moe_intermediate_size x n_shared_experts) and a
    post_mlp_layernorm."""
    hidden = f.int("hidden_size", default=7168)
    heads = f.int("num_attention_heads", default=64)
    attn = _mla(hidden, heads, _need_rank(f, "q_lora_rank", 1536), f.int("kv_lora_rank", default=512),
                f.int("qk_rope_head_dim", default=64), f.int("qk_nope_head_dim", default=128),
                f.int("v_head_dim", default=128), f.flag("attention_bias"))
    inter = f.int("intermediate_size", default=18432, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=2048, minimum=0)
    moe_t, moe_a = _routed_moe(hidden, _experts(f, 192), moe_inter, f.int("num_experts_per_tok", default=8),
                               moe_inter * f.int("n_shared_experts", default=1, minimum=0))
    moe_t, moe_a = moe_t + hidden, moe_a + hidden  # post_mlp_layernorm
    n = len(layers)
    total = active = embeddings(f, hidden, False, 163840) + hidden
    for kind in mlp_layer_types(f, n, _first_k_rule(f, 1)):
        base = attn + 2 * hidden
        t, a = (moe_t, moe_a) if kind == "sparse" else (gated_mlp(hidden, inter),) * 2
        total += base + t
        active += base + a
    return total, active


def axk2(f: Fields, layers: list, dims) -> tuple[int, int]:
    """A.X-K2 (modeling_axk2.py): embed_tokens, final norm, lm_head (tie default False).
    Each layer: AXK2Attention = q_a_proj (+bias), q_a_layernorm, q_gate_proj (2 x q_lora_rank -> heads x
    (qk_nope + qk_rope + v_head_dim), no q_b_proj), kv_a_proj_with_mqa (+bias), kv_a_layernorm, kv_b_proj,
    o_proj (+bias) and a DSA indexer on EVERY layer (wq_b, wk, k_norm LayerNorm, weights_proj);
    input_layernorm is an AXK2GatedRMSNorm (RMSNorm + fc1 hidden -> gated_norm_rank + fc2 back); the
    post-attention norm is gated on MoE layers, a plain RMSNorm on dense ones; MLP by mlp_layer_types
    (else first_k_dense_replace 1 / moe_layer_freq 1): AXK2MLP(intermediate_size) or AXK2MoE (experts, gate
    weight + e_score_correction_bias, shared_experts of moe_intermediate_size x n_shared_experts)."""
    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=32)
    q_lora = _need_rank(f, "q_lora_rank", 384)
    rank = f.int("kv_lora_rank", default=128)
    rope, nope = f.int("qk_rope_head_dim", default=32), f.int("qk_nope_head_dim", default=64)
    v_dim = f.int("v_head_dim", default=64)
    bias = f.flag("attention_bias")
    attn = hidden * q_lora + (q_lora if bias else 0) + q_lora  # q_a_proj, q_a_layernorm
    attn += 2 * q_lora * heads * (nope + rope + v_dim)  # q_gate_proj
    attn += hidden * (rank + rope) + ((rank + rope) if bias else 0) + rank  # kv_a_proj_with_mqa, kv_a_layernorm
    attn += rank * heads * (nope + v_dim) + heads * v_dim * hidden + (hidden if bias else 0)  # kv_b_proj, o_proj
    attn += _indexer(hidden, q_lora, f.int("index_head_dim", default=128), f.int("index_n_heads", default=16))
    gated_norm = hidden + 2 * hidden * f.int("gated_norm_rank", default=16, minimum=0)
    inter = f.int("intermediate_size", default=5120, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=512, minimum=0)
    moe_t, moe_a = _routed_moe(hidden, _experts(f, 128), moe_inter, f.int("num_experts_per_tok", default=8),
                               moe_inter * f.int("n_shared_experts", default=1, minimum=0))
    n = len(layers)
    total = active = embeddings(f, hidden, False, 163840) + hidden
    for kind in mlp_layer_types(f, n, _first_k_rule(f, 1)):
        if kind == "sparse":
            base, t, a = attn + 2 * gated_norm, moe_t, moe_a
        else:
            base = attn + gated_norm + hidden
            t = a = gated_mlp(hidden, inter)
        total += base + t
        active += base + a
    return total, active


def youtu(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Youtu-LLM (modeling_youtu.py): embed_tokens, final norm, lm_head (tie_word_embeddings, default TRUE).
    Each layer: YoutuAttention (MLA: q_proj without bias when q_lora_rank is null, else q_a_proj (+bias),
    q_a_layernorm, q_b_proj; kv_a_proj_with_mqa (+bias), kv_a_layernorm, kv_b_proj, o_proj (+bias)), a dense
    YoutuMLP(intermediate_size) and two RMSNorms. No MoE."""
    hidden = f.int("hidden_size", default=2048)
    attn = _mla(hidden, f.int("num_attention_heads", default=16), _opt_rank(f, "q_lora_rank", 1536),
                f.int("kv_lora_rank", default=512), f.int("qk_rope_head_dim", default=64),
                f.int("qk_nope_head_dim", default=128), f.int("v_head_dim", default=128), f.flag("attention_bias"))
    layer = attn + gated_mlp(hidden, f.int("intermediate_size", default=6144, minimum=0)) + 2 * hidden
    total = embeddings(f, hidden, True, 128256) + hidden + len(layers) * layer
    return total, total


def glm4_moe_lite(f: Fields, layers: list, dims) -> tuple[int, int]:
    """GLM-4.7-Flash (modeling_glm4_moe_lite.py): embed_tokens, final norm, lm_head (tie default False).
    Each layer: Glm4MoeLiteAttention (MLA with the q_lora_rank null branch: q_proj without bias; else q_a_proj
    (+bias), q_a_layernorm, q_b_proj; kv_a_proj_with_mqa (+bias), kv_a_layernorm, kv_b_proj, o_proj (+bias);
    head_dim is attribute-mapped onto qk_rope_head_dim), two RMSNorms, and by mlp_layer_types (else layer 0
    dense, the rest sparse: first_k_dense_replace is NOT read) Glm4MoeLiteMLP(intermediate_size) or
    Glm4MoeLiteMoE (experts, gate weight + e_score_correction_bias, shared_experts of
    moe_intermediate_size x n_shared_experts)."""
    hidden = f.int("hidden_size", default=2048)
    attn = _mla(hidden, f.int("num_attention_heads", default=20), _opt_rank(f, "q_lora_rank", 768),
                f.int("kv_lora_rank", default=512), _int(f, "head_dim", "qk_rope_head_dim", default=64),
                f.int("qk_nope_head_dim", default=192), f.int("v_head_dim", default=256), f.flag("attention_bias"))
    inter = f.int("intermediate_size", default=10240, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=1536, minimum=0)
    moe_t, moe_a = _routed_moe(hidden, _experts(f, 64), moe_inter, f.int("num_experts_per_tok", default=4),
                               moe_inter * f.int("n_shared_experts", default=1, minimum=0))
    total = active = embeddings(f, hidden, False, 154880) + hidden
    for kind in mlp_layer_types(f, len(layers), dense_first(1)):
        base = attn + 2 * hidden
        t, a = (moe_t, moe_a) if kind == "sparse" else (gated_mlp(hidden, inter),) * 2
        total += base + t
        active += base + a
    return total, active


def _glm_dsa_indexer_types(f: Fields, n: int) -> list[str]:
    """GlmMoeDsaConfig: indexer_types, else index_topk_pattern (F/S letters, or a list), else layer i 'full'
    iff max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0 (offset 2, freq 1)."""
    types = f.list("indexer_types")
    if types is None:
        pattern = f.get("index_topk_pattern")
        if pattern is not None:
            if isinstance(pattern, str):
                if set(pattern) - {"F", "S"}:
                    raise ConfigError(f"{f.source}: 'index_topk_pattern' must be letters F or S "
                                      f"(model_type {f.model_type!r})", "fix the config")
                types = [{"F": "full", "S": "shared"}[c] for c in pattern]
            else:
                types = f.list("index_topk_pattern")
        else:
            freq = max(f.int("index_topk_freq", default=1, minimum=0), 1)
            offset = f.int("index_skip_topk_offset", default=2, minimum=0)
            types = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(n)]
    if len(types) < n:
        raise ConfigError(f"{f.source}: the indexer types list {len(types)} entries for {n} layers "
                          f"(model_type {f.model_type!r})", "fix the config or pass --set indexer_types=[...]")
    return types[:n]


def glm_moe_dsa(f: Fields, layers: list, dims) -> tuple[int, int]:
    """GLM-5 (modeling_glm_moe_dsa.py): embed_tokens, final norm, lm_head (tie default False).
    Each layer: GlmMoeDsaAttention (MLA that always has a query LoRA: q_a_proj (+bias), q_a_layernorm,
    q_b_proj, kv_a_proj_with_mqa (+bias), kv_a_layernorm, kv_b_proj, o_proj (+bias)) with a GlmMoeDsaIndexer
    (wq_b, wk, k_norm LayerNorm, weights_proj) only where indexer_types is not 'shared'; two RMSNorms; by
    mlp_layer_types (else the first first_k_dense_replace (3) layers dense) GlmMoeDsaMLP(intermediate_size)
    or GlmMoeDsaMoE (experts, gate weight + e_score_correction_bias, shared_experts of moe_intermediate_size
    x n_shared_experts). A `num_experts` key overrides n_routed_experts, as the config class does."""
    hidden = f.int("hidden_size", default=6144)
    q_lora = _need_rank(f, "q_lora_rank", 2048)
    attn = _mla(hidden, f.int("num_attention_heads", default=64), q_lora, f.int("kv_lora_rank", default=512),
                f.int("qk_rope_head_dim", default=64), f.int("qk_nope_head_dim", default=192),
                f.int("v_head_dim", default=256), f.flag("attention_bias"))
    indexer = _indexer(hidden, q_lora, f.int("index_head_dim", default=128), f.int("index_n_heads", default=32))
    inter = f.int("intermediate_size", default=12288, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=2048, minimum=0)
    experts = _int(f, "num_experts", "num_local_experts", "n_routed_experts", default=256)
    moe_t, moe_a = _routed_moe(hidden, experts, moe_inter, f.int("num_experts_per_tok", default=8),
                               moe_inter * f.int("n_shared_experts", default=1, minimum=0))
    n = len(layers)
    first_k = f.int("first_k_dense_replace", default=3, minimum=0)
    kinds = mlp_layer_types(f, n, dense_first(first_k))
    total = active = embeddings(f, hidden, False, 154880) + hidden
    for kind, itype in zip(kinds, _glm_dsa_indexer_types(f, n)):
        base = attn + (0 if itype == "shared" else indexer) + 2 * hidden
        t, a = (moe_t, moe_a) if kind == "sparse" else (gated_mlp(hidden, inter),) * 2
        total += base + t
        active += base + a
    return total, active


def longcat_mla_fields(f: Fields) -> tuple:
    """(hidden_size, qk_nope_head_dim, qk_rope_head_dim, qk_head_dim, heads, q_lora_rank, kv_lora_rank, v_head_dim,
    attention_bias) of LongCat-Flash's MLA sublayers as its count below reads them (its per-module table,
    weight_tables/mla.py, reads them here too); qk_head_dim defaults to qk_nope + qk_rope, and a query LoRA rank is
    required."""
    nope, rope = f.int("qk_nope_head_dim", default=128), f.int("qk_rope_head_dim", default=64)
    return (f.int("hidden_size", default=6144), nope, rope, f.int("qk_head_dim", default=nope + rope),
            f.int("num_attention_heads", default=64), _need_rank(f, "q_lora_rank", 1536),
            f.int("kv_lora_rank", default=512), f.int("v_head_dim", default=128), f.flag("attention_bias"))


def longcat_flash(f: Fields, layers: list, dims) -> tuple[int, int]:
    """LongCat-Flash (modeling_longcat_flash.py): embed_tokens, final norm, lm_head (tie default False).
    kvplan's layers are the 2 x num_layers MLA sublayers. Each sublayer: LongcatFlashMLA (always a query LoRA:
    q_a_proj (+bias), q_a_layernorm, q_b_proj of qk_head_dim (default qk_nope + qk_rope), kv_a_proj_with_mqa
    (+bias), kv_a_layernorm, kv_b_proj, o_proj (+bias)), a LongcatFlashMLP(ffn_hidden_size) and its
    input / post-attention RMSNorms. Each decoder layer (counted on even sublayers) adds ONE LongcatFlashMoE:
    router.classifier (hidden -> n_routed_experts + zero_expert_num, bias only with router_bias) and its
    e_score_correction_bias (n_routed + zero); the routed experts' gate_up and down projections (none when
    n_routed_experts is 0). transformers also allocates gate_up rows for the zero (identity) experts, which
    hold no weights and which the checkpoints leave out: not counted. active leaves out the unused routed
    experts."""
    hidden, nope, rope, qk_head, heads, q_lora, rank, v_dim, bias = longcat_mla_fields(f)
    mla = _mla(hidden, heads, q_lora, rank, rope, nope, v_dim, bias) - q_lora * heads * (nope + rope)
    mla += q_lora * heads * qk_head  # q_b_proj reads the settable qk_head_dim
    inter = _int(f, "intermediate_size", "ffn_hidden_size", default=12288)
    sub = mla + gated_mlp(hidden, inter) + 2 * hidden
    experts = _experts(f, 512)
    zero = f.int("zero_expert_num", default=256, minimum=0)
    top_k = _int(f, "num_experts_per_tok", "moe_topk", default=12)
    expert_inter = _int(f, "moe_intermediate_size", "expert_ffn_hidden_size", default=2048)
    routed = experts + zero
    router = hidden * routed + (routed if f.flag("router_bias") else 0) + routed  # classifier (+bias), e_score bias
    moe_t = router
    moe_a = router
    if experts > 0:  # the checkpoint's experts: transformers also allocates gate_up rows for the zero experts
        moe_t += experts * 3 * expert_inter * hidden
        moe_a += min(top_k, experts) * 3 * hidden * expert_inter
    total = active = embeddings(f, hidden, False, 131072) + hidden
    for i in range(len(layers)):
        total += sub + (moe_t if i % 2 == 0 else 0)
        active += sub + (moe_a if i % 2 == 0 else 0)
    return total, active


def mimo_v2_fields(f: Fields, n: int) -> tuple[int, int, int, int, int, bool, list]:
    """(hidden_size, heads, KV heads, head_dim, v_head_dim, attention_bias, layer types of the n layers) as MiMo-V2
    reads them (MiMoV2FlashConfig's defaults; layer_types, else markers.mimo_v2_sliding): the count below and its
    per-module table (weight_tables/wrap.py) read them here; a sliding layer's K/V heads: markers.mimo_v2_swa_kv."""
    from .markers import mimo_v2_sliding

    layer_types = f.list("layer_types")
    if layer_types is None:
        layer_types = ["sliding_attention" if s else "full_attention" for s in mimo_v2_sliding(f, n)]
    if len(layer_types) < n:
        raise ConfigError(f"{f.source}: 'layer_types' lists {len(layer_types)} entries for {n} layers "
                          f"(model_type {f.model_type!r})", "fix the config or pass --set layer_types=[...]")
    return (f.int("hidden_size", default=4096), f.int("num_attention_heads", default=64),
            f.int("num_key_value_heads", default=4), f.int("head_dim", default=192),
            f.int("v_head_dim", default=128), f.flag("attention_bias"), layer_types)


def mimo_v2_flash(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiMo-V2-Flash (modeling_mimo_v2_flash.py): embed_tokens, final norm, lm_head (tie default False).
    Each layer: MiMoV2FlashAttention = q_proj (heads x head_dim), k_proj (kv x head_dim), v_proj (kv x
    v_head_dim), all three biased with attention_bias, o_proj without bias; sliding layers (layer_types, else
    all but layer 0 and every 6th) have 2 x num_key_value_heads and per-head `sinks`; two RMSNorms; by
    mlp_layer_types (else layer 0 dense, the rest sparse) MiMoV2FlashMLP(intermediate_size) or
    MiMoV2FlashMoE (experts, gate weight + e_score_correction_bias, NO shared experts)."""
    from .markers import mimo_v2_swa_kv

    hidden, heads, kv, head_dim, v_dim, bias, layer_types = mimo_v2_fields(f, len(layers))
    n = len(layers)
    swa_kv = mimo_v2_swa_kv(f)

    def attention(sliding: bool) -> int:
        k = swa_kv if sliding else kv
        out = hidden * heads * head_dim + hidden * k * head_dim + hidden * k * v_dim + heads * v_dim * hidden
        if bias:
            out += heads * head_dim + k * head_dim + k * v_dim
        return out + (heads if sliding else 0)  # sinks

    inter = f.int("intermediate_size", default=16384, minimum=0)
    moe_t, moe_a = _routed_moe(hidden, _experts(f, 256), f.int("moe_intermediate_size", default=2048, minimum=0),
                               f.int("num_experts_per_tok", default=8), 0)
    total = active = embeddings(f, hidden, False, 152576) + hidden
    kinds = mlp_layer_types(f, n, dense_first(1))
    for kind, ltype in zip(kinds, layer_types[:n]):
        base = attention(ltype == "sliding_attention") + 2 * hidden
        t, a = (moe_t, moe_a) if kind == "sparse" else (gated_mlp(hidden, inter),) * 2
        total += base + t
        active += base + a
    return total, active


_DOTS3_SWA_DEFAULTS = {"num_attention_heads": 64, "num_key_value_heads": 64, "q_lora_rank": 1024,
                       "kv_lora_rank": 1024, "head_dim": 256, "qk_nope_head_dim": 192, "v_head_dim": 128}
_DOTS3_ATTN = {"hidden_size": 5120, "num_attention_heads": 128, "q_lora_rank": 1024, "kv_lora_rank": 512,
               "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "index_head_dim": 128,
               "index_n_heads": 64}


def _dots3_layer_types(f: Fields, n: int) -> list[str]:
    """Dots3NoteTextConfig.__post_init__: layer_types, else DSA ('indexed_attention'; 'full_attention' when
    use_dsa is false) where not use_sliding_window or i < 2 or i % 4 == 1, sliding elsewhere; then use_dsa
    (absent: None with per_layer_config, else True) renames full <-> indexed."""
    use_dsa = f.flag("use_dsa") if f.raw.get("use_dsa") is not None else (
        None if "per_layer_config" in f.raw else True)
    types = f.list("layer_types")
    if types is None:
        full = "full_attention" if use_dsa is False else "indexed_attention"
        sliding = f.flag("use_sliding_window", default=True)
        types = [full if not sliding or i < 2 or i % 4 == 1 else "sliding_attention" for i in range(n)]
    types = list(types)
    if use_dsa is not None:
        old, new = ("full_attention", "indexed_attention") if use_dsa else ("indexed_attention", "full_attention")
        types = [new if t == old else t for t in types]
    if len(types) < n:
        raise ConfigError(f"{f.source}: 'layer_types' lists {len(types)} entries for {n} layers "
                          f"(model_type {f.model_type!r})", "fix the config or pass --set layer_types=[...]")
    return types


def _dots3_overrides(f: Fields, types: list[str]) -> dict[int, dict]:
    """per_layer_config ({"07": {...}}) when the file has one; else, as the config class builds it, the
    sliding layers take the swa_* fields (defaults _DOTS3_SWA_DEFAULTS; swa_qk_rope_head_dim = swa_head_dim -
    swa_qk_nope_head_dim)."""
    table = f.raw.get("per_layer_config")
    if "per_layer_config" in f.raw:
        if table is None:
            return {}
        if not isinstance(table, dict):
            raise ConfigError(f"{f.source}: 'per_layer_config' must map layer indices to objects "
                              f"(model_type {f.model_type!r})", "fix the config")
        out = {}
        for key, entry in table.items():
            if not str(key).isdigit() or not isinstance(entry, dict):
                raise ConfigError(f"{f.source}: 'per_layer_config' must map layer indices (\"3\") to objects "
                                  f"(model_type {f.model_type!r})", "fix the config")
            out[int(key)] = entry
        return out
    swa = {}
    for name, default in _DOTS3_SWA_DEFAULTS.items():
        value = f.raw.get(f"swa_{name}", default)  # a written null stays null, as kwargs.pop returns it
        swa[name] = value
    rope = f.raw.get("swa_qk_rope_head_dim")
    if rope is None and "swa_qk_rope_head_dim" not in f.raw:
        rope = swa["head_dim"] - swa["qk_nope_head_dim"]
    swa["qk_rope_head_dim"] = rope
    return {i: swa for i, t in enumerate(types) if t == "sliding_attention"}


def dots3_note_parts(f: Fields, n: int) -> dict:
    """What dots3_note counts, read once (the per-layer table, configs/weight_tables/mla_more.py, reads the same):
    hidden, the layer types, each layer's attention widths (per_layer_config / swa_* overrides on the global
    ones), attention_bias, the MLP kinds and widths."""
    hidden = f.int("hidden_size", default=5120)
    types = _dots3_layer_types(f, n)
    overrides = _dots3_overrides(f, types)
    glob = {name: f.int(name, default=default, minimum=0) for name, default in _DOTS3_ATTN.items()}
    glob["q_lora_rank"] = _need_rank(f, "q_lora_rank", _DOTS3_ATTN["q_lora_rank"])

    def widths(i: int) -> dict:
        cfg = dict(glob)
        for name, value in overrides.get(i, {}).items():
            if name in cfg:
                if value is None:
                    raise ConfigError(f"{f.source}: per-layer {name!r} of layer {i} is null; transformers' "
                                      f"dots3 attention needs it (model_type {f.model_type!r})", "fix the config")
                cfg[name] = f.check_int(f"per_layer_config.{i}.{name}", value, minimum=0)
        return cfg

    first_k = f.int("first_k_dense_replace", default=1, minimum=0)
    freq = f.get("moe_layer_freq", default=1)
    if isinstance(freq, list):
        freq_list = f.list("moe_layer_freq")
        if len(freq_list) < n:
            raise ConfigError(f"{f.source}: 'moe_layer_freq' lists {len(freq_list)} entries for {n} layers "
                              f"(model_type {f.model_type!r})", "fix the config")
        rule = lambda i: "sparse" if i >= first_k and bool(freq_list[i]) else "dense"  # noqa: E731
    else:
        step = f.int("moe_layer_freq", default=1)
        rule = lambda i: "sparse" if i >= first_k and i % step == 0 else "dense"  # noqa: E731
    return {"hidden": hidden, "types": types, "attention": [widths(i) for i in range(n)],
            "bias": f.flag("attention_bias"), "inter": f.int("intermediate_size", default=13824, minimum=0),
            "shared_inter": _int(f, "moe_shared_expert_intermediate_size", "shared_experts_intermediate_size",
                                 default=1536) * f.int("n_shared_experts", default=1, minimum=0),
            "experts": _experts(f, 256), "moe_inter": f.int("moe_intermediate_size", default=1536, minimum=0),
            "top_k": f.int("num_experts_per_tok", default=8), "kinds": mlp_layer_types(f, n, rule)}


def dots3_note(f: Fields, layers: list, dims) -> tuple[int, int]:
    """dots3-note's text model (modeling_dots3_note.py, Dots3NoteForCausalLM; no vision or audio tower):
    embed_tokens, final norm, lm_head (tie default False). Each layer: Dots3NoteTextAttention built from the
    layer's own config (per_layer_config overrides, else swa_* for sliding layers): q_a_proj (+bias),
    q_a_layernorm, q_b_proj (a query LoRA is required), kv_a_proj_with_mqa (+bias), kv_a_layernorm,
    kv_b_proj, o_proj (+bias), k_rope_only_layernorm (qk_rope_head_dim), g_proj (hidden -> heads) and, on
    'indexed_attention' layers, a Dots3NoteTextIndexer (wq_b, wk, k_norm LayerNorm, weights_proj); two
    RMSNorms; by mlp_layer_types (else first_k_dense_replace 1 / moe_layer_freq, an int or a 0/1 list) a
    Dots3NoteTextMLP(intermediate_size) or Dots3NoteTextMoE (experts, gate weight + e_score_correction_bias,
    shared_experts of shared_experts_intermediate_size (moe_shared_expert_intermediate_size) x
    n_shared_experts)."""
    w = dots3_note_parts(f, len(layers))
    hidden, bias = w["hidden"], w["bias"]

    def attention(i: int) -> int:
        cfg = w["attention"][i]
        h, heads, rope = cfg["hidden_size"], cfg["num_attention_heads"], cfg["qk_rope_head_dim"]
        out = _mla(h, heads, cfg["q_lora_rank"], cfg["kv_lora_rank"], rope, cfg["qk_nope_head_dim"],
                   cfg["v_head_dim"], bias)
        out += rope + h * heads  # k_rope_only_layernorm, g_proj
        if w["types"][i] == "indexed_attention":
            out += _indexer(h, cfg["q_lora_rank"], cfg["index_head_dim"], cfg["index_n_heads"])
        return out

    moe_t, moe_a = _routed_moe(hidden, w["experts"], w["moe_inter"], w["top_k"], w["shared_inter"])
    total = active = embeddings(f, hidden, False, 152064) + hidden
    for i, kind in enumerate(w["kinds"]):
        base = attention(i) + 2 * hidden
        t, a = (moe_t, moe_a) if kind == "sparse" else (gated_mlp(hidden, w["inter"]),) * 2
        total += base + t
        active += base + a
    return total, active


# -- Mistral Large 4's text model (transformers 5.25 modeling_mistral_large4.py) ----------------------------------

def mistral_large4_fields(f: Fields, n: int) -> dict:
    """MistralLarge4TextConfig's widths (its defaults where the file is silent) and per-layer choices: "rope" (1:
    the layer applies RoPE, no_rope_layers; absent: all but every no_rope_layer_interval-th, 4) and "sparse" (a MoE,
    mlp_layer_types; absent: all but the first first_k_dense_replace, 1)."""
    flags = f.int_list("no_rope_layers", n, minimum=0, maximum=1)
    if flags is None:
        interval = f.int("no_rope_layer_interval", default=4, minimum=1)
        flags = [int((i + 1) % interval != 0) for i in range(n)]
    return {
        "hidden": f.int("hidden_size", default=6144), "heads": f.int("num_attention_heads", default=64),
        "rank": f.int("kv_lora_rank", default=512), "rope": f.int("qk_rope_head_dim", default=64),
        "nope": f.int("qk_nope_head_dim", default=64), "v": f.int("v_head_dim", default=128),
        "bias": f.flag("attention_bias"), "inter": f.int("intermediate_size", default=24576, minimum=0),
        "moe_inter": f.int("moe_intermediate_size", default=6144, minimum=0),
        "experts": _int(f, "num_local_experts", "num_experts", "n_routed_experts", default=128),
        "shared": f.int("n_shared_experts", default=1, minimum=0), "top_k": f.int("num_experts_per_tok", default=4),
        "index_heads": f.int("index_n_heads", default=32), "index_dim": f.int("index_head_dim", default=128),
        "rope_flags": flags[:n],
        "sparse": mlp_layer_types(f, n, dense_first(f.int("first_k_dense_replace", default=1, minimum=0))),
    }


def mistral_large4_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MistralLarge4TextModel and the wrapper's lm_head (tie_word_embeddings, default False). Per layer:
    MistralLarge4TextAttention, DSA attention without a query LoRA: q_proj (hidden -> heads x (qk_nope + qk_rope)),
    kv_a_proj_with_mqa (hidden -> kv_lora_rank + qk_rope_head_dim, kv_lora_rank alone on a NoPE layer; attention_bias),
    kv_a_layernorm, kv_b_proj (kv_lora_rank -> heads x (qk_nope + v_head_dim), a NoPE layer's nope width taking the
    rope dims too), o_proj (attention_bias), softmax_scaling (scale and bias, one a head); on layers whose indexer
    is not "shared" (the layers keeping index keys) a MistralLarge4TextIndexer: q_input_norm (LayerNorm over
    hidden, weight and bias), wq_b (hidden -> index heads x index_head_dim: the queries come from the hidden
    states, not a query LoRA), wk (hidden -> index_head_dim), k_norm (LayerNorm), weights_proj (hidden -> index
    heads), softmax_scaling (two a head); input_layernorm and post_attention_layernorm; the MLP (intermediate_size),
    or the MoE: experts.gate_up_proj / down_proj, the router gate.weight [experts, hidden] (float32, no
    e_score_correction_bias) and shared_experts (moe_intermediate_size x n_shared_experts). The model: embed_tokens,
    norm and the rotary embedding's LeRoPE alpha (a parameter, one a rotary frequency: qk_rope_head_dim / 2, which
    the config makes the head_dim the rotary embedding reads). KV sharing between layers (kv_source_layers) is
    refused by the family (markers.mistral_large4_indexers), so every layer owns kv_a_proj_with_mqa here."""
    n = len(layers)
    w = mistral_large4_fields(f, n)
    hidden, heads, rank, rope, nope, v = (w[k] for k in ("hidden", "heads", "rank", "rope", "nope", "v"))
    ih, nh = w["index_dim"], w["index_heads"]
    indexer = hidden * nh * ih + hidden * ih + 2 * ih + hidden * nh + 2 * hidden + 2 * nh
    per_expert = 3 * hidden * w["moe_inter"]
    moe = w["experts"] * per_expert + w["experts"] * hidden + gated_mlp(hidden, w["moe_inter"] * w["shared"])
    idle = (w["experts"] - min(w["top_k"], w["experts"])) * per_expert
    total = active = embeddings(f, hidden, False, 204800) + hidden + rope // 2
    for i, layer in enumerate(layers):
        rope_i = rope if w["rope_flags"][i] else 0
        kv_a = hidden * (rank + rope_i) + ((rank + rope_i) if w["bias"] else 0) + rank
        attn = (hidden * heads * (nope + rope) + 2 * heads + kv_a + rank * heads * (nope + rope - rope_i + v)
                + heads * v * hidden + (hidden if w["bias"] else 0))
        if any(c.kind == "indexer" for c in layer.caches):
            attn += indexer
        sparse = w["sparse"][i] == "sparse"
        mlp = moe if sparse else gated_mlp(hidden, w["inter"])
        total += attn + 2 * hidden + mlp
        active += attn + 2 * hidden + mlp - (idle if sparse else 0)
    return total, active


COUNTERS = {
    "axk1": axk1,
    "axk2": axk2,
    "youtu": youtu,
    "glm4_moe_lite": glm4_moe_lite,
    "glm_moe_dsa": glm_moe_dsa,
    "longcat_flash": longcat_flash,
    "mimo_v2_flash": mimo_v2_flash,
    "dots3_note": dots3_note,
    "dots3_note_text": dots3_note,
    "mimo_v2": mimo_v2_flash,
    "mistral_large4_text": mistral_large4_text,  # vLLM's MiMoV2ForCausalLM subclasses the Flash model: the same modules
}

