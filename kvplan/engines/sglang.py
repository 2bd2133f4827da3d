"""SGLang's KV pool: how many tokens it allocates and how many requests it runs (releases 0.5.9 and 0.5.23).

Every rule is read in the sglang 0.5.9 sdist and the 0.5.23 wheel (python/sglang/srt/...); the file and function
are named beside each, 0.5.9's first. `Rules` holds what changed between the two; `--engine sglang` models the
newest (0.5.23, October 2026), `--engine sglang@0.5.9` the older. SGLang keeps one token pool: a token's "cell"
holds its K/V (or MLA latent) in every layer.

What 0.5.23 changed (0.5.9's rules follow below):
- mem_fraction_static (arg_groups/memory_hook.py handle_gpu_memory_settings, reserve_for_graph_mb): the breakable
  prefill CUDA graph is on by default on CUDA and reserved for, 8 MiB a captured size up to chunked_prefill_size
  (cuda_graph_hook.generate_prefill_cuda_graph_batch_sizes; 1.5 GiB flat for MLA; off for multimodal models not
  in multimodal_breakable_cuda_graph_supported_model_archs and under PP); the 20-35 GiB band takes chunked 4,096
  and decode graphs to 48 (160 at TP >= 4); a given max_running_requests caps the decode graphs' batch; no
  reserve for a speculative draft.
- speculative decoding (pool_configurator.DefaultPoolConfigurator): EAGLE / STANDALONE add the draft's layers
  at the target's per-layer size to the cell the pool is sized with (int(cell x draft layers / layers); on a
  sliding-window pool a draft without sliding layers at the full layers' size), and the
  draft's weights, its own embedding and head still in place, are resident when the pool is sized
  (scheduler.init_model_worker; eagle_worker_v2.alloc_memory_pool shares them after): kvplan.engines.sglang_report
  .draft_weights. 0.5.9 sized the target pool alone.
- hybrid sliding-window pools (HybridSWAPoolConfigurator): full tokens = int(rest // (F n_f + r S n_s)), page
  aligned, sliding = int(full x r) aligned; more architectures (is_hybrid_swa_model: Gemma 4, Granite SWA,
  Step-3.7, Laguna, Mellum ...; Gemma 2/3 still pooled in full).
- state pools (kv_cache_configurator._handle_max_mamba_cache): the pool's padding slot is charged,
  max_mamba_cache_size = int((B - per) // per), the tokens lose (K + 1) states; with speculation a joint solve
  K = int((B - per (1 + D)) // (per (1 + D / ratio))); Qwen3-Next / Qwen3.5 / Nemotron-H / Falcon-H1 take the
  extra_buffer strategy under the default overlap schedule (overrides._mamba_radix_cache_resolution; also
  Granite 4.0-H and Kimi Linear, not LFM2), 3 + 2
  state slots a request, so max_running_requests <= K // 5.
- max_running_requests (resolve_max_num_reqs): estimated from the final (capped, page-aligned, full-layer) tokens;
  a given value is also held to tokens // 2.
- multimodal models' pools lose SGLANG_VLM_CACHE_SIZE_MB (100 MiB, mm_runtime_reservation_gb).
- the pool's log line names its dtype ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: ..."), a
  sliding-window model's sub-pools "Full " and "SWA ", the full one first.
- DeepSeek's sparse attention (now "DSA"): the pool is sized at the latent the default DSA backend stores
  (calculate_mla_kv_cache_dim; overrides._dsa_split_backend_resolution): bf16 576 x 2 B; fp8 on Hopper
  (flashmla_kv) 656 B with its scales, on SM >= 10 (trtllm) the raw 576; the index keys on the layers that compute
  their own top-k (pool_configurator._compute_dsa_indexer_cell_size); fp8_e5m2 is refused; the pool's KV size
  line (IndexKeyCache buffers) is not modelled.

0.5.9's rules (where 0.5.23 keeps them, it keeps them):
- Cell bytes per token (model_executor/model_runner_kv_cache_mixin.py get_cell_size_per_token):
  - MLA (use_mla_backend): (kv_lora_rank + qk_rope_head_dim) x layers x kv bytes;
  - otherwise num_kv_heads / attention TP (at least 1: model_config.get_num_kv_heads) x (head_dim +
    v_head_dim) x layers x kv bytes, one head count and width for every layer;
  - hybrid sliding-window models, only the architectures of model_config.is_hybrid_swa_model (Llama 4,
    GPT-OSS, MiMo-V2-Flash, Step-3.5): full and sliding layers each with their own heads and widths.
    Every other model is pooled as if each layer were full attention: Gemma 2/3's or Mistral's windows
    save SGLang nothing.
- The pool (profile_max_num_token): rest = A - T0 x (1 - mem_fraction_static) GiB, where T0 is the free
  GPU memory after the distributed init (model_runner.init_torch_distributed: min_per_gpu_memory, the
  minimum over ranks) and A the free memory after the weights load (get_available_gpu_memory, GiB =
  2**30 B); max_total_num_tokens = int(rest x 2**30) // cell. Since A = T0 - weights - what the load
  adds, the pool is about T0 x mem_fraction_static - weights.
- Then (init_memory_pool): --max-total-tokens caps it; it is rounded down to a whole page; a hybrid
  sliding-window pool splits it (set_num_tokens_hybrid_swa): full tokens = int(tokens x (F n_f + S n_s)
  / (F n_f + r S n_s)), sliding tokens = int(full x r), r = swa_full_tokens_ratio (0.8), each rounded
  down to a page, and max_total_num_tokens becomes the full layers' count.
- max_running_requests, unless given: min(max(int(tokens / context_len x 512), 2048), 4096), at most tokens // 2
  (model_runner.py).
- The log (mem_cache/memory_pool.py _finalize_allocation_log): "KV Cache is allocated. #tokens: N, K
  size: X GB, V size: Y GB" (MLA: "KV size"), the buffers holding N + page_size tokens, GB = 2**30 B.
- mem_fraction_static, unless given (server_args.py _handle_gpu_memory_settings), from the GPU memory
  in MiB (nvidia-smi's memory.total): reserved = 512 + max(chunked_prefill_size, 2048) x 1.5 +
  cuda_graph_max_bs x 2 + tp x pp / 8 x 1024 MiB, at least 10 GiB on a card above 60 GiB; fraction =
  round((gpu - reserved) / gpu, 3). chunked_prefill_size and cuda_graph_max_bs come from the card's
  memory (DEFAULTS_BY_MEMORY). A multimodal architecture's default is then scaled for its vision tower
  (adjust_mem_fraction_for_vlm, vlm_fraction_factor).
- KV dtype (model_runner.configure_kv_cache_dtype): auto = the model's dtype (fp8_e4m3 where the
  checkpoint's quant_config names an FP8 KV cache), fp8_e4m3, fp8_e5m2, bf16.

- Hybrid recurrent models (Qwen3-Next and Qwen3.5's Gated DeltaNet, Nemotron-H, Falcon-H1 and Granite 4.0-H's
  Mamba-2, LFM2's short conv, Kimi Linear's KDA: model_runner.mambaish_config): the cell counts the full-attention layers only, and a state pool comes
  first (handle_max_mamba_cache): max_mamba_cache_size = int(rest x r / (1 + r) x 2**30 //
  per-request state), r = mamba_full_memory_ratio (0.9), the rest less those states sizes the tokens, and
  max_running_requests is at most max_mamba_cache_size // 3 (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO,
  radix cache on, no extra buffer). A request's state (configs/mamba_utils.py Mamba2StateShape): conv
  (conv_kernel - 1) x (d_inner + 2 x groups x d_state) / TP in bf16 (SGLANG_MAMBA_CONV_DTYPE), groups
  padded to TP; temporal heads / TP x head_dim x d_state in float32 unless the config's mamba_ssm_dtype
  says otherwise (mamba2_state_dtype), per state layer. Gated DeltaNet: d_inner = value heads x value
  width, groups = key heads, d_state = key width. Logged: "Mamba Cache is allocated. max_mamba_cache_size:
  N, conv_state size: X GB, ssm_state size: Y GB" (the buffers hold N + 1 states).

- Speculative decoding (server_args._handle_speculative_decoding): max_running_requests defaults to 48
  (SPEC_MAX_RUNNING_REQUESTS), the default fraction reserves 2 GiB more (STANDALONE 6: SPEC_RESERVED_MIB), and
  a hybrid recurrent model first reserves state x 48 x the draft tokens (handle_max_mamba_cache).
- DeepSeek's sparse attention (is_deepseek_nsa: DeepSeek-V3.2, GLM-5, Mistral Large 3 with index_topk): the
  cell adds the indexer keys (index_head_dim + index_head_dim / 128 x 4 B, uint8); page_size 64 on CUDA; KV
  dtype auto = fp8_e4m3 on SM >= 10, bfloat16 below; at fp8 a layer stores 656 B of latent
  (calculate_mla_kv_cache_dim) where the profile counts 576, and the indexer whole pages of n + page + 1.

Not modelled (refused or said): other recurrent states (MiniMax / Bailing lightning attention, Mamba-1 and
pure SSM models, Jamba, Bamba, Zamba; 0.5.23 pools some of them, kvplan has not read how), SGLANG_MAMBA_SSM_DTYPE, DeepSeek-V4, FP4 and
MXFP8 KV, pipeline parallelism, DP attention, 0.5.9's speculative draft pool (said beside, not subtracted: it
comes out of what mem_fraction_static leaves; kvplan.engines.sglang_report) and 0.5.23's draft weights other than
a DeepSeek / GLM NEXTN module's or a STANDALONE checkpoint's (said, not subtracted), MTP or a sliding-window draft on a 0.5.23
sliding-window pool, NGRAM speculation,
vision models' mem_fraction_static adjustment where config.json leaves the tower's size to its config class
(said), and models whose layers differ in heads or width outside the hybrid architectures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.model import ModelSpec
from ..errors import UsageError

GIB = 2**30
# configs/model_config.py is_hybrid_swa_model (0.5.9), and the architectures kvplan reads of 0.5.23's list (with
# SWA_SINK_ARCHS and MIMO_V2_MODEL_ARCHS); Gemma 2/3/3n stay off in both (0.5.23: model_overrides/gemma2_gemma3.py)
HYBRID_SWA_ARCHS = frozenset({"Llama4ForConditionalGeneration", "GptOssForCausalLM", "MiMoV2FlashForCausalLM",
                              "Step3p5ForCausalLM"})
# 0.5.23 model_config.is_hybrid_swa_compress, those kvplan reads: their sliding sub-pool is built with its own
# heads and widths (kv_cache_configurator._build_hybrid_swa_kv_pool; Gemma 4's per-layer-type shapes from
# utils/hf_transformers/config._apply_gemma4_attention_overrides); the others allocate both sub-pools with the
# full layers' shapes though they are sized with the sliding ones, so kvplan refuses them where the shapes differ
HYBRID_SWA_COMPRESS_0523 = frozenset({"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "Gemma4ForCausalLM",
                                      "Gemma4ForConditionalGeneration", "Gemma4UnifiedForConditionalGeneration",
                                      "InklingForConditionalGeneration"})
HYBRID_SWA_ARCHS_0523 = HYBRID_SWA_ARCHS | frozenset({
    "MiMoV2ForCausalLM", "Step3p7ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
    "Gemma4UnifiedForConditionalGeneration", "GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM",
    "IQuestQ1ForCausalLM", "LagunaForCausalLM", "MellumForCausalLM", "MuseGlimmerForCausalLM",
    "MuseGlimmerForConditionalGeneration", "InklingForConditionalGeneration"})
# DeepSeek's sparse attention (configs/model_config.py is_deepseek_nsa, with index_topk): the indexer keys
# join the cell; server_args._handle_model_specific_adjustments sets page_size 64 (CUDA) and, under kv dtype
# auto, fp8_e4m3 on SM >= 10 and bfloat16 below (_set_default_nsa_kv_cache_dtype)
NSA_ARCHS = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "MistralLarge3ForCausalLM",
                       "GlmMoeDsaForCausalLM"})
NSA_PAGE_SIZE = 64
NSA_QUANT_BLOCK = 128  # NSATokenToKVPool.quant_block_size
SM10_GPUS = frozenset({"b200", "rtx-pro-6000"})  # catalog cards of compute capability 10 and above
SWA_FULL_TOKENS_RATIO = 0.8  # server_args.py
MAMBA_FULL_MEMORY_RATIO = 0.9  # server_args.py
MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3  # model_runner_kv_cache_mixin.py
# architectures SGLang gives a state pool (model_runner.mambaish_config: hybrid_gdn_config, mamba2_config),
# whose state kvplan sizes
STATE_ARCHS = frozenset({"Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                         "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "NemotronHForCausalLM", "FalconH1ForCausalLM",
                         "GraniteMoeHybridForCausalLM", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM",
                         "KimiLinearForCausalLM"})
# the configs whose state params read the config's mamba_ssm_dtype (mamba2_state_dtype(self)); the others
# (GraniteMoeHybrid, Kimi Linear: mamba2_state_dtype(None)) keep the float32 default
SSM_DTYPE_FROM_CONFIG_ARCHS = frozenset({"Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration",
                                         "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForCausalLM",
                                         "Qwen3_5MoeForCausalLM", "NemotronHForCausalLM", "FalconH1ForCausalLM"})
# speculative decoding (server_args._handle_speculative_decoding, _handle_gpu_memory_settings): MiB more reserved
# for the draft and its CUDA graphs (0.5.9 only), and the max_running_requests it defaults to
SPEC_RESERVED_MIB = {"EAGLE": 2048, "EAGLE3": 2048, "STANDALONE": 6144}
SPEC_MAX_RUNNING_REQUESTS = 48
# server_args._handle_gpu_memory_settings: (below this many MiB, chunked_prefill_size, cuda_graph_max_bs at
# TP < 4, at TP >= 4)
DEFAULTS_BY_MEMORY = ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 24, 80), (60 * 1024, 4096, 32, 160),
                      (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512), (None, 16384, 512, 512))
# 0.5.23 arg_groups/memory_hook.py handle_gpu_memory_settings: the 20-35 GiB band (A10, 4090, 5090) changed
DEFAULTS_BY_MEMORY_0523 = ((20 * 1024, 2048, 8, 8), (35 * 1024, 4096, 48, 160), *DEFAULTS_BY_MEMORY[2:])
# configs/model_config.py multimodal_model_archs, as read in each release: their default mem_fraction_static is
# scaled for the vision tower (adjust_mem_fraction_for_vlm); 0.5.23 also turns the breakable prefill CUDA graph
# off for them (cuda_graph_hook.disable_breakable_cudagraph_if_incompatible) unless in
# multimodal_breakable_cuda_graph_supported_model_archs, and takes SGLANG_VLM_CACHE_SIZE_MB from their pool
MULTIMODAL_ARCHS_059 = frozenset({
    "CLIPModel", "DeepseekVL2ForCausalLM", "Ernie4_5_VLMoeForConditionalGeneration", "Gemma3ForConditionalGeneration",
    "Gemma3nForConditionalGeneration", "Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration",
    "GlmOcrForConditionalGeneration", "GlmAsrForConditionalGeneration", "Grok1VForCausalLM", "Grok1AForCausalLM",
    "LlavaLlamaForCausalLM", "Llama4ForConditionalGeneration", "LlavaMistralForCausalLM", "LlavaQwenForCausalLM",
    "LlavaForConditionalGeneration", "LlavaVidForCausalLM", "LightOnOCRForConditionalGeneration", "MiniCPMO",
    "MiniCPMV", "Mistral3ForConditionalGeneration", "MultiModalityCausalLM", "MllamaForConditionalGeneration",
    "NemotronH_Nano_VL_V2", "PixtralForConditionalGeneration", "Qwen2AudioForConditionalGeneration",
    "Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Qwen3OmniMoeForConditionalGeneration", "KimiVLForConditionalGeneration", "InternVLChatModel",
    "InternS1ForConditionalGeneration", "InternS1ProForConditionalGeneration", "Phi4MMForCausalLM",
    "Step3VLForConditionalGeneration", "POINTSV15ChatModel", "DotsVLMForCausalLM", "DotsOCRForCausalLM",
    "Sarashina2VisionForCausalLM", "NVILAForConditionalGeneration", "NVILALiteForConditionalGeneration",
    "DeepseekOCRForCausalLM", "JetVLMForConditionalGeneration", "PaddleOCRVLForConditionalGeneration",
    "MiDashengLMModel", "StepVLForConditionalGeneration", "KimiK25ForConditionalGeneration"})
MULTIMODAL_ARCHS_0523 = MULTIMODAL_ARCHS_059 | frozenset({
    "Cohere2VisionForConditionalGeneration", "Cosmos3EdgeForConditionalGeneration",
    "MiniMaxM3SparseForConditionalGeneration", "Gemma4ForConditionalGeneration", "EmbeddingGemma2Model",
    "Gemma4UnifiedForConditionalGeneration", "DiffusionGemmaForBlockDiffusion", "Glm5NextForConditionalGeneration",
    "GlmImageForConditionalGeneration", "Lfm2VlForConditionalGeneration", "MiMoV2ForCausalLM", "MiMoV2ASRForCausalLM",
    "MossVLForConditionalGeneration", "NemotronH_Nano_Omni_Reasoning_V3", "NemotronH_Omni_Reasoning_V3",
    "MuseGlimmerForConditionalGeneration", "MuseSparkForConditionalGeneration", "Qwen4ExpForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "InternS2MobiusForConditionalGeneration",
    "Qwen3ASRForConditionalGeneration", "LocateAnythingForConditionalGeneration", "VoxtralForConditionalGeneration",
    "WhisperForConditionalGeneration", "Dots3NoteForCausalLM", "UnlimitedOCRForCausalLM",
    "Step3p7ForConditionalGeneration", "BailingMMNativeForConditionalGeneration",
    "BailingMM2NativeForConditionalGeneration", "BailingMoeV3VLForConditionalGeneration"})
MULTIMODAL_PREFILL_GRAPH_0523 = frozenset({"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                                           "KimiK25ForConditionalGeneration"})
VLM_CACHE_MIB = 100  # 0.5.23 environ.py SGLANG_VLM_CACHE_SIZE_MB, taken from a multimodal model's pool
# 0.5.23 arg_groups/overrides.py _MAMBA_EXTRA_BUFFER_ARCHS: under the default overlap schedule the state pool's
# "auto" strategy is extra_buffer, 2 more slots a request (allocation_sizing.get_mamba_tracking_slots)
MAMBA_EXTRA_BUFFER_ARCHS_0523 = STATE_ARCHS - {"Lfm2ForCausalLM", "Lfm2MoeForCausalLM"}
MAMBA_EXTRA_BUFFER_SLOTS = 2


@dataclass(frozen=True)
class Rules:
    """What changed between the SGLang releases kvplan models, each rule with where it was read."""

    release: str
    defaults_by_memory: tuple
    spec_reserved_mib: dict  # 0.5.9: more reserved for the draft; 0.5.23: none (its weights and KV are in the pool)
    prefill_graph_reserve: bool  # 0.5.23: the breakable prefill CUDA graph, on by default on CUDA (memory_hook)
    hybrid_swa_archs: frozenset
    swa_split_on_cell: bool  # 0.5.23 HybridSWAPoolConfigurator: full = avail // (F n_f + r S n_s)
    mamba_extra_buffer_archs: frozenset
    mamba_padding_slot: bool  # 0.5.23 _handle_max_mamba_cache charges each pool's +1 padding slot
    draft_kv_in_cell: bool  # 0.5.23 DefaultPoolConfigurator: EAGLE/STANDALONE draft layers in the target's cell
    dsa_stored_counted: bool  # 0.5.23: a DSA pool is sized at the latent its backend stores (0.5.9: at 576 B)
    log_dtype: bool  # 0.5.23 memory_pool.py: "KV Cache is allocated. dtype: torch.X, ...", "Full "/"SWA " labels
    vlm_cache_mib: int
    multimodal_archs: frozenset


RULES = {
    "0.5.9": Rules("0.5.9", DEFAULTS_BY_MEMORY, SPEC_RESERVED_MIB, False, HYBRID_SWA_ARCHS, False, frozenset(),
                   False, False, False, False, 0, MULTIMODAL_ARCHS_059),
    "0.5.23": Rules("0.5.23", DEFAULTS_BY_MEMORY_0523, {}, True, HYBRID_SWA_ARCHS_0523, True,
                    MAMBA_EXTRA_BUFFER_ARCHS_0523, True, True, True, True, VLM_CACHE_MIB, MULTIMODAL_ARCHS_0523),
}
LATEST = "0.5.23"
RELEASE = LATEST  # what --engine sglang models
KV_DTYPES = {"auto": None, "fp8_e4m3": 1, "fp8_e5m2": 1, "bf16": 2, "bfloat16": 2}
# nvidia-smi's memory.total (MiB), which sizes mem_fraction_static (utils/common.py get_nvgpu_memory_capacity):
# as public nvidia-smi outputs print it for each card; others fall back to the catalog's bytes
NVIDIA_SMI_MIB = {"h100-sxm": 81559, "h200": 143771, "b200": 183359, "a100-80gb": 81920, "a100-40gb": 40960,
                  "rtx-4090": 24564}


def rules_for(release: str | None) -> Rules:
    """The rules of an SGLang release kvplan models (None: the newest)."""
    if release is None:
        return RULES[LATEST]
    if release not in RULES:
        raise UsageError(f"SGLang {release} is not a release kvplan models ({', '.join(RULES)})",
                         f"use --engine sglang (SGLang {LATEST}) or sglang@0.5.9")
    return RULES[release]


def vlm_fraction_factor(raw: dict | None) -> tuple[float | None, str]:
    """(factor, how) of adjust_mem_fraction_for_vlm (0.5.9 server_args.py; 0.5.23 arg_groups/memory_hook.py, the
    same arithmetic): 0.95 x clamp(1 - 0.1 x (L x H^2 / (24 x 1,024^2) - 1), 0.8, 1.05) for a vision tower of L
    layers of H. None where config.json leaves L or H (or the whole vision_config) to the config classes' defaults,
    which kvplan does not replay."""
    vision = raw.get("vision_config") if isinstance(raw, dict) else None
    if vision is None:
        return None, "config.json has no vision_config (its config class may build a default one)"
    layers, hidden = (vision.get(k) if isinstance(vision, dict) else None for k in ("num_hidden_layers", "hidden_size"))
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (layers, hidden)):
        return None, "the vision_config leaves num_hidden_layers or hidden_size to its class defaults"
    dynamic = max(0.8, min(1.05, 1.0 - 0.1 * (layers * hidden**2 / (24 * 1024**2) - 1.0)))
    return 0.95 * dynamic, f"vision tower {layers} x {hidden}: x 0.95 x {dynamic:.4g}"


def prefill_graph_sizes(max_bs: int) -> int:
    """How many prefill CUDA graphs SGLang 0.5.23 captures up to max_bs tokens
    (arg_groups/cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes)."""
    sizes = [*range(4, 33, 4), *range(48, 257, 16), *range(288, 513, 32), *range(576, 1025, 64),
             *range(1280, 4097, 256), *range(4608, max_bs + 1, 512)]
    return sum(1 for s in sizes if s <= max_bs)


@dataclass(frozen=True)
class MemoryDefaults:
    chunked_prefill_size: int
    cuda_graph_max_bs: int
    mem_fraction_static: float
    reserved_mib: float
    prefill_graph_mib: float = 0  # 0.5.23: the breakable prefill CUDA graphs' reserve


def memory_defaults(gpu_mib: float, tp: int = 1, pp: int = 1, speculative: str | None = None,
                    rules: Rules | None = None, *, mla: bool = False, prefill_graph: bool = True,
                    max_running_requests: int | None = None) -> MemoryDefaults:
    """SGLang's chunked_prefill_size, cuda_graph_max_bs and mem_fraction_static for a card of gpu_mib MiB
    (speculative: the algorithm, whose draft 0.5.9 reserves more for). 0.5.23 (arg_groups/memory_hook.py
    handle_gpu_memory_settings, reserve_for_graph_mb) also reserves for its breakable prefill CUDA graphs, 8 MiB
    a captured size up to chunked_prefill_size (1.5 GiB flat for MLA) unless prefill_graph is False (pipeline
    parallelism, most multimodal models), cuts the decode graphs' batch to a given max_running_requests, and
    takes the 10 GiB floor after the graph terms."""
    rules = rules or RULES[LATEST]
    for below, chunked, small_tp, large_tp in rules.defaults_by_memory:
        if below is None or gpu_mib < below:
            break
    graph_bs = small_tp if tp < 4 else large_tp
    if rules.prefill_graph_reserve and max_running_requests is not None:
        graph_bs = min(graph_bs, max_running_requests)
    prefill = 0
    if rules.prefill_graph_reserve and prefill_graph and pp == 1:
        prefill = 1.5 * 1024 if mla else prefill_graph_sizes(chunked) * 8
    reserved = 512 + max(chunked, 2048) * 1.5 + graph_bs * 2 + tp * pp / 8 * 1024 + prefill
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    reserved += rules.spec_reserved_mib.get(speculative, 0)
    return MemoryDefaults(chunked, graph_bs, round((gpu_mib - reserved) / gpu_mib, 3), reserved, prefill)


@dataclass(frozen=True)
class Speculation:
    """SGLang's speculative decoding as a plan asks for it (--speculative-algorithm and its steps)."""

    algorithm: str  # EAGLE (MTP layers: NEXTN, which SGLang runs as EAGLE, or an EAGLE head), EAGLE3, STANDALONE
    num_steps: int
    draft_tokens: int  # speculative_num_draft_tokens
    draft_layers: int  # the layers of the draft's own KV pool
    draft_name: str | None = None  # a separate draft checkpoint
    draft_architecture: str | None = None  # its architecture (a sliding-window draft splits its layers)


