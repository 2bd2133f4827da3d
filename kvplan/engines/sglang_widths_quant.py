"""The weight-only kernels whose SGLang 0.5.23 layers need more of a TP split than the plain widths
(engines/sglang_widths.py, which asks them for each MLP's gate_up_proj / down_proj): GPTQ and AWQ (Marlin or not)
and FP8 served by Marlin. Read in the sglang 0.5.23 wheel (python/sglang/srt/... and sglang/kernels/jit/csrc/...):

- Which method (a card of SM 8.0 on; below it engines/sglang_sm7.py refuses GPTQ and keeps AWQ as "awq"):
  gptq/gptq.py GPTQMarlinConfig.override_quantization_method claims a gptq checkpoint as gptq_marlin where
  is_gptq_marlin_compatible (bits 4 / 8 with sym true: TYPE_MAP; group_size in marlin_utils.py
  MARLIN_SUPPORTED_GROUP_SIZES [-1, 32, 64, 128]; desc_act given; not already checkpoint_format "marlin");
  awq/awq.py AWQMarlinConfig.is_awq_marlin_compatible an awq one as awq_marlin (4 bits with zero_point: uint4 is
  the only zero-point Marlin type, marlin_utils.py query_marlin_supported_quant_types).
- gptq_marlin: gptq/schemes/gptq_marlin.py GPTQMarlinLinearScheme.create_weights checks no shape, and
  hardware_backend/gpu/quantization/gptq_kernels.py GPTQMarlinLinearKernel.process_weights_after_loading calls
  check_marlin_supports_shape and drops its answer; it then repacks the weight: kernels/jit/csrc/gemm/marlin/
  gptq_marlin_repack.cuh needs size_k (input per rank) % tile_k_size 16 and size_n (output per rank) % tile_n_size
  64 ("size_n = N is not divisible by tile_n_size = 64"), a RuntimeError once the weights are loaded. The first
  forward runs at start-up (forward_error's _FIRST_FORWARD). Without desc_act a rank holds input_size_per_partition
  // group_size scale rows (GPTQMarlinLinearScheme.create_weights), and gptq_marlin.cuh gptq_marlin_gemm checks
  "size_k = K, is not divisible by num_groups = G" before any tile. A layer that
  repacks still needs a Marlin thread tile dividing it at the first forward (gptq_marlin.cuh: every entry of
  small_batch_thread_configs / large_batch_thread_configs is (thread_k, thread_n) (128, 128), (64, 128), (128, 64)
  or (64, 256), is_valid_config wants K % thread_k == 0 and N % thread_n == 0; with none the RuntimeCheck
  "Invalid thread config" fails): K % 64 with N % 128, or K % 128 with N % 64.
- compressed-tensors WNA16 (ct_wna16: every config group int 4 / 8-bit weights by group or channel, no input
  quantization, format pack-quantized: compressed_tensors.py _is_wNa16_group_channel; min capability 80):
  compressed_tensors_wNa16.py CompressedTensorsWNA16.process_weights_after_loading drops check_marlin_supports_shape's
  answer too and repacks with gptq_marlin_repack: the same repack and thread tile checks as gptq_marlin. Grouped
  without actorder "group", its create_weights asserts input_size_per_partition % group_size == 0 at build.
- awq_marlin: AWQMarlinConfig.get_quant_method asks marlin_utils.py check_marlin_supports_layer from
  layers/linear.py LinearBase.__init__, before ColumnParallelLinear / RowParallelLinear set the per-rank sizes, so
  it sees the whole layer (output % min_thread_n 64, input % min_thread_k 128, input % group_size); a whole layer
  that fails falls back to plain AWQ, one that passes gets awq/schemes/awq_marlin.py AWQMarlinLinearScheme, whose
  create_weights calls verify_marlin_supports_shape on the sizes a rank: "Weight output_size_per_partition = N is
  not divisible by  min_thread_n = 64." / "Weight input_size_per_partition = K is not divisible by min_thread_k =
  128." / "... is not divisible by group_size = G." (a ValueError at build).
- awq (below SM 8.0, 8-bit or zero_point false, or the fallback): awq/schemes/awq_linear.py AWQLinearScheme
  .create_weights: input a rank % group_size ("The input size is not aligned with the quantized weight shape.")
  and output a rank % pack_factor (32 / bits).
- FP8 on Marlin (SM 8.0 to 8.8, no FP8 hardware): fp8.py Fp8LinearMethod.__init__ sets use_marlin from
  fp8_utils.py can_auto_enable_marlin_fp8 (80 <= SM < 89); compressed-tensors FP8 takes
  CompressedTensorsW8A16Fp8 below CompressedTensorsW8A8Fp8.get_min_capability 89 (compressed_tensors.py
  _get_scheme_from_parts). Both call marlin_utils_fp8.py prepare_fp8_layer_for_marlin, whose gptq_marlin_repack
  has the size_k % 16 / size_n % 64 checks above (zai-org/GLM-4.5#23: GLM-4.5-Air-FP8 at --tp 4 under SGLang,
  "size_n = 5472 is not divisible by tile_n_size = 64", the dense MLP's gate_up_proj 2 x 10,944 / 4; the
  same message on an RTX A6000, SM 8.6, under vLLM: zai-org/GLM-V#178). Its forward's tile is not checked here.

- ModelOpt NVFP4 (a config whose quant_algo is NVFP4 / W4A16_NVFP4): modelopt_quant.py
  ModelOptFp4LinearMethod.create_weights ("Unsupported model when in features size is not multiple of 16") and
  ModelOptNvFp4A16LinearMethod.create_weights ("... input feature size is not a multiple of 16") need a linear's
  input a rank % 16: the down_proj's. The config and its exclusion list are read by engines/modelopt_config.py
  modelopt, as for vLLM (SGLang's own is_layer_excluded is not compared); checked where the dense down_proj is
  quantized in some layer. ModelOpt FP8 (ModelOptFp8LinearMethod.create_weights) checks no alignment.
- MXFP4 (gpt-oss): mxfp4.py Mxfp4MoEMethod.create_weights rounds the experts' intermediate a rank up (to 64, or
  128 on Marlin): no refusal; its linears are unquantized.

Not checked here: the attention's linears, the routed experts under these schemes (engines/sglang_widths_moe.py,
whose late_refusal runs this module's repack_error / forward_error for the linears), a config with
modules_to_not_convert, whether a
GPTQ group straddling two ranks loads right (nothing in the wheel refuses it), the non-Marlin GPTQ at SM 8.0+
(GPTQLinearScheme._init_kernel raises whatever the widths).
"""

