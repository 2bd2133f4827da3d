"""Per-module parameter tables (configs/weight_tables/__init__.py) of more dense attention decoders: Command R / R+
(cohere), StarCoder2 (starcoder2), Phi-1 / 1.5 / 2 (phi), OLMo 2 (olmo2), OLMo (olmo), Seed-OSS (seed_oss), the
Llama-shaped SmolLM3, Ministral 3, Ministral, IQuest-Coder, CWM and Helium, EXAONE 3 / 3.5 (exaone, under its
checkpoints' own names), Nemotron-4 / Minitron (nemotron), Hunyuan dense (hunyuan_v1_dense), Apertus and Apertus 1.5
(apertus, apertus1p5_text), Arcee (AFM), VaultGemma, Jais-2, NanoChat, Granite SWA (granite_swa), DiffLlama and
BitNet. Each mirrors its counter term by term (params_dense_more.py for cohere, olmo, olmo2, seed_oss, phi,
granite_swa, hunyuan_v1_dense and diffllama; params_decoder.decoder for starcoder2, nemotron, jais2, arcee, nanochat and
apertus; params_decoder.apertus1p5_text; params_dense.bitnet; params_generic.count_params for the rest) and names
modules as the checkpoints' safetensors do (transformers 5.25
models/<type>/modeling_<type>.py; of these transformers renames only EXAONE's on load: conversion_mapping.py).

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params), read in vLLM 0.34.0:
- Its own model files (model_executor/models/registry.py): commandr.py CohereForCausalLM (Command R / R+): the
  LayerNorm input_layernorm and the final norm (one weight of hidden_size, loaded by model_loader/weight_utils.py
  row_parallel_weight_loader, which narrows only parameters of more than one dimension). With use_qk_norm,
  CohereAttention builds q_norm of [heads / TP, head_dim] and k_norm of [max(1, KV heads / TP), head_dim], both
  narrowed along the heads by that loader: q_norm splits with the query heads and k_norm by KV head, so neither is
  whole. Above the KV heads the loader narrows k_norm at tp_rank x 1 row, past the tensor for ranks at or above the KV
  heads: vLLM cannot load such a config (kvplan's engine refuses it: engines/vllm_family_rules.py cohere_qk_norm_refusal); the
  table keeps one whole KV head's row a rank there, as the keys, for kvplan's own plan. vLLM builds qkv_proj and o_proj without
  biases whatever attention_bias says; the table counts the checkpoint's. mistral.py (Ministral3ForCausalLM),
  llama.py (IQuestCoderForCausalLM), exaone.py, nemotron.py, apertus.py and granite.py (GraniteSWAForCausalLM):
  their norms (RMSNorm; Nemotron's NemotronLayerNorm1P weight and bias), the biases of their RowParallelLinear
  output projections, Apertus' xIELU scalars; Granite SWA's sinks split with the heads.
- The Transformers modeling backend (registry.py _TRANSFORMERS_SUPPORTED_MODELS: Starcoder2, Phi, Olmo2, Olmo,
  SeedOss, SmolLM3, VaultGemma, Arcee, Cwm, Jais2, HunYuanDenseV1; MinistralForCausalLM, HeliumForCausalLM,
  NanoChatForCausalLM, DiffLlamaForCausalLM and BitNetForCausalLM, which no vLLM file registers, through registry.py
  _try_resolve_transformers, their _supports_attention_backend being true; Hunyuan's, DiffLlama's and BitNet's
  tensor-parallel plans name no linear, so their fusers split them: see those tables): transformers/base.py
  recursive_replace first applies the fusers that match a module (fusers/qkv.py QKVFuser: an attention's three
  linears of one input become one QKVParallelLinear, one whole KV head a rank above the KV heads, and the linear it
  returns a RowParallelLinear; fusers/glu.py GLUFuser likewise for gate_proj / up_proj), then turns each remaining
  nn.Linear into the class of its style in the config's base_model_tp_plan (utils.py replace_linear_class; every
  linear of these models is named there: q/k/v colwise, or colwise_gather_output for OLMo 2, which still splits the
  weight; o_proj / dense, down_proj / c_proj / fc2 rowwise, so their biases are whole), each nn.LayerNorm into vLLM's LayerNorm (weight and bias whole: StarCoder2's, Phi's
  and Jais-2's norms, Phi's q_layernorm / k_layernorm) and each RMSNorm into fusers/rms_norm.py TPAwareRMSNorm (or
  TPAwareGemmaRMSNorm) of the norm's full width (OLMo 2's q_norm over heads x head_dim and k_norm over KV heads x
  head_dim are whole, as OLMo 3's). Phi's LM head bias is registered on vLLM's ParallelLMHead (causal.py), split
  with the vocabulary.
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _float, _gqa, _linear, _mlp, _qkvo


def _width(f: Fields, hidden: int) -> int:
    """The MLP width as params_decoder.decoder reads it: intermediate_size, else 4 x hidden_size."""
    width = f.int("intermediate_size", default=None, maximum=10**8)
    return 4 * hidden if width is None else width


def _layer_norm(name: str, width: int, bias: bool = True) -> Module:
    """A LayerNorm (weight and bias), or with bias False a weight-only norm."""
    return Module(name, 0, width * (2 if bias else 1), "norms")


def _ends_layer_norm(f: Fields, hidden: int, tied_default: bool, norm: str = "norm", bias: bool = True) -> list:
    """Embeddings, the final norm (a LayerNorm with bias) and the head."""
    return [_layer_norm(norm, hidden, bias) if m.name == "norm" else m for m in _ends(f, hidden, tied_default, 0)]


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


# -- StarCoder2 (params_decoder.decoder) -------------------------------------------------------------------------------

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


# -- Llama-shaped: SmolLM3, Ministral 3, Ministral (params_generic.count_params) ---------------------------------------

def llama_shaped(f: Fields, layers: list, dims) -> list[Module]:
    """SmolLM3ForCausalLM, Ministral3ForCausalLM and MinistralForCausalLM (modeling_smollm3.py,
    modeling_ministral3.py, modeling_ministral.py): Llama's modules under Llama's names (weight_tables._gqa), the
    head tied by default for SmolLM3 (SmolLM3Config) and untied for the Ministrals. SmolLM3's MLP takes mlp_bias
    (params_generic.dense_mlp_bias); the Ministrals build no attention biases whatever attention_bias says, so a config
    with it (which the counter would count) gets no table."""
    if f.model_type != "smollm3" and f.flag("attention_bias"):
        raise ConfigError("attention_bias: transformers' Ministral attention builds no biases")
    return _gqa(f, layers, dims)


def _no_attention_bias(f: Fields, why: str) -> None:
    if f.flag("attention_bias"):
        raise ConfigError(f"attention_bias: {why}")


def iquestcoder(f: Fields, layers: list, dims) -> list[Module]:
    """IQuest-Coder-V1 (iquestcoder): transformers 5.25 builds LlamaForCausalLM for it (modeling_auto.py) and vLLM
    0.34 runs llama.py (registry.py IQuestCoderForCausalLM): Llama's modules and names, untied by default
    (IQuestCoderConfig); MLP biases with mlp_bias (params_generic.dense_mlp_bias)."""
    return _gqa(f, layers, dims)


def cwm(f: Fields, layers: list, dims) -> list[Module]:
    """CwmForCausalLM (Code World Model; modeling_cwm.py): Llama's modules and names, q/k/v/o_proj never biased
    (bias=False whatever attention_bias says), the gated MLP (mlp_bias: params_generic.dense_mlp_bias); untied by
    default. A config with attention_bias (which params_generic.count_params would count) gets no table."""
    _no_attention_bias(f, "CwmAttention builds no biases")
    return _gqa(f, layers, dims)


def helium(f: Fields, layers: list, dims) -> list[Module]:
    """HeliumForCausalLM (modeling_helium.py): Llama's modules and names, but o_proj is hidden x hidden and never
    biased (HeliumAttention), q/k/v_proj biased with attention_bias, the MLP with mlp_bias; untied by default.
    params_generic.count_params counts o_proj as heads x head_dim -> hidden, biased with attention_bias: a config where
    that differs (attention_bias, heads x head_dim != hidden) gets no table."""
    heads, _, head_dim = dims[:3]
    _no_attention_bias(f, "HeliumAttention's o_proj has no bias, which params.count_params would count")
    if heads * head_dim != f.int("hidden_size"):
        raise ConfigError("Helium's o_proj is hidden_size wide on both sides; this config's heads x head_dim is not")
    return _gqa(f, layers, dims)


# -- EXAONE 3 / 3.5 (params_generic.count_params), under the checkpoints' own names ------------------------------------

_EXAONE_ENDS = {"embed_tokens": "transformer.wte", "norm": "transformer.ln_f"}
_EXAONE_LAYERS = (("layers.", "transformer.h."), (".self_attn.o_proj", ".attn.attention.out_proj"),
                  (".self_attn.", ".attn.attention."), (".input_layernorm", ".ln_1"),
                  (".post_attention_layernorm", ".ln_2"), (".mlp.gate_proj", ".mlp.c_fc_0"),
                  (".mlp.up_proj", ".mlp.c_fc_1"), (".mlp.down_proj", ".mlp.c_proj"))


def _exaone_name(name: str) -> str:
    if name in _EXAONE_ENDS:
        return _EXAONE_ENDS[name]
    for ours, theirs in _EXAONE_LAYERS:
        name = name.replace(ours, theirs)
    return name


def exaone(f: Fields, layers: list, dims) -> list[Module]:
    """EXAONE 3.0 / 3.5 (exaone): transformers 5.25 builds LlamaForCausalLM for it (modeling_auto.py) and renames
    the checkpoints' tensors on load (conversion_mapping.py "exaone"); vLLM 0.34 exaone.py ExaoneForCausalLM loads
    them under their own names: transformer.wte, transformer.h.N.ln_1 / ln_2 (RMSNorm, whole),
    attn.attention.q_proj / k_proj / v_proj (its QKVParallelLinear) and out_proj (RowParallelLinear: its bias,
    with attention_bias, whole), mlp.c_fc_0 / c_fc_1 (gate_up_proj) and c_proj, transformer.ln_f, lm_head. The
    table is Llama's (weight_tables._gqa) under those names, untied unless tie_word_embeddings; MLP biases with
    mlp_bias (params_generic.dense_mlp_bias; ExaoneGatedMLP bias=mlp_bias)."""
    return [m if m.top else replace(m, name=_exaone_name(m.name), top=True) for m in _gqa(f, layers, dims)]


# -- plain (non-gated) MLPs: Nemotron, Jais-2, Arcee, NanoChat, Apertus (params_decoder.decoder) -----------------------

def _plain_layer(i: int, hidden: int, dims, inter: int, *, bias: bool, mlp_bias: bool, norms: tuple[str, ...],
                 norm_bias: bool, up: str = "up_proj", down: str = "down_proj") -> list[Module]:
    heads, kv, head_dim = dims[:3]
    m = f"layers.{i}.mlp"
    out = _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim, bias)
    out += [_layer_norm(f"layers.{i}.{norm}", hidden, norm_bias) for norm in norms]
    return out + [_linear(f"{m}.{up}", hidden, inter, "mlp", mlp_bias),
                  _linear(f"{m}.{down}", inter, hidden, "mlp", mlp_bias, row=True)]


def nemotron(f: Fields, layers: list, dims) -> list[Module]:
    """NemotronForCausalLM (Nemotron-4, Minitron; modeling_nemotron.py): q/k/v/o_proj biased with attention_bias,
    the plain MLP's up_proj / down_proj (relu2) with mlp_bias, input_layernorm and post_attention_layernorm
    (NemotronLayerNorm1P: weight and bias), the final norm likewise; untied by default. vLLM 0.34 nemotron.py keeps
    the NemotronLayerNorm1P weights and biases (one dimension, default loader) and o_proj's and down_proj's biases
    (RowParallelLinear) whole."""
    hidden = f.int("hidden_size")
    out = _ends_layer_norm(f, hidden, False)
    for i in range(len(layers)):
        out += _plain_layer(i, hidden, dims, _width(f, hidden), bias=f.flag("attention_bias"),
                            mlp_bias=f.flag("mlp_bias"), norms=("input_layernorm", "post_attention_layernorm"),
                            norm_bias=True)
    return out


def jais2(f: Fields, layers: list, dims) -> list[Module]:
    """Jais2ForCausalLM (modeling_jais2.py): q/k/v/o_proj biased with attention_bias and the plain MLP's up_proj /
    down_proj with mlp_bias (both true by default: Jais2Config), input_layernorm and post_attention_layernorm
    (nn.LayerNorm, weight and bias), the final norm likewise; untied by default."""
    hidden = f.int("hidden_size")
    out = _ends_layer_norm(f, hidden, False)
    for i in range(len(layers)):
        out += _plain_layer(i, hidden, dims, _width(f, hidden), bias=f.flag("attention_bias", default=True),
                            mlp_bias=f.flag("mlp_bias", default=True),
                            norms=("input_layernorm", "post_attention_layernorm"), norm_bias=True)
    return out


def arcee(f: Fields, layers: list, dims) -> list[Module]:
    """ArceeForCausalLM (AFM; modeling_arcee.py): q/k/v/o_proj, the plain MLP's up_proj / down_proj with mlp_bias,
    two RMSNorms; untied by default. q/k/v/o_proj take attention_bias, which params_decoder.decoder("arcee") does not
    count: such a config gets no table."""
    _no_attention_bias(f, "params.decoder('arcee') does not count the attention biases ArceeAttention builds")
    hidden = f.int("hidden_size")
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        out += _plain_layer(i, hidden, dims, _width(f, hidden), bias=False, mlp_bias=f.flag("mlp_bias"),
                            norms=("input_layernorm", "post_attention_layernorm"), norm_bias=False)
    return out


def nanochat(f: Fields, layers: list, dims) -> list[Module]:
    """NanoChatForCausalLM (modeling_nanochat.py): q/k/v/o_proj and the plain MLP's fc1 / fc2 without biases;
    NanoChatRMSNorm holds no weight, so no norm appears (nor q_norm / k_norm); untied by default. q/k/v/o_proj take
    attention_bias, which params_decoder.decoder("nanochat") does not count: such a config gets no table."""
    _no_attention_bias(f, "params.decoder('nanochat') does not count the attention biases NanoChatAttention builds")
    hidden = f.int("hidden_size")
    out = [m for m in _ends(f, hidden, False, 0) if m.name != "norm"]
    for i in range(len(layers)):
        out += _plain_layer(i, hidden, dims, _width(f, hidden), bias=False, mlp_bias=False, norms=(),
                            norm_bias=False, up="fc1", down="fc2")
    return out


def apertus(f: Fields, layers: list, dims) -> list[Module]:
    """ApertusForCausalLM (modeling_apertus.py; vLLM 0.34 apertus.py): q/k/v/o_proj, q_norm and k_norm over
    head_dim, attention_layernorm and feedforward_layernorm (RMSNorm), the plain MLP's up_proj / down_proj and the
    xIELU activation's two one-element parameters mlp.act_fn.alpha_p / alpha_n (plain nn.Parameters in vLLM's XIELU:
    whole on every rank); untied by default. params_decoder.decoder("apertus") counts the xIELU scalars whatever the
    activation and no attention biases: a config with attention_bias or another hidden_act (which vLLM 0.34's
    ApertusMLP refuses) gets no table."""
    heads, kv, head_dim = dims[:3]
    _no_attention_bias(f, "params.decoder('apertus') does not count the attention biases ApertusAttention builds")
    if f.get("hidden_act", default="xielu") != "xielu":
        raise ConfigError("hidden_act: ApertusMLP holds xIELU's parameters only with hidden_act xielu")
    hidden = f.int("hidden_size")
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _plain_layer(i, hidden, dims, _width(f, hidden), bias=False, mlp_bias=False,
                            norms=("attention_layernorm", "feedforward_layernorm"), norm_bias=False)
        out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim),
                Module(f"{m}.act_fn.alpha_p", 0, 1, "mlp", whole=True),
                Module(f"{m}.act_fn.alpha_n", 0, 1, "mlp", whole=True)]
    return out


def apertus1p5_text(f: Fields, layers: list, dims) -> list[Module]:
    """Apertus1p5TextForCausalLM (modeling_apertus1p5.py: Apertus' decoder under the same names) as
    params_decoder.apertus1p5_text counts it: Apertus' table, with an lm_head of output_vocab_size rows where the config
    prunes the head and does not tie it. vLLM 0.34 registers no Apertus 1.5 model: the table follows apertus.py's
    rule for the same modules (norms and the xIELU scalars whole), not read for Apertus 1.5."""
    out = apertus(f, layers, dims)
    rows = f.int("output_vocab_size", default=None, minimum=1)
    if rows is None or f.flag("tie_word_embeddings", default=False):
        return out
    hidden = f.int("hidden_size")
    return [replace(m, weight=rows * hidden) if m.name == "lm_head" else m for m in out]


# -- VaultGemma, Granite SWA (params_generic.count_params) -------------------------------------------------------------

def vaultgemma(f: Fields, layers: list, dims) -> list[Module]:
    """VaultGemmaForCausalLM (modeling_vaultgemma.py): q/k/v/o_proj biased with attention_bias, two norms a layer
    named input_layernorm and pre_feedforward_layernorm (VaultGemmaRMSNorm, zero-centred: whole on every rank as
    fusers/rms_norm.py TPAwareGemmaRMSNorm), the gated MLP; the head tied unless tie_word_embeddings is false."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    bias = f.flag("attention_bias")
    out = _ends(f, hidden, True, 0)
    for i in range(len(layers)):
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim, bias)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.pre_feedforward_layernorm", hidden)]
        out += _mlp(f"layers.{i}.mlp", hidden, _width(f, hidden), "mlp")
    return out


