"""The default KV block a vLLM release picks on Hopper, asked of vLLM's own code (no GPU).

vllm/platforms/interface.py update_block_size_for_backend asks the attention backend for
get_preferred_block_size(CacheConfig.DEFAULT_BLOCK_SIZE) unless --block-size was given. This
prints CacheConfig's default and each Hopper backend's answer, for comparison with
kvplan.engines.vllm_rules (default_block_tokens, mla_block_bf16 / _fp8 / _sparse):

    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/vsd/vllm-0.34.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_block_default.py

(the packages of benchmarks/vllm_oracle.py, plus einops and apache-tvm-ffi for 0.34's imports.)
FLASH_ATTN_MLA's module needs vLLM's CUDA flash-attention build to import; its
get_supported_kernel_block_sizes is [MultipleOf(16)] and it inherits the base
get_preferred_block_size, so it answers as FLASH_ATTN does. vLLM 0.34.0 printed:
DEFAULT_BLOCK_SIZE 64; FLASH_ATTN 64, FLASHMLA 64, FLASHMLA_SPARSE 64, TRITON_ATTN 64; 0.33.0:
DEFAULT_BLOCK_SIZE 16; FLASH_ATTN 16, FLASHMLA 64, FLASHMLA_SPARSE 64, TRITON_ATTN 16.
"""

from __future__ import annotations

import importlib

BACKENDS = (
    ("FLASH_ATTN", "vllm.v1.attention.backends.flash_attn", "FlashAttentionBackend"),
    ("FLASH_ATTN_MLA", "vllm.v1.attention.backends.mla.flashattn_mla", "FlashAttnMLABackend"),
    ("FLASHMLA", "vllm.v1.attention.backends.mla.flashmla", "FlashMLABackend"),
    ("FLASHMLA_SPARSE", "vllm.v1.attention.backends.mla.flashmla_sparse", "FlashMLASparseBackend"),
    ("TRITON_ATTN", "vllm.v1.attention.backends.triton_attn", "TritonAttentionBackend"),
)


def main() -> None:
    from vllm.config.cache import CacheConfig

    default = CacheConfig.DEFAULT_BLOCK_SIZE
    print(f"CacheConfig.DEFAULT_BLOCK_SIZE {default}; CacheConfig().block_size {CacheConfig().block_size}")
    for name, module, cls in BACKENDS:
        try:
            backend = getattr(importlib.import_module(module), cls)
        except ImportError as exc:  # a CUDA-only import on this machine
            print(f"{name}: not importable here ({exc})")
            continue
        print(f"{name}: get_preferred_block_size({default}) = {backend.get_preferred_block_size(default)}")


if __name__ == "__main__":
    main()
