"""The report of `kvplan fit`: ranked options, the explanation, the Pareto view."""

from __future__ import annotations

from ..capacity.gpus import LIST_PRICES
from ..fit.search import Candidate, FitResult, cheaper_failures, pareto, rank_key
from ..render import Report, Table
from ..units import GIB, format_tokens

CONSTRAINTS = {
    "heads": "heads not divisible",
    "split": "split not possible",
    "weights": "weights do not fit",
    "load": "float checkpoint does not fit at load",  # SGLang --quantization (configs/quant_online.py)
    "pool": "pool too small",
    "engine": "vLLM's pool too small",
    "card": "engine refuses the card",  # a card below SM 8.0 (engines/vllm_sm7.py, sglang_sm7.py)
    "kv": "KV per GPU above budget",
    "decode": "decode floor above budget",
}


def _price_source(c: Candidate, overrides: dict) -> str | None:
    if c.gpu.name in overrides:
        return "--price"
    entry = LIST_PRICES.get(c.gpu.name)
    return f"{entry.source}, {entry.date}" if entry else None


def option_data(c: Candidate, rank: int, req) -> dict:
    overrides = req.prices
    return {
        "rank": rank,
        "gpu": c.gpu.name,
        "gpus": c.gpus,
        "tp": c.tp,
        "pp": c.pp,
        "dp": c.dp,
        "ep": c.ep,
        "kv_dtype": c.kv_dtype,
        "techniques": list(c.techniques),
        "max_concurrency": c.max_concurrency,
        "engine_max_concurrency": None if c.engine_concurrency is None else round(c.engine_concurrency, 6),
        "engine_kv_dtype": c.engine_kv_dtype,
        "kv_bytes_per_gpu": c.kv_bytes_per_gpu,
        "kv_pool_bytes_per_gpu": c.pool_bytes_per_gpu,
        "weight_bytes_per_gpu": c.weight_bytes_per_gpu,
        "decode_ms_per_token": None if c.decode_ms_per_token is None else round(c.decode_ms_per_token, 4),
        "usd_per_hour": None if c.cost_per_hour is None else round(c.cost_per_hour, 4),
        "usd_per_gpu_hour": c.price_per_gpu_hour,
        "price_source": _price_source(c, overrides),
        "caveats": [{"what": x.what, "caveat": x.caveat} for x in c.caveats],
        "quality": c.caveat_text,
        "estimate_command": estimate_command(req, c),
    }


def _size(n: int) -> str:
    return f"{n // GIB}GiB" if n % GIB == 0 else f"{n}B"


def engine_layout_note(label: str, model_name: str, options) -> str | None:
    """Where the engine stores K/V in one dtype of its own for several of the options' kv dtypes (SGLang 0.5.23's
    fp8_e4m3 KVLayout.V4 and vLLM's fp8_ds_mla for DeepSeek-V4, whatever the plan's dtype: engines.sglang._dsv4_pool,
    engines.vllm_dsv4), the engine's column does not move with the kv column: said once."""
    by_engine: dict[str, list[str]] = {}
    for c in options:
        if c.engine_kv_dtype is not None and c.kv_dtype not in by_engine.setdefault(c.engine_kv_dtype, []):
            by_engine[c.engine_kv_dtype].append(c.kv_dtype)
    for engine_dtype, planned in by_engine.items():
        if len(planned) > 1:
            kinds = " and ".join(f"kv {d}" for d in planned)
            return (f"{label} stores {model_name}'s cache in its own {engine_dtype} layout whatever the kv dtype: "
                    f"its column is the same for {kinds} (the kv, conc and KV/GPU columns are the planner's)")
    return None


def sglang_state_model(req, c: Candidate) -> bool:
    """Whether fit's SGLang figure for `c` is a pure state-space model's, its token pool sized for the requests asked
    for (engines.sglang_report.state_model_tokens: the --max-total-tokens that --emit sglang sets)."""
    from ..engines.sglang_rules import PURE_SSM_ARCHS
    from ..request import engine_family

    plan = getattr(c, "_plan", None)
    return (engine_family(req.engine) == "sglang" and plan is not None
            and (plan.model.architecture or "") in PURE_SSM_ARCHS)


