"""Exact parameter counters for the "hybrid" group (transformers 5.23 modeling files).

Each counter is `count(f, layers, dims) -> (total, active)`: every parameter of the causal LM as
transformers builds it (text model + lm_head, tied once; no vision or audio tower), plus each MoE
router's `e_score_correction_bias` buffer; `active` drops (experts - top_k) routed experts per MoE layer.

Per-layer module choices follow `layers` (kvplan's LayerSpec list) where transformers picks the module by
the layer's attention kind: a layer with caches is an attention layer, one with only a state is a
linear/recurrent layer; a sliding window or an indexer cache marks the sliding / block-sparse variants.
Every default is transformers' own config default, since a saved config.json may leave a field out.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fields import Fields
from .param_parts import dense_first, embeddings, mlp_layer_types, moe_stack
from .params_kimi_k3 import kimi_k3_text, uses_k3_fields
from ..errors import ConfigError
from .zaya_layout import is_megatron


# -- small helpers ----------------------------------------------------------------------------------------

def _first_int(f: Fields, names: tuple, default, minimum: int = 1) -> int:
    """The first of `names` the config writes (a transformers attribute_map alias may be written instead)."""
    return f.int(*names, default=default, minimum=minimum)


def _nested_int(f: Fields, obj: str, key: str, fallback: int, minimum: int = 1) -> int:
    """`obj.key` when the config writes that sub-dict entry, else `fallback`."""
    nested = f.obj(obj) or {}
    if nested.get(key) is not None:
        return f.check_int(f"{obj}.{key}", nested[key], minimum=minimum)
    return fallback


def _string_list(f: Fields, name: str, n: int) -> list | None:
    values = f.list(name, n)
    if values is None:
        return None
    return [str(v) for v in values]


def _attention_layer(layer) -> bool:
    return bool(layer.caches)


def _sliding_layer(layer) -> bool:
    return any(c.policy.window_tokens is not None for c in layer.caches)


def _indexed_layer(layer) -> bool:
    return any(c.kind == "indexer" for c in layer.caches)






# -- Kimi-Linear ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LatentDeltaMoE:
    """The MLP side of Kimi Linear's and Bailing's stacks as _latent_and_delta_layers reads it."""
    experts: int
    top_k: int
    moe_inter: int
    shared: int  # shared experts
    shared_inter: int  # one shared expert's width
    inter: int  # the dense MLP's width
    kinds: list  # "sparse" / "dense" per layer


def latent_delta_moe(f: Fields, n: int, defaults: dict) -> LatentDeltaMoE:
    """defaults: the config class's experts, moe_intermediate_size, intermediate_size, first_k_dense_replace
    (and for Bailing shared_width, the names of its shared experts' width)."""
    names = ("num_experts", "num_local_experts", "n_routed_experts")
    if defaults["experts"] is None and not any(f.has(name) for name in names):
        # vLLM 0.33's KimiLinearConfig.is_moe: no num_experts, no MoE layer (every layer a dense MLP)
        return LatentDeltaMoE(experts=0, top_k=0, moe_inter=0, shared=0, shared_inter=0,
                              inter=f.int("intermediate_size", default=defaults["intermediate_size"]),
                              kinds=["dense"] * n)
    experts = _first_int(f, names, defaults["experts"])
    moe_inter = f.int("moe_intermediate_size", default=defaults["moe_intermediate_size"])
    first_dense = f.int("first_k_dense_replace", default=defaults["first_k_dense_replace"], minimum=0)
    return LatentDeltaMoE(
        experts=experts,
        top_k=_first_int(f, ("num_experts_per_token", "num_experts_per_tok"), 8),
        moe_inter=moe_inter,
        shared=_first_int(f, ("num_shared_experts", "n_shared_experts"), defaults.get("shared", 1), minimum=0),
        # the shared experts' width: moe_intermediate_size (transformers' DeepseekV3MoE), or for Bailing what
        # vLLM 0.33's BailingMoeV3MoE reads, moe_shared_expert_intermediate_size when the config gives it
        shared_inter=f.int(*defaults.get("shared_width", ()), "moe_intermediate_size", default=moe_inter),
        inter=f.int("intermediate_size", default=defaults["intermediate_size"]),
        kinds=mlp_layer_types(f, n, dense_first(first_dense)))


def _latent_and_delta_layers(f: Fields, layers: list, hidden: int, mla: int, kda: int, defaults: dict
                             ) -> tuple[int, int]:
    """(total, active) of Kimi Linear's and Bailing's stacks: MLA layers (those with a cache) and delta-attention
    layers, two RMSNorms each, a MoE (routed experts, router + e_score_correction_bias, shared experts) or a
    dense MLP by mlp_layer_types (else the first first_k_dense_replace dense), the untied head and a final norm.
    defaults: latent_delta_moe's, and the config class's vocab_size."""
    m = latent_delta_moe(f, len(layers), defaults)
    per_expert = 3 * hidden * m.moe_inter
    moe = m.experts * per_expert + m.experts * hidden + m.experts + 3 * hidden * m.shared_inter * m.shared
    return moe_stack(embeddings(f, hidden, False, defaults["vocab_size"], tieable=False) + hidden,
                     [(mla if _attention_layer(layer) else kda) + 2 * hidden for layer in layers], m.kinds, moe,
                     3 * hidden * m.inter, (m.experts - m.top_k) * per_expert)


def kda_params(hidden: int, heads: int, head_dim: int, kernel: int) -> int:
    """Kimi Delta Attention without the full-rank gate (transformers' KimiDeltaAttention, vLLM 0.33's
    KimiGatedDeltaNetAttention), P = heads x head_dim: q/k/v_proj (hidden -> P), the depthwise conv1d over 3P
    channels (no bias), the forget gate (f_a_proj hidden -> head_dim, f_b_proj head_dim -> P, dt_bias P, A_log per
    head), b_proj (hidden -> heads), g_a_proj (hidden -> head_dim), g_b_proj (head_dim -> P), o_norm (head_dim),
    o_proj (P -> hidden)."""
    p = heads * head_dim
    return (3 * hidden * p + 3 * p * kernel
            + hidden * head_dim + head_dim * p + p + heads  # forget gate: f_a, f_b, dt_bias, A_log
            + hidden * heads  # b_proj
            + hidden * head_dim + head_dim * p  # g_a, g_b
            + head_dim + p * hidden)  # o_norm, o_proj


@dataclass(frozen=True)
class KimiLinearFields:
    hidden: int
    bias: bool  # attention_bias: q_a_proj, kv_a_proj_with_mqa and o_proj biases
    heads: int
    q_lora: int | None
    rank: int  # kv_lora_rank
    rope: int
    nope: int
    v_dim: int
    lin_heads: int
    lin_dim: int
    kernel: int


# the MLP side's defaults of the KimiLinearConfig vLLM 0.33 loads kimi_linear configs with (its own class,
# vllm/transformers_utils/configs/kimi_linear.py, registered in transformers_utils/config.py _CONFIG_REGISTRY and
# so used instead of transformers' configuration_kimi_linear.py): num_experts None (no MoE layer: is_moe is false),
# num_shared_experts 0, first_k_dense_replace 0, intermediate_size 11008, vocab_size 163840. A config that gives
# num_experts but not moe_intermediate_size leaves vLLM None; kvplan keeps transformers' 1024 there.
KIMI_LINEAR_DEFAULTS = {"experts": None, "moe_intermediate_size": 1024, "intermediate_size": 11008,
                        "first_k_dense_replace": 0, "shared": 0, "vocab_size": 163840}


def kimi_linear_fields(f: Fields) -> KimiLinearFields:
    """The attention fields kimi_linear counts (KimiLinearConfig's defaults); KDA's heads / head_dim / kernel from
    linear_attn_config (num_heads, head_dim, short_conv_kernel_size), else linear_num_heads / linear_head_dim /
    linear_conv_kernel_dim."""
    return KimiLinearFields(
        hidden=f.int("hidden_size", default=2304),
        bias=f.flag("attention_bias"),
        heads=f.int("num_attention_heads", default=32),
        q_lora=f.opt_int("q_lora_rank"),
        rank=f.int("kv_lora_rank", default=512),
        rope=f.int("qk_rope_head_dim", default=64),
        nope=f.int("qk_nope_head_dim", default=128),
        v_dim=f.int("v_head_dim", default=128),
        lin_heads=_nested_int(f, "linear_attn_config", "num_heads", f.int("linear_num_heads", default=32)),
        lin_dim=_nested_int(f, "linear_attn_config", "head_dim", f.int("linear_head_dim", default=128)),
        kernel=_nested_int(f, "linear_attn_config", "short_conv_kernel_size",
                           f.int("linear_conv_kernel_dim", default=4)))


def kimi_linear(f: Fields, layers: list, dims) -> tuple[int, int]:
    """KimiLinearForCausalLM (modeling_kimi_linear.py): embed_tokens, final norm, untied lm_head
    (_tied_weights_keys is empty); per layer input/post-attention RMSNorms and
    - full-attention layers (those with a cache): KimiLinearAttention, MLA: q_proj (or q_a_proj [+bias],
      q_a_layernorm, q_b_proj when q_lora_rank), kv_a_proj_with_mqa [+bias], kv_a_layernorm, kv_b_proj,
      o_proj [+bias];
    - linear layers: KimiLinearDeltaAttention (kda_params) over kimi_linear_fields' heads, head_dim, kernel;
    - mlp_layer_types 'sparse' (else first_k_dense_replace dense layers, 1): KimiLinearMoE: experts
      (gate_up_proj, down_proj), router weight + e_score_correction_bias, shared_experts MLP of
      moe_intermediate_size x num_shared_experts; 'dense': KimiLinearMLP of intermediate_size.
    A config with Kimi K3's fields (latent MoE, MLA output gate, attention residuals, full-rank KDA gate), which
    transformers does not build, is counted as vLLM 0.33 builds it (params_kimi_k3)."""
    if uses_k3_fields(f):
        return kimi_k3_text(f, layers, dims)
    k = kimi_linear_fields(f)
    hidden, bias, heads, q_lora, rank, rope = k.hidden, k.bias, k.heads, k.q_lora, k.rank, k.rope
    qk = k.nope + rope
    if q_lora:
        q = hidden * q_lora + (q_lora if bias else 0) + q_lora + q_lora * heads * qk
    else:
        q = hidden * heads * qk
    mla = (q + hidden * (rank + rope) + (rank + rope if bias else 0) + rank + rank * heads * (k.nope + k.v_dim)
           + heads * k.v_dim * hidden + (hidden if bias else 0))
    kda = kda_params(hidden, k.lin_heads, k.lin_dim, k.kernel)
    return _latent_and_delta_layers(f, layers, hidden, mla, kda, KIMI_LINEAR_DEFAULTS)


# -- Bailing hybrid (Ling 3.0) ----------------------------------------------------------------------------

def bailing_hybrid_fields(f: Fields) -> tuple:
    """(hidden_size, attention_bias, heads, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim, q_lora_rank
    (None: no query LoRA, as DeepseekV3Attention / vLLM's BailingMoeV3MLAAttention), the output gate's width a token,
    linear heads, linear head width, linear conv kernel) as Ling 3.0's count below reads them (its per-module table,
    weight_tables/moe.py, reads them here too). The gate g_proj: hidden -> heads ("head_wise", BailingHybridConfig's
    default; vLLM's BailingMoeV3TextConfig for the VL model defaults to none), heads x v_head_dim ("element_wise"),
    none (null)."""
    heads, v_dim = f.int("num_attention_heads", default=32), f.int("v_head_dim", default=128)
    name = "gated_attention_proj_granularity_type"
    kind = f.raw[name] if name in f.raw else f.defaults.get(name, "head_wise")
    gate = {"head_wise": heads, "element_wise": heads * v_dim, None: 0}.get(kind, -1) \
        if isinstance(kind, (str, type(None))) else -1
    if gate < 0:
        raise ConfigError(f"{f.source}: gated_attention_proj_granularity_type must be 'head_wise', 'element_wise' "
                          f"or null, got {kind!r} (model_type {f.model_type!r})", "fix the config")
    return (f.int("hidden_size", default=2560), f.flag("attention_bias"), heads, f.int("kv_lora_rank", default=512),
            f.int("qk_rope_head_dim", default=64), f.int("qk_nope_head_dim", default=128), v_dim,
            f.opt_int("q_lora_rank"), gate, f.int("linear_num_heads", default=heads),
            f.int("linear_head_dim", "head_dim", default=128),
            f.int("linear_conv_kernel_dim", "short_conv_kernel_size", default=4))


def bailing_hybrid(f: Fields, layers: list, dims) -> tuple[int, int]:
    """BailingHybridForCausalLM (modeling_bailing_hybrid.py): embed_tokens, final norm, untied lm_head
    (_tied_weights_keys is empty; the MTP modules are not built); per layer two RMSNorms and
    - full-attention layers: BailingHybridAttention, MLA: q_proj (or q_a_proj [+bias], q_a_layernorm, q_b_proj
      with q_lora_rank), kv_a_proj_with_mqa [+bias], kv_a_layernorm, kv_b_proj, o_proj [+bias], and the output
      gate g_proj (hidden -> heads, head_wise; heads x v_head_dim, element_wise; none when null), as vLLM 0.33's
      BailingMoeV3MLAAttention builds them too;
    - linear layers: BailingHybridDeltaAttention: q/k/v_proj, depthwise conv1d (3 x heads x head_dim, no bias),
      forget_gate (A_log per head, dt_bias, f_proj hidden -> qkv), b_proj, o_norm (head_dim), o_proj, g_proj
      (hidden -> qkv); heads = linear_num_heads (else num_attention_heads), head_dim = linear_head_dim (else
      head_dim, 128), kernel = linear_conv_kernel_dim (else short_conv_kernel_size, 4);
    - mlp_layer_types 'sparse' (else the first first_k_dense_replace = 2 dense): experts (gate_up, down),
      router weight + e_score_correction_bias, shared_experts MLP (moe_shared_expert_intermediate_size, which
      vLLM 0.33's BailingMoeV3MoE reads, else moe_intermediate_size, x num_shared_experts); 'dense': MLP of
      intermediate_size."""
    hidden, bias, heads, rank, rope, nope, v_dim, q_lora, gate, lin_heads, lin_dim, kernel = bailing_hybrid_fields(f)
    q = (hidden * q_lora + (q_lora if bias else 0) + q_lora + q_lora * heads * (nope + rope)) if q_lora \
        else hidden * heads * (nope + rope)
    mla = (q + hidden * (rank + rope) + (rank + rope if bias else 0) + rank
           + rank * heads * (nope + v_dim) + heads * v_dim * hidden + (hidden if bias else 0) + hidden * gate)

    qkv = lin_heads * lin_dim
    kda = (3 * hidden * qkv + 3 * qkv * kernel
           + lin_heads + qkv + hidden * qkv  # forget gate: A_log, dt_bias, f_proj
           + hidden * lin_heads + lin_dim + qkv * hidden + hidden * qkv)  # b_proj, o_norm, o_proj, g_proj

    return _latent_and_delta_layers(f, layers, hidden, mla, kda, {
        "experts": 512, "moe_intermediate_size": 768, "intermediate_size": 6144, "first_k_dense_replace": 2,
        "vocab_size": 157184, "shared_width": ("moe_shared_expert_intermediate_size",)})


# -- Nemotron-H -------------------------------------------------------------------------------------------

_NEMOTRON_LETTERS = {"M": "linear_attention", "E": "moe", "*": "full_attention", "-": "mlp"}
_LEGACY_TYPES = {"mamba": "linear_attention", "attention": "full_attention"}


def _nemotron_blocks(f: Fields) -> list[str]:
    """NemotronHConfig: layers_block_type (alias layer_types; legacy names remapped), else
    hybrid_override_pattern, else the default four blocks."""
    for name in ("layers_block_type", "layer_types"):
        values = f.list(name)
        if values is not None:
            return [_LEGACY_TYPES.get(str(v), str(v)) for v in values]
    pattern = f.text("hybrid_override_pattern")
    if pattern is not None:
        try:
            return [_NEMOTRON_LETTERS[c] for c in pattern]
        except KeyError as exc:
            raise ConfigError(f"{f.source}: hybrid_override_pattern has {exc.args[0]!r}, not one of M E * -",
                              "fix the config's hybrid_override_pattern") from None
    return ["linear_attention", "moe", "full_attention", "mlp"]


def nemotron_blocks_of(f: Fields, n: int) -> list[str]:
    """The n layers' block types (_nemotron_blocks), refused where the config lists another number of blocks."""
    blocks = _nemotron_blocks(f)
    if len(blocks) != n:
        raise ConfigError(f"{f.source}: layers_block_type lists {len(blocks)} blocks for {n} layers "
                          f"(model_type {f.model_type!r})", "fix the config's layers_block_type")
    return blocks


def nemotron_mixer(f: Fields) -> tuple[int, int, int, int, int, bool, bool]:
    """(mamba heads, inner width, groups, state size, conv kernel, conv bias, projection bias) of Nemotron-H's
    Mamba-2 mixer (the older mamba_n_groups / mamba_d_conv / mamba_conv_bias names win, as NemotronHConfig pops
    them): the count below and its per-module table (weight_tables/hybrid.py) read them here."""
    m_heads = f.int("mamba_num_heads", default=128)
    return (m_heads, m_heads * f.int("mamba_head_dim", default=64), f.int("mamba_n_groups", "n_groups", default=8),
            f.int("ssm_state_size", default=128), f.int("mamba_d_conv", "conv_kernel", default=4),
            f.flag("mamba_conv_bias", default=f.flag("use_conv_bias", default=True)), f.flag("use_bias"))


def nemotron_h(f: Fields, layers: list, dims) -> tuple[int, int]:
    """NemotronHForCausalLM (modeling_nemotron_h.py): embeddings, norm_f, untied lm_head (_tied_weights_keys
    is empty); each block one RMSNorm and one mixer:
    - layers with a state: NemotronHMamba2Mixer: in_proj (hidden -> inner + conv_dim + heads) [+bias use_bias],
      depthwise conv1d over conv_dim = inner + 2 x n_groups x ssm_state_size [+bias use_conv_bias], dt_bias,
      A_log, D, gated RMSNorm (inner), out_proj [+bias]; inner = mamba_num_heads x mamba_head_dim; the older
      mamba_n_groups / mamba_d_conv / mamba_conv_bias names win as NemotronHConfig pops them;
    - layers with a cache: NemotronHAttention: q/k/v/o_proj without bias (head_dim);
    - otherwise by block type: 'mlp': NemotronHMLP up/down [+bias mlp_bias] of intermediate_size;
      'moe': NemotronHMoE: non-gated experts (up, down) over moe_latent_size (else hidden), router weight +
      e_score_correction_bias, shared_experts MLP (moe_shared_expert_intermediate_size, or intermediate_size
      when that is 0), fc1/fc2_latent_proj [+bias mlp_bias] when moe_latent_size."""
    hidden = f.int("hidden_size", default=4096)
    blocks = nemotron_blocks_of(f, len(layers))
    mlp_bias = f.flag("mlp_bias")

    # Mamba-2 mixer
    m_heads, inner, groups, state, kernel, conv_bias, proj_bias = nemotron_mixer(f)
    conv_dim = inner + 2 * groups * state
    mamba = (hidden * (inner + conv_dim + m_heads) + ((inner + conv_dim + m_heads) if proj_bias else 0)
             + conv_dim * kernel + (conv_dim if conv_bias else 0)
             + 3 * m_heads + inner + inner * hidden + (hidden if proj_bias else 0))

    # attention
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=heads)
    head_dim = f.int("head_dim", default=128)
    attention = 2 * heads * head_dim * hidden + 2 * kv * head_dim * hidden

    def mlp(width: int) -> int:
        return 2 * hidden * width + ((width + hidden) if mlp_bias else 0)

    inter = f.int("intermediate_size", default=21504)
    dense = mlp(inter)
    experts = _first_int(f, ("n_routed_experts", "num_local_experts"), 8)
    top_k = f.int("num_experts_per_tok", default=2)
    latent = f.opt_int("moe_latent_size")
    width = latent or hidden
    per_expert = 2 * width * f.int("moe_intermediate_size", default=7688)
    shared_inter = f.int("moe_shared_expert_intermediate_size", default=7688, minimum=0) or inter
    moe = experts * per_expert + experts * hidden + experts + mlp(shared_inter)
    if latent:
        moe += 2 * hidden * latent + ((latent + hidden) if mlp_bias else 0)

    total = embeddings(f, hidden, False, 131072, tieable=False) + hidden
    moe_layers = 0
    for layer, block in zip(layers, blocks):
        total += hidden
        if _attention_layer(layer):
            total += attention
        elif layer.state is not None:
            total += mamba
        elif block == "moe":
            total += moe
            moe_layers += 1
        else:
            total += dense
    return total, total - moe_layers * (experts - top_k) * per_expert


