"""Exact parameter counters for MoE decoder families (transformers 5.23 modeling code).

Each counter is `count(f, layers, dims) -> (total, active)`:
- total: every parameter of the causal LM as transformers builds it (text model + lm_head, a tied head
  counted once), plus each router's `e_score_correction_bias` buffer where transformers keeps one as a
  buffer (hy_v3, beam, exaone_moe; ernie4_5_moe and laguna keep it as a parameter, afmoe its expert_bias).
- active: total minus the routed experts a token does not use: (experts - top_k) x one expert's weights,
  per MoE layer (JetMoE routes its attention experts too, so those count as well).

Field defaults are the config classes' defaults (a sparse config.json gets what transformers would fill in).
The layer count is len(layers) (kvplan's reading); per-layer lists are indexed by layer, and a layer past a
list's end falls back to the config class's rule.
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .param_parts import dense_first, embeddings, gated_mlp, mlp_layer_types, moe_stack


# -- shared pieces --------------------------------------------------------------------------------------



def _attn(hidden: int, heads: int, kv: int, head_dim: int, bias: bool = False, o_bias: bool | None = None) -> int:
    """q/k/v/o projections (LlamaAttention shapes), biases when `bias` (o_proj's when `o_bias`, default same)."""
    q, k = heads * head_dim, kv * head_dim
    n = hidden * (q + 2 * k) + q * hidden
    if bias:
        n += q + 2 * k
    if bias if o_bias is None else o_bias:
        n += hidden
    return n


def _head_dim(f: Fields, hidden: int, heads: int, default: int | None) -> int:
    """getattr(config, "head_dim", hidden // heads): the config's head_dim, else the class default, else
    hidden // heads (a null head_dim crashes transformers; hidden // heads is the sensible reading)."""
    value = f.opt_int("head_dim")
    if value is not None:
        return value
    return default if default is not None else hidden // heads






# -- the counters ---------------------------------------------------------------------------------------

def afmoe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """AfmoeForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default False). Each
    AfmoeDecoderLayer: AfmoeAttention (q/k/v/o_proj with attention_bias, q_norm/k_norm over head_dim,
    gate_proj hidden -> heads x head_dim, no bias), input/post_attention/pre_mlp/post_mlp RMSNorms; layers
    below num_dense_layers (1) an AfmoeMLP of intermediate_size, the rest AfmoeSparseMoeBlock: router.gate
    (hidden -> num_experts, no bias), shared_experts AfmoeMLP of moe_intermediate_size x num_shared_experts,
    AfmoeExperts (gate_up_proj, down_proj, no biases), expert_bias (num_experts, a parameter)."""
    n = len(layers)
    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=16)
    kv = f.int("num_key_value_heads", default=heads)
    hd = _head_dim(f, hidden, heads, 128)
    attn = _attn(hidden, heads, kv, hd, f.flag("attention_bias")) + 2 * hd + hidden * heads * hd
    norms = 4 * hidden
    inter = f.int("intermediate_size", default=6144)
    moe_inter = f.int("moe_intermediate_size", default=1408)
    experts = f.int("num_experts", default=64, minimum=0)
    top_k = f.int("num_experts_per_tok", default=6, minimum=0)
    shared = f.int("num_shared_experts", default=2, minimum=0)
    dense_layers = f.int("num_dense_layers", default=1, minimum=0)
    per_expert = 3 * hidden * moe_inter
    moe = hidden * experts + gated_mlp(hidden, moe_inter * shared) + experts * per_expert + experts
    total = embeddings(f, hidden, False) + hidden
    active = total
    for i in range(n):
        if i >= dense_layers:
            total += attn + norms + moe
            active += attn + norms + moe - (experts - top_k) * per_expert
        else:
            total += attn + norms + gated_mlp(hidden, inter)
            active += attn + norms + gated_mlp(hidden, inter)
    return total, active


def ernie4_5_moe_fields(f: Fields, n: int) -> tuple:
    """(hidden_size, heads, KV heads, head_dim, use_bias, intermediate_size, moe_intermediate_size, experts, shared
    experts, each of the n layers' kind "sparse" / "dense") as ERNIE-4.5-MoE's count below reads them (its per-module
    table, weight_tables/vl.py, reads them here too): a layer i is sparse where (i + 1) % moe_layer_interval == 0 and
    moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer)."""
    hidden = f.int("hidden_size", default=2560)
    heads = f.int("num_attention_heads", default=20)
    start = f.int("moe_layer_start_index", default=1, minimum=-(10**6))
    end = f.int("moe_layer_end_index", default=-1, minimum=-(10**6))
    end = n - 1 if end == -1 else end
    interval = f.int("moe_layer_interval", default=1)
    kinds = ["sparse" if (i + 1) % interval == 0 and start <= i <= end else "dense" for i in range(n)]
    return (hidden, heads, f.int("num_key_value_heads", default=4), _head_dim(f, hidden, heads, None),
            f.flag("use_bias"), f.int("intermediate_size", default=12288),
            f.int("moe_intermediate_size", default=1536),
            f.int("moe_num_experts", "num_experts", default=64, minimum=0),
            f.int("moe_num_shared_experts", default=2, minimum=0), kinds)


