"""Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2) and the V3.2 indexer cache.

MLA caches ONE tensor per token and layer: the compressed latent (kv_lora_rank)
plus the decoupled rope key (qk_rope_head_dim). num_key_value_heads in these
configs equals num_attention_heads and means nothing for the cache: never use it.
"""

from __future__ import annotations

from ..core.layers import TokenCache, TokenPolicy
from ..core.storage import Storage
from .fields import Fields

# DeepSeek-V3.2's indexer keys: fp8 with one fp32 scale per 128 channels
# (vLLM stores index_head_dim + index_head_dim // 128 * 4 bytes per token).
INDEXER_STORAGE = Storage("fp8_e4m3", 8, granularity="group", group_size=128, scale_bytes=4)


def latent_cache(f: Fields, rope: int | None = None, rank: int | None = None,
                 window: int | None = None) -> TokenCache:
    """rope / rank: this layer's rope key width and latent rank when they differ from qk_rope_head_dim and
    kv_lora_rank (rope 0 on a NoPE layer); window: a sliding-window MLA layer keeps that many tokens."""
    rank = f.int("kv_lora_rank") if rank is None else rank
    rope = f.int("qk_rope_head_dim") if rope is None else rope
    return TokenCache(kind="latent", heads=1, key_dim=rank + rope, value_dim=0, rope_dim=rope,
                      policy=TokenPolicy(window_tokens=window))


def indexer_cache(f: Fields) -> TokenCache:
    return TokenCache(kind="indexer", heads=1, key_dim=f.int("index_head_dim"), storage=INDEXER_STORAGE)