from __future__ import annotations

from typing import NamedTuple

from .fp8_blocks import ct_groups, int_weight_only

TILE_K, TILE_N = 16, 64  # kernels/jit/csrc/gemm/marlin/marlin.cuh tile_k_size, tile_n_size
MIN_THREAD_N, MIN_THREAD_K = 64, 128  # layers/quantization/marlin_utils.py GPTQ_MARLIN_MIN_THREAD_N / _K
_GROUPS = (-1, 32, 64, 128)  # marlin_utils.py MARLIN_SUPPORTED_GROUP_SIZES
_REPACK = "kernels/jit/csrc/gemm/marlin/gptq_marlin_repack.cuh, at load"
# the kernels that repack for Marlin after loading: (what, where it repacks)
_MARLIN_SITES = {
    "gptq_marlin": ("GPTQ on Marlin", "gptq_kernels.py GPTQMarlinLinearKernel.process_weights_after_loading"),
    "ct_wna16": ("compressed-tensors WNA16 on Marlin",
                 "compressed_tensors_wNa16.py CompressedTensorsWNA16.process_weights_after_loading"),
    "fp8_marlin": ("FP8 on Marlin", "marlin_utils_fp8.py prepare_fp8_layer_for_marlin (FP8 weight-only on Marlin "
                   "below SM 8.9)"),
}
# ModelOpt NVFP4's linear methods by quant_algo, and the ValueError each create_weights raises (module doc)
_NVFP4 = {"NVFP4": "nvfp4", "W4A16_NVFP4": "nvfp4_a16"}
_NVFP4_ERROR = {"nvfp4": ("Unsupported model when in features size is not multiple of 16", "ModelOptFp4LinearMethod"),
                "nvfp4_a16": ("Unsupported model when input feature size is not a multiple of 16",
                              "ModelOptNvFp4A16LinearMethod")}
