"""The search grid: valid (TP, PP) splits, technique sets, prices.

A split is valid when vLLM would start it: the query heads divide by TP, and
every attention layer's KV heads either divide by TP or divide TP (then each
KV head is replicated on tp / kv_heads ranks, which the shard counts); PP
cannot exceed the layers.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ..capacity.gpus import CATALOG, Gpu, lookup
from ..core.model import ModelSpec
from ..errors import UsageError
from ..techniques.base import ENGINE_SUPPORT, NEEDS_TRAINING, NONE, QUALITY_RISK
from ..techniques.registry import ALIASES, CATALOG as TECHNIQUES, build

# What a bare name in --allow means (a technique needing a parameter gets this default).
DEFAULT_SPECS = {
    "evict": "evict:0.5",
    "pyramid": "pyramid:0.5",
    "page": "page:16",
    "offload": "offload:cpu=512GiB",
    "window": "window:4096",
    "gqa": "gqa:8",
    "cla": "cla:2",
    "prefix": "prefix:tokens=2048,requests=16",
    "quest": "quest:page=16,topk=64",
    "csa": "csa:m=4,k=512,window=128",
}
# how much a caveat costs in the ranking (lower is better)
CAVEAT_RANK = {NONE: 0, ENGINE_SUPPORT: 1, QUALITY_RISK: 2, NEEDS_TRAINING: 3}
QUANTIZERS = {"fp8", "int8", "int4", "int2", "kivi"}


def split_reason(model: ModelSpec, tp: int, pp: int) -> str | None:
    """Why (tp, pp) is not a valid split of `model`, or None when it is."""
    if pp > model.num_layers:
        return f"pp {pp} exceeds the {model.num_layers} layers"
    heads = model.num_attention_heads
    if heads and heads % tp:
        return f"heads not divisible: {heads} query heads by tp {tp}"
    for layer in model.layers:
        for cache in layer.caches:
            if cache.kind == "attention" and cache.heads % tp and tp % cache.heads:
                return f"heads not divisible: {cache.heads} KV heads and tp {tp}"
    return None


def splits(max_gpus: int, tp_limit: int | None = None) -> list[tuple[int, int]]:
    """Every (tp, pp) with tp x pp <= max_gpus, fewest GPUs first."""
    out = []
    for n in range(1, max_gpus + 1):
        for tp in range(1, n + 1):
            if n % tp == 0 and (tp_limit is None or tp <= tp_limit):
                out.append((tp, n // tp))
    return out


def dp_splits(max_gpus: int, with_pp: bool = False) -> list[tuple[int, int, int]]:
    """Every (dp, tp, pp) with dp >= 2 and dp x tp x pp <= max_gpus, fewest GPUs first, then fewest stages:
    data-parallel attention ranks of tp x pp GPUs each; pp 1 unless with_pp (vLLM 0.34 takes --data-parallel-size
    with --pipeline-parallel-size: capacity.experts_pp)."""
    return [(dp, n // pp // dp, pp) for n in range(2, max_gpus + 1) for pp in range(1, n // 2 + 1)
            if n % pp == 0 and (pp == 1 or with_pp) for dp in range(2, n // pp + 1) if (n // pp) % dp == 0]


def list_items(text: str, flag: str, unique: bool = True) -> list[str]:
    """A comma-separated option value's items: an empty item (`h100,,h200`, `''`) or (unique) one given twice
    is a usage error, not something to skip or search twice."""
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise UsageError(f"{flag} names nothing", f"give a comma-separated list, or leave {flag} out")
    if not all(items):
        raise UsageError(f"{flag} {text!r}: an empty item", "remove the extra comma")
    seen = set()
    for item in items if unique else ():
        if item.lower() in seen:
            raise UsageError(f"{flag} {text!r}: {item!r} is given twice")
        seen.add(item.lower())
    return items


def parse_gpus(text: str | None) -> list[Gpu]:
    """--gpu h100,h200 or all (the default): catalog entries, unknown names refused with the catalog's."""
    if text is None or text.strip().lower() == "all":
        return list(CATALOG.values())
    out = []
    for name in list_items(text, "--gpu"):
        try:
            gpu = lookup(name)
        except UsageError as exc:
            raise UsageError(f"--gpu: {exc.message}", f"{exc.hint}, or all") from None  # lookup's: close names, the catalog
        if gpu in out:
            raise UsageError(f"--gpu {text!r}: {gpu.name} is given twice")
        out.append(gpu)
    return out


