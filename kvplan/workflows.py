"""From command-line values to reports: parse, load, compose, evaluate, check budgets.

Commands stay thin: each calls one function here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from .capacity.shard import check_tp
from .core.storage import KV_DTYPES, kv_storage
from .errors import BudgetExceeded, KvplanWarning, UsageError
from .planner import compose, evaluate
from .render import Report
from .request import DEFAULT_CONTEXT_TOKENS, EstimateRequest
from .units import GIB


def warn_above_max_context(model, tokens: int, what: str = "--context") -> None:
    """A context longer than the model was trained for is planned, with a warning."""
    import warnings

    longest = model.max_context_tokens
    if isinstance(longest, int) and not isinstance(longest, bool) and 0 < longest < tokens:
        warnings.warn(f"{what} {tokens:,} tokens is above the maximum context of {model.name}, "
                      f"{longest:,} tokens (max_position_embeddings): the plan is for a length the model "
                      "was not trained for", KvplanWarning, stacklevel=2)


def check_tp_after(model, chain, tp: int) -> None:
    """--tp against the heads the engine would see: after the techniques (gqa/mqa regroup KV heads)."""
    if tp != 1:
        check_tp(compose(model, chain)[-1].model, tp)


def check_prefix_within(chain, tokens: int) -> None:
    """A shared prefix is the start of each sequence: one longer than the context cannot be (the planner capped it
    at the context without a word, and the report said '99999-token prefix' of 1,024-token sequences; a scenario
    refuses the same, shared_prefix_tokens above prompt_tokens)."""
    from .techniques.serving import Prefix

    for technique in chain:
        if isinstance(technique, Prefix) and technique.tokens > tokens:
            raise UsageError(f"technique {technique.spec!r}: a shared prefix of {technique.tokens:,} tokens is longer "
                             f"than the {tokens:,}-token context", "give at most the context's tokens, or a longer "
                             "--context")


def record_overrides(report: Report, applied) -> None:
    """Every --set / --set-new in the JSON (`overrides`) and in the first table's title."""
    report.data["overrides"] = [o.as_dict() for o in applied]
    if applied and report.tables:
        report.tables[0].title += " (config overridden: " + ", ".join(o.describe() for o in applied) + ")"


def apply_kv_dtype(model, kv_dtype: str):
    """--kv-dtype: the storage of every K/V and latent cache (indexer keys keep theirs)."""
    name = kv_dtype.lower()
    if name == "auto":
        # the checkpoint's dtype, but a float32 checkpoint's K/V are sized at 2 B (as engines serve
        # it: vLLM's dtype auto downcasts to bf16), so they are labelled so; fp32 names its state only
        if model.float_dtype == "float32":
            kv_caches = any(c.kind in ("attention", "latent") for layer in model.layers for c in layer.caches)
            return model, "bf16" if kv_caches else "fp32"
        return model, {"float16": "fp16"}.get(model.float_dtype, "bf16")
    if name not in KV_DTYPES:
        raise UsageError(f"--kv-dtype {kv_dtype!r} is not one of auto, {', '.join(KV_DTYPES)}")
    from .core.transform import map_caches

    storage = kv_storage(name)
    return map_caches(model, lambda c: replace(c, storage=storage), lambda i, l, c: c.kind in ("attention", "latent")), storage.name


class EstimateRun(NamedTuple):
    report: Report
    failed: bool  # a budget of the request failed (exit 1)
    result: object  # planner.PlanResult
    engine_concurrency: float | None  # the engine's sequences of the context a replica holds (None: no engine)


def estimate_workflow(request: EstimateRequest) -> tuple[Report, bool]:
    """The estimate report and whether a budget failed (exit 1)."""
    run = estimate_run(request)
    return run.report, run.failed


