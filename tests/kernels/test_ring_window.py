"""Ring-buffer window cache: write + decode vs logical-order reference and vs a windowed full cache."""
import pytest
import torch

from _paged_case import make_case
from kvplan.kernels.paged_decode import paged_decode
from kvplan.kernels.ring_window import (
    RingWindowCache,
    ring_decode_reference,
    ring_gather_logical,
    ring_slot_mapping,
)

from _tol import DOT_ATOL as ATOL


def _fill(ring, src, chunks):
    """Write each sequence's tokens in chunks; chunk sizes may exceed the window."""
    pos = [0] * len(src)
    i = 0
    while any(p < k.shape[0] for p, (k, _) in zip(pos, src)):
        ks, vs, ps, bs = [], [], [], []
        for b, (k, v) in enumerate(src):
            n = min(chunks[(i + b) % len(chunks)], k.shape[0] - pos[b])
            ks.append(k[pos[b]:pos[b] + n])
            vs.append(v[pos[b]:pos[b] + n])
            ps.append(torch.arange(pos[b], pos[b] + n))
            bs.append(torch.full((n,), b))
            pos[b] += n
        dev = src[0][0].device
        ring.write(torch.cat(ks), torch.cat(vs), torch.cat(ps).to(dev), torch.cat(bs).to(dev))
        i += 1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float8_e4m3fn])
@pytest.mark.parametrize("window,block_size", [(20, 16), (32, 16), (7, 5)])
def test_ring_decode_matches_window(device, dtype, window, block_size):
    lens = [50, 7, 33]
    case = make_case(lens, num_q_heads=4, num_kv_heads=2, head_dim=64, block_size=16,
                     dtype=dtype, device=device)
    ring = RingWindowCache(window, 3, block_size, 2, 64, dtype=dtype, device=device,
                           k_scale=case["k_scale"], v_scale=case["v_scale"])
    before = ring.nbytes()
    _fill(ring, case["src"], chunks=(25, 1, 3))
    assert ring.nbytes() == before == 2 * 3 * -(-window // block_size) * block_size * 2 * 64 * ring.k_cache.element_size()
    q = case["q"]
    out = ring.decode(q, case["seq_lens"], num_splits=2, out=torch.full(q.shape, float("nan"), device=device))
    want = ring_decode_reference(q, ring.k_cache, ring.v_cache, ring.block_table, case["seq_lens"],
                                 window, k_scale=case["k_scale"], v_scale=case["v_scale"])
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)
    # same as a windowed decode over the full paged cache of the same tokens
    full = paged_decode(q, case["k_cache"], case["v_cache"], case["block_table"], case["seq_lens"],
                        window_tokens=window, k_scale=case["k_scale"], v_scale=case["v_scale"])
    torch.testing.assert_close(out, full, atol=ATOL, rtol=0)


def test_logical_order_and_overwrite(device):
    ring = RingWindowCache(5, 1, 4, 1, 64, dtype=torch.float32, device=device)
    k = torch.arange(12, dtype=torch.float32, device=device)[:, None, None].expand(12, 1, 64).contiguous()
    ring.write(k, k, torch.arange(12, device=device), torch.zeros(12, dtype=torch.long, device=device))
    kl, _ = ring_gather_logical(ring.k_cache, ring.v_cache, ring.block_table, 12, 0, 5)
    assert kl[:, 0, 0].tolist() == [7, 8, 9, 10, 11]
    slots = ring_slot_mapping(torch.arange(12, device=device), torch.zeros(12, dtype=torch.long, device=device),
                              ring.block_table, 4, 5)
    assert (slots[:7] == -1).all() and sorted(slots[7:].tolist()) == [0, 1, 2, 3, 4]


def test_bad_inputs(device):
    ring = RingWindowCache(5, 2, 4, 1, 64, device=device)
    with pytest.raises(ValueError, match="window_tokens"):
        RingWindowCache(0, 1, 4, 1, 64)
    with pytest.raises(ValueError, match="batch_index"):
        ring_slot_mapping(torch.arange(3), torch.tensor([0, 1, 2]), ring.block_table, 4, 5)
    with pytest.raises(ValueError, match="block_table"):
        ring_slot_mapping(torch.arange(3), torch.zeros(3, dtype=torch.long), ring.block_table, 4, 9)
    with pytest.raises(ValueError, match="positions"):
        ring_slot_mapping(torch.arange(3.0), torch.zeros(3, dtype=torch.long), ring.block_table, 4, 5)
