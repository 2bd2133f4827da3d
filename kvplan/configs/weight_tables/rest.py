"""Per-module parameter tables (configs/weight_tables/__init__.py) of the remaining families: Nemotron-NAS (nemotron-nas),
the pure Mamba models (mamba, falcon_mamba, mamba2), OLMo Hybrid (olmo_hybrid), Zamba v1 (zamba), GPT-Neo (gpt_neo),
RecurrentGemma (recurrent_gemma), IQuest-Coder-V1-Loop (iquestloopcoder), LFM3 (lfm3), DomynEdge (domynedge) and
Moondream 3 (moondream3). Each mirrors its counter term by term (params_dense_special.nemotron_nas,
params_ssm._hybrid_params for the
Mamba models, params_hybrid.olmo_hybrid, params_ssm.zamba, the params_decoder.decoder row of gpt_neo in families.py,
params_ssm.recurrent_gemma, params_dense_special.iquest_loop, params_hybrid.lfm3, domyn_edge.params,
params_moondream.moondream3_params) and names the modules as the checkpoints' safetensors do (transformers 5.25
modeling_<type>.py and conversion_mapping.py; Nemotron-NAS's remote modeling_decilm.py and the other families
transformers does not build as the vLLM 0.34 model file loads them; each function says which).

No table yet (their layouts want a reading of their own): Inkling (inkling_model: vLLM 0.34 models/inkling holds
the embeddings whole on every rank, pads the router to a multiple of 8 rows, and its InklingModelConfig's defaults
build no embed_norm, gate bias or global scales where transformers 5.25's builds them), GLM-5-Next
(glm5_next_text), Qwen4-Exp (qwen4_exp_text) and DeepSeek-V4.1 (deepseek_v41_text, whose modules are stored in
several dtypes, as configs/compressed.py sizes DeepSeek-V4's).

What each TP rank holds whole (weight_tables.replicated_params), as read in vLLM 0.34.0:
- nemotron_nas.py DeciLMDecoderLayer: the RMSNorms input_layernorm / post_attention_layernorm (only where the
  layer's attention / FFN is not no_op) and the final norm; the biases of the RowParallelLinear o_proj
  (LlamaAttention bias_o_proj = attention_bias) and down_proj (LlamaMLP bias = mlp_bias). The rest splits.
- mamba.py MambaDecoderLayer (Mamba and Falcon-Mamba) and layers/mamba/mamba_mixer.py MambaMixer: the RMSNorms
  (layers.N.norm, norm_f); MambaMixer splits in_proj and conv1d (column-parallel), x_proj (a RowParallelLinear
  without a bias), dt_proj (weight and bias), A and D over the inner channels and out_proj by rows: out_proj's
  bias (use_bias) is whole. Falcon-Mamba's dt / b / c RMSNorms have no weight (rms_norm_has_weight False,
  FalconMambaWeightlessRMSNorm in transformers): nothing to hold.
- mamba2.py Mamba2DecoderLayer and layers/mamba/mamba_mixer2.py MambaMixer2: the RMSNorms, and with n_groups 1 the
  B and C rows of in_proj and channels of conv1d (the one-group repeat: weight_tables.hybrid._mamba2, reused);
  out_proj's bias (use_bias) whole; the rest split with the heads.
- olmo_hybrid.py: the RMSNorms (decoder norms, the final norm, OlmoHybridAttention's q_norm over hidden_size and
  k_norm over all KV heads, which vLLM keeps whole and applies after all-gathering q and k) and the Gated
  DeltaNet's o_norm (layers/mamba/gdn/olmo_gdn_linear_attn.py RMSNormGated over head_v_dim). No biases.
- Zamba v1, GPT-Neo and RecurrentGemma have no vLLM model file (registry.py of 0.34: not served, nor listed in
  _PREVIOUSLY_SUPPORTED_MODELS; engines/vllm_rope_cache.py says the same of earlier releases): their tables follow
  transformers 5.25, and the whole parts follow the rule vLLM applies to the same modules elsewhere: norms, the
  biases of the output projections (GPT-Neo's out_proj and c_proj, RecurrentGemma's o_proj, linear_out and
  down_proj), Zamba's per-hybrid-layer linear as Zamba2's (zamba2.py ReplicatedLinear). Not read in a vLLM file.

Mamba's mixers (mamba_mixer.py, mamba_mixer2.py in mamba.py / mamba2.py) get no quant_config from vLLM 0.34: a
format's quantized count of in_proj / x_proj / dt_proj / out_proj is as the checkpoint would store them, which
vLLM would not load. vLLM builds MambaMixer's and MambaMixer2's A (the checkpoint's A_log) in float32 whatever the
model dtype (dtype=torch.float32 in both constructors): configs/param_fp32.py marks it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _float, _linear, _mlp, _qkvo
from .hybrid import MIXER, _mamba2
from ..param_embeddings import _TIED_BY_DEFAULT
from ..param_parts import embeddings


def _top(prefix: str, modules: list[Module]) -> list[Module]:
    """The modules named from the top of the checkpoint under `prefix` (Mamba's `backbone.`)."""
    return [replace(m, name=prefix + m.name, top=True) for m in modules]


# -- Nemotron-NAS (params_dense_special.nemotron_nas) ------------------------------------------------------------------

def nemotron_nas(f: Fields, layers: list, dims) -> list[Module]:
    """DeciLMForCausalLM (vLLM 0.34 nemotron_nas.py DeciLMDecoderLayer; the remote modeling_decilm.py), layer by
    layer from block_configs (configs/nemotron_nas.py blocks): an attention that is not no_op has its
    input_layernorm and Llama's self_attn.q/k/v/o_proj with the layer's own KV heads (biases on all four with
    attention_bias), or, replaced by a linear, self_attn.linear_attn (hidden x hidden, no bias); an FFN that is not
    no_op has its post_attention_layernorm and mlp.gate/up/down_proj of the layer's width (mlp_bias), or
    mlp.linear_mlp. Then embed_tokens, norm and the untied lm_head. Where a layer has fewer KV heads than the TP
    size, vLLM's QKVParallelLinear copies them to every rank, which the even split of k/v_proj undercounts."""
    from ..nemotron_nas import blocks, dims as nas_dims

    heads, _, head_dim, _ = nas_dims(f)
    hidden = f.int("hidden_size")
    attention_bias, mlp_bias = f.flag("attention_bias"), f.flag("mlp_bias")
    out = _ends(f, hidden, False, 0)
    for i, b in enumerate(blocks(f, f.int("num_hidden_layers"))[:len(layers)]):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        if b.attention != "none":
            out.append(_float(f"layers.{i}.input_layernorm", hidden))
        if b.attention == "attention":
            kv = b.kv_heads * head_dim
            out += [_linear(f"{a}.q_proj", hidden, heads * head_dim, "attention", attention_bias),
                    _linear(f"{a}.k_proj", hidden, kv, "attention", attention_bias, kv_heads=b.kv_heads),
                    _linear(f"{a}.v_proj", hidden, kv, "attention", attention_bias, kv_heads=b.kv_heads),
                    _linear(f"{a}.o_proj", heads * head_dim, hidden, "attention", attention_bias, row=True)]
        elif b.attention == "linear":
            out.append(_linear(f"{a}.linear_attn", hidden, hidden, "attention"))
        if b.ffn != "none":
            out.append(_float(f"layers.{i}.post_attention_layernorm", hidden))
        if b.ffn == "mlp":
            out += _mlp(m, hidden, b.intermediate, "mlp", mlp_bias)
        elif b.ffn == "linear":
            out.append(_linear(f"{m}.linear_mlp", hidden, hidden, "mlp"))
    return out


# -- Mamba, Falcon-Mamba, Mamba-2 (params_ssm._hybrid_params) ------------------------------------------------------

def _backbone_ends(f: Fields, hidden: int, tied_default: bool) -> list[Module]:
    """backbone.embeddings, backbone.norm_f and lm_head (none where tied)."""
    return _ends(f, hidden, tied_default, 0, "backbone.embeddings", "backbone.norm_f", top=True)


def _counted_biases(f: Fields, conv: bool, proj: bool) -> None:
    """The counter counts conv1d's bias always and in_proj's / out_proj's never: a config that says otherwise
    gets no table (and its count is not exact either)."""
    if f.flag("use_conv_bias", default=True) != conv or f.flag("use_bias") != proj:
        raise ConfigError("use_bias / use_conv_bias other than kvplan's parameter count assumes")


def mamba(f: Fields, layers: list, dims) -> list[Module]:
    """MambaForCausalLM and FalconMambaForCausalLM (transformers 5.25 modeling_mamba.py MambaMixer,
    modeling_falcon_mamba.py; vLLM 0.34 mamba.py): backbone.layers.N.norm and .mixer: in_proj hidden ->
    2 x inner, conv1d (depthwise over inner, kernel conv_kernel, with a bias), x_proj inner -> dt_rank + 2 x state,
    dt_proj dt_rank -> inner with its bias, A_log [inner, state], D [inner], out_proj inner -> hidden; Falcon-Mamba's
    mixer norms hold no weight. inner, state, kernel and dt_rank as the counter reads them (the family's aliases
    give intermediate_size and expand)."""
    _counted_biases(f, True, False)
    hidden = f.int("hidden_size", "d_model")
    inner = f.int("mamba_d_inner", default=int(f.number("mamba_expand", default=2) * hidden))
    state = f.int("state_size", "mamba_d_state", default=16)
    kernel = f.int("conv_kernel", "mamba_d_conv", default=4)
    dt_rank = f.get("time_step_rank", "mamba_dt_rank", default="auto")
    dt_rank = -(-hidden // 16) if dt_rank == "auto" else f.int("time_step_rank", "mamba_dt_rank")
    out = _backbone_ends(f, hidden, f.model_type in _TIED_BY_DEFAULT)
    for i, layer in enumerate(layers):
        if layer.state is None:
            raise ConfigError("a Mamba layer without a state")
        a = f"layers.{i}.mixer"
        out += _top("backbone.", [
            _float(f"layers.{i}.norm", hidden),
            _linear(f"{a}.in_proj", hidden, 2 * inner, MIXER),
            _float(f"{a}.conv1d", inner * (kernel + 1), MIXER),
            _linear(f"{a}.x_proj", inner, dt_rank + 2 * state, MIXER),
            _linear(f"{a}.dt_proj", dt_rank, inner, MIXER, True),
            _float(f"{a}.A_log", inner * state, MIXER), _float(f"{a}.D", inner, MIXER),
            _linear(f"{a}.out_proj", inner, hidden, MIXER)])
    return out


def mamba2(f: Fields, layers: list, dims) -> list[Module]:
    """Mamba2ForCausalLM (transformers 5.25 modeling_mamba2.py Mamba2Mixer; vLLM 0.34 mamba2.py MambaMixer2):
    backbone.layers.N.norm and .mixer: in_proj, conv1d (with a bias), dt_bias, A_log, D, the gated norm over
    inner and out_proj (weight_tables.hybrid._mamba2), heads, head_dim, n_groups, state and kernel as the counter
    reads them; backbone.embeddings, backbone.norm_f, lm_head (untied by default)."""
    _counted_biases(f, True, False)
    hidden = f.int("hidden_size", "d_model")
    heads = f.int("n_heads", "num_heads")
    inner = f.opt_int("d_ssm") or heads * f.int("d_head", "head_dim")
    groups = f.int("n_groups", default=1)
    state = f.int("d_state", "ssm_state_size", "state_size", default=128)
    kernel = f.int("d_conv", "conv_kernel", default=4)
    out = _backbone_ends(f, hidden, False)
    for i, layer in enumerate(layers):
        if layer.state is None:
            raise ConfigError("a Mamba-2 layer without a state")
        out += _top("backbone.", [_float(f"layers.{i}.norm", hidden),
                                  *_mamba2(f"layers.{i}.mixer", hidden, heads, inner, groups, state, kernel,
                                           True, False, False, True)])
    return out


# -- OLMo Hybrid (params_hybrid.olmo_hybrid) -------------------------------------------------------------------

def olmo_hybrid(f: Fields, layers: list, dims) -> list[Module]:
    """OlmoHybridForCausalLM, named as the checkpoints are (transformers 5.25 conversion_mapping.py "olmo_hybrid"
    renames them on load; vLLM 0.34 olmo_hybrid.py OlmoHybridModel.hf_to_vllm_mapper reads them): attention layers
    self_attn.q/k/v/o_proj, q_norm (heads x head_dim) and k_norm (KV heads x head_dim), post_attention_layernorm
    and post_feedforward_layernorm; Gated DeltaNet layers linear_attn.q/k_proj (key_dim), v_proj and g_proj
    (value_dim), a_proj and b_proj (value heads), q_conv1d / k_conv1d / v_conv1d (kernel, no bias), A_log, dt_bias,
    o_norm (head_v_dim), o_proj, with attention_layer_norm and feedforward_layer_norm; every layer
    mlp.gate/up/down_proj; embed_tokens, norm, lm_head. vLLM builds no attention biases and heads of
    hidden_size / num_attention_heads (q_norm over hidden_size): a config with attention_bias, or a head_dim
    other than that, gets no table."""
    from ..params_hybrid import olmo_hybrid_fields

    hidden, heads, kv, head_dim, v_heads, v_dim, key_dim, value_dim, kernel = olmo_hybrid_fields(f)
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: vLLM 0.34 olmo_hybrid.py builds no attention biases")
    if heads * head_dim != hidden:
        raise ConfigError("head_dim: vLLM 0.34 olmo_hybrid.py takes hidden_size / num_attention_heads")
    inter = f.int("intermediate_size", default=11008)
    gdn = "linear attention"
    out = _ends(f, hidden, False, 100352)
    for i, layer in enumerate(layers):
        if layer.caches:
            a = f"layers.{i}.self_attn"
            out += [*_qkvo(a, hidden, heads, kv, head_dim),
                    _float(f"{a}.q_norm", heads * head_dim), _float(f"{a}.k_norm", kv * head_dim),
                    _float(f"layers.{i}.post_attention_layernorm", hidden),
                    _float(f"layers.{i}.post_feedforward_layernorm", hidden)]
        else:
            a = f"layers.{i}.linear_attn"
            out += [_linear(f"{a}.q_proj", hidden, key_dim, gdn), _linear(f"{a}.k_proj", hidden, key_dim, gdn),
                    _linear(f"{a}.v_proj", hidden, value_dim, gdn), _linear(f"{a}.g_proj", hidden, value_dim, gdn),
                    _linear(f"{a}.a_proj", hidden, v_heads, gdn), _linear(f"{a}.b_proj", hidden, v_heads, gdn),
                    _float(f"{a}.q_conv1d", key_dim * kernel, gdn), _float(f"{a}.k_conv1d", key_dim * kernel, gdn),
                    _float(f"{a}.v_conv1d", value_dim * kernel, gdn),
                    _float(f"{a}.A_log", v_heads, gdn), _float(f"{a}.dt_bias", v_heads, gdn),
                    _float(f"{a}.o_norm", v_dim), _linear(f"{a}.o_proj", value_dim, hidden, gdn),
                    _float(f"layers.{i}.attention_layer_norm", hidden),
                    _float(f"layers.{i}.feedforward_layer_norm", hidden)]
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
    return out


# -- Zamba v1 (params_ssm.zamba) -----------------------------------------------------------------------------------

def zamba(f: Fields, layers: list, dims) -> list[Module]:
    """ZambaForCausalLM (transformers 5.25 modeling_zamba.py; no vLLM model file): every layer a Mamba mixer
    (layers.N.mamba, on hybrid layers layers.N.mamba_decoder.mamba) with its input_layernorm: in_proj
    hidden -> 2 x inner (no bias), conv1d (bias under mamba_conv_bias), the per-head x_proj_weight
    [heads, dt_rank + 2 x state, inner / heads], dt_proj_weight [heads, inner / heads, dt_rank] and dt_proj_bias,
    A_log, D and out_proj (bare parameters, not linear layers: never quantized); hybrid layers a linear
    hidden -> hidden, and ONE shared transformer block stored under the first hybrid layer (transformers ties the
    later ones to it): self_attn.q/k/v_proj over attention_hidden_size, o_proj, input_layernorm
    (attention_hidden_size), pre_ff_layernorm, feed_forward.gate/up/down_proj. Embeddings tied by default,
    final_layernorm. The counter builds in_proj and out_proj without biases: a config with mamba_proj_bias gets
    no table."""
    if f.flag("mamba_proj_bias"):
        raise ConfigError("mamba_proj_bias: kvplan's Zamba count has no in_proj / out_proj biases")
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    attn_in = f.int("attention_hidden_size", default=2 * hidden)
    inner = int(f.number("mamba_expand", default=2) * hidden)
    state = f.int("mamba_d_state", default=16)
    kernel = f.int("mamba_d_conv", default=4)
    dt_rank = f.get("mamba_dt_rank", default="auto")
    dt_rank = -(-hidden // 16) if dt_rank == "auto" else f.int("mamba_dt_rank")
    conv = inner * kernel + (inner if f.flag("mamba_conv_bias", default=True) else 0)
    hybrid = [i for i, layer in enumerate(layers) if layer.caches]
    out = [_float("final_layernorm", hidden) if m.name == "norm" else m for m in _ends(f, hidden, True, 0)]
    for i in range(len(layers)):
        d = f"layers.{i}.mamba_decoder" if i in hybrid else f"layers.{i}"
        a = f"{d}.mamba"
        out += [_float(f"{d}.input_layernorm", hidden),
                _linear(f"{a}.in_proj", hidden, 2 * inner, MIXER), _float(f"{a}.conv1d", conv, MIXER),
                _float(f"{a}.x_proj_weight", inner * (dt_rank + 2 * state), MIXER),
                _float(f"{a}.dt_proj_weight", inner * dt_rank, MIXER), _float(f"{a}.dt_proj_bias", inner, MIXER),
                _float(f"{a}.A_log", inner * state, MIXER), _float(f"{a}.D", inner, MIXER),
                _linear(f"{a}.out_proj", inner, hidden, MIXER)]
        if i in hybrid:
            out.append(_linear(f"layers.{i}.linear", hidden, hidden, MIXER, whole=True))
    if hybrid:
        t = f"layers.{hybrid[0]}.shared_transf"
        out += [*_qkvo(f"{t}.self_attn", hidden, heads, kv, head_dim, inputs=attn_in),
                _float(f"{t}.input_layernorm", attn_in), _float(f"{t}.pre_ff_layernorm", hidden),
                *_mlp(f"{t}.feed_forward", hidden, f.int("intermediate_size"), "mlp")]
    return out


# -- GPT-Neo (families.py: params_decoder.decoder(mlp="plain", o_bias=True, mlp_bias=True, positions=...)) -------------

def gpt_neo(f: Fields, layers: list, dims) -> list[Module]:
    """GPTNeoForCausalLM (transformers 5.25 modeling_gpt_neo.py; no vLLM model file), named from the top:
    transformer.wte, transformer.wpe (max_position_embeddings rows), per block transformer.h.N.ln_1 and ln_2
    (LayerNorms with biases), attn.attention.q/k/v_proj (no bias) and out_proj (with a bias), mlp.c_fc and
    mlp.c_proj (nn.Linear, with biases; width intermediate_size, else 4 x hidden); transformer.ln_f; lm_head tied
    by default."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", default=None, maximum=10**8) or 4 * hidden
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [Module("transformer.wte", 0, vocab * hidden, "embeddings", top=True),
           Module("transformer.wpe", 0, f.int("max_position_embeddings") * hidden, "embeddings", top=True,
                  whole=True),
           Module("transformer.ln_f", 0, 2 * hidden, "norms", top=True)]
    head = embeddings(f, hidden, True, 0) - vocab * hidden
    if head:
        out.append(Module("lm_head", head, 0, "lm_head", top=True, inputs=hidden))
    for i in range(len(layers)):
        h, a = f"transformer.h.{i}", f"transformer.h.{i}.attn.attention"
        out += _top("", [_float(f"{h}.ln_1", 2 * hidden), _float(f"{h}.ln_2", 2 * hidden),
                         _linear(f"{a}.q_proj", hidden, heads * head_dim, "attention"),
                         _linear(f"{a}.k_proj", hidden, kv * head_dim, "attention", kv_heads=kv),
                         _linear(f"{a}.v_proj", hidden, kv * head_dim, "attention", kv_heads=kv),
                         _linear(f"{a}.out_proj", heads * head_dim, hidden, "attention", True, row=True),
                         _linear(f"{h}.mlp.c_fc", hidden, inter, "mlp", True),
                         _linear(f"{h}.mlp.c_proj", inter, hidden, "mlp", True, row=True)])
    return out


# -- RecurrentGemma (params_ssm.recurrent_gemma) -------------------------------------------------------------------

def recurrent_gemma(f: Fields, layers: list, dims) -> list[Module]:
    """RecurrentGemmaForCausalLM (transformers 5.25 modeling_recurrent_gemma.py; no vLLM model file): per layer
    temporal_pre_norm and channel_pre_norm, mlp_block.gate/up/down_proj of intermediate_size / 2 (with biases),
    and the temporal block: local attention (temporal_block.q/k/v_proj, biased with attention_bias, and o_proj
    with a bias) or the recurrent block (temporal_block.linear_x, linear_y, linear_out with biases; conv_1d,
    depthwise over lru_width with a bias; rg_lru.recurrent_param, input_gate_weight / recurrent_gate_weight
    [heads, lru / heads, lru / heads] and their biases: bare parameters, never quantized); embed_tokens,
    final_norm, lm_head tied by default."""
    hidden = f.int("hidden_size")
    heads, kv, head_dim = dims[:3] if dims else (f.int("num_attention_heads"), 0, 0)
    lru = f.int("lru_width", default=hidden)
    width = f.int("conv1d_width", default=4)
    bias = f.flag("attention_bias")
    inter = f.int("intermediate_size") // 2
    block = (lru // heads) ** 2 * heads
    out = [_float("final_norm", hidden) if m.name == "norm" else m for m in _ends(f, hidden, True, 0)]
    for i, layer in enumerate(layers):
        t = f"layers.{i}.temporal_block"
        if layer.caches:
            out += _qkvo(t, hidden, heads, kv, head_dim, bias, o_bias=True)
        else:
            out += [_linear(f"{t}.linear_x", hidden, lru, MIXER, True),
                    _linear(f"{t}.linear_y", hidden, lru, MIXER, True),
                    _linear(f"{t}.linear_out", lru, hidden, MIXER, True, row=True),
                    _float(f"{t}.conv_1d", lru * (width + 1), MIXER),
                    _float(f"{t}.rg_lru.recurrent_param", lru, MIXER),
                    _float(f"{t}.rg_lru.input_gate_weight", block, MIXER),
                    _float(f"{t}.rg_lru.input_gate_bias", lru, MIXER),
                    _float(f"{t}.rg_lru.recurrent_gate_weight", block, MIXER),
                    _float(f"{t}.rg_lru.recurrent_gate_bias", lru, MIXER)]
        m = f"layers.{i}.mlp_block"
        out += [_float(f"layers.{i}.temporal_pre_norm", hidden), _float(f"layers.{i}.channel_pre_norm", hidden)]
        out += _mlp(m, hidden, inter, "mlp", True)
    return out


# -- IQuest-Coder-V1-Loop (params_dense_special.iquest_loop) -----------------------------------------------------------

def iquest_loop(f: Fields, layers: list, dims) -> list[Module]:
    """IQuestLoopCoderForCausalLM as vLLM 0.34 iquest_loopcoder.py builds and loads it (transformers 5.25 has no
    loop model): a Llama decoder whose loops share its weights (self_attn.q/k/v/o_proj without biases, heads of
    hidden_size / num_attention_heads; mlp.gate/up/down_proj; input_layernorm, post_attention_layernorm), and per
    layer gate_projections.N (head_dim -> heads, with a bias: LoopGateProjection's ColumnParallelLinear, split
    with the heads, its bias too); embed_tokens, norm, lm_head. A config with attention_bias or mlp_bias, which
    vLLM's LoopCoderAttention and LlamaMLP here build without, or a head_dim other than hidden / heads, gets no
    table."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    if f.flag("attention_bias") or f.flag("mlp_bias"):
        raise ConfigError("attention_bias / mlp_bias: vLLM 0.34 iquest_loopcoder.py builds no biases")
    if heads * head_dim != hidden:
        raise ConfigError("head_dim: vLLM 0.34 iquest_loopcoder.py takes hidden_size / num_attention_heads")
    inter = f.int("intermediate_size", default=4 * hidden, maximum=10**8)
    out = _ends(f, hidden, f.model_type in _TIED_BY_DEFAULT, 0)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += [*_qkvo(a, hidden, heads, kv, head_dim),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden),
                *_mlp(f"layers.{i}.mlp", hidden, inter, "mlp"),
                _linear(f"gate_projections.{i}", head_dim, heads, "attention", True)]
    return out


# -- LFM3 (params_hybrid.lfm3) -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Lfm(Module):
    """An LFM3 module: LFM3-Audio's checkpoints put the text model under `lfm.model.` and its head at `lfm.lm_head`
    (vLLM 0.34 lfm3_audio.py hf_to_vllm_mapper), besides a causal LM's own names."""

    def names(self, expert: int = 0) -> list[str]:
        name = self.name.replace("{e}", str(expert))
        return super().names(expert) + ["lfm." + name if self.top else "lfm.model." + name]


def lfm3(f: Fields, layers: list, dims) -> list[Module]:
    """Lfm3ForCausalLM (transformers 5.25 modeling_lfm3.py; vLLM 0.34 lfm3.py), named as the checkpoints are
    (transformers renames self_attn.gate_proj to g_proj on load: conversion_mapping.py "lfm3"; vLLM reads
    gate_proj): per layer operator_norm, ffn_norm (and post_operator_norm, post_ffn_norm with use_sandwich_norm),
    feed_forward.w1 / w3 / w2, and attention (self_attn.q/k/v/o_proj, q_norm and k_norm over head_dim, the
    per-head gate_proj with use_attention_gate) or the short convolution (conv.conv, depthwise over hidden with
    conv_L_cache taps, conv.in_proj hidden -> 3 x hidden, conv.out_proj; biases under conv_bias); embed_tokens,
    embedding_norm (the final norm), lm_head tied by default. vLLM splits the attention gate with the heads, conv
    and in_proj by channel, and holds the norms and out_proj's bias (a RowParallelLinear) whole; it builds no
    attention biases, so a config with attention_bias gets no table."""
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: vLLM 0.34 lfm3.py builds no attention biases")
    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=16)
    kv = f.int("num_key_value_heads", default=4)
    head_dim = f.int("head_dim", default=128)
    gate = f.flag("use_attention_gate", default=True)
    conv_bias = f.flag("conv_bias")
    kernel = f.int("conv_L_cache", default=7)
    sandwich = f.flag("use_sandwich_norm", default=True)
    inter = f.int("intermediate_size", default=7680)
    out = [_float("embedding_norm", hidden) if m.name == "norm" else m for m in _ends(f, hidden, True, 128000)]
    for i, layer in enumerate(layers):
        a, c, m = f"layers.{i}.self_attn", f"layers.{i}.conv", f"layers.{i}.feed_forward"
        if layer.caches:
            out += [*_qkvo(a, hidden, heads, kv, head_dim), _float(f"{a}.q_norm", head_dim),
                    _float(f"{a}.k_norm", head_dim)]
            if gate:
                out.append(_linear(f"{a}.gate_proj", hidden, heads, "attention"))
        else:
            out += [_float(f"{c}.conv", hidden * (kernel + (1 if conv_bias else 0)), MIXER),
                    _linear(f"{c}.in_proj", hidden, 3 * hidden, MIXER, conv_bias),
                    _linear(f"{c}.out_proj", hidden, hidden, MIXER, conv_bias, row=True)]
        out += [_float(f"layers.{i}.operator_norm", hidden), _float(f"layers.{i}.ffn_norm", hidden)]
        if sandwich:
            out += [_float(f"layers.{i}.post_operator_norm", hidden), _float(f"layers.{i}.post_ffn_norm", hidden)]
        out += [_linear(f"{m}.w1", hidden, inter, "mlp"), _linear(f"{m}.w3", hidden, inter, "mlp"),
                _linear(f"{m}.w2", inter, hidden, "mlp")]
    return [_Lfm(**{k.name: getattr(x, k.name) for k in fields(Module)}) for x in out]


# -- DomynEdge (domyn_edge.params) ----------------------------------------------------------------------------

def domyn_edge(f: Fields, layers: list, dims) -> list[Module]:
    """DomynEdgeForCausalLM as vLLM 0.34 domyn_edge.py builds it (no transformers model), under the names its
    loader takes (Qwen2Model.load_weights, which stacks q/k/v_proj into qkv_proj and gate/up_proj into
    gate_up_proj): per layer attention.q/k/v/o_proj of the layer's head_dim (no biases), attention.k_norm over
    head_dim (q_norm holds no weight), pre_attention_norm, post_attention_norm, pre_feedforward_norm,
    post_feedforward_norm, feedforward.gate/up/down_proj; embed_tokens, norm, lm_head (tied by default). No
    public checkpoint was read: the names are vLLM's loader's."""
    from ..domyn_edge import DEFAULTS, head_dim

    heads, kv = dims[0], dims[1]
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size")
    out = _ends(f, hidden, True, DEFAULTS["vocab_size"])
    for i in range(len(layers)):
        d, a = head_dim(f, i), f"layers.{i}.attention"
        out += [*_qkvo(a, hidden, heads, kv, d), _float(f"{a}.k_norm", d),
                *(_float(f"layers.{i}.{n}_norm", hidden) for n in ("pre_attention", "post_attention",
                                                                   "pre_feedforward", "post_feedforward")),
                *_mlp(f"layers.{i}.feedforward", hidden, inter, "mlp")]
    return out


# -- Moondream 3 (params_moondream.moondream3_params) ----------------------------------------------------------

def moondream3(f: Fields, layers: list, dims) -> list[Module]:
    """Moondream 3's text model (HfMoondream; vLLM 0.34 moondream3.py Moondream3ForCausalLM), under the
    checkpoint's names as vLLM's load_weights reads them (model.text.*): per block text.blocks.N.ln (a LayerNorm,
    weight and bias), attn.qkv (biased; vLLM's qkv_proj) and attn.proj (biased; out_proj, a RowParallelLinear),
    attn.tau.alpha / tau.wq / tau.wv (bare parameters, split by head), and below start_layer mlp.fc1 / mlp.fc2
    (biased linears), from it the routed experts as the two tensors mlp.fc1 [E, 2 x inner, dim] and mlp.fc2
    [E, dim, inner] (vLLM holds E / TP experts a rank and builds them without a quantization method) with
    mlp.router (weight and bias: GateLinear, whole); text.wte, text.post_ln (a LayerNorm), text.lm_head with its
    bias (ParallelLMHead: split with the vocabulary). Whole: the LayerNorms, the routers and the biases of
    attn.proj and the dense mlp.fc2."""
    from ..params_moondream import _moe

    heads, kv, head_dim, _ = dims
    dim = f.int("hidden_size")
    ff = f.int("intermediate_size")
    vocab = f.int("vocab_size")
    moe = _moe(f)
    experts, inner = moe["n_experts"], moe["expert_inner_dim"]
    qkv = (heads + 2 * kv) * head_dim
    out = [_float("text.wte", vocab * dim, "embeddings"), Module("text.post_ln", 0, 2 * dim, "norms"),
           Module("text.lm_head", vocab * dim, vocab, "lm_head", inputs=dim)]
    for i in range(len(layers)):
        b = f"text.blocks.{i}"
        out += [Module(f"{b}.ln", 0, 2 * dim, "norms"),
                _linear(f"{b}.attn.qkv", dim, qkv, "attention", True, kv_heads=kv, kv_outputs=2 * kv * head_dim),
                _linear(f"{b}.attn.proj", dim, dim, "attention", True, row=True),
                _float(f"{b}.attn.tau.alpha", heads, "attention"),
                _float(f"{b}.attn.tau.wq", heads * 3 * dim, "attention"),
                _float(f"{b}.attn.tau.wv", heads * 3 * dim, "attention")]
        if i < moe["start_layer"]:
            out += [_linear(f"{b}.mlp.fc1", dim, ff, "mlp", True),
                    _linear(f"{b}.mlp.fc2", ff, dim, "mlp", True, row=True)]
        else:
            out += [Module(f"{b}.mlp.fc1", experts * 2 * inner * dim, 0, "experts", experts, inputs=dim),
                    Module(f"{b}.mlp.fc2", experts * dim * inner, 0, "experts", experts, inputs=inner),
                    Module(f"{b}.mlp.router", 0, dim * experts + experts, "router")]
    return out


REST = {"nemotron-nas": nemotron_nas, "mamba": mamba, "falcon_mamba": mamba, "mamba2": mamba2,
        "olmo_hybrid": olmo_hybrid, "zamba": zamba, "gpt_neo": gpt_neo, "recurrent_gemma": recurrent_gemma,
        "iquestloopcoder": iquest_loop, "lfm3": lfm3, "domynedge": domyn_edge,
        "moondream3": moondream3}
