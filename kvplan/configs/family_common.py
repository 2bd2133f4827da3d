"""What several family records share (kvplan/configs/families.py and its row modules): the layer-kind sets, the
generic rule's record, field-name maps and defaults of families whose configs name fields their own way, and the
layer counters of families whose layer count is not num_hidden_layers."""

from __future__ import annotations

from . import kinds as K
from . import params_generic
from .family import Family
from .markers import marker_length


# Sarvam's original configs (transformers' attribute_map): num_experts, num_shared_experts
SARVAM_NAMES = {"n_routed_experts": ("num_experts",), "n_shared_experts": ("num_shared_experts",)}
ATTN = frozenset({K.FULL, K.SLIDING})
ATTN_CHUNKED = frozenset({K.FULL, K.SLIDING, K.CHUNKED})
MAMBA_HYBRID = frozenset({K.FULL, K.LINEAR, K.NONE})

GENERIC = Family(
    types=("(unknown)",),
    kinds=ATTN_CHUNKED,
    params=params_generic.attention_decoder,
    # vLLM's ModelConfig.get_hf_config_sliding_window: an explicit use_sliding_window false means no window
    # (MiMo, other Qwen2 derivatives that keep sliding_window beside it)
    window_gate="use_sliding_window", window_gate_default=True,
    rules=("guessed: transformers' generic rule (layer_types, else sliding_window on every layer, else full; "
           "no window when use_sliding_window is false, as vLLM reads it)",),
)

# GEMMA3_TEXT_DEFAULTS: transformers' Gemma3TextConfig defaults, for the sparse
# text_config of multimodal checkpoints.
GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
    "sliding_window": 4096, "sliding_window_pattern": 6, "tie_word_embeddings": True,
}

GPT2_NAMES = {"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",), "hidden_size": ("n_embd",),
              "max_position_embeddings": ("n_positions",), "intermediate_size": ("n_inner",)}
MAMBA2_MIXER_DEFAULTS = {"mamba_n_heads": 128, "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 256,
                         "mamba_d_conv": 4, "mamba_expand": 2}
FULL_ONLY = frozenset({K.FULL})
CROSS_ATTENTION = ("add_cross_attention", "cross-attention to an encoder")
KOSMOS_TEXT_NAMES = {"num_hidden_layers": ("layers",), "num_attention_heads": ("attention_heads",),
                     "hidden_size": ("embed_dim",), "intermediate_size": ("ffn_dim",)}


def longcat_layers(f) -> int:
    """LongCat-Flash: every decoder layer holds two MLA sublayers, each with its own cache;
    transformers counts num_hidden_layers = 2 x num_layers."""
    if f.has("num_layers"):
        return 2 * f.int("num_layers", maximum=5_000)
    return 2 * (f.int("num_hidden_layers") // 2)


def marker_layers(*markers: str):
    """The layer count a per-layer list or pattern implies (Nemotron-H ignores num_hidden_layers)."""
    def count(f) -> int:
        for marker in markers:
            length = marker_length(f, marker) if f.has(marker) else None
            if length:
                return f.check_int(marker, length)
        return f.int("num_hidden_layers")
    return count
