"""Quantized checkpoints a vLLM release will not load, read from the checkpoint's quantization_config.

  bitsandbytes          vLLM 0.28.0 removed its bitsandbytes method (0.27.1's model_executor/layers/quantization
                        has bitsandbytes.py, 0.28.0's has none and QUANTIZATION_METHODS does not name it); from then
                        ModelConfig._verify_quantization stops with "Unknown quantization method: bitsandbytes"
  GPTQ desc_act=True    with groups (group_size != -1): "GPTQ group activation ordering (desc_act=True) is no longer
                        supported" (utils/gptq_utils.py normalize_and_validate_gptq_desc_act, read in 0.31.0-0.34.0;
                        0.29.0's auto_gptq.py still loads it with g_idx; 0.30.0 not read)
  GPTQ bits / sym        only 4 or 8 bits, symmetric: from 0.22.0 (auto_gptq.py AutoGPTQConfig.TYPE_MAP {(4, True),
                        (8, True)}, "Unsupported quantization config: bits=.., sym=.."; from_config reads sym with
                        get_from_keys, so a config without it stops too); 0.21.0's gptq.py GPTQConfig took 2, 3, 4, 8
  AWQ bits              4 only, in every release read: 0.11.0 and 0.21.0 awq.py AWQConfig ("only 4-bit weight
                        quantization is supported for AWQ"), 0.21.0 awq_marlin.py and 0.22.0-0.34.0 auto_awq.py
                        TYPE_MAP {4: uint4}; SGLang 0.5.23's AWQMarlinConfig also takes 8, from a config naming
                        bits and group_size (not AutoAWQ's w_bit / q_group_size: configs/quant_bytes.py refusal)
  FP8 store_dtype       "mxfp4" (routed experts stored as MXFP4, MiMo-V2.x): read from 0.24.0 (fp8.py
                        Fp8Config.from_config / get_quant_method -> Mxfp4MoEMethod; 0.23.0's Fp8Config has no
                        store_dtype); before, Fp8MoEMethod builds FP8 expert weights twice as wide as the
                        checkpoint's packed uint8 ones, which do not load into them

Only a note: kvplan still plans the cache, and says that this vLLM would not start with the checkpoint.
"""

from __future__ import annotations

from .vllm_release import at_least

BITSANDBYTES_REMOVED_IN = (0, 28, 0)
GPTQ_DESC_ACT_REFUSED_FROM = (0, 31, 0)
STORE_DTYPE_READ_FROM = (0, 24, 0)
GPTQ_4_8_SYM_FROM = (0, 22, 0)


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
    if (method in ("gptq", "auto_gptq", "gptq_marlin") and at_least(version, GPTQ_4_8_SYM_FROM)
            and (quant.get("bits") not in (4, 8) or quant.get("sym") is not True)):
        return (f"vLLM {version} loads GPTQ with 4 or 8 bits and sym true only (auto_gptq.py AutoGPTQConfig, from "
                f"0.22.0), and this config has bits {quant.get('bits')!r}, sym {quant.get('sym', 'absent')!r}: "
                "`vllm serve` stops with 'Unsupported quantization config'; SGLang, or vLLM 0.21, loads 2 and 3 bits")
    awq_bits = quant.get("w_bit", quant.get("bits"))
    if method in ("awq", "auto_awq", "awq_marlin") and isinstance(awq_bits, int) and awq_bits != 4:
        return (f"vLLM {version} loads AWQ with 4 bits only (auto_awq.py AutoAWQConfig.TYPE_MAP; awq.py in 0.11-0.21), "
                f"and this config has {awq_bits}: `vllm serve` stops with 'Unsupported num_bits'; SGLang loads 8 (AWQMarlinConfig)")
    if method == "fp8" and quant.get("store_dtype") == "mxfp4" and not at_least(version, STORE_DTYPE_READ_FROM):
        return (f"vLLM {version} does not read the FP8 config's store_dtype (from 0.24.0): it builds the routed "
                "experts as FP8, and the checkpoint's MXFP4 experts do not load into them; use vLLM 0.24 or later")
    return None
