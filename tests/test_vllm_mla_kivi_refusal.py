"""A KV quantizer technique with no vLLM KV dtype (KIVI's int2: engines/vllm_pages.py vllm_kv_dtype_for gives "")
on an MLA latent under --engine vllm: refused in a line that names kvplan's cache, not as '--kv-cache-dtype :' with
an empty dtype (vLLM 0.34 takes auto, fp8 and fp8_ds_mla for a latent: latent_token_bytes)."""

from __future__ import annotations

from kvplan_inprocess import refused_line


def test_kivi_on_mla_latent_names_the_cache_not_an_empty_flag():
    line = refused_line("deepseek-v2-lite", "--gpu", "h100", "--context", "4k", "-t", "kivi:2", "--engine", "vllm")
    assert "--kv-cache-dtype :" not in line
    assert "int2 cache of an MLA latent" in line and "plan the latent in bf16 or fp8" in line
