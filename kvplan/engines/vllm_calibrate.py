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
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from ..errors import KvplanError, SourceError, UsageError
from ..render import Report, Table
from ..units import GIB
from .vllm import simulate
from .vllm_pool import VllmPool
from .vllm_extensible import resolved_utilization
from .vllm_log import VllmLog, printed_range
from .vllm_speculative import default_draft_tokens, draft_layer_count, is_mtp_method
from .vllm_release import at_least
from .vllm_rules import V0_11, V0_33, V0_34, VllmRules, parse_engine, resolve

# quantized or repackaged checkpoints keep the base model's cache shape (weights change, the KV cache does not)
_SUFFIXES = re.compile(r"[-_.](instruct|chat|it|hf|base|fp8|fp16|bf16|awq|gptq|int4|int8|w4a16|w8a8|dynamic|"
                       r"nvfp4|mxfp4|fp4|autoround|mtp|text|"
                       r"\d+k|2507|0528|v\d(\.\d)?)$", re.I)


def hub_cache_id(name: str) -> str:
    """The Hub id of a Hugging Face cache folder or snapshot path (".../models--deepseek-ai--DeepSeek-V4-Flash
    [/snapshots/<commit>]" -> "deepseek-ai/DeepSeek-V4-Flash", what vLLM prints for a downloaded model); other
    names as given."""
    cached = re.search(r"(?:^|/)models--([^/]+?)--([^/]+?)(?:/snapshots/[^/]+)?/?$", name)
    return f"{cached.group(1)}/{cached.group(2)}" if cached else name


def match_bundled(name: str | None) -> str | None:
    """A bundled model alias for a model path or repo id printed in a log
    ("/models/Meta-Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B-FP8"): the last
    path part with serving suffixes (-Instruct, -FP8, -AWQ, ...) removed."""
    from ..sources import bundled_index

    if not name:
        return None
    base = hub_cache_id(name).rstrip("/").split("/")[-1].lower().replace("meta-llama-", "llama-")
    index = bundled_index()
    keys = {alias: {alias, e.hf_id.split("/")[-1].lower()} for alias, e in index.items()}
    candidate = base
    for _ in range(6):
        for alias, names in keys.items():
            if candidate in names:
                return alias
        stripped = _SUFFIXES.sub("", candidate)
        if stripped == candidate:
            break
        candidate = stripped
    return None


@dataclass
class Figure:
    name: str
    logged: str
    predicted: str
    deviation_pct: float | None
    within_rounding: bool | None
    explanation: str = ""
    kind: str = "reproduction"  # reproduction | prediction (from the GPU, item 6: not a rounding check)
    # the terminal's "why" where the explanation is the profile's whole breakdown, shown once in its own table
    # (not in the JSON, whose figures[].explanation keeps the breakdown)
    brief: str | None = None


@dataclass
class Calibration:
    log: VllmLog
    rules: VllmRules | None
    model_alias: str | None
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kv_memory_bytes: int | None = None  # the pool that reproduces the log
    pool: VllmPool | None = None
    problem: KvplanError | None = None  # what stopped the reproduction (figures read are still shown)
    what_if: dict | None = None
    predicted_available_gib: float | None = None
    terms: list = field(default_factory=list)  # vllm_terms.TermRow: each profile term logged vs predicted
    logged_terms: object | None = None  # vllm_terms.LoggedTerms when the log has the profile breakdown
    hints: list[str] = field(default_factory=list)  # reasons found by trying what the log does not print
    draft: object | None = None  # the ModelSpec of the log's separate draft checkpoint, when kvplan read it
    draft_unmodelled: bool = False  # speculative decoding is on, and its draft's cache is not in kvplan's pool
    # (column label, vllm_profile.ProfileEstimate) of each prediction from the GPU, for the profile table
    profiles: list = field(default_factory=list)
    # the log's DP / EP / EPLB / encoder settings as estimate's flags build them (capacity.hardware.Deployment);
    # None: a TP / PP start, or settings kvplan does not take (a note says which)
    deployment: object | None = None


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


def draft_layers(model, log: VllmLog) -> int:
    """The MTP draft layers the log's server put in its pool (speculative method "mtp" or a family's older
    name for it, on a family whose draft kvplan models: vllm_speculative.py, DeepSeek-V4); 0 otherwise."""
    if not is_mtp_method(log.speculative_method):
        return 0
    try:
        return draft_layer_count(model)
    except UsageError:
        return 0


