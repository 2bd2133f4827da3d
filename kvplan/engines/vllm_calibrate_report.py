"""The report of `kvplan calibrate` on a vLLM log (build_report): the JSON document, the settings read, the
figures logged vs kvplan, the predicted profile and its terms, the what-if's log and the notes."""

from __future__ import annotations

from ..render import Report, Table
from .vllm_calibrate_records import Calibration


def build_report(cal: Calibration) -> Report:
    """The Report `kvplan calibrate` prints for a vLLM log's calibration."""
    log = cal.log
    read = {k: getattr(log, k) for k in (
        "version", "model", "dtype", "max_model_len", "tp", "pp", "dp", "ep", "all2all_backend", "enable_eplb",
        "num_redundant_experts", "mm_encoder_tp_mode", "kv_cache_dtype", "block_size",
        "gpu_memory_utilization", "max_num_batched_tokens", "max_num_seqs", "enforce_eager", "gpu_name",
        "total_gpu_memory_gib", "weights_gib",
        "available_kv_gib", "num_gpu_blocks", "gpu_kv_cache_tokens", "concurrency", "refused", "refused_estimate",
        "device_free_gib", "device_total_gib", "requested_gib", "breakdown", "breakdown_weights_gib",
        "breakdown_consumed_gib", "breakdown_activation_gib", "breakdown_non_torch_gib", "breakdown_cuda_graph_gib",
        "kv_in_use_gib", "cuda_graph_estimate_gib", "cuda_graph_modes", "cuda_graph_estimate_applied",
        "cuda_graph_actual_gib", "warmup_kv_blocks", "warmup_kv_gib", "extended_kv_blocks")}
    data = {
        "log": {"path": log.path, **read},
        "model": cal.model_alias,
        "engine": {"name": "vllm", "version": cal.rules.version if cal.rules else "v0"},
        "kv_memory_bytes": cal.kv_memory_bytes,
        "figures": [{k: v for k, v in f.__dict__.items() if k != "brief"} for f in cal.figures],
        "reproduced": (all(f.within_rounding for f in cal.figures if f.kind == "reproduction")
                       if any(f.kind == "reproduction" for f in cal.figures) else False),
        "predicted_available_gib": cal.predicted_available_gib,
        "profile_terms": [{"name": r.name, "logged_gib": r.logged_gib,
                           "predicted_gib": None if r.predicted_gib is None else round(r.predicted_gib, 3),
                           "difference_gib": r.difference_gib, "source": r.source} for r in cal.terms],
        "profile_terms_unexplained_gib": cal.logged_terms.unexplained_gib if cal.logged_terms else None,
        "what_if": cal.what_if,
        "notes": cal.notes,
        "problem": cal.problem.one_line() if cal.problem else None,
    }
    report = Report(data)
    report.headline = (f"vLLM start-up log {log.path}: {cal.model_alias or log.model or 'model unknown'}, "
                       f"rules of vLLM {data['engine']['version']}")
    shown = [[k.replace("_", " "), _shown(v)] for k, v in read.items() if v not in (None, False) and v != {}]
    report.tables.append(Table("read from the log", ["setting", "value"], shown))
    if cal.figures:
        rows = [[f.name, f.logged, f.predicted,
                 "" if f.deviation_pct is None else f"{f.deviation_pct:+.3f}%",
                 {True: "yes", False: "NO", None: "(prediction)"}[f.within_rounding],
                 f.explanation if f.brief is None else f.brief]
                for f in cal.figures]
        report.tables.append(Table("logged vs kvplan", ["figure", "logged", "kvplan", "deviation",
                                                        "within rounding", "why"], rows))
    if cal.profiles:
        from .vllm_profile_view import profile_table

        report.tables.append(profile_table("vLLM profile predicted by kvplan (GiB per GPU)", cal.profiles))
    if cal.terms:
        from .vllm_report import profile_terms_table

        report.tables.append(profile_terms_table(cal.terms))
    if cal.what_if:
        report.lines.append(f"what-if: vLLM {cal.what_if['version']} on this deployment would log:")
        report.lines.extend(f"  {line}" for line in cal.what_if["log"])
        if not cal.what_if["fits"]:
            report.lines.append(f"  and refuse to start: {cal.what_if['start_refusal']}")
        report.lines.extend(f"  note: {n}" for n in cal.what_if["notes"])
    report.lines.extend(f"note: {n}" for n in cal.notes)
    if cal.profiles:  # the profile's own caveats (in the JSON: figures[].explanation)
        from .vllm_profile_view import short_notes

        report.lines.extend(f"note: {n}" for n in dict.fromkeys(
            n for _, est in cal.profiles for n in short_notes(est, lead="vLLM profile predicted by kvplan")))
    return report


def _shown(value):
    if isinstance(value, dict):  # the CUDA-graph modes: {"PIECEWISE": (51, 512)} -> "PIECEWISE 51 (largest 512)"
        return ", ".join(f"{k} {n} (largest {m})" for k, (n, m) in value.items())
    return value


__all__ = ["build_report"]
