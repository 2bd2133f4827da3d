"""Per-module parameter tables (configs/weight_tables/__init__.py) of MiniMax-Text-01 / MiniMax-M1 (minimax_text_01,
minimax_m1, and the transformers-format minimax), Ling / Ring 1.x and 2.0 (bailing_moe), DBRX (dbrx),
DeepSeek-MoE v1 (deepseek), Ling 3.0 (bailing_hybrid with BailingMoeV3ForCausalLM) and Ling / Ring 2.5 (bailing_hybrid
with BailingMoeV2_5ForCausalLM), each mirroring its counter term by term (params_linear_mixers.minimax,
bailing.moe_params,
params_moe_more.dbrx, deepseek_moe.params, params_hybrid.bailing_hybrid, bailing.v25_params)
and naming modules as the checkpoints' safetensors do.

What vLLM holds whole on every TP rank (weight_tables.replicated_params), read in each model file:
- MiniMax-Text-01 / M1: vLLM 0.34 no longer builds them (registry.py _PREVIOUSLY_SUPPORTED_MODELS: MiniMaxForCausalLM,
  MiniMaxText01ForCausalLM, MiniMaxM1ForCausalLM last in 0.23.0), so this follows vLLM 0.23.0 minimax_text_01.py:
  the two RMSNorms a layer and the final norm (layernorm.py RMSNorm), the router block_sparse_moe.gate
  (MiniMaxText01MoE: ReplicatedLinear, quant_config=None). The lightning layers' self_attn.norm is split over TP
  with the heads (layers/mamba/linear/minimax_linear_attn.py MiniMaxText01LinearAttention: MiniMaxText01RMSNormTP,
  hidden_size // tp a rank); no o_proj / out_proj has a bias.
- Ling / Ring (vLLM 0.34 bailing_moe.py): input_layernorm, post_attention_layernorm and the final norm (RMSNorm),
  the per-head query_layernorm / key_layernorm (RMSNorm or nn.LayerNorm of head_dim: whole), the router mlp.gate
  (GateLinear) and its expert_bias, and with use_bias the RowParallelLinear biases of attention.dense and of the
  dense and shared MLPs' down_proj.
- DBRX (vLLM 0.34 dbrx.py): norm_attn_norm.norm_1 / norm_2 and norm_f (nn.LayerNorm, whose biases DbrxModel
  removes), the router ffn.router.layer (DbrxRouter: GateLinear); Wqkv and out_proj have no bias.
- DeepSeek-MoE (vLLM 0.34 deepseek_v2.py, DeepseekAttention for model_type deepseek): the norms, the router mlp.gate
  (DeepseekV2MoE: GateLinear) and its e_score_correction_bias where topk_method is noaux_tc; no biases.
- Ling 3.0 (vLLM 0.34 bailing_moe_v3.py): the table's docstring (bailing_hybrid).
- Ling / Ring 2.5 (vLLM 0.34 bailing_moe_linear.py): the norms, the router and its expert_bias, MLA's
  kv_a_proj_with_mqa (ReplicatedLinear) and kv_a_layernorm; the lightning layers' g_norm is split over TP
  (BailingGroupRMSNormGate of heads x head_dim / TP).
"""

from __future__ import annotations

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _deepseek_moe, _ends, _experts, _float, _linear, _mlp, _qkvo


# -- MiniMax-Text-01 / M1 (params_linear_mixers.minimax) ---------------------------------------------------------------

