"""Per-module parameter tables (configs/weight_tables/__init__.py) of more latent-attention and sparse decoders:
Sarvam-MLA (sarvam_mla), Mistral Small 4's text model (mistral4), Youtu-LLM (youtu), Mistral Large 4's text model
(mistral_large4_text), HY-V4 (hy_v4, hy_v4_vl_text), dots3-note's text model (dots3_note_text), A.X-K1 (axk1),
A.X-K2 (axk2) and Kolibri 1.1 (kolibri1_1), named as their checkpoints' safetensors are and each mirroring its
family's counter term by term (params_generic.count_latent_params for sarvam_mla and mistral4, params_mla_more.hy_v4,
params_moe_more.kolibri1_1, params_mla's for the rest). Each builder's docstring says what vLLM 0.34 holds whole on
every
TP rank and which vLLM class makes it so; the three below share one layout.

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params) of sarvam_mla, youtu and mistral4:
the MLA latent down-projections q_a_proj and kv_a_proj_with_mqa (as _mla_widths marks them), every RMSNorm, the MoE
router and its e_score_correction_bias, and o_proj's bias where attention_bias gives one (RowParallelLinear). Where
it comes from:
- sarvam_mla: vLLM 0.34 sarvam.py SarvamMLAAttention builds q_a_proj and kv_a_proj_with_mqa as ReplicatedLinear,
  q_b_proj / q_proj and kv_b_proj as ColumnParallelLinear, o_proj as RowParallelLinear; SarvamMLAMoE the router as
  GateLinear with e_score_correction_bias an nn.Parameter (moe_router_enable_expert_bias, default true), the
  experts as FusedMoE and shared_experts as a split SarvamMLAMLP. Its checkpoints name the modules as DeepSeek-V3's
  (transformers 5.25 runs the type as DeepseekV3ForCausalLM: models/auto/modeling_auto.py), so the type uses
  DeepSeek-V3's table (weight_tables._latent) as it is.
- youtu: vLLM 0.34 registers no YoutuForCausalLM, so model_executor/models/registry.py resolve_model_cls falls
  back to the Transformers modeling backend, where transformers/base.py _recursive_replace hands each MLA attention
  to fusers/mla.py MLAFuser: q_a_proj and kv_a_proj_with_mqa fused into a MergedColumnParallelLinear with
  disable_tp=True (kv_a_proj_with_mqa alone "replicate", a ReplicatedLinear, without a query LoRA), q_b_proj /
  q_proj and kv_b_proj colwise, o_proj rowwise: DeepSeek-V2's layout. configuration_youtu.py's base_model_tp_plan
  splits the mlp; the RMSNorms become vLLM's RMSNorm (whole).
- mistral4 (Mistral Small 4's text model, in a Mistral3ForConditionalGeneration): vLLM 0.34 has no model of its own
  for the Hugging Face form. mistral3.py builds the text model from text_config (init_vllm_registered_model), and
  config/vllm.py with_hf_config names its class only from MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, which in transformers
  5.25 does not list mistral4 (Mistral4ForCausalLM is registered as a pretraining and image-text-to-text class
  only), so what vLLM runs depends on the architectures the checkpoint's text_config writes (kvplan does not read
  that as known). The table follows what vLLM 0.34 builds for the same modules from the same checkpoint's
  Mistral-format params.json (configs/mistral_params.py: MistralLarge3ForCausalLM, a DeepseekV3ForCausalLM:
  deepseek_v2.py DeepseekV2MLAAttention, as _mla_widths says) and what the Transformers backend's MLAFuser would
  build; not read as served.
"""

from __future__ import annotations

from ..fields import Fields
from . import Module, _ends, _experts, _float, _latent, _linear, _mla_widths, _mlp


def mistral4(f: Fields, layers: list, dims) -> list[Module]:
    """Mistral4ForCausalLM (transformers 5.25 modeling_mistral4.py: Mistral4Attention is DeepSeek-V2's MLA,
    Mistral4MoE the routed experts, the router mlp.gate (Mistral4TopkRouter, no e_score_correction_bias) and
    shared_experts of moe_intermediate_size x n_shared_experts; a dense Mistral4MLP below first_k_dense_replace):
    DeepSeek-V3's table without the router's score bias, which params_generic._moe leaves out for this type too."""
    return [m for m in _latent(f, layers, dims) if not m.name.endswith(".gate.e_score_correction_bias")]


