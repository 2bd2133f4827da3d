"""What an MXFP4 checkpoint's experts take on the GPU once vLLM has loaded them.

The rule for GPU bytes (docs/weights.md) is the checkpoint's bytes as stored. vLLM's
MXFP4 MoE method re-lays the experts for its kernel, and the layout it builds is larger;
`--engine vllm` uses these bytes, the ideal engine keeps the checkpoint's. Read in
vllm/model_executor/layers/quantization/mxfp4.py (Mxfp4MoEMethod, 0.10.1 to 0.18.x) and,
after the 0.19.0 rewrite, fused_moe/oracle/mxfp4.py (select_gpt_oss_mxfp4_moe_backend,
mxfp4_round_up_hidden_size_and_intermediate_size, convert_gpt_oss_weight_to_mxfp4_moe_kernel_format;
read up to 0.33.0, and in the 0.34.0 sdist):

- the backend (`get_mxfp4_backend`; 0.10.1: `_should_use_marlin`): Marlin on CUDA GPUs
  below compute capability 9.0, and on 9.x when the `triton_kernels` package is missing or
  torch is older than 2.8.0. 0.10.1 pins torch 2.7.1, so it uses Marlin on Hopper too;
  0.10.2-0.11.x pin torch 2.8 but `triton_kernels` is an optional package
  (utils.has_triton_kernels), so a plain install still uses Marlin; 0.12.0 bundles it
  (vllm/third_party/triton_kernels) and Hopper uses Triton. From 0.19.0 the oracle tries
  TRITON before FLASHINFER_CUTLASS and MARLIN and the Triton experts accept capability 9.0
  and above, so Hopper stays on Triton and older GPUs on Marlin. Blackwell (10.x) goes to
  FlashInfer's TRT-LLM kernels, which this module does not model.
- `create_weights` allocates, per rank and layer, with I = intermediate_size / TP padded
  and H = hidden_size (Marlin: I to a multiple of 128, H to 256; Triton: I to 64):
  w13 (E, 2I, H/2) U8 + its scales (E, 2I, H/32) U8 + bias (E, 2I) BF16, and
  w2 (E, H, I/2) U8 + scales (E, H, I/32) U8 + bias (E, H) BF16 (w2's bias whole on
  every rank). The checkpoint's tensors are copied into the top-left of the padded ones.
- `process_weights_after_loading`:
  Marlin (utils/marlin_utils_fp4.prepare_moe_fp4_layer_for_marlin): the weights are
  repacked at 4 bits, the scales permuted and cast back to E8M0 (1 byte), the biases
  permuted in BF16: the padded shapes' bytes, the originals freed; its workspace is one
  int32 per SM x 4 per layer (ignored: 2 KiB).
  Triton (utils/mxfp4_utils._swizzle_mxfp4 with triton_kernels' Hopper layouts): the
  biases become FP32; the weights are swizzled into HopperMXValueLayout (rows padded to
  16, columns of bytes to 32; same bytes otherwise) and the originals deleted; the scales
  are swizzled into a new HopperMXScaleLayout tensor (rows padded to 2 x num_warps x 2 x 8
  = 256 with 8 warps, columns to 2) while the original scale parameters stay registered
  on the layer: both are held, through 0.24.x. From 0.25.0 the oracle also deletes the
  original scale parameters (`del layer.w13_weight_scale`): only the swizzled copy stays.

vLLM's "Model loading took" is the allocated bytes after the load minus before
(utils.DeviceMemoryProfiler, platforms/cuda.get_current_memory_usage after empty_cache):
live tensors, not allocator cache.
"""

from __future__ import annotations

from dataclasses import replace

from ..capacity.gpus import CUDA_CAPABILITY  # the catalog cards' compute capability, by name
from .record import Weights

MXFP4_READ_FROM = (0, 10, 1)  # first release with mxfp4.py
# read up to 0.33.0 and in the 0.34.0 sdist: oracle/mxfp4.py's Triton path now backs each param and its swizzled
# triton_kernels tensor by one storage (store_params_in_triton) where 0.25-0.33 deleted the originals: the same
# bytes; Marlin's create_weights and prepare_moe_fp4_layer_for_marlin unchanged for 16-bit activations (the fp8
# input option went with VLLM_MARLIN_INPUT_DTYPE); SM110 joins Marlin's GPUs (not in the catalog)
MXFP4_READ_UNTIL = (0, 35, 0)
TRITON_BUNDLED_FROM = (0, 12, 0)  # vllm/third_party/triton_kernels
TRITON_FREES_SCALES_FROM = (0, 25, 0)  # oracle/mxfp4.py: del layer.w13_weight_scale / w2_weight_scale
MXFP4_BLOCK = 32
TRITON_NUM_WARPS = 8  # mxfp4.py: 8 unless a batched (pplx / DeepEP low-latency) MoE


