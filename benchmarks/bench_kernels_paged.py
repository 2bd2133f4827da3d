"""Benchmark: paged decode over bf16 / fp8 / int4 KV, and offload / resume, on a CUDA device.

    python benchmarks/bench_kernels_paged.py              # CUDA device (H200 targets printed)
    python benchmarks/bench_kernels_paged.py --cpu-smoke  # tiny shape in Triton's interpreter
    python benchmarks/bench_kernels_paged.py --predict 4300  # floors at a copy bandwidth, no GPU

For every (KV dtype, batch, context) it prints the median time (p20-p80) from
``triton.testing.do_bench`` and the achieved bandwidth from an explicit byte
count of what the decode must move at least once:

    KV     = B * L * Hkv * 2 * (D * bytes_per_elem)                bf16: 2, fp8: 1
             int4: codes B*L*Hkv*2*(D/2) + key scale/zero 4*B*(L/GK)*Hkv*D
                   + value scale/zero 4*B*L*Hkv*(D/GV) + residual 2*B*(L%GK)*Hkv*D
             fp8: + 8 bytes of per-tensor scales
    tables = B * ceil(L / block_size) * 4 (block_table) + B * 4 (seq_lens)
    Q, O   = B * Hq * D * q_bytes  +  B * Hq * D * 4 (fp32 out)
    splits = 2 * B * Hq * S * (D + 1) * 4 (partials + LSE written, then read by the merge)

next to a device-to-device copy measured in the same run (bytes = read + write),
the fp8/bf16 and int4/bf16 speed ratios, and offload (gather + D2H) / resume
(H2D + scatter) of one sequence against pinned host<->device copies of the
same size. Targets on an H200 are printed, not asserted.
"""
from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import time


def _parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cpu-smoke", action="store_true", help="tiny shape under TRITON_INTERPRET=1")
    p.add_argument("--batches", default="1,16,64,128")
    p.add_argument("--contexts", default="1024,4096,16384")
    p.add_argument("--q-heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--block-size", type=int, default=16)
    p.add_argument("--layers", type=int, default=8, help="layers moved by offload/resume")
    p.add_argument("--offload-tokens", type=int, default=32768)
    p.add_argument("--predict", type=float, metavar="GBPS",
                   help="print the bytes each decode must move and its floor at GBPS (no GPU needed), then exit")
    return p.parse_args()


ARGS = _parse()


