"""vLLM's KV accounting rules, one frozen object per release whose rules differ.

Every field cites the vLLM file and function it was read from (the field's
`source` metadata; `VllmRules.sources()` lists them). Read from the released
wheels' Python sources of every release from 0.11.0 to 0.34.0 (0.11.0, 0.11.1,
0.11.2, 0.12.0, 0.13.0, 0.14.0, 0.14.1, 0.15.0, 0.15.1, 0.16.0, 0.17.0, 0.17.1,
0.18.0, 0.18.1, 0.19.0, 0.19.1, 0.20.0, 0.20.1, 0.20.2, 0.21.0, 0.22.0, 0.22.1,
0.23.0, 0.24.0, 0.25.0, 0.25.1, 0.26.0, 0.27.0, 0.27.1, 0.28.0, 0.29.0, 0.30.0,
0.31.0, 0.32.0, 0.33.0; 0.34.0 from its sdist, diffed against 0.33.0 rule by rule):
each rule was bisected over all of them. One object
exists per release where a modelled rule changes; a release maps to the newest
object at or before it. Releases before 0.11 keep 0.11.0's rules with a note.

Which rule holds from which release (docs/engines.md repeats the table):

| rule                                  | value, and the first release it holds in                                   |
|---------------------------------------|-----------------------------------------------------------------------------|
| gpu_memory_utilization default        | 0.90; 0.92 from 0.20.0; 0.34.0: 1.0 under the extensible KV cache (the CUDA default), 0.92 without it |
| extensible KV cache (sized after warmup) | none; from 0.34.0 on CUDA unless --kv-cache-memory-bytes (or num_gpu_blocks_override) is given: the blocks are measured after warmup and CUDA-graph capture, at most the reserved capacity |
| default --block-size                  | 16; 64 from 0.34.0 (every Hopper backend kvplan models takes 64)            |
| "GPU KV cache size" token figure      | blocks // groups x block; int(concurrency x max_model_len) from 0.20.1      |
| log lines                             | two ("GPU KV cache size: N tokens" + "Maximum concurrency for L tokens per request: C.CCx"); one from 0.28.0 ("GPU KV cache size: N tokens, Maximum concurrency ..."; 0.30.0+ prints the device name, "GPU" on CUDA) |
| "Available KV cache memory: X GiB"    | %.2f; round(x, 2) from 0.14.0 ("5.9", not "5.90")                           |
| sliding window in-flight tokens       | max_num_batched_tokens; x max_concurrent_batches (2, async scheduling) from 0.26.0; with PP: PP (async off) until 0.33, PP + 1 from 0.34.0 (async stays on) |
| window freed in decode (--emit's --max-num-seqs) | below the computed tokens; below the processed ones (the in-flight token kept) from 0.26.0 |
| speculative slots a decoding step holds (--emit's --max-num-seqs) | 1 + k scheduled + k lookahead (eagle, eagle3, mtp, draft_model) in every release read; under async scheduling (0.26.0; draft_model from 0.28.0) the step in flight's k drafts too |
| multi-module MTP: tokens every sliding window keeps below it | none; num_speculative_tokens - 1 from 0.28.0 when min(the draft config's num_nextn_predict_layers (default 1), num_speculative_tokens) > 1; from 0.34.0 its n_predict instead (Qwen3.5's mtp_num_hidden_layers counts from 0.34) |
| MLA block on Hopper                   | 64 forced for every block (0.11.0); 64 unless the block is a multiple of 64 (0.11.1); bf16 16 (FLASH_ATTN_MLA), fp8 64, sparse 64, the user's block kept, from 0.18.0; bf16 64 from 0.34.0 (the default block) |
| hybrid attention block alignment      | 16; max(16, block size) from 0.20.0 (so 64 by default from 0.34.0)          |
| hybrid Mamba prefix caching           | off by default (one state page per request), on by default from 0.26.0. On (default or --enable-prefix-caching): 0.11.1-0.14 vLLM turns it off for most hybrids (one page); from 0.15.0 'align' (2 pages); 'all' for Bamba, Jamba, Nemotron-H, Falcon-H1, Zamba2, Granite-4 until 0.27 (not modelled); 'align' for every model from 0.28.0; Mamba-2 3 pages (a prefill checkpoint) from 0.32.0 |
| Gated DeltaNet (Qwen3-Next, Qwen3.5) in 'align' mode | 2 pages, block aligned to max(16, block); 0.33.0: 3 pages (FlashInfer's GDN prefill checkpoint, the Hopper default) and the block aligned to lcm(that, 64) |
| hybrid block alignment, MLA + states (Kimi-Linear) | 64 (HybridAttentionMambaModelConfig); the MLA backend's smallest kernel block or the block size (16 bf16, 64 fp8) from 0.20.0; at least 128 from 0.27.0 |
| fp8 KV, head size 512 (Gemma 4's global layers) | FlashAttention / Triton, kernel block a multiple of 16; from 0.31.0 FA4 on SM90 uses a 64-token kernel page (not modelled: a note, unless the block is a multiple of it, as 0.34.0's default 64 is) |
| layers whose page sizes differ       | refused (NotImplementedError); unified from 0.12.0 (unify_kv_cache_spec_page_size) |
| chunked local attention + hybrid manager | off (env default 0); on (default 1) from 0.14.0                          |
| layers per group (close counts)       | the smallest count (0.11); the largest when < 1.25 x the smallest from 0.12.0; < 1.5 x from 0.18.0 |
| start check                           | every layer's worst case <= available; from 0.14.0 the first group's blocks x layers per group x page; from 0.19.0 the sum over groups; from 0.29.0 in memory less one block (the null block) |
| Mamba layers: max_num_seqs <= blocks  | not checked; from 0.20.0 vLLM refuses to start when max_num_seqs > num_blocks (FULL decode CUDA graphs, the default; --enforce-eager lifts it) |
| --block-size                          | 1, 8, 16, 32, 64, 128; + 256 from 0.11.1; any int from 0.18.0 (> 0 from 0.23.0) |
| max_num_batched_tokens (`vllm serve`) | 8192 if >= 70 GiB and not A100, else 2048; 16384 if >= 160 GiB from 0.28.0 |
| KV dtypes (the ones kvplan sizes)     | auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc; + fp8_ds_mla 0.11.1; + float16 0.18.0; + int8/fp8_per_token_head, nvfp4 0.20.0; + int4_per_token_head 0.25.0 |
| --kv-cache-dtype auto, ModelOpt checkpoint | the model's dtype; from 0.14.0 the KV cache the checkpoint's ModelOpt config names (FP8 -> fp8_e4m3); + NVFP4 -> nvfp4 from 0.20.0 |
| --kv-offloading-size / skip layers    | offloading from 0.11.1; --kv-cache-dtype-skip-layers from 0.19.0            |
| Mamba / GDN state pages per request, speculative decoding | 1 (0.11-0.14); 1 + num_speculative_tokens (align: 2 + ...) from 0.15.0 |
| Nemotron-H SSM state                  | serving dtype; from 0.13.0 the config's mamba_ssm_cache_dtype (NemotronHConfig's default float32), else float16; else float32 from 0.20.0 |
| Qwen3.5 / 3.6 GDN SSM state          | serving dtype; the config's mamba_ssm_dtype (float32) from 0.17.0          |
| DeepSeek-V3.2 auto KV dtype           | fp8_ds_mla (0.11.0); bf16 from 0.11.1; fp8 -> fp8_ds_mla in every release (0.34.0 on Blackwell: plain fp8) |

0.34.0 was read whole for these rules (kv_cache_utils.py, kv_cache_planning.py,
kv_cache_interface.py, block_pool.py, single_type_kv_cache_manager.py, config/cache.py,
config/vllm.py, engine/arg_utils.py, platforms/cuda.py and interface.py, the attention
backends, layers/mamba, gpu_worker.py, mem_utils.py): besides the rows above nothing kvplan
models changed (Mamba-2 and Qwen GDN 'align' mode keep 3 pages, the GDN checkpoint 64
tokens; the start check keeps the null block; the log lines keep their format, and the
extensible KV cache adds "Memory after warmup: ... N KV cache blocks (X GiB) fit within
the requested Y GiB").

Rules that hold in every release read: Mamba / Mamba-2 /
GDN states in the serving dtype unless a rule above says otherwise (a float32
checkpoint is served in bf16);
Mamba-2 groups padded to a multiple of TP when they do not divide it; V3.2
indexer page 132 B/token in fp8 + fp32 scales; sliding window worst case
cdiv(min(W - 1 + in-flight, L), block) + 1 pages; max_num_seqs 1024 / 256;
--max-model-len above the model's maximum refused unless
VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace

from ..errors import UsageError
from ..units import GIB
from .vllm_release import release_key as _key

# model_type -> why vLLM keeps that model whole on every TP rank. ZAYA1 (vLLM 0.34 model_executor/models/zaya.py,
# the first release that registers ZayaForCausalLM): every linear is a ReplicatedLinear (the CCA projections and
# convs, o_proj, the MLP's fc1 / fc2 / out_proj / down_proj) and its Attention takes the config's
# num_attention_heads / num_key_value_heads undivided; ZayaCCA.get_state_shape is the whole conv history and delayed
# value. SGLang 0.5.23 (models/zaya.py, configs/zaya.py) shards the same model head-parallel, as kvplan's own plan does.
TP_REPLICATED = {
    "zaya": "vLLM builds ZAYA1 with replicated layers (0.34 zaya.py: ReplicatedLinear everywhere, Attention over "
            "all heads, ZayaCCA.get_state_shape unsharded), so every TP rank holds the whole caches and weights",
}

# model_type -> why vLLM's sliding window is one token shorter than kvplan's reading (transformers' window). MiMo-V2:
# transformers 5.25 MiMoV2FlashConfig sets sliding_window = sliding_window_size + 1 (the reference attends
# sliding_window_size previous tokens plus the query), which kvplan reads; vLLM's mimo_v2.py (0.21.0-0.34.0)
# passes per_layer_sliding_window = config.sliding_window_size, and mimo_v2_mtp.py the same, so its
# SlidingWindowSpec keeps one token less
WINDOW_ONE_LESS = {
    model_type: "MiMo-V2: vLLM's sliding layers use sliding_window_size (mimo_v2.py per_layer_sliding_window), "
                "one token less than transformers' sliding_window_size + 1 that kvplan's own plan keeps"
    for model_type in ("mimo_v2", "mimo_v2_flash")
}


def _src(text: str):
    return field(metadata={"source": text})


@dataclass(frozen=True)
class VllmRules:
    version: str = _src("the release these rules were read from (the first release they hold in)")
    gpu_memory_utilization: float = _src(
        "vllm/config/cache.py: CacheConfig.gpu_memory_utilization (0.90 until 0.19.1, 0.92 from 0.20.0); from "
        "0.34.0 CacheConfig.DEFAULT_GPU_MEMORY_UTILIZATION, the default of estimate-based sizing "
        "(resolved_gpu_memory_utilization: 1.0 under the extensible KV cache, see extensible_kv_cache, which is "
        "this field from 0.34; 0.92 where that cache is off: vllm_extensible.resolved_utilization)")
    extensible_kv_cache: bool = _src(
        "from 0.34.0 vllm/config/cache.py: CacheConfig.enable_extensible_kv_cache (None: on; vllm/config/vllm.py "
        "_resolve_extensible_kv_cache turns it off off CUDA/ROCm and with kv_cache_memory_bytes or "
        "num_gpu_blocks_override): vllm/v1/worker/extensible_kv_cache.py measure_kv_cache_blocks sizes the blocks "
        "from the memory free after warmup (blocks_within: each layer's segment rounded to the VMM granule), "
        "vllm/v1/core/kv_cache_planning.py finalize_extensible_kv_cache takes the minimum over ranks, at most the "
        "capacity reserved from 'Available KV cache memory'")
    default_block_tokens: int = _src(
        "vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE (16; 64 from 0.34.0) -> vllm/platforms/interface.py: "
        "Platform.update_block_size_for_backend (backend.get_preferred_block_size(DEFAULT_BLOCK_SIZE): FLASH_ATTN's "
        "MultipleOf(16) keeps it)")
    block_sizes: tuple[int, ...] | None = _src(
        "vllm/config/cache.py: BlockSize Literal (0.11.0; + 256 from 0.11.1); from 0.18.0 block_size: int "
        "(SkipValidation, Field(gt=0) from 0.23.0); None: any positive size")
    tokens_from_concurrency: bool = _src(
        "until 0.20.0 vllm/v1/core/kv_cache_utils.py: get_kv_cache_config_from_groups (0.11.0) / "
        "_report_kv_cache_config (0.11.1+) (num_blocks // len(groups) * min_block); from 0.20.1 "
        "_report_kv_cache_config, from 0.24.0 get_kv_cache_capacity (int(max_concurrency * max_model_len))")
    one_log_line: bool = _src(
        "vllm/v1/core/kv_cache_utils.py: two logger calls until 0.27.1 (get_kv_cache_config_from_groups 0.11.0, "
        "_report_kv_cache_config 0.11.1-0.23.0, get_kv_cache_configs 0.24.0-0.27.1); one call in "
        "update_kv_cache_capacity from 0.28.0")
    gib_text_rounded: bool = _src(
        "vllm/v1/worker/gpu_worker.py: determine_available_memory ('%.2f' until 0.13.0; "
        "vllm/utils/mem_utils.py: format_gib = str(round(b / GiB, 2)) from 0.14.0)")
    sliding_in_flight_batches: int = _src(
        "vllm/v1/kv_cache_interface.py: SlidingWindowSpec.max_memory_usage_bytes (max_num_batched_tokens until "
        "0.25.1); from 0.26.0 vllm/config/vllm.py: VllmConfig.max_in_flight_tokens = max_concurrent_batches x "
        "max_num_batched_tokens (2 with async scheduling, the default)")
    decode_frees_processed_tokens: bool = _src(
        "vllm/v1/core/kv_cache_manager.py: KVCacheManager.allocate_slots calls remove_skipped_blocks with "
        "request.num_computed_tokens (0.11.0) / total_computed_tokens (0.20.0-0.25.0), which under async scheduling "
        "already counts the token in flight; from 0.26.0 with total_computed_tokens - request.num_in_flight_tokens "
        "(the processed tokens): a decoding request keeps one more token below its window (vllm_decode.py)")
    multi_module_mtp: str = _src(
        "vllm/config/speculative.py SpeculativeConfig.use_multi_module_mtp: what vLLM counts as the MTP modules when it "
        "keeps extra tokens below every sliding window (multi-module "
        "MTP: min(modules, num_speculative_tokens) > 1 -> each SlidingWindowSpec, SlidingWindowMLASpec included, "
        "gets extra_retained_tokens = num_speculative_tokens - 1): '' until 0.27.1 (0.27.1 "
        "kv_cache_interface.py SlidingWindowSpec has no such field; config/speculative.py already has "
        "use_multi_module_mtp); 'num_nextn_predict_layers' from 0.28.0 (SpeculativeConfig.use_multi_module_mtp: "
        "getattr(draft hf_config, 'num_nextn_predict_layers', 1), method 'mtp'; 0.28.0-0.30.0 "
        "v1/core/kv_cache_utils.py get_kv_cache_configs tags the specs with num_speculative_tokens - 1, "
        "0.31.0-0.32.0 the same place and 0.33.0 v1/core/kv_cache_planning.py get_global_kv_cache_groups with "
        "VllmConfig.num_prefill_lookahead_tokens - 1, which is num_speculative_tokens under multi-module MTP); "
        "'n_predict' from 0.34.0 (SpeculativeConfig.num_mtp_modules: draft hf_config n_predict or 1; "
        "MTPSpeculatorConfig.specialize -> MultiModuleMTPSpeculatorConfig.num_prefill_lookahead_tokens; "
        "kv_cache_planning.py get_global_kv_cache_groups; not with index_share_for_mtp_iteration or MiniMax-M3)")
    mtp_lookahead_block_check: bool = _src(
        "vllm/v1/core/kv_cache_coordinator.py KVCacheCoordinator.__init__: with prefix caching and an EAGLE-family "
        "group, a scheduler_block_size (kv_cache_utils: the LCM of the groups' block sizes) below "
        "num_prefill_lookahead (num_speculative_tokens under multi-module MTP, else 1) raises 'Multi-module MTP with "
        "prefix caching requires scheduler_block_size (=B) >= num_speculative_tokens (=T)': from 0.33.0 (read in "
        "0.33.0 and 0.34.0; not in 0.31.0 or 0.32.0, 0.28.0-0.30.0 not read)")
    async_draft_model: bool = _src(
        "vllm/config/vllm.py: VllmConfig.__post_init__ (async_scheduling None, the default): 0.26.0-0.27.1 turn "
        "async scheduling off for a speculative method outside EagleModelTypes (eagle, eagle3, mtp), NgramGPUTypes "
        "and dspark ('Async scheduling not supported with %s-based speculative decoding'), so draft_model decodes "
        "synchronously; from 0.28.0 draft_model keeps it (0.33.0 v1_async_sched_incompat, 0.34.0 no such check). "
        "Read for --emit's --max-num-seqs under speculative decoding (vllm_decode.decode_slots)")
    async_scheduling_with_pp: bool = _src(
        "vllm/config/vllm.py: VllmConfig.max_concurrent_batches: with PP, until 0.33 the V1 model runner turns "
        "async scheduling off (PP batches in flight); from 0.34.0 (Model Runner V1 removed) it stays on with the "
        "multiprocessing executor: PP + 1")
    mla_block_bf16: int = _src(
        "until 0.17.1 vllm/platforms/cuda.py: CudaPlatformBase.check_and_update_config (FlashMLA forces 64); "
        "from 0.18.0 Platform.update_block_size_for_backend -> FLASH_ATTN_MLA (first in _get_backend_priorities "
        "on Hopper) get_preferred_block_size(DEFAULT_BLOCK_SIZE): MultipleOf(16) keeps the default, 16 "
        "(64 from 0.34.0)")
    mla_block_fp8: int = _src("vllm/v1/attention/backends/mla/flashmla.py: get_supported_kernel_block_sizes [64] "
                              "(FLASH_ATTN_MLA has no fp8)")
    mla_block_sparse: int = _src(
        "until 0.17.1 vllm/platforms/cuda.py (FlashMLASparse forces 64); "
        "from 0.18.0 vllm/v1/attention/backends/mla/flashmla_sparse.py: get_supported_kernel_block_sizes")
    sparse_mla_sm100_plain_fp8: bool = _src(
        "0.34.0 vllm/platforms/cuda.py _get_backend_priorities (SM 10, a quantized KV dtype: FLASHINFER_MLA_SPARSE "
        "before FLASHMLA_SPARSE) and flashinfer_mla_sparse.py (fp8 / fp8_e4m3 accepted, fp8_ds_mla refused): "
        "--kv-cache-dtype fp8 on Blackwell keeps the plain fp8 latent, kv_lora_rank + rope bytes; earlier "
        "releases not read for Blackwell (False: fp8_ds_mla, Hopper's FlashMLA sparse)")
    mla_block_forced: str = _src(
        "vllm/platforms/cuda.py: CudaPlatformBase.check_and_update_config: 'exact' (0.11.0: block != 64 -> 64), "
        "'multiple' (0.11.1-0.17.1: block % 64 != 0 -> 64; sparse != 64 -> 64), '' (0.18.0+: a user's "
        "--block-size is kept, user_specified_block_size)")
    hybrid_align_to_block: bool = _src(
        "until 0.19.1 vllm/model_executor/models/config.py: HybridAttentionMambaModelConfig "
        "(kernel_block_alignment_size = 16); from 0.20.0 vllm/platforms/interface.py: "
        "Platform._align_hybrid_block_size (max(backend's smallest kernel block, block_size))")
    mamba_align_mode: bool = _src(
        "vllm/config/model.py: ModelConfig.is_prefix_caching_supported (hybrid: False until 0.25.1, True from "
        "0.26.0) -> vllm/model_executor/models/config.py: MambaModelConfig.verify_and_update_config "
        "(mamba_cache_mode 'align', mamba_block_size = block_size)")
    mamba_cache_modes: bool = _src(
        "vllm/config/cache.py: CacheConfig.mamba_cache_mode (from 0.15.0): --enable-prefix-caching on a hybrid "
        "gives 'align' (2 state pages); until 0.14.1 MambaModelConfig.verify_and_update_config turns prefix "
        "caching off for a model without SupportsMambaPrefixCaching (one page)")
    mamba_speculative_blocks: bool = _src(
        "vllm/v1/kv_cache_interface.py: MambaSpec.max_memory_usage_bytes (from 0.15.0, read in its wheel; "
        "0.14.x: cdiv(max_model_len, block) pages, one): with speculative decoding a request holds "
        "1 + num_speculative_blocks state pages (align: 2 + ...; vllm/model_executor/layers/mamba/abstract.py "
        "get_kv_cache_spec sets num_speculative_blocks = num_speculative_tokens); until 0.14.1 one page")
    mamba2_speculative_conv: tuple[str, ...] = _src(
        "vllm/model_executor/layers/mamba/mamba_mixer2.py: MambaMixer2.get_state_shape passes num_spec = "
        "num_speculative_tokens to mamba_utils.MambaStateShapeCalculator.mamba2_state_shape (conv rows "
        "conv_kernel - 1 + num_spec) from 0.17.0 (0.11.0-0.14.0 and 0.16.0 read: none); the model types listed are "
        "those whose get_mamba_state_shape_from_config (which sizes the hybrid block) passes it too, read in "
        "0.17.0 and 0.34.0: nemotron_h.py and mamba2.py (zamba2, falcon_h1, granitemoehybrid pass it in 0.34.0, "
        "not 0.17.0: not modelled)")
    mamba_all_mode_types: tuple[str, ...] = _src(
        "0.15.0-0.27.1 vllm/model_executor/models/config.py: MambaModelConfig.verify_and_update_config "
        "('all' if model_config.supports_mamba_prefix_caching: the SupportsMambaPrefixCaching models; "
        "0.11.1-0.14.1 the same models with mamba_block_size = block_size); from 0.28.0 'align' for every model")
    mamba_align_pages: tuple[tuple[str, int], ...] = _src(
        "vllm/v1/kv_cache_interface.py: MambaSpec.max_memory_usage_bytes (2 + num_prefill_checkpoint_blocks); "
        "from 0.32.0 vllm/model_executor/layers/mamba/mamba_mixer2.py: get_kv_cache_spec (Mamba-2: 1 checkpoint); "
        "0.33 models/kimi_k3/nvidia/kda.py (Kimi K3's KDA under FlashKDA only: kvplan.engines.vllm_family_rules.kimi_k3_checkpoints)")
    gdn_checkpoint_align: int = _src(
        "0.33 vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py: QwenGatedDeltaNetAttention "
        "(_resolve_gdn_prefill_backend: FlashInfer on Hopper by default; in 'align' mode get_kv_cache_spec adds "
        "num_prefill_checkpoint_blocks=1) and vllm/platforms/interface.py: _align_hybrid_block_size "
        "(block aligned to lcm(alignment, FLASHINFER_GDN_CHECKPOINT_ALIGNMENT = 64)); 0: no checkpoint")
    mla_hybrid_align: int = _src(
        "attention + Mamba models whose attention is MLA (Kimi-Linear): until 0.19.1 vllm/model_executor/models/"
        "config.py: HybridAttentionMambaModelConfig (kernel_block_alignment_size 64 for MLA, 128 only under "
        "CUTLASS_MLA, Blackwell); 0.20.0-0.26.0 vllm/platforms/interface.py: Platform._align_hybrid_block_size "
        "(no MLA case: max(the MLA backend's smallest kernel block, block size)); from 0.27.0 the same with "
        "max(that, 128) (TRTLLM/FlashInfer MLA decode kernels); 0: no MLA-specific alignment")
    fp8_head512_kernel_block: int = _src(
        "from 0.31.0 vllm/v1/attention/backends/flash_attn.py: FlashAttentionBackend._get_sm90_fa4_fp8_kv_block_size "
        "(SM90, fp8 KV, head size 512 under FA4: a 64-token kernel page) with vllm/model_executor/models/config.py: "
        "Gemma4Config (per-layer FA3/FA4 for fp8 KV on SM90); 0: no such kernel. kvplan does not model how the "
        "block manager meets it: a note says so")
    chunked_hybrid_manager: bool = _src(
        "vllm/envs.py: VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE (default '0' until 0.13.0, '1' from "
        "0.14.0); vllm/config/vllm.py: a model with attention_chunk_size turns the hybrid KV cache manager off "
        "when it is 0, so every local layer is sized as full attention")
    group_close_ratio: float = _src(
        "vllm/v1/core/kv_cache_utils.py: _get_kv_cache_groups_uniform_page_size (0.11: group_size = the smallest "
        "count of layers of one spec; 0.12.0: the largest when max < 1.25 x min; 0.18.0: 1.5 x min)")
    unify_page_sizes: bool = _src(
        "vllm/v1/core/kv_cache_utils.py: unify_kv_cache_spec_page_size (from 0.12.0; 0.11.x get_kv_cache_groups "
        "raises NotImplementedError for layers whose page sizes differ)")
    start_check: str = _src(
        "vllm/v1/core/kv_cache_utils.py: 'layers' (until 0.13.0 check_enough_kv_cache_memory: every layer's "
        "max_memory_usage_bytes summed); 'first_group' (0.14.0-0.18.1 _max_memory_usage_bytes_from_groups: "
        "layers per group x page x cdiv(the FIRST group's worst case, page)); 'groups' (from 0.19.0: the sum "
        "over groups)")
    dsv4_pool: str = _src(
        "DeepSeek-V4's pool (kvplan/engines/vllm_dsv4.py), vllm/v1/core/kv_cache_utils.py: '' (no DeepSeek-V4 "
        "model before 0.20.0); 'tuples' (0.20.0-0.22.x _get_kv_cache_config_deepseek_v4: a block is the MLA page "
        "sizes' sum x the most layers of one page size in any group); 'buckets' (0.23.0-0.26.x "
        "_bucket_layers_by_page_size: each page size x the most layers of that size in any group); both pad window "
        "and state pages to the MLA page sizes (_get_kv_cache_groups_uniform_groups) and weight the groups' blocks "
        "by their bytes (get_max_concurrency_for_kv_cache_config); 'packed' (from 0.27.0 "
        "_get_packed_kv_cache_layout, 0.29.0 _get_packed_kv_cache_groups: unpadded pages, the widest group a "
        "block, the groups' blocks summed)")
    null_block_in_check: bool = _src(
        "from 0.29.0 vllm/v1/core/kv_cache_utils.py: get_kv_cache_configs / check_enough_kv_cache_memory "
        "(check_memory = available - _pool_bytes_per_block); 0.33 vllm/v1/core/kv_cache_planning.py")
    mamba_seqs_within_blocks: bool = _src(
        "from 0.20.0 vllm/config/compilation.py: CompilationConfig.resolve_cudagraph_mode_and_sizes raises "
        "ValueError when a model with Mamba layers has FULL decode CUDA graphs (the default) and max_num_seqs > "
        "num_blocks: each decode sequence needs one Mamba block (0.18-0.19 capped the capture sizes instead, "
        "with a warning; vllm/v1/worker/gpu_model_runner.py adjust_cudagraph_sizes_for_mamba_cache)")
    batched_tokens_tiers: tuple[tuple[int, bool, int], ...] = _src(
        "vllm/engine/arg_utils.py: EngineArgs.get_batch_defaults (OPENAI_API_SERVER): "
        "(min device memory, excludes A100, max_num_batched_tokens); the 160 GiB tier from 0.28.0")
    max_num_seqs_tiers: tuple[tuple[int, bool, int], ...] = _src(
        "vllm/engine/arg_utils.py: EngineArgs.get_batch_defaults default_max_num_seqs")
    kv_cache_dtypes: tuple[str, ...] = _src("vllm/config/cache.py: CacheDType Literal (the names kvplan sizes)")
    checkpoint_kv_dtypes: tuple[tuple[str, str], ...] = _src(
        "from 0.14.0 vllm/engine/arg_utils.py: create_engine_config resolve_kv_cache_dtype_string (auto -> "
        "vllm/utils/torch_utils.py get_kv_cache_quant_algo_string of a ModelOpt quantization_config, "
        "MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP: fp8 -> fp8_e4m3; nvfp4 -> nvfp4 from 0.20.0; "
        "an algorithm not in the map stays auto); absent in 0.13.0")
    kv_cache_dtype_skip_layers: bool = _src(
        "vllm/engine/arg_utils.py: EngineArgs.kv_cache_dtype_skip_layers (from 0.19.0)")
    kv_offloading: bool = _src("vllm/engine/arg_utils.py: EngineArgs.kv_offloading_size / kv_offloading_backend "
                               "(from 0.11.1)")
    nemotron_h_ssm_dtype: str | None = _src(
        "vllm/model_executor/models/config.py: NemotronHForCausalLMConfig (absent until 0.12.0: serving dtype; "
        "0.13.0-0.19.1: getattr(hf_config, 'mamba_ssm_cache_dtype', 'float16'), and transformers' NemotronHConfig "
        "defaults that attribute to float32; from 0.20.0 update_mamba_ssm_cache_dtype: fallback float32)")
    qwen35_config_ssm_dtype: bool = _src(
        "from 0.17.0 vllm/model_executor/models/config.py: Qwen3_5ForConditionalGenerationConfig."
        "verify_and_update_config (mamba_ssm_cache_dtype 'auto' -> hf_text_config.mamba_ssm_dtype)")
    v32_auto_kv_dtype: str = _src(
        "vllm/model_executor/models/config.py: DeepseekV32ForCausalLM.verify_and_update_config "
        "(0.11.0: auto -> fp8_ds_mla; from 0.11.1 auto stays auto, bf16)")
    v32_fp8_kv_dtype: str = _src(
        "until 0.17.1 DeepseekV32ForCausalLM.verify_and_update_config; "
        "from 0.18.0 vllm/v1/attention/backends/mla/flashmla_sparse.py: supported_kv_cache_dtypes "
        "('fp8' alias of fp8_ds_mla)")

    def checkpoint_kv_dtype(self, kv_cache: str | None) -> str | None:
        """The --kv-cache-dtype that auto becomes for a checkpoint whose ModelOpt config names kv_cache
        (ModelSpec.checkpoint_kv_cache), or None where auto stays the model's dtype."""
        return dict(self.checkpoint_kv_dtypes).get(kv_cache or "")

    @property
    def nemotron_h_fp32_ssm(self) -> bool:
        return self.nemotron_h_ssm_dtype == "float32"

    def mamba_pages(self, kind: str) -> int:
        return dict(self.mamba_align_pages).get(kind, 2)

    def max_num_batched_tokens(self, memory_bytes: int | None, gpu_name: str = "") -> int:
        return _tier(self.batched_tokens_tiers, memory_bytes, gpu_name)

    def max_num_seqs(self, memory_bytes: int | None, gpu_name: str = "") -> int:
        return _tier(self.max_num_seqs_tiers, memory_bytes, gpu_name)

    @classmethod
    def sources(cls) -> dict[str, str]:
        return {f.name: f.metadata["source"] for f in fields(cls)}