def speculative_tokens(model, log: VllmLog) -> int:
    """The draft tokens per step of the log's speculative decoding: as printed, else an MTP draft's default
    (vLLM: num_speculative_tokens = n_predict, its layer count); 0 when off or unknown."""
    if not _has(log, "speculative"):
        return 0
    if log.speculative_tokens is not None and log.speculative_tokens > 64:
        raise UsageError(f"the log's num_speculative_tokens ({log.speculative_tokens:,}) is outside what kvplan "
                         "models (1-64)", "replay another with --num-speculative-tokens")
    if log.speculative_tokens:
        return log.speculative_tokens
    layers = draft_layers(model, log)  # not printed (or 0): an MTP draft's default, its depths
    return default_draft_tokens(model, layers) if layers else 0


def _simulate(model, log: VllmLog, rules: VllmRules, kv: int, max_len: int, kv_dtype, block, mnbt, draft=None):
    return simulate(model, kv_memory_bytes=kv, max_model_len=max_len, block_tokens=block, tp=log.tp or 1,
                    pp=log.pp or 1, max_num_batched_tokens=mnbt, rules=rules, kv_cache_dtype=kv_dtype,
                    allow_long_max_model_len=True, prefix_caching=log.enable_prefix_caching,
                    max_num_seqs=log.max_num_seqs, enforce_eager=log.enforce_eager,
                    draft_layers=draft_layers(model, log), num_speculative_tokens=speculative_tokens(model, log),
                    draft_model=draft)


DRAFT_CHECKPOINT_METHODS = ("eagle", "eagle3", "draft_model")  # a separate draft checkpoint's own layers


def _resolve_draft(cal: Calibration, spec, draft_model: str | None) -> None:
    """A separate draft checkpoint (eagle, eagle3, draft_model): --draft-model, else the log's own 'model' when
    kvplan can read it (a bundled name or a config it reaches); otherwise a note."""
    from .vllm_family_rules import is_deepseek_v4
    from .vllm_speculative import load_draft

    log = cal.log
    if log.draft_tp is not None and log.draft_tp != (log.tp or 1) and (
            draft_model is not None or log.speculative_method in DRAFT_CHECKPOINT_METHODS):
        cal.notes.append(f"the draft runs at draft_tensor_parallel_size {log.draft_tp}, not the target's TP: kvplan "
                         "shards its heads by the target's TP (a replicated draft is not modelled)")
    if draft_model is not None:
        cal.draft = load_draft(draft_model)
        return
    if (not _has(log, "speculative") or log.speculative_method not in DRAFT_CHECKPOINT_METHODS
            or not log.speculative_model):
        return
    if hub_cache_id(log.speculative_model) == hub_cache_id(log.model or ""):
        cal.notes.append(f"the log's {log.speculative_method} draft names the target checkpoint itself: not put in "
                         "the pool (give --draft-model for a separate draft)")
        return
    from ..sources import load_model

    try:
        draft = load_model(match_bundled(log.speculative_model) or hub_cache_id(log.speculative_model))
    except KvplanError as exc:
        cal.notes.append(f"the log's draft checkpoint cannot be read here ({exc.message}): give its config with "
                         "--draft-model to put its layers in the pool")
        return
    if is_deepseek_v4(spec) or any(layer.state is not None for layer in draft.layers):
        cal.notes.append(f"the log's draft {draft.name} is not modelled with this target (DeepSeek-V4, or a draft "
                         "with recurrent state layers): not put in the pool")
        return
    cal.draft = draft


def _vllm_kv_dtype(name: str | None) -> str | None:
    if name in (None, "auto", "bfloat16", "float16", "half"):
        return None if name in (None, "auto") else name
    return {"fp8_e4m3": "fp8"}.get(name, name)


def _v0_pool(model, log: VllmLog, kv: int, max_len: int, kv_dtype, block):
    """v0 engine: every layer full attention, blocks = kv // (block x all layers' page)."""
    pool = simulate(model, kv_memory_bytes=max(kv, 1), max_model_len=max_len, block_tokens=block, tp=log.tp or 1,
                    pp=log.pp or 1, rules=V0_11, kv_cache_dtype=kv_dtype, hybrid_manager=False,
                    allow_long_max_model_len=True)
    per_block = sum(s.page_bytes for s in pool.layer_specs)
    blocks = kv // per_block
    return pool, blocks, per_block


