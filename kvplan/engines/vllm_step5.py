"""vLLM's Step-5 pool, 0.33 and 0.34 on Hopper (the packed block slab).

Read from vLLM 0.33.0's models/step5/nvidia (the sliding and DSA attention backends, the CSA
summary cache and tail ring), platforms/interface.py (block size: every backend takes vLLM's
default, 16, and Step-5 is not hybrid), v1/kv_cache_interface.py and v1/core/kv_cache_planning.py,
and checked against that planner run on CPU (benchmarks/vllm_oracle_step5.py). vLLM 0.34.0
registers the same specs (its ring and summary cache moved to models/step5/common) and every
backend takes its new default, 64: the block is 64 there (checked the same way on 0.34.0).

What one rank registers, in layer order: a sliding layer its K/V (SlidingWindowSpec, max(1, KV
heads / TP) heads); a DSA layer its K/V (FullAttentionSpec, stride-aligned to 8-token pages), its
region summaries (FullAttentionSpec of one 256-B FP8 row per 8 tokens, whole on every rank) and
its tail ring (CircularBufferSpec given one whole K/V page, which must hold the 7 open-region rows
of 1 KiB: else vLLM asks for a larger --block-size). The DSA backend's BLNHC layout packs the
groups (vllm_dsv4.packed_groups): the sliding layers in groups as many as the DSA layers, the DSA
K/V with their summaries, the rings; a block is the widest group rounded up to lcm(an 8-token K/V
page, 1 KiB), and a request needs, per sliding group, the window plus the tokens in flight, per DSA
group cdiv(max_len, block), and one ring page.
"""

from __future__ import annotations

import math

from ..core.model import ModelSpec
from ..errors import UsageError
from ..units import cdiv
from .vllm_dsv4 import packed_groups

BLOCK = 16  # the four backends' kernel block (FlashAttention's multiples of 16); 0.33's default block too
RING_ROW_BYTES = 1024  # one bf16 [index_k | index_z] row of 2 x proxy_dim (csa_tail_ring.py)


def simulate_step5(model: ModelSpec, *, kv_memory_bytes: int, max_model_len: int, block_tokens: int | None,
                   tp: int, pp: int, mnbt: int, rules, kv_cache_dtype: str | None, max_num_seqs: int,
                   notes: list[str], capability: tuple[int, int] | None, prefix_caching: bool | None = None,
                   draft_layers: int = 0, num_speculative_tokens: int = 0):
    """vLLM 0.33's and 0.34's pool for Step-5 on one Hopper rank."""
    from .vllm_pool import in_flight_tokens
    from .vllm_dsv4 import packed_pool, require_hopper_read

    require_hopper_read("Step-5", rules, capability, notes, "no Step-5 model (models/step5 is new in 0.33)",
                        "Hopper is assumed (its DSA backend runs on SM 9.0 and 10.x)")
    if pp > 1 or draft_layers or num_speculative_tokens:
        raise UsageError("vLLM's Step-5 pool is modelled without --pp or speculative decoding (MTP adds sliding "
                         "draft layers and ring rows)", "drop those options")
    dsa = next((layer for layer in model.layers if layer.state is not None), None)
    sliding = next((layer for layer in model.layers if layer.state is None and layer.caches), None)
    if dsa is None or sliding is None:
        raise UsageError(f"vLLM's Step-5 pool needs sliding and DSA layers; {model.name} lacks one",
                         "plan without --engine vllm")
    main, summaries = dsa.caches
    dtype = kv_cache_dtype or "auto"
    if dtype == "auto" and main.storage.is_quantized:  # --kv-dtype fp8 stored the K/V in fp8
        dtype = "fp8" if main.storage.name.startswith("fp8") else main.storage.name
    if dtype not in ("auto", "bfloat16", "fp8", "fp8_e4m3"):
        raise UsageError(f"--kv-cache-dtype {dtype}: vLLM's Step-5 DSA backend accepts auto, bfloat16, fp8 and "
                         "fp8_e4m3", "use --kv-dtype auto or fp8")
    kv_bytes = 1 if dtype.startswith("fp8") else 2
    # the block every backend takes: vLLM's default (16 to 0.33, 64 from 0.34: config/cache.py DEFAULT_BLOCK_SIZE),
    # which platforms/interface.py _preferred_block_size_for_backends keeps when all four backends accept it
    block = block_tokens or rules.default_block_tokens
    if block % BLOCK:
        raise UsageError(f"--block-size {block}: vLLM's Step-5 backends take multiples of {BLOCK}",
                         "give a multiple of 16")
    heads = max(1, main.heads // tp)
    token_bytes = 2 * heads * main.key_dim * kv_bytes
    page = block * token_bytes
    rows = summaries.policy.compress_ratio - 1
    if page % RING_ROW_BYTES or page // RING_ROW_BYTES < rows:
        raise UsageError(f"vLLM refuses this Step-5 plan: its CSA tail ring needs {rows} rows of {RING_ROW_BYTES} "
                         f"bytes in one {page:,}-byte KV page", "increase --block-size (32 at TP 4-8 with fp8)")
    summary_page = block // summaries.policy.compress_ratio * summaries.storage.tensor_bytes(1, 1, summaries.key_dim,
                                                                                             "key")
    window = sliding.caches[0].policy.window_tokens
    pages = []
    for layer in model.layers:
        if layer.state is not None:
            pages += [(("full", block, None), page, 1), (("full", block, None), summary_page, 1),
                      (("ring", block, None), page, 1)]
        elif layer.caches:
            pages.append((("sliding", block, window), page, 1))
    groups = packed_groups(pages)
    stride = math.lcm(8 * token_bytes, RING_ROW_BYTES)
    bytes_per_block = cdiv(max(sum(p) for _, p in groups), stride) * stride
    in_flight = in_flight_tokens(rules, mnbt, pp)

    def per_request(length: int) -> int:
        def blocks(kind: str, size: int, window: int | None) -> int:
            if kind == "ring":
                return 1
            if kind == "sliding":  # SlidingWindowSpec: the window and the tokens in flight, plus one block
                return cdiv(min(window - 1 + in_flight, length), size) + 1
            return cdiv(length, size)
        return sum(blocks(*bucket) for bucket, _ in groups)

    def fits(length: int) -> bool:
        return bytes_per_block * per_request(length) <= kv_memory_bytes - bytes_per_block

    notes.append(f"Step-5: vLLM {rules.version} on Hopper: block {block} tokens, {len(groups)} packed groups, "
                 f"{bytes_per_block:,} B a block; each DSA layer's tail ring takes a whole K/V page ({page:,} B) a "
                 f"request for its {rows} rows of {RING_ROW_BYTES} B")
    return packed_pool(groups, per_request(max_model_len), fits, kv_memory_bytes=kv_memory_bytes,
                       max_model_len=max_model_len, mnbt=mnbt, bytes_per_block=bytes_per_block, rules=rules,
                       kv_dtype="fp8_e4m3" if kv_bytes == 1 else "bfloat16", in_flight=in_flight,
                       max_num_seqs=max_num_seqs, notes=notes)
