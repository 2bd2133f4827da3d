"""vLLM's DeepSeek-V4.1 pool, 0.33 and 0.34 (the packed block slab).

Read from vLLM 0.33.0's models/deepseek_v41 (attention.py DeepseekV4Attention /
DeepseekV4IndexerCache, compressor.py CompressorStateCache, nvidia/model.py's
backend choice), v1/attention/backends/mla/sparse_swa.py DeepseekV4SWACache,
v1/kv_cache_interface.py and v1/core/kv_cache_planning.py
(_get_packed_kv_cache_groups, _get_kv_cache_bytes_per_block), and checked
against that planner run on CPU on these specs (benchmarks/vllm_oracle_dsv41.py).
vLLM 0.34.0 registers the same specs and plans them the same way (diffed, and the oracle
run on 0.34.0: vllm_dsv4.PACKED_POOLS_READ says what was read); its new default block
of 64 is the one Hopper's backends already settled on, and mega attention keeps 128.

What each layer registers, in this order (one rank: every spec is replicated under TP):
- a KV source: its compressed entries (MLAAttentionSpec, block B, one record per
  ratio tokens), its index keys (MLAAttentionSpec, block B, 132 B: 128 fp8 + an
  fp32 scale), its window (below) and, at ratio 2, its compressor's ring
  (CircularBufferSpec: 8 rows of kv and score, 2 x head_dim float32, one block
  per request whatever the length);
- every other layer: its window (SlidingWindowMLASpec, block 32, window
  sliding_window, bounded replay).
The layers that read a source register nothing for it. By GPU (the attention
backend nvidia/model.py picks):
- Hopper (SM 9.0, FlashMLA): --kv-cache-dtype auto / fp8 -> fp8_ds_mla, V4's
  584-B record (448 fp8 + 64 bf16 rope + scales) for windows and entries, pages
  rounded to 576 B, B = 64;
- Blackwell (SM 10.x, FlashMLA mega attention): auto / fp8 -> nvfp4_ds_mla, the
  V4.1 record: 528 B windows (512 fp8 + 16 UE8M0 scales) and 288 B NVFP4
  entries (fp8_ds_mla given: 528 B entries), pages rounded to 512 B, B = 128,
  and the block stride rounded to lcm(window record, entry record).
The groups (vllm_dsv4.packed_groups): specs bucketed by type in first-seen order
(windows, entries + index keys, rings). When no bucket that mixes page sizes is
balanced (V4.1-Flash: 3 ratio-2 and 1 ratio-1 source), the window and ring buckets
are state buckets, split into cdiv(layers, widest group bytes // page) groups,
layers interleaved; otherwise the balanced buckets repeat by _approximate_gcd. A
block is the widest group's pages, rounded to the stride alignment; a request needs
cdiv(max_len, B) entry blocks, cdiv(min(window - 1 + in-flight, max_len), 32) + 1
per window group and 1 per ring group; tokens = int(blocks / per request x
max_len); the start check holds back one block (the null block).
"""

from __future__ import annotations

import math

from ..core.model import ModelSpec
from ..errors import UsageError
from .vllm_dsv4 import packed_groups

SWA_BLOCK = 32  # DeepseekV4Attention: DeepseekV4SWACache(block_size=32)
RING_ROWS = 8  # CompressorStateCache: max(8, next power of two >= speculative tokens + 2)
INDEX_FP8 = 132  # _indexer_k_cache_head_dim: 128 fp8 + one fp32 scale per 128
# (window record, entry record, page alignment, entry block) by backend and cache dtype
LAYOUTS = {
    ("hopper", "fp8_ds_mla"): (584, 584, 576, 64),
    ("blackwell", "nvfp4_ds_mla"): (528, 288, 512, 128),
    ("blackwell", "fp8_ds_mla"): (528, 528, 512, 128),
}
BACKEND_BY_CAPABILITY = {9: "hopper", 10: "blackwell"}  # nvidia/model.py: FlashMLA on SM 9.0, mega attention on 10.x


