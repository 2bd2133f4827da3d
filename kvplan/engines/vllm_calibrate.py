"""`kvplan calibrate LOG`: reproduce a vLLM start-up log with kvplan's engine model.

For each figure the log printed (blocks, KV cache tokens, concurrency, the
refusal's estimated maximum length) kvplan predicts it from the model, the
deployment the log describes and the "Available KV cache memory" it printed.
That memory is printed to 0.01 GiB, so a figure is "within the log's
rounding" when it lies between kvplan's predictions at the two ends of that
interval; kvplan then picks the pool in the interval that reproduces the
logged block count and checks the concurrency text exactly. A difference is
explained by the rule or input it comes from.

What-ifs (`-t fp8 --max-model-len 64k --version 0.11`) replay the same
deployment (same KV memory per GPU) under the changed settings and print what
that server would log.

v0-engine logs (0.7 and older, "# GPU blocks") use 0.11's page rules with the
v0 accounting: blocks = kv_cache_size // (block x layers x page), concurrency =
blocks x block_size / max_model_len (vllm/worker/worker.py, v0.6-0.7).

This module holds the entry points (calibrate, calibrate_workflow) and the choice of rules for the log; the pieces
are vllm_calibrate_records.py (Figure, Calibration), vllm_calibrate_model.py (the logged model's name),
vllm_calibrate_draft.py (speculative decoding), vllm_calibrate_v0.py and vllm_calibrate_v1.py (the reproductions),
vllm_calibrate_gpu.py (the prediction from the GPU and the profile terms), vllm_calibrate_explain.py (why a figure
differs), vllm_calibrate_what_if.py and vllm_calibrate_report.py. Their public names stay importable from here.
"""

from __future__ import annotations

from ..errors import KvplanError, SourceError, UsageError
from ..render import Report
from .vllm_calibrate_draft import DRAFT_CHECKPOINT_METHODS, draft_layers, resolve_draft, speculative_tokens
from .vllm_calibrate_gpu import predict_from_gpu, read_placement
from .vllm_calibrate_model import hub_cache_id, match_bundled
from .vllm_calibrate_records import Calibration, Figure, log_has
from .vllm_calibrate_report import build_report
from .vllm_calibrate_v0 import reproduce_v0
from .vllm_calibrate_v1 import TOKENS_AFTER_MIN_FROM, reproduce_v1
from .vllm_calibrate_what_if import replay_what_if
from .vllm_log import VllmLog
from .vllm_rules import V0_11, V0_33, V0_34, VllmRules, parse_engine, resolve


def _rules_for(log: VllmLog, version: str | None) -> tuple[VllmRules | None, list[str]]:
    notes = []
    text = version or log.version
    if text:
        _, rules, note = parse_engine(f"vllm@{text}", older=True)
        if note:
            notes.append(note)
        return rules, notes
    if log.era == "v0":
        notes.append("no version printed; '# GPU blocks' is the v0 engine's (<= 0.7) line: v0 accounting")
        return None, notes
    if log.extensible_kv_cache:  # a warmup or "Extended KV cache" line: 0.34's extensible KV cache
        notes.append("no version printed; 'Memory after warmup ... KV cache blocks' is 0.34's extensible KV cache: "
                     "0.34's rules")
        return V0_34, notes
    if log.gpu_kv_cache_tokens is not None and log.concurrency is not None and _one_line(log):
        notes.append("no version printed; the one-line KV cache size is 0.28-0.34's (0.34 without its extensible KV "
                     "cache line): 0.33's rules")
        return V0_33, notes
    notes.append("no version printed; two-line KV cache size (0.8-0.27): 0.11's rules (the oldest modelled)")
    return V0_11, notes


def _one_line(log: VllmLog) -> bool:
    return log.one_line


def _vllm_kv_dtype(name: str | None) -> str | None:
    if name in (None, "auto", "bfloat16", "float16", "half"):
        return None if name in (None, "auto") else name
    return {"fp8_e4m3": "fp8"}.get(name, name)


