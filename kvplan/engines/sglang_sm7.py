"""SGLang on cards below SM 8.0 (Turing T4 at 7.5, Volta V100 at 7.0), read in the sglang 0.5.23 wheel
(python/sglang/srt/...) and the sglang-kernel 0.4.10 wheel it pins. Nothing at argument time checks the card: the
refusals come at ModelConfig and at the model load.

  dtype        configs/model_config.py _get_and_verify_dtype (--dtype auto) keeps the config's dtype, float32 going
               to float16 (bfloat16 for a "gemma" model_type): no capability check and no fallback, so a bfloat16
               checkpoint is served in bfloat16 on a T4 (unlike vLLM's float16) and no model is refused float16.
               2 bytes an element either way: weights and pages unchanged. Whether its kernels run bfloat16 below
               SM 8.0 was not read: a note (--dtype float16 serves it in the same bytes).
  attention    arg_groups/model_override_base.py get_default_attn_backend: below Hopper / Blackwell an MHA model
               takes flashinfer (get_platform().has_flashinfer: flashinfer_python[cu13]==0.7.2 is a dependency in
               the wheel's METADATA) unless it has attention sinks (then triton), an MLA model triton;
               arg_groups/overrides.py _page_size_default: page_size 1 on CUDA. The pool is sized as on any card.
               Whether FlashInfer 0.7.2 runs on SM 7.x was not read.
  fp8 KV       mem_cache/kv_cache_dtype.py configure_kv_cache_dtype and arg_groups/kv_cache_hook.py check the card
               only for nvfp4 / mxfp8 caches: an fp8_e4m3 / fp8_e5m2 cache is taken on a T4 (whether FlashInfer's or
               Triton's kernels run it below SM 8.9 was not read): a note, not a refusal.
  kernels      the wheel pins CUDA 13 packages (METADATA: cuda-python>=13.0, flashinfer_python[cu13]) and
               sglang-kernel==0.4.10, whose wheel ships sgl_kernel/sm90 and sgl_kernel/sm100 common_ops and loads
               the sm100 one on every card but SM 9.0 (load_utils.py _load_architecture_specific_ops); the SMs those
               libraries are built for are not in either wheel's metadata: not read (a note).

  quantization model_loader/loader.py _get_quantization_config, at the load: a method whose get_min_capability is
               above the card's stops the start ("The quantization method X is not supported for the current GPU.
               Minimum capability: N. Current capability: M"), then a model dtype outside the method's
               get_supported_act_dtypes stops it ("X is not supported for quantization method Y"). The minimum of
               each CUDA method is QUANT_MIN_CAPABILITY (layers/quantization/__init__.py QUANTIZATION_METHODS),
               for the method named as below SM 8.0 (configs/quant_online.py sglang_method_below_sm80) or the online
               --quantization (fp8: Fp8Config, 80). Below SM 8.0 Marlin runs nothing (marlin_utils.py
               query_marlin_supported_quant_types), so AWQ stays "awq" (AWQConfig: 75, float16 activations only)
               and GPTQ stays "gptq", which the CUDA build does not register (only NPU / CPU / XPU add it):
               _verify_quantization's 'Unknown quantization method: gptq', before the load. The schemes inside
               compressed-tensors and Quark check their own kernels (not read): only the config's 70 is applied.

Other releases were not read for these cards: their plans say so in a note.
"""

from __future__ import annotations

from ..errors import UsageError
from .pre_ampere import refuse_below_min_capability, served_quantization, sm_label

READ_IN = "0.5.23"

