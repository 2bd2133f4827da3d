"""The routed experts SGLang 0.5.23 cannot split under weight-only integer quantization (GPTQ, AWQ, compressed-tensors
WNA16), asked by engines/sglang_widths.py after FusedMoE.__init__'s own assert (intermediate_size % moe_tp_size).
The experts split over moe_tp (T, 1 with --ep): a rank holds p = moe_intermediate_size / moe_tp of each expert, with
the whole hidden size h. Read in the sglang 0.5.23 wheel (python/sglang/srt/... and sglang/kernels/...):

- Which method (the card and config as engines/sglang_widths_quant.py kernel reads them):
  GPTQ on Marlin (gptq/gptq.py GPTQMarlinConfig.get_quant_method: every FusedMoE gets GPTQMarlinMoEMethod, whatever
  its shape; no MoeWNA16 fallback, unlike vLLM); AWQ on Marlin (awq/awq.py AWQMarlinConfig.get_quant_method: Marlin
  MoE where marlin_utils.py check_moe_marlin_supports_layer holds, h % 128 and p % max(64, group), else
  MoeWNA16Config.from_config(...).get_quant_method: moe_wna16.py MoeWNA16Method); compressed-tensors WNA16
  (compressed_tensors.py get_moe_scheme: CompressedTensorsWNA16MoE on Marlin, or CompressedTensorsWNA16TritonMoE on
  an SM 10.x card for symmetric 4-bit groups of 32 / 128 without actorder: that one is not read, not checked).
  The moe_wna16 method itself is only taken on --quantization moe_wna16 (MoeWNA16Config.override_quantization_method),
  which kvplan has no flag for; plain AWQ (AWQConfig.get_quant_method) returns no method for a FusedMoE on CUDA, so
  its experts are built unquantized: what loading the checkpoint then does is not read, not checked.
- moe_wna16 (AWQ's fallback): MoeWNA16Method.create_weights halves group_size while p or h is not a multiple of it,
  asserting group_size >= 32 after each halving (a bare AssertionError at build): refused where no group of 32 or
  more divides both, i.e. p or h not a multiple of 32. Marlin is never picked there (it needs p % 64).
- AWQ on Marlin MoE (awq/schemes/awq_moe.py AWQMoEScheme): p // group scale rows a rank, and the selection above
  already guarantees the repack and thread-tile alignments below: nothing refused.
- GPTQ / compressed-tensors WNA16 on Marlin MoE, after loading: hardware_backend/gpu/quantization/gptq_kernels.py
  gptq_marlin_moe_repack (GPTQMarlinMoEKernel.process_weights_after_loading; CompressedTensorsWNA16MoE's
  process_weights_after_loading calls it too) asserts size_k % 16 and repacks every expert with gptq_marlin_repack
  (gptq_marlin_repack.cuh: size_k % 16, size_n % 64): gate_up K = h, N = 2p; down K = p, N = h.
- The scale rows of the down projection a rank (settled here): GPTQMarlinMoEScheme.create_weights allocates
  w2_scales_size = p x moe_tp (the whole width) without desc_act and p with it, the reverse of what each needs
  (sgl-project/sglang#19938 traces the swap to the MoE refactor, #9269); FusedMoE._load_w2 ignores load_full_w2 and
  copies a rank's (W // group) // moe_tp rows of the checkpoint into the leading rows, zeroing the rest: no load
  error. compressed_tensors_wNa16_moe.py allocates the whole width's rows only for actorder other than "static"
  (load_full_w2), the rank's share otherwise. So without desc_act a GPTQ rank holds R = W // group rows at any TP.
- The first forward (at start-up: sglang_widths_quant._FIRST_FORWARD), fused_marlin_moe.py fused_marlin_moe ->
  kernels/ops/moe/moe_wna16_marlin.py moe_wna16_marlin_gemm, for gate_up then down: num_groups = the scale rows;
  without act order group_size = K // num_groups (num_groups > 1, else -1); with it K // num_groups where is_k_full
  (no act order, or moe_tp 1), else 0. kernels/jit/csrc/gemm/marlin_moe/moe_wna16_marlin.cuh then checks
  K % num_groups ("size_k = K, is not divisible by b_scales.size(1) = R"), marlin_mm K % (group_size / 16) (a zero
  divisor where group_size < 16), a thread tile (small_batch_thread_configs (128, 128), (64, 128),
  large_batch_thread_configs (64, 256), (64, 128): K % 64 with N % 128, else "Invalid thread config"), and
  get_marlin_kernel has int kernels (COMMON_GET_IF, kU4 / kU4B8 / kU8B128) for group_size / 16 in -1, 2, 4, 8 only
  (0 with act order, ACT_GET_IF); determine_exec_config skips a tile without a kernel, so that also ends in
  "Invalid thread config" (the message vLLM's copy of the kernel gave at group_size 16: vllm-project/vllm#41161). So a GPTQ rank without desc_act at moe_tp > 1
  runs the down projection at group_size = group / moe_tp: TP 2 / 4 of group 128 start (reading zeroed scale rows:
  wrong output, not a refusal, not noted), TP 8 (16) and TP 16 (8) fail.

Not checked: activations other than silu (check_moe_marlin_supports_layer), modules_to_not_convert / ignore lists
(kernel() gives no method then), compressed-tensors actorder "weight" (whether SGLang's enum equals "static" was not
read), asymmetric zero-point repacking, the Triton WNA16 MoE and ROCm paths.

A bfloat16 model's GPTQ experts fail at every split: GPTQMarlinMoEScheme.create_weights allocates w13_scales and
w2_scales as torch.half (AWQMoEScheme and CompressedTensorsWNA16MoE take params_dtype), and fused_marlin_moe asserts
the activations' dtype equals both scales' (MXFP4 / NVFP4 Marlin aside) before the kernel runs: at the first forward,
after the repack (sgl-project/sglang#20599, reproduced with Qwen3.5-35B-A3B-GPTQ-Int4 in PR #22121; the fixes #20601,
#21556 and #22121 were closed unmerged and #35955 is open, so 0.5.23 still hard-codes torch.half). dtype_error.
"""

