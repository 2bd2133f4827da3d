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
  intermediate_size (Mixtral), as engines/vllm_moe_workspace.py moe_shape reads it.
- Shared experts (_SHARED): a dense MLP (MergedColumnParallelLinear gate_up_proj, RowParallelLinear down_proj) over
  the TP group, built before the layer's FusedMoE: deepseek_v2.py DeepseekV2MoE.shared_experts and glm4_moe.py
  Glm4MoE.shared_experts of moe_intermediate_size x n_shared_experts, qwen2_moe.py / qwen3_moe.py /
  qwen3_next.py shared_expert of shared_expert_intermediate_size, step3p5.py FusedMoEBlock.share_expert of
  share_expert_dim. DeepseekV2MLP and qwen3_next.py's get disable_tp=is_sequence_parallel (config/parallel.py
  use_sequence_parallel_moe): whole under --ep with tp > 1 and dp > 1 (capacity/experts.py shared_whole) under
  an --all2all-backend of SEQUENCE_PARALLEL_BACKENDS (vLLM's default among them); another keeps them split;
  the others always split. Not modelled: AITER's fused shared experts (ROCm: fused_moe/utils.py
  resolve_layer_fused_shared_expert), Qwen3-Next's replicated misaligned Quark OCP MX shared expert.
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
- compressed-tensors block FP8 (_ct_block: every config group float 8-bit, strategy "block"; ignore at most
  lm_head): compressed_tensors_w8a8_fp8.py CompressedTensorsW8A8Fp8.create_weights (CompressedTensorsW8A16Fp8 below
  SM 8.9 alike) calls validate_fp8_block_shape, and linear.py _maybe_allow_fp8_block_shape_mismatch reads
  quant_config.weight_block_size, which CompressedTensorsConfig has not: the merged gate_up_proj's outputs a rank
  must be a multiple of block_n too ("Weight output_partition_size = N is not divisible by weight quantization
  block_n = K."). Its experts: compressed_tensors_moe_w8a8_fp8.py CompressedTensorsW8A8Fp8MoEMethod.create_weights
  calls validate_fp8_block_shape_moe with no refinement (down against block_k where the TP world size > 1).

Not refused, and why: GPTQ / AWQ (auto_gptq.py AutoGPTQLinearMethod, auto_awq.py AutoAWQMarlinLinearMethod) choose a
kernel in kernels/linear/__init__.py choose_mp_linear_kernel: Marlin refuses an input per rank that its group size
does not divide (mixed_precision/marlin.py can_implement), but the list ends in mixed_precision/humming.py
HummingLinearKernel, whose can_implement accepts any 16-bit-activation layer on CUDA SM 7.5+ (humming-kernels is a
dependency of the 0.34 wheel, METADATA) and pads K to 128 (quantization/utils/humming/linear.py): the older
releases' "input size is not aligned with the quantized weight shape" (gptq.py) and Marlin's "min_thread_k" refusals
are gone from 0.34, and whether a group straddling two ranks then loads right is in humming-kernels, not in the wheel.
The FP8 Marlin fallback below SM 8.9 falls through the same way (_POSSIBLE_FP8_BLOCK_KERNELS: Humming, Triton after
Marlin). MXFP4 (gpt-oss: mxfp4.py GptOssMxfp4MoEMethod / Mxfp4MoEMethod.maybe_roundup_sizes, fused_moe/oracle/
mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size) rounds the experts' width a rank up; its linear layers
are unquantized. compressed-tensors NVFP4 (compressed_tensors_w4a4_nvfp4.py create_weights) checks no alignment.

- ModelOpt (_modelopt: a config vLLM names modelopt / modelopt_fp4 / modelopt_mxfp8): modelopt.py
  ModelOptLinearMethod.create_weights hands a linear layer's input per rank to the weight scheme resolve() picks
  by quant_algo (_MODELOPT_LINEAR): KNvfp4Static (NVFP4, W4A16_NVFP4) 16, KFp8Block128 (FP8_PB_WO) 128,
  KMxfp8Static (MXFP8) 32, each a ValueError. The row-parallel layers are split by input: the dense and shared
  experts' down_proj and, in _O_PROJ's families, the attention's o_proj (built before the MLP). MXFP8's routed
  experts: ModelOptMxFp8FusedMoE.create_weights (intermediate_size_per_partition % 32), unless moe_quant_algo NVFP4.
  A module the exclude list names is served unquantized (is_layer_excluded), unchecked. Not modelled: FP8 per
  tensor / channel (no alignment), MIXED_PRECISION, NVFP4 experts (ModelOptNvFp4FusedMoE.create_weights checks
  nothing; the MoE backends pad or check by kernel and card, not read), FP8_PB_WO experts, other families' o_proj.

Not checked: compressed-tensors' other schemes, online --quantization, the attention projections' FP8 blocks.
Families not in _DENSE: OLMo 2, StarCoder2, StableLM have no 0.34 model file (Transformers backend, not read);
falcon.py FalconMLP (4 x hidden) and the ColumnParallelLinear up_proj of apertus.py / nemotron.py are not listed.
SGLang has its own rules (not read here): this applies under --engine vllm only.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from .fp8_blocks import config_int as _int, fp8_block
from .vision_heads import undivides

# model_type -> vLLM 0.34's module of the dense MLP (gate_up_proj MergedColumnParallelLinear, down_proj
# RowParallelLinear) of config.intermediate_size, every layer
_DENSE = {
    "llama": "llama.py LlamaMLP", "mistral": "mistral.py MistralMLP", "phi3": "phi3.py's llama.py LlamaMLP",
    "glm4": "glm4.py Glm4MLP (llama.py LlamaMLP)", "qwen2": "qwen2.py Qwen2MLP", "qwen3": "qwen3.py Qwen3MLP (Qwen2MLP)",
    "qwen2_vl": "qwen2_vl.py's qwen2.py Qwen2MLP", "qwen2_5_vl": "qwen2_5_vl.py's qwen2.py Qwen2MLP",
    "gemma2": "gemma2.py Gemma2MLP", "gemma3_text": "gemma3.py Gemma3MLP", "gemma3": "gemma3_mm.py's gemma3.py Gemma3MLP",
    "mistral3": "mistral3.py's text_config model (mistral.py MistralMLP)", "ministral3": "mistral.py MistralMLP",
    "exaone": "exaone.py ExaoneGatedMLP", "exaone4": "exaone4.py Exaone4GatedMLP", "granite": "granite.py GraniteMLP",
    "cohere": "commandr.py CohereMLP", "cohere2": "commandr.py CohereMLP", "internlm2": "internlm2.py InternLM2MLP",
    "internlm3": "llama.py LlamaMLP (InternLM3ForCausalLM)", "ernie4_5": "ernie45.py's llama.py LlamaMLP",
    "solar": "solar.py SolarMLP", "orion": "orion.py OrionMLP",
}
# MoE model_type -> the module of its dense layers (those below first_k_dense_replace), built before the MoE layers
_DENSE_FIRST = {"deepseek_v2": "deepseek_v2.py DeepseekV2MLP", "deepseek_v3": "deepseek_v2.py DeepseekV2MLP",
                "glm4_moe": "glm4_moe.py Glm4MoeMLP", "deepseek": "deepseek_v2.py DeepseekV2MLP"}
# MoE model_type -> (the module of its shared experts, a MergedColumnParallelLinear gate_up_proj and RowParallelLinear
# down_proj over the TP group, and the config field of their width; "n_shared_experts": moe_intermediate_size x
# n_shared_experts, one merged MLP). AITER's fused shared experts (ROCm) are not modelled.
_SHARED = {
    "deepseek_v2": ("deepseek_v2.py DeepseekV2MoE.shared_experts (DeepseekV2MLP)", "n_shared_experts"),
    "deepseek_v3": ("deepseek_v2.py DeepseekV2MoE.shared_experts (DeepseekV2MLP)", "n_shared_experts"),
    "deepseek": ("deepseek_v2.py DeepseekV2MoE.shared_experts (DeepseekV2MLP)", "n_shared_experts"),
    "glm4_moe": ("glm4_moe.py Glm4MoE.shared_experts (Glm4MoeMLP)", "n_shared_experts"),
    "qwen2_moe": ("qwen2_moe.py Qwen2MoeSparseMoeBlock.shared_expert (Qwen2MoeMLP)", "shared_expert_intermediate_size"),
    "qwen3_moe": ("qwen3_moe.py Qwen3MoeSparseMoeBlock.shared_expert (Qwen3MoeMLP)", "shared_expert_intermediate_size"),
    "qwen3_next": ("qwen3_next.py Qwen3NextSparseMoeBlock.shared_expert (Qwen2MoeMLP)",
                   "shared_expert_intermediate_size"),
    "step3p5": ("step3p5.py FusedMoEBlock.share_expert (Step3p5MLP)", "share_expert_dim"),
}
# where each block check is made: the FP8 method's, compressed-tensors' (no merged-layer allowance, no MoE refinement)
_FP8_SITE = "fp8.py Fp8LinearMethod.create_weights"
_CT_SITE = "compressed_tensors_w8a8_fp8.py CompressedTensorsW8A8Fp8.create_weights"
# ModelOpt's linear layers (modelopt.py ModelOptLinearMethod.create_weights -> the weight scheme resolve() picks by
# quant_algo): quant_algo -> (the scheme, the multiple it needs of a layer's input per rank, the ValueError it raises)
_NVFP4_IN = ("KNvfp4Static", 16, "Unsupported model when in features size is not multiple of 16")
_MODELOPT_LINEAR = {"NVFP4": _NVFP4_IN, "W4A16_NVFP4": _NVFP4_IN,
                    "FP8_PB_WO": ("KFp8Block128", 128, "FP8_PB_WO requires in divisible by 128, got {n}"),
                    "MXFP8": ("KMxfp8Static", 32, "MXFP8 requires input size divisible by 32, got {n}")}
# model_type -> vLLM 0.34's attention whose o_proj is a RowParallelLinear of total_num_heads x head_dim (head_dim:
# the config's, else hidden / heads; qwen2.py always hidden / heads)
_O_PROJ = {"llama": "llama.py LlamaAttention.o_proj", "qwen2": "qwen2.py Qwen2Attention.o_proj",
           "qwen3": "qwen3.py Qwen3Attention.o_proj"}
READ_IN = "0.34"
HINT = "choose a --tp that gives each rank a whole share of the width the line names (FP8 blocks: a multiple of the block)"


def _ct_block(model, raw: dict) -> tuple[int, int] | None:
    """(block_n, block_k) of a compressed-tensors checkpoint whose every config group is FP8 block-wise
    (compressed_tensors.py _is_fp8_w8a8: float 8-bit weights, static, symmetric, strategy "block" with a
    block_structure; CompressedTensorsW8A8Fp8 at SM 8.9+, CompressedTensorsW8A16Fp8 below, both validate it) and
    ignores at most lm_head; None otherwise (other schemes, or modules kept whole: not checked)."""
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from ..configs.quant_online import vllm_method
    from .pre_ampere import served_quantization

    if served_quantization(model, vllm_method) != "compressed-tensors":
        return None
    q = checkpoint_quantization_config(raw) or {}
    groups = q.get("config_groups")
    if not isinstance(groups, dict) or not groups or not set(q.get("ignore") or []) <= {"lm_head"}:
        return None
    blocks = set()
    for group in groups.values():
        w = group.get("weights") if isinstance(group, dict) else None
        shape = w.get("block_structure") if isinstance(w, dict) else None
        if (not isinstance(shape, list) or len(shape) != 2 or w.get("strategy") != "block" or w.get("type") != "float"
                or w.get("num_bits") != 8 or w.get("dynamic") or not all(
                    isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in shape)):
            return None
        blocks.add(tuple(shape))
    return blocks.pop() if len(blocks) == 1 else None


class _ModelOpt(NamedTuple):
    """A ModelOpt checkpoint's linear scheme (_MODELOPT_LINEAR) and what its config leaves unquantized."""
    algo: str
    scheme: str
    align: int
    message: str
    excluded: Callable[[str], bool]
    layers: int
    mxfp8_experts: bool  # modelopt.py ModelOptMxFp8FusedMoE serves the routed experts


def _modelopt(model, raw: dict) -> _ModelOpt | None:
    """The ModelOpt scheme vLLM 0.34 serves this checkpoint's linear layers with (a config ModelOptFp8Config /
    ModelOptNvFp4Config / ModelOptMxFp8Config builds, by quant_algo: NVFP4 / W4A16_NVFP4, FP8_PB_WO, MXFP8); None
    for another method, another algo (FP8 per tensor or per channel: no alignment), MIXED_PRECISION (per-layer
    algos, not read) or an exclusion list kvplan cannot match (single experts)."""
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from ..configs.quant_bytes import Unsized
    from ..configs.quant_exclude import MODELOPT, Matcher
    from ..configs.quant_online import vllm_method

    # the config's method itself, not pre_ampere.py served_quantization: kvplan sizes no FP8_PB_WO weights (its
    # weight_dtype stays the float one), which vLLM still serves quantized
    q = checkpoint_quantization_config(raw) or {}
    if (getattr(model, "online_quantization", "") or vllm_method(q, str(raw.get("model_type") or ""))
            not in ("modelopt", "modelopt_fp4", "modelopt_mxfp8")):
        return None
    inner = q["quantization"] if isinstance(q.get("quantization"), dict) else None
    algo = str((inner or q).get("quant_algo") or "").upper()
    # ModelOptQuantConfigBase.from_config: hf_quant_config.json's exclude_modules, else config.json's ignore
    names = inner.get("exclude_modules", []) if inner is not None else q.get("ignore", q.get("exclude_modules", []))
    if algo not in _MODELOPT_LINEAR or not isinstance(names, list):
        return None
    names = tuple(str(n) for n in names)
    try:
        matcher = Matcher(MODELOPT, names)
    except Unsized:
        return None

    def excluded(name: str) -> bool:  # is_layer_excluded: wildcards, and the substring match older exports need
        return matcher(name) or any(n in name for n in names)

    # ModelOptMxFp8Config: experts stored NVFP4 (moe_quant_algo, read from the "quantization" layout) go elsewhere
    moe = str((inner or {}).get("moe_quant_algo") or "").upper()
    return _ModelOpt(algo, *_MODELOPT_LINEAR[algo], excluded, _int(raw, "num_hidden_layers") or 1,
                     algo == "MXFP8" and moe != "NVFP4")


# the module names a layer's modules take in a text model and in a multimodal model's language model
_LAYER_PREFIXES = ("model.layers", "language_model.model.layers", "model.language_model.layers")


def _quantized(mo: _ModelOpt, module: str, layers: range) -> bool:
    """Whether ModelOpt quantizes `module` (model.layers.<i>.<module>) in some layer of `layers`: an excluded one is
    served unquantized (ModelOptQuantConfigBase.get_quant_method: UnquantizedLinearMethod), unchecked; a layer any
    spelling of whose name is excluded counts as excluded."""
    return any(not any(mo.excluded(f"{pre}.{i}.{module}") for pre in _LAYER_PREFIXES) for i in layers)


def _modelopt_row(mo: _ModelOpt, part: str, cls: str, width: int, tp: int, module: str, layers: range) -> str | None:
    """Why ModelOpt's weight scheme refuses a RowParallelLinear of input `width` split over TP tp."""
    per_rank = width // tp
    if per_rank % mo.align == 0 or not _quantized(mo, module, layers):
        return None
    return (f"vLLM 0.34 splits the ModelOpt {mo.algo} {part} ({cls}) into {per_rank:,} inputs a rank ({width:,} / "
            f"{tp}), not a multiple of {mo.align}: '{mo.message.format(n=per_rank)}' (quantization/modelopt.py "
            f"{mo.scheme}.create_weights, from ModelOptLinearMethod.create_weights)")


def _o_proj(model_type: str, raw: dict, tp: int, mo: _ModelOpt | None) -> str | None:
    """The attention's o_proj (_O_PROJ) under ModelOpt, built before the layer's MLP; a head count TP does not
    divide is fit/grid.py split_reason's."""
    cls = _O_PROJ.get(model_type) if mo else None
    heads, hidden = _int(raw, "num_attention_heads"), _int(raw, "hidden_size")
    if cls is None or not heads or not hidden or undivides(heads, tp):
        return None
    head_dim = hidden // heads if model_type == "qwen2" else (_int(raw, "head_dim") or hidden // heads)
    return _modelopt_row(mo, "attention o_proj", cls, heads * head_dim, tp, "self_attn.o_proj", range(mo.layers))


def _split_mlp(what: str, cls: str, width: int, tp: int, block, site: str, mo=None) -> str | None:
    """Why a MergedColumnParallelLinear gate_up_proj / RowParallelLinear down_proj pair of `width` fails at TP tp
    (module doc); site: the quantization method that validates the FP8 blocks (_FP8_SITE, _CT_SITE); mo: a ModelOpt
    checkpoint's (_ModelOpt, the down_proj's module name under the layer, the layers that have it)."""
    if undivides(width, tp):
        return (f"vLLM 0.34 splits the {what} of {width:,} over TP {tp}, which does not divide it "
                f"({width:,} % {tp} = {width % tp}: {cls}.gate_up_proj; layers/linear.py "
                "MergedColumnParallelLinear.__init__ asserts every output size % tp_size == 0)")
    part = what.split(" intermediate")[0]
    if mo is not None:
        return _modelopt_row(mo[0], f"{part} down_proj", cls, width, tp, mo[1], mo[2])
    if block is None:
        return None
    per_rank = width // tp
    if site == _CT_SITE and per_rank % block[0]:  # no weight_block_size on CompressedTensorsConfig: no allowance
        return (f"vLLM 0.34 splits the FP8 {block[0]}x{block[1]}-block {part} gate_up_proj ({cls}) into "
                f"{per_rank:,} outputs a rank ({width:,} / {tp}), not a multiple of block_n: 'Weight "
                f"output_partition_size = {per_rank} is not divisible by weight quantization block_n = {block[0]}.' "
                f"(quantization/utils/fp8_utils.py validate_fp8_block_shape, from {site}; linear.py "
                "_maybe_allow_fp8_block_shape_mismatch reads a weight_block_size compressed-tensors' config lacks)")
    if per_rank % block[1]:
        return (f"vLLM 0.34 splits the FP8 {block[0]}x{block[1]}-block {part} down_proj ({cls}) into {per_rank:,} "
                f"inputs a rank ({width:,} / {tp}), not a multiple of block_k: 'Weight input_size_per_partition = "
                f"{per_rank} is not divisible by weight quantization block_k = {block[1]}.' "
                f"(quantization/utils/fp8_utils.py validate_fp8_block_shape, from {site})")
    return None


def _dense(model_type: str, raw: dict, tp: int, block, site: str = _FP8_SITE,
           mo: _ModelOpt | None = None) -> str | None:
    first = _int(raw, "first_k_dense_replace") or 0
    cls = _DENSE.get(model_type) or (_DENSE_FIRST.get(model_type) if first > 0 else None)
    width = _int(raw, "intermediate_size") if cls else None
    rows = (mo, "mlp.down_proj", range(first if model_type in _DENSE_FIRST else mo.layers)) if mo else None
    return None if width is None else _split_mlp("MLP intermediate_size", cls, width, tp, block, site, rows)


def _shared(model, model_type: str, raw: dict, tp: int, dp: int, ep: bool, block, site: str,
            a2a: str | None = None, mo: _ModelOpt | None = None) -> str | None:
    """The shared experts (_SHARED), split over the TP group as a dense MLP; whole on every rank (disable_tp) under
    the sequence-parallel MoE of the classes that pass it (capacity/experts.py shared_whole), which the all2all
    backend `a2a` runs only where it is one of SEQUENCE_PARALLEL_BACKENDS (None: vLLM's default, which is)."""
    from ..capacity.experts import SEQUENCE_PARALLEL_BACKENDS, shared_whole

    cls, field = _SHARED.get(model_type, (None, None))
    if cls is None or (shared_whole(model, dp, ep, tp) and (a2a is None or a2a in SEQUENCE_PARALLEL_BACKENDS)):
        return None
    if field == "n_shared_experts":
        count, expert = _int(raw, "n_shared_experts"), _int(raw, "moe_intermediate_size")
        width = count * expert if count and expert else None
    else:
        width = _int(raw, field)
    # the module's name: the attribute _SHARED names (DeepseekV2MoE.shared_experts -> mlp.shared_experts.down_proj)
    rows = (mo, f"mlp.{cls.split('.')[2].split(' ')[0]}.down_proj", range(mo.layers)) if mo else None
    return None if width is None else _split_mlp("shared experts' intermediate size", cls, width, tp, block, site,
                                                 rows)


def _experts(model, raw: dict, split: int, tp: int, block, site: str = _FP8_SITE,
             mo: _ModelOpt | None = None) -> str | None:
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
    if mo is not None and mo.mxfp8_experts and (width // split) % 32 and _quantized(mo, "mlp.experts",
                                                                                    range(mo.layers)):
        return (f"vLLM 0.34 splits the ModelOpt MXFP8 experts' intermediate size of {width:,} into {width // split:,} "
                f"a rank ({width:,} / {split}), not a multiple of 32: 'MXFP8 MoE requires "
                f"intermediate_size_per_partition divisible by 32, got {width // split}.' (quantization/modelopt.py "
                "ModelOptMxFp8FusedMoE.create_weights)")
    if block is None:
        return None
    import math

    per_rank, (block_n, block_k) = width // split, block
    if site == _CT_SITE:  # compressed_tensors_moe_w8a8_fp8.py: validate_fp8_block_shape_moe, no refinement
        return _ct_experts(width, per_rank, split, tp, block)
    # validate_fp8_block_shape_moe checks block_k where the (attention) TP world size is above 1
    aligned = per_rank % block_n == 0 and (tp == 1 or per_rank % block_k == 0)
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


def _ct_experts(width: int, per_rank: int, split: int, tp: int, block: tuple[int, int]) -> str | None:
    """compressed-tensors' block FP8 experts: CompressedTensorsW8A8Fp8MoEMethod.create_weights calls
    validate_fp8_block_shape_moe on the intermediate per rank, gate / up against block_n, down against block_k where
    the (attention) TP world size is above 1 (get_tensor_model_parallel_world_size), with no refinement."""
    block_n, block_k = block
    if per_rank % block_n:
        which = (f"'The output_size of gate's and up's weight = {per_rank} is not divisible by weight quantization "
                 f"block_n = {block_n}.'")
    elif tp > 1 and per_rank % block_k:
        which = (f"'The input_size of down's weight = {per_rank} is not divisible by weight quantization block_k = "
                 f"{block_k}.'")
    else:
        return None
    return (f"vLLM 0.34 splits the compressed-tensors FP8 {block_n}x{block_k}-block experts' intermediate size of "
            f"{width:,} into {per_rank:,} a rank ({width:,} / {split}): {which} (fp8_utils.py "
            "validate_fp8_block_shape_moe, from compressed_tensors_moe_w8a8_fp8.py "
            "CompressedTensorsW8A8Fp8MoEMethod.create_weights, which refines no blocks)")


def refusal(model, tp: int, dp: int = 1, ep: bool = False, version: str | None = None,
            a2a: str | None = None) -> str | None:
    """Why vLLM fails to build this text model at --tp tp (--data-parallel-size dp, --enable-expert-parallel ep,
    --all2all-backend a2a): its dense MLP, its shared experts, then its routed experts (module doc); None where it
    builds them, or nothing is checked. The FP8 block rules are applied to vLLM 0.34 (version None: the latest)
    only."""
    from .vllm_load import raw_config
    from .vllm_rules import TP_REPLICATED

    raw = raw_config(model) if tp * dp > 1 else None
    if not raw or raw.get("model_type") in TP_REPLICATED:  # built whole on every rank (ZAYA1: zaya.py)
        return None
    from ..configs.quant_online import vllm_method

    block = fp8_block(model, raw, vllm_method) if (version or READ_IN).startswith(READ_IN) else None
    site = _FP8_SITE
    if block is None and (version or READ_IN).startswith(READ_IN) and (ct := _ct_block(model, raw)):
        block, site = ct, _CT_SITE
    mo = _modelopt(model, raw) if block is None and (version or READ_IN).startswith(READ_IN) else None
    model_type = str(raw.get("model_type") or "")
    why = ((_o_proj(model_type, raw, tp, mo) if tp > 1 else None)
           or (_dense(model_type, raw, tp, block, site, mo) if tp > 1 else None)
           or (_shared(model, model_type, raw, tp, dp, ep, block, site, a2a, mo) if tp > 1 else None)
           or _experts(model, raw, 1 if ep else tp * dp, tp, block, site, mo))
    return f"--tp {tp} with --engine vllm: {why}" if why else None


def check(model, tp: int, dp: int = 1, ep: bool = False, version: str | None = None,
          a2a: str | None = None) -> None:
    """Raise the refusal line where vLLM fails to build the text model at this split."""
    from ..errors import UsageError

    why = refusal(model, tp, dp, ep, version, a2a)
    if why:
        raise UsageError(why, HINT + (", or add --ep for the experts" if "routed expert" in why else ""))


__all__ = ["check", "refusal"]