def split_allow(values) -> list[str]:
    """--allow fp8,kivi,evict:0.5,recent=64 (repeatable) -> technique specs.

    A comma starts a new technique unless the next piece is a key=value with
    no name before it (it then belongs to the technique before it)."""
    specs: list[str] = []
    for value in values or []:
        for piece in list_items(value, "--allow", unique=False):  # options repeat: evict:0.5,recent=64,...
            head = piece.split(":", 1)[0]
            if "=" in head and specs:  # an option of the previous technique
                specs[-1] += "," + piece
            else:
                specs.append(piece)
    out = [expand(s) for s in specs]
    for i, spec in enumerate(out):
        if spec in out[:i]:
            raise UsageError(f"--allow: {spec!r} is given twice")
    return out


def expand(spec: str) -> str:
    """A bare technique name that needs a parameter gets DEFAULT_SPECS' value."""
    if ":" in spec:
        return spec
    name = spec.strip().lower()
    return DEFAULT_SPECS.get(ALIASES.get(name, name), spec)


def _name(spec: str) -> str:
    name = spec.split(":", 1)[0].split(",", 1)[0].strip().lower()
    return ALIASES.get(name, name)


def technique_sets(allowed: list[str]) -> list[tuple[str, ...]]:
    """The technique sets searched: none, each allowed technique, and every
    combination taking at most one technique per term it cuts (two quantizers
    or two token budgets never stack). Order: fewer techniques first."""
    allowed = list(dict.fromkeys(expand(s) for s in allowed))
    for spec in allowed:
        build(spec)  # a bad spec fails here, before the search
    terms = {}
    for spec in allowed:
        name = _name(spec)
        terms.setdefault(TECHNIQUES[name][1], []).append(spec)
    groups = [[None, *specs] for specs in terms.values()]
    sets = set()
    for combo in itertools.product(*groups):
        sets.add(tuple(s for s in combo if s is not None))
    order = {spec: i for i, spec in enumerate(allowed)}
    return sorted(sets, key=lambda s: (len(s), [order[x] for x in s]))


def parse_prices(values) -> dict[str, float]:
    """--price h100=2.5 (repeatable, or comma separated) -> {catalog name: USD per GPU hour}."""
    out = {}
    for value in values or []:
        if not value.replace(",", "").strip():  # '--price ""' was dropped without a word, as if not given
            raise UsageError(f"--price {value!r} names nothing", "give GPU=USD, e.g. h100=2.49, or leave --price out")
        for item in value.split(","):
            if not item.strip():
                continue
            name, sep, usd = item.partition("=")
            if not sep:
                raise UsageError(f"--price {item!r}: expected GPU=USD, e.g. h100=2.49")
            try:
                price = float(usd)
            except ValueError:
                raise UsageError(f"--price {item!r}: {usd!r} is not a number of USD per GPU hour") from None
            if not math.isfinite(price) or price < 0:
                raise UsageError(f"--price {item!r}: a price is a finite number of USD per GPU hour, 0 or more")
            try:
                gpu = lookup(name).name
            except UsageError as exc:
                raise UsageError(f"--price {item!r}: {exc.message}", exc.hint) from None
            if gpu in out:
                raise UsageError(f"--price {item!r}: {gpu} is priced twice", "give one --price for each GPU kind")
            out[gpu] = price
    return out


@dataclass(frozen=True)
class Caveat:
    what: str  # "kv fp8" or the technique spec
    caveat: str  # none | quality risk | needs training | needs engine support


def kv_dtype_caveat(dtype: str) -> str:
    """The catalog caveat of storing K/V in `dtype` (the quantizer's own)."""
    name = dtype.lower()
    if name.startswith("fp8"):
        return TECHNIQUES["fp8"][2]
    if name in TECHNIQUES:
        return TECHNIQUES[name][2]
    return NONE
