"""A write whose every slot is padding (-1) launches the kernels and changes nothing.

kvplan bench relies on it: on CUDA it runs the prefill once with every slot padded
so that Triton compiles the kernels before the timed write (bench/timing.time_once).
"""
import torch

from kvplan.kernels.mla_cache import alloc_mla_cache, mla_write
from kvplan.kernels.paged_write import paged_write
from kvplan.kernels.quant_write import QuantKV, quant_write
from kvplan.kernels.quest_meta import alloc_quest_meta, quest_meta_update


def _poisoned(*tensors):
    for t in tensors:
        if t.dtype.is_floating_point and t.element_size() > 1:
            t.fill_(float("nan"))
        else:
            t.view(torch.uint8).fill_(0x5A)
    return [t.clone() for t in tensors]


def _same(before, after):
    for a, b in zip(before, after):
        assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def test_paged_fp8_and_quest_meta_untouched(device):
    n, bs, h, d = 4, 16, 2, 64
    kc = torch.empty(n, bs, h, d, dtype=torch.float8_e4m3fn, device=device)
    vc = torch.empty_like(kc)
    k_min, k_max = alloc_quest_meta(n, h, d, device=device, dtype=torch.bfloat16)
    before = _poisoned(kc, vc, k_min, k_max)
    k = torch.randn(17, h, d, device=device, dtype=torch.bfloat16)
    slots = torch.full((17,), -1, dtype=torch.int64, device=device)
    scale = torch.full((1,), 0.01, device=device)
    paged_write(k, k, kc, vc, slots, k_scale=scale, v_scale=scale)
    quest_meta_update(kc, k_min, k_max, slots, k_scale=scale)
    _same(before, [kc, vc, k_min, k_max])


def test_kivi_untouched(device):
    q = QuantKV.empty(4, 16, 2, 64, bits=4, group_k_tokens=16, group_v_channels=32, max_batch=2,
                      residual_dtype=torch.float16, device=device)
    tensors = [q.k_codes, q.v_codes, q.k_scale, q.k_zero, q.v_scale, q.v_zero, q.k_residual]
    before = _poisoned(*tensors)
    k = torch.randn(17, 2, 64, device=device, dtype=torch.bfloat16)
    slots = torch.full((17,), -1, dtype=torch.int64, device=device)
    quant_write(k, k, q, slots, torch.zeros(17, dtype=torch.int64, device=device))
    _same(before, tensors)


def test_latent_untouched(device):
    lat = alloc_mla_cache(4, 16, 32, 16, dtype=torch.bfloat16, device=device)
    before = _poisoned(lat)
    rows = torch.randn(17, 48, device=device, dtype=torch.bfloat16)
    mla_write(rows[:, :32].contiguous(), rows[:, 32:].contiguous(), lat,
              torch.full((17,), -1, dtype=torch.int64, device=device))
    _same(before, [lat])
