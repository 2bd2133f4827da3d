"""Real caches for one layer spec, built with kvplan.kernels and measured.

One `run_group` call builds the cache of ONE layer of a distinct layer spec
(every layer of the group has the same shapes, so bytes for the group are that
layer's exact tensor bytes x the layer count), writes a prefill of
`tokens - 1` tokens for every sequence, then times a decode step: the write of
the last token (idempotent, so it can be repeated) plus any per-step metadata
work (Quest) plus attention over the cache. Eviction runs its selection and
compaction after the last write, so the timed step is attention over the kept
tokens.

Imports torch and triton: only reached from `kvplan bench`. TRITON_INTERPRET
must already be set on a machine without CUDA (runner.py does it).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch

from ..core.layers import RecurrentState, TokenCache

FLOAT_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


@dataclass
class Timing:
    median_ms: float
    p20_ms: float
    p80_ms: float
    method: str  # "do_bench" (CUDA events) | "wall clock (interpreter)" | "wall clock"
    repeats: int

    def as_dict(self) -> dict:
        return {"median_ms": self.median_ms, "p20_ms": self.p20_ms, "p80_ms": self.p80_ms,
                "method": self.method, "repeats": self.repeats}


def _quantiles(samples: list[float]) -> tuple[float, float, float]:
    s = sorted(samples)

    def q(p):
        if len(s) == 1:
            return s[0]
        x = p * (len(s) - 1)
        lo = math.floor(x)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (x - lo)

    return q(0.5), q(0.2), q(0.8)


def time_fn(fn, device: torch.device, repeats: int) -> Timing:
    """Median / p20 / p80 of `fn` in ms: do_bench on CUDA, a wall clock on CPU."""
    if device.type == "cuda":
        from triton.testing import do_bench

        med, p20, p80 = do_bench(fn, warmup=10, rep=max(25, 10 * repeats), quantiles=[0.5, 0.2, 0.8])
        return Timing(float(med), float(p20), float(p80), "do_bench", repeats)
    import os

    fn()  # warm-up (the interpreter has nothing to compile, torch allocators do)
    samples = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    med, p20, p80 = _quantiles(samples)
    interp = os.environ.get("TRITON_INTERPRET") == "1"
    return Timing(med, p20, p80, "wall clock (interpreter)" if interp else "wall clock", repeats)


def time_roundtrip(do, undo, device: torch.device, repeats: int) -> Timing:
    """Time `do` alone, running `undo` (untimed) after each call: e.g. resume an
    offloaded sequence, then offload it again for the next repeat."""
    samples = []
    for _ in range(max(1, repeats) + 1):  # the first call warms up
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        do()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        samples.append((time.perf_counter() - start) * 1e3)
        undo()
    med, p20, p80 = _quantiles(samples[1:])
    return Timing(med, p20, p80, "wall clock with device sync", repeats)


def copy_ceiling_gbps(device: torch.device) -> tuple[float, int]:
    """Device-to-device copy bandwidth measured now (read + write bytes / time)."""
    nbytes = (256 if device.type == "cuda" else 32) * 2**20
    src = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(1)
    dst = torch.empty_like(src)
    t = time_fn(lambda: dst.copy_(src), device, 5)
    del src, dst
    return 2 * nbytes / (t.median_ms * 1e-3) / 1e9, nbytes


def nbytes(*tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def _block_bytes(*tensors) -> int:
    return sum(t[0].numel() * t.element_size() for t in tensors if t is not None)


@dataclass
class GroupMeasure:
    """What one layer of a group measured (bytes already for the whole batch, one layer)."""

    cache_bytes: int  # resident: used blocks x block bytes + scales + per-sequence buffers + states
    pool_bytes: int  # every tensor allocated, free blocks included
    block_table_bytes: int
    offloaded_bytes: int = 0
    blocks_used: int | None = None
    blocks_shared: int | None = None
    blocks_free: int | None = None
    waste_slots: int | None = None  # token slots allocated but empty (partial blocks)
    cuda_allocated_delta: int | None = None
    prefill: Timing | None = None
    decode: Timing | None = None
    resume: Timing | None = None
    error_rel: float | None = None
    attention_mass: float | None = None
    engine: str = "triton"
    breakdown: dict = field(default_factory=dict)


# ------------------------------------------------------------------ inputs
def _structured_kv(gen, B, T, H, D, device, shared_prefix: int, sharers: int):
    """K, V [B, T, H, D] bf16 with a few heavy-hitter keys (so eviction, Quest and
    CSA have attention worth keeping); sequences < sharers share the first
    `shared_prefix` positions."""
    k = torch.randn(B, T, H, D, generator=gen) * 0.5
    v = torch.randn(B, T, H, D, generator=gen)
    heavy = torch.rand(B, T, generator=gen) < 0.05
    direction = torch.randn(H, D, generator=gen)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    # q . k_heavy / sqrt(D) is about 6 above the rest: ~95% of the attention mass
    # falls on the 5% heavy tokens, as in real decode attention
    scale = math.sqrt(6.0 * math.sqrt(D))
    k = k + heavy[..., None, None] * scale * direction
    if sharers > 1 and shared_prefix:
        k[1:sharers, :shared_prefix] = k[0, :shared_prefix]
        v[1:sharers, :shared_prefix] = v[0, :shared_prefix]
    q = torch.randn(B, H, D, generator=gen) * 0.3 + direction[None] * scale
    return k.to(device, torch.bfloat16), v.to(device, torch.bfloat16), q, direction


def _queries(q_kv, Hq, H, gen, device):
    """q [B, Hq, D] bf16: the query heads of one KV head near that head's direction."""
    B, _, D = q_kv.shape
    rep = q_kv.repeat_interleave(Hq // H, dim=1)
    return (rep + 0.2 * torch.randn(B, Hq, D, generator=gen)).to(device, torch.bfloat16)


def _reference(q, k, v, positions_per_seq, Hkv):
    """float64 attention of q [B, Hq, D] over k/v [B, T, H, D] (bf16 values) at the
    given positions per sequence; returns (out [B, Hq, D], probs list [Hq, n])."""
    B, Hq, D = q.shape
    outs, probs = [], []
    for b in range(B):
        pos = positions_per_seq[b]
        kk = k[b, pos].double().repeat_interleave(Hq // Hkv, dim=1)
        vv = v[b, pos].double().repeat_interleave(Hq // Hkv, dim=1)
        s = torch.einsum("hd,thd->ht", q[b].double(), kk) / math.sqrt(D)
        p = torch.softmax(s, dim=-1)
        outs.append(torch.einsum("ht,thd->hd", p, vv))
        probs.append(p)
    return torch.stack(outs), probs


def _rel_err(out, ref) -> float:
    out = out.double().to(ref.device)
    return float((out - ref).norm() / ref.norm().clamp_min(1e-30))


# ------------------------------------------------------------------ paged K/V
@dataclass
class Setup:
    device: torch.device
    batch: int
    tokens: int
    q_heads: int
    block_tokens: int | None
    repeats: int
    prefix_tokens: int = 0
    prefix_requests: int = 0
    offload_sessions: int = 0
    reference_window: int | None = None  # the window of the full-cache reference
    quant_groups: tuple[int, int] | None = None
    seed: int = 0


def _token_ids(setup: Setup, b: int) -> list[int]:
    share = b < setup.prefix_requests and setup.prefix_requests > 1
    return [t if share and t < setup.prefix_tokens else (b + 1) * 10_000_000 + t for t in range(setup.tokens)]


def run_attention(cache: TokenCache, setup: Setup) -> GroupMeasure:
    from ..kernels.allocator import BlockAllocator
    from ..kernels.paged_decode import paged_decode
    from ..kernels.paged_write import paged_write

    dev, B, T, BS = setup.device, setup.batch, setup.tokens, setup.block_tokens
    H, D = cache.heads, cache.key_dim
    Hq = max(setup.q_heads - setup.q_heads % H, H)
    p = cache.policy
    gen = torch.Generator().manual_seed(setup.seed)
    sharers = min(setup.prefix_requests, B) if setup.prefix_tokens else 0
    k, v, qkv, _ = _structured_kv(gen, B, T, H, D, dev, setup.prefix_tokens, sharers)
    q = _queries(qkv, Hq, H, gen, dev)
    storage = cache.storage
    kind = storage.granularity
    fp8 = storage.name.startswith("fp8")
    quant = None
    k_scale = v_scale = None
    k_min = k_max = None
    nb = B * -(-T // BS)
    mem0 = torch.cuda.memory_allocated(dev) if dev.type == "cuda" else None
    if kind in ("group", "kivi"):
        from ..kernels.quant_write import QuantKV

        gk, gv = setup.quant_groups
        quant = QuantKV.empty(nb, BS, H, D, bits=storage.bits, group_k_tokens=gk, group_v_channels=gv,
                              max_batch=B, residual_dtype=torch.float16, device=dev)
        k_cache, v_cache = quant.k_codes, quant.v_codes
        block_tensors = [quant.k_codes, quant.v_codes, quant.k_scale, quant.k_zero, quant.v_scale, quant.v_zero]
        seq_tensors = [quant.k_residual]
    else:
        dtype = torch.float8_e4m3fn if fp8 else FLOAT_DTYPES[storage.name]
        if storage.name == "fp8_e5m2":
            raise NotImplementedError("paged_write stores e4m3fn only (no e5m2 kernel)")
        k_cache = torch.zeros(nb, BS, H, D, dtype=dtype, device=dev)
        v_cache = torch.zeros_like(k_cache)
        block_tensors = [k_cache, v_cache]
        seq_tensors = []
        if fp8:
            per_head = kind == "head"

            def scale_of(x):
                a = x.float().abs().amax(dim=(0, 1, 3)) if per_head else x.float().abs().amax().reshape(1)
                return (a / 448.0).clamp_min(1e-8).to(torch.float32).contiguous()

            k_scale, v_scale = scale_of(k), scale_of(v)
    if p.read_page_tokens is not None:
        from ..kernels.quest_meta import alloc_quest_meta

        meta_dtype = torch.float32 if cache.quest_meta_storage.bits == 32 else torch.bfloat16
        k_min, k_max = alloc_quest_meta(nb, H, D, device=dev, dtype=meta_dtype)
        block_tensors += [k_min, k_max]
    fixed_tensors = [k_scale, v_scale]
    if mem0 is not None:  # the caching allocator's view of the cache tensors alone
        mem_delta = torch.cuda.memory_allocated(dev) - mem0
    alloc = BlockAllocator(nb, BS, enable_prefix_cache=sharers > 1)

    def write(tok_k, tok_v, slots, batch_index, check=True):
        if quant is not None:
            from ..kernels.quant_write import quant_write

            quant_write(tok_k, tok_v, quant, slots, batch_index)
        else:
            paged_write(tok_k, tok_v, k_cache, v_cache, slots, k_scale=k_scale, v_scale=v_scale, check_slots=check)
        if k_min is not None:
            from ..kernels.quest_meta import quest_meta_update

            quest_meta_update(k_cache, k_min, k_max, slots, k_scale=k_scale)

    # prefill: tokens 0 .. T-2 of every sequence (blocks hit in the prefix cache are not rewritten)
    owned: set[int] = set()
    slots, rows, bidx = [], [], []
    for b in range(B):
        table = alloc.allocate(b, _token_ids(setup, b)[: T - 1])
        for t in range(T - 1):
            blk = table[t // BS]
            slots.append(-1 if (blk in owned) else blk * BS + t % BS)
            rows.append((b, t))
            bidx.append(b)
        owned.update(table)
    idx_b = torch.tensor([r[0] for r in rows], device=dev)
    idx_t = torch.tensor([r[1] for r in rows], device=dev)
    pre_k, pre_v = k[idx_b, idx_t].contiguous(), v[idx_b, idx_t].contiguous()
    pre_slots = torch.tensor(slots, dtype=torch.int64, device=dev)
    pre_bidx = torch.tensor(bidx, dtype=torch.int64, device=dev)
    start = time.perf_counter()
    write(pre_k, pre_v, pre_slots, pre_bidx)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    prefill = Timing(*( [(time.perf_counter() - start) * 1e3] * 3), method="wall clock, once", repeats=1)
    # the decode token: position T-1 of every sequence
    last_slots = []
    for b in range(B):
        table = alloc.append(b, [_token_ids(setup, b)[T - 1]])
        last_slots.append(table[(T - 1) // BS] * BS + (T - 1) % BS)
    for src, dst in alloc.pop_copies():  # copy on write of a shared partial block
        for t_ in block_tensors:
            t_[dst].copy_(t_[src])
    dec_k, dec_v = k[:, T - 1].contiguous(), v[:, T - 1].contiguous()
    dec_slots = torch.tensor(last_slots, dtype=torch.int64, device=dev)
    dec_bidx = torch.arange(B, device=dev)
    write(dec_k, dec_v, dec_slots, dec_bidx)

    measure = GroupMeasure(0, 0, 0)
    # which tokens each sequence keeps
    kept_positions = [torch.arange(T, device=dev) for _ in range(B)]
    window = p.window_tokens if p.window_tokens is not None and p.window_tokens < T else None
    budget = p.budget_fraction is not None or p.budget_tokens is not None
    mass = None
    if budget:
        from ..kernels.compact import compact_sequence
        from ..kernels.evict_select import h2o_select

        if quant is not None or k_min is not None:
            raise NotImplementedError("compaction of KIVI or Quest caches")
        retained = p.retained_tokens(T)
        rlo = T - min(T, setup.reference_window) if setup.reference_window else 0
        _, probs = _reference(q, k, v, [torch.arange(rlo, T, device=dev)] * B, H)
        masses = []
        for b in range(B):
            scores = torch.zeros(T, dtype=torch.float64, device=dev)
            scores[rlo:] = probs[b].sum(0)  # H2O: attention received, summed over heads
            lo = T - min(T, window) if window is not None else 0
            sel = h2o_select(scores[lo:], budget=retained, recent=min(p.recent_tokens, retained)) + lo
            seen = sel[sel >= rlo] - rlo
            masses.append(float(probs[b][:, seen].sum(-1).mean()))
            compact_sequence([(k_cache, v_cache)], alloc, b, sel.cpu())
            kept_positions[b] = sel.to(dev)
        mass = sum(masses) / len(masses)
        window = None  # the compacted sequence holds only kept tokens
    elif window is not None:
        for b in range(B):
            alloc.release_outside_window(b, window)
    offloaded = []
    active = list(range(B))
    if setup.offload_sessions:
        from ..kernels.offload import offload_sequence, resume_sequence

        for b in range(B - setup.offload_sessions, B):
            offloaded.append(offload_sequence(alloc, b, block_tensors))
        active = list(range(B - setup.offload_sessions))
        measure.offloaded_bytes = sum(o.nbytes for o in offloaded)

        def resume():
            resume_sequence(alloc, offloaded[0], block_tensors)

        def offload_again():
            offloaded[0] = offload_sequence(alloc, offloaded[0].seq_id, block_tensors)

        measure.resume = time_roundtrip(resume, offload_again, dev, setup.repeats)
    # block tables (int32, -1 = released) and lengths as decode reads them
    tables = [alloc.block_table(b) for b in active]
    width = max(len(t) for t in tables)
    bt = torch.full((len(active), width), -1, dtype=torch.int32, device=dev)
    for i, t in enumerate(tables):
        bt[i, : len(t)] = torch.tensor(t, dtype=torch.int32)
    lens = torch.tensor([alloc.seq_len(b) for b in active], dtype=torch.int32, device=dev)
    qa = q[active].contiguous()
    ref_window = setup.reference_window
    ref_pos = [torch.arange(T - min(T, ref_window) if ref_window else 0, T, device=dev) for _ in active]
    ref, ref_probs = _reference(qa, k[active], v[active], ref_pos, H)
    act_slots, act_k, act_v, act_bidx = dec_slots[active], dec_k[active], dec_v[active], dec_bidx[active]

    if p.read_page_tokens is not None:
        from ..kernels.quest_score import quest_score
        from ..kernels.quest_select import attention_mass_captured, quest_select

        topk = p.read_topk_pages

        def step(check=False):
            write(act_k, act_v, act_slots, act_bidx, check)
            scores = quest_score(qa, k_min, k_max, bt, lens, BS)
            sel = quest_select(scores, bt, lens, BS, min(topk, bt.shape[1]))
            return paged_decode(qa, k_cache, v_cache, sel.block_table, sel.seq_lens,
                                k_scale=k_scale, v_scale=v_scale, check_bounds=check), sel

        out, sel = step(True)  # validated once; the timed steps skip the host-side checks
        mass = float(attention_mass_captured(qa, k_cache, bt, lens, sel, k_scale=k_scale).mean())
        measure.decode = time_fn(step, dev, setup.repeats)
    else:
        def step(check=False):
            if not budget:
                write(act_k, act_v, act_slots, act_bidx, check)
            return paged_decode(qa, k_cache, v_cache, bt, lens, window_tokens=window,
                                k_scale=k_scale, v_scale=v_scale, quant=quant, check_bounds=check)

        out = step(True)
        measure.decode = time_fn(step, dev, setup.repeats)
    measure.prefill = prefill
    measure.error_rel = _rel_err(out, ref)
    if mass is None and (window is not None and (ref_window is None or ref_window > window)):
        kept = [torch.arange(max(0, T - window), T, device=dev) for _ in active]
        full_pos = [torch.arange(T, device=dev) for _ in active]
        _, fp = _reference(qa, k[active], v[active], full_pos, H)
        mass = sum(float(fp[i][:, kept[i]].sum(-1).mean()) for i in range(len(active))) / len(active)
    measure.attention_mass = mass
    stats = alloc.stats()
    per_block = _block_bytes(*block_tensors)
    measure.blocks_used, measure.blocks_shared, measure.blocks_free = stats["used"], stats["shared"], stats["free"]
    waste = 0
    for b in active:
        table = alloc.block_table(b)
        live = [x for x in table if x >= 0]
        first = table.index(live[0]) if live else 0
        waste += len(live) * BS - (alloc.seq_len(b) - first * BS)
    measure.waste_slots = waste
    seq_bytes = nbytes(*seq_tensors)
    measure.cache_bytes = stats["used"] * per_block + nbytes(*fixed_tensors) + seq_bytes
    measure.pool_bytes = nb * per_block + nbytes(*fixed_tensors) + seq_bytes
    measure.block_table_bytes = nbytes(bt)
    measure.breakdown = {"block_bytes": per_block, "fixed_bytes": nbytes(*fixed_tensors),
                         "per_sequence_buffer_bytes": seq_bytes, "num_blocks": nb}
    if mem0 is not None:
        measure.cuda_allocated_delta = mem_delta
    return measure


# ------------------------------------------------------------------ MLA latent
def run_latent(cache: TokenCache, setup: Setup) -> GroupMeasure:
    from ..kernels.allocator import BlockAllocator
    from ..kernels.mla_cache import alloc_mla_cache, mla_write
    from ..kernels.mla_decode import mla_decode

    dev, B, T, BS = setup.device, setup.batch, setup.tokens, setup.block_tokens
    P = cache.rope_dim
    R = cache.key_dim - P
    Hq = setup.q_heads
    gen = torch.Generator().manual_seed(setup.seed)
    sharers = min(setup.prefix_requests, B) if setup.prefix_tokens else 0
    rows = torch.randn(B, T, R + P, generator=gen)
    if sharers > 1:
        rows[1:sharers, : setup.prefix_tokens] = rows[0, : setup.prefix_tokens]
    rows = rows.to(dev, torch.bfloat16)
    q = (torch.randn(B, Hq, R + P, generator=gen) * 0.5).to(dev, torch.bfloat16)
    fp8 = cache.storage.name.startswith("fp8")
    nb = B * -(-T // BS)
    mem0 = torch.cuda.memory_allocated(dev) if dev.type == "cuda" else None
    lat = alloc_mla_cache(nb, BS, R, P, dtype=torch.float8_e4m3fn if fp8 else FLOAT_DTYPES.get(cache.storage.name, torch.bfloat16), device=dev)
    scale = (rows.float().abs().amax() / 448.0).reshape(1).to(torch.float32) if fp8 else None
    mem_delta = torch.cuda.memory_allocated(dev) - mem0 if mem0 is not None else None
    alloc = BlockAllocator(nb, BS, enable_prefix_cache=sharers > 1)
    owned: set[int] = set()
    slots, pos = [], []
    for b in range(B):
        table = alloc.allocate(b, _token_ids(setup, b)[: T - 1])
        for t in range(T - 1):
            blk = table[t // BS]
            slots.append(-1 if blk in owned else blk * BS + t % BS)
            pos.append((b, t))
        owned.update(table)
    ib = torch.tensor([x[0] for x in pos], device=dev)
    it = torch.tensor([x[1] for x in pos], device=dev)
    pre = rows[ib, it]
    start = time.perf_counter()
    mla_write(pre[:, :R].contiguous(), pre[:, R:].contiguous(), lat, torch.tensor(slots, dtype=torch.int64, device=dev), scale=scale)
    prefill_ms = (time.perf_counter() - start) * 1e3
    last = []
    for b in range(B):
        table = alloc.append(b, [_token_ids(setup, b)[T - 1]])
        last.append(table[(T - 1) // BS] * BS + (T - 1) % BS)
    for src, dst in alloc.pop_copies():
        lat[dst].copy_(lat[src])
    measure = GroupMeasure(0, 0, 0)
    offloaded = []
    active = list(range(B))
    if setup.offload_sessions:
        from ..kernels.offload import offload_sequence, resume_sequence

        for b in range(B - setup.offload_sessions, B):
            offloaded.append(offload_sequence(alloc, b, [lat]))
        active = list(range(B - setup.offload_sessions))
        measure.offloaded_bytes = sum(o.nbytes for o in offloaded)

        def resume():
            resume_sequence(alloc, offloaded[0], [lat])

        def offload_again():
            offloaded[0] = offload_sequence(alloc, offloaded[0].seq_id, [lat])

        measure.resume = time_roundtrip(resume, offload_again, dev, setup.repeats)
    dec = rows[active, T - 1].contiguous()
    dec_slots = torch.tensor([last[b] for b in active], dtype=torch.int64, device=dev)
    tables = [alloc.block_table(b) for b in active]
    bt = torch.tensor(tables, dtype=torch.int32, device=dev)
    lens = torch.full((len(active),), T, dtype=torch.int32, device=dev)
    qa = q[active].contiguous()
    sm = 1.0 / math.sqrt(R + P)

    def step():
        mla_write(dec[:, :R].contiguous(), dec[:, R:].contiguous(), lat, dec_slots, scale=scale)
        return mla_decode(qa[..., :R].contiguous(), qa[..., R:].contiguous(), lat, bt, lens, scale=sm, cache_scale=scale)

    out = step()
    measure.decode = time_fn(step, dev, setup.repeats)
    ref_rows = rows[active].double()  # [b, T, R+P]
    s = torch.einsum("bhd,btd->bht", qa.double(), ref_rows) * sm
    ref = torch.einsum("bht,btr->bhr", torch.softmax(s, -1), ref_rows[..., :R])
    measure.error_rel = _rel_err(out, ref)
    measure.prefill = Timing(prefill_ms, prefill_ms, prefill_ms, "wall clock, once", 1)
    stats = alloc.stats()
    per_block = _block_bytes(lat)
    fixed = nbytes(scale)
    measure.blocks_used, measure.blocks_shared, measure.blocks_free = stats["used"], stats["shared"], stats["free"]
    measure.waste_slots = sum(len(alloc.block_table(b)) * BS - alloc.seq_len(b) for b in active)
    measure.cache_bytes = stats["used"] * per_block + fixed
    measure.pool_bytes = nb * per_block + fixed
    measure.block_table_bytes = nbytes(bt)
    measure.breakdown = {"block_bytes": per_block, "fixed_bytes": fixed, "num_blocks": nb}
    measure.cuda_allocated_delta = mem_delta
    return measure


# ------------------------------------------------------------------ CSA
def run_csa(cache: TokenCache, setup: Setup) -> GroupMeasure:
    from ..kernels.csa_compress import csa_compress, csa_local_window
    from ..kernels.csa_decode import csa_decode

    dev, B, T = setup.device, setup.batch, setup.tokens
    H, D = cache.heads, cache.key_dim
    p = cache.policy
    m, topk, W = p.compress_ratio, p.compress_topk, p.compress_window
    if cache.storage.name not in FLOAT_DTYPES:
        raise NotImplementedError("csa kernels store float caches only")
    Hq = max(setup.q_heads - setup.q_heads % H, H)
    gen = torch.Generator().manual_seed(setup.seed)
    k, v, qkv, _ = _structured_kv(gen, B, T, H, D, dev, 0, 0)
    q = _queries(qkv, Hq, H, gen, dev)
    if p.window_tokens is not None and p.window_tokens < T:  # a windowed layer compresses its window only
        k, v = k[:, T - p.window_tokens:].contiguous(), v[:, T - p.window_tokens:].contiguous()
        T = p.window_tokens
    lens = torch.full((B,), T, dtype=torch.int32, device=dev)
    mem0 = torch.cuda.memory_allocated(dev) if dev.type == "cuda" else None
    start = time.perf_counter()
    ck, cv, ng = csa_compress(k, v, lens, m)
    lk, lv, ll = csa_local_window(k, v, lens, max(W, 1), m)
    prefill_ms = (time.perf_counter() - start) * 1e3
    measure = GroupMeasure(0, 0, 0)

    def step():
        return csa_decode(q, ck, cv, ng, lk, lv, ll, top_k=topk, return_selection=True)

    out, sel = step()
    measure.decode = time_fn(lambda: step(), dev, setup.repeats)
    full = [torch.arange(T, device=dev) for _ in range(B)]
    ref, probs = _reference(q, k, v, full, H)
    measure.error_rel = _rel_err(out, ref)
    masses = []
    G = Hq // H
    for b in range(B):
        for h in range(H):
            keep = torch.zeros(T, dtype=torch.bool, device=dev)
            for g in sel[b, h].tolist():
                if g >= 0:
                    keep[g * m:(g + 1) * m] = True
            keep[T - min(T, W):] = True
            masses.append(float(probs[b][h * G:(h + 1) * G][:, keep].sum(-1).mean()))
    measure.attention_mass = sum(masses) / len(masses)
    measure.prefill = Timing(prefill_ms, prefill_ms, prefill_ms, "wall clock, once", 1)
    stored = nbytes(ck, cv, lk, lv)
    measure.cache_bytes = measure.pool_bytes = stored
    measure.block_table_bytes = 0
    measure.breakdown = {"compressed_bytes": nbytes(ck, cv), "window_bytes": nbytes(lk, lv),
                         "compressed_entries": int(ck.shape[1]), "window_rows": int(lk.shape[1])}
    if mem0 is not None:
        measure.cuda_allocated_delta = torch.cuda.memory_allocated(dev) - mem0
    return measure


# ------------------------------------------------------------------ recurrent state
def run_state(state: RecurrentState, setup: Setup, heads: int, key_dim: int, value_dim: int) -> GroupMeasure:
    dev, B = setup.device, setup.batch
    gen = torch.Generator().manual_seed(setup.seed)
    measure = GroupMeasure(0, 0, 0)
    mem0 = torch.cuda.memory_allocated(dev) if dev.type == "cuda" else None
    if state.kind == "linear" and state.conv_elements == 0 and state.ssm_storage.bits == 32 \
            and state.ssm_elements == heads * key_dim * value_dim:
        from ..kernels.recurrent_state import recurrent_reference, recurrent_update

        S = torch.zeros(B, heads, key_dim, value_dim, dtype=torch.float32, device=dev)
        T = min(setup.tokens, 64)
        qkv = torch.randn(3, B, T, heads, key_dim, generator=gen) * 0.1
        q, k = qkv[0].to(dev), qkv[1].to(dev)
        v = (torch.randn(B, T, heads, value_dim, generator=gen) * 0.1).to(dev)
        start = time.perf_counter()
        recurrent_update(q[:, :-1].contiguous(), k[:, :-1].contiguous(), v[:, :-1].contiguous(), S, decay=0.99)
        prefill_ms = (time.perf_counter() - start) * 1e3
        S_before = S.clone()
        o_ref, _ = recurrent_reference(q[:, -1:].contiguous(), k[:, -1:].contiguous(), v[:, -1:].contiguous(),
                                       S_before, decay=0.99)
        q1, k1, v1 = q[:, -1:].contiguous(), k[:, -1:].contiguous(), v[:, -1:].contiguous()

        def step():
            S.copy_(S_before)  # the step is repeatable: restore the state, update once
            return recurrent_update(q1, k1, v1, S, decay=0.99)

        out = step()
        measure.error_rel = _rel_err(out, o_ref)
        measure.decode = time_fn(step, dev, setup.repeats)
        measure.prefill = Timing(prefill_ms, prefill_ms, prefill_ms, "wall clock, once", 1)
        tensors = [S]
    else:
        # native Mamba / Gated DeltaNet state: exact bytes, a torch stand-in update
        conv_dtype = FLOAT_DTYPES.get(state.conv_storage.name, torch.bfloat16)
        ssm_dtype = FLOAT_DTYPES.get(state.ssm_storage.name, torch.bfloat16)
        conv = torch.zeros(B, state.conv_elements, dtype=conv_dtype, device=dev)
        ssm = torch.zeros(B, state.ssm_elements, dtype=ssm_dtype, device=dev)
        x = torch.randn(B, state.ssm_elements, generator=gen).to(dev, ssm_dtype)

        def step():
            ssm.mul_(0.99).add_(x)
            return ssm

        step()
        measure.decode = time_fn(step, dev, setup.repeats)
        measure.engine = "torch (no kernel for this state)"
        tensors = [conv, ssm]
    if setup.offload_sessions:  # idle sequences' state rows go to host memory
        keep = B - setup.offload_sessions
        host = [t[keep:].to("cpu", copy=True) for t in tensors]
        tensors = [t[:keep].clone() for t in tensors]
        measure.offloaded_bytes = nbytes(*host)
    measure.cache_bytes = measure.pool_bytes = nbytes(*tensors)
    measure.block_table_bytes = 0
    measure.breakdown = {"state_bytes_per_sequence": nbytes(*tensors) // max(B - setup.offload_sessions, 1)}
    if mem0 is not None:
        measure.cuda_allocated_delta = torch.cuda.memory_allocated(dev) - mem0
    return measure
