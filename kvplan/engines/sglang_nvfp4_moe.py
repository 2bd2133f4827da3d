"""SGLang 0.5.23's NVFP4 routed experts at a split, by card: asked by engines/sglang_widths.py once the MLPs are built
(the failures are at load or at the first forward), with the card's CUDA capability (Split.capability). Read in the
sglang 0.5.23 wheel (python/sglang/srt/...; p = the intermediate a rank, moe_intermediate_size / moe_tp; h = hidden):

- Which experts: a ModelOpt quant_algo NVFP4 checkpoint (configs/model_config.py _parse_modelopt_quant_config ->
  "modelopt_fp4"): layers/quantization/modelopt_quant.py ModelOptFp4Config.get_quant_method gives every FusedMoE not
  excluded ModelOptNvFp4FusedMoEMethod (min capability 80: ModelOptFp4Config.get_min_capability; below it
  engines/sglang_sm7.py refuses the checkpoint). Compressed-tensors NVFP4 (compressed_tensors.py get_moe_scheme):
  W4A4 takes CompressedTensorsW4A4Nvfp4MoE at SM 10.0 on (its get_min_capability 100), else, like a W4A16
  checkpoint at any card, CompressedTensorsW4A16Nvfp4MoE (FP4 Marlin, activations left unquantized).
- The MoE runner (--moe-runner-backend auto, kvplan's launch: it passes no --quantization for a checkpoint,
  engines/sglang_flags.py). SM 10.x: the model overrides set flashinfer_trtllm for modelopt_fp4 (or an undeclared
  quantization) with --moe-a2a-backend none: arg_groups/overrides.py _deepseek_moe_quant_resolution (the DeepSeek
  family), model_overrides/qwen3_moe.py, gemma4.py, glm4_moe.py (minimax_m2.py: flashinfer_trtllm_routed).
  ModelOptNvFp4FusedMoEMethod.create_weights then rounds p up to 64 (gated experts; 128 ungated): nothing refused.
  SM 11.x / 12.x: overrides.py _moe_runner_backend_quant_constraints resolves auto to flashinfer_cutlass where the
  server's quantization is modelopt_fp4 ("trtllm-gen MoE kernels are SM100-only"); create_weights pads nothing, and
  process_weights_after_loading's CUTLASS branch swizzles the gate/up block scales (layers/quantization/utils.py
  swizzle_blockscale rounds their 2p rows up to 128) and, where that padded rows, asserts "The intermediate size
  required padding, but padding is also implemented for gated activations" (not is_gated): refused where 2p % 128.
  Without --quantization the runner's auto stays unresolved: ModelOptNvFp4FusedMoEMethod.create_moe_runner picks
  FLASHINFER_TRTLLM at capability >= 10.0 while the weights still take the CUTLASS branch (enable_flashinfer_trtllm_moe
  reads the raw auto) and meet the same assert; sgl-project/sglang#39807 (open) reports that launch failing on an
  RTX PRO 6000 before the first token at any width, which is not modelled (not settled from the wheel).
  SM 8.0 - 9.x: ModelOptNvFp4FusedMoEMethod.__init__ / create_moe_runner fall back to MARLIN under auto
  (sgl-project/sglang#25655 added it: Nemotron-3 NVFP4, whose ungated experts pad, on A100 / H100);
  process_weights_after_loading -> marlin_utils_fp4.py prepare_moe_nvfp4_layer_for_marlin pads p to 128 for ungated
  experts only; gated ones are repacked as they are (_repack_moe_fp4_weight_for_marlin -> gptq_marlin_repack:
  size_k % 16, size_n % 64 for w13 (K h, N 2p) then w2 (K p, N h)), and the first forward's
  kernels/jit/csrc/gemm/marlin_moe/moe_wna16_marlin.cuh (fused_marlin_moe.py) needs a thread tile (thread_k,
  thread_n) of (128, 128) / (64, 128) / (64, 256) dividing K x N ("Invalid thread config"): K % 64 with N % 128.
  So gated experts need 2p % 64 and p % 16 to load, and h % 64, 2p % 128 (p % 64) and h % 128 to run. Before
  those gemms, layers/moe/moe_runner/marlin.py fused_experts_none_to_marlin asserts a gated activation is "silu"
  or "situ" ("Only gated SiLU/SiTU is supported, got ..."): Gemma 4's gated GELU experts (gemma4_causal.py
  Gemma4MoE, activation "gelu") fail at the first forward at any width (sgl-project/sglang#20882 and #21145,
  which would have added GELU to the Marlin MoE, were closed unmerged).
  CompressedTensorsW4A16Nvfp4MoE.process_weights_after_loading checks this itself before the repack: ValueError
  "NVFP4 Marlin MoE requires hidden_size % 128 == 0, got h." then "... intermediate_size_per_partition % 64 == 0,
  got p.", and its create_moe_runner takes the same MARLIN runner (the activation assert above).
- Not settled, nothing refused: CompressedTensorsW4A4Nvfp4MoE on SM 10.x+ (its CUTLASS branch swizzles the scales
  without padding or asserting on the weights; its TRT-LLM branch, prepare_static_weights_for_trtllm_fp4_moe, pads
  nothing: what the kernels then do is in FlashInfer, not read); ModelOpt NVFP4 on SM 10.x for an architecture no
  override moves to flashinfer_trtllm (Mixtral, Qwen2-MoE: the unresolved auto above); ModelOpt W4A16_NVFP4 /
  MIXED_PRECISION / NVFP4_AWQ experts; an explicit --moe-runner-backend or a2a backend; families not in
  engines/nvfp4_experts.py EXPERTS. The exclusion list is matched with engines/modelopt_config.py on vLLM's module
  names (SGLang's own is_layer_excluded is not compared).
"""

