"""Paged KV block allocator with reference counts and a hashed prefix cache.

Pure Python (no torch). It only hands out block ids; the caller writes the KV
(``paged_write``) at ``slot = block_id * block_size + offset``.

Model
-----
* Every block has a reference count: the number of sequence block tables that
  hold it. ``fork`` shares all of a parent's blocks with a child (+1 each).
* A *full* block gets a prefix key: a chained hash over all tokens of the
  sequence up to and including that block (``key_i = H(key_{i-1}, tokens_i)``),
  so equal keys mean equal token prefixes and therefore equal KV content.
* ``allocate`` reuses blocks whose key matches, in order from the first block,
  stopping at the first miss (``prefix_queries`` counts full blocks looked up,
  ``prefix_hits`` those reused). The partial last block is never shared this way.
* When a block's count drops to zero it goes to the free list, or, if it has a
  key and the prefix cache is on, to an LRU of *cached* blocks that can still be
  hit. A new block is taken from the free list first, then by evicting the least
  recently freed cached block (its key is forgotten).
* ``append`` to a sequence whose partial last block is shared (after ``fork``)
  copies it first (copy on write): the allocator takes a new block and records
  ``(src, dst)``; the caller must copy that block's KV (see ``pop_copies``).
* ``release_outside_window`` drops blocks wholly before the last
  ``window_tokens`` tokens; their table entries become -1 (never read by a
  windowed decode).

``stats()``: ``used`` blocks with count > 0, ``free`` = num_blocks - used
(includes cached ones), ``shared`` blocks with count > 1, ``cached`` blocks with
count 0 that keep a prefix key, plus ``prefix_hits`` and ``prefix_queries``.

Errors: ``OutOfBlocksError(needed, free)`` is raised before any state changes.
"""
from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = ["BlockAllocator", "OutOfBlocksError"]


class OutOfBlocksError(RuntimeError):
    """Not enough free blocks; the allocator state is unchanged."""

    def __init__(self, needed: int, free: int):
        self.needed = int(needed)
        self.free = int(free)
        super().__init__(
            f"out of KV cache blocks: needed {self.needed} new blocks, only {self.free} free"
        )


def _chain_key(prev: bytes, tokens: list[int]) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(prev)
    h.update(array("q", tokens).tobytes())
    return h.digest()


@dataclass
class _Seq:
    blocks: list[int] = field(default_factory=list)  # -1 = released (outside window)
    tokens: list[int] = field(default_factory=list)
    keys: list[bytes] = field(default_factory=list)  # prefix key of each full block