def youtu(f: Fields, layers: list, dims) -> list[Module]:
    """YoutuForCausalLM (transformers 5.25 modeling_youtu.py YoutuAttention, YoutuMLP) with params_mla.youtu's
    defaults (YoutuConfig's): DeepSeek-V2's MLA modules (q_proj without a q_lora_rank, else q_a_proj,
    q_a_layernorm, q_b_proj; kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj; attention_bias on q_a_proj,
    kv_a_proj_with_mqa and o_proj), a dense gated mlp, two norms a layer; embeddings, final norm, the head tied
    unless tie_word_embeddings is false."""
    from ..params_mla import _opt_rank

    hidden, heads = f.int("hidden_size", default=2048), f.int("num_attention_heads", default=16)
    q_lora = _opt_rank(f, "q_lora_rank", 1536)
    widths = (f.int("kv_lora_rank", default=512), f.int("qk_rope_head_dim", default=64),
              f.int("qk_nope_head_dim", default=128), f.int("v_head_dim", default=128))
    bias = f.flag("attention_bias")
    inter = f.int("intermediate_size", default=6144, minimum=0)
    out = _ends(f, hidden, True, 128256)
    for i in range(len(layers)):
        out += _mla_widths(f"layers.{i}.self_attn", hidden, heads, q_lora, bias, *widths)
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
    return out


# -- Mistral Large 4 (params_mla.mistral_large4_text) -------------------------------------------------------------

def _top(name: str, weight: int, other: int = 0, role: str = "attention", whole: bool = False,
         inputs: int = 0) -> Module:
    return Module(name, weight, other, role, top=True, whole=whole, inputs=inputs)


