"""vLLM v1's own KV pool accounting, reproduced without torch or vllm.

Given the KV memory one GPU may fill (vLLM's "Available KV cache memory") and
max_model_len, this computes the number of blocks vLLM allocates and the two
lines it logs at start-up:

    GPU KV cache size: 81,920 tokens
    Maximum concurrency for 8,192 tokens per request: 10.00x

Modelled behaviour: vLLM v0.11 (the v1 engine), read from
vllm/v1/kv_cache_interface.py, vllm/v1/core/kv_cache_utils.py,
vllm/model_executor/models/config.py (HybridAttentionMambaModelConfig),
vllm/config/cache.py and the CUDA platform's MLA block-size rule:

- Page = bytes of one block of one layer. Full or sliding attention:
  block x kv_heads x (head_k + head_v) x dtype bytes (fp8 scales are separate
  per-tensor parameters, not in the page). MLA: ONE tensor of
  block x (kv_lora_rank + rope) x dtype bytes; DeepSeek-V3.2's fp8 format
  ("fp8_ds_mla") is 656 B per token. V3.2 indexer keys: block x
  (index_head_dim + index_head_dim / 128 x 4) bytes. Mamba / Gated DeltaNet:
  the whole conv + SSM state of one sequence.
- KV heads per rank = max(1, kv_heads // tp); the MLA latent and the indexer
  are replicated on every rank (kvplan.capacity.shard does this).
- Worst case per request and layer: full cdiv(max_len, block) pages; sliding
  window (cdiv(min(W - 1 + max_num_batched_tokens, max_len), block) + 1) pages
  (the +1: a window need not start on a block boundary); Mamba one page.
- One group when every layer has the same spec; one group with summed pages
  when all layers are of one type but differ in size (V3.2: MLA + indexer);
  otherwise page sizes are unified (smaller pages get a larger block) and
  layers are split into groups of equal size, the last group of a type padded.
- Hybrid attention + Mamba: the attention block becomes the smallest multiple
  of 16 whose page holds the Mamba state, then the Mamba page is padded to it.
- MLA on Hopper (FlashMLA) forces the block size to a multiple of 64.
- num_blocks = available // page // layers_per_group, the minimum over PP
  stages; "GPU KV cache size" = num_blocks // groups x smallest block;
  concurrency = num_blocks / blocks one max_model_len request needs.

Not modelled: token eviction, compressed sparse attention and Quest (vLLM
allocates every token), speculative-decoding blocks, DCP/PCP, CUDA graphs and
the profiling run that decides the available memory itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..capacity.shard import shard, stage_bounds
from ..core.layers import TokenCache
from ..core.model import ModelSpec
from ..errors import PlanError, UsageError
from ..render import Report, Table
from ..units import GIB, format_bytes

VERSION_MODELLED = "0.11"
DEFAULT_BLOCK_TOKENS = 16  # CacheConfig.DEFAULT_BLOCK_SIZE
MLA_BLOCK_ALIGN_TOKENS = 64  # FlashMLA: block_size % 64 == 0, else forced to 64
MAMBA_ATTN_BLOCK_ALIGN_TOKENS = 16  # hybrid Mamba: attention block a multiple of 16
FP8_DS_MLA_BYTES_PER_TOKEN = 656  # V3.2: 512 fp8 latent + 4 fp32 scales + 64 bf16 rope
# `vllm serve` defaults: 8192 on GPUs with >= 70 GiB that are not A100, else 2048.
MAX_NUM_BATCHED_TOKENS_LARGE_GPU = 8192
MAX_NUM_BATCHED_TOKENS_SMALL_GPU = 2048
MAMBA = "mamba"
FULL_LIKE = ("full", "mla", "indexer")


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def default_max_num_batched_tokens(gpu=None) -> int:
    """vLLM's `vllm serve` default; without a GPU, the large-GPU value (H100-class)."""
    if gpu is None or not gpu.memory_bytes:
        return MAX_NUM_BATCHED_TOKENS_LARGE_GPU
    if gpu.memory_bytes >= 70 * GIB and "a100" not in gpu.name.lower():
        return MAX_NUM_BATCHED_TOKENS_LARGE_GPU
    return MAX_NUM_BATCHED_TOKENS_SMALL_GPU


