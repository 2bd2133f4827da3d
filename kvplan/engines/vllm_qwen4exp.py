"""vLLM's Qwen4-Exp pool, 0.33 and 0.34 on Hopper (the packed block slab).

Read from vLLM 0.33.0's models/qwen4_exp (nvidia/model.py, nvidia/qsa.py, nvidia/indexer_qsa.py,
common/qsa_cache.py, nvidia/ple_layer.py), model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py,
platforms/interface.py (_align_hybrid_block_size), v1/kv_cache_interface.py and
v1/core/kv_cache_planning.py, and checked against that planner run on CPU
(benchmarks/vllm_oracle_qwen4exp.py). In 0.34.0 the indexer caches moved to common/qsa_indexer.py
(QSAKeyStateCache renamed QSARawKeyCache, its spec, MRoPE columns and checks unchanged; cache_rope_positions
is still model_config.uses_mrope, which models/config.py strips for the text architecture and
--language-model-only as in 0.33), the QSA owner got its own backend (Qwen4ExpQSABackend, MultipleOf(16), the
same FullAttentionSpec) and the GDN and PLE specs are 0.33's; what changes the pool is the default block, 64.

What one rank registers, in layer order: a PLE layer its short conv (MambaSpec, whole on every rank:
tp_replicated, so never grouped with the Gated DeltaNet states); a linear layer its Gated DeltaNet
state (conv and float32 recurrent state, heads split by TP); a QSA layer its ring of the open group's
raw index keys (CircularBufferSpec, one page a request), its compressed index keys (MLAAttentionSpec,
one bf16 row per indexer_compress_ratio tokens) and its K/V (FullAttentionSpec, max(1, kv heads / TP)
heads). The block: both attention backends take the default block D (16 to 0.33, 64 from 0.34), or the user's
--block-size B in its place (D is then never looked at), and the hybrid alignment makes one K/V page hold the
largest state: A x cdiv(state, A x K/V bytes a token) with A = lcm(D, 64) in 'align' mode (FlashInfer's Gated
DeltaNet prefill checkpoints every 64 tokens on Hopper), else D (max of the first backend's smallest kernel block
and D), rounded up to 16 and never below D; every state page is padded to it. So 0.34 differs from 0.33 only
without prefix caching (steps of 64, not 16). The indexer caches are built with D (or B) and refuse an
indexer_compress_ratio that does not divide it.
The layout is block-outermost (the ring backend's), so the groups are packed (vllm_dsv4.packed_groups),
a block is the widest group (no stride alignment), and a request needs 2 + 1 (the prefill checkpoint)
blocks per state group in 'align' mode (1 without prefix caching), cdiv(max_len, block) for the keys
and K/V, 1 for the rings.
Under PP each stage builds only its decoder layers (models/qwen4_exp/nvidia/model.py Qwen4ExpModel: make_layers,
get_pp_indices), with their PLE conv and QSA indexer caches, and sizes its block from the whole model's groups
projected onto those layers (_stage_block_bytes); the block size itself comes from the config, the same on every
stage.
"""

from __future__ import annotations

import math

from ..core.model import ModelSpec
from ..errors import UsageError
from ..capacity.shard import stage_bounds
from ..units import cdiv
from .vllm_dsv4 import packed_group_members, packed_groups

BACKEND_BLOCK = 16  # QSA's kernels take MultipleOf(16) (0.33 and 0.34), the indexer caches' backend MultipleOf(1)
GDN_CHECKPOINT_ALIGNMENT = 64  # FLASHINFER_GDN_CHECKPOINT_ALIGNMENT (v1/attention/backends/gdn_attn.py)
CHECKPOINT_PAGES = 1  # num_prefill_checkpoint_blocks in 'align' mode