# get_min_capability of the QuantizationConfig SGLang 0.5.23 builds for each CUDA method name (layers/quantization/
# __init__.py BASE_QUANTIZATION_METHODS plus "mxfp4" on CUDA); modelslim and mxfp_w4a8 (NPU configs) return 0
_AT_60 = ("gguf", "auto-round")  # gguf.py GGUFConfig, auto_round.py AutoRoundConfig
# bitsandbytes.py, compressed_tensors.py CompressedTensorsConfig, moe_wna16.py, quark/quark.py QuarkConfig (also
# quark_mxfp4), quark_int4fp8_moe.py QuarkInt4Fp8Config
_AT_70 = ("bitsandbytes", "compressed-tensors", "moe_wna16", "quark", "quark_mxfp4", "quark_int4fp8_moe")
# awq/awq.py AWQConfig ("The AWQ kernel only supports Turing or newer GPUs"), w8a8_int8.py W8A8Int8Config (also
# auto-round-int8), humming.py HummingConfig
_AT_75 = ("awq", "w8a8_int8", "auto-round-int8", "humming")
# fp8.py Fp8Config (not mxfp8), blockwise_int8.py BlockInt8Config, modelopt_quant.py ModelOptFp4Config and
# ModelOptMixedPrecisionConfig (its 80), awq/awq.py AWQMarlinConfig, gptq/gptq.py GPTQMarlinConfig, mxfp4.py Mxfp4Config
_AT_80 = ("fp8", "blockwise_int8", "modelopt_fp4", "modelopt_mixed", "awq_marlin", "gptq_marlin", "mxfp4")
# modelopt_quant.py ModelOptFp8Config (also "modelopt"), w8a8_fp8.py W8A8Fp8Config
_AT_89 = ("modelopt", "modelopt_fp8", "w8a8_fp8")
# w4afp8.py W4AFp8Config, petit.py PetitNvFp4Config, minimax_m3_nvfp4.py MiniMaxM3Nvfp4Config
_AT_90 = ("w4afp8", "petit_nvfp4", "minimax_m3_nvfp4")
# nvfp4_online.py NvFp4OnlineConfig; fp8.py Fp8Config with use_mxfp8 ("mxfp8"): 100, or 94 where the MXFP8 block
# convert is required (mxfp8_block_convert_required, not read): 100 is shown
_AT_100 = ("nvfp4_online", "mxfp8")
QUANT_MIN_CAPABILITY = {name: cap for cap, names in ((60, _AT_60), (70, _AT_70), (75, _AT_75), (80, _AT_80),
                                                     (89, _AT_89), (90, _AT_90), (100, _AT_100)) for name in names}
FLOAT16_ONLY = ("awq",)  # AWQConfig.get_supported_act_dtypes: [torch.float16] on CUDA


# arg_groups/model_override_base.py MODEL_OVERRIDES: "These models require bfloat16 regardless of the requested dtype"
_BF16_ARCHS = ("MistralLarge3ForCausalLM", "PixtralForConditionalGeneration")


def _names_no_dtype(raw: dict) -> bool:
    """Whether the config names no dtype where SGLang 0.5.23 reads it: configs/model_config.py _get_and_verify_dtype
    on hf_text_config (config.dtype, else torch_dtype), whose text sub-config takes the parent's dtype where it names
    none (utils/hf_transformers/common.py get_hf_text_config); none at all is taken as float32."""
    from ..configs.resolve_family import nested_text

    return not any(d.get("dtype") or d.get("torch_dtype") for d in (raw, nested_text(raw) or {}))


def served_dtype(model) -> str:
    """The dtype SGLang 0.5.23's --dtype auto serves the checkpoint in (_get_and_verify_dtype): the config's, float16
    for float32 or none named (bfloat16 for Gemma), bfloat16 where an architecture override forces it."""
    from .vllm_load import raw_config

    from ..configs.resolve_family import _architectures

    raw = raw_config(model) or {}
    archs = _architectures(raw)  # the names a config lists; anything else (a number, a string) lists none
    quant = raw.get("quantization_config")
    if any(a in _BF16_ARCHS for a in archs) or ("GptOssForCausalLM" in archs and isinstance(quant, dict)
                                                and quant.get("quant_method") == "mxfp4"):
        return "bfloat16"  # the above, and model_overrides/gpt_oss.py ("use bf16 for mxfp4 triton kernels")
    if model.float_dtype not in ("float32", "fp32") and not (raw and _names_no_dtype(raw)):
        return "float16" if model.float_dtype in ("float16", "fp16", "half") else "bfloat16"
    from ..configs.quant_online import served_float32_as

    return served_float32_as("sglang", raw or {"model_type": model.model_type})


