"""The verify step of `kvplan fit`: rank the passing candidates, running the engine's accounting lazily
(ranked, check_engine), then evaluate the best through planner.evaluate and the engine's report exactly as `kvplan
estimate` does (verify, deployment_for); an option whose evaluation disagrees with the screen is dropped."""

from __future__ import annotations

from ..capacity.hardware import Deployment, make_deployment
from ..errors import KvplanError
from ..planner import evaluate
from ..techniques.registry import build_all
from .engine import EngineAccounting
from .flags import split_flags, split_placement
from .records import Candidate, FitRequest, rank_key
from .screen import miss_text


def ranked(req: FitRequest, engine: EngineAccounting, record, passing: list[Candidate], top: int | None) -> list[Candidate]:
    """The passing candidates best first. Under an engine, vLLM's accounting is
    run in order of the optimistic key until `top` survive and no unchecked
    candidate could still rank among them (the first two key fields bound it)."""
    def key(c):
        return rank_key(c, req.objective, req.quality_first)

    order = sorted(passing, key=key)
    if not engine.checks:
        return order
    kept: list[Candidate] = []
    for c in order:
        if top and len(kept) >= top:  # top 0 or None: every candidate checked
            bound = sorted(kept, key=key)[top - 1]
            if key(c)[:2] > key(bound)[:2]:
                break
        check_engine(req, engine, c, record)
        if c.ok:
            kept.append(c)
    return sorted(kept, key=key)


def check_engine(req: FitRequest, engine: EngineAccounting, c: Candidate, record) -> None:
    """vLLM's accounting for a candidate the planner passed (lazy: the screen
    runs it only on the candidates it ranks, explains or draws)."""
    if not engine.checks or c.engine_checked or c.max_concurrency is None:
        return
    c.engine_checked = True
    plan = c._plan
    flags = split_flags(req, engine.name, plan.model, c.tp, c.pp, c.dp, c.ep)  # the screen passed them on this split
    dep = Deployment(c.gpu, c.tp, c.pp, req.mem_util, req.reserve_bytes, record.total_bytes, None, record, c.dp, c.ep,
                     c.dense_over_all, placement=split_placement(engine.name, flags), **flags)
    try:
        # one DP rank's pool (each rank its own engine core): the replica serves dp x its requests
        c.engine_concurrency = c.dp * engine.concurrency(plan, dep, (id(plan), c.tp, c.pp, c.dp))
        c.engine_kv_dtype = engine.last_kv_dtype
    except KvplanError as exc:
        c.misses = (("engine", 0.0, req.concurrency), *c.misses)
        c.reason, c.constraint = f"{engine.label} would not start: {exc.message}", "engine"
        return
    if c.engine_concurrency < req.concurrency:
        c.misses = (("engine", c.engine_concurrency, req.concurrency), *c.misses)
        if c.reason is None:
            c.reason, c.constraint = miss_text(*c.misses[0], engine.label), "engine"


def deployment_for(req: FitRequest, c: Candidate, record) -> Deployment:
    """The deployment `kvplan estimate --gpu G --tp T --pp P --mem-util --reserve` builds."""
    from ..request import engine_family

    engine = engine_family(req.engine)
    # estimate's flags on this split (fit/flags.py); the screen's model (EPLB's R follows its routed experts)
    flags = split_flags(req, engine, c._plan.model, c.tp, c.pp, c.dp, c.ep)
    return make_deployment(c.gpu.name, tp=c.tp, pp=c.pp, mem_util=req.mem_util, reserve_bytes=req.reserve_bytes,
                           weight_bytes=record.total_bytes, dp=c.dp, ep=c.ep, dense_over_all=c.dense_over_all,
                           placement=split_placement(engine, flags), **flags)


def verify(req, base, record, engine, passing, top):
    """Evaluate the best `top` passing candidates (all when None) through planner.evaluate."""
    from ..workflows import apply_kv_dtype

    options, dropped = [], []
    for c in passing:
        if top is not None and len(options) >= top:
            break
        check_engine(req, engine, c, record)
        if not c.ok:
            continue  # vLLM's accounting holds fewer sequences
        model, _ = apply_kv_dtype(base, c.kv_dtype)
        try:
            result = evaluate(model, build_all(list(c.techniques)), req.context_tokens, req.batch_size,
                              deployment_for(req, c, record), weights=record)
        except KvplanError as exc:
            dropped.append((c, exc.message))
            continue
        problems = []
        if result.capacity.max_concurrency != c.max_concurrency:
            problems.append(f"concurrency {result.capacity.max_concurrency} (screen {c.max_concurrency})")
        if result.kv_bytes_per_gpu != c.kv_bytes_per_gpu:
            problems.append(f"KV per GPU {result.kv_bytes_per_gpu} (screen {c.kv_bytes_per_gpu})")
        if result.capacity.weight_bytes_per_gpu != c.weight_bytes_per_gpu:
            problems.append(f"weights per GPU {result.capacity.weight_bytes_per_gpu} (screen {c.weight_bytes_per_gpu})")
        if engine.on:
            from ..engines import vllm_report
            from ..render import Report

            try:
                pool = vllm_report.add_to_report(Report({}), result, req.context_tokens, rules=engine.rules,
                                                 speculation=engine.speculation)
            except KvplanError as exc:  # the screen passed what the engine model refuses: report, never crash
                dropped.append((c, f"vLLM: {exc.message}"))
                continue
            if abs(pool.max_concurrency * c.dp - c.engine_concurrency) > 1e-9 or not pool.fits:
                problems.append(f"vLLM concurrency {pool.max_concurrency * c.dp:.4f} "
                                f"(screen {c.engine_concurrency:.4f})")
        elif engine.name == "sglang":
            from ..engines import sglang_report
            from ..render import Report

            try:
                pool = sglang_report.add_to_report(Report({}), result, req.context_tokens,
                                                   mem_fraction_static=engine.mem_fraction_static,
                                                   speculation=engine.speculation, release=engine.release,
                                                   batch=req.batch_size)
            except KvplanError as exc:
                dropped.append((c, f"SGLang: {exc.message}"))
                continue
            if abs(pool.max_concurrency * c.dp - c.engine_concurrency) > 1e-9:  # one DP rank's pool, as vLLM's
                problems.append(f"SGLang concurrency {pool.max_concurrency * c.dp:.4f} "
                                f"(screen {c.engine_concurrency:.4f})")
        if result.decode is not None and c.decode_ms_per_token is not None \
                and abs(result.decode.step_ms - c.decode_ms_per_token) > 1e-6 * max(1.0, c.decode_ms_per_token):
            problems.append(f"decode {result.decode.step_ms} ms (screen {c.decode_ms_per_token})")
        if problems:
            dropped.append((c, "; ".join(problems)))
            continue
        c.result = result
        if result.decode is not None:
            c.decode_ms_per_token = result.decode.step_ms
        options.append(c)
    return options, dropped


__all__ = ["ranked", "check_engine", "deployment_for", "verify"]