def estimate_argv(req, c: Candidate) -> list[str]:
    """The `kvplan estimate` arguments that plan this option with the same settings and check its concurrency."""
    from ..request import engine_family

    sglang_default = engine_family(req.engine) == "sglang" and not req.mem_util_given
    argv = ["estimate", req.model, "--context", str(req.context_tokens), "--batch", str(req.batch_size),
            # SGLang's --tp is every GPU of the attention-DP group (engines/sglang_dp.launch_tp)
            "--gpu", c.gpu.name, "--tp", str(c.tp * c.dp if c.dense_over_all else c.tp), "--pp", str(c.pp),
            *(["--dp", str(c.dp)] if c.dp > 1 else []), *(["--ep"] if c.ep else []), "--kv-dtype", c.kv_dtype,
            # under SGLang --mem-util is also its mem_fraction_static: left out, SGLang's default for the card
            *([] if sglang_default else ["--mem-util", f"{req.mem_util:g}"]),
            "--reserve", _size(req.reserve_bytes), "--weights", req.weights,
            "--min-concurrency", str(req.concurrency)]
    if req.quantization is not None:  # the engine's online quantization (configs/quant_online.py)
        argv += ["--quantization", req.quantization[0]]
    for t in c.techniques:
        argv += ["-t", t]
    if req.engine != "ideal":
        argv += ["--engine", req.engine]
    # estimate's deployment flags as fit was given them (fit/flags.py); the all-to-all backends on DP + EP options only
    argv += _flags_argv(req, c)
    if sglang_state_model(req, c):  # its token pool is the --max-total-tokens --emit sglang sizes for --batch
        argv += ["--emit", "sglang"]
    spec = req.speculation
    if spec is not None:
        argv += ["--mtp"] if spec.mtp else ["--draft-model", spec.draft_model]
        if spec.tokens is not None:
            argv += ["--num-speculative-tokens", str(spec.tokens)]
    if req.max_kv_gib is not None:
        argv += ["--max-kv-gib", f"{req.max_kv_gib:g}"]
    for o in req.overrides:
        argv += ["--set", o]
    if req.revision:
        argv += ["--revision", req.revision]
    return argv


def _flags_argv(req, c: Candidate) -> list[str]:
    from dataclasses import replace

    flags = getattr(req, "flags", None)
    if flags is None:
        return []
    if c.dp <= 1:  # a TP-only option runs without an all-to-all backend or EPLB (estimate refuses them without --ep)
        flags = replace(flags, all2all_backend=None, moe_a2a_backend=None, redundant_experts=None)
    return flags.argv()


def estimate_command(req, c: Candidate) -> str:
    import shlex

    return "kvplan " + " ".join(shlex.quote(a) for a in estimate_argv(req, c))


def split_text(c: Candidate) -> str:
    """The "tp x pp" column: "4 x 2", or for a DP + EP option "dp 8 x tp 1 +EP" ("dp 2 x tp 2 x pp 2 +EP")."""
    if c.dp == 1:
        return f"{c.tp} x {c.pp}"
    return f"dp {c.dp} x tp {c.tp}{f' x pp {c.pp}' if c.pp > 1 else ''}{' +EP' if c.ep else ''}"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def _option_row(i: int, c: Candidate, engine: bool) -> list:
    kv = c.kv_dtype if c.kv_served_as is None else f"{c.kv_dtype} (served as {c.kv_served_as})"
    row = [i, f"{c.gpus} x {c.gpu.name}", split_text(c), kv, ", ".join(c.techniques) or "-",
           c.max_concurrency]
    if engine:
        row.append(round(c.engine_concurrency, 2) if c.engine_concurrency is not None else None)
    row += [round(c.kv_bytes_per_gpu / GIB, 2), round(c.weight_bytes_per_gpu / GIB, 2),
            None if c.decode_ms_per_token is None else round(c.decode_ms_per_token, 2), _money(c.cost_per_hour),
            c.caveat_text]
    return row


def _axis(result: FitResult) -> str:
    return "cost" if result.request.objective == "cost" else "gpus"