def _tier(tiers, memory_bytes: int | None, gpu_name: str) -> int:
    """The first tier the GPU reaches; without a GPU, an H100-class one (80 GiB)."""
    memory = 80 * GIB if memory_bytes is None else memory_bytes
    for min_bytes, excludes_a100, value in tiers:
        if memory >= min_bytes and not (excludes_a100 and "a100" in gpu_name.lower()):
            return value
    return tiers[-1][2]


_COMMON_DTYPES = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc")
# SupportsMambaPrefixCaching from 0.11.1 to 0.27.1 (jamba.py, nemotron_h.py, falcon_h1.py, zamba2.py,
# granitemoehybrid.py, and bamba.py while BambaForCausalLM is registered (until 0.22.x); mamba.py / mamba2.py
# are attention-free: prefix caching stays off)
_ALL_MODE_TYPES = ("bamba", "jamba", "nemotron_h", "falcon_h1", "zamba2", "granitemoehybrid")

V0_11 = VllmRules(
    version="0.11",
    gpu_memory_utilization=0.9,
    extensible_kv_cache=False,
    default_block_tokens=16,
    block_sizes=(1, 8, 16, 32, 64, 128),
    tokens_from_concurrency=False,
    one_log_line=False,
    gib_text_rounded=False,
    sliding_in_flight_batches=1,
    decode_frees_processed_tokens=False,
    async_draft_model=False,
    multi_module_mtp="",
    mtp_lookahead_block_check=False,
    async_scheduling_with_pp=False,
    mla_block_bf16=64,
    mla_block_fp8=64,
    mla_block_sparse=64,
    mla_block_forced="exact",
    hybrid_align_to_block=False,
    mamba_align_mode=False,
    mamba_cache_modes=False,
    mamba_speculative_blocks=False,
    mamba2_speculative_conv=(),
    mamba_all_mode_types=(),
    mamba_align_pages=(),
    gdn_checkpoint_align=0,
    mla_hybrid_align=64,
    fp8_head512_kernel_block=0,
    chunked_hybrid_manager=False,
    group_close_ratio=0.0,
    unify_page_sizes=False,
    start_check="layers",
    dsv4_pool="",
    null_block_in_check=False,
    mamba_seqs_within_blocks=False,
    batched_tokens_tiers=((70 * GIB, True, 8192), (0, False, 2048)),
    max_num_seqs_tiers=((70 * GIB, True, 1024), (0, False, 256)),
    kv_cache_dtypes=_COMMON_DTYPES,
    checkpoint_kv_dtypes=(),
    kv_cache_dtype_skip_layers=False,
    kv_offloading=False,
    nemotron_h_ssm_dtype=None,
    qwen35_config_ssm_dtype=False,
    v32_auto_kv_dtype="fp8_ds_mla",
    v32_fp8_kv_dtype="fp8_ds_mla",
    sparse_mla_sm100_plain_fp8=False,
)

