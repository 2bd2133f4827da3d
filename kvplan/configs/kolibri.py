"""Kolibri 1.1 (Aleph Alpha, model_type kolibri1_1): sliding layers and NoPE "indexed" layers that share K/V.

Read from transformers 5.25's models/kolibri1_1 (Kolibri1_1Config.__post_init__ and
validate_architecture, the attention's indexer and KV sharing, cache_utils' DynamicIndexedLayer).
Every cache is plain GQA K/V in the model dtype: its indexer has no weights and no cache of its own
(it scores key head 0 of the cached keys on every step). layer_types: "sliding_attention" layers keep
sliding_window tokens; "indexed_attention" layers keep every token, unless kv_source_layers points
them at an earlier indexed layer, whose K/V they read and store nothing. An indexed layer attends to
at most index_topk + index_num_local_tokens + index_num_sink_tokens of the tokens its source holds
(2,184 by default): what a sparse kernel reads a step (transformers' reference masks a dense read).
Here "indexed_attention" is not DeepSeek's latent plus index keys.
"""

from __future__ import annotations

from ..core.layers import LayerSpec, TokenCache, TokenPolicy
from ..errors import ConfigError
from . import kinds as K
from .attention import attention_cache
from .fields import Fields

DEFAULT_SOURCES = (0, 0, 0, 3, 4, 5, 5, 5, 5, 0)  # Kolibri1_1Config: each indexed layer's source, by position


def default_kinds(f: Fields, n: int) -> list[str]:
    """Kolibri1_1Config without layer_types: every 5th layer indexed, the rest sliding."""
    return [K.INDEXED if (i + 1) % 5 == 0 else K.SLIDING for i in range(n)]


def _sources(f: Fields, n: int, kinds: list[str]) -> list[int]:
    indexed = [i for i, kind in enumerate(kinds) if kind == K.INDEXED]
    if f.has("kv_source_layers"):
        sources = f.int_list("kv_source_layers", n, minimum=0, maximum=n - 1)
    else:
        if len(indexed) > len(DEFAULT_SOURCES):
            raise ConfigError(f"{f.source}: {len(indexed)} indexed_attention layers and no kv_source_layers "
                              f"(model_type {f.model_type!r}); Kolibri1_1Config's default covers 10",
                              "give kv_source_layers")
        sources = list(range(n))
        for i, position in zip(indexed, DEFAULT_SOURCES):
            sources[i] = indexed[position]
    for i, source in enumerate(sources):
        if source > i or sources[source] != source or kinds[source] != kinds[i]:
            raise ConfigError(f"{f.source}: kv_source_layers[{i}] is {source}, not an earlier {kinds[i]} layer that "
                              f"keeps its own K/V (model_type {f.model_type!r})", "fix the config's kv_source_layers")
    return sources


def layers(f: Fields, n: int, kinds: list[str]) -> list[LayerSpec]:
    kv, head = f.int("num_key_value_heads"), f.int("head_dim")
    budget = (f.int("index_topk", default=2048) + f.int("index_num_local_tokens", default=128, minimum=0)
              + f.int("index_num_sink_tokens", default=8, minimum=0))
    sliding = LayerSpec(caches=(attention_cache(kv, head, head, f.int("sliding_window")),))
    picked = LayerSpec(caches=(TokenCache(kind="attention", heads=kv, key_dim=head, value_dim=head,
                                          policy=TokenPolicy(read_page_tokens=1, read_topk_pages=budget,
                                                             read_page_meta=False),
                                          label=f"K/V, {budget:,} tokens picked a step"),))
    out = []
    for i, source in enumerate(_sources(f, n, kinds)):
        spec = sliding if kinds[i] == K.SLIDING else picked
        out.append(spec if source == i else LayerSpec(caches=spec.caches, shares_cache_of=source))
    return out