def ernie4_5_moe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Ernie4_5_MoeForCausalLM: embed_tokens, norm, lm_head (bias when use_bias; weight tied by default,
    tie_word_embeddings True). Each Ernie4_5_MoeDecoderLayer: Ernie4_5_MoeAttention (q/k/v/o_proj, biases
    when use_bias, head_dim = config head_dim else hidden // heads, no q/k norm), two RMSNorms; a layer i
    with (i + 1) % moe_layer_interval == 0 and moe_layer_start_index <= i <= moe_layer_end_index (-1: the
    last layer) holds Ernie4_5_MoeSparseMoeBlock: gate (Ernie4_5_MoeTopKRouter weight num_experts x hidden,
    moe_statics.e_score_correction_bias 1 x num_experts, a parameter), Ernie4_5_MoeExperts (no biases),
    shared_experts Ernie4_5_MoeMLP of moe_intermediate_size x moe_num_shared_experts (when > 0, biases with
    use_bias); the others an Ernie4_5_MoeMLP of intermediate_size (biases with use_bias)."""
    hidden, heads, kv, hd, bias, inter, moe_inter, experts, shared, kinds = ernie4_5_moe_fields(f, len(layers))
    attn = _attn(hidden, heads, kv, hd, bias)
    norms = 2 * hidden
    top_k = f.int("moe_k", "num_experts_per_tok", default=6, minimum=0)
    per_expert = 3 * hidden * moe_inter
    moe = hidden * experts + experts + experts * per_expert
    if shared > 0:
        moe += gated_mlp(hidden, moe_inter * shared, bias)
    dense = gated_mlp(hidden, inter, bias)
    return moe_stack(embeddings(f, hidden, True, head_bias=bias) + hidden, attn + norms, kinds, moe, dense,
                     (experts - top_k) * per_expert)


def hunyuan_per_layer(f: Fields, n: int, name: str, alias: str, default: int) -> list[int]:
    """HunYuan-MoE's per-layer value of a field that may be one number or a list (a layer past its end: default)."""
    if isinstance(f.get(name, alias), list):
        values = f.int_list(f.where(name, alias), minimum=0, maximum=10**6)
        return [values[i] if i < len(values) else default for i in range(n)]
    return [f.int(name, alias, default=default, minimum=0)] * n


def hunyuan_v1_moe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """HunYuanMoEV1ForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default False). Every
    HunYuanMoEV1DecoderLayer: HunYuanMoEV1Attention (q/k/v/o_proj with attention_bias, query_layernorm and
    key_layernorm over head_dim), two RMSNorms, HunYuanMoEV1Moe: gate.wg (hidden -> num_experts, no bias;
    num_experts and moe_topk may be per-layer lists), HunYuanMoEV1Experts (num_experts of intermediate_size,
    no biases), shared_mlp HunYuanMoEV1MLP of intermediate_size."""
    n = len(layers)
    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=heads)
    hd = _head_dim(f, hidden, heads, None)
    attn = _attn(hidden, heads, kv, hd, f.flag("attention_bias")) + 2 * hd
    inter = f.int("intermediate_size", default=11008)
    per_expert = 3 * hidden * inter
    experts = hunyuan_per_layer(f, n, "num_experts", "num_local_experts", 1)
    top_k = hunyuan_per_layer(f, n, "moe_topk", "num_experts_per_tok", 1)
    total = embeddings(f, hidden, False) + hidden
    active = total
    for i in range(n):
        block = attn + 2 * hidden + hidden * experts[i] + experts[i] * per_expert + gated_mlp(hidden, inter)
        total += block
        active += block - (experts[i] - top_k[i]) * per_expert
    return total, active


def hy_v3(f: Fields, layers: list, dims) -> tuple[int, int]:
    """HYV3ForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default False). Each
    HYV3DecoderLayer: HYV3Attention (q/k/v/o_proj with attention_bias, q_norm/k_norm over head_dim), two
    RMSNorms; mlp_layer_types[i] == "sparse" (default: layer 0 dense, the rest sparse) holds HYV3MoE: gate
    (HYV3TopKRouter weight num_experts x hidden), HYV3Experts (no biases), the e_score_correction_bias
    buffer (num_experts), shared_experts HYV3MLP of moe_intermediate_size x num_shared_experts (0 falls back
    to intermediate_size: `intermediate_size or config.intermediate_size`; biases with mlp_bias); else an
    HYV3MLP of intermediate_size (biases with mlp_bias)."""
    n = len(layers)
    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=64)
    kv = f.int("num_key_value_heads", default=8)
    hd = _head_dim(f, hidden, heads, 128)
    attn = _attn(hidden, heads, kv, hd, f.flag("attention_bias")) + 2 * hd
    mlp_bias = f.flag("mlp_bias")
    inter = f.int("intermediate_size", default=13312)
    moe_inter = f.int("moe_intermediate_size", default=1536)
    experts = f.int("num_experts", "num_local_experts", default=192, minimum=0)
    top_k = f.int("num_experts_per_tok", default=8, minimum=0)
    shared_inter = moe_inter * f.int("num_shared_experts", default=1, minimum=0) or inter
    per_expert = 3 * hidden * moe_inter
    moe = hidden * experts + experts * per_expert + experts + gated_mlp(hidden, shared_inter, mlp_bias)
    dense = gated_mlp(hidden, inter, mlp_bias)
    kinds = mlp_layer_types(f, n, dense_first(1))
    return moe_stack(embeddings(f, hidden, False) + hidden, attn + 2 * hidden, kinds, moe, dense,
                     (experts - top_k) * per_expert)