V0_11_1 = replace(V0_11, version="0.11.1", block_sizes=(1, 8, 16, 32, 64, 128, 256), mla_block_forced="multiple",
                  kv_cache_dtypes=_COMMON_DTYPES + ("fp8_ds_mla",), kv_offloading=True, v32_auto_kv_dtype="auto",
                  mamba_all_mode_types=_ALL_MODE_TYPES)
V0_12 = replace(V0_11_1, version="0.12", group_close_ratio=1.25, unify_page_sizes=True)
V0_13 = replace(V0_12, version="0.13", nemotron_h_ssm_dtype="float16")
V0_14 = replace(V0_13, version="0.14", gib_text_rounded=True, chunked_hybrid_manager=True, start_check="first_group",
                checkpoint_kv_dtypes=(("fp8", "fp8_e4m3"),))
V0_15 = replace(V0_14, version="0.15", mamba_cache_modes=True, mamba_speculative_blocks=True)
V0_17 = replace(V0_15, version="0.17", qwen35_config_ssm_dtype=True,
                mamba2_speculative_conv=("nemotron_h", "mamba2"))
V0_18 = replace(V0_17, version="0.18", group_close_ratio=1.5, block_sizes=None, mla_block_bf16=16, mla_block_forced="",
                kv_cache_dtypes=_COMMON_DTYPES + ("float16", "fp8_ds_mla"))
