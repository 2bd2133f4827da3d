"""KIVI int4/int2 write and decode: kernel vs torch reference, byte counts, error bounds.

Tolerances: codes and fp16 scales/zeros are compared exactly on CPU (same fp32
ops); on a GPU a code may differ by one step where (x - zero) / scale lands on a
rounding tie, so there the dequantized values are compared within one scale
step. Decode is compared with the float64 reference over the *same dequantized*
K,V (2e-5 abs under the interpreter, 3e-2 on a GPU). Against the bf16 result on
unit-normal data the int4 output stays within 0.15 max / 0.05 mean abs error and
int2 within 1.0 max / 0.3 mean (values quantized per token over 32 channels:
step ~ range/15 resp. range/3, so one int2 value can be off by ~0.8).
"""
import pytest
import torch

from _paged_case import make_block_table, poison_
from kvplan.kernels.paged_decode import paged_decode, paged_decode_reference
from kvplan.kernels.quant_write import (
    QuantKV,
    quant_bytes_per_token,
    quant_cache_bytes,
    quant_dequant_reference,
    quant_write,
    quant_write_reference,
)

from _tol import ON_GPU, DOT_ATOL as ATOL


def _poisoned_quant(nb, bs, h, d, bits, gk, gv, batch, device):
    c = QuantKV.empty(nb, bs, h, d, bits=bits, group_k_tokens=gk, group_v_channels=gv,
                      max_batch=batch, residual_dtype=torch.float32, device=device)
    for t in c.tensors():
        poison_(t)
    return c


def _clone(c):
    return QuantKV(c.bits, c.group_k_tokens, c.group_v_channels, *[t.clone() for t in c.tensors()])


def _write_in_chunks(seq_lens, caches, writer, h, d, bs, device, chunks=(5, 1, 13)):
    """Write each sequence's tokens in ragged chunks (prefill piece, single tokens, ...)."""
    bt, nb, slots = make_block_table(seq_lens, bs, device)
    src = [(torch.randn(L, h, d, device=device), torch.randn(L, h, d, device=device)) for L in seq_lens]
    pos = [0] * len(seq_lens)
    step = 0
    while any(p < L for p, L in zip(pos, seq_lens)):
        ks, vs, sl, bi = [], [], [], []
        for b, L in enumerate(seq_lens):
            n = min(chunks[(step + b) % len(chunks)], L - pos[b])
            if n <= 0:
                continue
            ks.append(src[b][0][pos[b]:pos[b] + n])
            vs.append(src[b][1][pos[b]:pos[b] + n])
            sl.append(slots[b][pos[b]:pos[b] + n].to(device))
            bi.append(torch.full((n,), b, dtype=torch.int32, device=device))
            pos[b] += n
        # a padding token in the middle of the chunk
        ks.append(torch.zeros(1, h, d, device=device))
        vs.append(torch.zeros(1, h, d, device=device))
        sl.append(torch.full((1,), -1, dtype=torch.int64, device=device))
        bi.append(torch.zeros(1, dtype=torch.int32, device=device))
        k, v, s, i = torch.cat(ks), torch.cat(vs), torch.cat(sl), torch.cat(bi)
        for c in caches:
            writer(k, v, c, s, i)
        step += 1
    return bt, src


