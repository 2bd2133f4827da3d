"""vLLM v1's own KV pool accounting, reproduced without torch or vllm, per release.

Given the KV memory one GPU may fill (vLLM's "Available KV cache memory") and
max_model_len, this computes the number of blocks vLLM allocates and what it
logs at start-up. The rules that differ between releases live in
kvplan.engines.vllm_rules (one frozen object per release, each field citing
vLLM's file and function); this module applies them:

- Page = bytes of one block of one layer. Full or sliding attention:
  block x kv_heads x per-head bytes of the KV dtype (auto: the serving dtype;
  fp8: 1 B; *_per_token_head: + one fp32 scale for K and for V; nvfp4: packed
  fp4 + fp8 scale per 16). MLA: ONE tensor of block x (kv_lora_rank + rope) x
  dtype bytes; fp8_ds_mla (DeepSeek-V3.2) 656 B/token. V3.2 indexer keys:
  block x (index_head_dim + index_head_dim / 128 x 4) bytes. Mamba / Gated
  DeltaNet: the whole conv + SSM state of one sequence, in the serving dtype
  (a float32 checkpoint is served in bf16), Nemotron-H's (0.13+) and
  Qwen3.5's (0.17+) SSM in the config's dtype (float32).
- KV heads per rank = max(1, kv_heads // tp); MLA latent and indexer are
  replicated; Mamba-2 groups are padded to TP (kvplan.capacity.shard).
- Worst case per request and layer: full cdiv(max_len, block) pages; sliding
  window cdiv(min(W - 1 + in-flight tokens, max_len), block) + 1 pages;
  Mamba one page, or with prefix caching ("align" mode: --enable-prefix-caching
  from 0.15, the hybrid default from 0.26) 2 (Mamba-2 from 0.32, Gated DeltaNet
  from 0.33: 3, a prefill checkpoint). The block: the release's default (16;
  64 from 0.34) unless --block-size or a backend says otherwise.
- Groups: one when every layer has the same spec; one with summed pages when
  all layers need the same token slots (V3.2: MLA + indexer); otherwise page
  sizes are unified and layers split into groups of equal size (the smallest
  count per spec; 0.12+ the largest when the counts are within 1.25x, 0.18+ 1.5x).
- Hybrid attention + Mamba: the attention block grows until a page holds the
  Mamba state (aligned to 16; 0.20+ to max(16, block); 0.33 GDN to 64); the
  Mamba page is padded to it. MLA + KDA (Kimi-Linear): the MLA block is aligned
  (64 until 0.19; the MLA backend's kernel block from 0.20; >= 128 from 0.27),
  KDA's recurrent state is float32.
- Inkling (vllm_inkling.py): each layer's short-conv state is a sliding window of
  the conv kernel's tokens (a SlidingWindowSpec, bf16), grouped as sliding layers
  are; the model is not a hybrid, so no Mamba alignment or pages. Its MTP depths
  (0.33+) are decoder layers of the same kinds, and with two or more depths every
  sliding spec keeps num_speculative_tokens - 1 more tokens (multi_module_retained,
  as for any family with windows under a multi-module MTP draft, 0.28+).
- num_blocks = available // (page x layers per group), the minimum over PP
  stages. Concurrency = num_blocks / (sum over groups of the pages one
  max_model_len request needs). Tokens: num_blocks // groups x block until
  0.20.0; int(concurrency x max_model_len) from 0.20.1.
- Speculative decoding (vllm_speculative.py): an MTP draft's layers, or a separate
  draft checkpoint's (EAGLE head, draft model), join the pool after the target's
  (last PP stage); the draft tokens widen Gated DeltaNet conv states and, from
  0.15, add a state page each to a request.
- Start check: every layer's worst case must fit (0.11-0.13); 0.14-0.18 the
  first group's blocks x bytes per block; 0.19+ the blocks of all groups x
  bytes per block; 0.29+ in memory less one block (the null block).

Not modelled: token eviction, compressed sparse attention and Quest (vLLM
allocates every token), speculative decoding's draft and lookahead slots (a
scheduling reserve vLLM's planner leaves out too; vllm_decode counts them), DFlash /
DSpark drafts and a draft at its own TP size (vllm_speculative.py), DCP/PCP, 0.29+'s
block-outermost packing of groups with mixed page sizes, non-Hopper backends
(Blackwell MLA uses other block sizes; only 0.34's sparse MLA fp8 on Blackwell, a
plain fp8 latent, is modelled), FA4's 64-token kernel page for fp8 KV at
head size 512 on Hopper (0.31+, Gemma 4: a note), FlashKDA's prefill checkpoint
(a KDA config with gate_lower_bound).

Where it lives: this module applies the rules (simulate: the refusals, the groups, blocks, tokens and the start
check); vllm_pages.py the page of one layer (PageSpec, the KV dtypes' bytes, the serving dtype);
vllm_state_dtype.py the state dtypes (engine_model); vllm_layer_specs.py each layer's spec, the block size and
the hybrid alignment (layer_specs); vllm_groups.py the KV cache groups (kv_cache_groups); vllm_pool.py the result
(VllmPool, its log lines) and the in-flight tokens; vllm_family_rules.py the per-family routes and refusals
(DeepSeek-V4, the packed pools, Kimi K3, Command R). The names those modules hold are re-exported here for code
that imports them from this module; new code imports them from their own modules.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..capacity.shard import shard, stage_bounds
from ..configs.nemotron_nas import linear_replacement
from ..configs.zaya_layout import MEGATRON_NOTE
from ..core.model import ModelSpec
from ..errors import PlanError, UsageError
from ..units import cdiv
from .vllm_family_rules import PACKED_POOLS, cohere_qk_norm_refusal, is_deepseek_v4, kimi_k3_checkpoints
from .vllm_groups import _blocks_per_request, _stage_block_bytes, kv_cache_groups
from .vllm_inkling import check_inkling, is_inkling, with_inkling_draft
from .vllm_layer_specs import layer_specs
from .vllm_pages import MAMBA, vllm_kv_dtype_for
from .vllm_pool import VllmPool, in_flight_tokens, longest_fitting, memory_refusal
from .vllm_rules import LATEST, TP_REPLICATED, VllmRules
from .vllm_state_dtype import engine_model

# re-exported (__all__): their homes since the split (session 27)
from ..units import GIB
from .vllm_family_rules import KIMI_K3, check_modelled
from .vllm_groups import CacheGroup, _uniform_type, _unify_page_sizes
from .vllm_layer_specs import (ATTENTION_REGISTERED_FIRST, GDN_CHECKPOINT_TYPES, KERNEL_BLOCK_ALIGN_TOKENS,
                               LAYER_SPECS_KEPT, MINIMAX_M3_BLOCK, _align_attention_to_mamba, _layer_specs,
                               _token_cache_spec)
from .vllm_pages import (FP8_DS_MLA_BYTES_PER_TOKEN, FULL_LIKE, PER_TOKEN_HEAD_SCALE_BYTES, SHORT_CONV, PageSpec,
                         attention_token_bytes, latent_token_bytes, serving_storage)
from .vllm_state_dtype import _engine_model

DEFAULT_BLOCK_TOKENS = 16  # CacheConfig.DEFAULT_BLOCK_SIZE until 0.33 (0.34: 64; VllmRules.default_block_tokens)
VERSION_MODELLED = LATEST.version

# kept for callers of the 0.11-era API
MAX_NUM_BATCHED_TOKENS_LARGE_GPU = 8192
MAX_NUM_BATCHED_TOKENS_SMALL_GPU = 2048


def default_max_num_batched_tokens(gpu=None, rules: VllmRules = LATEST) -> int:
    """vLLM's `vllm serve` default; without a GPU, that of an 80 GiB H100-class one."""
    if gpu is None or not gpu.memory_bytes:
        return rules.max_num_batched_tokens(None)
    return rules.max_num_batched_tokens(gpu.memory_bytes, gpu.name)


