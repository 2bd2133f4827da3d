"""`kvplan calibrate LOG` for an SGLang start-up log: reproduce its pool with kvplan.engines.sglang.

From the log (kvplan.engines.sglang_log): A, the free memory after the weights load ("Load weight end.
... avail mem="), T0, the free memory before it ("Load weight begin. avail mem=", else A + the load's "mem
usage"), mem_fraction_static (server_args, else --mem-fraction-static), TP, the KV dtype and page size.
Figures, each with the log's own rounding (two decimals of GiB):

- the pool's tokens, int((A - T0 x (1 - mem_fraction_static)) x 2**30) // cell, within the interval the
  printed A and T0 allow; at TP > 1 SGLang sizes from the smallest rank's free memory while the log prints
  rank 0's, so a small shortfall is the other ranks';
- K and V size (MLA: KV size) from the logged tokens: (tokens + page) x the cell's share, which checks
  the cell alone;
- max_running_requests from the logged tokens and context_len, by 0.5.9's rule (releases up to at least
  0.4.3.post4 logged one more: ReqToTokenPool(size=max_num_reqs + 1); 0.4.9 logs max_num_reqs);
- without a mem_fraction_static, the one the logged tokens imply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import KvplanError, UsageError
from ..render import Report, Table
from .sglang import cell, is_nsa, kv_dtype_bytes
from .sglang_log import SglangLog, read
from .sglang_rules import (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO, MAMBA_EXTRA_BUFFER_SLOTS, NSA_PAGE_SIZE, RULES,
                           SM10_GPUS, Rules, rules_for)
# the figures both engines' calibrations share (tidy.calibrate reads them)
from .vllm_calibrate_records import Figure, deviation_pct

# SGLang prints no version; the public logs calibrate reads are of 0.4-0.5.10 and are reproduced with 0.5.9's
# rules unless --version names another release kvplan models
LOG_RULES = RULES["0.5.9"]

GIB = 2**30
HALF_CENT = 0.005  # a figure printed with two decimals


@dataclass
class SglangCalibration:
    log: SglangLog
    model_alias: str | None = None
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    problem: KvplanError | None = None
    what_if: dict | None = None  # the same deployment's pool with another KV dtype, context or page size
    rules: Rules = LOG_RULES


def calibrate(log: SglangLog, *, model: str | None = None, tp: int | None = None,
              mem_fraction_static: float | None = None, gpu: str | None = None,
              what_if: dict | None = None, rules: Rules = LOG_RULES) -> SglangCalibration:
    from ..sources import load_model
    from .vllm_calibrate_model import hub_cache_id, match_bundled

    cal = SglangCalibration(log, rules=rules)
    if log.read_nothing:
        cal.problem = UsageError(f"{log.path}: no SGLang memory lines ('Load weight end.', 'KV Cache is allocated.', "
                                 "'max_total_num_tokens=') were found", "give the server's start-up log as it printed it")
        return cal
    name = model or match_bundled(log.args.get("model_path")) or (
        hub_cache_id(log.args["model_path"]) if log.args.get("model_path") else None)
    if name is None:
        cal.problem = UsageError(f"{log.path}: the log names no model kvplan can read", "give --model NAME or CONFIG")
        return cal
    try:
        spec = load_model(name)
    except KvplanError as exc:
        cal.problem = UsageError(f"{log.path}: model {name}: {exc.message}", "give --model NAME or CONFIG")
        return cal
    cal.model_alias = name
    tp = tp or log.tp or 1
    page = log.args.get("page_size") or 1
    try:
        from ..capacity.shard import check_tp

        tp = _attention_tp(cal, tp)
        check_tp(spec, tp)  # the heads divide as SGLang requires, as `estimate --engine sglang` checks
        from .sglang_report import ssm_bytes_of

        dtype = log.args.get("kv_cache_dtype")
        dtype, kv_bytes = kv_dtype_bytes(spec, None if dtype in (None, "auto") else dtype)
        if dtype == "auto" and gpu in SM10_GPUS and is_nsa(spec):  # SGLang's DSA default on SM >= 10
            dtype, kv_bytes = "fp8_e4m3", 1
            cal.notes.append(f"KV dtype fp8_e4m3: SGLang's default for DeepSeek's sparse attention on {gpu}")
        c = cell(spec, tp, kv_bytes, ssm_bytes_of(spec)[0], rules, sm10=gpu in SM10_GPUS)
        if c.index_bytes:
            page = NSA_PAGE_SIZE
    except KvplanError as exc:
        cal.problem = exc
        return cal
    cal.notes.append(f"{spec.name} at TP {tp}: {c.bytes:,} B per token in SGLang's pool ({c.kind})")
    _sizes(cal, c, page)
    _states(cal, c)
    rest = _tokens(cal, c, page, mem_fraction_static)
    _requests(cal, spec.architecture)
    if what_if:
        try:
            _what_if(cal, spec, tp, page, rest, what_if, gpu)
        except KvplanError as exc:
            cal.problem = exc
    return cal


# server_args fields that place weights (experts, dense MLP, LM head, vision encoder), not the KV cache: the pool is
# sized from the free memory the log prints after the load (model_runner.py profile_max_num_token), which holds them
PLACEMENT_ARGS = ("ep_size", "moe_a2a_backend", "ep_num_redundant_experts", "enable_dp_lm_head", "moe_dense_tp_size",
                  "mm_enable_dp_encoder")
_DEFAULTS = {"ep_size": 1, "moe_a2a_backend": "none", "ep_num_redundant_experts": 0, "enable_dp_lm_head": "False",
             "moe_dense_tp_size": None, "mm_enable_dp_encoder": "False"}  # server_args.py ServerArgs defaults


def _attention_tp(cal: SglangCalibration, tp: int) -> int:
    """The TP the KV cell is split by: with enable_dp_attention and dp_size > 1 the tp_size GPUs form dp_size
    attention groups of tp / dp (engines/sglang_dp.py attention_tp, as `estimate --engine sglang --dp` takes it);
    dp_size without enable_dp_attention runs dp_size whole replicas, each at tp_size. Notes the placement settings
    read that the reproduction does not need."""
    args = cal.log.args
    dp = args.get("dp_size") or 1
    if dp > 1 and args.get("enable_dp_attention") == "True":
        from .sglang_dp import attention_tp

        attention = attention_tp(tp, dp, args.get("pp_size") or 1)
        cal.notes.append(f"attention DP: tp_size {tp} with dp_size {dp} and enable_dp_attention, each DP rank's pool "
                         f"is its attention group's (TP {attention}); the figures are the first rank's")
        tp = attention
    elif dp > 1:
        cal.notes.append(f"dp_size {dp} without enable_dp_attention: {dp} replicas of TP {tp}, each with its own pool; "
                         "the figures are the first one's")
    placed = {k: args[k] for k in PLACEMENT_ARGS if k in args and args[k] != _DEFAULTS[k]}
    if placed:
        cal.notes.append("read, not needed to reproduce the pool (it is sized from the free memory logged after the "
                         "load, which holds the weights these place; buffers they allocate after the load are not "
                         "modelled): " + ", ".join(f"{k} {v}" for k, v in placed.items()))
    return tp


def _what_if(cal: SglangCalibration, spec, tp: int, page: int, rest: int | None, what: dict, gpu) -> None:
    """The same deployment (the memory the logged pool was sized from) with another KV dtype, context length or
    page size: what SGLang would log (kvplan.engines.sglang.pool)."""
    from .sglang import pool
    from .sglang_report import ssm_bytes_of

    log = cal.log
    if rest is None:
        cal.notes.append("what-if: the log gives neither the free memory before and after the load with a "
                         "mem_fraction_static, nor a pool to size one from")
        return
    context = what.get("max_model_len") or log.context_len or spec.max_context_tokens or 4096
    got = pool(spec, rest_bytes=rest, context_len=context, tp=tp, kv_cache_dtype=what.get("kv_cache_dtype"),
               page_size=what.get("block_size") or page, ssm_bytes=ssm_bytes_of(spec)[0],
               nsa_fp8=gpu in SM10_GPUS, rules=cal.rules)
    cal.what_if = {"asked": what, "kv_cache_dtype": got.kv_cache_dtype, "max_total_num_tokens": got.max_total_num_tokens,
                   "max_running_requests": got.max_running_requests, "max_concurrency": round(got.max_concurrency, 6),
                   "log": got.log_lines(), "notes": list(got.notes)}


def _sizes(cal: SglangCalibration, c, page: int) -> None:
    """K / V (MLA: KV) size of the logged tokens: checks the cell."""
    log = cal.log
    line = log.full_kv
    tokens = log.pool_tokens
    if line is None or tokens is None or c.kind == "hybrid_swa":
        return
    total = (tokens + page) * c.bytes
    if line[3] is not None:
        pairs = [("KV size", line[3], c.mla_buffer_bytes(tokens, page) if c.kind == "mla" else total)]
    else:
        k = (tokens + page) * c.k_per_token
        pairs = [("K size", line[1], k), ("V size", line[2], total - k)]
    for label, logged, predicted in pairs:
        gib = predicted / GIB
        how = (f"({tokens:,} + page {page}) x {predicted // (tokens + page):,} B" if not c.index_bytes else
               f"{c.full_layers} layers x (({tokens:,} + {page}) x {c.mla_stored} B latent + whole pages of "
               f"{c.index_bytes} B indexer keys)")
        cal.figures.append(Figure(f"{label} (GB) of {tokens:,} tokens", f"{logged:.2f}", f"{gib:.4f}",
                                  deviation_pct(logged, gib), abs(gib - logged) <= HALF_CENT, how))


def _states(cal: SglangCalibration, c) -> None:
    """A hybrid's conv and SSM state buffers of the logged max_mamba_cache_size (+ 1): checks the state."""
    log = cal.log
    if log.mamba_cache_size is None or c.state is None:
        return
    held = log.mamba_cache_size + 1
    for label, logged, per_request in (("conv_state size", log.conv_state_gib, c.state.conv_bytes),
                                       ("ssm_state size", log.ssm_state_gib, c.state.ssm_bytes)):
        gib = held * per_request / GIB
        cal.figures.append(Figure(f"{label} (GB) of {log.mamba_cache_size:,} states", f"{logged:.2f}", f"{gib:.4f}",
                                  deviation_pct(logged, gib), abs(gib - logged) <= HALF_CENT,
                                  f"({log.mamba_cache_size:,} + 1) x {per_request:,} B ({c.state.layers} layers)"))


