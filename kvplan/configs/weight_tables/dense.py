"""Per-module parameter tables (configs/weight_tables/__init__.py) of dense attention decoders: Gemma (gemma), Gemma 2
(gemma2), Command R7B (cohere2), EXAONE 4.0 (exaone4), GLM-4-9B-chat-hf (glm), GLM-4-0414 (glm4) and OLMo 3
(olmo3); and LFM2 / LFM2-MoE (lfm2, lfm2_moe: short convolutions and attention, see lfm2()). Each mirrors its counter
term by term (params_generic.count_params for all but cohere2, whose counter is
params_decoder.decoder(norm_bias=False, norms=1, ...) in families.py) and names modules as the checkpoints'
safetensors do (transformers 5.25 modeling_gemma.py, modeling_gemma2.py, modeling_cohere2.py,
modeling_exaone4.py, modeling_glm.py, modeling_glm4.py, modeling_olmo3.py): q/k/v/o_proj apart, and the MLP's
gate_proj / up_proj / down_proj, but for GLM-4 and GLM-4-0414, whose checkpoints store the fused
mlp.gate_up_proj (GlmMLP, Glm4MLP) that vLLM loads as it is (glm4.py builds llama.py's LlamaMLP, whose
gate_up_proj is a MergedColumnParallelLinear of that name).

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params): the norms, and o_proj's bias
where attention_bias gives it one (a RowParallelLinear). vLLM 0.34 runs four of these with its own model file
(model_executor/models/registry.py): gemma2.py (GemmaRMSNorm x 4 a layer, qkv_proj and o_proj biased with
attention_bias), commandr.py for Cohere2ForCausalLM (its LayerNorm: one weight of hidden_size, loaded by
row_parallel_weight_loader, which narrows only parameters of more than one dimension; qkv_proj and o_proj
built with bias=False whatever attention_bias says, and the LM head always tied to the embeddings),
exaone4.py (RMSNorm q_norm / k_norm over head_dim, post_attention / post_feedforward_layernorm) and glm4.py
(four RMSNorms a layer; o_proj a RowParallelLinear without bias). GemmaForCausalLM, GlmForCausalLM and
Olmo3ForCausalLM run on the Transformers backend (_TRANSFORMERS_SUPPORTED_MODELS): transformers/base.py
recursive_replace turns each nn.Linear into a Column- or RowParallelLinear by the config's base_model_tp_plan
(every linear of these three is named there; colwise_gather_output / rowwise_split_input still split the
weight) and each RMSNorm into fusers/rms_norm.py's TPAwareRMSNorm of the norm's full width, so OLMo 3's q_norm
(heads x head_dim) and k_norm (KV heads x head_dim) are whole on every rank too.
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _experts, _float, _linear, _mlp, _qkvo


def _layer(i: int, hidden: int, dims, inter: int, *, bias: bool, o_bias: bool, norms: tuple[str, ...],
           qk_norm: tuple[int, int] | None = None, fused_mlp: bool = False) -> list[Module]:
    """One decoder layer: q/k/v_proj (biased with `bias`), o_proj (biased with `o_bias`: a RowParallelLinear,
    its bias whole), q_norm / k_norm of the widths given, the layer's norms by name, the gated MLP (gate_proj,
    up_proj, down_proj; fused_mlp: gate_up_proj [2 x inter, hidden] and down_proj)."""
    heads, kv, head_dim = dims[:3]
    a = f"layers.{i}.self_attn"
    out = _qkvo(a, hidden, heads, kv, head_dim, bias)[:3]
    out.append(_linear(f"{a}.o_proj", heads * head_dim, hidden, "attention", o_bias, row=True))
    if qk_norm:
        out += [_float(f"{a}.q_norm", qk_norm[0]), _float(f"{a}.k_norm", qk_norm[1])]
    out += [_float(f"layers.{i}.{norm}", hidden) for norm in norms]
    m = f"layers.{i}.mlp"
    if fused_mlp:
        return out + [_linear(f"{m}.gate_up_proj", hidden, 2 * inter, "mlp"), _linear(f"{m}.down_proj", inter, hidden,
                                                                                      "mlp")]
    return out + _mlp(m, hidden, inter, "mlp")


def _width(f: Fields, hidden: int) -> int:
    """The MLP width as params_generic.count_params reads it (4 x hidden when the config and family give none)."""
    return f.int("intermediate_size", "n_inner", default=4 * hidden, maximum=10**8)


def gemma(f: Fields, layers: list, dims) -> list[Module]:
    """GemmaForCausalLM (Gemma 1) and Gemma2ForCausalLM: per layer q/k/v/o_proj (attention_bias on all four),
    input_layernorm and post_attention_layernorm, Gemma 2's pre_ and post_feedforward_layernorm besides, the
    gated MLP; embeddings, final norm, the head tied unless tie_word_embeddings is false."""
    hidden = f.int("hidden_size", "n_embd")
    inter = _width(f, hidden)
    bias = f.flag("attention_bias")
    norms = ("input_layernorm", "post_attention_layernorm")
    if f.model_type == "gemma2":
        norms += ("pre_feedforward_layernorm", "post_feedforward_layernorm")
    out = _ends(f, hidden, True, 0)
    for i in range(len(layers)):
        out += _layer(i, hidden, dims, inter, bias=bias, o_bias=bias, norms=norms)
    return out


def cohere2(f: Fields, layers: list, dims) -> list[Module]:
    """Cohere2ForCausalLM (Command R7B): a parallel block, so one norm a layer (input_layernorm: Cohere2LayerNorm,
    a weight and no bias), q/k/v/o_proj (attention_bias on all four), the gated MLP; the final norm likewise;
    embeddings and a head tied unless tie_word_embeddings is false. The logit scale is a config number, no
    parameter."""
    heads, _, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    # params_decoder.decoder(inter=("intermediate_size",))
    width = f.int("intermediate_size", default=None, maximum=10**8)
    inter = 4 * hidden if width is None else width
    bias = f.flag("attention_bias")
    out = _ends(f, hidden, True, 0)
    for i in range(len(layers)):
        out += _layer(i, hidden, dims, inter, bias=bias, o_bias=bias, norms=("input_layernorm",))
    return out


def exaone4(f: Fields, layers: list, dims) -> list[Module]:
    """Exaone4ForCausalLM: per layer q/k/v/o_proj without biases (Exaone4Attention: bias=False; a config with
    attention_bias, which the counter would count, gets no table), q_norm and k_norm over head_dim,
    post_attention_layernorm and post_feedforward_layernorm (no input norm), the gated MLP; an LM head of its own
    unless tie_word_embeddings."""
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: transformers' Exaone4Attention builds no biases")
    hidden = f.int("hidden_size", "n_embd")
    inter = _width(f, hidden)
    head_dim = dims[2]
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        out += _layer(i, hidden, dims, inter, bias=False, o_bias=False, qk_norm=(head_dim, head_dim),
                      norms=("post_attention_layernorm", "post_feedforward_layernorm"))
    return out


def glm(f: Fields, layers: list, dims) -> list[Module]:
    """GlmForCausalLM (GLM-4-9B-chat-hf) and Glm4ForCausalLM (GLM-4-0414): q/k/v_proj biased with attention_bias
    (GlmConfig's and Glm4Config's default: true), o_proj never (nn.Linear bias=False), input_layernorm and
    post_attention_layernorm (GLM-4-0414 adds post_self_attn_layernorm and post_mlp_layernorm), the fused
    mlp.gate_up_proj and down_proj; an LM head of its own unless tie_word_embeddings."""
    hidden = f.int("hidden_size", "n_embd")
    inter = _width(f, hidden)
    norms = ("input_layernorm", "post_attention_layernorm")
    if f.model_type == "glm4":
        norms += ("post_self_attn_layernorm", "post_mlp_layernorm")
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        out += _layer(i, hidden, dims, inter, bias=f.flag("attention_bias"), o_bias=False, norms=norms,
                      fused_mlp=True)
    return out


def olmo3(f: Fields, layers: list, dims) -> list[Module]:
    """Olmo3ForCausalLM: per layer q/k/v/o_proj (attention_bias on all four), q_norm over the whole query
    projection (heads x head_dim) and k_norm over the whole key projection (KV heads x head_dim),
    post_attention_layernorm and post_feedforward_layernorm, the gated MLP; an LM head of its own unless
    tie_word_embeddings."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size", "n_embd")
    inter = _width(f, hidden)
    bias = f.flag("attention_bias")
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        out += _layer(i, hidden, dims, inter, bias=bias, o_bias=bias, qk_norm=(heads * head_dim, kv * head_dim),
                      norms=("post_attention_layernorm", "post_feedforward_layernorm"))
    return out


