"""Per-module parameter tables (configs/weight_tables/__init__.py) of more hybrid and recurrent models: Bamba
(bamba), Qwen4-Exp (qwen4_exp_text, Qwen3.8-Flash-Next), GLM-5-Next (glm5_next_text, GLM-5.3-Flash), Inkling
(inkling_text), Inkling2 and Inkling2-Loop (inkling2_text, inkling2_loop_text, under their TML names), Lara mini
(lara_mini), ZAYA1 (zaya) and RWKV-4 (rwkv). Each mirrors its counter term by term (params_ssm.bamba,
params_linear_mixers.qwen4_exp, params_linear_mixers.glm5_next, params_hybrid.inkling_text / inkling2_text /
inkling2_loop_text,
params_linear_mixers.lara_mini, params_hybrid.zaya, params_ssm.rwkv) and names the modules as the checkpoints'
safetensors do
(transformers 5.25 modeling_bamba.py, modeling_qwen4_exp.py, modeling_glm5_next.py, modeling_inkling.py,
modeling_inkling2.py, modeling_inkling2_loop.py, modeling_lara_mini.py, modeling_zaya.py, modeling_rwkv.py and the
conversion_mapping.py renames; the names vLLM's load_weights takes).
What vLLM holds whole on every TP rank: the builders' docstrings.

Bamba: vLLM 0.34 has no model class for BambaForCausalLM (models/registry.py lists it in
_PREVIOUSLY_SUPPORTED_MODELS, "supported until v0.23.0"; that message is raised only when nothing else resolves:
registry.py inspect_model_cls first falls back, model_impl auto, to the Transformers backend, which
_try_resolve_transformers grants Bamba because modeling_bamba.py's attention dispatches through
ALL_ATTENTION_FUNCTIONS.get_interface (_can_set_attn_implementation); that backend has no Mamba state handling in
0.34 (model_executor/models/transformers/ names none), and whether it loads or runs Bamba was not tried). The last
release with models/bamba.py is 0.23.0 (0.24.0's sdist has none), and what each TP rank holds whole is read there
(bamba.py, layers/mamba/mamba_mixer2.py MambaMixer2, which 0.34 builds the same way): the RMSNorms (input_layernorm,
pre_ff_layernorm, final_layernorm), and of the Mamba-2 mixer with one group
the B and C rows of in_proj and channels of conv1d (configs/weight_tables/hybrid.py _mamba2); the rest split over
TP (QKVParallelLinear, MergedColumnParallelLinear gate_up_proj, RowParallelLinear o_proj / down_proj / out_proj,
all without biases in 0.23.0's BambaAttentionDecoderLayer and BambaMLP).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _experts, _float, _mlp, _qkvo
from .hybrid import _hybrid_ends, _mamba2, _mamba2_fields


# -- Bamba (params_ssm.bamba) --------------------------------------------------------------------------------------

def bamba(f: Fields, layers: list, dims) -> list[Module]:
    """BambaForCausalLM (transformers 5.25 BambaDecoderLayer): per layer the Mamba-2 mixer (layers.N.mamba: in_proj
    and out_proj biased under mamba_proj_bias, conv1d under mamba_conv_bias, the gated norm over
    mamba_expand x hidden) or attention (self_attn q/k/v/o_proj), input_layernorm and pre_ff_layernorm, the
    feed_forward gate/up/down_proj; embed_tokens, final_layernorm, lm_head (untied by default). vLLM 0.23.0
    bamba.py builds q/k/v/o and the MLP without biases, so a config with attention_bias or mlp_bias (which
    transformers would build) gets no table."""
    if f.flag("attention_bias") or f.flag("mlp_bias"):
        raise ConfigError("attention_bias / mlp_bias: vLLM 0.23.0's Bamba builds no attention or MLP biases")
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    nh, inner, groups, state, kernel = _mamba2_fields(f, hidden)
    proj_bias = f.flag("mamba_proj_bias")
    inter = f.int("intermediate_size")
    out = _hybrid_ends(f, hidden)
    for i, layer in enumerate(layers):
        if layer.caches:
            out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim)
        else:
            out += _mamba2(f"layers.{i}.mamba", hidden, nh, inner, groups, state, kernel,
                           f.flag("mamba_conv_bias", default=True), proj_bias, proj_bias, True)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.pre_ff_layernorm", hidden),
                *_mlp(f"layers.{i}.feed_forward", hidden, inter, "mlp")]
    return out


# -- Qwen4-Exp (params_linear_mixers.qwen4_exp) ------------------------------------------------------------------------

def _gated_residual(r: str, hc: int, hidden: int, low: int, inject: bool) -> list[Module]:
    """One hyper-connection mixer (transformers Qwen4ExpTextGatedResidual): hc_norm over hc x hidden, the low-rank
    input_mix_weight_down / up, and the block_inject_weight (hc outputs) where it combines. vLLM 0.34
    models/qwen4_exp/nvidia/hyperconnection.py GatedResidual builds all of them whole (down and inject merged in a
    MergedColumnParallelLinear with disable_tp=True, up a ReplicatedLinear, the norm GroupedGemmaRMSNorm) and
    with quant_config=None: whole on every TP rank and never quantized."""
    streams = hc * hidden
    out = [_float(f"{r}.hc_norm", streams),
           Module(f"{r}.input_mix_weight_down", 0, streams * low, "other", whole=True),
           Module(f"{r}.input_mix_weight_up", 0, low * streams, "other", whole=True)]
    if inject:
        out.append(Module(f"{r}.block_inject_weight", 0, streams * hc, "other", whole=True))
    return out


def qwen4_exp_text(f: Fields, layers: list, dims) -> list[Module]:
    """Qwen4ExpForCausalLM's text model (transformers 5.25 modeling_qwen4_exp.py Qwen4ExpTextModel; vLLM 0.34
    models/qwen4_exp/nvidia/model.py Qwen4ExpDecoderLayer): per layer attn_ and mlp_hyper_connection
    (_gated_residual); Gated DeltaNet under linear_attn (in_proj_qkv / z / b / a, conv1d, dt_bias, A_log, the
    gated norm, out_proj: Qwen3.5's, vLLM's QwenGatedDeltaNetAttention, which splits all but the norm over TP)
    or gated attention under self_attn (q_proj of 2 x heads x head_dim, k/v/o_proj, q_norm, k_norm) with the QSA
    indexer (indexer.index_qk_proj, q_layernorm, k_layernorm: vLLM qsa_indexer.py QSAIndexer builds the
    projection as a ReplicatedLinear, or packs it into qkv_proj as a shard every rank holds whole, qsa.py
    Qwen4ExpQSAQKVIndexerLinear); the MoE (Qwen3-Next's: experts, the router mlp.gate, shared_expert and its
    one-output shared_expert_gate, both whole in vLLM: GateLinear, ReplicatedLinear quant_config=None); and on
    ple_layer_ids layers (one-based) the PLE (ple_layer.py Qwen4ExpPLELayer): ple.ple_embedding.ngram_embedding
    (split over vLLM's Engram TP group, the TP group unless an engram_config sets another size), key_proj and
    value_proj (merged into kv_proj with disable_tp=True: whole, quantized with the checkpoint), norm_key,
    norm_query, norm_conv and the depthwise conv1d (an nn.Conv1d: whole). Then embed_tokens, the final
    hyper_connection_mixer (no inject) and the LM head (untied by default); no final norm, no MTP, no vision tower.

    What this table does not say: vLLM pads the merged down / inject projection to a multiple of 16 outputs
    (GatedResidual.pad_size), a few rows more than the checkpoint on every rank; vLLM replicates the shared expert
    where its intermediate size does not split evenly into the quantization's groups at the TP size
    (qwen3_next.py _should_replicate_misaligned_shared_expert), which a table that does not know the TP size
    cannot mark; and a ple_embedding_dtype (nvfp4, float8_e4m3fn) stores the n-gram tables in a format of their
    own, which the table counts as float embeddings."""
    from ..params_linear_mixers import _ngram_rows
    from . import _linear, _qwen3_5_gdn

    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: kvplan's Qwen4-Exp count has not read its biases")
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    hc = f.int("hc_count", default=4, minimum=2)
    streams, low = hc * hidden, f.int("hc_lowrank")
    experts, inter = f.int("num_experts"), f.int("moe_intermediate_size")
    shared = f.int("shared_expert_intermediate_size")
    kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    key_dim, value_dim = kh * kd, vh * vd
    kernel = f.int("linear_conv_kernel_dim", default=4)
    heads, kv, head = f.int("num_attention_heads"), f.int("num_key_value_heads"), f.int("head_dim")
    indexed = f.get("indexer_n_heads") is not None
    width = f.int("ple_embed_dim", default=hidden)
    ngram_heads = (f.int("ngram_size", default=3, minimum=2) - 1) * f.int("heads_per_ngram", default=8)
    ple_ids = sorted(set(f.int_list("ple_layer_ids") or []))
    ple_kernel = f.int("ple_conv_kernel_size", default=4)
    out = [Module("embed_tokens", 0, vocab * hidden, "embeddings")]
    if not f.flag("tie_word_embeddings"):
        out.append(Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    out += _gated_residual("hyper_connection_mixer", hc, hidden, low, False)
    for i, layer in enumerate(layers):
        n = f"layers.{i}"
        out += _gated_residual(f"{n}.attn_hyper_connection", hc, hidden, low, True)
        out += _gated_residual(f"{n}.mlp_hyper_connection", hc, hidden, low, True)
        if layer.caches:
            a = f"{n}.self_attn"
            out += _qkvo(a, hidden, heads, kv, head, q_width=2 * heads * head)
            out += [_float(f"{a}.q_norm", head), _float(f"{a}.k_norm", head)]
            if indexed:
                index = f.int("indexer_head_dim")
                out += [_linear(f"{a}.indexer.index_qk_proj", hidden,
                                (f.int("indexer_n_heads") + f.int("indexer_kv_heads")) * index, "attention",
                                whole=True),
                        _float(f"{a}.indexer.q_layernorm", index), _float(f"{a}.indexer.k_layernorm", index)]
        else:
            a = f"{n}.linear_attn"
            out += _qwen3_5_gdn(a, key_dim, value_dim, vh, vd, kernel, hidden)
        m = f"{n}.mlp"
        out += _experts(m, experts, hidden, inter) + [_float(f"{m}.gate", hidden * experts, "router")]
        out += _mlp(f"{m}.shared_expert", hidden, shared, "shared experts")
        out.append(_float(f"{m}.shared_expert_gate", hidden, "router"))
        if i + 1 in ple_ids:
            p = f"{n}.ple"
            rows = _ngram_rows(f, ple_ids.index(i + 1))
            out += [Module(f"{p}.ple_embedding.ngram_embedding", 0, rows * (width // ngram_heads), "embeddings"),
                    _linear(f"{p}.key_proj", width, streams, "other", whole=True),
                    _linear(f"{p}.value_proj", width, hidden, "other", whole=True),
                    _float(f"{p}.norm_key", streams), _float(f"{p}.norm_query", streams),
                    _float(f"{p}.norm_conv", streams),
                    Module(f"{p}.conv1d", 0, streams * ple_kernel, "other", whole=True)]
    return out


# -- GLM-5-Next (params_linear_mixers.glm5_next) -----------------------------------------------------------------------

def _kda(a: str, hidden: int, heads: int, head_dim: int, kernel: int) -> list[Module]:
    """GLM-5-Next's KDA under its checkpoints' names (transformers 5.25 conversion_mapping.py "glm5_next" renames
    them on load: f_a_proj / f_b_proj / dt_bias / A_log into forget_gate, q/k/v_conv1d packed into conv1d). vLLM 0.34
    glm5next/common/kda.py Glm5NextLinearAttention: q, k, v and b_proj in one MergedColumnParallelLinear split over
    TP, whose f_a_proj and g_a_proj shards every rank holds whole (replicated_shard_ids); f_b_proj, g_b_proj, the
    q/k/v convolutions (float32), dt_bias (float32) and A_log (float32) split by heads; o_norm (head_dim) whole;
    o_proj a RowParallelLinear."""
    from . import _linear

    qkv = heads * head_dim
    return [_linear(f"{a}.q_proj", hidden, qkv, "linear attention"),
            _linear(f"{a}.k_proj", hidden, qkv, "linear attention"),
            _linear(f"{a}.v_proj", hidden, qkv, "linear attention"),
            *[_float(f"{a}.{c}_conv1d", qkv * kernel, "linear attention") for c in "qkv"],
            _linear(f"{a}.f_a_proj", hidden, head_dim, "linear attention", whole=True),
            _linear(f"{a}.f_b_proj", head_dim, qkv, "linear attention"),
            _float(f"{a}.dt_bias", qkv, "linear attention"),
            _float(f"{a}.A_log", heads, "linear attention"),
            _linear(f"{a}.b_proj", hidden, heads, "linear attention"),
            _linear(f"{a}.g_a_proj", hidden, head_dim, "linear attention", whole=True),
            _linear(f"{a}.g_b_proj", head_dim, qkv, "linear attention"),
            _float(f"{a}.o_norm", head_dim),
            _linear(f"{a}.o_proj", qkv, hidden, "linear attention", row=True)]


def glm5_next_text(f: Fields, layers: list, dims) -> list[Module]:
    """GLM-5-Next's text model (GLM-5.3-Flash; transformers 5.25 modeling_glm5_next.py Glm5NextTextModel, vLLM 0.34
    models/glm5next/common/model.py Glm5NextDecoderLayer), named as the checkpoints are: per layer the
    hyper-connection mixers hc_attn_fn / _base / _scale and hc_ffn_* ((2 + hc_mult) x hc_mult x hc_mult x hidden,
    (2 + hc_mult) x hc_mult and 3: vLLM builds them as float32 nn.Parameters, whole on every rank), KDA (_kda) or
    MLA (q_a_proj and kv_a_proj_with_mqa whole: attention.py Glm5NextMLAAttention fuses them into
    DeepSeekV2FusedQkvAProjLinear) with the DSA indexer (wq_b a ReplicatedLinear, wk and weights_proj fused with
    disable_tp=True, k_norm a float32 LayerNorm, and the k-pool's index_kpool_compress_ape (float32) and
    index_kpool_compress_gate: all whole), two norms, and the MLP (dense gate/up/down_proj, or the routed experts,
    the router mlp.gate (GateLinear) and its float32 e_score_correction_bias, shared_experts); embed_tokens, the
    final norm and the LM head (untied). vLLM 0.34 builds KDA and MLA (their indexers too) with quant_config=None:
    the table counts their linears as the checkpoint stores them, and a format's list that does not keep them is
    one vLLM would load only where the checkpoint keeps them in bf16 anyway (it dequantizes an FP8 checkpoint's
    q_a_proj / kv_a_proj_with_mqa / o_proj and wk to bf16 on load: load_weights _try_load_fp8_attn_proj,
    _try_load_fp8_indexer_wk), which kvplan does not add. No table for a config whose indexer_types (or
    index_topk_pattern / index_topk_freq) has layers reuse another's indexer: transformers builds no indexer
    there, vLLM 0.34 builds one on every MLA layer, and the count follows neither; nor for attention_bias, whose
    biases the count does not hold."""
    from ..params_linear_mixers import glm5_next_kda_widths
    from . import _indexer, _mla_widths, _norms_and_ffn
    from ..param_parts import dense_first, mlp_layer_types

    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: kvplan's GLM-5-Next count has not read its biases")
    types = f.list("indexer_types") or []
    if "shared" in types or f.get("index_topk_pattern") is not None or f.get("index_topk_freq") not in (None, 1):
        raise ConfigError("indexer_types with shared layers: transformers and vLLM 0.34 build their indexers apart")
    hidden, heads = f.int("hidden_size"), f.int("num_attention_heads")
    lin_heads, lin_dim, kernel = glm5_next_kda_widths(f)
    q_rank = f.int("q_lora_rank")
    widths = (f.int("kv_lora_rank"), f.int("qk_rope_head_dim", default=0, minimum=0), f.int("qk_nope_head_dim"),
              f.int("v_head_dim"))
    index, index_heads, kpool = f.int("index_head_dim"), f.int("index_n_heads"), f.int("index_kpool", default=16)
    hc = f.int("hc_mult", default=4)
    mix = (2 + hc) * hc
    experts, moe_inter = f.int("n_routed_experts"), f.int("moe_intermediate_size")
    shared = f.int("n_shared_experts", default=1, minimum=0) * moe_inter
    inter = f.int("intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=0, minimum=0)))
    vocab = f.int("vocab_size")
    out = [Module("embed_tokens", 0, vocab * hidden, "embeddings"), _float("norm", hidden),
           Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden)]
    for i, (layer, kind) in enumerate(zip(layers, kinds)):
        n, a = f"layers.{i}", f"layers.{i}.self_attn"
        for h in ("attn", "ffn"):
            out += [Module(f"{n}.hc_{h}_fn", 0, mix * hc * hidden, "other", whole=True),
                    Module(f"{n}.hc_{h}_base", 0, mix, "other", whole=True),
                    Module(f"{n}.hc_{h}_scale", 0, 3, "other", whole=True)]
        if layer.caches:
            out += _mla_widths(a, hidden, heads, q_rank or None, False, *widths)
            out += _indexer(a, hidden, q_rank, index, index_heads)
            out += [Module(f"{a}.indexer.index_kpool_compress_ape", 0, kpool * index, "attention", whole=True),
                    Module(f"{a}.indexer.index_kpool_compress_gate", 0, index * hidden, "attention", whole=True)]
        else:
            out += _kda(a, hidden, lin_heads, lin_dim, kernel)
        out += _norms_and_ffn(i, hidden, kind == "sparse", experts, moe_inter, shared, inter)
    return out


# -- Inkling (params_hybrid.inkling_text) ----------------------------------------------------------------------

def inkling_text(f: Fields, layers: list, dims) -> list[Module]:
    """InklingForCausalLM as transformers 5.25 builds and names it (modeling_inkling.py; a checkpoint of model_type
    inkling_text is one transformers wrote: conversion_mapping.py renames only the multimodal inkling_mm_model's
    TML names, model.llm.*, which vLLM's own inkling_model config reads and this table does not name).
    Per layer self_attn q/k/v/o_proj, r_proj (hidden -> heads x d_rel), k_sconv.conv1d / v_sconv.conv1d (depthwise
    over KV heads x head_dim), q_norm, k_norm, rel_logits_proj.proj (d_rel x extent), with the sliding layers'
    swa_* sizes; input / post_attention_layernorm; attn_sconv.conv1d and mlp_sconv.conv1d (depthwise over hidden);
    the MoE (mlp.gate over routed + shared experts, its global_scale and e_score_correction_bias, the fused
    experts.gate_up_proj / down_proj, shared_experts.gate_proj / up_proj / down_proj, each n_shared_experts x
    moe_intermediate_size) or the dense mlp (gate/up/down_proj and a global_scale); embed_tokens with its
    embed_norm, the final norm, an untied lm_head. What is built is transformers' choice, not the config's: vLLM's
    own InklingModelConfig defaults use_global_scale, use_gate_bias and use_embed_norm, which transformers does not
    read (it always builds the two global_scales, the score bias and embed_norm); the table, as the count, follows
    transformers.

    Whole on every TP rank, from vLLM 0.34 models/inkling/nvidia (whose InklingForCausalLM loads the TML names;
    these are the same tensors): embed_tokens (model.py InklingReplicatedEmbedding: the full vocabulary on every
    rank; the LM head stays split), the norms (InklingRMSNorm), rel_logits_proj.proj (attention.py: a plain
    Parameter), the router weight, global_scale and score bias (moe.py InklingGate; its weight padded to a multiple
    of 8 rows, which vLLM holds beyond the checkpoint and this table does not add) and the dense MLP's
    global_scale. Split: q/k/v/r (one MergedColumnParallelLinear qkvr, K and V by KV head, as k_sconv / v_sconv:
    InklingShortConv shards by the layer's KV channels), o_proj (wo_ud, RowParallelLinear), the experts, the
    shared experts (InklingSinkExperts: the intermediate dim split over TP), attn_sconv / mlp_sconv (hidden //
    tp_size channels a rank)."""
    from ..param_parts import dense_first, mlp_layer_types
    from ..params_hybrid import _sliding_layer, inkling_mlp, inkling_widths
    from . import _linear

    hidden, kernel, d_rel, full, swa = inkling_widths(f)
    moe_inter, dense_inter, experts, shared = inkling_mlp(f)
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("dense_mlp_idx", default=0, minimum=0)))
    vocab = f.int("vocab_size", default=201024)
    out = [Module("embed_tokens", 0, vocab * hidden, "embeddings", whole=True),
           _float("embed_tokens.embed_norm", hidden), _float("norm", hidden),
           Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden)]
    for i, (layer, kind) in enumerate(zip(layers, kinds)):
        heads, kv, head_dim, extent = swa if _sliding_layer(layer) else full
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, head_dim)
        out += [_linear(f"{a}.r_proj", hidden, heads * d_rel, "attention"),
                *[Module(f"{a}.{x}_sconv.conv1d", 0, kv * head_dim * kernel, "attention", kv_heads=kv,
                         kv_other=kv * head_dim * kernel) for x in "kv"],
                _float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim),
                Module(f"{a}.rel_logits_proj.proj", 0, d_rel * extent, "attention", whole=True),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden),
                _float(f"layers.{i}.attn_sconv.conv1d", hidden * kernel, "other"),
                _float(f"layers.{i}.mlp_sconv.conv1d", hidden * kernel, "other")]
        if kind == "sparse":
            out += [_float(f"{m}.gate", (experts + shared) * hidden, "router"),
                    _float(f"{m}.gate.global_scale", 1, "router"),
                    _float(f"{m}.gate.e_score_correction_bias", experts, "router"),
                    Module(f"{m}.experts.gate_up_proj", experts * 2 * moe_inter * hidden, 0, "experts", experts,
                           inputs=hidden),
                    Module(f"{m}.experts.down_proj", experts * hidden * moe_inter, 0, "experts", experts,
                           inputs=moe_inter),
                    *[Module(f"{m}.shared_experts.{p}", shared * moe_inter * hidden, 0, "shared experts",
                             inputs=moe_inter if p == "down_proj" else hidden)
                      for p in ("gate_proj", "up_proj", "down_proj")]]
        else:
            out += _mlp(m, hidden, dense_inter, "mlp") + [_float(f"{m}.global_scale", 1, "router")]
    return out


# -- Inkling2 (params_hybrid.inkling2_text) --------------------------------------------------------------------

@dataclass(frozen=True)
class _Tml(Module):
    """An Inkling2 module under the TML names its checkpoints keep (`model.llm.`: transformers 5.25
    conversion_mapping.py "inkling2_text" / "inkling2" rename them on load, to model. / model.language_model.)."""

    def names(self, expert: int = 0) -> list[str]:
        return ["model.llm." + self.name.replace("{e}", str(expert))]


def _tml(m: Module) -> Module:
    return _Tml(**{field.name: getattr(m, field.name) for field in fields(Module)})


def inkling2_text(f: Fields, layers: list, dims) -> list[Module]:
    """Inkling2's text model (transformers 5.25 modeling_inkling2.py Inkling2TextModel and the multimodal wrapper's
    lm_head), under the checkpoints' TML names (_Tml; relative to model.llm.): embed, embed_norm, norm, unembed
    (the LM head, vocab_size rows as stored, padded), the block-attention-residual queries attn_res.attn_queries.K
    (layer K + 1's: one query on sliding layers, three on full ones), attn_res.mlp_queries.K and
    attn_res.output_query; per layer attn.wq_du / wk_dv / wv_dv / wo_ud, gate_attn (hidden -> heads x head_dim),
    attn_sink_proj (hidden -> heads), wr_du (hidden -> heads x d_rel), rel_logits_proj.proj (d_rel x extent),
    q_l2_clip.scale and rel_l2_clip.scale, the K / V convolutions k_sconv / v_sconv (sliding: a depthwise weight;
    full: static_w and weight_proj), attn_norm (sliding) or q/k/v_input_norm (full), mlp_norm, attn_sconv and
    mlp_sconv; the MoE: mlp.gate (router), mlp.gate.bias (the score correction), mlp.experts.w13_weight / w2_weight.

    vLLM 0.34 does not serve Inkling2 (models/inkling builds Inkling's layers only: no sink, gate, attention
    residual or dynamic convolution), so what each TP rank holds whole is not read: the table follows the rule
    vLLM applies to the same kinds of module elsewhere, and says it is not read: the norms, the router and its
    bias (GateLinear-like), the relative-position tables rel_logits_proj.proj (whole in vLLM's Inkling), the
    attention-residual queries and the full layers' static convolution taps (plain parameters, not split by
    any layer vLLM has) whole; the projections, the experts, the clip scales (per head) and the short
    convolutions split."""
    from ..params_hybrid import INKLING2_DEFAULTS, _sliding_layer, inkling_widths
    from . import _linear

    hidden, kernel, d_rel, full, swa = inkling_widths(f, **INKLING2_DEFAULTS)
    experts = f.int("n_routed_experts", "num_local_experts", default=384)
    inter = f.int("moe_intermediate_size", "intermediate_size", default=2304)
    vocab = f.int("vocab_size", default=201024)
    out = [Module("embed", 0, vocab * hidden, "embeddings"), _float("embed_norm", hidden), _float("norm", hidden),
           Module("unembed", vocab * hidden, 0, "lm_head", inputs=hidden),
           Module("attn_res.output_query", 0, hidden, "other", whole=True)]
    for i, layer in enumerate(layers):
        sliding = _sliding_layer(layer)
        heads, kv, hd, extent = swa if sliding else full
        n, a = f"layers.{i}", f"layers.{i}.attn"
        if i > 0:
            out.append(Module(f"attn_res.attn_queries.{i - 1}", 0, (1 if sliding else 3) * hidden, "other",
                              whole=True))
        out += [Module(f"attn_res.mlp_queries.{i}", 0, hidden, "other", whole=True),
                _linear(f"{a}.wq_du", hidden, heads * hd, "attention"),
                _linear(f"{a}.wk_dv", hidden, kv * hd, "attention", kv_heads=kv),
                _linear(f"{a}.wv_dv", hidden, kv * hd, "attention", kv_heads=kv),
                _linear(f"{a}.wo_ud", heads * hd, hidden, "attention", row=True),
                _linear(f"{a}.gate_attn", hidden, heads * hd, "attention"),
                _linear(f"{a}.attn_sink_proj", hidden, heads, "attention"),
                _linear(f"{a}.wr_du", hidden, heads * d_rel, "attention"),
                Module(f"{a}.rel_logits_proj.proj", 0, d_rel * extent, "attention", whole=True),
                Module(f"{a}.q_l2_clip.scale", 0, heads * hd, "attention"),
                Module(f"{a}.rel_l2_clip.scale", 0, heads * d_rel, "attention")]
        for x in "kv":
            if sliding:
                out.append(Module(f"{a}.{x}_sconv.weight", 0, kv * hd * kernel, "attention", kv_heads=kv,
                                  kv_other=kv * hd * kernel))
            else:
                out += [Module(f"{a}.{x}_sconv.static_w", 0, kernel * kv * hd, "attention", whole=True),
                        _linear(f"{a}.{x}_sconv.weight_proj", hidden, kv * kernel, "attention", kv_heads=kv)]
        norms = ["attn_norm"] if sliding else ["q_input_norm", "k_input_norm", "v_input_norm"]
        out += [_float(f"{n}.{x}", hidden) for x in norms + ["mlp_norm"]]
        out += [_float(f"{n}.attn_sconv.weight", hidden * kernel, "other"),
                _float(f"{n}.mlp_sconv.weight", hidden * kernel, "other"),
                _float(f"{n}.mlp.gate", experts * hidden, "router"),
                _float(f"{n}.mlp.gate.bias", experts, "router"),
                Module(f"{n}.mlp.experts.w13_weight", experts * 2 * inter * hidden, 0, "experts", experts,
                       inputs=hidden),
                Module(f"{n}.mlp.experts.w2_weight", experts * hidden * inter, 0, "experts", experts, inputs=inter)]
    return [_tml(m) for m in out]


def inkling2_loop_text(f: Fields, layers: list, dims) -> list[Module]:
    """Inkling2-Loop's text model (transformers 5.25 modeling_inkling2_loop.py Inkling2LoopTextModel): Inkling2's
    (inkling2_text) plus, on each looped layer [loop_layer_index_start, loop_layer_index_end) (loop_config's
    core_start / core_end win), four message gates under the TML names (conversion_mapping.py
    "inkling2_loop_text"): layers.N.controllers.{attn, k, v, mlp}.down_weight (2 x hidden -> loop_gate_rank),
    gain_weight and forget_weight (loop_gate_rank -> hidden; transformers builds these two in float32, which the
    table cannot say: it sizes them in the checkpoint's float width, as the count), and the model's
    middle_cycle_cross_pass_queries and _kv_queries (2 x looped layers x hidden each: transformers merges them into
    message_input.query). vLLM 0.34 does not serve Inkling2-Loop: the gates' projections are counted as split
    linears, the queries whole, by the rule of inkling2_text (not read). The original checkpoints store their
    experts in NVFP4 / MXFP8, which transformers dequantizes on load; the table counts the experts' parameters,
    what a config's quantization_config then sizes."""
    from . import _linear

    hidden = f.int("hidden_size", default=2304)
    loop = f.obj("loop_config") or {}
    start = loop.get("core_start", f.int("loop_layer_index_start", default=6))
    end = loop.get("core_end", f.int("loop_layer_index_end", default=18))
    rank = f.check_int("loop_config.gate_rank", loop.get("gate_rank", f.int("loop_gate_rank", default=64)))
    out = inkling2_text(f, layers, dims)
    extra = [Module(f"middle_cycle_cross_pass_{q}", 0, 2 * (end - start) * hidden, "other", whole=True)
             for q in ("queries", "kv_queries")]
    for i in range(start, end):
        for c in ("attn", "k", "v", "mlp"):
            g = f"layers.{i}.controllers.{c}"
            extra += [_linear(f"{g}.down_weight", 2 * hidden, rank, "other"),
                      _linear(f"{g}.gain_weight", rank, hidden, "other"),
                      _linear(f"{g}.forget_weight", rank, hidden, "other")]
    return out + [_tml(m) for m in extra]


# -- Lara mini (params_linear_mixers.lara_mini) ------------------------------------------------------------------------

def lara_mini(f: Fields, layers: list, dims) -> list[Module]:
    """LaraMiniForCausalLM (transformers 5.25 modeling_lara_mini.py), named as its checkpoints are
    (conversion_mapping.py "lara_mini": the Gated DeltaNet's input projections fused in one linear_attn.in_proj, rows
    [q | k | v | z | b | a], and its gated norm linear_attn.out_norm): per layer GQA under self_attn (q/k/v/o_proj,
    q_norm and k_norm over head_dim) on full and sliding layers, else the Gated DeltaNet under linear_attn (in_proj,
    conv1d, dt_bias, A_log, out_norm over the value head, out_proj); the MoE (mlp.experts.gate_up_proj / down_proj
    as transformers stores them, the router mlp.gate, mlp.shared_expert gate/up/down_proj, no shared-expert gate);
    two norms; embed_tokens, norm, and the LM head unless tied (tied by default). No table with attention_bias,
    whose biases the count does not hold.

    vLLM 0.34 does not serve Lara mini (no registry entry): what each TP rank holds whole is not read, and follows
    vLLM's rule for the same modules in Qwen3-Next / Qwen3.5 (qwen3_next.py, layers/mamba/gdn): the norms (the
    gated norm over one value head included) and the router whole, the rest split."""
    from . import _gdn_after_inputs, _linear

    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: kvplan's Lara mini count has not read its biases")
    heads, kv, head = dims[:3] if dims else (0, 0, 0)
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    key_dim, value_dim = kh * kd, vh * vd
    kernel = f.int("linear_conv_kernel_dim", default=4)
    experts, inter = f.int("num_experts"), f.int("moe_intermediate_size")
    shared = f.int("shared_expert_intermediate_size")
    out = [Module("embed_tokens", 0, vocab * hidden, "embeddings"), _float("norm", hidden)]
    if not f.flag("tie_word_embeddings", default=True):
        out.append(Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i, layer in enumerate(layers):
        if layer.caches:
            a = f"layers.{i}.self_attn"
            out += _qkvo(a, hidden, heads, kv, head) + [_float(f"{a}.q_norm", head), _float(f"{a}.k_norm", head)]
        else:
            a = f"layers.{i}.linear_attn"
            gdn = _gdn_after_inputs(a, key_dim, value_dim, vh, vd, kernel, hidden)
            out += [_linear(f"{a}.in_proj", hidden, 2 * key_dim + 2 * value_dim + 2 * vh, "linear attention"),
                    *[_float(f"{a}.out_norm", vd) if m.name.endswith(".norm") else m for m in gdn]]
        m = f"layers.{i}.mlp"
        out += [Module(f"{m}.experts.gate_up_proj", experts * 2 * inter * hidden, 0, "experts", experts,
                       inputs=hidden),
                Module(f"{m}.experts.down_proj", experts * hidden * inter, 0, "experts", experts, inputs=inter),
                _float(f"{m}.gate", experts * hidden, "router"),
                *_mlp(f"{m}.shared_expert", hidden, shared, "shared experts"),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
    return out


# -- ZAYA1 (params_hybrid.zaya) ---------------------------------------------------------------------------------

def zaya(f: Fields, layers: list, dims) -> list[Module]:
    """ZayaForCausalLM in transformers' layout (transformers 5.25 modeling_zaya.py, whose names the checkpoints
    and vLLM 0.34 zaya.py load_weights share; a Megatron-style config, zaya_layers, gets no table, as no count):
    per layer self_attn.qkv_proj.q_proj / k_proj / v_proj_current / v_proj_delayed (attention_bias), its
    conv_qk_depthwise and conv_qk_grouped (with biases), self_attn.o_proj (attention_bias), qk_norm.temp; the MoE
    router mlp.gate: down_proj (with bias), router_states_scale (not on layer 0), router_mlp.norm, fc1, fc2 (with
    biases) and out_proj (num_experts + 1 classes); the experts mlp.experts.gate_up_proj / down_proj; two norms and
    post_attention_ / post_mlp_residual_scale (four vectors each); embed_tokens, input_hidden_states_scale / _bias,
    the final norm, and the LM head unless tied (tied by default; its bias under lm_head_bias).

    vLLM 0.34 zaya.py holds all of it whole on every TP rank but the embeddings, the LM head (VocabParallelEmbedding,
    ParallelLMHead) and the experts (FusedMoE): ZayaCCA's projections and ZayaAttention's o_proj are
    ReplicatedLinear with the quantization config, the router's down_proj and router_mlp ReplicatedLinear without
    one (never quantized), the convolutions nn.Conv1d, the norms, qk_norm.temp and the residual scales plain
    parameters."""
    from ..zaya_layout import is_megatron
    from . import _linear

    if is_megatron(f.raw):
        raise ConfigError("a Megatron-style ZAYA config (zaya_layers): kvplan counts transformers' layout only")
    hidden = f.int("hidden_size", default=2048)
    heads, kv = f.int("num_attention_heads", default=8), f.int("num_key_value_heads", default=2)
    head_dim = f.int("head_dim", default=128)
    bias = f.flag("attention_bias")
    q_width, kv_width = heads * head_dim, kv * head_dim
    channels = q_width + kv_width
    t0, t1 = f.int("cca_time0", default=2), f.int("cca_time1", default=2)
    experts = f.int("num_experts", "num_local_experts", default=16)
    router = f.int("router_hidden_size", default=256)
    inter = f.int("moe_intermediate_size", default=2048)
    vocab = f.int("vocab_size", default=262272)
    out = [Module("embed_tokens", 0, vocab * hidden, "embeddings"), _float("norm", hidden),
           Module("input_hidden_states_scale", 0, hidden, "other", whole=True),
           Module("input_hidden_states_bias", 0, hidden, "other", whole=True)]
    head_bias = vocab if f.flag("lm_head_bias") else 0
    if not f.flag("tie_word_embeddings", default=True):
        out.append(Module("lm_head", vocab * hidden, head_bias, "lm_head", top=True, inputs=hidden))
    elif head_bias:
        out.append(Module("lm_head", 0, head_bias, "lm_head", top=True))
    for i in range(len(layers)):
        n, a, g = f"layers.{i}", f"layers.{i}.self_attn", f"layers.{i}.mlp.gate"
        c = f"{a}.qkv_proj"
        out += [_linear(f"{c}.q_proj", hidden, q_width, "attention", bias, whole=True),
                _linear(f"{c}.k_proj", hidden, kv_width, "attention", bias, whole=True),
                _linear(f"{c}.v_proj_current", hidden, kv_width // 2, "attention", bias, whole=True),
                _linear(f"{c}.v_proj_delayed", hidden, kv_width // 2, "attention", bias, whole=True),
                Module(f"{c}.conv_qk_depthwise", 0, channels * t0 + channels, "attention", whole=True),
                Module(f"{c}.conv_qk_grouped", 0, channels * (channels // (heads + kv)) * t1 + channels,
                       "attention", whole=True),
                _linear(f"{a}.o_proj", q_width, hidden, "attention", bias, whole=True),
                Module(f"{a}.qk_norm.temp", 0, kv, "attention", whole=True),
                Module(f"{g}.down_proj", 0, hidden * router + router, "router", whole=True),
                *([Module(f"{g}.router_states_scale", 0, router, "router", whole=True)] if i else []),
                _float(f"{g}.router_mlp.norm", router, "router"),
                Module(f"{g}.router_mlp.fc1", 0, router * router + router, "router", whole=True),
                Module(f"{g}.router_mlp.fc2", 0, router * router + router, "router", whole=True),
                Module(f"{g}.router_mlp.out_proj", 0, router * (experts + 1), "router", whole=True),
                Module(f"{n}.mlp.experts.gate_up_proj", experts * 2 * inter * hidden, 0, "experts", experts,
                       inputs=hidden),
                Module(f"{n}.mlp.experts.down_proj", experts * hidden * inter, 0, "experts", experts, inputs=inter),
                _float(f"{n}.input_layernorm", hidden), _float(f"{n}.post_attention_layernorm", hidden)]
        for r in ("post_attention_residual_scale", "post_mlp_residual_scale"):
            out += [Module(f"{n}.{r}.{p}", 0, hidden, "other", whole=True)
                    for p in ("hidden_states_scale", "hidden_states_bias", "residual_scale", "residual_bias")]
    return out


# -- RWKV-4 (params_ssm.rwkv) ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Rwkv(Module):
    """An RWKV module under its checkpoints' root `rwkv.` (transformers 5.25 RwkvForCausalLM.rwkv; the head is
    `head`, a top module)."""

    def names(self, expert: int = 0) -> list[str]:
        return [self.name] if self.top else ["rwkv." + self.name]


def rwkv(f: Fields, layers: list, dims) -> list[Module]:
    """RwkvForCausalLM (RWKV-4; transformers 5.25 modeling_rwkv.py), named as its checkpoints are: rwkv.embeddings,
    blocks.0.pre_ln, per block the LayerNorms ln1 and ln2 (weight and bias), attention (time-mix) time_decay and
    time_first over attention_hidden_size, time_mix_key / _value / _receptance over hidden, key, value and
    receptance (hidden -> attention_hidden_size) and output back, feed_forward (channel-mix) time_mix_key and
    _receptance, key (hidden -> intermediate_size), receptance (hidden -> hidden) and value back; rwkv.ln_out and
    the untied head.

    vLLM 0.34 does not serve RWKV (no registry entry, nor in vLLM's earlier releases read): what each TP rank holds
    whole is not read, and follows vLLM's rule for the same kinds of module elsewhere: the LayerNorms whole, the
    time-mix vectors over hidden (they mix the whole input, as a norm) whole, time_decay and time_first (one a
    channel of the attention width, as Mamba's A and D) and the linears split (key / value / receptance as
    column-parallel, output and the channel-mix value as row-parallel), the embeddings and head split."""
    from . import _linear

    hidden = f.int("hidden_size")
    width = f.int("attention_hidden_size", default=hidden)
    inter = f.int("intermediate_size", default=4 * hidden, maximum=10**8)
    vocab = f.int("vocab_size", minimum=0)
    out = [Module("embeddings", 0, vocab * hidden, "embeddings"), _float("blocks.0.pre_ln", 2 * hidden),
           _float("ln_out", 2 * hidden)]
    if not f.flag("tie_word_embeddings"):
        out.append(Module("head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i in range(len(layers)):
        b = f"blocks.{i}"
        a, m = f"{b}.attention", f"{b}.feed_forward"
        out += [_float(f"{b}.ln1", 2 * hidden), _float(f"{b}.ln2", 2 * hidden),
                _float(f"{a}.time_decay", width, "attention"), _float(f"{a}.time_first", width, "attention"),
                *[Module(f"{a}.time_mix_{x}", 0, hidden, "attention", whole=True)
                  for x in ("key", "value", "receptance")],
                _linear(f"{a}.key", hidden, width, "attention"), _linear(f"{a}.value", hidden, width, "attention"),
                _linear(f"{a}.receptance", hidden, width, "attention"),
                _linear(f"{a}.output", width, hidden, "attention", row=True),
                *[Module(f"{m}.time_mix_{x}", 0, hidden, "mlp", whole=True) for x in ("key", "receptance")],
                _linear(f"{m}.key", hidden, inter, "mlp"), _linear(f"{m}.receptance", hidden, hidden, "mlp"),
                _linear(f"{m}.value", inter, hidden, "mlp", row=True)]
    return [_Rwkv(**{field.name: getattr(x, field.name) for field in fields(Module)}) for x in out]


HYBRID_MORE = {"bamba": bamba, "qwen4_exp_text": qwen4_exp_text, "qwen3_8_flash_next_text": qwen4_exp_text,
               "glm5_next_text": glm5_next_text, "inkling_text": inkling_text, "inkling2_text": inkling2_text,
               "inkling2_loop_text": inkling2_loop_text, "lara_mini": lara_mini, "zaya": zaya, "rwkv": rwkv}