V0_19 = replace(V0_18, version="0.19", start_check="groups", kv_cache_dtype_skip_layers=True)
V0_20 = replace(V0_19, version="0.20", gpu_memory_utilization=0.92, hybrid_align_to_block=True, mla_hybrid_align=0,
                mamba_seqs_within_blocks=True, dsv4_pool="tuples",
                nemotron_h_ssm_dtype="float32",
                kv_cache_dtypes=V0_19.kv_cache_dtypes + ("int8_per_token_head", "fp8_per_token_head", "nvfp4"),
                checkpoint_kv_dtypes=(("fp8", "fp8_e4m3"), ("nvfp4", "nvfp4")))
V0_20_1 = replace(V0_20, version="0.20.1", tokens_from_concurrency=True)
V0_23 = replace(V0_20_1, version="0.23", dsv4_pool="buckets")
V0_25 = replace(V0_23, version="0.25", kv_cache_dtypes=V0_23.kv_cache_dtypes + ("int4_per_token_head",))
V0_26 = replace(V0_25, version="0.26", sliding_in_flight_batches=2, mamba_align_mode=True,
                decode_frees_processed_tokens=True)
V0_27 = replace(V0_26, version="0.27", mla_hybrid_align=128, dsv4_pool="packed")
V0_28 = replace(V0_27, version="0.28", one_log_line=True, mamba_all_mode_types=(), async_draft_model=True,
                multi_module_mtp="num_nextn_predict_layers",
                batched_tokens_tiers=((160 * GIB, False, 16384),) + V0_26.batched_tokens_tiers)
