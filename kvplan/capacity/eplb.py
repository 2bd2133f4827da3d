"""EPLB's redundant experts under expert parallelism (`--ep --redundant-experts R`): R more physical experts, whole
copies of logical ones, spread over the EP ranks with the rest (capacity.experts places them: routed_saving).

vLLM 0.34.0 (`--enable-eplb --eplb-config '{"num_redundant_experts": R}'`; 0.34 has no --num-redundant-experts flag,
engine/arg_utils.py adds only --enable-eplb and --eplb-config):
- config/parallel.py ParallelConfig._validate_parallel_config: EPLB needs enable_expert_parallel ("enable_expert_parallel
  must be True to use EPLB") and an EP group above 1 (TP x PCP x DP > 1); num_redundant_experts other than 0 without
  --enable-eplb is refused. Unset, compute_eplb_num_redundant_experts takes the least R that makes logical + R
  divisible by EP: (EP - E % EP) % EP (kvplan's `--redundant-experts auto`: vllm_default_redundant).
- model_executor/layers/fused_moe/layer.py determine_expert_counts: global_num_experts = num_experts +
  num_redundant_experts; FusedMoEFactory raises unless global_num_experts % ep_size == 0 ("EPLB currently only
  supports even distribution"), so every rank holds (experts + R) / EP (expert_map_manager.py determine_expert_map).
- only a model class implementing MixtureOfExperts (model_executor/models/interfaces.py) registers with EPLB
  (v1/worker/gpu/eplb_utils.py EPLBController.maybe_register_model: get_mixture_of_experts_model) and passes
  num_redundant_experts to its FusedMoE layers; another model class runs without redundant experts, so kvplan
  refuses R for it (VLLM_EPLB_ARCHS).
- memory: distributed/eplb/eplb_state.py EplbState.add_model, run by GPUModelRunner.load_model (v1/worker/gpu/
  model_runner.py) before the KV profile, so vLLM's total_consumed (utils/mem_utils.py memory_profiling) takes it from
  the pool: the rearrangement receive buffer (expert_buffer: torch.empty_like of the first MoE layer's local expert
  weights, every communicator but symm_mem; NIXL reads into it in place) and the per-layer tables (vllm_state_bytes).
  Not counted: what a rearrangement allocates while serving (rebalance_execute.py), CPU staging (torch_gloo).

SGLang 0.5.23 (`--ep-num-redundant-experts R`, with or without --enable-eplb, which also needs ep_size > 1:
arg_groups/parallel_hook.py handle_eplb_and_dispatch): eplb/expert_location.py _init_common
base_num_physical_experts = logical + R, num_local_physical_experts asserts physical % ep_size == 0, and the model
files in SGLANG_REDUNDANT_ARCHS build their FusedMoE with num_experts + ep_num_redundant_experts
(layers/moe/fused_moe_triton/layer.py asserts the global routed experts % ep_size == 0). Not counted: SGLang's
expert-distribution recorder and EPLB manager state.
"""

from __future__ import annotations

import re

from ..errors import UsageError
from .shard import _ceil_div

