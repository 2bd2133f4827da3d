"""The exhaustive search behind `kvplan fit`.

Two passes. The screen walks the whole grid (GPU kind x count x TP x PP x KV
dtype x technique set) with the planner's own pieces, computed once per
(technique set, split) and reused across GPU kinds: the shard of each
pipeline stage (capacity.shard), a sequence's bytes on it (capacity.pool
.batch_bytes), the weights on each stage (capacity.weights.stage_weight_bytes),
the decode bytes (capacity.costs.decode_cost) and, under --engine vllm,
vLLM's blocks (engines.vllm.simulate) and its predicted KV memory
(engines.vllm_report.kv_memory_of). The pool and concurrency per GPU kind are
then the same few lines of arithmetic `capacity.pool.capacity` does.
The options printed are evaluated again with `planner.evaluate` (and vLLM's
report) exactly as `kvplan estimate` evaluates them; an option whose
evaluation disagrees with the screen is dropped, never printed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

from ..capacity.costs import decode_cost
from ..capacity.gpus import Gpu, LIST_PRICES
from ..capacity.hardware import Deployment, make_deployment, split_engine_of
from ..capacity.pool import batch_bytes
from ..capacity.shard import shard
from ..capacity.weights import decode_read_bytes, engine_stage_delta, require_known, stage_weight_bytes
from ..errors import KvplanError, UsageError
from ..planner import PlanResult, compose, evaluate
from ..techniques.registry import build_all
from ..units import GIB
from .flags import NO_FLAGS, FitFlags, settings as flag_settings
from .grid import CAVEAT_RANK, Caveat, dp_splits, kv_dtype_caveat, split_reason, splits

OBJECTIVES = ("gpus", "cost", "headroom")
# most deployments one search screens: each is a Candidate in memory (10.5 million took 33 s and 3 GiB;
# 13 --allow techniques over every GPU and split ran for minutes before memory ran out)
MAX_SCREENED = 4_000_000


@dataclass(frozen=True)
class FitRequest:
    model: str
    context_tokens: int
    concurrency: int  # sequences of context_tokens that must fit at once
    gpus: tuple[Gpu, ...]
    max_gpus: int = 8
    allowed: tuple[str, ...] = ()  # technique specs the search may add
    kv_dtypes: tuple[str, ...] = ("auto", "fp8")
    base_techniques: tuple[str, ...] = ()  # applied to every option (a scenario's own list)
    engine: str = "ideal"  # ideal | vllm | vllm@VERSION | sglang
    speculation: object = None  # request.Speculation under vLLM: a draft's cache in the pool (engines.vllm_speculative)
    objective: str = "gpus"
    quality_first: bool = True  # options without caveats rank before cheaper ones with caveats
    mem_util: float = 0.9
    mem_util_given: bool = False  # --mem-util given: under SGLang also its mem_fraction_static (else SGLang's default)
    reserve_bytes: int = 2 * GIB
    weights: str = "auto"
    max_kv_gib: float | None = None
    max_decode_ms: float | None = None
    prices: dict = field(default_factory=dict)  # --price overrides: catalog name -> USD per GPU hour
    overrides: tuple[str, ...] = ()
    revision: str | None = None
    # (--quantization value, "vllm" or "sglang"): the engine quantizes the float checkpoint as it loads
    # (configs/quant_online.py; request.online_quantization)
    quantization: tuple[str, str] | None = None
    batch: int | None = None  # sequences planned for KV per GPU and decode (default: concurrency)
    context_given: bool = True  # False: the default 4,096 tokens, capped at the model's maximum once it is read
    # --dp-ep: a MoE model's data-parallel attention + expert-parallel splits too (dp x tp x pp GPUs, vLLM's
    # --data-parallel-size N --enable-expert-parallel [--pipeline-parallel-size P] as `kvplan estimate --dp N --ep
    # [--pp P]` plans them: capacity.experts, capacity.experts_pp; under --engine sglang, pp 1 only, SGLang's --tp
    # (dp x tp) --dp dp --enable-dp-attention: engines/sglang_dp.py)
    dp_ep: bool = False
    # estimate's deployment flags (fit/flags.py): the all-to-all backends, --gpus-per-node, SGLang's group flags,
    # vLLM's --mm-encoder-tp-mode, resolved for each candidate split
    flags: FitFlags = NO_FLAGS

    @property
    def batch_size(self) -> int:
        return self.batch or self.concurrency


@dataclass
class Candidate:
    gpu: Gpu
    tp: int
    pp: int
    kv_dtype: str
    techniques: tuple[str, ...]
    caveats: tuple[Caveat, ...]
    price_per_gpu_hour: float | None
    reason: str | None = None  # the binding constraint when the candidate fails
    constraint: str | None = None  # its short name: heads | weights | load | engine | pool | kv | decode
    max_concurrency: int | None = None
    engine_concurrency: float | None = None
    engine_kv_dtype: str | None = None  # the KV dtype the engine's pool stores (its own layout for some models)
    # the dtype the engine serves kv_dtype in where the name says otherwise (vLLM 0.34 below SM 8.0: bf16 as float16,
    # engines/vllm_sm7.py served_kv_dtype); shown in the labels, not a search key
    kv_served_as: str | None = None
    kv_bytes_per_gpu: int | None = None
    weight_bytes_per_gpu: int | None = None
    pool_bytes_per_gpu: int | None = None
    decode_ms_per_token: float | None = None
    misses: tuple[tuple[str, float, float], ...] = ()  # (budget, actual, limit) it misses
    result: PlanResult | None = None  # set once verified through planner.evaluate
    engine_checked: bool = False
    _plan: object = None
    dp: int = 1  # data-parallel attention ranks of tp x pp GPUs each, the routed experts split by expert (ep)
    ep: bool = False
    # SGLang's --tp (dp x tp) --dp dp --enable-dp-attention: tp is the attention TP, the dense MLPs, shared experts and
    # LM head over all dp x tp GPUs (Deployment.dense_over_all, engines/sglang_dp.py)
    dense_over_all: bool = False

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def layout(self) -> str:
        """"tp 8, pp 1", or "dp 8 x tp 1, pp 1, EP 8" (Deployment.layout_text, as `kvplan estimate` prints it)."""
        return Deployment(tp=self.tp, pp=self.pp, dp=self.dp, ep=self.ep, dense_over_all=self.dense_over_all).layout_text

    @property
    def ok(self) -> bool:
        return self.reason is None

    @property
    def cost_per_hour(self) -> float | None:
        return None if self.price_per_gpu_hour is None else self.price_per_gpu_hour * self.gpus

    @property
    def set_label(self) -> str:
        return " + ".join([f"kv {self.kv_dtype}", *self.techniques])

    @property
    def shown_set_label(self) -> str:
        """set_label with the dtype the engine serves the KV cache in where it differs ("kv bf16 (served as
        float16)"): the search groups and ranks by set_label."""
        if self.kv_served_as is None:
            return self.set_label
        return " + ".join([f"kv {self.kv_dtype} (served as {self.kv_served_as})", *self.techniques])

    @property
    def quality_tier(self) -> int:
        return max((CAVEAT_RANK.get(c.caveat, 0) for c in self.caveats), default=0)

    @property
    def caveat_text(self) -> str:
        worst = [c for c in self.caveats if c.caveat != "none"]
        return "; ".join(f"{c.what}: {c.caveat}" for c in worst) or "none"

    def label(self) -> str:
        return f"{self.gpus} x {self.gpu.name} ({self.layout}), {self.shown_set_label}"


