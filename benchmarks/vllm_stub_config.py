"""The slice of a VllmConfig that vLLM's KV cache planner reads, for the oracle scripts
(benchmarks/vllm_oracle*.py): built without a model, a GPU or a HF download."""

from __future__ import annotations

from types import SimpleNamespace


def vllm_config(max_model_len: int, *, mnbt: int = 8192, in_flight: int | None = None, layout: str = "LBNHC",
                mamba_align: bool = True, hybrid_manager: bool = True):
    """`vllm serve`'s scheduler on an H100 by default: mnbt batched tokens, two batches in flight (async
    scheduling). layout: the KV cache layout the engine core would resolve (LBNHC, the default preference;
    BLHNC where a backend needs block-outermost, as DeepSeek-V4's indexer does). hybrid_manager=False: vLLM's
    --disable-hybrid-kv-cache-manager (get_kv_cache_groups sizes local layers as full attention)."""
    from vllm.config.cache import CacheConfig

    cache = CacheConfig()
    if hasattr(cache, "kv_cache_layout"):  # 0.33
        cache.kv_cache_layout = layout
    if hasattr(cache, "mamba_cache_mode"):
        cache.mamba_cache_mode = "align" if mamba_align else "none"
    return SimpleNamespace(
        scheduler_config=SimpleNamespace(disable_hybrid_kv_cache_manager=not hybrid_manager, max_num_batched_tokens=mnbt,
                                         max_model_len=max_model_len),
        cache_config=cache, attention_config=SimpleNamespace(hisparse_config=None),
        parallel_config=SimpleNamespace(decode_context_parallel_size=1, prefill_context_parallel_size=1,
                                        pipeline_parallel_size=1),
        model_config=SimpleNamespace(max_model_len=max_model_len), speculative_config=None,
        max_in_flight_tokens=2 * mnbt if in_flight is None else in_flight, num_gpu_blocks_override=None,
        device_config=SimpleNamespace(device_type="cuda"), kv_transfer_config=None, kv_events_config=None)
