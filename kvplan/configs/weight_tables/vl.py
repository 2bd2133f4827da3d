"""Per-module parameter tables (configs/weight_tables/__init__.py) of the text models of Qwen3-VL (qwen3_vl_text),
Qwen3-VL-MoE (qwen3_vl_moe_text) and Qwen2.5-VL (qwen2_5_vl_text), of ERNIE 4.5 (ernie4_5, ernie4_5_moe) and of
MiMo-7B (mimo), Granite 3 (granite) and InternLM3 (internlm3), each mirroring its counter term by term.

The three Qwen VL text models are Qwen3, Qwen3-MoE and Qwen2 decoders under a wrapper, counted by
params_generic.count_params with the same rules (Qwen3's q_norm / k_norm, Qwen2's q/k/v biases): their table is
weight_tables' own `_gqa`, not a copy. Their checkpoints name the text model `model.language_model.layers.N...`
and the head `lm_head` (vLLM 0.34 qwen3_vl.py Qwen3VLForConditionalGeneration.hf_to_vllm_mapper:
"model.language_model." -> "language_model.model.", "lm_head." -> "language_model.lm_head."); Qwen2.5-VL's
first checkpoints `model.layers.N...` (qwen2_5_vl.py hf_to_vllm_mapper takes both): weight_tables.ROOTS. The
vision towers (`model.visual.`, `visual.`) are not counted, as the counters leave them out.

Qwen3-VL-MoE's BF16 checkpoints keep each layer's routed experts as two 3-D tensors, mlp.experts.gate_up_proj
[E, hidden, 2 x moe_intermediate] and mlp.experts.down_proj [E, moe_intermediate, hidden] (vLLM 0.34
qwen3_vl_moe.py Qwen3VLMoeDecoderLayer: is_fused_checkpoint_transposed=True; transformers 5.25
conversion_mapping "qwen3_vl_moe" transposes them on load), while its quantized checkpoints (llm-compressor,
which unfuses them to calibrate: modeling/qwen3_vl_moe.py) write one module an expert,
`mlp.experts.7.gate_proj`: the table names experts one at a time, as quantization lists name them; a list that
names `mlp.experts` whole matches either layout.

What vLLM 0.34 holds whole on every TP rank (weight_tables.replicated_params): the RMSNorms (layernorm.py RMSNorm;
qwen3.py Qwen3Attention's q_norm / k_norm over head_dim), the MoE routers (qwen3_moe.py Qwen3MoeSparseMoeBlock
mlp.gate, ernie45_moe.py Ernie4_5_MoeMoE mlp.gate: GateLinear, a ReplicatedLinear, with ERNIE's
e_score_correction_bias beside it) and RowParallelLinear biases (ERNIE-MoE's down_proj with use_bias, Granite's
o_proj with attention_bias: granite.py). The Qwen, ERNIE and MiMo o_proj have no bias in vLLM (qwen2.py, qwen3.py,
ernie45_moe.py: RowParallelLinear bias=False; ernie45.py removes the Llama o_proj's).
"""

from __future__ import annotations

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _experts, _float, _gqa, _mlp, _qkvo


# -- ERNIE 4.5 dense (params_generic.count_params) ---------------------------------------------------------------------

def ernie4_5(f: Fields, layers: list, dims) -> list[Module]:
    """Ernie4_5ForCausalLM (transformers 5.25 modeling_ernie4_5.py; vLLM 0.34 ernie45.py, a LlamaForCausalLM):
    Llama's modules, named as Llama's are (`model.layers.N.self_attn.q_proj`, `mlp.gate_proj`), no biases, the LM
    head tied unless tie_word_embeddings is false (Ernie4_5Config's default True). count_params reads Llama's
    attention_bias, not ERNIE's use_bias, which puts a bias on every q/k/v/o and MLP projection in transformers
    (and which vLLM's Llama modules do not read): a config with use_bias gets no table."""
    if f.flag("use_bias"):
        raise ConfigError("use_bias: the biases it adds are not in kvplan's count of ernie4_5")
    return _gqa(f, layers, dims)


# -- ERNIE 4.5 MoE (params_moe.ernie4_5_moe) ---------------------------------------------------------------------

