"""Run vLLM's own KV cache planner (no GPU) on MiniMax-M3's specs and print its groups and blocks.

kvplan models vLLM from its source; this script asks vLLM itself, for the figures
tests/test_minimax_m3.py asserts (VLLM_0_33_BLOCKS). It needs an unpacked vLLM sdist
and vLLM's pure-Python imports, none of which kvplan depends on:

    # unpack vllm-0.33.0.tar.gz (the sdist on PyPI) into /tmp/vsd, then:
    pip install --target /tmp/vdeps pydantic msgspec cachetools cloudpickle psutil pyzmq prometheus_client cbor2 \\
        aiohttp openai-harmony openai pybase64 uvloop py-cpuinfo xgrammar fastapi partial-json-parser llguidance
    PYTHONPATH=/tmp/vsd/vllm-0.33.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle_minimax_m3.py

The specs are what MiniMax-M3's layers register in 0.33.0 (models/minimax_m3/nvidia/model.py and
common/indexer.py): FullAttentionSpec(block 128, KV heads per rank, 128 + 128) on each of the 60 layers, and
on the 57 sparse ones MLAAttentionSpec(block 128, one head of 128, bf16, the INDEXER role).
"""

from __future__ import annotations

from types import SimpleNamespace

import torch
import vllm.v1.core.kv_cache_planning as planning
from vllm.config.cache import CacheConfig
from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec, SparseCacheRole

GIB = 2**30


def specs(kv_dtype: torch.dtype, heads: int) -> dict:
    out = {}
    for i in range(60):
        out[f"model.layers.{i}.self_attn.attn"] = FullAttentionSpec(
            block_size=128, num_kv_heads=heads, head_size=128, head_size_v=128, dtype=kv_dtype)
        if i >= 3:
            out[f"model.layers.{i}.self_attn.indexer.k_cache"] = MLAAttentionSpec(
                block_size=128, num_kv_heads=1, head_size=128, dtype=torch.bfloat16, cache_role=SparseCacheRole.INDEXER)
    return out


def main() -> None:
    cache = CacheConfig()
    cache.kv_cache_layout = "LBNHC"  # one group: the layout does not change its bytes per block
    config = SimpleNamespace(
        scheduler_config=SimpleNamespace(disable_hybrid_kv_cache_manager=False, max_num_batched_tokens=8192),
        cache_config=cache, attention_config=SimpleNamespace(hisparse_config=None),
        parallel_config=SimpleNamespace(decode_context_parallel_size=1, prefill_context_parallel_size=1),
        model_config=SimpleNamespace(max_model_len=131072), speculative_config=None)
    for label, dtype, heads in (("auto, tp 1", torch.bfloat16, 4), ("fp8, tp 1", torch.float8_e4m3fn, 4),
                                ("auto, tp 4", torch.bfloat16, 1)):
        groups = planning.get_kv_cache_groups(config, specs(dtype, heads))
        kv = planning.get_kv_cache_config_from_groups(config, groups, 40 * GIB)
        pages = [g.kv_cache_spec.page_size_bytes for g in groups]
        print(f"{label}: {len(groups)} group(s) {[type(g.kv_cache_spec).__name__ for g in groups]}, "
              f"page {pages}, {kv.num_blocks:,} blocks at 40 GiB")


if __name__ == "__main__":
    main()
