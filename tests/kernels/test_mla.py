"""MLA latent cache: write kernel (bf16 / fp8) and absorbed decode vs an
unabsorbed float64 reference.

Tolerances: the interpreter runs the dots in fp32, so the kernel matches the
float64 absorbed reference over the same stored rows to ~1e-5 (we allow 2e-5
abs + rel); the unabsorbed reference differs further only by fp32 rounding of
q_latent = W_uk q_nope and of the projection (allow 1e-4). On a GPU the dots run
in bf16 (q rounded to bf16), so the GPU test allows 3e-2.
"""
import math

import pytest
import torch

from _tol import DOT_TOL, ON_GPU

from kvplan.kernels.mla_cache import alloc_mla_cache, mla_cache_bytes, mla_write, mla_write_reference
from kvplan.kernels.mla_decode import (
    mla_decode,
    mla_decode_reference,
    mla_unabsorbed_reference,
)


def _layout(lens, block_size, num_blocks, device):
    """Random disjoint blocks per sequence: block_table int32 (-1 padded) and slot_mapping."""
    max_blocks = max(math.ceil(n / block_size) for n in lens)
    perm = torch.randperm(num_blocks)
    bt = torch.full((len(lens), max_blocks), -1, dtype=torch.int32)
    slots, i = [], 0
    for b, n in enumerate(lens):
        nb = math.ceil(n / block_size)
        bt[b, :nb] = perm[i:i + nb].int()
        i += nb
        for t in range(n):
            slots.append(int(bt[b, t // block_size]) * block_size + t % block_size)
    return bt.to(device), torch.tensor(lens, dtype=torch.int32, device=device), \
        torch.tensor(slots, dtype=torch.int64, device=device)


def _fill(lens, R, P, block_size, dtype, device, scale=None, num_blocks=16):
    bt, sl, slots = _layout(lens, block_size, num_blocks, device)
    T = slots.numel()
    c = torch.randn(T, R, device=device)
    kr = torch.randn(T, P, device=device)
    cache = alloc_mla_cache(num_blocks, block_size, R, P, dtype, device)
    mla_write(c, kr, cache, slots, scale=scale)
    return cache, bt, sl, slots, c, kr


@pytest.mark.parametrize("dtype,scale", [(torch.bfloat16, None), (torch.float8_e4m3fn, 0.02)])
def test_write_matches_reference_bitwise(device, dtype, scale):
    lens = [17, 6, 9]
    cache, bt, sl, slots, c, kr = _fill(lens, 32, 16, 4, dtype, device, scale)
    ref = alloc_mla_cache(16, 4, 32, 16, dtype, device)
    mla_write_reference(c, kr, ref, slots, scale=scale)
    assert torch.equal(cache.view(torch.uint8), ref.view(torch.uint8))
    if dtype == torch.bfloat16:  # untouched slots keep their NaN poison
        used = torch.zeros(16 * 4, dtype=torch.bool)
        used[slots.cpu()] = True
        assert torch.isnan(cache.view(-1, 48)[~used.to(device)].float()).all()


def test_write_skips_padding_slots(device):
    cache = alloc_mla_cache(4, 4, 16, 16, torch.bfloat16, device)
    c = torch.randn(3, 16, device=device)
    kr = torch.randn(3, 16, device=device)
    mla_write(c, kr, cache, torch.tensor([5, -1, 2], device=device))
    flat = cache.view(-1, 32).float()
    assert torch.equal(flat[5, :16], c[0].bfloat16().float())
    assert torch.equal(flat[2, 16:], kr[2].bfloat16().float())
    assert torch.isnan(flat[[0, 1, 3, 4, 6]]).all()


@pytest.mark.parametrize("dtype,scale", [(torch.bfloat16, None), (torch.float8_e4m3fn, 0.05)])
@pytest.mark.parametrize("num_splits", [1, 3])
def test_absorbed_decode_matches_unabsorbed_float64(device, dtype, scale, num_splits):
    R, P, H, d_nope, d_v, bs = 32, 16, 3, 8, 8, 4
    lens = [17, 5, 11]
    cache, bt, sl, *_ = _fill(lens, R, P, bs, dtype, device, scale)
    B = len(lens)
    w_uk = torch.randn(H, R, d_nope, dtype=torch.float64, device=device) / math.sqrt(R)
    w_uv = torch.randn(H, R, d_v, dtype=torch.float64, device=device) / math.sqrt(R)
    q_nope = torch.randn(B, H, d_nope, dtype=torch.float64, device=device)
    q_rope = torch.randn(B, H, P, device=device)
    sm = 1.0 / math.sqrt(d_nope + P)
    q_latent = torch.einsum("bhd,hrd->bhr", q_nope, w_uk).float().contiguous()

    out = torch.full((B, H, R), float("nan"), device=device)
    mla_decode(q_latent, q_rope, cache, bt, sl, scale=sm, cache_scale=scale,
               num_splits=num_splits, out=out)
    assert torch.isfinite(out).all()
    ref_abs = mla_decode_reference(q_latent, q_rope, cache, bt, sl, scale=sm, cache_scale=scale)
    torch.testing.assert_close(out.double(), ref_abs, **DOT_TOL)

    ref_un = mla_unabsorbed_reference(q_nope, q_rope.double(), cache, bt, sl, w_uk, w_uv,
                                      scale=sm, cache_scale=scale)
    projected = torch.einsum("bhr,hrv->bhv", out.double(), w_uv)
    torch.testing.assert_close(projected, ref_un, **(DOT_TOL if ON_GPU else {"atol": 1e-4, "rtol": 1e-4}))


@pytest.mark.parametrize("H", [17, 40])
def test_head_blocks_of_32_and_64(device, H):
    cache, bt, sl, *_ = _fill([9, 4], 16, 16, 4, torch.bfloat16, device)
    ql = torch.randn(2, H, 16, device=device)
    qr = torch.randn(2, H, 16, device=device)
    out = torch.full((2, H, 16), float("nan"), device=device)
    mla_decode(ql, qr, cache, bt, sl, scale=0.3, num_splits=2, out=out)
    ref = mla_decode_reference(ql, qr, cache, bt, sl, scale=0.3)
    torch.testing.assert_close(out.double(), ref, **DOT_TOL)


def test_empty_sequence_gives_zeros(device):
    cache, bt, sl, *_ = _fill([9, 3], 16, 16, 4, torch.bfloat16, device)
    sl = torch.tensor([9, 0], dtype=torch.int32, device=device)
    out = mla_decode(torch.randn(2, 2, 16, device=device), torch.randn(2, 2, 16, device=device),
                     cache, bt, sl, scale=0.25)
    assert torch.equal(out[1], torch.zeros_like(out[1]))


def test_bad_inputs_raise(device):
    cache, bt, sl, slots, c, kr = _fill([5], 16, 16, 4, torch.bfloat16, device)
    with pytest.raises(ValueError, match="latent_cache"):  # mismatched latent widths
        mla_decode(torch.randn(1, 2, 16, device=device), torch.randn(1, 2, 8, device=device),
                   cache, bt, sl, scale=0.25)
    with pytest.raises(ValueError, match="latent_cache"):
        mla_write(c[:, :12].contiguous(), kr, cache, slots)
    with pytest.raises(ValueError, match="scale"):
        mla_write(c, kr, alloc_mla_cache(16, 4, 16, 16, torch.float8_e4m3fn, device), slots)
    with pytest.raises(ValueError, match="slot_mapping"):
        mla_write(c, kr, cache, slots.int())
    with pytest.raises(ValueError, match="seq_lens"):
        mla_decode(torch.randn(1, 2, 16, device=device), torch.randn(1, 2, 16, device=device),
                   cache, bt, torch.tensor([99], dtype=torch.int32, device=device), scale=0.25)


def test_cache_bytes_formula(device):
    cache = alloc_mla_cache(8, 16, 512, 64, torch.bfloat16, "cpu")
    assert cache.numel() * cache.element_size() == mla_cache_bytes(8 * 16, 512, 64, 2)
    assert mla_cache_bytes(1, 512, 64, 1, fp8_scale=True) == 576 + 4


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_deepseek_shape_gpu():
    R, P, H, bs = 512, 64, 128, 64
    lens = [4099, 1000, 2048]
    cache, bt, sl, *_ = _fill(lens, R, P, bs, torch.bfloat16, "cuda", num_blocks=200)
    q_latent = torch.randn(3, H, R, device="cuda") / math.sqrt(R)
    q_rope = torch.randn(3, H, P, device="cuda")
    sm = 1.0 / math.sqrt(192)
    out = mla_decode(q_latent, q_rope, cache, bt, sl, scale=sm)
    ref = mla_decode_reference(q_latent, q_rope, cache, bt, sl, scale=sm)
    torch.testing.assert_close(out.double(), ref, atol=3e-2, rtol=3e-2)
