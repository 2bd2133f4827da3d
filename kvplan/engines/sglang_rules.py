"""SGLang's releases as kvplan models them: what changed between 0.5.9 and 0.5.23 (`Rules`), the
architecture lists each release keys its pool on, the default mem_fraction_static, the context length it
derives and the state dtype. Read in the sglang 0.5.9 sdist and the 0.5.23 wheel (python/sglang/srt/...), the
file and function named beside each; the pool arithmetic is kvplan.engines.sglang.

What 0.5.23 changed (0.5.9's pool rules: kvplan.engines.sglang; its default fraction below):
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
  K = int((B - per (1 + D)) // (per (1 + D / ratio))), the radix cache kept on (0.5.9 turned it off under speculation:
  Rules.spec_radix_off_state_archs); Qwen3-Next / Qwen3.5 / Nemotron-H / Falcon-H1 take the
  extra_buffer strategy under the default overlap schedule (overrides._mamba_radix_cache_resolution; also
  Granite 4.0-H and Kimi Linear, not LFM2), 3 + 2 state slots a request, so max_running_requests <= K // 5.
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

0.5.9's default mem_fraction_static (0.5.23 keeps it where the list above does not say):
- mem_fraction_static, unless given (server_args.py _handle_gpu_memory_settings), from the GPU memory
  in MiB (nvidia-smi's memory.total): reserved = 512 + max(chunked_prefill_size, 2048) x 1.5 +
  cuda_graph_max_bs x 2 + tp x pp / 8 x 1024 MiB, at least 10 GiB on a card above 60 GiB; fraction =
  round((gpu - reserved) / gpu, 3). chunked_prefill_size and cuda_graph_max_bs come from the card's
  memory (DEFAULTS_BY_MEMORY). A multimodal architecture's default is then scaled for its vision tower
  (adjust_mem_fraction_for_vlm, vlm_fraction_factor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..capacity.gpus import CUDA_CAPABILITY
from ..errors import ConfigError, UsageError
from .sglang_dp import gather_reserve_mib
from .sglang_mtp import DRAFTS as MTP_DRAFTS

# 0.5.23 DSV4PoolConfigurator (kvplan.engines.sglang_dsv4); configs/deepseek_v41.py normalize_deepseek_v41_config
# serves DeepseekV41ForCausalLM as DeepseekV4ForCausalLM
DSV4_ARCHS = frozenset({"DeepseekV4ForCausalLM", "DeepseekV41ForCausalLM"})


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
SM10_GPUS = frozenset(name for name, cap in CUDA_CAPABILITY.items() if cap >= (10, 0))  # catalog cards of SM >= 10
SWA_FULL_TOKENS_RATIO = 0.8  # server_args.py

# model types whose config's sliding_window_size is one less than the window kvplan reads (transformers 5.25
# MiMoV2FlashConfig: sliding_window = sliding_window_size + 1): SGLang 0.5.23 ModelConfig._get_sliding_window_size
# (configs/model_config.py) reads sliding_window_size before sliding_window, so its pool configurator's window is
# 128 there. Its attention keeps kvplan's 129: mimo_v2.py gives RadixAttention sliding_window_size = 128 and
# FlashAttentionBackend uses window_size = (128, 0), 128 earlier tokens and the query (vLLM instead keeps 128 in
# all: vllm_rules.WINDOW_ONE_LESS, the same model types)
WINDOW_FIELD_ONE_LESS = frozenset(("mimo_v2", "mimo_v2_flash"))
MAMBA_FULL_MEMORY_RATIO = 0.9  # server_args.py
MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3  # model_runner_kv_cache_mixin.py
# architectures whose KV-sharing layers (num_kv_shared_layers) SGLang pools like any other layer: Gemma 3n
# (kvplan.engines.sglang.cell; 0.5.9 and 0.5.23 models/gemma3n_causal.py, gemma3n_mm.py)
KV_SHARED_POOLED_ARCHS = frozenset({"Gemma3nForCausalLM", "Gemma3nForConditionalGeneration"})
# pure state-space models, 0.5.23 only (0.5.9 registers none): configs/model_config.py PURE_SSM_ARCHITECTURES, no
# attention layer (full_attention_layer_ids [], AttentionArch.SSM, no KV heads); configs/hybrid_arch.py mamba2_config
# takes their MambaConfig / FalconMambaConfig (configs/mamba.py _mamba1_cache_params:
# Mamba2StateShape.create_full_rank) and Mamba2Config (configs/mamba2.py: Mamba2StateShape.create); none is in
# arg_groups/overrides.py _MAMBA_RADIX_CACHE_ARCHS or _MAMBA_EXTRA_BUFFER_ARCHS: the radix cache stays on
# (MambaRadixCache, mem_cache/kv_cache_builder.uses_ssm_state), 3 state slots a request
PURE_SSM_ARCHS = frozenset({"MambaForCausalLM", "FalconMambaForCausalLM", "Mamba2ForCausalLM"})
# architectures SGLang gives a state pool (model_runner.mambaish_config: hybrid_gdn_config, mamba2_config),
# whose state kvplan sizes
STATE_ARCHS = frozenset({"Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                         "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "NemotronHForCausalLM", "FalconH1ForCausalLM",
                         "GraniteMoeHybridForCausalLM", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM",
                         "KimiLinearForCausalLM",
                         # 0.5.23 configs/hybrid_arch.py mamba2_config: NemotronH_Nano_VL_V2_Config's llm_config, a
                         # NemotronHConfig (its mamba2_cache_params); 0.5.9 model_runner.mamba2_config the same
                         "NemotronH_Nano_VL_V2",
                         # 0.5.23 only (0.5.9 registers no BailingMoeV3ForCausalLM): hybrid_arch.kimi_linear_config
                         # takes a BailingHybridConfig with use_kda (short_conv_kernel_size set); its
                         # mamba2_cache_params is KimiLinearCacheParams(KimiLinearStateShape.create(num_attention_heads,
                         # head_dim, short_conv_kernel_size)), as KimiLinearConfig's (configs/bailing_hybrid.py)
                         "BailingMoeV3ForCausalLM",
                         # Ling / Ring 2.5, 0.5.9 and 0.5.23: hybrid_lightning_config takes a BailingHybridConfig
                         # without use_kda; its lightning state: kvplan.engines.sglang_bailing.check_ling25
                         "BailingMoeV2_5ForCausalLM",
                         # 0.5.23 only: mamba2_config takes a ZayaConfig; its CCA state and layer split:
                         # kvplan.engines.sglang_zaya
                         "ZayaForCausalLM"}) | PURE_SSM_ARCHS
# the configs whose state params read the config's mamba_ssm_dtype (mamba2_state_dtype(self)); the others
# (GraniteMoeHybrid, Kimi Linear: mamba2_state_dtype(None)) keep the float32 default
SSM_DTYPE_FROM_CONFIG_ARCHS = frozenset({"Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration",
                                         "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForCausalLM",
                                         "Qwen3_5MoeForCausalLM", "NemotronHForCausalLM", "FalconH1ForCausalLM",
                                         "NemotronH_Nano_VL_V2"})  # its llm_config's (ssm_state_bytes reads it)
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
# (BailingMoeV3ForCausalLM and BailingMoeV2_5ForCausalLM are listed; NemotronH_Nano_VL_V2 is in neither that list nor _MAMBA_RADIX_CACHE_ARCHS: its
# strategy stays "auto", mamba_extra_buffer_of false, the radix cache on, so 3 slots a request; ZayaForCausalLM is in
# _MAMBA_RADIX_CACHE_ARCHS only: no_buffer, 3 slots)
MAMBA_EXTRA_BUFFER_ARCHS_0523 = STATE_ARCHS - PURE_SSM_ARCHS - {"Lfm2ForCausalLM", "Lfm2MoeForCausalLM",
                                                                 "NemotronH_Nano_VL_V2", "ZayaForCausalLM"}
MAMBA_EXTRA_BUFFER_SLOTS = 2
# 0.5.9 server_args._handle_model_specific_adjustments: the state architectures kvplan pools whose branch calls
# _handle_mamba_radix_cache with support_mamba_cache=True (Qwen3-Next and Qwen3.5's two ForConditionalGeneration
# classes, Nemotron-H, Falcon-H1, Granite 4.0-H when its layer_types name "mamba", the condition that also gives it a
# state pool (model_runner.mambaish_config), LFM2); JetNemotron / JetVLM share Falcon-H1's branch but kvplan pools
# neither. Lfm2MoeForCausalLM and NemotronH_Nano_VL_V2 have no branch there: their radix cache stays on
SPEC_RADIX_OFF_STATE_ARCHS_059 = frozenset({"Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration",
                                            "Qwen3_5ForConditionalGeneration", "NemotronHForCausalLM",
                                            "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM", "Lfm2ForCausalLM"})


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
    swa_own_shapes_archs: frozenset  # 0.5.23 is_hybrid_swa_compress: a sliding sub-pool of its own heads and widths
    graphs_capped_by_requests: bool  # 0.5.23 memory_hook: a given max_running_requests caps the decode graphs' batch
    # 0.5.23 kv_cache_configurator.resolve_max_num_reqs: the estimate from the final tokens, a given value held to
    # tokens // 2, no request at all refused (0.5.9 init_memory_pool: the profiled tokens, a given value as given)
    requests_on_final_tokens: bool
    # 0.5.9 server_args._handle_model_specific_adjustments: _handle_mamba_radix_cache(support_mamba_cache=False)
    # turns the radix cache off for these state models, so (model_runner_kv_cache_mixin.py) a request holds one
    # state slot (ratio 1, not 3) and a given max_running_requests is the state pool's size (handle_max_mamba_cache);
    # 0.5.23 keeps their radix cache on (_MAMBA_RADIX_CACHE_ARCHS)
    radix_off_state_archs: frozenset = frozenset()
    # 0.5.9 server_args._handle_mamba_radix_cache(support_mamba_cache=True): mamba_scheduler_strategy "auto" is
    # "no_buffer" (__post_init__), and under no_buffer a speculative algorithm turns the radix cache off for these
    # ("speculative decoding for X is not supported with radix cache yet"): one state slot a request, and
    # max_running_requests (48 unless given) sizes the state pool; 0.5.23 keeps the radix cache on
    spec_radix_off_state_archs: frozenset = frozenset()
    # 0.5.23 configs/bailing_hybrid.py: use_kda = short_conv_kernel_size is not None (0.5.9: every bailing_hybrid
    # config is lightning attention, model_runner.hybrid_lightning_config)
    bailing_kda_by_conv: bool = False
    # 0.5.9 mem_cache/memory_pool.py MambaPool: under speculation the "Mamba Cache is allocated." line adds the
    # intermediate SSM and conv-window caches, (max_num_reqs + 1) x speculative_num_draft_tokens states each; 0.5.23's
    # (conv windows deduplicated on CUDA, ReplaySSM buffers) is not modelled and the line is left at its plain part
    logs_intermediate_states: bool = False
    # 0.5.9 mem_cache/mamba_radix_cache.py MambaRadixCache.__init__: without the extra buffer (0.5.9 runs
    # mamba_scheduler_strategy no_buffer unless told otherwise) it asserts page_size == 1, so a state model with its
    # radix cache on does not start with a larger --page-size; 0.5.23 has no such assert
    mamba_radix_page_one: bool = False
    # model_config._config_draft_model: the target architectures whose own MTP draft class kvplan read
    # (kvplan.engines.sglang_mtp: MiMo-7B, ERNIE-4.5 MoE, Nemotron-H, MiMo-V2, read in 0.5.23 only)
    mtp_targets: frozenset = frozenset()
    # the architectures whose DeepSeek-V4 pool (model_executor/pool_configurator.py DSV4PoolConfigurator) kvplan
    # read (kvplan.engines.sglang_dsv4; 0.5.9 registers no DeepseekV4ForCausalLM)
    dsv4_pool_archs: frozenset = frozenset()


RULES = {
    "0.5.9": Rules("0.5.9", DEFAULTS_BY_MEMORY, SPEC_RESERVED_MIB, False, HYBRID_SWA_ARCHS, False, frozenset(),
                   False, False, False, False, 0, MULTIMODAL_ARCHS_059, frozenset(), False, False,
                   radix_off_state_archs=frozenset({"KimiLinearForCausalLM", "BailingMoeV2_5ForCausalLM"}),
                   spec_radix_off_state_archs=SPEC_RADIX_OFF_STATE_ARCHS_059, logs_intermediate_states=True,
                   mamba_radix_page_one=True),
    "0.5.23": Rules("0.5.23", DEFAULTS_BY_MEMORY_0523, {}, True, HYBRID_SWA_ARCHS_0523, True,
                    MAMBA_EXTRA_BUFFER_ARCHS_0523, True, True, True, True, VLM_CACHE_MIB, MULTIMODAL_ARCHS_0523,
                    HYBRID_SWA_COMPRESS_0523, True, True, bailing_kda_by_conv=True,
                    mtp_targets=frozenset().union(*(targets for _, targets in MTP_DRAFTS.values())),
                    dsv4_pool_archs=DSV4_ARCHS),
}
LATEST = "0.5.23"
RELEASE = LATEST  # what --engine sglang models
KV_DTYPES = {"auto": None, "fp8_e4m3": 1, "fp8_e5m2": 1, "bf16": 2, "bfloat16": 2}


def radix_off_reason(rules: Rules, architecture: str | None, speculative: bool) -> str | None:
    """Why the release turns the radix cache off for a state model (so a request holds one state slot and a given
    max_running_requests sizes the state pool), or None where it stays on."""
    arch = architecture or ""
    if arch in rules.radix_off_state_archs:
        return (f"SGLang {rules.release} turns the radix cache off for {arch} "
                "(_handle_mamba_radix_cache(support_mamba_cache=False))")
    if speculative and arch in rules.spec_radix_off_state_archs:
        return (f"SGLang {rules.release} turns the radix cache off for {arch} under speculative decoding "
                "(_handle_mamba_radix_cache: mamba_scheduler_strategy no_buffer with a speculative algorithm)")
    return None


def page_size_refusal(rules: Rules, model, page_size: int | None, speculative: bool) -> str | None:
    """Why the release would not start a state model at this page size with its radix cache on, or None."""
    if not rules.mamba_radix_page_one or not page_size or page_size == 1:
        return None
    if not any(layer.state is not None for layer in model.layers):
        return None
    if radix_off_reason(rules, model.architecture, speculative) is not None:
        return None
    return (f"SGLang {rules.release} would not start with --page-size {page_size}: a state model's radix cache "
            "(MambaRadixCache, no extra buffer) asserts page size 1 (mem_cache/mamba_radix_cache.py); plan page:1, "
            "or add --disable-radix-cache to the command (kvplan's pool is the same, prefix reuse is lost)")


def rules_for(release: str | None) -> Rules:
    """The rules of an SGLang release kvplan models (None: the newest)."""
    if release is None:
        return RULES[LATEST]
    if release not in RULES:
        raise UsageError(f"SGLang {release} is not a release kvplan models ({', '.join(RULES)})",
                         f"name one of them (--engine sglang@RELEASE, calibrate --version RELEASE), or leave it out "
                         f"for {LATEST}")
    return RULES[release]


# config model_types whose config class has no top-level vision_config attribute (it keeps the tower under
# thinker_config), so adjust_mem_fraction_for_vlm's getattr(hf_config, "vision_config", None) is None and the
# fraction is left as it is: Qwen3OmniMoeConfig of SGLang 0.5.23 (configs/qwen3_omni.py) and of transformers 5.19
# (models/qwen3_omni_moe/configuration_qwen3_omni_moe.py: thinker_config, talker_config, code2wav_config only)
NO_TOP_VISION_CONFIG = frozenset({"qwen3_omni_moe"})


def vlm_fraction_factor(raw: dict | None) -> tuple[float | None, str]:
    """(factor, how) of adjust_mem_fraction_for_vlm (0.5.9 server_args.py; 0.5.23 arg_groups/memory_hook.py, the
    same arithmetic): 0.95 x clamp(1 - 0.1 x (L x H^2 / (24 x 1,024^2) - 1), 0.8, 1.05) for a vision tower of L
    layers of H. None where config.json leaves L or H (or the whole vision_config) to the config classes' defaults,
    which kvplan does not replay."""
    if isinstance(raw, dict) and raw.get("model_type") in NO_TOP_VISION_CONFIG:
        return 1.0, (f"{raw['model_type']}'s config class keeps its vision tower in thinker_config, and "
                     "hf_config.vision_config is None: not scaled")
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
                    max_running_requests: int | None = None, dp: int = 1, a2a_mib: float = 0) -> MemoryDefaults:
    """SGLang's chunked_prefill_size, cuda_graph_max_bs and mem_fraction_static for a card of gpu_mib MiB
    (speculative: the algorithm, whose draft 0.5.9 reserves more for). 0.5.23 (arg_groups/memory_hook.py
    handle_gpu_memory_settings, reserve_for_graph_mb) also reserves for its breakable prefill CUDA graphs, 8 MiB
    a captured size up to chunked_prefill_size (1.5 GiB flat for MLA) unless prefill_graph is False (pipeline
    parallelism, most multimodal models), cuts the decode graphs' batch to a given max_running_requests, and
    takes the 10 GiB floor after the graph terms. dp: --enable-dp-attention's groups, whose gather padding
    reserve_for_graph_mb also reserves for (engines/sglang_dp.py; tp is then the whole --tp). a2a_mib: what
    reserve_for_deepep_a2a_mb adds after the floor (engines/sglang_a2a.py)."""
    rules = rules or RULES[LATEST]
    for below, chunked, small_tp, large_tp in rules.defaults_by_memory:
        if below is None or gpu_mib < below:
            break
    graph_bs = small_tp if tp < 4 else large_tp
    if rules.graphs_capped_by_requests and max_running_requests is not None:
        graph_bs = min(graph_bs, max_running_requests)
    prefill = 0
    if rules.prefill_graph_reserve and prefill_graph and pp == 1:
        prefill = 1.5 * 1024 if mla else prefill_graph_sizes(chunked) * 8
    reserved = 512 + max(chunked, 2048) * 1.5 + graph_bs * 2 + tp * pp / 8 * 1024 + prefill
    reserved += gather_reserve_mib(graph_bs, dp)
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    reserved += a2a_mib
    reserved += rules.spec_reserved_mib.get(speculative, 0)
    return MemoryDefaults(chunked, graph_bs, round((gpu_mib - reserved) / gpu_mib, 3), reserved, prefill)


# utils/hf_transformers_utils.py get_context_length: the first of these the text config has, times a rope
# scaling factor (1 when the scaling names original_max_position_embeddings or is llama3's)
CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")
LONG_CONTEXT_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"  # configs/model_config.py _derive_context_length



def hf_text_config(raw: dict, flat: bool = True) -> dict:
    """The text model's fields as SGLang 0.5.23 picks them (utils/hf_transformers/common.py get_hf_text_config,
    which configs/model_config.py reads as hf_text_config): a Llava*ForCausalLM architecture keeps the config
    itself; else thinker_config (its text_config, else itself) before llm_config before language_config before
    text_config; none of them: the config itself (`flat`), or {} where a caller reads the nested model only."""
    archs = raw.get("architectures")
    first = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else ""
    if first.startswith("Llava") and first.endswith("ForCausalLM"):
        return raw if flat else {}
    thinker = raw.get("thinker_config")
    if isinstance(thinker, dict):
        nested = thinker.get("text_config")
        return nested if isinstance(nested, dict) else thinker
    for key in ("llm_config", "language_config", "text_config"):
        if isinstance(raw.get(key), dict):
            return raw[key]
    return raw if flat else {}

def context_limit(raw: dict | None) -> tuple[int | None, bool]:
    """(the context length SGLang derives from a config, whether kvplan reads it exactly). Exact only when the
    file names one of the keys and its rope scaling is absent or a plain rope_scaling dict: a newer
    `rope_parameters`, or a key left to the config class's default, reaches SGLang through transformers'
    config object, which kvplan does not replay."""
    if not isinstance(raw, dict):
        return None, False
    text = hf_text_config(raw)
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
            limit = factor * value
            if not math.isfinite(limit) or limit > 2**40:
                raise ConfigError(f"rope_scaling.factor {factor!r} x {key} {value:,} is not a context length",
                                  "fix rope_scaling.factor in the config")
            return int(limit), exact
    return None, False  # none in the file: transformers' class defaults fill it, which kvplan does not replay


SSM_DTYPE_ENV = "SGLANG_MAMBA_SSM_DTYPE"  # environ.py; mamba2_state_dtype: it overrides the config
SSM_DTYPE_WIDTHS = {"float32": 4, "bfloat16": 2, "float16": 2}


def ssm_state_bytes(raw: dict | None) -> tuple[int, str | None]:
    """(bytes of a temporal state element, note): the config's mamba_ssm_dtype (or its text model's, hf_text_config), else
    SGLang's float32 default (configs/mamba_utils.py mamba2_state_dtype)."""
    widths = SSM_DTYPE_WIDTHS
    if isinstance(raw, dict):
        nested = hf_text_config(raw, flat=False)
        name = nested.get("mamba_ssm_dtype", raw.get("mamba_ssm_dtype"))
        if name in widths:
            return widths[name], None
        return 4, None
    return 4, "the config's mamba_ssm_dtype was not read (a Hub config): SGLang's float32 default assumed"


__all__ = ["Rules", "RULES", "LATEST", "RELEASE", "rules_for", "radix_off_reason", "MemoryDefaults", "memory_defaults", "prefill_graph_sizes",
           "vlm_fraction_factor", "context_limit", "ssm_state_bytes"]
