"""Per-module parameter tables (configs/weight_tables/__init__.py) of more mixture-of-experts decoders with ordinary
K/V attention: dots.llm1 (dots1), HunYuan-MoE (hunyuan_v1_moe), OLMoE (olmoe), PhiMoE (phimoe), the Granite MoEs
(granitemoe, granitemoeshared, granitemoe_swa), JetMoE (jetmoe), Solar Open (solar_open), Sarvam-MoE (sarvam_moe),
AFMoE (afmoe), EXAONE MoE (exaone_moe), MiniCPM5-MoE (minicpm5_moe), Hunyuan 3 (hy_v3), Cohere2-MoE
(cohere2_moe), FlexOlmo (flex_olmo), Aria's text model (aria_text), Mellum (mellum), Doge (doge), Beam (beam),
Flint (flint), Kolibri 1 (kolibri1), Ergo (ergo) and Param2 (param2moe), each mirroring its counter term by term
(params_moe.dots1, hunyuan_v1_moe, olmoe, phimoe, granitemoe, jetmoe, solar_open, afmoe, exaone_moe, hy_v3,
cohere2_moe, flex_olmo, aria_text, mellum, beam, flint, kolibri1; params_moe_more.minicpm5_moe, params_moe_more.ergo,
params_generic.count_params; params_dense.doge; bailing.moe_params) and naming modules as the checkpoints' safetensors
do.

What vLLM holds whole on every TP rank (weight_tables.replicated_params), read in each model file:
- dots.llm1: vLLM 0.34 has no dots1.py any more (registry.py _PREVIOUSLY_SUPPORTED_MODELS: Dots1ForCausalLM last
  in 0.23.0), and as the architecture is not registered and transformers 5.25's Dots1 model is backend-compatible
  (_supports_attention_backend), registry.py inspect_model_cls falls back to the Transformers backend (model_impl
  auto): Dots1Config's base_model_tp_plan splits q/k/v/o_proj, the dense MLP and the shared experts; the RMSNorms
  (q_norm / k_norm of head_dim included) stay whole, and fusers/moe.py MoEBlockFuser.gate rebuilds the router as a
  GateLinear carrying e_score_correction_bias: whole. vLLM's own dots1.py (read as stored at vllm-project/vllm
  commit 00bd1493, before its removal) held the same whole: the norms, the router (ReplicatedLinear,
  quant_config=None) and its e_score_correction_bias (built for topk_method noaux_tc); there o_proj had no bias
  whatever attention_bias says (every released config leaves attention_bias false).
- HunYuan-MoE and OLMoE: vLLM 0.34 runs them on its Transformers backend (registry.py
  _TRANSFORMERS_SUPPORTED_MODELS: TransformersMoEForCausalLM). transformers/base.py recursive_replace makes each
  nn.Linear a Column- / RowParallelLinear by the config's base_model_tp_plan (q/k/v_proj colwise or
  colwise_gather_output, o_proj rowwise or rowwise_split_input, HunYuan's shared_mlp colwise / rowwise: split),
  a linear the plan does not name a ReplicatedLinear, and each RMSNorm a vLLM RMSNorm of the norm's full width
  (OLMoE's q_norm over hidden_size and k_norm over the KV projection: whole); fusers/moe.py MoEBlockFuser.gate
  rebuilds a router whose only state is `weight` as a GateLinear (OLMoE's mlp.gate), and HunYuan's gate.wg, an
  nn.Linear inside its gate module, becomes a ReplicatedLinear: whole either way.
- Aria: vLLM 0.34 runs AriaForConditionalGeneration on its Transformers backend (registry.py
  _TRANSFORMERS_SUPPORTED_MODELS: TransformersMultiModalMoEForCausalLM), and a bare AriaTextForCausalLM falls back
  to it (as dots1): AriaTextConfig's base_model_tp_plan splits the projections; the norms and the router stay whole.
- Doge: see doge(). Ergo: see ergo().
- Param2 (vLLM 0.34 param2moe.py): the norms, query_layernorm / key_layernorm (RMSNorm of head_dim), the router
  (Param2MoEMoEBlock.gate: GateLinear, float32) and expert_bias (float32; kvplan counts both at the checkpoint's
  dtype; configs/param_fp32.py adds vLLM's float32 bytes), dense's bias with use_bias (RowParallelLinear).
- Flint (vLLM 0.34 vllm/models/flint/model.py): the norms, q_norm / k_norm, the router (GateLinear,
  quant_config=None); the sinks (softmax_offset: make_attention_sink of the rank's heads, float32) split with the
  heads; the shared expert splits (FlintMLP).
- Beam (vLLM 0.34 vllm/models/beam/nvidia: model.py, attention.py, moe.py): the four RMSNorms a layer, q_norm /
  k_norm (head_dim), the router (BeamSparseMoeBlock.gate: GateLinear, float32) and its e_score_correction_bias
  (float32), which kvplan counts at the checkpoint's dtype (configs/param_fp32.py adds vLLM's); gate_bias
  splits with the heads (sharded_weight_loader), the output gate is a ColumnParallelLinear; no biases on the
  projections there.
- Kolibri 1: vLLM 0.34 runs it on its Transformers backend (registry.py _TRANSFORMERS_SUPPORTED_MODELS), whose
  Kolibri1Config base_model_tp_plan splits q/k/v/o_proj and the shared experts; the four norms a layer, q_norm /
  k_norm and the router with its bias (GateLinear) stay whole.
- Mellum: vLLM 0.34 runs it on its Transformers backend (registry.py _TRANSFORMERS_SUPPORTED_MODELS), whose
  MellumConfig base_model_tp_plan splits q/k/v/o_proj and the dense MLPs; the RMSNorms (q_norm / k_norm of
  head_dim too) and the router (GateLinear) stay whole.
- FlexOlmo: vLLM 0.34 runs it on its Transformers backend (registry.py _TRANSFORMERS_SUPPORTED_MODELS), as OLMoE:
  q/k/v_proj colwise_gather_output and o_proj rowwise_split_input (split), q_norm and k_norm over the whole
  projections (whole), the router a GateLinear (whole).
- PhiMoE (vLLM 0.34 phimoe.py): input_layernorm, post_attention_layernorm and the final norm (nn.LayerNorm, weight
  and bias), the router block_sparse_moe.gate (PhiMoE: GateLinear), o_proj's bias (RowParallelLinear). vLLM builds
  qkv_proj, o_proj and lm_head with bias=True whatever attention_bias and lm_head_bias say (Phi-3.5-MoE's config
  sets both), and the head with quant_config=None; a config without those biases is not what vLLM builds.
- Granite MoE (vLLM 0.34 granitemoe.py, granitemoeshared.py, which also serves GraniteMoeSWAForCausalLM): the
  norms (RMSNorm) and the router (GraniteMoeMoE: GateLinear); qkv_proj, o_proj and the shared_mlp's
  input_linear / output_linear have no bias; GraniteMoe-SWA's sinks split with the heads (sharded_weight_loader).
- JetMoE: vLLM 0.34 registers no JetMoE model: see jetmoe().
- AFMoE (vLLM 0.34 afmoe.py): the four RMSNorms a layer, q_norm / k_norm (head_dim), the router (AfmoeMoE.gate, a
  GateLinear) and expert_bias, both built in float32 (params_dtype=torch.float32), which kvplan counts at the
  checkpoint's dtype (configs/param_fp32.py adds vLLM's float32 bytes); the output gate self_attn.gate_proj
  is a ColumnParallelLinear (split); qkv_proj and o_proj have no bias whatever attention_bias says.
- EXAONE MoE (vLLM 0.34 exaone_moe.py): the norms, q_norm / k_norm (head_dim), the router (ExaoneMoe.gate, a
  GateLinear in the model dtype) and e_score_correction_bias, built in float32 (kvplan counts it at the checkpoint's
  dtype: configs/param_fp32.py adds vLLM's); o_proj's bias with attention_bias (the count has none).
- MiniCPM5-MoE: vLLM 0.34 registers no MiniCPM5MoeForCausalLM; it falls back to the Transformers backend (as
  dots1), where fusers/qkv.py QKVFuser takes q_gate_proj, k_proj and v_proj as one q/k/v triple (the largest the
  query) into a QKVParallelLinear and o_proj is rowwise, GLUFuser splits the MLPs, and the norms and the router
  with its e_score_correction_bias (GateLinear) stay whole.
- Hunyuan 3 (vLLM 0.34 hy_v3.py): the norms, q_norm / k_norm (RMSNorm of head_dim; float32 only with --attention-backend
  HPC_ATTN), the router (HYV3MoEFused.gate: GateLinear, float32) and expert_bias (float32), which kvplan counts at the
  checkpoint's dtype (configs/param_fp32.py adds vLLM's); qkv_proj, o_proj and the MLPs have no biases
  there (vLLM sizes shared_mlp by expert_hidden_dim x num_shared_experts and builds none for 0 shared experts,
  where transformers builds one of intermediate_size: the table follows transformers, as the count does).
- Cohere2-MoE (vLLM 0.34 cohere2_moe.py): the one norm a layer and the final norm (make_norm: RMSNorm, or
  commandr.py's LayerNorm, a weight only), the router (Cohere2Moe.gate: GateLinear); qkv_proj and o_proj are built
  without biases whatever attention_bias says.
- Sarvam-MoE: vLLM 0.34 sarvam.py SarvamMoEForCausalLM is bailing_moe.py's BailingMoeForCausalLM (it only
  re-centres the router bias on load), and its checkpoints keep Ling's names (transformers 5.25 renames them on
  load: conversion_mapping "sarvam_moe"), as configs/sarvam.py counts it: Ling's table (moe.py bailing_moe).
- Solar Open: vLLM 0.34 registers no SolarOpenForCausalLM; it falls back to the Transformers backend (as dots1),
  where SolarOpenConfig's base_model_tp_plan splits q/k/v/o_proj and fusers/glu.py GLUFuser the shared experts
  (gate and up merged into a MergedColumnParallelLinear, down_proj rowwise); whole are the norms and the router with
  its e_score_correction_bias (GateLinear); o_proj has no bias.
"""

