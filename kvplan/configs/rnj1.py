"""Rnj-1 (EssentialAI) as vLLM 0.33 serves it: Rnj1ForCausalLM in vllm/model_executor/models/rnj1.py.

The checkpoint's config is transformers' Gemma3TextConfig (model_type gemma3_text); vLLM picks rnj1.py by the
architecture name, and so does kvplan (build.resolve). Its cache rule differs from Gemma 3's:
Rnj1Attention gives a window only to a layer whose layer_types entry is "chunked_attention"
(per_layer_sliding_window = sliding_window, chunk_lookback 1: the current chunk and the one before, chunks of
sliding_window / 2; vLLM caches it as a SlidingWindowSpec of sliding_window tokens). A "sliding_attention" or
"full_attention" layer gets no window: every token is cached.
"""

from __future__ import annotations

from ..errors import ConfigError
from . import kinds as K
from .fields import Fields
from .param_parts import embeddings, gated_mlp


def rnj1_kinds(f: Fields, kinds: list[str]) -> list[str]:
    """layer_types (else Gemma3TextConfig's: sliding_attention except every sliding_window_pattern-th layer)
    as vLLM's Rnj1Attention reads them: chunked_attention -> sliding over sliding_window tokens, the rest full."""
    if K.CHUNKED in kinds and f.opt_int("sliding_window") is None:
        raise ConfigError(f"{f.source}: layer_types has chunked_attention layers but sliding_window is not set: "
                          "vLLM 0.33's Rnj1Attention sizes their chunks from it (model_type "
                          f"{f.model_type!r}, architecture Rnj1ForCausalLM)", "set sliding_window")
    return [K.SLIDING if kind == K.CHUNKED else K.FULL for kind in kinds]


def rnj1_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Rnj1ForCausalLM: q/k/v/o (biased with attention_bias), per-head q_norm and k_norm (GemmaRMSNorm of
    head_dim), a GELU-gated MLP without biases, four GemmaRMSNorms a layer, a final norm; the head unless
    tie_word_embeddings (Gemma3TextConfig: True)."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    q, kv_width = heads * head_dim, kv * head_dim
    attn = hidden * (q + 2 * kv_width) + q * hidden + 2 * head_dim
    if f.flag("attention_bias"):
        attn += q + 2 * kv_width + hidden
    layer = attn + gated_mlp(hidden, f.int("intermediate_size", maximum=10**8)) + 4 * hidden
    total = embeddings(f, hidden, tied_default=True) + hidden + len(layers) * layer
    return total, total
