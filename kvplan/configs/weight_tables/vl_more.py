"""Per-module parameter tables (configs/weight_tables/__init__.py) of more wrappers' text models: Qwen2-VL's
(qwen2_vl_text, and a flat qwen2_vl config), GLM-4.1V's and GLM-4.6V-Flash's (glm4v_text) and GLM-OCR's
(glm_ocr_text), ERNIE-4.5-VL's (ernie4_5_vl_moe_text), MiniMax-M3's (minimax_m3_vl_text), Molmo2's
(molmo2_text), PaddleOCR-VL's (paddleocr_vl_text), Granite 4.0 Vision's, Phi-4-multimodal's, HyperCLOVA X's,
Cosmos3-Edge's, GLM-Image's, Cohere Compass's and Muse Glimmer's; Higgs Audio v2; and a few old single-purpose
decoders (CodeGen, HRM-Text, GPT-NeoX-Japanese, CTRL, BioGPT, ModernBERT-decoder). Each mirrors its family's
counter (params_generic.count_params, params_decoder.decoder; params_moe.ernie4_5_vl_moe_text;
params_hybrid.minimax_m3_vl_text;
params_dense's) term by term; the vision towers are not counted, as the counters leave them out.

Checkpoint names (each builder's docstring gives its own where they differ): the wrappers' text model under
`model.language_model.` and the head at `lm_head` (transformers 5's layout), or, for Qwen2-VL's first checkpoints,
`model.layers.N...` (weight_tables.ROOTS holds both); vLLM 0.34 maps them onto its language model (qwen2_vl.py
Qwen2VLForConditionalGeneration.hf_to_vllm_mapper, glm4_1v.py Glm4vForConditionalGeneration.hf_to_vllm_mapper:
"model.language_model." -> "language_model.model.", "lm_head." -> "language_model.lm_head."; glm_ocr.py
GlmOcrForConditionalGeneration subclasses the latter).

"vLLM 0.34 does not serve X" below means vLLM 0.34 has no model class of its own for X (registry.py). It does not
mean a `vllm serve` of X is refused: where no class is registered, registry.py inspect_model_cls falls back
(model_impl auto) to the Transformers modeling backend for any transformers class that is_backend_compatible()
(_supports_attention_backend) or whose module passes _can_set_attn_implementation() (_try_resolve_transformers).
In transformers 5.25 that holds for Phi-4-multimodal, GLM-Image, Higgs Audio v2, CodeGen, CTRL, BioGPT,
ModernBERT-decoder, GIT, Kosmos-2 / 2.5 and Granite Docling (not for GPT-NeoX-Japanese). On that backend every
linear its config's base_model_tp_plan does not name becomes a ReplicatedLinear (transformers/base.py
recursive_replace: "replicate" by default; CTRL, BioGPT, ModernBERT-decoder, GIT and Kosmos-2 / 2.5 name none), so
those models may be held whole on every TP rank there. kvplan does not model that backend for these types
(engines/vllm_registry_data.py says the same) and nobody has tried serving them: the tables follow transformers'
modules and vLLM's rule for the same kinds of module elsewhere.
"""

from __future__ import annotations

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _experts, _float, _gqa, _linear, _mlp, _qkvo
from .dense import _layer, _width, cohere2
from .vl import ernie4_5, granite

# GLM-4-0414's four norms, in the order transformers 5.25 Glm4vTextDecoderLayer builds them
_GLM_NORMS = ("input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm", "post_mlp_layernorm")


def qwen2_vl_text(f: Fields, layers: list, dims) -> list[Module]:
    """Qwen2-VL's text model (transformers 5.25 modeling_qwen2_vl.py Qwen2VLTextModel): Qwen2's modules and names,
    q/k/v_proj biased, o_proj not (Qwen2VLAttention), the gated mlp, two RMSNorms a layer; untied unless
    tie_word_embeddings. vLLM 0.34 qwen2_vl.py builds Qwen2ForCausalLM on it (architectures=["Qwen2ForCausalLM"]):
    qwen2.py Qwen2Attention's qkv_proj (QKVParallelLinear, bias=True) and o_proj (RowParallelLinear, bias=False),
    so each TP rank holds only the RMSNorms whole. weight_tables._gqa, as Qwen2.5-VL's (configs/weight_tables/vl.py):
    params_generic._QKV_BIAS_ONLY names qwen2_vl and qwen2_vl_text."""
    return _gqa(f, layers, dims)


def glm4v_text(f: Fields, layers: list, dims) -> list[Module]:
    """GLM-4.1V's text model (glm4v_text; transformers 5.25 modeling_glm4v.py Glm4vTextModel; GLM-4.6V-Flash's too):
    GLM-4-0414's layer (configs/weight_tables/dense.py glm): q/k/v_proj with biases whatever the config says
    (Glm4vTextAttention: bias=True), o_proj without, input / post_self_attn / post_attention / post_mlp_layernorm,
    the fused mlp.gate_up_proj [2 x intermediate, hidden] and down_proj; embeddings, final norm, the head (untied by
    default: Glm4vConfig).

    vLLM 0.34 glm4_1v.py builds Glm4ForCausalLM on the text config (architectures=["Glm4ForCausalLM"] for glm4v,
    glm_ocr, glmga): glm4.py Glm4Attention's QKVParallelLinear (bias=attention_bias, which GLM-4.1V's configs state
    true) and o_proj (RowParallelLinear, bias=False), four RMSNorms, LlamaMLP's gate_up_proj
    (MergedColumnParallelLinear). Each TP rank holds the RMSNorms whole; the q/k/v biases split with the heads.
    A config with attention_bias false (vLLM would build no biases, transformers builds them) is sized as
    transformers builds it."""
    hidden = f.int("hidden_size", "n_embd")
    inter = _width(f, hidden)
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        out += _layer(i, hidden, dims, inter, bias=True, o_bias=False, norms=_GLM_NORMS, fused_mlp=True)
    return out


def glm_ocr_text(f: Fields, layers: list, dims) -> list[Module]:
    """GLM-OCR's text model (glm_ocr_text; transformers 5.25 modeling_glm_ocr.py GlmOcrTextModel): glm4v_text's
    layer with no biases at all (GlmOcrTextAttention: q/k/v/o_proj bias=False), four RMSNorms, gate_up_proj and
    down_proj; untied by default. vLLM 0.34 builds Glm4ForCausalLM on it (glm4_1v.py, as for glm4v), whose
    q/k/v biases follow attention_bias: false in zai-org/GLM-OCR's config. A config with attention_bias true gets
    no table (transformers would build no biases, vLLM would, and the counter counts them). The MTP layer
    (num_nextn_predict_layers; vLLM 0.34 glm_ocr_mtp.py GlmOcrMTP) is the drafter's, not in the table or the count."""
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: GlmOcrTextAttention builds no biases, vLLM's Glm4Attention would")
    hidden = f.int("hidden_size", "n_embd")
    inter = _width(f, hidden)
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        out += _layer(i, hidden, dims, inter, bias=False, o_bias=False, norms=_GLM_NORMS, fused_mlp=True)
    return out