from __future__ import annotations

from ..fields import Fields
from ..param_parts import dense_first, mlp_layer_types
from . import Module, _ends, _experts, _float, _linear, _mlp, _norms_and_ffn, _qkvo
from .moe import bailing_moe


# -- dots.llm1 (params_moe.dots1) ------------------------------------------------------------------------------

def dots1(f: Fields, layers: list, dims) -> list[Module]:
    """Dots1ForCausalLM (transformers 5.25 modeling_dots1.py, whose checkpoint names transformers keeps but for
    folding the experts: conversion_mapping "dots1" -> "qwen2_moe"): per layer self_attn.q_proj / k_proj / v_proj /
    o_proj (attention_bias on all four), self_attn.q_norm / k_norm (head_dim), input_layernorm and
    post_attention_layernorm; below first_k_dense_replace mlp.gate_proj / up_proj / down_proj of
    intermediate_size, else mlp.gate [E, hidden], mlp.gate.e_score_correction_bias [E] (unless topk_method names
    another method than noaux_tc), the routed experts mlp.experts.N of moe_intermediate_size and
    mlp.shared_experts of moe_intermediate_size x n_shared_experts. Embeddings, final norm, an untied LM head by
    default."""
    from ..params_moe import dots1 as counter

    counter(f, layers, dims)  # the same refusals as the count
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", default=10944)
    experts = f.opt_int("n_routed_experts") or 0
    first_dense = f.int("first_k_dense_replace", default=0, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=1408) if experts else 0
    shared = moe_inter * f.int("n_shared_experts", default=0, minimum=0)
    score_bias = f.get("topk_method", default="noaux_tc") == "noaux_tc"
    out = _ends(f, hidden, False, None)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, head_dim, f.flag("attention_bias"))
        out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim)]
        out += _norms_and_ffn(i, hidden, bool(experts) and i >= first_dense, experts, moe_inter, shared, inter,
                              score_bias)
    return out


# -- HunYuan-MoE (params_moe.hunyuan_v1_moe) -------------------------------------------------------------------

def hunyuan_v1_moe(f: Fields, layers: list, dims) -> list[Module]:
    """HunYuanMoEV1ForCausalLM (Hunyuan-A13B; transformers 5.25 modeling_hunyuan_v1_moe.py, which keeps the
    checkpoints' names but folds the experts: conversion_mapping "hunyuan_v1_moe" -> "qwen2_moe"): per layer
    self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all four), self_attn.query_layernorm /
    key_layernorm (head_dim), two norms, the router mlp.gate.wg [num_experts, hidden] (an nn.Linear built in
    float32 by transformers), the routed experts mlp.experts.N and mlp.shared_mlp, both of intermediate_size;
    num_experts may be a per-layer list. Embeddings, final norm, an untied LM head by default."""
    from ..params_moe import _head_dim, hunyuan_per_layer

    n = len(layers)
    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=heads)
    hd = _head_dim(f, hidden, heads, None)
    inter = f.int("intermediate_size", default=11008)
    experts = hunyuan_per_layer(f, n, "num_experts", "num_local_experts", 1)
    hunyuan_per_layer(f, n, "moe_topk", "num_experts_per_tok", 1)  # the count's refusals
    out = _ends(f, hidden, False, None)
    for i in range(n):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"{a}.query_layernorm", hd), _float(f"{a}.key_layernorm", hd),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden),
                _float(f"{m}.gate.wg", hidden * experts[i], "router")]
        out += _experts(m, experts[i], hidden, inter) + _mlp(f"{m}.shared_mlp", hidden, inter, "shared experts")
    return out


