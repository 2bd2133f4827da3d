"""Per-module parameter tables (configs/weight_tables/__init__.py) of Llama 4 and Gemma 4 (and Gemma 4 Unified), whose
checkpoints put the text model under a multimodal wrapper: `language_model.model.layers.N...` and
`language_model.lm_head` (Llama 4), `model.language_model.layers.N...` (Gemma 4, Gemma 4 Unified: vLLM 0.33's
gemma4_unified.py hf_to_vllm_mapper takes the same names); weight_tables.ROOTS carries both prefixes; and of
Kimi-Linear and Kimi K3 (`model.layers.N...`, `language_model.model.layers.N...`).

Each table mirrors its counter term by term (params_moe_more.llama4, params_dense._gemma4_family,
params_hybrid.kimi_linear,
params_kimi_k3.kimi_k3_text) and names modules as the
quantized checkpoints' safetensors do. Routed experts are named one expert at a time
(`feed_forward.experts.7.gate_proj`, `experts.7.gate_proj`): the layout llm-compressor and ModelOpt write for these
families (RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic, nvidia/Gemma-4-26B-A4B-NVFP4); the BF16 originals
keep each layer's experts as two 3-D tensors (`experts.gate_up_proj`, `experts.down_proj`), which vLLM 0.33 also
loads (FusedMoE make_expert_params_mapping takes both). The routers stay in the float dtype: vLLM 0.33 builds
Llama 4's `feed_forward.router` (llama4.py Llama4MoE) and Gemma 4's `router.proj` (gemma4.py Gemma4Router) as
GateLinear without a quant_config, and Gemma 4's router.scale and per_expert_scale are plain parameters.
"""

from __future__ import annotations

from dataclasses import replace

from ..fields import Fields
from . import Module, _ends, _experts, _float, _linear, _mlp, _qkvo
from ..param_vllm_load import gemma4_v_copy
from ..params_moe_more import llama4_moe_layers


# -- Llama 4 (params_moe_more.llama4) ----------------------------------------------------------------------------------

