"""SGLang 0.5.23's DeepSeek-V4 pool (DeepseekV4ForCausalLM), as DSV4PoolConfigurator sizes it on CUDA.

Read from sglang 0.5.23: model_executor/pool_configurator.py DSV4PoolConfigurator (calculate_pool_sizes,
_get_bytes_per_full_token, _get_bytes_per_swa_token, _compressed_bytes_per_full_token,
_get_c128_state_fixed_bytes, _compute_dsv4_sizes, _to_config), mem_cache/deepseek_v4_memory_pool.py
(get_dsv4_indexer_bytes_per_token, get_compress_state_ring_size, collect_sources_by_ratio, select_dsv4_kv_layout),
kernels/ops/attention/dsv4/kv_layout.py KVLayout.V4.page_bytes, arg_groups/model_overrides/deepseek_v4.py
(attention_backend dsv4, page_size 256, swa_full_tokens_ratio 0.1), arg_groups/deepseek_v4_hook.py
(max_running_requests 256, dsv4_attn_backend auto = flashmla for V4), arg_groups/overrides.py
_deepseek_v4_kv_cache_dtype (auto = fp8_e4m3), environ.py (SGLANG_DSV4_KV_LAYOUT v4,
SGLANG_DSV4_COMPRESS_STATE_DTYPE float32, SGLANG_OPT_USE_ONLINE_COMPRESS off).

The defaults modelled: CUDA, flashmla backend (KVLayout.V4: 576 B data + 8 B scales a token, pages padded to 576 B),
no speculation, no HiSparse, no encoder SWA replay, no unified_kv (HIP only), attention DP 1, one PP stage, the
swa_full_tokens_ratio 0.1 the model override sets (so _swa_full_tokens_ratio_explicitly_set: ratio mode). Per
layer: ratio 0 (sliding only) holds the window; 4 (CSA) adds compressed latents per 4 tokens, fp8 indexer keys
and a float32 compress state per SWA page; 128 (HCA) compressed latents per 128 tokens and a float32 compress
state ring per request slot, a fixed bias taken before the token division.

DeepSeek-V4.1 (model_type deepseek_v41; configs/deepseek_v41.py normalize_deepseek_v41_config renames
DeepseekV41ForCausalLM to DeepseekV4ForCausalLM, so the same configurator sizes it): ratios 1 and 2 besides 0;
collect_sources_by_ratio counts only the KV sources (kv_source_layer_ids) of ratios 1 / 2 as owning compressed
storage (the other compressed layers read their source's cache and own a window only); their latents are
_get_paged_kv_bytes_per_token(ratio) (KVLayout.V4 on CUDA below SM100: select_dsv4_kv_layout with
SGLANG_DSV4_KV_LAYOUT v4, resolve_compressed_kv_layout keeps V4) and their indexer keys fp4 (low_ratio_index_bytes,
get_dsv4_indexer_bytes_per_token(use_fp4_indexer=True): d / 2 + d / 32); a ratio-2 source keeps a float32 pair
state ring of 2 rows per request slot (_get_c2_state_fixed_bytes); the low-ratio pools' reserved pages are taken by
calculate_pool_sizes' loop (_get_low_ratio_kv_padding_bytes, index pages of DSV41_INDEX_PAGE_SIZE = 64 below SM100:
deep_gemm_wrapper/configurer.py DEEPGEMM_PAGED_SPARSE_MQA_LOGITS needs Blackwell). The model override leaves
swa_full_tokens_ratio unset for deepseek_v41, so the SWA pool is the request cap plus radix headroom
(_resolve_swa_cap_tokens, compute_swa_request_cap, _resolve_swa_prefix_tails), a fixed bias, and the full token
carries no SWA share (_get_bytes_per_full_token). Read for: no speculation, the radix cache on (prefix tails 4 x
max_running_requests), the overlap schedule on (2 prefill chunks in flight), SGLANG_SWA_EVICTION_INTERVAL 128, not
PD decode.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.model import ModelSpec
from ..errors import PlanError, UsageError
from .sglang_rules import DSV4_ARCHS, GIB

DSV4_PAGE_SIZE = 256  # model_overrides/deepseek_v4.py: page_size 256 on CUDA
DSV4_MAX_RUNNING_REQUESTS = 256  # deepseek_v4_hook.apply_deepseek_v4_defaults
DSV4_SWA_FULL_TOKENS_RATIO = 0.1  # model_overrides/deepseek_v4.py
STATE_BYTES = 4  # SGLANG_DSV4_COMPRESS_STATE_DTYPE float32
# KVLayout.V4 (kv_layout.py): 448 fp8 nope + 64 bf16 rope = 576 B, 8 B of ue8m0 scales; page stride padded to 576
V4_DATA_BYTES, V4_SCALE_BYTES, V4_PAGE_ALIGN = 576, 8, 576
RING = {2: 2, 4: 8, 128: 128}  # get_compress_state_ring_size without speculation (no online c128); ratio 1: none
DSV41_INDEX_PAGE_SIZE = 64  # deepseek_v4_memory_pool.dsv41_index_page_size: 128 only with Blackwell's DeepGEMM
SWA_EVICTION_INTERVAL = 128  # environ.py SGLANG_SWA_EVICTION_INTERVAL


@dataclass(frozen=True)
class Dsv4Shape:
    ratios: tuple[int, ...]  # compress ratio of each layer (0: sliding window only)
    owners: tuple[int, ...]  # the ratio of each layer owning compressed storage (collect_sources_by_ratio)
    head_dim: int  # qk_nope_head_dim + qk_rope_head_dim
    rope_dim: int
    index_head_dim: int
    window: int
    v41: bool = False  # model_type deepseek_v41: swa_full_tokens_ratio left unset by the model override

    def layers(self, ratio: int) -> int:
        """DSV4PoolConfigurator.num_layers: the layers owning ratio's compressed storage."""
        return sum(1 for r in self.owners if r == ratio)