def mistral_large4_text(f: Fields, layers: list, dims) -> list[Module]:
    """Mistral Large 4's text model as params_mla.mistral_large4_text counts it, under its checkpoint's own names.
    The Hugging Face repository keeps Mistral's tensor names at the top (transformers 5.25 conversion_mapping.py
    "mistral_large4" and "mistral_large4_text" rename them on load): tok_embeddings, norm, output, lerope.alpha, and
    per layer attention.wq / wkv_a_with_mqa / kv_a_norm / wkv_b / wo / ssmax_scaling.s and .b, attention.indexer.wq_b
    / wk / k_norm / weights_proj / q_input_norm / ssmax_scaling.s and .b, attention_norm, ffn_norm, feed_forward.w1 /
    w2 / w3 (dense layers), experts.E.w1 / w2 / w3, gate and shared_experts.w1 / w2 / w3 (MoE layers); vLLM 0.34
    loads the same names (models/mistral/mistral_large4/nvidia/model.py _CHECKPOINT_NAME_MAP). The modules are
    therefore `top` (weight_tables.TOP_ROOTS), as DeepSeek-V4's are.

    vLLM 0.34 registers no class for the Hugging Face form (MistralLarge4ForConditionalGeneration); what each TP rank
    holds follows vLLM 0.34's own Mistral Large 4 model, which it builds from the same checkpoint's params.json
    (models/mistral/nvidia): attention.py MistralMLAAttention builds q_proj as a ColumnParallelLinear,
    kv_a_proj_with_mqa as a ReplicatedLinear (quant_config=None: whole), kv_a_layernorm an RMSNorm, kv_b_proj a
    ColumnParallelLinear, o_proj a RowParallelLinear, and the query scaling (SSMaxScaling with tp_sharded=True) one
    s and b a local head, split with the heads; indexer.py MistralIndexer q_input_norm (LayerNorm), wq_b
    (ReplicatedLinear), wk and weights_proj fused into wk_weights_proj (a MergedColumnParallelLinear with
    quant_config=None and disable_tp=True), k_norm (LayerNorm) and its SSMaxScaling (tp_sharded=False), all whole;
    moe.py MistralMoE the router gate (GateLinear, whole), the experts (FusedMoE) and shared_experts (MistralMLP,
    split); mlp.py MistralMLP split; the RMSNorms whole; lerope.alpha is copied into the rotary embedding, whole on
    every rank. vLLM builds the two SSMax scalings only with ssmax_scaling / indexer_ssmax_scaling, which
    transformers' config does not have: transformers always builds them, and so does the table.

    Never quantized, whatever the checkpoint's quantization: kv_a_proj_with_mqa, kv_b_proj (attention.py
    MistralMLAAttention: quant_config=None for both; the AMD twin models/mistral/amd/attention.py the same) and
    wk_weights_proj (indexer.py MistralIndexer: quant_config=None), so each is a plain 16-bit parameter in vLLM 0.34,
    the only release with models/mistral (0.33.0 has none), and its loader (mistral_large4/nvidia/model.py
    _load_weights: default_weight_loader, no scale parameter to load a weight_scale_inv into) takes these
    checkpoint tensors only in the float dtype. The table therefore gives wkv_a_with_mqa, wkv_b and the indexer's
    wk no quantized weight (Module.weight 0): a quantized checkpoint holds them at the float width. wq_b
    (quant_config=vllm_config.quant_config), wq, wo, the MLPs and experts are quantized."""
    from ..params_mla import mistral_large4_fields
    from ..param_parts import embeddings

    w = mistral_large4_fields(f, len(layers))
    hidden, heads, rank, rope, nope, v = (w[k] for k in ("hidden", "heads", "rank", "rope", "nope", "v"))
    ih, nh, bias = w["index_dim"], w["index_heads"], w["bias"]
    vocab_x_hidden = f.int("vocab_size", default=204800, minimum=0) * hidden
    out = [_top("tok_embeddings", 0, vocab_x_hidden, "embeddings"), _top("norm", 0, hidden, "norms"),
           _top("lerope.alpha", 0, rope // 2, whole=True)]
    if embeddings(f, hidden, False, 204800) > vocab_x_hidden:
        out.append(_top("output", vocab_x_hidden, 0, "lm_head", inputs=hidden))
    shared_inter = w["moe_inter"] * w["shared"]
    for i, layer in enumerate(layers):
        a, n = f"layers.{i}.attention", f"layers.{i}"
        rope_i = rope if w["rope_flags"][i] else 0
        out += [_top(f"{a}.wq", hidden * heads * (nope + rope), inputs=hidden),
                _top(f"{a}.wkv_a_with_mqa", 0, (hidden + (1 if bias else 0)) * (rank + rope_i), whole=True),
                _top(f"{a}.kv_a_norm", 0, rank, "norms"),
                _top(f"{a}.wkv_b", 0, rank * heads * (nope + rope - rope_i + v)),
                Module(f"{a}.wo", heads * v * hidden, hidden if bias else 0, "attention", top=True,
                       inputs=heads * v, whole_bias=bias),
                _top(f"{a}.ssmax_scaling.s", 0, heads), _top(f"{a}.ssmax_scaling.b", 0, heads)]
        if any(c.kind == "indexer" for c in layer.caches):
            x = f"{a}.indexer"
            out += [_top(f"{x}.q_input_norm", 0, 2 * hidden, "norms"),
                    _top(f"{x}.wq_b", hidden * nh * ih, whole=True, inputs=hidden),
                    _top(f"{x}.wk", 0, hidden * ih, whole=True),
                    _top(f"{x}.k_norm", 0, 2 * ih, "norms"),
                    _top(f"{x}.weights_proj", 0, hidden * nh, whole=True),
                    _top(f"{x}.ssmax_scaling.s", 0, nh, whole=True), _top(f"{x}.ssmax_scaling.b", 0, nh, whole=True)]
        out += [_top(f"{n}.attention_norm", 0, hidden, "norms"), _top(f"{n}.ffn_norm", 0, hidden, "norms")]
        if w["sparse"][i] == "sparse":
            out += [Module(e.name, e.weight, 0, e.role, e.experts, top=True, inputs=e.inputs)
                    for e in _experts(n, w["experts"], hidden, w["moe_inter"], ("w1", "w3", "w2"))]
            out.append(_top(f"{n}.gate", 0, w["experts"] * hidden, "router"))
            if shared_inter:
                out += _mistral_mlp(f"{n}.shared_experts", hidden, shared_inter, "shared experts")
        else:
            out += _mistral_mlp(f"{n}.feed_forward", hidden, w["inter"], "mlp")
    return out


def _mistral_mlp(prefix: str, hidden: int, inter: int, role: str) -> list[Module]:
    """Mistral's gated MLP under its own names: w1 (gate), w3 (up), w2 (down); no biases."""
    return [_top(f"{prefix}.w1", hidden * inter, role=role, inputs=hidden),
            _top(f"{prefix}.w3", hidden * inter, role=role, inputs=hidden),
            _top(f"{prefix}.w2", inter * hidden, role=role, inputs=inter)]


# -- HY-V4 (params_mla_more.hy_v4) -------------------------------------------------------------------------------------

def hy_v4(f: Fields, layers: list, dims) -> list[Module]:
    """HYV4ForCausalLM (transformers 5.25 modeling_hy_v4.py), and HY-V4-VL's text model (hy_v4_vl_text, under
    `model.language_model.`), as params_mla_more.hy_v4 counts it, under the checkpoints' names (conversion_mapping.py
    "hy_v4"
    renames them on load; vLLM 0.34 models/hy_v4/nvidia/model.py load_weights reads the same): per layer DeepSeek's
    MLA modules with a query LoRA (attention_bias on q_a_proj, kv_a_proj_with_mqa and o_proj), the output gate
    self_attn.linear_gate (hidden -> heads x v_head_dim; gate_proj in transformers), the sinks
    self_attn.learnable_sink_param (one a head; sinks), the DSA indexer on the layers keeping index keys, two
    norms, the two hyper-connections hc_attn_layer.hc_pre / hc_mlp_layer.hc_pre (hc_fn [2 x hc_mult, hc_mult x
    hidden], hc_base [2 x hc_mult], hc_scale [2]; attn_hc / ffn_hc in transformers), and the dense mlp or the MoE
    (routed experts, the router mlp.gate and its e_score_correction_bias, shared_experts); the model's
    hc_head.hc_head_fn [hc_mult, hc_mult x hidden], hc_head_base, hc_head_scale, embeddings, final norm and
    lm_head (untied by default). The routed experts are listed one by one (experts.E.gate_proj ...); vLLM also
    loads them packed (experts.gate_up_proj / down_proj), as transformers keeps them.

    What vLLM 0.34 holds whole on every TP rank (models/hy_v4/nvidia): attention.py HYV4MLAAttention fuses q_a_proj
    and kv_a_proj_with_mqa into fused_qkv_a_proj (a MergedColumnParallelLinear with disable_tp=True) and builds
    q_b_proj, kv_b_proj and linear_gate as ColumnParallelLinear, o_proj as a RowParallelLinear, and the sinks
    with make_attention_sink for its local heads (split); its indexer wq_b a ReplicatedLinear, wk and
    weights_proj fused into wk_weights_proj (quant_config=None, disable_tp=True), k_norm a LayerNorm: whole, as
    weight_tables._indexer says; hc.py builds each hc_fn and hc_head_fn as a float32 ReplicatedLinear and the
    bases and scales as nn.Parameters (whole); moe.py the router (GateLinear) and its expert_bias (whole), the
    experts (FusedMoE) and shared experts split; the RMSNorms whole. vLLM builds the hyper-connections only with
    enable_ihc, the gate only for a gated MLA and the sinks only with learnable_sink, all of which transformers
    builds on every layer, and so does the table."""
    from ..param_parts import dense_first, mlp_layer_types
    from . import _deepseek_moe, _indexer

    hidden, heads = f.int("hidden_size"), f.int("num_attention_heads")
    q, r = f.int("q_lora_rank"), f.int("kv_lora_rank")
    nope, rope, v = f.int("qk_nope_head_dim"), f.int("qk_rope_head_dim"), f.int("v_head_dim")
    bias = f.flag("attention_bias")
    index_heads, index = f.int("index_n_heads", default=16), f.int("index_head_dim", default=128)
    hc = f.int("hc_mult", default=4)
    experts, inter = f.int("n_routed_experts"), f.int("moe_intermediate_size")
    shared = inter * f.int("n_shared_experts", default=1)
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=1, minimum=0)))
    out = _ends(f, hidden, False, None)
    out += [_whole("hc_head.hc_head_fn", hc * hc * hidden), _whole("hc_head.hc_head_base", hc),
            _whole("hc_head.hc_head_scale", 1)]
    for i, (layer, kind) in enumerate(zip(layers, kinds)):
        a, n = f"layers.{i}.self_attn", f"layers.{i}"
        out += _mla_widths(a, hidden, heads, q, bias, r, rope, nope, v)
        out += [_linear(f"{a}.linear_gate", hidden, heads * v, "attention"),
                Module(f"{a}.learnable_sink_param", 0, heads, "attention")]
        if any(c.kind == "indexer" for c in layer.caches):
            out += _indexer(a, hidden, q, index, index_heads)
        out += [_float(f"{n}.input_layernorm", hidden), _float(f"{n}.post_attention_layernorm", hidden)]
        for side in ("hc_attn_layer", "hc_mlp_layer"):
            out += [_whole(f"{n}.{side}.hc_pre.hc_fn", 2 * hc * hc * hidden),
                    _whole(f"{n}.{side}.hc_pre.hc_base", 2 * hc), _whole(f"{n}.{side}.hc_pre.hc_scale", 2)]
        if kind == "sparse":
            out += _deepseek_moe(f"{n}.mlp", hidden, experts, inter, shared)
        else:
            out += _mlp(f"{n}.mlp", hidden, f.int("intermediate_size"), "mlp")
    return out