def minimax(f: Fields, layers: list, dims) -> list[Module]:
    """MiniMaxText01ForCausalLM / MiniMaxM1ForCausalLM (remote modeling_minimax_text_01.py; transformers 5.25
    modeling_minimax.py MiniMaxForCausalLM for the -hf checkpoints; vLLM 0.23.0 minimax_text_01.py), named as both
    checkpoint forms name them: softmax layers (no cache state) self_attn.q_proj / k_proj / v_proj / o_proj without
    biases (vLLM stacks q/k/v into qkv_proj on load); lightning layers self_attn.qkv_proj (hidden -> 3 x heads x
    head_dim), self_attn.output_gate (hidden -> heads x head_dim), self_attn.norm (heads x head_dim) and
    self_attn.out_proj; two norms; block_sparse_moe.gate [E, hidden] and the experts block_sparse_moe.experts.N.w1 /
    w3 / w2 of intermediate_size on every layer (transformers renames block_sparse_moe to mlp on load:
    conversion_mapping "minimax" -> "mixtral"). Embeddings, final norm, an untied LM head by default.

    A shared_intermediate_size makes vLLM 0.23 build a shared_mlp and its coefficient gate, and one expert a
    dense mlp with no router, neither of which the counter counts: such configs get no table. vLLM builds the
    router in float32 (MiniMaxText01MoE: ReplicatedLinear params_dtype=torch.float32), which kvplan counts at the
    checkpoint's dtype: 80 x 32 x 6,144 parameters of MiniMax-Text-01, 31,457,280 B a GPU more than the estimate
    in BF16 (not counted)."""
    shared = f.get("shared_intermediate_size")
    if shared:  # 0 in every MiniMax checkpoint; a list gives each layer's
        raise ConfigError("shared_intermediate_size: the shared MLP vLLM builds is not in kvplan's count of MiniMax")
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    width = heads * head_dim
    experts = f.int("num_local_experts")
    if experts == 1:
        raise ConfigError("num_local_experts 1: vLLM builds a dense MLP without the router kvplan counts")
    inter = f.int("intermediate_size")
    out = _ends(f, hidden, False, 0)
    for i, layer in enumerate(layers):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.block_sparse_moe"
        if layer.state is None:
            out += _qkvo(a, hidden, heads, kv, head_dim)
        else:
            out += [_linear(f"{a}.qkv_proj", hidden, 3 * width, "linear attention"),
                    _linear(f"{a}.out_proj", width, hidden, "linear attention"),
                    _linear(f"{a}.output_gate", hidden, width, "linear attention"),
                    _float(f"{a}.norm", width, "linear attention")]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        out += _experts(m, experts, hidden, inter, ("w1", "w3", "w2"))
        out.append(_float(f"{m}.gate", hidden * experts, "router"))
    return out


# -- Ling / Ring 1.x and 2.0 (bailing.moe_params) --------------------------------------------------------------

