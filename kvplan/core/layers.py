"""The per-layer cache description: what one layer stores per token and per sequence.

A model is a tuple of LayerSpec. Each layer holds zero or more token caches
(growing with the sequence: attention K/V, an MLA latent, an indexer key cache)
and at most one fixed recurrent state (Mamba, Gated DeltaNet), or it reuses the
caches of an earlier layer and stores nothing itself. A layer may also read
caches an earlier layer stores beside its own (`borrows`: DeepSeek-V4.1's
layers keep their own window and read their KV source's compressed entries).

Byte sizes are derived, never stored: every number kvplan prints comes from
`TokenCache.stored_bytes`, `TokenCache.read_bytes` and `RecurrentState.bytes`.
"""

from __future__ import annotations

import math
from dataclasses import field
from fractions import Fraction
from functools import cached_property

from .._record import record  # a frozen dataclass that compiles nothing at import
from .storage import BF16, Storage


@record
class TokenPolicy:
    """Which tokens a cache keeps and which a decode step reads.

    window_tokens: keep only the newest W tokens (sliding window).
    chunk_tokens: chunked local attention (Llama 4): keep only the tokens of the
        current chunk of C, i.e. (n - 1) % C + 1 of n tokens; never more than C.
    budget_fraction / budget_tokens: eviction (H2O, SnapKV) keeps this many of
        the tokens it would otherwise keep, the newest `recent_tokens` included.
    compress_ratio / compress_topk / compress_window: compressed sparse attention
        stores floor(n / m) compressed entries plus a local window of raw tokens
        (the unfinished last group lives in the window, which must hold at least
        m - 1 tokens) and reads k compressed entries plus the window (all of them
        when k is None).
    compress_selector_keys: the selector scores this cache's own compressed keys,
        so a step also reads all of them (the csa technique); False when a
        separate indexer cache selects (DeepSeek-V4 CSA) or nothing is selected
        (DeepSeek-V4 HCA reads every compressed entry).
    read_page_tokens / read_topk_pages: Quest reads only the top-k pages (the
        last, unfinished page always among them; read_open_page_apart: besides them).
    read_page_meta: Quest keeps each page's min and max key to score it; False
        when a separate index-key cache scores the pages (MiniMax-M3).
    """

    window_tokens: int | None = None
    chunk_tokens: int | None = None
    budget_fraction: Fraction | None = None
    budget_tokens: int | None = None
    recent_tokens: int = 0
    compress_ratio: int | None = None
    compress_topk: int | None = None
    compress_window: int = 0
    compress_selector_keys: bool = True
    read_page_tokens: int | None = None
    read_topk_pages: int | None = None
    read_page_meta: bool = True
    read_open_page_apart: bool = False  # the unfinished last page is read besides the top-k full ones (Qwen4-Exp)

    def retained_tokens(self, tokens: int) -> int:
        """Raw token entries kept for a sequence of `tokens` (before compression)."""
        kept = tokens if self.window_tokens is None else min(tokens, self.window_tokens)
        if self.chunk_tokens is not None and tokens > 0:
            kept = min(kept, (tokens - 1) % self.chunk_tokens + 1)
        if self.budget_fraction is not None:
            kept = min(kept, max(math.ceil(self.budget_fraction * tokens), self.recent_tokens))
        if self.budget_tokens is not None:
            kept = min(kept, self.budget_tokens)
        return kept

    def stored_entries(self, tokens: int) -> int:
        kept = self.retained_tokens(tokens)
        if self.compress_ratio is None:
            return kept
        return kept // self.compress_ratio + min(kept, self.compress_window)

    def read_entries(self, tokens: int) -> int:
        kept = self.retained_tokens(tokens)
        if self.compress_ratio is not None:
            compressed = kept // self.compress_ratio
            return min(self.compress_topk or compressed, compressed) + min(kept, self.compress_window)
        if self.read_topk_pages is not None:
            if self.read_open_page_apart:  # the top-k of the full pages, then the open page's tokens
                full, open_tokens = divmod(kept, self.read_page_tokens)
                return min(full, self.read_topk_pages) * self.read_page_tokens + open_tokens
            pages = math.ceil(kept / self.read_page_tokens)
            if pages <= self.read_topk_pages:
                return kept
            # top-k pages, the last (possibly partial) page always among them
            last = kept - (pages - 1) * self.read_page_tokens
            return (self.read_topk_pages - 1) * self.read_page_tokens + last
        return kept

    @property
    def per_sequence_selection(self) -> bool:
        """Eviction or compression picks each sequence's entries itself: they are
        compacted (no window-aligned blocks) and never shared as a prefix."""
        return self.compress_ratio is not None or self.budget_fraction is not None or self.budget_tokens is not None

    @property
    def cap_tokens(self) -> int | None:
        """Largest raw token count any sequence keeps (None = grows without bound)."""
        caps = [c for c in (self.window_tokens, self.chunk_tokens, self.budget_tokens) if c is not None]
        return min(caps) if caps else None