# -- OLMoE (params_moe.olmoe) ----------------------------------------------------------------------------------

def olmoe(f: Fields, layers: list, dims) -> list[Module]:
    """OlmoeForCausalLM (transformers 5.25 modeling_olmoe.py; conversion_mapping "olmoe" -> "qwen2_moe" folds the
    experts only): per layer self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all four),
    self_attn.q_norm (hidden_size) and k_norm (hidden_size // heads x KV heads), two norms, the router mlp.gate
    [num_experts, hidden] and the experts mlp.experts.N of intermediate_size. Embeddings, final norm, an untied
    LM head by default (OlmoeConfig's defaults, as the count reads them)."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=2048)
    experts = f.int("num_experts", default=64)
    inter = f.int("intermediate_size", default=2048)
    out = _ends(f, hidden, False, 50304)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"{a}.q_norm", hidden), _float(f"{a}.k_norm", hidden // heads * kv),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden),
                _float(f"{m}.gate", hidden * experts, "router")]
        out += _experts(m, experts, hidden, inter)
    return out


# -- PhiMoE (params_moe.phimoe) --------------------------------------------------------------------------------

def phimoe(f: Fields, layers: list, dims) -> list[Module]:
    """PhimoeForCausalLM (Phi-3.5-MoE), named as the checkpoints are (transformers 5.25 renames block_sparse_moe to
    mlp and gate to router on load: conversion_mapping "phimoe"): per layer self_attn.q_proj / k_proj / v_proj /
    o_proj (attention_bias on all four), input_layernorm and post_attention_layernorm (nn.LayerNorm: weight and
    bias), block_sparse_moe.gate [E, hidden] and the experts block_sparse_moe.experts.N.w1 / w3 / w2 of
    intermediate_size. embed_tokens, the final norm (a LayerNorm), lm_head with its bias under lm_head_bias (the
    bias split over TP with the vocabulary: ParallelLMHead)."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=4096)
    experts = f.int("num_local_experts", default=16)
    inter = f.int("intermediate_size", default=6400)
    vocab = f.int("vocab_size", default=32064, minimum=0)
    out = [_float("embed_tokens", vocab * hidden, "embeddings"), _float("norm", 2 * hidden)]
    if not f.flag("tie_word_embeddings", default=False):
        out.append(Module("lm_head", vocab * hidden, vocab if f.flag("lm_head_bias") else 0, "lm_head", top=True,
                          inputs=hidden))
    for i in range(len(layers)):
        m = f"layers.{i}.block_sparse_moe"
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"layers.{i}.input_layernorm", 2 * hidden),
                _float(f"layers.{i}.post_attention_layernorm", 2 * hidden),
                _float(f"{m}.gate", hidden * experts, "router")]
        out += _experts(m, experts, hidden, inter, ("w1", "w3", "w2"))
    return out


# -- Granite 3.0 / 3.1 MoE, GraniteMoe-Shared, GraniteMoe-SWA (params_moe.granitemoe) ---------------------------

def granitemoe(f: Fields, layers: list, dims) -> list[Module]:
    """GraniteMoeForCausalLM, GraniteMoeSharedForCausalLM and GraniteMoeSWAForCausalLM, named as the checkpoints
    are (transformers 5.25 conversion_mapping "granitemoe", which the other two reuse, renames them on load; vLLM
    0.34 granitemoe.py GraniteMoeModel.hf_to_vllm_mapper reads these): per layer self_attn.q_proj / k_proj /
    v_proj / o_proj (attention_bias on all four), GraniteMoe-SWA's self_attn.sinks (one a query head), two norms,
    the experts as two tensors block_sparse_moe.input_linear [E, 2 x intermediate, hidden] and output_linear
    [E, hidden, intermediate], the router block_sparse_moe.router.layer [E, hidden], and (Shared, SWA) with
    shared_intermediate_size shared_mlp.input_linear (hidden -> 2 x shared) and output_linear. Embeddings, final
    norm, an untied LM head by default."""
    heads, kv, hd = dims[:3]
    mt = f.model_type
    hidden = f.int("hidden_size", default=4096)
    experts = f.int("num_local_experts", default=8)
    inter = f.int("intermediate_size", default=11008)
    shared = 0 if mt == "granitemoe" else f.int("shared_intermediate_size", default=0, minimum=0)
    out = _ends(f, hidden, False, 32000)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.block_sparse_moe"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        if mt == "granitemoe_swa":
            out.append(_float(f"{a}.sinks", heads, "attention"))  # split with the heads in vLLM
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden),
                Module(f"{m}.input_linear", experts * 2 * inter * hidden, 0, "experts", experts, inputs=hidden),
                Module(f"{m}.output_linear", experts * hidden * inter, 0, "experts", experts, inputs=inter),
                _float(f"{m}.router.layer", experts * hidden, "router")]
        if shared:
            out += [_linear(f"layers.{i}.shared_mlp.input_linear", hidden, 2 * shared, "shared experts"),
                    _linear(f"layers.{i}.shared_mlp.output_linear", shared, hidden, "shared experts")]
    return out


# -- JetMoE (params_moe.jetmoe) --------------------------------------------------------------------------------

