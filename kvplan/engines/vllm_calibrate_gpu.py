"""The prediction from the GPU in `kvplan calibrate` (item 6): the "Available KV cache memory from the GPU" rows
(predict_from_gpu: vllm_profile.predict_available from the card's memory and the model's or the logged weights),
the log's DP / EP / encoder placement they use (read_placement), and each profile term beside the logged breakdown
(vllm_terms)."""

from __future__ import annotations

from ..errors import KvplanError
from ..units import GIB
from .vllm_calibrate_draft import draft_layers, speculative_tokens
from .vllm_calibrate_records import Calibration, Figure, deviation_pct, log_has
from .vllm_extensible import resolved_utilization
from .vllm_log import VllmLog
from .vllm_rules import V0_11, VllmRules


def read_placement(cal: Calibration, spec) -> None:
    """The log's --data-parallel-size, --enable-expert-parallel, --all2all-backend, EPLB's redundant experts and
    --mm-encoder-tp-mode, built into a deployment by estimate's own parsing and checks (kvplan.request
    EstimateRequest.from_options, capacity/eplb.py check_redundant); what kvplan does not take is a note."""
    from ..capacity.eplb import check_redundant
    from ..request import EstimateRequest

    log = cal.log
    dp, ep = log.dp or 1, bool(log.ep)
    if log.other_dp_lines:
        cal.notes.append(f"data-parallel start: each DP rank is its own engine core, profiling its own GPUs and sizing "
                         f"its own pool (v1/engine/core.py EngineCore._initialize_kv_caches); the figures read are DP "
                         f"rank 0's ({log.other_dp_lines} lines of the other ranks left out)")
    if dp == 1 and not ep and log.mm_encoder_tp_mode is None:
        return
    redundant = None
    if log.enable_eplb:  # vLLM's default R where eplb_config does not give one (capacity/eplb.py)
        redundant = log.num_redundant_experts if log.num_redundant_experts is not None else "auto"
    elif log.num_redundant_experts:
        cal.notes.append(f"num_redundant_experts {log.num_redundant_experts} without enable_eplb: vLLM places no "
                         "redundant experts, none modelled")
    try:
        request = EstimateRequest.from_options(model=cal.model_alias or "log", engine="vllm", tp=log.tp or 1,
                                               pp=log.pp or 1, dp=dp, ep=ep, redundant_experts=redundant,
                                               all2all_backend=log.all2all_backend,
                                               mm_encoder_tp_mode=log.mm_encoder_tp_mode)
        dep = request.deployment.build()
        check_redundant(spec, dep.redundant_experts, dep.ep, dep.tp * dep.dp, "vllm")
    except KvplanError as exc:
        cal.notes.append(f"the log's placement settings (DP {dp}, EP {'on' if ep else 'off'}) are not modelled: "
                         f"{exc.one_line()}; the prediction from the GPU splits the weights by TP / PP only")
        return
    cal.deployment = dep
    cal.notes.append(f"placement read from the log: DP {dp}, EP {'on' if ep else 'off'}"
                     + (f", all2all backend {dep.a2a}" if dep.a2a else "")
                     + (f", EPLB with {log.num_redundant_experts} redundant experts" if log.enable_eplb and
                        log.num_redundant_experts is not None else ", EPLB with vLLM's default redundant experts"
                        if log.enable_eplb else "")
                     + (f", encoder TP mode {dep.mm_encoder_tp_mode}" if dep.mm_encoder_tp_mode else "")
                     + ": the KV cache per GPU is the TP group's (attention is not split by DP or EP), the prediction "
                     "from the GPU places the routed experts as estimate --dp / --ep does (where kvplan can split "
                     "them out)")


def _placement_terms(cal: Calibration, spec, batched: int) -> dict:
    """predict_available's DP / EP / encoder terms for the log's deployment (vllm_report.placement_terms, as estimate
    computes them); {} without one."""
    dep = cal.deployment
    if dep is None:
        return {}
    from .vllm_load import checkpoint_weights
    from .vllm_report import placement_terms, tower_whole_more

    record = checkpoint_weights(spec)
    try:
        elsewhere, all2all, eplb = placement_terms(spec, record, dep, batched)
    except KvplanError as exc:
        cal.notes.append(f"the prediction from the GPU splits the weights by TP / PP only, not by the log's "
                         f"DP {dep.dp} / EP {'on' if dep.ep else 'off'}: {exc.one_line()}")
        return {}
    return {"weights": record, "experts_elsewhere": elsewhere, "all2all": all2all, "eplb_bytes": eplb, "dp": dep.dp,
            "ep": dep.ep, "tower_whole_bytes": tower_whole_more(spec, record, dep)}