# -- OLMo hybrid ------------------------------------------------------------------------------------------

def olmo_hybrid_fields(f: Fields) -> tuple:
    """(hidden_size, heads, KV heads, head_dim, linear value heads, linear value head width, key width, value width,
    conv kernel) as OLMo Hybrid's count below reads them (its per-module table, weight_tables/rest.py, reads them here
    too): head_dim defaults to hidden / heads; the linear heads to num_attention_heads, the key head width to
    int(0.75 x hidden / key heads), the value head width to twice the key's."""
    hidden = f.int("hidden_size", default=3840)
    heads = f.int("num_attention_heads", default=30)
    k_heads = f.int("linear_num_key_heads", default=heads)
    v_heads = f.int("linear_num_value_heads", default=heads)
    k_dim = f.int("linear_key_head_dim", default=int(0.75 * hidden / k_heads))
    v_dim = f.int("linear_value_head_dim", default=2 * k_dim)
    return (hidden, heads, f.int("num_key_value_heads", default=heads), f.int("head_dim", default=hidden // heads),
            v_heads, v_dim, k_heads * k_dim, v_heads * v_dim, f.int("linear_conv_kernel_dim", default=4))


def olmo_hybrid(f: Fields, layers: list, dims) -> tuple[int, int]:
    """OlmoHybridForCausalLM (modeling_olmo_hybrid.py): embed_tokens, final norm, lm_head (tied when
    tie_word_embeddings); every layer a SwiGLU MLP of intermediate_size and two RMSNorms, and
    - attention layers (a cache): OlmoHybridAttention: q/k/v/o_proj [+bias attention_bias], q_norm over
      heads x head_dim and k_norm over KV heads x head_dim (head_dim = head_dim, else hidden / heads);
    - linear layers: OlmoHybridGatedDeltaNet: q/k_proj (key_dim), v_proj and g_proj (value_dim), a/b_proj
      (value heads), o_proj, depthwise conv1d over 2 x key_dim + value_dim (no bias), A_log, dt_bias,
      o_norm (linear_value_head_dim); head counts default to num_attention_heads, key head dim to
      int(0.75 x hidden / key heads), value head dim to twice the key's."""
    hidden, heads, kv, head_dim, v_heads, v_dim, key_dim, value_dim, kernel = olmo_hybrid_fields(f)
    bias = f.flag("attention_bias")
    attention = (2 * heads * head_dim * hidden + 2 * kv * head_dim * hidden
                 + ((heads + 2 * kv) * head_dim + hidden if bias else 0) + heads * head_dim + kv * head_dim)
    gdn = (2 * hidden * key_dim + 2 * hidden * value_dim + 2 * hidden * v_heads + value_dim * hidden
           + (2 * key_dim + value_dim) * kernel + 2 * v_heads + v_dim)

    mlp = 3 * hidden * f.int("intermediate_size", default=11008)
    total = embeddings(f, hidden, False, 100352) + hidden
    for layer in layers:
        total += (attention if _attention_layer(layer) else gdn) + mlp + 2 * hidden
    return total, total


# -- ZAYA -------------------------------------------------------------------------------------------------

def zaya(f: Fields, layers: list, dims) -> tuple[int, int]:
    """ZayaForCausalLM (modeling_zaya.py): embed_tokens, final norm, input_hidden_states_scale / _bias, lm_head
    (tied by default) with an lm_head bias when lm_head_bias; every layer (both 'hybrid' and 'hybrid_sliding'
    build the same modules):
    - ZayaAttention: o_proj [+bias], qk_norm.temp (KV heads), and ZayaCCAProjection: q_proj, k_proj,
      v_proj_current and v_proj_delayed (half of KV heads x head_dim each) [+bias attention_bias],
      conv_qk_depthwise (kernel cca_time0, with bias) and conv_qk_grouped (heads + KV heads groups, kernel
      cca_time1, with bias) over (heads + KV heads) x head_dim channels;
    - ZayaSparseMoeBlock: router down_proj (hidden -> router_hidden_size, bias), router_states_scale (not on
      layer 0), router_mlp (RMSNorm, fc1 and fc2 with bias, out_proj to num_experts + 1), experts (gate_up,
      down; the skip expert has none); its balancing_biases buffer is not an e_score_correction_bias;
    - input/post-attention RMSNorms and two ZayaResidualScaling (4 x hidden each).
    A Megatron-style config (zaya_layers: attention and MoE as separate half-layers, the MoE widths in
    ffn_hidden_size_list and zaya_mlp_expansion) builds other modules, which this count does not follow."""
    if is_megatron(f.raw):
        raise ConfigError("kvplan counts ZAYA's parameters in transformers' layout only, not the Megatron-style "
                          "one (zaya_layers)")
    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=8)
    kv = f.int("num_key_value_heads", default=2)
    head_dim = f.int("head_dim", default=128)
    bias = f.flag("attention_bias")
    q_width, kv_width = heads * head_dim, kv * head_dim
    half = kv_width // 2
    channels = q_width + kv_width
    t0 = f.int("cca_time0", default=2)
    t1 = f.int("cca_time1", default=2)
    attention = (hidden * (q_width + kv_width + 2 * half) + ((q_width + kv_width + 2 * half) if bias else 0)
                 + channels * t0 + channels  # depthwise conv with bias
                 + channels * (channels // (heads + kv)) * t1 + channels  # grouped conv with bias
                 + q_width * hidden + (hidden if bias else 0) + kv)  # o_proj, qk_norm.temp

    experts = f.int("num_experts", "num_local_experts", default=16)
    top_k = f.int("num_experts_per_tok", default=1)
    router = f.int("router_hidden_size", default=256)
    per_expert = 3 * hidden * f.int("moe_intermediate_size", default=2048)
    router_params = (hidden * router + router + router + 2 * (router * router + router)
                     + router * (experts + 1))  # down_proj, router_mlp (norm, fc1, fc2, out_proj)
    per_layer = attention + router_params + experts * per_expert + 2 * hidden + 8 * hidden

    total = embeddings(f, hidden, True, 262272) + hidden + 2 * hidden
    if f.flag("lm_head_bias"):
        total += f.int("vocab_size", default=262272)
    for i, _layer in enumerate(layers):
        total += per_layer + (router if i != 0 else 0)  # router_states_scale on every layer but the first
    return total, total - len(layers) * (experts - top_k) * per_expert


# -- LFM3 -------------------------------------------------------------------------------------------------

def lfm3(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Lfm3ForCausalLM (modeling_lfm3.py): embed_tokens, embedding_norm (no final norm), lm_head (tied by
    default); every layer a SwiGLU feed_forward (w1, w3, w2) of intermediate_size, operator_norm and ffn_norm,
    plus post_operator_norm and post_ffn_norm when use_sandwich_norm, and
    - attention layers (a cache; full or sliding alike): q/k/v/o_proj [+bias attention_bias], q_norm and k_norm
      over head_dim, g_proj (hidden -> heads) when use_attention_gate;
    - conv layers: Lfm3ShortConv: depthwise conv of conv_L_cache, in_proj (3 x hidden) and out_proj
      [+bias conv_bias]."""
    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=16)
    kv = f.int("num_key_value_heads", default=4)
    head_dim = f.int("head_dim", default=128)
    bias = f.flag("attention_bias")
    attention = (2 * heads * head_dim * hidden + 2 * kv * head_dim * hidden
                 + ((heads + 2 * kv) * head_dim + hidden if bias else 0) + 2 * head_dim
                 + (hidden * heads if f.flag("use_attention_gate", default=True) else 0))
    conv_bias = f.flag("conv_bias")
    conv = (hidden * f.int("conv_L_cache", default=7) + 3 * hidden * hidden + hidden * hidden
            + (hidden + 3 * hidden + hidden if conv_bias else 0))
    norms = (4 if f.flag("use_sandwich_norm", default=True) else 2) * hidden
    mlp = 3 * hidden * f.int("intermediate_size", default=7680)
    total = embeddings(f, hidden, True, 128000) + hidden
    for layer in layers:
        total += (attention if _attention_layer(layer) else conv) + mlp + norms
    return total, total


# -- Inkling ----------------------------------------------------------------------------------------------

def inkling_widths(f: Fields, hidden: int = 6144, heads: int = 64, swa_kv: int = 16, window: int = 512):
    """InklingTextConfig's attention fields as inkling_text reads them (and weight_tables/hybrid_more.py's table;
    Inkling2's with Inkling2TextConfig's defaults: hidden 4,608, 48 heads, 8 sliding KV heads, window 1,024):
    (hidden, kernel, d_rel, full sizes, sliding sizes), each sizes (heads, KV heads, head_dim, rel extent)."""
    hidden = f.int("hidden_size", default=hidden)
    kernel = f.int("conv_kernel_size", "sconv_kernel_size", default=4)
    full = (f.int("num_attention_heads", default=heads), f.int("num_key_value_heads", default=8),
            f.int("head_dim", default=128), f.int("rel_extent", default=1024))
    swa = (f.int("swa_num_attention_heads", default=heads), f.int("swa_num_key_value_heads", default=swa_kv),
           f.int("swa_head_dim", default=128), f.int("sliding_window_size", "sliding_window", default=window))
    return hidden, kernel, f.int("d_rel", default=16), full, swa


# Inkling2TextConfig's defaults where they differ from Inkling's (inkling_widths)
INKLING2_DEFAULTS = {"hidden": 4608, "heads": 48, "swa_kv": 8, "window": 1024}


def inkling_mlp(f: Fields) -> tuple[int, int, int, int]:
    """InklingTextConfig's MLP fields as inkling_text reads them: (experts' width, dense width, routed experts,
    shared experts); a checkpoint's dense_intermediate_size makes intermediate_size the experts' width."""
    if f.has("dense_intermediate_size"):
        moe_inter = f.int("intermediate_size", default=24576)
        dense_inter = f.int("dense_intermediate_size")
    else:
        moe_inter = f.int("moe_intermediate_size", default=3072)
        dense_inter = f.int("intermediate_size", default=24576)
    return (moe_inter, dense_inter, f.int("n_routed_experts", "num_local_experts", default=256),
            f.int("n_shared_experts", default=2))


def inkling_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """InklingForCausalLM (modeling_inkling.py): embed_tokens with its embed_norm, final norm, an lm_head never
    tied (_tied_weights_keys is empty); every layer input/post-attention RMSNorms, attn_sconv and mlp_sconv
    (depthwise over hidden, conv_kernel_size, no bias), and
    - InklingAttention with sliding (swa_num_attention_heads / swa_num_key_value_heads / swa_head_dim, rel
      extent sliding_window_size) or full (num_attention_heads / num_key_value_heads / head_dim, rel_extent)
      sizes by the layer's window: q/k/v/o_proj, r_proj (hidden -> heads x d_rel), k_sconv and v_sconv
      (depthwise over KV heads x head_dim), q_norm and k_norm (head_dim), rel_logits_proj.proj
      (d_rel x extent);
    - mlp_layer_types 'sparse' (else the first dense_mlp_idx = 0 dense): InklingMoE: router weight over
      routed + shared experts, its global_scale and e_score_correction_bias (routed), experts (gate_up, down)
      and InklingSharedExperts (n_shared_experts x gate, up, down), all of moe_intermediate_size; 'dense':
      InklingMLP (gate, up, down of intermediate_size) with a global_scale. A checkpoint's
      dense_intermediate_size makes intermediate_size the experts' width, as InklingTextConfig converts it."""
    hidden, kernel, d_rel, full, swa = inkling_widths(f)
    n = len(layers)

    def attention(sizes) -> int:
        heads, kv, head_dim, extent = sizes
        return (2 * heads * head_dim * hidden + 2 * kv * head_dim * hidden + hidden * heads * d_rel
                + 2 * kv * head_dim * kernel + 2 * head_dim + d_rel * extent)

    moe_inter, dense_inter, experts, shared = inkling_mlp(f)
    top_k = f.int("num_experts_per_tok", default=6)
    per_expert = 3 * hidden * moe_inter
    moe = ((experts + shared) * hidden + 1 + experts  # router weight, global_scale, e_score_correction_bias
           + experts * per_expert + shared * per_expert)
    dense = 3 * hidden * dense_inter + 1
    mlp_kinds = mlp_layer_types(f, n, dense_first(f.int("dense_mlp_idx", default=0, minimum=0)))

    ends = 2 * f.int("vocab_size", default=201024) * hidden + hidden + hidden  # embed, head, embed_norm, norm
    bases = [attention(swa if _sliding_layer(layer) else full) + 2 * hidden + 2 * hidden * kernel for layer in layers]
    return moe_stack(ends, bases, mlp_kinds, moe, dense, (experts - top_k) * per_expert)


