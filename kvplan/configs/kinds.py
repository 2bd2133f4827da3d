"""Layer kinds: the vocabulary every per-layer reader speaks.

A config says what each layer is in one of several ways (transformers 5's
`layer_types`, or an older per-family marker); readers turn all of them into
these kinds, and the builder turns a kind into what the layer caches.
"""

from __future__ import annotations

FULL = "full_attention"  # K/V of every token
SLIDING = "sliding_attention"  # K/V of the newest W tokens
CHUNKED = "chunked_attention"  # K/V of the tokens of the current chunk (Llama 4's local layers)
ATTENTION = "attention"  # attention whose extent the family decides: sliding when it sets one window for all
LINEAR = "linear_attention"  # a fixed recurrent state (Mamba, Gated DeltaNet, KDA, lightning): the family says which
CONV = "conv"  # a short-convolution state (LFM2)
HYBRID = "hybrid"  # attention and a recurrent state side by side in one layer (Falcon-H1, Zamba2)
HYBRID_SLIDING = "hybrid_sliding"  # the same with windowed attention
INDEXED = "indexed_attention"  # latent attention plus indexer keys (DeepSeek-V3.2 sparse attention)
CSA = "compressed_sparse_attention"  # DeepSeek-V4: 1/m compressed entries + indexer keys + a raw window
HCA = "heavily_compressed_attention"  # DeepSeek-V4: 1/m' compressed entries + a raw window, no indexer
BLOCK_SPARSE = "block_sparse_attention"  # MiniMax-M3: K/V + index keys of every token; a step reads top-k blocks
NONE = "none"  # an MLP or MoE block: caches nothing
CROSS = "cross_attention"  # attends to image/encoder tokens: nothing grows with the text

ALL = (FULL, SLIDING, CHUNKED, ATTENTION, LINEAR, CONV, HYBRID, HYBRID_SLIDING, INDEXED, CSA, HCA, BLOCK_SPARSE, NONE,
       CROSS)
ATTENTION_KINDS = frozenset({FULL, SLIDING, CHUNKED, ATTENTION, HYBRID, HYBRID_SLIDING, INDEXED, CSA, HCA,
                             BLOCK_SPARSE})
STATE_KINDS = frozenset({LINEAR, CONV, HYBRID, HYBRID_SLIDING})

# Names configs write, in `layer_types` and the older per-layer lists, mapped to kinds.
# transformers 5 writes the first group (configuration_utils.ALLOWED_LAYER_TYPES and its
# legacy remap: "mamba" -> linear_attention, "attention" -> full_attention).
ALIASES = {
    "full_attention": FULL,
    "sliding_attention": SLIDING,
    "chunked_attention": CHUNKED,
    "linear_attention": LINEAR,
    "conv": CONV,
    "hybrid": HYBRID,
    "hybrid_sliding": HYBRID_SLIDING,
    "indexed_attention": INDEXED,
    "deepseek_sparse_attention": INDEXED,
    "qwen_sparse_attention": INDEXED,  # vLLM's name for Qwen4-Exp's QSA layers
    "compressed_sparse_attention": CSA,
    "heavily_compressed_attention": HCA,
    "block_sparse_attention": BLOCK_SPARSE,
    "minimax_m3_sparse": BLOCK_SPARSE,
    "moe": NONE,
    "mlp": NONE,
    "dense": NONE,
    "sparse": NONE,
    # older and family names
    "mamba": LINEAR,
    "mamba2": LINEAR,
    "recurrent": LINEAR,
    "rnn": LINEAR,
    "attention": ATTENTION,
    "full": FULL,
    "global": FULL,
    "global_attention": FULL,
    "sliding": SLIDING,
    "local": SLIDING,
    "local_attention": SLIDING,
    "cross_attention": CROSS,
}

# Layer types transformers knows that kvplan cannot size yet: refused with their name.
UNSUPPORTED = {
    "reference_sliding_attention": "full attention over the prompt plus a ring window over generated tokens",
    "window_attention": "non-overlapping windows (vision encoders)",
}


def label(kind: str) -> str:
    return kind.replace("_", " ")