from __future__ import annotations

from .nvfp4_experts import ct_nvfp4, gated_experts

_FIRST_FORWARD = "at start-up's first forward (decode CUDA graph capture, else the server warmup request)"
_MARLIN = ("ModelOpt NVFP4 experts on FP4 Marlin (SM 8.0 - 9.x: modelopt_quant.py ModelOptNvFp4FusedMoEMethod "
           "falls back to MARLIN under --moe-runner-backend auto; marlin_utils_fp4.py "
           "prepare_moe_nvfp4_layer_for_marlin pads only ungated experts)")


def scheme(model, raw: dict) -> str | None:
    """"modelopt" (ModelOpt NVFP4), "ct_w4a4" / "ct_w4a16" (compressed-tensors NVFP4) for gated routed experts of a
    family kvplan reads; None otherwise."""
    found = gated_experts(raw)
    if found is None or getattr(model, "online_quantization", ""):
        return None
    from .modelopt_config import modelopt, module_algos

    mo = modelopt(model, raw, ("NVFP4",))
    if mo is not None:
        return "modelopt" if "NVFP4" in module_algos(mo, found[0], range(mo.layers)) else None
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from ..configs.quant_online import sglang_method_below_sm80
    from .pre_ampere import served_quantization

    if served_quantization(model, sglang_method_below_sm80) != "compressed-tensors":
        return None
    form = ct_nvfp4(checkpoint_quantization_config(raw) or {})
    return {"W4A4": "ct_w4a4", "W4A16": "ct_w4a16"}.get(form or "")


def _marlin_activation(activation: str) -> str | None:
    """The first forward on the Marlin runner: moe_runner/marlin.py fused_experts_none_to_marlin asserts a gated
    activation is SiLU or SiTU before any gemm (Gemma 4's GELU experts fail at every width)."""
    if activation in ("silu", "situ"):
        return None
    return (f"AssertionError 'Only gated SiLU/SiTU is supported, got {activation}.' (moe_runner/marlin.py "
            f"fused_experts_none_to_marlin, whatever the widths) {_FIRST_FORWARD}")