def jetmoe(f: Fields, layers: list, dims) -> list[Module]:
    """JetMoeForCausalLM (transformers 5.25 modeling_jetmoe.py, no renames on load), per layer: two norms;
    self_attention.kv_proj (hidden -> 2 x kv_channels x num_key_value_heads, no bias) and the mixture of attention
    heads self_attention.experts: input_linear [E, kv_channels x KV heads, hidden] (the queries), output_linear
    [E, hidden, kv_channels x KV heads], router.layer [E, hidden] and a bias of hidden added to the output; the
    MoE mlp: input_linear [E, 2 x intermediate, hidden], output_linear [E, hidden, intermediate], router.layer
    and an output bias of hidden. Embeddings, final norm, the head tied by default (JetMoeConfig).
    vLLM 0.34 registers no JetMoE model (registry.py); what each TP rank holds whole here follows vLLM's rule for the
    same kinds elsewhere, not a model file: the norms, the routers (GateLinear), and the two output biases, added
    after the experts' outputs are summed as a RowParallelLinear's bias is. Not modelled: vLLM 0.34 would try its
    Transformers backend for the unregistered architecture (registry.py inspect_model_cls, model_impl auto), where
    JetMoeConfig has no base_model_tp_plan, so each nn.Linear becomes a ReplicatedLinear (transformers/base.py
    recursive_replace: "replicate" by default) and the expert tensors (JetMoeParallelExperts' nn.Parameter) are not
    split either: there every layer may be held whole on every rank. Whether vLLM 0.34 loads JetMoE at all was not
    tried."""
    hidden = f.int("hidden_size", default=2048)
    kvh = f.int("num_key_value_heads", default=16)
    proj = f.int("kv_channels", "head_dim", default=128) * kvh
    inter = f.int("intermediate_size", default=5632)
    experts = f.int("num_local_experts", default=8, minimum=0)
    out = _ends(f, hidden, True, None)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attention", f"layers.{i}.mlp"
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden),
                _linear(f"{a}.kv_proj", hidden, 2 * proj, "attention", kv_heads=kvh),
                Module(f"{a}.experts.input_linear", experts * proj * hidden, 0, "experts", experts, inputs=hidden),
                Module(f"{a}.experts.output_linear", experts * hidden * proj, 0, "experts", experts, inputs=proj),
                _float(f"{a}.experts.router.layer", hidden * experts, "router"),
                Module(f"{a}.experts", 0, hidden, "attention", whole_bias=True),  # its bias
                Module(f"{m}.input_linear", experts * 2 * inter * hidden, 0, "experts", experts, inputs=hidden),
                Module(f"{m}.output_linear", experts * hidden * inter, 0, "experts", experts, inputs=inter),
                _float(f"{m}.router.layer", hidden * experts, "router"),
                Module(m, 0, hidden, "mlp", whole_bias=True)]  # its bias
    return out


# -- Solar Open (params_moe.solar_open) ------------------------------------------------------------------------

def solar_open(f: Fields, layers: list, dims) -> list[Module]:
    """SolarOpenForCausalLM (transformers 5.25 modeling_solar_open.py; conversion_mapping "solar_open" ->
    "qwen2_moe" folds the experts only): per layer self_attn.q_proj / k_proj / v_proj (attention_bias) and o_proj
    (no bias), two norms, mlp.gate [E, hidden] with mlp.gate.e_score_correction_bias [E], the routed experts
    mlp.experts.N and mlp.shared_experts (moe_intermediate_size x n_shared_experts) on every layer. Embeddings,
    final norm, an untied LM head by default (SolarOpenConfig's defaults, as the count reads them)."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=4096)
    experts = f.int("n_routed_experts", "num_local_experts", default=128)
    moe_inter = f.int("moe_intermediate_size", default=1280)
    shared = moe_inter * f.int("n_shared_experts", default=1, minimum=0)
    out = _ends(f, hidden, False, 196608)
    for i in range(len(layers)):
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, hd, f.flag("attention_bias"), o_bias=False)
        out += _norms_and_ffn(i, hidden, True, experts, moe_inter, shared, 0)
    return out


# -- AFMoE (params_moe.afmoe) ----------------------------------------------------------------------------------

def afmoe(f: Fields, layers: list, dims) -> list[Module]:
    """AfmoeForCausalLM (Arcee's Trinity; transformers 5.25 modeling_afmoe.py, whose names the checkpoints keep:
    conversion_mapping "afmoe" -> "qwen2_moe" folds the experts only; vLLM 0.34 afmoe.py maps mlp.router.gate to
    mlp.gate on load): per layer self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all four),
    self_attn.q_norm / k_norm (head_dim), the output gate self_attn.gate_proj (hidden -> heads x head_dim, no bias),
    input_layernorm, post_attention_layernorm, pre_mlp_layernorm and post_mlp_layernorm; below num_dense_layers (1)
    mlp.gate_proj / up_proj / down_proj of intermediate_size, else mlp.router.gate [E, hidden], mlp.expert_bias [E],
    mlp.shared_experts (moe_intermediate_size x num_shared_experts) and the experts mlp.experts.N. Defaults:
    AfmoeConfig's, as the count reads them."""
    from ..params_moe import _head_dim

    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=16)
    kv = f.int("num_key_value_heads", default=heads)
    hd = _head_dim(f, hidden, heads, 128)
    inter = f.int("intermediate_size", default=6144)
    moe_inter = f.int("moe_intermediate_size", default=1408)
    experts = f.int("num_experts", default=64, minimum=0)
    shared = moe_inter * f.int("num_shared_experts", default=2, minimum=0)
    dense_layers = f.int("num_dense_layers", default=1, minimum=0)
    out = _ends(f, hidden, False, None)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd),
                _linear(f"{a}.gate_proj", hidden, heads * hd, "attention")]
        out += [_float(f"layers.{i}.{n}", hidden) for n in ("input_layernorm", "post_attention_layernorm",
                                                             "pre_mlp_layernorm", "post_mlp_layernorm")]
        if i < dense_layers:
            out += _mlp(m, hidden, inter, "mlp")
            continue
        out += [_float(f"{m}.router.gate", hidden * experts, "router"), _float(f"{m}.expert_bias", experts, "router")]
        if shared:
            out += _mlp(f"{m}.shared_experts", hidden, shared, "shared experts")
        out += _experts(m, experts, hidden, moe_inter)
    return out


# -- EXAONE MoE (params_moe.exaone_moe) ------------------------------------------------------------------------

