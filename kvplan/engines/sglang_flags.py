"""`--emit sglang`: the `python -m sglang.launch_server` command that realises a plan (the flags of SGLang 0.5.9's
server_args.py add_cli_args, the same names in 0.5.23's arg_groups/fields), and what it cannot.

SGLang applies at runtime its KV dtypes (bf16, fp8_e4m3, fp8_e5m2; fp4_e2m1 is not modelled), the page size,
its radix prefix cache (on by default), the memory fraction and parallelism. Windows and other architecture
what-ifs need a trained checkpoint; eviction and Quest need engine support SGLang does not have; int8 / int4 /
KIVI are not SGLang KV dtypes; CPU offloading is its hierarchical cache, a different design, not emitted.
"""

from __future__ import annotations

import shlex

from ..errors import KvplanError
from ..render import Report, note_line
from ..techniques.architecture import HybridWhatIf, LatentWhatIf, RegroupHeads, ShareLayers
from ..techniques.quantize import Quantize
from ..techniques.serving import OffloadTier
from ..techniques.tokens import CompressedSparse, Evict, Pyramid, Quest, Window
from . import remote_code
from .sglang import kv_dtype_bytes
from .sglang_rules import (LATEST, LONG_CONTEXT_ENV, PURE_SSM_ARCHS, SPEC_MAX_RUNNING_REQUESTS, context_limit, page_size_refusal,
                           radix_off_reason, rules_for)
from .vllm_flags import NotApplied, dropped_tower_key

# the architectures whose SGLang 0.5.23 class builds no vision tower under --language-model-only (arg_groups/fields/
# disagg.py; models/qwen3_vl.py Qwen3VLForConditionalGeneration: self.visual = None, which qwen3_vl_moe.py's and
# qwen3_5.py's classes inherit); qwen2_5_vl.py, gemma3_mm.py, llava.py and mllama4.py build it whatever it says
SKIPS_TOWER = frozenset({"Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
                         "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"})
_BUILDS_TOWER = frozenset({"Qwen2_5_VLForConditionalGeneration", "Gemma3ForConditionalGeneration",
                           "LlavaForConditionalGeneration", "Llama4ForConditionalGeneration"})



def _unsupported(technique) -> str | None:
    if isinstance(technique, (ShareLayers, LatentWhatIf, HybridWhatIf, CompressedSparse, Window)):
        return "needs a checkpoint trained for it; SGLang serves the architecture a checkpoint has"
    if isinstance(technique, RegroupHeads):
        return "needs an uptrained checkpoint with fewer KV heads (GQA/MQA)"
    if isinstance(technique, (Evict, Pyramid)):
        return "needs engine support that SGLang does not have (token eviction)"
    if isinstance(technique, Quest):
        return "needs engine support that SGLang does not have (Quest page selection)"
    if isinstance(technique, Quantize) and not technique.storage.name.startswith("fp8"):
        return f"{technique.storage.name} is not an SGLang KV cache dtype kvplan models (bf16, fp8_e4m3, fp8_e5m2)"
    if isinstance(technique, OffloadTier):
        return "SGLang's CPU tier is its hierarchical cache (--enable-hierarchical-cache), not modelled here"
    return None


def _limit(model) -> int | None:
    """The context length SGLang derives for the model (kvplan.engines.sglang.context_limit), else the model's."""
    from .vllm_load import raw_config

    limit, _ = context_limit(raw_config(model))
    return limit or model.max_context_tokens


def _text_only(model, argv: list[str], release: str) -> list[str]:
    """--language-model-only where the plan leaves the vision tower out (--set KEY=null) and SGLang then
    builds none (appended to argv); else a note saying the server still holds it."""
    key = dropped_tower_key(model)
    if key is None:
        return []
    what = f"the plan leaves the vision tower out (--set {key}=null)"
    if release != "0.5.23":
        return [f"{what}; kvplan has not read whether SGLang {release} can skip it"]
    arch = model.architecture or ""
    if arch in SKIPS_TOWER:
        argv.append("--language-model-only")
        return [f"--language-model-only: {what}, so SGLang must not build it; the server then takes text only"]
    if arch in _BUILDS_TOWER:
        return [f"{what}, but SGLang 0.5.23's {arch} builds it whatever --language-model-only says: the server "
                "holds it beside the plan (plan with the tower to match)"]
    return [f"{what}; kvplan has not read whether SGLang 0.5.23's {arch or 'class'} skips it under "
            "--language-model-only"]