@dataclass
class FitResult:
    request: FitRequest
    model_name: str
    options: list[Candidate]  # passing, ranked best first, verified
    candidates: list[Candidate]  # the whole screened grid
    rules_version: str | None  # the engine's release (vLLM's rules, SGLang's modelled release); None: ideal
    dropped: list[tuple[Candidate, str]]  # screened ok but the evaluation disagreed (should stay empty)
    skipped_sets: list[tuple[str, str]]  # (technique set, why it cannot apply to the model)
    engine: object = None
    record: object = None
    dp_ep_skipped: str | None = None  # why --dp-ep searched no DP + EP split

    @property
    def engine_label(self) -> str:
        return self.engine.label if self.engine is not None else "vLLM"

    def check_engine(self, c: Candidate) -> None:
        check_engine(self.request, self.engine, c, self.record)

    @property
    def passing(self) -> list[Candidate]:
        return [c for c in self.candidates if c.ok]


def price_of(gpu: Gpu, overrides: dict) -> float | None:
    if gpu.name in overrides:
        return overrides[gpu.name]
    entry = LIST_PRICES.get(gpu.name)
    return entry.usd_per_gpu_hour if entry else None


def rank_key(c: Candidate, objective: str, quality_first: bool = True):
    """Best first: the quality tier (when quality_first), the objective, fewer
    caveated techniques, then the other figures. Concurrency is the achievable
    one (vLLM's when checked), so an unchecked candidate's key is optimistic."""
    cost = c.cost_per_hour if c.cost_per_hour is not None else math.inf
    conc = -(achievable(c) if c.max_concurrency is not None else 0)
    tier = c.quality_tier if quality_first else 0
    caveated = sum(1 for x in c.caveats if x.caveat != "none")
    decode = c.decode_ms_per_token if c.decode_ms_per_token is not None else math.inf
    rest = (c.pp, c.tp, c.dp, c.gpu.name, c.set_label)
    if objective == "cost":
        return (tier, cost, caveated, c.gpus, conc, decode, *rest)
    if objective == "headroom":
        return (tier, conc, caveated, c.gpus, cost, decode, *rest)
    return (tier, c.gpus, caveated, cost, conc, decode, *rest)


def _ranked(req: FitRequest, engine: "_Engine", record, passing: list[Candidate], top: int | None) -> list[Candidate]:
    """The passing candidates best first. Under an engine, vLLM's accounting is
    run in order of the optimistic key until `top` survive and no unchecked
    candidate could still rank among them (the first two key fields bound it)."""
    def key(c):
        return rank_key(c, req.objective, req.quality_first)

    order = sorted(passing, key=key)
    if not engine.checks:
        return order
    kept: list[Candidate] = []
    for c in order:
        if top and len(kept) >= top:  # top 0 or None: every candidate checked
            bound = sorted(kept, key=key)[top - 1]
            if key(c)[:2] > key(bound)[:2]:
                break
        check_engine(req, engine, c, record)
        if c.ok:
            kept.append(c)
    return sorted(kept, key=key)


def objective_value(c: Candidate, objective: str) -> float:
    """The figure the objective minimises (headroom: minus the concurrency)."""
    if objective == "cost":
        return c.cost_per_hour if c.cost_per_hour is not None else math.inf
    if objective == "headroom":
        return -(c.max_concurrency or 0)
    return c.gpus