def build(result: FitResult, *, explain: bool = False, top: int = 10, pareto_view: bool = True) -> Report:
    req = result.request
    engine = result.rules_version is not None
    label = result.engine_label  # vLLM or SGLang
    options = result.options[:top] if top else result.options
    data = {
        "schema_version": 1,
        "model": result.model_name,
        "context_tokens": req.context_tokens,
        "concurrency": req.concurrency,
        "objective": req.objective,
        "quality_first": req.quality_first,
        "engine": {"name": label.lower(), "version": result.rules_version,
                   "mtp": bool(req.speculation and req.speculation.mtp),
                   "draft_model": req.speculation.draft_model if req.speculation else None,
                   "num_speculative_tokens": req.speculation.tokens if req.speculation else None}
        if engine else {"name": "ideal"},
        "budgets": {"min_concurrency": req.concurrency, "max_kv_gib_per_gpu": req.max_kv_gib,
                    "max_decode_ms_per_token": req.max_decode_ms},
        "settings": {"mem_util": req.mem_util, "reserve_bytes": req.reserve_bytes, "weights": req.weights,
                     "max_gpus": req.max_gpus, "gpus": [g.name for g in req.gpus], "kv_dtypes": list(req.kv_dtypes),
                     "allowed": list(req.allowed), "base_techniques": list(req.base_techniques),
                     # the engine's online quantization of the float checkpoint (configs/quant_online.py); null: none
                     "quantization": req.quantization[0] if req.quantization is not None else None,
                     "dp_ep": req.dp_ep,
                     # estimate's deployment flags fit was given, as estimate takes them (fit/flags.py)
                     "deployment_flags": req.flags.argv()},
        "searched": len(result.candidates),
        "passing": len(result.passing),
        "options": [option_data(c, i + 1, req) for i, c in enumerate(options)],
    }
    if result.dp_ep_skipped:
        data["dp_ep_skipped"] = result.dp_ep_skipped
    if result.skipped_sets:
        data["skipped_technique_sets"] = [{"set": s, "why": why} for s, why in result.skipped_sets]
    if result.dropped:
        data["dropped"] = [{"option": c.label(), "why": why} for c, why in result.dropped]
    meet = ("meet every budget" if not engine else
            f"meet every budget under the planner ({label} {result.rules_version}'s checked as listed)")
    headline = (f"{result.model_name}: {req.concurrency} sequences of {format_tokens(req.context_tokens)} tokens; "
                f"{len(result.passing):,} of {len(result.candidates):,} deployments {meet} "
                f"(objective: {req.objective}{', options without caveats first' if req.quality_first else ''})")
    # one column for the GPUs ("3 x h200"): the table fits 80 columns with its headers whole
    columns = ["#", "GPUs", "tp x pp", "kv", "techniques", "conc"]
    if engine:
        columns.append(f"{label} {result.rules_version} conc")  # the engine's own "Maximum concurrency" (x)
    columns += ["KV/GPU GiB", "W/GPU GiB", "decode ms", "$/hour", "quality"]
    numeric = set(range(len(columns) - 1)) - {1, 2, 3, 4}
    rows = [_option_row(i + 1, c, engine) for i, c in enumerate(options)]
    if not any(c.techniques for c in options):  # nothing to show: drop the column
        columns.pop(4)
        rows = [r[:4] + r[5:] for r in rows]
        numeric = {i - (i > 4) for i in numeric}
    title = "Deployments that meet every budget, best first"
    if rows and all(c.caveat_text == "none" for c in options):  # a column of "none": said once, in the title
        columns.pop()
        rows = [r[:-1] for r in rows]
        title += " (none with a quality caveat)"
    report = Report(data, [Table(title, columns, rows, numeric)], [], headline)
    if options:
        # fit/screen.py: KV/GPU is the largest stage's cache of the sequences kept on the GPUs (an MLA latent is
        # not split by TP: estimate deepseek-v2-lite gives the same bytes a GPU at TP 1 and 2), W/GPU the heaviest
        # stage's weights, which a PP split may put on another GPU
        report.lines.append(f"columns: conc = sequences of {format_tokens(req.context_tokens)} the planner's pool holds; "
                            f"KV/GPU GiB = the cache the budget's {req.concurrency} sequences keep on the fullest GPU "
                            "(TP splits K/V heads, up to their count, and keeps an MLA latent whole on every rank; PP "
                            "splits layers); W/GPU GiB = the weights on the heaviest GPU; decode ms = the memory-bound "
                            "floor of one decode step (weights and K/V read at the card's HBM bandwidth)")
    if req.quantization is not None:
        report.lines.append(f"weights: as {'SGLang' if req.quantization[1] == 'sglang' else 'vLLM'} holds them once "
                            f"--quantization {req.quantization[0]} has quantized the float checkpoint at load")
    if options:
        # SGLang's dp attention is not modelled: a DP + EP option's serving command is vLLM's
        emit = f"--emit {label.lower()}" if engine else "--emit vllm" if options[0].dp > 1 else \
            "--emit vllm or --emit sglang"
        report.lines.append("each option was evaluated by the planner of `kvplan estimate`; check the first with: "
                            + estimate_command(req, options[0]) + f" (add {emit} for the serving command)")
    same = engine_layout_note(label, result.model_name, options)
    if same:
        report.lines.append(f"note: {same}")
        data["engine"]["same_kv_layout"] = same
    if getattr(result.engine, "pp_refused", None):
        report.lines.append(f"pipeline-parallel splits left out: {result.engine.pp_refused}; only pp 1 is searched")
    if result.dp_ep_skipped:
        report.lines.append(f"--dp-ep: no data-parallel + expert-parallel split searched: {result.dp_ep_skipped}")
    elif req.dp_ep:
        report.lines.append("--dp-ep: DP + EP options (dp x tp x pp GPUs; pp 1 under SGLang) hold dp x one rank's "
                            "sequences; not "
                            "counted there: the default all-to-all's buffers (--all2all-backend / --moe-a2a-backend's are, "
                            "as estimate counts them), the DP / EP groups' NCCL memory; "
                            + ("searched without EPLB's redundant experts (--redundant-experts); "
                               if req.flags.redundant_experts is None else
                               f"with --redundant-experts {req.flags.redundant_experts} on each; ")
                            + "no decode floor (docs/engines.md, "
                            "--dp / --ep)")
    if getattr(result.engine, "pp_note", None):
        report.lines.append(f"note: {result.engine.pp_note}")
    for c, why in result.dropped:
        report.lines.append(f"dropped (the screen and the planner disagree, please report): {c.label()}: {why}")
    for label, why in result.skipped_sets:
        report.lines.append(f"technique set {label} skipped: {why}")
    refused = _refused_cards(result)
    for name, why in refused.items():
        report.lines.append(f"{name} left out: {why}")
    if any(g.name not in req.prices and g.name not in LIST_PRICES and g.name not in refused for g in req.gpus):
        missing = [g.name for g in req.gpus
                   if g.name not in req.prices and g.name not in LIST_PRICES and g.name not in refused]
        report.lines.append(f"no list price for {', '.join(missing)}: give --price GPU=USD to rank them by cost")
    if explain and options:
        _explain(report, result, options[0])
    if pareto_view:
        _pareto(report, result)
    from . import tidy

    report.tidy = tidy.fit([data])
    return report