@dataclass(frozen=True)
class Dsv4Pool:
    """DSV4PoolConfigurator's figures on one GPU (bytes and tokens)."""

    bytes_per_swa_token: float
    bytes_per_full_token: float
    c128_state_fixed_bytes: int
    full_tokens: int
    swa_tokens: int
    c4_tokens: int
    c128_tokens: int
    c4_state_pool_size: int
    available_bytes: int
    swa_ratio: float
    c2_state_fixed_bytes: int = 0
    swa_cap_tokens: int | None = None  # cap mode: request cap + radix headroom (_resolve_swa_cap_tokens)
    prefix_tails: int = 0

    @property
    def swa_fixed_bytes(self) -> float:
        """_get_swa_fixed_bytes: the cap-mode SWA pool, priced at bytes_per_swa_token."""
        return 0 if self.swa_cap_tokens is None else self.swa_cap_tokens * self.bytes_per_swa_token

    def log_lines(self) -> list[str]:
        """calculate_pool_sizes' lines (_compute_dsv4_sizes, its own, then _to_config's)."""
        if self.swa_cap_tokens is None:
            sizing = (f"DSV4 SWA sizing: mode=ratio (explicit), swa_tokens={self.swa_tokens}, "
                      f"swa_full_tokens_ratio={self.swa_ratio}")
        else:
            sizing = (f"DSV4 SWA sizing: mode=cap, swa_tokens={self.swa_tokens}, "
                      f"request_cap+headroom={self.swa_cap_tokens}, prefix_tails={self.prefix_tails}")
        return [sizing,
                f"DSV4 memory calculation: unified=False, unified_fp8=False, dspark_draft_bf16=False, "
                f"bytes_per_full_token={self.bytes_per_full_token:.2f}, "
                f"available_bytes={self.available_bytes / GIB:.2f} GB, "
                f"c128_state_fixed={self.c128_state_fixed_bytes / GIB:.2f} GB, "
                f"c2_state_fixed={self.c2_state_fixed_bytes / GIB:.2f} GB, "
                f"swa_fixed={self.swa_fixed_bytes / GIB:.2f} GB, swa_ring_fixed=0.00 GB, c4_state_fixed=0.00 GB, "
                f"full_token={self.full_tokens}",
                f"DSV4 pool sizes: full={self.full_tokens}, swa={self.swa_tokens}, c4={self.c4_tokens}, "
                f"c128={self.c128_tokens}, c4_state={self.c4_state_pool_size}, c128_state=0"]


def is_dsv4(model: ModelSpec) -> bool:
    return (model.architecture or "") in DSV4_ARCHS


