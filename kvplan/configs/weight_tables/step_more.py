"""Per-module parameter tables (configs/weight_tables/__init__.py) of the last MoE text models kvplan read without one:
Step-3.5 / Step-3.7's text model (step3p5), Muse Spark's (muse_spark_text: _muse_spark_text), Inkling under vLLM's
own config type (inkling_model: _inkling_model) and Step-5 (step5: _step5), each mirroring its counter
(params_step.step3p5, params_muse.muse_spark_text, vllm_own.inkling_model_params, params_step.step5) term by term.
Step-3.5 below.

Names: the checkpoints' (Step-3.5-Flash; Step-3.7-Flash keeps the same names under its wrapper, conversion_mapping.py
"step3p7"), which transformers 5.25 renames on load: the routed experts stacked per layer as moe.gate_proj /
moe.up_proj / moe.down_proj (one [experts, out, in] tensor each, concatenated into mlp.experts.gate_up_proj and
renamed mlp.experts.down_proj), the router moe.gate (mlp.gate) and its moe.router_bias
(mlp.gate.e_score_correction_bias), the shared expert share_expert.* (mlp.shared_experts.*). vLLM 0.34 step3p5.py
Step3p5Model.load_weights reads the same packed names (expert_params_mapping), and also a per-expert form
(moe.experts.N.gate_proj, which LLM Compressor writes); the table names the packed form, so an exclusion list that
names single experts of the per-expert form is not matched by it.

What vLLM 0.34 holds whole on every TP rank (step3p5.py), besides the embeddings and head it splits by vocab:
- the GemmaRMSNorms: input_layernorm, post_attention_layernorm, the final norm, and q_norm / k_norm of head_dim
  (Step3p5Attention: whole, as the q / k it normalizes are per head);
- the router: FusedMoEBlock.gate, a GateLinear (fused_moe/router/gate_linear.py, a ReplicatedLinear) built with
  params_dtype float32 and no quant_config, and router_bias, an nn.Parameter of moe_num_experts in float32; both
  whole (kvplan sizes them at the checkpoint's dtype unless configs/param_fp32.py holds a rule for them).
Split: q/k/v_proj (QKVParallelLinear: k / v by KV head), o_proj (RowParallelLinear, bias=False whatever
attention_bias says), g_proj (ColumnParallelLinear over the heads), the dense MLP and the shared expert
(Step3p5MLP: MergedColumnParallelLinear + RowParallelLinear), the routed experts (FusedMoE).
Where transformers and vLLM differ: transformers builds q/k/v/o biases with attention_bias and MLP biases with
mlp_bias, vLLM builds neither o_proj's nor the MLPs' bias (no released config sets either flag); transformers builds
g_proj always (gating, a class attribute, True: one gate a head), vLLM only with use_head_wise_attn_gate (which the
released configs set): the table and the counter follow the checkpoint as transformers reads it, and leave g_proj
out where a config writes use_head_wise_attn_gate false.
"""

from __future__ import annotations

from ..fields import Fields
from ..params_step import step3p5_fields
from . import Module, _ends, _float, _linear, _mlp


def _step3p5(f: Fields, layers: list, dims) -> list:
    s = step3p5_fields(f, len(layers))
    hidden, bias = s.hidden, s.attention_bias
    out = _ends(f, hidden, False, 128815)
    for i, layer in enumerate(s.layers):
        a, hd = f"layers.{i}.self_attn", layer.head_dim
        out += [_linear(f"{a}.q_proj", hidden, layer.heads * hd, "attention", bias),
                _linear(f"{a}.k_proj", hidden, layer.kv * hd, "attention", bias, kv_heads=layer.kv),
                _linear(f"{a}.v_proj", hidden, layer.kv * hd, "attention", bias, kv_heads=layer.kv),
                _linear(f"{a}.o_proj", layer.heads * hd, hidden, "attention", bias, row=True),
                _float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd)]
        if layer.gate_outputs:
            out.append(_linear(f"{a}.g_proj", hidden, layer.gate_outputs, "attention"))
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if layer.sparse:
            m, e = f"layers.{i}.moe", s.experts
            # one stacked tensor per projection for all the experts (no "{e}" in the name: every expert's is it)
            out += [Module(f"{m}.gate_proj", e * hidden * s.moe_inter, 0, "experts", e, inputs=hidden),
                    Module(f"{m}.up_proj", e * hidden * s.moe_inter, 0, "experts", e, inputs=hidden),
                    Module(f"{m}.down_proj", e * s.moe_inter * hidden, 0, "experts", e, inputs=s.moe_inter),
                    _float(f"{m}.gate", hidden * e, "router"), _float(f"{m}.router_bias", e, "router")]
            out += _mlp(f"layers.{i}.share_expert", hidden, s.shared_inter, "shared experts", s.mlp_bias)
        else:
            out += _mlp(f"layers.{i}.mlp", hidden, s.inter, "mlp", s.mlp_bias)
    return out


