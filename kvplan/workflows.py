"""From command-line values to reports: parse, load, compose, evaluate, check budgets.

Commands stay thin: each calls one function here.
"""

from __future__ import annotations

from dataclasses import replace

from .capacity.shard import check_tp
from .core.storage import KV_DTYPES, kv_storage
from .errors import BudgetExceeded, KvplanWarning, UsageError
from .planner import compose, evaluate
from .render import Report
from .sources import load_everything
from .units import GIB, check_number, parse_positive_int, parse_size, parse_tokens


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


def check_number_options(*, hbm_gbps=None, max_kv_gib=None, min_concurrency=None, mem_util=None) -> None:
    """Finite, in range, else a usage error (exit 2) naming the option."""
    check_number(hbm_gbps, "--hbm-gbps", minimum=0, strict=True, maximum=1e6)
    check_number(max_kv_gib, "--max-kv-gib", minimum=0, strict=True, maximum=2**30)
    check_number(min_concurrency, "--min-concurrency", minimum=1, maximum=2**40)
    check_number(mem_util, "--mem-util", minimum=0, strict=True, maximum=1)


def record_overrides(report: Report, applied) -> None:
    """Every --set / --set-new in the JSON (`overrides`) and in the first table's title."""
    report.data["overrides"] = [o.as_dict() for o in applied]
    if applied and report.tables:
        report.tables[0].title += " (config overridden: " + ", ".join(o.describe() for o in applied) + ")"


def apply_kv_dtype(model, kv_dtype: str):
    """--kv-dtype: the storage of every K/V and latent cache (indexer keys keep theirs)."""
    name = kv_dtype.lower()
    if name == "auto":
        return model, {"float32": "fp32", "float16": "fp16"}.get(model.weight_dtype, "bf16")
    if name not in KV_DTYPES:
        raise UsageError(f"--kv-dtype {kv_dtype!r} is not one of auto, {', '.join(KV_DTYPES)}")
    from .core.transform import map_caches

    storage = kv_storage(name)
    return map_caches(model, lambda c: replace(c, storage=storage), lambda i, l, c: c.kind in ("attention", "latent")), storage.name


def estimate_workflow(*, model, context, batch, kv_dtype, techniques, gpu, gpu_memory, hbm_gbps, tp, pp, mem_util,
                      reserve, weights, kv_memory, engine, max_model_len, max_kv_gib, min_concurrency, emit,
                      overrides, revision, explain, new_overrides=()) -> tuple[Report, bool]:
    from .reports import estimate as estimate_report

    tokens = parse_tokens(context, "--context")
    batch_n = parse_positive_int(batch, "--batch")
    check_number_options(hbm_gbps=hbm_gbps, max_kv_gib=max_kv_gib, min_concurrency=min_concurrency, mem_util=mem_util)
    engine_len = parse_tokens(max_model_len, "--max-model-len") if max_model_len else tokens
    engine_rules = engine_note = emit_rules = None
    if engine.strip().lower() != "ideal" or emit is not None:  # the engine modules load only when used
        from .engines.vllm_rules import parse_engine

        engine, engine_rules, engine_note = parse_engine(engine)
    else:
        engine = "ideal"
    if emit is not None:
        emit_text = emit
        if emit.partition("@")[0].strip().lower() != "vllm":
            raise UsageError(f"--emit {emit!r}: only 'vllm' or 'vllm@VERSION' is supported")
        emit, emit_rules, _ = parse_engine(emit)
        if "@" not in emit_text and engine_rules is not None:  # --engine vllm@0.11 --emit vllm: one release
            emit_rules = engine_rules
    spec, weight_record, applied = load_everything(model, revision=revision, overrides=overrides,
                                                   new=new_overrides, weights=weights)
    spec, dtype_name = apply_kv_dtype(spec, kv_dtype)
    chain = []
    if techniques:
        from .techniques.registry import build_all

        chain = build_all(techniques)
    warn_above_max_context(spec, tokens)
    deployment = None
    if gpu or gpu_memory or kv_memory or tp != 1 or pp != 1:
        from .capacity.hardware import make_deployment
    if gpu or gpu_memory or kv_memory:
        deployment = make_deployment(
            gpu,
            gpu_memory=parse_size(gpu_memory, "--gpu-memory") if gpu_memory else None,
            hbm_gbps=hbm_gbps, tp=tp, pp=pp, mem_util=mem_util,
            reserve_bytes=parse_size(reserve, "--reserve") if str(reserve).strip() not in ("0", "0B") else 0,
            weight_bytes=weight_record.total_bytes,
            kv_memory_bytes=parse_size(kv_memory, "--kv-memory") if kv_memory else None,
        )
    elif tp != 1 or pp != 1:
        deployment = make_deployment(None, tp=tp, pp=pp)
    check_tp_after(spec, chain, tp)
    result = evaluate(spec, chain, tokens, batch_n, deployment, weights=weight_record)
    report = estimate_report.build(result, kv_dtype=dtype_name, explain=explain)
    record_overrides(report, applied)
    if engine == "vllm":
        from .engines import vllm_report

        vllm_report.add_to_report(report, result, engine_len, rules=engine_rules, note=engine_note)
    if emit == "vllm":
        from .engines import vllm_flags

        vllm_flags.add_to_report(report, result, chain, dtype_name, engine_len, rules=emit_rules)
    failed = check_budgets(report, result, max_kv_gib, min_concurrency)
    from .reports import tidy

    report.tidy = tidy.estimate(report.data)
    return report, failed


def check_budgets(report: Report, result, max_kv_gib, min_concurrency) -> bool:
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
    report.data["budgets"] = {"ok": not broken, "violations": broken}
    for line in broken:
        report.lines.append(f"BUDGET EXCEEDED: {line}")
    if broken:
        import sys

        for line in broken:
            sys.stderr.write(f"kvplan: budget exceeded: {line}\n")
    return bool(broken)


__all__ = ["estimate_workflow", "apply_kv_dtype", "BudgetExceeded"]