def _round(x: int, align: int) -> int:
    return -(-x // align) * align


def resolve_layout(capability: tuple[int, int] | None, kv_cache_dtype: str | None) -> tuple[str, str, list[str]]:
    """(backend, vLLM cache dtype, notes) for a GPU's compute capability (None: Hopper, said in a note)."""
    notes = []
    if capability is None:
        notes.append("DeepSeek-V4.1: no GPU given, so vLLM's Hopper layout (FlashMLA, fp8_ds_mla) is assumed")
        capability = (9, 0)
    backend = BACKEND_BY_CAPABILITY.get(capability[0])
    if backend is None or (backend == "hopper" and capability != (9, 0)):
        raise UsageError(f"--engine vllm: DeepSeek-V4.1's pool is modelled on Hopper (SM 9.0) and Blackwell "
                         f"(SM 10.x) GPUs, not SM {capability[0]}.{capability[1]} (FlashInfer's plain rows)",
                         "give --gpu h100, h200 or b200, or plan without --engine vllm")
    dtype = kv_cache_dtype or "auto"
    if dtype in ("auto", "fp8"):
        dtype = "fp8_ds_mla" if backend == "hopper" else "nvfp4_ds_mla"
    if (backend, dtype) not in LAYOUTS:
        raise UsageError(f"--kv-cache-dtype {kv_cache_dtype}: vLLM stores DeepSeek-V4.1's cache on this GPU as "
                         + ("fp8_ds_mla" if backend == "hopper" else "nvfp4_ds_mla or fp8_ds_mla"),
                         "use --kv-dtype auto or fp8")
    return backend, dtype, notes


def layer_pages(model: ModelSpec, layout: tuple[int, int, int, int]) -> list[tuple[tuple, int, int]]:
    """(bucket, page bytes, block stride alignment) of every spec one rank registers, in vLLM's order.
    bucket = (kind: sliding | mla | ring, block tokens, window or None)."""
    window_record, entry_record, align, block = layout
    stride = math.lcm(window_record, entry_record) if align == 512 else 1  # V4.1 records: on the window spec
    out = []
    for layer in model.layers:
        main = layer.caches[0]
        source = not layer.borrows and main.policy.compress_ratio is not None
        window = main.policy.compress_window if source else main.policy.window_tokens
        if source:
            ratio = main.policy.compress_ratio
            head = main.key_dim
            out.append((("mla", block, None), _round(block // ratio * entry_record, align), 1))
            out.append((("mla", block, None), _round(block // ratio * INDEX_FP8, align), 1))
        out.append((("sliding", SWA_BLOCK, window), _round(SWA_BLOCK * window_record, align), stride))
        if source and layer.state is not None:
            out.append((("ring", RING_ROWS, None), RING_ROWS * 2 * head * 4, 1))
    return out


def simulate_dsv41(model: ModelSpec, *, kv_memory_bytes: int, max_model_len: int, block_tokens: int | None,
                   tp: int, pp: int, mnbt: int, rules, kv_cache_dtype: str | None, max_num_seqs: int,
                   notes: list[str], capability: tuple[int, int] | None, prefix_caching: bool | None = None,
                   draft_layers: int = 0, num_speculative_tokens: int = 0):
    """vLLM 0.33's and 0.34's pool for DeepSeek-V4.1 on one rank (every spec is replicated under TP, and prefix caching
    does not change the specs it registers)."""
    from .vllm_pool import in_flight_tokens
    from .vllm_dsv4 import check_native, packed_pool

    from .vllm_dsv4 import require_read

    require_read("DeepSeek-V4.1", rules, "kvplan models DeepSeek-V4.1's pool as vLLM 0.33 and 0.34 plan it")
    if pp > 1:
        raise UsageError("vLLM's DeepSeek-V4.1 pool under pipeline parallelism is not modelled", "use --pp 1")
    if draft_layers or num_speculative_tokens:
        raise UsageError("vLLM's DeepSeek-V4.1 drafts are DSpark stages, whose pool kvplan has not read",
                         "plan without speculative decoding")
    check_native(model)
    stored = model.layers[0].caches[0].storage.name
    if kv_cache_dtype is None and stored not in ("bf16", "fp16", "fp32") and not stored.startswith("fp8"):
        raise UsageError(f"KV dtype {stored}: vLLM stores DeepSeek-V4.1's cache in its own packed records",
                         "use --kv-dtype auto or fp8")
    backend, dtype, layout_notes = resolve_layout(capability, kv_cache_dtype)
    layout = LAYOUTS[(backend, dtype)]
    if block_tokens not in (None, layout[3]):
        raise UsageError(f"--block-size {block_tokens}: vLLM runs DeepSeek-V4.1's entries in {layout[3]}-token "
                         f"blocks on this GPU", f"drop --block-size or give {layout[3]}")
    notes += layout_notes
    window_record, entry_record, align, block = layout
    notes.append(f"DeepSeek-V4.1: vLLM {rules.version} ({'FlashMLA' if backend == 'hopper' else 'mega attention'}, "
                 f"{dtype}) stores {window_record}-B window records, {entry_record}-B compressed entries, "
                 f"{INDEX_FP8}-B fp8 index keys and float32 compressor rings, pages rounded to {align} B")
    pages = layer_pages(model, layout)
    groups = packed_groups(pages)
    stride = math.lcm(*(s for _, _, s in pages))
    bytes_per_block = _round(max(sum(p) for _, p in groups), stride)
    in_flight = in_flight_tokens(rules, mnbt, pp)

    def per_request(length: int) -> int:
        total = 0
        for (kind, block_size, window), _ in groups:
            if kind == "ring":
                total += 1
            elif window is None:
                total += -(-length // block_size)
            else:
                total += -(-min(window - 1 + in_flight, length) // block_size) + 1
        return total

    def fits(length: int) -> bool:
        return bytes_per_block * per_request(length) <= kv_memory_bytes - bytes_per_block

    return packed_pool(groups, per_request(max_model_len), fits, kv_memory_bytes=kv_memory_bytes,
                       max_model_len=max_model_len, mnbt=mnbt, bytes_per_block=bytes_per_block, rules=rules,
                       kv_dtype=dtype, in_flight=in_flight, max_num_seqs=max_num_seqs, notes=notes)