# -- A.X-K1 (params_mla.axk1) ------------------------------------------------------------------------------------

def axk1(f: Fields, layers: list, dims) -> list[Module]:
    """AXK1ForCausalLM (transformers 5.25 modeling_axk1.py) with params_mla.axk1's defaults: DeepSeek-V3's layers
    (MLA with a query LoRA, attention_bias on q_a_proj, kv_a_proj_with_mqa and o_proj; the dense mlp or the MoE:
    routed experts, the router mlp.gate and its e_score_correction_bias, shared_experts) whose MoE layers add a
    post_mlp_layernorm, which the checkpoints keep at the decoder layer (layers.N.post_mlp_layernorm;
    conversion_mapping.py "axk1" moves it into mlp.). vLLM 0.34 AXK1.py AXK1MLAAttention fuses q_a_proj and
    kv_a_proj_with_mqa into a MergedColumnParallelLinear with disable_tp=True (whole), builds q_b_proj and kv_b_proj
    column-parallel and o_proj row-parallel; AXK1MoE the router as GateLinear with e_score_correction_bias (for
    topk_method noaux_tc, the default) and the experts and shared experts split; the RMSNorms whole.
    AXK1DecoderLayer builds post_mlp_layernorm on the dense layers too, which the checkpoint does not hold: not in
    the table (hidden_size parameters a dense layer)."""
    from ..param_parts import mlp_layer_types
    from ..params_mla import _experts as routed_experts
    from ..params_mla import _first_k_rule, _need_rank
    from . import _deepseek_moe

    hidden, heads = f.int("hidden_size", default=7168), f.int("num_attention_heads", default=64)
    q_lora = _need_rank(f, "q_lora_rank", 1536)
    widths = (f.int("kv_lora_rank", default=512), f.int("qk_rope_head_dim", default=64),
              f.int("qk_nope_head_dim", default=128), f.int("v_head_dim", default=128))
    bias = f.flag("attention_bias")
    inter = f.int("intermediate_size", default=18432, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=2048, minimum=0)
    experts = routed_experts(f, 192)
    shared = moe_inter * f.int("n_shared_experts", default=1, minimum=0)
    out = _ends(f, hidden, False, 163840)
    for i, kind in enumerate(mlp_layer_types(f, len(layers), _first_k_rule(f, 1))):
        n = f"layers.{i}"
        out += _mla_widths(f"{n}.self_attn", hidden, heads, q_lora, bias, *widths)
        out += [_float(f"{n}.input_layernorm", hidden), _float(f"{n}.post_attention_layernorm", hidden)]
        if kind == "sparse":
            out += _deepseek_moe(f"{n}.mlp", hidden, experts, moe_inter, shared)
            out.append(_float(f"{n}.post_mlp_layernorm", hidden))
        else:
            out += _mlp(f"{n}.mlp", hidden, inter, "mlp")
    return out


