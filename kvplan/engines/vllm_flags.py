"""`--emit vllm[@VERSION]`: the `vllm serve` command that realises a plan, and what it cannot.

vLLM applies at runtime only serving settings and its own KV dtypes: fp8
(e4m3, per-tensor scales), fp8_e5m2, int8 per token and head (from 0.20),
int4 per token and head (from 0.25), paging (block size: 1-128 in 0.11.0,
+ 256 from 0.11.1, any from 0.18), prefix caching, CPU offloading (from
0.11.1), --kv-cache-dtype-skip-layers (from 0.19) and parallelism. From 0.34
--kv-cache-memory-bytes also turns the extensible KV cache (sized after warmup) off.
Architecture what-ifs need a checkpoint trained for them; eviction and Quest
need engine support vLLM does not have; KIVI and int2 are not vLLM KV cache
dtypes. The flags are checked against the selected
release's rules (kvplan.engines.vllm_rules). --max-num-seqs, with a warning
that it caps shorter requests: under --engine vllm the --context-long requests
vLLM's own pool keeps decoding (kvplan.engines.vllm_decode), else kvplan's capacity.
"""

from __future__ import annotations

import json
import shlex

from .._record import record
from ..configs.vision_towers import tower_key
from ..core.model import ModelSpec
from ..render import Report, note_line
from ..techniques.architecture import HybridWhatIf, LatentWhatIf, RegroupHeads, ShareLayers
from ..techniques.quantize import Quantize
from ..techniques.serving import OffloadTier
from ..techniques.tokens import CompressedSparse, Evict, Pyramid, Quest, Window
from ..units import GIB
from . import remote_code
from .vllm_release import at_least
from .vllm_rules import LATEST, VllmRules
from .vllm_speculative import draft_location, draft_method, resolve_speculation

# vLLM 0.11.0's --block-size choices on CUDA (0.11.1-0.17 add 256; 0.18+ take any positive size)
VLLM_BLOCK_SIZES = (1, 8, 16, 32, 64, 128)
TRAINED = "needs a checkpoint trained for it; vLLM serves the architecture a checkpoint has"
UPTRAINED = "needs an uptrained checkpoint with fewer KV heads (GQA/MQA)"
NO_ENGINE = "needs engine support that vLLM does not have"
NOT_A_DTYPE = "is not a vLLM {version} KV cache dtype (vLLM {version} offers {offered})"
# --language-model-only (vllm/engine/arg_utils.py EngineArgs.language_model_only -> MultiModalConfig): in 0.17.0's
# arg_utils.py, not in 0.16.0's; it makes get_limit_per_prompt answer 0, so the tower is not built
# (configs/vision_towers.py)
LANGUAGE_MODEL_ONLY_FROM = (0, 17, 0)


@record
class NotApplied:
    spec: str
    reason: str


def _unsupported(technique, rules: VllmRules = LATEST) -> str | None:
    """Why vLLM cannot realise this technique at serving time (None: it can)."""
    if isinstance(technique, (ShareLayers, LatentWhatIf, HybridWhatIf, CompressedSparse)):
        return TRAINED
    if isinstance(technique, Window):
        return TRAINED + " (vLLM uses the sliding_window of the model's config)"
    if isinstance(technique, RegroupHeads):
        return UPTRAINED
    if isinstance(technique, (Evict, Pyramid)):
        return NO_ENGINE + " (token eviction)"
    if isinstance(technique, Quest):
        return NO_ENGINE + " (Quest page selection)"
    if isinstance(technique, Quantize) and not technique.storage.name.startswith("fp8"):
        if _per_token_head(technique.storage, rules):
            return None
        not_a_dtype = NOT_A_DTYPE.format(version=rules.version, offered=", ".join(rules.kv_cache_dtypes))
        return f"{technique.storage.name}{' (KIVI layout)' if technique.storage.granularity == 'kivi' else ''} {not_a_dtype}"
    if isinstance(technique, OffloadTier) and not rules.kv_offloading:
        return f"CPU offloading (--kv-offloading-size) is not a vLLM {rules.version} flag (from 0.11.1)"
    return None


def _per_token_head(storage, rules: VllmRules) -> str | None:
    """vLLM's name for an int8/int4 cache when the release has per-token-head scales."""
    if storage.granularity == "group" and storage.bits in (8, 4):
        name = f"int{storage.bits}_per_token_head"
        return name if name in rules.kv_cache_dtypes else None
    return None


