"""KV eviction policies (torch / python, no kernel): which token positions to keep.

All selections return sorted int64 positions of ONE sequence. They are shared by
all heads of a layer: a paged cache has one block table per sequence, so
``compact.py`` can only drop whole token rows (all kv heads together). Per-head
scores are therefore summed over heads before selecting (documented per policy).

* **H2O** (heavy hitters + recent window). ``h2o_accumulate`` adds one decode
  step's attention probabilities [num_q_heads, n] (summed over heads) to a running
  per-token score; ``h2o_select(scores, budget, recent)`` keeps the last
  ``recent`` positions plus the ``budget - recent`` highest-scoring older ones
  (ties -> earlier position). Real H2O evicts greedily one token per step; taking
  the top set from accumulated scores at a snapshot is the article's form.
* **SnapKV**: after prefill, the last ``window`` prompt queries (the observation
  window) attend causally to the prompt; their softmax probabilities on the
  prefix positions [0, n - window) are summed over the window's queries, pooled
  over neighbouring positions (1-D max or avg pool, odd ``kernel_size``, stride 1,
  same padding) so that selected tokens keep some context, and the top
  ``budget - window`` prefix positions are kept together with the whole window.
  Chosen once, after prefill. Default: scores summed over all query heads ->
  one shared selection (what compact.py can apply). ``per_kv_head=True`` returns
  the original SnapKV per-kv-head choice [num_kv_heads, budget] (group's query
  heads summed) for analysis; it needs per-head block tables to apply.
* **PyramidKV** budgets: ``pyramid_budgets(num_layers, avg_budget)`` gives layer 0
  (lowest) the largest budget, decreasing linearly to ``min_budget`` at the top,
  integers that sum exactly to ``num_layers * avg_budget`` (same total as a
  uniform budget). Floors of the linear ramp, the remainder handed out one token
  each to the lowest layers, so the list stays non-increasing.

Bad input raises ValueError naming the argument (e.g. budget < recent window).
"""
from __future__ import annotations

import math

import torch


def h2o_accumulate(scores: torch.Tensor | None, probs: torch.Tensor) -> torch.Tensor:
    """Add one step's attention probs [num_q_heads, n] (summed over heads) to the
    float64 per-token scores [n_prev] (n_prev <= n; new positions start at 0)."""
    if not isinstance(probs, torch.Tensor) or probs.dim() != 2:
        raise ValueError("probs: expected [num_q_heads, n]")
    step = probs.double().sum(0)
    if scores is None:
        return step
    if scores.dim() != 1 or scores.shape[0] > step.shape[0]:
        raise ValueError(f"scores: expected [<= {step.shape[0]}], got {tuple(scores.shape)}")
    out = step.clone()
    out[: scores.shape[0]] += scores.to(out)
    return out


def _check_budget(budget: int, recent: int, name_recent: str = "recent") -> None:
    if int(recent) < 0:
        raise ValueError(f"{name_recent}: must be >= 0, got {recent}")
    if int(budget) < int(recent):
        raise ValueError(f"budget: {budget} smaller than the {name_recent} window ({recent})")
    if int(budget) < 1:
        raise ValueError(f"budget: must be >= 1, got {budget}")


def h2o_select(scores, budget: int, recent: int) -> torch.Tensor:
    """Heavy hitters + recent window. scores [n] (any float); returns sorted int64
    positions, all of them when n <= budget."""
    _check_budget(budget, recent)
    s = torch.as_tensor(scores, dtype=torch.float64)
    if s.dim() != 1:
        raise ValueError("scores: expected a 1-D per-token score vector")
    n = s.shape[0]
    if n <= budget:
        return torch.arange(n, dtype=torch.int64, device=s.device)
    older = n - recent
    heavy = budget - recent
    order = torch.sort(s[:older], descending=True, stable=True).indices[:heavy]
    keep = torch.cat([order, torch.arange(older, n, device=s.device)])
    return torch.sort(keep).values.to(torch.int64)


