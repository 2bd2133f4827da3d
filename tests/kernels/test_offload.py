"""Offload / resume: block copy kernel vs torch, byte-exact round trip, decode unchanged after resume."""
import pytest
import torch

from _paged_case import poison_
from kvplan.kernels.allocator import BlockAllocator, OutOfBlocksError
from kvplan.kernels.offload import copy_blocks, copy_blocks_reference, offload_sequence, resume_sequence
from kvplan.kernels.paged_decode import paged_decode
from kvplan.kernels.paged_write import paged_write
from kvplan.kernels.quant_write import QuantKV


@pytest.mark.parametrize("shape,dtype", [((7, 16, 2, 64), torch.bfloat16), ((5, 3, 1, 5), torch.uint8),
                                         ((6, 16, 3, 64), torch.float8_e4m3fn)])
def test_copy_blocks_matches_reference(device, shape, dtype):
    src = torch.randint(0, 255, shape, dtype=torch.uint8, device=device).view(dtype)
    ids = torch.tensor([4, 0, 2], device=device)
    for kw in (dict(src_ids=ids), dict(dst_ids=ids), dict(src_ids=ids, dst_ids=ids.flip(0).contiguous())):
        a = poison_(torch.empty_like(src))
        b = a.clone()
        copy_blocks(src, a, **kw)
        copy_blocks_reference(src, b, **kw)
        assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def test_copy_blocks_bad_ids(device):
    t = torch.zeros(4, 8, device=device)
    with pytest.raises(ValueError, match="src_ids"):
        copy_blocks(t, t.clone(), src_ids=torch.tensor([4], device=device))
    with pytest.raises(ValueError, match="dst"):
        copy_blocks(t, torch.zeros(4, 9, device=device))


def _setup(device, bs=16, nb=12):
    alloc = BlockAllocator(nb, bs)
    layers = []
    for dtype in (torch.bfloat16, torch.float8_e4m3fn):  # two layers, different dtypes
        layers.append([poison_(torch.empty(nb, bs, 2, 64, dtype=dtype, device=device)) for _ in range(2)])
    scale = torch.tensor([0.02], device=device)
    return alloc, layers, scale


def _write_seq(alloc, layers, scale, seq_id, tokens, device, bs=16):
    table = alloc.allocate(seq_id, tokens)
    t = torch.arange(len(tokens))
    slots = (torch.tensor(table)[t // bs] * bs + t % bs).to(device)
    for kc, vc in layers:
        k = torch.randn(len(tokens), 2, 64, device=device)
        paged_write(k, torch.randn_like(k), kc, vc, slots, k_scale=scale, v_scale=scale)
    return table


def _decode(layers, scale, table, n, q, device):
    bt = torch.tensor([table], dtype=torch.int32, device=device)
    lens = torch.tensor([n], dtype=torch.int32, device=device)
    return [paged_decode(q, kc, vc, bt, lens, k_scale=scale, v_scale=scale, num_splits=2) for kc, vc in layers]


def _seq_bytes(layers, table):
    ids = torch.tensor([b for b in table if b >= 0])
    return [t[ids.to(t.device)].view(torch.uint8).clone() for pair in layers for t in pair]


@pytest.mark.parametrize("evict", [False, True])
def test_offload_resume_round_trip(device, evict):
    alloc, layers, scale = _setup(device)
    tensors = [t for pair in layers for t in pair]
    toks_a = list(range(1000, 1037))  # 37 tokens: 2 full blocks + 1 partial
    table_a = _write_seq(alloc, layers, scale, "a", toks_a, device)
    _write_seq(alloc, layers, scale, "b", list(range(50)), device)
    q = torch.randn(1, 4, 64, device=device)
    before_out = _decode(layers, scale, table_a, 37, q, device)
    before_bytes = _seq_bytes(layers, table_a)
    off = offload_sequence(alloc, "a", tensors)
    assert not alloc.has_seq("a")
    assert off.nbytes == 3 * sum(t[0].numel() * t.element_size() for t in tensors)
    if evict:
        # another sequence takes every free block (evicting a's cached ones), overwrites them, leaves
        c = alloc.allocate("c", list(range(2000, 2000 + 16 * alloc.num_free_blocks())))
        assert set(c) & set(table_a)
        for b in c:
            for t in tensors:
                poison_(t[b])
        alloc.free("c")
    table = resume_sequence(alloc, off, tensors)
    after_bytes = _seq_bytes(layers, table)
    assert all(torch.equal(x, y) for x, y in zip(after_bytes, before_bytes))
    after_out = _decode(layers, scale, table, 37, q, device)
    for x, y in zip(before_out, after_out):
        assert torch.equal(x, y)
    alloc.check_invariants()
    if not evict:
        assert alloc.stats()["prefix_hits"] == 2  # the 2 full blocks came back from the prefix cache


def test_offload_with_window_released_and_quant_tensors(device):
    alloc = BlockAllocator(8, 16)
    qkv = QuantKV.empty(8, 16, 2, 64, bits=4, group_k_tokens=16, group_v_channels=32, device=device)
    for t in qkv.tensors()[:-1]:
        t.view(torch.uint8).copy_(torch.randint(0, 255, t.view(torch.uint8).shape, dtype=torch.uint8))
    per_block = qkv.tensors()[:-1]  # the residual row is per sequence, not per block
    alloc.allocate("s", list(range(60)))
    assert alloc.release_outside_window("s", 20) == 2
    table = alloc.block_table("s")
    before = [t[torch.tensor(table[2:])].clone() for t in per_block]
    off = offload_sequence(alloc, "s", per_block)
    assert off.n_released == 2 and off.n_blocks == 2
    alloc.allocate("x", [7] * 100)  # takes blocks, evicting the cached ones
    alloc.free("x")
    new = resume_sequence(alloc, off, per_block)
    assert new[:2] == [-1, -1]
    for t, want in zip(per_block, before):
        assert torch.equal(t[torch.tensor(new[2:])].view(torch.uint8), want.view(torch.uint8))
    alloc.check_invariants()


def test_resume_out_of_blocks(device):
    alloc, layers, scale = _setup(device, nb=4)
    tensors = [t for pair in layers for t in pair]
    _write_seq(alloc, layers, scale, "a", list(range(40)), device)
    off = offload_sequence(alloc, "a", tensors)
    alloc.allocate("hog", list(range(100, 164)))
    with pytest.raises(OutOfBlocksError):
        resume_sequence(alloc, off, tensors)
    alloc.check_invariants()
    with pytest.raises(ValueError, match="tensors"):
        resume_sequence(alloc, off, tensors[:2])
