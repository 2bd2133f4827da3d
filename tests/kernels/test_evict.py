"""Eviction: H2O / SnapKV / PyramidKV selection and the compaction kernel.

Compaction copies bytes, so cache contents are checked bitwise; decode after
compaction is compared in float64 with attention over exactly the retained tokens
of the uncompacted cache (1e-12), and with part 1's paged_decode when present
(fp32 interpreter math, 2e-5).
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import torch

from _tol import DOT_TOL

from kvplan.kernels._attn_ref import attention_ref, gather_tokens, paged_attention_ref
from kvplan.kernels.allocator import BlockAllocator
from kvplan.kernels.compact import compact_sequence, compact_sequence_reference
from kvplan.kernels.evict_select import (
    h2o_accumulate,
    h2o_select,
    pyramid_budgets,
    pyramid_select,
    snapkv_scores,
    snapkv_select,
)


def test_article_h2o_example():
    scores = [9.0, 0.2, 4.0, 0.1, 0.3, 6.0, 0.2, 0.4, 0.1, 0.2]
    assert h2o_select(scores, 6, 2).tolist() == [0, 2, 5, 7, 8, 9]
    assert h2o_select(scores, 20, 2).tolist() == list(range(10))
    with pytest.raises(ValueError, match="budget"):
        h2o_select(scores, 1, 2)  # budget smaller than the recent window


def test_h2o_accumulate_over_steps():
    acc = None
    total = torch.zeros(7, dtype=torch.float64)
    for n in (5, 6, 7):  # the sequence grows by one token per decode step
        probs = torch.softmax(torch.randn(4, n), -1)
        acc = h2o_accumulate(acc, probs)
        total[:n] += probs.double().sum(0)
    torch.testing.assert_close(acc, total)
    keep = h2o_select(acc, 4, 2)
    assert keep[-2:].tolist() == [5, 6] and len(keep) == 4
    assert set(keep[:2].tolist()) == set(torch.topk(acc[:5], 2).indices.tolist())


def _snap_votes_loop(q_obs, k, scale, ks, pool):
    Hq, w, D = q_obs.shape
    n, Hkv, _ = k.shape
    G = Hq // Hkv
    votes = torch.zeros(Hq, n - w, dtype=torch.float64)
    for h in range(Hq):
        for i in range(w):
            qpos = n - w + i
            lg = k[: qpos + 1, h // G].double() @ q_obs[h, i].double() * scale
            votes[h] += torch.softmax(lg, 0)[: n - w]
    out = torch.empty_like(votes)
    for j in range(n - w):
        lo, hi = max(0, j - ks // 2), min(n - w, j + ks // 2 + 1)
        out[:, j] = votes[:, lo:hi].amax(1) if pool == "max" else votes[:, lo:hi].mean(1)
    return out


@pytest.mark.parametrize("pool", ["max", "avg"])
def test_snapkv_scores_and_selection(pool):
    n, w, Hkv, G, D = 17, 4, 2, 2, 8
    q_obs = torch.randn(Hkv * G, w, D)
    k = torch.randn(n, Hkv, D)
    votes = snapkv_scores(q_obs, k, kernel_size=3, pool=pool)
    torch.testing.assert_close(votes, _snap_votes_loop(q_obs, k, D ** -0.5, 3, pool))
    keep = snapkv_select(q_obs, k, 9, kernel_size=3, pool=pool)
    assert len(keep) == 9 and keep[-w:].tolist() == list(range(n - w, n))
    assert set(keep[:-w].tolist()) == set(torch.topk(votes.sum(0), 9 - w).indices.tolist())
    per = snapkv_select(q_obs, k, 9, kernel_size=3, pool=pool, per_kv_head=True)
    assert per.shape == (Hkv, 9) and (per[:, -w:] == torch.arange(n - w, n)).all()
    with pytest.raises(ValueError, match="budget"):
        snapkv_select(q_obs, k, 3)  # budget smaller than the observation window
    with pytest.raises(ValueError, match="kernel_size"):
        snapkv_select(q_obs, k, 9, kernel_size=4)


@pytest.mark.parametrize("L,avg", [(32, 128), (7, 10), (5, 3), (1, 9), (61, 2048)])
def test_pyramid_budgets(L, avg):
    b = pyramid_budgets(L, avg)
    assert sum(b) == L * avg and len(b) == L
    assert all(x >= y for x, y in zip(b, b[1:]))
    assert min(b) >= 1
    if L > 2 and avg >= 4:
        assert b[0] > avg > b[-1]
    with pytest.raises(ValueError, match="min_budget"):
        pyramid_budgets(L, avg, min_budget=avg + 1)
    sels = pyramid_select([torch.rand(3 * avg + 5) for _ in range(L)], b, min(b))
    assert [len(s) for s in sels] == b


def _setup(dtype, device, lens=(17, 10), bs=4, nb=16, H=2, D=8):
    alloc = BlockAllocator(nb, bs)
    k_cache = torch.full((nb, bs, H, D), float("nan")).to(dtype).to(device)
    v_cache = torch.full((nb, bs, H, D), float("nan")).to(dtype).to(device)
    for s, n in enumerate(lens):
        blocks = alloc.allocate(s, list(range(100 * s, 100 * s + n)))
        for t in range(n):
            k_cache[blocks[t // bs], t % bs] = torch.randn(H, D).to(dtype).to(device)
            v_cache[blocks[t // bs], t % bs] = torch.randn(H, D).to(dtype).to(device)
    return alloc, k_cache, v_cache


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float8_e4m3fn])
def test_compaction_article_example(device, dtype):
    bs = 4
    alloc, k_cache, v_cache = _setup(dtype, device, lens=(10, 7), bs=bs, nb=8)
    before = (k_cache.clone(), v_cache.clone())
    other = alloc.block_table(1)
    old = alloc.block_table(0)
    used_before = alloc.stats()["used"]
    keep = h2o_select([9.0, 0.2, 4.0, 0.1, 0.3, 6.0, 0.2, 0.4, 0.1, 0.2], 6, 2)
    res = compact_sequence([(k_cache, v_cache)], alloc, 0, keep)
    assert res.retained_positions.tolist() == [0, 2, 5, 7, 8, 9]
    assert res.seq_len == 6 and len(res.block_table) == 2 and alloc.seq_len(0) == 6
    # net one block fewer; the allocator may hand out a free-list block and keep the
    # old full blocks (with their prefix keys) in its LRU
    assert alloc.stats()["used"] == used_before - 1
    assert sorted(res.freed_blocks) == sorted(set(old) - set(res.block_table))
    (k_ref, v_ref), = compact_sequence_reference([before], old, keep, res.block_table, bs)
    t = torch.arange(6)
    nb_ = torch.tensor(res.block_table)[t // bs]
    assert torch.equal(k_cache[nb_, t % bs].view(torch.uint8), k_ref[nb_, t % bs].view(torch.uint8))
    assert torch.equal(v_cache[nb_, t % bs].view(torch.uint8), v_ref[nb_, t % bs].view(torch.uint8))
    ob = torch.tensor(other)  # the other sequence is untouched
    assert torch.equal(k_cache[ob].view(torch.uint8), before[0][ob].view(torch.uint8))
    alloc.check_invariants()


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_decode_after_compaction_equals_retained_attention(device, prefix_cache):
    bs, H, G, D = 4, 2, 2, 8
    alloc, k_cache, v_cache = _setup(torch.bfloat16, device, lens=(17, 10), bs=bs)
    if not prefix_cache:
        alloc.enable_prefix_cache = False
    k2 = k_cache.clone() * 2  # a second layer
    v2 = v_cache.clone() - 1
    n = 17
    old = torch.tensor(alloc.block_table(0), dtype=torch.int32, device=device)
    k_full = gather_tokens(k_cache, old, n)
    v_full = gather_tokens(v_cache, old, n)
    k2_full = gather_tokens(k2, old, n)
    q = torch.randn(H * G, D, device=device)
    probs = attention_ref(q, k_full, v_full)[1]
    keep = h2o_select(h2o_accumulate(None, probs), 9, 3)
    res = compact_sequence([(k_cache, v_cache), (k2, v2)], alloc, 0, keep)
    assert res.retained_positions.tolist() == keep.tolist() and res.seq_len == 9
    bt = torch.tensor([res.block_table + [-1] * (5 - len(res.block_table))], dtype=torch.int32,
                      device=device)
    sl = torch.tensor([9], dtype=torch.int32, device=device)
    out = paged_attention_ref(q[None], k_cache, v_cache, bt, sl)[0]
    want = attention_ref(q, k_full[keep], v_full[keep])[0]
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gather_tokens(k2, bt[0], 9), k2_full[keep], rtol=0, atol=0)
    # a new token appends right after the retained ones
    blocks = alloc.append(0, [7])
    assert alloc.seq_len(0) == 10 and blocks[:3] == res.block_table
    alloc.check_invariants()
    try:
        from kvplan.kernels.paged_decode import paged_decode
    except ImportError:
        return
    got = paged_decode(q[None].contiguous(), k_cache, v_cache, bt, sl)
    torch.testing.assert_close(got[0].double(), want, **DOT_TOL)


def test_compaction_bad_input(device):
    alloc, k_cache, v_cache = _setup(torch.bfloat16, device, lens=(9,), bs=4, nb=4)
    with pytest.raises(ValueError, match="retained_positions"):
        compact_sequence([(k_cache, v_cache)], alloc, 0, [3, 1])
    with pytest.raises(ValueError, match="retained_positions"):
        compact_sequence([(k_cache, v_cache)], alloc, 0, [0, 9])
    with pytest.raises(ValueError, match="caches"):
        compact_sequence([(k_cache[:2].contiguous(), v_cache[:2].contiguous())], alloc, 0, [0])


@settings(max_examples=60, deadline=None)
@given(scores=st.lists(st.floats(-10, 10, allow_nan=False), min_size=0, max_size=40),
       recent=st.integers(0, 6), extra=st.integers(0, 10))
def test_h2o_property_matches_article_rule(scores, recent, extra):
    budget = max(1, recent + extra)
    got = h2o_select(scores, budget, recent).tolist()
    n = len(scores)
    if n <= budget:
        assert got == list(range(n))
        return
    older = list(range(n - recent))
    heavy = sorted(older, key=lambda p: scores[p], reverse=True)[: budget - recent]  # stable
    assert got == sorted(heavy + list(range(n - recent, n)))
