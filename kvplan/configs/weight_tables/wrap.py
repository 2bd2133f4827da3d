"""Per-module parameter tables (configs/weight_tables/__init__.py) of the text models that multimodal and audio wrappers
run on a decoder kvplan already has a table for, and of a few Llama-shaped decoders: Phi-3-vision (phi3_v) and
Phi-4-multimodal (phi4mm), dots.ocr (dots_ocr), the Qwen2.5-Omni and Qwen3-Omni thinkers' text models
(qwen2_5_omni_text, qwen3_omni_moe_text), Qwen3-ASR's (qwen3_asr_text), Kimi-Audio (moonshot_kimia, kimi_audio),
TeleChat3 (telechat3), Llama 3.2 Vision's and Gemma 3n's text models (mllama_text_model, gemma3n_text) and MiMo-V2
(mimo_v2, mimo_v2_flash).

Each mirrors the counter the family uses (params_generic.count_params, but TeleChat3's remote_decoders.llama_params,
Llama
3.2 Vision's params_dense.mllama_text, Gemma 3n's params_dense_special.gemma3n and MiMo-V2's params_mla.mimo_v2_flash),
term by
term; where the decoder is the same, the table is the existing one:
- phi3_v, phi4mm: vLLM 0.34 phi3v.py builds LlamaForCausalLM and phi4mm.py a LlamaModel on the flat config, but
  both checkpoints keep Phi-3's fused modules (`model.layers.N.self_attn.qkv_proj`, `mlp.gate_up_proj`: phi4mm.py
  packed_modules_mapping maps qkv_proj and gate_up_proj to themselves), so the table is weight_tables.more.phi3.
  Phi-4-multimodal's checkpoint stores each as `qkv_proj.base_layer` beside its LoRA adapters; vLLM's mapper drops
  `base_layer.` and the adapters (phi4mm.py hf_to_vllm_mapper), and the table names the module as vLLM does.
- dots_ocr, qwen2_5_omni_text, moonshot_kimia / kimi_audio: Qwen2 decoders (dots_ocr.py, qwen2_5_omni_thinker.py,
  kimi_audio.py build Qwen2ForCausalLM): q/k/v biases, o_proj without; weight_tables._gqa.
- qwen3_asr_text: Qwen3ForCausalLM (qwen3_asr.py): q_norm / k_norm; _gqa.
- qwen3_omni_moe_text: Qwen3MoeForCausalLM (qwen3_omni_moe_thinker.py Qwen3MoeLLMForCausalLM): _gqa, whose MoE
  layers follow mlp_only_layers and decoder_sparse_step (params_generic._is_moe_layer, as transformers 5.25
  Qwen3OmniMoeThinkerTextDecoderLayer and vLLM qwen3_moe.py Qwen3MoeDecoderLayer read them).
The Omni thinkers' and Qwen3-ASR's checkpoints put the text model under `thinker.model.` and the head at
`thinker.lm_head` (their hf_to_vllm_mapper: "thinker.model." -> "language_model.model."): weight_tables.ROOTS and
TOP_ROOTS carry those prefixes.

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params): the RMSNorms (layernorm.py RMSNorm;
Qwen3's q_norm / k_norm over head_dim), the MoE router (qwen3_moe.py Qwen3MoeSparseMoeBlock.gate, a GateLinear)
and RowParallelLinear biases (TeleChat3's o_proj and down_proj with attention_bias / mlp_bias: llama.py
LlamaAttention bias_o_proj, LlamaMLP bias). Llama 3.2 Vision: below.
"""

from __future__ import annotations

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _experts, _float, _gqa, _linear, _mlp, _qkvo
from .more import phi3


def qwen3_omni_moe_text(f: Fields, layers: list, dims) -> list[Module]:
    """The Qwen3-Omni thinker's text model: Qwen3-MoE's modules (_gqa). Its sparse block has no shared expert
    (transformers 5.25 Qwen3OmniMoeThinkerTextSparseMoeBlock; vLLM qwen3_moe.py Qwen3MoeSparseMoeBlock), while
    count_params would count one for a shared_expert_intermediate_size above 0 (the real configs write 0): such a
    config gets no table."""
    if f.int("shared_expert_intermediate_size", default=0, minimum=0):
        raise ConfigError("shared_expert_intermediate_size: the Qwen3-Omni thinker builds no shared expert")
    return _gqa(f, layers, dims)