def command(result, techniques, context_len: int, mem_fraction_static: float | None = None,
            speculation=None, max_running_requests: int | None = None,
            release: str | None = None, batch: int = 1) -> tuple[list[str], list[NotApplied], list[str]]:
    """(argv of `python -m sglang.launch_server`, techniques SGLang cannot apply, notes). speculation:
    kvplan.request.Speculation: the checkpoint's MTP layers (--speculative-algorithm NEXTN) or a draft
    checkpoint (EAGLE / EAGLE3 / STANDALONE with --speculative-draft-model-path). batch: the requests a pure
    state-space model's --max-total-tokens is sized for (_state_model_tokens)."""
    plan, dep = result.plan, result.deployment
    model = plan.model
    rules = rules_for(release)
    notes: list[str] = []
    skipped = [NotApplied(t.spec, why) for t in techniques if (why := _unsupported(t)) is not None]
    argv = ["python", "-m", "sglang.launch_server", "--model-path", model.name, "--context-length", str(context_len)]
    trust, remote_notes = remote_code.for_model(model, release or LATEST, "sglang")
    if trust:
        argv.append("--trust-remote-code")
    notes += remote_notes
    try:
        dtype, _ = kv_dtype_bytes(model, None)
    except KvplanError:  # a KV dtype SGLang does not have: listed as not applied, the cache left at auto
        dtype = "auto"
    if model.online_quantization:  # the engine quantizes the float checkpoint as it loads (configs/quant_online.py)
        argv += ["--quantization", model.online_quantization]
    argv += ["--kv-cache-dtype", dtype]
    notes += _text_only(model, argv, rules.release)
    if plan.block_size is not None:
        argv += ["--page-size", str(plan.block_size)]
    limit = _limit(model)
    if limit and context_len > limit:
        notes.append(f"--context-length {context_len:,} is above the model's {limit:,} tokens: SGLang refuses it "
                     f"unless {LONG_CONTEXT_ENV}=1 (set in the command)")
    state_model = (model.architecture or "") in PURE_SSM_ARCHS  # a zero cell: the token pool costs no memory
    if dep is None and state_model:
        notes.append(f"{model.name} keeps no KV in SGLang: its token pool is --max-total-tokens, else "
                     "--context-length (one request at a time); give --gpu or --kv-memory to size it for --batch")
    if dep is not None:
        if dep.tp * dep.dp > 1:  # with attention DP, --tp is every GPU (engines/sglang_dp.py)
            argv += ["--tp-size", str(dep.tp * dep.dp)]
        if dep.dp > 1:  # 0.5.23's spelling (server_args.py: --dp-size N --enable-dp-attention is deprecated for it,
            # "remove the flag and the field after 2026-12-31")
            argv += ["--attn-dp-size", str(dep.dp)]
        if dep.ep:  # whole experts over every GPU (moe_ep_size = tp: capacity.experts)
            argv += ["--ep-size", str(dep.tp * dep.dp)]
        if dep.a2a is not None:  # the MoE all-to-all backend asked for (engines/sglang_a2a.py)
            argv += ["--moe-a2a-backend", dep.a2a]
        if dep.sglang_groups is not None:  # --enable-dp-lm-head / --moe-dense-tp-size (engines/sglang_groups.py)
            argv += dep.sglang_groups.argv()
        if dep.redundant_experts is not None:  # EPLB's redundant experts (capacity/eplb.py): static, as placed
            argv += ["--ep-num-redundant-experts", str(dep.redundant_experts)]
        if dep.pp > 1:
            argv += ["--pp-size", str(dep.pp)]
        if mem_fraction_static is not None:
            argv += ["--mem-fraction-static", f"{mem_fraction_static:g}"]
        state_tokens = _state_model_tokens(result, context_len, rules, mem_fraction_static, speculation,
                                           max_running_requests, batch, notes) if state_model else None
        if state_tokens is not None:
            argv += ["--max-total-tokens", str(state_tokens)]
        elif mem_fraction_static is not None or state_model:  # a state model's failure is noted already
            pass
        elif dep.kv_memory_bytes is not None:
            from .sglang import pool
            from .sglang_report import resolve_speculation

            try:  # the pool --engine sglang reports: speculation moves it (the draft in 0.5.23's cell, a state
                # model's intermediate states and, in 0.5.9, its radix cache)
                tokens = pool(model, rest_bytes=dep.kv_memory_bytes, context_len=context_len, tp=dep.tp,
                              page_size=plan.block_size or 1, rules=rules,
                              speculation=resolve_speculation(model, speculation),
                              max_running_requests=max_running_requests).max_total_num_tokens
            except KvplanError as exc:  # a model SGLang's pool is not read for: said, no cap emitted
                tokens = None
                notes.append(f"no --max-total-tokens: {exc.message}")
            if tokens:
                argv += ["--max-total-tokens", str(tokens)]
                notes.append(f"SGLang has no KV-memory flag: --max-total-tokens {tokens:,} caps its pool at the "
                             "tokens --kv-memory holds (the pool is still sized from --mem-fraction-static first)")
        else:
            notes.append("--mem-fraction-static left to SGLang's default for the card (see --engine sglang)")
    if max_running_requests is not None:
        argv += ["--max-running-requests", str(max_running_requests)]
    if speculation is not None:
        argv += _speculative_flags(model, speculation, notes, max_running_requests)
    refusal = page_size_refusal(rules, model, plan.block_size, speculation is not None)
    if refusal:
        notes.append(refusal)
    if plan.prefix is None:
        # a state model's radix cache: off in 0.5.9 for Kimi Linear / Ling 2.5, and for the others under speculation
        # (server_args._handle_mamba_radix_cache)
        off = radix_off_reason(rules, model.architecture, speculation is not None) if any(
            layer.state is not None for layer in model.layers) else None
        notes.append(f"{off}: no prefix reuse" if off else
                     "SGLang's radix prefix cache is on by default (--disable-radix-cache turns it off)")
    return argv, skipped, notes


