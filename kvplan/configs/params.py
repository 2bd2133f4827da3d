"""Exact parameter counts from the architecture, MoE experts included: the dispatcher.

Counts follow the module shapes of the transformers implementations (weights, biases and norms). They give weight
bytes for capacity planning; a safetensors index, when given, overrides them. Every counter returns (total, active
per token). A family record names its counter (configs/families.py `params=`); by_type picks the model_type's own
counter where a record holds types whose modules differ. The counters live by group:

- param_parts.py: the arithmetic the counters share (gated MLP, MLA, routed MoE block, Gated DeltaNet mixer,
  plain attention, per-layer kinds, dense/sparse layer rules); param_embeddings.py: embeddings, the LM head and
  the model types that tie it by default
- params_generic.py: the generic attention decoder (attention_decoder / count_params) and DeepSeek-V2/V3's latent
  counter (latent / count_latent_params), with their per-type rules
- params_decoder.py: decoders described by their parts (decoder(), the plain decoders, GPTBigCode)
- params_ssm.py: Mamba / Mamba-2 hybrids (hybrid), Bamba, Granite-4.0-H, Zamba, Zamba2, RWKV, RecurrentGemma
- params_linear_mixers.py: Qwen3.5, Lara mini, Qwen4-Exp, GLM-5-Next, MiniMax-01, LFM2
- params_moe_more.py: DBRX, Llama 4, Ergo, MiniCPM5-MoE, Kolibri 1.1
- params_mla_more.py: MiniCPM3, DeepSeek-V4 / V4.1, HY-V4
- params_dense_special.py: Gemma 3n, Dory, IQuest-Coder-V1-Loop, Nemotron-NAS
- the groups by_type dispatches to: params_dense.py, params_dense_more.py, params_moe.py, params_mla.py,
  params_hybrid.py (and params_classic.py, params_step.py, params_muse.py, params_kimi_k3.py,
  params_moondream.py, which family records name directly)

The names below the dispatcher are re-exported for code that imports them from here (other branches, older
callers); new code imports them from their own modules.
"""

from __future__ import annotations

from . import params_dense, params_dense_more, params_hybrid, params_mla, params_moe
from .fields import Fields
from .params_decoder import _PLAIN_DECODERS
from .params_generic import attention_decoder

# re-exported (__all__): their homes since the split
from .param_embeddings import _TIED_BY_DEFAULT, _vocab_embed, embedding_params
from .param_parts import _attention_plain, _ffn_moe, _gdn_block, _kinds_of
from .params_decoder import _bigcode_params, _switch, apertus1p5_text, bigcode, decoder
from .params_dense_special import dory, gemma3n, gemma3n_fields, iquest_loop, nemotron_nas
from .params_generic import (GLM4_MOE, GLM_DENSE, GLM_VL, _DEEPSEEK_MOE, _MLP_BIAS, _QK_NORM,
                             _QKV_BIAS_ONLY, _attention, _is_moe_layer, _moe, count_latent_params, count_params,
                             dense_mlp_bias, gpt_oss_expert_weights, latent)
from .params_linear_mixers import (_is_prime, _ngram_rows, glm5_next, glm5_next_kda_widths, lara_mini,
                                   lfm2, lfm2_dense_width, minimax, qwen3_5, qwen4_exp)
from .params_mla_more import deepseek_v4, deepseek_v4_hashed, deepseek_v41, deepseek_v41_parts, hy_v4, minicpm3
from .params_moe_more import (dbrx, ergo, kolibri1_1, kolibri_dense_layers, llama4, llama4_moe_layers,
                              minicpm5_moe)
from .params_ssm import (_hybrid_params, _mamba1_heads, _mamba2_hybrid, _mamba2_mixer, bamba, granite_hybrid,
                         hybrid, mamba1_block, mamba2_block, recurrent_gemma, rwkv, zamba, zamba2)

__all__ = [  # the names configs/params.py held before its split (session 27), for code that imports them from here
    "GLM4_MOE", "GLM_DENSE", "GLM_VL", "_DEEPSEEK_MOE", "_MLP_BIAS", "_QKV_BIAS_ONLY", "_QK_NORM", "_TIED_BY_DEFAULT",
    "_attention", "_attention_plain", "_bigcode_params", "_ffn_moe", "_gdn_block", "_hybrid_params", "_is_moe_layer",
    "_is_prime", "_kinds_of", "_mamba1_heads", "_mamba2_hybrid", "_mamba2_mixer", "_moe", "_ngram_rows", "_switch",
    "_vocab_embed", "apertus1p5_text", "attention_decoder", "bamba", "bigcode", "by_type", "count_latent_params",
    "count_params", "dbrx", "decoder", "deepseek_v4", "deepseek_v41", "deepseek_v41_parts", "deepseek_v4_hashed",
    "dense_mlp_bias", "dory", "embedding_params", "ergo", "gemma3n", "gemma3n_fields", "glm5_next",
    "glm5_next_kda_widths", "gpt_oss_expert_weights", "granite_hybrid", "hy_v4", "hybrid", "iquest_loop",
    "kolibri1_1", "kolibri_dense_layers", "lara_mini", "latent", "lfm2", "lfm2_dense_width", "llama4",
    "llama4_moe_layers", "mamba1_block", "mamba2_block", "minicpm3", "minicpm5_moe", "minimax", "nemotron_nas",
    "qwen3_5", "qwen4_exp", "recurrent_gemma", "rwkv", "zamba", "zamba2",
]


def by_type(f: Fields, layers: list, dims) -> tuple[int, int]:
    """The model_type's own counter (its modules as transformers builds them: params_moe, params_mla, params_dense,
    params_hybrid, params_dense_more, params_decoder's plain decoders) where a family record holds types whose
    modules differ, else attention_decoder."""
    counters = {**_PLAIN_DECODERS, **params_moe.COUNTERS, **params_mla.COUNTERS, **params_dense.COUNTERS,
                **params_hybrid.COUNTERS}
    counters.update(params_dense_more.COUNTERS)  # dense_more: Cohere, OLMo, OLMo 2, Seed-OSS, Phi
    return counters.get(f.model_type, attention_decoder)(f, layers, dims)