def estimate_run(request: EstimateRequest) -> EstimateRun:
    """`kvplan estimate`'s whole plan of a request (a scenario that names an engine is planned by it too)."""
    from .reports import estimate as estimate_report

    spec, weight_record, applied = request.model.load()
    cast_note = None
    if request.engine.name == "vllm":  # vLLM holds (and reads) a float32 checkpoint's weights in bf16
        from .engines.vllm_load import vllm_loaded

        weight_record, cast_note = vllm_loaded(spec, weight_record)
    elif request.engine.name == "sglang":
        # SGLang too loads a float32 checkpoint in 16 bits (engines/sglang_report.served_16bit): its pool is sized
        # after those weights, so the fit check sees them at 2 B as well
        from .engines.sglang_report import FLOAT32_SERVED_AS
        from .engines.vllm_load import vllm_loaded

        weight_record, cast_note = vllm_loaded(spec, weight_record, FLOAT32_SERVED_AS)
    spec, dtype_name = apply_kv_dtype(spec, request.kv_dtype)
    chain = []
    if request.techniques:
        from .techniques.registry import build_all

        chain = build_all(list(request.techniques))
    tokens = request.context_tokens
    longest = spec.max_context_tokens
    default_capped = (not request.context_given and isinstance(longest, int) and not isinstance(longest, bool)
                      and 0 < longest < tokens)
    if default_capped:  # the default length is longer than the model's: plan the model's maximum instead
        from dataclasses import replace

        tokens = longest
        request = replace(request, context_tokens=tokens)
    warn_above_max_context(spec, tokens)
    check_prefix_within(chain, tokens)
    if request.deployment.redundant_auto:  # vLLM's default R, now that the experts are known (capacity/eplb.py)
        from dataclasses import replace

        from .capacity.eplb import vllm_default_redundant

        auto = vllm_default_redundant(spec, request.deployment.tp * request.deployment.dp)
        request = replace(request, deployment=replace(request.deployment, redundant_experts=auto,
                                                      redundant_auto=auto is not None))
    deployment = request.deployment.build(weight_record)
    check_tp_after(spec, chain, request.deployment.tp)
    if request.deployment.dp > 1 or request.deployment.ep:  # the weights' share is checked with the pool
        from .capacity.experts import check_placement

        if "sglang" in (request.engine.name, request.engine.emit):  # SGLang's rules first, in its words
            from .engines.sglang_dp import check_model
            from .engines.sglang_groups import encoder_whole

            check_model(spec, request.deployment.dp, request.deployment.ep, request.deployment.tp * request.deployment.dp,
                        request.deployment.pp, request.deployment.redundant_experts,
                        encoder_whole(spec, request.deployment.sglang_groups))
        check_placement(spec, None, request.deployment.dp, request.deployment.ep, request.deployment.pp)
        from .capacity.eplb import check_redundant

        for name in {request.engine.name, request.engine.emit or request.engine.name}:  # SGLang's rule or vLLM's
            check_redundant(spec, request.deployment.redundant_experts, request.deployment.ep,
                            request.deployment.tp * request.deployment.dp, name)
    if deployment is not None and deployment.gpu is not None and request.engine.name in ("vllm", "sglang"):
        # what the engine refuses on this card whatever the split (below SM 8.0), before the plan's own "does not
        # fit", which more GPUs could not cure
        from .engines.pre_ampere import check_card
        from .planner import compose

        check_card(compose(spec, chain)[-1].model if chain else spec, deployment.gpu.cuda_capability,
                   request.engine.name, request.engine.release, request.engine.rules, dtype_name)
    result = evaluate(spec, chain, tokens, request.batch, deployment, weights=weight_record)
    engine_label = {"vllm": "vLLM", "sglang": "SGLang"}.get(request.engine.name)
    report = estimate_report.build(result, kv_dtype=dtype_name, explain=request.explain, engine=engine_label)
    report.data["context_from"] = ("--context" if request.context_given else
                                   "default, capped at the model's maximum" if default_capped else "default")
    if default_capped:
        report.lines.append(f"--context not given: {tokens:,} tokens, {spec.name}'s maximum "
                            f"(max_position_embeddings; the default {DEFAULT_CONTEXT_TOKENS:,} is longer)")
    record_overrides(report, applied)
    if cast_note is not None and deployment is not None:
        report.lines.append(f"weights: {cast_note}")
    if deployment is not None and deployment.tp > 1:
        from .capacity.weights import kv_note, plan_weights

        line = kv_note(plan_weights(spec, deployment), spec, deployment.tp)
        if line is not None:
            report.lines.append(f"weights: {line}")
            report.data["model"]["weights"]["notes"].append(line)  # in the JSON too, as the record's own notes
    if deployment is not None and (deployment.dp > 1 or deployment.ep):
        if "sglang" in (request.engine.name, request.engine.emit):
            from .engines.sglang_dp import placement_note

            line = placement_note(spec, deployment.dp, deployment.ep, deployment.tp, deployment.redundant_experts,
                                  getattr(deployment, "sglang_groups", None))
        else:
            from .capacity.experts import placement_note

            line = placement_note(spec, deployment.dp, deployment.ep, deployment.tp, result.weights,
                                  deployment.redundant_experts, deployment.a2a,
                                  redundant_default=deployment.eplb_default)
        if line is not None:
            report.lines.append(f"note: {line}")
    engine = request.engine
    vllm_concurrency = None
    vllm_pool = None  # --engine vllm's pool, for --emit vllm's --max-num-seqs
    if engine.name == "vllm":
        from .engines import vllm_report

        pool = vllm_report.add_to_report(report, result, request.engine_tokens, rules=engine.rules, note=engine.note,
                                         release=engine.release, max_num_seqs=engine.max_num_seqs,
                                         enforce_eager=engine.enforce_eager, speculation=engine.speculation)
        vllm_pool = pool
        if request.engine_tokens == tokens:  # vLLM's sequences of max_model_len = --context
            # one pool a DP rank (each rank's engine core logs its own): the replica serves dp x
            vllm_concurrency = pool.max_concurrency * (deployment.dp if deployment is not None else 1)
    elif engine.name == "sglang":
        from .engines import sglang_report

        pool = sglang_report.add_to_report(report, result, request.engine_tokens,
                                           mem_fraction_static=engine.mem_fraction_static,
                                           speculation=engine.speculation, max_running_requests=engine.max_num_seqs,
                                           release=engine.release,
                                           batch=request.batch if engine.emit == "sglang"
                                           and engine.emit_release == engine.release else None)
        if request.engine_tokens == tokens:  # SGLang's requests of context_len = --context
            # with attention DP one pool a DP rank (engines/sglang_dp.py): the replica serves dp x
            vllm_concurrency = pool.max_concurrency * (deployment.dp if deployment is not None else 1)
        from .configs.quant_online import sglang_load_warning

        line = sglang_load_warning(spec, deployment)
        if line is not None:  # its load holds the float checkpoint first (configs/quant_online.py)
            report.lines.append(line)
            report.data["model"]["weights"]["notes"].append(line)
    if engine.emit == "sglang":
        from .engines import sglang_flags

        sglang_flags.add_to_report(report, result, chain, request.engine_tokens,
                                   mem_fraction_static=engine.mem_fraction_static, speculation=engine.speculation,
                                   max_running_requests=engine.max_num_seqs, release=engine.emit_release,
                                   batch=request.batch)
    if engine.emit == "vllm":
        from .engines import vllm_flags

        vllm_flags.add_to_report(report, result, chain, dtype_name, request.engine_tokens, rules=engine.emit_rules,
                                 release=engine.emit_release, max_num_seqs=engine.max_num_seqs,
                                 enforce_eager=engine.enforce_eager, speculation=engine.speculation,
                                 pool=vllm_pool if engine.emit_rules is None or engine.emit_rules == engine.rules
                                 else None, context_tokens=tokens)
    if engine.max_model_len is not None and engine.max_model_len < tokens:
        report.lines.append(f"note: --context {tokens:,} is above --max-model-len {engine.max_model_len:,}: the engine "
                            f"refuses longer requests, so its figures are for requests of {engine.max_model_len:,} "
                            "tokens, the planner's for --context")
    label = "SGLang" if engine.name == "sglang" else "vLLM"
    if request.budgets.min_concurrency is None:  # that budget says it already
        warn_batch(report, result, vllm_concurrency, label)
    failed = check_budgets(report, result, request.budgets.max_kv_gib, request.budgets.min_concurrency,
                           vllm_concurrency, label)
    from .reports import tidy

    report.tidy = tidy.estimate(report.data)
    return EstimateRun(report, failed, result, vllm_concurrency)