def calibrate(log: VllmLog, *, model: str | None = None, version: str | None = None, overrides=(),
              what_if: dict | None = None, tp: int | None = None, gpu: str | None = None,
              draft_model: str | None = None) -> Calibration:
    """Reproduce the log's figures with kvplan's vLLM model and predict its KV memory from the GPU."""
    from ..capacity.shard import check_tp
    from ..sources import load_model

    logged_tp = log.tp
    if tp is not None and logged_tp is None:
        log.tp = tp
    rules, notes = _rules_for(log, version)
    if log.head_only_bytes:
        notes.insert(0, f"the log is larger than {log.head_only_bytes // 1024**2} MiB: its first "
                        f"{log.head_only_bytes // 1024**2} MiB were read (the start-up lines come first)")
    alias = model or match_bundled(log.model)
    if log.engine_starts > 1:
        notes.append(f"the file holds {log.engine_starts} engine start-ups: their lines are read as one (give one "
                     "start-up per file to calibrate each)")
    cal = Calibration(log, rules, alias, notes=notes)
    read_any = any(v is not None for v in (log.available_kv_gib, log.num_gpu_blocks, log.gpu_kv_cache_tokens,
                                           log.concurrency, log.warmup_kv_blocks, log.extended_kv_blocks)) or log.refused
    if not read_any:
        # an excerpt (settings, the weights, the breakdown) without the KV lines: what was read is shown,
        # not "nothing"; a log with nothing read at all is the one line (calibrate_workflow)
        partial = not log.read_nothing
        found = "no KV cache lines" if partial else "no vLLM start-up lines"
        cal.problem = UsageError(f"{log.path or 'the log'}: {found} found (no 'Available KV cache memory', "
                                 "'GPU KV cache size', '# GPU blocks' or 'Maximum concurrency')"
                                 + ("; what was read is shown above" if partial else "")
                                 + (f" in its first {log.head_only_bytes // 1024**2} MiB" if log.head_only_bytes else ""),
                                 "give the log of a vLLM server start (the lines before 'Application startup complete')")
        return cal
    if alias is None and not log.model:
        cal.problem = SourceError("the log names no model", "give --model (a bundled name, a config.json or a Hub id)")
        return cal
    try:
        # not bundled: the log's own name, as a Hub id or a local folder, the way estimate reads it
        spec = load_model(alias or hub_cache_id(log.model), overrides=overrides)
    except KvplanError as exc:
        why = exc.message  # without the name again ("unknown model 'X': ...", "X: offline ...")
        shown = hub_cache_id(log.model) if log.model else alias  # the log may name none where --model gave it
        for said in (f"unknown model {shown!r}: ", f"{shown}: "):
            why = why.removeprefix(said)
        cal.problem = exc if alias else SourceError(
            f"the log's model {log.model!r} is not bundled and cannot be read here: {why}",
            "give --model (a bundled name, a config.json or a Hub id)")
        return cal
    if alias is None:
        cal.model_alias = log.model
    if tp is not None:  # a TP the model cannot split is refused as estimate refuses it
        try:
            check_tp(spec, tp)
            if logged_tp is not None and logged_tp != tp:
                raise UsageError(f"--tp {tp}: the log says the server ran with tensor_parallel_size {logged_tp}",
                                 "drop --tp (it fills in a TP the log does not print)")
        except KvplanError as exc:
            cal.problem = exc
            return cal
    max_len = log.max_model_len
    if not max_len:
        max_len = spec.max_context_tokens
        if not max_len:
            cal.problem = UsageError("the log gives no max_model_len (no config line, no 'Maximum concurrency' line)",
                                     "give --set max_position_embeddings=N")
            return cal
        log.max_model_len = max_len
        cal.notes.append(f"max_model_len not in the log: vLLM's default, the model's {max_len:,}")
    kv_dtype = _vllm_kv_dtype(log.kv_cache_dtype)
    block = log.block_size
    mnbt = log.max_num_batched_tokens
    if log.tp is None:
        cal.notes.append("tensor_parallel_size not in the log: 1 assumed")
    read_placement(cal, spec)
    try:
        resolve_draft(cal, spec, draft_model)
    except KvplanError as exc:
        cal.problem = exc
        return cal
    cal.draft_unmodelled = log_has(log, "speculative") and not draft_layers(spec, log) and cal.draft is None
    if cal.draft_unmodelled:
        method = log.speculative_method or "not printed"
        cal.notes.append(f"speculative decoding is on (method {method}): its draft's KV cache is not in the pool "
                         "(kvplan models the MTP layers of DeepSeek-V3/V3.2/V4, GLM-4.5-4.7, Qwen3-Next/3.5 and "
                         "LongCat-Flash, and a draft checkpoint whose config it can read or --draft-model gives)")
    try:
        if rules is None:
            reproduce_v0(cal, spec, max_len, kv_dtype, block)
        else:
            reproduce_v1(cal, spec, rules, max_len, kv_dtype, block, mnbt)
        predict_from_gpu(cal, spec, gpu, rules, mnbt)
        if what_if:
            replay_what_if(cal, spec, what_if, kv_dtype, block, mnbt)
    except KvplanError as exc:
        cal.problem = exc
    return cal