def flint(f: Fields, layers: list, dims) -> tuple[int, int]:
    """FlintForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default False). Each
    FlintDecoderLayer: FlintAttention (q/k/v/o_proj with attention_bias, q_norm/k_norm over head_dim,
    sinks: one per query head), two RMSNorms; a layer not in mlp_only_layers (default [0, 1]) with
    num_experts > 0 and (i + 1) % decoder_sparse_step == 0 holds FlintSparseMoeBlock: FlintExperts (no
    biases), gate (FlintTopKRouter weight num_experts x hidden), shared_expert FlintMLP of
    shared_expert_intermediate_size (ungated: no shared_expert_gate); else a FlintMLP of intermediate_size."""
    n = len(layers)
    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=4)
    hd = _head_dim(f, hidden, heads, 128)
    attn = _attn(hidden, heads, kv, hd, f.flag("attention_bias")) + 2 * hd + heads
    inter = f.int("intermediate_size", default=6144)
    moe_inter = f.int("moe_intermediate_size", default=512)
    shared_inter = f.int("shared_expert_intermediate_size", default=1024, minimum=0)
    experts = f.int("num_experts", default=256, minimum=0)
    top_k = f.int("num_experts_per_tok", default=6, minimum=0)
    step = f.int("decoder_sparse_step", default=1)
    only = f.int_list("mlp_only_layers", minimum=0, maximum=10**6)
    only = [0, 1] if only is None else only
    per_expert = 3 * hidden * moe_inter
    moe = experts * per_expert + hidden * experts + gated_mlp(hidden, shared_inter)
    dense = gated_mlp(hidden, inter)
    total = embeddings(f, hidden, False) + hidden
    active = total
    for i in range(n):
        if i not in only and experts > 0 and (i + 1) % step == 0:
            total += attn + 2 * hidden + moe
            active += attn + 2 * hidden + moe - (experts - top_k) * per_expert
        else:
            total += attn + 2 * hidden + dense
            active += attn + 2 * hidden + dense
    return total, active


def beam_fields(f: Fields) -> tuple[int, int, int, int, int, int, int]:
    """(hidden, heads, KV heads, head_dim, intermediate, moe intermediate, experts) with BeamConfig's defaults; read
    once for the counter below and the per-module table (weight_tables.moe_more.beam)."""
    hidden = f.int("hidden_size", default=5120)
    heads = f.int("num_attention_heads", default=48)
    return (hidden, heads, f.int("num_key_value_heads", default=8), _head_dim(f, hidden, heads, 128),
            f.int("intermediate_size", default=20480), f.int("moe_intermediate_size", default=2560),
            f.int("num_experts", default=256, minimum=0))


def beam(f: Fields, layers: list, dims) -> tuple[int, int]:
    """BeamForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default False). Each
    BeamDecoderLayer: BeamAttention (q/k/v/o_proj with attention_bias, q_norm/k_norm over head_dim,
    gate_proj hidden -> heads x head_dim without bias, gate_bias: one per head), input/post_attention/
    pre_feedforward/post_feedforward RMSNorms; mlp_layer_types[i] == "sparse" (default: the first
    min(3, layers) dense) holds BeamMoE: BeamExperts (no biases), gate (BeamTopKRouter weight num_experts x
    hidden, e_score_correction_bias buffer of num_experts), no shared expert; else a BeamMLP of
    intermediate_size."""
    n = len(layers)
    hidden, heads, kv, hd, inter, moe_inter, experts = beam_fields(f)
    attn = _attn(hidden, heads, kv, hd, f.flag("attention_bias")) + 2 * hd + hidden * heads * hd + heads
    norms = 4 * hidden
    top_k = f.int("num_experts_per_tok", default=8, minimum=0)
    per_expert = 3 * hidden * moe_inter
    moe = experts * per_expert + hidden * experts + experts
    dense = gated_mlp(hidden, inter)
    kinds = mlp_layer_types(f, n, dense_first(min(3, n)))
    return moe_stack(embeddings(f, hidden, False) + hidden, attn + norms, kinds, moe, dense,
                     (experts - top_k) * per_expert)


def laguna_fields(f: Fields) -> tuple:
    """(hidden, heads, kv heads, head_dim, attention_bias, one gate per head, heads per layer, intermediate,
    moe intermediate, shared expert intermediate, experts, top-k) with LagunaConfig's defaults; read once for
    the counter below and the per-module table (weight_tables._laguna)."""
    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=48)
    gating = f.get("gating", default=True)
    inter = f.int("intermediate_size", default=8192)
    written_null = "shared_expert_intermediate_size" in f.raw and f.raw["shared_expert_intermediate_size"] is None
    return (hidden, heads, f.int("num_key_value_heads", default=8), _head_dim(f, hidden, heads, 128),
            f.flag("attention_bias"), gating is True or gating == "per-head",
            f.int_list("num_attention_heads_per_layer", minimum=1, maximum=100_000) or [], inter,
            f.int("moe_intermediate_size", default=512),
            inter if written_null else f.int("shared_expert_intermediate_size", default=512, minimum=0),
            f.int("num_experts", default=256, minimum=0), f.int("num_experts_per_tok", default=8, minimum=0))


