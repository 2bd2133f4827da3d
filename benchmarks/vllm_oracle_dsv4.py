"""vLLM's own KV cache planner on the specs DeepSeek-V4 registers (no GPU): groups, blocks, tokens.

The specs are those of vLLM 0.33.0's models/deepseek_v4 (attention.py, compressor.py,
v1/attention/backends/mla/sparse_swa.py) on the FlashMLA fp8_ds_mla path, in
registration order; the layout is BLHNC (the indexer backend accepts only
block-outermost layouts). tests/test_deepseek_v4.py asserts these figures
(VLLM_DSV4); kvplan/engines/vllm_dsv4.py computes them from its own rules. Older
planners take the same specs where their classes have the fields (0.29.0, 0.30.0
and 0.32.0 print the same figures as 0.33.0).

    PYTHONPATH=/tmp/vsd/vllm-0.33.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle_dsv4.py flash
    (or pro; benchmarks/vllm_oracle.py lists the packages vLLM's planner imports)
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import torch
from vllm.v1.core.kv_cache_utils import get_kv_cache_capacity
from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec, get_kv_quant_mode

try:
    import vllm.v1.core.kv_cache_planning as planning
except ModuleNotFoundError:  # before 0.33
    import vllm.v1.core.kv_cache_utils as planning

from vllm_stub_config import vllm_config  # this folder

GIB = 2**30
CASES = ((10, 131072), (40, 1048576), (7.01, 912128))


def make(cls, **fields):
    """cls(**fields), dropping the fields a release's class lacks (0.29 names tokens_per_state compress_ratio)."""
    names = {f.name for f in dataclasses.fields(cls)}
    if "tokens_per_state" in fields and "tokens_per_state" not in names:
        fields["compress_ratio"] = fields.pop("tokens_per_state")
    return cls(**{k: v for k, v in fields.items() if k in names})


def state(ratio: int, head_dim: int):
    """CompressorStateCache: coff x ratio tokens of kv and score, float32."""
    coff = 2 if ratio == 4 else 1
    return make(SlidingWindowMLASpec, block_size=4 if ratio == 4 else 8, num_kv_heads=1, max_tp_shards=1,
                head_size=2 * coff * head_dim, dtype=torch.float32, sliding_window=coff * ratio, alignment=576)


def specs(config: dict) -> dict:
    quant = get_kv_quant_mode("fp8_ds_mla")
    fp8_ds_mla = dict(num_kv_heads=1, max_tp_shards=1, head_size=config["head_dim"], dtype=torch.uint8,
                      cache_dtype_str="fp8_ds_mla", state_content_bytes=584, alignment=576,
                      model_version="deepseek_v4", kv_quant_mode=quant)
    index = config["index_head_dim"]
    out = {}
    for i, ratio in enumerate(config["compress_ratios"][:config["num_hidden_layers"]]):
        prefix = f"model.layers.{i}.attn"
        if ratio == 4:  # the indexer registers its key cache and its compressor's state first
            out[f"{prefix}.indexer.k_cache"] = make(MLAAttentionSpec, block_size=256, num_kv_heads=1, max_tp_shards=1,
                                                    head_size=index + index // 128 * 4, dtype=torch.uint8,
                                                    tokens_per_state=4, alignment=576)
            out[f"{prefix}.indexer.compressor.state_cache"] = state(4, index)
        out[f"{prefix}.swa_cache"] = make(SlidingWindowMLASpec, block_size=64, sliding_window=config["sliding_window"],
                                          block_stride_alignment=None, **fp8_ds_mla)
        if ratio > 1:
            out[prefix] = make(MLAAttentionSpec, block_size=256, tokens_per_state=ratio, **fp8_ds_mla)
            out[f"{prefix}.compressor.state_cache"] = state(ratio, config["head_dim"])
    return out


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "flash"
    config = json.loads((Path(__file__).resolve().parents[1] / "model_specs" / f"deepseek-v4-{name}.json").read_text())
    for gib, max_len in CASES:
        cfg = vllm_config(max_len, layout="BLHNC")
        groups = planning.get_kv_cache_groups(cfg, specs(config))
        kv = planning.get_kv_cache_config_from_groups(cfg, groups, int(gib * GIB))
        tokens, concurrency = get_kv_cache_capacity(cfg, kv)
        fits = "start check not compared"
        if hasattr(planning, "DefaultKVCacheConfigBuilder"):  # 0.33: the memory test, the null block held back
            builder = planning.DefaultKVCacheConfigBuilder()
            per_block = planning._pool_bytes_per_block_from_builder(builder, cfg, groups)
            needed = planning._max_memory_usage_bytes_from_groups(builder, cfg, groups)
            fits = f"fits {needed <= int(gib * GIB) - per_block}"
        layout = [(type(g.kv_cache_spec).__name__, len(g.layer_names), g.kv_cache_spec.page_size_bytes) for g in groups]
        print(f"deepseek-v4-{name} at {gib} GiB, max_model_len {max_len:,}: {kv.num_blocks:,} blocks, "
              f"{tokens:,} tokens, {concurrency:.4f}x, {fits}; groups {layout}")


if __name__ == "__main__":
    main()
