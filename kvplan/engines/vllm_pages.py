"""vLLM's KV page of one layer: the serving dtype, the bytes of one token under each --kv-cache-dtype, and PageSpec
(vLLM's KVCacheSpec of one layer: its page and its worst case per request).

Page = bytes of one block of one layer. Full or sliding attention: block x kv_heads x per-head bytes of the KV
dtype (auto: the serving dtype; fp8: 1 B; *_per_token_head: + one fp32 scale for K and for V; nvfp4: packed fp4
+ fp8 scale per 16). MLA: ONE tensor of block x (kv_lora_rank + rope) x dtype bytes; fp8_ds_mla (DeepSeek-V3.2)
656 B/token. Mamba / Gated DeltaNet: the whole state of one sequence (kvplan.engines.vllm_state_dtype sets its
dtypes). kvplan.engines.vllm_layer_specs builds the specs of a model; kvplan.engines.vllm (simulate) pools them.
"""

from __future__ import annotations

from dataclasses import replace

from .._record import record
from ..core.layers import TokenCache
from ..core.model import ModelSpec
from ..core.storage import BF16, FP16, Storage
from ..errors import UsageError
from ..units import cdiv
from .vllm_rules import VllmRules

FP8_DS_MLA_BYTES_PER_TOKEN = 656  # V3.2: 512 fp8 latent + 4 x 4 B fp32 scales + 64 bf16 rope
PER_TOKEN_HEAD_SCALE_BYTES = 4  # one fp32 scale per token, head and side (K, V)
MAMBA = "mamba"
SHORT_CONV = "short_conv"  # a MambaSpec every TP rank holds whole (Qwen4-Exp's PLE conv): never grouped with MAMBA
FULL_LIKE = ("full", "mla", "indexer")


def serving_storage(model: ModelSpec) -> Storage:
    """vLLM's dtype "auto": the checkpoint's, a float32 checkpoint downcast to bf16
    (vllm/config/model.py: _resolve_auto_dtype; bf16 is CUDA's first supported dtype)."""
    return FP16 if model.float_dtype in ("float16", "fp16", "half") else BF16



# ---------------------------------------------------------------- KV dtypes

def vllm_kv_dtype_for(cache: TokenCache, rules: VllmRules) -> tuple[str, str | None]:
    """(vLLM --kv-cache-dtype, note) that stores a cache as kvplan's storage says."""
    s = cache.storage
    if s.granularity == "none":
        return "auto", None
    if s.name.startswith("fp8"):
        return ("fp8_e5m2" if s.name == "fp8_e5m2" else "fp8"), None
    if s.granularity == "group" and s.bits in (8, 4):
        name = f"int{s.bits}_per_token_head"
        if name in rules.kv_cache_dtypes:
            return name, (f"--kv-dtype {s.name}: vLLM {rules.version} stores it as {name} "
                          "(one fp32 scale per token and head for K and for V), not kvplan's group layout")
    return "", (f"{s.name}{' (KIVI)' if s.granularity == 'kivi' else ''} is not a vLLM {rules.version} KV dtype: "
                "pages use kvplan's layout with scales")


def unknown_kv_dtype(kv_dtype: str, rules: VllmRules) -> UsageError:
    """The refusal of a --kv-cache-dtype the release does not offer (its CacheDType literal)."""
    return UsageError(f"--kv-cache-dtype {kv_dtype!r} is not a vLLM {rules.version} KV dtype",
                      f"vLLM {rules.version} offers {', '.join(rules.kv_cache_dtypes)}")