def laguna(f: Fields, layers: list, dims) -> tuple[int, int]:
    """LagunaForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default False). Each
    LagunaDecoderLayer: LagunaAttention with num_attention_heads_per_layer[i] query heads (default
    num_attention_heads): q_proj/o_proj of those heads, k/v_proj of num_key_value_heads (attention_bias on
    all four), q_norm/k_norm over head_dim, g_proj (no bias) to one gate per head when gating is True or
    "per-head", else to heads x head_dim; two RMSNorms; mlp_layer_types[i] == "sparse" (default: layer 0
    dense, the rest sparse) holds LagunaSparseMoeBlock: LagunaExperts (no biases), gate (LagunaTopKRouter
    weight num_experts x hidden, e_score_correction_bias of num_experts, a parameter), shared_experts
    LagunaMLP of shared_expert_intermediate_size (null: intermediate_size); else a LagunaMLP of
    intermediate_size."""
    n = len(layers)
    hidden, heads, kv, hd, bias, per_head, per_layer, inter, moe_inter, shared_inter, experts, top_k = (
        laguna_fields(f))
    per_expert = 3 * hidden * moe_inter
    moe = experts * per_expert + hidden * experts + experts + gated_mlp(hidden, shared_inter)
    dense = gated_mlp(hidden, inter)
    kinds = mlp_layer_types(f, n, dense_first(1))
    total = embeddings(f, hidden, False) + hidden
    active = total
    for i, kind in enumerate(kinds):
        h = per_layer[i] if i < len(per_layer) else heads
        block = _attn(hidden, h, kv, hd, bias) + 2 * hd + hidden * (h if per_head else h * hd) + 2 * hidden
        if kind == "sparse":
            total += block + moe
            active += block + moe - (experts - top_k) * per_expert
        else:
            total += block + dense
            active += block + dense
    return total, active


def jetmoe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """JetMoeForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default True). Each
    JetMoeDecoderLayer: two RMSNorms; self_attention JetMoeAttention: kv_proj (hidden -> 2 x kv_channels x
    num_key_value_heads, no bias) and experts JetMoeMoA (bias of hidden, input_linear num_local_experts x
    hidden -> kv_channels x num_key_value_heads, output_linear back, router.layer hidden -> num_local_experts);
    mlp JetMoeMoE (bias of hidden, input_linear num_local_experts x hidden -> 2 x intermediate_size,
    output_linear intermediate_size -> hidden, router.layer hidden -> num_local_experts). Active drops the
    unused attention experts as well as the unused MLP experts."""
    n = len(layers)
    hidden = f.int("hidden_size", default=2048)
    kvh = f.int("num_key_value_heads", default=16)
    kv_ch = f.int("kv_channels", "head_dim", default=128)
    inter = f.int("intermediate_size", default=5632)
    experts = f.int("num_local_experts", default=8, minimum=0)
    top_k = f.int("num_experts_per_tok", default=2, minimum=0)
    proj = kv_ch * kvh
    attn_expert = 2 * hidden * proj
    mlp_expert = 3 * hidden * inter
    attn = hidden + experts * attn_expert + hidden * experts + hidden * 2 * proj
    mlp = hidden + experts * mlp_expert + hidden * experts
    block = attn + mlp + 2 * hidden
    total = embeddings(f, hidden, True) + hidden + n * block
    active = total - n * (experts - top_k) * (attn_expert + mlp_expert)
    return total, active


def exaone_moe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """ExaoneMoeForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default False). Each
    ExaoneMoeDecoderLayer: ExaoneMoeAttention (q/k/v/o_proj without bias, head_dim = config head_dim else
    hidden // heads, q_norm/k_norm over head_dim), two RMSNorms; mlp_layer_types[i] == "sparse" (default:
    the first first_k_dense_replace (1) dense) holds ExaoneMoeSparseMoEBlock: ExaoneMoeExperts (no biases),
    gate (ExaoneMoeTopkRouter weight num_experts x hidden, e_score_correction_bias buffer of num_experts),
    shared_experts ExaoneMoeMLP of moe_intermediate_size x num_shared_experts; else an ExaoneMoeMLP of
    intermediate_size. (The MTP layers of the checkpoints are not built by transformers.)"""
    n = len(layers)
    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=32)
    hd = _head_dim(f, hidden, heads, None)
    attn = _attn(hidden, heads, kv, hd) + 2 * hd
    inter = f.int("intermediate_size", default=16384)
    moe_inter = f.int("moe_intermediate_size", default=1024)
    experts = f.int("num_experts", default=64, minimum=0)
    top_k = f.int("num_experts_per_tok", default=8, minimum=0)
    shared = f.int("num_shared_experts", default=1, minimum=0)
    first_dense = f.int("first_k_dense_replace", default=1, minimum=0)
    per_expert = 3 * hidden * moe_inter
    moe = experts * per_expert + hidden * experts + experts + gated_mlp(hidden, moe_inter * shared)
    dense = gated_mlp(hidden, inter)
    kinds = mlp_layer_types(f, n, dense_first(first_dense))
    return moe_stack(embeddings(f, hidden, False) + hidden, attn + 2 * hidden, kinds, moe, dense,
                     (experts - top_k) * per_expert)