def served_kv_cache(model: ModelSpec, rules: VllmRules) -> tuple[str | None, bool]:
    """(the --kv-cache-dtype vLLM is given for the model's first attention or latent cache, from the cache's storage
    (a KV quantizer technique's fp8 included), whether that cache is MLA's latent): what check_pre_ampere reads;
    (None, False) for a model without one."""
    caches = [c for layer in model.layers for c in layer.caches if c.kind in ("attention", "latent")]
    return (vllm_kv_dtype_for(caches[0], rules)[0] if caches else None, any(c.kind == "latent" for c in caches))


def simulate(model: ModelSpec, *, kv_memory_bytes: int, max_model_len: int, block_tokens: int | None = None,
             tp: int = 1, pp: int = 1, max_num_batched_tokens: int | None = None,
             hybrid_manager: bool = True, rules: VllmRules = LATEST, kv_cache_dtype: str | None = None,
             allow_long_max_model_len: bool = False, prefix_caching: bool | None = None,
             max_num_seqs: int | None = None, enforce_eager: bool = False, draft_layers: int = 0,
             num_speculative_tokens: int = 0, draft_model: ModelSpec | None = None,
             gpu: str | None = None, release: str | None = None, dp: int = 1, ep: bool = False,
             encoder_data: bool = False, a2a: str | None = None) -> VllmPool:
    """vLLM's KV cache config for `model` on one (tp, pp) replica under `rules`.

    kv_memory_bytes: memory for the KV cache per GPU. max_num_batched_tokens:
    the scheduler's token budget per step (default: `vllm serve` on an
    H100-class GPU). kv_cache_dtype: vLLM's --kv-cache-dtype (default: from
    the model's cache storage). max_num_seqs: vLLM's --max-num-seqs (default:
    the release's, for an H100-class GPU); enforce_eager: no CUDA graphs.
    draft_layers: speculative decoding's MTP draft layers in the pool (kvplan.engines.vllm_speculative).
    num_speculative_tokens: its draft tokens per step (any method): they widen Gated DeltaNet conv
    states and, from 0.15, add as many state pages to each request. draft_model: a separate draft
    checkpoint (EAGLE head, small LLM) whose layers join the pool (not with draft_layers). gpu: the
    catalog name of the GPU, where its backends decide the layout (DeepSeek-V4.1, GLM-5-Next, Kimi K3).
    release: the vLLM release asked for (default rules.version): its registry says whether pp > 1 is refused
    (kvplan.engines.vllm_pp). dp, ep: --data-parallel-size and --enable-expert-parallel, which decide how the routed
    experts split (kvplan.engines.vllm_widths), a2a (--all2all-backend) whether the shared experts are whole.
    encoder_data: the vision tower built whole
    (engines/vllm_encoder_dp.py tower_whole): no vision heads or widths to divide.
    """
    from ..configs.quant_mlx import refusal

    if mlx := refusal(model, "vLLM"):
        raise UsageError(mlx, "plan the original (non-MLX) checkpoint, or use --engine ideal")
    if kv_memory_bytes <= 0:
        raise PlanError("vLLM: no memory left for the KV cache", "raise --mem-util or give --kv-memory")
    if max_model_len <= 0:
        raise UsageError("--max-model-len must be positive")
    mnbt = max_num_batched_tokens or rules.max_num_batched_tokens(None)
    notes: list[str] = []
    if gpu is not None:  # Turing / Volta: float16 serving, Triton attention, the refusals (vllm_sm7.py)
        from ..capacity.gpus import CUDA_CAPABILITY
        from .vllm_sm7 import check_pre_ampere

        kv_auto, mla = served_kv_cache(model, rules)
        check_pre_ampere(model, CUDA_CAPABILITY.get(gpu), release or rules.version, kv_cache_dtype or kv_auto, mla,
                         notes)
    if pp > 1:  # vLLM refuses PP for a class without SupportsPP (config/model.py verify_with_parallel_config)
        from .vllm_pp import check_pp

        check_pp(model.registry_names, release or rules.version, pp, tp, notes)
    limit = model.max_context_tokens
    if limit and max_model_len > limit:
        if not allow_long_max_model_len:
            raise UsageError(
                f"vLLM refuses --max-model-len {max_model_len:,}: above {model.name}'s maximum of {limit:,} tokens "
                "(max_position_embeddings) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
                "lower --max-model-len, or set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 in kvplan's environment as in vLLM's")
        notes.append(f"max_model_len {max_model_len:,} exceeds the model's {limit:,}: "
                     "vLLM starts only with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    if model.family == "kolibri1_1":
        raise UsageError(f"vLLM {rules.version} cannot serve Kolibri 1.1: no release has its model, and the Transformers backend "
                         "it falls back to fails on the indexed layers (they need a 4D mask the backend never passes)",
                         "plan it with --engine ideal")
    if replaced := linear_replacement(model):  # DeciLMDecoderLayer (nemotron_nas.py) has no replace_with_linear branch
        raise UsageError(f"vLLM cannot serve {model.name}: {replaced}", "plan it with --engine ideal")
    if model.model_type == "cohere" and tp > 1 and (refusal := cohere_qk_norm_refusal(model, tp)):
        raise UsageError(refusal, "use a --tp no larger than its KV heads (with --pp for more GPUs)")
    if tp > 1:  # a vision tower whose heads --tp does not divide (engines/vllm_vision_refusal.py)
        from .vllm_vision_refusal import check as check_vision_heads

        check_vision_heads(model, tp, encoder_data)
    if tp * dp > 1:  # a text MLP / expert / FP8-block width the split does not divide (engines/vllm_widths.py)
        from ..capacity.gpus import CUDA_CAPABILITY
        from .vllm_widths import check as check_widths

        # the card decides the NVFP4 experts' backend (engines/vllm_nvfp4_moe.py); no card: its rules skipped
        check_widths(model, tp, dp, ep, release or rules.version, a2a, CUDA_CAPABILITY.get(gpu) if gpu else None)
    if model.family == "dory" and tp > 1:
        raise UsageError("vLLM serves Dory at TP 1 only (model_executor/models/dory.py)", "use --tp 1")
    if draft_model is not None and (draft_layers or is_deepseek_v4(model)):
        raise UsageError("vLLM: a separate draft model is modelled without MTP layers, and not for DeepSeek-V4",
                         "give either --mtp or --draft-model")
    if model.family in PACKED_POOLS:
        import importlib

        from ..capacity.gpus import CUDA_CAPABILITY

        label, module, function = PACKED_POOLS[model.family]
        pool_of = getattr(importlib.import_module(f".{module}", __package__), function)
        if draft_model is not None:
            raise UsageError(f"vLLM: a separate draft model is not modelled for {label}", "drop the draft")
        if gpu is not None and gpu not in CUDA_CAPABILITY:
            raise UsageError(f"--engine vllm: {gpu} is not a CUDA card, and kvplan has read vLLM's {label} layout for "
                             "CUDA compute capabilities only", "give an NVIDIA --gpu (h100, h200, b200, ...)")
        seqs = max_num_seqs if max_num_seqs is not None else rules.max_num_seqs(None)
        return pool_of(model, kv_memory_bytes=kv_memory_bytes, max_model_len=max_model_len, block_tokens=block_tokens,
                       tp=tp, pp=pp, mnbt=mnbt, rules=rules, kv_cache_dtype=kv_cache_dtype, max_num_seqs=seqs,
                       notes=notes, capability=CUDA_CAPABILITY.get(gpu or ""), prefix_caching=prefix_caching,
                       draft_layers=draft_layers, num_speculative_tokens=num_speculative_tokens)
    retained = 0
    if draft_layers:  # vLLM refuses draft tokens n_predict does not divide; multi-module MTP keeps more tokens
        from .vllm_speculative import check_draft_tokens, multi_module_retained

        check_draft_tokens(model, num_speculative_tokens)
        retained = multi_module_retained(model, num_speculative_tokens, rules)
    if is_deepseek_v4(model):
        from .vllm_dsv4 import simulate_dsv4

        seqs = max_num_seqs if max_num_seqs is not None else rules.max_num_seqs(None)
        return simulate_dsv4(model, kv_memory_bytes=kv_memory_bytes, max_model_len=max_model_len,
                             block_tokens=block_tokens, pp=pp, mnbt=mnbt, rules=rules,
                             kv_cache_dtype=kv_cache_dtype, max_num_seqs=seqs, notes=notes,
                             draft_layers=draft_layers, retained_tokens=retained)
    inkling = is_inkling(model)
    if inkling:
        check_inkling(model, tp, rules, draft_layers, draft_model is not None, num_speculative_tokens)
    if model.model_type == "zaya" and any(n.startswith(MEGATRON_NOTE) for n in model.notes):
        raise UsageError(f"vLLM 0.34 cannot load {model.name}: its config is Megatron-style (zaya_layers), and vLLM "
                         "builds transformers' ZayaConfig, which reads no zaya_layers (and refuses rope_scaling false), and "
                         "loads transformers' weight names only (zaya.py load_weights: no self_attn.qkv.*, zaya_block.*)",
                         "use --engine sglang (0.5.23 reads this layout) or plan without --engine")
    if model.model_type == "zaya" and (draft_layers or draft_model is not None or num_speculative_tokens):
        raise UsageError(f"vLLM cannot serve {model.name} with speculative decoding: ZayaForCausalLM raises "
                         "NotImplementedError for any num_speculative_tokens (vLLM 0.34 zaya.py)",
                         "drop the draft (--mtp, --draft-model, --num-speculative-tokens)")
    target_layers = model.num_layers
    if inkling and draft_layers:  # its MTP depths are Inkling decoder layers, with conv states
        model, spec_notes = with_inkling_draft(model, draft_layers, num_speculative_tokens)
        notes += spec_notes
    elif draft_layers or draft_model is not None or num_speculative_tokens:
        from .vllm_speculative import with_speculation  # the draft's layers, its tokens' rows

        model, spec_notes = with_speculation(model, rules, draft_layers, draft_model, num_speculative_tokens)
        notes += spec_notes
    fixed, state_notes = engine_model(model, rules)
    if model.model_type in TP_REPLICATED and tp > 1:
        notes.append(TP_REPLICATED[model.model_type])
    ranked = shard(fixed, 1 if model.model_type in TP_REPLICATED else tp, 1)[0]  # one TP rank's, all layers
    kda_checkpoints = kimi_k3_checkpoints(model, rules, gpu, notes)
    from ..capacity.gpus import CUDA_CAPABILITY

    capability = CUDA_CAPABILITY.get(gpu or "")
    pairs, spec_notes, kv_dtype = layer_specs(ranked, block_tokens, max_model_len, hybrid_manager, rules,
                                              kv_cache_dtype, prefix_caching,
                                              num_speculative_tokens=num_speculative_tokens,
                                              kda_checkpoints=kda_checkpoints, capability=capability)
    notes += state_notes + spec_notes
    if retained and any(s.kind == "sliding" for _, s in pairs):  # tagged before grouping (multi_module_retained)
        from .vllm_speculative import retained_note

        pairs = [(i, replace(s, retained_tokens=retained) if s.kind == "sliding" else s) for i, s in pairs]
        notes.append(retained_note(model, retained, rules))
    if not pairs:
        raise PlanError(f"{model.name} has no KV cache: vLLM allocates one null block")
    owners = [i for i, _ in pairs]
    specs = [s for _, s in pairs]
    groups, uniform_type = kv_cache_groups(specs, rules)
    if draft_layers:  # the scheduler block: the LCM of the groups' block sizes (kv_cache_utils.py)
        from .vllm_speculative import check_lookahead_block

        check_lookahead_block(model, retained, rules, math.lcm(*(g.spec.block_tokens for g in groups)), prefix_caching)
    grouped_specs = list(specs)  # after page unification
    if not uniform_type:
        for g in groups:
            for i in g.layers:
                grouped_specs[i] = g.spec
    bounds = stage_bounds(target_layers, pp)
    bounds[-1] = (bounds[-1][0], model.num_layers)  # the drafter lives on the last stage
    stages = [{k for k, owner in enumerate(owners) if start <= owner < end} for start, end in bounds]
    # 0.26+ VllmConfig.max_in_flight_tokens: max_concurrent_batches (2 under async
    # scheduling; the PP size with PP and the V1 model runner) x max_num_batched_tokens
    in_flight = in_flight_tokens(rules, mnbt, pp)
    stage_bytes = [b for st in stages if (b := _stage_block_bytes(groups, uniform_type, grouped_specs, st))]
    num_blocks = min(kv_memory_bytes // b for b in stage_bytes)
    page = sum(s.page_bytes for s in specs) if uniform_type else groups[0].spec.page_bytes
    per_request = _blocks_per_request(groups, uniform_type, grouped_specs, max_model_len, in_flight)
    concurrency = num_blocks / per_request
    if rules.tokens_from_concurrency:
        tokens = int(concurrency * max_model_len)
    else:
        tokens = num_blocks // len(groups) * min(g.spec.block_tokens for g in groups)

    if rules.start_check == "groups" or (rules.start_check == "first_group" and not uniform_type):
        held_back = 1 if rules.null_block_in_check else 0
        first_only = rules.start_check == "first_group"

        def fits(length: int) -> bool:  # bytes_per_block x blocks a request needs <= available (- the null block)
            if first_only:  # 0.14-0.18 _max_memory_usage_bytes_from_groups: the first group's blocks only
                spec = groups[0].spec
                need = cdiv(spec.max_memory_bytes(length, in_flight), spec.page_bytes)
            else:
                need = _blocks_per_request(groups, uniform_type, grouped_specs, length, in_flight)
            return all(b * need <= kv_memory_bytes - held_back * b for b in stage_bytes)
    else:
        # get_kv_cache_configs runs check_enough_kv_cache_memory on each worker's specs as the model
        # runner made them, BEFORE get_kv_cache_groups -> unify_hybrid_kv_cache_specs turns chunked /
        # sliding layers into full ones (it edits the merged dict, not the worker's): with the hybrid
        # manager off (Llama-4 before 0.14) local layers are checked at their local worst case
        checked = grouped_specs
        if any("sized as full attention" in n for n in spec_notes):
            checked = [s for _, s in layer_specs(ranked, block_tokens, max_model_len, hybrid_manager, rules,
                                                 kv_cache_dtype, prefix_caching, local_as_full=False,
                                                 kda_checkpoints=kda_checkpoints, capability=capability)[0]]

        def fits(length: int) -> bool:  # check_enough_kv_cache_memory: every layer's worst case, summed
            return all(sum(checked[i].max_memory_bytes(length, in_flight) for i in st) <= kv_memory_bytes
                       for st in stages if st)

    ok = fits(max_model_len)
    estimate = None if ok else longest_fitting(fits, max_model_len)
    seqs = max_num_seqs if max_num_seqs is not None else rules.max_num_seqs(None)
    refusal = None
    if not ok:
        refusal = memory_refusal(max_model_len, estimate)
    elif (rules.mamba_seqs_within_blocks and not enforce_eager and any(s.kind == MAMBA for s in specs)
          and seqs > num_blocks):
        ok = False
        refusal = (f"max_num_seqs ({seqs:,}) exceeds the {num_blocks:,} blocks, and with FULL decode CUDA graphs "
                   f"each decode sequence of a model with Mamba layers needs one (CompilationConfig."
                   f"resolve_cudagraph_mode_and_sizes, 0.20+): lower --max-num-seqs to at most {num_blocks:,}, "
                   "give the cache more memory, or pass --enforce-eager")
    return VllmPool(kv_memory_bytes, max_model_len, mnbt, groups, uniform_type, page, num_blocks,
                    per_request, tokens, concurrency, ok, estimate, tuple(notes), tuple(grouped_specs),
                    rules.version, rules.one_log_line, kv_dtype, max(stage_bytes), in_flight,
                    gib_text_rounded=rules.gib_text_rounded, tokens_from_concurrency=rules.tokens_from_concurrency,
                    max_num_seqs=seqs, refusal=refusal)


def add_to_report(*args, **kwargs):
    """kvplan.engines.vllm_report.add_to_report (kept here for callers of the old API)."""
    from .vllm_report import add_to_report as add

    return add(*args, **kwargs)



__all__ = [  # the names engines/vllm.py held before its split (session 27), for code that imports them from here
    "ATTENTION_REGISTERED_FIRST", "CacheGroup", "DEFAULT_BLOCK_TOKENS", "FP8_DS_MLA_BYTES_PER_TOKEN", "FULL_LIKE",
    "GDN_CHECKPOINT_TYPES", "GIB", "KERNEL_BLOCK_ALIGN_TOKENS", "KIMI_K3", "LAYER_SPECS_KEPT", "MAMBA",
    "MAX_NUM_BATCHED_TOKENS_LARGE_GPU", "MAX_NUM_BATCHED_TOKENS_SMALL_GPU", "MINIMAX_M3_BLOCK", "PACKED_POOLS",
    "PER_TOKEN_HEAD_SCALE_BYTES", "PageSpec", "SHORT_CONV", "VERSION_MODELLED", "VllmPool",
    "_align_attention_to_mamba", "_blocks_per_request", "_engine_model", "_layer_specs", "_stage_block_bytes",
    "_token_cache_spec", "_uniform_type", "_unify_page_sizes", "add_to_report", "attention_token_bytes", "cdiv",
    "check_modelled", "cohere_qk_norm_refusal", "default_max_num_batched_tokens", "engine_model", "in_flight_tokens",
    "is_deepseek_v4", "kimi_k3_checkpoints", "kv_cache_groups", "latent_token_bytes", "layer_specs",
    "longest_fitting", "memory_refusal", "served_kv_cache", "serving_storage", "simulate", "vllm_kv_dtype_for",
]
