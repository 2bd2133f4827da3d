"""The records of a `kvplan fit` search: the request (FitRequest), one screened deployment (Candidate), the
search's result (FitResult), and how candidates are ranked (rank_key, the objective's figure, the achievable
concurrency, the GPU's price)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..capacity.gpus import Gpu, LIST_PRICES
from ..capacity.hardware import Deployment
from ..planner import PlanResult
from ..units import GIB
from .flags import NO_FLAGS, FitFlags
from .grid import CAVEAT_RANK, Caveat


OBJECTIVES = ("gpus", "cost", "headroom")


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
        from .verify import check_engine

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


def objective_value(c: Candidate, objective: str) -> float:
    """The figure the objective minimises (headroom: minus the concurrency)."""
    if objective == "cost":
        return c.cost_per_hour if c.cost_per_hour is not None else math.inf
    if objective == "headroom":
        return -(c.max_concurrency or 0)
    return c.gpus


def achievable(c: Candidate) -> int:
    """Sequences that fit under both the planner's and (when checked) vLLM's accounting."""
    if c.engine_concurrency is not None:
        return min(c.max_concurrency, math.floor(c.engine_concurrency))
    return c.max_concurrency


__all__ = ["FitRequest", "FitResult", "Candidate", "OBJECTIVES", "price_of", "rank_key", "objective_value",
           "achievable"]