def _round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def backend(version: tuple[int, ...] | None, gpu: str | None) -> str | None:
    """"marlin", "triton" (both scale copies held), "triton-freed" (0.25+: the swizzled copy only),
    or None where this module has not read the rule (another release, Blackwell, ROCm, an unknown
    GPU). Default environment and a plain `pip install vllm`."""
    cap = CUDA_CAPABILITY.get(gpu or "")
    if version is None or cap is None:
        return None
    key = version + (0,) * (3 - len(version))
    if not (MXFP4_READ_FROM <= key < MXFP4_READ_UNTIL) or cap >= (10, 0):
        return None
    if cap < (9, 0) or key < TRITON_BUNDLED_FROM:
        return "marlin"
    return "triton-freed" if key >= TRITON_FREES_SCALES_FROM else "triton"


def expert_layer_bytes(kind: str, num_experts: int, hidden_size: int, intermediate_per_rank: int) -> int:
    """One rank's bytes of one MoE layer's experts as vLLM holds them after loading (see the
    module doc). kind: "marlin", "triton", "triton-freed" or "checkpoint" (the shapes unpadded,
    BF16 biases)."""
    e, h, i = num_experts, hidden_size, intermediate_per_rank
    if kind == "marlin":
        i, h = _round_up(i, 128), _round_up(h, 256)
    elif kind in ("triton", "triton-freed"):
        i = _round_up(i, 64)
    elif kind != "checkpoint":
        raise ValueError(kind)
    scales = e * 2 * i * (h // MXFP4_BLOCK) + e * h * (i // MXFP4_BLOCK)
    bias = e * (2 * i + h) * 2
    if kind in ("marlin", "checkpoint"):
        return e * 2 * i * (h // 2) + e * h * (i // 2) + scales + bias
    # weights in HopperMXValueLayout: rows to 16, byte columns to 32
    values = e * _round_up(2 * i, 16) * _round_up(h // 2, 32) + e * _round_up(h, 16) * _round_up(i // 2, 32)
    rows = 2 * TRITON_NUM_WARPS * 2 * 8
    swizzled_scales = (e * _round_up(2 * i, rows) * _round_up(h // MXFP4_BLOCK, 2)
                       + e * _round_up(h, rows) * _round_up(i // MXFP4_BLOCK, 2))
    kept = scales if kind == "triton" else 0
    return values + kept + swizzled_scales + bias * 2  # FP32 biases


def mxfp4_moe_shape(config: dict) -> tuple[int, int, int, int] | None:
    """(experts, hidden, intermediate, layers) of an MXFP4 MoE config, else None."""
    quant = config.get("quantization_config")
    if not isinstance(quant, dict) or quant.get("quant_method") != "mxfp4":
        return None
    values = [config.get(k) for k in ("num_local_experts", "hidden_size", "intermediate_size", "num_hidden_layers")]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values):
        return None
    return tuple(values)


def loaded_by_vllm(record: Weights, config: dict, *, tp: int, version: tuple[int, ...] | None,
                   gpu: str | None) -> tuple[Weights, str | None]:
    """The record with its MXFP4 experts as vLLM lays them on `gpu` (per rank under `tp`), and
    a note saying so; the record unchanged (note None or why not) where no rule applies."""
    shape = mxfp4_moe_shape(config)
    if shape is None:
        return record, None
    kind = backend(version, gpu)
    if kind is None:
        return record, ("MXFP4 experts at the checkpoint's bytes: vLLM's load layout is read for "
                        "0.10.1-0.34.x on CUDA GPUs below Blackwell only")
    e, h, inter, layers = shape
    tp = max(tp, 1)
    if inter % tp:
        return record, None
    per_rank = expert_layer_bytes(kind, e, h, inter // tp)
    parts = record.parts
    if parts and any(role == "experts" and layer >= 0 for role, layer, _ in parts):
        # each layer's experts become tp x the loaded per-rank bytes, so the split gives per_rank
        new_parts = tuple((role, layer, per_rank * tp if role == "experts" and layer >= 0 else n)
                          for role, layer, n in parts)
        extra = sum(n for _, _, n in new_parts) - sum(n for _, _, n in parts)
    else:
        new_parts = parts
        extra = (per_rank * tp - expert_layer_bytes("checkpoint", e, h, inter)) * layers
    how = {"marlin": "Marlin, I padded to 128 and H to 256",
           "triton": "Triton, swizzled scales beside the originals, FP32 biases",
           "triton-freed": "Triton, swizzled scales, FP32 biases"}[kind]
    per_gpu = f" per GPU at TP {tp}" if tp > 1 else ""
    note = f"MXFP4 experts as vLLM loads them ({how}): {extra / tp / 2**30:+.2f} GiB over the checkpoint{per_gpu}"
    adjusted = replace(record, total_bytes=record.total_bytes + extra, parts=new_parts,
                       notes=record.notes + (note,))
    return adjusted, note


__all__ = ["CUDA_CAPABILITY", "backend", "expert_layer_bytes", "loaded_by_vllm", "mxfp4_moe_shape"]