def ernie4_5_moe(f: Fields, layers: list, dims) -> list[Module]:
    """Ernie4_5_MoeForCausalLM, named as Baidu's checkpoints are (transformers 5.25 modeling_ernie4_5_moe.py, which
    renames mlp.moe_statics to mlp.gate.moe_statics on load; vLLM 0.34 ernie45_moe.py Ernie4_5_MoeModel._preprocess
    loads it as gate.e_score_correction_bias): per layer q/k/v/o_proj (biases with use_bias), two norms; on layers
    i with (i + 1) % moe_layer_interval == 0 between moe_layer_start_index and moe_layer_end_index the router
    mlp.gate [E, hidden], mlp.moe_statics.e_score_correction_bias [1, E], the routed experts mlp.experts.N of
    moe_intermediate_size and mlp.shared_experts of moe_intermediate_size x moe_num_shared_experts; elsewhere a
    dense mlp of intermediate_size (MLP biases with use_bias). Embeddings, final norm, the LM head (tied by default;
    its bias with use_bias). The MTP block (num_nextn_predict_layers; vLLM's mapper drops every "mtp" name) is
    the drafter's, not in this table (weights/mtp.py counts it). vLLM builds the router and its score bias in
    float32 (GateLinear params_dtype=torch.float32; transformers keeps them in float32 too:
    _keep_in_fp32_modules_strict), which this table sizes at the checkpoint's float dtype: 27 x (64 x 2,560 +
    64) parameters of ERNIE-4.5-21B-A3B, 8,850,816 B a GPU more than in BF16, which vLLM's profile adds
    (configs/param_fp32.py)."""
    from ..params_moe import ernie4_5_moe_fields

    n = len(layers)
    hidden, heads, kv, hd, bias, inter, moe_inter, experts, shared, kinds = ernie4_5_moe_fields(f, n)
    vocab = f.int("vocab_size", minimum=0)
    out = [_float("embed_tokens", vocab * hidden, "embeddings"), _float("norm", hidden)]
    tied = f.flag("tie_word_embeddings", default=True)
    if not tied or bias:
        out.append(Module("lm_head", 0 if tied else vocab * hidden, vocab if bias else 0, "lm_head", top=True,
                          inputs=hidden))

    for i in range(n):
        a, m = f"layers.{i}.self_attn", f"layers.{i}.mlp"
        out += _qkvo(a, hidden, heads, kv, hd, bias)
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if kinds[i] == "sparse":
            out += [_float(f"{m}.gate", hidden * experts, "router"),
                    _float(f"{m}.moe_statics.e_score_correction_bias", experts, "router")]
            out += _experts(m, experts, hidden, moe_inter)
            if shared > 0:
                out += _mlp(f"{m}.shared_experts", hidden, moe_inter * shared, "shared experts", bias)
        else:
            out += _mlp(m, hidden, inter, "mlp", bias)
    return out


# -- Granite 3 and InternLM3 (params_generic.count_params) -------------------------------------------------------------

def granite(f: Fields, layers: list, dims) -> list[Module]:
    """GraniteForCausalLM (transformers 5.25 modeling_granite.py; vLLM 0.34 granite.py): Llama's modules under
    Llama's names, q/k/v/o_proj biased with attention_bias (o_proj's a RowParallelLinear bias, whole on every TP
    rank), two norms; untied by default (GraniteConfig). Granite's multipliers are scalars, not parameters.
    mlp_bias biases gate/up/down_proj in transformers and vLLM (params_generic.dense_mlp_bias)."""
    return _gqa(f, layers, dims)


def internlm3(f: Fields, layers: list, dims) -> list[Module]:
    """InternLM3ForCausalLM, which transformers 5.25 and vLLM 0.34 run as Llama (modeling_auto.py internlm3 ->
    LlamaForCausalLM; llama.py LlamaAttention reads qkv_bias): Llama's modules and names, untied by default
    (InternLM3Config). InternLM3's config writes its biases as qkv_bias and bias, which count_params does not
    read: a config with either (or attention_bias, mlp_bias) set gets no table."""
    for name in ("qkv_bias", "bias", "attention_bias", "mlp_bias"):
        if f.flag(name):
            raise ConfigError(f"{name}: InternLM3's biases are not in kvplan's count of internlm3")
    return _gqa(f, layers, dims)


# -- MiMo-7B (remote_decoders.mimo_params) ---------------------------------------------------------------------

def mimo(f: Fields, layers: list, dims) -> list[Module]:
    """MiMoForCausalLM's target model (vLLM 0.34 mimo.py: Qwen2's modules, named as Qwen2's checkpoints are):
    per layer q/k/v_proj with biases, o_proj without (qwen2.py Qwen2Attention), the gated mlp, two norms;
    embeddings, final norm and the LM head (untied unless tie_word_embeddings: Qwen2Config's default). The
    checkpoints' `model.mtp_layers.N` (num_nextn_predict_layers) are the MTP drafter's weights: MiMoForCausalLM's
    hf_to_vllm_mapper drops them from the target and weights/mtp.py counts them as the drafter's, so they are not
    in this table, as they are not in the count."""
    from ..remote_decoders import _tied

    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**8)
    out = _ends(f, hidden, _tied(f, False), None)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += [*_qkvo(a, hidden, heads, kv, head_dim, True, o_bias=False),
                _float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
    return out


# a flat Qwen2.5-VL config (the text fields at the top) keeps model_type qwen2_5_vl; one with text_config is read
# as qwen2_5_vl_text (configs/families.py)
VL = {"qwen3_vl_text": _gqa, "qwen3_vl_moe_text": _gqa, "qwen2_5_vl": _gqa, "qwen2_5_vl_text": _gqa,
      "ernie4_5": ernie4_5, "ernie4_5_moe": ernie4_5_moe, "mimo": mimo, "granite": granite, "internlm3": internlm3}