# -- dots3-note (params_mla.dots3_note) --------------------------------------------------------------------------

def dots3_note(f: Fields, layers: list, dims) -> list[Module]:
    """dots3-note's text model (dots3_note_text; transformers 5.25 modeling_dots3_note.py Dots3NoteTextAttention,
    Dots3NoteTextMoE) as params_mla.dots3_note counts it (dots3_note_parts: each layer's own widths, per_layer_config
    or the swa_* fields on sliding layers), under transformers' names, which the checkpoints keep: per layer MLA
    with a query LoRA (attention_bias on q_a_proj, kv_a_proj_with_mqa and o_proj), k_rope_only_layernorm
    (qk_rope_head_dim), the head-wise output gate g_proj (hidden -> heads), the DSA indexer on
    "indexed_attention" layers, two norms, the dense mlp or the MoE (routed experts, mlp.gate and its
    e_score_correction_bias, shared_experts); embeddings, final norm, lm_head (untied by default).

    vLLM 0.34 (models/dots3_note/nvidia/model.py, on DeepSeek-V3.2's runtime) holds whole on every TP rank: the
    fused q_a_proj + kv_a_proj_with_mqa (DeepSeekV2FusedQkvAProjLinear, disable_tp) on the DSA and the sliding
    layers alike, the indexer (as weight_tables._indexer says), g_proj (a ReplicatedLinear for the "headwise" gate
    transformers builds; attention_gate_type / swa_attention_gate_type), k_rope_only_layernorm and the other
    RMSNorms, the router (GateLinear) and its score bias; q_b_proj, kv_b_proj and o_proj split with the heads,
    the experts and shared experts split."""
    from ..params_mla import dots3_note_parts
    from . import _deepseek_moe, _indexer

    w = dots3_note_parts(f, len(layers))
    hidden, bias = w["hidden"], w["bias"]
    out = _ends(f, hidden, False, 152064)
    for i, kind in enumerate(w["kinds"]):
        cfg, a, n = w["attention"][i], f"layers.{i}.self_attn", f"layers.{i}"
        h, heads, rope, q_lora = (cfg[k] for k in ("hidden_size", "num_attention_heads", "qk_rope_head_dim",
                                                    "q_lora_rank"))
        out += _mla_widths(a, h, heads, q_lora, bias, cfg["kv_lora_rank"], rope, cfg["qk_nope_head_dim"],
                           cfg["v_head_dim"])
        out += [_float(f"{a}.k_rope_only_layernorm", rope), _linear(f"{a}.g_proj", h, heads, "attention", whole=True)]
        if w["types"][i] == "indexed_attention":
            out += _indexer(a, h, q_lora, cfg["index_head_dim"], cfg["index_n_heads"])
        out += [_float(f"{n}.input_layernorm", hidden), _float(f"{n}.post_attention_layernorm", hidden)]
        if kind == "sparse":
            out += _deepseek_moe(f"{n}.mlp", hidden, w["experts"], w["moe_inter"], w["shared_inter"])
        else:
            out += _mlp(f"{n}.mlp", hidden, w["inter"], "mlp")
    return out


