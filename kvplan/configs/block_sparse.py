"""MiniMax-M3's block-sparse attention: K/V of every token, plus one index key per token.

Read from transformers' configuration_minimax_m3_vl.py / modeling_minimax_m3_vl.py
(MiniMaxM3VLSparseCacheLayer, MiniMaxM3VLIndexer; 5.23) and vLLM's MiniMax-M3
sparse layers (0.24-0.33). A sparse layer caches its ordinary K/V (num_key_value_heads
x head_dim each) and one index key of index_head_dim per token (a single head shared
by the index_n_heads query heads). A decode step scores every index key, max-pools
the scores over blocks of index_block_size tokens and reads the index_topk_blocks
best blocks of K/V, the current block always among them (index_local_blocks = 1):
stored bytes are those of full attention plus the index keys; read bytes are
top-k blocks of K/V plus every index key.

transformers writes layer_types ('minimax_m3_sparse'); the checkpoint writes
sparse_attention_config (sparse_attention_freq, and sparse_index_dim,
sparse_block_size, sparse_topk_blocks, sparse_local_block in place of the flat
index_* fields).
"""

from __future__ import annotations

from dataclasses import replace

from ..core.layers import TokenCache
from ..errors import ConfigError
from . import kinds as K
from .fields import Fields

# transformers' flat field -> (the checkpoint's sparse_attention_config name, MiniMaxM3VLTextConfig default)
SETTINGS = {
    "index_head_dim": ("sparse_index_dim", 128),
    "index_n_heads": ("sparse_num_index_heads", 4),
    "index_block_size": ("sparse_block_size", 128),
    "index_topk_blocks": ("sparse_topk_blocks", 16),
    "index_local_blocks": ("sparse_local_block", 1),
}


def setting(f: Fields, name: str) -> int:
    """sparse_attention_config's legacy name wins, as MiniMaxM3VLTextConfig.__post_init__ applies it last."""
    legacy, default = SETTINGS[name]
    nested = f.obj("sparse_attention_config") or {}
    if legacy in nested:
        return f.check_int(f"sparse_attention_config.{legacy}", nested[legacy], minimum=0 if name == "index_local_blocks" else 1)
    return f.int(name, default=default, minimum=0 if name == "index_local_blocks" else 1)


def minimax_m3_kinds(f: Fields, n: int) -> list[str]:
    """No layer_types: sparse_attention_config.sparse_attention_freq (non-zero = sparse), else all full."""
    nested = f.obj("sparse_attention_config") or {}
    freq = nested.get("sparse_attention_freq")
    if freq is None:
        return [K.FULL] * n
    if not isinstance(freq, list) or len(freq) != n:
        raise ConfigError(f"{f.source}: sparse_attention_config.sparse_attention_freq must list {n} values, one a "
                          f"layer (model_type {f.model_type!r})", "fix the config's sparse_attention_freq")
    return [K.BLOCK_SPARSE if value else K.FULL for value in freq]


def check_index_values(f: Fields, kinds: list[str]) -> list[str]:
    """The checkpoint disables the index-value path on every sparse layer; a config that enables it
    caches something transformers does not build, and kvplan does not size it."""
    nested = f.obj("sparse_attention_config") or {}
    disabled = nested.get("sparse_disable_index_value")
    if isinstance(disabled, list) and len(disabled) == len(kinds):
        for i, (kind, off) in enumerate(zip(kinds, disabled)):
            if kind == K.BLOCK_SPARSE and not off:
                raise ConfigError(f"{f.source}: sparse_attention_config.sparse_disable_index_value[{i}] is {off!r}: "
                                  "an index-value cache, which kvplan does not size (the published checkpoint "
                                  "disables it on every sparse layer)", "set it to 1 for the sparse layers")
    if any(k == K.BLOCK_SPARSE for k in kinds) and setting(f, "index_local_blocks") > setting(f, "index_topk_blocks"):
        raise ConfigError(f"{f.source}: index_local_blocks {setting(f, 'index_local_blocks')} exceeds "
                          f"index_topk_blocks {setting(f, 'index_topk_blocks')}", "fix the sparse attention settings")
    return kinds


def block_sparse_caches(f: Fields, attention: TokenCache) -> tuple[TokenCache, ...]:
    """The layer's K/V, read a top-k of its blocks, and its index keys (model dtype, all read)."""
    block, topk = setting(f, "index_block_size"), setting(f, "index_topk_blocks")
    policy = replace(attention.policy, read_page_tokens=block, read_topk_pages=topk, read_page_meta=False)
    index = TokenCache(kind="indexer", heads=1, key_dim=setting(f, "index_head_dim"), label="index keys")
    return replace(attention, policy=policy, label=f"block-sparse K/V (top {topk} of {block}-token blocks)"), index


def index_params(f: Fields, hidden: int) -> int:
    """One sparse layer's indexer: q_proj (hidden -> index_n_heads x index_head_dim), k_proj (hidden ->
    index_head_dim), and the q and k RMSNorms."""
    dim, heads = setting(f, "index_head_dim"), setting(f, "index_n_heads")
    return hidden * heads * dim + hidden * dim + 2 * dim
