"""`--engine sglang`: SGLang's token pool and log lines in the estimate report (kvplan.engines.sglang)."""

from __future__ import annotations

from ..errors import UsageError
from ..render import Report, note_line
from ..units import GIB
from .sglang import SglangPool, Speculation, pool
from .sglang_a2a import buffer_note, reserve_mib, shared_note
from .sglang_dp import gather_reserve_mib, launch_tp, per_rank_requests
from .sglang_groups import encoder_whole, notes as groups_notes
from .sglang_mtp import MULTI_LAYER, draft_layers, is_sglang_mtp, local_draft_layers, module_weights
from .sglang_served import check
from .sglang_rules import (MULTIMODAL_PREFILL_GRAPH_0523, SPEC_MAX_RUNNING_REQUESTS, Rules, hf_text_config,
                           memory_defaults, page_size_refusal, rules_for, vlm_fraction_factor)

# The free GPU memory SGLang sizes from (T0, after the distributed init) is the driver's total less what
# the process holds before the weights load: the CUDA context and, at TP > 1, the communicators.
# Empirical, from the "Load weight begin. avail mem=" of public H100 logs (tests/data/sglang_logs): 78.81 of
# 79.18 GiB at TP 1 (the SGLang docs' Llama-3.1-8B run), 77.43 at TP 8 (a Grok-2 run); TP 2-4 not checked.
PRELOAD_BYTES = int(0.37 * GIB)
PRELOAD_TP_BYTES = int(1.38 * GIB)  # more at TP > 1


def resolve_speculation(model, speculation) -> Speculation | None:
    """SGLang's speculative decoding for a kvplan.request.Speculation: the checkpoint's MTP layers run as NEXTN,
    which SGLang turns into EAGLE (server_args._handle_speculative_decoding); a draft checkpoint as EAGLE,
    EAGLE3 or STANDALONE by its architecture. --num-speculative-tokens K: K steps of top-1, K + 1 draft tokens;
    else auto_choose_speculative_params: 3 steps of top-1, 4 draft tokens for the MTP families."""
    if speculation is None:
        return None
    from .vllm_speculative import draft_layer_count, draft_method, load_draft

    local, sliding = None, False
    if speculation.mtp and is_sglang_mtp(model):  # SGLang 0.5.23's own drafts (kvplan.engines.sglang_mtp.DRAFTS)
        from .vllm_load import raw_config

        algorithm, layers, draft = "EAGLE", draft_layers(model, raw_config(model)), None
        sliding = model.model_type in MULTI_LAYER
        if sliding:
            local = local_draft_layers(model, raw_config(model), layers)
    elif speculation.mtp:
        algorithm, layers, draft = "EAGLE", draft_layer_count(model, "SGLang"), None
    else:
        draft = load_draft(speculation.draft_model)
        algorithm = {"eagle3": "EAGLE3", "eagle": "EAGLE"}.get(draft_method(draft), "STANDALONE")
        layers = draft.num_layers
    if speculation.tokens is not None:
        steps, tokens = speculation.tokens, speculation.tokens + 1
    else:  # only MTP comes here (a draft checkpoint needs the tokens): every MTP family kvplan models gets (3, 1, 4)
        steps, tokens = 3, 4
    if sliding and steps > layers:  # multi-layer EAGLE: runner i loads MTP layer i only (loader._filter_mtp_weights)
        raise UsageError(f"SGLang: {model.name}'s MTP draft runs one module per speculative step, each loading one "
                         f"of the checkpoint's {layers} MTP layer(s) (multi-layer EAGLE), so {steps} steps would "
                         "need layers it does not have; kvplan has not read what SGLang does then",
                         f"give --num-speculative-tokens {layers} or fewer")
    return Speculation(algorithm, steps, tokens, layers, draft.name if draft is not None else None,
                       draft.architecture if draft is not None else None,
                       speculation.draft_model if draft is not None else None, sliding, local)


def draft_weights(result, spec: Speculation | None, rules: Rules) -> tuple[int, str | None]:
    """(bytes on each GPU, how) of the draft's weights that 0.5.23 holds when it sizes the target's pool: the draft
    worker loads before init_memory_pools (managers/scheduler.init_model_worker) and takes the target's embedding
    and head only after the pool exists (EAGLEWorkerV2.alloc_memory_pool -> init_lm_head), so a NEXTN module
    (deepseek_nextn.py: its own VocabParallelEmbedding and ParallelLMHead, eh_proj replicated) counts whole, and a
    STANDALONE draft checkpoint too. 0 with a note where it is not modelled; 0.5.9 sized the pool first."""
    from .vllm_draft_weights import draft_checkpoint_drafter, mtp_drafter
    from .vllm_load import checkpoint_weights, raw_config
    from .vllm_speculative import load_draft
    from ..weights.mtp import LAYOUTS

    if spec is None or not rules.draft_kv_in_cell:
        return 0, None
    model, dep = result.plan.model, result.deployment
    record = getattr(result, "weights", None) or dep.weights or checkpoint_weights(model)
    if spec.draft_name is None:
        layout = LAYOUTS.get(model.model_type, (None,))[0]
        if is_sglang_mtp(model):
            return module_weights(model, raw_config(model), dep.tp, spec.num_steps, rules.release)
        if layout == "fc":
            return _fc_module(model, raw_config(model), dep.tp, rules)
        if layout is None:
            got = None
            why = f"SGLang's NEXTN module layout for {model.model_type} is not read"
        else:
            got = mtp_drafter(model, raw_config(model), record, tp=dep.tp, shares=(
                False, False, f"SGLang {rules.release} shares the target's embedding and head only after the pool "
                              "is sized"))
    elif spec.algorithm == "STANDALONE":
        draft = load_draft(spec.draft_source or spec.draft_name)
        got = draft_checkpoint_drafter(draft, "draft_model", checkpoint_weights(draft), tp=dep.tp)
    else:
        got, why = None, f"an {spec.algorithm} head's weights as SGLang loads them are not read"
    if got is not None and got.bytes_per_gpu is not None:
        return got.bytes_per_gpu, got.how
    return 0, (got.how if got is not None else why) + ": the draft's weights are not subtracted, so the pool is high " \
                                                       "by their size on each GPU"