def shape(model: ModelSpec) -> Dsv4Shape:
    """The per-layer ratios and widths from kvplan's DeepSeek-V4 / V4.1 layers (kvplan.configs.compressed,
    kvplan.configs.shared_compressed: a V4.1 layer that is not a KV source borrows its source's entries)."""
    ratios, owners, heads, ropes, index, windows = [], [], set(), set(), set(), set()
    for layer in model.layers:
        latent = next((c for c in layer.caches if c.kind == "latent"), None)
        if latent is None:
            raise UsageError(f"SGLang: {model.name} has a layer without DeepSeek-V4's shared K/V cache",
                             "use --engine vllm or ideal for this model")
        p = latent.policy
        read = next((c.policy.compress_ratio for c in layer.borrows if c.kind == "latent"), None)
        ratios.append(p.compress_ratio or read or 0)
        if p.compress_ratio:
            owners.append(p.compress_ratio)
        heads.add(latent.key_dim)
        ropes.add(latent.rope_dim)
        windows.add(p.window_tokens if p.compress_ratio is None else p.compress_window)
        index |= {c.key_dim for c in layer.caches + layer.borrows if c.kind == "indexer"}
    if not set(ratios) <= {0, 1, 2, 4, 128} or len(heads) != 1 or len(ropes) != 1 or len(windows) != 1 \
            or len(index) > 1:
        raise UsageError(f"SGLang: {model.name}'s DeepSeek-V4 layers are not the shapes kvplan read in "
                         "DSV4PoolConfigurator (ratios 0 / 1 / 2 / 4 / 128, one width)", "use --engine vllm or ideal")
    return Dsv4Shape(tuple(ratios), tuple(owners), heads.pop(), ropes.pop(), index.pop() if index else 128,
                     windows.pop(), v41=model.config_model_type == "deepseek_v41")