def llama4(f: Fields, layers: list, dims) -> list[Module]:
    """Llama4ForConditionalGeneration's text model (transformers modeling_llama4.py, vLLM llama4.py): per layer
    q/k/v/o_proj without biases (the qk norm is an L2 norm with no weight, NoPE layers have none), two RMSNorms,
    then on MoE layers (moe_layers, else every interleave_moe_layer_step-th from step - 1) the router, the routed
    experts of intermediate_size and one shared expert of the same width; on the others a dense MLP of
    intermediate_size_mlp, named feed_forward.gate_proj / up_proj / down_proj."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    n = len(layers)
    moe_set = llama4_moe_layers(f, n)
    inter = f.int("intermediate_size", default=8192)
    experts = f.int("num_local_experts", default=16)
    dense_inter = f.int("intermediate_size_mlp", default=16384)
    out = _ends(f, hidden, False, 0)
    for i in range(n):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.feed_forward"
        out += [*_qkvo(a, hidden, heads, kv, head_dim),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if i in moe_set:
            out += _experts(m, experts, hidden, inter)
            out.append(_float(f"{m}.router", hidden * experts, "router"))
            out += _mlp(f"{m}.shared_expert", hidden, inter, "shared experts")
        else:
            out += _mlp(m, hidden, dense_inter, "mlp")
    return out


# -- Gemma 4 (params_dense._gemma4_family, unified=False) ------------------------------------------------------

def gemma4(f: Fields, layers: list, dims, unified: bool = False) -> list[Module]:
    """Gemma4ForConditionalGeneration's text model (transformers modeling_gemma4.py Gemma4TextDecoderLayer, vLLM
    gemma4.py Gemma4DecoderLayer): per layer q_proj, q_norm, k_proj, k_norm and v_proj (none of the three on
    KV-shared layers; no v_proj on full layers with attention_k_eq_v, whose k_proj vLLM also holds as its V shard:
    Module.vllm_delta, configs/param_vllm_load.py), o_proj, with head_dim and KV heads per layer
    as the counter reads them; the dense mlp (doubled on shared layers with use_double_wide_mlp); four norms; the
    per-layer-input gate, projection and norm (the gate and projection whole on every TP rank: vLLM 0.34
    gemma4.py Gemma4DecoderLayer per_layer_input_gate / per_layer_projection are ReplicatedLinear, while
    per_layer_model_projection is a ColumnParallelLinear); with enable_moe_block the router (proj, scale, per_expert_scale),
    the routed experts beside the dense MLP and three more norms. The model's embed_tokens_per_layer,
    per_layer_model_projection and per_layer_projection_norm, final norm and LM head (tied by default). unified:
    Gemma 4 Unified's text model, read as gemma4_fields(f, unified=True) reads it (no per-layer inputs, no MoE)."""
    from ..params_dense import _GEMMA4_DEFAULTS as D, gemma4_fields

    g = gemma4_fields(f, unified)
    hidden, heads, bias, ple, n_cfg = g.hidden, g.heads, g.bias, g.ple, g.n_cfg
    out = _ends(f, hidden, True, D["vocab_size"])
    if ple:
        ple_vocab = f.int("vocab_size_per_layer_input", default=262_144)
        out += [_float("embed_tokens_per_layer", ple_vocab * n_cfg * ple, "embeddings"),
                _linear("per_layer_model_projection", hidden, n_cfg * ple, "per-layer inputs"),
                _float("per_layer_projection_norm", ple)]
    for i in range(len(layers)):
        kind, hd, kv, reuse = g.layer(i)
        a, layer = f"layers.{i}.self_attn", f"layers.{i}"
        out += [_linear(f"{a}.q_proj", hidden, heads * hd, "attention", bias), _float(f"{a}.q_norm", hd)]
        if not reuse:
            k_proj = _linear(f"{a}.k_proj", hidden, kv * hd, "attention", bias, kv_heads=kv)
            if not (g.k_eq_v and kind != "sliding_attention"):
                out += [_float(f"{a}.k_norm", hd), k_proj,
                        _linear(f"{a}.v_proj", hidden, kv * hd, "attention", bias, kv_heads=kv)]
            else:  # no v_proj: vLLM holds a second copy of k_proj as its V shard (configs/param_vllm_load.py)
                out += [_float(f"{a}.k_norm", hd),
                        replace(k_proj, vllm_delta=tuple(gemma4_v_copy(k_proj.weight, k_proj.other)))]
        out.append(_linear(f"{a}.o_proj", heads * hd, hidden, "attention", bias, row=True))
        out += _mlp(f"{layer}.mlp", hidden, g.inter * (2 if g.double_wide and reuse else 1), "mlp")
        out += [_float(f"{layer}.{norm}", hidden) for norm in
                ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                 "post_feedforward_layernorm")]
        if ple:  # whole on every TP rank: vLLM 0.34 gemma4.py Gemma4DecoderLayer builds both as ReplicatedLinear
            out += [_linear(f"{layer}.per_layer_input_gate", hidden, ple, "per-layer inputs", whole=True),
                    _linear(f"{layer}.per_layer_projection", ple, hidden, "per-layer inputs", whole=True),
                    _float(f"{layer}.post_per_layer_input_norm", hidden)]
        if g.moe:
            out += [_float(f"{layer}.router.proj", hidden * g.experts, "router"),
                    _float(f"{layer}.router.scale", hidden, "router"),
                    _float(f"{layer}.router.per_expert_scale", g.experts, "router")]
            out += _experts(layer, g.experts, hidden, g.moe_inter)
            out += [_float(f"{layer}.{norm}", hidden) for norm in
                    ("post_feedforward_layernorm_1", "post_feedforward_layernorm_2", "pre_feedforward_layernorm_2")]
    return out


def gemma4_unified_text(f: Fields, layers: list, dims) -> list[Module]:
    """Gemma4UnifiedForConditionalGeneration's text model (params_dense.gemma4_unified_text; vLLM 0.33 builds it
    as gemma4.py's Gemma4ForCausalLM under gemma4_unified.py): Gemma 4's attention, MLP and four norms a layer,
    embeddings, final norm and tied LM head, under the same names."""
    return gemma4(f, layers, dims, unified=True)


