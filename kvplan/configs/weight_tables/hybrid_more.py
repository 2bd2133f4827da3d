"""Per-module parameter tables (configs/weight_tables/__init__.py) of more hybrid and recurrent models: Bamba
(bamba). Each mirrors its counter term by term (params.bamba) and names the modules as the checkpoints'
safetensors do (transformers 5.25 modeling_bamba.py; the names vLLM's load_weights takes).

Bamba: vLLM 0.34 does not serve BambaForCausalLM (models/registry.py _PREVIOUSLY_SUPPORTED_MODELS: "supported
until v0.23.0"); the last release with models/bamba.py is 0.23.0 (0.24.0's sdist has none), and what each TP
rank holds whole is read there (bamba.py, layers/mamba/mamba_mixer2.py MambaMixer2, which 0.34 builds the same
way): the RMSNorms (input_layernorm, pre_ff_layernorm, final_layernorm), and of the Mamba-2 mixer with one group
the B and C rows of in_proj and channels of conv1d (configs/weight_tables/hybrid.py _mamba2); the rest split over
TP (QKVParallelLinear, MergedColumnParallelLinear gate_up_proj, RowParallelLinear o_proj / down_proj / out_proj,
all without biases in 0.23.0's BambaAttentionDecoderLayer and BambaMLP).
"""

from __future__ import annotations

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _experts, _float, _mlp, _qkvo
from .hybrid import _hybrid_ends, _mamba2, _mamba2_fields


# -- Bamba (params.bamba) --------------------------------------------------------------------------------------

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


# -- Qwen4-Exp (params.qwen4_exp) -------------------------------------------------------------------------------

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
    from .. import params as P
    from . import _gdn_after_inputs, _linear

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
            out += [_linear(f"{a}.in_proj_qkv", hidden, 2 * key_dim + value_dim, "linear attention"),
                    _linear(f"{a}.in_proj_z", hidden, value_dim, "linear attention"),
                    _linear(f"{a}.in_proj_b", hidden, vh, "linear attention"),
                    _linear(f"{a}.in_proj_a", hidden, vh, "linear attention"),
                    *_gdn_after_inputs(a, key_dim, value_dim, vh, vd, kernel, hidden)]
        m = f"{n}.mlp"
        out += _experts(m, experts, hidden, inter) + [_float(f"{m}.gate", hidden * experts, "router")]
        out += _mlp(f"{m}.shared_expert", hidden, shared, "shared experts")
        out.append(_float(f"{m}.shared_expert_gate", hidden, "router"))
        if i + 1 in ple_ids:
            p = f"{n}.ple"
            rows = P._ngram_rows(f, ple_ids.index(i + 1))
            out += [Module(f"{p}.ple_embedding.ngram_embedding", 0, rows * (width // ngram_heads), "embeddings"),
                    _linear(f"{p}.key_proj", width, streams, "other", whole=True),
                    _linear(f"{p}.value_proj", width, hidden, "other", whole=True),
                    _float(f"{p}.norm_key", streams), _float(f"{p}.norm_query", streams),
                    _float(f"{p}.norm_conv", streams),
                    Module(f"{p}.conv1d", 0, streams * ple_kernel, "other", whole=True)]
    return out


HYBRID_MORE = {"bamba": bamba, "qwen4_exp_text": qwen4_exp_text, "qwen3_8_flash_next_text": qwen4_exp_text}
