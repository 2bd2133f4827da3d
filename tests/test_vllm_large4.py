"""Mistral Large 4's pool under vLLM 0.34 (kvplan/engines/vllm.py), against hand arithmetic from vLLM 0.34's code.

The params.json is tests/test_families_vllm034.py's LARGE4_PARAMS: 8 layers, KV sharing "0,1,2,1,4,5,4,5" (layers
0, 1, 2, 4, 5 own a latent), index sharing "full,shared,shared,shared" (layers 0 and 4 own an indexer).
What vLLM 0.34 registers (models/mistral/nvidia/attention.py MistralMLAAttention, indexer.py MistralIndexerCache,
Model Runner V2 get_kv_cache_spec skipping KV-sharing layers): 5 MLAAttentionSpec latents (head 576, one KV head,
replicated at any TP: max_tp_shards=1) and 2 indexer MLAAttentionSpec of 128 + 128 // 128 x 4 = 132 uint8 bytes,
all at block 64 (0.34's default; FLASHMLA_SPARSE / FLASH_ATTN_MLA_SPARSE / FLASHINFER_MLA_SPARSE and
DEEPSEEK_V32_INDEXER all take it). Every spec is an MLAAttentionSpec, so get_kv_cache_groups makes one
UniformTypeKVCacheSpecs group whose block is the sum of the 7 pages (kv_cache_planning.py), and 0.34 logs
tokens = int(num_blocks / (max_len / 64) x max_len) = num_blocks x 64.

benchmarks/vllm_oracle_large4.py runs vLLM 0.34.0's own code for these specs (216 cases agree, incl. the figures
below, e.g. "40 GiB, max_model_len 131,072: 111,402 blocks, 7,129,728 tokens, 54.3955x").
"""

from __future__ import annotations

import pytest

from kvplan.configs.build import build_model
from kvplan.configs.mistral_params import to_config
from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_rules import resolve

from test_families_vllm034 import LARGE4_PARAMS

GIB = 2**30
V034 = resolve("0.34")[0]
INDEXERS_PER_BLOCK = 2 * 64 * (128 + 4)  # 16,896 B: two indexer pages of 64 tokens x 132 B


def _pool(params: dict, gpu: str, kv_cache_dtype: str | None, tp: int = 1):
    model = build_model(to_config(params, "params.json"), "large4")
    return simulate(model, kv_memory_bytes=40 * GIB, max_model_len=131072, max_num_batched_tokens=8192, gpu=gpu,
                    kv_cache_dtype=kv_cache_dtype, tp=tp, rules=V034)


@pytest.mark.parametrize("gpu, kv_cache_dtype, latent_bytes, blocks", [
    # bf16 latent: (512 + 64) x 2 = 1,152 B a token; block = 5 x 64 x 1,152 + 16,896 = 385,536 B;
    # 42,949,672,960 // 385,536 = 111,402
    ("h100-sxm", None, 1152, 111_402),
    ("b200", None, 1152, 111_402),
    # Hopper, --kv-cache-dtype fp8: FLASH_ATTN_MLA_SPARSE takes no fp8, FLASHMLA_SPARSE canonicalises it to
    # fp8_ds_mla (mla_attention.py _canonicalize_sparse_mla_kv_cache_dtype): 656 B a token (backend.py
    # get_fp8_ds_mla_row_bytes); block = 5 x 64 x 656 + 16,896 = 226,816 B; 42,949,672,960 // 226,816 = 189,359
    ("h100-sxm", "fp8", 656, 189_359),
    # Blackwell, fp8: FLASHINFER_MLA_SPARSE comes first for a quantized dtype (cuda.py _get_backend_priorities)
    # and keeps plain fp8: 576 B; block = 5 x 64 x 576 + 16,896 = 201,216 B; 42,949,672,960 // 201,216 = 213,450
    ("b200", "fp8", 576, 213_450),
])
@pytest.mark.parametrize("tp", [1, 8])
def test_vllm_034_large4_pool_by_hand_at_40_gib(gpu, kv_cache_dtype, latent_bytes, blocks, tp):
    pool = _pool(LARGE4_PARAMS, gpu, kv_cache_dtype, tp)
    assert sum(s.page_bytes for s in pool.layer_specs) == 5 * 64 * latent_bytes + INDEXERS_PER_BLOCK
    assert pool.num_blocks == blocks
    assert pool.gpu_kv_cache_tokens == blocks * 64  # int(blocks / 2,048 x 131,072)


@pytest.mark.parametrize("gpu", ["h100-sxm", "b200"])
def test_vllm_034_large4_checkpoint_fp8_latent_is_planned_as_vllm_serves_it(gpu):
    # dsa.fp8_kv_cache with --kv-cache-dtype auto: MistralLarge4ForCausalLM.verify_and_update_config sets
    # fp8_ds_mla on CUDA; FLASHINFER_MLA_SPARSE refuses it, FLASHMLA_SPARSE keeps 656 B: 189,359 blocks (above)
    params = {**LARGE4_PARAMS, "dsa": {**LARGE4_PARAMS["dsa"], "fp8_kv_cache": True}}
    pool = _pool(params, gpu, None)
    assert pool.num_blocks == 189_359
    assert any("dsa.fp8_kv_cache" in n and "fp8_ds_mla" in n for n in pool.notes)