def _marlin(p: int, h: int, activation: str = "silu") -> str | None:
    """prepare_moe_nvfp4_layer_for_marlin's repack of gated experts, then the first forward: the runner's
    activation check, then the gemms' tiles (module doc)."""
    for part, k, n in (("w13 (gate_up)", h, 2 * p), ("w2 (down)", p, h)):
        if k % 16:
            return f"'size_k = {k} is not divisible by tile_k_size = 16' (the {part} repack, at load)"
        if n % 64:
            return f"'size_n = {n} is not divisible by tile_n_size = 64' (the {part} repack, at load)"
    why = _marlin_activation(activation)
    if why:
        return why
    for part, k, n in (("w13 (gate_up)", h, 2 * p), ("w2 (down)", p, h)):
        if k % 64 or n % 128:
            return (f"'Invalid thread config' for MKN = [M, {k}, {n}] (the {part} gemm: no (thread_k, thread_n) of "
                    f"(128, 128), (64, 128), (64, 256) divides it; moe_wna16_marlin.cuh) {_FIRST_FORWARD}")
    return None


def refusal(kind: str | None, width: int, moe_tp: int, hidden: int, capability: tuple[int, int] | None,
            activation: str = "silu") -> str | None:
    """Why SGLang 0.5.23 fails to load or first run these NVFP4 routed experts of `width` split `moe_tp` ways on a
    card of `capability`, gated with `activation` (nvfp4_experts.sglang_activation) (module doc); None where it
    serves them, the card is unknown, or it is not settled."""
    if kind is None or capability is None or capability < (8, 0) or width % moe_tp:
        return None
    p = width // moe_tp
    shape = f"{p:,} of the intermediate {width:,} a rank ({width:,} / {moe_tp}), hidden {hidden:,}"
    sm = f"SM {capability[0]}.{capability[1]}"
    if kind == "ct_w4a16" or (kind == "ct_w4a4" and capability < (10, 0)):
        if hidden % 128:
            why = f"'NVFP4 Marlin MoE requires hidden_size % 128 == 0, got {hidden}.'"
        elif p % 64:
            why = f"'NVFP4 Marlin MoE requires intermediate_size_per_partition % 64 == 0, got {p}.'"
        else:
            why = None
        ct = (f"compressed-tensors NVFP4 experts on FP4 Marlin ({shape}; compressed_tensors.py get_moe_scheme -> "
              "CompressedTensorsW4A16Nvfp4MoE" + (", W4A4 below SM 10.0" if kind == "ct_w4a4" else "") + ")")
        if why:
            return f"{ct}: ValueError {why} at load (compressed_tensors_w4a16_nvfp4_moe.py process_weights_after_loading)"
        late = _marlin_activation(activation)  # its create_moe_runner takes MoeRunnerBackend.MARLIN
        return f"{ct}: {late}" if late else None
    if kind != "modelopt":
        return None
    if capability[0] in (11, 12):
        if (2 * p) % 128 == 0:
            return None
        return (f"ModelOpt NVFP4 experts on an {sm} card ({shape}): the MoE runner is flashinfer_cutlass "
                "(overrides.py _moe_runner_backend_quant_constraints: trtllm-gen is SM100-only), whose "
                "process_weights_after_loading pads the gate/up block scales' rows to 128 (utils.py "
                f"swizzle_blockscale: 2 x {p} = {2 * p} to {-(-2 * p // 128) * 128}) and then asserts 'The intermediate "
                "size required padding, but padding is also implemented for gated activations' at load "
                "(modelopt_quant.py ModelOptNvFp4FusedMoEMethod; without --quantization modelopt_fp4 the weights take "
                "the same branch: sgl-project/sglang#39807)")
    if capability[0] >= 10:
        return None  # flashinfer_trtllm pads p to 64 (create_weights), or the unresolved auto: not settled
    why = _marlin(p, hidden, activation)
    return f"{_MARLIN} on an {sm} card ({shape}): {why}" if why else None


__all__ = ["refusal", "scheme"]
