"""Every cache vLLM allocates for a model, as (layer, PageSpec) pairs (layer_specs): the KV dtype, the block size
the backend forces (MLA, MiniMax-M3), sliding / chunked / full / latent / indexer pages, Inkling's conv states,
Mamba states and the attention block grown to hold them (hybrid alignment), per release (VllmRules).

- Worst case per request and layer (PageSpec.max_memory_bytes, vllm_pages.py): full cdiv(max_len, block) pages;
  sliding window cdiv(min(W - 1 + in-flight tokens, max_len), block) + 1 pages; Mamba one page, or with prefix
  caching ("align" mode: --enable-prefix-caching from 0.15, the hybrid default from 0.26) 2 (Mamba-2 from 0.32,
  Gated DeltaNet from 0.33: 3, a prefill checkpoint). The block: the release's default (16; 64 from 0.34) unless
  --block-size or a backend says otherwise.
- Hybrid attention + Mamba: the attention block grows until a page holds the Mamba state (aligned to 16; 0.20+ to
  max(16, block); 0.33 GDN to 64); the Mamba page is padded to it. MLA + KDA (Kimi-Linear): the MLA block is
  aligned (64 until 0.19; the MLA backend's kernel block from 0.20; >= 128 from 0.27), KDA's recurrent state is
  float32.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..core.layers import TokenCache
from ..core.model import ModelSpec
from ..core.storage import Storage
from ..errors import UsageError
from ..units import cdiv
from .vllm_inkling import conv_state_geometry, conv_state_token_bytes, is_inkling
from .vllm_pages import (FULL_LIKE, MAMBA, PageSpec, attention_token_bytes, latent_token_bytes, serving_storage,
                         unknown_kv_dtype, vllm_kv_dtype_for)
from .vllm_rules import LATEST, WINDOW_ONE_LESS, VllmRules
from .pre_ampere import sm_label
from .vllm_sm7 import READ_IN as TRITON_MLA_READ_IN

KERNEL_BLOCK_ALIGN_TOKENS = 16  # FlashAttention / FlashInfer kernel block: a multiple of 16

# Only Qwen's Gated DeltaNet layers export prefill checkpoints (0.33 and 0.34 qwen_gdn_linear_attn.py:
# QwenGatedDeltaNetAttention.get_prefill_checkpoint_alignment / get_kv_cache_spec adds
# num_prefill_checkpoint_blocks=1); OLMo-Hybrid's (olmo_gdn_linear_attn.py) inherits
# MambaBase.get_prefill_checkpoint_alignment -> None: 2 pages, no checkpoint alignment.
GDN_CHECKPOINT_TYPES = ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text")

# vLLM's KV cache spec dict follows the order the model's Attention / Mamba modules are built in
# (they register in the static forward context in __init__), and its groups follow that dict, so
# the first group, the only one 0.14-0.18's start check sizes (_max_memory_usage_bytes_from_groups:
# kv_cache_groups[0]), is the first module built. Zamba2Model.__init__ (zamba2.py, every modelled
# release) builds its shared Zamba2AttentionDecoderLayer blocks, one Attention per hybrid layer,
# before the loop over layers_block_type that builds the Mamba layers: attention comes first.
ATTENTION_REGISTERED_FIRST = ("zamba2",)


# MiniMax-M3's sparse attention and indexer backends: get_supported_kernel_block_sizes -> [128]
# (one sparse block per KV page; models/minimax_m3/common/*.py, read in 0.24.0, 0.26.0, 0.33.0 and 0.34.0)
MINIMAX_M3_BLOCK = 128


LAYER_SPECS_KEPT = 64  # argument sets of layer_specs kept a model


def layer_specs(model: ModelSpec, block_tokens: int | None, max_model_len: int, hybrid_manager: bool = True,
                rules: VllmRules = LATEST, kv_cache_dtype: str | None = None, prefix_caching: bool | None = None,
                *, local_as_full: bool = True, num_speculative_tokens: int = 0, kda_checkpoints: bool = False,
                capability: tuple[int, int] | None = None) -> tuple[list[tuple[int, PageSpec]], list[str], str]:
    """_layer_specs (below) of these arguments, kept on the model: a function of them alone, and a plan at several
    memory sizes (a sweep, the release grid) asks for the same specs each time. At most LAYER_SPECS_KEPT
    argument sets a model; past that the cache starts over."""
    args = (block_tokens, max_model_len, hybrid_manager, rules, kv_cache_dtype, prefix_caching, local_as_full,
            num_speculative_tokens, kda_checkpoints, capability)
    kept = model.memo("vllm layer_specs", dict)
    if args not in kept:
        if len(kept) >= LAYER_SPECS_KEPT:
            kept.clear()
        specs, notes, dtype = _layer_specs(model, *args)
        kept[args] = tuple(specs), tuple(notes), dtype
    specs, notes, dtype = kept[args]
    return list(specs), list(notes), dtype


def _layer_specs(model: ModelSpec, block_tokens: int | None, max_model_len: int, hybrid_manager: bool,
                 rules: VllmRules, kv_cache_dtype: str | None, prefix_caching: bool | None, local_as_full: bool,
                 num_speculative_tokens: int, kda_checkpoints: bool,
                 capability: tuple[int, int] | None) -> tuple[list[tuple[int, PageSpec]], list[str], str]:
    """(model layer index, spec) for every cache vLLM allocates, notes, and the KV dtype used.

    `model` is one TP rank's (already sharded, engine dtypes applied). A model
    layer may give several specs (V3.2: latent and indexer; Falcon-H1:
    attention and Mamba). Layers that reuse another layer's cache give none.
    prefix_caching: vLLM's --enable-prefix-caching (None: the release's default).
    local_as_full=False keeps sliding and chunked layers as the model runner
    makes them even when the hybrid KV cache manager is off (what the start
    check of releases before 0.14 sees, before get_kv_cache_groups unifies them).
    num_speculative_tokens: speculative decoding's draft tokens (a state page each from 0.15).
    capability: the GPU's CUDA compute capability (None: Hopper assumed), where it picks the sparse MLA backend.
    """
    notes: list[str] = []
    serving = serving_storage(model)
    caches = [c for layer in model.layers if layer.shares_cache_of is None for c in layer.caches]
    has_latent = any(c.kind == "latent" for c in caches)
    sparse = has_latent and any(c.kind == "indexer" for c in caches)
    if kv_cache_dtype is None:  # from kvplan's storage of the first K/V or latent cache
        kv_cache_dtype = "auto"
        for c in caches:
            if c.kind in ("attention", "latent"):
                kv_cache_dtype, note = vllm_kv_dtype_for(c, rules)
                if note:
                    notes.append(note)
                break
        if kv_cache_dtype == "auto" and sparse and model.checkpoint_kv_cache == "fp8_ds_mla":
            # Mistral Large 4's dsa.fp8_kv_cache: MistralLarge4ForCausalLM.verify_and_update_config (0.34
            # model_executor/models/config.py) turns auto into fp8_ds_mla on CUDA
            kv_cache_dtype = "fp8_ds_mla"
            notes.append(f"the checkpoint sets dsa.fp8_kv_cache: vLLM {rules.version}'s --kv-cache-dtype auto keeps "
                         "the latent as fp8_ds_mla (656 B a token), as planned here; serve with --kv-cache-dtype "
                         "bfloat16 for a bf16 latent")
    elif kv_cache_dtype not in rules.kv_cache_dtypes:
        raise unknown_kv_dtype(kv_cache_dtype, rules)
    if rules.block_sizes is not None and block_tokens is not None and block_tokens not in rules.block_sizes:
        raise UsageError(f"--block-size {block_tokens} is not accepted by vLLM {rules.version}",
                         f"use one of {', '.join(map(str, rules.block_sizes))}")
    block = block_tokens or rules.default_block_tokens
    blackwell = capability is not None and capability[0] == 10
    gpu_name = "Blackwell" if blackwell and rules.sparse_mla_sm100_plain_fp8 else "Hopper"
    if has_latent:
        quantized = kv_cache_dtype not in ("auto", "bfloat16", "float16")
        wanted = rules.mla_block_sparse if sparse else (rules.mla_block_fp8 if quantized else rules.mla_block_bf16)
        backend = "FlashMLA sparse" if sparse else ("FlashMLA" if quantized else "FlashAttention MLA")
        if sparse and blackwell and rules.sparse_mla_sm100_plain_fp8:  # every SM 10 sparse backend takes 64
            backend = "FlashInfer sparse MLA" if kv_cache_dtype in ("fp8", "fp8_e4m3") else "sparse MLA"
        elif (not sparse and capability is not None and (capability < (9, 0) or capability[0] == 12)
              and rules.version.startswith(TRITON_MLA_READ_IN)):
            # 0.34 platforms/cuda.py _get_backend_priorities: TRITON_MLA is the one dense MLA backend that takes
            # SM 12 or a card below SM 9 (FLASH_ATTN_MLA needs SM 9, FLASHMLA 9 / 10, FLASHINFER_MLA 10); its
            # MultipleOf(16) kernel blocks keep the default block, the same 64
            backend, gpu_name = "Triton MLA", sm_label(capability)
        forced = rules.mla_block_forced
        if forced == "exact" or (forced == "multiple" and sparse):  # check_and_update_config: any other size -> 64
            if block != wanted:
                notes.append(f"MLA: block size {block} -> {wanted} (vLLM {rules.version} forces it for {backend} "
                             f"on {gpu_name})")
                block = wanted
        elif forced == "multiple":  # 0.11.1-0.17: a multiple of 64 is kept, anything else -> 64
            if block % wanted:
                notes.append(f"MLA: block size {block} -> {wanted} (vLLM {rules.version} forces a multiple of "
                             f"{wanted} for {backend} on {gpu_name})")
                block = wanted
        elif block_tokens is None and block != wanted:
            notes.append(f"MLA: block size {block} -> {wanted} ({backend}'s preferred size on {gpu_name})")
            block = wanted
        elif block_tokens is None:
            notes.append(f"MLA: block size {block} ({backend} on {gpu_name})")
    block_sparse = [c for c in caches if c.policy.read_page_tokens and not c.policy.read_page_meta]
    if block_sparse and block != MINIMAX_M3_BLOCK:  # MiniMax-M3: update_block_size_for_backend
        notes.append(f"MiniMax-M3: block size {block} -> {MINIMAX_M3_BLOCK} (its sparse attention and indexer "
                     f"backends support only {MINIMAX_M3_BLOCK}: models/minimax_m3/common, 0.24-0.34)")
        block = MINIMAX_M3_BLOCK
    if any(c.policy.read_page_tokens != MINIMAX_M3_BLOCK for c in block_sparse):
        notes.append(f"MiniMax-M3: vLLM's kernels select {MINIMAX_M3_BLOCK}-token blocks; a config's other "
                     "sparse block size is not served as written")
    if any(c.policy.budget_fraction or c.policy.budget_tokens or c.policy.compress_ratio
           or (c.policy.read_page_tokens and c.policy.read_page_meta) for c in caches):
        notes.append("eviction, compressed sparse attention and Quest are not vLLM features: every token is allocated")
    if any(c.kind == "latent" and (c.policy.window_tokens or c.policy.chunk_tokens) and not c.policy.compress_ratio
           for c in caches):  # vLLM's MLA specs have no window (MLAAttentionSpec): the latent is kept in full
        notes.append("a sliding window or chunk on MLA layers has no vLLM form: the latent cache is sized in full")
    specs: list[tuple[int, PageSpec]] = []
    inkling = is_inkling(model)
    for i, layer in enumerate(model.layers):
        if layer.shares_cache_of is not None:
            continue
        if inkling and layer.state is not None:  # InklingConvState, built (and registered) before the attention
            heads, packed, kernel = conv_state_geometry(layer)
            specs.append((i, PageSpec("sliding", kernel, token_bytes=conv_state_token_bytes(layer),
                                      window_tokens=kernel, conv_shape=(heads, packed))))
        for cache in layer.caches:
            spec = _token_cache_spec(cache, block, kv_cache_dtype, serving, sparse, rules, blackwell)
            if spec.kind == "sliding" and model.model_type in WINDOW_ONE_LESS:
                spec = replace(spec, window_tokens=spec.window_tokens - 1)
            specs.append((i, spec))
        if layer.state is not None and not inkling:
            specs.append((i, PageSpec(MAMBA, max_model_len, state_bytes=layer.state.bytes)))
    if inkling:
        notes.append("Inkling: each layer's four short-conv states are one sliding-window page of the conv kernel's "
                     "tokens (vLLM's InklingConvState, models/inkling/nvidia/sconv_swa_attn.py), grouped with the "
                     "K/V layers by page size; not a Mamba state")
    if model.model_type in WINDOW_ONE_LESS and any(s.kind == "sliding" for _, s in specs):
        notes.append(WINDOW_ONE_LESS[model.model_type])
    if model.model_type in ATTENTION_REGISTERED_FIRST:  # a stable sort: attention specs first, in layer order
        specs.sort(key=lambda pair: pair[1].kind == MAMBA)
    kinds = {s.kind for _, s in specs}
    attention = [s for _, s in specs if s.kind in ("full", "sliding", "chunked")]
    if not attention:  # Kimi-Linear: MLA + KDA states; vLLM aligns the MLA block to the state (use_mla)
        attention = [s for _, s in specs if s.kind == "mla"]
    if MAMBA in kinds and attention:
        state_kind = next(layer.state.kind for layer in model.layers if layer.state is not None)
        prefix = rules.mamba_align_mode if prefix_caching is None else prefix_caching
        align_mode = prefix and rules.mamba_cache_modes
        # only Qwen's Gated DeltaNet exports prefill checkpoints (OLMo-Hybrid's does not); KDA only Kimi K3's
        # under FlashKDA (kda_checkpoints)
        checkpoints = ((state_kind != "gated_deltanet" or model.model_type in GDN_CHECKPOINT_TYPES)
                       if state_kind != "kda" else kda_checkpoints)
        specs, note = _align_attention_to_mamba(specs, block, block_tokens, attention[0].token_bytes, rules, state_kind,
                                                align_mode, checkpoints, num_speculative_tokens)
        notes.extend(note)
        if prefix and model.model_type in rules.mamba_all_mode_types:
            notes.append(f"not modelled: with prefix caching vLLM {rules.version} uses Mamba cache mode 'all' for "
                         f"{model.model_type} (a state page per block of tokens, the block aligned to the Mamba "
                         f"chunk size); kvplan sizes {'2 pages (align)' if align_mode else 'one page'}")
        elif prefix and not rules.mamba_cache_modes:
            notes.append(f"prefix caching: vLLM {rules.version} turns it off for this hybrid "
                         "(MambaModelConfig: no SupportsMambaPrefixCaching): one state page per request")
    if "chunked" in kinds and not rules.chunked_hybrid_manager:
        hybrid_manager = False
        notes.append(f"vLLM {rules.version} turns the hybrid KV cache manager off for chunked local attention "
                     "(VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0 by default)")
    local = {"sliding", "chunked"} & kinds
    if local_as_full and not hybrid_manager and local and kinds & set(FULL_LIKE):
        specs = [(i, replace(s, kind="full", window_tokens=None) if s.kind in local else s) for i, s in specs]
        notes.append(f"hybrid KV cache manager off: {' and '.join(sorted(local))} layers are sized as full attention")
    if (rules.fp8_head512_kernel_block and kv_cache_dtype.startswith("fp8") and block % rules.fp8_head512_kernel_block
            and any(c.kind == "attention" and c.key_dim == 512 for c in caches)):
        notes.append(f"not modelled: vLLM {rules.version} on Hopper serves fp8 KV at head size 512 with FA4's "
                     f"{rules.fp8_head512_kernel_block}-token kernel page (flash_attn.py "
                     "_get_sm90_fa4_fp8_kv_block_size); kvplan keeps the block manager's sizes")
    if sparse:
        used = {"auto": rules.v32_auto_kv_dtype}.get(kv_cache_dtype, rules.v32_fp8_kv_dtype
                                                     if kv_cache_dtype.startswith("fp8") else kv_cache_dtype)
        if blackwell and rules.sparse_mla_sm100_plain_fp8 and kv_cache_dtype in ("fp8", "fp8_e4m3"):
            used = "plain fp8 (FlashInfer sparse MLA on Blackwell)"
        label = "Mistral Large 4" if model.model_type == "mistral_large_4" else "DeepSeek-V3.2"
        notes.append(f"{label}: --kv-cache-dtype {kv_cache_dtype} is stored as "
                     f"{'bf16' if used == 'auto' else used} in vLLM {rules.version}")
    return specs, notes, kv_cache_dtype


def _token_cache_spec(cache: TokenCache, block: int, kv_dtype: str, serving: Storage, sparse: bool,
                      rules: VllmRules, blackwell: bool = False) -> PageSpec:
    if cache.kind == "indexer":  # fp8 keys + fp32 scale per 128 channels, as stored
        return PageSpec("indexer", block, token_bytes=cache.entry_bytes(1))
    if cache.kind == "latent":
        return PageSpec("mla", block, token_bytes=latent_token_bytes(cache, kv_dtype, serving, sparse, rules,
                                                                     blackwell))
    if kv_dtype == "":  # not a vLLM dtype: kvplan's own layout
        per_token = -(-cache.bytes_per_token().numerator // cache.bytes_per_token().denominator)
    elif kv_dtype == "auto" and cache.storage.granularity == "none":
        per_token = cache.storage.payload_bytes(cache.heads * (cache.key_dim + cache.value_dim))
    else:
        per_token = attention_token_bytes(cache.heads, cache.key_dim, cache.value_dim, kv_dtype, serving, rules)
    window = cache.policy.window_tokens
    if window is not None:
        return PageSpec("sliding", block, token_bytes=per_token, window_tokens=window)
    if cache.policy.chunk_tokens is not None:
        return PageSpec("chunked", block, token_bytes=per_token, window_tokens=cache.policy.chunk_tokens)
    return PageSpec("full", block, token_bytes=per_token)


def _align_attention_to_mamba(specs, block: int, user_block: int | None, attn_token_bytes: int, rules: VllmRules,
                              state_kind: str, align_mode: bool | None = None, checkpoints: bool = True,
                              speculative_tokens: int = 0):
    """Attention page >= Mamba page, the Mamba page padded to it.

    checkpoints: the state layers export prefill checkpoints where the release
    gives their kind some (rules.mamba_align_pages, gdn_checkpoint_align); False:
    MambaSpec's own 2 pages in 'align' mode and no extra alignment.

    0.11-0.19 HybridAttentionMambaModelConfig: block = 16 x cdiv(mamba, 16 x token page).
    0.20+ Platform._align_hybrid_block_size: the alignment is max(16, block size).
    With prefix caching (hybrids from 0.26: 'align' mode) the Mamba block equals
    the attention block and one request holds 2 (Mamba-2 from 0.32: 3) state pages."""
    mamba_page = max(s.page_bytes for _, s in specs if s.kind == MAMBA)
    align_mode = rules.mamba_align_mode if align_mode is None else align_mode
    if rules.hybrid_align_to_block:
        align = max(KERNEL_BLOCK_ALIGN_TOKENS, block)
    else:
        align = KERNEL_BLOCK_ALIGN_TOKENS
    mla = any(s.kind == "mla" for _, s in specs)
    if mla and rules.mla_hybrid_align:
        # until 0.19 HybridAttentionMambaModelConfig: 64 for MLA (not max'd with the block: FlashMLA's 64 or
        # FLASH_ATTN_MLA's 16 are both below); 0.27+ _align_hybrid_block_size: max(alignment, 128)
        align = rules.mla_hybrid_align if not rules.hybrid_align_to_block else max(align, rules.mla_hybrid_align)
    if align_mode and checkpoints and state_kind == "gated_deltanet" and rules.gdn_checkpoint_align:
        align = math.lcm(align, rules.gdn_checkpoint_align)  # 0.33: checkpoints land on block boundaries
    needed = align * cdiv(mamba_page, align * attn_token_bytes)
    needed = KERNEL_BLOCK_ALIGN_TOKENS * cdiv(needed, KERNEL_BLOCK_ALIGN_TOKENS)
    new_block = max(block, needed)
    attn_page = new_block * attn_token_bytes
    pages = (rules.mamba_pages(state_kind) if checkpoints else 2) if align_mode else 1
    drafts = speculative_tokens if rules.mamba_speculative_blocks else 0  # MambaSpec.num_speculative_blocks
    pages += drafts
    out = []
    for i, s in specs:
        if s.kind == MAMBA:
            out.append((i, replace(s, padded_page_bytes=attn_page, state_pages=pages, speculative_pages=drafts,
                                   block_tokens=new_block if align_mode else s.block_tokens)))
        elif s.kind != "indexer":
            out.append((i, s.with_block(new_block)))
        else:
            out.append((i, s))
    pad_pct = 100 * (attn_page - mamba_page) / mamba_page if mamba_page else 0.0  # an empty state: nothing to pad
    notes = [f"hybrid Mamba: attention block {block} -> {new_block} tokens so a page ({attn_page:,} B) holds the "
             f"Mamba state ({mamba_page:,} B); Mamba page padded by {pad_pct:.2f}%"]
    if align_mode:
        why = f"vLLM {rules.version} default for hybrids" if rules.mamba_align_mode else "--enable-prefix-caching"
        notes.append(f"prefix caching on ({why}): Mamba cache mode 'align', {pages} state pages per request"
                     + (f" ({speculative_tokens} for the draft tokens)" if speculative_tokens and
                        rules.mamba_speculative_blocks else ""))
    elif speculative_tokens and rules.mamba_speculative_blocks:
        notes.append(f"speculative decoding: {pages} state pages per request (1 + {speculative_tokens} draft tokens)")
    return out, notes