@dataclass(frozen=True)
class Cell:
    """One token's bytes on one GPU, and how SGLang splits them."""

    bytes: int
    kind: str  # "mla" | "mha" | "hybrid_swa"
    kv_bytes: int  # bytes per element
    full_layers: int
    full_per_token: int = 0  # hybrid: one full layer's bytes per token (kv bytes included)
    swa_layers: int = 0
    swa_per_token: int = 0
    k_per_token: int = 0  # mha / hybrid: K bytes of all layers per token (V: bytes - k)
    notes: tuple[str, ...] = ()
    state: "StateCell | None" = None  # a hybrid recurrent model's per-request state
    mla_stored: int = 0  # mla: one layer's stored bytes per token (DSA at fp8: 656, more than the profile's 576)
    index_bytes: int = 0  # mla with DSA: one layer's indexer key bytes per token (index_head_dim + its scales)
    full_k_per_token: int = 0  # hybrid: one full layer's K bytes per token (its V: full_per_token - this)
    swa_k_per_token: int = 0

    def mla_buffer_bytes(self, tokens: int, page: int) -> int:
        """An MLA pool's buffers for `tokens` (the KV size it logs): the latent of tokens + page per layer,
        the DSA indexer's whole pages of tokens + page + 1 (MLATokenToKVPool, NSATokenToKVPool)."""
        return self.full_layers * ((tokens + page) * self.mla_stored
                                   + (tokens + page + 1) // page * page * self.index_bytes)


@dataclass(frozen=True)
class StateCell:
    """One request's recurrent state on one GPU, as SGLang's state pool holds it."""

    conv_bytes: int
    ssm_bytes: int
    layers: int

    @property
    def bytes(self) -> int:
        return self.conv_bytes + self.ssm_bytes


def kv_dtype_bytes(model: ModelSpec, kv_cache_dtype: str | None) -> tuple[str, int]:
    """(SGLang's --kv-cache-dtype, bytes per element) for kvplan's storage of the model's caches, or the
    dtype asked for."""
    caches = [c for layer in model.layers for c in layer.caches if c.kind in ("attention", "latent")]
    if kv_cache_dtype is not None:
        if kv_cache_dtype not in KV_DTYPES:
            raise UsageError(f"--kv-cache-dtype {kv_cache_dtype!r} is not an SGLang KV dtype kvplan models",
                             "use auto, fp8_e4m3, fp8_e5m2 or bf16")
        return kv_cache_dtype, KV_DTYPES[kv_cache_dtype] or 2
    storage = caches[0].storage if caches else None
    if storage is None or storage.granularity == "none":
        return "auto", 2  # bf16 / fp16 (a float32 checkpoint is served in 16 bits)
    if storage.name.startswith("fp8") and storage.bits == 8:
        return ("fp8_e5m2" if storage.name == "fp8_e5m2" else "fp8_e4m3"), 1
    raise UsageError(f"SGLang has no KV dtype for kvplan's {storage.name} cache",
                     "SGLang stores K/V in bf16, fp8_e4m3 or fp8_e5m2: use --kv-dtype fp8 or auto")


def cell(model: ModelSpec, tp: int = 1, kv_bytes: int = 2, ssm_bytes: int = 4, rules: Rules | None = None,
         sm10: bool = False) -> Cell:
    """SGLang's cell size per token on one GPU (get_cell_size_per_token), from kvplan's per-layer caches;
    a hybrid recurrent model's per-request state beside it (ssm_bytes: its temporal state's width). sm10: the GPU
    is SM >= 10, whose DSA backend (trtllm) stores an fp8 latent without scales (0.5.23)."""
    rules = rules or RULES[LATEST]
    tp = max(tp, 1)
    if any(layer.shares_cache_of is not None for layer in model.layers):
        raise UsageError(f"SGLang: {model.name} reuses earlier layers' KV (num_kv_shared_layers), which kvplan has "
                         "not read in SGLang's pool", "use --engine vllm or ideal for this model")
    owners = model.layers
    state = state_cell(model, tp, ssm_bytes) if any(layer.state is not None for layer in model.layers) else None
    caches = [c for layer in owners for c in layer.caches]
    kinds = {c.kind for c in caches}
    nsa = kinds == {"latent", "indexer"} and (model.architecture or "") in NSA_ARCHS
    if not kinds <= {"attention", "latent"} and not nsa:
        raise UsageError(f"SGLang: {model.name}'s cache ({', '.join(sorted(kinds))}) is not modelled for SGLang "
                         "(DeepSeek-V4's compressed caches, an indexer outside SGLang's DSA architectures)",
                         "use --engine vllm or ideal for this model")
    if "latent" in kinds:
        layers = sum(1 for layer in owners if any(c.kind == "latent" for c in layer.caches))
        width = next(c.key_dim for c in caches if c.kind == "latent")
        stored, index = width * kv_bytes, 0
        profiled, index_layers = width * kv_bytes, layers
        if nsa:  # calculate_mla_kv_cache_dim; NSATokenToKVPool's index_k_with_scale_buffer (uint8)
            rope = next(c.rope_dim for c in caches if c.kind == "latent")
            # fp8 latent + a float32 scale per 128 + the rope part in bf16, except in 0.5.23 on SM >= 10, where the
            # default DSA backend (trtllm, overrides._dsa_split_backend_resolution) keeps the raw 576 B
            if kv_bytes == 1 and not (rules.dsa_stored_counted and sm10):
                stored = (width - rope) + (width - rope) // NSA_QUANT_BLOCK * 4 + rope * 2
            head = next(c.key_dim for c in caches if c.kind == "indexer")
            index = head + head // NSA_QUANT_BLOCK * 4
            if rules.dsa_stored_counted:  # 0.5.23: the pool is sized at what is stored, index keys on the layers
                # that compute their own top-k (dsa_layer_skips_topk; kvplan's indexer caches)
                profiled = stored
                index_layers = sum(1 for layer in owners if any(c.kind == "indexer" for c in layer.caches))
        return Cell(profiled * layers + index * index_layers, "mla", kv_bytes, layers, mla_stored=stored,
                    index_bytes=index, state=state)
    attn = [(layer, next(c for c in layer.caches if c.kind == "attention")) for layer in owners if layer.caches]
    if (model.architecture or "") in rules.hybrid_swa_archs:
        local = [_local(c) for _, c in attn]  # Llama 4's chunked layers are its "swa" layers
        full = [c for (_, c), is_local in zip(attn, local) if not is_local]
        swa = [c for (_, c), is_local in zip(attn, local) if is_local]
        if full and swa:
            own_shapes = rules.swa_split_on_cell and (model.architecture or "") in HYBRID_SWA_COMPRESS_0523
            if any(c.key_dim != c.value_dim for c in full + swa) and not own_shapes:
                raise UsageError(f"SGLang {rules.release}: {model.name}'s K and V widths differ in its sliding-window "
                                 "pool, which kvplan does not model for SGLang there",
                                 "use --engine vllm or ideal for this model")
            f, s = _uniform(model, full, tp), _uniform(model, swa, tp)
            if rules.swa_split_on_cell and f != s and not own_shapes:
                raise UsageError(f"SGLang {rules.release}: {model.name}'s full and sliding layers differ in KV heads or "
                                 "width; SGLang sizes its sliding sub-pool with the sliding layers' shape but allocates "
                                 "it with the full layers' (only is_hybrid_swa_compress models get their own)",
                                 "use --engine vllm or ideal for this model")
            return Cell((f[0] * len(full) + s[0] * len(swa)) * kv_bytes, "hybrid_swa", kv_bytes, len(full),
                        f[0] * kv_bytes, len(swa), s[0] * kv_bytes,
                        (f[1] * len(full) + s[1] * len(swa)) * kv_bytes,
                        full_k_per_token=f[1] * kv_bytes, swa_k_per_token=s[1] * kv_bytes)
    if state is not None and not attn:
        raise UsageError(f"SGLang: {model.name} has no attention layer for its token pool", "use --engine vllm")
    per_token, k = _uniform(model, [c for _, c in attn], tp)
    notes = ()
    if any(_local(c) for _, c in attn):
        notes = (f"SGLang {rules.release} pools every layer of {model.name} as full attention: its sliding windows "
                 "(or chunks) save nothing there (only the architectures of is_hybrid_swa_model get a sliding-window "
                 "pool)",)
    return Cell(per_token * len(attn) * kv_bytes, "mha", kv_bytes, len(attn), k_per_token=k * len(attn) * kv_bytes,
                notes=notes, state=state)


def state_cell(model: ModelSpec, tp: int, ssm_bytes: int = 4) -> StateCell:
    """One request's state on one GPU, conv in bf16 (SGLANG_MAMBA_CONV_DTYPE), the temporal state in ssm_bytes;
    refused for the state kinds and architectures SGLang's pool is not read for. Shapes (configs/mamba_utils.py):
    Mamba-2 and Gated DeltaNet Mamba2StateShape.create (groups padded to TP); LFM2's short conv the same with
    hidden_size channels and no temporal state (configs/lfm2.py); Kimi Delta Attention KimiLinearStateShape
    (conv over q, k and v, heads x head_dim each; temporal heads x head_dim x head_dim)."""
    states = [layer.state for layer in model.layers if layer.state is not None]
    kinds = {s.kind for s in states}
    if (model.architecture or "") not in STATE_ARCHS or not kinds <= {"gated_deltanet", "mamba2", "short_conv", "kda"}:
        raise UsageError(f"SGLang: the {', '.join(sorted(kinds))} state of {model.name} ({model.architecture}) is not "
                         "modelled for SGLang (Gated DeltaNet, Mamba-2 hybrids, LFM2's short conv and Kimi Linear's "
                         "KDA are)", "use --engine vllm or ideal for this model")
    conv = ssm = 0
    for s in states:
        if s.kind == "short_conv":
            if None in (s.conv_channels, s.conv_kernel):
                raise UsageError(f"SGLang: {model.name}'s state shape is not known to kvplan", "use --engine vllm")
            channels, temporal = s.conv_channels, 0
        elif s.kind == "kda":
            if None in (s.heads, s.head_dim, s.conv_kernel):
                raise UsageError(f"SGLang: {model.name}'s state shape is not known to kvplan", "use --engine vllm")
            channels, temporal = 3 * s.heads * s.head_dim, s.heads * s.head_dim * s.head_dim
            if s.heads % tp:
                raise UsageError(f"SGLang: --tp {tp} does not divide {model.name}'s {s.heads} KDA heads",
                                 "use a TP that divides them")
        else:
            if None in (s.n_groups, s.d_state, s.heads, s.head_dim, s.conv_kernel):
                raise UsageError(f"SGLang: {model.name}'s state shape is not known to kvplan", "use --engine vllm")
            d_inner = s.d_inner if s.kind == "mamba2" else s.heads * s.head_dim
            groups = s.n_groups + (0 if s.n_groups % tp == 0 else tp - s.n_groups)  # extra_groups_for_head_shards
            channels = d_inner + 2 * groups * s.d_state
            if s.heads % tp:
                raise UsageError(f"SGLang: --tp {tp} does not divide {model.name}'s {s.heads} state heads",
                                 "use a TP that divides them")
            temporal = s.heads * s.head_dim * s.d_state
        if channels % tp:
            raise UsageError(f"SGLang: --tp {tp} does not divide {model.name}'s {channels} conv channels",
                             "use a TP that divides them")
        conv += channels // tp * (s.conv_kernel - 1) * 2
        ssm += temporal // tp * ssm_bytes
    return StateCell(conv, ssm, len(states))


def _local(cache) -> bool:
    return cache.policy.window_tokens is not None or cache.policy.chunk_tokens is not None


def _uniform(model: ModelSpec, caches, tp: int) -> tuple[int, int]:
    """(K + V elements, K elements) per token of one layer: SGLang sizes these layers with one head count
    and width, so they must agree."""
    shapes = {(c.heads, c.key_dim, c.value_dim) for c in caches}
    if len(shapes) != 1:
        raise UsageError(f"SGLang: {model.name}'s layers differ in KV heads or width ({len(shapes)} shapes), "
                         "which SGLang's one-shape pool does not size as kvplan reads them",
                         "use --engine vllm or ideal for this model")
    heads, k, v = shapes.pop()
    heads = max(1, heads // tp)
    return heads * (k + v), heads * k


@dataclass(frozen=True)
class SglangPool:
    cell: Cell
    kv_cache_dtype: str
    rest_bytes: int  # the memory the pool is sized from
    max_total_num_tokens: int  # the full layers' tokens for a hybrid pool
    swa_tokens: int | None
    mamba_cache_size: int | None  # a hybrid recurrent model's states (max_mamba_cache_size)
    page_size: int
    context_len: int
    max_running_requests: int
    mem_fraction_static: float | None
    notes: tuple[str, ...] = field(default=())
    release: str = LATEST
    torch_dtype: str = "torch.bfloat16"  # the KV dtype as 0.5.23's pool logs it
    draft_bytes: int = 0  # 0.5.23: the draft's KV bytes per token, priced in the target's cell

    @property
    def max_concurrency(self) -> float:
        """Requests of context_len tokens SGLang runs at once: the pool's tokens over context_len, at most
        max_running_requests (a hybrid recurrent model's state pool caps that)."""
        return min(self.max_total_num_tokens / self.context_len, self.max_running_requests)

    @property
    def concurrent_requests(self) -> int:
        return min(self.max_total_num_tokens // self.context_len, self.max_running_requests)

    def log_lines(self) -> list[str]:
        """The lines SGLang logs for this pool (each buffer holds one page more than its tokens)."""
        c, n, page = self.cell, self.max_total_num_tokens, self.page_size
        labelled = RULES[self.release].log_dtype

        def allocated(label: str, tokens: int, sizes: str) -> str:
            if labelled:  # 0.5.23 memory_pool.py _finalize_allocation_log
                return f"{label}KV Cache is allocated. dtype: {self.torch_dtype}, #tokens: {tokens}, {sizes}"
            return f"KV Cache is allocated. #tokens: {tokens}, {sizes}"

        if c.kind == "mla":
            lines = [] if (c.index_bytes and labelled) else [
                allocated("", n, f"KV size: {c.mla_buffer_bytes(n, page) / GIB:.2f} GB")]
        elif c.kind == "mha":
            k = (n + page) * c.k_per_token
            v = (n + page) * c.bytes - k
            lines = [allocated("", n, f"K size: {k / GIB:.2f} GB, V size: {v / GIB:.2f} GB")]
        else:  # SWAKVPool: 0.5.9 builds the sliding pool first
            swa_k = (self.swa_tokens + page) * c.swa_k_per_token * c.swa_layers
            swa_v = (self.swa_tokens + page) * (c.swa_per_token - c.swa_k_per_token) * c.swa_layers
            full_k = (n + page) * c.full_k_per_token * c.full_layers
            full_v = (n + page) * (c.full_per_token - c.full_k_per_token) * c.full_layers
            swa = allocated("SWA ", self.swa_tokens, f"K size: {swa_k / GIB:.2f} GB, V size: {swa_v / GIB:.2f} GB")
            full = allocated("Full ", n, f"K size: {full_k / GIB:.2f} GB, V size: {full_v / GIB:.2f} GB")
            lines = [f"Use sliding window memory pool. full_layer_tokens={n}, swa_layer_tokens={self.swa_tokens}",
                     *((full, swa) if labelled else (swa, full)),
                     f"SWAKVPool mem usage: {(swa_k + swa_v + full_k + full_v) / GIB:.2f} GB, swa size: "
                     f"{self.swa_tokens}, full size: {n}"]
        if self.mamba_cache_size is not None:
            held = self.mamba_cache_size + 1
            lines.insert(0, f"Mamba Cache is allocated. max_mamba_cache_size: {self.mamba_cache_size}, conv_state size: "
                            f"{held * c.state.conv_bytes / GIB:.2f}GB, ssm_state size: {held * c.state.ssm_bytes / GIB:.2f}GB")
        lines.append(f"max_total_num_tokens={n}, max_running_requests={self.max_running_requests}, "
                     f"context_len={self.context_len}")
        return lines


TORCH_DTYPES = {"fp8_e4m3": "torch.float8_e4m3fn", "fp8_e5m2": "torch.float8_e5m2", "bf16": "torch.bfloat16",
                "bfloat16": "torch.bfloat16"}


def pool(model: ModelSpec, *, rest_bytes: int, context_len: int, tp: int = 1, kv_cache_dtype: str | None = None,
         page_size: int = 1, max_total_tokens: int | None = None, max_running_requests: int | None = None,
         mem_fraction_static: float | None = None, ssm_bytes: int = 4, nsa_fp8: bool = False,
         speculation: Speculation | None = None,
         swa_full_tokens_ratio: float = SWA_FULL_TOKENS_RATIO, rules: Rules | None = None) -> SglangPool:
    """SGLang's pool from the memory it sizes it from (profile_max_num_token's rest, in bytes). ssm_bytes:
    a hybrid recurrent model's temporal state width (ssm_state_bytes). nsa_fp8: the GPU is SM >= 10, where
    SGLang's KV dtype auto is fp8_e4m3 for DeepSeek's sparse attention. rules: the release (default the newest)."""
    rules = rules or RULES[LATEST]
    if page_size < 1:
        raise UsageError(f"--block-size {page_size}: SGLang's page_size must be 1 or more")
    dtype, kv_bytes = kv_dtype_bytes(model, kv_cache_dtype)
    if nsa_fp8 and dtype == "auto" and is_nsa(model):
        dtype, kv_bytes = "fp8_e4m3", 1
    if rules.dsa_stored_counted and dtype == "fp8_e5m2" and is_nsa(model):
        raise UsageError(f"SGLang {rules.release} serves DeepSeek's sparse attention with a bfloat16 or fp8_e4m3 "
                         "cache only (_dsa_kv_cache_dtype_default)", "use -t fp8 (e4m3) or the default")
    c = cell(model, tp, kv_bytes, ssm_bytes, rules, sm10=nsa_fp8)
    notes = list(c.notes)
    if c.index_bytes:
        if page_size != NSA_PAGE_SIZE:
            notes.append(f"SGLang sets page_size {NSA_PAGE_SIZE} for DeepSeek's sparse attention on CUDA")
        page_size = NSA_PAGE_SIZE
        if dtype == "fp8_e4m3" and kv_cache_dtype is None:
            notes.append("SGLang stores DeepSeek's sparse-attention cache in fp8_e4m3 by default on SM >= 10 GPUs")
        profiled = c.bytes // c.full_layers - c.index_bytes
        if rules.dsa_stored_counted:
            notes.append(f"SGLang {rules.release}'s DSA pool logs its KV size from buffers kvplan has not read "
                         "(IndexKeyCache): that line is left out"
                         + ("" if kv_bytes == 2 or nsa_fp8 else "; fp8 stored as on Hopper (flashmla_kv: 656 B a "
                            "layer with scales), Blackwell's trtllm keeps 576 (give --gpu)"))
        elif c.mla_stored > profiled:
            notes.append(f"SGLang sizes this pool at {profiled} B of latent a layer and token but stores "
                         f"{c.mla_stored} (fp8 with a scale per 128 and the rope part in bf16: "
                         "calculate_mla_kv_cache_dim), so its buffers outgrow the memory they were sized from by "
                         f"{(c.mla_stored - profiled) / (profiled + c.index_bytes):.1%}")
    if speculation is not None and max_running_requests is None:
        max_running_requests = SPEC_MAX_RUNNING_REQUESTS  # _handle_speculative_decoding's default
    draft = 0
    if rules.draft_kv_in_cell and speculation is not None:  # DefaultPoolConfigurator: the target's per-layer size
        if c.kind == "hybrid_swa":  # HybridSWAPoolConfigurator: a draft without sliding layers prices them as full
            if speculation.draft_name is None or (speculation.draft_architecture or "") in rules.hybrid_swa_archs:
                raise UsageError(f"SGLang {rules.release}: a sliding-window draft on a sliding-window pool is not "
                                 "modelled (its layers split between the full and sliding sub-pools by "
                                 "mtp_local_layer_ids / eagle_draft_swa_num_layers)",
                                 "plan without --mtp / --draft-model, or use --engine sglang@0.5.9")
            draft = c.full_per_token * speculation.draft_layers
        else:
            draft = int(c.bytes * speculation.draft_layers / c.full_layers)
    rest_bytes, states, ratio = _states(c, rest_bytes, rules, model, speculation, max_running_requests, notes)
    if c.kind == "hybrid_swa" and rules.swa_split_on_cell:  # 0.5.23 HybridSWAPoolConfigurator
        per_full = (c.full_per_token * c.full_layers + draft
                    + swa_full_tokens_ratio * c.swa_per_token * c.swa_layers)
        full = int(rest_bytes // per_full)
        if max_total_tokens is not None:
            full = min(full, max_total_tokens)
        tokens = raw = full // page_size * page_size
        swa = int(tokens * swa_full_tokens_ratio) // page_size * page_size
    else:
        tokens = raw = rest_bytes // (c.bytes + draft)
        if max_total_tokens is not None:
            tokens = min(tokens, max_total_tokens)
        tokens = tokens // page_size * page_size
        swa = None
        if c.kind == "hybrid_swa":  # 0.5.9 set_num_tokens_hybrid_swa
            total = tokens * (c.full_per_token * c.full_layers + c.swa_per_token * c.swa_layers)
            full = int(total / (c.full_per_token * c.full_layers
                                + swa_full_tokens_ratio * c.swa_per_token * c.swa_layers))
            swa = int(full * swa_full_tokens_ratio) // page_size * page_size
            tokens = full // page_size * page_size
    if tokens <= 0:
        raise UsageError(f"SGLang would have no KV cache tokens on this GPU ({rest_bytes / GIB:.2f} GiB for the pool)",
                         "raise --mem-util (SGLang's --mem-fraction-static), add GPUs (--tp), or use a smaller model")
    # max_running_requests (0.5.9 model_runner.init_memory_pool; 0.5.23 kv_cache_configurator.resolve_max_num_reqs):
    # the estimate from the profiled tokens (0.5.23: the final ones), at most half the pool's tokens
    estimate = min(max(int((tokens if rules.swa_split_on_cell else raw) / context_len * 512), 2048), 4096)
    if max_running_requests is None:
        requests = min(estimate, tokens // 2)
    else:
        requests = min(max_running_requests, tokens // 2) if rules.swa_split_on_cell else max_running_requests
    if states is not None:
        requests = min(requests, states // ratio)
    return SglangPool(c, dtype, rest_bytes, tokens, swa, states, page_size, context_len, requests,
                      mem_fraction_static, tuple(notes), rules.release,
                      TORCH_DTYPES.get(dtype, "torch.float16" if model.weight_dtype == "float16" else "torch.bfloat16"),
                      draft)


def _states(c: Cell, rest_bytes: int, rules: Rules, model: ModelSpec, speculation: Speculation | None,
            max_running_requests: int | None, notes: list) -> tuple[int, int | None, int]:
    """A hybrid recurrent model's state pool, sized first in proportion to the KV (handle_max_mamba_cache):
    (the bytes left for tokens, max_mamba_cache_size, the state slots a request holds)."""
    if c.state is None:
        return rest_bytes, None, MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
    per = c.state.bytes
    extra = MAMBA_EXTRA_BUFFER_SLOTS if (model.architecture or "") in rules.mamba_extra_buffer_archs else 0
    ratio = MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO + extra
    if extra:
        notes.append(f"SGLang {rules.release} keeps {extra} extra state slots a request for {model.architecture} "
                     "(mamba_radix_cache_strategy auto = extra_buffer under the overlap schedule): max_running_requests "
                     f"at most the states / {ratio}")
    if not rules.mamba_padding_slot:  # 0.5.9: the draft steps' intermediate states reserved first, then the states
        if speculation is not None:
            reserve = per * max_running_requests * speculation.draft_tokens
            rest_bytes -= reserve
            notes.append(f"speculative decoding: {reserve / GIB:,.2f} GiB reserved for {max_running_requests} "
                         f"requests' intermediate states over {speculation.draft_tokens} draft tokens")
        states = int(rest_bytes * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO) // per)
        rest_bytes -= states * per
    else:  # 0.5.23: one padding slot charged; with speculation a joint solve with the intermediate states
        budget = rest_bytes * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO)
        if speculation is not None:
            d = speculation.draft_tokens
            states = int((budget - per * (1 + d)) // (per * (1 + d / ratio)))
            reserve = per * (min(max_running_requests, max(states, 0) // ratio) + 1) * d
            rest_bytes -= reserve
            notes.append(f"speculative decoding: {reserve / GIB:,.2f} GiB of intermediate states over {d} draft "
                         "tokens (handle_max_mamba_cache's joint solve)")
        else:
            states = int((budget - per) // per)
        rest_bytes -= (states + 1) * per
    if states <= 0:
        raise UsageError(f"SGLang would have no room for {model.name}'s recurrent states "
                         f"({per / 2**20:,.1f} MiB a request)", "raise --mem-util or add GPUs (--tp)")
    return int(rest_bytes), states, ratio


# utils/hf_transformers_utils.py get_context_length: the first of these the text config has, times a rope
# scaling factor (1 when the scaling names original_max_position_embeddings or is llama3's)
CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")
LONG_CONTEXT_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"  # configs/model_config.py _derive_context_length


def context_limit(raw: dict | None) -> tuple[int | None, bool]:
    """(the context length SGLang derives from a config, whether kvplan reads it exactly). Exact only when the
    file names one of the keys and its rope scaling is absent or a plain rope_scaling dict: a newer
    `rope_parameters`, or a key left to the config class's default, reaches SGLang through transformers'
    config object, which kvplan does not replay."""
    if not isinstance(raw, dict):
        return None, False
    text = raw.get("text_config") if isinstance(raw.get("text_config"), dict) else raw
    scaling = text.get("rope_scaling")
    exact = "rope_parameters" not in text
    factor = 1
    if isinstance(scaling, dict) and scaling:
        factor = scaling.get("factor", 1)
        if "original_max_position_embeddings" in scaling or scaling.get("rope_type") == "llama3":
            factor = 1
        if not isinstance(factor, (int, float)) or isinstance(factor, bool):
            return None, False
    for key in CONTEXT_LENGTH_KEYS:
        value = text.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return int(factor * value), exact
    return None, False  # none in the file: transformers' class defaults fill it, which kvplan does not replay


def is_nsa(model: ModelSpec) -> bool:
    """DeepSeek's sparse attention as SGLang sees it: an indexer cache on one of its DSA architectures."""
    return (model.architecture or "") in NSA_ARCHS and any(
        c.kind == "indexer" for layer in model.layers for c in layer.caches)


def ssm_state_bytes(raw: dict | None) -> tuple[int, str | None]:
    """(bytes of a temporal state element, note): the config's mamba_ssm_dtype (or its text_config's), else
    SGLang's float32 default (configs/mamba_utils.py mamba2_state_dtype; SGLANG_MAMBA_SSM_DTYPE not read)."""
    widths = {"float32": 4, "bfloat16": 2, "float16": 2}
    if isinstance(raw, dict):
        nested = raw.get("text_config") if isinstance(raw.get("text_config"), dict) else {}
        name = nested.get("mamba_ssm_dtype", raw.get("mamba_ssm_dtype"))
        if name in widths:
            return widths[name], None
        return 4, None
    return 4, "the config's mamba_ssm_dtype was not read (a Hub config): SGLang's float32 default assumed"


__all__ = ["RELEASE", "LATEST", "RULES", "Rules", "rules_for", "memory_defaults", "vlm_fraction_factor", "cell", "state_cell", "pool", "ssm_state_bytes", "is_nsa", "context_limit",
           "SglangPool", "Cell",
           "Speculation",
           "StateCell", "kv_dtype_bytes"]
