"""Private float64 torch attention references used by the part-2 tests and reports."""
from __future__ import annotations

import math

import torch


def dequant_scale(scale, num_kv_heads: int, device) -> torch.Tensor | None:
    if scale is None:
        return None
    s = torch.as_tensor(scale, dtype=torch.float64, device=device).reshape(-1)
    return s.view(1, -1, 1) if s.numel() > 1 else s.view(1, 1, 1)


def gather_tokens(cache, block_table_row, n: int, scale=None) -> torch.Tensor:
    """Rows of tokens 0..n-1 of one sequence from a paged cache -> float64 [n, H, D]."""
    bs = cache.shape[1]
    t = torch.arange(n, device=cache.device)
    x = cache[block_table_row.long()[t // bs], t % bs].double()
    s = dequant_scale(scale, cache.shape[2], cache.device)
    return x * s if s is not None else x


def attention_ref(q, k, v, scale=None):
    """q [Hq, D], k/v [n, Hkv, D] (GQA) -> (out [Hq, D], probs [Hq, n]) in float64."""
    Hq, D = q.shape
    n, Hkv, _ = k.shape
    G = Hq // Hkv
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    kk = k.double().repeat_interleave(G, dim=1)  # [n, Hq, D]
    vv = v.double().repeat_interleave(G, dim=1)
    if n == 0:
        return torch.zeros(Hq, v.shape[-1], dtype=torch.float64, device=q.device), \
            torch.zeros(Hq, 0, dtype=torch.float64, device=q.device)
    logits = torch.einsum("hd,nhd->hn", q.double(), kk) * scale
    p = torch.softmax(logits, dim=-1)
    return torch.einsum("hn,nhd->hd", p, vv), p


def paged_attention_ref(q, k_cache, v_cache, block_table, seq_lens, *, scale=None,
                        k_scale=None, v_scale=None) -> torch.Tensor:
    """Float64 attention of q [B, Hq, D] over a paged cache -> [B, Hq, D]."""
    out = []
    for b in range(q.shape[0]):
        n = int(seq_lens[b])
        k = gather_tokens(k_cache, block_table[b], n, k_scale)
        v = gather_tokens(v_cache, block_table[b], n, v_scale)
        out.append(attention_ref(q[b], k, v, scale)[0])
    return torch.stack(out)
