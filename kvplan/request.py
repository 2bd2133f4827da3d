"""What a user asks for, as small typed requests built once from options or YAML.

An estimate used to travel as 22 keyword arguments, and each command (estimate,
compare, sweep, scenarios) built its deployment and fed the checkpoint's weights
into it in its own way. Here:

- `ModelRef`: which model (name or path, revision, --set/--set-new, --weights);
- `DeploymentRequest`: GPU, parallelism and memory settings; `build(weights)`
  makes the `Deployment` with the checkpoint's bytes in it (estimate, sweep
  and scenarios share it);
- `EngineRequest`: the engine and release to model (`--engine`, `--emit`,
  `--max-model-len`);
- `Budgets`: the CI limits (`--max-kv-gib`, `--min-concurrency`);
- `EstimateRequest`: all of the above with the context, batch, KV dtype and
  techniques; `from_options` parses command-line strings and checks them before
  anything is loaded.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ._record import record
from .capacity.hardware import DEFAULT_MEM_UTIL, DEFAULT_RESERVE_BYTES, split_engine_of
from .errors import UsageError
from .units import check_number, parse_positive_int, parse_size, parse_tokens

DEFAULT_CONTEXT_TOKENS = 4096  # `kvplan estimate` without --context (capped at the model's maximum)

if TYPE_CHECKING:
    from .capacity.hardware import Deployment
    from .weights.record import Weights


@record
class ModelRef:
    name: str
    revision: str | None = None
    overrides: tuple[str, ...] = ()
    new_overrides: tuple[str, ...] = ()
    weights: str | None = "auto"  # "auto", a size, or a checkpoint path (kvplan.weights)
    # (--quantization value, "vllm" or "sglang"): the engine quantizes the float checkpoint as it loads
    # (configs/quant_online.py); None: served as stored
    quantization: tuple[str, str] | None = None

    def load(self):
        """(ModelSpec, Weights, overrides applied)."""
        from .sources import load_everything

        return load_everything(self.name, revision=self.revision, overrides=self.overrides,
                               new=self.new_overrides, weights=self.weights, quantization=self.quantization)


def online_quantization(value: str | None, engine: str, release: str | None) -> tuple[str, str] | None:
    """--quantization checked against the engine whose rule sizes it (engine: "vllm" or "sglang", the release it
    is modelled at; None: the newest): (value, engine), or UsageError in one line."""
    if value is None:
        return None
    from .configs.quant_online import READ_RELEASES, check
    from .core.releases import release_key  # "0.34" and "0.34.0" are one release

    if release is not None and release_key(release) != release_key(READ_RELEASES[engine]):
        raise UsageError(f"--quantization {value}: kvplan has read the online quantization of "
                         f"{engine} {READ_RELEASES[engine]} only, not {release}",
                         f"name {engine} without a release in --engine / --emit (its newest), or leave "
                         "--quantization out")
    return check(value, engine), engine


def online_without_engine(value: str | None) -> tuple[str, str] | None:
    """--quantization of the commands and files that model no engine (compare, sweep, a scenario's
    deployment.quantization): vLLM 0.34's rule, as `kvplan estimate` takes it without --engine or --emit."""
    return online_quantization(value, "vllm", None)


