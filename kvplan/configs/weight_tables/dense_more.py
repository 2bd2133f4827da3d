"""Per-module parameter tables (configs/weight_tables/__init__.py) of more dense attention decoders: Command R / R+
(cohere), StarCoder2 (starcoder2), Phi-1 / 1.5 / 2 (phi), OLMo 2 (olmo2), OLMo (olmo), Seed-OSS (seed_oss), and the
Llama-shaped SmolLM3 (smollm3), Ministral 3 (ministral3) and Ministral (ministral). Each mirrors its counter term by
term (params_dense_more.py for cohere, olmo, olmo2, seed_oss and phi; params.decoder for starcoder2;
params.count_params for the Llama-shaped ones) and names modules as the checkpoints' safetensors do (transformers 5.25
models/<type>/modeling_<type>.py; transformers renames none of them on load: conversion_mapping.py).

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params), read in vLLM 0.34.0:
- commandr.py CohereForCausalLM (Command R / R+): the LayerNorm input_layernorm and the final norm (one weight of
  hidden_size, loaded by model_loader/weight_utils.py row_parallel_weight_loader, which narrows only parameters of
  more than one dimension). With use_qk_norm (Command R+), CohereAttention builds q_norm of [heads / TP, head_dim]
  and k_norm of [max(1, KV heads / TP), head_dim], both narrowed along the heads by that loader: q_norm splits with
  the query heads and k_norm by KV head (each rank one whole KV head's row above the KV heads, as the keys), so
  neither is whole. vLLM builds qkv_proj and o_proj without biases whatever attention_bias says; the table counts
  the checkpoint's.
- mistral.py MistralForCausalLM (Ministral3ForCausalLM, registry.py): Llama's layout, its RMSNorms whole.
- The Transformers modeling backend (registry.py _TRANSFORMERS_SUPPORTED_MODELS: Starcoder2ForCausalLM,
  PhiForCausalLM, Olmo2ForCausalLM, OlmoForCausalLM, SeedOssForCausalLM, SmolLM3ForCausalLM; MinistralForCausalLM,
  which no vLLM file registers, through registry.py _try_resolve_transformers): transformers/base.py
  recursive_replace turns each nn.Linear into the class of its style in the config's base_model_tp_plan
  (utils.py replace_linear_class; every linear of these models is named there: q/k/v colwise, or
  colwise_gather_output for OLMo 2, which still splits the weight; o_proj / dense, down_proj / c_proj / fc2 rowwise,
  so their biases are whole), each nn.LayerNorm into vLLM's LayerNorm (weight and bias whole: StarCoder2's and Phi's
  norms, Phi's q_layernorm / k_layernorm) and each RMSNorm into fusers/rms_norm.py TPAwareRMSNorm of the norm's full
  width (OLMo 2's q_norm over heads x head_dim and k_norm over KV heads x head_dim are whole, as OLMo 3's). Phi's LM
  head bias is registered on vLLM's ParallelLMHead (causal.py), split with the vocabulary.
"""

from __future__ import annotations

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _float, _gqa, _linear, _mlp, _qkvo


def _width(f: Fields, hidden: int) -> int:
    """The MLP width as params.decoder reads it: intermediate_size, else 4 x hidden_size."""
    width = f.int("intermediate_size", default=None, maximum=10**8)
    return 4 * hidden if width is None else width


def _layer_norm(name: str, width: int, bias: bool = True) -> Module:
    """A LayerNorm (weight and bias), or with bias False a weight-only norm."""
    return Module(name, 0, width * (2 if bias else 1), "norms")


def _ends_layer_norm(f: Fields, hidden: int, tied_default: bool, norm: str = "norm", bias: bool = True) -> list:
    """Embeddings, the final norm (a LayerNorm with bias) and the head."""
    return [_layer_norm(norm, hidden, bias) if m.name == "norm" else m for m in _ends(f, hidden, tied_default, 0)]


def _no_mlp_bias(f: Fields, why: str) -> None:
    if f.flag("mlp_bias"):
        raise ConfigError(f"mlp_bias: {why}")


# -- Command R / R+ (params_dense_more.cohere) -------------------------------------------------------------------

def cohere(f: Fields, layers: list, dims) -> list[Module]:
    """CohereForCausalLM (modeling_cohere.py CohereDecoderLayer): a parallel block, one CohereLayerNorm
    (input_layernorm, a weight and no bias) a layer; q/k/v/o_proj biased with attention_bias; with use_qk_norm,
    q_norm [heads, head_dim] and k_norm [KV heads, head_dim] (split over TP as vLLM's commandr.py does: the module
    docstring); the gated MLP; the final norm; the head tied unless tie_word_embeddings is false."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = _width(f, hidden)
    bias = f.flag("attention_bias")
    qk_norm = f.flag("use_qk_norm")
    out = _ends(f, hidden, True, 0)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, head_dim, bias)
        if qk_norm:
            out += [Module(f"{a}.q_norm", 0, heads * head_dim, "attention"),
                    Module(f"{a}.k_norm", 0, kv * head_dim, "attention", kv_heads=kv, kv_other=kv * head_dim)]
        out.append(_float(f"layers.{i}.input_layernorm", hidden))
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
    return out


# -- StarCoder2 (params.decoder) ----------------------------------------------------------------------------------

def starcoder2(f: Fields, layers: list, dims) -> list[Module]:
    """Starcoder2ForCausalLM (modeling_starcoder2.py): q/k/v/o_proj and the plain MLP's mlp.c_fc / mlp.c_proj, all
    biased with use_bias (Starcoder2Config's default: true); input_layernorm and post_attention_layernorm, LayerNorms
    with weight and bias, and the final norm likewise; the head tied unless tie_word_embeddings is false."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = _width(f, hidden)
    bias = f.flag("use_bias", default=True)
    out = _ends_layer_norm(f, hidden, True)
    for i in range(len(layers)):
        m = f"layers.{i}.mlp"
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim, bias)
        out += [_layer_norm(f"layers.{i}.input_layernorm", hidden),
                _layer_norm(f"layers.{i}.post_attention_layernorm", hidden),
                _linear(f"{m}.c_fc", hidden, inter, "mlp", bias), _linear(f"{m}.c_proj", inter, hidden, "mlp", bias,
                                                                          row=True)]
    return out


