"""kvplan's vLLM 0.33 model against vLLM 0.33.0's own planner.

The expected figures were printed by benchmarks/vllm_oracle.py, which runs vLLM's
get_kv_cache_groups, get_kv_cache_config_from_groups and get_kv_cache_capacity (from
the 0.33.0 sdist, on CPU) on the specs these models register, with `vllm serve`'s
scheduler settings on an H100 (8,192 batched tokens, two batches in flight). They are
vLLM's numbers, not kvplan's: kvplan reproduces them from its own rules.
"""

from __future__ import annotations

import pytest

from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_rules import V0_33
from kvplan.sources import load_model

GIB = 2**30

# model -> (groups as (kind, layers), blocks, tokens) at 10 GiB and max_model_len 32,768
VLLM_0_33 = {
    "llama-3.1-8b": ([("full", 32)], 5120, 81_920),
    "gpt-oss-20b": ([("sliding", 12), ("full", 12)], 27_306, 290_413),
    "gemma-3-12b": ([("sliding", 8)] * 5 + [("full", 8)], 10_240, 44_781),
    "deepseek-v3": ([("mla", 61)], 9549, 152_784),
    # latent + indexer keys in one uniform-type group (vLLM: UniformTypeKVCacheSpecs x 122)
    "deepseek-v3.2-exp": ([("mla", 122)], 2142, 137_088),
    # block 576, the state page padded to the attention page, one prefill checkpoint page: kvplan's own inputs
    # to vLLM's planner here, so this checks the grouping and the counting
    "qwen3-next-80b-a3b": ([("mamba", 12)] * 3 + [("full", 12)], 758, 376_335),
}


@pytest.mark.parametrize("name", sorted(VLLM_0_33))
def test_groups_blocks_and_tokens_equal_vllm_0_33s_own(name):
    groups, blocks, tokens = VLLM_0_33[name]
    pool = simulate(load_model(name), kv_memory_bytes=10 * GIB, max_model_len=32768, rules=V0_33)
    assert pool.version == "0.33"
    assert [(g.spec.kind, len(g.layers)) for g in pool.groups] == groups
    assert pool.num_blocks == blocks
    assert pool.gpu_kv_cache_tokens == tokens


# The same comparison per release (benchmarks/vllm_oracle_versions.py, each release's sdist): vLLM's own
# tokens at 10 GiB and 32K where the releases differ. 0.26 counts two batches in flight under async
# scheduling (a window holds more blocks), 0.33 a third Gated DeltaNet state page (a prefill checkpoint), 0.34
# 64-token blocks (its pages are kvplan's inputs to vLLM's planner: the block comes from CacheConfig's
# DEFAULT_BLOCK_SIZE 64, which vLLM 0.34's FlashAttentionBackend and FlashMLA keep, checked on CPU by
# benchmarks/vllm_block_default.py): a window's last partial block and the tokens in flight round to 64.
VLLM_BY_RELEASE = {
    ("0.24", "gpt-oss-20b"): 348_292, ("0.26", "gpt-oss-20b"): 290_413, ("0.34", "gpt-oss-20b"): 290_109,
    ("0.24", "llama-4-scout"): 87_379, ("0.26", "llama-4-scout"): 67_214, ("0.34", "llama-4-scout"): 67_209,
    ("0.24", "qwen3-next-80b-a3b"): 411_136, ("0.26", "qwen3-next-80b-a3b"): 392_726,
    ("0.32", "qwen3-next-80b-a3b"): 392_726, ("0.33", "qwen3-next-80b-a3b"): 376_335,
    ("0.34", "qwen3-next-80b-a3b"): 376_335, ("0.34", "gemma-3-12b"): 44_691, ("0.34", "deepseek-v3"): 152_768,
}


@pytest.mark.parametrize("release, name", sorted(VLLM_BY_RELEASE))
def test_tokens_equal_each_releases_own(release, name):
    from kvplan.engines.vllm_rules import resolve

    rules, _ = resolve(release)
    pool = simulate(load_model(name), kv_memory_bytes=10 * GIB, max_model_len=32768, rules=rules)
    assert pool.gpu_kv_cache_tokens == VLLM_BY_RELEASE[(release, name)]