@record
class DeploymentRequest:
    gpu: str | None = None
    gpu_memory_bytes: int | None = None
    hbm_gbps: float | None = None
    tp: int = 1
    pp: int = 1
    mem_util: float = DEFAULT_MEM_UTIL
    reserve_bytes: int = DEFAULT_RESERVE_BYTES
    kv_memory_bytes: int | None = None
    weight_bytes: int | None = None  # a whole-model size given by the user; wins over the checkpoint's
    dp: int = 1  # data-parallel attention ranks (vLLM --data-parallel-size): capacity.experts
    ep: bool = False  # the routed experts split by expert over dp x tp GPUs (vLLM --enable-expert-parallel)
    dense_over_all: bool = False  # SGLang's attention DP (engines/sglang_dp.py): capacity.hardware.Deployment
    a2a: str | None = None  # the MoE all-to-all backend (engines/vllm_a2a.py, engines/sglang_a2a.py)
    replicated_shared: bool = False  # SGLang's backend holds the shared experts whole: capacity.hardware.Deployment
    sglang_groups: object = None  # SGLang's --enable-dp-lm-head / --moe-dense-tp-size (engines/sglang_groups.py)
    mm_encoder_tp_mode: str | None = None  # vLLM's --mm-encoder-tp-mode (engines/vllm_encoder_dp.py)
    redundant_experts: int | None = None  # EPLB's redundant experts (--redundant-experts): capacity/eplb.py
    redundant_auto: bool = False  # --redundant-experts auto: vLLM's default R, resolved once the model is known
    split_engine: str = "vllm"  # whose module split the plan's weights follow: placement_of
    gpus_per_node: int = 8  # --gpus-per-node: which EP ranks share a node (engines/ep_nodes.py)

    @property
    def has_memory(self) -> bool:
        return bool(self.gpu is not None or self.gpu_memory_bytes or self.kv_memory_bytes)

    def build(self, weights: Weights | None = None) -> Deployment | None:
        """The deployment, None when nothing about the hardware was asked.

        Checks come first (a bad GPU name or --mem-util fails before any plan).
        The checkpoint's `weights` are used unless the request gives a size.
        """
        from .capacity.hardware import make_deployment

        if not self.has_memory and self.tp == 1 and self.pp == 1 and self.dp == 1 and not self.ep:
            return None
        placement = placement_of(self.split_engine, self.sglang_groups, self.mm_encoder_tp_mode)
        if not self.has_memory:
            return make_deployment(None, tp=self.tp, pp=self.pp, dp=self.dp, ep=self.ep,
                                   dense_over_all=self.dense_over_all, a2a=self.a2a,
                                   replicated_shared=self.replicated_shared, sglang_groups=self.sglang_groups,
                                   mm_encoder_tp_mode=self.mm_encoder_tp_mode,
                                   redundant_experts=self.redundant_experts, eplb_default=self.redundant_auto,
                                   placement=placement, gpus_per_node=self.gpus_per_node)
        deployment = make_deployment(self.gpu, gpu_memory=self.gpu_memory_bytes, hbm_gbps=self.hbm_gbps,
                                     tp=self.tp, pp=self.pp, mem_util=self.mem_util,
                                     reserve_bytes=self.reserve_bytes, weight_bytes=self.weight_bytes,
                                     kv_memory_bytes=self.kv_memory_bytes, dp=self.dp, ep=self.ep,
                                     dense_over_all=self.dense_over_all, a2a=self.a2a,
                                     replicated_shared=self.replicated_shared, sglang_groups=self.sglang_groups,
                                     mm_encoder_tp_mode=self.mm_encoder_tp_mode,
                                     redundant_experts=self.redundant_experts, eplb_default=self.redundant_auto,
                                     placement=placement, gpus_per_node=self.gpus_per_node)
        if self.weight_bytes is None and weights is not None:
            deployment = replace(deployment, weights=weights, weight_bytes=weights.total_bytes)
        return deployment


@record
class Speculation:
    """vLLM speculative decoding as asked (--mtp, --draft-model, --num-speculative-tokens): the
    checkpoint's MTP layers or a separate draft checkpoint, and the draft tokens a step."""

    mtp: bool = False
    draft_model: str | None = None  # a bundled name, a config.json or a Hub id
    tokens: int | None = None  # num_speculative_tokens (None with mtp: vLLM's default, one per MTP layer)

    @classmethod
    def parse(cls, mtp: bool = False, draft_model: str | None = None, tokens: int | None = None) -> Speculation | None:
        check_number(tokens, "--num-speculative-tokens", minimum=1, maximum=64)
        if tokens is not None and not (mtp or draft_model):
            raise UsageError("--num-speculative-tokens sizes a draft: it needs --mtp or --draft-model")
        if draft_model is not None and mtp:
            raise UsageError("--mtp and --draft-model are two kinds of draft: give one")
        if draft_model is not None and tokens is None:
            raise UsageError("--draft-model needs --num-speculative-tokens (vLLM requires it for EAGLE heads and "
                             "draft models)")
        return cls(mtp, draft_model, tokens) if mtp or draft_model else None

    @property
    def flag(self) -> str:
        return "--mtp" if self.mtp else "--draft-model"