def _pct(logged: float, predicted: float) -> float | None:
    if not logged:
        return None
    return round(100 * (predicted - logged) / logged, 3)


def calibrate(log: VllmLog, *, model: str | None = None, version: str | None = None, overrides=(),
              what_if: dict | None = None, tp: int | None = None, gpu: str | None = None,
              draft_model: str | None = None) -> Calibration:
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
    _placement(cal, spec)
    try:
        _resolve_draft(cal, spec, draft_model)
    except KvplanError as exc:
        cal.problem = exc
        return cal
    cal.draft_unmodelled = _has(log, "speculative") and not draft_layers(spec, log) and cal.draft is None
    if cal.draft_unmodelled:
        method = log.speculative_method or "not printed"
        cal.notes.append(f"speculative decoding is on (method {method}): its draft's KV cache is not in the pool "
                         "(kvplan models the MTP layers of DeepSeek-V3/V3.2/V4, GLM-4.5-4.7, Qwen3-Next/3.5 and "
                         "LongCat-Flash, and a draft checkpoint whose config it can read or --draft-model gives)")
    try:
        if rules is None:
            _reproduce_v0(cal, spec, max_len, kv_dtype, block)
        else:
            _reproduce_v1(cal, spec, rules, max_len, kv_dtype, block, mnbt)
        _predict_from_gpu(cal, spec, gpu, rules, mnbt)
        if what_if:
            _what_if(cal, spec, what_if, kv_dtype, block, mnbt)
    except KvplanError as exc:
        cal.problem = exc
    return cal


def _placement(cal: Calibration, spec) -> None:
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


def _predict_from_gpu(cal: Calibration, spec, gpu: str | None, rules: VllmRules | None, mnbt: int | None):
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
        dev = _pct(log.available_kv_gib, gib) if log.available_kv_gib else None
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
                                      f"{pool:.2f} GiB", _pct(log.warmup_kv_gib, pool), None,
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

    if not _has(log, "quantized") or checkpoint_quantization_config(raw_config(spec) or {}) is not None:
        return None
    return (f"the log names quantization={log.quantization} but the model read has no quantization config, so this row sizes unquantized "
            "weights: for a quantized checkpoint give its own config.json with --model; an online --quantization "
            "is not applied here (the row from the logged weights holds either way)")


def _has(log: VllmLog, what: str) -> bool:
    return what in log.flags


def _reproduce_v0(cal: Calibration, spec, max_len: int, kv_dtype, block):
    log = cal.log
    rng = log.available_kv_bytes_range
    if rng is None:
        if log.num_gpu_blocks is None:
            raise UsageError("the log has neither the KV cache size nor the block count: nothing to reproduce")
        pool, _, per_block = _v0_pool(spec, log, GIB, max_len, kv_dtype, block)
        low = high = log.num_gpu_blocks * per_block
        cal.notes.append("no memory figure in the log: the pool is inferred from the block count")
    else:
        low, high = rng
    pool, blocks_low, per_block = _v0_pool(spec, log, low, max_len, kv_dtype, block)
    _, blocks_high, _ = _v0_pool(spec, log, high, max_len, kv_dtype, block)
    block_tokens = pool.block_size
    mid = (low + high) // 2
    blocks_mid = mid // per_block
    if log.num_gpu_blocks is not None:
        within = blocks_low <= log.num_gpu_blocks <= blocks_high
        cal.figures.append(Figure("GPU blocks", f"{log.num_gpu_blocks:,}",
                                  f"{blocks_mid:,} ({blocks_low:,}-{blocks_high:,})",
                                  _pct(log.num_gpu_blocks, blocks_mid), within,
                                  "" if within else _explain(cal, "blocks")))
        blocks = log.num_gpu_blocks
    else:
        blocks = blocks_mid
    cal.kv_memory_bytes = blocks * per_block
    if log.concurrency is not None:
        conc = blocks * block_tokens / max_len
        text = f"{conc:.2f}"
        cal.figures.append(Figure(f"Maximum concurrency for {max_len:,} tokens", f"{log.concurrency:.2f}x",
                                  f"{text}x", _pct(log.concurrency, conc), text == f"{log.concurrency:.2f}"))
    if log.refused and log.refused_estimate is not None:
        tokens = blocks * block_tokens
        cal.figures.append(Figure("tokens the cache can hold (refusal)", f"{log.refused_estimate:,}", f"{tokens:,}",
                                  _pct(log.refused_estimate, tokens), tokens == log.refused_estimate))
    cal.pool = pool


