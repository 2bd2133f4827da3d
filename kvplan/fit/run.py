"""From command-line or scenario values to the fit report (commands stay thin)."""

from __future__ import annotations

from pathlib import Path

from ..capacity.hardware import DEFAULT_MEM_UTIL
from ..errors import BudgetExceeded, UsageError
from ..render import Report
from ..units import check_number, parse_positive_int, parse_size, parse_tokens
from ..request import DEFAULT_CONTEXT_TOKENS, Speculation, engine_family
from .grid import list_items, parse_gpus, parse_prices, split_allow
from .search import OBJECTIVES, FitRequest, FitResult, closest, search

MAX_GPUS_LIMIT = 1024  # most GPUs in one replica (tp x pp) that --max-gpus may ask for


def request_from_options(*, model, context, concurrency, gpu, max_gpus, allow, kv_dtypes, engine, objective, prices,
                         max_kv_gib, max_decode_ms, mem_util, reserve, weights, overrides, revision,
                         quality_first, mtp: bool = False, draft_model: str | None = None,
                         num_speculative_tokens: int | None = None, quantization: str | None = None,
                         dp_ep: bool = False, **deployment_flags) -> FitRequest:
    """deployment_flags: estimate's --all2all-backend, --moe-a2a-backend, --gpus-per-node, --enable-dp-lm-head,
    --moe-dense-tp-size, --mm-enable-dp-encoder, --mm-encoder-tp-mode (fit/flags.py parse)."""
    from .flags import parse as parse_flags

    if objective not in OBJECTIVES:
        raise UsageError(f"--objective {objective!r} is not one of {', '.join(OBJECTIVES)}")
    mem_util_given = mem_util is not None
    if mem_util is None:  # as `kvplan estimate`: under --engine vllm, that release's gpu_memory_utilization default
        mem_util = DEFAULT_MEM_UTIL
        if engine_family(engine) == "vllm":
            from ..engines.vllm_rules import parse_engine

            mem_util = parse_engine(engine)[1].gpu_memory_utilization
    if not 0 < mem_util <= 1:
        raise UsageError(f"--mem-util must be in (0, 1], got {mem_util}")
    check_number(max_kv_gib, "--max-kv-gib", strict=True)
    check_number(max_decode_ms, "--max-decode-ms", strict=True)
    gpus_most = parse_positive_int(max_gpus, "--max-gpus")
    if gpus_most > MAX_GPUS_LIMIT:  # the split grid grows as n log n: 100,000 ran for hours
        raise UsageError(f"--max-gpus {gpus_most:,}: at most {MAX_GPUS_LIMIT:,} GPUs in one replica are searched",
                         "a replica this large is split by data parallelism: plan one replica, then count replicas")
    flags = parse_flags(engine, dp_ep, **deployment_flags)
    dtypes = tuple(list_items(kv_dtypes, "--kv-dtype")) if kv_dtypes is not None else ("auto",)
    allowed = tuple(split_allow(allow))
    if context is not None:  # a prefix longer than --context was searched, capped at the context, unsaid
        from ..techniques.registry import build_all
        from ..workflows import check_prefix_within

        check_prefix_within(build_all([s for s in allowed if s.split(":")[0].strip() == "prefix"]),
                            parse_tokens(context, "--context"))
    return FitRequest(
        model=model, context_tokens=parse_tokens(context if context is not None else str(DEFAULT_CONTEXT_TOKENS),
                                                  "--context"), context_given=context is not None,
        concurrency=parse_positive_int(concurrency, "--concurrency"), gpus=tuple(parse_gpus(gpu)),
        max_gpus=gpus_most, allowed=allowed, kv_dtypes=dtypes,
        engine=engine, speculation=Speculation.parse(mtp, draft_model, num_speculative_tokens), objective=objective, quality_first=quality_first, mem_util=mem_util,
        mem_util_given=mem_util_given,
        reserve_bytes=parse_size(reserve, "--reserve", allow_zero=True), weights=weights,
        max_kv_gib=max_kv_gib, max_decode_ms=max_decode_ms, prices=parse_prices(prices), overrides=tuple(overrides or ()),
        revision=revision, quantization=online_of_engine(quantization, engine), dp_ep=dp_ep,
        flags=flags)


