"""Compressed sparse attention: mean-pool compression kernel, selector + attention
kernels vs a float64 reference, and stored / read entry accounting.

Tolerances: compression sums m values in fp32 in a different order than torch's
mean, so fp32 outputs agree to 1e-6 and bf16 outputs to one bf16 ulp (rtol 8e-3);
decode runs fp32 math in the interpreter and matches float64 to 2e-5 (the GPU
test, TF32 dots, to 2e-2).
"""

import pytest
import torch

from _tol import DOT_TOL

from kvplan.kernels.csa_compress import (
    csa_bytes,
    csa_compress,
    csa_compress_reference,
    csa_entry_counts,
    csa_local_window,
)
from kvplan.kernels.csa_decode import csa_decode, csa_decode_reference


def _raw(lens, N, H, D, dtype, device):
    k = torch.full((len(lens), N, H, D), float("nan"), dtype=dtype)
    v = torch.full_like(k, float("nan"))
    for b, n in enumerate(lens):
        k[b, :n] = torch.randn(n, H, D).to(dtype)
        v[b, :n] = torch.randn(n, H, D).to(dtype)
    return k.to(device), v.to(device), torch.tensor(lens, dtype=torch.int32, device=device)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-6), (torch.bfloat16, 8e-3)])
def test_compress_matches_reference(device, dtype, tol):
    k, v, sl = _raw([17, 5, 12], 17, 2, 8, dtype, device)
    ck, cv, ng = csa_compress(k, v, sl, 4)
    rk, rv, rng = csa_compress_reference(k, v, sl, 4)
    assert ng.tolist() == [4, 1, 3] and torch.equal(ng, rng) and ck.shape == (3, 4, 2, 8)
    for b, g in enumerate(ng.tolist()):
        torch.testing.assert_close(ck[b, :g].float(), rk[b, :g].float(), rtol=tol, atol=tol)
        torch.testing.assert_close(cv[b, :g].float(), rv[b, :g].float(), rtol=tol, atol=tol)
        assert torch.isnan(ck[b, g:].float()).all()  # no entry for the trailing partial group
    # one group by hand
    torch.testing.assert_close(ck[0, 2].float(), k[0, 8:12].float().mean(0), rtol=tol, atol=tol)


@pytest.mark.parametrize("m,window,top_k", [(4, 5, 2), (3, 2, 4)])
def test_decode_matches_reference(device, m, window, top_k):
    lens, Hkv, G, D = [17, 5, 12], 2, 2, 8
    k, v, sl = _raw(lens, 17, Hkv, D, torch.float32, device)
    ck, cv, ng = csa_compress(k, v, sl, m)
    lk, lv, ll = csa_local_window(k, v, sl, window, m)
    q = torch.randn(3, Hkv * G, D, device=device)
    out = torch.full_like(q, float("nan"))
    _, sel = csa_decode(q, ck, cv, ng, lk, lv, ll, top_k=top_k, return_selection=True, out=out)
    ref, ref_sel = csa_decode_reference(q, ck, cv, ng, lk, lv, ll, top_k=top_k)
    assert torch.isfinite(out).all()
    for b in range(3):
        for g in range(Hkv):
            assert set(sel[b, g].tolist()) == set(ref_sel[b, g].tolist())
            assert (sel[b, g] >= 0).sum() == min(top_k, lens[b] // m)
    torch.testing.assert_close(out.double(), ref, **DOT_TOL)
    # the local window holds exactly the last min(n, window) raw tokens
    for b, n in enumerate(lens):
        w = min(n, window)
        assert int(ll[b]) == w and torch.equal(lk[b, :w], k[b, n - w:n])


def test_entry_counts_and_bytes():
    c = csa_entry_counts(32, 4, 0, 2)  # the article: 32 tokens, groups of 4, read 2
    assert (c["compressed_stored"], c["read_entries"]) == (8, 2)
    c = csa_entry_counts(17, 4, 5, 2)
    assert c == {"tokens": 17, "compressed_stored": 4, "partial_group_tokens": 1, "local_stored": 5,
                 "stored_entries": 9, "read_entries": 7, "full_entries": 17}
    assert csa_bytes(17, 4, 5, 2, 8, 2) == 2 * 2 * 8 * 2 * 9
    k, v, sl = _raw([17], 17, 2, 8, torch.bfloat16, "cpu")
    ck, cv, ng = csa_compress(k, v, sl, 4)
    lk, lv, ll = csa_local_window(k, v, sl, 5, 4)
    stored = (int(ng[0]) * 2 + int(ll[0]) * 2) * 2 * 8 * 2
    assert stored == csa_bytes(17, 4, 5, 2, 8, 2)
    assert ck.numel() * ck.element_size() * 2 + lk.numel() * lk.element_size() * 2 == stored


def test_bad_inputs_raise(device):
    k, v, sl = _raw([9], 9, 1, 8, torch.float32, device)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="^m: "):
            csa_compress(k, v, sl, bad)
        with pytest.raises(ValueError, match="^m: "):
            csa_entry_counts(9, bad, 2, 1)
    with pytest.raises(ValueError, match="window_tokens"):
        csa_local_window(k, v, sl, 2, 4)
    ck, cv, ng = csa_compress(k, v, sl, 4)
    lk, lv, ll = csa_local_window(k, v, sl, 3, 4)
    q = torch.randn(1, 2, 8, device=device)
    with pytest.raises(ValueError, match="top_k"):
        csa_decode(q, ck, cv, ng, lk, lv, ll, top_k=3)
    with pytest.raises(ValueError, match="comp_k"):  # head_dim mismatch with q
        csa_decode(torch.randn(1, 2, 6, device=device), ck, cv, ng, lk, lv, ll, top_k=1)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_decode_gpu_large():
    lens, Hkv, G, D, m = [4096, 1000, 3333], 8, 4, 128, 16
    k, v, sl = _raw(lens, 4096, Hkv, D, torch.bfloat16, "cuda")
    ck, cv, ng = csa_compress(k, v, sl, m)
    lk, lv, ll = csa_local_window(k, v, sl, 128, m)
    q = torch.randn(3, Hkv * G, D, device="cuda")
    out, sel = csa_decode(q, ck, cv, ng, lk, lv, ll, top_k=32, return_selection=True)
    ref, _ = csa_decode_reference(q, ck, cv, ng, lk, lv, ll, top_k=32, selection=sel)
    torch.testing.assert_close(out.double(), ref, rtol=2e-2, atol=2e-2)