@pytest.mark.parametrize("bits", [4, 2])
@pytest.mark.parametrize("d,gk,gv", [(64, 16, 32), (128, 8, 64)])
def test_write_matches_reference(device, bits, d, gk, gv):
    seq_lens, h, bs = [17, 40, 5], 2, 16
    bt, nb, _ = make_block_table(seq_lens, bs, device)
    c1 = _poisoned_quant(nb + 1, bs, h, d, bits, gk, gv, 3, device)
    c2 = _clone(c1)
    torch.manual_seed(1)
    bt, src = _write_in_chunks(seq_lens, [c1], quant_write, h, d, bs, device)
    torch.manual_seed(1)
    bt2, _ = _write_in_chunks(seq_lens, [c2], quant_write_reference, h, d, bs, device)
    assert torch.equal(bt, bt2)
    for a, b in zip(c1.tensors(), c2.tensors()):
        if ON_GPU and a.dtype == torch.uint8:
            continue  # ties may round differently; dequantized check below
        assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))
    lens = torch.tensor(seq_lens, dtype=torch.int32)
    for b, L in enumerate(seq_lens):
        k, v = quant_dequant_reference(c1.k_codes, c1.v_codes, c1, bt[b], L, b)
        assert not torch.isnan(k).any() and not torch.isnan(v).any()
        # quantization error: at most half a step (+ fp16 rounding of zero/scale)
        k_src, v_src = src[b]
        rng_v = v_src.reshape(L, h, d // gv, gv)
        step_v = (rng_v.amax(-1) - rng_v.amin(-1)) / ((1 << bits) - 1)
        err_v = (v - v_src).reshape(L, h, d // gv, gv).abs().amax(-1)
        assert (err_v <= 0.5 * step_v * 1.01 + 2e-3).all()
        quant_len = L - L % gk
        assert torch.equal(k[quant_len:], k_src[quant_len:])  # residual keys exact (fp32 buffer)
        if quant_len:
            kg = k_src[:quant_len].reshape(-1, gk, h, d)
            step_k = (kg.amax(1) - kg.amin(1)) / ((1 << bits) - 1)
            err_k = (k[:quant_len] - k_src[:quant_len]).reshape(-1, gk, h, d).abs().amax(1)
            assert (err_k <= 0.5 * step_k * 1.01 + 2e-3).all()
    del lens


@pytest.mark.parametrize("bits", [4, 2])
def test_decode_matches_reference_and_bf16_bound(device, bits):
    seq_lens, hq, h, d, bs = [17, 45, 3], 4, 2, 64, 16
    bt, nb, _ = make_block_table(seq_lens, bs, device)
    c = _poisoned_quant(nb + 1, bs, h, d, bits, 8, 32, 3, device)
    bt, src = _write_in_chunks(seq_lens, [c], quant_write, h, d, bs, device)
    lens = torch.tensor(seq_lens, dtype=torch.int32, device=device)
    q = torch.randn(3, hq, d, device=device)
    out = torch.full((3, hq, d), float("nan"), device=device)
    paged_decode(q, c.k_codes, c.v_codes, bt, lens, quant=c, num_splits=2, out=out)
    want = paged_decode_reference(q, c.k_codes, c.v_codes, bt, lens, quant=c)
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)
    # against unquantized attention over the float32 source
    exact = torch.zeros_like(want)
    for b, (k, v) in enumerate(src):
        kk = k.double().repeat_interleave(hq // h, 1)
        vv = v.double().repeat_interleave(hq // h, 1)
        p = torch.softmax(torch.einsum("hd,thd->ht", q[b].double(), kk) / d ** 0.5, -1)
        exact[b] = torch.einsum("ht,thd->hd", p, vv)
    err = (out.double() - exact).abs()
    max_bound, mean_bound = (0.15, 0.05) if bits == 4 else (1.0, 0.3)
    assert err.max() < max_bound and err.mean() < mean_bound, (err.max(), err.mean())


@pytest.mark.parametrize("bits,gv", [(4, 64), (2, 8)])
def test_decode_window_with_quant(device, bits, gv):
    seq_lens, h, d, bs = [40, 9], 1, 64, 16
    bt, nb, _ = make_block_table(seq_lens, bs, device)
    c = _poisoned_quant(nb + 1, bs, h, d, bits, 16, gv, 2, device)
    bt, _ = _write_in_chunks(seq_lens, [c], quant_write, h, d, bs, device)
    lens = torch.tensor(seq_lens, dtype=torch.int32, device=device)
    q = torch.randn(2, 2, d, device=device)
    out = paged_decode(q, c.k_codes, c.v_codes, bt, lens, quant=c, window_tokens=20)
    want = paged_decode_reference(q, c.k_codes, c.v_codes, bt, lens, quant=c, window_tokens=20)
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)


def test_byte_counts():
    c = QuantKV.empty(10, 16, 8, 128, bits=4, group_k_tokens=16, group_v_channels=32, max_batch=3)
    info = quant_cache_bytes(10, 16, 8, 128, bits=4, group_k_tokens=16, group_v_channels=32, max_batch=3)
    assert info["total"] == c.nbytes()
    assert quant_bytes_per_token(8, 128, 4, 16, 32) == 1408
    assert info["block_bytes"] == 1408 * 16
    assert info["k_residual"] == 3 * 16 * 8 * 128 * 2
    c2 = QuantKV.empty(7, 16, 2, 64, bits=2, group_k_tokens=8, group_v_channels=16, max_batch=1,
                       residual_dtype=torch.bfloat16)
    i2 = quant_cache_bytes(7, 16, 2, 64, bits=2, group_k_tokens=8, group_v_channels=16)
    assert i2["total"] == c2.nbytes()
    # 2*2*64*2/8 + 4*2*64/8 + 4*2*64/16 = 64 + 64 + 32
    assert quant_bytes_per_token(2, 64, 2, 8, 16) == 160


def test_bad_inputs(device):
    with pytest.raises(ValueError, match="group_k_tokens"):
        QuantKV.empty(4, 16, 2, 64, group_k_tokens=5)
    with pytest.raises(ValueError, match="bits"):
        QuantKV.empty(4, 16, 2, 64, bits=3)
    with pytest.raises(ValueError, match="head_dim"):
        QuantKV.empty(4, 16, 2, 80)
    c = QuantKV.empty(4, 16, 2, 64, max_batch=2, device=device)
    k = torch.randn(3, 2, 64, device=device)
    s = torch.tensor([0, 1, 2], device=device)
    bi = torch.zeros(3, dtype=torch.int32, device=device)
    with pytest.raises(ValueError, match="slot_mapping"):
        quant_write(k, k, c, torch.tensor([0, 1, 64], device=device), bi)
    with pytest.raises(ValueError, match="batch_index"):
        quant_write(k, k, c, s, bi + 2)
    with pytest.raises(ValueError, match="^k:"):
        quant_write(k[:, :1], k, c, s, bi)
    q = torch.randn(1, 2, 64, device=device)
    bt = torch.zeros(1, 1, dtype=torch.int32, device=device)
    lens = torch.ones(1, dtype=torch.int32, device=device)
    with pytest.raises(ValueError, match="k_cache"):
        paged_decode(q, c.k_codes[:, :, :, :8].contiguous(), c.v_codes, bt, lens, quant=c)
    with pytest.raises(ValueError, match="quant.k_residual"):
        paged_decode(torch.randn(3, 2, 64, device=device), c.k_codes, c.v_codes,
                     bt.expand(3, 1).contiguous(), lens.expand(3).contiguous(), quant=c)


@pytest.mark.gpu
@pytest.mark.skipif(not ON_GPU, reason="needs CUDA")
def test_large_gpu_int4(device):
    seq_lens, h, d, bs = [2000, 1, 777, 4096], 8, 128, 16
    bt, nb, _ = make_block_table(seq_lens, bs, device)
    c = _poisoned_quant(nb + 1, bs, h, d, 4, 16, 32, 4, device)
    bt, _ = _write_in_chunks(seq_lens, [c], quant_write, h, d, bs, device, chunks=(600, 1, 37))
    lens = torch.tensor(seq_lens, dtype=torch.int32, device=device)
    q = torch.randn(4, 32, d, device=device, dtype=torch.bfloat16)
    out = paged_decode(q, c.k_codes, c.v_codes, bt, lens, quant=c)
    want = paged_decode_reference(q.float(), c.k_codes, c.v_codes, bt, lens, quant=c)
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)


def test_long_prefill_chunks_match_the_reference(device):
    # chunks longer than one interpreted program (64 tokens): whole and partial programs, a padding token
    seq_lens, h, d, bs, bits, gk, gv = [150, 70], 2, 64, 16, 4, 16, 32
    bt, nb, _ = make_block_table(seq_lens, bs, device)
    c1 = _poisoned_quant(nb + 1, bs, h, d, bits, gk, gv, 2, device)
    c2 = _clone(c1)
    torch.manual_seed(3)
    _write_in_chunks(seq_lens, [c1], quant_write, h, d, bs, device, chunks=(150, 70))
    torch.manual_seed(3)
    _write_in_chunks(seq_lens, [c2], quant_write_reference, h, d, bs, device, chunks=(150, 70))
    for a, b in zip(c1.tensors(), c2.tensors()):
        if ON_GPU and a.dtype == torch.uint8:
            continue  # ties may round differently on a GPU
        assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))
