"""The family table: one record per model_type kvplan reads exactly.

Each record is data: field aliases and defaults (as in transformers'
configuration_<family>.py), the layer kinds the family can have, the markers it
writes, and the rule that derives kinds when a config lists none. Every row has
a golden test (tests/test_golden_models.py, tests/test_families.py) and, where
transformers 5 can build the model, a parity test against its cache
(tests/parity/).
"""

from __future__ import annotations

from . import kinds as K
from . import params
from .attention import chatglm_kv_heads, falcon_kv_heads, multi_query_kv_heads
from .family import Family
from .hybrid import gated_deltanet_state, mamba1_state, mamba2_state
from .markers import alternate_sliding_first, every_period, from_max_window_layers, pattern_default

ATTN = frozenset({K.FULL, K.SLIDING})
ATTN_CHUNKED = frozenset({K.FULL, K.SLIDING, K.CHUNKED})
MAMBA_HYBRID = frozenset({K.FULL, K.LINEAR, K.NONE})

GENERIC = Family(
    types=("(unknown)",),
    kinds=ATTN_CHUNKED,
    params=params.attention_decoder,
    rules=("guessed: transformers' generic rule (layer_types, else sliding_window on every layer, else full)",),
)

# GEMMA3_TEXT_DEFAULTS: transformers' Gemma3TextConfig defaults, for the sparse
# text_config of multimodal checkpoints.
GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
    "sliding_window": 4096, "sliding_window_pattern": 6, "tie_word_embeddings": True,
}

