"""Per-module parameter tables (configs/weight_tables/__init__.py) of Gemma 3, Phi-3 and Qwen3-Next, each mirroring its
counter term by term (params_generic.count_params for gemma3_text and phi3, params_ssm._hybrid_params for qwen3_next)
and
naming modules as the checkpoints' safetensors do (transformers 5.25 modeling_gemma3.py, modeling_phi3.py,
modeling_qwen3_next.py; a Gemma 3 wrapper's text model under `language_model.model.` or `model.language_model.`,
weight_tables.ROOTS). What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params): the norms
(gemma3.py GemmaRMSNorm, qwen3_next.py Qwen3NextRMSNorm, the Gated DeltaNet's RMSNormGated over head_v_dim),
Qwen3-Next's router (GateLinear) and shared_expert_gate (ReplicatedLinear, quant_config=None), and Gemma 3's
o_proj bias with attention_bias (RowParallelLinear)."""

from __future__ import annotations

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _float, _gdn_after_inputs, _linear, _mlp, _qkvo, _qwen_sparse_moe


def gemma3_text(f: Fields, layers: list, dims) -> list[Module]:
    """Gemma3ForCausalLM's model (Gemma3DecoderLayer): per layer q/k/v/o_proj (attention_bias on all four),
    q_norm and k_norm over head_dim, four norms (input, post_attention, pre_ and post_feedforward), the gated mlp;
    embeddings, final norm, LM head tied unless tie_word_embeddings is false."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**8)
    bias = f.flag("attention_bias")
    out = _ends(f, hidden, True, 0)
    for i in range(len(layers)):
        a, layer = f"layers.{i}.self_attn", f"layers.{i}"
        out += _qkvo(a, hidden, heads, kv, head_dim, bias)
        out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim)]
        out += [_float(f"{layer}.{norm}", hidden) for norm in
                ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                 "post_feedforward_layernorm")]
        out += _mlp(f"{layer}.mlp", hidden, inter, "mlp")
    return out


def phi3(f: Fields, layers: list, dims) -> list[Module]:
    """Phi3ForCausalLM (transformers Phi3Attention, Phi3MLP): per layer the fused self_attn.qkv_proj (queries, then
    keys and values of num_key_value_heads), o_proj, the fused mlp.gate_up_proj and down_proj, two norms; none of
    them has a bias in transformers, so a config with attention_bias (which the counter would count) gets no
    table. Embeddings, final norm, an LM head of its own unless tie_word_embeddings."""
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: transformers' Phi3Attention builds no biases")
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", default=4 * hidden, maximum=10**8)
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        out += phi3_layer(i, hidden, heads, kv, head_dim, inter)
    return out


def phi3_layer(i: int, hidden: int, heads: int, kv: int, head_dim: int, inter: int) -> list[Module]:
    """One Phi-3 decoder layer (no biases): the fused self_attn.qkv_proj, o_proj, the fused mlp.gate_up_proj,
    down_proj, two norms. Phi-4-multimodal's text model has the same (weight_tables/vl_more.py)."""
    a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
    return [_linear(f"{a}.qkv_proj", hidden, (heads + 2 * kv) * head_dim, "attention", kv_heads=kv,
                    kv_outputs=2 * kv * head_dim),
            _linear(f"{a}.o_proj", heads * head_dim, hidden, "attention"),
            _linear(f"{m}.gate_up_proj", hidden, 2 * inter, "mlp"),
            _linear(f"{m}.down_proj", inter, hidden, "mlp"),
            _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]


def qwen3_next(f: Fields, layers: list, dims) -> list[Module]:
    """Qwen3NextForCausalLM: per layer either gated attention under self_attn (q_proj twice the query width, for
    the output gate; k/v/o_proj, with attention_bias' biases; q_norm, k_norm) or the Gated DeltaNet under
    linear_attn (in_proj_qkvz, in_proj_ba, conv1d without bias, dt_bias, A_log, norm over head_v_dim, out_proj);
    two norms; then the sparse MoE block (router mlp.gate, routed experts, mlp.shared_expert and its one-output
    shared_expert_gate) or, on mlp_only_layers, a dense mlp, which the counter leaves out (such a config's table
    does not add up, and is not used). Gated DeltaNet's conv1d, dt_bias and A_log stay in the float dtype and
    are split over TP with the value heads (vLLM 0.34 mamba/gdn/qwen_gdn_linear_attn.py)."""
    from ..params_generic import _is_moe_layer

    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    bias = f.flag("attention_bias")
    experts = f.int("num_local_experts", "num_experts", "n_routed_experts", default=0, minimum=0)
    if f.int("n_shared_experts", default=0, minimum=0):
        raise ConfigError("n_shared_experts: not the shared-expert block Qwen3-Next builds")
    out = _ends(f, hidden, False, 0)
    for i, layer in enumerate(layers):
        if layer.caches:
            a = f"layers.{i}.self_attn"
            out += _qkvo(a, hidden, heads, kv, head_dim, bias, q_width=2 * heads * head_dim)
            out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim)]
        else:
            kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
            kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
            kernel = f.int("linear_conv_kernel_dim", default=4)
            key_dim, value_dim = kh * kd, vh * vd
            a = f"layers.{i}.linear_attn"
            out += [_linear(f"{a}.in_proj_qkvz", hidden, 2 * key_dim + 2 * value_dim, "linear attention"),
                    _linear(f"{a}.in_proj_ba", hidden, 2 * vh, "linear attention"),
                    *_gdn_after_inputs(a, key_dim, value_dim, vh, vd, kernel, hidden)]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        m = f"layers.{i}.mlp"
        if experts and _is_moe_layer(f, i):
            out += _qwen_sparse_moe(f, m, experts, hidden, f.int("moe_intermediate_size", "intermediate_size"))
        else:
            out += _mlp(m, hidden, f.int("intermediate_size"), "mlp")
    return out


MORE = {"gemma3_text": gemma3_text, "phi3": phi3, "qwen3_next": qwen3_next}