def bailing_moe(f: Fields, layers: list, dims) -> list[Module]:
    """BailingMoeForCausalLM / BailingMoeV2ForCausalLM (vLLM 0.34 bailing_moe.py, whose module names are the
    checkpoints' but for gate_proj / up_proj, which hf_to_vllm_mapper stacks into gate_up_proj): per layer
    attention.query_key_value (hidden -> (heads + 2 x KV heads) x head_dim; a bias with use_bias or
    use_qkv_bias), attention.dense (a bias with use_bias), attention.query_layernorm / key_layernorm with
    use_qk_norm (head_dim; an nn.LayerNorm's weight and bias unless use_rmsnorm), input_layernorm and
    post_attention_layernorm; below first_k_dense_replace a dense mlp.gate_proj / up_proj / down_proj of
    intermediate_size (biases with use_bias), else the router mlp.gate [E, hidden], mlp.gate.expert_bias [E] with
    moe_router_enable_expert_bias, the routed experts mlp.experts.N (no biases: FusedMoE) and mlp.shared_experts of
    (moe_shared_expert_intermediate_size, else moe_intermediate_size) x num_shared_experts. model.word_embeddings,
    model.norm, lm_head unless tie_word_embeddings; the class defaults bailing.py reads (V1_DEFAULTS, V2_DEFAULTS).
    The MTP layers (num_nextn_predict_layers) are not in the table, as they are not in the count. vLLM builds
    expert_bias in float32 (and the router too with router_dtype fp32), which kvplan counts at the checkpoint's
    dtype (not counted)."""
    from .. import bailing as B

    heads, kv, head_dim, _ = dims or B.moe_dims(f)
    hidden = B._int(f, "hidden_size")
    bias = B._flag(f, "use_bias")
    qkv_bias = bias or B._flag(f, "use_qkv_bias")
    vocab = B._int(f, "vocab_size")
    out = [_float("word_embeddings", vocab * hidden, "embeddings"), _float("norm", hidden)]
    if not B._flag(f, "tie_word_embeddings"):
        out.append(Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    first_dense = B._int(f, "first_k_dense_replace", minimum=0)

    for i in range(len(layers)):
        a, m = f"layers.{i}.attention", f"layers.{i}.mlp"
        out += [_linear(f"{a}.query_key_value", hidden, (heads + 2 * kv) * head_dim, "attention", qkv_bias,
                        kv_heads=kv, kv_outputs=2 * kv * head_dim),
                _linear(f"{a}.dense", heads * head_dim, hidden, "attention", bias, row=True)]
        if f.flag("use_qk_norm"):
            norm = head_dim * (1 if f.flag("use_rmsnorm") else 2)
            out += [_float(f"{a}.query_layernorm", norm), _float(f"{a}.key_layernorm", norm)]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if i < first_dense:
            out += _mlp(m, hidden, B._int(f, "intermediate_size"), "mlp", bias)
            continue
        out += _ling_moe(f, m, hidden, B._int(f, "num_experts"), bias)
    return out


def _ling_moe(f: Fields, m: str, hidden: int, experts: int, bias: bool) -> list[Module]:
    """A Ling MoE block (Ling / Ring 2.0 and 2.5: vLLM 0.34 bailing_moe.py BailingMoE, bailing_moe_linear.py
    BailingMoeV25): the routed experts of moe_intermediate_size, the router mlp.gate and, with
    moe_router_enable_expert_bias, its expert_bias, and num_shared_experts shared experts of
    moe_shared_expert_intermediate_size (default: moe_intermediate_size)."""
    from .. import bailing as B

    inter = B._int(f, "moe_intermediate_size")
    out = _experts(m, experts, hidden, inter)
    out.append(_float(f"{m}.gate", hidden * experts, "router"))
    if B._flag(f, "moe_router_enable_expert_bias"):
        out.append(_float(f"{m}.gate.expert_bias", experts, "router"))
    shared = B._int(f, "num_shared_experts", minimum=0)
    if shared:
        out += _mlp(f"{m}.shared_experts", hidden, f.int("moe_shared_expert_intermediate_size", default=inter) * shared,
                    "shared experts", bias)
    return out


# -- DBRX (params_moe_more.dbrx) ---------------------------------------------------------------------------------------

def dbrx(f: Fields, layers: list, dims) -> list[Module]:
    """DbrxForCausalLM (transformers 5.25 modeling_dbrx.py; vLLM 0.34 dbrx.py), named as the checkpoints are, from
    the top: transformer.wte, transformer.norm_f, lm_head; per block transformer.blocks.N.norm_attn_norm.norm_1 /
    norm_2 (bias-free LayerNorms), norm_attn_norm.attn.Wqkv (d_model -> (heads + 2 x kv_n_heads) x head_dim) and
    attn.out_proj, no biases; ffn.router.layer [E, d_model]; and the experts as three tensors a block, all experts
    in each: ffn.experts.mlp.w1, v1 and w2 [E x ffn_hidden_size, d_model] (w1 and v1 the gate and up projections,
    w2 the down projection stored transposed: DbrxExperts.weight_loader reshapes and transposes it), with
    ffn_config's defaults (4 experts of 3,584) as the counter has them. A list that names an expert alone cannot
    match these names: one entry stands for all of a block's experts."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    ffn = f.sub("ffn_config")
    experts = ffn.int("moe_num_experts", default=4)
    inter = ffn.int("ffn_hidden_size", default=3584)
    out = _ends(f, hidden, False, 0, "transformer.wte", "transformer.norm_f", top=True)
    for i in range(len(layers)):
        b = f"transformer.blocks.{i}"
        a = f"{b}.norm_attn_norm"
        out += [Module(f"{a}.norm_1", 0, hidden, "norms", top=True),
                _linear(f"{a}.attn.Wqkv", hidden, (heads + 2 * kv) * head_dim, "attention", top=True, kv_heads=kv,
                        kv_outputs=2 * kv * head_dim),
                Module(f"{a}.attn.out_proj", heads * head_dim * hidden, 0, "attention", top=True,
                       inputs=heads * head_dim),
                Module(f"{a}.norm_2", 0, hidden, "norms", top=True),
                Module(f"{b}.ffn.router.layer", 0, hidden * experts, "router", top=True)]
        out += [Module(f"{b}.ffn.experts.mlp.{w}", experts * hidden * inter, 0, "experts", experts, top=True,
                       inputs=inter if w == "w2" else hidden) for w in ("w1", "v1", "w2")]
    return out


# -- DeepSeek-MoE v1 (deepseek_moe.params) ---------------------------------------------------------------------

def deepseek(f: Fields, layers: list, dims) -> list[Module]:
    """DeepseekForCausalLM (the checkpoints' remote modeling_deepseek.py; vLLM 0.34 deepseek_v2.py
    DeepseekForCausalLM with DeepseekAttention, which stacks q/k/v_proj into qkv_proj on load): per layer
    self_attn.q_proj / k_proj / v_proj / o_proj without biases, two norms; layer i a MoE when n_routed_experts
    is set, i >= first_k_dense_replace and i % moe_layer_freq == 0: mlp.gate [E, hidden] (its
    e_score_correction_bias only for topk_method noaux_tc), mlp.experts.N of moe_intermediate_size and
    mlp.shared_experts of moe_intermediate_size x n_shared_experts; else a dense mlp of intermediate_size.
    Embeddings, final norm, an untied LM head by default."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**8)
    experts = f.opt_int("n_routed_experts")
    out = _ends(f, hidden, False, None)
    for i in range(len(layers)):
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        m = f"layers.{i}.mlp"
        if (experts is not None and i >= f.int("first_k_dense_replace", minimum=0)
                and i % f.int("moe_layer_freq", default=1) == 0):
            moe_inter = f.int("moe_intermediate_size", maximum=10**8)
            shared = moe_inter * f.int("n_shared_experts") if f.get("n_shared_experts") else 0
            out += _deepseek_moe(m, hidden, experts, moe_inter, shared, f.get("topk_method") == "noaux_tc")
        else:
            out += _mlp(m, hidden, inter, "mlp")
    return out


# -- Ling 3.0 (params_hybrid.bailing_hybrid) -------------------------------------------------------------------

def bailing_hybrid(f: Fields, layers: list, dims) -> list[Module]:
    """BailingMoeV3ForCausalLM (Ling 3.0: vLLM 0.34 bailing_moe_v3.py, whose hf_to_vllm_mapper only renames
    `.attention.` to `.self_attn.`; transformers 5.25 modeling_bailing_hybrid.py, which renames more on load:
    conversion_mapping "bailing_hybrid"), named as the checkpoints are: model.word_embeddings, model.norm, lm_head
    (never tied); per layer two norms and under `attention.`
    - MLA layers (those with a cache): q_proj, or q_a_proj (a bias with attention_bias), q_a_layernorm and q_b_proj
      with q_lora_rank; kv_a_proj_with_mqa (a bias with attention_bias), kv_a_layernorm, kv_b_proj, dense (the
      output projection, a bias with attention_bias) and the output gate g_proj (hidden -> heads, head_wise; heads x
      v_head_dim, element_wise; none when null);
    - Kimi Delta Attention layers: q_proj, k_proj, v_proj (hidden -> heads x head_dim), q_conv1d, k_conv1d,
      v_conv1d (one kernel a channel), A_log (a head), dt_bias, f_proj, b_proj (hidden -> heads), o_norm (head_dim),
      o_proj and g_proj, with linear_num_heads / linear_head_dim / linear_conv_kernel_dim as the counter reads them;
    - by mlp_layer_types (else the first first_k_dense_replace dense) a dense mlp, or mlp.gate [E, hidden] with
      mlp.gate.expert_bias [E], the routed experts mlp.experts.N and mlp.shared_experts.
    Whole on every TP rank in vLLM: the norms (RMSNorm; KDA's o_norm, a FusedRMSNormGated over head_dim), the router
    (GateLinear) and expert_bias, MLA's latent down-projections (fused_qkv_a_proj with disable_tp=True, or
    kv_a_proj_with_mqa a ReplicatedLinear) and the RowParallelLinear dense's bias; KDA's conv1d, dt_bias and A_log
    split with the heads (ColumnParallelLinear, sharded_weight_loader, _load_a_log) and are built without a
    quantization method, in float32 like the router and expert_bias (kvplan counts them at the checkpoint's dtype).
    vLLM replicates a head_wise g_proj under block FP8 when its heads fit one scale block (replicate_g_proj), which
    this table does not model. Ling / Ring 2.5 (BailingMoeV2_5ForCausalLM) has its own table (ling25)."""
    from .. import bailing as B
    from ..params_hybrid import _attention_layer, bailing_hybrid_fields, latent_delta_moe

    if B.architecture(f) == B.V25:
        return ling25(f, layers, dims)
    hidden, bias, heads, rank, rope, nope, v_dim, q_lora, gate, lin_heads, lin_dim, kernel = bailing_hybrid_fields(f)
    qkv = lin_heads * lin_dim
    m = latent_delta_moe(f, len(layers), {
        "experts": 512, "moe_intermediate_size": 768, "intermediate_size": 6144, "first_k_dense_replace": 2,
        "shared_width": ("moe_shared_expert_intermediate_size",)})
    vocab = f.int("vocab_size", default=157184, minimum=0)
    out = [_float("word_embeddings", vocab * hidden, "embeddings"), _float("norm", hidden),
           Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden)]
    for i, (layer, mlp_kind) in enumerate(zip(layers, m.kinds)):
        a, mm = f"layers.{i}.attention", f"layers.{i}.mlp"
        if _attention_layer(layer):
            if q_lora:
                out += [_linear(f"{a}.q_a_proj", hidden, q_lora, "attention", bias, whole=True),
                        _float(f"{a}.q_a_layernorm", q_lora),
                        _linear(f"{a}.q_b_proj", q_lora, heads * (nope + rope), "attention")]
            else:
                out.append(_linear(f"{a}.q_proj", hidden, heads * (nope + rope), "attention"))
            out += [_linear(f"{a}.kv_a_proj_with_mqa", hidden, rank + rope, "attention", bias, whole=True),
                    _float(f"{a}.kv_a_layernorm", rank),
                    _linear(f"{a}.kv_b_proj", rank, heads * (nope + v_dim), "attention"),
                    _linear(f"{a}.dense", heads * v_dim, hidden, "attention", bias, row=True)]
            if gate:
                out.append(_linear(f"{a}.g_proj", hidden, gate, "attention"))
        else:
            out += [_linear(f"{a}.{p}", hidden, qkv, "linear attention") for p in ("q_proj", "k_proj", "v_proj")]
            out += [_float(f"{a}.{c}", qkv * kernel, "linear attention") for c in ("q_conv1d", "k_conv1d", "v_conv1d")]
            out += [_float(f"{a}.A_log", lin_heads, "linear attention"), _float(f"{a}.dt_bias", qkv, "linear attention"),
                    _linear(f"{a}.f_proj", hidden, qkv, "linear attention"),
                    _linear(f"{a}.b_proj", hidden, lin_heads, "linear attention"),
                    _float(f"{a}.o_norm", lin_dim),
                    _linear(f"{a}.o_proj", qkv, hidden, "linear attention"),
                    _linear(f"{a}.g_proj", hidden, qkv, "linear attention")]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if mlp_kind == "sparse":
            out += _experts(mm, m.experts, hidden, m.moe_inter)
            out += [_float(f"{mm}.gate", hidden * m.experts, "router"),
                    _float(f"{mm}.gate.expert_bias", m.experts, "router")]
            if m.shared_inter * m.shared:
                out += _mlp(f"{mm}.shared_experts", hidden, m.shared_inter * m.shared, "shared experts")
        else:
            out += _mlp(mm, hidden, m.inter, "mlp")
    return out