@dataclass(frozen=True)
class PageSpec:
    """One layer's cache as vLLM's KV cache manager sees it (its KVCacheSpec)."""

    kind: str  # full | sliding | mla | indexer | mamba
    block_tokens: int
    token_bytes: int = 0  # one token of this layer (token caches)
    state_bytes: int = 0  # mamba: conv + SSM state of one sequence
    window_tokens: int | None = None
    padded_page_bytes: int | None = None

    @property
    def page_bytes(self) -> int:
        if self.padded_page_bytes is not None:
            return self.padded_page_bytes
        if self.kind == MAMBA:
            return self.state_bytes
        return self.block_tokens * self.token_bytes

    @property
    def label(self) -> str:
        if self.kind == "sliding":
            return f"sliding window {self.window_tokens}"
        return {"full": "full attention", "mla": "latent (MLA)", "indexer": "indexer keys", MAMBA: "mamba state"}[self.kind]

    def with_block(self, block_tokens: int) -> "PageSpec":
        """A larger block; an attention page padded before scales with it."""
        padded = self.padded_page_bytes
        if padded is not None and self.kind != MAMBA:
            padded = padded * block_tokens // self.block_tokens
        return replace(self, block_tokens=block_tokens, padded_page_bytes=padded)

    def max_memory_bytes(self, max_len: int, max_num_batched_tokens: int) -> int:
        """Bytes one request of max_len tokens may hold in this layer, at worst."""
        if self.kind == MAMBA:
            return self.page_bytes
        if self.kind == "sliding":
            tokens = min(self.window_tokens - 1 + max_num_batched_tokens, max_len)
            return (cdiv(tokens, self.block_tokens) + 1) * self.page_bytes
        return cdiv(max_len, self.block_tokens) * self.page_bytes


@dataclass(frozen=True)
class CacheGroup:
    """Layers sharing one block table (vLLM's KVCacheGroupSpec)."""

    spec: PageSpec
    layers: tuple[int, ...]  # indices into the list of vLLM cache layers
    padding_layers: int = 0


@dataclass(frozen=True)
class VllmPool:
    kv_memory_bytes: int
    max_model_len: int
    max_num_batched_tokens: int
    groups: tuple[CacheGroup, ...]
    uniform_type: bool  # one group whose page is the sum of its layers' pages
    page_bytes: int  # one block of one group (summed over layers when uniform_type)
    num_blocks: int
    blocks_per_request: int
    gpu_kv_cache_tokens: int
    max_concurrency: float
    fits: bool
    estimated_max_model_len: int | None
    notes: tuple[str, ...] = field(default=())
    layer_specs: tuple[PageSpec, ...] = field(default=())  # one per vLLM cache layer, after unification

    @property
    def block_size(self) -> int:
        return min(g.spec.block_tokens for g in self.groups)

    @property
    def concurrency_text(self) -> str:
        return f"{self.max_concurrency:.2f}x"

    def log_lines(self) -> list[str]:
        """The lines vLLM prints, formatted as vLLM formats them."""
        return [
            f"Available KV cache memory: {self.kv_memory_bytes / GIB:.2f} GiB",
            f"GPU KV cache size: {self.gpu_kv_cache_tokens:,} tokens",
            f"Maximum concurrency for {self.max_model_len:,} tokens per request: {self.concurrency_text}",
        ]


