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
RING = {4: 8, 128: 128}  # get_compress_state_ring_size without speculation (no online c128)


@dataclass(frozen=True)
class Dsv4Shape:
    ratios: tuple[int, ...]  # compress ratio of each layer (0: sliding window only)
    head_dim: int  # qk_nope_head_dim + qk_rope_head_dim
    rope_dim: int
    index_head_dim: int
    window: int

    def layers(self, ratio: int) -> int:
        return sum(1 for r in self.ratios if r == ratio)


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

    def log_lines(self) -> list[str]:
        """calculate_pool_sizes' lines (_compute_dsv4_sizes, its own, then _to_config's)."""
        return [f"DSV4 SWA sizing: mode=ratio (explicit), swa_tokens={self.swa_tokens}, "
                f"swa_full_tokens_ratio={self.swa_ratio}",
                f"DSV4 memory calculation: unified=False, unified_fp8=False, dspark_draft_bf16=False, "
                f"bytes_per_full_token={self.bytes_per_full_token:.2f}, "
                f"available_bytes={self.available_bytes / GIB:.2f} GB, "
                f"c128_state_fixed={self.c128_state_fixed_bytes / GIB:.2f} GB, c2_state_fixed=0.00 GB, "
                f"swa_fixed=0.00 GB, swa_ring_fixed=0.00 GB, c4_state_fixed=0.00 GB, full_token={self.full_tokens}",
                f"DSV4 pool sizes: full={self.full_tokens}, swa={self.swa_tokens}, c4={self.c4_tokens}, "
                f"c128={self.c128_tokens}, c4_state={self.c4_state_pool_size}, c128_state=0"]


def is_dsv4(model: ModelSpec) -> bool:
    return (model.architecture or "") in DSV4_ARCHS


def shape(model: ModelSpec) -> Dsv4Shape:
    """The per-layer ratios and widths from kvplan's DeepSeek-V4 layers (kvplan.configs.compressed)."""
    if model.config_model_type == "deepseek_v41" or any(layer.borrows for layer in model.layers):
        # deepseek_v41 (ratios 1 / 2, kv_source_layer_ids, cap-mode SWA sizing) is not read
        raise UsageError(f"SGLang: {model.name} is a DeepSeek-V4.1 layout (layers reading other layers' compressed "
                         "caches), whose DSV4PoolConfigurator sizing kvplan has not read",
                         "use --engine vllm or ideal for this model")
    ratios, heads, ropes, index, windows = [], set(), set(), set(), set()
    for layer in model.layers:
        latent = next((c for c in layer.caches if c.kind == "latent"), None)
        if latent is None:
            raise UsageError(f"SGLang: {model.name} has a layer without DeepSeek-V4's shared K/V cache",
                             "use --engine vllm or ideal for this model")
        p = latent.policy
        ratios.append(p.compress_ratio or 0)
        heads.add(latent.key_dim)
        ropes.add(latent.rope_dim)
        windows.add(p.window_tokens if p.compress_ratio is None else p.compress_window)
        index |= {c.key_dim for c in layer.caches if c.kind == "indexer"}
    if not set(ratios) <= {0, 4, 128} or len(heads) != 1 or len(ropes) != 1 or len(windows) != 1 or len(index) > 1:
        raise UsageError(f"SGLang: {model.name}'s DeepSeek-V4 layers are not the shapes kvplan read in "
                         "DSV4PoolConfigurator (ratios 0 / 4 / 128, one width)", "use --engine vllm or ideal")
    return Dsv4Shape(tuple(ratios), heads.pop(), ropes.pop(), index.pop() if index else 128, windows.pop())


def _paged_bytes_per_token(page_size: int) -> float:
    """_get_paged_kv_bytes_per_token: KVLayout.V4.page_bytes(page) / page."""
    raw = page_size * (V4_DATA_BYTES + V4_SCALE_BYTES)
    return -(-raw // V4_PAGE_ALIGN) * V4_PAGE_ALIGN / page_size


def sizes(model: ModelSpec, available_bytes: int, max_running_requests: int | None = None,
          max_total_tokens: int | None = None, page_size: int = DSV4_PAGE_SIZE) -> Dsv4Pool:
    """DSV4PoolConfigurator.calculate_pool_sizes (then _apply_token_constraints' cap and
    calculate_pool_sizes_from_max_tokens) on one GPU."""
    s = shape(model)
    if s.head_dim - s.rope_dim + 2 * s.rope_dim != V4_DATA_BYTES:
        raise UsageError(f"SGLang: {model.name}'s latent ({s.head_dim - s.rope_dim} nope + {s.rope_dim} rope) is not "
                         "the 448 + 64 KVLayout.V4 stores", "use --engine vllm or ideal for this model")
    index_bytes = s.index_head_dim + s.index_head_dim // 128 * 4  # get_dsv4_indexer_bytes_per_token (fp8)
    c4, c128, layers = s.layers(4), s.layers(128), len(s.ratios)
    # _get_bytes_per_swa_token: every layer's window slot, plus the c4 state rows (ring 8 a SWA page), kv and score
    # of 2 x head (overlapping) for the latent and the indexer
    c4_state = 2 * 2 * s.head_dim * STATE_BYTES + 2 * 2 * s.index_head_dim * STATE_BYTES
    per_swa = _paged_bytes_per_token(page_size) * layers + (RING[4] if c4 else 0) / page_size * c4_state * c4
    # _compressed_bytes_per_full_token: c4 pages of page / 4 slots plus indexer keys / 4; c128 pages of page / 128
    per_full = (DSV4_SWA_FULL_TOKENS_RATIO * per_swa
                + c4 * (_paged_bytes_per_token(page_size // 4) / 4 + index_bytes / 4)
                + c128 * _paged_bytes_per_token(page_size // 128) / 128)
    requests = DSV4_MAX_RUNNING_REQUESTS if max_running_requests is None else max(1, max_running_requests)
    fixed = 0
    if c128:  # _get_c128_state_fixed_bytes: (slots x ring + ring + 1) rows padded to 128, 2 x head float32
        rows = (requests + 1) * RING[128] + RING[128] + 1
        rows = -(-rows // 128) * 128
        fixed = rows * 2 * s.head_dim * STATE_BYTES * c128
    full = int(max(available_bytes - fixed, 0) / per_full) // page_size * page_size
    if max_total_tokens is not None:
        full = min(full, max_total_tokens) // page_size * page_size
    swa = int(full * DSV4_SWA_FULL_TOKENS_RATIO) // page_size * page_size
    if full <= 0 or s.window + page_size >= swa:  # validate_swa_pool_size
        raise PlanError(f"SGLang 0.5.23 would not start {model.name}: its DeepSeek-V4 SWA pool ({swa} tokens of "
                        f"{full} full) cannot hold one request (sliding_window {s.window} + page_size {page_size}; "
                        f"{fixed / GIB:.2f} GiB of c128 compress state taken first)",
                        "raise --mem-util (SGLang's --mem-fraction-static), add GPUs, or lower --max-num-seqs")
    return Dsv4Pool(per_swa, per_full, fixed, full, swa, full // 4, full // 128,
                    swa // page_size * RING[4] if c4 else 0, available_bytes, DSV4_SWA_FULL_TOKENS_RATIO)


__all__ = ["DSV4_ARCHS", "DSV4_PAGE_SIZE", "Dsv4Pool", "Dsv4Shape", "is_dsv4", "shape", "sizes"]