def inkling2_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Inkling2ForCausalLM (modeling_inkling2.py): embed_tokens with its embed_norm, final norm, final_input
    (a block-attention-residual query), an lm_head never tied (_tied_weights_keys is empty) of vocab_size rows
    as the checkpoint holds it (padded; transformers 5.23 builds it so and slices the logits to
    unpadded_vocab_size, as vLLM 0.34's Inkling model does, models/inkling/nvidia/model.py ParallelLMHead of
    padded_vocab_size; transformers 5.24+ drops the padding rows on load); every layer an
    Inkling2SparseMoeBlock (router weight + e_score_correction_bias, experts gate_up / down of
    moe_intermediate_size, alias intermediate_size), mlp_input query, post_attention_convolution and
    post_mlp_convolution (depthwise over hidden, conv_kernel_size), and
    - sliding layers (a window): Inkling2SlidingAttention with the swa_* sizes: q/k/v/o_proj, r_proj,
      k_sconv / v_sconv (depthwise over KV heads x head_dim), rel_logits_proj (d_rel x sliding_window_size),
      gate_proj (hidden -> heads x head_dim), sink_proj (hidden -> heads), q_l2_clip.scale (heads x head_dim),
      rel_l2_clip.scale (heads x d_rel); input/post-attention RMSNorms; attention_input query (one) after
      layer 0;
    - full layers: Inkling2FullAttention, the same but k_sconv / v_sconv are dynamic (static_weight kernel x
      KV heads x head_dim, weight_proj hidden -> KV heads x kernel) and rel extent rel_extent; q/k/v input
      norms and the post-attention norm; attention_input with three queries after layer 0."""
    hidden, kernel, d_rel, full, swa = inkling_widths(f, **INKLING2_DEFAULTS)

    def attention(sizes, dynamic: bool) -> int:
        heads, kv, head_dim, extent = sizes
        n = (2 * heads * head_dim * hidden + 2 * kv * head_dim * hidden + hidden * heads * d_rel
             + d_rel * extent + hidden * heads * head_dim + hidden * heads + heads * head_dim + heads * d_rel)
        if dynamic:
            n += 2 * (kernel * kv * head_dim + hidden * kv * kernel)
        else:
            n += 2 * kv * head_dim * kernel
        return n

    experts = f.int("n_routed_experts", "num_local_experts", default=384)
    top_k = f.int("num_experts_per_tok", default=8)
    per_expert = 3 * hidden * f.int("moe_intermediate_size", "intermediate_size", default=2304)
    moe = experts * hidden + experts + experts * per_expert
    sliding = attention(swa, False) + 2 * hidden
    full_layer = attention(full, True) + 4 * hidden

    total = 2 * f.int("vocab_size", default=201024) * hidden + 3 * hidden  # embed, head, embed_norm, norm, final_input
    for i, layer in enumerate(layers):
        is_sliding = _sliding_layer(layer)
        total += (sliding if is_sliding else full_layer) + moe + hidden + 2 * hidden * kernel
        if i > 0:
            total += hidden if is_sliding else 3 * hidden
    return total, total - len(layers) * (experts - top_k) * per_expert


# -- MiniMax-M3 -------------------------------------------------------------------------------------------

_M3_INDEX = {  # flat name -> (sparse_attention_config's legacy name, MiniMaxM3VLTextConfig default)
    "index_n_heads": ("sparse_num_index_heads", 4),
    "index_head_dim": ("sparse_index_dim", 128),
}


def _m3_index(f: Fields, name: str) -> int:
    """sparse_attention_config's legacy name wins, as MiniMaxM3VLTextConfig.__post_init__ sets it last."""
    legacy, default = _M3_INDEX[name]
    return _nested_int(f, "sparse_attention_config", legacy, f.int(name, default=default))