# -- A.X-K2 (params_mla.axk2) ------------------------------------------------------------------------------------

def axk2(f: Fields, layers: list, dims) -> list[Module]:
    """AXK2ForCausalLM (transformers 5.25 modeling_axk2.py) with params_mla.axk2's defaults, under the checkpoints'
    names (conversion_mapping.py "axk2" renames them on load): per layer q_a_proj, q_a_layernorm, the fused query and
    output-gate projection self_attn.q_b_proj (2 x q_lora_rank -> heads x (qk_nope + qk_rope + v_head_dim);
    q_gate_proj in transformers), kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj (attention_bias on
    q_a_proj, kv_a_proj_with_mqa and o_proj), the DSA indexer on every layer; input_layernorm an AXK2GatedRMSNorm
    (input_layernorm.norm and its low-rank gate input_layernorm.W_down (hidden -> gated_norm_rank) and W_up
    (back); mlp.fc1 / mlp.fc2 in transformers), post_attention_layernorm gated on MoE layers and a plain RMSNorm on
    dense ones; the dense mlp or the MoE (routed experts, stored one by one, mlp.gate and its
    e_score_correction_bias, shared_experts); embeddings, final norm, lm_head (untied by default).

    vLLM 0.34 registers no AXK2ForCausalLM: registry.py resolve_model_cls falls back to the Transformers modeling
    backend (whether it runs this attention is not read here). transformers/base.py _recursive_replace gives each
    nn.Linear the style of configuration_axk2.py's base_model_tp_plan: q_gate_proj and kv_b_proj colwise, o_proj
    rowwise, the mlp and shared_experts split; kv_a_proj_with_mqa's "mla_kv_a_proj" is no style utils.py
    replace_linear_class knows, so a ReplicatedLinear, as is every linear the plan leaves out (q_a_proj, the
    indexer's, the gated norms' W_down / W_up): whole on every rank, as are the RMSNorms, the indexer's k_norm and
    the router's weight and bias (parameters, not linear layers)."""
    from ..param_parts import mlp_layer_types
    from ..params_mla import _experts as routed_experts
    from ..params_mla import _first_k_rule, _need_rank
    from . import _deepseek_moe, _indexer

    hidden, heads = f.int("hidden_size", default=2048), f.int("num_attention_heads", default=32)
    q_lora = _need_rank(f, "q_lora_rank", 384)
    rank = f.int("kv_lora_rank", default=128)
    rope, nope = f.int("qk_rope_head_dim", default=32), f.int("qk_nope_head_dim", default=64)
    v = f.int("v_head_dim", default=64)
    bias = f.flag("attention_bias")
    index, index_heads = f.int("index_head_dim", default=128), f.int("index_n_heads", default=16)
    gate_rank = f.int("gated_norm_rank", default=16, minimum=0)
    inter = f.int("intermediate_size", default=5120, minimum=0)
    moe_inter = f.int("moe_intermediate_size", default=512, minimum=0)
    experts = routed_experts(f, 128)
    shared = moe_inter * f.int("n_shared_experts", default=1, minimum=0)

    def gated(name: str) -> list[Module]:
        return [_float(f"{name}.norm", hidden), _linear(f"{name}.W_down", hidden, gate_rank, "norms", whole=True),
                _linear(f"{name}.W_up", gate_rank, hidden, "norms", whole=True)]

    out = _ends(f, hidden, False, 163840)
    for i, kind in enumerate(mlp_layer_types(f, len(layers), _first_k_rule(f, 1))):
        a, n = f"layers.{i}.self_attn", f"layers.{i}"
        mla = _mla_widths(a, hidden, heads, q_lora, bias, rank, rope, nope, v)
        out += [_linear(f"{a}.q_b_proj", 2 * q_lora, heads * (nope + rope + v), "attention")
                if m.name == f"{a}.q_b_proj" else m for m in mla]
        out += _indexer(a, hidden, q_lora, index, index_heads)
        out += gated(f"{n}.input_layernorm")
        if kind == "sparse":
            out += gated(f"{n}.post_attention_layernorm")
            out += _deepseek_moe(f"{n}.mlp", hidden, experts, moe_inter, shared)
        else:
            out.append(_float(f"{n}.post_attention_layernorm", hidden))
            out += _mlp(f"{n}.mlp", hidden, inter, "mlp")
    return out


