"""`kvplan bench`: build each technique's real cache with the kernels, measure
it, and put the prediction of `kvplan estimate` beside every figure.

Only this module (and timing, inputs, measure_*) import torch / triton, and only when a bench
runs. On a machine without CUDA, TRITON_INTERPRET=1 is set here before any
kernel module is imported.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field

from ..core.model import ModelSpec
from ..errors import KvplanError, UsageError
from .cases import BenchCase, check_cache_supported, check_device_supported, make_case
from .predict import predict
from .row import BenchRow

# Called with (technique spec, shapes dict) before a technique runs; tests
# inject one that raises torch.OutOfMemoryError.
BEFORE_TECHNIQUE_HOOKS: list = []


@dataclass
class BenchConfig:
    model_name: str
    specs: list[str]
    context_tokens: int
    batch: int
    device: str  # resolved: "cuda" | "cpu"
    repeats: int
    shrink: bool
    block_tokens: int = 16
    seed: int = 0
    progress: object = None  # callable(done, total, label) or None


@dataclass
class BenchRun:
    env: dict
    config: dict
    shapes: dict
    ceiling: dict
    results: list[BenchRow | dict] = field(default_factory=list)  # dict: JSON rows merged from ranks


def resolve_device(requested: str) -> str:
    """auto -> cuda when torch sees one, else cpu. Sets TRITON_INTERPRET on CPU."""
    if requested not in ("auto", "cuda", "cpu"):
        raise UsageError(f"--device {requested!r} is not one of auto, cuda, cpu")
    if requested in ("auto", "cpu"):
        cuda = False
        if requested == "auto":
            try:
                import torch

                cuda = torch.cuda.is_available()
            except ImportError:
                raise UsageError("kvplan bench needs torch and triton", "pip install 'kvplan[bench]'") from None
        if not cuda:
            os.environ["TRITON_INTERPRET"] = "1"
            _check_interpreter()
            return "cpu"
        return "cuda"
    import torch

    if not torch.cuda.is_available():
        raise UsageError("--device cuda: torch sees no CUDA device", "use --device cpu (Triton interpreter)")
    return "cuda"


def _check_interpreter() -> None:
    mod = sys.modules.get("kvplan.kernels._interp")
    if mod is not None and not getattr(mod, "INTERPRET", False):
        raise UsageError("the kernels were imported before TRITON_INTERPRET=1 was set",
                         "set TRITON_INTERPRET=1 in the environment before starting")
    from ..kernels._interp import interpreter_problem

    problem = interpreter_problem()
    if problem:
        raise UsageError(f"--device cpu: {problem}")


def environment(device: str) -> dict:
    import platform
    import subprocess

    import torch
    import triton

    from .. import __version__

    commit = None
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                                timeout=5).stdout.strip() or None
    except Exception:
        commit = None
    name = torch.cuda.get_device_name(0) if device == "cuda" else (platform.processor() or platform.machine() or "cpu")
    return {
        "device_kind": device,
        "device_name": name,
        "interpreter": os.environ.get("TRITON_INTERPRET") == "1",
        "torch": torch.__version__,
        "triton": triton.__version__,
        "kvplan": __version__,
        "python": platform.python_version(),
        "git_commit": commit,
    }


def _deployment(device: str):
    """A catalog GPU for the recompute estimate of offload rows (CUDA only)."""
    if device != "cuda":
        return None
    import torch

    from ..capacity.gpus import CATALOG, match_device_name
    from ..capacity.hardware import make_deployment

    key = match_device_name(torch.cuda.get_device_name(0))
    if key is None:
        return None
    # the pool is given directly: the bench needs the GPU's TFLOP/s for the
    # recompute estimate, not a check that the model's weights fit on it
    return make_deployment(key, kv_memory_bytes=CATALOG[key].memory_bytes)


def _shapes(model: ModelSpec) -> dict:
    groups = []
    for layer, count in model.groups:
        caches = [{"kind": c.kind, "heads": c.heads, "key_dim": c.key_dim, "value_dim": c.value_dim,
                   "storage": c.storage.name, "window_tokens": c.policy.window_tokens} for c in layer.caches]
        state = None
        if layer.state is not None:
            state = {"kind": layer.state.kind, "conv_elements": layer.state.conv_elements,
                     "ssm_elements": layer.state.ssm_elements}
        groups.append({"kind": layer.kind, "layers": count, "caches": caches, "state": state,
                       "shares_cache_of": layer.shares_cache_of})
    return {"layers": model.num_layers, "q_heads": model.num_attention_heads, "groups": groups}


def run_bench(cfg: BenchConfig) -> BenchRun:
    from ..sources import load_model

    base = load_model(cfg.model_name)
    shrink_info = None
    model = base
    if cfg.shrink:
        from .shrink import shrink_model

        model, shrink_info = shrink_model(base, cfg.context_tokens, cfg.block_tokens)
    cases = [make_case("baseline", cfg.block_tokens)] + [make_case(s, cfg.block_tokens) for s in cfg.specs]
    import torch

    from .timing import copy_ceiling_gbps

    dev = torch.device(cfg.device)
    gbps, copy_bytes = copy_ceiling_gbps(dev)
    shapes = _shapes(model)
    shapes["context_tokens"] = cfg.context_tokens
    shapes["batch"] = cfg.batch
    shapes["shrink"] = shrink_info.as_dict() if shrink_info else None
    run = BenchRun(
        env=environment(cfg.device),
        config={"model": cfg.model_name, "techniques": cfg.specs, "context_tokens": cfg.context_tokens,
                "batch": cfg.batch, "repeats": cfg.repeats, "block_tokens": cfg.block_tokens,
                "shrink": cfg.shrink, "seed": cfg.seed},
        shapes=shapes,
        ceiling={"copy_gbps": gbps, "copy_bytes": copy_bytes,
                 "meaningful": cfg.device == "cuda"},
    )
    deployment = _deployment(cfg.device)
    for i, case in enumerate(cases):
        if cfg.progress:
            cfg.progress(i, len(cases), case.spec)
        run.results.append(run_case(case, model, cfg, dev, gbps, deployment))
    if cfg.progress:
        cfg.progress(len(cases), len(cases), "done")
    return run


def _empty_row(case: BenchCase) -> BenchRow:
    return BenchRow(technique=case.spec, name=case.name, block_tokens=case.block_tokens,
                    layout_notes=list(case.layout_notes))


def run_case(case: BenchCase, model: ModelSpec, cfg: BenchConfig, dev, ceiling_gbps: float, deployment,
             rank=None) -> BenchRow:
    """rank: None on one device; in a distributed run an object whose
    predict(model, case, tokens, batch, deployment) gives this rank's Prediction
    and build(final model) the model of the caches it holds (bench.distributed)."""
    import torch

    row = _empty_row(case)
    if case.unsupported:
        return row.fail("unsupported", case.unsupported)
    try:
        if rank is None:
            pred = predict(model, case, cfg.context_tokens, cfg.batch, deployment)
        else:
            pred = rank.predict(model, case, cfg.context_tokens, cfg.batch, deployment)
    except KvplanError as exc:  # a technique that cannot apply to this model: not a failure
        return row.fail("n/a", exc.one_line())
    final = pred.model if rank is None else rank.build(pred.result.plan.model)
    row.bytes.predicted, row.blocks.predicted = pred.bytes, pred.blocks
    row.bytes.predicted_offloaded = pred.offloaded_bytes if pred.sessions_offloaded else None
    row.latency.read_bytes_per_step = pred.read_bytes_per_step
    if pred.result.offload is not None and pred.result.offload.resume is not None:
        row.offload.recompute_ms_predicted = pred.result.offload.resume.recompute_ms
    shapes = _shapes(final)
    try:
        for hook in BEFORE_TECHNIQUE_HOOKS:
            hook(case.spec, shapes)
        measures = _run_groups(case, model, final, pred, cfg, dev)
    except torch.OutOfMemoryError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "out of memory"
        _free(dev)
        return row.fail("oom", f"out of memory on {cfg.device} for {_shape_line(shapes, cfg)}: {first}")
    except NotImplementedError as exc:
        return row.fail("unsupported", str(exc))
    except Exception as exc:
        _free(dev)
        return row.fail("error", f"{type(exc).__name__}: {exc}")
    _fill(row, pred, measures, ceiling_gbps, case)
    _free(dev)
    return fail_on_non_finite(row)


def _worst(values: list[float], pick):
    """max/min that cannot skip a NaN (max([0.1, nan]) is 0.1): a NaN anywhere is the answer."""
    if not values:
        return None
    if any(v != v for v in values):
        return math.nan
    return pick(values)


def fail_on_non_finite(row: BenchRow) -> BenchRow:
    """A NaN or infinite figure (a kernel that produced NaN, a zero-time step) fails the
    row: the figures become null, so the JSON stays standard and the gate sees an error."""
    bad: list[str] = []

    def clean(value, where):
        if isinstance(value, float) and not math.isfinite(value):
            bad.append(where)
            return None
        if isinstance(value, dict):
            return {k: clean(v, f"{where}.{k}" if where else k) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return value

    cleaned = clean(row.to_json(), "")
    if not bad:
        return row
    return BenchRow.from_json(cleaned).fail(
        "error", f"non-finite figures (NaN or inf): {', '.join(bad[:6])}"
        + (f" and {len(bad) - 6} more" if len(bad) > 6 else ""))


def _shape_line(shapes: dict, cfg: BenchConfig) -> str:
    parts = []
    for g in shapes["groups"]:
        for c in g["caches"]:
            parts.append(f"{g['layers']}x {c['kind']} {c['heads']}x{c['key_dim']} {c['storage']}")
    return f"batch {cfg.batch} x {cfg.context_tokens} tokens, " + ", ".join(parts or ["no token cache"])


def _free(dev) -> None:
    import gc

    gc.collect()
    if dev.type == "cuda":
        import torch

        torch.cuda.empty_cache()


def _run_groups(case, base_model, final: ModelSpec, pred, cfg: BenchConfig, dev) -> list[tuple]:
    from .inputs import Setup
    from .measure_attention import run_attention
    from .measure_other import run_csa, run_latent, run_state

    plan = pred.result.plan
    prefix = plan.prefix
    out = []
    shape = base_model.attention_shape()
    capability = None
    if dev.type == "cuda":
        import torch

        capability = tuple(torch.cuda.get_device_capability(dev))
    for gp in pred.groups:
        layer, count = final.groups[gp.index]
        for cache in layer.caches:
            why = check_cache_supported(cache, cfg.context_tokens) or check_device_supported(cache, capability)
            if why:
                raise NotImplementedError(why)
        setup = Setup(
            device=dev, batch=cfg.batch, tokens=cfg.context_tokens,
            q_heads=final.num_attention_heads or (layer.caches[0].heads if layer.caches else 1),
            block_tokens=plan.block_size, repeats=cfg.repeats,
            prefix_tokens=prefix.tokens if prefix else 0, prefix_requests=prefix.requests if prefix else 0,
            offload_sessions=pred.sessions_offloaded, quant_groups=case.quant_groups, seed=cfg.seed + gp.index,
        )
        measures = []
        for cache in layer.caches:
            setup.reference_window = None if case.name == "window" else cache.policy.window_tokens
            if cache.policy.compress_ratio is not None:
                measures.append(run_csa(cache, setup))
            elif cache.kind == "latent":
                measures.append(run_latent(cache, setup))
            else:
                measures.append(run_attention(cache, setup))
        if layer.state is not None:
            heads = final.num_attention_heads or 1
            d = shape[1] if shape else 0
            measures.append(run_state(layer.state, setup, heads, d, d))
        out.append((gp, count, measures))
    return out


def _fill(row: BenchRow, pred, groups, ceiling_gbps: float, case: BenchCase) -> None:
    measured = blocks = 0
    paged = pred.blocks is not None
    shared = free = waste = 0
    pool = tables = offloaded = 0
    cuda_delta = 0
    med = p20 = p80 = prefill = 0.0
    cycle = None  # offload, resume, resume + first step: summed over layers
    step_samples: list[tuple[int, tuple[float, ...]]] = []  # (layer count, one layer's timed decode steps)
    errors, masses, engines = [], [], set()
    method = None
    for gp, count, measures in groups:
        g_bytes = sum(m.cache_bytes for m in measures) * count
        g_blocks = sum(m.blocks_used or 0 for m in measures) * count
        measured += g_bytes
        blocks += g_blocks
        shared += sum(m.blocks_shared or 0 for m in measures) * count
        free += sum(m.blocks_free or 0 for m in measures) * count
        waste += sum(m.waste_slots or 0 for m in measures) * count
        pool += sum(m.pool_bytes for m in measures) * count
        tables += sum(m.block_table_bytes for m in measures) * count
        offloaded += sum(m.offloaded_bytes for m in measures) * count
        for m in measures:
            if m.cuda_allocated_delta is not None:
                cuda_delta += m.cuda_allocated_delta * count
            if m.decode:
                med += m.decode.median_ms * count
                step_samples.append((count, m.decode.samples_ms))
                p20 += m.decode.p20_ms * count
                p80 += m.decode.p80_ms * count
                method = m.decode.method
            if m.prefill:
                prefill += m.prefill.median_ms * count
            if m.offload_cycle:
                c = m.offload_cycle
                got = (c.offload.median_ms, c.resume.median_ms, c.resume_first_step.median_ms)
                cycle = [a + b * count for a, b in zip(cycle or (0.0, 0.0, 0.0), got)]
            if m.error_rel is not None:
                errors.append(m.error_rel)
            if m.attention_mass is not None:
                masses.append(m.attention_mass)
            engines.add(m.engine)
        row.groups.append({
            "kind": gp.kind, "layers": count,
            "predicted_bytes": gp.resident_bytes, "measured_bytes": g_bytes,
            "predicted_blocks": None if gp.blocks is None else gp.blocks * count,
            "measured_blocks": g_blocks if paged else None,
            "latency_ms_median_per_layer": sum(m.decode.median_ms for m in measures if m.decode),
            "latency_samples_ms_per_layer": [list(m.decode.samples_ms) for m in measures if m.decode],
            "error_rel": _worst([m.error_rel for m in measures if m.error_rel is not None], max),
            "breakdown": [m.breakdown for m in measures],
        })
    b, k = row.bytes, row.blocks
    b.measured, b.match = measured, measured == pred.bytes
    b.measured_offloaded = offloaded if pred.sessions_offloaded else None
    b.pool, b.block_table = pool, tables
    if any(m.cuda_allocated_delta is not None for _, _, ms in groups for m in ms):
        b.cuda_allocated_delta = cuda_delta
    if paged:
        k.measured, k.match, k.shared, k.free, k.waste_slots = blocks, blocks == pred.blocks, shared, free, waste
    lat = row.latency
    floor_ms = pred.read_bytes_per_step / (ceiling_gbps * 1e9) * 1e3 if ceiling_gbps else None
    lat.median_ms, lat.p20_ms, lat.p80_ms, lat.method = med, p20, p80, method
    lat.samples_ms, lat.prefill_ms, lat.floor_ms = _step_samples(step_samples), prefill, floor_ms
    lat.achieved_gbps = (pred.read_bytes_per_step / (med * 1e-3) / 1e9) if med else None
    lat.efficiency = (floor_ms / med) if med and floor_ms else None
    lat.efficiency_p20 = (floor_ms / p80) if p80 and floor_ms else None  # slow end
    lat.efficiency_p80 = (floor_ms / p20) if p20 and floor_ms else None  # fast end
    if cycle:
        row.offload.offload_ms_median, row.offload.resume_ms_median, row.offload.resume_first_step_ms_median = cycle
    row.accuracy.error_rel, row.accuracy.attention_mass = _worst(errors, max), _worst(masses, min)
    row.accuracy.reference = ("own architecture, bf16 full cache (float64 math)"
                              if case.name in ("gqa", "mqa", "mla", "hybrid", "cla") else
                              "bf16 full cache of the model (float64 math)")
    row.engine = ", ".join(sorted(engines)) or "triton"
    if pred.sessions_offloaded and b.measured_offloaded != b.predicted_offloaded:
        b.match = False
    problems = []
    if not b.match:
        problems.append(f"bytes: predicted {pred.bytes} measured {measured} (diff {measured - pred.bytes:+d})")
        if pred.sessions_offloaded:
            problems.append(f"offloaded: predicted {b.predicted_offloaded} measured {b.measured_offloaded}")
    buffers = sum(
        m.breakdown.get("per_sequence_buffer_bytes", 0) * count for _, count, ms in groups for m in ms)
    if not b.match and buffers and measured - pred.bytes == buffers:
        problems.append(f"the difference is exactly the KIVI kernel's per-sequence fp16 buffer of the open key "
                        f"group (QuantKV.k_residual: batch x group x kv_heads x head_dim x 2 B per layer, "
                        f"{buffers} B here), which kvplan's paged kivi Storage does not count")
    if paged and not k.match:
        problems.append(f"blocks: predicted {pred.blocks} measured {blocks}")
    if problems:
        row.fail("mismatch", "; ".join(problems))


def _step_samples(parts: list[tuple[int, tuple[float, ...]]]) -> list[float] | None:
    """Whole-model decode steps from the per-layer timings: the i-th sample of every
    timed layer spec, times its layer count, summed (as the median is), over the
    shortest run of samples. None when nothing was timed."""
    if not parts or any(not s for _, s in parts):
        return None
    n = min(len(s) for _, s in parts)
    return [sum(count * s[i] for count, s in parts) for i in range(n)]

