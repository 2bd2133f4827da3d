"""Per-module parameter tables (configs/weight_tables/__init__.py) of more wrappers' text models: Qwen2-VL's
(qwen2_vl_text, and a flat qwen2_vl config), GLM-4.1V's and GLM-4.6V-Flash's (glm4v_text) and GLM-OCR's
(glm_ocr_text). Each mirrors its counter (params.count_params) term by term; the vision towers are not counted, as
the counters leave them out.

Checkpoint names: the text model under `model.language_model.` and the head at `lm_head` (transformers 5's
layout), or, for Qwen2-VL's first checkpoints, `model.layers.N...` (weight_tables.ROOTS holds both); vLLM 0.34
maps them onto its language model (qwen2_vl.py Qwen2VLForConditionalGeneration.hf_to_vllm_mapper,
glm4_1v.py Glm4vForConditionalGeneration.hf_to_vllm_mapper: "model.language_model." -> "language_model.model.",
"lm_head." -> "language_model.lm_head."; GlmOcrForConditionalGeneration (glm_ocr.py) subclasses the latter).
"""

from __future__ import annotations

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _gqa
from .dense import _layer, _width

# GLM-4-0414's four norms, in the order transformers 5.25 Glm4vTextDecoderLayer builds them
_GLM_NORMS = ("input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm", "post_mlp_layernorm")


def qwen2_vl_text(f: Fields, layers: list, dims) -> list[Module]:
    """Qwen2-VL's text model (transformers 5.25 modeling_qwen2_vl.py Qwen2VLTextModel): Qwen2's modules and names,
    q/k/v_proj biased, o_proj not (Qwen2VLAttention), the gated mlp, two RMSNorms a layer; untied unless
    tie_word_embeddings. vLLM 0.34 qwen2_vl.py builds Qwen2ForCausalLM on it (architectures=["Qwen2ForCausalLM"]):
    qwen2.py Qwen2Attention's qkv_proj (QKVParallelLinear, bias=True) and o_proj (RowParallelLinear, bias=False),
    so each TP rank holds only the RMSNorms whole. weight_tables._gqa, as Qwen2.5-VL's (configs/weight_tables/vl.py):
    params._QKV_BIAS_ONLY names qwen2_vl and qwen2_vl_text."""
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


VL_MORE = {"qwen2_vl": qwen2_vl_text, "qwen2_vl_text": qwen2_vl_text, "glm4v_text": glm4v_text,
           "glm_ocr_text": glm_ocr_text}