@record
class EngineRequest:
    name: str = "ideal"  # "ideal" | "vllm"
    rules: object | None = None  # engines.vllm_rules.VllmRules for vllm
    note: str | None = None  # e.g. a version between two modelled releases
    emit: str | None = None  # "vllm" for --emit
    emit_rules: object | None = None
    max_model_len: int | None = None  # None: the context
    release: str | None = None  # the vLLM release asked for ("0.11.0"; None: the rules' own, i.e. latest)
    emit_release: str | None = None  # the same for --emit
    max_num_seqs: int | None = None  # vLLM's --max-num-seqs, SGLang's --max-running-requests (None: their default)
    enforce_eager: bool = False  # vLLM's --enforce-eager
    speculation: Speculation | None = None  # vLLM's --speculative-config: the draft's cache in the pool
    mem_fraction_static: float | None = None  # sglang: --mem-util as given (None: SGLang's default for the card)

    @classmethod
    def parse(cls, engine: str = "ideal", emit: str | None = None, max_model_len: str | None = None,
              max_num_seqs: int | None = None, enforce_eager: bool = False,
              speculation: Speculation | None = None) -> EngineRequest:
        length = parse_tokens(max_model_len, "--max-model-len") if max_model_len else None
        check_number(max_num_seqs, "--max-num-seqs", minimum=1, maximum=2**31 - 1)
        rules = note = emit_rules = release = emit_release = None
        if engine_family(engine) == "sglang":
            engine, release = "sglang", _sglang_release(engine)
        elif engine.strip().lower() != "ideal" or emit is not None:  # the engine modules load only when used
            from .engines.vllm_rules import parse_engine

            release = _asked_release(engine)
            engine, rules, note = parse_engine(engine)
        else:
            engine = "ideal"
        if emit is not None and engine_family(emit) == "sglang":
            emit_release = _sglang_release(emit, "--emit") if "@" in emit or engine != "sglang" else release
            emit = "sglang"
        elif emit is not None:
            if engine_family(emit) != "vllm":
                raise UsageError(f"--emit {emit!r}: only vllm[@VERSION] or sglang is supported")
            pinned = "@" in emit
            emit_release = _asked_release(emit)
            from .engines.vllm_rules import parse_engine

            emit, emit_rules, _ = parse_engine(emit)
            if not pinned and rules is not None:  # --engine vllm@0.11 --emit vllm: one release
                emit_rules, emit_release = rules, release
        if length is not None and engine == "ideal" and emit is None:
            raise UsageError("--max-model-len is an engine setting: it needs --engine vllm|sglang or --emit",
                             "leave it out (the context is --context), or name the engine")
        sglang = "sglang" in (engine, emit)
        if ((max_num_seqs is not None and not sglang) or enforce_eager or (speculation and not sglang)) \
                and rules is None and emit_rules is None:
            flag = ("--max-num-seqs" if max_num_seqs is not None else "--enforce-eager" if enforce_eager else
                    speculation.flag)
            raise UsageError(f"{flag} is a vLLM setting: it needs --engine vllm or --emit vllm (or vllm@VERSION)"
                             + ("" if flag != getattr(speculation, "flag", None) else ", or SGLang"))
        return cls(engine, rules, note, emit, emit_rules, length, release, emit_release, max_num_seqs,
                   enforce_eager, speculation)


def placement_of(split_engine: str, groups=None, encoder_mode: str | None = None):
    """Deployment.placement (capacity/placement.py): where the engine whose split the plan follows (split_engine,
    capacity.hardware.split_engine_of) places weights otherwise than kvplan's (vLLM 0.34's) split. "sglang": SGLang
    0.5.23's tower split and its group flags `groups` (engines/sglang_placement.py); "vllm" with --mm-encoder-tp-mode
    data (`encoder_mode`): the tower whole on every GPU (engines/vllm_encoder_dp.py); else the default, nothing. The
    engine modules load only for those (tests/test_speed_paths.py)."""
    if split_engine == "sglang":
        from .engines.sglang_placement import SglangPlacement

        return SglangPlacement(groups)
    if encoder_mode == "data":
        from .engines.vllm_encoder_dp import ENCODER_DATA

        return ENCODER_DATA
    from .capacity.placement import VLLM_SPLIT

    return VLLM_SPLIT


def engine_family(engine: str) -> str:
    """'sglang@0.5.9' -> 'sglang', 'vllm@0.11' -> 'vllm': the engine an --engine / --emit value names."""
    return engine.partition("@")[0].strip().lower()


