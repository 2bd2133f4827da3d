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
    pool = simulate(load_model(name), kv_memory_bytes=10 * GIB, max_model_len=32768)
    assert pool.version == "0.33"
    assert [(g.spec.kind, len(g.layers)) for g in pool.groups] == groups
    assert pool.num_blocks == blocks
    assert pool.gpu_kv_cache_tokens == tokens