def ernie4_5_vl_moe_text(f: Fields, layers: list, dims) -> list[Module]:
    """ERNIE-4.5-VL's text model (ernie4_5_vl_moe_text), as params_moe.ernie4_5_vl_moe_text counts it, under
    Baidu's checkpoint names (baidu/ERNIE-4.5-VL-28B-A3B-PT: `model.layers.N...`, which transformers 5.25 renames on
    load, conversion_mapping.py "ernie4_5_vl_moe"; vLLM 0.34 ernie45_vl_moe.py Ernie4_5_VLMoeForCausalLM.load_weights
    reads them as they are): per layer q/k/v/o_proj, two norms; on MoE layers
    - mlp.gate: the text router `gate.weight` and the vision router `gate.weight_1` ([hidden, E] each), one module;
    - mlp.moe_statics.e_score_correction_bias [2, E] (text, vision);
    - mlp.experts.N.gate_proj / up_proj / down_proj: experts 0 to E-1 the text experts (moe_intermediate_size[0]),
      E to 2E-1 the vision experts (moe_intermediate_size[1]), held here as one block of 2E experts (a list must
      name all of them or none), whose down_proj's input rows per expert are the mean of the two widths (exact
      over the block: E x (text + vision) rows; a config whose two widths sum to an odd number gets no table);
    - mlp.shared_experts of moe_num_shared_experts x the text width;
    elsewhere mlp.gate_proj / up_proj / down_proj of intermediate_size. Embeddings and final norm; the head tied
    unless tie_word_embeddings is false.

    vLLM 0.34 (ernie45_vl_moe.py) holds whole on every TP rank the RMSNorms, the two routers (text_experts_gate,
    vision_experts_gate: ReplicatedLinear, params_dtype float32) and e_score_correction_bias (float32), both counted
    here at the checkpoint's dtype (configs/param_fp32.py adds vLLM's float32 bytes for them, from 0.11.1); it
    splits the experts (FusedMoE), the shared experts and the attention (o_proj a
    RowParallelLinear without bias). A config with use_bias (transformers biases q/k/v/o and the MLPs, vLLM's
    o_proj has none) gets no table. The MTP layers (vLLM's loader skips "mtp" names) are not in the table or the
    count."""
    from ..params_moe import ernie4_5_vl_fields

    if f.flag("use_bias"):
        raise ConfigError("use_bias: transformers' o_proj bias is not built by vLLM's Ernie4_5_VLMoeAttention")
    e = ernie4_5_vl_fields(f, len(layers))
    hidden, experts, (text_width, vision_width) = e["hidden"], e["experts"], e["widths"]
    if (text_width + vision_width) % 2:
        raise ConfigError("moe_intermediate_size: text and vision widths sum to an odd number")
    mean = (text_width + vision_width) // 2
    out = _ends(f, hidden, True, None)
    for i, kind in enumerate(e["kinds"]):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, e["heads"], e["kv"], e["head_dim"])
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if kind != "sparse":
            out += _mlp(m, hidden, e["inter"], "mlp")
            continue
        both = experts * hidden * (text_width + vision_width)
        out += [_float(f"{m}.gate", 2 * hidden * experts, "router"),
                _float(f"{m}.moe_statics.e_score_correction_bias", 2 * experts, "router"),
                Module(f"{m}.experts.{{e}}.gate_proj", both, 0, "experts", 2 * experts, inputs=hidden),
                Module(f"{m}.experts.{{e}}.up_proj", both, 0, "experts", 2 * experts, inputs=hidden),
                Module(f"{m}.experts.{{e}}.down_proj", both, 0, "experts", 2 * experts, inputs=mean)]
        if e["shared"] > 0:
            out += _mlp(f"{m}.shared_experts", hidden, text_width * e["shared"], "shared experts")
    return out


def minimax_m3_vl_text(f: Fields, layers: list, dims) -> list[Module]:
    """MiniMax-M3's text model (minimax_m3_vl_text), as params_hybrid.minimax_m3_vl_text counts it, under the
    checkpoint's names (`language_model.model.layers.N...`, `language_model.lm_head`, which transformers 5.25
    renames on load: conversion_mapping.py "minimax_m3_vl"): per layer q/k/v/o_proj (no biases), q_norm and k_norm
    over head_dim, two norms; on the block-sparse layers (those with an index-key cache) the indexer's
    self_attn.index_q_proj (hidden -> index_n_heads x index_head_dim), index_k_proj (hidden -> index_head_dim),
    index_q_norm and index_k_norm; then by mlp_layer_types (params_hybrid.minimax_m3_mlp_kinds) the MoE
    block_sparse_moe.gate [E, hidden], block_sparse_moe.e_score_correction_bias [E], the routed experts
    block_sparse_moe.experts.N.w1 / w3 / w2 of intermediate_size and block_sparse_moe.shared_experts.gate_proj /
    up_proj / down_proj, or a dense mlp.gate_proj / up_proj / down_proj of dense_intermediate_size.

    vLLM 0.34 (vllm/models/minimax_m3/nvidia/model.py, registered for MiniMaxM3SparseForConditionalGeneration)
    holds whole on every TP rank the RMSNorms (MiniMAXGemmaRMSNorm: the layer norms, q/k norms, index q/k norms),
    the router (GateLinear, float32) and e_score_correction_bias (float32): both counted here at the checkpoint's
    dtype (configs/param_fp32.py adds vLLM's float32 bytes for them, from 0.24.0); and the index
    key projection, a single head replicated to every rank (layers/linear.py MinimaxM3QKVParallelLinearWithIndexer:
    "index_k is a single shared head, replicated to every rank"). The index query heads shard as the KV heads do
    (index_n_heads must equal num_key_value_heads), replicated above that TP size. The shared experts are split
    (MiniMaxM3MLP, MergedColumnParallelLinear / RowParallelLinear), as is the rest. The MegaMoE path (opt-in, NVFP4
    experts, expert parallel) builds the shared experts whole instead: not modelled. vLLM builds the shared experts
    of intermediate_size where transformers builds them of shared_intermediate_size: a config where the two differ
    gets no table; so does one whose index heads differ from its KV heads (vLLM asserts them equal). The MTP layers
    (vLLM's MiniMaxM3MTP) are the drafter's, not in the table or the count."""
    from ..params_hybrid import _indexed_layer, _m3_index, minimax_m3_mlp_kinds

    hidden = f.int("hidden_size", default=6144)
    heads = f.int("num_attention_heads", default=64)
    kv = f.int("num_key_value_heads", default=4)
    head_dim = f.int("head_dim", default=128)
    experts = f.int("num_local_experts", "num_experts", default=128)
    inter = f.int("intermediate_size", default=3072)
    shared = f.int("shared_intermediate_size", default=3072)
    if shared != inter:
        raise ConfigError("shared_intermediate_size: vLLM builds the shared experts of intermediate_size")
    index_heads, index_dim = _m3_index(f, "index_n_heads"), _m3_index(f, "index_head_dim")
    kinds = minimax_m3_mlp_kinds(f, len(layers))
    if any(_indexed_layer(layer) for layer in layers) and index_heads != kv:
        raise ConfigError("index_n_heads: vLLM's indexer needs as many index heads as KV heads")
    dense_inter = f.int("dense_intermediate_size", default=12288)
    out = _ends(f, hidden, False, 200064)
    for i, (layer, kind) in enumerate(zip(layers, kinds)):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, head_dim)
        out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if _indexed_layer(layer):
            out += [_linear(f"{a}.index_q_proj", hidden, index_heads * index_dim, "attention", kv_heads=index_heads),
                    _linear(f"{a}.index_k_proj", hidden, index_dim, "attention", whole=True),
                    _float(f"{a}.index_q_norm", index_dim), _float(f"{a}.index_k_norm", index_dim)]
        if kind == "sparse":
            m = f"layers.{i}.block_sparse_moe"
            out += [_float(f"{m}.gate", hidden * experts, "router"),
                    _float(f"{m}.e_score_correction_bias", experts, "router")]
            out += _experts(m, experts, hidden, inter, ("w1", "w3", "w2"))
            out += _mlp(f"{m}.shared_experts", hidden, inter, "shared experts")
        else:
            out += _mlp(f"layers.{i}.mlp", hidden, dense_inter, "mlp")
    return out