__all__ = ["calibrate", "build_report", "match_bundled", "Calibration", "Figure"]


def calibrate_workflow(path: str, *, model=None, version=None, kv_dtype=None, max_model_len=None, block_size=None,
                       as_version=None, overrides=(), tp=None, gpu=None, speculative_tokens=None,
                       prefix_caching=None, draft_model=None) -> tuple[Report, KvplanError | None]:
    """(report, the problem that stopped the reproduction or None) for `kvplan calibrate`."""
    from ..units import parse_tokens
    from .vllm_log import read_log

    if block_size is not None and block_size <= 0:
        raise UsageError(f"--block-size {block_size}: must be positive")
    what = {}
    if kv_dtype:
        what["kv_cache_dtype"] = kv_dtype
    if max_model_len:
        what["max_model_len"] = parse_tokens(max_model_len, "--max-model-len")
    if block_size:
        what["block_size"] = block_size
    if as_version:
        what["version"] = as_version
    if speculative_tokens is not None:
        if not 0 <= speculative_tokens <= 64:
            raise UsageError(f"--num-speculative-tokens {speculative_tokens}: give 0 (speculative decoding off) to 64")
        what["speculative_tokens"] = speculative_tokens
    caching = None
    if prefix_caching is not None:
        caching = {"on": True, "off": False}.get(prefix_caching.strip().lower())
        if caching is None:
            raise UsageError(f"--prefix-caching {prefix_caching!r}: give on or off")
    if version:
        resolve(version)  # an unknown version is a usage error before anything is read
    if gpu:
        from ..capacity.gpus import lookup

        lookup(gpu)
    log = read_log(path)
    if tp is not None and tp < 1:
        raise UsageError(f"--tp {tp}: must be at least 1")
    if caching is not None:
        if log.enable_prefix_caching is not None and log.enable_prefix_caching != caching:
            raise UsageError(f"--prefix-caching {prefix_caching}: the log says the server ran with it "
                             f"{'on' if log.enable_prefix_caching else 'off'}", "drop --prefix-caching")
        log.enable_prefix_caching = caching
    cal = calibrate(log, model=model, version=version, overrides=overrides, what_if=what or None, tp=tp, gpu=gpu,
                    draft_model=draft_model)
    if log.read_nothing and cal.problem is not None:
        raise cal.problem  # nothing to show: the one line, not an empty table and a note on rules
    return build_report(cal), cal.problem

# also importable from here (their homes: vllm_calibrate_model.py, vllm_calibrate_draft.py, vllm_calibrate_v1.py)
__all__ += ["hub_cache_id", "draft_layers", "speculative_tokens", "DRAFT_CHECKPOINT_METHODS", "TOKENS_AFTER_MIN_FROM"]
