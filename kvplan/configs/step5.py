"""Step-5 (StepFun, model_type step5; its VL wrapper step5_vl): sliding GQA layers and DSA layers.

Read from vLLM 0.33.0's models/step5/nvidia (model.py Step5DecoderLayer and Step5Attention,
config.py get_step5_sparse_config, sparse_summary_cache.py, csa_tail_ring.py, sparse_attention.py);
transformers has no Step-5 model. layer_types gives each layer (absent: even layers sliding, odd
full, as vLLM's default); the sparse_config applies DSA to the full_attention layers. Every layer
keeps K/V of num_attention_groups heads x head_dim, a sliding layer over sliding_window tokens. A
DSA layer also keeps one region summary per closed group of region_block_size (8) tokens: a 256-B
FP8 row (proxy_dim) whatever the KV dtype, whole on every TP rank; and a ring of the open region's
raw [index_k | index_z] rows (region_block_size - 1 rows of 2 x proxy_dim bf16), per request. A
decode step scans every summary and reads the K/V of the top `topk` regions plus the open one.
"""

from __future__ import annotations

from ..core.layers import LayerSpec, RecurrentState
from ..core.storage import BF16, Storage
from ..errors import ConfigError
from . import kinds as K
from .attention import attention_cache, topk_pages_with_keys
from .fields import Fields

SUMMARY_STORAGE = Storage("fp8_e4m3", 8)  # the region summaries: FP8 bytes, no scales (sparse_summary_cache.py)
PROXY_DIM, REGION = 256, 8  # vLLM 0.33 requires both (config.py get_step5_sparse_config)


def default_kinds(f: Fields, n: int) -> list[str]:
    """vLLM's Step5 with no layer_types: even layers sliding, odd layers full."""
    return [K.SLIDING if i % 2 == 0 else K.FULL for i in range(n)]


def _sparse(f: Fields) -> tuple[int, int]:
    """(topk, region) of the sparse_config, checked as vLLM 0.33 checks it."""
    section = f.obj("sparse_config")
    if section is None:
        raise ConfigError(f"{f.source}: Step-5 config without a sparse_config (model_type {f.model_type!r}); vLLM 0.33 "
                          "serves only checkpoints that have one", "give the checkpoint's config.json")
    if section.get("enabled") is False:
        raise ConfigError(f"{f.source}: sparse_config.enabled is false: a Step-5 layout kvplan has not read",
                          "plan a checkpoint with DSA enabled")
    applied = section.get("apply_to_layer_types", ["full_attention"])
    if applied != ["full_attention"]:
        raise ConfigError(f"{f.source}: sparse_config.apply_to_layer_types is {applied!r}; vLLM 0.33 applies DSA to "
                          "['full_attention'] only", "fix the config's sparse_config")
    for name, required in (("proxy_dim", PROXY_DIM), ("region_block_size", REGION), ("sparse_indexer_num_k_heads", 1)):
        value = section.get(name, required)
        if value != required:
            raise ConfigError(f"{f.source}: sparse_config.{name} is {value!r}; vLLM 0.33's Step-5 requires {required}",
                              "fix the config's sparse_config")
    return f.check_int("sparse_config.topk", section.get("topk", 512), maximum=1024), REGION


def layers(f: Fields, n: int, kinds: list[str]) -> list[LayerSpec]:
    if f.get("attention_other_setting"):
        raise ConfigError(f"{f.source}: attention_other_setting gives one layer type other heads and widths, which "
                          "kvplan has not read for Step-5", "plan a config without it")
    topk, region = _sparse(f)
    kv, head = f.int("num_attention_groups"), f.int("head_dim")
    sliding = LayerSpec(caches=(attention_cache(kv, head, head, f.int("sliding_window")),))
    main, summaries = topk_pages_with_keys(kv, head, region, topk, PROXY_DIM, SUMMARY_STORAGE, "region",
                                           f"CSA region summaries 1/{region}")
    ring = RecurrentState("ring", 0, (region - 1) * 2 * PROXY_DIM, ssm_storage=BF16, tp_replicated=True)
    dsa = LayerSpec(caches=(main, summaries), state=ring)
    return [sliding if kind == K.SLIDING else dsa for kind in kinds]
