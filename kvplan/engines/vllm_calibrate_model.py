"""The model a vLLM log names, for `kvplan calibrate` (and SGLang's): the Hub id of a Hugging Face cache path
(hub_cache_id) and the bundled alias of a logged model path or repo id, serving suffixes removed (match_bundled)."""

from __future__ import annotations

import re


# quantized or repackaged checkpoints keep the base model's cache shape (weights change, the KV cache does not)
_SUFFIXES = re.compile(r"[-_.](instruct|chat|it|hf|base|fp8|fp16|bf16|awq|gptq|int4|int8|w4a16|w8a8|dynamic|"
                       r"nvfp4|mxfp4|fp4|autoround|mtp|text|"
                       r"\d+k|2507|0528|v\d(\.\d)?)$", re.I)


def hub_cache_id(name: str) -> str:
    """The Hub id of a Hugging Face cache folder or snapshot path (".../models--deepseek-ai--DeepSeek-V4-Flash
    [/snapshots/<commit>]" -> "deepseek-ai/DeepSeek-V4-Flash", what vLLM prints for a downloaded model); other
    names as given."""
    cached = re.search(r"(?:^|/)models--([^/]+?)--([^/]+?)(?:/snapshots/[^/]+)?/?$", name)
    return f"{cached.group(1)}/{cached.group(2)}" if cached else name


def match_bundled(name: str | None) -> str | None:
    """A bundled model alias for a model path or repo id printed in a log
    ("/models/Meta-Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B-FP8"): the last
    path part with serving suffixes (-Instruct, -FP8, -AWQ, ...) removed."""
    from ..sources import bundled_index

    if not name:
        return None
    base = hub_cache_id(name).rstrip("/").split("/")[-1].lower().replace("meta-llama-", "llama-")
    index = bundled_index()
    keys = {alias: {alias, e.hf_id.split("/")[-1].lower()} for alias, e in index.items()}
    candidate = base
    for _ in range(6):
        for alias, names in keys.items():
            if candidate in names:
                return alias
        stripped = _SUFFIXES.sub("", candidate)
        if stripped == candidate:
            break
        candidate = stripped
    return None


__all__ = ["hub_cache_id", "match_bundled"]
