"""vLLM's GLM-5-Next pool, 0.33 and 0.34 on Hopper (the packed block slab; 0.34.0 registers and
sizes the same specs: vllm_dsv4.PACKED_POOLS_READ says what was read there).

Read from vLLM 0.33.0's models/glm5next (its KDA layers, the DSA layer's indexer
k_cache and tail_cache, the sparse MLA attention), platforms/interface.py
(_preferred_block_size_for_backends, _align_hybrid_block_size),
v1/kv_cache_interface.py and v1/core/kv_cache_planning.py, and checked against
that planner run on CPU (benchmarks/vllm_oracle_glm5next.py).

What one rank registers, in layer order: a KDA layer its state (MambaSpec: conv over
q, k and v sharded by TP, float32 heads x head_dim^2, 'align' mode with FlashKDA's
prefill checkpoint: 3 pages a request); a DSA layer its pooled index keys
(MLAAttentionSpec, 132 B per pool of index_kpool tokens), its tail ring
(CircularBufferSpec: 2 x index_head_dim bf16 rows, kpool rows, one page a request) and
its latent (MLAAttentionSpec, kv_lora_rank + rope in the KV dtype). The block: the
indexer backend's kernel blocks (kpool x 32, kpool x 64) and FlashInfer's sparse MLA
(multiples of 64) give 128, then the hybrid alignment makes one latent page hold the
KDA state: 128 x cdiv(state, 128 x latent bytes a token); the KDA page is padded to
it. The layout is block-outermost (the tail backend's), so the groups are packed
(vllm_dsv4.packed_groups: KDA and ring buckets are state buckets split to fit the
widest group), a block is the widest group rounded to the stride alignment (the
indexer's 256-token kernel page of keys, the latent row), and a request needs 3
blocks per KDA group, cdiv(max_len, block) for the latents and keys, 1 for the rings.
"""

from __future__ import annotations

import math

from ..core.model import ModelSpec
from ..errors import UsageError
from ..units import cdiv
from .vllm_dsv4 import packed_groups

MLA_BLOCK_MULTIPLE = 64  # FLASHINFER_MLA_SPARSE_SM90: MultipleOf(64)
MLA_HYBRID_ALIGN = 128  # _align_hybrid_block_size: MLA blocks aligned to at least 128
CHECKPOINT_PAGES = 1  # FlashKDA's prefill checkpoint (the default on Hopper for a bounded gate)