from __future__ import annotations

from typing import NamedTuple

from .sglang_widths_quant import TILE_K, TILE_N

_MARLIN_GROUPS = (-1, 32, 64, 128)  # marlin_utils.py check_moe_marlin_supports_layer supports_group_size
_GROUP_BLOCKS = (-1, 2, 4, 8)  # moe_wna16_marlin.cuh COMMON_GET_IF(kU4 / kU4B8 / kU8B128), not act order
_CUH = "kernels/jit/csrc/gemm/marlin_moe/moe_wna16_marlin.cuh"
_REPACK = "gptq_kernels.py gptq_marlin_moe_repack -> kernels/jit/csrc/gemm/marlin/gptq_marlin_repack.cuh, at load"


class Scheme(NamedTuple):
    """How SGLang 0.5.23 serves the routed experts: "gptq" / "ct" (Marlin MoE), "awq" (Marlin MoE, else
    moe_wna16), with the group (-1 by channel), whether g_idx is kept (act order) and whether a rank holds the whole
    width's down scale rows (module doc)."""
    kind: str
    group: int
    act_order: bool = False
    full_w2_rows: bool = False


class Experts(NamedTuple):
    """One MoE block's routed experts as a rank holds them."""
    name: str
    width: int
    moe_tp: int
    hidden: int

    @property
    def per_rank(self) -> int:
        return self.width // self.moe_tp


def scheme(kern, raw: dict, capability: tuple[int, int] | None) -> Scheme | None:
    """The experts' scheme for the linears' kernel (sglang_widths_quant.kernel), None where not checked."""
    if kern is None:
        return None
    if kern.kind == "gptq_marlin":
        act = kern.act_order and kern.group != -1  # GPTQMarlinConfig.__init__ drops desc_act without groups
        return Scheme("gptq", kern.group, act, full_w2_rows=not act and kern.group != -1)
    if kern.kind == "awq_marlin":
        return Scheme("awq", kern.group)
    if kern.kind == "ct_wna16":
        return _ct_scheme(raw, capability)
    return None