def molmo2_text(f: Fields, layers: list, dims) -> list[Module]:
    """Molmo2's text model (molmo2_text), as params_dense.molmo2_text counts it, under the checkpoints' own names
    (allenai/Molmo2-*: `model.transformer.blocks.N...`, which transformers 5.25 renames and splits on load:
    conversion_mapping.py "molmo2", "Molmo2TextModel"; vLLM 0.34 molmo2.py Molmo2ForConditionalGeneration
    .hf_to_vllm_mapper reads them: "att_proj" -> "qkv_proj", "ff_proj" -> "up_gate_proj", "attn_out" -> "o_proj",
    "ff_out" -> "down_proj", "attn_norm" / "ff_norm" -> the layer norms): per block self_attn.att_proj (q, k and v
    fused: hidden -> (heads + 2 x KV heads) x head_dim, biased with qkv_bias), self_attn.attn_out (no bias),
    self_attn.q_norm / k_norm, mlp.ff_proj (up and gate fused: hidden -> 2 x intermediate_size), mlp.ff_out,
    attn_norm, ff_norm; transformer.wte.embedding (vocab_size rows) and transformer.wte.new_embedding
    (additional_vocab_size rows), transformer.ln_f, lm_head (vocab_size rows, untied by default).

    vLLM 0.34 (molmo2.py Molmo2Attention, LanguageModelMLP, Molmo2TextModel) holds whole on every TP rank the
    RMSNorms, q_norm and k_norm too (RMSNorm of their full width, applied after gathering the heads for
    qk_norm_type "olmo"); it splits qkv_proj (QKVParallelLinear), o_proj (RowParallelLinear, bias=False), the MLP
    and the embeddings. vLLM builds q_norm / k_norm only with use_qk_norm (transformers always): a config stating
    use_qk_norm false gets no table."""
    from ..params_dense import molmo2_fields

    if f.has("use_qk_norm") and not f.flag("use_qk_norm"):
        raise ConfigError("use_qk_norm false: vLLM builds no q/k norms, transformers does")
    heads, kv, head_dim = dims[:3]
    m = molmo2_fields(f)
    hidden = m["hidden"]
    out = [Module("transformer.wte.embedding", 0, m["vocab"] * hidden, "embeddings"),
           Module("transformer.wte.new_embedding", 0, m["extra"] * hidden, "embeddings"),
           _float("transformer.ln_f", hidden)]
    if not m["tied"]:
        out.append(Module("lm_head", m["vocab"] * hidden, 0, "lm_head", top=True, inputs=hidden))
    q_norm, k_norm = (head_dim, head_dim) if m["per_head"] else (heads * head_dim, kv * head_dim)
    for i in range(len(layers)):
        b = f"transformer.blocks.{i}"
        out += [_linear(f"{b}.self_attn.att_proj", hidden, (heads + 2 * kv) * head_dim, "attention", m["bias"],
                        kv_heads=kv, kv_outputs=2 * kv * head_dim),
                _linear(f"{b}.self_attn.attn_out", heads * head_dim, hidden, "attention", row=True),
                _float(f"{b}.self_attn.q_norm", q_norm), _float(f"{b}.self_attn.k_norm", k_norm),
                _linear(f"{b}.mlp.ff_proj", hidden, 2 * m["inter"], "mlp"),
                _linear(f"{b}.mlp.ff_out", m["inter"], hidden, "mlp", row=True),
                _float(f"{b}.attn_norm", hidden), _float(f"{b}.ff_norm", hidden)]
    return out


