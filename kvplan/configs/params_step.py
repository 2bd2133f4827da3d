"""Parameter counters of StepFun's text models: Step-3.5 / Step-3.7's text model (model_type step3p5), which the
generic attention counter (params_generic.count_params) miscounted, and Step-5 (step5, vLLM's own config type), which
had no counter.

Read from transformers 5.25 models/step3p7 (configuration_step3p7.py Step3p7TextConfig, modeling_step3p7.py
Step3p7TextModel / Step3p7DecoderLayer / Step3p7Attention / Step3p7SparseMoeBlock / Step3p7MLP) and vLLM 0.34
model_executor/models/step3p5.py (Step3p5Model, Step3p5DecoderLayer, Step3p5Attention, FusedMoEBlock,
Step3p5MLP). The per-module table that mirrors it is configs/weight_tables/step_more.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from .fields import Fields
from .param_parts import embeddings, gated_mlp, mlp_layer_types


@dataclass(frozen=True)
class Step3p5Layer:
    heads: int  # query heads (sliding layers: num_sliding_attention_heads, or per_layer_config's)
    kv: int
    head_dim: int
    gate_outputs: int  # g_proj's outputs (0: no g_proj)
    sparse: bool  # a MoE layer (else a dense MLP of intermediate_size)


@dataclass(frozen=True)
class Step3p5Fields:
    hidden: int
    attention_bias: bool
    mlp_bias: bool
    inter: int
    moe_inter: int
    shared_inter: int
    experts: int
    top_k: int
    layers: tuple[Step3p5Layer, ...]


def _moe_layers(f: Fields, n: int) -> list[bool]:
    """Step3p7TextConfig.__post_init__: mlp_layer_types (a legacy list of num_hidden_layers + MTP entries is cut
    to the first num_hidden_layers); absent, moe_layers_enum (a comma-separated string or a list of indices);
    absent too, layers 3 to n - 1 are sparse. vLLM 0.34 step3p5.py _is_moe_layer reads the same list of the
    transformers config it loads (transformers_utils/config.py: step3p5 -> Step3p7TextConfig)."""
    enum = f.get("moe_layers_enum")
    chosen: set | None = None
    if enum is not None:
        items = enum.split(",") if isinstance(enum, str) else enum if isinstance(enum, list) else None
        try:
            chosen = {int(i) for i in items if str(i).strip()} if items is not None else None
        except (TypeError, ValueError):
            chosen = None
    if enum is not None and chosen is None and f.get("mlp_layer_types") is None:
        raise ConfigError(f"{f.source}: moe_layers_enum must list layer indices (\"3,4,5\") (model_type "
                          f"{f.model_type!r})", "fix the config or pass --set mlp_layer_types=[...]")
    def rule(i: int) -> str:
        return "sparse" if (i >= 3 if chosen is None else i in chosen) else "dense"

    return [kind == "sparse" for kind in mlp_layer_types(f, n, rule)]


def _per_layer(f: Fields, i: int) -> dict:
    table = f.obj("per_layer_config") or {}
    entry = table.get(str(i), table.get(i)) if isinstance(table, dict) else None
    return entry if isinstance(entry, dict) else {}


def step3p5_fields(f: Fields, n: int) -> Step3p5Fields:
    """The fields both the counter and the table read, with Step3p7TextConfig's defaults. A layer's query heads:
    per_layer_config[i].num_attention_heads where the config carries a per_layer_config (transformers builds
    each Step3p7Attention from config.per_layer_config[i]); else, on a sliding_attention layer,
    num_sliding_attention_heads, or the legacy attention_other_setting's num_attention_heads (what
    Step3p7TextConfig.__post_init__ turns into that per_layer_config, and what vLLM 0.34 step3p5.py
    _get_num_attention_heads reads); else num_attention_heads. per_layer_config may change a layer's
    num_key_value_heads and head_dim as well (configs/markers.py per_layer_config_dims reads them for the cache)."""
    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=64)
    kv = f.int("num_key_value_heads", "num_attention_groups", default=8)
    head_dim = f.int("head_dim", default=128)
    sliding_heads = f.int("num_sliding_attention_heads", default=0, minimum=0)
    if not sliding_heads:
        other = f.obj("attention_other_setting") or {}
        sliding_heads = f.check_int("attention_other_setting.num_attention_heads",
                                    other.get("num_attention_heads", heads))
    types = f.get("layer_types")
    types = types[:n] if isinstance(types, list) else []
    types = types + ["full_attention"] * (n - len(types))
    has_table = f.obj("per_layer_config") is not None
    # Step3p7Attention: g_proj to one gate a head (gating True or "per-head", the class's default) or to heads x
    # head_dim; vLLM 0.34 Step3p5Attention builds g_proj (one gate a head) only where use_head_wise_attn_gate is
    # set, which every released Step-3.5 / 3.7 config sets: a config that writes it false has no g_proj
    gating = f.get("gating", default=True)
    gate_per_head = gating is True or gating == "per-head"
    gated = f.get("use_head_wise_attn_gate", default=True) is not False
    moe = _moe_layers(f, n)
    layers = []
    for i in range(n):
        own = _per_layer(f, i)
        if has_table:
            h = f.check_int(f"per_layer_config.{i}.num_attention_heads", own.get("num_attention_heads", heads))
        else:
            h = sliding_heads if types[i] == "sliding_attention" else heads
        k = f.check_int(f"per_layer_config.{i}.num_key_value_heads", own.get("num_key_value_heads", kv))
        d = f.check_int(f"per_layer_config.{i}.head_dim", own.get("head_dim", head_dim))
        layers.append(Step3p5Layer(h, k, d, (h if gate_per_head else h * d) if gated else 0, moe[i]))
    return Step3p5Fields(hidden, f.flag("attention_bias"), f.flag("mlp_bias"), f.int("intermediate_size", default=11264),
                         f.int("moe_intermediate_size", default=1280),
                         f.int("share_expert_dim", "share_expert_dims", default=1280, minimum=0),
                         f.int("n_routed_experts", "moe_num_experts", default=288),
                         f.int("num_experts_per_tok", "moe_top_k", default=8), tuple(layers))


def step3p5(f: Fields, layers: list, dims) -> tuple[int, int]:
    """(total, active) parameters of Step-3.5's text model (transformers 5.25 Step3p7TextModel with its LM head):
    embed_tokens, norm, lm_head (tie_word_embeddings, default False); per layer Step3p7Attention: q_proj / o_proj
    of the layer's query heads x head_dim, k_proj / v_proj of its KV heads (attention_bias on all four),
    q_norm / k_norm over head_dim, g_proj (no bias); input_layernorm and post_attention_layernorm; a sparse
    layer's Step3p7SparseMoeBlock: the routed experts (gate_up_proj and down_proj of moe_intermediate_size, no
    biases), the router (Step3p7TopKRouter: weight n_routed_experts x hidden and e_score_correction_bias of
    n_routed_experts, the checkpoints' moe.router_bias) and the always-active shared expert (a Step3p7MLP of
    share_expert_dim); a dense layer's Step3p7MLP of intermediate_size (mlp_bias on the MLPs). Active: top-k
    routed experts. The trailing MTP layers (num_nextn_predict_layers) are not counted."""
    s = step3p5_fields(f, len(layers))
    hidden = s.hidden
    total = active = embeddings(f, hidden, False, 128815) + hidden
    shared = gated_mlp(hidden, s.shared_inter, s.mlp_bias)
    per_expert = 3 * hidden * s.moe_inter
    for layer in s.layers:
        q, kv = layer.heads * layer.head_dim, layer.kv * layer.head_dim
        attn = 2 * hidden * q + 2 * hidden * kv + 2 * layer.head_dim + hidden * layer.gate_outputs
        if s.attention_bias:
            attn += q + 2 * kv + hidden
        norms = 2 * hidden
        if layer.sparse:
            router = hidden * s.experts + s.experts
            total += attn + norms + s.experts * per_expert + router + shared
            active += attn + norms + min(s.top_k, s.experts) * per_expert + router + shared
        else:
            dense = gated_mlp(hidden, s.inter, s.mlp_bias)
            total += attn + norms + dense
            active += attn + norms + dense
    return total, active


@dataclass(frozen=True)
class Step5Fields:
    hidden: int
    kv: int
    head_dim: int
    gated: bool
    moe_inter: int
    experts: int
    top_k: int
    shared: int
    inter: int
    proxy: int
    index_heads: int
    index_kv: int
    index_groups: int  # sparse_config.index_tp_size (the checkpoints' num_provider_groups), default 4
    layers: tuple[tuple[int, bool, bool], ...]  # (query heads, a DSA layer, a MoE layer)


def step5_fields(f: Fields, n: int) -> Step5Fields:
    """What the counter and the table read, with vLLM's Step5Config / Step5SparseConfig defaults."""
    hidden = f.int("hidden_size", default=5120)
    heads = f.int("num_attention_heads", default=40)
    swa_heads = f.int("swa_num_attention_heads", default=heads)
    gated = f.flag("use_head_wise_attn_gate")
    moe_inter, top_k = f.int("moe_intermediate_size", default=10240), f.int("moe_top_k", default=4)
    sparse = f.obj("sparse_config") or {}
    groups = sparse.get("index_tp_size", sparse.get("num_provider_groups", 4))
    applied = sparse.get("apply_to_layer_types", ["full_attention"])
    types = f.get("layer_types")
    types = types[:n] if isinstance(types, list) else ["sliding_attention" if i % 2 == 0 else "full_attention"
                                                        for i in range(n)]
    types = types + ["full_attention"] * (n - len(types))
    window = f.get("sliding_window") is not None
    moe = _step5_moe_layers(f, n)
    layers = []
    for i in range(n):
        sliding = types[i] == "sliding_attention" and window
        dsa = types[i] in applied and not sliding  # Step5Attention: DSA where sparse_config is given and no window
        if dsa and not gated:
            raise ConfigError(f"{f.source}: a Step-5 DSA layer needs use_head_wise_attn_gate (vLLM 0.34 "
                              f"Step5Attention refuses it otherwise) (model_type {f.model_type!r})")
        layers.append((swa_heads if sliding else heads, dsa, moe[i]))
    return Step5Fields(hidden, f.int("num_attention_groups", default=8),
                       f.int("head_dim", default=hidden // heads), gated, moe_inter,
                       f.int("moe_num_experts", default=16), top_k,
                       f.int("share_expert_dim", default=moe_inter * top_k, minimum=0),
                       f.int("intermediate_size", default=13312),
                       f.check_int("sparse_config.proxy_dim", sparse.get("proxy_dim", 256)),
                       f.check_int("sparse_config.sparse_indexer_num_heads", sparse.get("sparse_indexer_num_heads", 16)),
                       f.check_int("sparse_config.sparse_indexer_num_k_heads",
                                   sparse.get("sparse_indexer_num_k_heads", 1)),
                       f.check_int("sparse_config.index_tp_size", groups), tuple(layers))


def step5(f: Fields, layers: list, dims) -> tuple[int, int]:
    """(total, active) parameters of Step-5's text model as vLLM 0.34 builds it (models/step5/nvidia/model.py;
    transformers has no Step-5 model; the module shapes agree with a public study of the Step-5-Preview BF16
    checkpoint's safetensors headers, tests/test_tables_step_more.py), with vLLM's Step5Config defaults
    (transformers_utils/configs/step5.py):
    embed_tokens, norm, lm_head (tie_word_embeddings, default False); per layer Step5Attention: q_proj / o_proj of
    num_attention_heads (a sliding layer: swa_num_attention_heads where given) x head_dim (else hidden /
    heads), k_proj / v_proj of num_attention_groups, q_norm / k_norm of head_dim, g_proj (one gate a head) with
    use_head_wise_attn_gate; a full_attention layer (sparse_config.apply_to_layer_types) is a DSA layer, which
    adds the sparse indexer: sparse_indexer_q (hidden -> sparse_indexer_num_heads x proxy_dim), sparse_indexer_k
    and sparse_indexer_z (hidden -> sparse_indexer_num_k_heads x proxy_dim each), sparse_indexer_w (hidden ->
    sparse_indexer_num_heads), ssmax_s (one a head, registered though unused), sparse_indexer_q_norm (RMSNorm of
    proxy_dim) and sparse_indexer_k_norm (LayerNorm of proxy_dim with its bias); input_layernorm and
    post_attention_layernorm; a layer in moe_layers_enum (else moe_layer_list, else layers 1 to n - 1) holds
    Step5MoE: the router (GateLinear, moe_num_experts x hidden) and router_bias, the routed experts (gate, up,
    down of moe_intermediate_size) and share_expert (Step5MLP of share_expert_dim, default moe_intermediate_size
    x moe_top_k); else Step5MLP of intermediate_size. Active: moe_top_k routed experts. The trailing MTP layers
    are not counted. The Preview checkpoint stores its norms, sparse_indexer_w, ssmax_s and router_bias in
    float32 (norm_dtype "float32": 2,350,528 parameters), which a plan sizes at the model dtype like the rest
    (a few MB low); kvplan has no per-module table of Step-5 yet, so its weights split evenly over TP."""
    s = step5_fields(f, len(layers))
    hidden = s.hidden
    total = active = embeddings(f, hidden, False, 65536) + hidden
    per_expert = 3 * hidden * s.moe_inter
    for heads, dsa, moe in s.layers:
        attn = (2 * hidden * heads * s.head_dim + 2 * hidden * s.kv * s.head_dim + 2 * s.head_dim
                + (hidden * heads if s.gated else 0))
        if dsa:
            attn += (hidden * (s.index_heads + 2 * s.index_kv) * s.proxy + hidden * s.index_heads + heads
                     + 3 * s.proxy)
        base = attn + 2 * hidden
        if moe:
            router = hidden * s.experts + s.experts
            total += base + router + s.experts * per_expert + gated_mlp(hidden, s.shared)
            active += base + router + min(s.top_k, s.experts) * per_expert + gated_mlp(hidden, s.shared)
        else:
            total += base + gated_mlp(hidden, s.inter)
            active += base + gated_mlp(hidden, s.inter)
    return total, active


def _step5_moe_layers(f: Fields, n: int) -> list[bool]:
    """vLLM 0.34 step5/nvidia/model.py _get_step5_moe_layer_indices: moe_layers_enum, else moe_layer_list
    (comma-separated strings or lists of indices), else layers 1 to num_hidden_layers - 1."""
    for name in ("moe_layers_enum", "moe_layer_list"):
        value = f.get(name)
        if value is None:
            continue
        items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else None
        try:
            chosen = {int(i) for i in items if str(i).strip()} if items is not None else None
        except (TypeError, ValueError):
            chosen = None
        if chosen is None:
            raise ConfigError(f"{f.source}: {name} must list layer indices (\"1,2,3\") (model_type "
                              f"{f.model_type!r})")
        return [i in chosen for i in range(n)]
    return [i >= 1 for i in range(n)]