def _paged_bytes_per_token(page_size: int) -> float:
    """_get_paged_kv_bytes_per_token: KVLayout.V4.page_bytes(page) / page."""
    raw = page_size * (V4_DATA_BYTES + V4_SCALE_BYTES)
    return -(-raw // V4_PAGE_ALIGN) * V4_PAGE_ALIGN / page_size


def _swa_cap_tokens(s: Dsv4Shape, requests: int, chunked_prefill_size: int | None,
                    page_size: int) -> tuple[int | None, int]:
    """(_resolve_swa_cap_tokens, _resolve_swa_prefix_tails): None where ratio sizing applies (V4: the model
    override sets the ratio). compute_swa_request_cap without speculation, overlap schedule on, not PD decode:
    per request window + eviction interval + page (trailing) + page (decode), times the requests, plus 2 prefill
    chunks and a page; the headroom is 4 x requests radix prefix tails of window + page each."""
    if not s.v41:
        return None, 0
    if chunked_prefill_size is None:
        raise UsageError("SGLang 0.5.23 sizes DeepSeek-V4.1's SWA pool from chunked_prefill_size "
                         "(compute_swa_request_cap), which kvplan takes from the card", "give --gpu")
    if chunked_prefill_size <= 0:
        raise UsageError("SGLang: DeepSeek-V4.1 with chunked prefill off (ratio sizing at its default 0.1) is not "
                         "modelled", "leave chunked prefill at its default")
    tails = 4 * requests
    cap = (s.window + SWA_EVICTION_INTERVAL + page_size + page_size) * requests + 2 * chunked_prefill_size + page_size
    return -(-(cap + tails * (s.window + page_size)) // page_size) * page_size, tails


def _low_ratio_padding_bytes(s: Dsv4Shape, full: int, page_size: int, index_bytes: int) -> float:
    """_get_low_ratio_kv_padding_bytes: per ratio-1 / 2 source, a reserved page of latents (page x
    V(page / ratio)) and the indexer's slots beyond full // ratio (_num_dsv4_physical_kv_pages of
    (full + page) // ratio at DSV41_INDEX_PAGE_SIZE, one page reserved on top)."""
    total = 0.0
    for ratio in (1, 2):
        if s.layers(ratio):
            pages = -(-((full + page_size) // ratio + DSV41_INDEX_PAGE_SIZE) // DSV41_INDEX_PAGE_SIZE)
            index_padding = (pages * DSV41_INDEX_PAGE_SIZE - full // ratio) * index_bytes
            total += (page_size * _paged_bytes_per_token(page_size // ratio) + index_padding) * s.layers(ratio)
    return total


def _state_rows(requests: int, ring: int, pad: int) -> int:
    """CompressStatePool's rows: (slots x ring) + ring + 1, padded to pad; slots = max_running_requests + 1."""
    return -(-((requests + 1) * ring + ring + 1) // pad) * pad


def sizes(model: ModelSpec, available_bytes: int, max_running_requests: int | None = None,
          max_total_tokens: int | None = None, page_size: int = DSV4_PAGE_SIZE,
          chunked_prefill_size: int | None = None) -> Dsv4Pool:
    """DSV4PoolConfigurator.calculate_pool_sizes (then _apply_token_constraints' cap and
    calculate_pool_sizes_from_max_tokens) on one GPU. chunked_prefill_size: the card's default (V4.1's cap mode)."""
    s = shape(model)
    if s.head_dim - s.rope_dim + 2 * s.rope_dim != V4_DATA_BYTES:
        raise UsageError(f"SGLang: {model.name}'s latent ({s.head_dim - s.rope_dim} nope + {s.rope_dim} rope) is not "
                         "the 448 + 64 KVLayout.V4 stores", "use --engine vllm or ideal for this model")
    index_bytes = s.index_head_dim + s.index_head_dim // 128 * 4  # get_dsv4_indexer_bytes_per_token (fp8)
    low_index_bytes = s.index_head_dim // 2 + s.index_head_dim // 32  # the same, use_fp4_indexer=True
    c4, c128, c2, layers = s.layers(4), s.layers(128), s.layers(2), len(s.ratios)
    requests = DSV4_MAX_RUNNING_REQUESTS if max_running_requests is None else max(1, max_running_requests)
    # _get_bytes_per_swa_token: every layer's window slot, plus the c4 state rows (ring 8 a SWA page), kv and score
    # of 2 x head (overlapping) for the latent and the indexer
    c4_state = 2 * 2 * s.head_dim * STATE_BYTES + 2 * 2 * s.index_head_dim * STATE_BYTES
    per_swa = _paged_bytes_per_token(page_size) * layers + (RING[4] if c4 else 0) / page_size * c4_state * c4
    cap, tails = _swa_cap_tokens(s, requests, chunked_prefill_size, page_size)
    ratio = DSV4_SWA_FULL_TOKENS_RATIO
    # _compressed_bytes_per_full_token, in stage_owner_layers' order (4, 128, 1, 2): c4 pages of page / 4 slots
    # plus fp8 indexer keys / 4; c128 pages of page / 128; ratios 1 / 2 pages of page / ratio plus fp4 keys, / ratio
    terms = [n * b for n, b in ((c4, _paged_bytes_per_token(page_size // 4) / 4 + index_bytes / 4),
                                (c128, _paged_bytes_per_token(page_size // 128) / 128),
                                (s.layers(1), _paged_bytes_per_token(page_size) + low_index_bytes),
                                (c2, (_paged_bytes_per_token(page_size // 2) + low_index_bytes) / 2)) if n]
    per_full = (0 if cap is not None else ratio) * per_swa + sum(terms)  # _get_bytes_per_full_token
    fixed = 0
    if c128:  # _get_c128_state_fixed_bytes: rows padded to 128, 2 x head float32
        fixed = _state_rows(requests, RING[128], 128) * 2 * s.head_dim * STATE_BYTES * c128
    c2_fixed = _state_rows(requests, RING[2], 2) * 2 * s.head_dim * STATE_BYTES * c2  # _get_c2_state_fixed_bytes
    swa_fixed = 0 if cap is None else cap * per_swa  # _get_swa_fixed_bytes
    for_tokens = max(available_bytes - (fixed + c2_fixed + swa_fixed), 0)
    full = int(for_tokens / per_full) // page_size * page_size
    while full > 0 and full * per_full + _low_ratio_padding_bytes(s, full, page_size, low_index_bytes) > for_tokens:
        full -= page_size  # calculate_pool_sizes: the reserved low-ratio pages
    if cap is not None and full <= 0:  # calculate_pool_sizes' RuntimeError
        raise PlanError(f"SGLang 0.5.23 would not start {model.name}: its DeepSeek-V4.1 SWA pool cap ({cap} tokens, "
                        f"{swa_fixed / GIB:.2f} GiB) leaves no room for the full KV pool",
                        "raise --mem-util (SGLang's --mem-fraction-static), add GPUs, or lower --max-num-seqs")
    if max_total_tokens is not None:
        full = min(full, max_total_tokens) // page_size * page_size
    if cap is not None:
        swa = cap  # _get_swa_tokens: the cap, already page-aligned
    else:
        swa = int(full * ratio) // page_size * page_size
        if full <= 0 or s.window + page_size >= swa:  # validate_swa_pool_size
            raise PlanError(f"SGLang 0.5.23 would not start {model.name}: its DeepSeek-V4 SWA pool ({swa} tokens "
                            f"of {full} full) cannot hold one request (sliding_window {s.window} + page_size "
                            f"{page_size}; {fixed / GIB:.2f} GiB of c128 compress state taken first)",
                            "raise --mem-util (SGLang's --mem-fraction-static), add GPUs, or lower --max-num-seqs")
    return Dsv4Pool(per_swa, per_full, fixed, full, swa, full // 4, full // 128,
                    swa // page_size * RING[4] if c4 else 0, available_bytes, ratio, c2_fixed, cap, tails)


__all__ = ["DSV4_ARCHS", "DSV4_PAGE_SIZE", "Dsv4Pool", "Dsv4Shape", "is_dsv4", "shape", "sizes"]