def _candidates(pool: VllmPool, log: VllmLog, max_len: int) -> list[int]:
    """Block counts that could have printed the logged token figure."""
    tokens = log.gpu_kv_cache_tokens
    if tokens is None:
        return []
    groups, block = len(pool.groups), pool.block_size
    if not pool.tokens_from_concurrency:
        base = tokens // block * groups
        return list(range(max(base - groups, 1), base + groups + 1))
    base = tokens * pool.blocks_per_request // max_len
    return list(range(max(base - 2, 1), base + 3))


# kv_cache_utils.py: before 0.12.0 each worker's config reports "GPU KV cache size" (and the concurrency) from its
# own memory, the first worker's printed first, and only then are the block counts cut to the smallest
# (get_kv_cache_config / get_kv_cache_configs); from 0.12.0 _report_kv_cache_config runs after the cut
TOKENS_AFTER_MIN_FROM = (0, 12, 0)


def _ranges(log, version: str | None):
    """(bytes range for the token and concurrency lines, bytes range for the block count)."""
    blocks = printed_range(log.available_kv_min_gib)
    first = log.available_kv_bytes_range
    return (first if first is not None and not at_least(version, TOKENS_AFTER_MIN_FROM) else blocks), blocks


def _reproduce_v1(cal: Calibration, spec, rules: VllmRules, max_len: int, kv_dtype, block, mnbt):
    log = cal.log
    rng, block_rng = _ranges(log, log.version or rules.version)
    probe = _simulate(spec, log, rules, GIB, max_len, kv_dtype, block, mnbt, cal.draft)
    cal.notes.extend(probe.notes)
    bpb = probe.bytes_per_block
    if log.extensible_kv_cache:  # a warmup or "Extended KV cache" line: 0.34's extensible KV cache
        _reproduce_extensible(cal, spec, rules, probe, max_len, kv_dtype, block, mnbt)
        return
    if log.available_kv_gib is not None and log.available_kv_gib <= 0:
        cal.figures.append(Figure("start check", f"no memory for the KV cache ({log.available_kv_text} GiB)",
                                  "refused: no memory for the cache blocks", None, True))
        cal.pool = probe
        cal.notes.append("vLLM raises 'No available memory for the cache blocks' when the available memory is <= 0")
        return
    if rng is None:
        if log.gpu_kv_cache_tokens is None:
            if log.refused:
                raise UsageError("the log's KV memory is negative or absent: vLLM had no memory for the cache",
                                 "raise --gpu-memory-utilization or lower --max-model-len")
            raise UsageError("the log has neither 'Available KV cache memory' nor 'GPU KV cache size'")
        low, high = 0, None
        cal.notes.append("no 'Available KV cache memory' in the log: the pool is inferred from the KV cache size")
    else:
        low, high = rng
    def simulated(bounds):
        if bounds is None:
            return {}
        lo, hi = bounds
        return {name: _simulate(spec, log, rules, kv, max_len, kv_dtype, block, mnbt, cal.draft)
                for name, kv in (("low", lo), ("high", hi), ("mid", (lo + hi) // 2))}

    pools = simulated(rng if high is not None else None)
    block_pools = pools if block_rng == rng else simulated(block_rng)
    # the block count that reproduces the logged tokens, inside the printed interval
    chosen = None
    for n in _candidates(probe, log, max_len):
        kv = n * bpb
        if high is not None and not (low - bpb < kv <= high):
            continue
        p = _simulate(spec, log, rules, kv, max_len, kv_dtype, block, mnbt, cal.draft)
        if p.gpu_kv_cache_tokens == log.gpu_kv_cache_tokens:
            chosen = p
            break
    if log.gpu_kv_cache_tokens is not None and pools:
        lo_t, hi_t, mid_t = (pools[k].gpu_kv_cache_tokens for k in ("low", "high", "mid"))
        within = lo_t <= log.gpu_kv_cache_tokens <= hi_t
        if not within and high is not None:
            _probe_prefix_caching(cal, probe, spec, rules, (low, high), max_len, kv_dtype, block, mnbt)
        cal.figures.append(Figure("GPU KV cache size (tokens)", f"{log.gpu_kv_cache_tokens:,}",
                                  f"{mid_t:,} ({lo_t:,}-{hi_t:,})", _pct(log.gpu_kv_cache_tokens, mid_t), within,
                                  "" if within else _explain(cal, "tokens")))
    if log.num_gpu_blocks is not None and block_pools:
        lo_b, hi_b, mid_b = (block_pools[k].num_blocks for k in ("low", "high", "mid"))
        within = lo_b <= log.num_gpu_blocks <= hi_b
        cal.figures.append(Figure("GPU blocks", f"{log.num_gpu_blocks:,}", f"{mid_b:,} ({lo_b:,}-{hi_b:,})",
                                  _pct(log.num_gpu_blocks, mid_b), within, "" if within else _explain(cal, "blocks")))
        if chosen is None:
            chosen = _simulate(spec, log, rules, log.num_gpu_blocks * bpb, max_len, kv_dtype, block, mnbt,
                                 cal.draft)
    if log.num_gpu_blocks is not None and not pools and chosen is not None:
        same = chosen.num_blocks == log.num_gpu_blocks
        cal.figures.append(Figure("GPU blocks (from the KV cache size)", f"{log.num_gpu_blocks:,}",
                                  f"{chosen.num_blocks:,}", _pct(log.num_gpu_blocks, chosen.num_blocks), same))
    reference = chosen or pools.get("mid")
    if reference is None:
        raise UsageError(f"no block count reproduces the logged {log.gpu_kv_cache_tokens:,} tokens under vLLM "
                         f"{rules.version}'s rules for {cal.model_alias}",
                         "check --model, --version, the KV dtype and TP the server ran with")
    if chosen is None and log.gpu_kv_cache_tokens is not None:
        cal.notes.append("no block count inside the printed memory interval reproduces the logged tokens: "
                         "the concurrency below uses the interval's middle")
    cal.pool = reference
    cal.kv_memory_bytes = reference.num_blocks * bpb + bpb // 2 if chosen else (low + high) // 2
    if log.concurrency is not None:
        text = f"{reference.max_concurrency:.2f}"
        cal.figures.append(Figure(f"Maximum concurrency for {max_len:,} tokens", f"{log.concurrency:.2f}x", f"{text}x",
                                  _pct(log.concurrency, reference.max_concurrency), text == f"{log.concurrency:.2f}",
                                  "" if text == f"{log.concurrency:.2f}" else _explain(cal, "concurrency")))
    if log.refused:
        predicted = reference.estimated_max_model_len
        logged = log.refused_estimate
        shown = f", estimate {predicted:,}" if predicted else ""
        if logged is not None and pools and None not in (pools["low"].estimated_max_model_len,
                                                         pools["high"].estimated_max_model_len):
            # the estimate, like the blocks, is within the log's rounding when it lies between the
            # estimates at the two ends of the printed memory interval
            lo_e, hi_e = pools["low"].estimated_max_model_len, pools["high"].estimated_max_model_len
            same = lo_e <= logged <= hi_e
            shown += f" ({lo_e:,}-{hi_e:,})"
        else:
            same = logged is None or predicted == logged
        ok = (not reference.fits) and same
        cal.figures.append(Figure("start check (refusal)", "refused" + (f", estimate {logged:,}" if logged else ""),
                                  ("refused" if not reference.fits else "starts") + shown,
                                  _pct(logged, predicted) if logged and predicted else None, ok))


def _reproduce_extensible(cal: Calibration, spec, rules: VllmRules, probe: VllmPool, max_len: int, kv_dtype, block,
                          mnbt):
    """0.34's extensible KV cache: the blocks were measured after warmup (v1/worker/extensible_kv_cache.py
    measure_kv_cache_blocks; the smallest over the workers, kv_cache_planning.py finalize_extensible_kv_cache),
    so the logged count is the pool. kvplan checks the bytes of a block against the GiB that line printed
    (format_gib of blocks x bytes per block), the count against the capacity reserved from 'Available KV cache
    memory' (finalize takes at most that), and the size line and the start check (shrink_kv_cache_configs:
    blocks less the null block) from those blocks."""
    log = cal.log
    bpb = probe.bytes_per_block
    blocks = log.extended_kv_blocks if log.extended_kv_blocks is not None else log.warmup_kv_blocks
    if not rules.extensible_kv_cache:
        cal.notes.append(f"the log sized its KV cache after warmup (the extensible KV cache of vLLM 0.34 and later), "
                         f"which vLLM {rules.version}'s rules do not have: the logged block count is used as the pool")
    cal.notes.append(f"extensible KV cache: {blocks:,} blocks measured after warmup (the smallest over the workers) "
                     "are the pool; 'Available KV cache memory' sized only the reserved capacity")
    if log.warmup_kv_blocks is not None and log.warmup_kv_gib is not None:
        shown = log.warmup_kv_blocks * bpb / GIB
        within = abs(shown - log.warmup_kv_gib) <= 0.005 + 1e-9
        cal.figures.append(Figure(f"KV cache blocks after warmup ({log.warmup_kv_blocks:,} blocks)",
                                  f"{log.warmup_kv_text} GiB", f"{round(shown, 2)} GiB ({bpb:,} B a block)",
                                  _pct(log.warmup_kv_gib, shown), within,
                                  "" if within else "the bytes of one block (page x layers per group) differ "
                                  "from vLLM's: kvplan's page or grouping of this layer mix"))
    if log.extended_kv_blocks is not None and log.warmup_kv_blocks is not None:
        same = log.extended_kv_blocks == log.warmup_kv_blocks
        cal.figures.append(Figure("blocks committed (Extended KV cache to N blocks)", f"{log.extended_kv_blocks:,}",
                                  f"{log.warmup_kv_blocks:,}", _pct(log.extended_kv_blocks, log.warmup_kv_blocks),
                                  same, "" if same else "the workers measured different counts, or the capacity "
                                  "reserved from 'Available KV cache memory' was smaller"))
    rng = printed_range(log.available_kv_min_gib)
    if rng is not None:
        capacity = rng[1] // bpb
        ok = blocks <= capacity
        cal.figures.append(Figure("blocks within the reserved capacity", f"{blocks:,}",
                                  f"at most {capacity:,} ({log.available_kv_min_gib} GiB / {bpb:,} B)", None, ok,
                                  "" if ok else "more blocks than 'Available KV cache memory' reserves room for: "
                                  "kvplan's bytes per block are too large"))
    pool = _simulate(spec, log, rules, blocks * bpb, max_len, kv_dtype, block, mnbt, cal.draft)
    cal.pool = pool
    cal.kv_memory_bytes = blocks * bpb
    if log.gpu_kv_cache_tokens is not None:
        same = pool.gpu_kv_cache_tokens == log.gpu_kv_cache_tokens
        cal.figures.append(Figure("GPU KV cache size (tokens)", f"{log.gpu_kv_cache_tokens:,}",
                                  f"{pool.gpu_kv_cache_tokens:,}", _pct(log.gpu_kv_cache_tokens,
                                                                         pool.gpu_kv_cache_tokens),
                                  same, "" if same else _explain(cal, "tokens")))
    if log.concurrency is not None:
        text = f"{pool.max_concurrency:.2f}"
        same = text == f"{log.concurrency:.2f}"
        cal.figures.append(Figure(f"Maximum concurrency for {max_len:,} tokens", f"{log.concurrency:.2f}x", f"{text}x",
                                  _pct(log.concurrency, pool.max_concurrency), same,
                                  "" if same else _explain(cal, "concurrency")))
    if log.refused:
        ok = not pool.fits
        cal.figures.append(Figure("start check (refusal)", "refused", "refused" if ok else "starts", None, ok))


def _probe_prefix_caching(cal: Calibration, probe: VllmPool, spec, rules: VllmRules, bounds, max_len: int, kv_dtype,
                          block, mnbt):
    """A hybrid's state pages per request depend on prefix caching ('align' mode), which many logs do not
    print: when the other setting reproduces the logged tokens inside the printed interval, say so."""
    log = cal.log
    if log.enable_prefix_caching is not None or not any(s.kind == "mamba" for s in probe.layer_specs):
        return
    default = rules.mamba_align_mode
    other = replace(log, enable_prefix_caching=not default)
    try:
        low, high = (_simulate(spec, other, rules, kv, max_len, kv_dtype, block, mnbt,
                               cal.draft).gpu_kv_cache_tokens for kv in bounds)
    except KvplanError:
        return
    if low <= log.gpu_kv_cache_tokens <= high:
        setting = "on (--enable-prefix-caching)" if not default else "off (--no-enable-prefix-caching)"
        cal.hints.append(f"with prefix caching {setting}, which the log does not print, kvplan gives "
                         f"{low:,}-{high:,} tokens: the logged figure (the release's default is "
                         f"{'on' if default else 'off'})")


def _explain(cal: Calibration, figure: str) -> str:
    log = cal.log
    reasons = list(cal.hints)
    if (log.tp or 1) > 1 or (log.pp or 1) > 1:
        reasons.append("with TP/PP the printed 'Available KV cache memory' is one worker's, the blocks the minimum "
                       "over all workers")
    if cal.rules is not None and log.version and resolve(log.version)[1]:
        reasons.append(f"vLLM {log.version}'s rules were not read; {cal.rules.version}'s were used")
    if cal.draft_unmodelled:
        reasons.append("the speculative-decoding draft's KV cache shares the pool (not modelled for this method)")
    if _has(log, "connector") and cal.pool is not None and len(cal.pool.groups) > 1:
        reasons.append("a KV connector turns the hybrid KV cache manager off")
    return "; ".join(reasons) or f"the {figure} differ beyond the log's rounding: kvplan's model of this layer mix"


def _what_if(cal: Calibration, spec, what: dict, kv_dtype, block, mnbt):
    log = cal.log
    kv = cal.kv_memory_bytes
    if kv is None:
        raise UsageError("what-ifs need the KV memory of the logged server, which the log does not give")
    rules = cal.rules
    if what.get("version"):
        rules, note = resolve(what["version"])
        if note:
            cal.notes.append(note)
    rules = rules or V0_11
    new_dtype = what.get("kv_cache_dtype") or kv_dtype
    new_len = what.get("max_model_len") or log.max_model_len
    new_block = what.get("block_size") or block
    drafts, tokens, draft = draft_layers(spec, log), speculative_tokens(spec, log), cal.draft
    if "speculative_tokens" in what:  # 0: speculative decoding off; else that many tokens (an MTP draft when the
        tokens = what["speculative_tokens"]  # log has no speculative decoding at all)
        if not tokens:
            drafts, draft = 0, None
        elif not _has(log, "speculative") and not log.speculative_method and draft is None:
            drafts = draft_layer_count(spec)
    pool = simulate(spec, kv_memory_bytes=kv, max_model_len=new_len, block_tokens=new_block, tp=log.tp or 1,
                    pp=log.pp or 1, max_num_batched_tokens=what.get("max_num_batched_tokens") or mnbt, rules=rules,
                    kv_cache_dtype=new_dtype, allow_long_max_model_len=bool(
                        os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN")), prefix_caching=log.enable_prefix_caching,
                    max_num_seqs=log.max_num_seqs, enforce_eager=log.enforce_eager,
                    draft_layers=drafts, num_speculative_tokens=tokens, draft_model=draft)
    cal.what_if = {
        "version": rules.version,
        "num_speculative_tokens": tokens,
        "mtp_draft_layers": drafts,
        "kv_cache_dtype": pool.kv_cache_dtype,
        "max_model_len": new_len,
        "block_size": pool.block_size,
        "kv_memory_bytes": kv,
        "num_blocks": pool.num_blocks,
        "gpu_kv_cache_tokens": pool.gpu_kv_cache_tokens,
        "max_concurrency": round(pool.max_concurrency, 6),
        "fits": pool.fits,
        "start_refusal": pool.refusal,
        "estimated_max_model_len": pool.estimated_max_model_len,
        "log": pool.log_lines(),
        "notes": list(pool.notes),
    }


def build_report(cal: Calibration) -> Report:
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
