"""Build and measure the layer kinds that are not a paged K/V cache: an MLA
latent, compressed sparse attention, and a fixed recurrent state.

Imports torch and triton: only reached from `kvplan bench`.
"""

from __future__ import annotations

import math

import torch

from ..core.layers import RecurrentState, TokenCache
from .inputs import FLOAT_DTYPES, GroupMeasure, Setup, _block_bytes, _queries, _reference, _rel_err, _structured_kv, _token_ids, nbytes, one_sequence_table
from .timing import time_fn, time_offload_cycle, time_once


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
    pre_r, pre_p = pre[:, :R].contiguous(), pre[:, R:].contiguous()
    pre_slots = torch.tensor(slots, dtype=torch.int64, device=dev)
    prefill, _ = time_once(lambda: mla_write(pre_r, pre_p, lat, pre_slots, scale=scale), dev,
                           warm=lambda: mla_write(pre_r, pre_p, lat, torch.full_like(pre_slots, -1), scale=scale))
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

        def first_step():  # the resumed sequence alone, through its new blocks
            sid = offloaded[0].seq_id
            bt1, len1 = one_sequence_table(alloc, sid, dev)
            return mla_decode(q[sid:sid + 1, :, :R].contiguous(), q[sid:sid + 1, :, R:].contiguous(), lat, bt1,
                              len1, scale=1.0 / math.sqrt(R + P), cache_scale=scale)

        measure.offload_cycle = time_offload_cycle(offload_again, resume, first_step, dev, setup.repeats)
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
    measure.prefill = prefill
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

    def compress():  # pure: returns new tensors, so the warm-up may run it whole
        return csa_compress(k, v, lens, m), csa_local_window(k, v, lens, max(W, 1), m)

    prefill, ((ck, cv, ng), (lk, lv, ll)) = time_once(compress, dev, warm=compress)
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
    measure.prefill = prefill
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
        # the prefill only makes the state non-trivial (its bytes do not depend on it);
        # the interpreter runs the token loop in Python: a shorter one there
        T = min(setup.tokens, 64 if dev.type == "cuda" else 16)
        qkv = torch.randn(3, B, T, heads, key_dim, generator=gen) * 0.1
        q, k = qkv[0].to(dev), qkv[1].to(dev)
        v = (torch.randn(B, T, heads, value_dim, generator=gen) * 0.1).to(dev)
        qp, kp, vp = q[:, :-1].contiguous(), k[:, :-1].contiguous(), v[:, :-1].contiguous()
        prefill, _ = time_once(lambda: recurrent_update(qp, kp, vp, S, decay=0.99), dev,
                               warm=lambda: recurrent_update(qp, kp, vp, S.clone(), decay=0.99))
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
        measure.prefill = prefill
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
