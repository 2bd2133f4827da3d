"""paged_decode against the float64 torch reference: dtypes, GQA, splits, windows, ragged lengths.

Tolerances (out vs reference computed from the *same stored / dequantized* K,V):
fp32 q under the interpreter: 2e-5 abs; on a GPU (bf16 q, bf16/fp8 dots, bf16 P):
3e-2 abs. Against the unquantized float32 source, fp8 (e4m3, 3 mantissa bits)
stays within 0.1 abs for unit-variance inputs (see test_fp8_vs_bf16_error_bound).
"""
import pytest
import torch

from _paged_case import make_case, poison_
from kvplan.kernels.paged_decode import paged_decode, paged_decode_reference

from _tol import ON_GPU, DOT_ATOL as ATOL


def _run(case, q_dtype=None, **kw):
    q = case["q"].to(torch.bfloat16) if ON_GPU else case["q"]
    if q_dtype is not None:
        q = q.to(q_dtype)
    out = torch.full(q.shape, float("nan"), device=q.device)
    got = paged_decode(q, case["k_cache"], case["v_cache"], case["block_table"], case["seq_lens"],
                       k_scale=case["k_scale"], v_scale=case["v_scale"], out=out, **kw)
    assert got is out
    want = paged_decode_reference(q.float(), case["k_cache"], case["v_cache"], case["block_table"],
                                  case["seq_lens"], k_scale=case["k_scale"],
                                  v_scale=case["v_scale"], **kw)
    assert not torch.isnan(out).any()
    return out, want


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float8_e4m3fn])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_matches_reference(device, dtype, head_dim):
    case = make_case([17, 45, 3], num_q_heads=4, num_kv_heads=2, head_dim=head_dim,
                     block_size=16, dtype=dtype, device=device)
    out, want = _run(case, num_splits=2)
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)


@pytest.mark.parametrize("num_splits", [1, 3])
def test_gqa_splits_block_size_odd(device, num_splits):
    # group of 3 query heads per kv head, block size 5 (odd, not a tile multiple)
    case = make_case([23, 1, 64], num_q_heads=6, num_kv_heads=2, head_dim=64, block_size=5,
                     dtype=torch.bfloat16, device=device)
    out, want = _run(case, num_splits=num_splits, block_n=16, q_dtype=torch.bfloat16)
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)


def test_fp8_per_head_scale_and_lse(device):
    case = make_case([40, 29], num_q_heads=8, num_kv_heads=2, head_dim=64, block_size=16,
                     dtype=torch.float8_e4m3fn, device=device, per_head_scale=True)
    q = case["q"]
    out, lse = paged_decode(q, case["k_cache"], case["v_cache"], case["block_table"],
                            case["seq_lens"], k_scale=case["k_scale"], v_scale=case["v_scale"],
                            num_splits=2, return_lse=True)
    wo, wl = paged_decode_reference(q, case["k_cache"], case["v_cache"], case["block_table"],
                                    case["seq_lens"], k_scale=case["k_scale"],
                                    v_scale=case["v_scale"], return_lse=True)
    torch.testing.assert_close(out.double(), wo, atol=ATOL, rtol=0)
    torch.testing.assert_close(lse.double(), wl, atol=ATOL, rtol=0)


@pytest.mark.parametrize("window", [1, 20, 100])
def test_sliding_window(device, window):
    case = make_case([50, 7, 33], num_q_heads=2, num_kv_heads=1, head_dim=64, block_size=16,
                     dtype=torch.bfloat16, device=device)
    # blocks wholly before the window are released (-1) and poisoned: must not be read
    bt = case["block_table"].clone()
    for b, L in enumerate(case["seq_lens"].tolist()):
        first = max(0, L - window) // 16
        for blk in bt[b, :first].tolist():
            poison_(case["k_cache"][blk])
            poison_(case["v_cache"][blk])
        bt[b, :first] = -1
    case["block_table"] = bt
    out, want = _run(case, window_tokens=window, num_splits=2)
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)


def test_empty_sequence_and_custom_scale(device):
    case = make_case([0, 19], num_q_heads=2, num_kv_heads=2, head_dim=64, block_size=16,
                     dtype=torch.float16, device=device)
    out, want = _run(case, scale=0.3, num_splits=3, q_dtype=torch.float16)
    assert (out[0] == 0).all()
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)