def exaone_moe(f: Fields, layers: list, dims) -> list[Module]:
    """ExaoneMoeForCausalLM (K-EXAONE; transformers 5.25 modeling_exaone_moe.py), named as the checkpoints are
    (conversion_mapping "exaone_moe" folds the experts and moves mlp.e_score_correction_bias under mlp.gate on
    load; vLLM 0.34 exaone_moe.py reads these names and drops the mtp.* layers): per layer self_attn.q_proj /
    k_proj / v_proj / o_proj (no biases: as the count), self_attn.q_norm / k_norm (head_dim), two norms; by
    mlp_layer_types (else the first first_k_dense_replace dense) a dense mlp of intermediate_size, or mlp.gate
    [E, hidden], mlp.e_score_correction_bias [E], the experts mlp.experts.N and mlp.shared_experts
    (moe_intermediate_size x num_shared_experts). Defaults: ExaoneMoeConfig's, as the count reads them."""
    from ..params_moe import _head_dim

    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=32)
    hd = _head_dim(f, hidden, heads, None)
    inter = f.int("intermediate_size", default=16384)
    moe_inter = f.int("moe_intermediate_size", default=1024)
    experts = f.int("num_experts", default=64, minimum=0)
    shared = moe_inter * f.int("num_shared_experts", default=1, minimum=0)
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=1, minimum=0)))
    out = _ends(f, hidden, False, None)
    for i, kind in enumerate(kinds):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd)
        out += [_float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if kind != "sparse":
            out += _mlp(m, hidden, inter, "mlp")
            continue
        out += _experts(m, experts, hidden, moe_inter)
        out += [_float(f"{m}.gate", hidden * experts, "router"),
                _float(f"{m}.e_score_correction_bias", experts, "router")]
        if shared:
            out += _mlp(f"{m}.shared_experts", hidden, shared, "shared experts")
    return out


# -- MiniCPM5-MoE (params_moe_more.minicpm5_moe) -----------------------------------------------------------------------

def minicpm5_moe(f: Fields, layers: list, dims) -> list[Module]:
    """MiniCPM5MoeForCausalLM (transformers 5.25 modeling_minicpm5_moe.py), named as the checkpoints are
    (conversion_mapping "minicpm5_moe" folds the experts and renames self_attn.q_proj to q_gate_proj on load): per
    layer self_attn.q_proj (hidden -> 2 x heads x head_dim: the queries and their gates), k_proj, v_proj, o_proj
    (attention_bias on all four), two norms; by mlp_layer_types (else the first first_k_dense_replace dense) a
    dense mlp of intermediate_size, or mlp.gate [E, hidden] with mlp.gate.e_score_correction_bias [E], the experts
    mlp.experts.N and mlp.shared_experts (moe_intermediate_size x n_shared_experts). Embeddings, final norm, an
    untied LM head unless tie_word_embeddings."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size")
    experts, moe_inter = f.int("n_routed_experts"), f.int("moe_intermediate_size")
    shared = f.int("n_shared_experts", default=1) * moe_inter
    inter = f.int("intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=1, minimum=0)))
    out = _ends(f, hidden, False, None)
    for i, kind in enumerate(kinds):
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, hd, f.flag("attention_bias"),
                     q_width=2 * heads * hd)
        out += _norms_and_ffn(i, hidden, kind == "sparse", experts, moe_inter, shared, inter)
    return out


# -- Hunyuan 3 (params_moe.hy_v3) ------------------------------------------------------------------------------

def hy_v3(f: Fields, layers: list, dims) -> list[Module]:
    """HYV3ForCausalLM (transformers 5.25 modeling_hy_v3.py), named as the checkpoints are (conversion_mapping
    "hy_v3" folds the experts and renames mlp.router.gate, mlp.expert_bias and mlp.shared_mlp on load; vLLM 0.34
    hy_v3.py reads these names): per layer self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all
    four), self_attn.q_norm / k_norm (head_dim), two norms; by mlp_layer_types (else layer 0 dense) a dense mlp of
    intermediate_size (biases with mlp_bias), or mlp.router.gate [E, hidden], mlp.expert_bias [E], the experts
    mlp.experts.N of moe_intermediate_size and mlp.shared_mlp of moe_intermediate_size x num_shared_experts (0:
    intermediate_size, as transformers builds it; biases with mlp_bias). Defaults: HYV3Config's, as the count reads
    them."""
    from ..params_moe import _head_dim

    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=64)
    kv = f.int("num_key_value_heads", default=8)
    hd = _head_dim(f, hidden, heads, 128)
    mlp_bias = f.flag("mlp_bias")
    inter = f.int("intermediate_size", default=13312)
    moe_inter = f.int("moe_intermediate_size", default=1536)
    experts = f.int("num_experts", "num_local_experts", default=192, minimum=0)
    shared = moe_inter * f.int("num_shared_experts", default=1, minimum=0) or inter
    out = _ends(f, hidden, False, None)
    for i, kind in enumerate(mlp_layer_types(f, len(layers), dense_first(1))):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if kind != "sparse":
            out += _mlp(m, hidden, inter, "mlp", mlp_bias)
            continue
        out += [_float(f"{m}.router.gate", hidden * experts, "router"), _float(f"{m}.expert_bias", experts, "router")]
        out += _experts(m, experts, hidden, moe_inter) + _mlp(f"{m}.shared_mlp", hidden, shared, "shared experts",
                                                               mlp_bias)
    return out


# -- Cohere2-MoE (params_moe.cohere2_moe) ----------------------------------------------------------------------

def cohere2_moe(f: Fields, layers: list, dims) -> list[Module]:
    """Cohere2MoeForCausalLM (transformers 5.25 modeling_cohere2_moe.py; conversion_mapping "cohere2_moe" ->
    "qwen2_moe" folds the experts only): per layer self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on
    all four) and one input_layernorm (a weight of hidden); by mlp_layer_types (else the first
    first_k_dense_replace dense) mlp.gate_proj / up_proj / down_proj of prefix_dense_intermediate_size (None:
    intermediate_size), or the router mlp.gate [E, hidden], the experts mlp.experts.N of intermediate_size and,
    with num_shared_experts, mlp.shared_experts of intermediate_size x num_shared_experts. Embeddings, final norm,
    the head tied by default."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=8192)
    inter = f.int("intermediate_size", default=22528)
    experts = f.int("num_experts", default=8, minimum=0)
    shared = inter * f.int("num_shared_experts", default=0, minimum=0)
    dense = f.opt_int("prefix_dense_intermediate_size") or inter
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=0, minimum=0)))
    out = _ends(f, hidden, True, 256000)
    for i, kind in enumerate(kinds):
        m = f"layers.{i}.mlp"
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, hd, f.flag("attention_bias"))
        out.append(_float(f"layers.{i}.input_layernorm", hidden))
        if kind != "sparse":
            out += _mlp(m, hidden, dense, "mlp")
            continue
        out += _experts(m, experts, hidden, inter) + [_float(f"{m}.gate", hidden * experts, "router")]
        if shared:
            out += _mlp(f"{m}.shared_experts", hidden, shared, "shared experts")
    return out


# -- FlexOlmo (params_moe.flex_olmo) ---------------------------------------------------------------------------

