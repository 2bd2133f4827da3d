"""paged_write against its torch reference: bf16/fp16/fp32/fp8 caches, padding slots, bad inputs."""
import pytest
import torch

from kvplan.kernels.paged_write import paged_write, paged_write_reference, quantize_fp8_reference

NAN_BYTE = 0xFF  # all-ones bytes are NaN in e4m3fn, bf16, fp16 and fp32


def _poisoned_cache(shape, dtype, device):
    c = torch.empty(shape, dtype=dtype, device=device)
    c.view(torch.uint8).fill_(NAN_BYTE)
    return c


def _case(device, dtype, num_tokens=17, heads=3, head_dim=64, num_blocks=5, block_size=16,
          in_dtype=torch.float32, per_head=False, pad_every=5):
    k = torch.randn(num_tokens, heads, head_dim, device=device, dtype=in_dtype) * 3
    v = torch.randn(num_tokens, heads, head_dim, device=device, dtype=in_dtype) * 3
    slots = torch.randperm(num_blocks * block_size, device=device)[:num_tokens].to(torch.int64)
    slots[::pad_every] = -1
    shape = (num_blocks, block_size, heads, head_dim)
    kc, vc = _poisoned_cache(shape, dtype, device), _poisoned_cache(shape, dtype, device)
    kr, vr = kc.clone(), vc.clone()
    ks = vs = None
    if dtype == torch.float8_e4m3fn:
        n = heads if per_head else 1
        ks = torch.rand(n, device=device) * 0.02 + 0.005  # some values saturate at 448
        vs = torch.rand(n, device=device) * 0.05 + 0.01
    paged_write(k, v, kc, vc, slots, k_scale=ks, v_scale=vs)
    paged_write_reference(k, v, kr, vr, slots, k_scale=ks, v_scale=vs)
    return k, v, kc, vc, kr, vr, slots, ks, vs


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_matches_reference_bitwise(device, dtype, head_dim):
    k, v, kc, vc, kr, vr, slots, ks, vs = _case(device, dtype, head_dim=head_dim)
    # bitwise equal, including untouched (poisoned) slots
    assert torch.equal(kc.view(torch.uint8), kr.view(torch.uint8))
    assert torch.equal(vc.view(torch.uint8), vr.view(torch.uint8))
    written = slots[slots >= 0]
    flat = kc.view(-1, *kc.shape[2:]).float()
    assert not torch.isnan(flat[written]).any()
    assert torch.isnan(flat).any()  # padding / unused slots were not touched


def test_fp8_per_head_scales_and_saturation(device):
    k, v, kc, vc, kr, vr, slots, ks, vs = _case(device, torch.float8_e4m3fn, per_head=True,
                                                 heads=4, head_dim=64)
    assert torch.equal(kc.view(torch.uint8), kr.view(torch.uint8))
    flat = kc.view(-1, 4, 64).float()
    assert flat[slots[slots >= 0]].abs().max() == 448.0  # saturated, not NaN
    # dequantized error is within half an e4m3 step (2**-4 relative) where not saturated
    keep = slots >= 0
    deq = flat[slots[keep]] * ks.view(1, -1, 1)
    x = k[keep].float()
    ok = (x / ks.view(1, -1, 1)).abs() < 440
    assert ((deq - x).abs() <= x.abs() * 2 ** -4 + 2 ** -9 * ks.max())[ok].all()


def test_bf16_input_odd_heads_strided(device):
    # non-contiguous k (a slice of a bigger tensor), odd head count, fp16 input
    big = torch.randn(17, 5, 2, 64, device=device, dtype=torch.float16)
    k, v = big[:, :, 0], big[:, :, 1]
    slots = torch.arange(17, device=device, dtype=torch.int64) * 2
    kc = _poisoned_cache((3, 16, 5, 64), torch.bfloat16, device)
    vc = _poisoned_cache((3, 16, 5, 64), torch.bfloat16, device)
    kr, vr = kc.clone(), vc.clone()
    paged_write(k, v, kc, vc, slots)
    paged_write_reference(k, v, kr, vr, slots)
    assert torch.equal(kc.view(torch.uint8), kr.view(torch.uint8))
    assert torch.equal(vc.view(torch.uint8), vr.view(torch.uint8))


def test_quantize_reference_round_trip_bound():
    x = torch.randn(1000, 2, 8) * 10
    s = torch.tensor([0.05])
    q = quantize_fp8_reference(x, s).float() * s
    ok = (x / s).abs() < 440
    assert ok.float().mean() > 0.5
    assert ((q - x).abs() <= x.abs() * 2 ** -4 + 2 ** -9 * 0.05 + 1e-12)[ok].all()
    assert (q[~ok].abs() == 448 * 0.05).all()


def test_bad_inputs(device):
    k = torch.randn(4, 2, 64, device=device)
    kc = torch.zeros(2, 16, 2, 64, device=device, dtype=torch.bfloat16)
    vc = kc.clone()
    s = torch.arange(4, device=device, dtype=torch.int64)
    with pytest.raises(ValueError, match="slot_mapping"):
        paged_write(k, k, kc, vc, s.to(torch.int32))
    with pytest.raises(ValueError, match="slot_mapping"):
        paged_write(k, k, kc, vc, torch.tensor([0, 1, 2, 32], device=device))
    with pytest.raises(ValueError, match="slot_mapping"):
        paged_write(k, k, kc, vc, torch.tensor([0, 1, -2, 3], device=device))
    with pytest.raises(ValueError, match="slot_mapping"):
        paged_write(k, k, kc, vc, s[:3])
    with pytest.raises(ValueError, match="^k:"):
        paged_write(torch.randn(4, 3, 64, device=device), k, kc, vc, s)
    with pytest.raises(ValueError, match="^v:"):
        paged_write(k, k[:, :, :32], kc, vc, s)
    with pytest.raises(ValueError, match="k_cache"):
        paged_write(k, k, kc.transpose(1, 2), vc, s)
    with pytest.raises(ValueError, match="v_cache"):
        paged_write(k, k, kc, vc.half(), s)
    f8 = kc.to(torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="k_scale"):
        paged_write(k, k, f8, f8.clone(), s)
    with pytest.raises(ValueError, match="k_scale"):
        paged_write(k, k, f8, f8.clone(), s, k_scale=torch.ones(3, device=device),
                    v_scale=torch.ones(1, device=device))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float8_e4m3fn])
def test_many_tokens_per_program_match_the_reference(device, dtype):
    # more tokens than one interpreted program takes (64): a full program, a partial
    # last one, padding slots in both, per-head fp8 scales
    k, v, kc, vc, kr, vr, slots, ks, vs = _case(device, dtype, num_tokens=150, heads=2, head_dim=64, num_blocks=12,
                                                 per_head=True, pad_every=7)
    assert torch.equal(kc.view(torch.uint8), kr.view(torch.uint8))
    assert torch.equal(vc.view(torch.uint8), vr.view(torch.uint8))