def _tokens(cal: SglangCalibration, c, page: int, given: float | None) -> int | None:
    """Reproduce the pool's tokens; returns the memory it was sized from (bytes; None when the log cannot say)."""
    log = cal.log
    a = log.min_load_end_avail_gib
    logged = log.pool_tokens
    if a is None or logged is None:
        return None
    ranks = len(log.end_by_rank)
    if log.min_load_begin_avail_gib is not None:
        t0, t0_err, t0_from = log.min_load_begin_avail_gib, HALF_CENT, "'Load weight begin. avail mem'"
    elif log.min_t0_from_usage_gib is not None:
        t0, t0_err, t0_from = log.min_t0_from_usage_gib, 2 * HALF_CENT, "'Load weight end.' avail mem + mem usage"
    else:
        return
    if ranks > 1:
        t0_from += f", A and T0 the smallest of the {ranks} ranks the log prints"
    frac = log.args.get("mem_fraction_static") if log.args.get("mem_fraction_static") is not None else given
    if frac is None:
        rest = logged * c.bytes / GIB
        implied = 1 - (a - rest) / t0
        cal.figures.append(Figure("mem_fraction_static (implied by the tokens)", "not printed", f"{implied:.3f}", None,
                                  None, f"1 - (A {a:.2f} - {rest:.3f} GiB of pool) / T0 {t0:.2f}", kind="prediction"))
        cal.notes.append("the log prints no mem_fraction_static (server_args): give --mem-fraction-static to "
                         "reproduce the tokens")
        return

    def tokens(a_gib: float, t0_gib: float) -> int:
        rest = a_gib - t0_gib * (1 - frac)
        return int(rest * GIB) // c.bytes // page * page

    rest_bytes = int((a - t0 * (1 - frac)) * GIB)
    if c.kind == "hybrid_swa" or c.state is not None:
        return rest_bytes  # a hybrid pool's split (or its state pool first) is kvplan.engines.sglang.pool's: not checked

    predicted = tokens(a, t0)
    low, high = tokens(a - HALF_CENT, t0 + t0_err), tokens(a + HALF_CENT, t0 - t0_err)
    within = low <= logged <= high
    why = (f"int((A {a:.2f} - T0 {t0:.2f} x (1 - {frac:g})) x 2^30) // {c.bytes:,} B; T0 from {t0_from}; the "
           f"printed figures allow {low:,}-{high:,}")
    if not within and (log.tp or 1) > ranks and logged < low:
        why += ("; at TP > 1 SGLang sizes from the smallest rank's free memory, and the log prints "
                f"{ranks or 1} of {log.tp} ranks")
    cal.figures.append(Figure("max_total_num_tokens", f"{logged:,}", f"{predicted:,}", deviation_pct(logged, predicted),
                              within, why))
    return rest_bytes