def _sglang_release(engine: str, flag: str = "--engine") -> str:
    """'sglang' -> the newest SGLang release modelled; 'sglang@0.5.9' -> that one; another release is refused."""
    from .engines.sglang_rules import rules_for

    if "@" in engine and not engine.partition("@")[2].strip():  # 'sglang@' ran as the newest release: as vllm@, refused
        raise UsageError(f"{flag} {engine!r}: give a release after @, e.g. sglang@0.5.9")
    return rules_for(_asked_release(engine)).release


def _asked_release(engine: str) -> str | None:
    """'vllm@0.11.0' -> '0.11.0'; None for 'vllm', 'vllm@latest' (the rules' own release)."""
    asked = engine.partition("@")[2].strip().lstrip("v")
    return asked if asked and asked != "latest" else None


def _online_targets(engine: EngineRequest) -> list[tuple[str, str | None]]:
    """(engine, release) pairs whose --quantization rule applies: the engine modelled first (none: the one emitted, or
    vLLM's newest), then the engine --emit names where it differs."""
    def vllm_release(asked: str | None, rules) -> str | None:  # the release asked (vllm@0.34.1), as fit checks it
        return asked if asked is not None else rules.version if rules is not None else None

    modelled = (("sglang", engine.release) if engine.name == "sglang" else
                ("vllm", vllm_release(engine.release, engine.rules)) if engine.name == "vllm" else None)
    emitted = (("sglang", engine.emit_release) if engine.emit == "sglang" else
               ("vllm", vllm_release(engine.emit_release, engine.emit_rules)) if engine.emit == "vllm" else None)
    targets = [t for t in (modelled, emitted) if t is not None] or [("vllm", None)]
    return targets[:1] + [t for t in targets[1:] if t != targets[0]]


@record
class Budgets:
    max_kv_gib: float | None = None
    min_concurrency: int | None = None