_TILED = ("gptq_marlin", "ct_wna16")  # their forward's Marlin tile is checked (FP8's is not: module doc)


class Kernel(NamedTuple):
    """How SGLang 0.5.23 serves a checkpoint's linear layers: "gptq_marlin", "ct_wna16", "awq_marlin", "awq",
    "fp8_marlin", "nvfp4" or "nvfp4_a16" (group: the alignment 16 there),
    with the group size and the ints' pack factor (GPTQ / AWQ; compressed-tensors WNA16: its group)."""
    kind: str
    group: int = -1
    pack: int = 1
    act_order: bool = False  # GPTQ desc_act / compressed-tensors actorder "group": scales whole on every rank


def kernel(model, raw: dict, capability: tuple[int, int] | None) -> Kernel | None:
    """The kernel this checkpoint's linears take on a card of `capability` (module doc); None where none of these
    applies, the card is unknown, or the config keeps modules whole (not checked)."""
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from ..configs.quant_online import sglang_method_below_sm80
    from .pre_ampere import served_quantization

    if capability is None or getattr(model, "online_quantization", ""):
        return None
    method = served_quantization(model, sglang_method_below_sm80)
    q = checkpoint_quantization_config(raw) or {}
    if q.get("modules_to_not_convert") or q.get("ignored_layers"):
        return None
    sm = capability[0] * 10 + capability[1]
    if str(sglang_method_below_sm80(q) or "").startswith("modelopt"):
        # the config's method itself (not served_quantization): kvplan sizes no W4A16_NVFP4 weights, whose
        # weight_dtype then stays the float one, yet SGLang serves them quantized
        from .modelopt_config import modelopt, quantized

        mo = modelopt(model, raw, _NVFP4)
        nvfp4 = mo is not None and mo.algo in _NVFP4 and quantized(mo, "mlp.down_proj", range(mo.layers))
        return Kernel(_NVFP4[mo.algo], 16) if nvfp4 else None
    if method == "compressed-tensors" and sm >= 80 and int_weight_only(q):
        return _ct_wna16(q)
    if method in ("fp8", "compressed-tensors"):
        return Kernel("fp8_marlin") if 80 <= sm < 89 and _fp8_weights(q, method) else None
    bits, group = q.get("bits", q.get("w_bit")), q.get("group_size", q.get("q_group_size"))
    if not isinstance(bits, int) or not isinstance(group, int) or bits not in (4, 8):
        return None
    pack = 32 // bits
    if method == "gptq":  # below SM 8.0 engines/sglang_sm7.py refuses it; non-Marlin GPTQ is not modelled
        marlin = (sm >= 80 and q.get("sym") is True and group in _GROUPS and q.get("desc_act") is not None
                  and q.get("checkpoint_format") != "marlin" and not q.get("is_marlin_format"))
        return Kernel("gptq_marlin", group, pack, bool(q.get("desc_act"))) if marlin else None
    if method == "awq":
        # is_awq_marlin_compatible reads "bits" / "group_size" only; AutoAWQ's w_bit / q_group_size reach AWQConfig
        # (get_from_keys(["w_bit", "bits"])) but not Marlin
        marlin = (sm >= 80 and q.get("bits") == 4 and q.get("zero_point") is True and q.get("group_size") in _GROUPS)
        return Kernel("awq_marlin" if marlin else "awq", group, pack)
    return None


def _fp8_weights(q: dict, method: str) -> bool:
    """An fp8 config (Fp8Config), or a compressed-tensors one whose every group stores float 8-bit weights and that
    ignores at most lm_head (each linear then a CompressedTensorsW8A16Fp8 below SM 8.9)."""
    if method == "fp8":
        return True
    groups = ct_groups(q)
    return groups is not None and all(isinstance(g, dict) and isinstance(g.get("weights"), dict)
                                      and g["weights"].get("type") == "float" and g["weights"].get("num_bits") == 8
                                      for g in groups)