def _kv_cache_dtype(model: ModelSpec, kv_dtype_name: str, rules: VllmRules = LATEST) -> tuple[str, bool, list[str]]:
    """(--kv-cache-dtype value, skip sliding-window layers?, notes) from the final caches."""
    notes: list[str] = []
    quantized, native_windows = set(), False
    for layer in model.layers:
        for cache in layer.caches:
            if cache.kind not in ("attention", "latent"):
                continue
            name = cache.storage.name
            per_token_head = _per_token_head(cache.storage, rules)
            if name.startswith("fp8"):
                quantized.add(name)
                if cache.storage.granularity == "head":
                    notes.append("vLLM's fp8 KV cache uses per-tensor scales, not per-head ones")
            elif per_token_head:
                quantized.add(per_token_head)
                notes.append(f"vLLM's {per_token_head} keeps one fp32 scale per token and head, "
                             "not kvplan's per-group scales")
            elif cache.policy.window_tokens is not None:
                native_windows = True
    if not quantized:
        # dtype auto: the model's, a float32 checkpoint downcast to bf16 (engines.vllm_pages.serving_storage)
        expected = {"float16": "fp16"}.get(model.float_dtype, "bf16")
        if kv_dtype_name in ("bf16", "fp16", "fp32") and kv_dtype_name != expected:
            notes.append(f"vLLM's auto KV dtype follows the dtype it serves the model in ({expected}); "
                         f"use --dtype to store the cache as {kv_dtype_name}")
        served = rules.checkpoint_kv_dtype(model.checkpoint_kv_cache)
        if served:  # auto would follow the checkpoint's ModelOpt KV cache (VllmRules.checkpoint_kv_dtypes)
            explicit = {"bf16": "bfloat16", "fp16": "float16"}[expected]
            if explicit in rules.kv_cache_dtypes:
                notes.append(f"--kv-cache-dtype {explicit}: vLLM {rules.version}'s auto would follow the checkpoint's "
                             f"ModelOpt {model.checkpoint_kv_cache.upper()} KV cache ({served}), not this plan's "
                             f"{expected}")
                return explicit, False, notes
            notes.append(f"vLLM {rules.version}'s --kv-cache-dtype auto follows the checkpoint's ModelOpt "
                         f"{model.checkpoint_kv_cache.upper()} KV cache ({served}) and it offers no {explicit}: "
                         f"the cache is served as {served}, not this plan's {expected}")
        return "auto", False, notes
    per_token_head = sorted(q for q in quantized if q.endswith("per_token_head"))
    if per_token_head:
        value = per_token_head[0]
    else:
        value = "fp8_e5m2" if quantized == {"fp8_e5m2"} else "fp8"
    return value, native_windows, sorted(set(notes))