@record
class EstimateRequest:
    model: ModelRef
    context_tokens: int
    batch: int = 1
    kv_dtype: str = "auto"
    techniques: tuple[str, ...] = ()
    deployment: DeploymentRequest = DeploymentRequest()
    engine: EngineRequest = EngineRequest()
    budgets: Budgets = Budgets()
    explain: bool = False
    context_given: bool = True  # False: the default 4,096, which the workflow caps at the model's maximum

    @classmethod
    def from_options(cls, *, model, context=None, batch="1", kv_dtype="auto", techniques=(), gpu=None,
                     gpu_memory=None, hbm_gbps=None, tp=1, pp=1, dp=1, ep=False, redundant_experts=None, mem_util=None,
                     reserve="2GiB",
                     weights="auto", kv_memory=None, engine="ideal", max_model_len=None, max_num_seqs=None,
                     enforce_eager=False, mtp=False, num_speculative_tokens=None, draft_model=None,
                     max_kv_gib=None,
                     min_concurrency=None, emit=None, overrides=(), new_overrides=(), revision=None,
                     explain=False, quantization=None, all2all_backend=None,
                     moe_a2a_backend=None, gpus_per_node=8, enable_dp_lm_head=False, moe_dense_tp_size=None,
                     mm_enable_dp_encoder=False, mm_encoder_tp_mode=None) -> EstimateRequest:
        """Command-line strings parsed and checked (exit 2 on a bad one), nothing loaded yet."""
        tokens = parse_tokens(context if context is not None else str(DEFAULT_CONTEXT_TOKENS), "--context")
        batch_n = parse_positive_int(batch, "--batch")
        check_number(hbm_gbps, "--hbm-gbps", minimum=0, strict=True, maximum=1e6)
        check_number(max_kv_gib, "--max-kv-gib", minimum=0, strict=True, maximum=2**30)
        check_number(min_concurrency, "--min-concurrency", minimum=1, maximum=2**40)
        check_number(mem_util, "--mem-util", minimum=0, strict=True, maximum=1)
        engine_request = EngineRequest.parse(engine, emit, max_model_len, max_num_seqs, enforce_eager,
                                             Speculation.parse(mtp, draft_model, num_speculative_tokens))
        if kv_memory:  # SGLang's launch line takes --mem-util as its --mem-fraction-static: not unused there
            _warn_unused_with_kv_memory(None if "sglang" in (engine_request.name, engine_request.emit) else mem_util,
                                        reserve)
        if "sglang" in (engine_request.name, engine_request.emit):  # SGLang's --mem-fraction-static: its default
            engine_request = replace(engine_request, mem_fraction_static=mem_util)
        if mem_util is None:  # the engine's own default: vLLM's changed from 0.90 to 0.92 in 0.20
            rules = engine_request.rules
            mem_util = rules.gpu_memory_utilization if rules is not None else DEFAULT_MEM_UTIL
        reserve_bytes = parse_size(reserve, "--reserve", allow_zero=True)
        if dp < 1:
            raise UsageError(f"--dp must be a positive integer, got {dp}")
        from .capacity.eplb import check_redundant, parse_redundant

        redundant_experts, redundant_auto = parse_redundant(redundant_experts, engine_request.name, engine_request.emit)
        if redundant_auto and not ep:
            raise UsageError("--redundant-experts auto without --ep: vLLM's EPLB places redundant experts over the EP "
                             "ranks (\"enable_expert_parallel must be True to use EPLB\")", "add --ep")
        if redundant_experts is not None and not ep:  # the rest: capacity/eplb.py check_redundant, model known
            check_redundant(None, redundant_experts, ep, 1, engine_request.name)
        groups = _sglang_groups(enable_dp_lm_head, moe_dense_tp_size, mm_enable_dp_encoder, engine_request, tp, pp)
        encoder_mode = _vllm_encoder_mode(mm_encoder_tp_mode, engine_request)
        if dp > 1 and "sglang" in (engine_request.name, engine_request.emit):
            # SGLang's --tp T --dp N --enable-dp-attention: T GPUs, N attention groups of T / N (engines/sglang_dp.py)
            if "vllm" in (engine_request.name, engine_request.emit):
                raise UsageError(f"--dp {dp} means {dp} x --tp GPUs to vLLM but --tp GPUs to SGLang's "
                                 f"attention DP (--attn-dp-size {dp}, formerly --enable-dp-attention)",
                                 "plan and emit one engine")
            from .engines.sglang_dp import attention_tp

            tp = attention_tp(tp, dp, pp)
        if gpu is not None:  # here, where --gpu-memory and --hbm-gbps exist, an unknown GPU's hint names them
            from .capacity.gpus import lookup

            lookup(gpu, custom_hint=True)
        check_gpus_per_node(gpus_per_node)
        a2a = _a2a_backend(all2all_backend, moe_a2a_backend, engine_request, dp, ep, tp=tp, pp=pp,
                           gpus_per_node=gpus_per_node)
        deployment = DeploymentRequest(
            gpu=gpu, gpu_memory_bytes=parse_size(gpu_memory, "--gpu-memory") if gpu_memory else None,
            hbm_gbps=hbm_gbps, tp=tp, pp=pp, dp=dp, ep=ep, redundant_experts=redundant_experts,
            redundant_auto=redundant_auto, mem_util=mem_util,
            reserve_bytes=reserve_bytes,
            dense_over_all=dp > 1 and "sglang" in (engine_request.name, engine_request.emit), a2a=a2a,
            replicated_shared=moe_a2a_backend is not None and _sglang_replicates_shared(a2a),  # SGLang's flag only
            sglang_groups=groups, mm_encoder_tp_mode=encoder_mode,
            kv_memory_bytes=parse_size(kv_memory, "--kv-memory") if kv_memory else None,
            split_engine=split_engine_of(engine_request.name, engine_request.emit), gpus_per_node=gpus_per_node)
        # --quantization: the rule of the engine modelled (with none, the one emitted; else vLLM's) sizes it, and an
        # --emit of another engine or release must take the flag too, as the command it prints passes it on
        targets = _online_targets(engine_request)
        online = online_quantization(quantization, *targets[0])
        for kind, release in targets[1:]:
            online_quantization(quantization, kind, release)
        return cls(ModelRef(model, revision, tuple(overrides or ()), tuple(new_overrides or ()), weights, online),
                   tokens, batch_n, kv_dtype, tuple(techniques or ()), deployment, engine_request,
                   Budgets(max_kv_gib, min_concurrency), explain, context_given=context is not None)

    @property
    def engine_tokens(self) -> int:
        """vLLM's max_model_len: --max-model-len, else the context."""
        return self.engine.max_model_len or self.context_tokens


