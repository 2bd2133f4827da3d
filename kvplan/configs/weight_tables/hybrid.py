"""Per-module parameter tables (configs/weight_tables/__init__.py) of the Mamba hybrids: Nemotron-H (nemotron_h),
Granite 4.0-H (granitemoehybrid), Falcon-H1 (falcon_h1), Jamba (jamba) and Zamba2 (zamba2). Each mirrors its counter
term by term (params_hybrid.nemotron_h, params_ssm.granite_hybrid, params_ssm._hybrid_params for falcon_h1 and jamba,
params_ssm.zamba2) and names the modules as the checkpoints' safetensors do (transformers 5.25 modeling_nemotron_h.py,
modeling_granitemoehybrid.py, modeling_falcon_h1.py, modeling_jamba.py, modeling_zamba2.py; the names vLLM 0.34's
load_weights takes). Bamba's table is in configs/weight_tables/hybrid_more.py, read in vLLM 0.23.0 (0.34 no longer
builds BambaForCausalLM: models/registry.py _PREVIOUSLY_SUPPORTED_MODELS, supported until 0.23.0).

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params):
- the RMSNorms (layernorm.py RMSNorm): every decoder norm, the final norm, Jamba's dt_layernorm, b_layernorm and
  c_layernorm (mamba_mixer.py MambaMixer);
- the routers (GateLinear, a ReplicatedLinear) and Nemotron-H's gate.e_score_correction_bias;
- RowParallelLinear biases (out_proj with a projection bias, an MLP's down_proj with mlp_bias, o_proj with
  attention_bias where the model builds one);
- Nemotron-H's latent projections fc1_latent_proj / fc2_latent_proj (nemotron_h.py NemotronHMoE: ReplicatedLinear)
  and Zamba2's per-hybrid-layer linear (zamba2.py Zamba2HybridLayer: ReplicatedLinear);
- of a Mamba-2 mixer with n_groups = 1, the B and C rows of in_proj and the B and C channels of conv1d:
  layers/mamba/mamba_mixer2.py MambaMixer2 pads the one group to tp_size groups
  (mamba_utils.py extra_groups_for_head_shards) and mamba_v2_sharded_weight_loader loads the one group's rows on
  every rank (the same padding kvplan's Mamba-2 cache shape follows).
Split over TP with the heads: the rest of in_proj and conv1d, dt_bias, A_log, D, the gated norm
(Mixer2RMSNormGated: full_hidden_size // tp_size a rank), out_proj's weight; Jamba's MambaMixer splits conv1d,
in_proj, x_proj (a RowParallelLinear), dt_proj (weight and bias), A_log and D over the inner channels.
With n_groups > 1, vLLM needs tp_size to divide n_groups and splits B and C too.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _experts, _float, _linear, _mlp, _qkvo
from ..param_parts import embeddings

MIXER = "mixer"  # weights.record.ROLES: split over TP (not REPLICATED)


@dataclass(frozen=True)
class _Backbone(Module):
    """A Nemotron-H module: its checkpoints put `backbone.` before the decoder's names (vLLM 0.34 nemotron_h.py
    hf_to_vllm_mapper maps backbone -> model, transformers 5.25 conversion_mapping.py does the same), and the
    Nano VL / Omni wrappers' `language_model.backbone.` (nano_nemotron_vl.py maps it to language_model.model), so
    a list of unquantized modules may name any of these."""

    def names(self, expert: int = 0) -> list[str]:
        out = super().names(expert)
        if self.top:
            return out
        name = self.name.replace("{e}", str(expert))
        return out + ["backbone." + name, "language_model.backbone." + name]


def _backbone(m: Module) -> Module:
    return _Backbone(**{field.name: getattr(m, field.name) for field in fields(Module)})


def _mamba2(a: str, hidden: int, heads: int, inner: int, groups: int, state: int, kernel: int, conv_bias: bool,
            proj_bias: bool, out_bias: bool, norm: bool) -> list[Module]:
    """A Mamba-2 mixer (transformers' Mamba2Mixer and its copies; vLLM 0.34 MambaMixer2): in_proj hidden ->
    2 x inner + 2 x groups x state + heads, the depthwise conv1d over inner + 2 x groups x state channels,
    dt_bias, A_log and D (one a head), the gated norm over inner (when `norm`), out_proj inner -> hidden.
    With one group, every TP rank holds the group's B and C rows of in_proj and channels of conv1d whole."""
    bc = 2 * groups * state
    conv_dim = inner + bc
    one_group = groups == 1
    per_channel = kernel + (1 if conv_bias else 0)
    out = [Module(f"{a}.in_proj", hidden * (inner + conv_dim + heads), 0, MIXER, inputs=hidden,
                  whole_weight=hidden * bc if one_group else 0)]
    if proj_bias:  # in_proj's bias: sharded with its rows
        out.append(_float(f"{a}.in_proj", 2 * inner + heads + (0 if one_group else bc), MIXER))
        if one_group:
            out.append(Module(f"{a}.in_proj", 0, bc, MIXER, whole=True))
    if one_group:
        out += [_float(f"{a}.conv1d", inner * per_channel, MIXER),
                Module(f"{a}.conv1d", 0, bc * per_channel, MIXER, whole=True)]
    else:
        out.append(_float(f"{a}.conv1d", conv_dim * per_channel, MIXER))
    out += [_float(f"{a}.dt_bias", heads, MIXER), _float(f"{a}.A_log", heads, MIXER), _float(f"{a}.D", heads, MIXER)]
    if norm:
        out.append(_float(f"{a}.norm", inner, MIXER))
    return out + [_linear(f"{a}.out_proj", inner, hidden, MIXER, out_bias, row=True)]


# -- Nemotron-H (params_hybrid.nemotron_h) ---------------------------------------------------------------------

def nemotron_h(f: Fields, layers: list, dims) -> list[Module]:
    """NemotronHForCausalLM: per block one norm (layers.N.norm) and one mixer (layers.N.mixer): the Mamba-2
    mixer (in_proj and out_proj biased under use_bias, conv1d under use_conv_bias), attention q/k/v/o_proj
    without biases, the MLP up_proj / down_proj (mlp_bias), or the MoE: non-gated routed experts
    (experts.N.up_proj / down_proj over moe_latent_size, else hidden), the router gate with its
    e_score_correction_bias, shared_experts (up_proj / down_proj), fc1 / fc2_latent_proj with moe_latent_size;
    then embeddings, norm_f and the untied lm_head. vLLM 0.34 nemotron_h.py builds the MLPs as
    ColumnParallelLinear up_proj and RowParallelLinear down_proj, the router as GateLinear and the latent
    projections as ReplicatedLinear."""
    from ..params_hybrid import _first_int, nemotron_blocks_of, nemotron_mixer

    hidden = f.int("hidden_size", default=4096)
    blocks = nemotron_blocks_of(f, len(layers))
    mlp_bias = f.flag("mlp_bias")
    m_heads, inner, groups, state, kernel, conv_bias, proj_bias = nemotron_mixer(f)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=heads)
    head_dim = f.int("head_dim", default=128)
    inter = f.int("intermediate_size", default=21504)
    experts = _first_int(f, ("n_routed_experts", "num_local_experts"), 8)
    latent = f.opt_int("moe_latent_size")
    width = latent or hidden
    moe_inter = f.int("moe_intermediate_size", default=7688)
    shared_inter = f.int("moe_shared_expert_intermediate_size", default=7688, minimum=0) or inter

    def mlp(m: str, w: int, role: str) -> list[Module]:
        return [_linear(f"{m}.up_proj", hidden, w, role, mlp_bias),
                _linear(f"{m}.down_proj", w, hidden, role, mlp_bias, row=True)]

    vocab = f.int("vocab_size", default=131072, minimum=0)
    out = [_float("embeddings", vocab * hidden, "embeddings"), _float("norm_f", hidden)]
    head = embeddings(f, hidden, False, 131072, tieable=False) - vocab * hidden
    out.append(Module("lm_head", head, 0, "lm_head", top=True, inputs=hidden))
    for i, (layer, block) in enumerate(zip(layers, blocks)):
        m = f"layers.{i}.mixer"
        out.append(_float(f"layers.{i}.norm", hidden))
        if layer.caches:
            out += _qkvo(m, hidden, heads, kv, head_dim)
        elif layer.state is not None:
            out += _mamba2(m, hidden, m_heads, inner, groups, state, kernel, conv_bias, proj_bias, proj_bias, True)
        elif block == "moe":
            out += [Module(f"{m}.experts.{{e}}.up_proj", experts * width * moe_inter, 0, "experts", experts,
                           inputs=width),
                    Module(f"{m}.experts.{{e}}.down_proj", experts * moe_inter * width, 0, "experts", experts,
                           inputs=moe_inter),
                    _float(f"{m}.gate", experts * hidden, "router"),
                    _float(f"{m}.gate.e_score_correction_bias", experts, "router"),
                    *mlp(f"{m}.shared_experts", shared_inter, "shared experts")]
            if latent:
                out += [_linear(f"{m}.fc1_latent_proj", hidden, latent, "experts", mlp_bias, whole=True),
                        _linear(f"{m}.fc2_latent_proj", latent, hidden, "experts", mlp_bias, whole=True)]
        else:
            out += mlp(m, inter, "mlp")
    return [_backbone(m) for m in out]