def command(result, techniques, kv_dtype_name: str, max_model_len_tokens: int,
            rules: VllmRules | None = None, max_num_seqs: int | None = None,
            enforce_eager: bool = False, speculation=None, pool=None,
            context_tokens: int | None = None) -> tuple[list[str], list[NotApplied], list[str]]:
    """(argv of `vllm serve`, techniques vLLM cannot apply, notes) for the release `rules` model.
    max_num_seqs / enforce_eager: the user's own settings (--max-num-seqs, --enforce-eager), passed on;
    speculation: kvplan.request.Speculation: the checkpoint's MTP layers (draft tokens by default one per
    layer, vLLM's own default: n_predict, config/speculative.py) or a separate draft checkpoint (its method by
    its architecture: eagle3, eagle, draft_model). pool: --engine vllm's VllmPool (its rules the emitted release's):
    --max-num-seqs is then the requests of context_tokens (--context, at most max_model_len) that pool keeps
    decoding (kvplan.engines.vllm_decode); without it, kvplan's own capacity at --context."""
    rules = rules or LATEST
    plan, dep, cap = result.plan, result.deployment, result.capacity
    if cap is not None and dep is not None and dep.dp > 1:  # vLLM's max_num_seqs is one DP rank's (capacity.experts)
        from dataclasses import replace

        cap = replace(cap, max_concurrency=cap.max_concurrency // dep.dp)
    model = plan.model
    argv = ["vllm", "serve", model.name]
    dtype, skip_windows, notes = _kv_cache_dtype(model, kv_dtype_name, rules)
    trust, remote_notes = remote_code.for_model(model, rules.version)
    if trust:
        argv.append("--trust-remote-code")
    notes += remote_notes
    notes += _text_only(model, argv, rules)
    if model.online_quantization:  # the engine quantizes the float checkpoint as it loads (configs/quant_online.py)
        argv += ["--quantization", model.online_quantization]
    argv += ["--kv-cache-dtype", dtype]
    if skip_windows:
        if not rules.kv_cache_dtype_skip_layers:
            notes.append(f"--kv-cache-dtype-skip-layers is not a vLLM {rules.version} flag (from 0.19): the "
                         "sliding-window layers would be quantized too")
        else:
            argv += ["--kv-cache-dtype-skip-layers", "sliding_window"]
    if plan.block_size is not None:
        argv += ["--block-size", str(plan.block_size)]
        if rules.block_sizes is not None and plan.block_size not in rules.block_sizes:
            notes.append(f"--block-size {plan.block_size} is rejected by vLLM {rules.version} "
                         f"(choices {', '.join(map(str, rules.block_sizes))})")
    argv += ["--max-model-len", str(max_model_len_tokens)]
    if long_context_env(model, max_model_len_tokens):
        limit = model.max_context_tokens
        notes.append(f"--max-model-len {max_model_len_tokens:,} exceeds the model's maximum {limit:,}: vLLM "
                     "refuses to start unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (set in the command; positions "
                     "past the trained length may give garbage)")
    gpu = dep.gpu if dep is not None and dep.gpu is not None and dep.gpu.memory_bytes else None
    default_seqs = rules.max_num_seqs(gpu.memory_bytes if gpu else None, gpu.name if gpu else "")
    layers, tokens, draft = resolve_speculation(model, speculation)
    method = "mtp" if layers else draft_method(draft) if draft is not None else ""
    fit = None
    if pool is not None:
        from .vllm_decode import decode_fit

        fit = decode_fit(pool, context_tokens or pool.max_model_len, rules, tokens if method else 0, method)
    if max_num_seqs is not None:
        argv += ["--max-num-seqs", str(max_num_seqs)]
        if fit is not None and 1 <= fit.seqs < max_num_seqs:
            notes.append(f"--max-num-seqs {max_num_seqs}: vLLM's pool keeps only {fit.seqs} sequences of "
                         f"{fit.context_tokens:,} tokens decoding at once ({fit.blocks_per_request} blocks each); "
                         "more run when requests are shorter, and beyond that vLLM preempts")
        elif fit is None and cap is not None and 1 <= cap.max_concurrency < max_num_seqs:
            notes.append(f"--max-num-seqs {max_num_seqs}: only {cap.max_concurrency} sequences of --context fit the "
                         "KV pool at once; more run when requests are shorter")
    elif fit is not None:
        if fit.seqs >= 1:
            argv += ["--max-num-seqs", str(fit.seqs)]
            notes.append(_fit_warning(fit, rules, default_seqs, cap.max_concurrency if cap is not None else None,
                                      capped=context_tokens is not None and fit.context_tokens < context_tokens))
        else:
            notes.append(f"warning: not one sequence of {fit.context_tokens:,} tokens keeps decoding in vLLM's pool "
                         f"({fit.usable_blocks:,} blocks, {fit.blocks_per_request:,} a request): vLLM would "
                         "preempt it or refuse to start")
    elif cap is not None:
        if pool is not None:  # a group kvplan has not read: kvplan's own capacity, said so
            notes.append("--max-num-seqs below is kvplan's capacity: kvplan has not read how vLLM frees one of "
                         "this pool's kinds of group in decode")
        if cap.max_concurrency >= 1:
            argv += ["--max-num-seqs", str(cap.max_concurrency)]
            notes.append(f"warning: --max-num-seqs {cap.max_concurrency} is how many --context-long sequences fit "
                         "kvplan's own plan of the KV pool (not vLLM's: --engine vllm, of --emit's release, gives "
                         "that); it also caps shorter requests, which could run more at once. Drop it to let the KV "
                         "pool decide "
                         f"(vLLM {rules.version}'s default is {default_seqs})")
        else:
            notes.append("warning: not one sequence of --context fits the KV pool: vLLM would refuse to start")
    if enforce_eager:
        argv.append("--enforce-eager")
    if layers:
        argv += ["--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": tokens})]
    elif draft is not None:
        where, note = draft_location(speculation.draft_model, draft.name, "--speculative-config's model")
        if note:
            notes.append(note)
        argv += ["--speculative-config", json.dumps({"method": method, "model": where,
                                                      "num_speculative_tokens": tokens})]
    if speculation is not None and "--max-num-seqs" in argv and max_num_seqs is None:
        if fit is not None:
            notes.append(f"--max-num-seqs counts the draft's layers in vLLM's pool and the {fit.ahead_tokens} slots "
                         f"past a request's tokens that a decoding step with {tokens} draft token(s) holds in each "
                         "attention group (allocate_slots: the drafts to verify, the lookahead, and under async "
                         "scheduling the drafts of the step in flight; at most --max-model-len)")
        else:
            notes.append("--max-num-seqs comes from kvplan's capacity, which leaves out the draft's cache "
                         "(--engine vllm counts it)")
    if plan.prefix is not None:
        argv.append("--enable-prefix-caching")
    if plan.offload is not None and not rules.kv_offloading:
        notes.append(f"CPU offloading: vLLM {rules.version} has no --kv-offloading-size (0.11.1 and newer have it)")
    elif plan.offload is not None:
        argv += ["--kv-offloading-size", f"{plan.offload.cpu_bytes / GIB:g}", "--kv-offloading-backend", "native"]
        notes.append("--kv-offloading-size is in GiB, summed over TP ranks; the offloading connector "
                     "turns vLLM's hybrid KV cache manager off")
    if dep is not None:
        if dep.tp > 1:
            argv += ["--tensor-parallel-size", str(dep.tp)]
        if dep.pp > 1:
            argv += ["--pipeline-parallel-size", str(dep.pp)]
        if dep.dp > 1:  # one engine core a DP rank; --max-num-seqs above is one rank's (capacity.experts)
            argv += ["--data-parallel-size", str(dep.dp)]
        if dep.ep:
            argv.append("--enable-expert-parallel")
        if dep.mm_encoder_tp_mode is not None:  # as given (engines/vllm_encoder_dp.py)
            argv += ["--mm-encoder-tp-mode", dep.mm_encoder_tp_mode]
            from .vllm_encoder_dp import notes as encoder_notes, tower_whole

            if not tower_whole(model, dep.mm_encoder_tp_mode):  # the fallback, or a class not read: said
                notes += encoder_notes(model, dep.mm_encoder_tp_mode, None, dep.tp)
        if dep.a2a is not None:  # the MoE all-to-all backend asked for (engines/vllm_a2a.py)
            argv += ["--all2all-backend", dep.a2a]
        if dep.redundant_experts is not None:  # EPLB (capacity/eplb.py): 0.34's spelling, engine/arg_utils.py
            argv += ["--enable-eplb"] + ([] if dep.eplb_default else  # vLLM's default R: the flag alone
                                         ["--eplb-config", json.dumps({"num_redundant_experts": dep.redundant_experts})])
            if rules.version != LATEST.version:
                notes.append(f"--enable-eplb / --eplb-config as vLLM {LATEST.version} spells them; kvplan has not read "
                             f"vLLM {rules.version}'s EPLB flags")
        if dep.kv_memory_bytes is not None:
            argv += ["--kv-cache-memory-bytes", str(dep.kv_memory_bytes)]
            if rules.extensible_kv_cache:
                notes.append(f"--kv-cache-memory-bytes turns vLLM {rules.version}'s extensible KV cache off "
                             "(config/vllm.py _resolve_extensible_kv_cache): the pool is this size, as planned")
        elif dep.gpu is not None:
            argv += ["--gpu-memory-utilization", f"{dep.mem_util:g}"]
            if rules.extensible_kv_cache and pool is not None:  # --engine vllm's notes above said the rest
                notes.append("the pool is sized after warmup (notes above): pass --kv-cache-memory-bytes to fix its "
                             "size, or --no-enable-extensible-kv-cache for the estimate-based sizing (at 0.92 unless "
                             "given)")
            elif rules.extensible_kv_cache:
                notes.append(f"vLLM {rules.version} sizes the KV cache from the memory free after warmup and CUDA-graph "
                             "capture (the extensible KV cache, on by default on CUDA; unset its "
                             "gpu_memory_utilization is 1.0): kvplan predicts that pool from its profile terms, "
                             "which no 0.34 start-up log has checked; pass --kv-cache-memory-bytes to fix the size, "
                             "or --no-enable-extensible-kv-cache for the estimate-based sizing (at 0.92 unless given)")
    skipped = [NotApplied(t.spec, reason) for t in techniques if (reason := _unsupported(t, rules)) is not None]
    if skipped and "--max-num-seqs" in argv and max_num_seqs is None:
        source = "vLLM's pool as planned" if fit is not None else "kvplan's capacity"
        notes.append(f"--max-num-seqs comes from {source}, which counts the techniques vLLM does not apply")
    return argv, skipped, notes