def _explain(report: Report, result: FitResult, winner: Candidate, limit: int = 20) -> None:
    constraints = {**CONSTRAINTS, "engine": f"{result.engine_label}'s pool too small"}
    failures = cheaper_failures(result, winner)
    for c in failures:
        result.check_engine(c)
    counts: dict[str, int] = {}
    for c in failures:
        counts[c.constraint] = counts.get(c.constraint, 0) + 1
    rows = [[c.gpu.name, c.gpus, split_text(c), c.shown_set_label, constraints.get(c.constraint, c.constraint),
             c.reason]
            for c in failures[:limit]]
    what = {"cost": "cost less per hour", "headroom": "use no more GPUs"}.get(result.request.objective, "use fewer GPUs")
    if failures:
        report.tables.append(Table(f"Why the {len(failures):,} options that {what} than the winner fail",
                                   ["gpu", "gpus", "tp x pp", "set", "binding constraint", "detail"], rows, {1}))
    else:  # not an empty table
        report.lines.append(f"explain: no searched option would {what} than the winner")
    report.data["explain"] = {
        "winner": winner.label(),
        "cheaper_failed": len(failures),
        "by_constraint": {constraints.get(k, k): v for k, v in sorted(counts.items())},
        "failures": [{"gpu": c.gpu.name, "gpus": c.gpus, "tp": c.tp, "pp": c.pp, "dp": c.dp, "kv_dtype": c.kv_dtype,
                      "techniques": list(c.techniques), "constraint": constraints.get(c.constraint, c.constraint),
                      "reason": c.reason} for c in failures[:limit]],
    }
    if len(failures) > limit:
        report.lines.append(f"explain: {len(failures) - limit:,} more cheaper options fail; by constraint: "
                            + ", ".join(f"{constraints.get(k, k)} {v:,}" for k, v in sorted(counts.items())))
    cheaper_passing = [c for c in result.passing if c.quality_tier > winner.quality_tier and _cheaper(result, c, winner)]
    for c in cheaper_passing:
        result.check_engine(c)
    cheaper_passing = [c for c in cheaper_passing if c.ok]
    if cheaper_passing:
        first = min(cheaper_passing, key=lambda c: rank_key(c, result.request.objective, False))
        report.lines.append(f"explain: {len(cheaper_passing)} cheaper option(s) pass only with a quality caveat "
                            f"(ranked after the winner), the best: {first.label()}: {first.caveat_text}")