# -- Kimi-Linear (params_hybrid.kimi_linear) -----------------------------------------------------------------------

def kimi_linear(f: Fields, layers: list, dims) -> list[Module]:
    """KimiLinearForCausalLM without Kimi K3's fields (kimi_k3 below has those), counted as params_hybrid.kimi_linear
    counts it (kimi_linear_fields, latent_delta_moe) and named as vLLM 0.33 loads the checkpoint
    (models/kimi_k3/nvidia/model.py KimiLinearModel.load_weights: q/k/v/b/f_a_proj into in_proj_qkvgfab,
    q/k/v_conv1d into conv1d, gate/up_proj into gate_up_proj, experts as w1/w3/w2): per layer the MLA (layers with
    a cache: q_proj or q_a_proj / q_a_layernorm / q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj,
    with attention_bias' biases) or KDA under self_attn (q/k/v_proj, g_a/g_b_proj, f_a/f_b_proj, b_proj, dt_bias,
    q/k/v_conv1d, A_log, o_norm, o_proj), two norms, then block_sparse_moe (gate, gate.e_score_correction_bias,
    routed experts, shared_experts) or a dense mlp. KDA's conv1d, dt_bias, A_log and o_norm are never quantized.
    Whole on every TP rank besides MLA's (_mla_widths) and the norms and router: KDA's f_a_proj, shard 4 of
    in_proj_qkvgfab, a _KimiGDNMergedColumnParallelLinear with replicated_shard_id=4 that loads that shard from
    rank 0 on every rank, and g_a_proj, a ReplicatedLinear (vLLM 0.34 layers/mamba/gdn/kimi_gdn_linear_attn.py
    KimiLinearGatedDeltaNetAttention); the other KDA projections are split."""
    from . import _mla_widths
    from ..params_hybrid import KIMI_LINEAR_DEFAULTS as D, kimi_linear_fields, latent_delta_moe
    from ..params_kimi_k3 import uses_k3_fields

    if uses_k3_fields(f):
        return kimi_k3(f, layers, dims)
    k = kimi_linear_fields(f)
    m = latent_delta_moe(f, len(layers), D)
    hidden, p = k.hidden, k.lin_heads * k.lin_dim
    vocab = f.int("vocab_size", default=D["vocab_size"], minimum=0)
    out = [_float("embed_tokens", vocab * hidden, "embeddings"), _float("norm", hidden),
           Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden)]  # never tied (param_parts.embeddings tieable)
    for i, (layer, kind) in enumerate(zip(layers, m.kinds)):
        a = f"layers.{i}.self_attn"
        if layer.caches:
            out += _mla_widths(a, hidden, k.heads, k.q_lora, k.bias, k.rank, k.rope, k.nope, k.v_dim)
        else:
            out += [_linear(f"{a}.{x}_proj", hidden, p, "linear attention") for x in "qkv"] + [
                _linear(f"{a}.g_a_proj", hidden, k.lin_dim, "linear attention", whole=True),
                _linear(f"{a}.g_b_proj", k.lin_dim, p, "linear attention"),
                _linear(f"{a}.f_a_proj", hidden, k.lin_dim, "linear attention", whole=True),
                _linear(f"{a}.f_b_proj", k.lin_dim, p, "linear attention"),
                _linear(f"{a}.b_proj", hidden, k.lin_heads, "linear attention"),
                _float(f"{a}.dt_bias", p, "linear attention")]
            out += [_float(f"{a}.{x}_conv1d", p * k.kernel, "linear attention") for x in "qkv"]
            out += [_float(f"{a}.A_log", k.lin_heads, "linear attention"), _float(f"{a}.o_norm", k.lin_dim),
                    _linear(f"{a}.o_proj", p, hidden, "linear attention")]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if kind == "sparse":
            b = f"layers.{i}.block_sparse_moe"
            out += [_float(f"{b}.gate", hidden * m.experts, "router"),
                    _float(f"{b}.gate.e_score_correction_bias", m.experts, "router")]
            out += _experts(b, m.experts, hidden, m.moe_inter, ("w1", "w3", "w2"))
            if m.shared:
                out += _mlp(f"{b}.shared_experts", hidden, m.shared_inter * m.shared, "shared experts")
        else:
            out += _mlp(f"layers.{i}.mlp", hidden, m.inter, "mlp")
    return out


