"""Which techniques the bench runs, with which block size, and the kernel layout
each prediction must describe.

Pure and torch-free. A BenchCase is one row of the bench: the technique as the
user wrote it, the technique chain the prediction composes (the technique plus
`page:BLOCK`, because every kernel cache here is paged), and the layout notes
where a kernel stores something differently from kvplan's default Storage (the
prediction then uses Storage parameters that describe the kernel, never a
fudge factor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..core.layers import TokenCache
from ..core.model import ModelSpec
from ..core.storage import FP32, kv_storage
from ..core.transform import map_caches
from ..errors import TechniqueError
from ..techniques import architecture, quantize, serving, tokens
from ..techniques.base import Technique
from ..techniques.registry import build

DEFAULT_BLOCK_TOKENS = 16


def all_specs(context_tokens: int, batch: int, small: bool = False) -> list[str]:
    """`-t all`: every catalog technique, parameters scaled to the benched context
    (`small`: the CPU shrink, whose latent what-if is 128 + 32 wide)."""
    t = context_tokens
    return [
        "gqa:1",
        "mqa",
        "cla:2",
        f"window:{max(16, t // 4)}",
        "mla:rank=128,rope=32" if small else "mla",
        "hybrid:3:1",
        f"csa:m=4,k={max(1, t // 16)},window={max(4, t // 8)}",
        f"quest:page=16,topk={max(1, t // 64)}",
        "fp8",
        "int8",
        "int4:group=32",
        "int2:group=32",
        "kivi:bits=2,group=16,residual=0",
        "evict:0.5,recent=16",
        "pyramid:0.25",
        "page:32",
        f"prefix:tokens={t // 2},requests={max(2, batch)}",
        "offload:cpu=1GiB,active=1",
    ]


@dataclass(frozen=True)
class BenchCase:
    spec: str  # as written ("baseline" for the as-configured row)
    name: str  # catalog name
    chain: tuple[Technique, ...]  # what the prediction composes, page:BLOCK included
    block_tokens: int | None  # None: the kernel layout is not paged (CSA)
    layout_notes: tuple[str, ...] = ()
    unsupported: str | None = None  # why no kernel can run it
    quant_groups: tuple[int, int] | None = None  # KIVI kernel (key tokens, value channels)
    model_fix: object = None  # ModelSpec -> ModelSpec describing a kernel layout
    extra: dict = field(default_factory=dict)

    def prepare(self, model: ModelSpec) -> ModelSpec:
        return self.model_fix(model) if self.model_fix else model


@dataclass(frozen=True)
class StateFp32(Technique):
    """Kernel layout, not a technique: recurrent_state keeps the linear-attention
    state [heads, d_k, d_v] in fp32, where HybridWhatIf assumes bf16."""

    def apply(self, plan):
        from ..core.storage import FP32 as _FP32

        def fix(layer):
            st = layer.state
            if st is None or st.kind != "linear" or st.conv_elements:
                return layer
            return replace(layer, state=replace(st, ssm_storage=_FP32))

        return plan.with_model(replace(plan.model, layers=tuple(fix(layer) for layer in plan.model.layers)))


def _quest_meta_fp32(model: ModelSpec) -> ModelSpec:
    return map_caches(model, lambda c: replace(c, quest_meta_storage=FP32), lambda i, l, c: c.kind == "attention")


def make_case(spec: str, default_block: int = DEFAULT_BLOCK_TOKENS) -> BenchCase:
    """Parse one -t value into a BenchCase (TechniqueError on a bad spec)."""
    if spec == "baseline":
        return BenchCase("baseline", "baseline", (serving.Page("page", "", "", "", block=default_block),), default_block)
    technique = build(spec)
    name = _catalog_name(technique)
    block = default_block
    notes: list[str] = []
    unsupported = None
    quant_groups = None
    model_fix = None
    chain: list[Technique] = [technique]
    if isinstance(technique, quantize.Quantize):
        storage = technique.storage
        if storage.bits == 8 and storage.granularity in ("group", "kivi"):
            unsupported = "no int8 kernel in kvplan.kernels (quant_write packs 4 and 2 bits only)"
        elif storage.granularity == "group":
            group = storage.group_size
            kivi = kv_storage(storage.name, group_size=group, kivi=True, residual_tokens=0)
            technique = replace(technique, storage=kivi)
            chain = [technique]
            block = math.lcm(default_block, group)
            quant_groups = (group, group)
            notes.append(
                f"{storage.name} group {group}: kernel quant_write uses the KIVI layout (keys per channel over "
                f"{group} tokens, values per token over {group} channels, fp16 scale+zero) instead of per-token "
                f"groups of {group} channels for keys; predicted with kv_storage('{storage.name}', "
                f"group_size={group}, kivi=True, residual_tokens=0) and page:{block}"
            )
        elif storage.granularity == "kivi":
            if storage.residual_tokens:
                unsupported = (f"kernel quant_write keeps no recent window in fp16 (only the open key group); "
                               f"use residual=0 (got {storage.residual_tokens})")
            group = storage.group_size
            block = math.lcm(default_block, group)
            quant_groups = (group, group)
            notes.append(f"KIVI group {group}: key groups must not straddle a block, so page:{block}")
    elif isinstance(technique, tokens.Quest):
        block = technique.page
        notes.append("Quest page = KV block; per-page min/max kept in bf16 (quest_meta dtype=bf16, "
                     "rounded outward), as TokenCache.quest_meta_storage assumes")
    elif isinstance(technique, architecture.HybridWhatIf) and technique.state_bytes is None:
        chain.append(StateFp32("kernel layout", "linear state in fp32", "state", "-"))
        notes.append("hybrid: recurrent_state keeps the [q_heads, d_k, d_v] state in fp32 (HybridWhatIf assumes "
                     "bf16): predicted with RecurrentState.ssm_storage = fp32")
    elif isinstance(technique, serving.Page):
        block = technique.block
        chain = []
    elif isinstance(technique, tokens.CompressedSparse):
        block = None
        notes.append("CSA kernel layout is contiguous per sequence (n // m compressed entries + a ring of "
                     "`window` raw tokens), not paged: predicted without page:")
    if block is not None:
        chain.append(serving.Page("page", "", "", "", block=block))
    return BenchCase(spec, name, tuple(chain), block, tuple(notes), unsupported, quant_groups, model_fix)


def _catalog_name(technique: Technique) -> str:
    from ..techniques.registry import ALIASES

    head = technique.spec.split(":")[0].split(",")[0].strip().lower()
    return ALIASES.get(head, head)


def expand(specs: list[str], context_tokens: int, batch: int, small: bool = False) -> list[str]:
    out: list[str] = []
    for s in specs:
        if s.strip().lower() == "all":
            out.extend(all_specs(context_tokens, batch, small))
        else:
            out.append(s)
    seen: list[str] = []
    for s in out:
        if s not in seen:
            seen.append(s)
    return seen


def check_cache_supported(cache: TokenCache, tokens: int | None = None) -> str | None:
    """Why no kernel here can run this cache at `tokens`, or None (a window at
    least as long as the context drops nothing and counts as none)."""
    p = cache.policy
    if p.window_tokens is not None and tokens is not None and p.window_tokens >= tokens:
        from ..core.transform import with_policy

        p = with_policy(cache, window_tokens=None).policy
    if p.chunk_tokens is not None and (tokens is None or p.chunk_tokens < tokens):
        return "no kernel keeps the current chunk of chunked local attention (Llama 4's layers)"
    if cache.kind == "indexer":
        return "no kernel for DeepSeek-V3.2 indexer key caches"
    if cache.kind == "latent":
        if p.window_tokens is not None or p.budget_fraction is not None or p.budget_tokens is not None:
            return "mla_decode has no window or eviction"
        if p.compress_ratio is not None or p.read_page_tokens is not None:
            return "no CSA or Quest kernel for a latent cache"
        if cache.storage.granularity in ("group", "kivi"):
            return "no integer-quantized latent cache kernel"
        return None
    if p.read_page_tokens is not None and (p.window_tokens is not None or p.budget_fraction is not None
                                           or p.budget_tokens is not None):
        return "Quest on a windowed or evicted cache is not supported by quest_select"
    if p.compress_ratio is not None and cache.storage.is_quantized:
        return "csa kernels store the cache dtype only"
    if cache.storage.granularity in ("group", "kivi") and (p.budget_fraction is not None or p.budget_tokens is not None):
        return "compaction copies float/fp8 rows only (not KIVI codes and group scales)"
    if cache.storage.granularity in ("group", "kivi") and p.read_page_tokens is not None:
        return "quest_meta reads float/fp8 caches only"
    return None


def check_device_supported(cache: TokenCache, capability: tuple[int, int] | None) -> str | None:
    """Why this CUDA device cannot run the cache's kernels, or None. `capability` is
    torch.cuda.get_device_capability() (None: the interpreter, which runs anything).
    The bench feeds bf16 K/V and queries (tensor-core bf16: sm_80 and newer); fp8
    e4m3 storage needs sm_89 (Ada) or newer."""
    if capability is None:
        return None
    here = f"{capability[0]}.{capability[1]}"
    if capability < (8, 0):
        return f"the kernels take bf16 inputs, which need compute capability 8.0 or newer; this GPU is {here}"
    if cache.storage.name.startswith("fp8") and capability < (8, 9):
        return f"fp8 e4m3 needs compute capability 8.9 or newer (Ada, Hopper); this GPU is {here}"
    return None


__all__ = ["BenchCase", "make_case", "expand", "all_specs", "check_cache_supported", "check_device_supported",
           "TechniqueError"]
