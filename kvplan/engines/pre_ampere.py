"""What vLLM's and SGLang's rules for cards below SM 8.0 share (engines/vllm_sm7.py, engines/sglang_sm7.py): the
quantization method a plan starts with, and the one-line refusal both engines give when that method's
get_min_capability is above the card's (vLLM 0.34 config/vllm.py _get_quantization_config, SGLang 0.5.23
model_loader/loader.py _get_quantization_config: the same message)."""

from __future__ import annotations

from typing import Callable

from ..errors import UsageError


def sm_label(capability: tuple[int, int]) -> str:
    return f"SM {capability[0]}.{capability[1]}"


def served_quantization(model, method_of: Callable[[dict | None, str], str | None]) -> str | None:
    """The quantization method the engine starts this plan with: the online --quantization, else the checkpoint's
    (its config.json's quantization_config named by the engine's `method_of(config, model_type)`); None for a float
    checkpoint or an unread one."""
    if getattr(model, "online_quantization", ""):
        return model.online_quantization  # both engines' messages name the flag's value
    if model.weight_dtype in ("bfloat16", "float16", "float32"):
        return None
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from .vllm_load import raw_config

    raw = raw_config(model)
    return method_of(checkpoint_quantization_config(raw), str(raw.get("model_type") or "")) if raw else None


def refuse_below_min_capability(engine: str, method: str | None, table: dict[str, int],
                                capability: tuple[int, int], where: str, hint: str) -> None:
    """UsageError where `table` (method -> get_min_capability) puts `method` above the card's capability, in the
    engines' words; nothing for a method not in the table."""
    need = table.get(method or "")
    if need is not None and capability[0] * 10 + capability[1] < need:
        raise UsageError(f"{engine} refuses the {method} quantization on an {sm_label(capability)} card: 'Minimum "
                         f"capability: {need}. Current capability: {capability[0]}{capability[1]}' ({where})",
                         f"plan it on a card of SM {need // 10}.{need % 10} or newer, or {hint}")


def check_card(model, capability: tuple[int, int] | None, engine: str, release: str | None, rules=None,
               kv_label: str = "auto") -> None:
    """What `engine` ("vllm" / "sglang") refuses for this model (techniques applied) on a card of `capability`
    whatever the split: vllm_sm7 / sglang_sm7 check_pre_ampere, UsageError in one line; nothing on SM 8.0 or newer
    or an unknown card. vLLM is given the cache's own KV dtype (engines/vllm.py served_kv_cache: a KV quantizer
    technique's fp8 included); SGLang refuses no KV dtype there, so `kv_label` (the plan's) only words its notes."""
    if capability is None or capability >= (8, 0) or engine not in ("vllm", "sglang"):
        return
    if engine == "sglang":
        from .sglang_sm7 import check_pre_ampere as sglang_check

        kv = "auto" if kv_label.lower() in ("auto", "bf16", "bfloat16") else kv_label.lower()
        sglang_check(model, capability, release or "", kv, [])
        return
    from .vllm import served_kv_cache
    from .vllm_rules import LATEST
    from .vllm_sm7 import check_pre_ampere

    kv, mla = served_kv_cache(model, rules or LATEST)
    check_pre_ampere(model, capability, release or (rules or LATEST).version, kv, mla, [])