def granite_swa(f: Fields, layers: list, dims) -> list[Module]:
    """GraniteSWAForCausalLM (modeling_granite_swa.py): Granite's modules under Llama's names (q/k/v/o_proj biased
    with attention_bias, two RMSNorms, the gated MLP; untied by default) and self_attn.sinks, one logit a query head
    (GraniteSWAAttention). vLLM 0.34 granite.py (GraniteSWAForCausalLM) builds sinks of the rank's heads (its
    loader sharded_weight_loader(0): split with the heads), and only where layer_types is set or attention_sinks
    says so (granite_layer_attn_params); the table counts the checkpoint's. MLP biases with mlp_bias
    (params_generic.dense_mlp_bias)."""
    heads = dims[0]
    out = _gqa(f, layers, dims)
    return out + [Module(f"layers.{i}.self_attn.sinks", 0, heads, "attention") for i in range(len(layers))]


def hunyuan_v1_dense(f: Fields, layers: list, dims) -> list[Module]:
    """HunYuanDenseV1ForCausalLM (Hunyuan dense; modeling_hunyuan_v1_dense.py): Llama's modules and names (q/k/v/o_proj
    biased with attention_bias, two RMSNorms, the gated MLP; untied by default) and self_attn.query_layernorm /
    key_layernorm over head_dim. vLLM 0.34 serves it on the Transformers backend (registry.py
    _TRANSFORMERS_SUPPORTED_MODELS), whose base_model_tp_plan names only embed_tokens: its linears are split by the
    fusers, read here but not run: fusers/qkv.py QKVFuser (the three linears of the layer's input, q_proj the
    widest, into a QKVParallelLinear; o_proj, the linear the module returns, rowwise) and fusers/glu.py GLUFuser
    (gate_proj and up_proj merged, down_proj rowwise); its RMSNorms, the q/k norms included, are whole
    (fusers/rms_norm.py). HunYuanDenseV1MLP builds no biases whatever mlp_bias says (nor does the counter count
    any)."""
    head_dim = dims[2]
    out = _gqa(f, layers, dims)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += [_float(f"{a}.query_layernorm", head_dim), _float(f"{a}.key_layernorm", head_dim)]
    return out


