"""Build and measure one paged K/V attention layer with kvplan.kernels: writes,
decode, and the techniques that act on it (windows, fp8 and KIVI storage, Quest,
eviction, paging, prefix sharing, offload).

One call builds the cache of ONE layer of a distinct layer spec (every layer of
the group has the same shapes, so bytes for the group are that layer's exact
tensor bytes x the layer count), writes a prefill of `tokens - 1` tokens for
every sequence, then times a decode step: the write of the last token
(idempotent, so it can be repeated) plus any per-step metadata work (Quest) plus
attention over the cache. Eviction runs its selection and compaction after the
last write, so the timed step is attention over the kept tokens.

Imports torch and triton: only reached from `kvplan bench`. TRITON_INTERPRET
must already be set on a machine without CUDA (runner.py does it).
"""

from __future__ import annotations

from dataclasses import replace

import torch

from ..core.layers import TokenCache
from .inputs import FLOAT_DTYPES, GroupMeasure, Setup, _block_bytes, _queries, _reference, _rel_err, _structured_kv, _token_ids, nbytes, one_sequence_table
from .timing import time_fn, time_offload_cycle, time_once


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
    prefill, _ = time_once(lambda: write(pre_k, pre_v, pre_slots, pre_bidx), dev,
                           warm=lambda: write(pre_k, pre_v, torch.full_like(pre_slots, -1), pre_bidx))
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

        def first_step():  # the resumed sequence alone, through its new blocks
            sid = offloaded[0].seq_id
            bt1, len1 = one_sequence_table(alloc, sid, dev)
            q1 = replace(quant, k_residual=quant.k_residual[sid:sid + 1]) if quant is not None else None
            return paged_decode(q[sid:sid + 1], k_cache, v_cache, bt1, len1, window_tokens=window,
                                k_scale=k_scale, v_scale=v_scale, quant=q1, check_bounds=False)

        measure.offload_cycle = time_offload_cycle(offload_again, resume, first_step, dev, setup.repeats)
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