# vLLM 0.34 model classes implementing MixtureOfExperts (model_executor/models/interfaces.py), directly or by a base
# class, read from every model_executor/models/*.py; KimiK25ForConditionalGeneration builds a DeepseekV2ForCausalLM
# language model, which get_mixture_of_experts_model finds through get_language_model
VLLM_EPLB_ARCHS = frozenset({
    "AXK1ForCausalLM", "AfmoeForCausalLM", "AliceAIForCausalLM", "DeepseekForCausalLM", "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM", "Ernie4_5_MoeForCausalLM", "Gemma4ForCausalLM", "Glm4MoeForCausalLM",
    "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM", "InternS1ProForConditionalGeneration", "K2HorizonForCausalLM",
    "KimiK25ForConditionalGeneration", "Lfm2MoeForCausalLM", "Llama4ForCausalLM", "Llama4ForConditionalGeneration",
    "MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM", "MistralLarge3ForCausalLM", "MixtralForCausalLM",
    "NemotronHForCausalLM", "PanguProMoEV2ForCausalLM", "PanguUltraMoEForCausalLM", "Param2MoEForCausalLM",
    "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3_5MoeForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "SarvamMLAForCausalLM", "Step3p5ForCausalLM"})

# SGLang 0.5.23 EntryClass architectures of the model files that add ep_num_redundant_experts to their FusedMoE's
# experts (models/deepseek_v2.py, glm4_moe.py, glm4_moe_lite.py, gpt_oss.py, qwen2_moe.py, qwen3_moe.py,
# minimax_m2.py, minimax_m3.py, bailing_moe.py, mimo_v2.py, nemotron_h.py, step3p5.py, exaone_moe.py, sarvam_moe.py,
# gemma4_causal.py, laguna.py, xllm.py), and those whose file builds one of their MoE blocks or models: qwen3_next.py
# and qwen3_5.py (qwen2_moe.Qwen2MoeSparseMoeBlock), qwen3_vl_moe.py (qwen3_moe.Qwen3MoeModel), kimi_k25.py
# (deepseek_v2.DeepseekV3ForCausalLM), glm4v_moe.py (glm4_moe.Glm4MoeModel); other files' subclasses are not listed
SGLANG_REDUNDANT_ARCHS = frozenset({
    "Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
    "KimiK25ForConditionalGeneration", "Glm4vMoeForConditionalGeneration",
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "Glm4MoeForCausalLM",
    "GlmMoeDsaForCausalLM", "Glm4MoeLiteForCausalLM", "GptOssForCausalLM", "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM", "MiniMaxM2ForCausalLM", "MiniMaxM3SparseForCausalLM", "BailingMoEForCausalLM",
    "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM",
    "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "Step3p5ForCausalLM", "ExaoneMoEForCausalLM",
    "ExaoneMoeForCausalLM", "SarvamMLAForCausalLM", "SarvamMoEForCausalLM", "Gemma4ForCausalLM", "LagunaForCausalLM",
    "K2HorizonForCausalLM"})

WINDOW_STEPS = 1000  # EPLBConfig.window_size default: the expert load window's steps
VLLM_MAX_REDUNDANT = 1023  # eplb_state.py EplbState.add_model MAX_EXPERT_REDUNDANCY (asserted)
INT32_BYTES, INT64_BYTES = 4, 8


REDUNDANT_LIMIT = 999_999_999  # what kvplan parses; the engines' own limits: check_redundant
AUTO = "auto"  # --redundant-experts auto: vLLM's --enable-eplb without num_redundant_experts


def parse_redundant(text: str | int | None, engine: str | None, emit: str | None) -> tuple[int | None, bool]:
    """(R, whether it is vLLM's default) for `--redundant-experts`: None, an integer, or "auto" (vLLM only: SGLang's
    --ep-num-redundant-experts defaults to 0, with or without --enable-eplb)."""
    if text is None:
        return None, False
    raw = str(text).strip().lower()
    if raw == AUTO:
        if "sglang" in (engine, emit):
            raise UsageError("--redundant-experts auto is vLLM's default R (compute_eplb_num_redundant_experts); "
                             "SGLang 0.5.23's --ep-num-redundant-experts defaults to 0", "give R for SGLang")
        return None, True
    if not re.fullmatch(r"[+-]?\d{1,24}", raw):
        raise UsageError(f"--redundant-experts: expected an integer or auto, got {text!r}")
    if int(raw) > REDUNDANT_LIMIT:  # kvplan's bound (vLLM 0.34 takes at most VLLM_MAX_REDUNDANT: check_redundant)
        raise UsageError(f"--redundant-experts: {int(raw):,} is above the limit of {REDUNDANT_LIMIT:,}")
    return int(raw), False


def vllm_default_redundant(model, ep_size: int) -> int | None:
    """vLLM 0.34's num_redundant_experts when --enable-eplb leaves it unset (config/parallel.py ParallelConfig.
    compute_eplb_num_redundant_experts, called by config/vllm.py with model_config.get_num_experts(); EP = TP x PCP x
    DP): the least R that makes experts + R divide by EP, (EP - E % EP) % EP. None without routed experts."""
    routed = model.weight_routed_params
    if routed is None:
        return None
    return (ep_size - routed[0] % ep_size) % ep_size


def check_redundant(model, redundant: int | None, ep: bool, ep_size: int, engine: str) -> None:
    """Refuse what the engine refuses (or runs without redundant experts), one line each; engine "sglang" or vLLM's
    rule for any other (kvplan's own plan places the experts as vLLM does)."""
    if redundant is None:
        return
    if redundant < 0:
        raise UsageError(f"--redundant-experts must be 0 or more, got {redundant}")
    if not ep:
        raise UsageError("--redundant-experts without --ep: EPLB's redundant experts are placed by expert over the EP "
                         "ranks (vLLM 0.34: \"enable_expert_parallel must be True to use EPLB\")", "add --ep")
    routed = model.weight_routed_params
    if routed is None:  # capacity.experts.check_placement refuses it with its own line
        return
    arch = model.architecture or model.model_type
    physical = routed[0] + redundant
    if engine == "sglang":
        if arch not in SGLANG_REDUNDANT_ARCHS:
            raise UsageError(f"--redundant-experts with --engine sglang: SGLang 0.5.23's {arch} model does not build "
                             "redundant experts (its FusedMoE is not given --ep-num-redundant-experts)",
                             "leave --redundant-experts out")
        if physical % ep_size:
            raise UsageError(f"--redundant-experts {redundant} with --engine sglang: {routed[0]} + {redundant} = "
                             f"{physical} physical experts do not divide over --ep-size {ep_size} (SGLang "
                             "expert_location.py asserts num_physical_experts % ep_size == 0)",
                             f"choose R so that {routed[0]} + R is a multiple of {ep_size}")
        return
    if arch not in VLLM_EPLB_ARCHS:
        raise UsageError(f"--redundant-experts: vLLM 0.34's {arch} is no MixtureOfExperts model class, so "
                         "--enable-eplb places no redundant experts for it", "leave --redundant-experts out")
    if redundant > VLLM_MAX_REDUNDANT:
        raise UsageError(f"--redundant-experts {redundant}: vLLM 0.34 takes at most {VLLM_MAX_REDUNDANT} (eplb_state.py "
                         "EplbState.add_model asserts num_redundant_experts <= MAX_EXPERT_REDUNDANCY)",
                         f"choose R up to {VLLM_MAX_REDUNDANT}")
    if ep_size <= 1:
        raise UsageError("--redundant-experts with one GPU: vLLM 0.34 EPLB requires tensor, prefill-context, or data "
                         "parallelism (an EP group above 1)", "add --dp or --tp")
    if physical % ep_size:
        raise UsageError(f"--redundant-experts {redundant}: {routed[0]} + {redundant} = {physical} physical experts "
                         f"do not divide over EP {ep_size} (vLLM 0.34 FusedMoE: \"EPLB currently only supports even "
                         "distribution of experts across ranks\")",
                         f"choose R so that {routed[0]} + R is a multiple of {ep_size}")


def moe_layers(model, weights) -> int | None:
    """MoE layers: a tensor table's decoder layers with "experts" parts, else the family table's count."""
    if weights is not None and weights.parts:
        return len({layer for role, layer, _ in weights.parts if role == "experts" and 0 <= layer < model.num_layers})
    routed = model.weight_routed_params
    return routed[5] if routed is not None and len(routed) > 5 and routed[5] else None


def stage_moe_layers(model, weights, pp: int) -> int | None:
    """The most MoE layers one pipeline stage's model holds (capacity.shard.stage_bounds): vLLM 0.34's MoE classes
    count num_moe_layers over their own stage's layers, skipping PPMissingLayer (e.g. qwen3_moe.py
    Qwen3MoeForCausalLM.__init__). By a tensor table's layers; from the family count L, min(L, the largest stage's
    layers), the dense layers' places not being known (exact where they lead: DeepSeek's first_k_dense_replace)."""
    layers = moe_layers(model, weights)
    if pp <= 1 or not layers:
        return layers
    from .shard import stage_bounds

    bounds = stage_bounds(model.num_layers, pp)
    if weights is not None and weights.parts:
        placed = {layer for role, layer, _ in weights.parts if role == "experts"}
        return max(sum(start <= layer < end for layer in placed) for start, end in bounds)
    return min(layers, max(end - start for start, end in bounds))


def vllm_state_bytes(model, weights, ep_size: int, redundant: int | None, pp: int = 1) -> int:
    """Bytes vLLM 0.34's EplbState.add_model allocates on each GPU before the KV profile (distributed/eplb/
    eplb_state.py), for the L MoE layers of the GPU's pipeline stage (stage_moe_layers: the fullest stage's), E
    logical and P = E + R physical experts: the expert load window (window_size x L x P int32), the load pass buffer
    (L x P int32), physical_to_logical_map (L x P int64), logical_to_physical_map (L x E x (R + 1) int64),
    logical_replica_count and last_expert_load (L x E int64 each), and expert_buffer, one MoE layer's local experts
    (P / EP of them: the routed bytes / (E x all MoE layers) each). 0 without EPLB or where not known."""
    from .experts import routed_bytes

    routed = model.weight_routed_params
    every = moe_layers(model, weights)
    if redundant is None or routed is None or not every:
        return 0
    layers = stage_moe_layers(model, weights, pp)
    experts, physical = routed[0], routed[0] + redundant
    total = routed_bytes(model, weights) if weights is not None else None
    buffer = 0 if total is None else _ceil_div(total * (physical // ep_size), experts * every)
    tables = (WINDOW_STEPS * layers * physical * INT32_BYTES + layers * physical * INT32_BYTES
              + layers * physical * INT64_BYTES + layers * experts * (redundant + 1) * INT64_BYTES
              + 2 * layers * experts * INT64_BYTES)
    return buffer + tables


def eplb_text(model, ep_size: int, redundant: int | None, engine: str, default: bool = False) -> str:
    """The note's clause for EPLB: the physical experts a rank holds; "" without it. default: R is vLLM's own
    (--redundant-experts auto)."""
    routed = model.weight_routed_params
    if redundant is None or routed is None:
        return ""
    physical = routed[0] + redundant
    flags = (f"--ep-num-redundant-experts {redundant}" if engine == "sglang" else
             f"--enable-eplb, vLLM's default num_redundant_experts (EP - {routed[0]} % EP) % EP = {redundant}"
             if default else f"--enable-eplb, num_redundant_experts {redundant}")
    line = (f"; EPLB ({flags}): {routed[0]} + {redundant} = {physical} physical experts, {physical // ep_size} on each "
            f"of the {ep_size} GPUs")
    return line + ("" if engine == "sglang" else
                   " (vLLM's EPLB state, its load window and one MoE layer's local experts as the rearrangement "
                   "buffer, is counted under --engine vllm only)")