def phi4_multimodal(f: Fields, layers: list, dims) -> list[Module]:
    """Phi-4-multimodal's text model in transformers 5.25's own format (phi4_multimodal; modeling_phi4_multimodal.py
    Phi4MultimodalForCausalLM), as params_dense.phi4_multimodal counts it with Phi4MultimodalConfig's defaults:
    Phi-3's modules and names (configs/weight_tables/more.py phi3: self_attn.qkv_proj, o_proj, mlp.gate_up_proj,
    down_proj, two norms, no biases); embed_tokens_extend (the image and audio towers) is not counted.

    vLLM 0.34 does not serve this architecture (registry.py _PREVIOUSLY_SUPPORTED_MODELS: Phi4MultimodalForCausalLM
    until 0.12.0; the remote-code phi4mm is served, configs/weight_tables/wrap.py): the table follows transformers,
    and what a TP rank holds whole follows vLLM's rule for the same modules in phi4mm.py's LlamaModel (the RMSNorms
    whole, the fused projections split)."""
    from .more import phi3_layer

    hidden = f.int("hidden_size", default=3072)
    inter = f.int("intermediate_size", default=8192, maximum=10**9)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=heads)
    head_dim = f.int("head_dim", default=hidden // heads)
    out = _ends(f, hidden, False, 200_064)
    for i in range(len(layers)):
        out += phi3_layer(i, hidden, heads, kv, head_dim, inter)
    return out


def hyperclovax(f: Fields, layers: list, dims) -> list[Module]:
    """HyperCLOVAXForCausalLM (transformers 5.25 modeling_hyperclovax.py; the text model of HyperCLOVA X SEED Vision
    2 too): Llama's modules and names (weight_tables._gqa: q/k/v/o_proj biased with attention_bias, the gated mlp,
    two norms) and, with use_post_norm (HyperCLOVAXConfig's default true), post_norm1 / post_norm2 a layer. vLLM
    0.34 hyperclovax.py HyperCLOVAXDecoderLayer builds the same: RMSNorms whole on every TP rank, o_proj a
    RowParallelLinear whose attention_bias bias is whole. mlp_bias biases gate/up/down_proj in transformers and vLLM
    (params_generic.dense_mlp_bias)."""
    hidden = f.int("hidden_size", "n_embd")
    out = _gqa(f, layers, dims)
    if f.flag("use_post_norm", default=True):
        out += [_float(f"layers.{i}.{norm}", hidden) for i in range(len(layers)) for norm in ("post_norm1",
                                                                                              "post_norm2")]
    return out


def cosmos3_edge_text(f: Fields, layers: list, dims) -> list[Module]:
    """Cosmos3-Edge's text model (cosmos3_edge_text), as its counter counts it (families.py: params_decoder.decoder
    with a
    plain MLP, mlp_bias, no attention biases, RMSNorms without bias, untied by default), under the checkpoints'
    Diffusers names at the top of the file (vLLM 0.34 cosmos3_edge.py _cosmos3_edge_diffusers_prefix_map and
    hf_to_vllm_mapper; transformers 5.25 conversion_mapping.py "cosmos3_edge" renames them): embed_tokens, norm,
    lm_head; per block layers.N.self_attn.to_q / to_k / to_v / to_out, input_layernorm, post_attention_layernorm,
    mlp.up_proj and mlp.down_proj (relu2, no gate; biased with mlp_bias).

    vLLM 0.34 builds each block as a Nemotron-H attention layer and an MLP layer (cosmos3_edge.py
    Cosmos3EdgeAttentionDecoderLayer, nemotron_h.py NemotronHMLPDecoderLayer): the RMSNorms whole on every TP rank,
    q/k/v fused in a QKVParallelLinear, o_proj and down_proj RowParallelLinear (down_proj's mlp_bias bias whole),
    up_proj a ColumnParallelLinear. NemotronHAttention reads attention_bias, which the counter does not: a config
    with it gets no table. ModelOpt's KV-cache scales are read on `self_attn.k_proj` / `v_proj` names
    (weight_tables._kv_scale_holder), not on to_k / to_v: a ModelOpt FP8 KV cache's scales are not counted here."""
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: vLLM's NemotronHAttention would bias q/k/v/o, the counter counts none")
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", default=None, maximum=10**8) or 4 * hidden
    bias = f.flag("mlp_bias")
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [Module("embed_tokens", 0, vocab * hidden, "embeddings", top=True),
           Module("norm", 0, hidden, "norms", top=True)]
    if not f.flag("tie_word_embeddings", default=False):
        out.append(Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i in range(len(layers)):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += [_linear(f"{a}.to_q", hidden, heads * head_dim, "attention", top=True),
                _linear(f"{a}.to_k", hidden, kv * head_dim, "attention", kv_heads=kv, top=True),
                _linear(f"{a}.to_v", hidden, kv * head_dim, "attention", kv_heads=kv, top=True),
                _linear(f"{a}.to_out", heads * head_dim, hidden, "attention", row=True, top=True),
                Module(f"layers.{i}.input_layernorm", 0, hidden, "norms", top=True),
                Module(f"layers.{i}.post_attention_layernorm", 0, hidden, "norms", top=True),
                _linear(f"{m}.up_proj", hidden, inter, "mlp", bias, top=True),
                _linear(f"{m}.down_proj", inter, hidden, "mlp", bias, row=True, top=True)]
    return out


def glm_image_text(f: Fields, layers: list, dims) -> list[Module]:
    """GLM-Image's autoregressive generator (glm_image_text), as params_dense.glm_image_text counts it, under
    transformers 5.25's names (modeling_glm_image.py GlmImageForConditionalGeneration: `model.language_model.` and
    `lm_head`): GLM-4-0414's layer (q/k/v_proj biased with attention_bias, true by default; o_proj without; four
    RMSNorms; the fused mlp.gate_up_proj and down_proj), embed_tokens of vocab_size rows, the final norm and an
    lm_head of vision_vocab_size rows (never tied). The vision encoder and VQ-VAE are not counted.

    vLLM 0.34 does not serve GLM-Image (registry.py has no GlmImage class; SGLang 0.5.23 glm_image_vl.py does): what
    a TP rank holds whole follows vLLM's rule for the same modules in glm4.py (the RMSNorms whole; QKVParallelLinear,
    o_proj without bias, the MLP split)."""
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**9)
    rows = f.int("vision_vocab_size", default=16_512)
    out = [_float("embed_tokens", f.int("vocab_size") * hidden, "embeddings"), _float("norm", hidden),
           Module("lm_head", rows * hidden, 0, "lm_head", top=True, inputs=hidden)]
    for i in range(len(layers)):
        out += _layer(i, hidden, dims, inter, bias=f.flag("attention_bias", default=True), o_bias=False,
                      norms=_GLM_NORMS, fused_mlp=True)
    return out


def muse_glimmer_text(f: Fields, layers: list, dims) -> list[Module]:
    """Muse Glimmer's text model (muse_glimmer_text; transformers 5.25 modeling_muse_glimmer.py), as
    params_generic.count_params counts it, under the canonical checkpoints' names (`model.language_model.layers.N...`):
    per layer q/k/v/o_proj (no biases), the attention's output gate self_attn.gate_proj (hidden -> heads x
    head_dim), input / post_attention / pre_feedforward / post_feedforward_layernorm, the gated mlp; embeddings,
    final norm, the head (untied by default). The q/k norms have no weight.

    vLLM 0.34 muse_glimmer.py (MuseGlimmerForCausalLM; its hf_to_vllm_mapper reads the canonical names and renames
    self_attn.gate_proj to output_gate_proj) holds the four GemmaRMSNorms and the final norm (built in float32 there:
    counted here at the checkpoint's dtype) whole on every TP rank; qkv_proj, o_proj, output_gate_proj
    (ColumnParallelLinear) and the MLP are split. Its attention has no biases: a config with attention_bias (which the
    counter counts) gets no table. Legacy exports (`model.layers.N`, post_attn_norm / post_ffn_norm, remapped by
    vLLM) name the norms differently."""
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: vLLM's MuseGlimmerAttention builds no biases")
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size", "n_embd")
    inter = _width(f, hidden)
    out = _ends(f, hidden, False, 0)
    norms = ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm")
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += _qkvo(a, hidden, heads, kv, head_dim)
        out.append(_linear(f"{a}.gate_proj", hidden, heads * head_dim, "attention"))
        out += [_float(f"layers.{i}.{norm}", hidden) for norm in norms]
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
    return out


def higgs_audio_v2(f: Fields, layers: list, dims) -> list[Module]:
    """Higgs Audio v2 (higgs_audio_v2; transformers 5.25 modeling_higgs_audio_v2.py
    HiggsAudioV2ForConditionalGeneration), as params_dense.higgs_audio_v2 counts it, under transformers' names:
    embed_tokens, embed_audio_tokens.embed_audio_tokens (num_codebooks x codebook_size rows), norm, audio_lm_head
    (the same rows; the text head is built only for training and not counted); per DualFFN layer q/k/v/o_proj
    (biased with attention_bias, o_proj too), the text mlp and the audio_mlp (gated, biased with mlp_bias), and
    input_layernorm, post_attention_layernorm, audio_input_layernorm, audio_post_attention_layernorm.

    vLLM 0.34 does not serve Higgs Audio v2 (registry.py has no HiggsAudio class): what a TP rank holds whole follows
    vLLM's rule for the same modules in llama.py (the RMSNorms; o_proj's and down_proj's biases, RowParallelLinear);
    the audio embeddings and head are split by rows as a vocabulary is."""
    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**9)
    bias, mlp_bias = f.flag("attention_bias", default=False), f.flag("mlp_bias", default=False)
    rows = f.int("num_codebooks", default=8) * f.int("codebook_size", default=1024)
    out = [_float("embed_tokens", f.int("vocab_size") * hidden, "embeddings"),
           _float("embed_audio_tokens.embed_audio_tokens", rows * hidden, "embeddings"), _float("norm", hidden),
           Module("audio_lm_head", rows * hidden, 0, "lm_head", top=True, inputs=hidden)]
    norms = ("input_layernorm", "post_attention_layernorm", "audio_input_layernorm", "audio_post_attention_layernorm")
    for i in range(len(layers)):
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim, bias)
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp", mlp_bias)
        out += _mlp(f"layers.{i}.audio_mlp", hidden, inter, "mlp", mlp_bias)
        out += [_float(f"layers.{i}.{norm}", hidden) for norm in norms]
    return out