def _ct_scheme(raw: dict, capability: tuple[int, int] | None) -> Scheme | None:
    from ..configs.checkpoint_dtype import checkpoint_quantization_config

    q = checkpoint_quantization_config(raw) or {}
    weights = {tuple(sorted((k, str(v)) for k, v in g["weights"].items())) for g in q["config_groups"].values()}
    if len(weights) != 1:
        return None  # groups that differ: which one the experts match is not modelled
    w = next(iter(q["config_groups"].values()))["weights"]
    group = w.get("group_size") if w.get("strategy") == "group" else -1
    order = w.get("actorder")
    if not isinstance(group, int) or group == 0 or order not in (None, False, True, "group", "static"):
        return None
    act = order in (True, "group") and group != -1
    triton = (w.get("num_bits") == 4 and group in (32, 128) and w.get("symmetric") is not False and not order)
    if triton and capability is not None and capability[0] == 10:
        return None  # CompressedTensorsWNA16TritonMoE on SM 10.x (get_moe_scheme): not read
    return Scheme("ct", group, act, full_w2_rows=act)


def _what(s: Scheme) -> str:
    return {"gptq": "GPTQ experts on Marlin MoE (gptq/schemes/gptq_moe.py GPTQMarlinMoEScheme)",
            "ct": "compressed-tensors WNA16 experts on Marlin MoE (compressed_tensors_wNa16_moe.py "
                  "CompressedTensorsWNA16MoE)"}[s.kind]


def _shape(e: Experts) -> str:
    return (f"{e.name}: {e.per_rank:,} of the intermediate {e.width:,} a rank ({e.width:,} / {e.moe_tp}), hidden "
            f"{e.hidden:,}")


def build_error(s: Scheme | None, e: Experts) -> str | None:
    """AWQ's moe_wna16 fallback: MoeWNA16Method.create_weights' group halving (module doc)."""
    if s is None or s.kind != "awq" or s.group <= 0:
        return None
    group = s.group
    while e.per_rank % group or e.hidden % group:
        group //= 2
        if group < 32:
            return (f"AWQ experts: 'assert group_size >= 32' ({_shape(e)}, not a multiple of 32: awq/awq.py "
                    "AWQMarlinConfig.get_quant_method falls back from Marlin MoE, marlin_utils.py "
                    f"check_moe_marlin_supports_layer wanting {e.per_rank:,} % {max(64, s.group)}, to moe_wna16.py "
                    f"MoeWNA16Method, whose create_weights halves group_size {s.group} below 32)")
    return None


def repack_error(s: Scheme | None, e: Experts) -> str | None:
    """gptq_marlin_moe_repack of the gate_up (K h, N 2p) then the down (K p, N h) weights, once loaded."""
    if s is None or s.kind not in ("gptq", "ct"):
        return None
    for part, k, n in (("w13 (gate_up)", e.hidden, 2 * e.per_rank), ("w2 (down)", e.per_rank, e.hidden)):
        if k % TILE_K:
            why = f"AssertionError 'assert size_k % 16 == 0' (size_k {k})"
        elif n % TILE_N:
            why = f"'size_n = {n} is not divisible by tile_n_size = {TILE_N}'"
        else:
            continue
        return f"{_what(s)}: {why} ({_shape(e)}, the {part} weights; {_REPACK})"
    return None


def _gemm(s: Scheme, e: Experts, k: int, n: int, rows: int) -> str | None:
    """One moe_wna16_marlin_gemm call's checks (module doc), None where it runs."""
    from .sglang_widths_quant import _FIRST_FORWARD

    k_full = not s.act_order or e.moe_tp == 1
    if s.act_order:
        size = k // rows if k_full else 0
    else:
        size = k // rows if rows > 1 else -1
    why = None
    if s.act_order and k_full and rows <= 1:
        why = "'For act_order, num_groups must be > 1'"
    elif (k_full or not s.act_order) and rows > 1 and k % rows:
        why = f"'size_k = {k}, is not divisible by b_scales.size(1) = {rows}'"
    blocks = -1 if size == -1 else size // 16
    if why is None and size not in (-1, 0) and (blocks == 0 or k % blocks):
        why = (f"group_size {size}: marlin_mm's 'prob_k % group_blocks' with group_blocks {blocks}"
               + (" (a zero divisor)" if blocks == 0 else f" ('prob_k = {k} is not divisible by group_blocks')"))
    # determine_exec_config skips a tile with no kernel (get_marlin_kernel: group_blocks 0 with act order, else
    # COMMON_GET_IF's -1 / 2 / 4 / 8), so both end in is_valid_config's RuntimeCheck on thread config -1
    no_kernel = not s.act_order and blocks not in _GROUP_BLOCKS
    if why is None and (k % 64 or n % 128 or no_kernel):
        why = (f"'Invalid thread config' (MKN = [M, {k}, {n}] as the kernel prints it, group_size {size}: "
               + (f"no int kernel for group_blocks {blocks}, only -1, 2, 4, 8: get_marlin_kernel COMMON_GET_IF"
                  if no_kernel and not (k % 64 or n % 128) else
                  "no tile (thread_k, thread_n) of (128, 128), (64, 128), (64, 256) divides K x N")
               + "; determine_exec_config, is_valid_config)")
    return f"{why} {_FIRST_FORWARD}" if why else None


