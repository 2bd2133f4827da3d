"""`kvplan plan SCENARIO --fit`: the fit search with a scenario's model, traffic and budgets.

The scenario's GPU kind, TP and PP are what the search replaces; everything
else is kept: the model and its weights, the KV dtype, the techniques (and the
prefix sharing of the workload) applied to every option, mem_util and
reserve, context = prompt + output tokens, the planned batch = concurrency,
and the budgets (min_concurrency, else the concurrency; max_kv_gib_per_gpu;
max_tpot_ms as the decode floor).
"""

from __future__ import annotations

from ..fit.grid import parse_gpus
from ..fit.search import FitRequest
from ..render import Report


def request_for(scenario, *, gpu: str | None = None, max_gpus: int = 8, objective: str = "gpus",
                engine: str = "ideal") -> FitRequest:
    from ..fit.run import online_of_engine

    s = scenario
    return FitRequest(
        model=s.model, context_tokens=s.context_tokens, concurrency=s.min_concurrency or s.concurrency,
        batch=s.concurrency, gpus=tuple(parse_gpus(gpu)), max_gpus=max_gpus, kv_dtypes=(s.kv_dtype,),
        base_techniques=tuple(s.technique_specs), engine=engine, objective=objective, mem_util=s.mem_util,
        reserve_bytes=s.reserve_bytes, weights=f"{s.weight_bytes}B" if s.weight_bytes is not None else "auto",
        max_kv_gib=s.max_kv_gib_per_gpu, max_decode_ms=s.max_tpot_ms,
        quantization=online_of_engine(s.quantization, engine))


def fit_workflow(refs: list[str], *, explain: bool = False, top: int = 10) -> Report:
    """One fit report per scenario, joined; nothing meeting a scenario's budgets fails (exit 1) naming it."""
    from ..errors import BudgetExceeded
    from .schema import ScenarioError
    from ..fit.run import nothing_meets
    from ..fit.search import search
    from ..reports import fit as fit_reports
    from .loader import bundled_names, load

    if not refs:
        raise ScenarioError("no scenario given", f"pass .yaml files or bundled names: {', '.join(bundled_names())}")
    reports = []
    for resolved in load(refs):
        s = resolved.scenario
        result = search(request_for(s), verify_top=top or None)
        if not result.options:
            exc = nothing_meets(result)
            raise BudgetExceeded(f"scenario {s.name} ({s.source}): {exc.message}", exc.hint)
        report = fit_reports.build(result, explain=explain, top=top)
        report.data["scenario"] = s.name
        report.headline = f"{s.name}: {report.headline}"
        if s.options:
            report.lines.append(f"{', '.join(dict(s.options))} (engine / deployment options) are not searched by "
                                "--fit: it plans kvplan's own tp x pp split of each GPU kind")
        if s.gpu_memory_bytes is not None:
            report.lines.append("deployment.gpu_memory is ignored by --fit: the search uses each GPU kind's catalog memory")
        reports.append(report)
    tables = [t for r in reports for t in r.tables]
    lines = [line for r in reports for line in [r.headline, *r.lines]]
    from ..reports import tidy

    data = {"schema_version": 1, "fits": [r.data for r in reports]}
    return Report(data, tables, lines, tidy=tidy.fit(data["fits"]))