def _token_cache_spec(cache: TokenCache, block: int, v32: bool) -> PageSpec:
    storage = cache.storage
    if cache.kind == "indexer":  # fp8 keys + fp32 scale per 128 channels, as stored
        return PageSpec("indexer", block, token_bytes=cache.entry_bytes(1))
    if cache.kind == "latent":
        if v32 and storage.bits == 8:
            per_token = FP8_DS_MLA_BYTES_PER_TOKEN
        else:
            per_token = storage.payload_bytes(cache.heads * cache.key_dim)
        return PageSpec("mla", block, token_bytes=per_token)
    if storage.granularity in ("none", "tensor", "head"):
        per_token = storage.payload_bytes(cache.heads * (cache.key_dim + cache.value_dim))
    else:  # int8/int4/int2/KIVI are not vLLM v0.11 KV dtypes: kvplan's layout
        per_token = -(-cache.bytes_per_token().numerator // cache.bytes_per_token().denominator)
    window = cache.policy.window_tokens
    if window is not None:
        return PageSpec("sliding", block, token_bytes=per_token, window_tokens=window)
    return PageSpec("full", block, token_bytes=per_token)


def layer_specs(model: ModelSpec, block_tokens: int | None, max_model_len: int,
                hybrid_manager: bool = True) -> tuple[list[tuple[int, PageSpec]], list[str]]:
    """(model layer index, spec) for every cache vLLM allocates, and notes.

    A model layer may give several (V3.2: latent and indexer; Falcon-H1:
    attention and Mamba). Layers that reuse another layer's cache give none.
    """
    notes: list[str] = []
    caches = [c for layer in model.layers if layer.shares_cache_of is None for c in layer.caches]
    has_latent = any(c.kind == "latent" for c in caches)
    v32 = has_latent and any(c.kind == "indexer" for c in caches)
    block = block_tokens or DEFAULT_BLOCK_TOKENS
    if has_latent and block % MLA_BLOCK_ALIGN_TOKENS:
        notes.append(f"MLA: block size {block} -> {MLA_BLOCK_ALIGN_TOKENS} (FlashMLA on Hopper needs a multiple of 64)")
        block = MLA_BLOCK_ALIGN_TOKENS
    if any(c.policy.budget_fraction or c.policy.budget_tokens or c.policy.compress_ratio or c.policy.read_page_tokens
           for c in caches):
        notes.append("eviction, compressed sparse attention and Quest are not vLLM features: every token is allocated")
    specs: list[tuple[int, PageSpec]] = []
    for i, layer in enumerate(model.layers):
        if layer.shares_cache_of is not None:
            continue
        for cache in layer.caches:
            specs.append((i, _token_cache_spec(cache, block, v32)))
        if layer.state is not None:
            specs.append((i, PageSpec(MAMBA, max_model_len, state_bytes=layer.state.bytes)))
    kinds = {s.kind for _, s in specs}
    attention = [s for _, s in specs if s.kind in ("full", "sliding")]
    if MAMBA in kinds and attention:
        specs, note = _align_attention_to_mamba(specs, block, attention[0].token_bytes)
        notes.append(note)
    if not hybrid_manager and "sliding" in kinds and kinds & set(FULL_LIKE):
        specs = [(i, replace(s, kind="full", window_tokens=None) if s.kind == "sliding" else s) for i, s in specs]
        notes.append("hybrid KV cache manager off: sliding-window layers are sized as full attention")
    if v32:
        notes.append("DeepSeek-V3.2: vLLM's default KV format is fp8_ds_mla (656 B/token); --kv-dtype fp8 models it")
    if any(c.storage.granularity in ("group", "kivi") and c.kind != "indexer" for c in caches):
        notes.append("int8/int4/int2/KIVI are not vLLM v0.11 KV dtypes: pages use kvplan's layout with scales")
    return specs, notes


def _align_attention_to_mamba(specs, block: int, attn_token_bytes: int):
    """HybridAttentionMambaModelConfig: attention page >= Mamba page, Mamba padded to it."""
    mamba_page = max(s.page_bytes for _, s in specs if s.kind == MAMBA)
    align = MAMBA_ATTN_BLOCK_ALIGN_TOKENS
    needed = align * cdiv(mamba_page, align * attn_token_bytes)
    new_block = max(block, needed)
    attn_page = new_block * attn_token_bytes
    out = []
    for i, s in specs:
        if s.kind == MAMBA:
            out.append((i, replace(s, padded_page_bytes=attn_page)))
        elif s.kind != "indexer":
            out.append((i, s.with_block(new_block)))
        else:
            out.append((i, s))
    pad_pct = 100 * (attn_page - mamba_page) / mamba_page if mamba_page else 0.0  # an empty state: nothing to pad
    note = (f"hybrid Mamba: attention block {block} -> {new_block} tokens so a page ({attn_page:,} B) holds the "
            f"Mamba state ({mamba_page:,} B); Mamba page padded by {pad_pct:.2f}%")
    return out, note


def _uniform_type(specs: list[PageSpec]) -> bool:
    """UniformTypeKVCacheSpecs.is_uniform_type: one block size and one kind of allocation."""
    first = specs[0]
    if len({s.block_tokens for s in specs}) > 1:
        return False
    if first.kind in FULL_LIKE:
        return all(s.kind in FULL_LIKE for s in specs)
    if first.kind == "sliding":
        return all(s.kind == "sliding" and s.window_tokens == first.window_tokens for s in specs)
    return all(s.kind == MAMBA for s in specs)


def _unify_page_sizes(specs: list[PageSpec]) -> list[PageSpec]:
    largest = max(s.page_bytes for s in specs)
    out = []
    for s in specs:
        if s.page_bytes == largest:
            out.append(s)
            continue
        if s.kind == MAMBA or largest % s.page_bytes:
            raise PlanError(
                f"vLLM cannot unify page sizes: {s.label} page {s.page_bytes:,} B does not divide {largest:,} B",
                "vLLM raises NotImplementedError for this layer mix",
            )
        out.append(s.with_block(s.block_tokens * (largest // s.page_bytes)))
    return out


def kv_cache_groups(specs: list[PageSpec]) -> tuple[tuple[CacheGroup, ...], bool]:
    """(groups, uniform_type) as vLLM's get_kv_cache_groups forms them."""
    everyone = tuple(range(len(specs)))
    if all(s == specs[0] for s in specs):
        return (CacheGroup(specs[0], everyone),), False
    if _uniform_type(specs):
        return (CacheGroup(specs[0], everyone),), True
    specs = _unify_page_sizes(specs)
    by_spec: dict[PageSpec, list[int]] = {}
    for index, spec in enumerate(specs):
        by_spec.setdefault(spec, []).append(index)
    counts = [len(v) for v in by_spec.values()]
    # the "1" of an n:1 pattern, unless the counts are close (12 sliding + 13 full -> 13)
    group_size = max(counts) if max(counts) < min(counts) * 1.5 else min(counts)
    split = []
    for spec, layers in by_spec.items():
        n_groups = cdiv(len(layers), group_size)
        split.extend((spec, tuple(layers[g::n_groups])) for g in range(n_groups))  # [g::n] balances PP stages
    width = max(len(layers) for _, layers in split)  # layers per group; shorter groups are padded
    return tuple(CacheGroup(spec, layers, width - len(layers)) for spec, layers in split), False


def _stage_blocks(groups, uniform_type: bool, specs, stage_layers: set[int], available: int) -> int | None:
    if uniform_type:
        page = sum(specs[i].page_bytes for i in groups[0].layers if i in stage_layers)
        return available // page if page else None
    per_group = max(sum(1 for i in g.layers if i in stage_layers) for g in groups)
    if per_group == 0:
        return None
    return max(available // groups[0].spec.page_bytes // per_group, 0)


def _needed_bytes(specs: list[PageSpec], stage_layers: set[int], max_len: int, mnbt: int) -> int:
    """check_enough_kv_cache_memory: the sum of every layer's worst case on one stage."""
    return sum(specs[i].max_memory_bytes(max_len, mnbt) for i in stage_layers)


def simulate(model: ModelSpec, *, kv_memory_bytes: int, max_model_len: int, block_tokens: int | None = None,
             tp: int = 1, pp: int = 1, max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS_LARGE_GPU,
             hybrid_manager: bool = True) -> VllmPool:
    """vLLM's KV cache config for `model` on one (tp, pp) replica.

    kv_memory_bytes: memory for the KV cache per GPU. max_num_batched_tokens:
    the scheduler's token budget per step, which bounds a sliding window's
    worst case (default 8192, `vllm serve` on an H100-class GPU).
    """
    if kv_memory_bytes <= 0:
        raise PlanError("vLLM: no memory left for the KV cache", "raise --mem-util or give --kv-memory")
    ranked = shard(model, tp, 1)[0]  # TP-sharded, all layers
    pairs, notes = layer_specs(ranked, block_tokens, max_model_len, hybrid_manager)
    if not pairs:
        raise PlanError(f"{model.name} has no KV cache: vLLM allocates one null block")
    owners = [i for i, _ in pairs]
    specs = [s for _, s in pairs]
    groups, uniform_type = kv_cache_groups(specs)
    grouped_specs = list(specs)  # after page unification
    if not uniform_type:
        for g in groups:
            for i in g.layers:
                grouped_specs[i] = g.spec
    stages = []
    for start, end in stage_bounds(model.num_layers, pp):
        stages.append({k for k, owner in enumerate(owners) if start <= owner < end})
    blocks = [b for st in stages if (b := _stage_blocks(groups, uniform_type, grouped_specs, st, kv_memory_bytes)) is not None]
    num_blocks = min(blocks)
    if uniform_type:
        page = sum(s.page_bytes for s in specs)
        per_request = max(cdiv(s.max_memory_bytes(max_model_len, max_num_batched_tokens), s.page_bytes) for s in specs)
    else:
        page = groups[0].spec.page_bytes
        worst = sum(g.spec.max_memory_bytes(max_model_len, max_num_batched_tokens) for g in groups)
        per_request = cdiv(worst, page)
    tokens = num_blocks // len(groups) * min(g.spec.block_tokens for g in groups)
    concurrency = num_blocks / per_request

    def fits(length: int) -> bool:
        return all(_needed_bytes(grouped_specs, st, length, max_num_batched_tokens) <= kv_memory_bytes
                   for st in stages if st)

    ok = fits(max_model_len)
    estimate = None
    if not ok:
        lo, hi, estimate = 1, max_model_len, 0
        while lo <= hi:
            mid = (lo + hi) // 2
            if fits(mid):
                estimate, lo = mid, mid + 1
            else:
                hi = mid - 1
    return VllmPool(kv_memory_bytes, max_model_len, max_num_batched_tokens, groups, uniform_type, page, num_blocks,
                    per_request, tokens, concurrency, ok, estimate, tuple(notes), tuple(grouped_specs))


def _kv_memory(result) -> int:
    dep = result.deployment
    if dep is not None and dep.kv_memory_bytes is not None:
        return dep.kv_memory_bytes
    if result.capacity is not None:
        return result.capacity.pool_bytes
    raise UsageError("--engine vllm needs the KV memory per GPU", "give --kv-memory, or --gpu / --gpu-memory")


def _mixed_label(pool: VllmPool) -> str:
    return " + ".join(dict.fromkeys(s.label for s in pool.layer_specs))


def add_to_report(report: Report, result, max_model_len_tokens: int, *, max_num_batched_tokens: int | None = None,
                  hybrid_manager: bool | None = None) -> VllmPool:
    """`--engine vllm`: vLLM's blocks, its two log lines, and the groups, in the report."""
    dep = result.deployment
    plan = result.plan
    mnbt = max_num_batched_tokens or default_max_num_batched_tokens(dep.gpu if dep else None)
    if hybrid_manager is None:  # a KV connector (CPU offloading) turns the hybrid manager off
        hybrid_manager = plan.offload is None
    pool = simulate(plan.model, kv_memory_bytes=_kv_memory(result), max_model_len=max_model_len_tokens,
                    block_tokens=plan.block_size, tp=dep.tp if dep else 1, pp=dep.pp if dep else 1,
                    max_num_batched_tokens=mnbt, hybrid_manager=hybrid_manager)
    group_rows = []
    for g in pool.groups:
        group_rows.append({
            "kind": g.spec.label if not pool.uniform_type else _mixed_label(pool), "layers": len(g.layers), "padding_layers": g.padding_layers,
            "block_size": g.spec.block_tokens, "page_bytes": g.spec.page_bytes,
            "window_tokens": g.spec.window_tokens,
            "blocks_per_request": cdiv(g.spec.max_memory_bytes(pool.max_model_len, mnbt), g.spec.page_bytes),
        })
    report.data["engine"] = {
        "name": "vllm",
        "version_modelled": VERSION_MODELLED,
        "kv_memory_bytes": pool.kv_memory_bytes,
        "max_model_len": pool.max_model_len,
        "max_num_batched_tokens": mnbt,
        "gpu_kv_cache_tokens": pool.gpu_kv_cache_tokens,
        "max_concurrency": round(pool.max_concurrency, 6),
        "max_concurrency_text": pool.concurrency_text,
        "num_blocks": pool.num_blocks,
        "block_size": pool.block_size,
        "page_bytes": pool.page_bytes,
        "uniform_type": pool.uniform_type,
        "blocks_per_request": pool.blocks_per_request,
        "groups": group_rows,
        "fits": pool.fits,
        "estimated_max_model_len": pool.estimated_max_model_len,
        "log": pool.log_lines(),
        "notes": list(pool.notes),
    }
    rows = [[r["kind"], r["layers"], r["padding_layers"], r["block_size"], format_bytes(r["page_bytes"]),
             r["blocks_per_request"]] for r in group_rows]
    report.tables.append(Table(f"vLLM {VERSION_MODELLED} KV cache groups ({pool.num_blocks:,} blocks)",
                               ["group", "layers", "padding", "block", "page", "blocks/request"], rows, {1, 2, 3, 5}))
    report.lines.append(f"vLLM {VERSION_MODELLED} (modelled) would log:")
    report.lines.extend(f"  {line}" for line in pool.log_lines())
    if not pool.fits:
        report.lines.append(
            f"  vLLM would refuse to start: one {pool.max_model_len:,}-token request needs more than "
            f"{format_bytes(pool.kv_memory_bytes)}; the estimated maximum model length is {pool.estimated_max_model_len:,}"
        )
    report.lines.extend(f"  note: {n}" for n in pool.notes)
    return pool


__all__ = ["PageSpec", "CacheGroup", "VllmPool", "simulate", "add_to_report", "layer_specs", "kv_cache_groups",
           "default_max_num_batched_tokens", "VERSION_MODELLED"]