class _Engine:
    """vLLM's accounting for the screen, cached per (plan, split, batched tokens)."""

    def __init__(self, engine: str, tokens: int, speculation=None, mem_fraction_static: float | None = None,
                 need: int = 1):
        from ..engines.vllm_rules import parse_engine
        from ..request import _sglang_release, engine_family

        if engine_family(engine) == "sglang":
            self.name, self.rules, self.note = "sglang", None, None
            self.release = _sglang_release(engine)
        else:
            self.name, self.rules, self.note = parse_engine(engine)
            self.release = self.rules.version if self.rules is not None else None
        self.mem_fraction_static = mem_fraction_static  # SGLang's, when --mem-util was given
        if speculation is not None and self.name not in ("vllm", "sglang"):
            raise UsageError(f"{speculation.flag} is a vLLM setting: it needs --engine vllm (or vllm@VERSION)")
        self.speculation = speculation
        self.drafted = (0, 0, None)  # (MTP layers, draft tokens, draft checkpoint), resolved once per search
        self.sglang_spec = None  # SGLang's reading of the speculation (engines.sglang.Speculation), once
        # vLLM's PP check (engines.vllm_pp), once per search: why pp > 1 is left out, or a note where not known
        self.pp_refused: str | None = None
        self.pp_note: str | None = None
        self.tokens = tokens
        # --batch (default --concurrency): a pure state-space model's SGLang token pool is sized for those requests,
        # as `kvplan estimate --batch N --emit sglang` sizes it (the check command fit prints)
        self.need = need
        self.last_kv_dtype: str | None = None  # the KV dtype of the pool the last concurrency() read
        self.allow_long = os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "").lower() in ("1", "true")
        self._card_refusals: dict[tuple[str, str | None, bool], str | None] = {}
        self._pools: dict = {}
        self._memory: dict = {}

    @property
    def on(self) -> bool:
        """vLLM's accounting."""
        return self.name == "vllm"

    def served_kv_dtype(self, model, gpu: Gpu, kv_dtype: str) -> str | None:
        """The dtype vLLM serves `kv_dtype` in on `gpu` where the name says otherwise (engines/vllm_sm7.py); None
        under another engine (SGLang keeps bfloat16 below SM 8.0: engines/sglang_sm7.py), and where a KV quantizer
        technique stores the cache in its own dtype (the plan's `model` is passed to vLLM with another
        --kv-cache-dtype than auto: engines/vllm.py served_kv_cache)."""
        if not self.on:
            return None
        from ..engines.vllm import served_kv_cache
        from ..engines.vllm_rules import LATEST
        from ..engines.vllm_sm7 import served_kv_dtype

        if served_kv_cache(model, self.rules or LATEST)[0] != "auto":
            return None

        return served_kv_dtype(gpu.cuda_capability, self.release, kv_dtype)

    def card_refusal(self, model, gpu: Gpu, kv_dtype: str) -> str | None:
        """Why the engine refuses this model with this KV dtype on `gpu` whatever the split (a card below SM 8.0:
        engines/pre_ampere.py check_card), else None; once per card and KV dtype, for every candidate, so a
        candidate the planner fails is not offered as the closest when the engine refuses it."""
        if not self.checks or gpu.cuda_capability is None or gpu.cuda_capability >= (8, 0):
            return None
        from ..engines.vllm import served_kv_cache
        from ..engines.vllm_rules import LATEST

        # vLLM reads the cache's own dtype: a KV quantizer technique (--allow fp8) stores it in fp8 under "kv bf16"
        key = (gpu.name, kv_dtype if self.name == "sglang" else served_kv_cache(model, self.rules or LATEST))
        if key not in self._card_refusals:
            from ..engines.pre_ampere import check_card

            try:
                check_card(model, gpu.cuda_capability, self.name, self.release, self.rules, kv_dtype)
                self._card_refusals[key] = None
            except KvplanError as exc:
                self._card_refusals[key] = f"{self.label} would not start: {exc.message}"
        return self._card_refusals[key]

    @property
    def checks(self) -> bool:
        """An engine's own accounting checks the candidates (vLLM's or SGLang's)."""
        return self.name in ("vllm", "sglang")

    @property
    def label(self) -> str:
        return "SGLang" if self.name == "sglang" else "vLLM"

    def concurrency(self, plan, deployment: Deployment, key) -> float:
        """The engine's max concurrency for `plan` on `deployment` (raises KvplanError when it would refuse)."""
        if self.name == "sglang":
            return self._sglang_concurrency(plan, deployment, key)
        from ..engines.vllm import default_max_num_batched_tokens, simulate
        from ..engines.vllm_encoder_dp import tower_whole
        from ..engines.vllm_report import kv_memory_of

        mnbt = default_max_num_batched_tokens(deployment.gpu, self.rules)
        if deployment.dp > 1 and deployment.ep:  # DeepEP low-latency / NIXL EP: vLLM's batched-DP default (256)
            from ..engines.vllm_a2a import default_tokens

            mnbt = default_tokens(deployment.a2a) or mnbt
        # vLLM's profile sees the model's shape and the weights, not the KV techniques: one per GPU and split
        memory_key = (deployment.gpu.name, deployment.tp, deployment.pp, deployment.dp, mnbt)
        kv_memory = self._memory.get(memory_key)
        if kv_memory is None:
            drafts, tokens, draft = self.drafted  # the profile subtracts the drafter's weights too
            kv_memory = kv_memory_of(SimpleNamespace(deployment=deployment, plan=plan, capacity=None), self.rules,
                                     mnbt, draft_layers=drafts, draft=draft, draft_tokens=tokens).bytes
            self._memory[memory_key] = kv_memory
        pool_key = (key, mnbt, deployment.gpu.name)  # the GPU picks DeepSeek-V4.1's layout
        pool = self._pools.get(pool_key)
        if pool is None:
            drafts, tokens, draft = self.drafted
            pool = self._pools[pool_key] = simulate(
                plan.model, kv_memory_bytes=kv_memory, max_model_len=self.tokens, block_tokens=plan.block_size,
                tp=deployment.tp, pp=deployment.pp, max_num_batched_tokens=mnbt,
                hybrid_manager=plan.offload is None, rules=self.rules, allow_long_max_model_len=self.allow_long,
                max_num_seqs=self.rules.max_num_seqs(deployment.gpu.memory_bytes, deployment.gpu.name),
                draft_layers=drafts, num_speculative_tokens=tokens, draft_model=draft, gpu=deployment.gpu.name,
                dp=deployment.dp, ep=deployment.ep, a2a=deployment.a2a,
                encoder_data=tower_whole(plan.model, deployment.mm_encoder_tp_mode))
        if not pool.fits and pool.estimated_max_model_len is None:
            # a start refusal that is not about memory (a model with Mamba layers whose max_num_seqs exceeds the
            # blocks, 0.20+): the planner refuses the candidate, so the screen does too
            raise UsageError(pool.refusal or "vLLM would refuse to start")
        self.last_kv_dtype = getattr(pool, "kv_cache_dtype", None)
        return (kv_memory // pool.bytes_per_block) / pool.blocks_per_request

    def _sglang_concurrency(self, plan, deployment: Deployment, key) -> float:
        """SGLang's requests of the context its pool holds (kvplan.engines.sglang), the pool sized as
        `kvplan estimate --engine sglang` sizes it."""
        from ..engines.sglang_report import (check_context, chunked_prefill_of, draft_weights, memory_of, nsa_fp8,
                                             refuse_unread, resolve_speculation, ssm_bytes_of, stage_pool,
                                             state_model_pool, state_model_tokens)
        from ..engines.sglang_rules import rules_for

        rules = rules_for(self.release)
        refuse_unread(plan.model, deployment, rules)
        check_context(plan.model, self.tokens)  # a --context-length above the model's: SGLang refuses to start
        if self.sglang_spec is None and self.speculation is not None:  # once per search
            self.sglang_spec = resolve_speculation(plan.model, self.speculation)
        spec = self.sglang_spec
        result = SimpleNamespace(deployment=deployment, plan=plan, weights=deployment.weights)
        # attention DP adds its gather padding to the reserve (sglang_dp.gather_reserve_mib): one memory per dp
        memory_key = (deployment.gpu.name, deployment.tp, deployment.pp, deployment.dp, deployment.ep)
        rest = self._memory.get(memory_key)
        if rest is None:
            rest, _, _ = memory_of(result, self.mem_fraction_static, spec.algorithm if spec else None, rules,
                                   draft=draft_weights(result, spec, rules))
            self._memory[memory_key] = rest
        pool_key = (key, deployment.gpu.name)  # the pool is what the GPU's memory leaves, so one per GPU kind
        got = self._pools.get(pool_key)
        if got is None:
            kwargs = dict(tp=deployment.tp, page_size=plan.block_size or 1, ssm_bytes=ssm_bytes_of(plan.model)[0],
                          nsa_fp8=nsa_fp8(deployment), speculation=spec,
                          chunked_prefill_size=chunked_prefill_of(deployment, rules))
            got = stage_pool(result, rest, self.tokens, rules, **kwargs)[0]
            if state_model_tokens(got, self.need) is not None:  # the --max-total-tokens --emit sglang sets
                got = state_model_pool(result, rest, self.tokens, rules, self.need, **kwargs)[0]
            self._pools[pool_key] = got
        self.last_kv_dtype = got.kv_cache_dtype
        return got.max_concurrency


@dataclass
class _Stage:
    unique: int  # one sequence's own bytes on this stage's GPU
    shared: int  # its prefix blocks shared with other sequences
    fixed: int  # bytes held once whatever the batch
    per_token: int
    prefix: bool


class _Layers:
    """One TP rank's per-layer bytes for a plan, summed into stages by prefix sums.

    Every term capacity.pool.batch_bytes and capacity.capacity add up is a sum
    over layers, so a stage's figure is the sum over its layers; each distinct
    layer is measured once with batch_bytes on a one-layer model. A model with
    layers that reuse or read another layer's cache (shares_cache_of, borrows:
    DeepSeek-V4.1's layers reading a compressed cache held elsewhere) goes
    through capacity.shard instead (a stage boundary turns such a layer into an
    owner, which a one-layer measure cannot see)."""

    def __init__(self, plan, tokens: int, tp: int):
        self.plan, self.tokens, self.tp = plan, tokens, tp
        model = plan.model
        self.exact = any(layer.shares_cache_of is not None or layer.borrows for layer in model.layers)
        if self.exact:
            return
        from ..capacity.shard import shard_layer

        measured: dict[int, tuple[int, int, int, int]] = {}
        cums = [[0], [0], [0], [0]]
        for layer in model.layers:
            key = id(layer)
            row = measured.get(key)
            if row is None:
                one = replace(model, layers=(shard_layer(layer, tp),))
                seq = batch_bytes(plan, tokens, 1, one)
                caches = one.layers[0].caches
                row = measured[key] = (seq.kv_bytes_per_sequence + seq.state_bytes_per_sequence,
                                       seq.prefix_shared_bytes if plan.prefix is not None else 0,
                                       sum(c.fixed_bytes() for c in caches), sum(c.bytes_per_token() for c in caches))
            for cum, value in zip(cums, row):
                cum.append(cum[-1] + value)
        self.cums = cums

    def stages(self, pp: int) -> list[_Stage]:
        plan = self.plan
        prefix = plan.prefix is not None and plan.prefix.requests > 1
        if self.exact:
            out = []
            for stage in shard(plan.model, self.tp, pp):
                seq = batch_bytes(plan, self.tokens, 1, stage)
                owned = [(c, n) for layer, n in stage.groups if layer.shares_cache_of is None for c in layer.caches]
                out.append(_Stage(seq.kv_bytes_per_sequence + seq.state_bytes_per_sequence,
                                  seq.prefix_shared_bytes if plan.prefix is not None else 0,
                                  sum(c.fixed_bytes() * n for c, n in owned),
                                  sum(c.bytes_per_token() * n for c, n in owned), prefix))
            return out
        from ..capacity.shard import stage_bounds

        u, sh, fx, pt = self.cums
        return [_Stage(u[b] - u[a], sh[b] - sh[a], fx[b] - fx[a], pt[b] - pt[a], prefix)
                for a, b in stage_bounds(plan.model.num_layers, pp)]

    def batch_total(self, stage: _Stage, batch: int) -> int:
        """batch_bytes(plan, tokens, batch, stage).total_bytes from the stage's sums."""
        if not batch:
            return 0
        saved = 0
        if self.plan.prefix is not None:
            saved = max(min(self.plan.prefix.requests, batch) - 1, 0) * stage.shared
        return batch * stage.unique - saved + stage.fixed


def _fit(stage: _Stage, usable: int) -> int:
    """Sequences a stage's pool holds (capacity.pool.capacity's rule)."""
    if stage.prefix and usable >= stage.unique:
        return 1 + int((usable - stage.unique) // max(stage.unique - stage.shared, 1))
    return int(usable // stage.unique) if stage.unique else 0


def _miss_text(name: str, actual: float, limit: float, engine: str = "vLLM") -> str:
    if name == "concurrency":
        return f"pool too small: {actual:,.0f} sequences fit, {limit - actual:,.0f} short of {limit:,.0f}"
    if name == "kv":
        return f"KV per GPU {actual:,.2f} GiB is {actual - limit:,.2f} GiB above the budget {limit:,.2f} GiB"
    if name == "engine":
        return f"{engine}'s pool holds {actual:,.2f} sequences, {limit - actual:,.2f} short of {limit:,.0f}"
    if name == "load":
        return (f"{engine}'s load holds the float checkpoint first: {actual:,.2f} GiB per GPU, more than the "
                f"{limit:,.2f} GiB a GPU has by {actual - limit:,.2f} GiB")
    return f"decode floor {actual:,.2f} ms/token is {actual - limit:,.2f} ms above the budget {limit:,.2f} ms"


def _check_grid_size(req: FitRequest) -> None:
    """Refuse, before any work, a grid larger than MAX_SCREENED (its size is known from the options alone)."""
    from .grid import technique_sets

    # --dp-ep's DP + EP splits count as splits (the screen walks them as it walks TP x PP)
    layouts = len(splits(req.max_gpus)) + (len(dp_splits(req.max_gpus, _dp_with_pp(req))) if req.dp_ep else 0)
    sizes = (len(req.gpus), layouts, len(set(req.kv_dtypes)), len(technique_sets(list(req.allowed))))
    if math.prod(sizes) > MAX_SCREENED:
        raise UsageError(f"the search would screen {math.prod(sizes):,} deployments ({sizes[0]} GPU kinds x {sizes[1]:,} "
                         f"{'TP/PP and DP + EP' if req.dp_ep else 'TP/PP'} splits x {sizes[2]} KV dtypes x {sizes[3]:,} technique sets), above the limit of "
                         f"{MAX_SCREENED:,}", "narrow it: fewer GPU kinds (--gpu), a lower --max-gpus, "
                                              "fewer --allow techniques or --kv-dtype values")


def search(req: FitRequest, *, verify_top: int | None = 20) -> FitResult:
    """Screen the grid, rank what passes, evaluate the top options as `kvplan estimate` does."""
    from ..sources import load_model_and_weights
    from ..workflows import apply_kv_dtype

    if req.objective not in OBJECTIVES:
        from ..errors import UsageError

        raise UsageError(f"--objective {req.objective!r} is not one of {', '.join(OBJECTIVES)}")
    _check_grid_size(req)
    base, record = load_model_and_weights(req.model, revision=req.revision, overrides=list(req.overrides),
                                          weights=req.weights, quantization=req.quantization)
    require_known(record, base.name)  # every deployment's pool is its GPUs' memory less the weights
    longest = base.max_context_tokens
    if (not req.context_given and isinstance(longest, int) and not isinstance(longest, bool)
            and 0 < longest < req.context_tokens):
        from dataclasses import replace

        req = replace(req, context_tokens=longest)  # as `kvplan estimate` does without --context
    from ..workflows import warn_above_max_context

    warn_above_max_context(base, req.context_tokens)  # as `kvplan estimate` warns
    engine = _Engine(req.engine, req.context_tokens, req.speculation,
                     req.mem_util if req.mem_util_given else None, req.batch_size)
    # once, before the search, by the selected engine's rules: a model without a draft that engine serves is refused
    # (techniques change neither the MTP layers nor the draft checkpoint)
    if engine.name == "sglang":  # a vision tower SGLang builds at no split (its per-split refusals: _screen)
        from ..engines.sglang_vision_refusal import check_model as check_sglang_tower

        check_sglang_tower(base)
    if engine.speculation is not None and engine.name == "sglang":
        from ..engines.sglang_report import resolve_speculation as sglang_speculation

        engine.sglang_spec = sglang_speculation(base, engine.speculation)
    elif engine.speculation is not None:
        from ..engines.vllm_speculative import resolve_speculation

        engine.drafted = resolve_speculation(base, engine.speculation)
    if engine.on and req.max_gpus > 1:  # vLLM refuses pp > 1 for a class without SupportsPP: those splits are left out
        from ..engines.vllm_pp import pipeline_support

        pp = pipeline_support(base.registry_names, engine.release)
        if pp.supported is False:
            engine.pp_refused = (f"vLLM {pp.release} runs {pp.architecture} without pipeline parallelism only "
                                 "(no SupportsPP)")
        engine.pp_note = pp.note
    if engine.name == "sglang" and req.max_gpus > 1:  # SGLang asserts support_pp: those splits are left out
        from ..engines.sglang_pp import pipeline_support as sglang_pipeline_support
        from ..engines.sglang_rules import rules_for

        pp = sglang_pipeline_support(base.registry_names, rules_for(engine.release).release,
                                     base.config_model_type or base.model_type)
        if pp.supported is False:
            engine.pp_refused = (f"SGLang {pp.release} runs {pp.architecture} without pipeline parallelism only "
                                 "(its forward takes no pp_proxy_tensors)")
        engine.pp_note = pp.note
    if engine.on:  # vLLM holds (and reads) a float32 checkpoint's weights in bf16
        from ..engines.vllm_load import vllm_loaded

        record, _ = vllm_loaded(base, record)
    tokens, need = req.context_tokens, req.concurrency
    from .grid import technique_sets

    sets = technique_sets(list(req.allowed))
    grid = [(tp, pp, 1) for tp, pp in splits(req.max_gpus)]
    dp_skipped = None
    if req.dp_ep:
        dp_skipped = _dp_ep_refusal(req, base, record, engine)
        if dp_skipped is None:
            grid += [(tp, pp, dp) for dp, tp, pp in dp_splits(req.max_gpus, _dp_with_pp(req))]
    candidates: list[Candidate] = []
    skipped: list[tuple[str, str]] = []
    seen_dtypes = []
    weights_by_split: dict = {}
    seen_caches: dict = {}  # every cache's storage under a dtype searched -> that dtype
    for dtype_text in req.kv_dtypes:
        model, dtype = apply_kv_dtype(base, dtype_text)
        if dtype in seen_dtypes:
            continue
        caches = tuple(c.storage for layer in model.layers for c in layer.caches)
        if caches in seen_caches:  # no K/V or latent cache to store in it (a pure state-space model)
            skipped.append((f"kv {dtype}", f"{base.name} keeps no K/V cache for it to change: the same options as "
                                           f"kv {seen_caches[caches]}"))
            continue
        seen_caches[caches] = dtype
        seen_dtypes.append(dtype)
        dtype_caveat = Caveat(f"kv {dtype}", kv_dtype_caveat(dtype))
        for tset in sets:
            if dtype_caveat.caveat != "none" and any(s.split(":")[0].split(",")[0] in ("fp8", "int8", "int4", "int2", "kivi") for s in tset):
                continue  # a quantizer technique replaces the KV dtype: searched on auto only
            chain_specs = (*req.base_techniques, *tset)
            try:
                chain = build_all(list(chain_specs))
                plan = compose(model, chain)[-1]
            except KvplanError as exc:
                skipped.append((" + ".join([f"kv {dtype}", *tset]) , exc.message))
                continue
            caveats = (dtype_caveat, *(Caveat(t.spec, t.caveat) for t in chain))
            _screen(req, plan, record, engine, grid, dtype, tuple(chain_specs), caveats, tokens, need, candidates,
                    weights_by_split)
    passing = _ranked(req, engine, record, [c for c in candidates if c.ok], verify_top)
    options, dropped = _verify(req, base, record, engine, passing, verify_top)
    return FitResult(req, base.name, options, candidates, engine.release, dropped, skipped,
                     engine, record, dp_skipped)


def _dp_with_pp(req: FitRequest) -> bool:
    """Whether --dp-ep searches DP + EP splits with pipeline stages: vLLM's and the ideal accounting (capacity.
    experts_pp plans vLLM 0.34's DP with PP); not SGLang's, whose --dp / --ep with --pp kvplan has not read."""
    from ..request import engine_family

    return engine_family(req.engine) != "sglang"


def _dp_ep_refusal(req: FitRequest, model, record, engine: "_Engine") -> str | None:
    """Why --dp-ep searches no DP + EP split of `model` (None: it does)."""
    from ..capacity.experts import check_placement, is_moe

    if engine.name == "sglang":  # SGLang's attention DP, as `kvplan estimate --tp T --dp N --engine sglang` plans it
        from ..engines.sglang_dp import check_model

        try:
            check_model(model, 2)
        except KvplanError as exc:
            return exc.message
    if not is_moe(model) and engine.name == "sglang":  # SGLang takes --ep-size for it: engines/sglang_dp.py
        return (f"{model.name} has no routed experts (SGLang 0.5.23 takes --ep-size for it but places nothing by it: "
                "sglang_dp.dense_ep_refusal; its attention DP alone: kvplan estimate --tp T --dp N --engine sglang)")
    if not is_moe(model):
        return f"{model.name} has no routed experts (vLLM 0.34 refuses --enable-expert-parallel for it)"
    if req.max_decode_ms is not None:
        return ("--max-decode-ms: the decode floor is not modelled under data / expert parallelism (a step reads "
                "the experts its tokens are sent to on other ranks)")
    try:
        check_placement(model, record, 2, True, 1)
    except KvplanError as exc:
        return exc.message
    return None


def _screen(req, plan, record, engine, grid, dtype, techniques, caveats, tokens, need, out, weights_by_split):
    model = plan.model
    batch = req.batch_size
    resident = batch  # the sequences planned that stay on the GPUs
    if plan.offload is not None:
        from ..planner import _offload

        resident = batch - _offload(plan, batch_bytes(plan, tokens, batch), batch)[1]
    layers_by_tp: dict[int, _Layers] = {}
    read_by_tp: dict[int, int] = {}
    for tp, pp, dp in grid:
        bad = split_reason(model, tp, pp)
        if bad is None and pp > 1 and engine.pp_refused:
            bad = engine.pp_refused
        ep = _ep_of(engine, model, tp, dp, req.flags.redundant_experts)
        flags = {}
        if bad is None:  # estimate's flags on this split (fit/flags.py): a split that cannot take one is refused
            try:
                flags = _flags_of(req, engine.name, model, tp, pp, dp, ep)
            except UsageError as exc:
                bad = exc.message
        # as deployment_for's (capacity/placement.py)
        placement = _placement(engine.name, flags)
        if bad is None and engine.name == "sglang":  # a vision tower SGLang refuses at this split
            from ..engines.sglang_groups import encoder_whole
            from ..engines.sglang_vision_refusal import refusal

            # --mm-enable-dp-encoder: the tower whole, no heads to split (engines/sglang_report.py refuse_unread)
            bad = None if encoder_whole(model, flags.get("sglang_groups")) else refusal(model, tp, dp)
        if bad is None and engine.name == "vllm":  # a vision tower vLLM refuses at this TP
            from ..engines.vllm_encoder_dp import tower_whole
            from ..engines.vllm_vision_refusal import refusal as vllm_vision_refusal

            # --mm-encoder-tp-mode data: the tower whole, nothing to divide (engines/vllm_vision_refusal.py check)
            bad = None if tower_whole(model, flags.get("mm_encoder_tp_mode")) else vllm_vision_refusal(model, tp)
        if bad is None and engine.name == "vllm":  # a text MLP / expert width vLLM cannot split (engines/vllm_widths.py)
            from ..engines.vllm_widths import refusal as vllm_width_refusal

            bad = vllm_width_refusal(model, tp, dp, ep, engine.release, flags.get("a2a"))
        if bad is not None:
            for gpu in req.gpus:
                out.append(Candidate(gpu, tp, pp, dtype, techniques, caveats, price_of(gpu, req.prices),
                                     reason=bad, constraint="heads" if "heads" in bad else "split", dp=dp, ep=ep,
                                     dense_over_all=dp > 1 and engine.name == "sglang",
                                     kv_served_as=engine.served_kv_dtype(model, gpu, dtype)))
            continue
        stage_w = weights_by_split.get((tp, pp, dp))
        if stage_w is None:
            stage_w = stage_weight_bytes(record, model.num_layers, tp, pp)
            # each stage's routed experts split by expert over its dp x tp GPUs, SGLang's group flags, as
            # capacity.pool does (pool_bytes_per_stage)
            if dp > 1 or flags.get("sglang_groups") is not None:
                from ..capacity.experts_pp import stage_savings

                savings = stage_savings(model, record, tp, dp, ep, pp, dense_over_all=dp > 1 and engine.name == "sglang",
                                        redundant=flags.get("redundant_experts"), a2a=flags.get("a2a"), replicated_shared=flags.get("replicated_shared", False),
                                        placement=placement)
                stage_w = [w - saving for w, saving in zip(stage_w, savings)]
            extra = engine_stage_delta(model, record, tp, pp, dp, placement)
            if extra is not None:  # SGLang's vision tower split, as capacity.pool counts it
                stage_w = [w + more for w, more in zip(stage_w, extra)]
            weights_by_split[(tp, pp, dp)] = stage_w
        heaviest = max(stage_w)
        stages = None
        for gpu in req.gpus:
            c = Candidate(gpu, tp, pp, dtype, techniques, caveats, price_of(gpu, req.prices), dp=dp,
                          ep=ep, dense_over_all=dp > 1 and engine.name == "sglang",
                          kv_served_as=engine.served_kv_dtype(model, gpu, dtype))
            out.append(c)
            budget = int(gpu.usable_bytes * req.mem_util)
            pool = budget - heaviest - req.reserve_bytes  # the smallest pool: the heaviest stage's
            c.weight_bytes_per_gpu = heaviest
            refused = engine.card_refusal(model, gpu, dtype)
            if refused is not None:  # the engine refuses this card whatever the split (a card below SM 8.0)
                c.reason, c.constraint = refused, "card"
                continue
            if engine.name == "sglang":  # a text width SGLang cannot split on this card (engines/sglang_widths.py)
                from ..engines.sglang_widths import refusal as sglang_width_refusal, split_of

                why = sglang_width_refusal(model, split_of(model, tp, dp, c.ep, gpu, flags.get("a2a"),
                                                           flags.get("replicated_shared", False),
                                                           flags.get("sglang_groups")), engine.release)
                if why is not None:
                    c.reason, c.constraint = why, "split"
                    continue
            if pool <= 0:
                c.reason = (f"weights do not fit: {heaviest / GIB:,.2f} GiB + reserve {req.reserve_bytes / GIB:,.2f} GiB "
                            f"per GPU exceed the usable {budget / GIB:,.2f} GiB by {-pool / GIB:,.2f} GiB")
                c.constraint = "weights"
                c.misses = (("weights", (heaviest + req.reserve_bytes) / GIB, budget / GIB),)
                continue
            if engine.name == "sglang" and model.online_quantization:
                from ..configs.quant_online import sglang_load_excess, sglang_load_refusal

                # SGLang holds the float checkpoint's share before it quantizes: a split whose share does not fit
                # the GPU cannot start (configs/quant_online.py), whatever the quantized weights leave
                share = sglang_load_excess(model, gpu, tp, pp)
                if share is not None:
                    c.reason, c.constraint = sglang_load_refusal(model, gpu, tp, pp), "load"
                    c.misses = (("load", share / GIB, gpu.usable_bytes / GIB),)
                    continue
            if stages is None:
                table = layers_by_tp.get(tp)
                if table is None:
                    table = layers_by_tp[tp] = _Layers(plan, tokens, tp)
                    # the decode bytes per GPU do not depend on pp: every stage's reads are summed
                    unit = decode_cost(model, Deployment(gpu=replace(gpu, hbm_gbps=1.0), tp=tp, pp=1, weights=record),
                                       tokens, max(resident, 1), decode_read_bytes(record, model.num_layers))
                    read_by_tp[tp] = unit.weight_read_bytes_per_gpu + unit.kv_read_bytes_per_gpu
                stages = table.stages(pp)
                # each DP rank holds its own share of the batch (planner.evaluate: ceil(resident / dp))
                kv_gpu = max(table.batch_total(st, -(-resident // dp)) for st in stages)
                read_bytes = read_by_tp[tp] if dp == 1 else None  # no decode floor under DP / EP (planner)
                # stages alike in bytes and weights give the same fit: keep one of each
                distinct = list({(st.unique, st.shared, st.fixed, st.prefix, w): (st, w)
                                 for st, w in zip(stages, stage_w)}.values())
            c.pool_bytes_per_gpu = pool
            # a replica of dp ranks holds dp x one rank's sequences (capacity.pool.capacity)
            c.max_concurrency = dp * max(min(_fit(st, budget - w - req.reserve_bytes - st.fixed)
                                             for st, w in distinct), 0)
            c.kv_bytes_per_gpu = kv_gpu
            c.decode_ms_per_token = read_bytes / (gpu.hbm_gbps * 1e9) * 1e3 if gpu.hbm_gbps and read_bytes else None
            c._plan = plan  # for the engine check
            misses = []
            if c.max_concurrency < need:
                misses.append(("concurrency", c.max_concurrency, need))
            if req.max_kv_gib is not None and kv_gpu > req.max_kv_gib * GIB:
                misses.append(("kv", kv_gpu / GIB, req.max_kv_gib))
            if req.max_decode_ms is not None and (c.decode_ms_per_token is None or c.decode_ms_per_token > req.max_decode_ms):
                misses.append(("decode", c.decode_ms_per_token or math.inf, req.max_decode_ms))
            if misses:
                c.misses = tuple(misses)
                c.constraint = {"concurrency": "pool"}.get(misses[0][0], misses[0][0])
                c.reason = _miss_text(*misses[0])


def _flags_of(req: FitRequest, engine: str, model, tp: int, pp: int, dp: int, ep: bool) -> dict:
    """The Deployment fields estimate's flags give this split (fit/flags.py settings); raises UsageError where the
    split cannot take one."""
    return flag_settings(req.flags, engine, model, tp=tp, pp=pp, dp=dp, ep=ep, dense_over_all=dp > 1 and engine == "sglang")


def _placement(engine: str, flags: dict):
    """Deployment.placement of a candidate (request.py placement_of, from the split engine and the flags)."""
    from ..request import placement_of

    return placement_of(split_engine_of(engine, None), flags.get("sglang_groups"), flags.get("mm_encoder_tp_mode"))


def _ep_of(engine: "_Engine", model, tp: int, dp: int, redundant: str | None = None) -> bool:
    """Whether a DP split (dp > 1) places the routed experts whole by expert: always under vLLM (--dp-ep's
    --enable-expert-parallel); under SGLang --ep-size dp x tp where it divides the routed experts (FusedMoE asserts
    experts % ep_size == 0: sglang_dp.check_model), else the experts split over all dp x tp GPUs (MoE TP).
    redundant: fit's --redundant-experts R (SGLang takes an integer only): the physical experts, routed + R, divide
    (capacity/eplb.py check_redundant)."""
    if dp <= 1:
        return False
    if engine.name != "sglang":
        return True
    routed = model.weight_routed_params
    more = int(redundant) if redundant is not None and redundant != "auto" else 0
    return routed is not None and routed[0] > 0 and (routed[0] + more) % (dp * tp) == 0  # 0: a dense model


def check_engine(req: FitRequest, engine: "_Engine", c: Candidate, record) -> None:
    """vLLM's accounting for a candidate the planner passed (lazy: the screen
    runs it only on the candidates it ranks, explains or draws)."""
    if not engine.checks or c.engine_checked or c.max_concurrency is None:
        return
    c.engine_checked = True
    plan = c._plan
    flags = _flags_of(req, engine.name, plan.model, c.tp, c.pp, c.dp, c.ep)  # the screen passed them on this split
    dep = Deployment(c.gpu, c.tp, c.pp, req.mem_util, req.reserve_bytes, record.total_bytes, None, record, c.dp, c.ep,
                     c.dense_over_all, placement=_placement(engine.name, flags), **flags)
    try:
        # one DP rank's pool (each rank its own engine core): the replica serves dp x its requests
        c.engine_concurrency = c.dp * engine.concurrency(plan, dep, (id(plan), c.tp, c.pp, c.dp))
        c.engine_kv_dtype = engine.last_kv_dtype
    except KvplanError as exc:
        c.misses = (("engine", 0.0, req.concurrency), *c.misses)
        c.reason, c.constraint = f"{engine.label} would not start: {exc.message}", "engine"
        return
    if c.engine_concurrency < req.concurrency:
        c.misses = (("engine", c.engine_concurrency, req.concurrency), *c.misses)
        if c.reason is None:
            c.reason, c.constraint = _miss_text(*c.misses[0], engine.label), "engine"


def deployment_for(req: FitRequest, c: Candidate, record) -> Deployment:
    """The deployment `kvplan estimate --gpu G --tp T --pp P --mem-util --reserve` builds."""
    from ..request import engine_family

    engine = engine_family(req.engine)
    # estimate's flags on this split (fit/flags.py); the screen's model (EPLB's R follows its routed experts)
    flags = _flags_of(req, engine, c._plan.model, c.tp, c.pp, c.dp, c.ep)
    return make_deployment(c.gpu.name, tp=c.tp, pp=c.pp, mem_util=req.mem_util, reserve_bytes=req.reserve_bytes,
                           weight_bytes=record.total_bytes, dp=c.dp, ep=c.ep, dense_over_all=c.dense_over_all,
                           placement=_placement(engine, flags), **flags)


def _verify(req, base, record, engine, passing, top):
    """Evaluate the best `top` passing candidates (all when None) through planner.evaluate."""
    from ..workflows import apply_kv_dtype

    options, dropped = [], []
    for c in passing:
        if top is not None and len(options) >= top:
            break
        check_engine(req, engine, c, record)
        if not c.ok:
            continue  # vLLM's accounting holds fewer sequences
        model, _ = apply_kv_dtype(base, c.kv_dtype)
        try:
            result = evaluate(model, build_all(list(c.techniques)), req.context_tokens, req.batch_size,
                              deployment_for(req, c, record), weights=record)
        except KvplanError as exc:
            dropped.append((c, exc.message))
            continue
        problems = []
        if result.capacity.max_concurrency != c.max_concurrency:
            problems.append(f"concurrency {result.capacity.max_concurrency} (screen {c.max_concurrency})")
        if result.kv_bytes_per_gpu != c.kv_bytes_per_gpu:
            problems.append(f"KV per GPU {result.kv_bytes_per_gpu} (screen {c.kv_bytes_per_gpu})")
        if result.capacity.weight_bytes_per_gpu != c.weight_bytes_per_gpu:
            problems.append(f"weights per GPU {result.capacity.weight_bytes_per_gpu} (screen {c.weight_bytes_per_gpu})")
        if engine.on:
            from ..engines import vllm_report
            from ..render import Report

            try:
                pool = vllm_report.add_to_report(Report({}), result, req.context_tokens, rules=engine.rules,
                                                 speculation=engine.speculation)
            except KvplanError as exc:  # the screen passed what the engine model refuses: report, never crash
                dropped.append((c, f"vLLM: {exc.message}"))
                continue
            if abs(pool.max_concurrency * c.dp - c.engine_concurrency) > 1e-9 or not pool.fits:
                problems.append(f"vLLM concurrency {pool.max_concurrency * c.dp:.4f} "
                                f"(screen {c.engine_concurrency:.4f})")
        elif engine.name == "sglang":
            from ..engines import sglang_report
            from ..render import Report

            try:
                pool = sglang_report.add_to_report(Report({}), result, req.context_tokens,
                                                   mem_fraction_static=engine.mem_fraction_static,
                                                   speculation=engine.speculation, release=engine.release,
                                                   batch=req.batch_size)
            except KvplanError as exc:
                dropped.append((c, f"SGLang: {exc.message}"))
                continue
            if abs(pool.max_concurrency * c.dp - c.engine_concurrency) > 1e-9:  # one DP rank's pool, as vLLM's
                problems.append(f"SGLang concurrency {pool.max_concurrency * c.dp:.4f} "
                                f"(screen {c.engine_concurrency:.4f})")
        if result.decode is not None and c.decode_ms_per_token is not None \
                and abs(result.decode.step_ms - c.decode_ms_per_token) > 1e-6 * max(1.0, c.decode_ms_per_token):
            problems.append(f"decode {result.decode.step_ms} ms (screen {c.decode_ms_per_token})")
        if problems:
            dropped.append((c, "; ".join(problems)))
            continue
        c.result = result
        if result.decode is not None:
            c.decode_ms_per_token = result.decode.step_ms
        options.append(c)
    return options, dropped


def closest(result: FitResult) -> Candidate | None:
    """The candidate nearest to meeting every budget: the smallest worst relative miss."""
    def score(c: Candidate) -> float:
        worst = 0.0
        for name, actual, limit in c.misses:
            if name in ("concurrency", "engine"):
                worst = max(worst, (limit - actual) / limit if limit else 1.0)
            else:
                worst = max(worst, (actual - limit) / limit if limit else math.inf)
        return worst
    pool = [c for c in result.candidates if c.misses and c.constraint not in ("heads", "split", "card")]
    if not pool:
        return None
    fits = [c for c in pool if c.constraint not in ("weights", "load")]
    pick = fits or pool
    return min(pick, key=lambda c: (score(c), rank_key(c, result.request.objective, result.request.quality_first)))


def cheaper_failures(result: FitResult, winner: Candidate) -> list[Candidate]:
    """The failed candidates whose objective figure beats the winner's, best first."""
    objective = result.request.objective
    target = objective_value(winner, objective)
    failed = [c for c in result.candidates if not c.ok and c.constraint is not None]
    if objective == "headroom":
        failed = [c for c in failed if c.gpus <= winner.gpus]
    else:
        failed = [c for c in failed if objective_value(c, objective) < target]
    return sorted(failed, key=lambda c: (objective_value(c, objective) if objective != "headroom" else c.gpus,
                                         c.quality_tier, c.gpu.name, c.tp, c.pp, c.set_label))


def achievable(c: Candidate) -> int:
    """Sequences that fit under both the planner's and (when checked) vLLM's accounting."""
    if c.engine_concurrency is not None:
        return min(c.max_concurrency, math.floor(c.engine_concurrency))
    return c.max_concurrency


def pareto(result: FitResult, x: str = "gpus") -> dict[str, list[Candidate]]:
    """Per technique set: the candidates no other beats on both x (GPUs or cost)
    and concurrency, among those meeting every budget but concurrency. Under an
    engine each point is checked with its accounting as the walk reaches it."""
    out: dict[str, list[Candidate]] = {}
    by_set: dict[str, list[Candidate]] = {}
    for c in result.candidates:
        if c.max_concurrency is None or any(m[0] in ("kv", "decode") for m in c.misses):
            continue
        if x == "cost" and c.cost_per_hour is None:
            continue
        by_set.setdefault(c.set_label, []).append(c)
    xs = (lambda c: c.cost_per_hour) if x == "cost" else (lambda c: c.gpus)
    for label, cands in by_set.items():
        cands.sort(key=lambda c: (xs(c), -c.max_concurrency, c.pp, c.tp, c.gpu.name))
        front, best = [], -1
        i = 0
        while i < len(cands):  # one x value at a time: its best point joins the front if it beats the last
            j = i
            top = None
            while j < len(cands) and xs(cands[j]) == xs(cands[i]):
                c = cands[j]
                j += 1
                if c.max_concurrency <= max(best, achievable(top) if top else -1):
                    continue  # vLLM's accounting can only lower it
                result.check_engine(c)
                if c.constraint == "engine" and c.engine_concurrency is None:
                    continue  # vLLM would not start
                if top is None or achievable(c) > achievable(top):
                    top = c
            if top is not None and achievable(top) > best:
                front.append(top)
                best = achievable(top)
            i = j
        out[label] = front
    return out


__all__ = ["FitRequest", "FitResult", "Candidate", "search", "closest", "cheaper_failures", "pareto", "rank_key",
           "OBJECTIVES", "price_of", "deployment_for"]