V0_29 = replace(V0_28, version="0.29", null_block_in_check=True)
V0_31 = replace(V0_29, version="0.31", fp8_head512_kernel_block=64)
V0_32 = replace(V0_31, version="0.32", mamba_align_pages=(("mamba2", 3),))

# 0.33: Qwen's Gated DeltaNet exports a prefill checkpoint on Hopper (a third state page, 64-token alignment)
V0_33 = replace(V0_32, version="0.33", mamba_align_pages=(("mamba2", 3), ("gated_deltanet", 3), ("kda", 3)),
                gdn_checkpoint_align=64, mtp_lookahead_block_check=True)

# 0.34 (read from its sdist, diffed against 0.33.0): CacheConfig.DEFAULT_BLOCK_SIZE 64 (FLASH_ATTN and
# FLASH_ATTN_MLA keep it: MLA bf16 64), the extensible KV cache sized after warmup (CUDA's default), and async
# scheduling with PP (PP + 1 batches in flight). The KV dtypes, batch tiers, Mamba / GDN pages and alignments,
# the start check with its null block and the log lines kvplan reads are 0.33's.
V0_34 = replace(V0_33, version="0.34", default_block_tokens=64, mla_block_bf16=64, extensible_kv_cache=True,
                gpu_memory_utilization=1.0, async_scheduling_with_pp=True, sparse_mla_sm100_plain_fp8=True,
                multi_module_mtp="n_predict")