def minimax_m3_mlp_kinds(f: Fields, n: int) -> list[str]:
    """Each layer's MLP, "sparse" or "dense": mlp_layer_types, else moe_layer_freq (1: sparse), else all sparse."""
    kinds = _string_list(f, "mlp_layer_types", n)
    if kinds is None:
        freq = f.list("moe_layer_freq", n)
        kinds = ["sparse" if v else "dense" for v in freq] if freq is not None else ["sparse"] * n
    return kinds


def minimax_m3_vl_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiniMaxM3VLForCausalLM (modeling_minimax_m3_vl.py), the text model only: embed_tokens, final norm,
    lm_head (tied when tie_word_embeddings); every layer two RMSNorms and MiniMaxM3VLAttention: q/k/v/o_proj
    (no bias), q_norm and k_norm over head_dim, plus on block-sparse layers (an indexer cache) the
    MiniMaxM3VLIndexer: q_proj (hidden -> index_n_heads x index_head_dim), k_proj (hidden -> index_head_dim),
    q_norm and k_norm (index_head_dim); then by mlp_layer_types (else moe_layer_freq, else all sparse):
    'sparse': router weight + e_score_correction_bias, experts (gate_up, down of intermediate_size),
    shared_experts (a fused gate_up / down MLP of shared_intermediate_size); 'dense': the same MLP of
    dense_intermediate_size."""
    hidden = f.int("hidden_size", default=6144)
    n = len(layers)
    heads = f.int("num_attention_heads", default=64)
    kv = f.int("num_key_value_heads", default=4)
    head_dim = f.int("head_dim", default=128)
    attention = 2 * heads * head_dim * hidden + 2 * kv * head_dim * hidden + 2 * head_dim
    index_dim = _m3_index(f, "index_head_dim")
    indexer = hidden * _m3_index(f, "index_n_heads") * index_dim + hidden * index_dim + 2 * index_dim

    experts = f.int("num_local_experts", "num_experts", default=128)
    top_k = f.int("num_experts_per_tok", default=4)
    per_expert = 3 * hidden * f.int("intermediate_size", default=3072)
    moe = experts * hidden + experts + experts * per_expert + 3 * hidden * f.int("shared_intermediate_size",
                                                                                 default=3072)
    dense = 3 * hidden * f.int("dense_intermediate_size", default=12288)
    kinds = minimax_m3_mlp_kinds(f, n)

    bases = [attention + (indexer if _indexed_layer(layer) else 0) + 2 * hidden for layer in layers]
    return moe_stack(embeddings(f, hidden, False, 200064) + hidden, bases, kinds, moe, dense,
                     (experts - top_k) * per_expert)



def inkling2_loop_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Inkling2LoopForCausalLM (transformers 5.25 modeling_inkling2_loop.py): Inkling2's text model (its layers
    run again on later passes with the same weights) plus on every looped layer four message gates (q, k, v and
    mlp: down_proj 2 x hidden -> loop_gate_rank, forget and message gate projections loop_gate_rank -> hidden)
    and the model's message_input queries (4 per looped layer). The LM head is counted as inkling2_text counts
    it, vocab_size rows as the checkpoint holds them (Inkling2LoopTextConfig: 'the checkpoint unembedding is
    padded to vocab_size'); transformers 5.24+ drops the padding rows on load (unpadded_vocab_size rows)."""
    total, active = inkling2_text(f, layers, dims)
    hidden = f.int("hidden_size", default=2304)
    loop = f.obj("loop_config") or {}
    start = loop.get("core_start", f.int("loop_layer_index_start", default=6))
    end = loop.get("core_end", f.int("loop_layer_index_end", default=18))
    rank = f.check_int("loop_config.gate_rank", loop.get("gate_rank", f.int("loop_gate_rank", default=64)))
    extra = (end - start) * (4 * (rank * 2 * hidden + 2 * hidden * rank) + 4 * hidden)
    return total + extra, active + extra

COUNTERS = {
    "kimi_linear": kimi_linear,
    "bailing_hybrid": bailing_hybrid,
    "nemotron_h": nemotron_h,
    "olmo_hybrid": olmo_hybrid,
    "zaya": zaya,
    "lfm3": lfm3,
    "inkling_text": inkling_text,
    "inkling2_text": inkling2_text,
    "minimax_m3_vl_text": minimax_m3_vl_text,
    "minimax_m3_text": minimax_m3_vl_text,
    "minimax_m3": minimax_m3_vl_text,
    "inkling2_loop_text": inkling2_loop_text,
}
