"""The per-split screen of `kvplan fit` (screen): every GPU kind on one (tp, pp, dp) split of a plan, refused
where the split or the engine refuses it (heads, a vision tower, an MLP / expert width, a card, SGLang's float
load), else sized with the stage sums (fit/stages.py), the weights by split (fit/split_weights.py) and the budgets;
the miss texts (miss_text) a failing candidate carries."""

from __future__ import annotations

import math
from dataclasses import replace

from ..capacity.costs import decode_cost
from ..capacity.hardware import Deployment
from ..capacity.pool import batch_bytes
from ..capacity.weights import decode_read_bytes
from ..errors import UsageError
from ..units import GIB
from .engine import EngineAccounting
from .flags import split_flags, split_placement
from .grid import split_reason
from .records import Candidate, price_of
from .split_weights import split_weight_bytes
from .stages import Layers, fit_sequences


def miss_text(name: str, actual: float, limit: float, engine: str = "vLLM") -> str:
    if name == "concurrency":
        return f"pool too small: {actual:,.0f} sequences fit, {limit - actual:,.0f} short of {limit:,.0f}"
    if name == "kv":
        return f"KV per GPU {actual:,.2f} GiB is {actual - limit:,.2f} GiB above the budget {limit:,.2f} GiB"
    if name == "engine":
        return f"{engine}'s pool holds {actual:,.2f} sequences, {limit - actual:,.2f} short of {limit:,.0f}"
    if name == "load":
        return (f"{engine}'s load holds the float checkpoint first: {actual:,.2f} GiB per GPU, more than the "
                f"{limit:,.2f} GiB a GPU has by {actual - limit:,.2f} GiB")
    return f"decode floor {actual:,.2f} ms/token is {actual - limit:,.2f} ms above the budget {limit:,.2f} ms"