def dropped_tower_key(model: ModelSpec) -> str | None:
    """The `--set KEY=null` that makes the plan a text-only start (docs/weights.md): KEY is the config key the
    wrapper's tower is read from (configs/vision_towers.py tower_key: vision_config, Phi-3-vision's img_processor,
    Phi-4-multimodal's embd_layer, an Omni model's thinker_config), whose null counts no tower. None: no such --set."""
    key = tower_key(model.config_model_type or model.model_type)
    dropped = any(o.key == key and o.value is None and not o.section and not o.new for o in model.overrides)
    return key if dropped else None


def _text_only(model: ModelSpec, argv: list[str], rules: VllmRules) -> list[str]:
    """--language-model-only where the plan leaves the vision tower out (appended to argv), else nothing."""
    key = dropped_tower_key(model)
    if key is None:
        return []
    if at_least(rules.version, LANGUAGE_MODEL_ONLY_FROM):
        argv.append("--language-model-only")
        return [f"--language-model-only: the plan leaves the vision tower out (--set {key}=null), so vLLM "
                "must not build it; the server then takes text only"]
    return [f"--language-model-only is not a vLLM {rules.version} flag (from 0.17): the plan leaves the vision "
            f"tower out (--set {key}=null), which this release may still load; kvplan has not read whether "
            "--limit-mm-per-prompt 0 skips it there"]