def warn_batch(report: Report, result, engine_concurrency=None, engine_label: str = "vLLM") -> None:
    """A line when --batch is more sequences of --context than the pool holds: kvplan's, or the engine's own
    (engine_concurrency, as --min-concurrency reads it), where the totals and decode floor are still for the
    whole batch. With offloading the rest waits on the CPU (its own line)."""
    from .units import format_tokens

    cap, batch = result.capacity, result.estimate.batch
    if cap is None or result.offload is not None:
        return
    engine_short = engine_concurrency is not None and engine_concurrency < batch
    if batch <= cap.max_concurrency and not engine_short:
        return
    context = format_tokens(result.estimate.context_tokens)
    held = f"kvplan's KV pool holds {cap.max_concurrency:,} sequences of {context}"
    if engine_concurrency is not None:
        held += f", {engine_label}'s {engine_concurrency:,.2f}"
    # one sequence (the default --batch): said as such, not as a flag the user may not have given; "the totals"
    # rather than "above": in json / csv output the line goes to stderr, after nothing
    what, whom = ((f"one sequence of {context}", "that one sequence") if batch == 1 else
                  (f"--batch {batch:,}", f"all {batch:,}"))
    report.lines.append(f"warning: {what} does not fit: {held}; the batch totals and decode floor are for {whom} "
                        f"(--min-concurrency {batch:,} makes this an error)")


