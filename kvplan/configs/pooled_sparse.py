"""GLM-5-Next (GLM-5.3-Flash): Kimi Delta Attention layers and DSA layers with a pooled indexer.

Read from vLLM 0.33.0's models/glm5next (the sparse attention layer, its indexer
with index_kpool pooling: the k_cache and tail_cache it registers, common/kda.py)
and the GLM-5-Next config. layer_types (or linear_attn_config.full_attn_layers)
gives each layer:
- linear_attention: Kimi Delta Attention, a fixed state (conv over q, k and v in the
  model dtype, heads x head_dim x head_dim float32), read from linear_attn_config;
- deepseek_sparse_attention: an MLA latent of kv_lora_rank + qk_rope_head_dim (NoPE:
  rope 0) per token, plus the indexer's keys pooled over index_kpool tokens: one key
  of index_head_dim per pool, stored as fp8 with an fp32 scale (132 B at 128), and a
  ring of the unfinished pool's raw keys and gate scores (kpool rows of 2 x
  index_head_dim in the model dtype, vLLM's tail_cache). A decode step scores every
  pooled key, takes the top index_topk / kpool pools (the unfinished one always
  among them) and reads their tokens' latents.
transformers keeps the indexer state per token instead (key, gate scores and a mask
channel, 257 channels in bf16) and pools on every step; kvplan sizes vLLM's cache.
"""

from __future__ import annotations

from ..core.layers import LayerSpec, RecurrentState, TokenCache, TokenPolicy
from ..core.storage import BF16
from ..errors import ConfigError
from . import kinds as K
from .fields import Fields
from .hybrid import kda_state
from .latent import INDEXER_STORAGE


def require_layer_types(f: Fields, n: int) -> list[str]:
    """GLM-5-Next's configs list layer_types; without them kvplan does not guess the schedule."""
    raise ConfigError(f"{f.source}: GLM-5-Next config without 'layer_types' (model_type {f.model_type!r})",
                      "give the checkpoint's config.json, which lists layer_types")


def layers(f: Fields, n: int, kinds: list[str]) -> list[LayerSpec]:
    """The n layers: KDA states and pooled-indexer DSA layers."""
    kpool = f.int("index_kpool", default=16, minimum=1)  # Glm5NextTextConfig's default; the checkpoints give 4
    topk = f.int("index_topk", minimum=1)
    if topk % kpool:
        raise ConfigError(f"{f.source}: index_topk {topk} is not a multiple of index_kpool {kpool} "
                          f"(model_type {f.model_type!r})", "fix the config's index_topk or index_kpool")
    if not f.flag("index_kpool_compress", default=True):
        raise ConfigError(f"{f.source}: index_kpool_compress is false: the indexer keeps per-token keys, which "
                          "kvplan has not read for GLM-5-Next", "plan a checkpoint with pooled indexer keys")
    index = f.int("index_head_dim", minimum=1)
    rope = f.int("qk_rope_head_dim", default=0, minimum=0)
    latent = TokenCache(kind="latent", heads=1, key_dim=f.int("kv_lora_rank", minimum=1) + rope, rope_dim=rope,
                        policy=TokenPolicy(read_page_tokens=kpool, read_topk_pages=topk // kpool,
                                           read_page_meta=False),
                        label=f"latent, top {topk // kpool} pools of {kpool}")
    keys = TokenCache(kind="indexer", heads=1, key_dim=index, storage=INDEXER_STORAGE,
                      policy=TokenPolicy(compress_ratio=kpool, compress_selector_keys=False),
                      label=f"pooled index keys 1/{kpool}")
    # the unfinished pool: kpool rows of its raw keys and gate scores (vLLM's tail ring, bf16 whatever the KV dtype)
    ring = RecurrentState("ring", 0, kpool * 2 * index, ssm_storage=BF16, tp_replicated=True)
    sparse = LayerSpec(caches=(latent, keys), state=ring)
    linear = LayerSpec(state=kda_state(f))
    return [sparse if kind == K.INDEXED else linear for kind in kinds]
