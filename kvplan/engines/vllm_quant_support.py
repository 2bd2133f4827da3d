"""Quantized checkpoints a vLLM release will not load, read from the checkpoint's quantization_config.

  bitsandbytes          vLLM 0.28.0 removed its bitsandbytes method (0.27.1's model_executor/layers/quantization
                        has bitsandbytes.py, 0.28.0's has none and QUANTIZATION_METHODS does not name it); from then
                        ModelConfig._verify_quantization stops with "Unknown quantization method: bitsandbytes"
  GPTQ desc_act=True    with groups (group_size != -1): "GPTQ group activation ordering (desc_act=True) is no longer
                        supported" (utils/gptq_utils.py normalize_and_validate_gptq_desc_act, read in 0.31.0-0.34.0;
                        0.29.0's auto_gptq.py still loads it with g_idx; 0.30.0 not read)

Only a note: kvplan still plans the cache, and says that this vLLM would not start with the checkpoint.
"""

from __future__ import annotations

from .vllm_release import at_least

BITSANDBYTES_REMOVED_IN = (0, 28, 0)
GPTQ_DESC_ACT_REFUSED_FROM = (0, 31, 0)


def unsupported_note(quant: dict | None, version: str) -> str | None:
    """Why vLLM `version` refuses a checkpoint with this quantization_config, in one sentence; None if it loads."""
    if not isinstance(quant, dict):
        return None
    method = str(quant.get("quant_method") or "").lower()
    bnb = method == "bitsandbytes" or quant.get("load_in_4bit") is True or quant.get("load_in_8bit") is True
    if bnb and at_least(version, BITSANDBYTES_REMOVED_IN):
        return (f"vLLM {version} has no bitsandbytes quantization (removed in 0.28.0): `vllm serve` stops with "
                "'Unknown quantization method: bitsandbytes'; serve a GPTQ, AWQ or compressed-tensors checkpoint, or "
                "vLLM 0.27")
    if (method == "gptq" and quant.get("desc_act") is True and quant.get("group_size", 128) != -1
            and at_least(version, GPTQ_DESC_ACT_REFUSED_FROM)):
        return (f"vLLM {version} refuses GPTQ checkpoints with desc_act=True and groups ('GPTQ group activation "
                "ordering (desc_act=True) is no longer supported', from 0.31.0): use one with desc_act=False or "
                "static activation ordering")
    return None
