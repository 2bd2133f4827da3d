"""From command-line values to reports: parse, load, compose, evaluate, check budgets.

Commands stay thin: each calls one function here.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from .core.storage import KV_DTYPES, kv_storage
from .errors import BudgetExceeded, UsageError
from .planner import evaluate
from .render import Report
from .sources import load_model
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


def weight_bytes_from(weights: str) -> int | None:
    if weights in (None, "", "auto"):
        return None
    path = Path(weights)
    if path.suffix == ".json" or path.is_file():
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            return int(meta["metadata"]["total_size"])
        except FileNotFoundError:
            raise UsageError(f"--weights {weights}: no such file") from None
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            raise UsageError(f"--weights {weights}: not a safetensors index (needs metadata.total_size)") from None
    return parse_size(weights, "--weights")


def estimate_workflow(*, model, context, batch, kv_dtype, techniques, gpu, gpu_memory, hbm_gbps, tp, pp, mem_util,
                      reserve, weights, kv_memory, engine, max_model_len, max_kv_gib, min_concurrency, emit,
                      overrides, revision, explain) -> tuple[Report, bool]:
    from .reports import estimate as estimate_report

    tokens = parse_tokens(context, "--context")
    batch_n = parse_positive_int(batch, "--batch")
    if engine not in ("ideal", "vllm"):
        raise UsageError(f"--engine {engine!r} is not one of ideal, vllm")
    if emit not in (None, "vllm"):
        raise UsageError(f"--emit {emit!r}: only 'vllm' is supported")
    spec = load_model(model, revision=revision, overrides=overrides)
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
            weight_bytes=weight_bytes_from(weights),
            kv_memory_bytes=parse_size(kv_memory, "--kv-memory") if kv_memory else None,
        )
    elif tp != 1 or pp != 1:
        deployment = make_deployment(None, tp=tp, pp=pp)
    result = evaluate(spec, chain, tokens, batch_n, deployment)
    report = estimate_report.build(result, kv_dtype=dtype_name, explain=explain)
    if engine == "vllm":
        from .engines import vllm as vllm_engine

        vllm_engine.add_to_report(report, result, parse_tokens(max_model_len, "--max-model-len") if max_model_len else tokens)
    if emit == "vllm":
        from .engines import vllm_flags

        vllm_flags.add_to_report(report, result, chain, dtype_name, parse_tokens(max_model_len, "--max-model-len") if max_model_len else tokens)
    failed = check_budgets(report, result, max_kv_gib, min_concurrency)
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
