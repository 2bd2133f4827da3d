"""Quest page selection: top-k pages per sequence, the last page always kept, and a
compact block table so that part 1's ``paged_decode`` reads only those pages.

Selection (per sequence b, torch ops on the device, no host sync):

1. combine the per-kv-head scores [B, Hkv, P] of ``quest_score`` over kv heads
   (``head_reduce="max"`` (default) or ``"sum"``): one page set per sequence,
   because a paged cache has one block table per sequence shared by all heads;
2. with ``keep_last`` the sequence's last (possibly partial) page is forced in and
   counts toward ``top_k_pages`` (it holds the most recent tokens, including the
   current one; Quest does the same);
3. take the ``min(top_k_pages, n_pages)`` best pages, sort them by page index and
   write their physical blocks into a compact table ``[B, top_k_pages]`` (-1 pad).

The compact ``seq_lens`` is the number of live tokens of the chosen pages. Only the
last page of a sequence can be partial and, being the highest index, it lands last
in the compact table, so token t of the compact view is offset t % block_size of
compact page t // block_size, exactly as paged_decode reads it. Positions are not
needed by decode (RoPE is applied before the keys are cached).

``top_k_pages`` larger than the block-table width raises ValueError; sequences with
fewer pages than ``top_k_pages`` read all their pages.

Report helpers: :func:`quest_read_fraction` (pages / tokens / bytes read vs full)
and :func:`attention_mass_captured` (share of the full-attention softmax mass that
falls on the selected tokens, per query head).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ._attn_ref import gather_tokens


@dataclass
class QuestSelection:
    block_table: torch.Tensor  # int32 [B, top_k_pages], physical blocks, -1 pad
    seq_lens: torch.Tensor  # int32 [B], live tokens in the selected pages
    pages: torch.Tensor  # int64 [B, top_k_pages], logical page indices (sorted), -1 pad
    num_pages: torch.Tensor  # int64 [B], pages selected


def _check(scores, block_table, seq_lens, block_size, top_k_pages, head_reduce):
    if not isinstance(scores, torch.Tensor) or scores.dim() != 3:
        raise ValueError("scores: expected [batch, num_kv_heads, max_pages]")
    B, _, P = scores.shape
    if not isinstance(block_table, torch.Tensor) or block_table.dtype != torch.int32 \
            or block_table.shape != (B, P):
        raise ValueError(f"block_table: expected int32 [{B}, {P}]")
    if not isinstance(seq_lens, torch.Tensor) or seq_lens.dtype != torch.int32 or seq_lens.shape != (B,):
        raise ValueError(f"seq_lens: expected int32 [{B}]")
    if int(block_size) <= 0:
        raise ValueError("block_size: must be > 0")
    if int(top_k_pages) < 1:
        raise ValueError(f"top_k_pages: must be >= 1, got {top_k_pages}")
    if int(top_k_pages) > P:
        raise ValueError(f"top_k_pages: {top_k_pages} larger than the number of pages ({P})")
    if head_reduce not in ("max", "sum"):
        raise ValueError(f"head_reduce: 'max' or 'sum', got {head_reduce!r}")


def quest_select(scores: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor,
                 block_size: int, top_k_pages: int, *, keep_last: bool = True,
                 head_reduce: str = "max") -> QuestSelection:
    """scores fp32 [B, Hkv, P] from quest_score; block_table int32 [B, P]; seq_lens int32 [B]."""
    _check(scores, block_table, seq_lens, block_size, top_k_pages, head_reduce)
    B, _, P = scores.shape
    k = int(top_k_pages)
    dev = scores.device
    s = scores.amax(1) if head_reduce == "max" else scores.sum(1)  # [B, P]
    n_pages = (seq_lens.long() + block_size - 1) // block_size  # [B]
    idx = torch.arange(P, device=dev)
    live = idx[None, :] < n_pages[:, None]
    s = torch.where(live, s.double(), float("-inf"))
    if keep_last:
        s = torch.where(idx[None, :] == (n_pages - 1)[:, None], float("inf"), s)
    # rank: live pages by score (ties -> lower index), dead pages last
    order = torch.sort(s, dim=1, descending=True, stable=True).indices[:, :k]  # [B, k]
    n_sel = torch.clamp(n_pages, max=k)
    slot = torch.arange(k, device=dev)[None, :]
    chosen = torch.where(slot < n_sel[:, None], order, P)  # P = "none"
    chosen = torch.sort(chosen, dim=1).values
    ok = chosen < P
    pages = torch.where(ok, chosen, -1)
    phys = torch.gather(block_table, 1, chosen.clamp(max=P - 1))
    sel_bt = torch.where(ok, phys, -1).to(torch.int32)
    tokens = torch.clamp(seq_lens.long()[:, None] - chosen * block_size, min=0, max=block_size)
    sel_len = torch.where(ok, tokens, 0).sum(1).to(torch.int32)
    return QuestSelection(sel_bt.contiguous(), sel_len, pages, n_sel)


def quest_select_reference(scores, block_table, seq_lens, block_size, top_k_pages, *,
                           keep_last=True, head_reduce="max") -> QuestSelection:
    """Python loop version of :func:`quest_select`."""
    _check(scores, block_table, seq_lens, block_size, top_k_pages, head_reduce)
    B, _, P = scores.shape
    k = int(top_k_pages)
    bt = torch.full((B, k), -1, dtype=torch.int32)
    pg = torch.full((B, k), -1, dtype=torch.int64)
    lens = torch.zeros(B, dtype=torch.int32)
    nsel = torch.zeros(B, dtype=torch.int64)
    for b in range(B):
        n = int(seq_lens[b])
        npg = -(-n // block_size)
        comb = scores[b].double().amax(0) if head_reduce == "max" else scores[b].double().sum(0)
        cand = list(range(npg))
        forced = [npg - 1] if keep_last and npg else []
        rest = sorted((p for p in cand if p not in forced), key=lambda p: (-float(comb[p]), p))
        sel = sorted(forced + rest[: max(0, min(k, npg) - len(forced))])
        for j, p in enumerate(sel):
            pg[b, j] = p
            bt[b, j] = int(block_table[b, p])
            lens[b] += min(block_size, n - p * block_size)
        nsel[b] = len(sel)
    dev = scores.device
    return QuestSelection(bt.to(dev), lens.to(dev), pg.to(dev), nsel.to(dev))


def quest_read_fraction(sel: QuestSelection, seq_lens: torch.Tensor, block_size: int, *,
                        num_kv_heads: int | None = None, head_dim: int | None = None,
                        kv_elem_bytes: int | None = None, meta_elem_bytes: int = 4) -> dict:
    """Pages and tokens read by the sparse decode vs a full decode (whole batch).
    With num_kv_heads/head_dim/kv_elem_bytes also KV bytes (K+V) and Quest metadata
    bytes read (2 * meta_elem_bytes * num_kv_heads * head_dim per page scored)."""
    n_pages = ((seq_lens.long() + block_size - 1) // block_size).sum().item()
    pages_read = int(sel.num_pages.sum())
    tok_full = int(seq_lens.long().sum())
    tok_read = int(sel.seq_lens.long().sum())
    out = {
        "pages_read": pages_read, "pages_total": int(n_pages),
        "page_fraction": pages_read / max(1, n_pages),
        "tokens_read": tok_read, "tokens_total": tok_full,
        "token_fraction": tok_read / max(1, tok_full),
    }
    if num_kv_heads and head_dim and kv_elem_bytes:
        per_tok = 2 * num_kv_heads * head_dim * kv_elem_bytes
        meta = int(n_pages) * 2 * meta_elem_bytes * num_kv_heads * head_dim
        out.update(kv_bytes_full=tok_full * per_tok, kv_bytes_read=tok_read * per_tok,
                   meta_bytes_read=meta,
                   byte_fraction=(tok_read * per_tok + meta) / max(1, tok_full * per_tok))
    return out


def attention_mass_captured(q, k_cache, block_table, seq_lens, sel: QuestSelection, *,
                            scale=None, k_scale=None) -> torch.Tensor:
    """Float64 [B, num_q_heads]: sum of the full-attention softmax probabilities that
    fall on tokens of the selected pages (1.0 = nothing lost)."""
    B, Hq, D = q.shape
    Hkv = k_cache.shape[2]
    G = Hq // Hkv
    bs = k_cache.shape[1]
    scale = D ** -0.5 if scale is None else scale
    out = torch.zeros(B, Hq, dtype=torch.float64)
    for b in range(B):
        n = int(seq_lens[b])
        if n == 0:
            out[b] = 1.0
            continue
        k = gather_tokens(k_cache, block_table[b], n, k_scale).repeat_interleave(G, dim=1)
        p = torch.softmax(torch.einsum("hd,nhd->hn", q[b].double(), k) * scale, dim=-1)
        keep = torch.zeros(n, dtype=torch.bool, device=p.device)
        for pg in sel.pages[b].tolist():
            if pg >= 0:
                keep[pg * bs: min(n, (pg + 1) * bs)] = True
        out[b] = p[:, keep].sum(-1).cpu()
    return out