def simulate_glm5next(model: ModelSpec, *, kv_memory_bytes: int, max_model_len: int, block_tokens: int | None,
                      tp: int, pp: int, mnbt: int, rules, kv_cache_dtype: str | None, max_num_seqs: int,
                      notes: list[str], capability: tuple[int, int] | None, prefix_caching: bool | None = None,
                      draft_layers: int = 0, num_speculative_tokens: int = 0):
    """vLLM 0.33's and 0.34's pool for GLM-5-Next on one Hopper rank."""
    from .vllm_pool import in_flight_tokens
    from .vllm_dsv4 import packed_pool, require_hopper_read

    require_hopper_read("GLM-5-Next", rules, capability, notes,
                        "kvplan models GLM-5-Next's pool as vLLM 0.33 and 0.34 plan it",
                        "vLLM's Hopper backends (FlashInfer sparse MLA, FlashKDA) are assumed")
    if pp > 1 or draft_layers or num_speculative_tokens or block_tokens is not None or prefix_caching is False:
        raise UsageError("vLLM's GLM-5-Next pool is modelled at its defaults: no --pp, speculative decoding, "
                         "--block-size or --no-enable-prefix-caching", "drop those options")
    dtype = kv_cache_dtype or "auto"
    stored = next(c.storage for layer in model.layers for c in layer.caches if c.kind == "latent")
    if dtype == "auto" and stored.is_quantized:
        dtype = "fp8" if stored.name.startswith("fp8") else dtype
    if dtype not in ("auto", "bfloat16", "fp8", "fp8_e4m3"):
        raise UsageError(f"--kv-cache-dtype {dtype}: kvplan models GLM-5-Next's latent in bf16 or fp8",
                         "use --kv-dtype auto or fp8")
    latent_bytes = 1 if dtype.startswith("fp8") else 2
    sparse = [layer for layer in model.layers if layer.caches]
    kda = [layer.state for layer in model.layers if not layer.caches and layer.state is not None]
    if not sparse or not kda:
        raise UsageError(f"vLLM's GLM-5-Next pool needs KDA and DSA layers; {model.name} lacks one",
                         "plan without --engine vllm")
    latent = next(c for c in sparse[0].caches if c.kind == "latent")
    keys = next(c for c in sparse[0].caches if c.kind == "indexer")
    kpool = keys.policy.compress_ratio
    state = kda[0]
    if state.heads % tp:
        raise UsageError(f"--tp {tp} does not divide GLM-5-Next's {state.heads} KDA heads", "use a divisor")
    state_bytes = (state.conv_storage.payload_bytes(state.conv_elements // tp)
                   + state.ssm_storage.payload_bytes(state.ssm_elements // tp))
    token_bytes = latent.key_dim * latent_bytes
    index_sizes = (kpool * 32, kpool * 64)  # the indexer backend's kernel blocks
    block = min(math.lcm(s, MLA_BLOCK_MULTIPLE) for s in index_sizes)
    align = max(min(index_sizes), block, MLA_HYBRID_ALIGN)
    backend_align = math.lcm(min(index_sizes), MLA_BLOCK_MULTIPLE)
    block = max(block, backend_align * cdiv(align * cdiv(state_bytes, align * token_bytes), backend_align))
    latent_page = block * token_bytes
    key_row = keys.storage.tensor_bytes(1, 1, keys.key_dim, "key")
    ring_page = sparse[0].state.bytes
    pages = []
    for layer in model.layers:
        if layer.caches:
            pages += [(("mla", block, None), block // kpool * key_row, 1), (("ring", kpool, None), ring_page, 1),
                      (("mla", block, None), latent_page, 1)]
        elif layer.state is not None:
            pages.append((("mamba", block, None), latent_page, 1))  # the state page padded to the latent page
    groups = packed_groups(pages)
    kernel = math.gcd(max(index_sizes), block)  # the indexer's kernel page, where it is not the whole block
    stride = math.lcm(1 if kernel == block else kernel // kpool * key_row, token_bytes)
    bytes_per_block = cdiv(max(sum(p) for _, p in groups), stride) * stride
    in_flight = in_flight_tokens(rules, mnbt, pp)

    def per_request(length: int) -> int:
        return sum({"mamba": 2 + CHECKPOINT_PAGES, "ring": 1}.get(kind) or cdiv(length, size)
                   for (kind, size, _), _ in groups)

    def fits(length: int) -> bool:
        return bytes_per_block * per_request(length) <= kv_memory_bytes - bytes_per_block

    notes.append(f"GLM-5-Next: vLLM {rules.version} on Hopper: block {block:,} tokens (a latent page holds the KDA "
                 f"state, {state_bytes:,} B, padded to {latent_page:,}), {key_row}-B pooled index keys, "
                 f"{ring_page:,}-B tail rings, 'align' mode with FlashKDA's prefill checkpoint: 3 state pages a "
                 "request")
    return packed_pool(groups, per_request(max_model_len), fits, kv_memory_bytes=kv_memory_bytes,
                       max_model_len=max_model_len, mnbt=mnbt, bytes_per_block=bytes_per_block, rules=rules,
                       kv_dtype="fp8_e4m3" if latent_bytes == 1 else "bfloat16", in_flight=in_flight,
                       max_num_seqs=max_num_seqs, notes=notes, state_pages=2 + CHECKPOINT_PAGES)
