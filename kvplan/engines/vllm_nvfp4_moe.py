"""vLLM 0.34's NVFP4 routed experts at a TP split, on a known card (engines/vllm_widths.py asks it; its caller passes
the card's CUDA capability, capacity/gpus.py CUDA_CAPABILITY). Read in the vllm 0.34.0 wheel
(vllm/model_executor/layers/...):

- Which experts: ModelOpt quant_algo NVFP4 (or a MIXED_PRECISION entry NVFP4) -> quantization/modelopt.py
  ModelOptNvFp4FusedMoE; compressed-tensors whose group for the experts is NVFP4 (compressed_tensors.py
  _is_nvfp4_format: tensor_group, float, 4 bits, group 16, symmetric) -> compressed_tensors_moe/compressed_tensors_moe.py
  CompressedTensorsMoEMethod.get_moe_method (that group: the one get_scheme_dict / utils.py find_matched_target
  matches for "<layer>.0.<gate|up|down>", "Linear" copied to "RoutedExperts"; the other groups' formats do not
  matter) -> compressed_tensors_moe_w4a4_nvfp4.py
  CompressedTensorsW4A4Nvfp4MoEMethod. Neither create_weights checks the width; both ask
  fused_moe/oracle/nvfp4.py select_nvfp4_moe_backend in __init__ and convert_to_nvfp4_moe_kernel_format at
  process_weights_after_loading. W4A4 (activations NVFP4) only: a W4A16 checkpoint (W4A16_NVFP4, or no
  input_activations) has activation key None, which only Marlin / Humming accept, and both pad (below).
- The backend (default --moe-backend auto): the first of FLASHINFER_TRTLLM, FLASHINFER_CUTEDSL,
  FLASHINFER_CUTEDSL_BATCHED, FLASHINFER_CUTLASS, VLLM_CUTLASS, MARLIN, HUMMING, EMULATION whose kernel class passes
  modular_kernel.py FusedMoEExperts.is_supported_config (device, activation, quant scheme, parallel config, hidden
  size; no intermediate size); utils/humming/priority.py prioritize_humming moves HUMMING ahead of MARLIN at SM 9.0.
  By card (flashinfer-python 0.7.3 and humming-kernels are dependencies of the wheel, METADATA):
  SM 10.x: experts/trtllm_nvfp4_moe.py TrtLlmNvFp4ExpertsModular (is_device_capability_family(100), any routing
  and parallel config, SILU / GELU_TANH among its activations) -> FLASHINFER_TRTLLM;
  SM 12.x: no TRT-LLM / CuTeDSL (family 100 only); experts/flashinfer_cutlass_moe.py FlashInferExperts (family
  120, NVFP4 at has_device_capability(100)) -> FLASHINFER_CUTLASS, else experts/cutlass_moe.py CutlassExpertsFp4
  (family 100 / 120) -> VLLM_CUTLASS;
  SM 9.0: neither CUTLASS class takes NVFP4 (FlashInferExperts at >= 10.0, CutlassExpertsFp4 at 10.x / 12.x) ->
  HUMMING (preferred there), else MARLIN; SM 7.5 - 8.9: MARLIN (experts/marlin_moe.py MarlinExperts at >= 7.5).
- The width each enforces, at utils/flashinfer_fp4_moe.py prepare_nvfp4_moe_layer_for_fi_or_cutlass: FLASHINFER_TRTLLM
  pads the intermediate a rank to 64 for gated experts (flashinfer_utils.py align_fp4_moe_weights_for_fi,
  min_alignment 64: vllm-project/vllm#46880, merged); the others swizzle the gate/up block scales
  (nvfp4_utils.py swizzle_blockscale rounds their 2 x intermediate-a-rank rows up to 128) and, for gated experts
  (is_act_and_mul) whose rows needed padding, raise NotImplementedError("Intermediate size padding for w1 and w3,
  for %s NvFp4 backend, but this is not currently supported", backend.value): refused on SM 12.x where 2 x the intermediate a rank
  is not a multiple of 128 (the fix, vllm-project/vllm#48624 / #57351, is open). MARLIN
  (marlin_utils_fp4.py prepare_nvfp4_moe_layer_for_marlin) rounds the intermediate a rank up to 64 / 128, HUMMING
  (utils/humming/moe.py) pads too, FLASHINFER_CUTEDSL (prepare_nvfp4_moe_layer_for_flashinfer_cutedsl) to 64.
- No card known: no width fails on every backend (TRT-LLM, Marlin and Humming pad): nothing refused.

Not modelled: an explicit --moe-backend, LoRA / VLLM_BATCH_INVARIANT (other classes then), the batched all2all
formats under --enable-expert-parallel (FLASHINFER_CUTEDSL_BATCHED on SM 10.x: the experts are whole there),
ModelOpt MXFP8 with moe_quant_algo NVFP4, families not in engines/nvfp4_experts.py EXPERTS (Nemotron-H's ungated
experts pad), a compressed-tensors ignore list naming experts, compressed-tensors targets that place the experts'
projections in different groups or differ by the layer prefix's spelling (those: nothing refused).
"""