# -- Kolibri 1.1 (params_moe_more.kolibri1_1) --------------------------------------------------------------------------

def kolibri1_1(f: Fields, layers: list, dims) -> list[Module]:
    """Kolibri1_1ForCausalLM (transformers 5.25 modeling_kolibri1_1.py) as params_moe_more.kolibri1_1 counts it, under
    the
    checkpoints' names (conversion_mapping.py "kolibri1", which "kolibri1_1" copies, renames post_attn_norm,
    post_ffn_norm and moe.router.expert_bias on load): per layer q_proj, q_norm, and on the layers that keep their
    own K/V (the others read an earlier layer's) k_proj, v_proj and k_norm; o_proj; input_layernorm,
    post_attention_layernorm, post_attn_norm and post_ffn_norm (post_self_attn_layernorm / post_mlp_layernorm in
    transformers); the dense mlp (mlp_only_intermediate_size) on mlp_only_layers (absent: layers 0 and 1), else the
    routed experts, the router
    mlp.gate, its score bias moe.router.expert_bias and mlp.shared_experts; embeddings, final norm, lm_head. The
    indexer holds no weights.

    vLLM 0.34 does not serve Kolibri 1.1 (engines/vllm.py refuses it: the Transformers backend it falls back to fails
    on the indexed layers), so what each TP rank holds is not read: the table follows vLLM's rule for the same
    modules elsewhere (qwen3_moe.py: q/k/v in a QKVParallelLinear, split by KV head, o_proj row-parallel, the
    q/k norms, the other RMSNorms and the router whole, the experts and shared experts split), and keeps q_proj and
    o_proj split on the layers without K/V of their own, as vLLM's gemma3n.py does for its KV-sharing layers."""
    heads, kv, head, _ = dims
    hidden = f.int("hidden_size")
    experts, inter = f.int("num_local_experts", "num_experts"), f.int("moe_intermediate_size")
    from ..params_moe_more import kolibri_dense_layers

    dense_layers = kolibri_dense_layers(f, len(layers))
    out = _ends(f, hidden, False, None)
    for i, layer in enumerate(layers):
        a, n = f"layers.{i}.self_attn", f"layers.{i}"
        out += [_linear(f"{a}.q_proj", hidden, heads * head, "attention"), _float(f"{a}.q_norm", head)]
        if layer.shares_cache_of is None:
            out += [_linear(f"{a}.k_proj", hidden, kv * head, "attention", kv_heads=kv),
                    _linear(f"{a}.v_proj", hidden, kv * head, "attention", kv_heads=kv), _float(f"{a}.k_norm", head)]
        out.append(_linear(f"{a}.o_proj", heads * head, hidden, "attention", row=True))
        out += [_float(f"{n}.{norm}", hidden) for norm in ("input_layernorm", "post_attention_layernorm",
                                                          "post_attn_norm", "post_ffn_norm")]
        if i in dense_layers:
            out += _mlp(f"{n}.mlp", hidden, f.int("mlp_only_intermediate_size"), "mlp")
        else:
            out += _experts(f"{n}.mlp", experts, hidden, inter)
            out += [_float(f"{n}.mlp.gate", hidden * experts, "router"),
                    _float(f"{n}.moe.router.expert_bias", experts, "router")]
            out += _mlp(f"{n}.mlp.shared_experts", hidden, f.int("shared_expert_intermediate_size"), "shared experts")
    return out


# -- Dory (params_dense_special.dory) ----------------------------------------------------------------------------------