# -- Granite 4.0-H (params_ssm.granite_hybrid) ---------------------------------------------------------------------

def _mamba2_fields(f: Fields, hidden: int) -> tuple[int, int, int, int, int]:
    """(heads, inner, groups, state, kernel) as params_ssm._mamba2_mixer reads them."""
    nh = f.int("mamba_n_heads", "mamba_num_heads", "num_heads")
    if f.get("mamba_d_head") == "auto":
        hd = int(f.number("mamba_expand", default=2) * hidden) // nh
    else:
        hd = f.int("mamba_d_head", "mamba_head_dim", "head_dim")
    inner = f.opt_int("mamba_d_ssm") or nh * hd
    return (nh, inner, f.int("mamba_n_groups", "n_groups", default=1),
            f.int("mamba_d_state", "ssm_state_size", "state_size", default=128),
            f.int("mamba_d_conv", "conv_kernel", default=4))


def granitemoehybrid(f: Fields, layers: list, dims) -> list[Module]:
    """GraniteMoeHybridForCausalLM, named as the checkpoints are (transformers 5.25 conversion_mapping.py renames
    them on load; vLLM 0.34 granitemoehybrid.py load_weights reads these): per layer the Mamba-2 mixer under
    layers.N.mamba (conv1d biased under mamba_conv_bias, in_proj and out_proj under mamba_proj_bias) or attention
    under self_attn (attention_bias on q/k/v/o), two norms, the routed experts as two tensors
    block_sparse_moe.input_linear [E, 2 x intermediate, hidden] and output_linear [E, hidden, intermediate], the
    router block_sparse_moe.router.layer [E, hidden] (GateLinear in vLLM), and shared_mlp.input_linear
    (hidden -> 2 x shared_intermediate_size) and output_linear (a RowParallelLinear, no bias)."""
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    shared = f.int("shared_intermediate_size", default=1024)
    experts = f.int("num_local_experts", default=8, minimum=0)
    inter = f.int("intermediate_size") if experts else 0
    nh, inner, groups, state, kernel = _mamba2_fields(f, hidden)
    proj_bias = f.flag("mamba_proj_bias")
    out = _ends(f, hidden, False, 0)
    for i, layer in enumerate(layers):
        if layer.caches:
            out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim, f.flag("attention_bias"))
        else:
            out += _mamba2(f"layers.{i}.mamba", hidden, nh, inner, groups, state, kernel,
                           f.flag("mamba_conv_bias", default=True), proj_bias, proj_bias, True)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        m = f"layers.{i}.block_sparse_moe"
        if experts:
            out += [Module(f"{m}.input_linear", experts * 2 * inter * hidden, 0, "experts", experts, inputs=hidden),
                    Module(f"{m}.output_linear", experts * hidden * inter, 0, "experts", experts, inputs=inter),
                    _float(f"{m}.router.layer", experts * hidden, "router")]
        out += [_linear(f"layers.{i}.shared_mlp.input_linear", hidden, 2 * shared, "shared experts"),
                _linear(f"layers.{i}.shared_mlp.output_linear", shared, hidden, "shared experts")]
    return out


