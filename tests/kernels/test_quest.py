"""Quest: metadata kernel, page-score kernel (incl. the article's worked example),
top-k selection with the last page kept, and decode over the compact block table.

Tolerances: metadata min/max are exact (same fp32 values); scores are fp32 sums
of D products vs a float64 reference (1e-5 rel); attention over the compact table
is checked in float64 against attention over exactly the selected tokens (1e-10),
and part 1's paged_decode (fp32 math in the interpreter) to 2e-5.
"""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import torch

from _tol import DOT_TOL

from kvplan.kernels._attn_ref import attention_ref, gather_tokens, paged_attention_ref
from kvplan.kernels.quest_meta import (
    alloc_quest_meta,
    quest_meta_bytes_per_page,
    quest_meta_reference,
    quest_meta_update,
)
from kvplan.kernels.quest_score import quest_score, quest_score_reference
from kvplan.kernels.quest_select import (
    attention_mass_captured,
    quest_read_fraction,
    quest_select,
    quest_select_reference,
)


def _paged(lens, bs, nb, H, D, dtype, device, scale=None):
    """Random cache with ragged sequences; stale garbage (1e3) in every unused row."""
    max_blocks = max(math.ceil(n / bs) for n in lens)
    perm = torch.randperm(nb)
    bt = torch.full((len(lens), max_blocks), -1, dtype=torch.int32)
    i = 0
    for b, n in enumerate(lens):
        m = math.ceil(n / bs)
        bt[b, :m] = perm[i:i + m].int()
        i += m
    k_cache = torch.full((nb, bs, H, D), 1e3 if dtype != torch.float8_e4m3fn else 400.0).to(dtype)
    slots = []
    for b, n in enumerate(lens):
        for t in range(n):
            slots.append(int(bt[b, t // bs]) * bs + t % bs)
    slots = torch.tensor(slots, dtype=torch.int64)
    vals = torch.randn(len(slots), H, D) * 3
    k_cache.view(-1, H, D)[slots] = vals.to(dtype) if scale is None else \
        (vals / torch.as_tensor(scale).view(1, -1, 1)).clamp(-448, 448).to(dtype)
    return k_cache.to(device), bt.to(device), torch.tensor(lens, dtype=torch.int32, device=device), \
        slots.to(device)


def test_article_example_scores_and_top2(device):
    pages = torch.tensor([[[1, 0], [2, 1]], [[5, 1], [4, 2]], [[0, 6], [1, 5]], [[-2, -1], [-1, 0]]],
                         dtype=torch.float32)
    k_cache = pages.view(4, 2, 1, 2).to(torch.bfloat16).to(device)  # 4 pages x 2 tokens, 1 head, d=2
    bt = torch.tensor([[0, 1, 2, 3]], dtype=torch.int32, device=device)
    lens = torch.tensor([8], dtype=torch.int32, device=device)
    k_min, k_max = alloc_quest_meta(4, 1, 2, device)
    quest_meta_update(k_cache, k_min, k_max, torch.arange(8, device=device))
    q = torch.tensor([[[1.0, 0.5]]], device=device)
    scores = quest_score(q, k_min, k_max, bt, lens, 2)
    assert scores[0, 0].tolist() == [2.5, 6.0, 4.0, -1.0]
    assert sorted(torch.topk(scores[0, 0], 2).indices.tolist()) == [1, 2]
    sel = quest_select(scores, bt, lens, 2, 2, keep_last=False)
    assert sel.pages[0].tolist() == [1, 2] and int(sel.seq_lens[0]) == 4
    sel = quest_select(scores, bt, lens, 2, 2)  # last page kept and counted in k
    assert sel.pages[0].tolist() == [1, 3]
    assert quest_read_fraction(sel, lens, 2)["token_fraction"] == 0.5


@pytest.mark.parametrize("dtype,scale,meta", [(torch.bfloat16, None, torch.float32),
                                              (torch.float8_e4m3fn, [0.02, 0.05], torch.float32),
                                              (torch.float16, None, torch.bfloat16),
                                              (torch.float8_e4m3fn, [0.03], torch.bfloat16)])
def test_meta_update_prefill_then_decode(device, dtype, scale, meta):
    lens, bs, nb, H, D = [17, 5, 9], 4, 12, 2, 8
    k_cache, bt, sl, slots = _paged(lens, bs, nb, H, D, dtype, device, scale)
    ks = None if scale is None else torch.tensor(scale, device=device)
    k_min, k_max = alloc_quest_meta(nb, H, D, device, meta)
    # prefill all but the last token of each sequence, then one decode token each
    starts = torch.cumsum(torch.tensor([0] + lens), 0)
    last_idx = (starts[1:] - 1).tolist()
    pre = torch.tensor([i for i in range(len(slots)) if i not in last_idx])
    pre_slots = slots[pre.to(device)].clone()
    pad = torch.tensor([-1], dtype=torch.int64, device=device)
    quest_meta_update(k_cache, k_min, k_max, torch.cat([pre_slots, pad]), k_scale=ks)
    quest_meta_update(k_cache, k_min, k_max, slots[torch.tensor(last_idx, device=device)], k_scale=ks)
    ref_min, ref_max = quest_meta_reference(k_cache, bt, sl, k_scale=ks, dtype=meta)
    used = bt[bt >= 0].long()
    assert torch.equal(k_min[used], ref_min[used])
    assert torch.equal(k_max[used], ref_max[used])
    exact_min, exact_max = quest_meta_reference(k_cache, bt, sl, k_scale=ks)  # fp32
    assert (k_min[used].float() <= exact_min[used]).all()  # bf16 rounds outward
    assert (k_max[used].float() >= exact_max[used]).all()
    unused = torch.ones(nb, dtype=torch.bool, device=device)
    unused[used] = False
    assert torch.isnan(k_min[unused]).all()  # pages never written stay poisoned


@pytest.mark.parametrize("meta", [torch.float32, torch.bfloat16])
def test_scores_gqa_match_reference_and_bound(device, meta):
    lens, bs, nb, Hkv, G, D = [17, 6, 11], 4, 14, 2, 2, 8
    k_cache, bt, sl, slots = _paged(lens, bs, nb, Hkv, D, torch.bfloat16, device)
    k_min, k_max = alloc_quest_meta(nb, Hkv, D, device, meta)
    quest_meta_update(k_cache, k_min, k_max, slots)
    q = torch.randn(3, Hkv * G, D, device=device)
    scores = quest_score(q, k_min, k_max, bt, sl, bs)
    ref = quest_score_reference(q, k_min, k_max, bt, sl, bs)
    torch.testing.assert_close(scores, ref, rtol=1e-5, atol=1e-5)
    for b, n in enumerate(lens):
        k = gather_tokens(k_cache, bt[b], n)  # [n, Hkv, D]
        logits = torch.einsum("hd,nhd->hn", q[b].double(), k.repeat_interleave(G, dim=1))
        for p in range(math.ceil(n / bs)):
            for g in range(Hkv):
                best = logits[g * G:(g + 1) * G, p * bs:(p + 1) * bs].max()
                assert scores[b, g, p] >= best - 1e-4
        assert torch.isinf(scores[b, :, math.ceil(n / bs):]).all()


@pytest.mark.parametrize("head_reduce", ["max", "sum"])
def test_select_compact_table_decodes_selected_tokens(device, head_reduce):
    lens, bs, nb, Hkv, G, D = [17, 6, 11], 4, 14, 2, 2, 8
    k_cache, bt, sl, slots = _paged(lens, bs, nb, Hkv, D, torch.bfloat16, device)
    v_cache = torch.randn(nb, bs, Hkv, D, device=device).bfloat16()
    k_min, k_max = alloc_quest_meta(nb, Hkv, D, device)
    quest_meta_update(k_cache, k_min, k_max, slots)
    q = torch.randn(3, Hkv * G, D, device=device)
    scores = quest_score(q, k_min, k_max, bt, sl, bs)
    sel = quest_select(scores, bt, sl, bs, 3, head_reduce=head_reduce)
    ref = quest_select_reference(scores, bt, sl, bs, 3, head_reduce=head_reduce)
    assert torch.equal(sel.block_table, ref.block_table)
    assert torch.equal(sel.seq_lens, ref.seq_lens) and torch.equal(sel.pages, ref.pages)
    assert sel.num_pages.tolist() == [3, 2, 3]
    for b, n in enumerate(lens):  # the last page is always there
        assert math.ceil(n / bs) - 1 in sel.pages[b].tolist()

    # attention through the compact table == attention over exactly the selected tokens
    out = paged_attention_ref(q, k_cache, v_cache, sel.block_table, sel.seq_lens)
    for b, n in enumerate(lens):
        toks = [t for p in sel.pages[b].tolist() if p >= 0 for t in range(p * bs, min(n, (p + 1) * bs))]
        k = gather_tokens(k_cache, bt[b], n)[toks]
        v = gather_tokens(v_cache, bt[b], n)[toks]
        torch.testing.assert_close(out[b], attention_ref(q[b], k, v)[0], rtol=1e-10, atol=1e-10)

    try:
        from kvplan.kernels.paged_decode import paged_decode
    except ImportError:
        return
    got = torch.full_like(q, float("nan"))
    got = paged_decode(q, k_cache, v_cache, sel.block_table, sel.seq_lens)
    torch.testing.assert_close(got.double(), out, **DOT_TOL)


def test_report_helpers(device):
    lens, bs, nb, Hkv, D = [17, 9], 4, 10, 2, 8
    k_cache, bt, sl, slots = _paged(lens, bs, nb, Hkv, D, torch.bfloat16, device)
    k_min, k_max = alloc_quest_meta(nb, Hkv, D, device)
    quest_meta_update(k_cache, k_min, k_max, slots)
    q = torch.randn(2, 4, D, device=device)
    scores = quest_score(q, k_min, k_max, bt, sl, bs)
    full = quest_select(scores, bt, sl, bs, bt.shape[1])
    assert torch.equal(full.seq_lens, sl)
    torch.testing.assert_close(attention_mass_captured(q, k_cache, bt, sl, full),
                               torch.ones(2, 4, dtype=torch.float64))
    part = quest_select(scores, bt, sl, bs, 2)
    fr = quest_read_fraction(part, sl, bs, num_kv_heads=Hkv, head_dim=D, kv_elem_bytes=2)
    assert fr["pages_read"] == 4 and fr["pages_total"] == 5 + 3
    assert fr["tokens_read"] == int(part.seq_lens.sum())
    assert fr["meta_bytes_read"] == 8 * quest_meta_bytes_per_page(Hkv, D)
    assert k_min.numel() * k_min.element_size() * 2 == nb * quest_meta_bytes_per_page(Hkv, D)
    assert quest_meta_bytes_per_page(8, 128, 2) == 4096
    mass = attention_mass_captured(q, k_cache, bt, sl, part)
    assert ((mass > 0) & (mass < 1 + 1e-12)).all()


def test_bad_inputs_raise(device):
    lens, bs, nb, Hkv, D = [9], 4, 4, 1, 8
    k_cache, bt, sl, slots = _paged(lens, bs, nb, Hkv, D, torch.bfloat16, device)
    k_min, k_max = alloc_quest_meta(nb, Hkv, D, device)
    scores = torch.zeros(1, 1, 3, device=device)
    with pytest.raises(ValueError, match="top_k_pages"):
        quest_select(scores, bt, sl, bs, 4)
    with pytest.raises(ValueError, match="top_k_pages"):
        quest_select(scores, bt, sl, bs, 0)
    with pytest.raises(ValueError, match="q"):
        quest_score(torch.randn(1, 1, 6, device=device), k_min, k_max, bt, sl, bs)
    with pytest.raises(ValueError, match="k_min"):
        quest_meta_update(k_cache, k_min[:2].contiguous(), k_max, slots)
    with pytest.raises(ValueError, match="k_scale"):
        quest_meta_update(k_cache.to(torch.float8_e4m3fn), k_min, k_max, slots)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_quest_8k_gpu():
    from kvplan.kernels.paged_decode import paged_decode

    lens, bs, Hkv, G, D = [8192, 5000], 16, 8, 4, 128
    nb = sum(math.ceil(n / bs) for n in lens) + 3
    k_cache, bt, sl, slots = _paged(lens, bs, nb, Hkv, D, torch.bfloat16, "cuda")
    v_cache = torch.randn(nb, bs, Hkv, D, device="cuda").bfloat16()
    k_min, k_max = alloc_quest_meta(nb, Hkv, D, "cuda", torch.bfloat16)
    quest_meta_update(k_cache, k_min, k_max, slots)
    q = torch.randn(2, Hkv * G, D, device="cuda").bfloat16()
    scores = quest_score(q, k_min, k_max, bt, sl, bs)
    sel = quest_select(scores, bt, sl, bs, bt.shape[1] // 8)
    got = paged_decode(q, k_cache, v_cache, sel.block_table, sel.seq_lens)
    want = paged_attention_ref(q, k_cache, v_cache, sel.block_table, sel.seq_lens)
    torch.testing.assert_close(got.double(), want, rtol=2e-2, atol=2e-2)


@settings(max_examples=40, deadline=None)
@given(lens=st.lists(st.integers(0, 40), min_size=1, max_size=4), bs=st.sampled_from([1, 3, 4]),
       k=st.integers(1, 12), keep_last=st.booleans(), seed=st.integers(0, 2**16))
def test_select_property_matches_loop(lens, bs, k, keep_last, seed):
    g = torch.Generator().manual_seed(seed)
    P = max(1, max(math.ceil(n / bs) for n in lens))
    if k > P:
        k = P
    bt = torch.randperm(len(lens) * P, generator=g).view(len(lens), P).int()
    sl = torch.tensor(lens, dtype=torch.int32)
    scores = torch.randn(len(lens), 2, P, generator=g)
    a = quest_select(scores, bt, sl, bs, k, keep_last=keep_last)
    b = quest_select_reference(scores, bt, sl, bs, k, keep_last=keep_last)
    assert torch.equal(a.pages, b.pages) and torch.equal(a.block_table, b.block_table)
    assert torch.equal(a.seq_lens, b.seq_lens) and torch.equal(a.num_pages, b.num_pages)