# -- Phi-1 / 1.5 / 2 (params_dense_more.phi) -----------------------------------------------------------------------

def phi(f: Fields, layers: list, dims) -> list[Module]:
    """PhiForCausalLM (modeling_phi.py): q/k/v_proj and self_attn.dense, all biased; with qk_layernorm, q_layernorm
    and k_layernorm (LayerNorms over hidden_size // num_attention_heads); one LayerNorm a layer (input_layernorm:
    attention and MLP in parallel); mlp.fc1 and mlp.fc2, biased; model.final_layernorm; lm_head with its bias (an
    LM head of its own unless tie_word_embeddings)."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = _width(f, hidden)
    qk_width = hidden // f.int("num_attention_heads") if f.flag("qk_layernorm") else 0
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [Module("embed_tokens", 0, vocab * hidden, "embeddings"), _layer_norm("final_layernorm", hidden)]
    tied = f.flag("tie_word_embeddings", default=False)
    out.append(Module("lm_head", 0 if tied else vocab * hidden, vocab, "lm_head", top=True, inputs=hidden))
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, head_dim, True)[:3]
        out.append(_linear(f"{a}.dense", heads * head_dim, hidden, "attention", True, row=True))
        if qk_width:
            out += [_layer_norm(f"{a}.q_layernorm", qk_width), _layer_norm(f"{a}.k_layernorm", qk_width)]
        out += [_layer_norm(f"layers.{i}.input_layernorm", hidden),
                _linear(f"{m}.fc1", hidden, inter, "mlp", True), _linear(f"{m}.fc2", inter, hidden, "mlp", True,
                                                                         row=True)]
    return out


# -- OLMo, OLMo 2 (params_dense_more.olmo, olmo2) -----------------------------------------------------------------

def olmo2(f: Fields, layers: list, dims) -> list[Module]:
    """Olmo2ForCausalLM (modeling_olmo2.py): q/k/v/o_proj (attention_bias on all four), q_norm over the whole query
    projection (heads x head_dim) and k_norm over the whole key projection (KV heads x head_dim),
    post_attention_layernorm and post_feedforward_layernorm (no input norm), the gated MLP; an LM head of its own
    unless tie_word_embeddings."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = _width(f, hidden)
    bias = f.flag("attention_bias")
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, head_dim, bias)
        out += [_float(f"{a}.q_norm", heads * head_dim), _float(f"{a}.k_norm", kv * head_dim),
                _float(f"layers.{i}.post_attention_layernorm", hidden),
                _float(f"layers.{i}.post_feedforward_layernorm", hidden)]
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
    return out


def olmo(f: Fields, layers: list, dims) -> list[Module]:
    """OlmoForCausalLM (modeling_olmo.py): q/k/v/o_proj (attention_bias on all four), the gated MLP; OlmoLayerNorm
    holds no parameters, so no norm appears; an LM head of its own unless tie_word_embeddings."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = _width(f, hidden)
    bias = f.flag("attention_bias")
    out = [m for m in _ends(f, hidden, False, 0) if m.name != "norm"]
    for i in range(len(layers)):
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim, bias)
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
    return out


# -- Seed-OSS (params_dense_more.seed_oss) -------------------------------------------------------------------------

def seed_oss(f: Fields, layers: list, dims) -> list[Module]:
    """SeedOssForCausalLM (modeling_seed_oss.py): q/k/v_proj biased with attention_bias (default true), o_proj with
    attention_out_bias (default false), the gated MLP's three projections with mlp_bias (default false),
    input_layernorm and post_attention_layernorm; an LM head of its own unless tie_word_embeddings."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = _width(f, hidden)
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim, f.flag("attention_bias", default=True),
                     o_bias=f.flag("attention_out_bias"))
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp", f.flag("mlp_bias"))
    return out


# -- Llama-shaped: SmolLM3, Ministral 3, Ministral (params.count_params) -----------------------------------------

def llama_shaped(f: Fields, layers: list, dims) -> list[Module]:
    """SmolLM3ForCausalLM, Ministral3ForCausalLM and MinistralForCausalLM (modeling_smollm3.py,
    modeling_ministral3.py, modeling_ministral.py): Llama's modules under Llama's names (weight_tables._gqa), the
    head tied by default for SmolLM3 (SmolLM3Config) and untied for the Ministrals. SmolLM3's MLP takes mlp_bias,
    which params.count_params does not count: such a config gets no table (none is published); the Ministrals build
    no attention biases whatever attention_bias says, so a config with it (which the counter would count) gets none
    either."""
    _no_mlp_bias(f, "params.count_params does not count the MLP biases SmolLM3MLP builds with it")
    if f.model_type != "smollm3" and f.flag("attention_bias"):
        raise ConfigError("attention_bias: transformers' Ministral attention builds no biases")
    return _gqa(f, layers, dims)


DENSE_MORE = {"cohere": cohere, "starcoder2": starcoder2, "phi": phi, "olmo2": olmo2, "olmo": olmo,
              "seed_oss": seed_oss, "smollm3": llama_shaped, "ministral3": llama_shaped, "ministral": llama_shaped}
