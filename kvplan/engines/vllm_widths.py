"""The text model's widths vLLM 0.34 cannot split at a TP size: the MLP, the routed experts and the FP8 blocks,
refused in one line (`kvplan estimate --engine vllm`: engines/vllm.py simulate; `kvplan fit`: fit/search.py _screen).
The vision towers' widths are engines/vllm_vision_refusal.py's; the attention heads fit/grid.py split_reason's. Read in
the vllm 0.34.0 wheel (vllm/model_executor/...):

- Dense MLP (_DENSE, by the config's model_type): llama.py LlamaMLP (which mistral.py's MistralMLP copies, phi3.py's
  Phi3ForCausalLM and glm4.py's Glm4MLP reuse), qwen2.py Qwen2MLP (qwen3.py Qwen3MLP; qwen2_vl.py / qwen2_5_vl.py
  build their text model as Qwen2ForCausalLM), gemma2.py Gemma2MLP, gemma3.py Gemma3MLP build gate_up_proj as a
  MergedColumnParallelLinear of [intermediate_size] x 2 and down_proj as a RowParallelLinear of intermediate_size
  (config.intermediate_size). layers/linear.py MergedColumnParallelLinear.__init__ asserts every output size %
  tp_size == 0 (a bare AssertionError) before ColumnParallelLinear divides it (distributed/utils.py divide); the
  dense layers of DeepSeek-V2/V3 and GLM-4.5 (deepseek_v2.py DeepseekV2MLP, glm4_moe.py Glm4MoeMLP below
  first_k_dense_replace) the same, and they come before any MoE layer.
- Routed experts: fused_moe/config.py FusedMoEConfig.__post_init__ asserts intermediate_size % tp_size == 0, where
  tp_size is FusedMoEParallelConfig.make's: the --tp flattened over --data-parallel-size
  (flatten_tp_across_dp_and_pcp) without --enable-expert-parallel, 1 with it ("each device owns a set of experts
  fully"): under EP the experts are whole, no split. The expert width is moe_intermediate_size, else
  intermediate_size (Mixtral), as engines/vllm_moe_workspace.py moe_shape reads it. Shared experts and the MoE
  models' other widths are not checked.
- FP8 block quantization (a checkpoint served by fp8.py Fp8Config with weight_block_size [block_n, block_k]):
  Fp8LinearMethod.create_weights calls quantization/utils/fp8_utils.py validate_fp8_block_shape. A row-parallel
  down_proj whose input per rank is not a multiple of block_k fails ("Weight input_size_per_partition = N is not
  divisible by weight quantization block_k = K."); the merged gate_up_proj does not (linear.py
  ColumnParallelLinear._maybe_allow_fp8_block_shape_mismatch skips the check for a layer with several output
  partitions any of which block_n does not divide). The experts: Fp8MoEMethod.__init__ asks fused_moe/oracle/fp8.py
  resolve_fp8_moe_weight_block_shape, which under the default --moe-backend auto (config/kernel.py) refines the
  blocks (refine_fp8_moe_block_shape: gcd(block_n, block_k, intermediate per rank, hidden_size), kept where >= 32:
  Triton kernels take it) where the intermediate per rank is not a multiple of the blocks; where no refinement is
  possible Fp8MoEMethod.create_weights calls validate_fp8_block_shape_moe, which fails ("The output_size of gate's
  and up's weight = N is not divisible by weight quantization block_n = 128.", then down's against block_k when
  tp_size > 1). Padding the shard to whole blocks (pad_tp_shard_to_weight_blocks) runs only under an explicit
  --moe-backend: not modelled. Read in 0.34 only: applied to 0.34 plans; not to a config with ignored_layers /
  modules_to_not_convert (Fp8Config.get_quant_method serves those modules unquantized) or store_dtype (other experts).

Not refused, and why: GPTQ / AWQ (auto_gptq.py AutoGPTQLinearMethod, auto_awq.py AutoAWQMarlinLinearMethod) choose a
kernel in kernels/linear/__init__.py choose_mp_linear_kernel: Marlin refuses an input per rank that its group size
does not divide (mixed_precision/marlin.py can_implement), but the list ends in mixed_precision/humming.py
HummingLinearKernel, whose can_implement accepts any 16-bit-activation layer on CUDA SM 7.5+ (humming-kernels is a
dependency of the 0.34 wheel, METADATA) and pads K to 128 (quantization/utils/humming/linear.py): the older
releases' "input size is not aligned with the quantized weight shape" (gptq.py) and Marlin's "min_thread_k" refusals
are gone from 0.34, and whether a group straddling two ranks then loads right is in humming-kernels, not in the wheel.
The FP8 Marlin fallback below SM 8.9 falls through the same way (_POSSIBLE_FP8_BLOCK_KERNELS: Humming, Triton after
Marlin). compressed-tensors, ModelOpt and online --quantization schemes are not checked (not read). SGLang has its own
rules (not read here): this applies under --engine vllm only.
"""

from __future__ import annotations

from .fp8_blocks import config_int as _int, fp8_block
from .vision_heads import undivides