def flex_olmo(f: Fields, layers: list, dims) -> list[Module]:
    """FlexOlmoForCausalLM (transformers 5.25 modeling_flex_olmo.py; conversion_mapping "flex_olmo" -> "qwen2_moe"
    folds the experts only): per layer self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all four),
    self_attn.q_norm (heads x head_dim) and k_norm (KV heads x head_dim), post_attention_layernorm and
    post_feedforward_layernorm, the router mlp.gate [E, hidden] and the experts mlp.experts.N of intermediate_size.
    Embeddings, final norm, an untied LM head by default (FlexOlmoConfig's defaults, as the count reads them)."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=4096)
    experts = f.int("num_experts", default=7)
    inter = f.int("intermediate_size", default=11008)
    out = _ends(f, hidden, False, 100352)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"{a}.q_norm", heads * hd), _float(f"{a}.k_norm", kv * hd),
                _float(f"layers.{i}.post_attention_layernorm", hidden),
                _float(f"layers.{i}.post_feedforward_layernorm", hidden),
                _float(f"{m}.gate", hidden * experts, "router")]
        out += _experts(m, experts, hidden, inter)
    return out


# -- Aria's text model (params_moe.aria_text) ------------------------------------------------------------------

def aria_text(f: Fields, layers: list, dims) -> list[Module]:
    """AriaTextForCausalLM (Aria's text model; transformers 5.25 modeling_aria.py), named as the checkpoints are
    (conversion_mapping "aria_text" renames the experts' fc1 / fc2 on load; the Aria wrapper puts the text model
    under language_model.): per layer self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all four), two
    norms, the router mlp.router [E, hidden], the experts as two tensors mlp.experts.fc1 [E, hidden, 2 x
    intermediate] and fc2 [E, intermediate, hidden], and mlp.shared_experts of intermediate_size x
    moe_num_shared_experts (biases with mlp_bias). Embeddings, final norm, an untied LM head by default."""
    from ..params_moe import _head_dim

    hidden = f.int("hidden_size", default=4096)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=heads)
    hd = _head_dim(f, hidden, heads, None)
    inter = f.int("intermediate_size", default=4096)
    experts = f.int("moe_num_experts", default=8, minimum=0)
    shared = inter * f.int("moe_num_shared_experts", default=2, minimum=0)
    out = _ends(f, hidden, False, None)
    for i in range(len(layers)):
        m = f"layers.{i}.mlp"
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden),
                _float(f"{m}.router", hidden * experts, "router"),
                Module(f"{m}.experts.fc1", experts * hidden * 2 * inter, 0, "experts", experts, inputs=hidden),
                Module(f"{m}.experts.fc2", experts * inter * hidden, 0, "experts", experts, inputs=inter)]
        if shared:
            out += _mlp(f"{m}.shared_experts", hidden, shared, "shared experts", f.flag("mlp_bias"))
    return out


# -- Mellum (params_moe.mellum) --------------------------------------------------------------------------------

def mellum(f: Fields, layers: list, dims) -> list[Module]:
    """MellumForCausalLM (transformers 5.25 modeling_mellum.py; conversion_mapping "mellum" -> "qwen2_moe" folds the
    experts only): per layer self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all four),
    self_attn.q_norm / k_norm (head_dim), two norms; by mlp_layer_types (else every layer sparse) the router
    mlp.gate [E, hidden] and the experts mlp.experts.N of moe_intermediate_size, or mlp.gate_proj / up_proj /
    down_proj of intermediate_size. Embeddings, final norm, an untied LM head by default (MellumConfig's
    defaults, as the count reads them)."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=2304)
    experts = f.int("num_experts", "num_local_experts", default=64, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=896)
    inter = f.int("intermediate_size", default=7168)
    out = _ends(f, hidden, False, 98304)
    for i, kind in enumerate(mlp_layer_types(f, len(layers), lambda i: "sparse")):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd)]
        out += _norms_and_ffn(i, hidden, kind == "sparse", experts, moe_inter, 0, inter, score_bias=False)
    return out


# -- Doge (params_dense.doge) ----------------------------------------------------------------------------------

def doge(f: Fields, layers: list, dims) -> list[Module]:
    """DogeForCausalLM (transformers 5.25 modeling_doge.py, no renames on load), per layer: self_attn.q_proj /
    k_proj / v_proj / o_proj (attention_bias on all four), the dynamic mask's self_attn.A (one a KV head) and
    self_attn.dt_proj (KV heads x head_dim -> KV heads, attention_bias), self_attn.q_norm / k_norm (head_dim),
    input_layernorm, post_attention_layernorm and the residual scales input_residual / post_attention_residual
    (hidden each); mlp.gate_proj / up_proj / down_proj (mlp_bias), and with is_moe the cross-domain MoE's
    mlp.router_gate (hidden -> 2 x floor(sqrt(num_experts))) and its experts as two embedding tables
    mlp.down_embed / up_embed (num_experts x hidden each). Embeddings, final norm, an untied head by default.
    vLLM 0.34 registers no Doge model; it falls back to the Transformers backend (as dots1), where DogeConfig's
    base_model_tp_plan splits the projections, dt_proj (rowwise: its bias whole) and router_gate
    (colwise_gather_output), but names nn.Embedding styles that recursive_replace does not apply (it replaces only
    the vocabulary embedding): A, the residual scales, the norms and down_embed / up_embed stay whole."""
    import math

    hidden = f.int("hidden_size", default=1024)
    inter = f.int("intermediate_size", default=2048, maximum=10**9)
    heads = f.int("num_attention_heads", default=8)
    kv = f.int("num_key_value_heads", default=heads)
    hd = f.int("head_dim", default=hidden // heads)
    abias, mbias = f.flag("attention_bias", default=False), f.flag("mlp_bias", default=False)
    out = _ends(f, hidden, False, 32768)
    moe = f.flag("is_moe", default=False)
    experts = f.int("num_experts", default=16384) if moe else 0
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd, abias)
        out += [Module(f"{a}.A", 0, kv, "attention", whole=True),
                _linear(f"{a}.dt_proj", kv * hd, kv, "attention", abias, row=True),
                _float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.input_residual", hidden),
                _float(f"layers.{i}.post_attention_layernorm", hidden),
                _float(f"layers.{i}.post_attention_residual", hidden)]
        out += _mlp(m, hidden, inter, "mlp", mbias)
        if moe:
            out += [_linear(f"{m}.router_gate", hidden, 2 * math.floor(math.sqrt(experts)), "router"),
                    Module(f"{m}.down_embed", 0, experts * hidden, "experts", whole=True),
                    Module(f"{m}.up_embed", 0, experts * hidden, "experts", whole=True)]
    return out


# -- Beam (params_moe.beam) ------------------------------------------------------------------------------------