def codegen(f: Fields, layers: list, dims) -> list[Module]:
    """CodeGenForCausalLM (transformers 5.25 modeling_codegen.py), as its family's counter counts it
    (params_decoder.decoder
    as GPT-J's: families.py "gptj", "codegen"): GPT-J's modules (configs/weight_tables/classic.py gptj) but for
    attention's one fused attn.qkv_proj (hidden -> 3 x hidden, no bias; its rows grouped in 4 blocks of query,
    value, key); transformer.wte, ln_1 a block, mlp.fc_in / fc_out (biased), transformer.ln_f, lm_head with a bias,
    untied by default.

    vLLM 0.34 does not serve CodeGen (registry.py has no CodeGen class): what a TP rank holds whole follows vLLM's
    rule for GPT-J's same modules (gpt_j.py: the LayerNorms and fc_out's bias whole, the fused qkv_proj, out_proj and
    fc_in split)."""
    from .classic import _embed, _head, _lin, _norm, _widths

    heads = dims[0]
    hidden, q, k, width = _widths(f, dims)
    t = "transformer"
    out = [_embed(f"{t}.wte", f.int("vocab_size", default=0, minimum=0), hidden, top=True),
           _norm(f"{t}.ln_f", hidden, top=True)]
    out += _head(f, "lm_head", hidden, False, bias=True)
    for i in range(len(layers)):
        b = f"{t}.h.{i}"
        out += [_norm(f"{b}.ln_1", hidden, top=True),
                _lin(f"{b}.attn.qkv_proj", hidden, q + 2 * k, "attention", top=True, kv_heads=heads,
                     kv_outputs=2 * k),
                _lin(f"{b}.attn.out_proj", q, hidden, "attention", row=True, top=True),
                _lin(f"{b}.mlp.fc_in", hidden, width, "mlp", True, top=True),
                _lin(f"{b}.mlp.fc_out", width, hidden, "mlp", True, row=True, top=True)]
    return out