def diffllama(f: Fields, layers: list, dims) -> list[Module]:
    """DiffLlamaForCausalLM (modeling_diffllama.py): Llama's modules and names (q/k/v/o_proj biased with
    attention_bias, two RMSNorms, the gated MLP; untied by default) and self_attn.lambda_q1 / lambda_k1 / lambda_q2 /
    lambda_k2, plain parameters of head_dim (the groupnorm has no weight). vLLM 0.34 registers no DiffLlama model:
    it would run on the Transformers backend (registry.py _try_resolve_transformers), whose base_model_tp_plan
    names only embed_tokens, so the linears split as its fusers match them (read, not run: fusers/qkv.py, glu.py)
    and a parameter of the attention module itself, as the lambdas, is not replaced: whole on every rank, as the
    norms. Not served by a vLLM model file: the rule for the same modules elsewhere, not read for DiffLlama."""
    head_dim = dims[2]
    out = _gqa(f, layers, dims)
    for i in range(len(layers)):
        out += [Module(f"layers.{i}.self_attn.{name}", 0, head_dim, "attention", whole=True)
                for name in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")]
    return out


def bitnet(f: Fields, layers: list, dims) -> list[Module]:
    """BitNetForCausalLM (modeling_bitnet.py), as params_dense.bitnet counts it (with BitNetConfig's defaults):
    q/k/v/o_proj biased with attention_bias, self_attn.attn_sub_norm over hidden_size (before o_proj), the gated
    MLP with mlp.ffn_sub_norm over intermediate_size (before down_proj), two RMSNorms a layer; an LM head of its own
    unless tie_word_embeddings. vLLM 0.34 registers no BitNet model: it would run on the Transformers backend
    (registry.py _try_resolve_transformers), with no base_model_tp_plan, so its linears split as the fusers match
    them (read, not run: fusers/qkv.py QKVFuser, o_proj rowwise as the linear the attention returns; fusers/glu.py
    GLUFuser) and every RMSNorm, the sub-norms included, is a full-width TPAwareRMSNorm (fusers/rms_norm.py, which
    all-gathers a sharded input): whole on every rank. The published checkpoints' own format (quant_method
    "bitnet": ternary weights packed four to a byte, with a weight_scale a linear) is not one whose bytes kvplan
    knows: such a config is refused by the byte count, whatever this table says."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size", default=2560)
    inter = f.int("intermediate_size", default=6912, maximum=10**9)
    bias = f.flag("attention_bias")
    vocab = f.int("vocab_size", default=128_256)
    out = [Module("embed_tokens", 0, vocab * hidden, "embeddings"), _float("norm", hidden)]
    if not f.flag("tie_word_embeddings", default=False):
        out.append(Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, head_dim, bias)
        out += [_float(f"{a}.attn_sub_norm", hidden), _float(f"{m}.ffn_sub_norm", inter),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        out += _mlp(m, hidden, inter, "mlp")
    return out


DENSE_MORE = {"cohere": cohere, "starcoder2": starcoder2, "phi": phi, "olmo2": olmo2, "olmo": olmo,
              "seed_oss": seed_oss, "smollm3": llama_shaped, "ministral3": llama_shaped, "ministral": llama_shaped,
              "exaone": exaone, "nemotron": nemotron, "apertus": apertus, "arcee": arcee, "helium": helium,
              "vaultgemma": vaultgemma, "cwm": cwm, "iquestcoder": iquestcoder, "jais2": jais2, "nanochat": nanochat,
              "granite_swa": granite_swa, "hunyuan_v1_dense": hunyuan_v1_dense,
              "diffllama": diffllama, "bitnet": bitnet,
              "apertus1p5_text": apertus1p5_text}