def beam(f: Fields, layers: list, dims) -> list[Module]:
    """BeamForCausalLM (transformers 5.25 modeling_beam.py; conversion_mapping "beam" -> "qwen2_moe" folds the
    experts only): per layer self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all four),
    self_attn.q_norm / k_norm (head_dim), the output gate self_attn.gate_proj (hidden -> heads x head_dim, no bias)
    and self_attn.gate_bias (one a head), input_layernorm, post_attention_layernorm, pre_feedforward_layernorm and
    post_feedforward_layernorm; by mlp_layer_types (else the first min(3, layers) dense) mlp.gate_proj / up_proj /
    down_proj of intermediate_size, or mlp.gate [E, hidden] with mlp.gate.e_score_correction_bias [E] and the
    experts mlp.experts.N of moe_intermediate_size (no shared expert). Defaults: BeamConfig's, as the count reads
    them."""
    from ..params_moe import beam_fields

    n = len(layers)
    hidden, heads, kv, hd, inter, moe_inter, experts = beam_fields(f)
    out = _ends(f, hidden, False, None)
    for i, kind in enumerate(mlp_layer_types(f, n, dense_first(min(3, n)))):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd),
                _linear(f"{a}.gate_proj", hidden, heads * hd, "attention"),
                _float(f"{a}.gate_bias", heads, "attention"),  # split with the heads in vLLM
                _float(f"layers.{i}.pre_feedforward_layernorm", hidden),
                _float(f"layers.{i}.post_feedforward_layernorm", hidden)]
        out += _norms_and_ffn(i, hidden, kind == "sparse", experts, moe_inter, 0, inter)
    return out


# -- Flint (params_moe.flint) ----------------------------------------------------------------------------------

def flint(f: Fields, layers: list, dims) -> list[Module]:
    """FlintForCausalLM (transformers 5.25 modeling_flint.py), named as the checkpoints are (conversion_mapping
    "flint" folds the experts and renames self_attn.softmax_offset to sinks on load): per layer
    self_attn.q_proj / k_proj / v_proj / o_proj (attention_bias on all four), self_attn.q_norm / k_norm (head_dim),
    self_attn.softmax_offset (one sink a query head), two norms; a layer outside mlp_only_layers ([0, 1]) with
    (i + 1) % decoder_sparse_step == 0 the router mlp.gate [E, hidden], the experts mlp.experts.N of
    moe_intermediate_size and an ungated mlp.shared_expert of shared_expert_intermediate_size; else a dense mlp of
    intermediate_size. Defaults: FlintConfig's, as the count reads them."""
    from ..params_moe import _head_dim

    hidden = f.int("hidden_size", default=2048)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=4)
    hd = _head_dim(f, hidden, heads, 128)
    inter = f.int("intermediate_size", default=6144)
    moe_inter = f.int("moe_intermediate_size", default=512)
    shared = f.int("shared_expert_intermediate_size", default=1024, minimum=0)
    experts = f.int("num_experts", default=256, minimum=0)
    step = f.int("decoder_sparse_step", default=1)
    only = f.int_list("mlp_only_layers", minimum=0, maximum=10**6)
    only = [0, 1] if only is None else only
    out = _ends(f, hidden, False, None)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd, f.flag("attention_bias"))
        out += [_float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd),
                _float(f"{a}.softmax_offset", heads, "attention"),  # split with the heads in vLLM
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if i in only or not experts or (i + 1) % step:
            out += _mlp(m, hidden, inter, "mlp")
            continue
        out += _experts(m, experts, hidden, moe_inter) + [_float(f"{m}.gate", hidden * experts, "router")]
        if shared:
            out += _mlp(f"{m}.shared_expert", hidden, shared, "shared experts")
    return out


# -- Kolibri 1 (params_moe.kolibri1) ---------------------------------------------------------------------------

