"""vLLM on cards below SM 8.0 (Turing T4 at 7.5, Volta V100 at 7.0), read in vLLM 0.34.0.

  dtype        vllm/platforms/cuda.py CudaPlatformBase.supported_dtypes: [float16, float32] from SM 6.0 to 7.x (no
               bfloat16); vllm/config/model.py _resolve_auto_dtype (--dtype auto): a bfloat16 checkpoint is not in
               that list, so it falls back to the first supported dtype, float16 ("Your device ... doesn't support
               torch.bfloat16. Falling back to torch.float16"): 2 bytes an element as before, so weights and KV
               bytes are unchanged. The model types in _FLOAT16_NOT_SUPPORTED_MODELS (gemma2, gemma3, gemma3_text,
               glm4) are left with float32 only (_is_valid_dtype), 4 bytes an element, which kvplan does not model:
               refused. An explicit --dtype bfloat16 stops at worker start (platforms/cuda.py check_if_supports_dtype).
  attention    platforms/cuda.py _get_backend_priorities (not MLA, not SM 10): FLASH_ATTN, FLASHINFER, TRITON_ATTN, ...;
               FLASH_ATTN needs SM 8.0 (flash_attn.py supports_compute_capability) and so does FLASHINFER in 0.34
               (flashinfer.py: raised from 7.5 while FlashInfer is broken on Turing), so TRITON_ATTN serves:
               get_supported_kernel_block_sizes [MultipleOf(16)] keeps the default block (64 in 0.34,
               interface.py update_block_size_for_backend). TritonAttentionImpl.__init__ refuses an fp8 KV cache
               below SM 8.9 and a bfloat16 one below SM 8.0. MLA: TRITON_MLA is the only MLA backend there
               (FLASH_ATTN_MLA needs SM 9, FLASHMLA SM 9 / 10, FLASHINFER_MLA SM 10), and
               mla/triton_mla.py TritonMLAImpl.__init__ refuses the same two KV dtypes.
  SM 7.0       the PyPI wheel of 0.34.0 depends on cu13 packages (METADATA: nvidia-cutlass-dsl[cu13]), and its
               CMakeLists.txt lists CUDA_SUPPORTED_ARCHS from 7.5 for CUDA >= 12.8 ("7.0;..." only below 12.8): the
               published wheel carries no kernels for a V100; a source build with CUDA < 12.8 does.

  quantization config/vllm.py VllmConfig._get_quantization_config: a start whose quantization method's
               get_min_capability is above the card's capability stops ("The quantization method X is not supported
               for the current GPU. Minimum capability: N"); the minimum of each method is QUANT_MIN_CAPABILITY,
               for the method the checkpoint is served with (configs/quant_online.py vllm_method) or the online
               --quantization. Only cards below SM 8.0 are below any of them. The schemes inside compressed-tensors
               and Quark check their own kernels (not read): only the config's 70 is applied to them.

Other releases were not read for these cards: their plans say so in a note.
"""

from __future__ import annotations

from ..errors import UsageError
from .pre_ampere import refuse_below_min_capability, served_quantization, sm_label

READ_IN = "0.34"
FLOAT16_REFUSED = ("gemma2", "gemma3", "gemma3_text", "glm4")  # config/model.py _FLOAT16_NOT_SUPPORTED_MODELS

# get_min_capability of the QuantizationConfig vLLM 0.34 builds for each method name (layers/quantization/__init__.py
# get_quantization_config's method_to_config; the online shorthands all take online/base.py OnlineQuantizationConfig)
_AT_60 = ("gptq", "gptq_marlin", "auto_gptq", "inc")  # auto_gptq.py AutoGPTQConfig, inc/inc.py INCConfig
_AT_70 = ("compressed-tensors", "quark", "moe_wna16")  # CompressedTensorsConfig, QuarkConfig, MoeWNA16Config
# auto_awq.py AutoAWQConfig; fp8.py Fp8Config, which W4AFP8Config and DeepSeek-V4's DeepseekV4FP8Config inherit;
# torchao.py TorchAOConfig; humming.py HummingConfig; modelopt.py ModelOptNvFp4Config / ModelOptMixedPrecisionConfig;
# online/base.py OnlineQuantizationConfig and its shorthands (config/quantization.py _ONLINE_SHORTHANDS)
_AT_75 = ("awq", "awq_marlin", "auto_awq", "fp8", "w4afp8", "deepseek_v4_fp8", "torchao", "humming", "modelopt_fp4",
          "modelopt_mixed", "online", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel",
          "int8_per_channel_weight_only", "nvfp4_per_token", "lut_b_moe", "mxfp4_hadamard32")