def _fc_module(model, raw: dict | None, tp: int, rules: Rules) -> tuple[int, str | None]:
    """Qwen3-Next / Qwen3.5's MTP module as SGLang builds it (qwen3_next_mtp.py, qwen3_5_mtp.py): the decoder
    layer sharded, `fc` an nn.Linear whole on every rank, three norms, and a vocabulary-parallel embedding and head
    of its own (the checkpoint has none: allocated, replaced by the target's after the pool is sized; Qwen3.5 ties
    the head to that embedding where the config ties them). Estimated from the config (kvplan.weights.mtp)."""
    from ..weights.mtp import mtp_module

    module = mtp_module(model, raw)
    if module is None:
        return 0, (f"{model.name}'s MTP module could not be sized from its config: the draft's weights are not "
                   "subtracted, so the pool is high by their size on each GPU")
    text = hf_text_config(raw)
    tied = model.model_type != "qwen3_next" and bool(text.get("tie_word_embeddings", raw.get("tie_word_embeddings")))
    copies = 1 if tied else 2
    total = -(-module.decoder_bytes // tp) + module.proj_bytes + module.norm_bytes + copies * -(-module.copy_bytes // tp)
    return total, (f"{module.how}; SGLang {rules.release} builds its own embedding"
                   + ("" if tied else " and head") + " (vocabulary-parallel) and keeps fc whole until after the pool "
                   "is sized")


def _smi_mib(gpu) -> float:
    """nvidia-smi's figure for the card (the catalog's smi_mib), else its bytes (a card without a known nvidia-smi
    figure, or --gpu-memory)."""
    return gpu.smi_mib or gpu.memory_bytes / 2**20


def chunked_prefill_of(dep, rules: Rules) -> int | None:
    """SGLang's default chunked_prefill_size on the deployment's card (memory_defaults); None without a card."""
    if dep is None or dep.gpu is None or not dep.gpu.memory_bytes:
        return None
    return memory_defaults(_smi_mib(dep.gpu), launch_tp(dep), dep.pp, rules=rules, dp=dep.dp).chunked_prefill_size


def memory_of(result, mem_fraction_static: float | None, speculative: str | None = None, rules: Rules | None = None,
              max_running_requests: int | None = None,
              draft: tuple[int, str | None] = (0, None)) -> tuple[int, str | None, float | None]:
    """(bytes SGLang sizes the pool from, how they were found, mem_fraction_static used): --kv-memory as the
    pool itself, else predicted from the GPU: T0 x mem_fraction_static - weights (see kvplan.engines.sglang);
    the default fraction of a multimodal model is scaled for its vision tower (adjust_mem_fraction_for_vlm), and
    0.5.23 also takes its cache (mm_runtime_reservation_gb)."""
    rules = rules or rules_for(None)
    from .vllm_profile import driver_total_bytes
    from .vllm_load import raw_config

    dep = result.deployment
    if dep is not None and dep.kv_memory_bytes is not None:
        return dep.kv_memory_bytes, None, mem_fraction_static
    if dep is None or dep.gpu is None or not dep.gpu.memory_bytes:
        raise UsageError("--engine sglang needs the KV memory per GPU", "give --kv-memory, or --gpu / --gpu-memory")
    total = driver_total_bytes(dep.gpu)  # torch's total for the card, which the free memory counts from
    smi_mib = _smi_mib(dep.gpu)
    arch = result.plan.model.architecture or ""
    multimodal = arch in rules.multimodal_archs
    defaults = memory_defaults(smi_mib, launch_tp(dep), dep.pp, speculative, rules, mla=_is_mla(result.plan.model),
                               prefill_graph=(not multimodal or arch in MULTIMODAL_PREFILL_GRAPH_0523)
                               and not _has_kda(result.plan.model),
                               max_running_requests=max_running_requests, dp=dep.dp,
                               a2a_mib=reserve_mib(dep.a2a))
    frac = mem_fraction_static if mem_fraction_static is not None else defaults.mem_fraction_static
    vision = ""
    if multimodal and mem_fraction_static is None:
        factor, vision = vlm_fraction_factor(raw_config(result.plan.model))
        if factor is None:
            vision = (f"; SGLang scales a vision model's default fraction by its vision tower "
                      f"(adjust_mem_fraction_for_vlm), not modelled here: {vision}")
        else:
            frac *= factor
            vision = f"; the vision tower's scaling (adjust_mem_fraction_for_vlm): {vision}"
    preload = PRELOAD_BYTES + (PRELOAD_TP_BYTES if launch_tp(dep) * dep.pp > 1 else 0)
    t0 = total - preload
    weights = _weights_per_gpu(result, rules.release)
    vlm = rules.vlm_cache_mib * 2**20 if multimodal else 0  # 0 before 0.5.23
    rest = int(t0 * frac) - weights - vlm - draft[0]
    how = (f"pool predicted from the GPU: free memory after the distributed init {t0 / GIB:.2f} GiB (the driver's "
           f"{total / GIB:.2f} GiB less {preload / GIB:.2f} GiB held before the load, empirical, from 0.4-0.5 logs"
           + ("; not checked under PP" if dep.pp > 1 else "") + ") x mem_fraction_static "
           f"{frac:g}" + (" (SGLang's default for this card: reserved "
                          f"{defaults.reserved_mib:,.0f} MiB for chunked prefill {defaults.chunked_prefill_size:,}"
                          f", decode CUDA graphs up to batch {defaults.cuda_graph_max_bs}"
                          + (f", prefill CUDA graphs {defaults.prefill_graph_mib:,.0f} MiB"
                             if defaults.prefill_graph_mib else "")
                          + (f", DP attention's gather padding {gather_reserve_mib(defaults.cuda_graph_max_bs, dep.dp):,.0f}"
                             " MiB" if dep.dp > 1 else "")
                          + (f", DeepEP's all-to-all {reserve_mib(dep.a2a):,.0f} MiB" if reserve_mib(dep.a2a) else "")
                          + (f", and {speculative}'s draft" if speculative in rules.spec_reserved_mib else "")
                          + vision + ")"
                          if mem_fraction_static is None else " (--mem-util)")
           + f" - weights {weights / GIB:.2f} GiB"
           + (f" - the draft's weights {draft[0] / GIB:.2f} GiB ({draft[1]})" if draft[0] else "")
           + (f" - the multimodal cache {rules.vlm_cache_mib} MiB (SGLANG_VLM_CACHE_SIZE_MB)" if vlm else "")
           + f" = {rest / GIB:.2f} GiB")
    return rest, how, frac


def _has_kda(model) -> bool:
    """cuda_graph_hook.disable_breakable_cudagraph_if_incompatible: no breakable prefill graph for KDA models
    (configs/model_config.py uses_kda_attention; a Ling 3.0 config without layer_types keeps it)."""
    from .sglang_bailing import uses_kda_attention

    return uses_kda_attention(model)


def _is_mla(model) -> bool:
    return any(c.kind == "latent" for layer in model.layers for c in layer.caches)


def _stage_weights(result, release: str | None = None) -> list[int]:
    """Weight bytes on one GPU of each pipeline stage, split as SGLang splits the layers, with what SGLang `release`
    (None: the newest modelled) holds in float32 beyond the checkpoint's width (engines/sglang_fp32.py)."""
    from ..capacity.shard import sglang_stage_bounds
    from ..capacity.weights import stage_weight_bytes

    dep = result.deployment
    record = getattr(result, "weights", None) or dep.weights
    model = result.plan.model
    if record is not None and served_16bit(result):
        from .vllm_load import downcast_float32

        record = downcast_float32(record, FLOAT32_SERVED_AS)[0]
    if record is not None:
        out = stage_weight_bytes(record, model.num_layers, dep.tp, dep.pp,
                                 bounds=sglang_stage_bounds(model.num_layers, dep.pp))
        # attention DP: the MoE over all --tp GPUs, dense FFNs and head too (sglang_dp); the group flags (sglang_groups)
        if dep.dp > 1 or dep.ep or dep.sglang_groups is not None:
            from ..capacity.experts import check_placement, placement_saving
            from .sglang_placement import SglangPlacement

            check_placement(model, record, dep.dp, dep.ep, dep.pp)
            # DeepEP: the shared experts whole on every GPU (sglang_a2a), as kvplan's own plan counts them
            less = placement_saving(model, record, dep.tp, dep.dp, dep.ep, dense_over_all=dep.dense_over_all,
                                    redundant=dep.redundant_experts, replicated_shared=dep.replicated_shared,
                                    placement=SglangPlacement(dep.sglang_groups))
            out = [n - less for n in out]
    else:
        total = dep.weight_bytes if dep.weight_bytes is not None else model.weight_bytes
        total = total // 2 if dep.weight_bytes is None and served_16bit(result) else total
        out = [-(-total // (dep.tp * dep.pp))] * dep.pp
    up, _ = fp32_upcast(result, release)
    if up is not None:
        out = [n + extra for n, extra in zip(out, up.stage_bytes)]
    for other in (sglang_whole(result), sglang_tower(result)):
        if other is not None:
            out = [n + extra for n, extra in zip(out, other.stage_bytes)]
    return out


def sglang_tower(result):
    """The vision tower as SGLang splits it where vLLM's split, which kvplan's weights follow, differs
    (engines/sglang_tower.py); nothing where the weights were given (a log's figure, --weight-bytes)."""
    dep = result.deployment
    return record_tower(result.plan.model, getattr(result, "weights", None) or dep.weights, dep.tp, dep.pp, dep.dp,
                        dep.sglang_groups)


def record_tower(model, record, tp: int, pp: int = 1, dp: int = 1, groups=None):
    """sglang_tower for the weights `record` on a (tp, pp, dp) split: SGLang's report and kvplan's own plan under
    --engine sglang (capacity/weights.py engine_stage_delta) alike. None where the record is none or a given size.
    groups: --mm-enable-dp-encoder builds the tower whole (engines/sglang_groups.py encoder_whole)."""
    from .sglang_groups import encoder_whole
    from .sglang_tower import tower_delta, whole_tower
    from .vllm_load import served_from_float32

    if record is None or record.source == "given":
        return None
    served = served_from_float32(model)  # served_16bit: a record not given
    if served:
        from .vllm_load import downcast_float32

        record = downcast_float32(record, FLOAT32_SERVED_AS)[0]
    if encoder_whole(model, groups):
        return whole_tower(model, record, tp, pp, served)
    return tower_delta(model, record, tp, pp, dp, served)


def sglang_whole(result):
    """What SGLang holds whole (or split) otherwise than vLLM, whose split kvplan's weights follow
    (engines/sglang_whole.py); nothing where the weights were given (a log's figure, --weight-bytes)."""
    from .sglang_whole import whole_delta

    dep = result.deployment
    record = getattr(result, "weights", None) or dep.weights
    if dep.weight_bytes is not None and record is None or record is not None and record.source == "given":
        return None
    return whole_delta(result.plan.model, dep.tp, dep.pp, served_16bit(result))


# how SGLang's dtype "auto" serves a float32 checkpoint (served_16bit), as the weights note says it
FLOAT32_SERVED_AS = "float16 (SGLang's dtype auto; bfloat16 for Gemma)"


def served_16bit(result) -> bool:
    """A float32 checkpoint SGLang loads in 16 bits: its dtype "auto" serves a float32 config in float16 (Gemma's in
    bfloat16), 2 B a parameter (0.5.23 configs/model_config.py _get_and_verify_dtype; the same in 0.5.9). Not for
    weights given as a figure (a log's, --weight-bytes)."""
    from .vllm_load import served_from_float32

    dep = result.deployment
    record = getattr(result, "weights", None) or dep.weights
    given = dep.weight_bytes is not None and record is None or record is not None and record.source == "given"
    return not given and served_from_float32(result.plan.model)


def fp32_upcast(result, release: str | None = None):
    """(what SGLang `release` holds in float32 beyond the weights kvplan sized, added; a note where it is not added
    or where it is): engines/sglang_fp32.py. Nothing where the weights were given (a log's figure, --weight-bytes)."""
    from .sglang_fp32 import stores_float32, upcast

    dep = result.deployment
    record = getattr(result, "weights", None) or dep.weights
    if dep.weight_bytes is not None and record is None or record is not None and record.source == "given":
        return None, None
    up = upcast(result.plan.model, release or rules_for(None).release, dep.tp, dep.pp, served_16bit(result))
    if up is None:
        return None, None
    if stores_float32(record):
        return None, (f"SGLang holds {up.params:,} parameters in float32 (configs/param_fp32.py); the checkpoint's "
                      f"tensor table may store them in float32 already, so the {max(up.stage_bytes):,} B a GPU they "
                      "would add at 2 B as stored is not counted")
    return up, "weights include + " + up.describe()


def _weights_per_gpu(result, release: str | None = None) -> int:
    return max(_stage_weights(result, release))


def stage_pool(result, rest: int, context_len: int, rules: Rules, **kwargs) -> tuple[SglangPool, str | None]:
    """SGLang's pool on the deployment (kwargs: kvplan.engines.sglang.pool's). With --pp each stage sizes a pool
    over its own layers (get_pp_indices: the last num_layers % pp stages one layer more) from what its weights
    leave, and every rank takes the smallest (an all-reduce MIN over the world: 0.5.9 init_memory_pool, 0.5.23
    kv_cache_configurator._apply_token_constraints). rest: the memory the pool is sized from on the GPU with the
    most weights (memory_of), or --kv-memory on every stage."""
    from dataclasses import replace

    from ..capacity.shard import sglang_stage_bounds

    dep, model = result.deployment, result.plan.model
    if dep is None or dep.pp == 1:
        return pool(model, rest_bytes=rest, context_len=context_len, rules=rules, **kwargs), None
    if any(layer.state is not None for layer in model.layers) or kwargs.get("speculation") is not None:
        raise UsageError(f"--engine sglang with --pp is modelled for attention-only models without speculative "
                         f"decoding (each stage's state pool and draft are not read): {model.name}",
                         "plan one stage with --tp, or use --engine vllm")
    bounds = sglang_stage_bounds(model.num_layers, dep.pp)
    weights = _stage_weights(result, rules.release)
    pools = []
    for (start, end), stage_weights in zip(bounds, weights):
        stage_rest = rest if dep.kv_memory_bytes is not None else rest + max(weights) - stage_weights
        pools.append(pool(replace(model, layers=model.layers[start:end]), rest_bytes=stage_rest,
                          context_len=context_len, rules=rules, **kwargs))
    kinds = {p.cell.kind for p in pools}
    if "hybrid_swa" in kinds and (len(kinds) > 1 or not rules.swa_split_on_cell):
        # 0.5.23: every rank takes the smallest full count and derives its sliding count from it
        # (calculate_pool_sizes_from_max_tokens); 0.5.9 split each rank's tokens by its own layers after the MIN
        raise UsageError(f"--engine sglang@{rules.release} with --pp is not "
                         f"modelled for this sliding-window pool ({model.name}: "
                         + ("a stage without sliding or full layers)" if len(kinds) > 1 else "0.5.9 splits each "
                            "rank's tokens by its own layers)"), "plan one stage with --tp, or use --engine vllm")
    limiting = min(range(dep.pp), key=lambda s: pools[s].max_total_num_tokens)
    sizes = ", ".join(str(end - start) for start, end in bounds)
    tokens = ", ".join(f"{p.max_total_num_tokens:,}" for p in pools)
    return pools[limiting], (f"--pp {dep.pp}: stages of {sizes} layers (get_pp_indices) size {tokens} tokens; every "
                             f"rank takes the smallest, stage {limiting}'s, whose pool is shown")


def ssm_bytes_of(model) -> tuple[int, str | None]:
    """The temporal state's element width (configs/mamba_utils.py mamba2_state_dtype): SGLANG_MAMBA_SSM_DTYPE in
    kvplan's environment, as in SGLang's, wins; else the config's mamba_ssm_dtype where SGLang's state params read
    the config (SSM_DTYPE_FROM_CONFIG_ARCHS); else float32."""
    import os

    from .sglang_rules import SSM_DTYPE_ENV, SSM_DTYPE_FROM_CONFIG_ARCHS, SSM_DTYPE_WIDTHS, ssm_state_bytes
    from .vllm_load import raw_config

    if not any(layer.state is not None for layer in model.layers):
        return 4, None
    env = os.environ.get(SSM_DTYPE_ENV)
    if env is not None and env not in SSM_DTYPE_WIDTHS:
        # SGLang (configs/mamba_utils.py mamba2_state_dtype, 0.5.9 and 0.5.23) logs a warning and keeps the config's
        # dtype (else float32): so does kvplan, saying so
        import warnings

        from ..errors import KvplanWarning

        warnings.warn(f"{SSM_DTYPE_ENV}={env!r} is not one of {', '.join(SSM_DTYPE_WIDTHS)}: SGLang ignores it with a "
                      "warning, and so does kvplan", KvplanWarning, stacklevel=2)
    if env in SSM_DTYPE_WIDTHS:
        return SSM_DTYPE_WIDTHS[env], f"{SSM_DTYPE_ENV}={env}: the recurrent states' temporal part in {env}"
    if (model.architecture or "") not in SSM_DTYPE_FROM_CONFIG_ARCHS:
        return 4, None
    return ssm_state_bytes(raw_config(model))


def fp8_kv_in_config(model) -> bool:
    """Whether config.json's quantization_config names an FP8 KV cache the way SGLang's ModelOpt configs read it
    (kv_cache_quant_algo FP8, or a kv_cache_scheme of 8-bit floats: modelopt_quant.py from_config); in
    hf_quant_config.json's layout (kvplan.sources), kv_cache_quant_algo under "quantization", which SGLang reads
    from that file too (configs/model_config.py, 0.5.9 and 0.5.23)."""
    from .vllm_load import raw_config

    raw = raw_config(model) or {}
    text = hf_text_config(raw, flat=False)
    quant = raw.get("quantization_config") or text.get("quantization_config")
    if not isinstance(quant, dict):
        return False
    if quant.get("quant_algo") is None and isinstance(quant.get("quantization"), dict):
        quant = quant["quantization"]
    scheme = quant.get("kv_cache_scheme")
    return str(quant.get("kv_cache_quant_algo", "")).upper() == "FP8" or (
        isinstance(scheme, dict) and scheme.get("type") == "float" and scheme.get("num_bits") == 8)


def check_context(model, context_len: int) -> str | None:
    """SGLang refuses a --context-length above the length it derives from the config unless
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set (configs/model_config.py _derive_context_length): one line
    where kvplan reads that length exactly; a note where the config's rope scaling reaches SGLang another way."""
    import os

    from .sglang_rules import LONG_CONTEXT_ENV, context_limit
    from .vllm_load import raw_config

    limit, exact = context_limit(raw_config(model))
    if limit is None:
        limit, exact = model.max_context_tokens, False
    if not limit or context_len <= limit:
        return None
    allowed = os.environ.get(LONG_CONTEXT_ENV, "").lower() in ("1", "true")
    if exact and not allowed:
        raise UsageError(f"SGLang refuses --context-length {context_len:,}: above {model.name}'s {limit:,} tokens "
                         f"(get_context_length) unless {LONG_CONTEXT_ENV}=1",
                         f"lower --context / --max-model-len, or set {LONG_CONTEXT_ENV}=1 in kvplan's environment "
                         "as in SGLang's")
    if allowed:
        return f"--context-length {context_len:,} is above the model's {limit:,} tokens: {LONG_CONTEXT_ENV} allows it"
    return (f"--context-length {context_len:,} is above {model.name}'s {limit:,} tokens as kvplan reads them; SGLang "
            f"refuses it above the length it derives (rope scaling can raise it) unless {LONG_CONTEXT_ENV}=1")


def draft_pool_note(model, spec: Speculation, got: SglangPool, tp: int, rules: Rules,
                    unsubtracted: str | None) -> str:
    """Where the draft's KV and weights go. 0.5.9 (model_runner_kv_cache_mixin.init_memory_pool): the draft worker
    takes the target's max_total_num_tokens over its own layers, from the memory mem_fraction_static leaves.
    0.5.23 (pool_configurator.DefaultPoolConfigurator, scheduler): the draft's layers, at the target's per-layer
    size, are in the cell the target pool is sized with, and its weights load before the pool is sized."""
    from .sglang import cell
    from .vllm_speculative import load_draft

    head = (f"speculative decoding ({spec.algorithm}, {spec.num_steps} steps, {spec.draft_tokens} draft tokens): "
            f"max_running_requests defaults to {SPEC_MAX_RUNNING_REQUESTS} (--max-num-seqs sets it); ")
    if rules.draft_kv_in_cell:
        size = ("as sliding layers x swa_full_tokens_ratio where HybridSWAPoolConfigurator puts them"
                if spec.sliding_draft and got.cell.kind == "hybrid_swa" else "at the target's per-layer size")
        return (head + f"the draft's {spec.draft_layers} layer(s) {size} add "
                f"{got.draft_bytes:,} B a token to the {got.cell.bytes:,} B cell the pool is sized with"
                + (f"; {unsubtracted}" if unsubtracted else ""))
    if spec.draft_name is None:  # MTP: the target's own attention (or latent) layer, draft_layers of them
        per_layer = got.cell.bytes // max(got.cell.full_layers, 1)
        per_token = per_layer * spec.draft_layers
    else:
        draft = load_draft(spec.draft_source or spec.draft_name)
        per_token = cell(draft, tp, got.cell.kv_bytes, rules=rules).bytes
    size = per_token * got.max_total_num_tokens
    return (head + f"the draft's own KV pool of {got.max_total_num_tokens:,} tokens x {spec.draft_layers} layer(s) = "
            f"{size / GIB:,.2f} GiB comes out of the memory mem_fraction_static leaves (with the draft's weights and "
            "CUDA graphs), not this pool")


def nsa_fp8(dep) -> bool:
    """Whether the deployment's GPU is SM >= 10 (SGLang's fp8 default for DeepSeek's sparse attention)."""
    from .sglang_rules import SM10_GPUS

    return dep is not None and dep.gpu is not None and dep.gpu.name in SM10_GPUS


def refuse_unread(model, dep, rules: Rules) -> list[str]:
    """What kvplan's SGLang model refuses beyond the pool's own checks: a DSA config pooling its index
    keys (index_kpool > 1: page_size 64 x index_kpool and ceil(132 / index_kpool) B a layer in 0.5.23, not read),
    a vision tower SGLang fails to build (engines/sglang_vision_refusal.py), a text width it cannot split (engines/sglang_widths.py), and on a card below SM 8.0 what SGLang refuses there (engines/sglang_sm7.py), whose notes it returns."""
    from .sglang import is_nsa
    from .vllm_load import raw_config

    notes: list[str] = []
    if dep is not None and dep.gpu is not None:  # Turing / Volta: bfloat16 kept, the quantization refusals
        from ..capacity.gpus import CUDA_CAPABILITY
        from .sglang import kv_dtype_bytes
        from .sglang_sm7 import check_pre_ampere

        kv = kv_dtype_bytes(model, None)[0]
        check_pre_ampere(model, CUDA_CAPABILITY.get(dep.gpu.name), rules.release,
                         "fp8_e4m3" if kv == "auto" and fp8_kv_in_config(model) else kv, notes)

    from .sglang_vision_refusal import check as check_tower  # a vision tower SGLang fails to build

    if not encoder_whole(model, getattr(dep, "sglang_groups", None)):  # --mm-enable-dp-encoder: no heads to split
        check_tower(model, dep.tp if dep is not None else 1, dep.dp if dep is not None else 1)
    from .sglang_widths import check as check_widths  # a text MLP / expert / FP8-block width SGLang cannot split

    check_widths(model, dep, rules.release, notes)
    raw = raw_config(model) or {}
    text = hf_text_config(raw)
    if is_nsa(model) and text.get("index_kpool", 1) not in (1, None):
        raise UsageError(f"SGLang {rules.release}: {model.name}'s index_kpool {text.get('index_kpool')} (pooled "
                         "indexer keys) is not modelled", "use --engine vllm or ideal for this model")
    return notes


def state_model_tokens(got: SglangPool, batch: int) -> int | None:
    """A pure state-space model's --max-total-tokens for `batch` requests of context_len (None for any other model).
    Its cell is zero, so SGLang 0.5.23 sizes the token pool at --max-total-tokens, else context_len, at no memory cost
    (pool_configurator.DefaultPoolConfigurator._zero_kv_max_tokens / calculate_pool_sizes), and
    kv_cache_configurator._apply_token_constraints keeps it (min of the flag and the same flag). The requests are
    at most what the state pool runs: got.max_running_requests (min of --max-running-requests or 2,048-4,096, the
    tokens // 2, the states // 3 of resolve_max_num_reqs), read from `got`, a pool of at least that many tokens.
    Rounded up to the page."""
    if got.cell.bytes or got.cell.state is None:
        return None
    requests = min(batch, got.max_running_requests)
    return -(-requests * got.context_len // got.page_size) * got.page_size


def sized_pool(result, context_len: int, rules: Rules, *, mem_fraction_static: float | None = None, speculation=None,
               max_running_requests: int | None = None, batch: int | None = None):
    """(SGLang's pool, the memory it is sized from, how that was found, mem_fraction_static, the ssm state bytes and its note, the PP note,
    the resolved speculation, the draft's weights) as --engine sglang reports it. batch: a pure state-space model's
    token pool sized for that many requests (state_model_tokens: what --emit sglang sets with --max-total-tokens)."""
    dep, plan = result.deployment, result.plan
    spec = resolve_speculation(plan.model, speculation)
    drafted = draft_weights(result, spec, rules) if (dep is not None and dep.kv_memory_bytes is None) else (0, None)
    rest, how, frac = memory_of(result, mem_fraction_static, spec.algorithm if spec else None, rules,
                                max_running_requests, drafted)
    ssm_bytes, ssm_note = ssm_bytes_of(plan.model)
    kwargs = dict(tp=dep.tp if dep else 1, page_size=plan.block_size or 1, mem_fraction_static=frac,
                  ssm_bytes=ssm_bytes, nsa_fp8=nsa_fp8(dep), speculation=spec,
                  max_running_requests=per_rank_requests(max_running_requests, dep),
                  chunked_prefill_size=chunked_prefill_of(dep, rules))
    got, pp_note = stage_pool(result, rest, context_len, rules, **kwargs)
    if batch is not None and state_model_tokens(got, batch) is not None:
        got, pp_note = state_model_pool(result, rest, context_len, rules, batch, **kwargs)
    return got, rest, how, frac, (ssm_bytes, ssm_note), pp_note, spec, drafted


def state_model_pool(result, rest: int, context_len: int, rules: Rules, batch: int, **kwargs):
    """stage_pool for a pure state-space model whose --max-total-tokens is sized for `batch` requests
    (state_model_tokens): the requests its state pool runs once the token pool holds the batch, then the tokens
    for those."""
    wide, _ = stage_pool(result, rest, context_len, rules, max_total_tokens=batch * context_len, **kwargs)
    return stage_pool(result, rest, context_len, rules, max_total_tokens=state_model_tokens(wide, batch), **kwargs)


def add_to_report(report: Report, result, context_len: int, *, mem_fraction_static: float | None = None,
                  note: str | None = None, speculation=None, max_running_requests: int | None = None,
                  release: str | None = None, batch: int | None = None) -> SglangPool:
    """SGLang's pool under report.data["engine"] and as log lines. speculation: kvplan.request.Speculation;
    max_running_requests: SGLang's --max-running-requests (kvplan's --max-num-seqs); release: the SGLang release
    (None: the newest modelled); batch: with --emit sglang, a pure state-space model's token pool is the
    --max-total-tokens it emits for that many requests (sized_pool)."""
    rules = rules_for(release)
    dep = result.deployment
    card_notes = refuse_unread(result.plan.model, dep, rules)
    plan = result.plan
    pp_notes: list[str] = []
    if dep is not None and dep.pp > 1:  # ModelRunner asserts support_pp (kvplan.engines.sglang_pp)
        from .sglang_pp import check_pp

        check_pp(plan.model.registry_names, rules.release, dep.pp, dep.tp, pp_notes,
                 plan.model.config_model_type or plan.model.model_type)
    long_note = check_context(plan.model, context_len)
    got, rest, how, frac, (ssm_bytes, ssm_note), pp_note, spec, drafted = sized_pool(
        result, context_len, rules, mem_fraction_static=mem_fraction_static, speculation=speculation,
        max_running_requests=max_running_requests, batch=batch)
    served = check(plan.model.registry_names, rules.release, plan.model.config_model_type or plan.model.model_type,
                   plan.model, dep.tp if dep else None)
    notes = ([served.reason] if served.reason else []) + ([note] if note else []) + ([long_note] if long_note else []) + ([how] if how else []) + list(got.notes) \
        + ([pp_note] if pp_note else []) + pp_notes + card_notes
    page_refusal = page_size_refusal(rules, plan.model, plan.block_size, spec is not None)
    if page_refusal:
        notes.insert(0, page_refusal)
    if got.kv_cache_dtype == "auto" and fp8_kv_in_config(plan.model):
        notes.append("the checkpoint's quant config names an FP8 KV cache, which SGLang's KV dtype auto follows "
                     "(configure_kv_cache_dtype): plan it with -t fp8 to match")
    if spec is not None:
        notes.append(draft_pool_note(plan.model, spec, got, dep.tp if dep else 1, rules, drafted[1]
                                     if how is not None and not drafted[0] else None))
    if got.mamba_cache_size is not None:
        notes.append(f"recurrent states: {got.cell.state.bytes / 2**20:,.2f} MiB a request on each GPU "
                     f"({got.cell.state.layers} layers, "
                     + (f"the temporal state at {ssm_bytes} B" if got.cell.state.ssm_bytes else "conv state only")
                     + f"), "
                     f"{got.mamba_cache_size:,} of them ("
                     + ("max_running_requests, the radix cache off: handle_max_mamba_cache"
                        if got.states_from_requests else "mamba_full_memory_ratio 0.9")
                     + f"), {got.state_slots_per_request} a request")
        if ssm_note:
            notes.append(ssm_note)
    if got.cell.bytes == 0 and got.cell.state is not None:  # a pure state-space model (state_model_tokens)
        notes.append(f"--max-total-tokens {got.max_total_num_tokens:,} (as --emit sglang sets it for --batch {batch}) "
                     "sizes the token pool" if batch is not None else
                     "--emit sglang sets --max-total-tokens to --batch x --context (at most the state pool's "
                     "requests), which these figures would then show")
    fp32_note = fp32_upcast(result, rules.release)[1] if how is not None else None
    if fp32_note:
        notes.append(fp32_note)
    for other in (sglang_whole(result), sglang_tower(result)) if how is not None else ():
        if other is not None:
            notes.append(other.note)
    if how is not None and dep is not None and dep.a2a is not None:  # the all-to-all backend (engines/sglang_a2a.py)
        record = getattr(result, "weights", None) or dep.weights
        notes.extend(n for n in (shared_note(plan.model, record, dep), buffer_note(plan.model, dep)) if n)
    if how is not None and dep is not None and dep.sglang_groups is not None:  # engines/sglang_groups.py
        notes.extend(groups_notes(plan.model, getattr(result, "weights", None) or dep.weights, dep))
    if how is not None:
        notes.append("weights as the checkpoint stores them"
                     + (" (but the float32 parameters above)" if fp32_note and fp32_note.startswith("weights include")
                        else "")
                     + ", split over TP (SGLang's own load layouts, e.g. of MXFP4 experts, are not modelled)")
    report.data["engine"] = {
        "name": "sglang",
        "version": rules.release,
        "version_modelled": rules.release,
        "architecture": plan.model.architecture,
        "served": served.served,
        "served_by": served.by,
        "served_reason": served.reason,
        "registry_release": served.release,
        "kv_cache_dtype": got.kv_cache_dtype,
        "pool": got.cell.kind,
        "cell_bytes": got.cell.bytes,
        "kv_memory_bytes": rest,
        "kv_memory_source": "--kv-memory" if how is None else "predicted from the GPU (SGLang profile model)",
        "mem_fraction_static": frac,
        "page_size": got.page_size,
        "context_len": got.context_len,
        "max_total_num_tokens": got.max_total_num_tokens,
        "gpu_kv_cache_tokens": got.max_total_num_tokens,  # the same figure under vLLM's key (tidy rows, fit)
        "fits": True,  # SGLang refuses to start only with no tokens at all, which raises above
        "swa_tokens": got.swa_tokens,
        "mamba_cache_size": got.mamba_cache_size,
        "state_bytes_per_request": got.cell.state.bytes if got.cell.state is not None else None,
        "draft_bytes_per_token": got.draft_bytes,
        "max_running_requests": got.max_running_requests,
        "speculative_algorithm": spec.algorithm if spec else None,
        "speculative_num_draft_tokens": spec.draft_tokens if spec else None,
        "max_concurrency": round(got.max_concurrency, 6),
        "concurrent_requests": got.concurrent_requests,
        "log": got.log_lines(),
        "notes": notes,
    }
    report.lines.append(f"SGLang {rules.release} (modelled) would log:")
    report.lines.extend(f"  {line}" for line in got.log_lines())
    report.lines.append(f"  requests of {context_len:,} tokens held at once: {got.concurrent_requests:,} "
                        f"({got.max_concurrency:.2f}x)")
    if how is not None:  # the weights one GPU holds, which the pool was predicted after
        report.data["engine"]["weight_bytes_per_gpu"] = _weights_per_gpu(result, rules.release)
    if dep is not None and dep.dp > 1:  # one scheduler and pool a DP rank (engines/sglang_dp.py)
        report.data["engine"].update(dp=dep.dp, attn_tp=dep.tp, replica_concurrent_requests=dep.dp * got.concurrent_requests)
        report.lines.append(f"  over the {dep.dp} DP ranks (each its own scheduler and pool of {got.max_total_num_tokens:,} "
                            f"tokens): {dep.dp * got.concurrent_requests:,} requests of {context_len:,} tokens")
    report.lines.extend(note_line(n) for n in notes)
    return got


__all__ = ["add_to_report", "memory_of", "sized_pool", "state_model_pool", "state_model_tokens", "nsa_fp8", "refuse_unread", "ssm_bytes_of", "stage_pool"]