_ROWS: list[Family] = [
    # -- decoders with one window for all layers or none (transformers' generic rule)
    Family(("llama", "mistral", "mixtral", "phi3", "granite", "olmo2", "starcoder2", "internlm2", "exaone",
            "phi", "stablelm", "gemma"),
           kinds=ATTN, params=params.attention_decoder,
           rules=("K/V on every layer; sliding_window (when set) on every layer",)),
    Family(("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"),
           kinds=ATTN, window_gate="use_sliding_window", derive=from_max_window_layers,
           params=params.attention_decoder,
           rules=("sliding_window counts only with use_sliding_window; then layers >= max_window_layers slide",)),
    Family(("gemma2",), kinds=ATTN, derive=alternate_sliding_first, params=params.attention_decoder,
           rules=("even layers slide, odd layers are full",)),
    Family(("gpt_oss",), kinds=ATTN, derive=alternate_sliding_first, params=params.attention_decoder,
           rules=("layer_types; even layers slide (window 128), odd layers are full",)),
    Family(("gemma3_text",), kinds=ATTN, defaults=GEMMA3_TEXT_DEFAULTS, markers=("sliding_window_pattern",),
           derive=pattern_default(6), params=params.attention_decoder,
           rules=("layer i is full when (i + 1) % sliding_window_pattern == 0 (default 6), else sliding",)),
    Family(("gemma3n_text",), kinds=ATTN, derive=pattern_default(5), params=params.attention_decoder,
           rules=("full every 5th layer; the last num_kv_shared_layers reuse an earlier layer's cache",)),
    Family(("cohere2",), kinds=ATTN, markers=("sliding_window_pattern",), derive=pattern_default(4),
           params=params.attention_decoder, rules=("layer i is full when (i + 1) % sliding_window_pattern == 0",)),
    # -- multimodal wrappers: the text model is nested under text_config
    Family(("gemma3",), text="gemma3_text", rules=("text model in text_config (gemma3_text defaults fill it)",)),
    Family(("gemma3n",), text="gemma3n_text", rules=("text model in text_config",)),
    Family(("llava",), text="llama", rules=("text model in text_config",)),
    Family(("mistral3",), text="mistral", rules=("text model in text_config",)),
    Family(("qwen2_5_vl",), text="qwen2", rules=("text model in text_config, or flat",)),
    # -- other KV-head rules
    Family(("falcon",), kinds=frozenset({K.FULL}), kv_rule=falcon_kv_heads, params=params.falcon,
           aliases={"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",)},
           rules=("KV heads: num_kv_heads only with new_decoder_architecture; multi_query means 1",)),
    Family(("gpt_bigcode",), kinds=frozenset({K.FULL}), kv_rule=multi_query_kv_heads, params=params.bigcode,
           aliases={"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",), "hidden_size": ("n_embd",),
                    "max_position_embeddings": ("n_positions",), "intermediate_size": ("n_inner",)},
           rules=("multi_query (default true): one KV head",)),
    Family(("chatglm",), kinds=frozenset({K.FULL}), kv_rule=chatglm_kv_heads, params=params.attention_decoder,
           aliases={"num_hidden_layers": ("num_layers",), "head_dim": ("kv_channels",),
                    "intermediate_size": ("ffn_hidden_size",), "vocab_size": ("padded_vocab_size",),
                    "max_position_embeddings": ("seq_length",)},
           rules=("KV heads = multi_query_group_num when multi_query_attention; head width kv_channels",)),
    # -- latent attention (MLA)
    Family(("deepseek_v2", "deepseek_v3", "kimi_k2"), kinds=frozenset({K.FULL}), attention="latent",
           params=params.latent, rules=("one latent of kv_lora_rank + qk_rope_head_dim per token and layer",)),
    Family(("deepseek_v32",), kinds=frozenset({K.INDEXED}), attention="latent", params=params.latent,
           derive=lambda f, n: [K.INDEXED] * n,
           rules=("MLA latent plus indexer keys (index_head_dim, fp8 + fp32 scale per 128) on every layer",)),
    # -- hybrids and recurrent models
    Family(("qwen3_next",), kinds=MAMBA_HYBRID, state=gated_deltanet_state, params=params.hybrid,
           derive=every_period("full_attention_interval", 4, hit=K.FULL, one_based=True),
           rules=("full attention when (i + 1) % full_attention_interval == 0, else Gated DeltaNet state",)),
    Family(("jamba",), kinds=frozenset({K.FULL, K.SLIDING, K.LINEAR}), state=mamba1_state, params=params.hybrid,
           derive=every_period("attn_layer_period", 8, "attn_layer_offset", 4),
           rules=("attention when i % attn_layer_period == attn_layer_offset, else Mamba state",)),
    Family(("falcon_h1",), kinds=frozenset({K.HYBRID}), state=lambda f: mamba2_state(f, "mamba_"),
           params=params.hybrid, derive=lambda f, n: [K.HYBRID] * n,
           rules=("every layer keeps attention K/V and a Mamba-2 state side by side",)),
    Family(("nemotron_h",), kinds=MAMBA_HYBRID, state=lambda f: mamba2_state(f, "mamba_"), params=params.hybrid,
           markers=("hybrid_override_pattern", "layers_block_type"),
           rules=("hybrid_override_pattern (M Mamba-2, * attention, - MLP, E MoE) or layers_block_type",)),
    Family(("mamba",), kinds=frozenset({K.LINEAR}), state=mamba1_state, params=params.hybrid,
           aliases={"mamba_d_inner": ("intermediate_size",), "mamba_expand": ("expand",)},
           derive=lambda f, n: [K.LINEAR] * n, rules=("a Mamba state on every layer",)),
    Family(("mamba2",), kinds=frozenset({K.LINEAR}), state=lambda f: mamba2_state(f, ""), params=params.hybrid,
           derive=lambda f, n: [K.LINEAR] * n, rules=("a Mamba-2 state on every layer",)),
]


def _table(rows: list[Family]) -> dict[str, Family]:
    table: dict[str, Family] = {}
    for row in rows:
        for name in row.types:
            if name in table:
                raise ValueError(f"model_type {name!r} has two family records")
            table[name] = row
    return table


FAMILIES: dict[str, Family] = _table(_ROWS)