def _fit_warning(fit, rules: VllmRules, default_seqs: int, planned: int | None, capped: bool = False) -> str:
    """The warning beside a --max-num-seqs taken from vLLM's pool (kvplan.engines.vllm_decode.decode_fit).
    capped: --context is above --max-model-len, whose length the requests then have."""
    own = f"; kvplan's own plan fits {planned} at --context" if planned is not None and planned != fit.seqs else ""
    length = "--max-model-len" if capped else "--context"
    return (f"warning: --max-num-seqs {fit.seqs} is how many {fit.context_tokens:,}-token ({length}) sequences "
            f"vLLM's pool keeps decoding: {fit.usable_blocks:,} blocks (the null block left out) // "
            f"{fit.blocks_per_request:,} blocks each ({fit.parts_text}; windows and states take whole "
            f"blocks){own}. It also caps shorter requests, which could run more at once; a larger value lets vLLM "
            f"admit requests it may then preempt. Drop it to let the KV pool decide (vLLM {rules.version}'s "
            f"default is {default_seqs})")


def long_context_env(model: ModelSpec, max_model_len_tokens: int) -> list[str]:
    """The environment vLLM needs to start with a max_model_len above the model's
    (vllm/config/model.py: _get_and_verify_max_len)."""
    limit = model.max_context_tokens
    return ["VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"] if limit and max_model_len_tokens > limit else []


def add_to_report(report: Report, result, techniques, kv_dtype_name: str, max_model_len_tokens: int,
                  rules: VllmRules | None = None, release: str | None = None, max_num_seqs: int | None = None,
                  enforce_eager: bool = False, speculation=None, pool=None, context_tokens: int | None = None) -> None:
    """`--emit vllm`: the command under report.data["emit"] and as lines. release: the vLLM
    release asked for (its registry says whether it serves the architecture; default: the rules').
    pool: --engine vllm's VllmPool, where one was planned; context_tokens: --context (see command)."""
    from .vllm_family_rules import check_modelled
    from .vllm_served import check

    check_modelled(result.plan.model)
    rules = rules or LATEST
    argv, skipped, notes = command(result, techniques, kv_dtype_name, max_model_len_tokens, rules, max_num_seqs,
                                   enforce_eager, speculation, pool, context_tokens)
    served = check(result.plan.model.registry_names, release or rules.version, result.plan.model)
    if served.reason:
        notes.insert(0, served.reason)
    dep = result.deployment
    if dep is not None and dep.pp > 1:  # --engine vllm refuses it (engines.vllm_pp); the emitted command says so
        from ..errors import UsageError
        from .vllm_pp import check_pp

        try:
            check_pp(result.plan.model.registry_names, release or rules.version, dep.pp, dep.tp, notes)
        except UsageError as refused:
            notes.insert(0, f"warning: this command would not start: {refused.one_line()}")
    env = long_context_env(result.plan.model, max_model_len_tokens)
    text = " ".join(env + [shlex.join(argv)])
    report.data["emit"] = {
        "engine": "vllm",
        "version": rules.version,
        "env": env,
        "command": text,
        "argv": argv,
        "not_applied": [{"spec": s.spec, "reason": s.reason} for s in skipped],
        "served": served.served,
        "notes": notes,
    }
    report.lines.append("vLLM command that realises the plan:")
    report.lines.append(f"  {text}")
    for s in skipped:
        report.lines.append(f"  not applied by vLLM: {s.spec}: {s.reason}")
    report.lines.extend(note_line(n) for n in notes)


__all__ = ["command", "add_to_report", "NotApplied"]