@record
class TokenCache:
    """A cache that grows with every token: attention K/V, an MLA latent, indexer keys.

    kind "attention": K of `heads x key_dim` and V of `heads x value_dim` per token.
    kind "latent": ONE tensor of `key_dim` (= kv_lora_rank + rope_dim) per token;
        value_dim is 0 because the first kv_lora_rank columns serve as V.
    kind "indexer": ONE key tensor of `key_dim` per token (DeepSeek-V3.2 indexer).
    """

    kind: str
    heads: int
    key_dim: int
    value_dim: int = 0
    rope_dim: int = 0  # latent: the rope part of key_dim
    storage: Storage = BF16
    policy: TokenPolicy = field(default_factory=TokenPolicy)
    # Quest keeps per-page min and max of K in this format.
    quest_meta_storage: Storage = BF16
    label: str = ""  # how tables name it, when its family's name says more than its kind (DeepSeek-V4's CSA)

    @property
    def elements_per_token(self) -> int:
        return self.heads * (self.key_dim + self.value_dim)

    def _tensors(self):
        if self.kind == "attention":
            return (("key", self.heads, self.key_dim), ("value", self.heads, self.value_dim))
        return (("latent" if self.kind == "latent" else "key", self.heads, self.key_dim),)

    @cached_property
    def _linear_entry_bytes(self) -> int | None:
        """Bytes per entry when bytes grow linearly with entries (all but KIVI)."""
        if self.storage.granularity == "kivi":
            return None
        return sum(self.storage.tensor_bytes(1, h, d, role) for role, h, d in self._tensors())

    def entry_bytes(self, entries: int) -> int:
        linear = self._linear_entry_bytes
        if linear is not None:
            return entries * linear if entries > 0 else 0
        return sum(self.storage.tensor_bytes(entries, h, d, role) for role, h, d in self._tensors())

    @cached_property
    def _bytes_per_token(self) -> Fraction | int:
        linear = self._linear_entry_bytes
        if linear is not None:
            return linear
        return sum(
            (self.storage.marginal_bytes_per_token(h, d, role) for role, h, d in self._tensors()),
            Fraction(0),
        )

    def bytes_per_token(self) -> Fraction | int:
        """Marginal bytes of one more stored entry (payload plus per-token scales)."""
        return self._bytes_per_token

    def growth_per_token(self) -> Fraction | int:
        """Marginal bytes of one more token of context below any cap: a compressed
        cache adds one entry per compress_ratio tokens."""
        ratio = self.policy.compress_ratio
        return self._bytes_per_token if ratio is None else Fraction(self._bytes_per_token) / ratio

    def quest_meta_bytes(self, tokens: int) -> int:
        if self.policy.read_page_tokens is None or not self.policy.read_page_meta:
            return 0
        pages = math.ceil(self.policy.retained_tokens(tokens) / self.policy.read_page_tokens)
        return pages * 2 * self.heads * self.quest_meta_storage.payload_bytes(self.key_dim)

    def stored_bytes(self, tokens: int) -> int:
        """Exact bytes one sequence of `tokens` tokens keeps in this cache."""
        meta = self.quest_meta_bytes(tokens) if self.policy.read_page_tokens is not None else 0
        return self.entry_bytes(self.policy.stored_entries(tokens)) + meta

    def paged_entries(self, tokens: int, block_tokens: int) -> int:
        """Entry slots a paged allocator holds: whole blocks. A window's tokens
        [n - W, n) span the blocks between them; blocks wholly outside are freed."""
        policy = self.policy
        entries = policy.stored_entries(tokens)
        if entries == 0:
            return 0
        raw = policy.retained_tokens(tokens)
        if not policy.per_sequence_selection and raw < tokens:  # window- or chunk-capped: the blocks [n - kept, n) touches
            first, last = (tokens - raw) // block_tokens, (tokens - 1) // block_tokens
            return (last - first + 1) * block_tokens
        return -(-entries // block_tokens) * block_tokens

    def paged_bytes(self, tokens: int, block_tokens: int) -> int:
        return self.entry_bytes(self.paged_entries(tokens, block_tokens)) + self.quest_meta_bytes(tokens)

    def read_bytes(self, tokens: int) -> int:
        """Bytes one decode step reads from this cache: Quest also reads every page's
        metadata, the CSA selector every compressed key."""
        policy = self.policy
        extra = self.quest_meta_bytes(tokens) if policy.read_page_tokens is not None else 0
        if policy.compress_ratio is not None and policy.compress_selector_keys:
            compressed = policy.retained_tokens(tokens) // policy.compress_ratio
            extra += self.storage.tensor_bytes(compressed, self.heads, self.key_dim, "key")
        return self.entry_bytes(policy.read_entries(tokens)) + extra

    def fixed_bytes(self) -> int:
        return sum(self.storage.fixed_bytes(h) for _, h, _ in self._tensors())


@record
class RecurrentState:
    """A fixed per-sequence state (Mamba conv + SSM state, Gated DeltaNet state).

    Its size does not depend on the context; the SSM part may use its own dtype
    (Nemotron-H keeps it in float32).
    """

    kind: str  # "mamba", "mamba2", "gated_deltanet", "linear", "compressor" (DeepSeek-V4, replicated under TP)
    conv_elements: int
    ssm_elements: int
    conv_storage: Storage = BF16
    ssm_storage: Storage = BF16
    # Mamba-2 shape, when known: lets TP sharding pad the groups as engines do
    # (conv_elements = (conv_kernel - 1) x (d_inner + 2 x n_groups x d_state)).
    n_groups: int | None = None
    d_state: int | None = None
    d_inner: int | None = None
    heads: int | None = None
    head_dim: int | None = None
    conv_kernel: int | None = None
    conv_channels: int | None = None  # channels of the conv state (rows = conv_kernel - 1), when known
    # conv rows kept beyond conv_kernel - 1 (vLLM's Mamba-2 under speculative decoding: num_speculative_tokens)
    conv_extra_rows: int = 0
    # every TP rank holds the whole state (vLLM MambaSpec.tp_replicated; DeepSeek-V4's compressor state)
    tp_replicated: bool = False
    # further fixed states the same layer keeps, each with its own shape, dtype and sharding (Qwen4-Exp: the
    # PLE layer's short conv beside a Gated DeltaNet state); counted in bytes
    also: tuple["RecurrentState", ...] = ()

    @property
    def bytes(self) -> int:
        return (self.conv_storage.payload_bytes(self.conv_elements) + self.ssm_storage.payload_bytes(self.ssm_elements)
                + sum(s.bytes for s in self.also))


@record
class LayerSpec:
    """What one decoder layer caches."""

    caches: tuple[TokenCache, ...] = ()
    state: RecurrentState | None = None
    shares_cache_of: int | None = None  # reads layer N's caches, stores nothing
    # Caches layer `borrows_from` stores that this layer's decode step also reads, as this layer reads
    # them (DeepSeek-V4.1: the top-k of its KV source's compressed entries, an index source's scan of
    # the source's index keys). Counted in reads, never in storage; a technique that changes storage
    # changes them with the owner's.
    borrows: tuple[TokenCache, ...] = ()
    borrows_from: int | None = None

    @property
    def owns_cache(self) -> bool:
        return self.shares_cache_of is None and bool(self.caches)

    @cached_property
    def kind(self) -> str:
        """A short human label: 'full attention', 'sliding window 4096', ..."""
        if self.shares_cache_of is not None:
            return "shared (reuses another layer's cache)"
        parts = []
        for cache in self.caches:
            if cache.label:
                parts.append(cache.label)
            elif cache.kind == "latent":
                parts.append("latent (MLA)")
            elif cache.kind == "indexer":
                parts.append("indexer keys")
            elif cache.policy.window_tokens is not None:
                parts.append(f"sliding window {cache.policy.window_tokens}")
            elif cache.policy.chunk_tokens is not None:
                parts.append(f"chunked attention {cache.policy.chunk_tokens}")
            else:
                parts.append("full attention")
        if self.state is not None:
            parts.append(" + ".join(f"{s.kind} state" for s in (self.state,) + self.state.also))
        if self.borrows:
            parts.append("reads " + " + ".join(c.label or c.kind for c in self.borrows) + " of its source")
        return " + ".join(parts) if parts else "no cache"