def hrm_text(f: Fields, layers: list, dims) -> list[Module]:
    """HrmTextForCausalLM, as params_dense.hrm_text counts it (HrmTextConfig's defaults, num_layers_per_stack layers
    a stack), under the checkpoints' names (vLLM 0.34 hrm_text.py loads them as they are but for ".attn." ->
    ".self_attn."; transformers 5.25 conversion_mapping.py "hrm_text" splits them): model.embed_tokens,
    model.z_L_init [hidden] (the low-level state's learned start), and two stacks, model.L_module and model.H_module,
    of layers.N.attn.gqkv_proj (gate, q, k, v fused: hidden -> 4 x heads x head_dim, biased with attention_bias),
    attn.o_proj, mlp.gate_up_proj (fused) and mlp.down_proj (biased with mlp_bias); the RMSNorms have no weight;
    lm_head, untied by default.

    vLLM 0.34 (hrm_text.py HrmTextAttention, HrmTextMLP, HrmTextModel) splits gqkv_proj and gate_up_proj
    (MergedColumnParallelLinear: MHA only, no KV-head replication), o_proj and down_proj (RowParallelLinear, their
    biases whole), and holds z_L_init (an nn.Parameter) whole on every TP rank."""
    vocab = f.int("vocab_size", default=151_808)
    hidden = f.int("hidden_size", default=1536)
    inter = f.int("intermediate_size", default=4096, maximum=10**9)
    width = f.int("num_attention_heads", default=12) * f.int("head_dim", default=128)
    abias, mbias = f.flag("attention_bias", default=False), f.flag("mlp_bias", default=False)
    per_stack = f.opt_int("num_layers_per_stack") or f.int("num_hidden_layers", default=16)
    out = [_float("embed_tokens", vocab * hidden, "embeddings"), _float("z_L_init", hidden)]
    if not f.flag("tie_word_embeddings", default=False):
        out.append(Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for stack in ("L_module", "H_module"):
        for i in range(per_stack):
            b = f"{stack}.layers.{i}"
            out += [_linear(f"{b}.attn.gqkv_proj", hidden, 4 * width, "attention", abias),
                    _linear(f"{b}.attn.o_proj", width, hidden, "attention", abias, row=True),
                    _linear(f"{b}.mlp.gate_up_proj", hidden, 2 * inter, "mlp", mbias),
                    _linear(f"{b}.mlp.down_proj", inter, hidden, "mlp", mbias, row=True)]
    return out


def emu3_text_model(f: Fields, layers: list, dims) -> list[Module]:
    """Emu3's text model (emu3_text_model; transformers 5.25 modeling_emu3.py Emu3TextModel, whose attention and
    MLP are Llama's code): Llama's modules and names (weight_tables._gqa: q/k/v/o_proj biased with attention_bias,
    the gated mlp, biased with mlp_bias, two RMSNorms; untied by default), as params_generic.count_params counts them.
    Emu3-Chat-hf's checkpoint stores the text model under `text_model.model.` and the
    head at `text_model.lm_head` (conversion_mapping.py "emu3"), which weight_tables.ROOTS does not hold: a list of
    unquantized modules naming them exactly is not matched.

    vLLM 0.34 serves Emu3ForConditionalGeneration through the Transformers backend (registry.py:
    TransformersMultiModalForCausalLM). Emu3TextConfig's base_model_tp_plan names only embed_tokens; the backend's
    fusers split the layers all the same (transformers/base.py recursive_replace applies them whatever the plan:
    fusers/qkv.py fuses q/k/v_proj into a QKVParallelLinear and makes o_proj a RowParallelLinear, fusers/glu.py
    gate/up_proj into a MergedColumnParallelLinear and down_proj a RowParallelLinear), and replaces the RMSNorms
    with vLLM's, whole on every TP rank. Read from the source for Llama-shaped code, not run on Emu3."""
    return _gqa(f, layers, dims)


def granite_docling_text(f: Fields, layers: list, dims) -> list[Module]:
    """Granite Docling's text model in transformers 5.25's format (granite_docling_text; modeling_granite_docling.py
    GraniteDoclingTextModel under `model.text_model.`): Llama's modules (weight_tables._gqa: q/k/v/o_proj biased with
    attention_bias, the gated mlp, two RMSNorms; tied by default), named `text_model.layers.N...` (ROOTS add
    `model.`; MLP biases with mlp_bias). vLLM 0.34 does not serve this architecture
    (registry.py has no GraniteDocling class; ibm-granite/granite-docling-258M is an Idefics3 checkpoint): what a TP
    rank holds whole follows vLLM's rule for the same modules in llama.py (the RMSNorms; o_proj's attention_bias
    bias). Its layers are not named `layers.N` at the decoder's top, so ModelOpt KV-cache scales
    (weight_tables._kv_scale_holder) are not looked for on them."""
    from dataclasses import replace

    return [m if m.top else replace(m, name=f"text_model.{m.name}") for m in _gqa(f, layers, dims)]


def deepseek_ocr2_text(f: Fields, layers: list, dims) -> list[Module]:
    """DeepSeek-OCR-2's text model in transformers 5.25's format (deepseek_ocr2_text; modeling_deepseek_ocr2.py), as
    params_generic.count_params counts it, under the checkpoint's names (`model.layers.N...`, the routed experts one
    module
    each: mlp.experts.N.gate_proj / up_proj / down_proj, which conversion_mapping.py "deepseek_ocr2" fuses on load):
    per layer q/k/v/o_proj (MHA, no biases), two norms; where mlp_layer_types says "sparse" the router mlp.gate
    [E, hidden] (greedy top-k: no score bias), the routed experts of moe_intermediate_size and mlp.shared_experts of
    n_shared_experts x moe_intermediate_size; elsewhere a dense mlp of intermediate_size. A config without
    mlp_layer_types (which DeepseekOcr2TextConfig does not fill in, and the counter then reads as all MoE) or with
    attention_bias gets no table.

    vLLM 0.34 serves DeepSeek-OCR-2 from its original config (deepseek_vl_v2 with a language_config:
    transformers_utils/configs/deepseek_vl2.py DeepseekVLV2Config, architectures DeepseekOCR2ForCausalLM), on
    deepseek_v2.py's decoder with DeepseekAttention (MHA: qkv_proj a QKVParallelLinear, o_proj without bias) and
    DeepseekV2MoE (the router whole on every TP rank; routed and shared experts split); this table holds what a TP rank
    holds by that rule: the RMSNorms and routers whole."""
    if not f.has("mlp_layer_types"):
        raise ConfigError("mlp_layer_types: DeepseekOcr2TextConfig does not fill it in")
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: vLLM's DeepseekAttention builds no biases")
    from ..param_parts import mlp_layer_types

    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    inter = _width(f, hidden)
    experts = f.int("n_routed_experts", "num_experts", "num_local_experts", default=0, minimum=0)
    moe_inter = f.int("moe_intermediate_size", "intermediate_size")
    shared = f.int("n_shared_experts", default=0, minimum=0)
    out = _ends(f, hidden, False, 0)
    for i, kind in enumerate(mlp_layer_types(f, len(layers), lambda _: "sparse")):
        m = f"layers.{i}.mlp"
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if kind == "sparse" and experts:
            out += _experts(m, experts, hidden, moe_inter)
            out.append(_float(f"{m}.gate", hidden * experts, "router"))
            if shared:
                out += _mlp(f"{m}.shared_experts", hidden, shared * moe_inter, "shared experts")
        else:
            out += _mlp(m, hidden, inter, "mlp")
    return out


# -- old single-purpose decoders vLLM 0.34 has no class for (registry.py has none of these classes; nor GIT's text
# decoder, git(), nor Kosmos-2's, kosmos_2_text(), below; its Transformers-backend fallback: the module docstring):
# transformers 5.25's modules under the checkpoints' names, and vLLM's rule for the same module kinds in its GPT-2 /
# OPT / GPT-NeoX files (LayerNorms, RowParallelLinear biases and learned positions whole; the rest split)

def gpt_neox_japanese(f: Fields, layers: list, dims) -> list[Module]:
    """GPTNeoXJapaneseForCausalLM (transformers 5.25 modeling_gpt_neox_japanese.py), as params_dense.gpt_neox_japanese
    counts it: gpt_neox_japanese.embed_in; per layer input_layernorm and post_attention_layernorm (LayerNorms),
    attention.query_key_value (hidden -> 3 x hidden) and attention.dense (no biases), on the last layer
    (num_hidden_layers - 1) attention.dense_bias (whole, as a RowParallelLinear's bias is in vLLM's gpt_neox.py),
    mlp.dense_h_to_4h and dense_4h_to_h of int(hidden x intermediate_multiple_size) (no biases);
    gpt_neox_japanese.final_layer_norm; embed_out, tied by default."""
    from .classic import _embed, _head, _lin, _norm

    heads = dims[0]
    vocab = f.int("vocab_size", default=32000)
    hidden = f.int("hidden_size", default=2560)
    last = f.int("num_hidden_layers", default=32) - 1
    inter = int(hidden * f.number("intermediate_multiple_size", default=4))
    t = "gpt_neox_japanese"
    out = [_embed(f"{t}.embed_in", vocab, hidden, top=True), _norm(f"{t}.final_layer_norm", hidden, top=True)]
    out += _head(f, "embed_out", hidden, True, vocab_default=32000)
    for i in range(len(layers)):
        b = f"{t}.layers.{i}"
        out += [_norm(f"{b}.input_layernorm", hidden, top=True),
                _norm(f"{b}.post_attention_layernorm", hidden, top=True),
                _lin(f"{b}.attention.query_key_value", hidden, 3 * hidden, "attention", top=True, kv_heads=heads,
                     kv_outputs=2 * hidden),
                _lin(f"{b}.attention.dense", hidden, hidden, "attention", row=True, top=True),
                _lin(f"{b}.mlp.dense_h_to_4h", hidden, inter, "mlp", top=True),
                _lin(f"{b}.mlp.dense_4h_to_h", inter, hidden, "mlp", row=True, top=True)]
        if i == last:
            out.append(Module(f"{b}.attention.dense_bias", 0, hidden, "attention", top=True, whole=True))
    return out


def ctrl(f: Fields, layers: list, dims) -> list[Module]:
    """CTRLLMHeadModel (transformers 5.25 modeling_ctrl.py), as params_dense.ctrl counts it: transformer.w (the
    positional encoding is a buffer); per block multi_head_attention.Wq / Wk / Wv / dense (biased), ffn.0 (n_embd ->
    dff) and ffn.2 (dff -> n_embd), both biased, layernorm1 and layernorm2; transformer.layernorm; lm_head (its weight
    tied by default, its bias of vocab_size always)."""
    from .classic import _embed, _head, _lin, _norm

    heads = dims[0]
    vocab = f.int("vocab_size", default=246_534)
    hidden = f.int("hidden_size", "n_embd", default=1280)
    dff = f.int("dff", default=8192, maximum=10**9)
    t = "transformer"
    out = [_embed(f"{t}.w", vocab, hidden, top=True), _norm(f"{t}.layernorm", hidden, top=True)]
    out += _head(f, "lm_head", hidden, True, vocab_default=246_534, bias=True)
    for i in range(len(layers)):
        b, a = f"{t}.h.{i}", f"{t}.h.{i}.multi_head_attention"
        out += [_whole(_lin(f"{a}.Wq", hidden, hidden, "attention", True, top=True), "ctrl"),
                _whole(_lin(f"{a}.Wk", hidden, hidden, "attention", True, top=True, kv_heads=heads), "ctrl"),
                _whole(_lin(f"{a}.Wv", hidden, hidden, "attention", True, top=True, kv_heads=heads), "ctrl"),
                _whole(_lin(f"{a}.dense", hidden, hidden, "attention", True, row=True, top=True), "ctrl", True),
                _whole(_lin(f"{b}.ffn.0", hidden, dff, "mlp", True, top=True), "ctrl"),
                _whole(_lin(f"{b}.ffn.2", dff, hidden, "mlp", True, row=True, top=True), "ctrl"),
                _norm(f"{b}.layernorm1", hidden, top=True), _norm(f"{b}.layernorm2", hidden, top=True)]
    return out


def _whole(m: Module, model_type: str, breaks_tp: bool = False) -> Module:
    """m as the checkpoint's layout splits it, held whole by vLLM 0.34's Transformers backend (no tensor-parallel
    plan, no fuser for it: configs/param_vllm_load.py)."""
    from .classic import _backend_whole

    return _backend_whole(m, model_type=model_type, breaks_tp=breaks_tp)


def biogpt(f: Fields, layers: list, dims) -> list[Module]:
    """BioGptForCausalLM (transformers 5.25 modeling_biogpt.py), as its counter counts it (params_decoder.decoder:
    plain MLP,
    every projection biased, learned positions of max_position_embeddings + 2): biogpt.embed_tokens,
    biogpt.embed_positions (whole, as OPT's learned positions in vLLM), per layer self_attn.q/k/v_proj and out_proj,
    self_attn_layer_norm, fc1, fc2, final_layer_norm; biogpt.layer_norm; output_projection, tied by default."""
    from .classic import _embed, _head, _lin, _norm

    heads, kv, head_dim = dims[:3]
    hidden = f.int("hidden_size")
    width = f.int("intermediate_size", default=None, maximum=10**8) or 4 * hidden
    q, k = heads * head_dim, kv * head_dim
    t = "biogpt"
    out = [_embed(f"{t}.embed_tokens", f.int("vocab_size", default=0, minimum=0), hidden, top=True),
           _embed(f"{t}.embed_positions", f.int("max_position_embeddings") + 2, hidden, top=True, whole=True),
           _norm(f"{t}.layer_norm", hidden, top=True)]
    out += _head(f, "output_projection", hidden, True)
    for i in range(len(layers)):
        b = f"{t}.layers.{i}"
        out += [_whole(_lin(f"{b}.self_attn.q_proj", hidden, q, "attention", True, top=True), "biogpt"),
                _lin(f"{b}.self_attn.k_proj", hidden, k, "attention", True, top=True, kv_heads=kv),
                _lin(f"{b}.self_attn.v_proj", hidden, k, "attention", True, top=True, kv_heads=kv),
                _whole(_lin(f"{b}.self_attn.out_proj", q, hidden, "attention", True, row=True, top=True), "biogpt",
                       True),
                _norm(f"{b}.self_attn_layer_norm", hidden, top=True),
                _whole(_lin(f"{b}.fc1", hidden, width, "mlp", True, top=True), "biogpt"),
                _whole(_lin(f"{b}.fc2", width, hidden, "mlp", True, row=True, top=True), "biogpt"),
                _norm(f"{b}.final_layer_norm", hidden, top=True)]
    return out


def kosmos_2_text(f: Fields, layers: list, dims) -> list[Module]:
    """Kosmos-2's text model (kosmos_2_text_model), as params_dense.kosmos_2_text counts it, under the checkpoints'
    names (microsoft/kosmos-2-patch14-224: `text_model.model.layers.N...`, `text_model.lm_head`, named here from the
    top): embed_tokens, per block self_attn.q/k/v_proj and out_proj (biased), self_attn.inner_attn_ln,
    self_attn_layer_norm, ffn.fc1, ffn.ffn_layernorm, ffn.fc2 (biased), final_layer_norm; layer_norm; the head, tied
    by default. Kosmos-2.5's (kosmos_2_5_text_model, modeling_kosmos2_5.py; microsoft/kosmos-2.5) the same under the
    same names, but for inner_attn_ln, which it has not, and its segment_emb (2 rows)."""
    from .classic import _embed, _head, _lin, _norm

    heads = dims[0]
    hidden = f.int("hidden_size")
    ffn = f.int("intermediate_size", maximum=10**9)
    t = "text_model.model"
    out = [_embed(f"{t}.embed_tokens", f.int("vocab_size", minimum=0), hidden, top=True),
           _norm(f"{t}.layer_norm", hidden, top=True)]
    out += _head(f, "text_model.lm_head", hidden, True, vocab_default=None)
    kosmos_2 = f.model_type == "kosmos_2_text_model"
    if not kosmos_2:
        out.append(_embed(f"{t}.segment_emb", 2, hidden, top=True))
    for i in range(len(layers)):
        b = f"{t}.layers.{i}"
        if kosmos_2:
            out.append(_norm(f"{b}.self_attn.inner_attn_ln", hidden, top=True))
        out += [_lin(f"{b}.self_attn.q_proj", hidden, hidden, "attention", True, top=True),
                _lin(f"{b}.self_attn.k_proj", hidden, hidden, "attention", True, top=True, kv_heads=heads),
                _lin(f"{b}.self_attn.v_proj", hidden, hidden, "attention", True, top=True, kv_heads=heads),
                _lin(f"{b}.self_attn.out_proj", hidden, hidden, "attention", True, row=True, top=True),
                _norm(f"{b}.self_attn_layer_norm", hidden, top=True),
                _lin(f"{b}.ffn.fc1", hidden, ffn, "mlp", True, top=True),
                _norm(f"{b}.ffn.ffn_layernorm", ffn, top=True),
                _lin(f"{b}.ffn.fc2", ffn, hidden, "mlp", True, row=True, top=True),
                _norm(f"{b}.final_layer_norm", hidden, top=True)]
    return out


def modernbert_decoder(f: Fields, layers: list, dims) -> list[Module]:
    """ModernBertDecoderForCausalLM (transformers 5.25 modeling_modernbert_decoder.py), as
    params_dense.modernbert_decoder counts it: model.embeddings.tok_embeddings and model.embeddings.norm; per layer
    attn_norm (none on layer 0), attn.q_proj / k_proj / v_proj and attn.Wo (attention_bias), mlp_norm, mlp.Wi (hidden
    -> 2 x intermediate, the GLU's two halves) and mlp.Wo (mlp_bias); model.final_norm; the prediction head
    lm_head.dense (classifier_bias) and lm_head.norm; decoder (its weight tied to tok_embeddings by default, its bias
    with decoder_bias, default true). LayerNorms carry a bias with norm_bias (default false)."""
    from .classic import _lin, _norm

    heads = dims[0]
    vocab = f.int("vocab_size", default=50368)
    hidden = f.int("hidden_size", default=768)
    inter = f.int("intermediate_size", default=1152, maximum=10**9)
    width = (hidden // f.int("num_attention_heads", default=12)) * f.int("num_attention_heads", default=12)
    attn_bias, mlp_bias = f.flag("attention_bias", default=False), f.flag("mlp_bias", default=False)
    nb = f.flag("norm_bias", default=False)
    e = "embeddings"
    out = [Module(f"{e}.tok_embeddings", 0, vocab * hidden, "embeddings"), _norm(f"{e}.norm", hidden, nb),
           _norm("final_norm", hidden, nb),
           _lin("lm_head.dense", hidden, hidden, "lm_head", f.flag("classifier_bias", default=False), top=True),
           _norm("lm_head.norm", hidden, nb, top=True)]
    tied = f.flag("tie_word_embeddings", default=True)
    decoder_bias = vocab if f.flag("decoder_bias", default=True) else 0
    if not tied or decoder_bias:
        out.append(Module("decoder", 0 if tied else vocab * hidden, decoder_bias, "lm_head", top=True, inputs=hidden))
    for i in range(len(layers)):
        b = f"layers.{i}"
        if i:
            out.append(_norm(f"{b}.attn_norm", hidden, nb))
        out += [_lin(f"{b}.attn.q_proj", hidden, width, "attention", attn_bias),
                _lin(f"{b}.attn.k_proj", hidden, width, "attention", attn_bias, kv_heads=heads),
                _lin(f"{b}.attn.v_proj", hidden, width, "attention", attn_bias, kv_heads=heads),
                _lin(f"{b}.attn.Wo", hidden, hidden, "attention", attn_bias, row=True),
                _norm(f"{b}.mlp_norm", hidden, nb),
                _whole(_lin(f"{b}.mlp.Wi", hidden, 2 * inter, "mlp", mlp_bias), "modernbert-decoder"),
                _whole(_lin(f"{b}.mlp.Wo", inter, hidden, "mlp", mlp_bias, row=True), "modernbert-decoder")]
    return out


def git(f: Fields, layers: list, dims) -> list[Module]:
    """GitForCausalLM's text decoder (transformers 5.25 modeling_git.py), as params_dense.git counts it, under its
    names: git.embeddings.word_embeddings, position_embeddings (learned, whole as vLLM keeps learned positions) and
    LayerNorm; per layer git.encoder.layer.N.attention.self.query / key / value (biased), attention.output.dense
    (biased) and its LayerNorm, intermediate.dense, output.dense (biased) and its LayerNorm; output (the head: its
    weight untied by default, its bias always). The CLIP image encoder, visual_projection and
    img_temporal_embedding are not counted. vLLM 0.34 does not serve GIT (registry.py has no Git class): what a TP
    rank holds whole follows vLLM's rule for the same modules elsewhere (LayerNorms, learned positions and
    RowParallelLinear biases whole, the rest split)."""
    from .classic import _embed, _head, _lin, _norm

    heads = f.int("num_attention_heads", default=12)
    vocab = f.int("vocab_size", default=30522)
    hidden = f.int("hidden_size", default=768)
    inter = f.int("intermediate_size", default=3072, maximum=10**9)
    width = heads * int(hidden / heads)
    g = "git"
    out = [_embed(f"{g}.embeddings.word_embeddings", vocab, hidden, top=True),
           _embed(f"{g}.embeddings.position_embeddings", f.int("max_position_embeddings", default=1024), hidden,
                  top=True, whole=True),
           _norm(f"{g}.embeddings.LayerNorm", hidden, top=True)]
    out += _head(f, "output", hidden, False, vocab_default=30522, bias=True)
    for i in range(len(layers)):
        b = f"{g}.encoder.layer.{i}"
        out += [_lin(f"{b}.attention.self.query", hidden, width, "attention", True, top=True),
                _lin(f"{b}.attention.self.key", hidden, width, "attention", True, top=True, kv_heads=heads),
                _lin(f"{b}.attention.self.value", hidden, width, "attention", True, top=True, kv_heads=heads),
                _lin(f"{b}.attention.output.dense", hidden, hidden, "attention", True, row=True, top=True),
                _norm(f"{b}.attention.output.LayerNorm", hidden, top=True),
                _lin(f"{b}.intermediate.dense", hidden, inter, "mlp", True, top=True),
                _lin(f"{b}.output.dense", inter, hidden, "mlp", True, row=True, top=True),
                _norm(f"{b}.output.LayerNorm", hidden, top=True)]
    return out


VL_MORE = {"qwen2_vl": qwen2_vl_text, "qwen2_vl_text": qwen2_vl_text, "glm4v_text": glm4v_text,
           "glm_ocr_text": glm_ocr_text, "ernie4_5_vl_moe_text": ernie4_5_vl_moe_text,
           "minimax_m3_vl_text": minimax_m3_vl_text, "molmo2_text": molmo2_text,
           # PaddleOCR-VL's text model: ERNIE-4.5-0.3B's layout (transformers 5.25 modeling_paddleocr_vl.py
           # PaddleOCRTextModel: q/k/v/o and MLP biases with use_bias), which vLLM 0.34 paddleocr_vl.py builds as
           # Ernie4_5ForCausalLM on the text fields, loading `model.` and `lm_head.` (hf_to_vllm_mapper); tied by
           # default: configs/weight_tables/vl.py ernie4_5
           "paddleocr_vl_text": ernie4_5, "paddleocr_vl": ernie4_5,  # a flat PaddleOCR-VL config keeps paddleocr_vl
           # Granite 4.0 Vision's text model: Granite's modules (transformers 5.25 modeling_granite4_vision.py), which
           # vLLM 0.34 granite4_vision.py builds as Granite4VisionLLMForCausalLM (a GraniteForCausalLM) under
           # `model.language_model.` (its hf_to_vllm_mapper): configs/weight_tables/vl.py granite
           "granite4_vision_text": granite, "phi4_multimodal": phi4_multimodal,
           "hyperclovax": hyperclovax, "cosmos3_edge_text": cosmos3_edge_text,
           "glm_image_text": glm_image_text,
           # Cohere Compass's text model: Command R7B's parallel block (one LayerNorm weight a layer, q/k/v/o biased
           # with attention_bias, the gated mlp; tied), as params_decoder.decoder(norms=1, norm_bias=False) counts it;
           # vLLM
           # 0.34 cohere_compass.py CohereCompassDecoderLayer (commandr.py LayerNorm, whole on every rank; o_proj a
           # RowParallelLinear whose attention_bias bias is whole), under `model.language_model.`:
           # configs/weight_tables/dense.py cohere2
           "cohere_compass_text": cohere2, "muse_glimmer_text": muse_glimmer_text,
           "higgs_audio_v2": higgs_audio_v2, "codegen": codegen,
           "hrm_text": hrm_text, "gpt_neox_japanese": gpt_neox_japanese, "ctrl": ctrl, "biogpt": biogpt,
           "modernbert-decoder": modernbert_decoder, "git": git, "emu3_text_model": emu3_text_model,
           "granite_docling_text": granite_docling_text, "deepseek_ocr2_text": deepseek_ocr2_text,
           "kosmos_2_text_model": kosmos_2_text, "kosmos_2_5_text_model": kosmos_2_text}