def _ct_wna16(q: dict) -> Kernel:
    """CompressedTensorsWNA16's group (compressed_tensors_wNa16.py __init__: group_size, -1 by channel; has_g_idx
    where actorder is "group"), where every config group agrees; else the group is left unknown (-1)."""
    weights = [g["weights"] for g in q["config_groups"].values()]
    groups = {w.get("group_size") if w.get("strategy") == "group" else -1 for w in weights}
    orders = {w.get("actorder") == "group" for w in weights}
    group = groups.pop() if len(groups) == 1 and len(orders) == 1 else -1
    return Kernel("ct_wna16", group if isinstance(group, int) else -1, act_order=orders.pop() if group != -1 else False)


class Linear(NamedTuple):
    """One linear layer as SGLang builds it on a rank: its name, the input and output a rank and whole."""
    name: str
    k: int
    n: int
    k_full: int
    n_full: int


def mlp_linears(cls: str, width: int, hidden: int, group: int) -> tuple[Linear, Linear]:
    """An MLP's MergedColumnParallelLinear gate_up_proj ([width] x 2 out, split) and RowParallelLinear down_proj
    (width in, split) over `group` GPUs (TP divides width: sglang_widths checked it first)."""
    return (Linear(f"{cls}.gate_up_proj", hidden, 2 * width // group, hidden, 2 * width),
            Linear(f"{cls}.down_proj", width // group, hidden, width, hidden))


def _per_rank(lin: Linear) -> str:
    return f"{lin.name}: {lin.k:,} in x {lin.n:,} out a rank"


def build_error(kern: Kernel, lin: Linear) -> str | None:
    """The error SGLang raises while building this linear (create_weights), None where it builds."""
    g = kern.group
    if kern.kind in _NVFP4_ERROR:
        message, cls = _NVFP4_ERROR[kern.kind]
        return (f"ModelOpt NVFP4: '{message}' ({_per_rank(lin)}, {lin.k:,} not a multiple of 16; modelopt_quant.py "
                f"{cls}.create_weights)") if lin.k % g else None
    if kern.kind == "awq_marlin":
        whole_ok = (lin.n_full % MIN_THREAD_N == 0 and lin.k_full % MIN_THREAD_K == 0
                    and not (0 < g < lin.k_full and lin.k_full % g))
        if whole_ok:  # AWQMarlinLinearScheme.create_weights -> verify_marlin_supports_shape, on the rank's sizes
            if lin.n % MIN_THREAD_N:
                why = (f"'Weight output_size_per_partition = {lin.n} is not divisible by  min_thread_n = "
                       f"{MIN_THREAD_N}.'")
            elif lin.k % MIN_THREAD_K:
                why = f"'Weight input_size_per_partition = {lin.k} is not divisible by min_thread_k = {MIN_THREAD_K}.'"
            elif 0 < g < lin.k_full and lin.k % g:
                why = f"'Weight input_size_per_partition = {lin.k} is not divisible by group_size = {g}.'"
            else:
                return None
            return (f"AWQ on Marlin: {why} ({_per_rank(lin)}; the whole layer passed check_marlin_supports_layer in "
                    "awq/awq.py AWQMarlinConfig.get_quant_method, so no fallback; awq/schemes/awq_marlin.py "
                    "AWQMarlinLinearScheme.create_weights, marlin_utils.py verify_marlin_supports_shape)")
    if kern.kind == "ct_wna16" and g > 0 and not kern.act_order and lin.k % g:
        # create_weights: partition_scales (no g_idx, grouped) -> a bare assert
        return (f"compressed-tensors WNA16: AssertionError 'assert input_size_per_partition % group_size == 0' "
                f"({_per_rank(lin)}, {lin.k:,} not a multiple of group_size {g}; compressed_tensors_wNa16.py "
                "CompressedTensorsWNA16.create_weights)")
    if kern.kind in ("awq", "awq_marlin"):  # plain AWQ, or awq_marlin's fallback for a whole layer Marlin refuses
        if g > 0 and lin.k % g:
            why = (f"'The input size is not aligned with the quantized weight shape.' ({lin.k:,} inputs a rank, not a "
                   f"multiple of group_size {g}")
        elif lin.n % kern.pack:
            why = (f"'The output size is not aligned with the quantized weight shape.' ({lin.n:,} outputs a rank, "
                   f"not a multiple of the pack factor {kern.pack}")
        else:
            return None
        return f"AWQ: {why}: {lin.name}; awq/schemes/awq_linear.py AWQLinearScheme.create_weights)"
    return None


def repack_error(kern: Kernel, lin: Linear) -> str | None:
    """The RuntimeError gptq_marlin_repack raises for this linear once the weights are loaded (gptq_marlin,
    fp8_marlin), None where it repacks."""
    if kern.kind not in _MARLIN_SITES:
        return None
    if lin.k % TILE_K:
        why = f"'size_k = {lin.k} is not divisible by tile_k_size = {TILE_K}'"
    elif lin.n % TILE_N:
        why = f"'size_n = {lin.n} is not divisible by tile_n_size = {TILE_N}'"
    else:
        return None
    what, site = _MARLIN_SITES[kern.kind]
    return f"{what}: {why} ({_per_rank(lin)}; {site} -> {_REPACK})"


# SGLang runs forwards before it serves: the decode CUDA graph capture (model_runner_components/cuda_graph_setup.py
# capture_cuda_graphs -> capture_decode_graph) and, without it, the server's warmup request (entrypoints/
# http_server.py _execute_server_warmup: "Initialization failed. warmup error", kill_process_tree)
_FIRST_FORWARD = "at start-up's first forward (decode CUDA graph capture, else the server warmup request)"


def forward_error(kern: Kernel, lin: Linear) -> str | None:
    """GPTQ on Marlin: the scales a rank do not split its input into whole groups, or no thread tile of
    gptq_marlin.cuh divides the layer a rank (module doc); None where the gemm runs."""
    if kern.kind not in _TILED:
        return None
    g, what = kern.group, _MARLIN_SITES[kern.kind][0]
    groups = lin.k // g if g > 0 and not kern.act_order else 0
    if kern.kind == "gptq_marlin" and lin.k % g and groups > 1 and lin.k % groups:
        # gptq_marlin.py create_weights gives a rank input_size_per_partition // group_size scale rows (no desc_act);
        # gptq_marlin.cuh gptq_marlin_gemm derives group_size = size_k / num_groups before any thread tile
        return (f"{what}: 'size_k = {lin.k}, is not divisible by num_groups = {groups}' {_FIRST_FORWARD} "
                f"({_per_rank(lin)}, {lin.k:,} not a multiple of group_size {g}: {groups} scale groups a rank, "
                "gptq/schemes/gptq_marlin.py GPTQMarlinLinearScheme.create_weights; kernels/jit/csrc/gemm/marlin/"
                "gptq_marlin.cuh gptq_marlin_gemm)")
    if (lin.k % 64 == 0 and lin.n % 128 == 0) or (lin.k % 128 == 0 and lin.n % 64 == 0):
        return None
    return (f"{what}: 'Invalid thread config' {_FIRST_FORWARD} ({_per_rank(lin)}: no Marlin tile "
            "(thread_k, thread_n) of (128, 128), (64, 128), (128, 64), (64, 256) divides it; "
            "kernels/jit/csrc/gemm/marlin/gptq_marlin.cuh is_valid_config, small_batch_thread_configs / "
            "large_batch_thread_configs)")


def refusal(kern: Kernel | None, linears: list[Linear]) -> str | None:
    """The first failure over `linears` in build order: a build error, else (after every layer is built and loaded)
    a repack error, else a forward one."""
    if kern is None:
        return None
    for check in (build_error, repack_error, forward_error):
        for lin in linears:
            why = check(kern, lin)
            if why:
                return why
    return None


__all__ = ["Kernel", "Linear", "kernel", "mlp_linears", "refusal"]
