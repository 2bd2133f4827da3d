"""`--engine vllm[@VERSION]`: vLLM's blocks and log lines in the estimate report."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import NamedTuple

from ..errors import UsageError
from ..render import Report, Table, note_line
from ..units import GIB, format_bytes
from ..units import cdiv
from .vllm import default_max_num_batched_tokens, simulate
from .vllm_encoder_dp import tower_whole
from .vllm_pool import VllmPool
from .vllm_profile_view import profile_json, profile_table, short_notes, summary
from .vllm_rules import LATEST, VllmRules
from .vllm_served import check
from .vllm_speculative import check_mtp_release, resolve_speculation


class KvMemory(NamedTuple):
    bytes: int  # the KV pool per GPU
    how: str | None  # how it was found (None: given)
    # with the extensible KV cache (0.34+), the reserved capacity the "Available KV cache memory" line prints
    reserved_bytes: int | None = None
    # the profile predicted from the GPU (kvplan.engines.vllm_profile.ProfileEstimate), None where given
    profile: object | None = None


def kv_memory_of(result, rules: VllmRules = LATEST, mnbt: int | None = None,
                 release: str | None = None, max_num_seqs: int | None = None,
                 enforce_eager: bool = False, draft_layers: int = 0, draft=None, draft_tokens: int = 0) -> KvMemory:
    """(KV memory per GPU, how it was found, the reserved capacity): --kv-memory, else vLLM's profile
    predicted from the GPU (kvplan.engines.vllm_profile). release: the vLLM release asked for
    (its runner and CUDA-graph rules are per release, finer than the rules' objects); else rules.version.
    draft_layers / draft: speculative decoding's MTP layers or draft checkpoint, whose weights the
    profile subtracts beside the model's (kvplan.engines.vllm_draft_weights); draft_tokens: num_speculative_tokens
    (an MTP drafter's load buffers: vllm_load.load_buffers)."""
    dep = result.deployment
    if dep is not None and dep.kv_memory_bytes is not None:
        return KvMemory(dep.kv_memory_bytes, None)
    if dep is not None and dep.gpu is not None and dep.gpu.memory_bytes:
        from .vllm_draft_weights import drafter_weights
        from .vllm_profile import driver_total_bytes, predict_available, version_key

        # the record the plan used (exact checkpoint bytes, or --weights): split by role over the ranks
        record = getattr(result, "weights", None) or dep.weights
        version = release if version_key(release) else rules.version
        drafter = drafter_weights(result.plan.model, record, draft_layers=draft_layers, draft=draft,
                                  tp=dep.tp, pp=dep.pp, release=version)
        ranks = dep.tp * dep.pp
        per_gpu = dep.weight_bytes // ranks if record is None and dep.weight_bytes is not None else None
        mnbt = mnbt or rules.max_num_batched_tokens(dep.gpu.memory_bytes, dep.gpu.name)
        elsewhere, all2all, eplb = placement_terms(result.plan.model, record, dep, mnbt)
        tower = tower_whole_more(result.plan.model, record, dep) if per_gpu is None else 0
        est = predict_available(result.plan.model, total_bytes=driver_total_bytes(dep.gpu),
                                gpu_memory_utilization=dep.mem_util, tp=dep.tp, pp=dep.pp,
                                max_num_batched_tokens=mnbt,
                                weight_bytes=per_gpu, weights=record, version=version,
                                max_num_seqs=max_num_seqs or rules.max_num_seqs(dep.gpu.memory_bytes, dep.gpu.name),
                                gpu=dep.gpu.name, enforce_eager=enforce_eager, drafter=drafter,
                                speculative_tokens=draft_tokens, experts_elsewhere=elsewhere, all2all=all2all,
                                eplb_bytes=eplb, dp=dep.dp, ep=dep.ep, tower_whole_bytes=tower)
        if est.pool_bytes <= 0:
            raise UsageError(f"vLLM would have no memory for the KV cache on {dep.gpu.name}: {summary(est)}",
                             "raise --mem-util, add GPUs (--tp), or give --weights for a quantized checkpoint")
        return KvMemory(est.pool_bytes, "available KV memory predicted from the GPU: " + est.lines()[0],
                        est.available_bytes if est.extensible is not None else None, est)
    if result.capacity is not None:
        return KvMemory(result.capacity.pool_bytes, None)
    raise UsageError("--engine vllm needs the KV memory per GPU", "give --kv-memory, or --gpu / --gpu-memory")


def placement_terms(model, record, dep, mnbt: int) -> tuple[int, object, int]:
    """(experts_elsewhere, all2all, eplb_bytes) of vllm_profile.predict_available under --data-parallel-size /
    --enable-expert-parallel: the routed experts over dp x tp GPUs (capacity.experts), the all-to-all backend's
    buffers (vllm_a2a) and EPLB's state (capacity/eplb.py); (0, None, 0) without DP or EP. record: the checkpoint's
    weights record, else the plan's (plan_weights). Shared by estimate (kv_memory_of) and calibrate."""
    if not (dep.dp > 1 or dep.ep):
        return 0, None, 0
    from ..capacity.eplb import vllm_state_bytes
    from ..capacity.experts import check_placement
    from ..capacity.experts_pp import stage_savings
    from ..capacity.weights import plan_weights, stage_weight_bytes
    from .vllm_a2a import a2a_of

    placed = record if record is not None else plan_weights(model, dep)
    check_placement(model, placed, dep.dp, dep.ep, dep.pp)
    # a backend outside use_sequence_parallel_moe's list keeps the shared experts split (vllm_a2a)
    savings = stage_savings(model, placed, dep.tp, dep.dp, dep.ep, dep.pp, redundant=dep.redundant_experts,
                            a2a=dep.a2a)
    # the profile's weights are the fullest stage's: what that GPU holds less (each stage's own saving)
    stages = stage_weight_bytes(placed, model.num_layers, dep.tp, dep.pp)
    elsewhere = max(stages) - max(w - s for w, s in zip(stages, savings))
    all2all, _ = a2a_of(model, placed, dep, mnbt)
    # EPLB's state, allocated at load before the profile, taken from the pool with the weights (capacity/eplb.py)
    eplb = vllm_state_bytes(model, placed, dep.tp * dep.dp, dep.redundant_experts, dep.pp)
    return elsewhere, all2all, eplb


def tower_whole_more(model, record, dep) -> int:
    """What the fullest GPU holds more under --mm-encoder-tp-mode data (engines/vllm_encoder_dp.py): the first stage's
    tower whole, against the (tp, pp) split the profile's weights term follows; 0 where the tower stays split."""
    from .vllm_encoder_dp import stage_delta

    if not tower_whole(model, getattr(dep, "mm_encoder_tp_mode", None)) or dep.tp <= 1:
        return 0
    from ..capacity.weights import plan_weights, stage_weight_bytes
    from .vllm_load import served_from_float32

    placed = record if record is not None else plan_weights(model, dep)
    stages = stage_weight_bytes(placed, model.num_layers, dep.tp, dep.pp)
    more = max(w + d for w, d in zip(stages, stage_delta(model, placed, dep.tp, dep.pp))) - max(stages)
    # a float32 checkpoint sized from its config, served in bf16 (vllm_load.config_weights_per_gpu halve)
    return more // 2 if record is None and served_from_float32(model) else more


def dp_note(dep, pool: VllmPool) -> str:
    """What vLLM's log lines mean under --data-parallel-size, and what this prediction leaves out."""
    return (f"--data-parallel-size {dep.dp}: each of the {dep.dp} DP ranks (one engine core each, profiling its own "
            "GPUs: v1/engine/core.py EngineCore._initialize_kv_caches, DPEngineCoreProc) logs these lines for its own "
            f"pool and its own max_num_seqs ({pool.max_num_seqs}); the replica serves {dep.dp} x {pool.max_concurrency:.2f} = "
            f"{dep.dp * pool.max_concurrency:.2f} requests of max_model_len. Not modelled: the DP / EP groups' NCCL "
            "memory")


def _mixed_label(pool: VllmPool) -> str:
    return " + ".join(dict.fromkeys(s.label for s in pool.layer_specs))


def quantization_note(model, version: str) -> str | None:
    """Where vLLM `version` would not load the checkpoint's quantization (kvplan.engines.vllm_quant_support), read
    from a bundled or local config."""
    from ..configs.resolve_family import nested_text
    from .vllm_load import raw_config
    from .vllm_quant_support import unsupported_note

    if model.weight_dtype in ("bfloat16", "float16", "float32"):  # no quantization_config was read
        return None
    raw = raw_config(model)
    if not isinstance(raw, dict):
        return None
    return unsupported_note(raw.get("quantization_config") or nested_text(raw).get("quantization_config"), version)


def checkpoint_kv_note(model, kv_cache_dtype: str, rules: VllmRules) -> str | None:
    """Where the checkpoint's ModelOpt config names a KV cache that vLLM's --kv-cache-dtype auto follows
    (VllmRules.checkpoint_kv_dtypes) and the plan keeps the model's dtype: what vLLM serves by default."""
    served = rules.checkpoint_kv_dtype(getattr(model, "checkpoint_kv_cache", None))
    if not served or kv_cache_dtype != "auto":
        return None
    kvplan_name = {"fp8_e4m3": "fp8"}.get(served)
    return (f"the checkpoint's ModelOpt quantization config names an {model.checkpoint_kv_cache.upper()} KV cache, "
            f"which vLLM {rules.version}'s --kv-cache-dtype auto (its default) follows: vLLM serves it as {served} "
            "(resolve_kv_cache_dtype_string), not in the model's dtype as planned here; "
            + (f"plan with --kv-dtype {kvplan_name} to size that, or " if kvplan_name else "")
            + "serve with --kv-cache-dtype bfloat16 to keep this plan")


def add_to_report(report: Report, result, max_model_len_tokens: int, *, max_num_batched_tokens: int | None = None,
                  hybrid_manager: bool | None = None, rules: VllmRules = LATEST, note: str | None = None,
                  allow_long_max_model_len: bool | None = None, release: str | None = None,
                  max_num_seqs: int | None = None, enforce_eager: bool = False, speculation=None) -> VllmPool:
    """vLLM's blocks, its log lines and the groups, under report.data["engine"] and as lines.

    speculation: kvplan.request.Speculation (the MTP layers or a draft checkpoint, and the draft
    tokens; kvplan.engines.vllm_speculative): the draft's KV cache is in the pool; a KV memory predicted from
    the GPU subtracts the drafter's weights (kvplan.engines.vllm_draft_weights), or says where it cannot.

    release: the vLLM release asked for (e.g. "0.11.0"; None: rules.version), whose model registry
    says whether it serves the model's architecture (kvplan.engines.vllm_served); the figures are
    given either way.

    allow_long_max_model_len: None reads VLLM_ALLOW_LONG_MAX_MODEL_LEN from the
    environment, as vLLM does."""
    if allow_long_max_model_len is None:
        allow_long_max_model_len = os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "").lower() in ("1", "true")
    dep = result.deployment
    plan = result.plan
    mnbt = max_num_batched_tokens or default_max_num_batched_tokens(dep.gpu if dep else None, rules)
    if max_num_batched_tokens is None and dep is not None and dep.dp > 1 and dep.ep:
        from .vllm_a2a import default_tokens  # DeepEP low-latency / NIXL EP: vLLM's batched-DP default (256)

        mnbt = default_tokens(dep.a2a) or mnbt
    if hybrid_manager is None:  # a KV connector (CPU offloading) turns the hybrid manager off
        hybrid_manager = plan.offload is None
    draft_layers, spec_tokens, draft = resolve_speculation(plan.model, speculation)
    if draft_layers:
        check_mtp_release(plan.model, release or rules.version)
    kv_memory, how, reserved, profile = kv_memory_of(result, rules, mnbt, release, max_num_seqs, enforce_eager,
                                                     draft_layers, draft, spec_tokens)
    gpu = dep.gpu if dep is not None and dep.gpu is not None and dep.gpu.memory_bytes else None
    pool = simulate(plan.model, kv_memory_bytes=kv_memory, max_model_len=max_model_len_tokens,
                    block_tokens=plan.block_size, tp=dep.tp if dep else 1, pp=dep.pp if dep else 1,
                    max_num_batched_tokens=mnbt, hybrid_manager=hybrid_manager, rules=rules,
                    allow_long_max_model_len=allow_long_max_model_len,
                    max_num_seqs=max_num_seqs or rules.max_num_seqs(gpu.memory_bytes if gpu else None,
                                                                    gpu.name if gpu else ""),
                    enforce_eager=enforce_eager, draft_layers=draft_layers, num_speculative_tokens=spec_tokens,
                    draft_model=draft, gpu=gpu.name if gpu else None, release=release,
                    dp=dep.dp if dep else 1, ep=bool(dep and dep.ep), a2a=dep.a2a if dep else None,
                    encoder_data=dep is not None and tower_whole(plan.model, dep.mm_encoder_tp_mode))
    if reserved is not None:  # the log's "Available" line: the reserved capacity, not the pool after warmup
        pool = replace(pool, reserved_bytes=reserved)
    served = check(plan.model.registry_names, release or rules.version, plan.model)
    # the JSON keeps the profile's one-line form in engine.notes; the text shows it as a table and short notes
    head = ([served.reason] if served.reason else []) + ([note] if note else [])
    notes = head + ([how] if how else []) + list(pool.notes)
    text_notes = head + (short_notes(profile) if profile is not None else [how] if how else []) + list(pool.notes)
    checkpoint_kv = checkpoint_kv_note(plan.model, pool.kv_cache_dtype, rules)
    if checkpoint_kv:
        notes.append(checkpoint_kv)
        text_notes.append(checkpoint_kv)
    if dep is not None and dep.mm_encoder_tp_mode is not None:  # engines/vllm_encoder_dp.py
        from ..capacity.weights import plan_weights
        from .vllm_encoder_dp import notes as encoder_notes

        for line in encoder_notes(plan.model, dep.mm_encoder_tp_mode, plan_weights(plan.model, dep), dep.tp):
            notes.append(line)
            text_notes.append(line)
    if dep is not None and dep.dp > 1:
        line = dp_note(dep, pool)
        notes.append(line)
        text_notes.append(line)
    refused = quantization_note(plan.model, release or rules.version)
    if refused:
        notes.append(refused)
        text_notes.append(refused)
    if how is not None and rules.extensible_kv_cache:
        text_notes.append(f"vLLM {rules.version} sizes the pool after warmup by default (the extensible KV cache, "
                          "gpu_memory_utilization 1.0 unless given); --kv-memory (--kv-cache-memory-bytes) gives "
                          "the pool exactly")
        notes.append(f"vLLM {rules.version} sizes the KV cache after warmup by default (the extensible KV cache, "
                     "gpu_memory_utilization 1.0 unless given): 'Available KV cache memory' is the capacity it "
                     f"reserves, and the pool, {pool.kv_memory_bytes / GIB:.2f} GiB here, is the one it would measure "
                     "after warmup, predicted from kvplan's profile terms (kvplan.engines.vllm_extensible; no 0.34 "
                     "start-up log checks it); --kv-memory (--kv-cache-memory-bytes) gives the pool exactly")
    group_rows = []
    for g in pool.groups:
        group_rows.append({
            "kind": g.spec.label if not pool.uniform_type else _mixed_label(pool), "layers": len(g.layers),
            "padding_layers": g.padding_layers, "block_size": g.spec.block_tokens, "page_bytes": g.spec.page_bytes,
            "window_tokens": g.spec.window_tokens,
            "blocks_per_request": cdiv(g.spec.max_memory_bytes(pool.max_model_len, pool.in_flight_tokens),
                                       g.spec.page_bytes),
        })
    asked = asked_release(release, rules.version)
    report.data["engine"] = {
        "name": "vllm",
        "version": asked,
        "version_modelled": rules.version,
        "architecture": plan.model.architecture,
        "served": served.served,
        "served_by": served.by,
        "served_reason": served.reason,
        "registry_release": served.release,
        "kv_cache_dtype": pool.kv_cache_dtype,
        "mtp_draft_layers": draft_layers,
        "draft_model": draft.name if draft is not None else None,
        "draft_model_layers": draft.num_layers if draft is not None else 0,
        "num_speculative_tokens": spec_tokens,
        "kv_memory_bytes": pool.kv_memory_bytes,
        "reserved_kv_memory_bytes": pool.reserved_bytes,
        "kv_memory_source": "--kv-memory" if how is None else "predicted from the GPU (vLLM profile model)",
        "profile": profile_json(profile) if profile is not None else None,
        "max_model_len": pool.max_model_len,
        "max_num_batched_tokens": mnbt,
        "gpu_memory_utilization_default": rules.gpu_memory_utilization,
        "gpu_kv_cache_tokens": pool.gpu_kv_cache_tokens,
        "max_concurrency": round(pool.max_concurrency, 6),
        "max_concurrency_text": pool.concurrency_text,
        "num_blocks": pool.num_blocks,
        "block_size": pool.block_size,
        "page_bytes": pool.page_bytes,
        "bytes_per_block": pool.bytes_per_block,
        "uniform_type": pool.uniform_type,
        "blocks_per_request": pool.blocks_per_request,
        "groups": group_rows,
        "fits": pool.fits,
        "start_refusal": pool.refusal,
        "max_num_seqs": pool.max_num_seqs,
        "estimated_max_model_len": pool.estimated_max_model_len,
        "log": pool.log_lines(),
        "notes": notes,
    }
    rows = [[r["kind"], r["layers"], r["padding_layers"], r["block_size"], format_bytes(r["page_bytes"]),
             r["blocks_per_request"]] for r in group_rows]
    older = f" with the rules of {rules.version}" if asked != rules.version else ""
    if profile is not None:
        report.tables.append(profile_table(f"vLLM {asked} memory profile predicted from the GPU (per GPU)",
                                           [("GiB", profile)]))
    report.tables.append(Table(f"vLLM {asked} KV cache groups ({pool.num_blocks:,} blocks{older and ';' + older})",
                               ["group", "layers", "padding", "block", "page", "blocks/request"], rows, {1, 2, 3, 5}))
    report.lines.append(f"vLLM {asked} (modelled{older}) would log:")
    report.lines.extend(f"  {line}" for line in pool.log_lines())
    if not pool.fits:
        report.lines.append(f"  vLLM would refuse to start: {pool.refusal}")
    report.lines.extend(note_line(n) for n in text_notes)
    return pool


def asked_release(release: str | None, modelled: str) -> str:
    """The release to name: the one asked for (vllm@0.24), or the rules' own where none was asked or it is the
    same release ("0.33.0" for the 0.33 rules); a release modelled with an older release's rules keeps its name
    (engine.version 0.24, engine.version_modelled 0.23)."""
    from .vllm_release import release_key

    key, own = release_key(release), release_key(modelled)
    if key is None or own is None:
        return modelled
    width = max(len(key), len(own))
    return modelled if key + (0,) * (width - len(key)) == own + (0,) * (width - len(own)) else str(release)


def profile_terms_table(rows) -> Table:
    """`kvplan calibrate`: vLLM's profile terms as the log's breakdown gives them beside kvplan's
    (kvplan.engines.vllm_terms.TermRow), GiB."""
    def gib(value):
        return "" if value is None else f"{value:.2f}"

    body = [[r.name, gib(r.logged_gib), gib(r.predicted_gib),
             "" if r.difference_gib is None else f"{r.difference_gib:+.2f}", r.source] for r in rows]
    return Table("vLLM profile terms: logged vs kvplan (GiB)", ["term", "logged", "kvplan", "kvplan - logged",
                                                               "kvplan's source"], body, {1, 2, 3})


__all__ = ["add_to_report", "kv_memory_of", "profile_terms_table"]