def aria_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """AriaTextForCausalLM: embed_tokens, norm, lm_head (tie_word_embeddings, default False). Every
    AriaTextDecoderLayer: AriaTextAttention (q/k/v/o_proj with attention_bias, head_dim = config head_dim
    else hidden // heads, no q/k norm), two RMSNorms, AriaTextMoELayer: router (AriaTextTopKRouter weight
    moe_num_experts x hidden), AriaExperts (moe_num_experts of intermediate_size, no biases), shared_experts
    AriaSharedExpertsMLP of intermediate_size x moe_num_shared_experts (biases with mlp_bias). The vision
    tower and projector of the aria wrapper are not counted."""
    n = len(layers)
    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=heads)
    hd = _head_dim(f, hidden, heads, None)
    attn = _attn(hidden, heads, kv, hd, f.flag("attention_bias"))
    inter = f.int("intermediate_size", default=4096)
    experts = f.int("moe_num_experts", default=8, minimum=0)
    top_k = f.int("moe_topk", default=2, minimum=0)
    shared = f.int("moe_num_shared_experts", default=2, minimum=0)
    per_expert = 3 * hidden * inter
    block = attn + 2 * hidden + hidden * experts + experts * per_expert + gated_mlp(hidden, inter * shared,
                                                                                 f.flag("mlp_bias"))
    total = embeddings(f, hidden, False) + hidden + n * block
    active = total - n * (experts - top_k) * per_expert
    return total, active


