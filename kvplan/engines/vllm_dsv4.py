"""vLLM's DeepSeek-V4 pool, 0.20 and later (the FlashMLA fp8_ds_mla layout).

Read from vLLM 0.20.0-0.33.0's DeepSeek-V4 model code (models/deepseek_v4 attention.py,
compressor.py, mtp; before 0.22 model_executor/models/deepseek_v4*.py; 0.34.0's diff of
attention.py, compressor.py, nvidia/flashmla.py and sparse_swa.py changes no spec, block or window),
v1/attention/backends/mla/sparse_swa.py and v1/core/kv_cache_utils.py /
kv_cache_planning.py, and checked against each release's own planner run on these
specs (benchmarks/vllm_oracle_dsv4.py). Every release registers the same specs on
this path; the planners differ.

What each layer registers, in this order (every page rounded up to FlashMLA's 576 B):
- a CSA layer's indexer keys (MLAAttentionSpec, block 256, 4 tokens a state, 132 B:
  128 fp8 + one fp32 scale per 128) and its compressor's state (SlidingWindowMLASpec,
  block 4, window 8, 2 x 2 x 128 float32 values per token);
- every layer's window (SlidingWindowMLASpec, block 64, window = sliding_window, 584 B
  per token: 448 fp8 + 64 bf16 rope + 8 scale bytes);
- a compressed layer's entries (MLAAttentionSpec, block 256, one 584-byte state per
  m tokens) and its compressor's state (block 4, window 8 at ratio 4; block 8,
  window 128 at ratio 128; 2 x coff x head_dim float32 values per token).
An MTP draft layer (speculative decoding, method "mtp") registers a window only: vLLM
gives layers past num_hidden_layers compress_ratio 1.

The groups: every MLA spec in one group; the window and state specs bucketed by
(block, window), a bucket split into groups of the same number of layer tuples
(`_approximate_gcd`, at least the MLA group's tuples). A request needs, per group,
cdiv(max_model_len, 256) blocks (entries) or cdiv(min(window - 1 + in-flight tokens,
max_model_len), block) + 1 (windows and states). By release:
- 0.20-0.26 pad each window / state page to the nearest MLA page size at least as
  large; 0.27 on leave them unpadded.
- bytes per block: 0.20-0.22 the MLA page sizes' sum x the most layers of one page
  size in any group (`_get_kv_cache_config_deepseek_v4`); 0.23-0.26 each page size
  x the most layers of that size in any group (`_bucket_layers_by_page_size`); 0.27
  on the widest group (the packed block slab).
- blocks per request: 0.20-0.26 the groups' pages weighted by their bytes over the
  MLA group's (`get_max_concurrency_for_kv_cache_config`); 0.27 on summed.
- the start check: 0.20-0.28 the pages x the MLA page sizes' sum x that most-layers
  count (`_max_memory_usage_bytes_from_groups`); 0.29 on bytes per block x blocks,
  the null block held back.
"""

from __future__ import annotations

from ..core.model import ModelSpec
from ..errors import UsageError
from ..units import cdiv
from .vllm_release import release_key as _release

ALIGN = 576  # FlashMLA's page alignment (alignment=576 on every fp8_ds_mla spec)
ENTRY = 584  # fp8_ds_mla: 448 fp8 NoPE + 64 x 2 B RoPE + 8 scale bytes
MAIN_BLOCK = 256  # DeepseekSparseSWABackend / FlashMLA sparse: the only block size
SWA_BLOCK = 64  # DeepseekV4SWACache: block_size=64