def _check_quantization(model, capability: tuple[int, int], version: str, sm: str) -> None:
    from ..configs.quant_online import sglang_method_below_sm80

    method = served_quantization(model, sglang_method_below_sm80)
    if method == "gptq" and not getattr(model, "online_quantization", ""):
        raise UsageError(f"SGLang {version} refuses this GPTQ checkpoint on an {sm} card: Marlin needs SM 8.0 "
                         "(marlin_utils.py), so gptq_marlin does not claim it, and the CUDA build registers no plain "
                         "gptq method: 'Unknown quantization method: gptq' (configs/model_config.py "
                         "_verify_quantization)", "plan it on a card of SM 8.0 or newer, or serve an AWQ (SM 7.5) or "
                         "compressed-tensors checkpoint")
    refuse_below_min_capability(f"SGLang {version}", method, QUANT_MIN_CAPABILITY, capability,
                                "model_loader/loader.py _get_quantization_config", "serve a checkpoint whose method "
                                "runs there (AWQ from SM 7.5, compressed-tensors from 7.0, GGUF from 6.0)")
    served = served_dtype(model)
    if method in FLOAT16_ONLY and served != "float16":
        raise UsageError(f"SGLang {version} refuses this {served} {method} checkpoint on an {sm} card: "
                         f"'torch.{served} is not supported for quantization method {method}. Supported dtypes: "
                         "[torch.float16]' (model_loader/loader.py _get_quantization_config: below SM 8.0 the "
                         f"Marlin {method} that takes {served} does not run)", "SGLang starts it with --dtype "
                         "float16, which kvplan does not take: plan a copy of the config with torch_dtype float16 "
                         "(the same 2 bytes an element)")


def check_pre_ampere(model, capability: tuple[int, int] | None, version: str, kv_cache_dtype: str,
                     notes: list[str]) -> None:
    """Refuse what SGLang refuses on a card below SM 8.0 and note what it leaves unread there (see the module doc);
    nothing for other cards or an unknown one. kv_cache_dtype: the pool's (auto, fp8_e4m3, fp8_e5m2, bf16)."""
    if capability is None or capability >= (8, 0):
        return
    sm = sm_label(capability)
    if version != READ_IN:
        notes.append(f"SGLang {version} on an {sm} card: kvplan read SGLang's rules for cards below SM 8.0 in "
                     f"{READ_IN} only (bfloat16 kept, the quantization methods' minimum capabilities)")
        return
    _check_quantization(model, capability, version, sm)
    if served_dtype(model) == "bfloat16":
        notes.append(f"SGLang {version} serves this checkpoint in bfloat16 on an {sm} card too (configs/model_config.py"
                     " _get_and_verify_dtype: no capability check, no float16 fallback); whether its kernels run "
                     "bfloat16 below SM 8.0 was not read: --dtype float16 serves it in the same 2 bytes an element")
    if kv_cache_dtype.startswith("fp8"):
        notes.append(f"SGLang {version} takes the {kv_cache_dtype} KV cache on an {sm} card without a check "
                     "(mem_cache/kv_cache_dtype.py configure_kv_cache_dtype); whether its attention kernels run an "
                     "fp8 cache below SM 8.9 was not read")
    notes.append(f"SGLang {version} on an {sm} card: flashinfer attention (triton for MLA or attention sinks: "
                 "get_default_attn_backend), page size 1, so the pool is sized as on any card; its wheel pins CUDA 13 "
                 "packages and sglang-kernel 0.4.10 (sm90 / sm100 builds): whether they carry kernels for this card "
                 "was not read")