RULES = (V0_11, V0_11_1, V0_12, V0_13, V0_14, V0_15, V0_17, V0_18, V0_19, V0_20, V0_20_1, V0_23, V0_25, V0_26, V0_27,
         V0_28, V0_29, V0_31, V0_32, V0_33, V0_34)
LATEST = V0_34
OLDEST_READ = (0, 11, 0)  # releases before this one were not read


# a PEP 440 vLLM version: X.Y[.Z][.N], then a pre-release (rc1, a2), a .postN, a .devN, a +local
# label ("0.11.0rc1", "0.9.2rc2.dev45+g1234", "0.6.4.post2.dev394+g1234", "0.11.0+cu128");
# nothing else may follow
_VERSION_FORM = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?(?:\.\d+)*(?P<pre>[.-]?(?:a|b|rc)\d*)?(?P<post>[.-]?post\d*)?"
                           r"(?P<dev>[.-]?dev\d*)?(?:\+[0-9A-Za-z.]+)?", re.IGNORECASE)


def resolve(version: str | None) -> tuple[VllmRules, str | None]:
    """(rules, note) for a vLLM version such as "0.11", "0.11.2", "0.24.0" or "latest".

    Every release from 0.11.0 to 0.34 was read: the newest modelled object at
    or before the version applies, without a note. One older than 0.11 gets
    0.11.0's rules with a note.
    """
    if version in (None, "", "latest"):
        return LATEST, None
    text = version.strip().lstrip("v")
    match = _VERSION_FORM.fullmatch(text)
    if not match or any(len(part or "") > 6 for part in match.groups()[:3]):  # int() of thousands of digits fails
        shown = version if len(version) <= 40 else f"{version[:20]}... ({len(version):,} characters)"
        raise UsageError(f"unknown vLLM version {shown!r}",
                         f"give a release such as 0.11 or 0.34 (modelled: {', '.join(r.version for r in RULES)})")
    wanted = (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))
    if wanted[:2] > _key(LATEST.version)[:2]:
        raise UsageError(f"vLLM {version} is newer than the newest release kvplan models ({LATEST.version})",
                         f"use --engine vllm (= {LATEST.version}) or --engine vllm@{LATEST.version}")
    chosen = RULES[0]
    for rules in RULES:
        if _key(rules.version) <= wanted:
            chosen = rules
    if wanted < OLDEST_READ:
        return chosen, (f"vLLM {text}: rules read from {chosen.version} (the oldest release kvplan models); "
                        "older releases may differ")
    if match.group("pre") or (match.group("dev") and not match.group("post")):
        return chosen, (f"vLLM {text}: a pre-release, modelled with the rules of {chosen.version} "
                        f"(its release {wanted[0]}.{wanted[1]}.{wanted[2]} or the newest modelled before it)")
    return chosen, None


