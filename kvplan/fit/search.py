"""The exhaustive search behind `kvplan fit`.

Two passes. The screen walks the whole grid (GPU kind x count x TP x PP x KV
dtype x technique set) with the planner's own pieces, computed once per
(technique set, split) and reused across GPU kinds: the shard of each
pipeline stage (capacity.shard), a sequence's bytes on it (capacity.pool
.batch_bytes), the weights on each stage (capacity.weights.stage_weight_bytes),
the decode bytes (capacity.costs.decode_cost) and, under --engine vllm,
vLLM's blocks (engines.vllm.simulate) and its predicted KV memory
(engines.vllm_report.kv_memory_of). The pool and concurrency per GPU kind are
then the same few lines of arithmetic `capacity.pool.capacity` does.
The options printed are evaluated again with `planner.evaluate` (and vLLM's
report) exactly as `kvplan estimate` evaluates them; an option whose
evaluation disagrees with the screen is dropped, never printed.

This module holds the search loop (search) and its model-level checks (the grid's size, --dp-ep's refusal). Its
pieces: records.py (FitRequest, Candidate, FitResult, ranking), engine.py (the engine's accounting), stages.py (the
per-stage sums), split_weights.py (the weights by split), screen.py (the per-split screen and its refusals),
verify.py (the ranking with the engine's check, and the evaluation again) and queries.py (closest, cheaper failures,
Pareto). Their public names stay importable from here.
"""


from __future__ import annotations

import math

from ..capacity.weights import require_known
from ..errors import KvplanError, UsageError
from ..planner import compose
from ..techniques.registry import build_all
from .engine import EngineAccounting
from .grid import Caveat, dp_splits, kv_dtype_caveat, splits
from .queries import cheaper_failures, closest, pareto
from .records import OBJECTIVES, Candidate, FitRequest, FitResult, achievable, objective_value, price_of, rank_key
from .screen import screen
from .verify import check_engine, deployment_for, ranked, verify

# most deployments one search screens: each is a Candidate in memory (10.5 million took 33 s and 3 GiB;
# 13 --allow techniques over every GPU and split ran for minutes before memory ran out)
MAX_SCREENED = 4_000_000


def _check_grid_size(req: FitRequest) -> None:
    """Refuse, before any work, a grid larger than MAX_SCREENED (its size is known from the options alone)."""
    from .grid import technique_sets

    # --dp-ep's DP + EP splits count as splits (the screen walks them as it walks TP x PP)
    layouts = len(splits(req.max_gpus)) + (len(dp_splits(req.max_gpus, _dp_with_pp(req))) if req.dp_ep else 0)
    sizes = (len(req.gpus), layouts, len(set(req.kv_dtypes)), len(technique_sets(list(req.allowed))))
    if math.prod(sizes) > MAX_SCREENED:
        raise UsageError(f"the search would screen {math.prod(sizes):,} deployments ({sizes[0]} GPU kinds x {sizes[1]:,} "
                         f"{'TP/PP and DP + EP' if req.dp_ep else 'TP/PP'} splits x {sizes[2]} KV dtypes x {sizes[3]:,} technique sets), above the limit of "
                         f"{MAX_SCREENED:,}", "narrow it: fewer GPU kinds (--gpu), a lower --max-gpus, "
                                              "fewer --allow techniques or --kv-dtype values")