# -- Kimi K3 (params_kimi_k3.kimi_k3_text) -----------------------------------------------------------------------

def kimi_k3(f: Fields, layers: list, dims) -> list[Module]:
    """Kimi K3's text model (a kimi_linear config with K3's fields), named as vLLM 0.33 loads its checkpoint
    (models/kimi_k3/nvidia/model.py KimiLinearModel.load_weights: q/k/v/g/b/f_a_proj into in_proj_qkvgfab,
    q/k/v_conv1d into conv1d, q_a_proj/kv_a_proj_with_mqa/g_proj into fused_qkv_a_g_proj, experts as w1/w3/w2):
    per layer the MLA (layers with a cache) or Kimi Delta Attention under self_attn, the norms, the attention-
    residual norms and hidden -> 1 projections (built with quant_config=None), then block_sparse_moe (gate and its
    e_score_correction_bias, routed experts at routed_expert_hidden_size, shared_experts, the latent MoE's
    routed_expert_down_proj / routed_expert_norm / routed_expert_up_proj) or a dense mlp. KDA's conv1d (float32),
    dt_bias, A_log and o_norm are never quantized. Kimi-Linear configs without K3's fields: kimi_linear above.
    Whole on every TP rank (vLLM 0.34 models/kimi_k3/nvidia): MLA's q_a_proj and kv_a_proj_with_mqa (mla.py: in
    fused_qkv_a_proj, disable_tp=True, or in KimiK3MergedQKVGateLinear, whose latent shards are loaded from rank 0
    on every rank while its g_proj shard is split), KDA's f_a_proj (kda.py KimiK3DeltaAttention in_proj_qkvgfab,
    replicated_shard_id=4) and, without a full-rank gate, g_a_proj (a ReplicatedLinear: kimi_linear above), the
    hidden -> 1 attention-residual projections (model.py self_attention_res_proj, mlp_res_proj,
    output_attn_res_proj: ReplicatedLinear), and the latent MoE's routed_expert_down_proj / _up_proj (below). The
    dense and shared-expert MLPs (KimiMLP) are whole only under sequence parallelism (expert parallel with data
    parallel or the mega-MoE backend), which kvplan does not plan: split here."""
    from ...errors import ConfigError
    from . import _mla
    from ..params_kimi_k3 import uses_k3_fields

    if not uses_k3_fields(f):
        return kimi_linear(f, layers, dims)
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: vLLM 0.33 builds Kimi K3 without biases")
    hidden = f.int("hidden_size", default=4096)
    vocab = f.int("vocab_size", default=163840, minimum=0)
    heads = f.int("num_attention_heads", default=32)
    q_lora = f.opt_int("q_lora_rank")
    out_gate = f.flag("mla_use_output_gate")
    kda_heads = kda_dim = kernel = 0
    if any(not layer.caches for layer in layers):
        kda_heads, kda_dim = f.int("linear_attn_config.num_heads"), f.int("linear_attn_config.head_dim")
        kernel = f.int("linear_attn_config.short_conv_kernel_size")
    p = kda_heads * kda_dim
    full_gate = f.flag("linear_attn_config.use_full_rank_gate")
    experts = f.opt_int("num_experts")
    first_dense = f.int("first_k_dense_replace", default=0, minimum=0)
    freq = f.int("moe_layer_freq", default=1)
    attn_res = f.has("attn_res_block_size")
    out = [_float("embed_tokens", vocab * hidden, "embeddings"), _float("norm", hidden),
           Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden)]
    if attn_res:
        out += [_float("output_attn_res_norm", hidden), Module("output_attn_res_proj", 0, hidden, "other", whole=True)]
    for i, layer in enumerate(layers):
        a = f"layers.{i}.self_attn"
        if layer.caches:
            out += _mla(f, a, hidden, heads, q_lora, False)
            if out_gate:
                out.append(_linear(f"{a}.g_proj", hidden, heads * f.int("v_head_dim"), "attention"))
        else:
            gate = ([_linear(f"{a}.g_proj", hidden, p, "linear attention")] if full_gate else
                    [_linear(f"{a}.g_a_proj", hidden, kda_dim, "linear attention", whole=True),
                     _linear(f"{a}.g_b_proj", kda_dim, p, "linear attention")])
            out += [_linear(f"{a}.{x}_proj", hidden, p, "linear attention") for x in "qkv"] + gate + [
                _linear(f"{a}.f_a_proj", hidden, kda_dim, "linear attention", whole=True),
                _linear(f"{a}.b_proj", hidden, kda_heads, "linear attention"),
                _linear(f"{a}.f_b_proj", kda_dim, p, "linear attention"),
                _float(f"{a}.dt_bias", p, "linear attention")]
            out += [_float(f"{a}.{x}_conv1d", p * kernel, "linear attention") for x in "qkv"]
            out += [_float(f"{a}.A_log", kda_heads, "linear attention"), _float(f"{a}.o_norm", kda_dim),
                    _linear(f"{a}.o_proj", p, hidden, "linear attention")]
        norms = ("input_layernorm", "post_attention_layernorm") + (
            ("self_attention_res_norm", "mlp_res_norm") if attn_res else ())
        out += [_float(f"layers.{i}.{norm}", hidden) for norm in norms]
        if attn_res:
            out += [Module(f"layers.{i}.{x}", 0, hidden, "other", whole=True)
                    for x in ("self_attention_res_proj", "mlp_res_proj")]
        if experts is not None and i >= first_dense and i % freq == 0:
            m = f"layers.{i}.block_sparse_moe"
            moe_inter = f.int("moe_intermediate_size")
            latent = f.opt_int("routed_expert_hidden_size")
            out += [_float(f"{m}.gate", hidden * experts, "router"),
                    _float(f"{m}.gate.e_score_correction_bias", experts, "router")]
            out += _experts(m, experts, latent or hidden, moe_inter, ("w1", "w3", "w2"))
            shared = f.int("num_shared_experts", default=0, minimum=0)
            if shared:
                out += _mlp(f"{m}.shared_experts", hidden, moe_inter * shared, "shared experts")
            if latent:
                # never quantized, whole on every TP rank: moonshotai/Kimi-K3's MXFP4 checkpoint stores both in
                # bf16 (routed_expert_down_proj.weight [3584, 7168], routed_expert_up_proj.weight [7168, 3584])
                # although its compressed-tensors `ignore` names no pattern that matches them; SGLang 0.5.23
                # models/kimi_k3.py KimiMoE builds them as ReplicatedLinear with quant_config=None unless the
                # quantization config sets supports_kimi_k3_quantized_latent_projections (compressed-tensors does
                # not). vLLM 0.34 models/kimi_k3/nvidia/model.py builds the same ReplicatedLinear with the
                # checkpoint's quant_config (see docs/weights.md)
                out.append(Module(f"{m}.routed_expert_down_proj", 0, hidden * latent, "latent MoE", whole=True))
                if f.flag("latent_moe_use_norm"):
                    out.append(_float(f"{m}.routed_expert_norm", latent))
                out.append(Module(f"{m}.routed_expert_up_proj", 0, latent * hidden, "latent MoE", whole=True))
        else:
            out += _mlp(f"layers.{i}.mlp", hidden, f.int("intermediate_size", default=11008), "mlp")
    return out


WRAPPED = {"llama4_text": llama4, "gemma4_text": gemma4, "gemma4_unified_text": gemma4_unified_text,
           "kimi_linear": kimi_linear}