def dory(f: Fields, layers: list, dims) -> list[Module]:
    """DoryForCausalLM (transformers 5.25 modeling_dory.py) as params_dense_special.dory counts it, under its
    checkpoints' names:
    each decoder layer is two checkpoint layers (conversion_mapping.py "dory" LayerPairCollapse and renames; vLLM 0.34
    dory.py DoryDecoderLayer loads the same names): backbone.layers.{2i} the attention (mixer.q_proj / k_proj /
    v_proj / o_proj with attention_bias, the output gate mixer.g_proj, the scales mixer.sqk and mixer.s_gate, and
    attn_alpha) and backbone.layers.{2i + 1} the MLP (mixer.gate_proj / up_proj / down_proj with mlp_bias,
    mixer.suv_gate and mixer.suv_up, and mlp_alpha); backbone.embeddings, lm_head (untied by default) and its
    lm_head.logit_scale. Its L2 norms hold no weights. A config in that physical form (layer_types with "mlp"
    entries, as transformers writes it) has kvplan's layers in the checkpoint's order; a logical one (attention
    entries only) has layer i at checkpoint layers 2i and 2i + 1. The recurrent loops reuse the same weights.

    vLLM 0.34 serves Dory at TP 1 only (dory.py: "tensor_parallel_size=1 only"); the table marks what its classes
    would hold whole (sqk, s_gate, suv_gate, suv_up, the alphas and logit_scale: plain nn.Parameters of full width;
    q/k/v in a QKVParallelLinear, g_proj column-, o_proj and down_proj row-parallel)."""
    heads, kv, head, _ = dims
    hidden, vocab, inter = f.int("hidden_size"), f.int("vocab_size"), f.int("intermediate_size")
    q = heads * head
    bias, mlp_bias = f.flag("attention_bias"), f.flag("mlp_bias")
    out = [_top("backbone.embeddings", 0, vocab * hidden, "embeddings"),
           _top("lm_head.logit_scale", 0, vocab, "lm_head", whole=True)]
    if not f.flag("tie_word_embeddings"):
        out.append(_top("lm_head", vocab * hidden, 0, "lm_head", inputs=hidden))
    physical = any(not layer.caches for layer in layers)
    attention = [j if physical else 2 * j for j, layer in enumerate(layers) if layer.caches]
    for j in attention:
        a, m = f"backbone.layers.{j}", f"backbone.layers.{j + 1}"
        out += [Module(f"{a}.mixer.{p}", hidden * w, w if bias else 0, "attention", top=True, inputs=hidden,
                       kv_heads=kv if p != "q_proj" else 0, kv_weight=hidden * w if p != "q_proj" else 0,
                       kv_other=w if bias and p != "q_proj" else 0)
                for p, w in (("q_proj", q), ("k_proj", kv * head), ("v_proj", kv * head))]
        out += [Module(f"{a}.mixer.o_proj", q * hidden, hidden if bias else 0, "attention", top=True, inputs=q,
                       whole_bias=bias),
                _top(f"{a}.mixer.g_proj", hidden * q, inputs=hidden),
                _top(f"{a}.mixer.sqk", 0, q, whole=True), _top(f"{a}.mixer.s_gate", 0, q, whole=True),
                _top(f"{a}.attn_alpha", 0, hidden, whole=True)]
        out += [_top(f"{m}.mixer.{p}", hidden * inter, inter if mlp_bias else 0, "mlp", inputs=hidden)
                for p in ("gate_proj", "up_proj")]
        out += [Module(f"{m}.mixer.down_proj", inter * hidden, hidden if mlp_bias else 0, "mlp", top=True,
                       inputs=inter, whole_bias=mlp_bias),
                _top(f"{m}.mixer.suv_gate", 0, inter, "mlp", whole=True),
                _top(f"{m}.mixer.suv_up", 0, inter, "mlp", whole=True),
                _top(f"{m}.mlp_alpha", 0, hidden, "mlp", whole=True)]
    return out


def _whole(name: str, params: int) -> Module:
    """Float parameters every TP rank holds whole that are neither a norm nor a router: HY-V4's float32
    hyper-connection mixers (vLLM 0.34 hy_v4/nvidia/hc.py: ReplicatedLinear and nn.Parameters)."""
    return Module(name, 0, params, "mixer", whole=True)


MLA_MORE = {"sarvam_mla": _latent, "mistral4": mistral4, "youtu": youtu, "mistral_large4_text": mistral_large4_text,
            "hy_v4": hy_v4, "hy_v4_vl_text": hy_v4, "axk1": axk1,
            "dots3_note_text": dots3_note, "axk2": axk2,
            "kolibri1_1": kolibri1_1, "dory": dory}