def attention_token_bytes(heads: int, head_k: int, head_v: int, kv_dtype: str, serving: Storage,
                          rules: VllmRules) -> int:
    """One token of one attention layer (all its KV heads on this rank) in vLLM's page."""
    if kv_dtype not in rules.kv_cache_dtypes and kv_dtype not in ("float32",):
        raise unknown_kv_dtype(kv_dtype, rules)
    if kv_dtype in ("auto",):
        return heads * (head_k + head_v) * serving.bits // 8
    if kv_dtype in ("bfloat16", "float16"):
        return heads * (head_k + head_v) * 2
    if kv_dtype.startswith("fp8") and kv_dtype != "fp8_per_token_head" and kv_dtype != "fp8_ds_mla":
        return heads * (head_k + head_v)  # per-tensor scales live outside the page
    if kv_dtype in ("int8_per_token_head", "fp8_per_token_head"):  # TritonAttentionBackend.customize_spec
        return heads * (head_k + head_v + 2 * PER_TOKEN_HEAD_SCALE_BYTES)
    if kv_dtype == "int4_per_token_head":
        return heads * (head_k // 2 + head_v // 2 + 2 * PER_TOKEN_HEAD_SCALE_BYTES)
    if kv_dtype == "nvfp4":  # FlashInferBackend.customize_spec: 2 slots of head/2 + head/16 bytes
        return 2 * heads * (head_k // 2 + head_k // 16)
    raise UsageError(f"--kv-cache-dtype {kv_dtype}: kvplan does not model this vLLM KV dtype's page for attention")


def latent_token_bytes(cache: TokenCache, kv_dtype: str, serving: Storage, sparse: bool, rules: VllmRules,
                       blackwell: bool = False) -> int:
    """One token of an MLA latent. sparse: DSA (V3.2-style indexer) layers; blackwell: an SM 10 GPU, where
    0.34's FlashInfer sparse MLA keeps --kv-cache-dtype fp8 as a plain fp8 latent (sparse_mla_sm100_plain_fp8)."""
    if sparse and blackwell and rules.sparse_mla_sm100_plain_fp8 and kv_dtype in ("fp8", "fp8_e4m3"):
        return cache.heads * cache.key_dim
    if sparse and kv_dtype in ("auto", "fp8", "fp8_e4m3", "fp8_ds_mla"):
        kv_dtype = {"auto": rules.v32_auto_kv_dtype}.get(kv_dtype, rules.v32_fp8_kv_dtype)
    if kv_dtype == "fp8_ds_mla":
        return FP8_DS_MLA_BYTES_PER_TOKEN
    width = cache.heads * cache.key_dim
    if kv_dtype == "auto":
        return width * serving.bits // 8
    if kv_dtype in ("bfloat16", "float16"):
        return width * 2
    if kv_dtype in ("fp8", "fp8_e4m3", "fp8_e5m2"):
        return width
    if not kv_dtype:  # kvplan's own storage, no vLLM dtype (vllm_kv_dtype_for: KIVI, int2, a grouped layout)
        raise UsageError(f"kvplan's {cache.storage.name} cache of an MLA latent has no vLLM {rules.version} KV "
                         "dtype (an MLA latent takes auto, fp8, fp8_ds_mla)", "plan the latent in bf16 or fp8")
    raise UsageError(f"--kv-cache-dtype {kv_dtype}: not an MLA KV dtype kvplan models (auto, fp8, fp8_ds_mla)")


# ---------------------------------------------------------------- specs

@record
class PageSpec:
    """One layer's cache as vLLM's KV cache manager sees it (its KVCacheSpec)."""

    kind: str  # full | sliding | chunked | mla | indexer | mamba | short_conv | state (DeepSeek-V4 compressor
    # state) | ring (CircularBufferSpec, one page per request: DeepSeek-V4.1's compressor, GLM-5-Next's indexer tail)
    block_tokens: int
    token_bytes: int = 0  # one token of this layer (token caches)
    state_bytes: int = 0  # mamba: conv + SSM state of one sequence
    window_tokens: int | None = None  # sliding: W; chunked: the chunk C
    padded_page_bytes: int | None = None
    state_pages: int = 1  # mamba: pages one request holds (align mode: 2 or 3; + the draft tokens, 0.15+)
    speculative_pages: int = 0  # mamba: of those, the draft tokens' (MambaSpec.num_speculative_blocks)
    # Inkling's conv state (vllm_inkling.py): (KV heads on this rank, packed head width). vLLM's SlidingWindowSpec
    # compares them, so two conv states of equal pages but other shapes are two specs (two buckets of groups)
    conv_shape: tuple[int, int] | None = None
    # sliding: SlidingWindowSpec.extra_retained_tokens, the tokens kept below the window (multi-module MTP:
    # num_speculative_tokens - 1, vllm_speculative.multi_module_retained)
    retained_tokens: int = 0

    @property
    def page_bytes(self) -> int:
        if self.padded_page_bytes is not None:
            return self.padded_page_bytes
        if self.kind in (MAMBA, SHORT_CONV):
            return self.state_bytes
        return self.block_tokens * self.token_bytes

    @property
    def label(self) -> str:
        kept = f" + {self.retained_tokens} retained" if self.retained_tokens else ""
        if self.kind == "sliding" and self.conv_shape is not None:
            return f"Inkling conv state, window {self.window_tokens}{kept}"
        if self.kind == "sliding":
            return f"sliding window {self.window_tokens}{kept}"
        if self.kind == "chunked":
            return f"chunked attention {self.window_tokens}"
        if self.kind == "state":
            return f"compressor state, window {self.window_tokens}"
        if self.kind == "ring":
            return f"ring, {self.block_tokens} rows (a page a request)"
        return {"full": "full attention", "mla": "latent (MLA)", "indexer": "indexer keys", MAMBA: "mamba state",
                SHORT_CONV: "short conv state (whole on every rank)"}[self.kind]

    def with_block(self, block_tokens: int) -> "PageSpec":
        """A larger block; an attention page padded before scales with it."""
        padded = self.padded_page_bytes
        if padded is not None and self.kind not in (MAMBA, SHORT_CONV):
            padded = padded * block_tokens // self.block_tokens
        return replace(self, block_tokens=block_tokens, padded_page_bytes=padded)

    def max_memory_bytes(self, max_len: int, in_flight_tokens: int) -> int:
        """Bytes one request of max_len tokens may hold in this layer, at worst.

        in_flight_tokens: tokens scheduled but not yet freed (until 0.25:
        max_num_batched_tokens; 0.26+: x2 under async scheduling)."""
        if self.kind in (MAMBA, SHORT_CONV):
            return self.page_bytes * self.state_pages
        if self.kind == "ring":  # CircularBufferSpec.max_memory_usage_bytes: one page for the request's lifetime
            return self.page_bytes
        if self.kind in ("sliding", "state"):  # state: DeepSeek-V4's compressor state, a window of tokens
            tokens = min(self.window_tokens - 1 + self.retained_tokens + in_flight_tokens, max_len)
            return (cdiv(tokens, self.block_tokens) + 1) * self.page_bytes
        if self.kind == "chunked":  # ChunkedLocalAttentionSpec: one chunk plus the tokens in flight
            return cdiv(min(self.window_tokens + in_flight_tokens, max_len), self.block_tokens) * self.page_bytes
        return cdiv(max_len, self.block_tokens) * self.page_bytes