# -- Falcon-H1 (params_ssm._hybrid_params) -------------------------------------------------------------------------

def _hybrid_ends(f: Fields, hidden: int) -> list[Module]:
    """embed_tokens, final_layernorm and an LM head of its own unless tied (Falcon-H1, Jamba:
    param_embeddings._vocab_embed)."""
    out = _ends(f, hidden, False, 0)
    return [_float("final_layernorm", hidden) if m.name == "norm" else m for m in out]


def falcon_h1(f: Fields, layers: list, dims) -> list[Module]:
    """FalconH1ForCausalLM: every layer runs attention (self_attn q/k/v/o_proj, attention_bias on all four in
    transformers) and the Mamba-2 mixer (layers.N.mamba: in_proj under mamba_proj_bias, conv1d under
    mamba_conv_bias, out_proj under projectors_bias, the gated norm only with mamba_rms_norm) side by side, then
    feed_forward gate/up/down_proj (mlp_bias) when intermediate_size is set; input_layernorm and pre_ff_layernorm;
    embed_tokens, final_layernorm, lm_head. vLLM 0.34 falcon_h1.py builds q/k/v and o_proj without biases, so a
    config with attention_bias gets no table."""
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: vLLM 0.34's FalconH1 attention builds no biases")
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size", "d_model")
    inter = f.int("intermediate_size", default=0, minimum=0)
    nh = f.int("mamba_n_heads", "mamba_num_heads", "num_heads")
    inner = f.opt_int("mamba_d_ssm") or nh * f.int("mamba_d_head", "mamba_head_dim", "head_dim")
    groups = f.int("mamba_n_groups", "n_groups", default=1)
    state = f.int("mamba_d_state", "ssm_state_size", "state_size", default=128)
    kernel = f.int("mamba_d_conv", "conv_kernel", default=4)
    mlp_bias = f.flag("mlp_bias")
    out = _hybrid_ends(f, hidden)
    for i, layer in enumerate(layers):
        if layer.caches:
            out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim)
        if layer.state is not None:
            out += _mamba2(f"layers.{i}.mamba", hidden, nh, inner, groups, state, kernel,
                           f.flag("mamba_conv_bias", default=True), f.flag("mamba_proj_bias"),
                           f.flag("projectors_bias"), f.flag("mamba_rms_norm"))
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.pre_ff_layernorm", hidden)]
        if inter:
            m = f"layers.{i}.feed_forward"
            out += _mlp(m, hidden, inter, "mlp", mlp_bias)
    return out