def _round(x: int) -> int:
    return -(-x // ALIGN) * ALIGN


def check_native(model: ModelSpec) -> None:
    """vLLM runs the checkpoint's layout: a technique that changes which tokens a layer keeps or reads
    (window, evict, quest, ...) has no vLLM form for DeepSeek-V4."""
    windows, changed = set(), False
    for cache in (c for layer in model.layers for c in layer.caches):
        p = cache.policy
        changed |= bool(p.budget_fraction or p.budget_tokens or p.chunk_tokens or p.read_page_tokens)
        if p.compress_ratio:
            changed |= p.window_tokens is not None
            if p.compress_window:
                windows.add(p.compress_window)
        elif cache.kind == "latent":
            windows.add(p.window_tokens)
    if changed or len(windows) > 1:  # every layer's window is the config's sliding_window
        raise UsageError(f"--engine vllm: {model.name} with a technique that changes the tokens its layers keep or "
                         "read has no vLLM form (vLLM runs DeepSeek-V4's own windows and compression)",
                         "drop the technique (a KV dtype such as fp8 is kept)")


def layer_pages(model: ModelSpec, draft_layers: int = 0) -> list[tuple[tuple, int]]:
    """(bucket, page bytes) for every spec one rank registers, in vLLM's registration order; draft_layers MTP
    layers (window only) last. bucket = (PageSpec kind: mla | sliding | state, block tokens, window or None)."""
    out = []
    for layer in model.layers:
        main = layer.caches[0]
        indexer = next((c for c in layer.caches if c.kind == "indexer"), None)
        ratio = main.policy.compress_ratio or 1
        window = main.policy.compress_window if ratio > 1 else main.policy.window_tokens
        head = main.key_dim
        if indexer is not None:
            index = indexer.key_dim
            out.append((("mla", MAIN_BLOCK, None), _round(MAIN_BLOCK // ratio * (index + index // 128 * 4))))
            out.append((("state", 4, 2 * ratio), _round(4 * 2 * 2 * index * 4)))
        out.append((("sliding", SWA_BLOCK, window), _round(SWA_BLOCK * ENTRY)))
        if ratio > 1:
            out.append((("mla", MAIN_BLOCK, None), _round(MAIN_BLOCK // ratio * ENTRY)))
            coff = 2 if ratio == 4 else 1
            block = 4 if ratio == 4 else 8
            out.append((("state", block, coff * ratio), _round(block * 2 * coff * head * 4)))
    # the last layer's window: every layer's is the config's sliding_window (check_native)
    out += [(("sliding", SWA_BLOCK, window), _round(SWA_BLOCK * ENTRY))] * draft_layers
    return out


def pad_to_mla_pages(pages: list[tuple[tuple, int]]) -> list[tuple[tuple, int]]:
    """0.20-0.26 (_get_kv_cache_groups_uniform_groups): a window or state page padded to the nearest MLA page
    size at least as large."""
    mla = sorted({p for (kind, _, _), p in pages if kind == "mla"})
    return [(b, p if b[0] == "mla" else min(m for m in mla if m >= p)) for b, p in pages]


def approximate_gcd(values: list[int], lower_bound: int) -> int:
    """vLLM's _approximate_gcd: the d in [lower_bound, max] with the least upward padding, ties to larger d."""
    best_d, best_pad = lower_bound, None
    for d in range(max(1, lower_bound), max(values) + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad is None or pad <= best_pad:
            best_d, best_pad = d, pad
    return best_d


def packed_group_members(pages: list[tuple]) -> list[tuple[tuple, list[int]]]:
    """_get_packed_kv_cache_groups: (bucket, the indices into `pages` of the layers in the group) per group, in
    vLLM's order. pages: (bucket, page bytes, ...) per layer in registration order; bucket = (kind, block tokens,
    window or None). Balanced buckets that mix page sizes repeat by _approximate_gcd; Mamba and ring buckets (and
    windows when nothing repeats) are state buckets, split to the states one block of the widest group holds. A
    split bucket deals its repeats (one layer of each page size, zip(*page_size_layers.values())) round-robin:
    group i takes repeats i, i + n, ... (what a pipeline stage keeps of each group follows from it)."""
    buckets: dict[tuple, dict[int, list[int]]] = {}
    for k, (bucket, page, *_) in enumerate(pages):
        buckets.setdefault(bucket, {}).setdefault(page, []).append(k)
    counts = {b: {page: len(ks) for page, ks in sizes.items()} for b, sizes in buckets.items()}
    balanced = {b: len(set(sizes.values())) == 1 for b, sizes in counts.items()}
    floor = max((max(s.values()) for b, s in counts.items() if balanced[b] and len(s) > 1), default=0)
    repeats = approximate_gcd([max(s.values()) for b, s in counts.items() if balanced[b]], floor) if floor else None

    def groups_for(bucket) -> int:
        return -(-max(counts[bucket].values()) // repeats) if balanced[bucket] and repeats else 1

    def is_state(bucket) -> bool:  # MambaSpec, CircularBufferSpec, and windows when nothing repeats
        return bucket[0] in ("ring", "mamba", "short_conv") or (repeats is None and bucket[0] == "sliding")

    def widest(sizes: dict[int, int], n: int) -> int:
        return sum(-(-count // n) * page for page, count in sizes.items())

    anchor = max(widest(sizes, sum(sizes.values()) if is_state(b) else groups_for(b)) for b, sizes in counts.items())
    out = []
    for bucket, members in buckets.items():
        sizes = counts[bucket]
        n = groups_for(bucket)
        if is_state(bucket):  # a state bucket splits down to the states one block already holds
            n = max(n, -(-sum(sizes.values()) // max(anchor // next(iter(sizes)), 1)))
        if n == 1:
            out.append((bucket, sorted(k for ks in members.values() for k in ks)))
            continue
        pattern = list(zip(*members.values()))  # one layer of each page size per repeat
        for i in range(n):
            out.append((bucket, [k for repeat in pattern[i::n] for k in repeat]))
    return out


def packed_groups(pages: list[tuple]) -> list[tuple[tuple, list[int]]]:
    """packed_group_members as (bucket, the page bytes of each layer in the group), a group's pages by size in
    first-seen order."""
    out = []
    for bucket, members in packed_group_members(pages):
        rank = {page: r for r, page in enumerate(dict.fromkeys(pages[k][1] for k in members))}
        out.append((bucket, sorted((pages[k][1] for k in members), key=rank.__getitem__)))
    return out


def blocks_per_request(bucket: tuple, max_len: int, in_flight: int, retained: int = 0) -> int:
    """retained: SlidingWindowMLASpec.extra_retained_tokens (windows and compressor states alike: multi-module MTP,
    vllm_speculative.multi_module_retained)."""
    kind, block, window = bucket
    if window is None:
        return cdiv(max_len, block)
    return cdiv(min(window - 1 + retained + in_flight, max_len), block) + 1


def block_costs(groups: list[tuple[tuple, list[int]]], pool: str) -> tuple[int, int]:
    """(bytes one block takes from the pool, bytes per block the pre-0.29 start check counts) under the
    release's rules.dsv4_pool."""
    counts = [{p: pages.count(p) for p in pages} for _, pages in groups]
    tuples = max(max(c.values()) for c in counts)  # the most layers of one page size in any group
    mla_sizes = sum({p for (kind, _, _), pages in groups if kind == "mla" for p in pages})
    if pool == "packed":
        per_block = max(sum(pages) for _, pages in groups)
    elif pool == "buckets":
        per_block = sum(p * max(c.get(p, 0) for c in counts) for p in {p for c in counts for p in c})
    else:
        per_block = mla_sizes * tuples
    return per_block, mla_sizes * tuples


def simulate_dsv4(model: ModelSpec, *, kv_memory_bytes: int, max_model_len: int, block_tokens: int | None,
                  pp: int, mnbt: int, rules, kv_cache_dtype: str | None, max_num_seqs: int, notes: list[str],
                  draft_layers: int = 0, retained_tokens: int = 0):
    """vLLM's pool for DeepSeek-V4 (one rank: the K/V head and compressor states are replicated under TP).
    draft_layers: the MTP layers speculative decoding (method "mtp") adds to the pool; retained_tokens: the
    tokens every window and compressor state keeps below it (multi-module MTP)."""
    from .vllm_pool import in_flight_tokens

    if not rules.dsv4_pool:
        raise UsageError(f"vLLM {rules.version} has no DeepSeek-V4 model (it arrived in 0.20.0)",
                         "use vLLM 0.20 or later (estimate: --engine vllm@0.20; calibrate: --as-version 0.20)")
    if pp > 1:
        raise UsageError("vLLM's DeepSeek-V4 pool under pipeline parallelism is not modelled", "use --pp 1")
    if block_tokens not in (None, MAIN_BLOCK):
        raise UsageError(f"--block-size {block_tokens}: vLLM's DeepSeek-V4 backends run only {MAIN_BLOCK}-token "
                         "blocks", f"drop --block-size or give {MAIN_BLOCK}")
    check_native(model)
    stored = model.layers[0].caches[0].storage.name
    if kv_cache_dtype is None and stored not in ("bf16", "fp16", "fp32") and not stored.startswith("fp8"):
        raise UsageError(f"KV dtype {stored}: vLLM stores DeepSeek-V4's cache only as fp8_ds_mla (FlashMLA) or plain "
                         "bf16 / fp8 rows (FlashInfer); kvplan models fp8_ds_mla", "use --kv-dtype auto or fp8")
    if kv_cache_dtype not in (None, "auto", "fp8", "fp8_e4m3", "fp8_ds_mla"):
        raise UsageError(f"--kv-cache-dtype {kv_cache_dtype}: kvplan models DeepSeek-V4 only in vLLM's fp8_ds_mla "
                         "layout (FlashMLA, the default on Hopper and Blackwell datacenter GPUs)",
                         "use auto or fp8")
    notes.append(f"DeepSeek-V4: vLLM {rules.version} stores fp8_ds_mla entries (584 B: 448 fp8 + 64 bf16 rope + "
                 "8 scale bytes), 132-byte fp8 indexer keys and float32 compressor states, pages rounded to 576 B")
    pages = layer_pages(model, draft_layers)
    if draft_layers:
        notes.append(f"speculative decoding (mtp): {draft_layers} MTP draft layer(s) add a window cache each")
    if retained_tokens:
        from .vllm_speculative import retained_note

        notes.append(retained_note(model, retained_tokens, rules) + ", the compressor states' too")
    packed = rules.dsv4_pool == "packed"
    if not any(kind == "mla" for (kind, _, _), _ in pages) or not any(kind == "state" for (kind, _, _), _ in pages):
        raise UsageError("vLLM's DeepSeek-V4 pool is modelled only for models with compressed sparse layers",
                         "plan without --engine vllm")
    groups = packed_groups(pages if packed else pad_to_mla_pages(pages))
    in_flight = in_flight_tokens(rules, mnbt, pp)
    bytes_per_block, check_bytes = block_costs(groups, rules.dsv4_pool)
    mla_bytes = next(sum(p) for (kind, _, _), p in groups if kind == "mla")

    def pages_needed(length: int) -> int:
        return sum(blocks_per_request(bucket, length, in_flight, retained_tokens) for bucket, _ in groups)

    def needed(length: int) -> int:
        if packed:
            return pages_needed(length)
        weighted = sum(blocks_per_request(bucket, length, in_flight, retained_tokens) * sum(p) for bucket, p in groups)
        return -(-weighted // mla_bytes)

    def fits(length: int) -> bool:
        if rules.null_block_in_check:  # 0.29 rewrote the check: bytes per block x blocks, the null block held back
            return bytes_per_block * pages_needed(length) <= kv_memory_bytes - bytes_per_block
        return check_bytes * pages_needed(length) <= kv_memory_bytes

    return packed_pool(groups, needed(max_model_len), fits, kv_memory_bytes=kv_memory_bytes,
                       max_model_len=max_model_len, mnbt=mnbt, bytes_per_block=bytes_per_block, rules=rules,
                       kv_dtype="fp8_ds_mla", in_flight=in_flight, max_num_seqs=max_num_seqs, notes=notes,
                       retained_tokens=retained_tokens)


def packed_pool(groups: list[tuple[tuple, list[int]]], per_request: int, fits, *, kv_memory_bytes: int,
                max_model_len: int, mnbt: int, bytes_per_block: int, rules, kv_dtype: str, in_flight: int,
                max_num_seqs: int, notes: list[str], state_pages: int = 1, retained_tokens: int = 0):
    """The VllmPool of a packed-slab plan (DeepSeek-V4, V4.1, GLM-5-Next): groups as (bucket, page bytes per
    layer), a request's blocks, and the start check fits(max_len); state_pages: the pages a request holds in a
    Mamba group."""
    from .vllm_groups import CacheGroup
    from .vllm_pages import PageSpec
    from .vllm_pool import VllmPool, longest_fitting, memory_refusal

    num_blocks = kv_memory_bytes // bytes_per_block
    concurrency = num_blocks / per_request
    ok = fits(max_model_len)
    estimate = None if ok else longest_fitting(fits, max_model_len)
    cache_groups, layer_specs, start = [], [], 0
    for (kind, block, window), pages in groups:
        kept = retained_tokens if kind in ("sliding", "state") else 0  # SlidingWindowMLASpec.extra_retained_tokens
        spec = PageSpec(kind, block, window_tokens=window, padded_page_bytes=sum(pages), state_pages=state_pages,
                        retained_tokens=kept)
        cache_groups.append(CacheGroup(spec, tuple(range(start, start + len(pages)))))
        layer_specs += [PageSpec(kind, block, window_tokens=window, padded_page_bytes=p, state_pages=state_pages,
                                 retained_tokens=kept) for p in pages]
        start += len(pages)
    refusal = None if ok else memory_refusal(max_model_len, estimate)
    return VllmPool(kv_memory_bytes, max_model_len, mnbt, tuple(cache_groups), False, bytes_per_block, num_blocks,
                    per_request, int(concurrency * max_model_len), concurrency, ok, estimate, tuple(notes),
                    tuple(layer_specs), rules.version, rules.one_log_line, kv_dtype, bytes_per_block, in_flight,
                    gib_text_rounded=rules.gib_text_rounded, tokens_from_concurrency=rules.tokens_from_concurrency,
                    max_num_seqs=max_num_seqs, refusal=refusal)


# the releases whose model code kvplan read for each packed pool (DeepSeek-V4.1, GLM-5-Next, Qwen4-Exp, Step-5) and
# Kimi K3's KDA pages, oldest first. All were read in 0.33; vLLM 0.34 changed those model folders
# (models/deepseek_v41, glm5next, qwen4_exp, step5, kimi_k3) and its default block size (CacheConfig 16 -> 64),
# and a family gets 0.34 only once its 0.34 code was read and its oracle run against 0.34.0's planner:
# - DeepSeek-V4.1: 0.34.0's models/deepseek_v41 (attention.py get_kv_cache_spec, DeepseekV4IndexerCache,
#   compressor.py CompressorStateCache), v1/attention/backends/mla/sparse_swa.py DeepseekV4SWACache and
#   kv_cache_interface.py register the 0.33 specs; nvidia/model.py _select_dsv4_attn_cls only adds "no LoRA" to
#   mega attention; the Hopper backends all take the new default 64 and mega attention keeps 128
#   (platforms/interface.py _preferred_block_size_for_backends); kv_cache_planning.py's packed groups are
#   unchanged. benchmarks/vllm_oracle_dsv41.py --grid --release 0.34 on 0.34.0: 54 cases agree, 0 differ.
# - Kimi K3: 0.34.0's models/kimi_k3/nvidia/kda.py (get_kv_cache_spec, resolve_kda_prefill_backend,
#   get_state_shape / get_state_dtype) and model.py's state shape and dtype hooks are 0.33's, and mla.py registers
#   the same MLA spec; platforms/interface.py _align_hybrid_block_size only adds MambaSpec.state_alignment (1
#   unless FlashInfer ReplaySSM is asked for), and MLA's 128-token alignment outweighs the new default 64, so the
#   block stays 5,760. New in 0.34: DSA layers (nvidia/dsa.py, common/dsa_cache.py) only with a dsa_config,
#   which the kimi_linear family refuses (configs/vllm34_text.py), and an opt-in KIMI_K3_KV_BALANCED_MLA backend.
#   benchmarks/vllm_oracle.py --kimi-k3 0.34 on 0.34.0: 12 cases agree, 0 differ.
# - Step-5: 0.34.0's models/step5 moved config.py, csa_tail_ring.py and sparse_summary_cache.py to common/
#   unchanged but for the ring's kernel block (Step5CSATailRingBackend asks for a larger block, 32 / 64 / 128,
#   when one K/V page cannot hold the ring's rows; a --block-size too small is still refused by the ring's
#   get_kv_cache_spec, as the oracle shows at TP 8, fp8, block 16); nvidia/model.py
#   and sparse_attention.py register the same specs. What changes the pool is the default block: all four
#   backends take 64, so the block is 64 (vllm_step5.py). benchmarks/vllm_oracle_step5.py --grid --release 0.34
#   on 0.34.0: 64 cases agree, 0 differ.
# - GLM-5-Next: 0.34.0's models/glm5next/common/kda.py (get_kv_cache_spec, get_state_shape / _dtype, the KDA
#   prefill backend) and common/attention.py (Glm5NextIndexerCache, Glm5NextTailCache) are 0.33's; the MLA
#   backend is still FLASHINFER_MLA_SPARSE_SM90 and the hybrid block is still 128 x cdiv(state, 128 x latent
#   bytes) (MLA's 128-token alignment outweighs the new default 64): 4,352 tokens at TP 1.
#   benchmarks/vllm_oracle_glm5next.py on 0.34.0 (TP 1 and 2 in bf16, TP 1 in fp8; 10 / 40 GiB; 8K / 128K):
#   12 cases equal kvplan's 0.34 pool.
# - Qwen4-Exp: 0.34.0's models/qwen4_exp moved the indexer caches (common/qsa_cache.py -> common/qsa_indexer.py,
#   QSAKeyStateCache -> QSARawKeyCache) without changing their specs: the ring is still CircularBufferSpec of
#   indexer_compress_ratio rows of the key plus 12 bf16 columns of int64 MRoPE positions when
#   model_config.uses_mrope (cache_rope_positions; stripped for Qwen4ExpForCausalLM and --language-model-only by
#   models/config.py as in 0.33), the compressed keys MLAAttentionSpec; nvidia/qsa.py's owner has its own backend
#   (Qwen4ExpQSABackend, MultipleOf(16)) with the same FullAttentionSpec. Both backends take the new default 64, so
#   _align_hybrid_block_size steps by max(1, 64) = 64: lcm(64, 64) with prefix caching ('align', as 0.33's
#   lcm(16, 64)), 64 without it (16 in 0.33): 1,600 tokens at TP 1 either way (vllm_qwen4exp.py).
#   benchmarks/vllm_oracle_qwen4exp.py --grid --release 0.34 on 0.34.0: 64 cases agree, 0 differ.
PACKED_POOLS_READ = {"DeepSeek-V4.1": ("0.33", "0.34"), "Kimi K3": ("0.33", "0.34"), "Step-5": ("0.33", "0.34"),
                     "GLM-5-Next": ("0.33", "0.34"), "Qwen4-Exp": ("0.33", "0.34")}
FIRST_READ = "0.33"  # the release every family in PACKED_POOLS_READ (or missing from it) was first read in


def require_read(label: str, rules, older: str) -> None:
    """Refuse a release kvplan has not read `label`'s pool in (`older`: why, for one before FIRST_READ)."""
    read = PACKED_POOLS_READ.get(label, (FIRST_READ,))
    if rules.version in read:
        return
    if _release(rules.version) > _release(read[-1]):
        raise UsageError(f"vLLM {rules.version}: kvplan has read {label}'s pool in vLLM {' and '.join(read)} only "
                         f"(its {rules.version} model code is not read here)",
                         f"use --engine vllm@{read[-1]}")
    raise UsageError(f"vLLM {rules.version}: {older}", f"use --engine vllm@{read[0]}")


def require_hopper_read(label: str, rules, capability: tuple[int, int] | None, notes: list[str], older: str,
                        assumed: str) -> None:
    """The checks of a pool kvplan models on Hopper only, in the releases PACKED_POOLS_READ names (GLM-5-Next,
    Qwen4-Exp, Step-5): refuse another release (`older` says why) or a GPU other than SM 9.0; with no GPU, note
    that Hopper (`assumed`) is assumed."""
    require_read(label, rules, older)
    if capability is None:
        notes.append(f"{label}: no GPU given, so {assumed}")
    elif capability != (9, 0):
        raise UsageError(f"--engine vllm: {label}'s pool is modelled on Hopper (SM 9.0), not SM "
                         f"{capability[0]}.{capability[1]}", "give --gpu h100 or h200, or plan without --engine vllm")