# -- Ling / Ring 2.5 (bailing.v25_params) ----------------------------------------------------------------------

def ling25(f: Fields, layers: list, dims) -> list[Module]:
    """BailingMoeV2_5ForCausalLM (Ling / Ring 2.5: vLLM 0.34 bailing_moe_linear.py BailingMoeV25ForCausalLM and
    layers/mamba/linear/bailing_linear_attn.py BailingMoELinearAttention; SGLang 0.5.23 models/bailing_moe_linear.py,
    whose hf_to_sglang_mapper and vLLM's normalize_name both start from these checkpoint names), term by term as
    bailing.v25_params counts it: model.word_embeddings, model.norm, lm_head (never tied: the counter counts it);
    per layer input_layernorm, post_attention_layernorm and under `attention.`
    - MLA layers (those with a cache): q_proj, or q_a_proj, q_a_layernorm and q_b_proj with q_lora_rank;
      kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj and dense (the output projection: vLLM renames it o_proj on
      these layers), no biases;
    - lightning layers: query_key_value (hidden -> 3 x heads x head_dim; a bias with use_bias or use_qkv_bias),
      query_layernorm / key_layernorm (head_dim) with use_qk_norm, g_proj (hidden -> heads x head_dim, no bias),
      g_norm (heads x head_dim: BailingGroupRMSNormGate, split over TP, heads x head_dim / TP a rank) and dense (a
      bias with use_bias);
    - a MoE block when num_experts > 1 and i >= first_k_dense_replace: mlp.gate [E, hidden], mlp.gate.expert_bias
      [E] with moe_router_enable_expert_bias (vLLM also loads it from a checkpoint's e_score_correction_bias), the
      routed experts mlp.experts.N (no biases) and mlp.shared_experts of (moe_shared_expert_intermediate_size, else
      moe_intermediate_size) x num_shared_experts; else a dense mlp of intermediate_size (biases with use_bias).
    Defaults: the checkpoints' BailingMoeV2_5Config's (bailing.V25_DEFAULTS). What the engines build in float32
    (the router, expert_bias, SGLang's lm_head): configs/param_fp32.py."""
    from .. import bailing as B
    from . import _mla_widths

    hidden = B._int(f, "hidden_size")
    heads = B._int(f, "num_attention_heads")
    head_dim = B._v25_head_dim(f, hidden, heads)
    inner = heads * head_dim
    bias = B._flag(f, "use_bias")
    qkv_bias = bias or B._flag(f, "use_qkv_bias")
    vocab = B._int(f, "vocab_size")
    out = [_float("word_embeddings", vocab * hidden, "embeddings"), _float("norm", hidden),
           Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden)]
    experts = B._int(f, "num_experts")
    first_dense = B._int(f, "first_k_dense_replace", minimum=0)
    for i, layer in enumerate(layers):
        a, m = f"layers.{i}.attention", f"layers.{i}.mlp"
        if layer.caches:
            mla = _mla_widths(a, hidden, heads, f.opt_int("q_lora_rank") or None, False, B._int(f, "kv_lora_rank"),
                              B._int(f, "qk_rope_head_dim"), B._int(f, "qk_nope_head_dim"), B._int(f, "v_head_dim"))
            out += [Module(f"{a}.dense", x.weight, x.other, x.role, inputs=x.inputs) if x.name.endswith(".o_proj")
                    else x for x in mla]
        else:
            out.append(_linear(f"{a}.query_key_value", hidden, 3 * inner, "linear attention", qkv_bias))
            if B._flag(f, "use_qk_norm"):
                out += [_float(f"{a}.query_layernorm", head_dim), _float(f"{a}.key_layernorm", head_dim)]
            out += [_linear(f"{a}.g_proj", hidden, inner, "linear attention"),
                    _float(f"{a}.g_norm", inner, "linear attention"),
                    _linear(f"{a}.dense", inner, hidden, "linear attention", bias, row=True)]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if experts > 1 and i >= first_dense:
            out += _ling_moe(f, m, hidden, experts, bias)
        else:
            out += _mlp(m, hidden, B._int(f, "intermediate_size"), "mlp", bias)
    return out


MOE = {"minimax": minimax, "minimax_m1": minimax, "minimax_text_01": minimax, "bailing_moe": bailing_moe,
       "dbrx": dbrx, "deepseek": deepseek, "bailing_hybrid": bailing_hybrid}
