"""`kvplan plan SCENARIO --fit`: the fit search with a scenario's model, traffic, budgets, engine and flags.

The scenario's GPU kind, TP and PP (and dp) are what the search replaces; everything
else is kept: the model and its weights, the KV dtype, the techniques (and the
prefix sharing of the workload) applied to every option, mem_util (where
written; else the engine's default, as `kvplan fit` without --mem-util) and
reserve, context = prompt + output tokens, the planned batch = concurrency,
and the budgets (min_concurrency, else the concurrency; max_kv_gib_per_gpu;
max_tpot_ms as the decode floor).

The engine section's name is fit's --engine, and estimate's deployment flags
(all2all_backend, moe_a2a_backend, gpus_per_node, redundant_experts, SGLang's
group flags, mm_encoder_tp_mode) are fit's own flags, parsed by
fit/run.py request_from_options (fit/flags.py parse): the same checks as
`kvplan fit`. `dp` > 1 or `ep: true` is fit's --dp-ep: the search plans its own
DP + EP splits (fit/grid.py dp_splits) beside the TP / PP ones, as fit does
with that flag; the scenario's own dp x tp x pp GPUs raise --max-gpus (8) where
they are more, so the scenario's own size is among those searched.
"""

from __future__ import annotations

from dataclasses import fields, replace

from ..fit.flags import FitFlags
from ..fit.search import FitRequest
from ..render import Report

MAX_GPUS = 8  # `kvplan fit --max-gpus`' default
# the scenario's estimate options that are fit's flags by the same keyword (fit/flags.py parse), and those fit
# plans itself: the engine (--engine) and dp / ep (--dp-ep)
FLAG_OPTIONS = tuple(f.name for f in fields(FitFlags))
SEARCHED_OPTIONS = ("engine", "dp", "ep", *FLAG_OPTIONS)


def request_for(resolved, *, objective: str = "gpus") -> FitRequest:
    """The FitRequest of a resolved scenario (loader.Resolved), built by `kvplan fit`'s own parsing."""
    from ..errors import KvplanError
    from ..fit.run import request_from_options
    from .loader import option_error

    s = resolved.scenario
    options = dict(s.options)
    try:
        req = request_from_options(
            model=s.model, context=str(s.context_tokens), concurrency=str(s.min_concurrency or s.concurrency),
            gpu=None, max_gpus=str(max(MAX_GPUS, resolved.deployment.gpus)), allow=None, kv_dtypes=s.kv_dtype,
            engine=options.get("engine", "ideal"), objective=objective, prices=None,
            max_kv_gib=s.max_kv_gib_per_gpu, max_decode_ms=s.max_tpot_ms,
            mem_util=s.mem_util if "deployment.mem_util" in s.lines else None,
            reserve=f"{s.reserve_bytes}B", weights=f"{s.weight_bytes}B" if s.weight_bytes is not None else "auto",
            overrides=None, revision=None, quality_first=True, quantization=s.quantization,
            dp_ep=options.get("dp", 1) > 1 or bool(options.get("ep")),
            **{name: options[name] for name in FLAG_OPTIONS if name in options})
    except KvplanError as exc:
        raise option_error(s, exc, "engine.name" if "engine.name" in s.lines else "deployment") from None
    return replace(req, base_techniques=tuple(s.technique_specs), batch=s.concurrency)


def _unsearched_layout(s) -> str | None:
    """The scenario's own dp / ep where it is none of fit's layouts (fit/screen.py _ep_of: a DP split places the
    experts by expert, always outside SGLang; a TP / PP split by TP), said: fit searches its nearest, --dp-ep's."""
    from ..request import engine_family

    options = dict(s.options)
    dp, ep = options.get("dp", 1), bool(options.get("ep"))
    if ep and dp == 1:
        return ("deployment.ep without dp (TP + EP) is not a layout --fit searches: its tp x pp options split the "
                "routed experts by TP, its DP + EP options (--dp-ep) have dp > 1")
    if dp > 1 and not ep and engine_family(options.get("engine", "ideal")) != "sglang":
        return ("deployment.dp without ep is not a layout --fit searches: its DP options (--dp-ep) split the routed "
                "experts by expert (--enable-expert-parallel)")
    return None


def fit_workflow(refs: list[str], *, explain: bool = False, top: int = 10) -> Report:
    """One fit report per scenario, joined; nothing meeting a scenario's budgets fails (exit 1) naming it."""
    from ..errors import BudgetExceeded
    from .schema import ScenarioError
    from ..fit.run import nothing_meets
    from ..fit.search import search
    from ..reports import fit as fit_reports
    from .loader import OPTION_KEYS, bundled_names, load

    if not refs:
        raise ScenarioError("no scenario given", f"pass .yaml files or bundled names: {', '.join(bundled_names())}")
    reports = []
    keys = {spec.removeprefix("--").replace("-", "_"): key for spec, key in OPTION_KEYS.items()}
    for resolved in load(refs):
        s = resolved.scenario
        result = search(request_for(resolved), verify_top=top or None)
        if not result.options:
            exc = nothing_meets(result)
            raise BudgetExceeded(f"scenario {s.name} ({s.source}): {exc.message}", exc.hint)
        report = fit_reports.build(result, explain=explain, top=top)
        report.data["scenario"] = s.name
        report.headline = f"{s.name}: {report.headline}"
        unsearched = [keys[name] for name, _ in s.options if name not in SEARCHED_OPTIONS]
        if unsearched:  # the engine section's max_model_len, max_num_seqs, kv_memory, emit: `kvplan fit` takes none
            report.lines.append(f"{', '.join(unsearched)} not used by --fit: `kvplan fit` takes no such option (each "
                                "option's engine pool is planned at max_model_len = prompt + output)")
        layout = _unsearched_layout(s)
        if layout:
            report.lines.append(layout)
        if s.gpu_memory_bytes is not None:
            report.lines.append("deployment.gpu_memory is ignored by --fit: the search uses each GPU kind's catalog memory")
        reports.append(report)
    tables = [t for r in reports for t in r.tables]
    lines = [line for r in reports for line in [r.headline, *r.lines]]
    from ..reports import tidy

    data = {"schema_version": 1, "fits": [r.data for r in reports]}
    return Report(data, tables, lines, tidy=tidy.fit(data["fits"]))