def dots1(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Dots1ForCausalLM (dots.llm1; transformers 5.25 modeling_dots1.py): embed_tokens, norm, lm_head
    (tie_word_embeddings, default False). Each Dots1DecoderLayer: Dots1Attention (q/k/v/o_proj, all four biased
    with attention_bias; q_norm and k_norm over head_dim), two RMSNorms; below first_k_dense_replace (default 0) a
    Dots1MLP of intermediate_size, else Dots1MoE: gate (Dots1TopkRouter, weight n_routed_experts x hidden, and its
    e_score_correction_bias buffer of n_routed_experts, which the checkpoints hold), Dots1Experts of
    moe_intermediate_size, shared_experts a Dots1MLP of moe_intermediate_size x n_shared_experts. vLLM's dots1.py
    (last served in 0.23.0: 0.34 registry.py _PREVIOUSLY_SUPPORTED_MODELS) builds the same modules, the bias only for
    topk_method noaux_tc (not counted where a config names another), and every layer dense without
    n_routed_experts; a moe_layer_freq other than 1, which vLLM reads and transformers does not, is refused."""
    from ..errors import ConfigError

    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size")
    if f.int("moe_layer_freq", default=1) != 1:
        raise ConfigError(f"{f.source}: moe_layer_freq {f.int('moe_layer_freq')}: vLLM's dots1.py places MoE "
                          "layers by it and transformers' Dots1DecoderLayer does not (model_type 'dots1')",
                          "give --weights")
    attn = _attn(hidden, heads, kv, hd, f.flag("attention_bias")) + 2 * hd + 2 * hidden
    dense = gated_mlp(hidden, f.int("intermediate_size", default=10944))
    experts = f.opt_int("n_routed_experts")
    n = len(layers)
    if not experts:
        total = embeddings(f, hidden, False) + hidden + n * (attn + dense)
        return total, total
    moe_inter = f.int("moe_intermediate_size", default=1408)
    top_k = f.int("num_experts_per_tok", default=2)
    bias = 0 if f.get("topk_method", default="noaux_tc") != "noaux_tc" else experts
    moe = (experts * 3 * hidden * moe_inter + hidden * experts + bias
           + gated_mlp(hidden, moe_inter * f.int("n_shared_experts", default=0, minimum=0)))
    kinds = [dense_first(f.int("first_k_dense_replace", default=0, minimum=0))(i) for i in range(n)]
    return moe_stack(embeddings(f, hidden, False) + hidden, attn, kinds, moe, dense,
                     (experts - top_k) * 3 * hidden * moe_inter)


def olmoe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """OlmoeForCausalLM (transformers 5.25 modeling_olmoe.py): embed_tokens, norm, lm_head (tie_word_embeddings,
    default False). Each OlmoeDecoderLayer: OlmoeAttention (q/k/v/o_proj, all four biased with attention_bias;
    q_norm an RMSNorm over hidden_size, k_norm over hidden_size // heads x KV heads: the whole projections, not
    one head), two RMSNorms, OlmoeSparseMoeBlock: gate (OlmoeTopKRouter, weight num_experts x hidden) and
    OlmoeExperts of intermediate_size (no biases). Defaults: OlmoeConfig's."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=2048)
    experts = f.int("num_experts", default=64)
    top_k = f.int("num_experts_per_tok", default=8)
    per_expert = 3 * hidden * f.int("intermediate_size", default=2048)
    block = (_attn(hidden, heads, kv, hd, f.flag("attention_bias")) + hidden + hidden // heads * kv + 2 * hidden
             + hidden * experts + experts * per_expert)
    total = embeddings(f, hidden, False, 50304) + hidden + len(layers) * block
    return total, total - len(layers) * (experts - top_k) * per_expert


def phimoe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """PhimoeForCausalLM (Phi-3.5-MoE; transformers 5.25 modeling_phimoe.py): embed_tokens, norm (an nn.LayerNorm:
    weight and bias), lm_head (tie_word_embeddings, default False; a bias with lm_head_bias). Each
    PhimoeDecoderLayer: PhimoeAttention (q/k/v/o_proj, all four biased with attention_bias), input_layernorm and
    post_attention_layernorm (nn.LayerNorm: weight and bias each), PhimoeSparseMoeBlock: router
    (PhimoeTopKRouter, an nn.Linear num_local_experts x hidden without bias) and PhimoeExperts of
    intermediate_size (no biases). Defaults: PhimoeConfig's."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=4096)
    experts = f.int("num_local_experts", default=16)
    top_k = f.int("num_experts_per_tok", default=2)
    per_expert = 3 * hidden * f.int("intermediate_size", default=6400)
    block = (_attn(hidden, heads, kv, hd, f.flag("attention_bias")) + 4 * hidden + hidden * experts
             + experts * per_expert)
    total = (embeddings(f, hidden, False, 32064, head_bias=f.flag("lm_head_bias")) + 2 * hidden
             + len(layers) * block)
    return total, total - len(layers) * (experts - top_k) * per_expert


def granitemoe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """GraniteMoeForCausalLM, GraniteMoeSharedForCausalLM and GraniteMoeSWAForCausalLM (transformers 5.25
    modeling_granitemoe.py, modeling_granitemoeshared.py, modeling_granitemoe_swa.py): embed_tokens, norm, lm_head
    (tie_word_embeddings, default False). Each decoder layer: q/k/v/o_proj (all four biased with attention_bias),
    GraniteMoe-SWA's sinks (one a query head, on every layer), two RMSNorms, block_sparse_moe: router
    (weight num_local_experts x hidden) and the experts of intermediate_size (no biases); GraniteMoe-Shared's and
    -SWA's shared_mlp (input_linear hidden -> 2 x shared_intermediate_size, output_linear back, no biases) where
    shared_intermediate_size is not 0 (GraniteMoeConfig has no shared MLP). Defaults: the config classes'."""
    heads, kv, hd = dims[:3]
    mt = f.model_type
    hidden = f.int("hidden_size", default=4096)
    experts = f.int("num_local_experts", default=8)
    top_k = f.int("num_experts_per_tok", default=2)
    per_expert = 3 * hidden * f.int("intermediate_size", default=11008)
    shared = 0 if mt == "granitemoe" else f.int("shared_intermediate_size", default=0, minimum=0)
    block = (_attn(hidden, heads, kv, hd, f.flag("attention_bias")) + (heads if mt == "granitemoe_swa" else 0)
             + 2 * hidden + hidden * experts + experts * per_expert + 3 * hidden * shared)
    total = embeddings(f, hidden, False, 32000) + hidden + len(layers) * block
    return total, total - len(layers) * (experts - top_k) * per_expert


def solar_open(f: Fields, layers: list, dims) -> tuple[int, int]:
    """SolarOpenForCausalLM (Solar Open; transformers 5.25 modeling_solar_open.py): embed_tokens, norm, lm_head
    (tie_word_embeddings, default False). Every SolarOpenDecoderLayer: SolarOpenAttention (q/k/v_proj biased with
    attention_bias, o_proj never), two RMSNorms, SolarOpenMoE: gate (SolarOpenTopkRouter, weight n_routed_experts x
    hidden, and its e_score_correction_bias buffer), SolarOpenExperts of moe_intermediate_size, shared_experts a
    SolarOpenMLP of moe_intermediate_size x n_shared_experts. Defaults: SolarOpenConfig's."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=4096)
    experts = f.int("n_routed_experts", "num_local_experts", default=128)
    top_k = f.int("num_experts_per_tok", default=8)
    moe_inter = f.int("moe_intermediate_size", default=1280)
    per_expert = 3 * hidden * moe_inter
    block = (_attn(hidden, heads, kv, hd, f.flag("attention_bias"), o_bias=False) + 2 * hidden
             + experts * per_expert + hidden * experts + experts
             + gated_mlp(hidden, moe_inter * f.int("n_shared_experts", default=1, minimum=0)))
    total = embeddings(f, hidden, False, 196608) + hidden + len(layers) * block
    return total, total - len(layers) * (experts - top_k) * per_expert


def cohere2_moe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Cohere2MoeForCausalLM (transformers 5.25 modeling_cohere2_moe.py): embed_tokens, norm, lm_head (tied by
    default: Cohere2MoeConfig). Each Cohere2MoeDecoderLayer is a parallel block: Cohere2MoeAttention (q/k/v/o_proj,
    all four biased with attention_bias) and one input_layernorm (an RMSNorm with rms_norm_eps, else a bias-free
    LayerNorm: a weight of hidden either way); by mlp_layer_types (else the first first_k_dense_replace, default 0,
    dense) a Cohere2MoeMLP of prefix_dense_intermediate_size (None: intermediate_size), or Cohere2MoeSparseMoeBlock:
    gate (weight num_experts x hidden), Cohere2MoeExperts of intermediate_size, shared_experts of intermediate_size x
    num_shared_experts when that is above 0. Defaults: Cohere2MoeConfig's."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=8192)
    inter = f.int("intermediate_size", default=22528)
    experts = f.int("num_experts", default=8, minimum=0)
    top_k = f.int("num_experts_per_tok", default=2, minimum=0)
    per_expert = 3 * hidden * inter
    moe = hidden * experts + experts * per_expert + gated_mlp(hidden, inter * f.int("num_shared_experts", default=0,
                                                                                    minimum=0))
    dense = gated_mlp(hidden, f.opt_int("prefix_dense_intermediate_size") or inter)
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=0, minimum=0)))
    return moe_stack(embeddings(f, hidden, True, 256000) + hidden,
                     _attn(hidden, heads, kv, hd, f.flag("attention_bias")) + hidden, kinds, moe, dense,
                     (experts - top_k) * per_expert)


def flex_olmo(f: Fields, layers: list, dims) -> tuple[int, int]:
    """FlexOlmoForCausalLM (FlexOlmo; transformers 5.25 modeling_flex_olmo.py): embed_tokens, norm, lm_head
    (tie_word_embeddings, default False). Each FlexOlmoDecoderLayer: FlexOlmoAttention (q/k/v/o_proj, all four
    biased with attention_bias; q_norm an RMSNorm over heads x head_dim, k_norm over KV heads x head_dim),
    post_attention_layernorm and post_feedforward_layernorm, FlexOlmoSparseMoeBlock: gate (weight num_experts x
    hidden) and FlexOlmoExperts of intermediate_size (no biases). Defaults: FlexOlmoConfig's."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=4096)
    experts = f.int("num_experts", default=7)
    top_k = f.int("num_experts_per_tok", default=5)
    per_expert = 3 * hidden * f.int("intermediate_size", default=11008)
    block = (_attn(hidden, heads, kv, hd, f.flag("attention_bias")) + (heads + kv) * hd + 2 * hidden
             + hidden * experts + experts * per_expert)
    total = embeddings(f, hidden, False, 100352) + hidden + len(layers) * block
    return total, total - len(layers) * (experts - top_k) * per_expert


def mellum(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MellumForCausalLM (transformers 5.25 modeling_mellum.py): embed_tokens, norm, lm_head (tie_word_embeddings,
    default False). Each MellumDecoderLayer: MellumAttention (q/k/v/o_proj, all four biased with attention_bias;
    q_norm and k_norm over head_dim), two RMSNorms; by mlp_layer_types (else every layer sparse) a
    MellumSparseMoeBlock (gate: weight num_experts x hidden; MellumExperts of moe_intermediate_size) or a MellumMLP
    of intermediate_size. Defaults: MellumConfig's."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=2304)
    experts = f.int("num_experts", "num_local_experts", default=64, minimum=0)
    top_k = f.int("num_experts_per_tok", default=8, minimum=0)
    per_expert = 3 * hidden * f.int("moe_intermediate_size", default=896)
    kinds = mlp_layer_types(f, len(layers), lambda i: "sparse")
    return moe_stack(embeddings(f, hidden, False, 98304) + hidden,
                     _attn(hidden, heads, kv, hd, f.flag("attention_bias")) + 2 * hd + 2 * hidden, kinds,
                     hidden * experts + experts * per_expert,
                     gated_mlp(hidden, f.int("intermediate_size", default=7168)),
                     (experts - top_k) * per_expert)


def kolibri1(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Kolibri1ForCausalLM (transformers 5.25 modeling_kolibri1.py): embed_tokens, norm, lm_head
    (tie_word_embeddings, default False). Each Kolibri1DecoderLayer: Kolibri1Attention (q/k/v/o_proj without
    biases; q_norm and k_norm over head_dim), input_layernorm, post_attention_layernorm, post_self_attn_layernorm
    and post_mlp_layernorm, Kolibri1SparseMoeBlock on every layer: gate (weight num_experts x hidden, and its
    e_score_correction_bias buffer), Kolibri1Experts of moe_intermediate_size, shared_experts a Kolibri1MLP of
    shared_expert_intermediate_size (no gate). Defaults: Kolibri1Config's."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=2560)
    experts = f.int("num_experts", "num_local_experts", default=384)
    top_k = f.int("num_experts_per_tok", default=6)
    per_expert = 3 * hidden * f.int("moe_intermediate_size", default=512)
    block = (_attn(hidden, heads, kv, hd) + 2 * hd + 4 * hidden + hidden * experts + experts + experts * per_expert
             + gated_mlp(hidden, f.int("shared_expert_intermediate_size", default=512, minimum=0)))
    total = embeddings(f, hidden, False, 128000) + hidden + len(layers) * block
    return total, total - len(layers) * (experts - top_k) * per_expert


COUNTERS = {
    "kolibri1": kolibri1,
    "mellum": mellum,
    "flex_olmo": flex_olmo,
    "cohere2_moe": cohere2_moe,
    "solar_open": solar_open,
    "olmoe": olmoe,
    "phimoe": phimoe,
    **dict.fromkeys(("granitemoe", "granitemoeshared", "granitemoe_swa"), granitemoe),
    "dots1": dots1,
    "afmoe": afmoe,
    "ernie4_5_moe": ernie4_5_moe,
    "hunyuan_v1_moe": hunyuan_v1_moe,
    "hy_v3": hy_v3,
    "flint": flint,
    "beam": beam,
    "laguna": laguna,
    "jetmoe": jetmoe,
    "exaone_moe": exaone_moe,
    "aria_text": aria_text,
}


def _pair(f: Fields, name: str, default: tuple[int, int]) -> tuple[int, int]:
    """A [text, vision] pair of ERNIE-4.5-VL's config (an int stands for both)."""
    value = f.get(name)
    if value is None:
        return default
    if isinstance(value, list):
        if len(value) != 2:
            raise ConfigError(f"{f.source}: '{name}' lists {len(value)} entries, not [text, vision] "
                              f"(model_type {f.model_type!r})")
        return f.check_int(f"{name}[0]", value[0]), f.check_int(f"{name}[1]", value[1])
    one = f.int(name)
    return one, one


def ernie4_5_vl_fields(f: Fields, n: int) -> dict:
    """ERNIE-4.5-VL's text model as transformers 5.25 (modeling_ernie4_5_vl_moe.py) and vLLM 0.34
    (ernie45_vl_moe.py) read it: hidden, heads, KV heads, head_dim, use_bias, intermediate_size, the routed experts
    a modality (moe_num_experts, [text, vision] in Baidu's configs: vLLM asserts both equal), their widths
    moe_intermediate_size [text, vision] (Ernie4_5_VLMoeTextConfig's default [1536, 512]), the shared experts
    (moe_num_shared_experts x the text width), the MoE's top-k, and each layer's MLP kind: mlp_layer_types, else
    Baidu's moe_layer_start_index / moe_layer_end_index / moe_layer_interval as vLLM's Ernie4_5_VLMoeDecoderLayer
    reads them (a MoE layer when (i + 1) % interval == 0 and min(start) <= i <= max(end)), else transformers' default
    (layer 0 dense, the rest sparse). Ernie4_5_VLMoeMoeBlock builds both modalities' experts on every MoE layer
    (vLLM builds each where its own start / end range holds the layer: a config whose ranges differ gets the
    transformers reading)."""
    hidden = f.int("hidden_size", default=2560)
    heads = f.int("num_attention_heads", default=20)
    text_experts, vision_experts = _pair(f, "moe_num_experts", (64, 64))
    if text_experts != vision_experts:
        raise ConfigError(f"{f.source}: moe_num_experts differs between text and vision experts, which neither "
                          f"transformers nor vLLM builds (model_type {f.model_type!r})")
    kinds = f.list("mlp_layer_types")
    if kinds is None and f.has("moe_layer_start_index"):
        starts = _pair(f, "moe_layer_start_index", (1, 1))
        ends = _pair(f, "moe_layer_end_index", (n - 1, n - 1))
        interval = f.int("moe_layer_interval", default=1)
        kinds = ["sparse" if (i + 1) % interval == 0 and min(starts) <= i <= max(ends) else "dense"
                 for i in range(n)]
    else:
        kinds = mlp_layer_types(f, n, dense_first(1))
    return {"hidden": hidden, "heads": heads, "kv": f.int("num_key_value_heads", default=4),
            "head_dim": _head_dim(f, hidden, heads, None), "bias": f.flag("use_bias"),
            "inter": f.int("intermediate_size", default=12288), "experts": text_experts,
            "widths": _pair(f, "moe_intermediate_size", (1536, 512)),
            "shared": f.int("moe_num_shared_experts", default=2, minimum=0),
            "top_k": f.int("moe_k", "num_experts_per_tok", default=6, minimum=0), "kinds": kinds}


def ernie4_5_vl_moe_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """ERNIE-4.5-VL's text model (transformers 5.25 modeling_ernie4_5_vl_moe.py Ernie4_5_VLMoeTextModel, and the
    wrapper's lm_head: no bias, tied by default): embed_tokens, norm; per layer q/k/v/o_proj (biases with
    use_bias), two RMSNorms; on MoE layers (ernie4_5_vl_fields) Ernie4_5_VLMoeMoeBlock: a text and a vision
    Ernie4_5_VLMoeSparseMoeBlock, each a router (num_experts x hidden) with its moe_statics.e_score_correction_bias
    (num_experts, a parameter) and num_experts experts (no biases) of its own width, and the shared experts
    (Ernie4_5_VLMoeMLP of moe_num_shared_experts x the text width, biases with use_bias); elsewhere an
    Ernie4_5_VLMoeMLP of intermediate_size. Active: the top-k of one modality's experts (a text token's; an image
    token's use the vision experts, narrower in Baidu's configs)."""
    e = ernie4_5_vl_fields(f, len(layers))
    hidden, experts, (text_width, vision_width) = e["hidden"], e["experts"], e["widths"]
    attn = _attn(hidden, e["heads"], e["kv"], e["head_dim"], e["bias"])
    moe = 2 * (hidden * experts + experts) + experts * 3 * hidden * (text_width + vision_width)
    if e["shared"] > 0:
        moe += gated_mlp(hidden, text_width * e["shared"], e["bias"])
    idle = (experts - e["top_k"]) * 3 * hidden * text_width + experts * 3 * hidden * vision_width
    return moe_stack(embeddings(f, hidden, True) + hidden, attn + 2 * hidden, e["kinds"], moe,
                     gated_mlp(hidden, e["inter"], e["bias"]), idle)


COUNTERS["ernie4_5_vl_moe_text"] = ernie4_5_vl_moe_text  # configs/weight_tables/vl_more.py