def telechat3(f: Fields, layers: list, dims) -> list[Module]:
    """TeleChat3ForCausalLM, which vLLM 0.34 registers as LlamaForCausalLM (registry.py): Llama's modules and
    names, as remote_decoders.llama_params counts them: q/k/v/o_proj with biases under attention_bias (or bias),
    gate/up/down_proj with biases under mlp_bias (o_proj's and down_proj's are RowParallelLinear biases, whole on
    every TP rank), two norms a layer; embeddings, final norm, the LM head unless tie_word_embeddings (which the
    config must state: remote_decoders._tied). llama.py reads a qkv_bias field over attention_bias, which the
    counter does not: a config with one gets no table."""
    from ..remote_decoders import _tied

    if f.has("qkv_bias"):
        raise ConfigError("qkv_bias: vLLM's Llama reads it, kvplan's count of telechat3 does not")
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**8)
    bias, mlp_bias = f.flag("attention_bias") or f.flag("bias"), f.flag("mlp_bias")
    out = _ends(f, hidden, _tied(f, None), None)
    for i in range(len(layers)):
        m = f"layers.{i}.mlp"
        out += _qkvo(f"layers.{i}.self_attn", hidden, heads, kv, head_dim, bias)
        out += _mlp(m, hidden, inter, "mlp", mlp_bias)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
    return out


def mllama_text(f: Fields, layers: list, dims) -> list[Module]:
    """Llama 3.2 Vision's text model (transformers 5.25 modeling_mllama.py MllamaTextModel, counted by
    params_dense.mllama_text): embed_tokens of vocab_size + 8 rows (the image and padding tokens), the LM head of
    vocab_size; on the layers of cross_attention_layers a MllamaCrossAttentionDecoderLayer (cross_attn.q/k/v/o_proj,
    cross_attn.q_norm and k_norm over head_dim, the two one-element tanh gates cross_attn_attn_gate and
    cross_attn_mlp_gate), on the others Llama's self_attn; on every layer the gated mlp and two norms. Checkpoints:
    `language_model.model.layers.N...` and `language_model.lm_head` (meta-llama/Llama-3.2-11B-Vision), or
    transformers 5's `model.language_model.` (weight_tables.ROOTS).

    vLLM 0.34 no longer serves it (registry.py: MllamaForConditionalGeneration removed in 0.10.2); the last vLLM
    mllama.py that did (read at vllm-project/vllm 005ad95) held whole on every TP rank the RMSNorms, the
    cross-attention q_norm / k_norm (MllamaTextRMSNorm over head_dim) and the two gates (plain Parameters of one
    element), kept here as norms; no linear module of the text model has a bias."""
    from ..params_dense import mllama_cross_layers

    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**8)
    vocab = f.int("vocab_size", minimum=0)
    out = _ends(f, hidden, False, None)
    out[0] = _float("embed_tokens", (vocab + 8) * hidden, "embeddings")
    cross = mllama_cross_layers(f, len(layers))
    for i in range(len(layers)):
        layer = f"layers.{i}"
        if i in cross:
            a = f"{layer}.cross_attn"
            out += _qkvo(a, hidden, heads, kv, head_dim)
            out += [_float(f"{a}.q_norm", head_dim), _float(f"{a}.k_norm", head_dim),
                    _float(f"{layer}.cross_attn_attn_gate", 1), _float(f"{layer}.cross_attn_mlp_gate", 1)]
        else:
            out += _qkvo(f"{layer}.self_attn", hidden, heads, kv, head_dim)
        out += _mlp(f"{layer}.mlp", hidden, inter, "mlp")
        out += [_float(f"{layer}.input_layernorm", hidden), _float(f"{layer}.post_attention_layernorm", hidden)]
    return out