def _refused_cards(result: FitResult) -> dict[str, str]:
    """The card kinds the engine refuses for every candidate on them (a card below SM 8.0, whatever the split and
    KV dtype: fit/engine.py card_refusal), each with the first reason, so the report says why they are absent."""
    reasons: dict[str, str] = {}
    usable: set[str] = set()
    for c in result.candidates:
        if c.constraint == "card":
            reasons.setdefault(c.gpu.name, c.reason.removeprefix(f"{result.engine_label} would not start: "))
        elif c.constraint not in ("heads", "split"):  # those splits are refused on every card alike
            usable.add(c.gpu.name)
    return {name: why for name, why in reasons.items() if name not in usable}


def _cheaper(result: FitResult, c: Candidate, winner: Candidate) -> bool:
    from ..fit.search import objective_value

    return objective_value(c, result.request.objective) < objective_value(winner, result.request.objective)


def pareto_points(result: FitResult) -> dict[str, list[Candidate]]:
    return pareto(result, _axis(result))


def _pareto(report: Report, result: FitResult) -> None:
    axis = _axis(result)
    fronts = pareto_points(result)
    rows = []
    data = {}
    for label, cands in fronts.items():
        data[label] = []
        for c in cands:
            conc = _achievable(c)
            rows.append([c.shown_set_label, c.gpu.name, c.gpus, split_text(c), conc, _money(c.cost_per_hour),
                         "meets" if conc >= result.request.concurrency else "below"])
            data[label].append({"gpu": c.gpu.name, "gpus": c.gpus, "tp": c.tp, "pp": c.pp, "dp": c.dp, "max_concurrency": conc,
                                "usd_per_hour": c.cost_per_hour})
    # under an engine, conc is fit.records.achievable: the planner's, capped at the engine's (the options table
    # shows the two apart), which the title says
    capped = (f"; conc: the planner's, at most {result.engine_label} {result.rules_version}'s"
              if result.rules_version is not None else "")
    title = (f"Pareto: {'cost' if axis == 'cost' else 'GPUs'} against achievable concurrency by technique set "
             f"(budget {result.request.concurrency}{capped})")
    report.tables.append(Table(title, ["set", "gpu", "gpus", "tp x pp", "conc", "$/hour", "budget"], rows, {2, 4, 5}))
    report.data["pareto"] = {"x": axis, "budget": result.request.concurrency, "sets": data}


def _achievable(c: Candidate) -> int:
    from ..fit.search import achievable

    return achievable(c)


__all__ = ["build", "option_data", "pareto_points", "CONSTRAINTS"]
