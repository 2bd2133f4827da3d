"""vLLM's KV cache groups (kv_cache_groups: get_kv_cache_groups): layers sharing one block table, pages unified,
and what one block costs a pipeline stage and how many blocks one request needs.

Groups: one when every layer has the same spec; one with summed pages when all layers need the same token slots
(V3.2: MLA + indexer); otherwise page sizes are unified and layers split into groups of equal size (the smallest
count per spec; 0.12+ the largest when the counts are within 1.25x, 0.18+ 1.5x).
"""

from __future__ import annotations

from dataclasses import replace

from .._record import record
from ..errors import PlanError
from ..units import cdiv
from .vllm_pages import FULL_LIKE, MAMBA, PageSpec
from .vllm_rules import LATEST, VllmRules


@record
class CacheGroup:
    """Layers sharing one block table (vLLM's KVCacheGroupSpec)."""

    spec: PageSpec
    layers: tuple[int, ...]  # indices into the list of vLLM cache layers
    padding_layers: int = 0



def _uniform_type(specs: list[PageSpec]) -> bool:
    """UniformTypeKVCacheSpecs.is_uniform_type: one block size and one kind of allocation."""
    first = specs[0]
    if len({s.block_tokens for s in specs}) > 1:
        return False
    if first.kind in FULL_LIKE:
        return all(s.kind in FULL_LIKE for s in specs)
    if first.kind in ("sliding", "chunked"):
        return all(s.kind == first.kind and s.window_tokens == first.window_tokens for s in specs)
    return all(s.kind == MAMBA and s.state_pages == first.state_pages for s in specs)


def _unify_page_sizes(specs: list[PageSpec]) -> list[PageSpec]:
    largest = max(s.page_bytes for s in specs)
    out = []
    for s in specs:
        if s.page_bytes == largest:
            out.append(s)
            continue
        if s.kind == MAMBA:
            out.append(replace(s, padded_page_bytes=largest))
            continue
        if largest % s.page_bytes:
            raise PlanError(
                f"vLLM cannot unify page sizes: {s.label} page {s.page_bytes:,} B does not divide {largest:,} B",
                "vLLM raises NotImplementedError for this layer mix",
            )
        out.append(s.with_block(s.block_tokens * (largest // s.page_bytes)))
    return out


def kv_cache_groups(specs: list[PageSpec], rules: VllmRules = LATEST) -> tuple[tuple[CacheGroup, ...], bool]:
    """(groups, uniform_type) as vLLM's get_kv_cache_groups forms them.

    rules.group_close_ratio: layers per group is the largest count of one spec
    when it is below close_ratio x the smallest (0.18+: 1.5; 0.12-0.17: 1.25),
    else the smallest (0.11: always the smallest, close_ratio 0).
    rules.unify_page_sizes: pages that differ are unified (0.12+) or refused."""
    everyone = tuple(range(len(specs)))
    if all(s == specs[0] for s in specs):
        return (CacheGroup(specs[0], everyone),), False
    if _uniform_type(specs):
        return (CacheGroup(specs[0], everyone),), True
    if not rules.unify_page_sizes and len({s.page_bytes for s in specs}) > 1:
        raise PlanError(f"vLLM {rules.version} cannot group layers whose pages differ "
                        f"({', '.join(sorted({f'{s.kind} {s.page_bytes:,} B' for s in specs}))})",
                        "its get_kv_cache_groups raises NotImplementedError; page sizes are unified from 0.12")
    specs = _unify_page_sizes(specs)
    by_spec: dict[PageSpec, list[int]] = {}
    for index, spec in enumerate(specs):
        by_spec.setdefault(spec, []).append(index)
    counts = [len(v) for v in by_spec.values()]
    # the "1" of an n:1 pattern, unless the counts are close (12 sliding + 13 full -> 13 from 0.12)
    group_size = max(counts) if max(counts) < min(counts) * rules.group_close_ratio else min(counts)
    split = []
    for spec, layers in by_spec.items():
        n_groups = cdiv(len(layers), group_size)
        split.extend((spec, tuple(layers[g::n_groups])) for g in range(n_groups))  # [g::n] balances PP stages
    width = max(len(layers) for _, layers in split)  # layers per group; shorter groups are padded
    return tuple(CacheGroup(spec, layers, width - len(layers)) for spec, layers in split), False


def _stage_block_bytes(groups, uniform_type: bool, specs, stage_layers: set[int]) -> int:
    """Bytes one block costs a stage's pool (0: the stage holds no cache)."""
    if uniform_type:
        return sum(specs[i].page_bytes for i in groups[0].layers if i in stage_layers)
    per_group = max(sum(1 for i in g.layers if i in stage_layers) for g in groups)
    return groups[0].spec.page_bytes * per_group


def _blocks_per_request(groups, uniform_type: bool, specs, max_len: int, in_flight: int) -> int:
    if uniform_type:
        return max(cdiv(specs[i].max_memory_bytes(max_len, in_flight), specs[i].page_bytes) for i in groups[0].layers)
    return sum(cdiv(g.spec.max_memory_bytes(max_len, in_flight), g.spec.page_bytes) for g in groups)