def snapkv_scores(q_obs: torch.Tensor, k: torch.Tensor, *, scale: float | None = None,
                  kernel_size: int = 5, pool: str = "max") -> torch.Tensor:
    """Pooled SnapKV votes of the prefix positions, per query head.

    q_obs [num_q_heads, window, D]: queries of the last ``window`` prompt tokens;
    k [n, num_kv_heads, D]: all prompt keys (n >= window). Returns float64
    [num_q_heads, n - window]."""
    if not isinstance(q_obs, torch.Tensor) or q_obs.dim() != 3:
        raise ValueError("q_obs: expected [num_q_heads, window, head_dim]")
    if not isinstance(k, torch.Tensor) or k.dim() != 3:
        raise ValueError("k: expected [n, num_kv_heads, head_dim]")
    Hq, w, D = q_obs.shape
    n, Hkv, Dk = k.shape
    if Dk != D:
        raise ValueError(f"k: head_dim {Dk} != q_obs head_dim {D}")
    if Hq % Hkv:
        raise ValueError(f"q_obs: {Hq} query heads not a multiple of {Hkv} kv heads")
    if w < 1 or w > n:
        raise ValueError(f"q_obs: window {w} must be in [1, n={n}]")
    if int(kernel_size) < 1 or int(kernel_size) % 2 == 0:
        raise ValueError(f"kernel_size: must be odd and >= 1, got {kernel_size}")
    if pool not in ("max", "avg"):
        raise ValueError(f"pool: 'max' or 'avg', got {pool!r}")
    scale = D ** -0.5 if scale is None else scale
    kk = k.double().repeat_interleave(Hq // Hkv, dim=1)  # [n, Hq, D]
    logits = torch.einsum("hwd,nhd->hwn", q_obs.double(), kk) * scale  # [Hq, w, n]
    qpos = torch.arange(n - w, n, device=k.device)[:, None]
    logits = logits.masked_fill(torch.arange(n, device=k.device)[None, :] > qpos, float("-inf"))
    votes = torch.softmax(logits, dim=-1)[:, :, : n - w].sum(1)  # [Hq, n - w]
    if n - w == 0:
        return votes
    pad = int(kernel_size) // 2
    if pool == "max":
        return torch.nn.functional.max_pool1d(votes[:, None], kernel_size, 1, pad)[:, 0]
    return torch.nn.functional.avg_pool1d(votes[:, None], kernel_size, 1, pad,
                                          count_include_pad=False)[:, 0]


def snapkv_select(q_obs: torch.Tensor, k: torch.Tensor, budget: int, *, scale: float | None = None,
                  kernel_size: int = 5, pool: str = "max", per_kv_head: bool = False) -> torch.Tensor:
    """SnapKV selection after prefill (see module doc). Returns sorted int64 positions
    [budget'] (shared), or [num_kv_heads, budget'] with ``per_kv_head``;
    budget' = min(budget, n)."""
    w = q_obs.shape[1] if isinstance(q_obs, torch.Tensor) and q_obs.dim() == 3 else 0
    _check_budget(budget, w, "observation")
    votes = snapkv_scores(q_obs, k, scale=scale, kernel_size=kernel_size, pool=pool)
    n = k.shape[0]
    if n <= budget:
        keep = torch.arange(n, dtype=torch.int64, device=k.device)
        return keep.expand(k.shape[1], n).clone() if per_kv_head else keep
    window = torch.arange(n - w, n, device=k.device)
    heavy = budget - w
    if not per_kv_head:
        top = torch.sort(votes.sum(0), descending=True, stable=True).indices[:heavy]
        return torch.sort(torch.cat([top, window])).values.to(torch.int64)
    Hkv = k.shape[1]
    per = votes.view(Hkv, -1, n - w).sum(1)  # [Hkv, n - w]
    top = torch.sort(per, dim=1, descending=True, stable=True).indices[:, :heavy]
    return torch.sort(torch.cat([top, window.expand(Hkv, w)], 1), dim=1).values.to(torch.int64)


def pyramid_budgets(num_layers: int, avg_budget: int, *, min_budget: int | None = None) -> list[int]:
    """PyramidKV per-layer budgets, layer 0 (lowest) largest, linear decrease to
    ``min_budget`` (default avg_budget // 4, at least 1) at the top layer; integers
    summing exactly to num_layers * avg_budget."""
    L, avg = int(num_layers), int(avg_budget)
    if L < 1:
        raise ValueError(f"num_layers: must be >= 1, got {num_layers}")
    if avg < 1:
        raise ValueError(f"avg_budget: must be >= 1, got {avg_budget}")
    lo = max(1, avg // 4) if min_budget is None else int(min_budget)
    if lo < 1 or lo > avg:
        raise ValueError(f"min_budget: must be in [1, avg_budget={avg}], got {min_budget}")
    if L == 1:
        return [avg]
    hi = 2 * avg - lo  # mean of the ramp = avg
    ramp = [hi - (hi - lo) * i / (L - 1) for i in range(L)]
    out = [math.floor(x + 1e-9) for x in ramp]
    rest = L * avg - sum(out)
    for i in range(rest):  # 0 <= rest < L
        out[i] += 1
    return out


def pyramid_select(scores_per_layer, budgets: list[int], recent: int) -> list[torch.Tensor]:
    """H2O-style selection per layer with PyramidKV budgets: scores_per_layer[l] [n]."""
    if len(scores_per_layer) != len(budgets):
        raise ValueError("budgets: one budget per layer expected")
    return [h2o_select(s, b, recent) for s, b in zip(scores_per_layer, budgets)]