def online_of_engine(quantization: str | None, engine: str):
    """--quantization by the rule of the engine searched (SGLang's under --engine sglang, else vLLM's)."""
    from ..request import _asked_release, online_quantization

    kind = "sglang" if engine_family(engine) == "sglang" else "vllm"
    return online_quantization(quantization, kind, _asked_release(engine) if kind == engine_family(engine) else None)


def nothing_meets(result: FitResult) -> BudgetExceeded:
    best = closest(result)
    if not result.candidates and result.skipped_sets:
        label, why = result.skipped_sets[0]
        return BudgetExceeded(f"no technique set applies to {result.model_name}: {label}: {why}")
    searched = f"none of the {len(result.candidates):,} deployments searched meets every budget"
    refused = [c for c in result.candidates if c.constraint == "engine" and c.engine_concurrency is None]
    if refused:  # they meet the planner's budgets; vLLM itself would not start them
        from .search import rank_key

        first = min(refused, key=lambda c: rank_key(c, result.request.objective, result.request.quality_first))
        engine = result.engine_label
        return BudgetExceeded(f"{searched}; {len(refused):,} meet the planner's budgets but {engine} would not start "
                              f"them, e.g. {first.label()}: {first.reason.removeprefix(f'{engine} would not start: ')}")
    carded = [c for c in result.candidates if c.constraint == "card"]
    if best is None and carded:  # every candidate the planner could judge is on a card the engine refuses
        return BudgetExceeded(f"{searched}; {len(carded):,} are on cards {result.engine_label} refuses for this "
                              f"model, e.g. {carded[0].label()}: {carded[0].reason.removeprefix(f'{result.engine_label} would not start: ')}",
                              "search cards of SM 8.0 or newer (--gpu)")
    if best is None:
        return BudgetExceeded(searched + " (no valid TP/PP split of the model within --max-gpus)",
                              "raise --max-gpus or add GPU kinds")
    from .screen import miss_text

    misses = "; ".join(
        miss_text(*m, result.engine_label) if m[0] != "weights" else
        f"weights + reserve {m[1]:,.2f} GiB per GPU exceed the usable {m[2]:,.2f} GiB by {m[1] - m[2]:,.2f} GiB"
        for m in best.misses)
    return BudgetExceeded(f"{searched}; closest: {best.label()}: {misses}",
                          "relax a budget, raise --max-gpus, add GPU kinds (--gpu all) or allow techniques (--allow)")


def fit_report(req: FitRequest, *, explain: bool, top: int, plot: str | None, force: bool) -> Report:
    from ..reports import fit as fit_report_module

    if top < 0:
        raise UsageError(f"--top {top}: give the number of options to print, or 0 for all that pass")

    if plot is not None:
        from ..files import check_output
        from ..workload.plot import PLOT_SUFFIXES, require_matplotlib

        # --force or not, never a file of the run's own input (a file in the model's folder), as sweep's outputs
        check_output(plot, "--plot", force, PLOT_SUFFIXES, inputs=(req.model, req.weights))
        require_matplotlib()
    result = search(req, verify_top=top or None)
    if not result.options:
        raise nothing_meets(result)
    report = fit_report_module.build(result, explain=explain, top=top)
    if result.request.context_tokens != req.context_tokens:
        report.lines.append(f"--context not given: {result.request.context_tokens:,} tokens, {result.model_name}'s "
                            f"maximum (max_position_embeddings; the default {DEFAULT_CONTEXT_TOKENS:,} is longer)")
    if plot:
        from .plot import plot_pareto

        axis = "cost" if req.objective == "cost" else "gpus"
        plot_pareto(fit_report_module.pareto_points(result), req.concurrency, axis,
                    f"{result.model_name}: {req.concurrency} x {result.request.context_tokens:,} tokens", Path(plot))
        report.lines.append(f"wrote {plot}")
    return report