class BlockAllocator:
    def __init__(self, num_blocks: int, block_size: int, enable_prefix_cache: bool = True):
        if int(num_blocks) < 0:
            raise ValueError(f"num_blocks must be >= 0, got {num_blocks}")
        if int(block_size) <= 0:
            raise ValueError(f"block_size must be > 0, got {block_size}")
        self.num_blocks = int(num_blocks)
        self.block_size = int(block_size)
        self.enable_prefix_cache = bool(enable_prefix_cache)
        self._ref = [0] * self.num_blocks
        self._key: list[bytes | None] = [None] * self.num_blocks
        self._free: list[int] = list(range(self.num_blocks - 1, -1, -1))  # pop() -> 0 first
        self._cached: OrderedDict[int, None] = OrderedDict()  # block -> None, LRU first
        self._by_key: dict[bytes, int] = {}
        self._seqs: dict[object, _Seq] = {}
        self._copies: list[tuple[int, int]] = []
        self._hits = 0
        self._queries = 0

    # ------------------------------------------------------------------ queries
    def num_free_blocks(self) -> int:
        return len(self._free) + len(self._cached)

    def block_table(self, seq_id) -> list[int]:
        return list(self._get(seq_id).blocks)

    def token_ids(self, seq_id) -> list[int]:
        return list(self._get(seq_id).tokens)

    def seq_len(self, seq_id) -> int:
        return len(self._get(seq_id).tokens)

    def refcount(self, block_id: int) -> int:
        return self._ref[block_id]

    def has_seq(self, seq_id) -> bool:
        return seq_id in self._seqs

    def seq_ids(self) -> list:
        return list(self._seqs)

    def stats(self) -> dict:
        used = sum(1 for r in self._ref if r > 0)
        return {
            "used": used,
            "free": self.num_blocks - used,
            "shared": sum(1 for r in self._ref if r > 1),
            "cached": len(self._cached),
            "prefix_hits": self._hits,
            "prefix_queries": self._queries,
        }

    def pop_copies(self) -> list[tuple[int, int]]:
        """Copy-on-write block copies ``(src, dst)`` the caller still has to do."""
        out, self._copies = self._copies, []
        return out

    # ---------------------------------------------------------------- mutations
    def allocate(self, seq_id, token_ids: list[int]) -> list[int]:
        if seq_id in self._seqs:
            raise ValueError(f"seq_id {seq_id!r} is already allocated")
        tokens = [int(t) for t in token_ids]
        bs = self.block_size
        n_full = len(tokens) // bs
        n_total = -(-len(tokens) // bs)
        keys: list[bytes] = []
        prev = b""
        for i in range(n_full):
            prev = _chain_key(prev, tokens[i * bs:(i + 1) * bs])
            keys.append(prev)
        hits: list[int] = []
        if self.enable_prefix_cache:
            for k in keys:
                b = self._by_key.get(k)
                if b is None:
                    break
                hits.append(b)
        needed = n_total - len(hits)
        available = self.num_free_blocks() - sum(1 for b in hits if self._ref[b] == 0)
        if needed > available:
            raise OutOfBlocksError(needed, available)
        if self.enable_prefix_cache:
            self._queries += n_full
            self._hits += len(hits)
        blocks = []
        for b in hits:
            if self._ref[b] == 0:
                del self._cached[b]
            self._ref[b] += 1
            blocks.append(b)
        for i in range(len(hits), n_total):
            b = self._take()
            if i < n_full:
                self._set_key(b, keys[i])
            blocks.append(b)
        self._seqs[seq_id] = _Seq(blocks=blocks, tokens=tokens, keys=keys)
        return list(blocks)

    def append(self, seq_id, token_ids: list[int]) -> list[int]:
        """Grow a sequence by ``token_ids``; returns its new block table."""
        s = self._get(seq_id)
        new = [int(t) for t in token_ids]
        if not new:
            return list(s.blocks)
        bs = self.block_size
        old_len = len(s.tokens)
        new_len = old_len + len(new)
        n_total = -(-new_len // bs)
        grow = n_total - len(s.blocks)
        partial = old_len % bs != 0
        cow = partial and s.blocks[-1] >= 0 and self._ref[s.blocks[-1]] > 1
        needed = grow + (1 if cow else 0)
        if needed > self.num_free_blocks():
            raise OutOfBlocksError(needed, self.num_free_blocks())
        if cow:
            src = s.blocks[-1]
            dst = self._take()
            self._ref[src] -= 1  # still > 0: another table holds it
            s.blocks[-1] = dst
            self._copies.append((src, dst))
        for _ in range(grow):
            s.blocks.append(self._take())
        s.tokens.extend(new)
        for i in range(len(s.keys), new_len // bs):
            prev = s.keys[-1] if s.keys else b""
            s.keys.append(_chain_key(prev, s.tokens[i * bs:(i + 1) * bs]))
            b = s.blocks[i]
            if b >= 0 and self._key[b] is None:
                self._set_key(b, s.keys[i])
        return list(s.blocks)

    def fork(self, parent, child) -> list[int]:
        """``child`` shares every block of ``parent`` (reference counted)."""
        p = self._get(parent)
        if child in self._seqs:
            raise ValueError(f"child seq_id {child!r} is already allocated")
        for b in p.blocks:
            if b >= 0:
                self._ref[b] += 1
        self._seqs[child] = _Seq(blocks=list(p.blocks), tokens=list(p.tokens), keys=list(p.keys))
        return list(p.blocks)

    def free(self, seq_id) -> None:
        s = self._seqs.pop(seq_id, None)
        if s is None:
            raise KeyError(f"unknown seq_id {seq_id!r}")
        # tail first, so the LRU evicts the end of a prefix before its start
        for b in reversed(s.blocks):
            if b >= 0:
                self._release(b)

    def release_outside_window(self, seq_id, window_tokens: int) -> int:
        """Free blocks whose tokens all lie before the last ``window_tokens``; returns how many."""
        if int(window_tokens) < 0:
            raise ValueError(f"window_tokens must be >= 0, got {window_tokens}")
        s = self._get(seq_id)
        first_kept_token = max(0, len(s.tokens) - int(window_tokens))
        n_outside = first_kept_token // self.block_size
        freed = 0
        for i in range(min(n_outside, len(s.blocks))):
            b = s.blocks[i]
            if b >= 0:
                s.blocks[i] = -1
                self._release(b)
                freed += 1
        return freed

    # ---------------------------------------------------------------- internals
    def _get(self, seq_id) -> _Seq:
        s = self._seqs.get(seq_id)
        if s is None:
            raise KeyError(f"unknown seq_id {seq_id!r}")
        return s

    def _take(self) -> int:
        if self._free:
            b = self._free.pop()
        else:
            b, _ = self._cached.popitem(last=False)  # least recently freed
            del self._by_key[self._key[b]]
            self._key[b] = None
        assert self._ref[b] == 0
        self._ref[b] = 1
        return b

    def _set_key(self, b: int, key: bytes) -> None:
        if not self.enable_prefix_cache or key in self._by_key:
            return
        self._key[b] = key
        self._by_key[key] = b

    def _release(self, b: int) -> None:
        self._ref[b] -= 1
        if self._ref[b] < 0:
            raise AssertionError(f"block {b} released more often than held")
        if self._ref[b] == 0:
            if self._key[b] is not None:
                self._cached[b] = None
            else:
                self._free.append(b)

    def check_invariants(self) -> None:
        """Raise AssertionError if the bookkeeping is inconsistent (for tests)."""
        count = [0] * self.num_blocks
        for s in self._seqs.values():
            assert len(s.blocks) == -(-len(s.tokens) // self.block_size)
            assert len(s.keys) == len(s.tokens) // self.block_size
            for b in s.blocks:
                if b >= 0:
                    count[b] += 1
        assert count == self._ref, "refcounts differ from block-table references"
        free = set(self._free)
        assert len(free) == len(self._free), "block twice in the free list"
        cached = set(self._cached)
        assert not (free & cached), "block both free and cached"
        for b in range(self.num_blocks):
            if self._ref[b] == 0:
                assert (b in free) != (b in cached), f"block {b} unreferenced but not pooled"
            else:
                assert b not in free and b not in cached, f"block {b} in use and pooled"
        for b in cached:
            assert self._key[b] is not None
        for k, b in self._by_key.items():
            assert self._key[b] == k
        assert sum(1 for k in self._key if k is not None) == len(self._by_key)
        st = self.stats()
        assert st["used"] + st["free"] == self.num_blocks
        assert st["free"] == self.num_free_blocks()
        assert st["prefix_hits"] <= st["prefix_queries"]
