"""A checkpoint's multi-token-prediction (MTP) module, sized from the config where no tensor table says.

Two layouts hold the module (read in vLLM's loaders, which name every tensor they expect):

- "shared_head" (DeepSeek-V3 / V3.2, GLM-4.5-4.7, GLM-4.7-Flash; deepseek_mtp.py, glm4_moe_mtp.py,
  glm4_moe_lite_mtp.py): each MTP layer is stored as decoder layer num_hidden_layers + i, holding
  the family's decoder layer (`mtp_block`), `enorm` and `hnorm`, `eh_proj` (a 2 x hidden -> hidden
  nn.Linear, unquantized), `shared_head.norm`, and its own copies of the vocabulary embedding
  (`embed_tokens`) and output head (`shared_head.head`). DeepSeek-V3's README_WEIGHTS.md gives 11.5B
  unique parameters for the module without the embedding and head; its decoder layer alone is 11.507B.
- "fc" (Qwen3-Next, Qwen3.5 / 3.6; qwen3_next_mtp.py, qwen3_5_mtp.py): the module lives under `mtp.`:
  `mtp.fc` (2 x hidden -> hidden), `mtp.pre_fc_norm_hidden`, `mtp.pre_fc_norm_embedding`, `mtp.norm`
  and `mtp.layers.{i}` (the family's full-attention decoder layer); the embedding and head are the
  model's own (the loader takes `embed_tokens` / `lm_head` from the main tensors), no copies.

- "mimo" (MiMo-7B; vLLM 0.34.0 mimo_mtp.py MiMoMultiTokenPredictorLayer): `model.mtp_layers.{i}` holds
  `input_proj` (2 x hidden -> hidden, an nn.Linear without bias: unquantized, whole on every TP rank),
  `token_layernorm`, `hidden_layernorm`, `final_layernorm` and `mtp_block`, a Qwen2DecoderLayer like the
  target's (quantized as the target); the embedding and `lm_head` the draft builds are loaded from the
  model's own `embed_tokens` / `lm_head`, no copies in the checkpoint.
- "ernie" (ERNIE-4.5 MoE; ernie_mtp.py ErnieMultiTokenPredictorLayer): `mtp_emb_norm`, `mtp_hidden_norm`,
  `mtp_linear_proj` (an nn.Linear as MiMo's, 2 x hidden -> hidden, no bias) and `mtp_block`, a dense
  LlamaDecoderLayer, not the target's MoE layer: q/k/v/o over num_attention_heads / num_key_value_heads x
  head_dim (else hidden / heads), a gated MLP of intermediate_size, two norms; biases only where the config
  sets attention_bias / bias / qkv_bias / mlp_bias (llama.py LlamaDecoderLayer; ERNIE's use_bias is not
  read there). No final norm; no copies of the embedding or head.

- "nemotron_h" (Nemotron-H, vLLM 0.17+; 0.34.0 nemotron_h_mtp.py NemotronHMultiTokenPredictor): one step of
  one layer per character of mtp_hybrid_override_pattern (configs.hybrid.nemotron_h_mtp_pattern): '*' a
  NemotronHMTPAttentionDecoderLayer (norm, qkv_proj, o_proj without bias), 'E' a NemotronHMTPMoEDecoderLayer
  (norm and nemotron_h.py NemotronHMoE: n_routed_experts non-gated experts of up and down over
  moe_latent_size, else hidden, x moe_intermediate_size; a shared NemotronHMLP of
  moe_shared_expert_intermediate_size x n_shared_experts, up and down, no bias; the router GateLinear
  (hidden x n_routed_experts, unquantized) and its float32 e_score_correction_bias; with moe_latent_size
  fc1/fc2_latent_proj, ReplicatedLinear [+bias mlp_bias]). The first layer adds enorm, hnorm and eh_proj
  (a ColumnParallelLinear 2 x hidden -> hidden, quantized as the target), the last final_layernorm. No
  embedding or head (embed_tokens and lm_head are None; has_own_embed_tokens / has_own_lm_head False).
  The router, its bias and the latent projections sit whole on every rank.

- "mimo_v2" (MiMo-V2 / V2-Flash / V2-Omni, vLLM 0.21+; 0.34.0 mimo_v2_mtp.py MiMoV2MTPLayer, one layer
  whatever num_nextn_predict_layers says): `enorm`, `hnorm`, `eh_proj` (a ReplicatedLinear 2 x hidden ->
  hidden without quant_config: unquantized, whole), `input_layernorm`, a mimo_v2.py MiMoV2Attention over the
  SWA shape (qkv_proj of swa_num_attention_heads x swa_head_dim for q and swa_num_key_value_heads x
  (swa_head_dim + swa_v_head_dim) for k and v [+bias attention_bias], o_proj of heads x swa_v_head_dim
  without bias, one attention-sink entry a head with add_swa_attention_sink_bias), `pre_mlp_layernorm`, a
  dense gated MiMoV2MLP of intermediate_size without bias, and `final_layernorm`; the embedding and head it
  builds are the model's own, shared as MiMo's. For the SWA shapes the fused-qkv chunk padding
  (_fused_qkv_kv_chunk_rows) is 0 when every chunk's rows fill 128-row blocks; other shapes are not read.

- "step3p5" (Step-3.5, vLLM 0.33+; 0.34.0 step3p5_mtp.py Step3p5AMultiTokenPredictorLayer): decoder layer
  num_hidden_layers + k holds `enorm`, `hnorm`, `eh_proj` (an nn.Linear 2 x hidden -> hidden without
  quant_config: unquantized, whole), `shared_head.norm`, its own head `shared_head.head` (a ParallelLMHead, vocab x
  hidden, stored as shared_head.output) and `mtp_block`, a step3p5.py Step3p5DecoderLayer: qkv_proj over the layer's
  query heads (sliding layers: num_sliding_attention_heads, else attention_other_setting's, else
  num_attention_heads) and num_attention_groups K/V heads of head_dim [+bias attention_bias], o_proj, q_norm and
  k_norm of head_dim, g_proj (hidden x query heads) with use_head_wise_attn_gate, a dense Step3p5MLP of
  intermediate_size (gate_up, down, no bias) and two norms. The predictor builds one embedding (shared as MiMo's);
  whether the checkpoint stores embedding copies is not read (none counted). An MTP layer that is a MoE layer
  (mtp_mlp_layer_types / mlp_layer_types / moe_layers_enum) is not sized.

The decoder layer's parameters are the family's own count of its last layer (configs.module_counts.
last_layer_params: in every family here the last layer is a full-attention MoE or dense layer like the
MTP layer), stored at the checkpoint's bytes per parameter (FP8: 1 B; block scales not counted); the
unquantized pieces (norms, eh_proj, the embedding and head copies) at 2 B (4 in a float32 checkpoint);
`mtp.fc` at the checkpoint's width. This is an estimate and says so; a tensor table replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..configs.resolve_family import nested_text
from ..core.model import ModelSpec
from .record import Weights

# layouts whose projection is an nn.Linear built without quant_config: unquantized, whole on every TP rank
PROJ_WHOLE = frozenset({"shared_head", "mimo", "ernie", "mimo_v2", "step3p5"})
# the final-norm count of each layout's MTP layer beside the decoder layer's own norms
_NORMS = {"shared_head": 3, "fc": 3, "mimo": 3, "ernie": 2, "nemotron_h": 3, "mimo_v2": 3, "step3p5": 3}

# model_type -> (layout, MTP layers when the config names none: None = the config must name them)
LAYOUTS: dict[str, tuple[str, int | None]] = {
    "deepseek_v3": ("shared_head", None), "deepseek_v32": ("shared_head", None),
    "glm4_moe": ("shared_head", None), "glm4_moe_lite": ("shared_head", None),
    "qwen3_next": ("fc", 1),
    "mimo": ("mimo", None), "ernie4_5_moe": ("ernie", None),
    "nemotron_h": ("nemotron_h", None), "mimo_v2": ("mimo_v2", None), "mimo_v2_flash": ("mimo_v2", None),
    "qwen3_5": ("fc", 1), "qwen3_5_moe": ("fc", 1), "qwen3_5_text": ("fc", 1), "qwen3_5_moe_text": ("fc", 1),
    "step3p5": ("step3p5", None),
}


@dataclass(frozen=True)
class MtpModule:
    """The MTP module as a checkpoint stores it, in bytes (each field for all `layers` together)."""

    layout: str
    layers: int
    layer_params: int  # one decoder layer's parameters
    decoder_bytes: int  # the decoder layers at the checkpoint's width
    proj_bytes: int  # eh_proj (shared_head) or mtp.fc
    norm_bytes: int
    embed_bytes: int  # the stored embedding copies (shared_head layout; 0 for fc)
    head_bytes: int  # the stored output-head copies (shared_head layout; 0 for fc)
    copy_bytes: int  # one vocabulary x hidden matrix, unquantized (an embedding or head); 0: the module has none
    how: str
    whole_bytes: int = 0  # other tensors whole on every TP rank (Nemotron-H's router, its bias, latent projections)
    # of decoder_bytes, what vLLM holds whole on every TP rank (the layer's norms, router, MLA's q_a_proj /
    # kv_a_proj_with_mqa, the DSA indexer: configs.module_counts.last_layer_whole_params at the decoder's width); the
    # shared_head layout only, where the MTP layer is the target's decoder layer class
    decoder_whole_bytes: int = 0

    @property
    def stored_bytes(self) -> int:
        return (self.decoder_bytes + self.proj_bytes + self.norm_bytes + self.embed_bytes + self.head_bytes
                + self.whole_bytes)


def mtp_module(model: ModelSpec, raw: dict | None, layers: int | None = None) -> MtpModule | None:
    """The module `model`'s config declares, sized from the config; None where it declares none or the
    family's layout is not read here. layers: the MTP layers an engine builds, where not the config's."""
    from ..configs.module_counts import last_layer_params, last_layer_whole_params
    from ..errors import KvplanError

    layout = LAYOUTS.get(model.model_type)
    if layout is None or not isinstance(raw, dict):
        return None
    kind, default = layout
    if layers is None:
        layers = model.mtp_layers if model.mtp_layers is not None else default
    if not layers:
        return None
    whole_bytes = decoder_whole = 0
    width = model.linear_weight_bytes
    plain = 4 if model.float_dtype in ("float32", "fp32") else 2  # unquantized tensors
    decoder_params = None  # all the layers' parameters where they differ layer by layer
    if kind == "step3p5":
        decoder_params = _step3p5_layers(raw, layers)
        per_layer = decoder_params // layers if decoder_params else None
    elif kind == "ernie":
        per_layer = _llama_dense_layer(raw)
    elif kind == "mimo_v2":
        per_layer = _mimo_v2_layer(raw)
    elif kind == "nemotron_h":
        step = _nemotron_h_step(raw, model.source or model.name)
        if step is None:
            return None
        per_layer, latent, router, router_bias = step
        whole_bytes = int(latent * width) + router * plain + router_bias * 4  # e_score_correction_bias: float32
    else:
        try:
            per_layer = last_layer_params(raw, model.source or model.name)
        except KvplanError:
            return None
        if kind == "shared_head":  # deepseek_mtp.py / glm4_moe_mtp.py: the target's decoder layer class
            decoder_whole = last_layer_whole_params(raw, model.source or model.name)
    hidden = model.hidden_size
    vocab = _vocab(raw)
    if not per_layer or not hidden or not vocab:
        return None
    decoder = int((decoder_params or layers * per_layer) * width)
    copy = 0 if kind == "nemotron_h" else vocab * hidden * plain
    if kind == "step3p5":
        proj = layers * 2 * hidden * hidden * plain  # eh_proj: nn.Linear, no quant_config
        norms = layers * 3 * hidden * plain  # enorm, hnorm, shared_head.norm
        embed, head = 0, layers * copy  # shared_head.output per layer; embedding copies not read
    elif kind == "shared_head":
        proj = layers * 2 * hidden * hidden * plain  # eh_proj: nn.Linear, no quant_config
        norms = layers * 3 * hidden * plain  # enorm, hnorm, shared_head.norm
        embed = head = layers * copy
    elif kind in PROJ_WHOLE:  # mimo input_proj / ernie mtp_linear_proj: nn.Linear, no quant_config
        proj = layers * 2 * hidden * hidden * plain
        norms = layers * _NORMS[kind] * hidden * plain
        embed = head = 0
    else:  # mtp.fc once beside the layers; Nemotron-H's eh_proj (a ColumnParallelLinear, quantized), one step
        proj = int(2 * hidden * hidden * width)
        norms = 3 * hidden * plain  # pre_fc_norm_hidden, pre_fc_norm_embedding, norm; enorm, hnorm, final_layernorm
        embed = head = 0
    pieces = {"shared_head": f", eh_proj, norms, and the embedding and head copies at {plain} B",
              "fc": ", mtp.fc and norms", "mimo": f", input_proj and norms at {plain} B",
              "ernie": f" (a dense LlamaDecoderLayer), mtp_linear_proj and norms at {plain} B",
              "nemotron_h": f" (the attention and MoE layers of one step), eh_proj, norms and the router at {plain} B",
              "mimo_v2": f" (SWA attention and a dense MLP), eh_proj and norms at {plain} B",
              "step3p5": f" (full or sliding attention and a dense MLP), eh_proj, norms and a head per layer at {plain} "
                         "B (embedding copies in the checkpoint not read)"}
    of = f"{decoder_params:,} parameters in all" if decoder_params else f"{per_layer:,} parameters"
    how = (f"MTP module estimated from the config ({kind} layout): {layers} decoder layer(s) of {of} at {width:g} B"
           + pieces[kind])
    return MtpModule(kind, layers, per_layer, decoder, proj, norms, embed, head, copy, how, whole_bytes,
                     int(layers * decoder_whole * width))


def _llama_dense_layer(raw: dict) -> int | None:
    """Parameters of the dense LlamaDecoderLayer ERNIE's MTP module builds from the config (vLLM llama.py:
    LlamaAttention's q/k/v/o, LlamaMLP's gate/up/down, input_layernorm and post_attention_layernorm); None where
    a field is missing."""
    hidden, heads, inter = (_positive(raw, key) for key in ("hidden_size", "num_attention_heads", "intermediate_size"))
    if not hidden or not heads or not inter:
        return None
    kv = _positive(raw, "num_key_value_heads") or heads
    head_dim = _positive(raw, "head_dim") or hidden // heads
    attention_bias = bool(raw.get("attention_bias") or raw.get("bias"))
    qkv_bias = bool(raw["qkv_bias"]) if "qkv_bias" in raw else attention_bias
    qkv = (heads + 2 * kv) * head_dim
    attention = hidden * qkv + heads * head_dim * hidden + (qkv if qkv_bias else 0) + (hidden if attention_bias else 0)
    mlp = 3 * hidden * inter + ((2 * inter + hidden) if raw.get("mlp_bias") else 0)
    return attention + mlp + 2 * hidden


def _step3p5_layers(raw: dict, layers: int) -> int | None:
    """Parameters of Step-3.5's `layers` MTP decoder layers (the module docstring), each by its attention kind
    (configs.step3p5_mtp); None where a field is missing, the kinds are not read or a layer is a MoE layer."""
    from ..configs.step3p5_mtp import mlp_kinds, step3p5_mtp

    depths, sliding, _ = step3p5_mtp(raw)
    text = raw.get("text_config") if raw.get("model_type") == "step3p7" else raw
    if not depths or depths < layers or not isinstance(text, dict):
        return None
    hidden, inter = _positive(text, "hidden_size"), _positive(text, "intermediate_size")
    heads = _positive(text, "num_attention_heads")
    if not hidden or not inter or not heads or any(kind != "dense" for kind in mlp_kinds(text, depths)[:layers]):
        return None
    kv = _positive(text, "num_attention_groups") or _positive(text, "num_key_value_heads") or 8  # Step3p7TextConfig
    head_dim = _positive(text, "head_dim") or 128
    other = text.get("attention_other_setting")
    swa_heads = (_positive(text, "num_sliding_attention_heads")
                 or (_positive(other, "num_attention_heads") if isinstance(other, dict) else None) or heads)
    total = 0
    for depth in range(layers):
        q = swa_heads if depth in sliding else heads
        qkv = (q + 2 * kv) * head_dim
        total += (hidden * qkv + (qkv if text.get("attention_bias") else 0) + q * head_dim * hidden + 2 * head_dim
                  + (hidden * q if text.get("use_head_wise_attn_gate") else 0))  # q/k norms, g_proj
        total += 3 * hidden * inter + 2 * hidden  # gate_up, down; input and post-attention norms
    return total


def _mimo_v2_layer(raw: dict) -> int | None:
    """Parameters of MiMo-V2's MTP decoder layer as the module docstring says (vLLM 0.34.0 mimo_v2_mtp.py
    MiMoV2MTPLayer, less enorm / hnorm / eh_proj / final_layernorm); None where a field is missing or the fused
    qkv would be padded (mimo_v2.py _fused_qkv_kv_chunk_rows: a chunk's rows not whole 128-row blocks)."""
    hidden, inter = _positive(raw, "hidden_size"), _positive(raw, "intermediate_size")
    heads, kv, head_dim = (_positive(raw, key) for key in ("swa_num_attention_heads", "swa_num_key_value_heads",
                                                            "swa_head_dim"))
    if not hidden or not inter or not heads or not kv or not head_dim:
        return None
    v_dim = _positive(raw, "swa_v_head_dim") or head_dim
    chunks = _positive(raw, "num_key_value_heads")  # the loader's ckpt_tp
    if chunks and heads % chunks == 0 and kv % chunks == 0 and any(
            rows % 128 for rows in (heads // chunks * head_dim, kv // chunks * head_dim, kv // chunks * v_dim)):
        return None
    qkv = heads * head_dim + kv * (head_dim + v_dim)
    attention = hidden * qkv + (qkv if raw.get("attention_bias") else 0) + heads * v_dim * hidden
    sinks = heads if raw.get("add_swa_attention_sink_bias") else 0
    return attention + sinks + 3 * hidden * inter + 2 * hidden  # + gate/up/down, two norms


def _nemotron_h_step(raw: dict, source: str) -> tuple[int, int, int, int] | None:
    """(parameters sharded with the layers, latent-projection parameters, router parameters, router-bias
    entries) of Nemotron-H's
    MTP step as vLLM 0.34 nemotron_h_mtp.py builds it (module docstring); None where the config's pattern or a
    field is not read."""
    from ..configs.resolve_family import resolve
    from ..configs.hybrid import nemotron_h_mtp_pattern
    from ..errors import KvplanError

    try:
        _, f, _ = resolve(raw, source)
        pattern = nemotron_h_mtp_pattern(f)
        if pattern is None:
            return None
        hidden = f.int("hidden_size")
        heads = f.int("num_attention_heads")
        kv, head_dim = f.int("num_key_value_heads", default=heads), f.int("head_dim", default=hidden // heads)
        attention = hidden + hidden * (heads + 2 * kv) * head_dim + heads * head_dim * hidden  # norm, qkv, o
        moe = latent = router = experts = 0
        if "E" in pattern:
            experts = f.int("n_routed_experts")
            width = f.opt_int("moe_latent_size")
            shared = f.int("moe_shared_expert_intermediate_size", minimum=0) * f.int("n_shared_experts", default=0,
                                                                                    minimum=0)
            moe = hidden + experts * 2 * (width or hidden) * f.int("moe_intermediate_size") + 2 * hidden * shared
            router = hidden * experts
            if width:
                latent = 2 * hidden * width + ((width + hidden) if f.flag("mlp_bias") else 0)
    except KvplanError:
        return None
    count = pattern.count("E")
    return pattern.count("*") * attention + count * moe, count * latent, count * router, count * experts


def _positive(raw: dict, key: str) -> int | None:
    """raw[key] where it is a positive integer, else None."""
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _vocab(raw: dict) -> int | None:
    return _positive(raw, "vocab_size") or _positive(nested_text(raw), "vocab_size")


def with_mtp_estimate(record: Weights, model: ModelSpec, raw: dict | None) -> Weights:
    """A checkpoint total without a tensor table includes the MTP module the config declares: record the
    module's estimated bytes (capacity.weights leaves them out of the served weights) and say so."""
    if record.parts or record.source in ("given", "estimated from config") or record.mtp_estimated_bytes:
        return record
    module = mtp_module(model, raw)
    if module is None or module.stored_bytes >= record.total_bytes:
        return record
    note = (f"{module.stored_bytes / 2**30:,.2f} GiB of the total is the checkpoint's MTP module, which a serving "
            f"engine loads only for MTP speculative decoding: left out of the served weights ({module.how}; "
            "read the safetensors headers, e.g. --weights hf://REPO, for the exact split)")
    return replace(record, mtp_estimated_bytes=module.stored_bytes, notes=record.notes + (note,))
