"""Plan scenarios and check their budgets: the logic behind `kvplan plan`.

Every scenario is evaluated with `kvplan.planner.evaluate` at context = prompt +
output tokens and batch = concurrency, and printed with the estimate report.
Budgets are then checked against that plan:

- max_kv_gib_per_gpu: the KV cache the batch keeps on the fullest GPU (the
  pipeline stage and tensor-parallel rank that holds most; heads replicated when
  tp exceeds the KV heads and MLA latents count on every rank), after offloading.
- min_concurrency: sequences of the full context that fit in the KV pool.
- max_tpot_ms: the memory-bound decode floor for the sequences resident on GPU.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ..errors import KvplanError, UsageError
from ..planner import PlanResult, evaluate
from ..render import Report, Table
from ..units import GIB, format_bytes, format_tokens
from .loader import Resolved
from .schema import ScenarioError


@dataclass(frozen=True)
class Budget:
    key: str  # the scenario key
    limit: float
    actual: float
    unit: str
    ok: bool

    def describe(self) -> str:
        if self.key == "min_concurrency":
            return f"{self.key}: {self.actual:,.0f} sequences fit, fewer than the required {self.limit:,.0f}"
        return f"{self.key}: planned {self.actual:,.2f} {self.unit} exceeds the limit {self.limit:,.2f} {self.unit}"


@dataclass(frozen=True)
class ScenarioPlan:
    resolved: Resolved
    result: PlanResult
    resident_sequences: int  # sequences kept on GPU (offloading moves the rest)
    kv_bytes_per_gpu: int  # on the fullest GPU
    tpot_ms: float | None  # decode floor of the resident sequences
    budgets: tuple[Budget, ...]
    estimate: Report | None = None  # `kvplan estimate`'s report of the scenario's request (Resolved.request)

    @property
    def violations(self) -> list[Budget]:
        return [b for b in self.budgets if not b.ok]


def plan_one(resolved: Resolved) -> ScenarioPlan:
    s = resolved.scenario
    estimate = engine_concurrency = None
    try:
        if resolved.request is None:
            result = evaluate(resolved.model, resolved.techniques, s.context_tokens, s.concurrency, resolved.deployment)
        else:  # engine, dp, ep, ...: planned as `kvplan estimate` plans the same request, engine section included
            from ..workflows import estimate_run

            estimate, _, result, engine_concurrency = estimate_run(resolved.request)
    except KvplanError as exc:
        from .loader import option_error, scenario_words

        keyed = option_error(s, exc) if resolved.request is not None and type(exc) is UsageError else None
        if keyed is not None:  # a setting refused once the model is known (dp, ep, ...): against its own line
            raise keyed from None
        hint = scenario_words(exc.hint) if exc.hint else exc.hint
        raise type(exc)(f"scenario {s.name} ({s.source}): {scenario_words(exc.message)}", hint) from None
    resident = s.concurrency - (result.offload.sessions_on_cpu if result.offload else 0)
    # the planner's figures already count only the sequences left on the GPUs
    per_gpu = result.kv_bytes_per_gpu
    tpot = result.decode.step_ms if result.decode is not None and resident else None
    budgets = []
    if s.max_kv_gib_per_gpu is not None:
        actual = per_gpu / GIB
        budgets.append(Budget("max_kv_gib_per_gpu", s.max_kv_gib_per_gpu, actual, "GiB", actual <= s.max_kv_gib_per_gpu))
    if s.min_concurrency is not None:
        fit = result.capacity.max_concurrency
        if engine_concurrency is not None:  # the engine's pool must hold them too (as estimate's --min-concurrency)
            fit = min(fit, engine_concurrency)
        budgets.append(Budget("min_concurrency", s.min_concurrency, fit, "sequences", fit >= s.min_concurrency))
    if s.max_tpot_ms is not None:
        dep = result.deployment
        if tpot is None and dep is not None and (dep.dp > 1 or dep.ep):  # planner.evaluate: not modelled there
            raise ScenarioError(f"{s.where('budgets.max_tpot_ms')}: budgets.max_tpot_ms: the decode floor is not "
                                "modelled under data or expert parallelism (a step reads experts on other ranks)",
                                "leave max_tpot_ms out of a dp / ep scenario")
        if tpot is None:
            raise ScenarioError(f"{s.where('budgets.max_tpot_ms')}: budgets.max_tpot_ms needs a GPU with a known HBM bandwidth")
        budgets.append(Budget("max_tpot_ms", s.max_tpot_ms, tpot, "ms", tpot <= s.max_tpot_ms))
    return ScenarioPlan(resolved, result, resident, per_gpu, tpot, tuple(budgets), estimate)


def scenario_report(p: ScenarioPlan) -> Report:
    """The estimate report of one scenario, headed by the workload, with a budget table."""
    from ..reports import estimate as estimate_report

    s = p.resolved.scenario
    report = p.estimate if p.estimate is not None else estimate_report.build(p.result, kv_dtype=p.resolved.kv_dtype)
    dep = p.result.deployment if p.estimate is not None else p.resolved.deployment
    workload = [
        ["model", p.result.plan.model.name],
        ["GPUs", f"{dep.gpus} x {dep.gpu.name} ({dep.layout_text})"],
        ["prompt + output", f"{s.prompt_tokens:,} + {s.output_tokens:,} = {format_tokens(s.context_tokens)} tokens"],
        ["concurrency (planned batch)", f"{s.concurrency:,}"],
        ["shared prefix", f"{s.shared_prefix_tokens:,} tokens x {s.prefix_sharers or s.concurrency} requests" if s.shared_prefix_tokens else "none"],
        ["techniques", ", ".join(p.resolved.scenario.technique_specs) or "none"],
        ["KV on the fullest GPU", format_bytes(p.kv_bytes_per_gpu)],
    ]
    engine = (p.estimate.data.get("engine") or {}) if p.estimate is not None else {}
    if engine.get("name"):  # the engine planned and its release, as its section of the report names them
        workload.insert(2, ["engine", " ".join(str(engine[k]) for k in ("name", "version") if engine.get(k))])
    if p.resident_sequences != s.concurrency:
        workload.append(["sequences resident on GPU", f"{p.resident_sequences:,} of {s.concurrency:,}"])
    if p.tpot_ms is not None:
        workload.append(["time per output token (floor)", f"{p.tpot_ms:,.2f} ms"])
    tables = [Table(f"scenario {s.name}", ["", "value"], workload)]
    for table in report.tables:
        table.title = f"{s.name}: {table.title}"
        tables.append(table)
    if p.budgets:
        rows = [[b.key, b.limit, round(b.actual, 4), b.unit, "ok" if b.ok else "BROKEN"] for b in p.budgets]
        tables.append(Table(f"{s.name}: budgets", ["budget", "limit", "planned", "unit", "status"], rows, {1, 2}))
    lines = [f"{s.name}: {s.description}"] if s.description else []
    longest = p.result.plan.model.max_context_tokens
    if longest and s.context_tokens > longest:
        lines.append(f"{s.name}: WARNING: prompt + output = {s.context_tokens:,} tokens exceeds the model's maximum context of {longest:,}")
    if p.estimate is not None:  # estimate's lines (its launch commands verbatim); its budgets: the scenario's, below
        from .loader import estimate_words

        report.lines = [estimate_words(line) for line in report.lines]
        report.data.pop("budgets", None)
    lines += [f"{s.name}: {line}" for line in report.lines]
    lines += [f"{s.name}: BUDGET BROKEN: {b.describe()}" for b in p.violations]
    data = {
        "name": s.name,
        "source": s.source,
        "description": s.description,
        "workload": {
            "prompt_tokens": s.prompt_tokens, "output_tokens": s.output_tokens, "context_tokens": s.context_tokens,
            "concurrency": s.concurrency, "shared_prefix_tokens": s.shared_prefix_tokens,
            "prefix_sharers": (s.prefix_sharers or s.concurrency) if s.shared_prefix_tokens else 0,
        },
        "techniques": list(s.technique_specs),
        "exceeds_max_context": bool(longest and s.context_tokens > longest),
        "resident_sequences": p.resident_sequences,
        "kv_bytes_per_gpu": p.kv_bytes_per_gpu,
        "tpot_ms": None if p.tpot_ms is None else round(p.tpot_ms, 6),
        "budgets": {
            "ok": not p.violations,
            "checks": [{"key": b.key, "limit": b.limit, "actual": b.actual, "unit": b.unit, "ok": b.ok} for b in p.budgets],
            "violations": [b.describe() for b in p.violations],
        },
        "plan": report.data,
    }
    return Report(data, tables, lines)


def plan_workflow(refs: list[str]) -> tuple[Report, list[str]]:
    """(one report for every scenario, every broken budget as 'name: text')."""
    from .loader import load

    if not refs:
        from .loader import bundled_names

        raise ScenarioError("no scenario given", f"pass .yaml files or bundled names: {', '.join(bundled_names())}")
    plans = [plan_one(r) for r in load(refs)]
    reports = [scenario_report(p) for p in plans]
    broken = [f"{p.resolved.scenario.name}: {b.describe()}" for p in plans for b in p.violations]
    data = {"schema_version": 1, "scenarios": [r.data for r in reports], "ok": not broken, "violations": broken}
    tables = [t for r in reports for t in r.tables]
    lines = [line for r in reports for line in r.lines]
    for line in broken:
        sys.stderr.write(f"kvplan: budget exceeded: {line}\n")
    from ..reports import tidy

    return Report(data, tables, lines, tidy=tidy.plan(data)), broken


def list_report() -> Report:
    """The bundled scenarios: name, model, GPUs, context, concurrency, description."""
    from .loader import bundled_names, read

    rows, items = [], []
    for name in bundled_names():
        s = read(name)
        gpus = s.tp * s.pp
        if s.options:  # dp: as estimate counts it (vLLM: dp x tp x pp; SGLang's attention DP: its --tp x pp)
            from .loader import estimate_request

            wanted = estimate_request(s).deployment
            gpus = wanted.tp * wanted.pp * wanted.dp
        rows.append([s.name, s.model, f"{gpus} x {s.gpu}", format_tokens(s.context_tokens), s.concurrency, s.description])
        options = dict(s.options)  # dp and engine as written (SGLang's tp is its --tp: dp x the attention TP)
        items.append({"name": s.name, "model": s.model, "gpu": s.gpu, "gpus": gpus, "tp": s.tp, "pp": s.pp,
                      "dp": options.get("dp", 1), "engine": options.get("engine"),
                      "context_tokens": s.context_tokens, "concurrency": s.concurrency, "description": s.description})
    table = Table("bundled scenarios (kvplan plan NAME)", ["name", "model", "GPUs", "context", "concurrency", "description"], rows, {4})
    from ..reports import tidy

    machine = tidy.records("scenarios", items, ["name", "model", "gpu", "gpus", "tp", "pp", "dp", "engine", "context_tokens",
                                                 "concurrency", "description"])
    return Report({"schema_version": 1, "scenarios": items}, [table], tidy=machine)