def screen(req, plan, record, engine, grid, dtype, techniques, caveats, tokens, need, out, weights_by_split):
    """Append to `out` a Candidate for every GPU kind on every (tp, pp, dp) split of `grid` for `plan` (one KV dtype
    and technique set); weights_by_split: the weights by split, filled once per search and reused."""
    model = plan.model
    batch = req.batch_size
    resident = batch  # the sequences planned that stay on the GPUs
    if plan.offload is not None:
        from ..planner import _offload

        resident = batch - _offload(plan, batch_bytes(plan, tokens, batch), batch)[1]
    layers_by_tp: dict[int, Layers] = {}
    read_by_tp: dict[int, int] = {}
    for tp, pp, dp in grid:
        bad = split_reason(model, tp, pp)
        if bad is None and pp > 1 and engine.pp_refused:
            bad = engine.pp_refused
        ep = _ep_of(engine, model, tp, dp, req.flags.redundant_experts)
        flags = {}
        if bad is None:  # estimate's flags on this split (fit/flags.py): a split that cannot take one is refused
            try:
                flags = split_flags(req, engine.name, model, tp, pp, dp, ep)
            except UsageError as exc:
                bad = exc.message
        # as deployment_for's (capacity/placement.py)
        placement = split_placement(engine.name, flags)
        if bad is None and engine.name == "sglang":  # a vision tower SGLang refuses at this split
            from ..engines.sglang_groups import encoder_whole
            from ..engines.sglang_vision_refusal import refusal

            # --mm-enable-dp-encoder: the tower whole, no heads to split (engines/sglang_report.py refuse_unread)
            bad = None if encoder_whole(model, flags.get("sglang_groups")) else refusal(model, tp, dp)
        if bad is None and engine.name == "vllm":  # a vision tower vLLM refuses at this TP
            from ..engines.vllm_encoder_dp import tower_whole
            from ..engines.vllm_vision_refusal import refusal as vllm_vision_refusal

            # --mm-encoder-tp-mode data: the tower whole, nothing to divide (engines/vllm_vision_refusal.py check)
            bad = None if tower_whole(model, flags.get("mm_encoder_tp_mode")) else vllm_vision_refusal(model, tp)
        if bad is None and engine.name == "vllm":  # a text MLP / expert width vLLM cannot split (engines/vllm_widths.py)
            from ..engines.vllm_widths import refusal as vllm_width_refusal

            bad = vllm_width_refusal(model, tp, dp, ep, engine.release, flags.get("a2a"))
        if bad is not None:
            for gpu in req.gpus:
                out.append(Candidate(gpu, tp, pp, dtype, techniques, caveats, price_of(gpu, req.prices),
                                     reason=bad, constraint="heads" if "heads" in bad else "split", dp=dp, ep=ep,
                                     dense_over_all=dp > 1 and engine.name == "sglang",
                                     kv_served_as=engine.served_kv_dtype(model, gpu, dtype)))
            continue
        stage_w = weights_by_split.get((tp, pp, dp))
        if stage_w is None:
            stage_w = split_weight_bytes(model, record, tp, pp, dp, ep, engine.name, flags, placement)
            weights_by_split[(tp, pp, dp)] = stage_w
        heaviest = max(stage_w)
        stages = None
        for gpu in req.gpus:
            c = Candidate(gpu, tp, pp, dtype, techniques, caveats, price_of(gpu, req.prices), dp=dp,
                          ep=ep, dense_over_all=dp > 1 and engine.name == "sglang",
                          kv_served_as=engine.served_kv_dtype(model, gpu, dtype))
            out.append(c)
            budget = int(gpu.usable_bytes * req.mem_util)
            pool = budget - heaviest - req.reserve_bytes  # the smallest pool: the heaviest stage's
            c.weight_bytes_per_gpu = heaviest
            refused = engine.card_refusal(model, gpu, dtype)
            if refused is not None:  # the engine refuses this card whatever the split (a card below SM 8.0)
                c.reason, c.constraint = refused, "card"
                continue
            if engine.name == "sglang":  # a text width SGLang cannot split on this card (engines/sglang_widths.py)
                from ..engines.sglang_widths import refusal as sglang_width_refusal, split_of

                why = sglang_width_refusal(model, split_of(model, tp, dp, c.ep, gpu, flags.get("a2a"),
                                                           flags.get("replicated_shared", False),
                                                           flags.get("sglang_groups")), engine.release)
                if why is not None:
                    c.reason, c.constraint = why, "split"
                    continue
            if engine.name == "vllm":  # NVFP4 experts whose backend on this card refuses the split (vllm_nvfp4_moe)
                from ..engines.vllm_widths import card_refusal as vllm_card_refusal

                why = vllm_card_refusal(model, tp, dp, c.ep, engine.release, gpu.cuda_capability)
                if why is not None:
                    c.reason, c.constraint = why, "split"
                    continue
            if pool <= 0:
                c.reason = (f"weights do not fit: {heaviest / GIB:,.2f} GiB + reserve {req.reserve_bytes / GIB:,.2f} GiB "
                            f"per GPU exceed the usable {budget / GIB:,.2f} GiB by {-pool / GIB:,.2f} GiB")
                c.constraint = "weights"
                c.misses = (("weights", (heaviest + req.reserve_bytes) / GIB, budget / GIB),)
                continue
            if engine.name == "sglang" and model.online_quantization:
                from ..configs.quant_online import sglang_load_excess, sglang_load_refusal

                # SGLang holds the float checkpoint's share before it quantizes: a split whose share does not fit
                # the GPU cannot start (configs/quant_online.py), whatever the quantized weights leave
                share = sglang_load_excess(model, gpu, tp, pp)
                if share is not None:
                    c.reason, c.constraint = sglang_load_refusal(model, gpu, tp, pp), "load"
                    c.misses = (("load", share / GIB, gpu.usable_bytes / GIB),)
                    continue
            if stages is None:
                table = layers_by_tp.get(tp)
                if table is None:
                    table = layers_by_tp[tp] = Layers(plan, tokens, tp)
                    # the decode bytes per GPU do not depend on pp: every stage's reads are summed
                    unit = decode_cost(model, Deployment(gpu=replace(gpu, hbm_gbps=1.0), tp=tp, pp=1, weights=record),
                                       tokens, max(resident, 1), decode_read_bytes(record, model.num_layers))
                    read_by_tp[tp] = unit.weight_read_bytes_per_gpu + unit.kv_read_bytes_per_gpu
                stages = table.stages(pp)
                # each DP rank holds its own share of the batch (planner.evaluate: ceil(resident / dp))
                kv_gpu = max(table.batch_total(st, -(-resident // dp)) for st in stages)
                read_bytes = read_by_tp[tp] if dp == 1 else None  # no decode floor under DP / EP (planner)
                # stages alike in bytes and weights give the same fit: keep one of each
                distinct = list({(st.unique, st.shared, st.fixed, st.prefix, w): (st, w)
                                 for st, w in zip(stages, stage_w)}.values())
            c.pool_bytes_per_gpu = pool
            # a replica of dp ranks holds dp x one rank's sequences (capacity.pool.capacity)
            c.max_concurrency = dp * max(min(fit_sequences(st, budget - w - req.reserve_bytes - st.fixed)
                                             for st, w in distinct), 0)
            c.kv_bytes_per_gpu = kv_gpu
            c.decode_ms_per_token = read_bytes / (gpu.hbm_gbps * 1e9) * 1e3 if gpu.hbm_gbps and read_bytes else None
            c._plan = plan  # for the engine check
            misses = []
            if c.max_concurrency < need:
                misses.append(("concurrency", c.max_concurrency, need))
            if req.max_kv_gib is not None and kv_gpu > req.max_kv_gib * GIB:
                misses.append(("kv", kv_gpu / GIB, req.max_kv_gib))
            if req.max_decode_ms is not None and (c.decode_ms_per_token is None or c.decode_ms_per_token > req.max_decode_ms):
                misses.append(("decode", c.decode_ms_per_token or math.inf, req.max_decode_ms))
            if misses:
                c.misses = tuple(misses)
                c.constraint = {"concurrency": "pool"}.get(misses[0][0], misses[0][0])
                c.reason = miss_text(*misses[0])


def _ep_of(engine: EngineAccounting, model, tp: int, dp: int, redundant: str | None = None) -> bool:
    """Whether a DP split (dp > 1) places the routed experts whole by expert: always under vLLM (--dp-ep's
    --enable-expert-parallel); under SGLang --ep-size dp x tp where it divides the routed experts (FusedMoE asserts
    experts % ep_size == 0: sglang_dp.check_model), else the experts split over all dp x tp GPUs (MoE TP).
    redundant: fit's --redundant-experts R (SGLang takes an integer only): the physical experts, routed + R, divide
    (capacity/eplb.py check_redundant)."""
    if dp <= 1:
        return False
    if engine.name != "sglang":
        return True
    routed = model.weight_routed_params
    more = int(redundant) if redundant is not None and redundant != "auto" else 0
    return routed is not None and routed[0] > 0 and (routed[0] + more) % (dp * tp) == 0  # 0: a dense model


__all__ = ["screen", "miss_text"]