def search(req: FitRequest, *, verify_top: int | None = 20) -> FitResult:
    """Screen the grid, rank what passes, evaluate the top options as `kvplan estimate` does."""
    from ..sources import load_model_and_weights
    from ..workflows import apply_kv_dtype

    if req.objective not in OBJECTIVES:
        from ..errors import UsageError

        raise UsageError(f"--objective {req.objective!r} is not one of {', '.join(OBJECTIVES)}")
    _check_grid_size(req)
    base, record = load_model_and_weights(req.model, revision=req.revision, overrides=list(req.overrides),
                                          weights=req.weights, quantization=req.quantization)
    require_known(record, base.name)  # every deployment's pool is its GPUs' memory less the weights
    longest = base.max_context_tokens
    if (not req.context_given and isinstance(longest, int) and not isinstance(longest, bool)
            and 0 < longest < req.context_tokens):
        from dataclasses import replace

        req = replace(req, context_tokens=longest)  # as `kvplan estimate` does without --context
    from ..workflows import warn_above_max_context

    warn_above_max_context(base, req.context_tokens)  # as `kvplan estimate` warns
    engine = EngineAccounting(req.engine, req.context_tokens, req.speculation,
                     req.mem_util if req.mem_util_given else None, req.batch_size)
    # once, before the search, by the selected engine's rules: a model without a draft that engine serves is refused
    # (techniques change neither the MTP layers nor the draft checkpoint)
    if engine.name == "sglang":  # a vision tower SGLang builds at no split (its per-split refusals: screen)
        from ..engines.sglang_vision_refusal import check_model as check_sglang_tower

        check_sglang_tower(base)
    if engine.speculation is not None and engine.name == "sglang":
        from ..engines.sglang_report import resolve_speculation as sglang_speculation

        engine.sglang_spec = sglang_speculation(base, engine.speculation)
    elif engine.speculation is not None:
        from ..engines.vllm_speculative import resolve_speculation

        engine.drafted = resolve_speculation(base, engine.speculation)
    if engine.on and req.max_gpus > 1:  # vLLM refuses pp > 1 for a class without SupportsPP: those splits are left out
        from ..engines.vllm_pp import pipeline_support

        pp = pipeline_support(base.registry_names, engine.release)
        if pp.supported is False:
            engine.pp_refused = (f"vLLM {pp.release} runs {pp.architecture} without pipeline parallelism only "
                                 "(no SupportsPP)")
        engine.pp_note = pp.note
    if engine.name == "sglang" and req.max_gpus > 1:  # SGLang asserts support_pp: those splits are left out
        from ..engines.sglang_pp import pipeline_support as sglang_pipeline_support
        from ..engines.sglang_rules import rules_for

        pp = sglang_pipeline_support(base.registry_names, rules_for(engine.release).release,
                                     base.config_model_type or base.model_type)
        if pp.supported is False:
            engine.pp_refused = (f"SGLang {pp.release} runs {pp.architecture} without pipeline parallelism only "
                                 "(its forward takes no pp_proxy_tensors)")
        engine.pp_note = pp.note
    if engine.on:  # vLLM holds (and reads) a float32 checkpoint's weights in bf16
        from ..engines.vllm_load import vllm_loaded

        record, _ = vllm_loaded(base, record)
    tokens, need = req.context_tokens, req.concurrency
    from .grid import technique_sets

    sets = technique_sets(list(req.allowed))
    grid = [(tp, pp, 1) for tp, pp in splits(req.max_gpus)]
    dp_skipped = None
    if req.dp_ep:
        dp_skipped = _dp_ep_refusal(req, base, record, engine)
        if dp_skipped is None:
            grid += [(tp, pp, dp) for dp, tp, pp in dp_splits(req.max_gpus, _dp_with_pp(req))]
    candidates: list[Candidate] = []
    skipped: list[tuple[str, str]] = []
    seen_dtypes = []
    weights_by_split: dict = {}
    seen_caches: dict = {}  # every cache's storage under a dtype searched -> that dtype
    for dtype_text in req.kv_dtypes:
        model, dtype = apply_kv_dtype(base, dtype_text)
        if dtype in seen_dtypes:
            continue
        caches = tuple(c.storage for layer in model.layers for c in layer.caches)
        if caches in seen_caches:  # no K/V or latent cache to store in it (a pure state-space model)
            skipped.append((f"kv {dtype}", f"{base.name} keeps no K/V cache for it to change: the same options as "
                                           f"kv {seen_caches[caches]}"))
            continue
        seen_caches[caches] = dtype
        seen_dtypes.append(dtype)
        dtype_caveat = Caveat(f"kv {dtype}", kv_dtype_caveat(dtype))
        for tset in sets:
            if dtype_caveat.caveat != "none" and any(s.split(":")[0].split(",")[0] in ("fp8", "int8", "int4", "int2", "kivi") for s in tset):
                continue  # a quantizer technique replaces the KV dtype: searched on auto only
            chain_specs = (*req.base_techniques, *tset)
            try:
                chain = build_all(list(chain_specs))
                plan = compose(model, chain)[-1]
            except KvplanError as exc:
                skipped.append((" + ".join([f"kv {dtype}", *tset]) , exc.message))
                continue
            caveats = (dtype_caveat, *(Caveat(t.spec, t.caveat) for t in chain))
            screen(req, plan, record, engine, grid, dtype, tuple(chain_specs), caveats, tokens, need, candidates,
                    weights_by_split)
    passing = ranked(req, engine, record, [c for c in candidates if c.ok], verify_top)
    options, dropped = verify(req, base, record, engine, passing, verify_top)
    return FitResult(req, base.name, options, candidates, engine.release, dropped, skipped,
                     engine, record, dp_skipped)


def _dp_with_pp(req: FitRequest) -> bool:
    """Whether --dp-ep searches DP + EP splits with pipeline stages: vLLM's and the ideal accounting (capacity.
    experts_pp plans vLLM 0.34's DP with PP); not SGLang's, whose --dp / --ep with --pp kvplan has not read."""
    from ..request import engine_family

    return engine_family(req.engine) != "sglang"


def _dp_ep_refusal(req: FitRequest, model, record, engine: EngineAccounting) -> str | None:
    """Why --dp-ep searches no DP + EP split of `model` (None: it does)."""
    from ..capacity.experts import check_placement, is_moe

    if engine.name == "sglang":  # SGLang's attention DP, as `kvplan estimate --tp T --dp N --engine sglang` plans it
        from ..engines.sglang_dp import check_model

        try:
            check_model(model, 2)
        except KvplanError as exc:
            return exc.message
    if not is_moe(model) and engine.name == "sglang":  # SGLang takes --ep-size for it: engines/sglang_dp.py
        return (f"{model.name} has no routed experts (SGLang 0.5.23 takes --ep-size for it but places nothing by it: "
                "sglang_dp.dense_ep_refusal; its attention DP alone: kvplan estimate --tp T --dp N --engine sglang)")
    if not is_moe(model):
        return f"{model.name} has no routed experts (vLLM 0.34 refuses --enable-expert-parallel for it)"
    if req.max_decode_ms is not None:
        return ("--max-decode-ms: the decode floor is not modelled under data / expert parallelism (a step reads "
                "the experts its tokens are sent to on other ranks)")
    try:
        check_placement(model, record, 2, True, 1)
    except KvplanError as exc:
        return exc.message
    return None


__all__ = ["FitRequest", "FitResult", "Candidate", "search", "closest", "cheaper_failures", "pareto", "rank_key",
           "OBJECTIVES", "price_of", "deployment_for"]

# also importable from here (their homes: records.py, queries.py, verify.py)
__all__ += ["achievable", "objective_value", "check_engine"]