# model_type -> vLLM 0.34's module of the dense MLP (gate_up_proj MergedColumnParallelLinear, down_proj
# RowParallelLinear) of config.intermediate_size, every layer
_DENSE = {
    "llama": "llama.py LlamaMLP", "mistral": "mistral.py MistralMLP", "phi3": "phi3.py's llama.py LlamaMLP",
    "glm4": "glm4.py Glm4MLP (llama.py LlamaMLP)", "qwen2": "qwen2.py Qwen2MLP", "qwen3": "qwen3.py Qwen3MLP (Qwen2MLP)",
    "qwen2_vl": "qwen2_vl.py's qwen2.py Qwen2MLP", "qwen2_5_vl": "qwen2_5_vl.py's qwen2.py Qwen2MLP",
    "gemma2": "gemma2.py Gemma2MLP", "gemma3_text": "gemma3.py Gemma3MLP", "gemma3": "gemma3_mm.py's gemma3.py Gemma3MLP",
}
# MoE model_type -> the module of its dense layers (those below first_k_dense_replace), built before the MoE layers
_DENSE_FIRST = {"deepseek_v2": "deepseek_v2.py DeepseekV2MLP", "deepseek_v3": "deepseek_v2.py DeepseekV2MLP",
                "glm4_moe": "glm4_moe.py Glm4MoeMLP"}
READ_IN = "0.34"
HINT = "choose a --tp that gives each rank a whole share of the width the line names (FP8 blocks: a multiple of the block)"


def _dense(model_type: str, raw: dict, tp: int, block) -> str | None:
    cls = _DENSE.get(model_type) or (_DENSE_FIRST.get(model_type) if (_int(raw, "first_k_dense_replace") or 0) > 0
                                     else None)
    width = _int(raw, "intermediate_size") if cls else None
    if width is None:
        return None
    if undivides(width, tp):
        return (f"vLLM 0.34 splits the MLP intermediate_size of {width:,} over TP {tp}, which does not divide it "
                f"({width:,} % {tp} = {width % tp}: {cls}.gate_up_proj; layers/linear.py "
                "MergedColumnParallelLinear.__init__ asserts every output size % tp_size == 0)")
    if block is not None and (width // tp) % block[1]:
        return (f"vLLM 0.34 splits the FP8 {block[0]}x{block[1]}-block MLP down_proj ({cls}) into {width // tp:,} "
                f"inputs a rank ({width:,} / {tp}), not a multiple of block_k: 'Weight input_size_per_partition = "
                f"{width // tp} is not divisible by weight quantization block_k = {block[1]}.' "
                "(quantization/utils/fp8_utils.py validate_fp8_block_shape, from fp8.py Fp8LinearMethod.create_weights)")
    return None


def _experts(model, raw: dict, split: int, tp: int, block) -> str | None:
    from ..capacity.experts import is_moe
    from .vllm_moe_workspace import moe_shape

    shape = moe_shape(raw) if is_moe(model) else None
    if shape is None:
        return None
    width = shape.intermediate
    if undivides(width, split):
        over = f"TP {tp}" if split == tp else f"TP {tp} x DP {split // tp} (no --ep)"
        return (f"vLLM 0.34 splits each routed expert's intermediate size of {width:,} over {over}, which does not "
                f"divide it ({width:,} % {split} = {width % split}: fused_moe/config.py FusedMoEConfig.__post_init__ "
                "asserts intermediate_size % tp_size == 0; under --enable-expert-parallel the experts are whole)")
    if block is None:
        return None
    import math

    per_rank, (block_n, block_k) = width // split, block
    aligned = per_rank % block_n == 0 and (split == 1 or per_rank % block_k == 0)
    if aligned or math.gcd(block_n, block_k, per_rank, shape.hidden) >= 32:  # refine_fp8_moe_block_shape
        return None
    which = (f"'The output_size of gate's and up's weight = {per_rank} is not divisible by weight quantization "
             f"block_n = {block_n}.'" if per_rank % block_n else
             f"'The input_size of down's weight = {per_rank} is not divisible by weight quantization block_k = "
             f"{block_k}.'")
    return (f"vLLM 0.34 splits the FP8 {block_n}x{block_k}-block experts' intermediate size of {width:,} into "
            f"{per_rank:,} a rank, which no block refinement fits (gcd({block_n}, {block_k}, {per_rank}, hidden "
            f"{shape.hidden}) = {math.gcd(block_n, block_k, per_rank, shape.hidden)} < 32: fused_moe/oracle/fp8.py "
            f"refine_fp8_moe_block_shape): {which} (fp8_utils.py validate_fp8_block_shape_moe, from fp8.py "
            "Fp8MoEMethod.create_weights)")


def refusal(model, tp: int, dp: int = 1, ep: bool = False, version: str | None = None) -> str | None:
    """Why vLLM fails to build this text model at --tp tp (--data-parallel-size dp, --enable-expert-parallel ep): its
    dense MLP, then its routed experts (module doc); None where it builds them, or nothing is checked. The FP8
    block rules are applied to vLLM 0.34 (version None: the latest) only."""
    from .vllm_load import raw_config
    from .vllm_rules import TP_REPLICATED

    raw = raw_config(model) if tp * dp > 1 else None
    if not raw or raw.get("model_type") in TP_REPLICATED:  # built whole on every rank (ZAYA1: zaya.py)
        return None
    from ..configs.quant_online import vllm_method

    block = fp8_block(model, raw, vllm_method) if (version or READ_IN).startswith(READ_IN) else None
    model_type = str(raw.get("model_type") or "")
    why = ((_dense(model_type, raw, tp, block) if tp > 1 else None)
           or _experts(model, raw, 1 if ep else tp * dp, tp, block))
    return f"--tp {tp} with --engine vllm: {why}" if why else None


def check(model, tp: int, dp: int = 1, ep: bool = False, version: str | None = None) -> None:
    """Raise the refusal line where vLLM fails to build the text model at this split."""
    from ..errors import UsageError

    why = refusal(model, tp, dp, ep, version)
    if why:
        raise UsageError(why, HINT + (", or add --ep for the experts" if "routed expert" in why else ""))


__all__ = ["check", "refusal"]