def _muse_spark_text(f: Fields, layers: list, dims) -> list:
    """Muse Spark's text model (params_muse.muse_spark_text), named as the checkpoints (transformers' names, which
    vLLM 0.34 vllm/models/muse_spark/common/omni.py OMNI_WEIGHTS_MAPPER maps to its own). What vLLM 0.34 holds
    whole on every TP rank (vllm/models/muse_spark/nvidia/model.py, common/layers.py): the norms
    (input_layernorm as pre_qkv_proj_norm, pre_ / post_feedforward_layernorm, the MoE's pre_expert_norm and
    post_expert_norm, the final norm), the two residual gates (MuseSparkNormPreservingResidualConnection.gate, of
    hidden_size), the router (MuseSparkMoE.router: GateLinear, float32) and its expert_bias (a float32 buffer), and
    the MoE's pooler and unpooler (mlp.pre_expert_proj / post_expert_proj): ReplicatedLinear with
    quant_config=None, so whole and never quantized; MuseSparkMoE splits their output columns over TP only under
    its TEP optimisations (one data-parallel rank, tokens replicated over TP, a Blackwell GPU, ...) and then
    still keeps the full weights loaded on every rank ("The full weights stay loaded"). Split: q/k/v/gate_proj
    (MuseSparkQKVOGateParallelLinear, by heads), o_proj (RowParallelLinear), the dense MLP (LlamaMLP), the routed
    experts (FusedMoE), the embeddings and LM head (by vocab)."""
    from ..params_muse import muse_spark_fields

    s = muse_spark_fields(f, len(layers))
    h, m, e, hd = s.hidden, s.moe_hidden, s.experts, s.head_dim
    out = _ends(f, h, False, 202048)
    for i, sparse in enumerate(s.sparse):
        a = f"layers.{i}.self_attn"
        out += [_linear(f"{a}.q_proj", h, s.heads * hd, "attention", s.bias),
                _linear(f"{a}.k_proj", h, s.kv * hd, "attention", s.bias, kv_heads=s.kv),
                _linear(f"{a}.v_proj", h, s.kv * hd, "attention", s.bias, kv_heads=s.kv),
                _linear(f"{a}.o_proj", s.heads * hd, h, "attention", s.bias, row=True),
                _linear(f"{a}.gate_proj", h, s.heads * hd, "attention")]
        out += [_float(f"layers.{i}.{n}", h) for n in ("input_layernorm", "pre_feedforward_layernorm",
                                                         "post_feedforward_layernorm", "post_attention_residual_gate.gate",
                                                         "post_feedforward_residual_gate.gate")]
        p = f"layers.{i}.mlp"
        if sparse:
            out += [_float(f"{p}.gate", e * h, "router"), _float(f"{p}.gate.e_score_correction_bias", e, "router"),
                    _linear(f"{p}.pre_expert_proj", h, m, "experts", whole=True), _float(f"{p}.pre_expert_norm", m),
                    Module(f"{p}.experts.gate_up_proj", e * 2 * s.moe_inter * m, 0, "experts", e, inputs=m),
                    Module(f"{p}.experts.down_proj", e * m * s.moe_inter, 0, "experts", e, inputs=s.moe_inter),
                    _float(f"{p}.experts.post_expert_norm", m),
                    _linear(f"{p}.post_expert_proj", m, h, "experts", whole=True)]
        else:
            out += _mlp(p, h, s.inter, "mlp")
    return out


