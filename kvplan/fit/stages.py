"""One TP rank's per-stage bytes for the `kvplan fit` screen: a plan's layers summed into pipeline stages (Layers,
Stage) and the sequences a stage's pool holds (fit_sequences), the same sums capacity.pool adds up."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..capacity.pool import batch_bytes
from ..capacity.shard import shard


@dataclass
class Stage:
    unique: int  # one sequence's own bytes on this stage's GPU
    shared: int  # its prefix blocks shared with other sequences
    fixed: int  # bytes held once whatever the batch
    per_token: int
    prefix: bool


class Layers:
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

    def stages(self, pp: int) -> list[Stage]:
        plan = self.plan
        prefix = plan.prefix is not None and plan.prefix.requests > 1
        if self.exact:
            out = []
            for stage in shard(plan.model, self.tp, pp):
                seq = batch_bytes(plan, self.tokens, 1, stage)
                owned = [(c, n) for layer, n in stage.groups if layer.shares_cache_of is None for c in layer.caches]
                out.append(Stage(seq.kv_bytes_per_sequence + seq.state_bytes_per_sequence,
                                  seq.prefix_shared_bytes if plan.prefix is not None else 0,
                                  sum(c.fixed_bytes() * n for c, n in owned),
                                  sum(c.bytes_per_token() * n for c, n in owned), prefix))
            return out
        from ..capacity.shard import stage_bounds

        u, sh, fx, pt = self.cums
        return [Stage(u[b] - u[a], sh[b] - sh[a], fx[b] - fx[a], pt[b] - pt[a], prefix)
                for a, b in stage_bounds(plan.model.num_layers, pp)]

    def batch_total(self, stage: Stage, batch: int) -> int:
        """batch_bytes(plan, tokens, batch, stage).total_bytes from the stage's sums."""
        if not batch:
            return 0
        saved = 0
        if self.plan.prefix is not None:
            saved = max(min(self.plan.prefix.requests, batch) - 1, 0) * stage.shared
        return batch * stage.unique - saved + stage.fixed


def fit_sequences(stage: Stage, usable: int) -> int:
    """Sequences a stage's pool holds (capacity.pool.capacity's rule)."""
    if stage.prefix and usable >= stage.unique:
        return 1 + int((usable - stage.unique) // max(stage.unique - stage.shared, 1))
    return int(usable // stage.unique) if stage.unique else 0


__all__ = ["Stage", "Layers", "fit_sequences"]