def check_budgets(report: Report, result, max_kv_gib, min_concurrency, vllm_concurrency=None,
                  engine_label: str = "vLLM") -> bool:
    """Whether a budget fails. vllm_concurrency: with --engine vllm (or sglang), the engine's own concurrency at
    --context, which --min-concurrency must meet too (its blocks, groups and any speculative draft)."""
    broken = []
    if max_kv_gib is not None:
        per_gpu = result.kv_bytes_per_gpu
        if per_gpu > max_kv_gib * GIB:
            broken.append(f"KV per GPU {per_gpu / GIB:.2f} GiB exceeds --max-kv-gib {max_kv_gib}")
    if min_concurrency is not None:
        if result.capacity is None:
            raise UsageError("--min-concurrency needs a GPU (--gpu, --gpu-memory or --kv-memory)")
        if result.capacity.max_concurrency < min_concurrency:
            broken.append(f"max concurrency {result.capacity.max_concurrency} is below --min-concurrency {min_concurrency}")
        elif vllm_concurrency is not None and vllm_concurrency < min_concurrency:
            broken.append(f"{engine_label}'s pool holds {vllm_concurrency:.2f} sequences of --context, below --min-concurrency "
                          f"{min_concurrency}")
    report.data["budgets"] = {"ok": not broken, "violations": broken}
    for line in broken:
        report.lines.append(f"BUDGET EXCEEDED: {line}")
    if broken:
        import sys

        for line in broken:
            sys.stderr.write(f"kvplan: budget exceeded: {line}\n")
    return bool(broken)


__all__ = ["estimate_workflow", "apply_kv_dtype", "BudgetExceeded"]