def gemma3n_text(f: Fields, layers: list, dims) -> list[Module]:
    """Gemma 3n's text model (transformers 5.25 modeling_gemma3n.py Gemma3nTextModel, counted by
    params_dense_special.gemma3n),
    under the checkpoints' `model.language_model.` (google/gemma-3n-E4B): embed_tokens (the head tied unless
    tie_word_embeddings is false), final norm, embed_tokens_per_layer (vocab_size_per_layer_input x layers x
    hidden_size_per_layer_input), per_layer_model_projection, per_layer_projection_norm, and altup_projections.K /
    altup_unembed_projections.K (K < altup_num_inputs - 1, hidden x hidden each); per layer q_proj, q_norm, o_proj,
    and k_proj, v_proj, k_norm except on the last num_kv_shared_layers (Gemma3nTextAttention builds none there; its
    v_norm has no weight), the mlp of the layer's intermediate_size, four norms, laurel (linear_left,
    linear_right, post_laurel_norm), altup (correct_output_scale [hidden], correction_coefs [n, n],
    prediction_coefs [n x n, n], modality_router [n, hidden], router_norm) and the per-layer input gate,
    projection and post_per_layer_input_norm.

    What vLLM 0.34 holds whole on every TP rank (gemma3n.py): every RMSNorm; Gemma3nAltUp's correction_coefs,
    prediction_coefs and modality_router (ReplicatedLinear) and correct_output_scale (an nn.Parameter, float32 in
    vLLM: counted here at the checkpoint's dtype); Gemma3nDecoderLayer's per_layer_input_gate and
    per_layer_projection (ReplicatedLinear). laurel's linear_left / linear_right, the MLP, the attention, the
    per-layer model projection and the AltUp projections are split. params_dense_special.gemma3n reads
    num_kv_shared_layers
    with a default of 0 where Gemma3nTextConfig's is 15; the table follows the counter."""
    from ..params_dense_special import gemma3n_fields

    heads, kv, head_dim, _ = dims
    n = len(layers)
    hidden, inters, per_input, altup, rank, shared = gemma3n_fields(f, n)
    out = _ends(f, hidden, True, 0)
    out += [_float("embed_tokens_per_layer", f.int("vocab_size_per_layer_input", default=262144) * n * per_input,
                   "embeddings"),
            _linear("per_layer_model_projection", hidden, n * per_input, "per-layer inputs"),
            _float("per_layer_projection_norm", per_input)]
    for k in range(altup - 1):
        out += [_linear(f"altup_projections.{k}", hidden, hidden, "altup"),
                _linear(f"altup_unembed_projections.{k}", hidden, hidden, "altup")]
    for i in range(n):
        layer, a = f"layers.{i}", f"layers.{i}.self_attn"
        out += [_linear(f"{a}.q_proj", hidden, heads * head_dim, "attention"), _float(f"{a}.q_norm", head_dim),
                _linear(f"{a}.o_proj", heads * head_dim, hidden, "attention")]
        if i < n - shared:
            out += [_linear(f"{a}.k_proj", hidden, kv * head_dim, "attention", kv_heads=kv),
                    _linear(f"{a}.v_proj", hidden, kv * head_dim, "attention", kv_heads=kv),
                    _float(f"{a}.k_norm", head_dim)]
        inter = int(inters[i])
        out += _mlp(f"{layer}.mlp", hidden, inter, "mlp")
        out += [_float(f"{layer}.{norm}", hidden) for norm in
                ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                 "post_feedforward_layernorm")]
        out += [_linear(f"{layer}.laurel.linear_left", hidden, rank, "laurel"),
                _linear(f"{layer}.laurel.linear_right", rank, hidden, "laurel"),
                _float(f"{layer}.laurel.post_laurel_norm", hidden),
                _float(f"{layer}.altup.correct_output_scale", hidden),
                _linear(f"{layer}.altup.correction_coefs", altup, altup, "altup", whole=True),
                _linear(f"{layer}.altup.prediction_coefs", altup, altup * altup, "altup", whole=True),
                _linear(f"{layer}.altup.modality_router", hidden, altup, "altup", whole=True),
                _float(f"{layer}.altup.router_norm", hidden),
                _linear(f"{layer}.per_layer_input_gate", hidden, per_input, "per-layer inputs", whole=True),
                _linear(f"{layer}.per_layer_projection", per_input, hidden, "per-layer inputs", whole=True),
                _float(f"{layer}.post_per_layer_input_norm", hidden)]
    return out