def _inkling_model(f: Fields, layers: list, dims) -> list:
    """Inkling under vLLM's own config type (inkling_model: models/inkling/configs.py InklingModelConfig; the
    text_config of the public inkling_mm_model checkpoints), mirroring configs/vllm_own.py inkling_model_params and
    named as those checkpoints name their tensors (TML names, under model.llm.: the names vLLM 0.34
    nvidia/model.py _TmlForCausalLMBase.hf_to_vllm_mapper and moe.py InklingMoE.load_expert_weight read, and
    transformers 5.25 conversion_mapping.py "inkling_mm_model" renames; configs/weight_tables/hybrid_more.py
    inkling_text names the transformers form). Per layer attn.wq_du / wk_dv / wv_dv / wr_du (vLLM's qkvr), attn.wo_ud,
    attn.q_norm / k_norm, attn.k_sconv / v_sconv, attn.rel_logits_proj.proj, attn_norm, mlp_norm, attn_sconv,
    mlp_sconv; a MoE layer's mlp.gate (its global_scale with use_global_scale, its bias with use_gate_bias),
    mlp.experts.w13_weight / w2_weight (stacked), mlp.shared_experts.shared_w13_weight / shared_w2_weight; a dense
    layer's mlp.w13_dn / w2_md (and global_scale); embed, embed_norm (use_embed_norm), norm, unembed (the LM head).

    Whole on every TP rank in vLLM 0.34 (nvidia/model.py, attention.py, moe.py, mlp.py): embed
    (InklingReplicatedEmbedding: all padded_vocab_size rows on every rank; the LM head stays split), the norms
    (InklingRMSNorm: embed_norm, attn_norm, mlp_norm, q_norm, k_norm, norm), rel_logits_proj.proj (a plain
    Parameter), the gate (InklingGate: its weight padded to a multiple of 8 rows on the GPU, beyond the checkpoint's:
    vLLM's profile adds them, Module.vllm_delta, configs/param_vllm_load.py), global_scale and bias (float32), the dense MLP's global_scale, and wo_ud's bias
    (RowParallelLinear) with o_bias. Split: qkvr (MergedColumnParallelLinear; K and V sized to max(KV heads, TP)
    heads, so a rank holds one whole KV head above the KV heads: Module.kv_heads), k_sconv / v_sconv (by KV
    channel), attn_sconv / mlp_sconv (hidden_size // TP channels a rank), the routed experts, the sink experts
    (InklingSinkExperts: the intermediate dim over TP), w13_dn / w2_md."""
    from ..param_vllm_load import inkling_gate_rows
    from ..vllm_own import _kernel, _local_ids, inkling_model_sizes, inkling_model_widths

    hidden, kernel, d_rel = f.int("hidden_size"), _kernel(f), f.int("d_rel")
    n = len(layers)
    local = _local_ids(f, max(n, f.int("num_hidden_layers")))
    inter, dense_inter = inkling_model_widths(f)
    routed, shared = f.int("n_routed_experts", minimum=0), f.int("n_shared_experts", minimum=0)
    scale, gate_bias, q_bias, o_bias = (f.flag("use_global_scale"), f.flag("use_gate_bias"), f.flag("q_bias"),
                                        f.flag("o_bias"))
    vocab = f.int("padded_vocab_size", default=f.int("vocab_size"))
    out = [Module("embed", 0, vocab * hidden, "embeddings", whole=True), _float("norm", hidden),
           Module("model.llm.unembed", vocab * hidden, 0, "lm_head", top=True, inputs=hidden)]
    if f.flag("use_embed_norm"):
        out.append(_float("embed_norm", hidden))
    dense_layers = f.int("dense_mlp_idx", minimum=0)
    for i in range(n):
        heads, kv, hd = inkling_model_sizes(f, i in local)
        extent = f.int("sliding_window_size") if i in local else f.int("rel_extent")
        a, m = f"layers.{i}.attn", f"layers.{i}.mlp"
        out += [_linear(f"{a}.wq_du", hidden, heads * hd, "attention", q_bias),
                _linear(f"{a}.wk_dv", hidden, kv * hd, "attention", q_bias, kv_heads=kv),
                _linear(f"{a}.wv_dv", hidden, kv * hd, "attention", q_bias, kv_heads=kv),
                _linear(f"{a}.wr_du", hidden, heads * d_rel, "attention", q_bias),
                _linear(f"{a}.wo_ud", heads * hd, hidden, "attention", o_bias, row=True),
                _float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd),
                *[Module(f"{a}.{x}_sconv", 0, kv * hd * kernel, "attention", kv_heads=kv, kv_other=kv * hd * kernel)
                  for x in "kv"],
                Module(f"{a}.rel_logits_proj.proj", 0, d_rel * extent, "attention", whole=True),
                _float(f"layers.{i}.attn_norm", hidden), _float(f"layers.{i}.mlp_norm", hidden),
                _float(f"layers.{i}.attn_sconv", hidden * kernel, "other"),
                _float(f"layers.{i}.mlp_sconv", hidden * kernel, "other")]
        if i < dense_layers:
            out += [_linear(f"{m}.w13_dn", hidden, 2 * dense_inter, "mlp"),
                    _linear(f"{m}.w2_md", dense_inter, hidden, "mlp", row=True)]
            if scale:
                out.append(_float(f"{m}.global_scale", 1, "router"))
            continue
        out.append(Module(f"{m}.gate", 0, (routed + shared) * hidden, "router",
                          vllm_delta=inkling_gate_rows(routed + shared, hidden)))
        if scale:
            out.append(_float(f"{m}.gate.global_scale", 1, "router"))
        if gate_bias:
            out.append(_float(f"{m}.gate.bias", routed, "router"))
        out += [Module(f"{m}.experts.w13_weight", routed * 2 * inter * hidden, 0, "experts", routed, inputs=hidden),
                Module(f"{m}.experts.w2_weight", routed * hidden * inter, 0, "experts", routed, inputs=inter),
                Module(f"{m}.shared_experts.shared_w13_weight", shared * 2 * inter * hidden, 0, "shared experts",
                       inputs=hidden),
                Module(f"{m}.shared_experts.shared_w2_weight", shared * hidden * inter, 0, "shared experts",
                       inputs=inter)]
    return out