def parse_engine(engine: str, *, older: bool = False) -> tuple[str, VllmRules | None, str | None]:
    """'ideal' | 'vllm' | 'vllm@0.11' -> (name, rules or None, note). A release before 0.11 is refused unless
    `older` (a start-up log of it, which calibrate reproduces with 0.11's rules and a note)."""
    name, _, version = engine.partition("@")
    name = name.strip().lower()
    if name == "sglang":
        raise UsageError(f"--engine {engine!r}: SGLang has no vLLM rules here", "use --engine vllm[@VERSION]")
    if name not in ("ideal", "vllm"):
        raise UsageError(f"--engine {engine!r} is not one of ideal, vllm, vllm@VERSION, sglang")
    if name == "ideal":
        if version:
            raise UsageError(f"--engine {engine!r}: the ideal engine has no versions")
        return name, None, None
    if "@" in engine and not version.strip():
        raise UsageError(f"--engine {engine!r}: give a version after @, e.g. vllm@0.11")
    rules, note = resolve(version or None)
    wanted = version.strip().lstrip("v")
    match = _VERSION_FORM.fullmatch(wanted) if wanted and wanted != "latest" else None
    if not older and match and (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)) < OLDEST_READ:
        # a log of an older release is still calibrated with 0.11's rules (and a note); a plan is not
        raise UsageError(f"--engine {engine!r}: vLLM {wanted} is older than the oldest release kvplan models "
                         f"({RULES[0].version})", f"use --engine vllm@{RULES[0].version} or a newer release")
    if note is None and wanted and wanted != "latest" and _key(rules.version) != _key(wanted):
        note = (f"vLLM {wanted}: modelled with the rules of {rules.version}, the newest release at or before it "
                "where a rule kvplan models changed")
    return name, rules, note


__all__ = ["VllmRules", "V0_11", "V0_11_1", "V0_12", "V0_13", "V0_14", "V0_15", "V0_17", "V0_18", "V0_19", "V0_20", "V0_20_1", "V0_23", "V0_25",
           "V0_26", "V0_27", "V0_28", "V0_29", "V0_31", "V0_32", "V0_33", "V0_34", "LATEST", "RULES", "resolve", "parse_engine"]