# experts_int8.py ExpertsInt8Config, fbgemm_fp8.py FBGEMMFp8Config, modelopt.py ModelOptFp8Config /
# ModelOptMxFp8Config (also "mxfp8"), mxfp4.py Mxfp4Config and GptOssMxfp4Config
_AT_80 = ("experts_int8", "fbgemm_fp8", "modelopt", "modelopt_mxfp8", "mxfp8", "mxfp4", "gpt_oss_mxfp4")
QUANT_MIN_CAPABILITY = {name: cap for cap, names in ((60, _AT_60), (70, _AT_70), (75, _AT_75), (80, _AT_80))
                        for name in names}


def served_kv_dtype(capability: tuple[int, int] | None, version: str | None, kv_dtype: str) -> str | None:
    """The dtype vLLM `version` stores a KV cache of kvplan's `kv_dtype` in where the name says otherwise: float16
    for bf16 on a card below SM 8.0 (kvplan passes --kv-cache-dtype auto for it, whose cache takes the model's dtype,
    and _resolve_auto_dtype serves a bfloat16 checkpoint in float16 there: see the module doc); None elsewhere and
    for releases not read."""
    if capability is None or capability >= (8, 0) or not (version or "").startswith(READ_IN):
        return None
    return "float16" if kv_dtype.lower() in ("bf16", "bfloat16") else None


def check_pre_ampere(model, capability: tuple[int, int] | None, version: str, kv_cache_dtype: str | None,
                     use_mla: bool, notes: list[str]) -> None:
    """Refuse what vLLM refuses on a card below SM 8.0 and note what it changes there (see the module doc);
    nothing for other cards or an unknown one."""
    if capability is None or capability >= (8, 0):
        return
    sm = sm_label(capability)
    if not version.startswith(READ_IN):
        notes.append(f"vLLM {version} on an {sm} card: kvplan read vLLM's rules for cards below SM 8.0 in "
                     f"{READ_IN}.0 only (bfloat16 served as float16, Triton attention)")
        return
    model_type, float_dtype = model.model_type, model.float_dtype
    from ..configs.quant_online import vllm_method

    # the online --quantization's own name is in the table ("fp8": Fp8Config's 75, like the shorthands')
    refuse_below_min_capability(f"vLLM {version}", served_quantization(model, vllm_method), QUANT_MIN_CAPABILITY,
                                capability, "config/vllm.py _get_quantization_config", "serve a checkpoint whose "
                                "method runs there (GPTQ from SM 6.0, compressed-tensors from 7.0)")
    if model_type in FLOAT16_REFUSED:
        raise UsageError(f"vLLM {version} serves {model_type} on an {sm} card in float32 (no bfloat16 below SM 8.0, "
                         "platforms/cuda.py supported_dtypes; float16 refused for it, config/model.py "
                         "_FLOAT16_NOT_SUPPORTED_MODELS), which kvplan does not model",
                         "plan it on a card of SM 8.0 or newer")
    kv = (kv_cache_dtype or "auto").lower()
    # MLA: TRITON_MLA is the one MLA backend below SM 9.0 (platforms/cuda.py _get_backend_priorities; FLASH_ATTN_MLA
    # needs SM 9, FLASHMLA SM 9 / 10, FLASHINFER_MLA SM 10), and TritonMLAImpl.__init__ refuses the same two dtypes
    impl = ("v1/attention/backends/mla/triton_mla.py TritonMLAImpl" if use_mla else
            "v1/attention/backends/triton_attn.py TritonAttentionImpl")
    if kv.startswith("fp8"):
        raise UsageError(f"vLLM {version} refuses --kv-cache-dtype {kv_cache_dtype} on an {sm} card: its Triton "
                         f"{'MLA ' if use_mla else ''}attention needs SM 8.9 for an fp8 KV cache ({impl})",
                         "plan the default KV dtype (vLLM's auto: float16 there)")
    if kv in ("bfloat16", "bf16"):
        raise UsageError(f"vLLM {version} refuses a bfloat16 KV cache on an {sm} card (bfloat16 needs SM 8.0: "
                         f"{impl})", "plan the default KV dtype (vLLM's auto: float16 there)")
    if float_dtype in ("bfloat16", "bf16", ""):
        notes.append(f"vLLM {version} on an {sm} card serves this bfloat16 checkpoint in float16 (config/model.py "
                     "_resolve_auto_dtype: no bfloat16 below SM 8.0): the same 2 bytes an element")
    if capability < (7, 5):
        notes.append(f"vLLM {version}'s PyPI wheel is built with CUDA 13, whose arch list (CMakeLists.txt "
                     "CUDA_SUPPORTED_ARCHS) starts at SM 7.5: it has no kernels for this SM 7.0 card; only a "
                     "source build with CUDA < 12.8 serves it")