def _step5(f: Fields, layers: list, dims) -> list:
    """Step-5 (params_step.step5), named as the Step-5-Preview checkpoint names its tensors (a public study of its
    safetensors headers: model.layers.N.self_attn.{q,k,v,o,g}_proj, q_norm, k_norm, sparse_indexer_{q,k,z,w},
    sparse_indexer_q_norm, sparse_indexer_k_norm, ssmax_s; moe.gate, moe.router_bias, moe.{gate,up,down}_proj
    stacked over the experts, share_expert.*; mlp.*; embed_tokens, norm, lm_head), which vLLM 0.34
    models/step5/nvidia/model.py loads into its fused modules (stacked_params_mapping: qkv_indexer_proj on DSA
    layers, qkvg_proj or qkv_proj + g_proj elsewhere).

    What each TP rank holds (model.py): whole: the norms (Step5RMSNorm; the indexer's k_norm a LayerNorm with its
    bias), ssmax_s (a Parameter of all the heads, loaded though unused), the indexer's single key head
    sparse_indexer_k and its sparse_indexer_z (Step5FusedQKVIndexerLinear: one index KV head, replicated on every
    rank), the router (GateLinear, float32) and router_bias (float32). Split by the index providers
    (sparse_config.index_tp_size, the checkpoints' num_provider_groups, 4): sparse_indexer_q (in the fused
    qkv_indexer_proj) and sparse_indexer_w (Step5SparseIndexerIndexTPLinear) are sharded over min(TP, 4)
    groups and replicated above them, so a rank holds 1 / min(TP, 4) of them: the arithmetic of a KV share,
    which the table gives them through Module.kv_heads (= index_tp_size). The rest splits over TP: q / g / o_proj
    by heads, k / v_proj by KV head (kv_heads), the MLPs and the shared expert (Step5MLP), the routed experts,
    the embeddings and LM head (by vocab). The checkpoint's float32 tensors (norms, sparse_indexer_w, ssmax_s,
    router_bias) are sized at the model dtype like the rest."""
    from ..params_step import step5_fields

    s = step5_fields(f, len(layers))
    hidden, kv, hd, e = s.hidden, s.kv, s.head_dim, s.experts
    out = _ends(f, hidden, False, 65536)
    for i, (heads, dsa, moe) in enumerate(s.layers):
        a = f"layers.{i}.self_attn"
        out += [_linear(f"{a}.q_proj", hidden, heads * hd, "attention"),
                _linear(f"{a}.k_proj", hidden, kv * hd, "attention", kv_heads=kv),
                _linear(f"{a}.v_proj", hidden, kv * hd, "attention", kv_heads=kv),
                _linear(f"{a}.o_proj", heads * hd, hidden, "attention", row=True),
                _float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd)]
        if s.gated:
            out.append(_linear(f"{a}.g_proj", hidden, heads, "attention"))
        if dsa:
            w = hidden * s.index_heads
            out += [_linear(f"{a}.sparse_indexer_q", hidden, s.index_heads * s.proxy, "attention",
                            kv_heads=s.index_groups),
                    _linear(f"{a}.sparse_indexer_k", hidden, s.index_kv * s.proxy, "attention", whole=True),
                    _linear(f"{a}.sparse_indexer_z", hidden, s.index_kv * s.proxy, "attention", whole=True),
                    Module(f"{a}.sparse_indexer_w", 0, w, "attention", kv_heads=s.index_groups, kv_other=w),
                    Module(f"{a}.ssmax_s", 0, heads, "attention", whole=True),
                    _float(f"{a}.sparse_indexer_q_norm", s.proxy), _float(f"{a}.sparse_indexer_k_norm", 2 * s.proxy)]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if moe:
            m = f"layers.{i}.moe"
            out += [_float(f"{m}.gate", hidden * e, "router"), _float(f"{m}.router_bias", e, "router"),
                    Module(f"{m}.gate_proj", e * hidden * s.moe_inter, 0, "experts", e, inputs=hidden),
                    Module(f"{m}.up_proj", e * hidden * s.moe_inter, 0, "experts", e, inputs=hidden),
                    Module(f"{m}.down_proj", e * s.moe_inter * hidden, 0, "experts", e, inputs=s.moe_inter)]
            out += _mlp(f"layers.{i}.share_expert", hidden, s.shared, "shared experts")
        else:
            out += _mlp(f"layers.{i}.mlp", hidden, s.inter, "mlp")
    return out


STEP_MORE = {"step3p5": _step3p5, "muse_spark_text": _muse_spark_text, "inkling_model": _inkling_model,
             "step5": _step5}