def mimo_v2(f: Fields, layers: list, dims) -> list[Module]:
    """MiMo-V2-Flash and MiMo-V2.x (mimo_v2_flash, mimo_v2), counted by params_mla.mimo_v2_flash (transformers 5.25
    modeling_mimo_v2_flash.py) and named as the checkpoints are (vLLM 0.34 mimo_v2.py MiMoV2Model.load_weights;
    transformers renames self_attn.attention_sink_bias to sinks on load): per layer q_proj, k_proj, v_proj (biased
    with attention_bias; one fused self_attn.qkv_proj where attention_projection_layout is "fused_qkv", the layout
    MiMoV2ForCausalLM's packed_modules_mapping keeps), o_proj, on sliding layers twice the KV heads and the
    per-head attention_sink_bias, two norms; then the MoE (mlp.gate, mlp.gate.e_score_correction_bias, the routed
    experts mlp.experts.N, no shared expert) or a dense mlp. The MTP layers (model.mtp.*) are the drafter's
    (weights/mtp.py), not in this table.

    What vLLM 0.34 holds whole on every TP rank: the RMSNorms, the router (GateLinear, built in moe_router_dtype,
    float32 by default) and its e_score_correction_bias (float32); both counted here at the checkpoint's dtype. The
    sinks are split with the heads (make_attention_sink over the rank's heads). vLLM reads what the counter does
    not: moe_layer_freq (MiMoV2FlashDecoderLayer.is_moe_layer) and add_swa_attention_sink_bias (no sinks without
    it); a config whose moe_layer_freq list disagrees with the counter's dense / sparse layers, or that sets
    add_swa_attention_sink_bias false, gets no table."""
    from ..param_parts import dense_first, mlp_layer_types
    from ..markers import mimo_v2_swa_kv
    from ..params_mla import mimo_v2_fields

    n = len(layers)
    hidden, heads, kv, head_dim, v_dim, bias, layer_types = mimo_v2_fields(f, n)
    swa_kv = mimo_v2_swa_kv(f)
    kinds = mlp_layer_types(f, n, dense_first(1))
    freq = f.get("moe_layer_freq")
    if isinstance(freq, list) and [bool(x) for x in freq[:n]] != [k == "sparse" for k in kinds]:
        raise ConfigError("moe_layer_freq: vLLM's MoE layers differ from the counter's")
    if f.has("add_swa_attention_sink_bias") and not f.flag("add_swa_attention_sink_bias"):
        raise ConfigError("add_swa_attention_sink_bias false: vLLM builds no sinks, the counter counts them")
    fused = f.get("attention_projection_layout") == "fused_qkv"
    experts = f.int("num_local_experts", "n_routed_experts", default=256)
    moe_inter = f.int("moe_intermediate_size", default=2048, minimum=0)
    inter = f.int("intermediate_size", default=16384, minimum=0)
    out = _ends(f, hidden, False, 152576)
    for i, (kind, ltype) in enumerate(zip(kinds, layer_types[:n])):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        sliding = ltype == "sliding_attention"
        k = swa_kv if sliding else kv
        if fused:
            out.append(_linear(f"{a}.qkv_proj", hidden, heads * head_dim + k * (head_dim + v_dim), "attention", bias,
                               kv_heads=k, kv_outputs=k * (head_dim + v_dim)))
        else:
            out += [_linear(f"{a}.q_proj", hidden, heads * head_dim, "attention", bias),
                    _linear(f"{a}.k_proj", hidden, k * head_dim, "attention", bias, kv_heads=k),
                    _linear(f"{a}.v_proj", hidden, k * v_dim, "attention", bias, kv_heads=k)]
        out.append(_linear(f"{a}.o_proj", heads * v_dim, hidden, "attention"))
        if sliding:
            out.append(_float(f"{a}.attention_sink_bias", heads, "attention"))
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if kind == "sparse":
            out += [_float(f"{m}.gate", hidden * experts, "router"),
                    _float(f"{m}.gate.e_score_correction_bias", experts, "router")]
            out += _experts(m, experts, hidden, moe_inter)
        else:
            out += _mlp(m, hidden, inter, "mlp")
    return out


WRAP = {"phi3_v": phi3, "phi4mm": phi3, "dots_ocr": _gqa, "qwen2_5_omni_text": _gqa,
        "qwen3_omni_moe_text": qwen3_omni_moe_text, "qwen3_asr_text": _gqa, "moonshot_kimia": _gqa, "kimi_audio": _gqa,
        "telechat3": telechat3, "mllama_text_model": mllama_text, "gemma3n_text": gemma3n_text,
        "mimo_v2": mimo_v2, "mimo_v2_flash": mimo_v2}