def forward_error(s: Scheme | None, e: Experts) -> str | None:
    """The first forward's Marlin MoE gemms, gate_up then down (module doc)."""
    if s is None or s.kind not in ("gptq", "ct"):
        return None
    g, p = s.group, e.per_rank
    rows13 = e.hidden // g if g > 0 else 1
    rows2 = ((p * e.moe_tp if s.full_w2_rows else p) // g) if g > 0 else 1
    for part, k, n, rows in (("w13 (gate_up)", e.hidden, 2 * p, rows13), ("w2 (down)", p, e.hidden, rows2)):
        why = _gemm(s, e, k, n, rows)
        if why:
            held = ""
            if part.startswith("w2") and s.full_w2_rows and e.moe_tp > 1:
                held = (f"; a rank holds {rows} down scale rows, the whole width's ({e.width:,} // {g}: "
                        "create_weights' w2_scales_size = p x moe_tp), of which FusedMoE._load_w2 fills its share")
            return f"{_what(s)}: {why} ({_shape(e)}, the {part} gemm{held}; fused_marlin_moe.py -> {_CUH})"
    return None


def dtype_error(s: Scheme | None, served: str | None) -> str | None:
    """fused_marlin_moe's dtype assert for GPTQ experts served in bfloat16 (module doc), at any split."""
    from .sglang_widths_quant import _FIRST_FORWARD

    if s is None or s.kind != "gptq" or served != "bfloat16":
        return None
    return ("GPTQ experts of a bfloat16 model: 'moe_wna16_marlin_gemm assumes hidden_states.dtype (torch.bfloat16) =="
            " w1_scale.dtype (torch.float16)' at any split (gptq/schemes/gptq_moe.py GPTQMarlinMoEScheme.create_weights"
            " allocates the scales as torch.half; fused_marlin_moe.py fused_marlin_moe asserts the dtypes match; "
            f"sgl-project/sglang#20599) {_FIRST_FORWARD}; SGLang starts it with --dtype float16: plan a copy of the "
            "config with torch_dtype float16 (the same 2 bytes an element)")


def tp_scale_note(s: Scheme | None, moe_tp: int) -> str | None:
    """The GPTQ experts split over moe_tp > 1 start but read their down scales laid out for the other act-order case
    (module doc): a note, not a refusal."""
    if s is None or s.kind != "gptq" or moe_tp == 1:
        return None
    return (f"SGLang 0.5.23 splits these GPTQ experts over MoE TP {moe_tp} with their down projection's scale rows laid "
            "out for the other act-order case (gptq/schemes/gptq_moe.py GPTQMarlinMoEScheme.create_weights: the whole "
            "width's rows without desc_act, a rank's share with it; FusedMoE._load_w2 ignores load_full_w2): it "
            "starts, but the Marlin MoE kernel then reads the scales against the wrong groups, which "
            "sgl-project/sglang#36822 and #35955 (open) report as wrong output or NaNs; --ep keeps every expert "
            "whole (moe_tp 1)")


def late_refusal(kern, s: Scheme | None, built: list, served: str | None = None) -> str | None:
    """After every module is built: the repack errors over `built` (the MLP linears and the experts, in build order),
    then the first forward's (an expert block's dtype assert before its gemms); served: the model's serving dtype."""
    from .sglang_widths_quant import forward_error as linear_forward, repack_error as linear_repack

    def experts_forward(s: Scheme | None, e: Experts) -> str | None:
        return dtype_error(s, served) or forward_error(s, e)

    for linear_check, experts_check in ((linear_repack, repack_error), (linear_forward, experts_forward)):
        for item in built:
            why = experts_check(s, item) if isinstance(item, Experts) else linear_check(kern, item)
            if why:
                return why
    return None


__all__ = ["Experts", "Scheme", "build_error", "dtype_error", "forward_error", "late_refusal", "repack_error", "scheme",
           "tp_scale_note"]