# -- Jamba (params_ssm._hybrid_params) -----------------------------------------------------------------------------

def _mamba1(a: str, hidden: int, inner: int, state: int, kernel: int, dt_rank: int, conv_bias: bool,
            proj_bias: bool) -> list[Module]:
    """Jamba's Mamba mixer (transformers JambaMambaMixer; vLLM 0.34 mamba_mixer.py MambaMixer, use_rms_norm):
    in_proj hidden -> 2 x inner, the depthwise conv1d over inner channels, x_proj inner -> dt_rank + 2 x state,
    dt_proj dt_rank -> inner with its bias, A_log [inner, state], D [inner], out_proj inner -> hidden, and the
    dt / b / c RMSNorms (whole on every TP rank)."""
    return [_linear(f"{a}.in_proj", hidden, 2 * inner, MIXER, proj_bias),
            _float(f"{a}.conv1d", inner * (kernel + (1 if conv_bias else 0)), MIXER),
            _linear(f"{a}.x_proj", inner, dt_rank + 2 * state, MIXER),
            _linear(f"{a}.dt_proj", dt_rank, inner, MIXER, True),
            _float(f"{a}.A_log", inner * state, MIXER), _float(f"{a}.D", inner, MIXER),
            _linear(f"{a}.out_proj", inner, hidden, MIXER, proj_bias, row=True),
            _float(f"{a}.dt_layernorm", dt_rank), _float(f"{a}.b_layernorm", state),
            _float(f"{a}.c_layernorm", state)]


def jamba(f: Fields, layers: list, dims) -> list[Module]:
    """JambaForCausalLM: per layer attention (self_attn q/k/v/o_proj, no biases) or the Mamba mixer
    (layers.N.mamba, _mamba1), input_layernorm and pre_ff_layernorm, then on expert layers
    (i % expert_layer_period == expert_layer_offset) feed_forward.router [E, hidden] and the routed experts
    feed_forward.experts.N.gate/up/down_proj, else feed_forward.gate/up/down_proj; embed_tokens,
    final_layernorm, lm_head. vLLM 0.34 jamba.py builds the router as GateLinear, and the Mamba mixer's linears
    without a quantization method (JambaMambaDecoderLayer passes no quant_config to MambaMixer): the table counts
    them as linear weights a format quantizes unless its list keeps them, as the checkpoint would store them;
    vLLM would not load a checkpoint that quantized them."""
    from ..params_generic import _is_moe_layer

    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size", "d_model")
    inter = f.int("intermediate_size", default=0, minimum=0)
    inner = f.int("mamba_d_inner", default=int(f.number("mamba_expand", default=2) * hidden))
    state = f.int("state_size", "mamba_d_state", default=16)
    kernel = f.int("conv_kernel", "mamba_d_conv", default=4)
    dt_rank = f.get("time_step_rank", "mamba_dt_rank", default="auto")
    dt_rank = -(-hidden // 16) if dt_rank == "auto" else f.int("time_step_rank", "mamba_dt_rank")
    experts = f.int("num_local_experts", "num_experts", "n_routed_experts", default=0, minimum=0)
    out = _hybrid_ends(f, hidden)
    for i, layer in enumerate(layers):
        if layer.caches:
            out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim)
        if layer.state is not None:
            out += _mamba1(f"layers.{i}.mamba", hidden, inner, state, kernel, dt_rank,
                           f.flag("mamba_conv_bias", default=True), f.flag("mamba_proj_bias"))
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.pre_ff_layernorm", hidden)]
        m = f"layers.{i}.feed_forward"
        if experts > 1 and _is_moe_layer(f, i):
            moe_inter = f.int("moe_intermediate_size", "intermediate_size")
            out += _experts(m, experts, hidden, moe_inter) + [_float(f"{m}.router", hidden * experts, "router")]
        elif inter:
            out += _mlp(m, hidden, inter, "mlp")
    return out


