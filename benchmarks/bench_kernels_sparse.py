"""Benchmarks for the sparse / latent / recurrent kernels (part 2).

Runs unchanged on a CUDA device (timing with triton.testing.do_bench: median,
p20, p80 in ms, L2 flushed between reps). Without CUDA it exits with a message,
unless ``--cpu-smoke`` is given: then it sets TRITON_INTERPRET=1 and runs tiny
shapes once through the interpreter with wall-clock timing (checks that the
script works, numbers mean nothing).

Sections
1. Quest vs full paged decode at 32K context, top-k/pages = 1/8 (default):
   KV bytes read fraction (and with the page metadata scored), time of score +
   select + sparse decode vs full decode, speedup, attention mass captured.
2. MLA absorbed decode (DeepSeek 512 + 64 latent): achieved GB/s vs a
   device-to-device copy.
3. CSA: stored / read entries and bytes, decode time vs full paged decode.
4. Recurrent state size vs a growing KV cache at several contexts, plus the time
   of one decode-step state update.

Usage: python benchmarks/bench_kernels_sparse.py [--cpu-smoke] [--context 32768]
       [--batch 8] [--block-size 16] [--topk-frac 0.125]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cpu-smoke", action="store_true", help="tiny interpreter run without a GPU")
    p.add_argument("--context", type=int, default=32768)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--block-size", type=int, default=16, help="Quest page = KV block size")
    p.add_argument("--topk-frac", type=float, default=0.125)
    p.add_argument("--quest-meta", choices=["bf16", "fp32"], default="bf16",
                   help="Quest min/max dtype (bf16: 1/16 of a bf16 page at page 16; fp32: 1/8)")
    p.add_argument("--q-heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    return p.parse_args()


ARGS = parse()
try:
    import torch
except ImportError:
    sys.exit("bench_kernels_sparse: needs torch and triton (pip install 'kvplan[bench]')")
if not torch.cuda.is_available():
    if not ARGS.cpu_smoke:
        sys.exit("bench_kernels_sparse: no CUDA device found. These benchmarks need a GPU; "
                 "run with --cpu-smoke for a tiny interpreter run that only checks the script.")
    os.environ["TRITON_INTERPRET"] = "1"

import triton  # noqa: E402

from kvplan.kernels.csa_compress import csa_compress, csa_entry_counts, csa_local_window  # noqa: E402
from kvplan.kernels.csa_decode import csa_decode  # noqa: E402
from kvplan.kernels.mla_cache import mla_cache_bytes  # noqa: E402
from kvplan.kernels.mla_decode import mla_decode, mla_decode_bytes  # noqa: E402
from kvplan.kernels.paged_decode import paged_decode  # noqa: E402
from kvplan.kernels.quest_meta import alloc_quest_meta, quest_meta_bytes_per_page, quest_meta_update  # noqa: E402
from kvplan.kernels.quest_score import quest_score  # noqa: E402
from kvplan.kernels.quest_select import attention_mass_captured, quest_read_fraction, quest_select  # noqa: E402
from kvplan.kernels.recurrent_state import kv_cache_bytes, recurrent_state_bytes, recurrent_update  # noqa: E402

GPU = torch.cuda.is_available()
DEV = "cuda" if GPU else "cpu"


def bench(fn):
    """(median, p20, p80) in ms."""
    if GPU:
        med, p20, p80 = triton.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8], warmup=25, rep=200)
        return med, p20, p80
    fn()
    ts = []
    for _ in range(2):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    m = statistics.median(ts)
    return m, min(ts), max(ts)


def bench_graph(fn):
    """(median, p20, p80) in ms of fn replayed in a CUDA graph (no launch overhead), or None."""
    if not GPU:
        return None
    try:
        return tuple(triton.testing.do_bench_cudagraph(fn, rep=100, quantiles=[0.5, 0.2, 0.8]))
    except Exception as e:  # noqa: BLE001 - a host sync inside fn makes capture fail
        print(f"  (CUDA graph timing unavailable: {type(e).__name__}: {e})")
        return None


def fmt(t):
    return f"{t[0]:8.3f} ms (p20 {t[1]:.3f}, p80 {t[2]:.3f})"


def copy_bandwidth_gbs():
    n = (1 << 28) if GPU else (1 << 20)
    a = torch.empty(n, dtype=torch.uint8, device=DEV)
    b = torch.empty_like(a)
    t = bench(lambda: b.copy_(a))
    return 2 * n / (t[0] * 1e-3) / 1e9


def paged_layout(batch, ctx, bs, device):
    nb_per = math.ceil(ctx / bs)
    num_blocks = batch * nb_per
    bt = torch.randperm(num_blocks, device=device).view(batch, nb_per).to(torch.int32).contiguous()
    sl = torch.full((batch,), ctx, dtype=torch.int32, device=device)
    return num_blocks, bt, sl


def quest_section(copy_gbs):
    B, ctx, bs = ARGS.batch, ARGS.context, ARGS.block_size
    Hq, Hkv, D = ARGS.q_heads, ARGS.kv_heads, ARGS.head_dim
    if not GPU:
        B, ctx, bs, Hq, Hkv, D = 1, 256, 16, 4, 2, 16
    nb, bt, sl = paged_layout(B, ctx, bs, DEV)
    pages = bt.shape[1]
    k_top = max(1, round(pages * ARGS.topk_frac))
    k_cache = torch.randn(nb, bs, Hkv, D, device=DEV, dtype=torch.bfloat16)
    v_cache = torch.randn(nb, bs, Hkv, D, device=DEV, dtype=torch.bfloat16)
    meta_dtype = torch.bfloat16 if ARGS.quest_meta == "bf16" else torch.float32
    meta_eb = 2 if ARGS.quest_meta == "bf16" else 4
    k_min, k_max = alloc_quest_meta(nb, Hkv, D, DEV, meta_dtype)
    slots = (bt.long()[:, :, None] * bs + torch.arange(bs, device=DEV)).reshape(-1)
    quest_meta_update(k_cache, k_min, k_max, slots)
    q = torch.randn(B, Hq, D, device=DEV, dtype=torch.bfloat16)

    def full():
        return paged_decode(q, k_cache, v_cache, bt, sl, check_bounds=False)

    def sparse():
        sc = quest_score(q, k_min, k_max, bt, sl, bs, check_bounds=False)
        sel = quest_select(sc, bt, sl, bs, k_top)
        return paged_decode(q, k_cache, v_cache, sel.block_table, sel.seq_lens, check_bounds=False)

    sc = quest_score(q, k_min, k_max, bt, sl, bs)
    sel = quest_select(sc, bt, sl, bs, k_top)
    t_full, t_sparse = bench(full), bench(sparse)
    t_score = bench(lambda: quest_score(q, k_min, k_max, bt, sl, bs, check_bounds=False))
    t_sel = bench(lambda: quest_select(sc, bt, sl, bs, k_top))
    t_dec = bench(lambda: paged_decode(q, k_cache, v_cache, sel.block_table, sel.seq_lens,
                                       check_bounds=False))
    fr = quest_read_fraction(sel, sl, bs, num_kv_heads=Hkv, head_dim=D, kv_elem_bytes=2,
                             meta_elem_bytes=meta_eb)
    mass = attention_mass_captured(q[:1], k_cache, bt[:1], sl[:1],
                                   type(sel)(sel.block_table[:1], sel.seq_lens[:1], sel.pages[:1],
                                             sel.num_pages[:1]))
    kv_full = fr["kv_bytes_full"]
    print(f"\n== Quest vs full paged decode: batch {B}, context {ctx}, page {bs}, "
          f"Hq {Hq} Hkv {Hkv} D {D}, bf16, top-k {k_top}/{pages} pages")
    print(f"KV bytes full {kv_full / 2**20:.1f} MiB; read by Quest {fr['kv_bytes_read'] / 2**20:.1f} MiB "
          f"(fraction {fr['kv_bytes_read'] / kv_full:.4f}); + page metadata "
          f"{fr['meta_bytes_read'] / 2**20:.1f} MiB ({quest_meta_bytes_per_page(Hkv, D, meta_eb)} B/page, "
          f"{ARGS.quest_meta}) -> "
          f"fraction {fr['byte_fraction']:.4f}")
    print(f"full decode       {fmt(t_full)}  {kv_full / (t_full[0] * 1e-3) / 1e9:8.1f} GB/s "
          f"({kv_full / (t_full[0] * 1e-3) / 1e9 / copy_gbs:.2f} of copy)")
    print(f"quest total       {fmt(t_sparse)}  speedup {t_full[0] / t_sparse[0]:.2f}x")
    print(f"  score           {fmt(t_score)}")
    print(f"  select          {fmt(t_sel)}")
    print(f"  sparse decode   {fmt(t_dec)}  speedup {t_full[0] / t_dec[0]:.2f}x")
    g_full, g_sparse = bench_graph(full), bench_graph(sparse)
    if g_full and g_sparse:
        print(f"CUDA graph: full {fmt(g_full)}; quest total {fmt(g_sparse)}  "
              f"speedup {g_full[0] / g_sparse[0]:.2f}x (launch overhead removed)")
    print(f"attention mass captured (seq 0, random data, mean over heads): {float(mass.mean()):.3f}")


def mla_section(copy_gbs):
    R, P, H, bs = 512, 64, 128, 64
    B, ctx = ARGS.batch, ARGS.context
    if not GPU:
        R, P, H, bs, B, ctx = 32, 16, 4, 16, 1, 64
    print(f"\n== MLA absorbed decode: kv_lora_rank {R} + rope {P}, {H} heads, page {bs}")
    for dtype, eb, cs in ((torch.bfloat16, 2, None), (torch.float8_e4m3fn, 1, 0.05)):
        nb, bt, sl = paged_layout(B, ctx, bs, DEV)
        cache = torch.randn(nb, bs, R + P, device=DEV).to(dtype)
        ql = torch.randn(B, H, R, device=DEV, dtype=torch.bfloat16)
        qr = torch.randn(B, H, P, device=DEV, dtype=torch.bfloat16)
        ns = max(1, min(32, ctx // 1024)) if GPU else 2
        cs_t = None if cs is None else torch.tensor([cs], device=DEV)
        fn = lambda: mla_decode(ql, qr, cache, bt, sl, scale=192 ** -0.5, cache_scale=cs_t,  # noqa: E731
                                num_splits=ns, check_bounds=False)
        t = bench(fn)
        by = mla_decode_bytes(sl.tolist(), H, R, P, eb, block_size=bs, num_splits=ns)
        cache_b = mla_cache_bytes(B * ctx, R, P, eb)
        print(f"{str(dtype):22s} batch {B} ctx {ctx}: {fmt(t)}  latent cache {cache_b / 2**20:.1f} MiB, "
              f"moved {by / 2**20:.1f} MiB -> {by / (t[0] * 1e-3) / 1e9:.1f} GB/s "
              f"({by / (t[0] * 1e-3) / 1e9 / copy_gbs:.2f} of copy)")


def csa_section():
    B, ctx, Hkv, G, D = ARGS.batch, ARGS.context, ARGS.kv_heads, ARGS.q_heads // ARGS.kv_heads, ARGS.head_dim
    m, window, top_k = 4, 128, 512
    if not GPU:
        B, ctx, Hkv, G, D, m, window, top_k = 1, 128, 2, 2, 16, 4, 8, 4
    k = torch.randn(B, ctx, Hkv, D, device=DEV, dtype=torch.bfloat16)
    v = torch.randn_like(k)
    sl = torch.full((B,), ctx, dtype=torch.int32, device=DEV)
    t_comp = bench(lambda: csa_compress(k, v, sl, m))
    ck, cv, ng = csa_compress(k, v, sl, m)
    lk, lv, ll = csa_local_window(k, v, sl, window, m)
    q = torch.randn(B, Hkv * G, D, device=DEV, dtype=torch.bfloat16)
    t_dec = bench(lambda: csa_decode(q, ck, cv, ng, lk, lv, ll, top_k=top_k, check_bounds=False))
    c = csa_entry_counts(ctx, m, window, top_k)
    per_entry = 2 * Hkv * D * 2
    print(f"\n== CSA: batch {B}, context {ctx}, m {m}, window {window}, top-k {top_k}, Hkv {Hkv} D {D} bf16")
    print(f"per sequence per kv head: stored {c['compressed_stored']} compressed + {c['local_stored']} "
          f"local = {c['stored_entries']} entries (full: {ctx}); read {c['read_entries']} entries "
          f"+ {c['compressed_stored']} selector keys")
    print(f"stored bytes/seq/layer {c['stored_entries'] * per_entry / 2**20:.2f} MiB vs full "
          f"{ctx * per_entry / 2**20:.2f} MiB")
    print(f"compress (whole context) {fmt(t_comp)}")
    print(f"csa decode               {fmt(t_dec)}")
    if GPU:
        nb, bt, sl2 = paged_layout(B, ctx, 16, DEV)
        kc = torch.randn(nb, 16, Hkv, D, device=DEV, dtype=torch.bfloat16)
        t_full = bench(lambda: paged_decode(q, kc, kc, bt, sl2, check_bounds=False))
        print(f"full paged decode        {fmt(t_full)}  -> CSA speedup {t_full[0] / t_dec[0]:.2f}x")


def recurrent_section():
    H, dk, dv = 16, 128, 128  # e.g. a Gated-DeltaNet-sized layer (memory only)
    Hkv, D = 2, 256  # Qwen3-Next full-attention layer shape
    print("\n== Recurrent state vs KV cache (one sequence, one layer)")
    print(f"state {H} heads x {dk} x {dv} fp32 = {recurrent_state_bytes(H, dk, dv) / 2**20:.2f} MiB at any context")
    for n in (1024, 8192, 32768, 131072):
        print(f"  context {n:7d}: KV (Hkv {Hkv}, D {D}, bf16) {kv_cache_bytes(n, Hkv, D, 2) / 2**20:8.1f} MiB"
              f"   state {recurrent_state_bytes(H, dk, dv) / 2**20:.2f} MiB")
    B = ARGS.batch if GPU else 1
    if not GPU:
        H, dk, dv = 2, 16, 16
    q = torch.randn(B, 1, H, dk, device=DEV)
    k = torch.randn(B, 1, H, dk, device=DEV)
    v = torch.randn(B, 1, H, dv, device=DEV)
    st = torch.zeros(B, H, dk, dv, device=DEV)
    decay = torch.full((H,), 0.99, device=DEV)
    lens = torch.ones(B, dtype=torch.int32, device=DEV)
    t = bench(lambda: recurrent_update(q, k, v, st, decay=decay, seq_lens=lens, check_bounds=False))
    by = 2 * st.numel() * 4
    print(f"one decode step (batch {B}): {fmt(t)}  state read+write {by / 2**20:.1f} MiB -> "
          f"{by / (t[0] * 1e-3) / 1e9:.1f} GB/s")


def main():
    print(f"device: {torch.cuda.get_device_name() if GPU else 'CPU (Triton interpreter smoke run)'}")
    torch.manual_seed(0)
    copy_gbs = copy_bandwidth_gbs()
    print(f"device-to-device copy: {copy_gbs:.1f} GB/s (read + write)")
    quest_section(copy_gbs)
    mla_section(copy_gbs)
    csa_section()
    recurrent_section()


if __name__ == "__main__":
    main()