def _state_model_tokens(result, context_len: int, rules, mem_fraction_static, speculation, max_running_requests,
                        batch: int, notes: list[str]) -> int | None:
    """A pure state-space model's --max-total-tokens: `batch` requests of context_len, at most the requests its state
    pool runs (sglang_report.state_model_tokens); None for any other model, or where the pool cannot be read (said)."""
    from .sglang_report import sized_pool

    model = result.plan.model
    try:
        got = sized_pool(result, context_len, rules, mem_fraction_static=mem_fraction_static, speculation=speculation,
                         max_running_requests=max_running_requests, batch=batch)[0]
    except KvplanError as exc:
        notes.append(f"no --max-total-tokens: {exc.message}")
        return None
    if got.cell.bytes or got.cell.state is None:
        return None
    requests = got.max_total_num_tokens // context_len
    notes.append(f"{model.name} keeps no KV in SGLang {rules.release}: its token pool is --max-total-tokens, else "
                 f"--context-length ({context_len:,}: one request at a time), and costs no memory; "
                 f"--max-total-tokens {got.max_total_num_tokens:,} lets {requests:,} requests of {context_len:,} tokens "
                 "run at once"
                 + (f" (--batch {batch:,} is above the {got.max_running_requests:,} requests its state pool runs)"
                    if requests < batch else ""))
    return got.max_total_num_tokens


def _speculative_flags(model, speculation, notes: list[str], max_running_requests: int | None) -> list[str]:
    from .sglang_report import resolve_speculation

    spec = resolve_speculation(model, speculation)
    flags = ["--speculative-algorithm", "NEXTN" if speculation.mtp else spec.algorithm]
    if spec.draft_name is not None:
        from .vllm_speculative import draft_location

        where, note = draft_location(speculation.draft_model, spec.draft_name, "--speculative-draft-model-path")
        flags += ["--speculative-draft-model-path", where]
        if note:
            notes.append(note)
    if speculation.tokens is not None:  # top-1 chains: steps = tokens, draft tokens = steps + 1
        flags += ["--speculative-num-steps", str(spec.num_steps), "--speculative-eagle-topk", "1",
                  "--speculative-num-draft-tokens", str(spec.draft_tokens)]
    if max_running_requests is None:
        notes.append(f"speculative decoding: SGLang runs at most {SPEC_MAX_RUNNING_REQUESTS} requests at once unless "
                     "--max-running-requests is given (kvplan's --max-num-seqs)")
    return flags


def add_to_report(report: Report, result, techniques, context_len: int,
                  mem_fraction_static: float | None = None, speculation=None,
                  max_running_requests: int | None = None, release: str | None = None, batch: int = 1) -> None:
    """`--emit sglang`: the command under report.data["emit"] and as lines."""
    from .sglang_served import check

    argv, skipped, notes = command(result, techniques, context_len, mem_fraction_static, speculation,
                                   max_running_requests, release, batch)
    model, dep = result.plan.model, result.deployment
    served = check(model.registry_names, release or LATEST, model.config_model_type or model.model_type, model,
                   dep.tp if dep is not None else None)
    if served.reason:
        notes.insert(0, served.reason)
    if dep is not None and dep.pp > 1:  # --engine sglang refuses it (engines.sglang_pp); the emitted command says so
        from ..errors import UsageError
        from .sglang_pp import check_pp

        try:
            check_pp(model.registry_names, release or LATEST, dep.pp, dep.tp, notes,
                     model.config_model_type or model.model_type)
        except UsageError as refused:
            notes.insert(0, f"warning: this command would not start: {refused.one_line()}")
    limit = _limit(result.plan.model)
    env = [f"{LONG_CONTEXT_ENV}=1"] if limit and context_len > limit else []
    text = " ".join(env + [shlex.join(argv)])
    report.data["emit"] = {"engine": "sglang", "version": release or LATEST, "env": env, "command": text, "argv": argv,
                           "not_applied": [{"spec": s.spec, "reason": s.reason} for s in skipped],
                           "served": served.served, "notes": notes}
    report.lines.append("SGLang command that realises the plan:")
    report.lines.append(f"  {text}")
    for s in skipped:
        report.lines.append(f"  not applied by SGLang: {s.spec}: {s.reason}")
    report.lines.extend(note_line(n) for n in notes)


__all__ = ["command", "add_to_report"]