# -- Zamba2 (params_ssm.zamba2) ------------------------------------------------------------------------------------

def zamba2(f: Fields, layers: list, dims) -> list[Module]:
    """Zamba2ForCausalLM (transformers 5.25 modeling_zamba2.py; vLLM 0.34 zamba2.py): every layer a Mamba-2 mixer
    (layers.N.mamba, on hybrid layers layers.N.mamba_decoder.mamba; conv1d always biased, in_proj and out_proj
    under add_bias_linear) with its input_layernorm; hybrid layers also a linear hidden -> hidden (a
    ReplicatedLinear in vLLM: whole on every rank) and one of num_mem_blocks shared transformer blocks, each
    stored once, under the first hybrid layer that runs it (transformers ties the later ones to it):
    self_attn q/k/v_proj over attention_hidden_size, o_proj, input_layernorm (attention_hidden_size) and
    pre_ff_layernorm, feed_forward.gate_up_proj and down_proj (add_bias_linear), and per hybrid layer i run by
    that block the LoRA adapters feed_forward.gate_up_proj_adapter_list.i.0 / .1 (and with
    use_shared_attention_adapter self_attn.linear_q/k/v_adapter_list.i.0 / .1), which vLLM splits
    (Zamba2LoRA: ColumnParallelLinear A and B). Embeddings tied by default, final_layernorm."""
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    attn_in = f.int("attention_hidden_size", default=2 * hidden)
    inter = f.int("intermediate_size")
    rank = f.int("adapter_rank", default=128)
    bias = f.flag("add_bias_linear")
    attention_adapter = f.flag("use_shared_attention_adapter")
    nh, inner, groups, state, kernel = _mamba2_fields(f, hidden)
    hybrid = [i for i, layer in enumerate(layers) if layer.caches]
    blocks = min(len(hybrid), f.int("num_mem_blocks", default=1))
    out = _ends(f, hidden, True, 0)
    out = [_float("final_layernorm", hidden) if m.name == "norm" else m for m in out]
    for i in range(len(layers)):
        d = f"layers.{i}.mamba_decoder" if i in hybrid else f"layers.{i}"
        out += [_float(f"{d}.input_layernorm", hidden),
                *_mamba2(f"{d}.mamba", hidden, nh, inner, groups, state, kernel, True, bias, bias, True)]
        if i in hybrid:
            out.append(_linear(f"layers.{i}.linear", hidden, hidden, MIXER, whole=True))
    for b in range(blocks):
        t = f"layers.{hybrid[b]}.shared_transformer"
        out += [*_qkvo(f"{t}.self_attn", attn_in, heads, kv, head_dim)[:3],
                _linear(f"{t}.self_attn.o_proj", heads * head_dim, hidden, "attention"),
                _float(f"{t}.input_layernorm", attn_in), _float(f"{t}.pre_ff_layernorm", hidden),
                _linear(f"{t}.feed_forward.gate_up_proj", hidden, 2 * inter, "mlp", bias),
                _linear(f"{t}.feed_forward.down_proj", inter, hidden, "mlp", bias, row=True)]
        for slot in range(b, len(hybrid), f.int("num_mem_blocks", default=1)):
            a = f"{t}.feed_forward.gate_up_proj_adapter_list.{slot}"
            out += [_linear(f"{a}.0", hidden, rank, "mlp"), _linear(f"{a}.1", rank, 2 * inter, "mlp")]
            if attention_adapter:
                for x in "qkv":
                    a = f"{t}.self_attn.linear_{x}_adapter_list.{slot}"
                    out += [_linear(f"{a}.0", attn_in, rank, "attention"),
                            _linear(f"{a}.1", rank, attn_in, "attention")]
    return out


HYBRID = {"nemotron_h": nemotron_h, "granitemoehybrid": granitemoehybrid, "falcon_h1": falcon_h1, "jamba": jamba,
          "zamba2": zamba2}