def lfm2(f: Fields, layers: list, dims) -> list[Module]:
    """Lfm2ForCausalLM and Lfm2MoeForCausalLM (transformers 5.25 modeling_lfm2.py, modeling_lfm2_moe.py), as
    params_linear_mixers.lfm2 counts them: per layer either attention under self_attn (q/k/v_proj, out_proj,
    q_layernorm and
    k_layernorm over head_dim; no biases) or the short convolution under conv (in_proj to 3 x hidden, the
    depthwise conv.conv [hidden, 1, conv_L_cache], out_proj; biases on all three with conv_bias); operator_norm
    and ffn_norm; feed_forward's w1 / w3 / w2 (params_linear_mixers.lfm2_dense_width), or after num_dense_layers
    (LFM2-MoE) the routed experts feed_forward.experts.N.w1 / w3 / w2, the router feed_forward.gate [E, hidden] and its
    expert_bias [E] with use_expert_bias (a float32 buffer in transformers, counted here at the checkpoint's
    float width like the rest); the final norm is embedding_norm, the head tied unless tie_word_embeddings is
    false.

    vLLM 0.34 (lfm2.py, lfm2_moe.py, layers/mamba/short_conv.py ShortConv) holds whole on every TP rank the
    RMSNorms, the router (GateLinear) and its e_score_correction_bias (the checkpoint's expert_bias, in float32:
    configs/param_fp32.py), and
    conv's out_proj bias (a RowParallelLinear); it splits the conv weight and bias by channel (conv is a
    ColumnParallelLinear built without a quantization method) and in_proj (MergedColumnParallelLinear)."""
    from ..params_linear_mixers import lfm2_dense_width

    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    bias = f.flag("conv_bias")
    kernel = f.int("conv_L_cache", default=3)
    inter = lfm2_dense_width(f)
    experts = f.int("num_experts", default=0, minimum=0)
    first_dense = f.int("num_dense_layers", default=2, minimum=0) if experts else len(layers)
    out = [replace(m, name="embedding_norm") if m.name == "norm" else m for m in _ends(f, hidden, True, 0)]
    for i, layer in enumerate(layers):
        if layer.caches:
            a = f"layers.{i}.self_attn"
            out += _qkvo(a, hidden, heads, kv, head_dim)[:3]
            out += [_linear(f"{a}.out_proj", heads * head_dim, hidden, "attention", row=True),
                    _float(f"{a}.q_layernorm", head_dim), _float(f"{a}.k_layernorm", head_dim)]
        else:
            c = f"layers.{i}.conv"
            out += [_linear(f"{c}.in_proj", hidden, 3 * hidden, "mixer", bias),
                    _float(f"{c}.conv", hidden * kernel + (hidden if bias else 0), "mixer"),
                    _linear(f"{c}.out_proj", hidden, hidden, "mixer", bias, row=True)]
        out += [_float(f"layers.{i}.operator_norm", hidden), _float(f"layers.{i}.ffn_norm", hidden)]
        m = f"layers.{i}.feed_forward"
        if i < first_dense:
            out += [_linear(f"{m}.w1", hidden, inter, "mlp"), _linear(f"{m}.w3", hidden, inter, "mlp"),
                    _linear(f"{m}.w2", inter, hidden, "mlp")]
        else:
            out += _experts(m, experts, hidden, f.int("moe_intermediate_size"), ("w1", "w3", "w2"))
            out.append(_float(f"{m}.gate", hidden * experts, "router"))
            if f.flag("use_expert_bias", default=True):
                out.append(_float(f"{m}.expert_bias", experts, "router"))
    return out


DENSE = {"gemma": gemma, "gemma2": gemma, "cohere2": cohere2, "exaone4": exaone4, "glm": glm, "glm4": glm,
         "olmo3": olmo3, "lfm2": lfm2, "lfm2_moe": lfm2}