def test_fp8_vs_bf16_error_bound(device):
    """fp8 KV (per-tensor scale chosen from the data) stays close to the bf16 result."""
    lens = [37, 60]
    c16 = make_case(lens, num_q_heads=4, num_kv_heads=2, head_dim=64, block_size=16,
                    dtype=torch.bfloat16, device=device)
    ref16 = paged_decode(c16["q"], c16["k_cache"], c16["v_cache"], c16["block_table"], c16["seq_lens"])
    # rewrite the same float32 source into an fp8 cache with amax/448 scales
    from kvplan.kernels.paged_write import paged_write
    amax_k = max(k.abs().max() for k, _ in c16["src"])
    amax_v = max(v.abs().max() for _, v in c16["src"])
    ks = (amax_k / 448).reshape(1).float().to(device)
    vs = (amax_v / 448).reshape(1).float().to(device)
    kc = torch.empty_like(c16["k_cache"], dtype=torch.float8_e4m3fn)
    vc = torch.empty_like(kc)
    for (k, v), sl in zip(c16["src"], c16["slots"]):
        paged_write(k, v, kc, vc, sl.to(device), k_scale=ks, v_scale=vs)
    out8 = paged_decode(c16["q"], kc, vc, c16["block_table"], c16["seq_lens"], k_scale=ks, v_scale=vs)
    err = (out8 - ref16).abs().max().item()
    assert err < 0.1, err


def test_bad_inputs(device):
    case = make_case([20, 9], num_q_heads=4, num_kv_heads=2, head_dim=64, block_size=16,
                     dtype=torch.bfloat16, device=device)
    q, kc, vc, bt, lens = (case[n] for n in ("q", "k_cache", "v_cache", "block_table", "seq_lens"))
    with pytest.raises(ValueError, match="^q:"):
        paged_decode(q[:, :3], kc, vc, bt, lens)
    with pytest.raises(ValueError, match="^q:"):
        paged_decode(q.double(), kc, vc, bt, lens)
    with pytest.raises(ValueError, match="k_cache"):
        paged_decode(q[..., :32].contiguous(), kc, vc, bt, lens)
    with pytest.raises(ValueError, match="v_cache"):
        paged_decode(q, kc, vc.half(), bt, lens)
    with pytest.raises(ValueError, match="block_table"):
        paged_decode(q, kc, vc, bt.long(), lens)
    with pytest.raises(ValueError, match="seq_lens"):
        paged_decode(q, kc, vc, bt, lens[:1])
    bad = bt.clone()
    bad[1, 0] = kc.shape[0]  # out-of-range block id that would be read
    with pytest.raises(ValueError, match=r"block_table: entry \[1, 0\]"):
        paged_decode(q, kc, vc, bad, lens)
    bad = bt.clone()
    bad[0, 1] = -1
    with pytest.raises(ValueError, match="block_table"):
        paged_decode(q, kc, vc, bad, lens)
    with pytest.raises(ValueError, match="block_table"):
        paged_decode(q, kc, vc, bt, torch.tensor([20, 400], dtype=torch.int32, device=device))
    with pytest.raises(ValueError, match="k_scale"):
        paged_decode(q, kc.to(torch.float8_e4m3fn), vc.to(torch.float8_e4m3fn), bt, lens)
    with pytest.raises(ValueError, match="window_tokens"):
        paged_decode(q, kc, vc, bt, lens, window_tokens=0)
    with pytest.raises(ValueError, match="num_splits"):
        paged_decode(q, kc, vc, bt, lens, num_splits=0)


@pytest.mark.gpu
@pytest.mark.skipif(not ON_GPU, reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float8_e4m3fn])
def test_large_gpu(device, dtype):
    lens = [4096, 1, 3000, 8191, 513, 2048, 17, 6000]
    case = make_case(lens, num_q_heads=32, num_kv_heads=8, head_dim=128, block_size=16,
                     dtype=dtype, device=device)
    out, want = _run(case)
    torch.testing.assert_close(out.double(), want, atol=ATOL, rtol=0)


def test_kernels_compile_for_sm90_with_wide_loads():
    """Every part-1 kernel compiles for sm_90 (no GPU needed) without register spills, and
    the decode paths stream K/V with 16-byte cp.async (no per-byte / per-half gathers)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).with_name("_aot_sm90.py")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0 or not r.stdout.strip():
        pytest.skip(f"no NVIDIA compiler backend here: {r.stderr[-500:]}")
    res = json.loads(r.stdout)
    bad = {n: v["error"] for n, v in res.items() if not v["ok"]}
    assert not bad, bad
    spills = {n: v["usage"] for n, v in res.items() if v["usage"].get("local_bytes")}
    assert not spills, spills
    for name in ("decode_bf16", "decode_fp8", "decode_int4", "decode_int2", "decode_fp16_gqa8"):
        loads = res[name]["loads"]
        assert loads.get("cp.async.cg.shared.global", 0) >= 8, (name, loads)
        assert loads.get("ld.global.b8", 0) == 0, (name, loads)
        assert loads.get("ld.global.b16", 0) <= 16, (name, loads)  # the q row only
        assert any(k.startswith("mma.sync") for k in loads), (name, loads)