def _rank_state_bytes(state, tp: int) -> int:
    """One rank's Gated DeltaNet state: conv channels and value heads split by TP (mamba_utils)."""
    if state.tp_replicated or tp == 1:
        return state.conv_storage.payload_bytes(state.conv_elements) + state.ssm_storage.payload_bytes(
            state.ssm_elements)
    if None in (state.conv_channels, state.heads, state.n_groups) or state.conv_channels % tp or state.heads % tp \
            or state.n_groups % tp:
        raise UsageError(f"--tp {tp} does not divide Qwen4-Exp's Gated DeltaNet heads", "use --tp 1, 2, 4 or 8")
    return (state.conv_storage.payload_bytes(state.conv_elements // tp)
            + state.ssm_storage.payload_bytes(state.ssm_elements // tp))


def _stage_block_bytes(pages: list[tuple], num_layers: int, pp: int) -> list[int]:
    """Bytes one block costs each pipeline stage. vLLM groups the whole model's layers (get_global_kv_cache_groups
    on every stage's specs merged), keeps on each stage the layers it built (make_layers: the decoder layers
    get_pp_indices gives it, with their PLE conv and QSA indexer caches; _project_kv_cache_groups_to_worker), and
    sizes its block as the widest group's pages there (_get_kv_cache_bytes_per_block, block-outermost); every stage
    then takes the fewest blocks (get_kv_cache_configs, v1/core/kv_cache_planning.py, 0.33 and 0.34)."""
    out = []
    for start, end in stage_bounds(num_layers, pp):
        widths = [sum(pages[k][1] for k in members if start <= pages[k][2] < end)
                  for _, members in packed_group_members(pages)]
        if max(widths):
            out.append(max(widths))
    return out


def simulate_qwen4exp(model: ModelSpec, *, kv_memory_bytes: int, max_model_len: int, block_tokens: int | None,
                      tp: int, pp: int, mnbt: int, rules, kv_cache_dtype: str | None, max_num_seqs: int,
                      notes: list[str], capability: tuple[int, int] | None, prefix_caching: bool | None = None,
                      draft_layers: int = 0, num_speculative_tokens: int = 0):
    """vLLM 0.33's or 0.34's pool for Qwen4-Exp on one Hopper rank."""
    from .vllm_pool import in_flight_tokens
    from .vllm_dsv4 import packed_pool, require_hopper_read

    require_hopper_read("Qwen4-Exp", rules, capability, notes, "no Qwen4-Exp model (models/qwen4_exp is new in 0.33)",
                        "Hopper is assumed (FlashInfer's Gated DeltaNet prefill, which checkpoints every 64 tokens)")
    if draft_layers or num_speculative_tokens:
        raise UsageError("vLLM's Qwen4-Exp pool is modelled without speculative decoding (MTP adds a QSA layer and "
                         "grows the ring and the conv states)", "drop the speculative options")
    qsa = next((layer for layer in model.layers if layer.caches), None)
    gdn = next((layer.state for layer in model.layers if not layer.caches and layer.state is not None), None)
    if qsa is None or gdn is None:
        raise UsageError(f"vLLM's Qwen4-Exp pool needs QSA and Gated DeltaNet layers; {model.name} lacks one",
                         "plan without --engine vllm")
    main = next(c for c in qsa.caches if c.kind == "attention")
    dtype = kv_cache_dtype or "auto"
    if dtype == "auto" and main.storage.is_quantized:  # --kv-dtype fp8 stored the K/V in fp8
        dtype = "fp8" if main.storage.name.startswith("fp8") else main.storage.name
    if dtype not in ("auto", "bfloat16", "fp8", "fp8_e4m3"):
        raise UsageError(f"--kv-cache-dtype {dtype}: vLLM's QSA accepts auto, bfloat16, fp8 and fp8_e4m3",
                         "use --kv-dtype auto or fp8")
    kv_bytes = 1 if dtype.startswith("fp8") else 2
    align = prefix_caching is not False  # vLLM's default for hybrids: prefix caching on, 'align' mode
    keys = next((c for c in qsa.caches if c.kind == "indexer"), None)
    if keys is None:
        raise UsageError("vLLM's pool for Qwen4-Exp without QSA (no indexer_* fields) is not modelled",
                         "plan without --engine vllm")
    ratio = keys.policy.compress_ratio
    # the block the layers are built with: --block-size (CacheConfig.user_specified_block_size, which skips phase 1
    # of Platform.update_block_size_for_backend) or the default D. That runs after the model is built
    # (executor: load_model, then update_block_size_for_backend), so the indexer caches see this block and
    # refuse one their groups do not divide (_QSAStateCache.__init__ in 0.33, _QSAIndexerCache.__init__ in 0.34)
    built = rules.default_block_tokens if block_tokens is None else block_tokens
    if built % ratio:
        what = (f"--block-size {built}" if block_tokens is not None
                else f"the default block of {built} tokens")
        raise UsageError(f"vLLM {rules.version}: Qwen4-Exp's indexer_compress_ratio {ratio} does not divide "
                         f"{what} (vLLM refuses to build the indexer caches)",
                         f"give a block size (-t page:N, vLLM's --block-size) that is a multiple of {ratio}"
                         if block_tokens is not None
                         else "plan without --engine vllm")
    heads = main.heads // tp if main.heads >= tp else 1  # replicated when TP exceeds the KV heads
    if (main.heads % tp if main.heads >= tp else tp % main.heads):
        raise UsageError(f"--tp {tp} and Qwen4-Exp's {main.heads} KV heads: vLLM needs one to divide the other",
                         "use a TP that divides them or that they divide")
    token_bytes = 2 * heads * main.key_dim * kv_bytes
    states = [(False, _rank_state_bytes(gdn, tp))] + [(True, s.bytes) for layer in model.layers if layer.state
                                                      for s in layer.state.also]
    largest = max(size for _, size in states)
    # every backend takes the block B it was built with (D, 16 to 0.33 and 64 from 0.34, or --block-size);
    # _align_hybrid_block_size (platforms/interface.py, 0.33 and 0.34) steps by max(the first backend's smallest
    # kernel block: 1, the indexer caches', B) = B, lcm'ed with the checkpoint grid in 'align' mode, rounds to
    # every backend's smallest kernel block (lcm(1, 16) = BACKEND_BLOCK) and keeps B where that is larger
    unit = math.lcm(built, GDN_CHECKPOINT_ALIGNMENT) if align else built
    block = unit * cdiv(largest, unit * token_bytes)
    block = max(built, cdiv(block, BACKEND_BLOCK) * BACKEND_BLOCK)
    if block % ratio:
        raise UsageError(f"vLLM: Qwen4-Exp's block of {block} tokens is not a multiple of the indexer's "
                         f"{ratio}-token groups", "plan without --engine vllm")
    state_block = block if align else max_model_len
    page = block * token_bytes  # every state page is padded to one K/V page
    key_page = block // ratio * keys.storage.tensor_bytes(1, 1, keys.key_dim, "key")
    ring_page = qsa.state.bytes - sum(s.bytes for s in qsa.state.also)
    pages = []  # (bucket, page bytes, the decoder layer that registers it)
    for i, layer in enumerate(model.layers):
        for extra in (layer.state.also if layer.state is not None else ()):
            pages.append((("short_conv", state_block, None), page, i))
        if layer.caches:
            pages += [(("ring", ratio, None), ring_page, i), (("full", block, None), key_page, i),
                      (("full", block, None), page, i)]
        elif layer.state is not None:
            pages.append((("mamba", state_block, None), page, i))
    groups = packed_groups(pages)
    stage_bytes = _stage_block_bytes(pages, model.num_layers, pp)
    bytes_per_block = max(stage_bytes)  # the stage with the widest block has the fewest blocks
    state_pages = 2 + CHECKPOINT_PAGES if align else 1
    in_flight = in_flight_tokens(rules, mnbt, pp)

    def per_request(length: int) -> int:
        return sum({"mamba": state_pages, "short_conv": state_pages, "ring": 1}.get(kind) or cdiv(length, size)
                   for (kind, size, _), _ in groups)

    def fits(length: int) -> bool:  # every stage's check; a request holds blocks in every group on every stage
        return all(b * per_request(length) <= kv_memory_bytes - b for b in stage_bytes)

    notes.append(f"Qwen4-Exp: vLLM {rules.version} on Hopper: "
                 + (f"--block-size {block_tokens} -> " if block_tokens is not None else "")
                 + f"block {block:,} tokens (a K/V page, {page:,} B, holds "
                 f"the largest state, {largest:,} B), {ring_page:,}-B rings, "
                 + (f"'align' mode with FlashInfer's prefill checkpoint: {state_pages} state pages a request"
                    if align else "no prefix caching: 1 state page a request"))
    if pp > 1:
        sizes = [end - start for start, end in stage_bounds(model.num_layers, pp)]
        notes.append(f"Qwen4-Exp: --pp {pp}: stages of {sizes} layers (get_pp_indices, without "
                     f"VLLM_PP_LAYER_PARTITION), blocks of {', '.join(f'{b:,}' for b in stage_bytes)} B; every stage "
                     "gets the blocks of the widest")
    if ring_page != ratio * keys.key_dim * 2:  # the ring's rows carry the MRoPE positions (cache_rope_positions)
        notes.append("Qwen4-Exp: its rings hold the int64 MRoPE positions beside the keys, as vLLM serves the VL "
                     "architecture; `vllm serve --language-model-only` drops them (kvplan cannot see that flag)")
    return packed_pool(groups, per_request(max_model_len), fits, kv_memory_bytes=kv_memory_bytes,
                       max_model_len=max_model_len, mnbt=mnbt, bytes_per_block=bytes_per_block, rules=rules,
                       kv_dtype="fp8_e4m3" if kv_bytes == 1 else "bfloat16", in_flight=in_flight,
                       max_num_seqs=max_num_seqs, notes=notes, state_pages=state_pages)