def _requests(cal: SglangCalibration, architecture: str | None = None) -> None:
    log = cal.log
    if log.max_running_requests is None or log.max_total_num_tokens is None or not log.context_len:
        return
    if log.args.get("max_running_requests") is not None:
        return  # given on the command line
    tokens = log.max_total_num_tokens
    predicted = min(max(int(tokens / log.context_len * 512), 2048), 4096, tokens // 2)
    why = f"min(max(int({tokens:,} / {log.context_len:,} x 512), 2048), 4096, {tokens:,} // 2)"
    if log.mamba_cache_size is not None:
        ratio = MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO + (
            MAMBA_EXTRA_BUFFER_SLOTS if (architecture or "") in cal.rules.mamba_extra_buffer_archs else 0)
        if log.args.get("disable_radix_cache") == "True":  # the server_args as resolved: init_memory_pool's ratio 1
            ratio = 1
        predicted = min(predicted, log.mamba_cache_size // ratio)
        why += (f", at most max_mamba_cache_size {log.mamba_cache_size:,} // {ratio}"
                + (" (disable_radix_cache=True: one state a request)" if ratio == 1 else ""))
    within, kind = log.max_running_requests in (predicted, predicted + 1), "reproduction"
    if log.max_running_requests == predicted + 1:
        why += ("; the log's one more is an older release's (up to at least 0.4.3.post4: "
                "ReqToTokenPool(size=max_num_reqs + 1))")
    elif not within and not log.args:
        within, kind = None, "prediction"
        why += "; the log prints no server_args, so a --max-running-requests it was given cannot be seen"
    cal.figures.append(Figure("max_running_requests", f"{log.max_running_requests:,}", f"{predicted:,}",
                              deviation_pct(log.max_running_requests, predicted), within, why, kind))


def build_report(cal: SglangCalibration) -> Report:
    log = cal.log
    read_ = {"model_path": log.args.get("model_path"), "architecture": log.architecture, "tp": log.tp,
             **{k: log.args.get(k) for k in ("dp_size", "enable_dp_attention", *PLACEMENT_ARGS)},
             "mem_fraction_static": log.args.get("mem_fraction_static"), "kv_cache_dtype": log.args.get("kv_cache_dtype"),
             "page_size": log.args.get("page_size"), "load_begin_avail_gib": log.load_begin_avail_gib,
             "load_end_avail_gib": log.load_end_avail_gib, "load_usage_gib": log.load_usage_gib,
             "max_total_num_tokens": log.pool_tokens, "max_running_requests": log.max_running_requests,
             "context_len": log.context_len, "swa_tokens": log.swa_tokens, "pool_end_avail_gib": log.pool_end_avail_gib}
    data = {
        "log": {"path": log.path, "engine": "sglang", **read_},
        "model": cal.model_alias,
        "engine": {"name": "sglang", "version": cal.rules.release},
        "figures": [f.__dict__ for f in cal.figures],
        "reproduced": (all(f.within_rounding for f in cal.figures if f.kind == "reproduction")
                       if any(f.kind == "reproduction" for f in cal.figures) else False),
        "notes": cal.notes,
        "problem": cal.problem.one_line() if cal.problem else None,
        "what_if": cal.what_if,
    }
    report = Report(data)
    report.headline = (f"SGLang start-up log {log.path}: {cal.model_alias or log.args.get('model_path') or 'model unknown'}, "
                       f"rules of SGLang {cal.rules.release}")
    shown = [[k.replace("_", " "), f"{v:g}" if isinstance(v, float) else v] for k, v in read_.items() if v is not None]
    report.tables.append(Table("read from the log", ["setting", "value"], shown))
    if cal.figures:
        rows = [[f.name, f.logged, f.predicted, "" if f.deviation_pct is None else f"{f.deviation_pct:+.3f}%",
                 {True: "yes", False: "NO", None: "(prediction)"}[f.within_rounding], f.explanation]
                for f in cal.figures]
        report.tables.append(Table("logged vs kvplan", ["figure", "logged", "kvplan", "deviation", "within rounding",
                                                        "why"], rows))
    if cal.what_if:
        report.lines.append("what-if: this SGLang server with " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in
                                                                            cal.what_if["asked"].items())
                            + " would log:")
        report.lines.extend(f"  {line}" for line in cal.what_if["log"])
        report.lines.extend(f"  note: {n}" for n in cal.what_if["notes"])
    report.lines.extend(f"note: {n}" for n in cal.notes)
    return report


def calibrate_workflow(path: str, *, model=None, tp=None, mem_fraction_static=None, gpu=None, kv_dtype=None,
                       max_model_len=None, block_size=None, version=None) -> tuple[Report, KvplanError | None]:
    if mem_fraction_static is not None and not 0 < mem_fraction_static < 1:
        raise UsageError(f"--mem-fraction-static {mem_fraction_static}: give a fraction between 0 and 1")
    if tp is not None and tp < 1:
        raise UsageError(f"--tp {tp}: must be at least 1")
    if gpu is not None:
        from ..capacity.gpus import lookup

        gpu = lookup(gpu).name
    what = {}
    if kv_dtype:
        what["kv_cache_dtype"] = kv_dtype
    if max_model_len:
        from ..units import parse_tokens

        what["max_model_len"] = parse_tokens(max_model_len, "--max-model-len")
    if block_size is not None:
        if block_size <= 0:
            raise UsageError(f"--block-size {block_size}: must be positive")
        what["block_size"] = block_size
    rules = rules_for(version.strip().lstrip("v")) if version else LOG_RULES
    log = read(path)
    cal = calibrate(log, model=model, tp=tp, mem_fraction_static=mem_fraction_static, gpu=gpu, what_if=what or None,
                    rules=rules)
    if log.read_nothing and cal.problem is not None:
        raise cal.problem
    return build_report(cal), cal.problem


__all__ = ["calibrate", "calibrate_workflow", "build_report", "SglangCalibration"]