def _sglang_replicates_shared(backend: str | None) -> bool:
    """engines/sglang_a2a.py replicates_shared, imported only where SGLang's --moe-a2a-backend was given (the plain
    estimate path stays free of the engine modules: tests/test_speed_paths.py)."""
    if backend is None:
        return False
    from .engines.sglang_a2a import replicates_shared

    return replicates_shared(backend)


def _sglang_groups(dp_lm_head, dense_tp, dp_encoder, engine: EngineRequest, tp: int, pp: int):
    """engines/sglang_groups.py parse (tp: SGLang's --tp, before --dp makes it the attention TP), imported only where
    one of its flags was given (tests/test_speed_paths.py)."""
    if not dp_lm_head and dense_tp is None and not dp_encoder:
        return None
    from .engines.sglang_groups import parse

    return parse(dp_lm_head, dense_tp, (engine.name, engine.emit), tp, pp, dp_encoder)


def _vllm_encoder_mode(mode, engine: EngineRequest) -> str | None:
    """engines/vllm_encoder_dp.py parse, imported only where the flag was given (tests/test_speed_paths.py)."""
    if mode is None:
        return None
    from .engines.vllm_encoder_dp import parse

    return parse(mode, (engine.name, engine.emit))


def check_gpus_per_node(gpus_per_node: int) -> None:
    """--gpus-per-node, which estimate and fit take alike: a host's GPUs, at least 1 (engines/ep_nodes.py)."""
    if gpus_per_node < 1:
        raise UsageError(f"--gpus-per-node must be a positive integer, got {gpus_per_node}")


def _a2a_backend(vllm_name, sglang_name, engine: EngineRequest, dp: int, ep: bool, *, tp: int, pp: int,
                 gpus_per_node: int) -> str | None:
    """--all2all-backend (vLLM's) or --moe-a2a-backend (SGLang's) checked against the engine planned or emitted
    (engines/vllm_a2a.py, engines/sglang_a2a.py); None where neither is given. tp: the TP of one DP rank (SGLang's
    attention TP under attention DP)."""
    engines = (engine.name, engine.emit)
    if vllm_name is None and sglang_name is None:
        return None
    from .engines.flag_owner import require

    if vllm_name is not None:
        require("--all2all-backend", "vllm", engines, "SGLang's is --moe-a2a-backend", alone=sglang_name is None)
        from .engines.vllm_a2a import check_backend

        return check_backend(vllm_name, dp, ep, tp=tp, pp=pp, gpus_per_node=gpus_per_node)
    require("--moe-a2a-backend", "sglang", engines, "vLLM's is --all2all-backend")
    from .engines.sglang_a2a import check_backend as check_sglang

    # SGLang's EP group is its whole --tp: dp x the attention TP `tp` under attention DP (engines/sglang_dp.py)
    return check_sglang(sglang_name, ep, tp * dp)


def _warn_unused_with_kv_memory(mem_util, reserve) -> None:
    """--mem-util and --reserve size the KV pool from the GPU's memory; --kv-memory gives the pool itself, and
    then they change no figure (each engine's pool is --kv-memory: capacity.pool.pool_bytes_per_stage,
    engines.vllm_report.kv_memory_of, engines.sglang_report; with SGLang --mem-util is still its launch line's
    --mem-fraction-static, and the caller leaves it out). Said, not refused: a script may pass them always."""
    unused = [flag for flag, given in (("--mem-util", mem_util is not None),
                                       ("--reserve", str(reserve).strip() != DEFAULT_RESERVE_TEXT)) if given]
    if unused:
        import warnings

        from .errors import KvplanWarning

        two = len(unused) > 1
        warnings.warn(f"{' and '.join(unused)} {'change' if two else 'changes'} nothing here: --kv-memory gives the "
                      f"KV pool per GPU directly (without it, {'they size' if two else 'it sizes'} the pool from the "
                      "GPU's memory)", KvplanWarning, stacklevel=3)


DEFAULT_RESERVE_TEXT = "2GiB"  # the --reserve default of estimate and fit (kvplan.cli.estimate, kvplan.cli.fit)


__all__ = ["ModelRef", "DeploymentRequest", "EngineRequest", "Budgets", "EstimateRequest", "DEFAULT_CONTEXT_TOKENS"]
