"""From command-line values to reports: parse, load, compose, evaluate, check budgets.

Commands stay thin: each calls one function here.
"""

from __future__ import annotations

from dataclasses import replace

from .core.storage import KV_DTYPES, kv_storage
from .errors import BudgetExceeded, UsageError
from .planner import evaluate
from .render import Report
from .sources import load_model_and_weights
from .units import GIB, parse_positive_int, parse_size, parse_tokens


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
                      overrides, revision, explain) -> tuple[Report, bool]:
    from .reports import estimate as estimate_report

    tokens = parse_tokens(context, "--context")
    batch_n = parse_positive_int(batch, "--batch")
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
    spec, weight_record = load_model_and_weights(model, revision=revision, overrides=overrides, weights=weights)
    spec, dtype_name = apply_kv_dtype(spec, kv_dtype)
    chain = []
    if techniques:
        from .techniques.registry import build_all

        chain = build_all(techniques)
    deployment = None
    if gpu or gpu_memory or kv_memory or tp != 1 or pp != 1:
        from .capacity.hardware import make_deployment
    if gpu or gpu_memory or kv_memory:
        deployment = make_deployment(
            gpu,
            gpu_memory=parse_size(gpu_memory, "--gpu-memory") if gpu_memory else None,
            hbm_gbps=hbm_gbps, tp=tp, pp=pp, mem_util=mem_util,
            reserve_bytes=parse_size(reserve, "--reserve") if reserve not in ("0", 0) else 0,
            weight_bytes=weight_record.total_bytes,
            kv_memory_bytes=parse_size(kv_memory, "--kv-memory") if kv_memory else None,
        )
    elif tp != 1 or pp != 1:
        deployment = make_deployment(None, tp=tp, pp=pp)
    result = evaluate(spec, chain, tokens, batch_n, deployment, weights=weight_record)
    report = estimate_report.build(result, kv_dtype=dtype_name, explain=explain)
    if engine == "vllm":
        from .engines import vllm_report

        vllm_report.add_to_report(report, result, parse_tokens(max_model_len, "--max-model-len") if max_model_len else tokens,
                                  rules=engine_rules, note=engine_note)
    if emit == "vllm":
        from .engines import vllm_flags

        vllm_flags.add_to_report(report, result, chain, dtype_name, parse_tokens(max_model_len, "--max-model-len") if max_model_len else tokens,
                                 rules=emit_rules)
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