def decode_bytes(kind, B, L, hq, hkv, d, bs, splits, q_bytes=2):
    """Bytes one paged decode must move at least once (the formula in the module docstring)."""
    nblk = math.ceil(L / bs)
    if kind == "bf16":
        kv = B * L * hkv * 2 * d * 2
    elif kind == "fp8":
        kv = B * L * hkv * 2 * d + 8
    else:
        kv = (B * L * hkv * 2 * (d // 2) + 4 * B * (L // GK) * hkv * d
              + 4 * B * L * hkv * (d // GV) + 2 * B * (L % GK) * hkv * d)
    return kv + B * nblk * 4 + B * 4 + B * hq * d * q_bytes + B * hq * d * 4 + 2 * B * hq * splits * (d + 1) * 4


GK, GV = 16, 32  # int4 groups: keys per channel over 16 tokens, values per token over 32 channels


def predict(gbps):
    """The floor of each decode shape at a copy bandwidth: what the GPU run is measured against."""
    hq, hkv, d, bs = ARGS.q_heads, ARGS.kv_heads, ARGS.head_dim, ARGS.block_size
    sms = 132  # H200; default_num_splits on CUDA: ceil(4 * SMs / (B * Hkv)), >= 256 tokens a split, <= 64
    print(f"predicted floors at {gbps:g} GB/s (read + write counted, as the copy ceiling is): "
          f"Hq={hq} Hkv={hkv} D={d} block={bs}, {sms} SMs")
    print(f"{'kv':>5} {'batch':>6} {'ctx':>6} {'splits':>6} {'MB moved':>10} {'floor ms':>10} {'75% ms':>9}")
    for B in (int(x) for x in ARGS.batches.split(",")):
        for L in (int(x) for x in ARGS.contexts.split(",")):
            S = int(max(1, min(-(-4 * sms // (B * hkv)), -(-L // 256), 64)))
            for kind in ("bf16", "fp8", "int4"):
                n = decode_bytes(kind, B, L, hq, hkv, d, bs, S)
                floor = n / (gbps * 1e9) * 1e3
                print(f"{kind:>5} {B:>6} {L:>6} {S:>6} {n / 1e6:>10.1f} {floor:>10.4f} {floor / 0.75:>9.4f}")
    print("fp8 >= 1.7x bf16 needs fp8 within 85% of its floor when bf16 is at its floor "
          "(fp8 moves about half the bytes)")


if ARGS.predict:
    predict(ARGS.predict)
    sys.exit(0)
if ARGS.cpu_smoke:
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

if not ARGS.cpu_smoke and not torch.cuda.is_available():
    print("bench_kernels_paged: no CUDA device. Run on a GPU, or pass --cpu-smoke for a tiny "
          "interpreter run (timings then mean nothing).")
    sys.exit(2)

import triton  # noqa: E402

from kvplan.kernels.allocator import BlockAllocator  # noqa: E402
from kvplan.kernels.offload import gather_blocks, scatter_blocks  # noqa: E402
from kvplan.kernels.paged_decode import default_num_splits, paged_decode  # noqa: E402
from kvplan.kernels.quant_write import QuantKV  # noqa: E402

DEV = "cpu" if ARGS.cpu_smoke else "cuda"


def bench(fn):
    """(median, p20, p80) in ms."""
    if DEV == "cuda":
        return triton.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8])
    fn()
    ts = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return ts[1], ts[0], ts[-1]


def sync():
    if DEV == "cuda":
        torch.cuda.synchronize()


def copy_bandwidth_gbs(nbytes):
    x = torch.empty(nbytes, dtype=torch.uint8, device=DEV)
    y = torch.empty_like(x)
    ms = bench(lambda: y.copy_(x))[0]
    return 2 * nbytes / ms / 1e6


def _random_fp8(shape):
    b = torch.randint(0, 256, shape, dtype=torch.uint8, device=DEV)
    b[(b & 0x7F) == 0x7F] = 0  # no NaN patterns
    return b.view(torch.float8_e4m3fn)


def build(kind, B, L, hq, hkv, d, bs):
    nblk = math.ceil(L / bs)
    num_blocks = B * nblk
    bt = torch.randperm(num_blocks, device=DEV).to(torch.int32).view(B, nblk).contiguous()
    lens = torch.full((B,), L, dtype=torch.int32, device=DEV)
    q = torch.randn(B, hq, d, device=DEV, dtype=torch.bfloat16 if DEV == "cuda" else torch.float32)
    shape = (num_blocks, bs, hkv, d)
    kw = {}
    if kind == "bf16":
        kc = torch.empty(shape, dtype=torch.bfloat16, device=DEV).normal_()
        vc = torch.empty(shape, dtype=torch.bfloat16, device=DEV).normal_()
    elif kind == "fp8":
        kc, vc = _random_fp8(shape), _random_fp8(shape)
        kw = dict(k_scale=torch.ones(1, device=DEV) * 0.01, v_scale=torch.ones(1, device=DEV) * 0.01)
    else:
        qt = QuantKV.empty(num_blocks, bs, hkv, d, bits=4, group_k_tokens=GK, group_v_channels=GV,
                           max_batch=B, device=DEV)
        for t in (qt.k_codes, qt.v_codes):
            t.copy_(torch.randint(0, 256, t.shape, dtype=torch.uint8, device=DEV))
        for t in (qt.k_scale, qt.v_scale):
            t.fill_(0.1)
        for t in (qt.k_zero, qt.v_zero, qt.k_residual):
            t.normal_()
        kc, vc = qt.k_codes, qt.v_codes
        kw = dict(quant=qt)
    S = default_num_splits(B, hkv, nblk * bs, DEV)
    return (q, kc, vc, bt, lens, kw), decode_bytes(kind, B, L, hq, hkv, d, bs, S, q.element_size()), S


def run_decode(ceiling):
    hq, hkv, d, bs = ARGS.q_heads, ARGS.kv_heads, ARGS.head_dim, ARGS.block_size
    if ARGS.cpu_smoke:
        batches, contexts, hq, hkv, d = [2], [64], 4, 2, 64
    else:
        batches = [int(x) for x in ARGS.batches.split(",")]
        contexts = [int(x) for x in ARGS.contexts.split(",")]
    print(f"\npaged decode: Hq={hq} Hkv={hkv} D={d} block={bs}; int4 groups K {GK} tokens, V {GV} channels")
    print(f"{'kv':>5} {'batch':>6} {'ctx':>6} {'splits':>6} {'ms (p20-p80)':>24} {'MB moved':>10} "
          f"{'GB/s':>8} {'% copy':>7}")
    times = {}
    for B in batches:
        for L in contexts:
            for kind in ("bf16", "fp8", "int4"):
                args, nbytes, S = build(kind, B, L, hq, hkv, d, bs)
                q, kc, vc, bt, lens, kw = args
                fn = functools.partial(paged_decode, q, kc, vc, bt, lens, check_bounds=False, **kw)
                med, p20, p80 = bench(fn)
                gbs = nbytes / med / 1e6
                times[(kind, B, L)] = med
                print(f"{kind:>5} {B:>6} {L:>6} {S:>6} {med:>9.4f} ({p20:.4f}-{p80:.4f}) "
                      f"{nbytes / 1e6:>10.1f} {gbs:>8.1f} {100 * gbs / ceiling:>6.1f}%")
                del args, q, kc, vc, bt, lens, kw
                if DEV == "cuda":
                    torch.cuda.empty_cache()
    print("\nspeed ratios (time bf16 / time X):")
    for B in batches:
        for L in contexts:
            t = times[("bf16", B, L)]
            print(f"  batch {B:>4} ctx {L:>6}: fp8 {t / times[('fp8', B, L)]:.2f}x   "
                  f"int4 {t / times[('int4', B, L)]:.2f}x")
    print("targets (H200): bf16 >= 75% of copy bandwidth at large batch x context; fp8 >= 1.7x bf16")


def run_offload():
    hkv, d, bs = ARGS.kv_heads, ARGS.head_dim, ARGS.block_size
    layers, tokens = ARGS.layers, ARGS.offload_tokens
    if ARGS.cpu_smoke:
        layers, tokens, hkv, d = 2, 64, 2, 64
    nblk = math.ceil(tokens / bs)
    num_blocks = 2 * nblk
    alloc = BlockAllocator(num_blocks, bs)
    table = alloc.allocate("s", list(range(tokens)))
    tensors = [torch.empty(num_blocks, bs, hkv, d, dtype=torch.bfloat16, device=DEV).normal_()
               for _ in range(2 * layers)]
    ids = torch.tensor(table, dtype=torch.int64, device=DEV)
    staging = gather_blocks(tensors, ids)
    nbytes = staging.numel()
    pin = DEV == "cuda"
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pin)

    def offload():
        gather_blocks(tensors, ids, staging=staging)
        host.copy_(staging, non_blocking=True)

    def resume():
        staging.copy_(host, non_blocking=True)
        scatter_blocks(staging, tensors, ids)

    d2h = bench(lambda: host.copy_(staging, non_blocking=True))[0]
    h2d = bench(lambda: staging.copy_(host, non_blocking=True))[0]
    t_off = bench(offload)
    t_res = bench(resume)
    gb = nbytes / 1e6
    print(f"\noffload/resume of one sequence: {tokens} tokens x {layers} layers (K+V, bf16) = {gb:.1f} MB, "
          f"host memory {'pinned' if pin else 'pageable (CPU)'}")
    print(f"  pinned D2H copy  {gb / d2h:8.1f} GB/s   pinned H2D copy {gb / h2d:8.1f} GB/s")
    print(f"  offload (gather + D2H)  {t_off[0]:.3f} ms ({t_off[1]:.3f}-{t_off[2]:.3f})  "
          f"{gb / t_off[0]:8.1f} GB/s = {100 * d2h / t_off[0]:5.1f}% of D2H")
    print(f"  resume  (H2D + scatter) {t_res[0]:.3f} ms ({t_res[1]:.3f}-{t_res[2]:.3f})  "
          f"{gb / t_res[0]:8.1f} GB/s = {100 * h2d / t_res[0]:5.1f}% of H2D")
    print("target (H200): resume >= 70% of pinned H2D bandwidth")
    sync()


def main():
    if DEV == "cuda":
        print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  triton {triton.__version__}")
        ceiling = copy_bandwidth_gbs(2 << 30)
    else:
        print("cpu smoke run under TRITON_INTERPRET=1: numbers are meaningless, the script path is checked")
        ceiling = copy_bandwidth_gbs(16 << 20)
    print(f"device-to-device copy: {ceiling:.1f} GB/s (read + write)")
    run_decode(ceiling)
    run_offload()


if __name__ == "__main__":
    main()