def predict_from_gpu(cal: Calibration, spec, gpu: str | None, rules: VllmRules | None, mnbt: int | None):
    """Item 6: the available KV memory predicted from the GPU alone (and with the log's weights)."""
    from ..capacity.gpus import lookup, match_device_name
    from .vllm_profile import predict_available

    log = cal.log
    total = int(log.total_gpu_memory_gib * GIB) if log.total_gpu_memory_gib else None
    if total is not None and log.device_total_gib is not None:
        cal.notes.append(f"GPU memory: the driver's {log.device_total_gib:.2f} GiB from the profile breakdown "
                         "('Free memory on device (A/B GiB)')")
    name = lookup(gpu).name if gpu else (match_device_name(log.gpu_name) if log.gpu_name else None)
    if total is None and name:
        card = lookup(name)
        total = card.usable_bytes
        if card.driver_bytes is None:
            cal.notes.append(f"GPU memory from the catalog's datasheet figure ({name}): the driver reports less "
                             "(about 1% on HBM cards, more on GDDR with ECC)")
    if total is None or log.available_kv_gib is None:
        return
    util = log.gpu_memory_utilization or (rules or V0_11).gpu_memory_utilization
    if log.gpu_memory_utilization is None and rules is not None:
        # 0.34 config/cache.py resolved_gpu_memory_utilization: 1.0 under the extensible KV cache when not given
        # (a warmup line), 0.92 where the log says it was off; its 'Available KV cache memory' (the reserved
        # capacity) is profiled against that budget
        util = resolved_utilization(rules, log.extensible_kv_cache)
    v0 = rules is None
    batched = mnbt or (rules or V0_11).max_num_batched_tokens(total, name or "")
    # v0 profiled 256 dummy sequences by default (V0_MAX_NUM_SEQS); v1 the log's --max-num-seqs, else the
    # rules' default for this GPU (also what sizes the CUDA graphs, with --enforce-eager)
    seqs = None if v0 else (log.max_num_seqs or (rules or V0_11).max_num_seqs(total, name or ""))
    version = log.version or (rules.version if rules else None)
    from .vllm_draft_weights import drafter_weights

    drafter = drafter_weights(spec, None, draft_layers=draft_layers(spec, log), draft=cal.draft, tp=log.tp or 1,
                              pp=log.pp or 1, release=version or rules.version) if rules is not None else None
    runs = [("from the GPU and the model", "model's weights", None)]
    if log.weights_gib is not None:
        runs.append(("from the GPU and the logged weights", "logged weights", int(log.weights_gib * GIB)))
    placed = _placement_terms(cal, spec, batched)
    # the logged load is the GPU's own share already (its experts, its tower): only the all-to-all buffers and the
    # fused-MoE workspace of DP / EP are added to it
    logged_placed = {k: v for k, v in placed.items() if k in ("all2all", "dp", "ep")}
    est = None
    for label, column, weights in runs:
        est = predict_available(spec, total_bytes=total, gpu_memory_utilization=util, tp=log.tp or 1,
                                pp=log.pp or 1, max_num_batched_tokens=batched, max_model_len=log.max_model_len,
                                weight_bytes=weights, v0_engine=v0, max_num_seqs=seqs, version=version, gpu=name,
                                enforce_eager=log.enforce_eager, pcie_only=log.pcie_only, drafter=drafter,
                                flashinfer_sampler=log.flashinfer_sampler,
                                extensible_kv_cache=log.extensible_kv_cache,
                                speculative_tokens=speculative_tokens(spec, log) if drafter is not None else 0,
                                **(placed if weights is None else logged_placed))
        gib = est.available_bytes / GIB
        dev = deviation_pct(log.available_kv_gib, gib) if log.available_kv_gib else None
        unquantized = _quantized_log_unquantized_model(log, spec) if weights is None else None
        cal.figures.append(Figure(f"Available KV cache memory ({label})", f"{log.available_kv_gib:.2f} GiB",
                                  f"{gib:.2f} GiB", dev, None, est.lines()[0], kind="prediction",
                                  brief=unquantized or "profile table below, 'available'"))
        if unquantized:
            cal.notes.append(unquantized)
        cal.profiles.append((column, est))
        if est.extensible is not None and log.warmup_kv_gib is not None:
            # 0.34+: the log's "Available" line is the reserved capacity; the pool is measured after warmup
            pool = est.pool_bytes / GIB
            cal.figures.append(Figure(f"KV pool after warmup ({label})", f"{log.warmup_kv_gib:.2f} GiB",
                                      f"{pool:.2f} GiB", deviation_pct(log.warmup_kv_gib, pool), None,
                                      est.extensible.line(), kind="prediction",
                                      brief="profile table below, 'KV pool after warmup'"))
        if weights is None:
            cal.predicted_available_gib = round(gib, 3)
    _compare_terms(cal, est)


def _compare_terms(cal: Calibration, est) -> None:
    """With the profile breakdown in the log: each term of the last prediction (the logged weights' when
    the log gives them) beside the logged one, so the term that is off shows (kvplan.engines.vllm_terms)."""
    from .vllm_terms import compare, largest_term_gap, logged_terms

    logged = logged_terms(cal.log)
    if logged is None or est is None:
        return
    cal.logged_terms = logged
    cal.terms = compare(est, logged)
    cal.notes.extend(logged.notes)
    gap = largest_term_gap(cal.terms)
    if gap is not None and abs(gap.difference_gib) >= 0.05:
        cal.notes.append(f"largest gap in the profile terms: {gap.name}, kvplan {gap.difference_gib:+.2f} GiB "
                         "against the log")
    if logged.unexplained_gib is not None and abs(logged.unexplained_gib) > 0.03:
        cal.notes.append(f"the logged terms leave {logged.unexplained_gib:+.2f} GiB of the requested memory "
                         "unaccounted (more than the 2-decimal printing explains)")


def _quantized_log_unquantized_model(log: VllmLog, spec) -> str | None:
    """Why the model's weights do not size this start: the log's config line names a quantization (vllm_log.py's
    "quantized" flag: quantization=... not None) and the model kvplan read has no quantization config (a base model
    given with --model for a quantized checkpoint); None otherwise."""
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from .vllm_load import raw_config

    if not log_has(log, "quantized") or checkpoint_quantization_config(raw_config(spec) or {}) is not None:
        return None
    return (f"the log names quantization={log.quantization} but the model read has no quantization config, so this row sizes unquantized "
            "weights: for a quantized checkpoint give its own config.json with --model; an online --quantization "
            "is not applied here (the row from the logged weights holds either way)")


__all__ = ["read_placement", "predict_from_gpu"]
