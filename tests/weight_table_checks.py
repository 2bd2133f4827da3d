"""Helpers the per-module weight-table tests share (tests/test_tables_*.py)."""

from __future__ import annotations

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import checked_table, table
from kvplan.weights.estimate import estimated


def per_gpu(model, layers: int, tp: int) -> int:
    """Bytes on the fullest GPU of the first stage at `tp` for the config estimate of `model`."""
    return stage_weight_bytes(estimated(model), layers, tp=tp)[0]


def adds_up(raw: dict, source: str) -> list:
    """The family's per-module table of a config, asserted to add up to the family's own parameter count and to
    be the table checked_table hands the engines."""
    family, f, _, layers, dims = _read(raw, source)
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]
    assert checked_table(raw, source) is not None
    return modules