from __future__ import annotations

from .nvfp4_experts import ct_experts_nvfp4, gated_experts

# the exception as raised: its message is left unformatted, the backend a second argument
_RAISE = ("NotImplementedError('Intermediate size padding for w1 and w3, for %s NvFp4 backend, but this is not "
          "currently supported', 'FLASHINFER_CUTLASS')")


def _scheme(model, raw: dict, mo, module: str) -> str | None:
    """The checkpoint's name for W4A4 NVFP4 routed experts ("ModelOpt NVFP4", "compressed-tensors NVFP4"), else None."""
    if mo is not None:
        from .modelopt_config import module_algos

        if mo.algo == "MXFP8":  # moe_quant_algo NVFP4 under MXFP8: not modelled
            return None
        return "ModelOpt NVFP4" if "NVFP4" in module_algos(mo, module, range(mo.layers)) else None
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from ..configs.quant_online import vllm_method
    from .pre_ampere import served_quantization

    if served_quantization(model, vllm_method) != "compressed-tensors":
        return None
    q = checkpoint_quantization_config(raw) or {}
    w4a4 = ct_experts_nvfp4(q, str(raw.get("model_type") or ""), module) == "W4A4"
    return "compressed-tensors NVFP4" if w4a4 else None


def refusal(model, raw: dict, mo, split: int, capability: tuple[int, int] | None) -> str | None:
    """Why vLLM 0.34 fails to load these NVFP4 routed experts split `split` ways (the intermediate a rank) on a card of
    `capability` (module doc); None where its backend pads, the card is unknown, or the experts are not W4A4 NVFP4."""
    if capability is None or capability[0] != 12:  # only the SM 12.x default (the CUTLASS backends) refuses
        return None
    module, width = gated_experts(raw) or (None, 0)
    if module is None or width % split or not (name := _scheme(model, raw, mo, module)):
        return None  # a width the split does not divide: FusedMoEConfig's (engines/vllm_widths.py _experts)
    per_rank = width // split
    if (2 * per_rank) % 128 == 0:
        return None
    sm = f"{capability[0]}.{capability[1]}"
    return (f"vLLM 0.34 splits the {name} experts' intermediate size of {width:,} into {per_rank:,} a rank "
            f"({width:,} / {split}); on an SM {sm} card fused_moe/oracle/nvfp4.py select_nvfp4_moe_backend picks "
            "FLASHINFER_CUTLASS (FlashInfer TRT-LLM and CuTeDSL need SM 10.x), whose gate/up block scales "
            f"swizzle_blockscale pads to 128 rows: 2 x {per_rank} = {2 * per_rank} is not a multiple of 128, and "
            f"prepare_nvfp4_moe_layer_for_fi_or_cutlass raises {_RAISE} for gated experts (VLLM_CUTLASS alike; "
            "vllm-project/vllm#48624 open). SM 10.x cards (FlashInfer TRT-LLM pads to 64) and SM 7.5 - 9.0 "
            "(Marlin / Humming pad) load it")


__all__ = ["refusal"]
