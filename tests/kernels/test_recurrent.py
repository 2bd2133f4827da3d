"""Recurrent fixed-size state: kernel vs a float64 token loop.

Tolerance: fp32 state and fp32 accumulation over <= 17 tokens with decay <= 1;
agreement with float64 to 1e-5 (rel + abs).
"""
import pytest
import torch

from kvplan.kernels.recurrent_state import (
    kv_cache_bytes,
    recurrent_reference,
    recurrent_state_bytes,
    recurrent_update,
)


def _inputs(B, T, H, DK, DV, device, dtype=torch.float32):
    q = torch.randn(B, T, H, DK, device=device).to(dtype) / DK ** 0.5
    k = torch.randn(B, T, H, DK, device=device).to(dtype)
    v = torch.randn(B, T, H, DV, device=device).to(dtype)
    return q, k, v


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_matches_reference_ragged(device, dtype):
    B, T, H, DK, DV = 3, 17, 2, 8, 12
    q, k, v = _inputs(B, T, H, DK, DV, device, dtype)
    lens = torch.tensor([17, 5, 11], dtype=torch.int32, device=device)
    decay = torch.tensor([0.9, 1.0], device=device)
    state = torch.randn(B, H, DK, DV, device=device)
    s0 = state.clone()
    out = torch.full((B, T, H, DV), float("nan"), device=device).to(dtype)
    recurrent_update(q, k, v, state, decay=decay, seq_lens=lens, out=out)
    ref_o, ref_s = recurrent_reference(q, k, v, s0, decay=decay, seq_lens=lens)
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    for b, n in enumerate(lens.tolist()):
        torch.testing.assert_close(out[b, :n].double(), ref_o[b, :n], rtol=tol, atol=tol)
        assert torch.isnan(out[b, n:].float()).all()  # padding untouched
    torch.testing.assert_close(state.double(), ref_s, rtol=1e-5, atol=1e-5)


def test_chunked_equals_one_shot(device):
    B, T, H, DK, DV = 2, 17, 3, 16, 16
    q, k, v = _inputs(B, T, H, DK, DV, device)
    s1 = torch.zeros(B, H, DK, DV, device=device)
    o1 = recurrent_update(q, k, v, s1, decay=0.95)
    s2 = torch.zeros_like(s1)
    a = recurrent_update(q[:, :9].contiguous(), k[:, :9].contiguous(), v[:, :9].contiguous(), s2,
                         decay=0.95)
    b = recurrent_update(q[:, 9:].contiguous(), k[:, 9:].contiguous(), v[:, 9:].contiguous(), s2,
                         decay=0.95)
    torch.testing.assert_close(torch.cat([a, b], 1), o1, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(s2, s1, rtol=1e-6, atol=1e-6)


def test_state_size_is_fixed():
    # the article: width 64, fp32 -> a 16 KB state vs a growing K+V cache
    assert recurrent_state_bytes(1, 64, 64) == 16 * 1024
    assert kv_cache_bytes(128, 1, 64, 4) == 64 * 1024
    assert kv_cache_bytes(4096, 1, 64, 4) == 2048 * 1024
    state = torch.zeros(1, 1, 64, 64)
    assert state.numel() * state.element_size() == recurrent_state_bytes(1, 64, 64)


def test_bad_inputs_raise(device):
    q, k, v = _inputs(1, 3, 2, 8, 8, device)
    with pytest.raises(ValueError, match="state"):
        recurrent_update(q, k, v, torch.zeros(1, 2, 8, 8, device=device).double())
    with pytest.raises(ValueError, match="decay"):
        recurrent_update(q, k, v, torch.zeros(1, 2, 8, 8, device=device), decay=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="decay"):
        recurrent_update(q, k, v, torch.zeros(1, 2, 8, 8, device=device), decay=1.5)
    with pytest.raises(ValueError, match="v"):
        recurrent_update(q, k, v[:, :2].contiguous(), torch.zeros(1, 2, 8, 8, device=device))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_large_gpu():
    B, T, H, DK, DV = 2, 64, 4, 128, 128
    q, k, v = _inputs(B, T, H, DK, DV, "cuda")
    state = torch.zeros(B, H, DK, DV, device="cuda")
    out = recurrent_update(q, k, v, state, decay=0.97)
    ref_o, ref_s = recurrent_reference(q, k, v, torch.zeros_like(state), decay=0.97)
    torch.testing.assert_close(out.double(), ref_o, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(state.double(), ref_s, rtol=1e-4, atol=1e-4)
