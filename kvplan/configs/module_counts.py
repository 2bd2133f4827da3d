"""Counts over a config's layers and its family's per-module table (configs/weight_tables): the parameters of its
last decoder layer (what an MTP layer is sized by), the k/v and whole modules by checkpoint name (what a tensor
table's KV shares and whole tensors are read by), and the total the config estimate assembles (counted_params)."""

from __future__ import annotations

import warnings

from ..errors import ConfigError
from .family import Family
from .fields import Fields
from .layer_assembly import _read
from .param_embeddings import embedding_params


def table_adding_up(f: Fields, layers: list, dims, total: int) -> list:
    """The family's per-module table (weight_tables.table) where it adds up to the parameter count `total`, else
    [] (no table, or one that does not add up): the one check the weight format's readers share."""
    from . import weight_tables

    found = weight_tables.table(f, layers, dims)
    return found if found and sum(m.weight + m.other for m in found) == total else []


def last_layer_params(raw: dict, source: str) -> int | None:
    """Parameters of the config's last decoder layer, by the family's own counter (the count with every
    layer less the count without the last one); None where the family has no counter or lacks a field.
    A multi-token-prediction layer built from the target's decoder layer class is sized by this."""
    family, f, _, layers, dims = _read(raw, source)
    if family.params is None or len(layers) < 2:
        return None
    try:
        return family.params(f, layers, dims)[0] - family.params(f, layers[:-1], dims)[0]
    except ConfigError:
        return None


def last_layer_whole_params(raw: dict, source: str) -> int:
    """Parameters of the config's last decoder layer that vLLM holds whole on every TP rank (norms, the router,
    RowParallelLinear biases, MLA's q_a_proj / kv_a_proj_with_mqa, the DSA indexer: weight_tables.replicated_params,
    the table with every layer less the table without the last one); 0 where the family has no per-module table."""
    from . import weight_tables

    try:
        _, f, _, layers, dims = _read(raw, source)
    except ConfigError:
        return 0
    if len(layers) < 2:
        return 0
    whole, before = weight_tables.table(f, layers, dims), weight_tables.table(f, layers[:-1], dims)
    if not whole or not before:
        return 0
    return weight_tables.replicated_params(whole) - weight_tables.replicated_params(before)


def _module_table(raw: dict | None, source: str) -> list | None:
    """The config's per-module table (weight_tables.table), or None where kvplan has no table of the family, or the
    config does not read: what kv_modules and whole_modules read."""
    from . import weight_tables

    if not isinstance(raw, dict):
        return None
    try:
        with warnings.catch_warnings():  # the config was read already, and warned then
            warnings.simplefilter("ignore")
            _, f, _, layers, dims = _read(raw, source)
    except ConfigError:
        return None
    if f.model_type not in weight_tables.TABLES:
        return None
    return weight_tables.table(f, layers, dims) or None


def kv_modules(raw: dict | None, source: str = "config") -> dict[str, tuple[int, int, int]] | None:
    """The k/v modules of the config's per-module table (weight_tables/__init__.py Module.kv_heads), by every name a
    checkpoint may give them (Module.names), as (KV heads, parameters of the KV share, parameters of the weight):
    what a tensor table's KV shares are read by (weights.roles.fold). {} where the table has none (MLA); None where
    kvplan has no table of the family, or the config does not read."""
    modules = _module_table(raw, source)
    if modules is None:
        return None
    return {name: (m.kv_heads, m.kv_weight, m.weight) if m.weight else (m.kv_heads, m.kv_other, m.other)
            for m in modules if m.kv_heads and not m.whole and (m.weight or m.other) for name in m.names()}


def whole_modules(raw: dict | None, source: str = "config") -> dict[str, tuple[int, int, int, int]] | None:
    """Every module of the config's per-module table by every name a checkpoint may give it (Module.names), as
    (weight parameters held whole on every TP rank, weight parameters, float parameters held whole, float
    parameters): weight_tables.held_whole, the rule the config estimate sums (replicated_params). What a tensor
    table's whole tensors are read by beyond the names weights.roles._TP_WHOLE knows (weights.roles.fold), so that
    both paths follow the one table; None where kvplan has no table of the family."""
    from .weight_tables import held_whole

    modules = _module_table(raw, source)
    if modules is None:
        return None
    out: dict[str, tuple[int, int, int, int]] = {}
    for m in modules:
        if "{e}" in m.name:  # routed experts: split over TP, never whole
            continue
        weight, other = held_whole(m)
        for name in m.names():
            a, b, c, d = out.get(name, (0, 0, 0, 0))
            out[name] = (a + weight, b + m.weight, c + other, d + m.other)
    return out


def counted_params(family: Family, f: Fields, layers: list, dims) -> tuple[int, int, tuple[str, ...]]:
    """(total, active, notes) of the config's weights: the family's count (Family.params) for its causal LM, and
    for a pooling architecture (configs/pooling_heads.py) that count less the untied LM head (from the family's
    per-module table where it adds up, else vocab x hidden: param_embeddings.embedding_params) and with the pooling
    head, a note saying so. The one place the count is assembled: the tables (weight_tables.table) follow the same
    rule, so they add up to it."""
    from . import weight_tables
    from .pooling_heads import pooling_head

    total, active = family.params(f, layers, dims)
    head = pooling_head(f) if total else None
    if head is None:
        return total, active, ()
    modules = weight_tables.causal_table(f, layers, dims)
    if modules and sum(m.weight + m.other for m in modules) == total:
        lm_head = sum(m.weight + m.other for m in modules if m.role == "lm_head")
    else:
        lm_head = embedding_params(f)[1]
    delta = head.params - lm_head
    return total + delta, active + delta, (head.describe(lm_head),)