def kolibri1(f: Fields, layers: list, dims) -> list[Module]:
    """Kolibri1ForCausalLM (transformers 5.25 modeling_kolibri1.py), per layer: self_attn.q_proj / k_proj / v_proj /
    o_proj (no biases), self_attn.q_norm / k_norm (head_dim), input_layernorm, post_attention_layernorm and the
    checkpoints' post_attn_norm / post_ffn_norm (post_self_attn_layernorm / post_mlp_layernorm in transformers), the
    router mlp.gate [E, hidden] with its bias moe.router.expert_bias [E] (the checkpoints' name as transformers'
    rename to mlp.gate.e_score_correction_bias implies: conversion_mapping "kolibri1"; not read in a checkpoint),
    the experts mlp.experts.N of moe_intermediate_size and mlp.shared_experts of shared_expert_intermediate_size.
    Embeddings, final norm, an untied LM head by default."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", default=2560)
    experts = f.int("num_experts", "num_local_experts", default=384)
    moe_inter = f.int("moe_intermediate_size", default=512)
    shared = f.int("shared_expert_intermediate_size", default=512, minimum=0)
    out = _ends(f, hidden, False, 128000)
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd)
        out += [_float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd)]
        out += [_float(f"layers.{i}.{n}", hidden) for n in ("input_layernorm", "post_attention_layernorm",
                                                             "post_attn_norm", "post_ffn_norm")]
        out += [_float(f"{m}.gate", hidden * experts, "router"),
                _float(f"layers.{i}.moe.router.expert_bias", experts, "router")]
        out += _experts(m, experts, hidden, moe_inter)
        if shared:
            out += _mlp(f"{m}.shared_experts", hidden, shared, "shared experts")
    return out


# -- Ergo (params_moe_more.ergo) ---------------------------------------------------------------------------------------

def ergo(f: Fields, layers: list, dims) -> list[Module]:
    """ErgoForCausalLM (transformers 5.25 modeling_ergo.py), under its checkpoints' own names, from the top
    (conversion_mapping "ergo" renames them all on load and transposes the router and shared expert):
    tok_embeddings, norm, output (the LM head, untied unless tie_word_embeddings); per layer layers.N.attention.wqkv
    ((heads + 2 x KV heads) x head_dim outputs), attention.wo, attention.q_norm / k_norm (head_dim), attention_norm,
    post_attention_norm, ffn_norm, post_ffn_norm and the residual gates post_attention_residual /
    post_ffn_residual (a scale of hidden each); below num_dense_blocks (1) feed_forward.up / down
    (first_dense_intermediate_size, no gate), else the router feed_forward.gate_kernel [hidden, E] and
    router_bias [E], the routed experts as two tensors feed_forward.up_proj [E, hidden, moe_intermediate] and
    down_proj [E, moe_intermediate, hidden] with each expert's output norm expert_output_norm [E, hidden], and the
    shared expert shared_up_proj / shared_down_proj (shared_intermediate_size) with shared_expert_output_norm.
    vLLM 0.34 registers no Ergo model; its Transformers backend fallback (as dots1) would find no
    base_model_tp_plan in ErgoConfig, so each nn.Linear becomes a ReplicatedLinear and the expert tensors stay
    plain parameters: there every layer may be held whole on every rank (not modelled; this table splits the
    projections and experts as a TP-aware engine would, the norms, residual gates and router whole)."""
    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size")
    vocab = f.int("vocab_size")
    experts = f.int("num_experts")
    moe_inter, shared = f.int("moe_intermediate_size"), f.int("shared_intermediate_size")
    dense = f.int("first_dense_intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("num_dense_blocks", default=1, minimum=0)))
    out = [Module("tok_embeddings", 0, vocab * hidden, "embeddings", top=True),
           Module("norm", 0, hidden, "norms", top=True)]
    if not f.flag("tie_word_embeddings"):
        out.append(Module("output", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i, kind in enumerate(kinds):
        layer, a, ff = f"layers.{i}", f"layers.{i}.attention", f"layers.{i}.feed_forward"
        out += [_linear(f"{a}.wqkv", hidden, (heads + 2 * kv) * hd, "attention", top=True, kv_heads=kv,
                        kv_outputs=2 * kv * hd),
                _linear(f"{a}.wo", heads * hd, hidden, "attention", row=True, top=True)]
        out += [Module(f"{a}.{n}", 0, hd, "norms", top=True) for n in ("q_norm", "k_norm")]
        out += [Module(f"{layer}.{n}", 0, hidden, "norms", top=True)
                for n in ("attention_norm", "post_attention_norm", "ffn_norm", "post_ffn_norm",
                          "post_attention_residual", "post_ffn_residual")]
        if kind != "sparse":
            out += [_linear(f"{ff}.up", hidden, dense, "mlp", top=True),
                    _linear(f"{ff}.down", dense, hidden, "mlp", row=True, top=True)]
            continue
        out += [Module(f"{ff}.gate_kernel", 0, hidden * experts, "router", top=True),
                Module(f"{ff}.router_bias", 0, experts, "router", top=True),
                Module(f"{ff}.up_proj", experts * hidden * moe_inter, 0, "experts", experts, top=True, inputs=hidden),
                Module(f"{ff}.down_proj", experts * moe_inter * hidden, 0, "experts", experts, top=True,
                       inputs=moe_inter),
                Module(f"{ff}.expert_output_norm", 0, experts * hidden, "norms", top=True),
                _linear(f"{ff}.shared_up_proj", hidden, shared, "shared experts", top=True),
                _linear(f"{ff}.shared_down_proj", shared, hidden, "shared experts", row=True, top=True),
                Module(f"{ff}.shared_expert_output_norm", 0, hidden, "norms", top=True)]
    return out


# -- Param2 (params_generic.count_params: transformers runs it as GLM-4-MoE) -------------------------------------------

def param2moe(f: Fields, layers: list, dims) -> list[Module]:
    """Param2MoEForCausalLM, named as the checkpoints are (Sarvam's / Ling's names: transformers 5.25 runs it as
    GLM-4-MoE and renames them on load, conversion_mapping "param2moe" = "sarvam_moe"; vLLM 0.34 param2moe.py
    Param2MoEModel.hf_to_vllm_mapper reads them): word_embeddings, norm, lm_head (tied by default); per layer
    attention.query_key_value ((heads + 2 x KV heads) x head_dim outputs, a bias with attention_bias),
    attention.dense (no bias), attention.query_layernorm / key_layernorm (head_dim) with use_qk_norm, two norms;
    a MoE from first_k_dense_replace on every moe_layer_freq-th layer: mlp.gate [E, hidden], mlp.gate.expert_bias
    [E] (unless topk_method names another method than noaux_tc), the experts mlp.experts.N of
    moe_intermediate_size and mlp.shared_experts of moe_intermediate_size x n_shared_experts; else a dense mlp of
    intermediate_size: as params_generic.count_params counts GLM-4-MoE. vLLM 0.34 biases query_key_value with
    use_qkv_bias
    and dense with use_bias instead of attention_bias (the released configs set neither)."""
    from ..params_generic import _is_moe_layer

    heads, kv, hd = dims[:3]
    hidden = f.int("hidden_size", "n_embd")
    inter = f.int("intermediate_size", "n_inner", default=4 * hidden, maximum=10**8)
    experts = f.int("num_local_experts", "num_experts", "n_routed_experts", default=0, minimum=0)
    n_shared = f.int("n_shared_experts", default=0, minimum=0)
    if f.int("shared_expert_intermediate_size", default=0, minimum=0) and not n_shared:
        return []  # a Qwen-style gated shared expert the checkpoints' names do not give
    bias = f.flag("attention_bias")
    score_bias = "topk_method" not in f.raw or f.raw["topk_method"] == "noaux_tc"
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [_float("word_embeddings", vocab * hidden, "embeddings"), _float("norm", hidden)]
    if not f.flag("tie_word_embeddings", default=True):
        out.append(Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i in range(len(layers)):
        a, m = f"layers.{i}.attention", f"layers.{i}.mlp"
        out += [_linear(f"{a}.query_key_value", hidden, (heads + 2 * kv) * hd, "attention", bias, kv_heads=kv,
                        kv_outputs=2 * kv * hd),
                _linear(f"{a}.dense", heads * hd, hidden, "attention", row=True)]
        if f.flag("use_qk_norm"):
            out += [_float(f"{a}.query_layernorm", hd), _float(f"{a}.key_layernorm", hd)]
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if not (experts and _is_moe_layer(f, i)):
            out += _mlp(m, hidden, inter, "mlp")
            continue
        moe_inter = f.int("moe_intermediate_size", "intermediate_size")
        out += _experts(m, experts, hidden, moe_inter) + [_float(f"{m}.gate", hidden * experts, "router")]
        if score_bias:
            out.append(_float(f"{m}.gate.expert_bias", experts, "router"))
        if n_shared:
            out += _mlp(f"{m}.shared_experts", hidden, n_shared * moe_inter, "shared experts")
    return out


MOE_MORE = {"dots1": dots1, "hunyuan_v1_moe": hunyuan_v1_moe, "olmoe": olmoe, "phimoe": phimoe,
            **dict.fromkeys(("granitemoe", "granitemoeshared", "granitemoe_swa"), granitemoe), "jetmoe": jetmoe,
            "solar_open": solar_open, "sarvam_moe": bailing_moe,
            "afmoe": afmoe, "exaone_moe": exaone_moe,
            "minicpm5_moe": minicpm5_moe, "hy_v3": hy_v3,
            "cohere2_moe": cohere2_moe, "flex_olmo": flex_olmo,
            "aria_text": aria_text, "mellum": mellum,
            "doge": doge, "beam": beam,
            "flint": flint, "kolibri1": kolibri1, "ergo": ergo,
            "param2moe": param2moe}
