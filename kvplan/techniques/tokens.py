"""Techniques that keep or read fewer tokens: windows, eviction, PyramidKV,
compressed sparse attention, Quest."""

from __future__ import annotations

from fractions import Fraction

from .._record import record
from ..core.transform import map_caches, map_layers, with_policy
from ..errors import TechniqueError
from .base import Plan, Technique


def _growing(cache) -> bool:
    return cache.kind in ("attention", "latent")


@record
class Window(Technique):
    """Sliding window of `window` tokens on all attention layers, or a local:global
    pattern (`local` windowed layers then `global_` full ones, repeating)."""

    window: int = 4096
    local: int = 0
    global_: int = 0

    def apply(self, plan: Plan) -> Plan:
        period = self.local + self.global_
        positions = {}
        n = 0
        for i, layer in enumerate(plan.model.layers):
            if any(_growing(c) for c in layer.caches):
                positions[i] = n
                n += 1
        if not positions:
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: no attention layer")

        def windowed(i, layer, cache) -> bool:
            if not _growing(cache) or i not in positions:
                return False
            return period == 0 or positions[i] % period < self.local

        return plan.with_model(
            map_caches(plan.model, lambda c: with_policy(c, window_tokens=self.window), windowed)
        )


@record
class Evict(Technique):
    """H2O / SnapKV: keep a budget (a fraction of the tokens, or a count) including
    the newest `recent` tokens; evicted tokens are gone for good."""

    fraction: Fraction | None = None
    tokens: int | None = None
    recent: int = 0

    def apply(self, plan: Plan) -> Plan:
        if self.tokens is not None and self.tokens < self.recent:
            raise TechniqueError(f"technique {self.spec!r}: budget {self.tokens} is smaller than recent={self.recent}")
        if not any(_growing(c) for layer in plan.model.layers for c in layer.caches):
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: no token cache to evict from")

        def evict(cache):
            policy = cache.policy
            fraction = self.fraction if policy.budget_fraction is None or self.fraction is None else policy.budget_fraction * self.fraction
            tokens = self.tokens if policy.budget_tokens is None or self.tokens is None else min(self.tokens, policy.budget_tokens)
            return with_policy(
                cache,
                budget_fraction=fraction if self.fraction is not None else policy.budget_fraction,
                budget_tokens=tokens if self.tokens is not None else policy.budget_tokens,
                # a later budget cannot bring back tokens an earlier one evicted,
                # so its recent window only counts when no budget was set before
                recent_tokens=policy.recent_tokens if (policy.budget_fraction or policy.budget_tokens) else self.recent,
            )

        return plan.with_model(map_caches(plan.model, evict, lambda i, l, c: _growing(c)))


def pyramid_fractions(average: Fraction, layers: int) -> list[Fraction]:
    """Linearly decreasing budgets, 1.5x the average in the lowest layer and 0.5x
    in the highest; the mean is exactly `average`."""
    if layers == 1:
        return [average]
    return [average * (Fraction(3, 2) - Fraction(i, layers - 1)) for i in range(layers)]


@record
class Pyramid(Technique):
    """PyramidKV: larger budgets in lower layers, smaller in higher ones, same total."""

    fraction: Fraction = Fraction(1, 8)

    def apply(self, plan: Plan) -> Plan:
        owners = [i for i, layer in enumerate(plan.model.layers) if layer.owns_cache and any(_growing(c) for c in layer.caches)]
        if not owners:
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: no token cache")
        fractions = dict(zip(owners, pyramid_fractions(self.fraction, len(owners))))

        def one(i, layer):
            if i not in fractions:
                return layer
            frac = min(fractions[i], Fraction(1))
            # an earlier budget composes multiplicatively, as with evict
            caches = tuple(
                with_policy(c, budget_fraction=frac * (c.policy.budget_fraction or 1)) if _growing(c) else c
                for c in layer.caches
            )
            from dataclasses import replace

            return replace(layer, caches=caches)

        return plan.with_model(map_layers(plan.model, one))


@record
class CompressedSparse(Technique):
    """Compressed sparse attention: floor(n/m) compressed entries + a local window of
    raw tokens stored (the unfinished group lives in the window); k entries + the
    window read per decode step, plus every compressed key for the selector
    (needs a model trained for it)."""

    ratio: int = 4
    topk: int = 512
    window: int = 128

    def apply(self, plan: Plan) -> Plan:
        if not any(_growing(c) for layer in plan.model.layers for c in layer.caches):
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: no attention layer")
        if any(c.policy.compress_ratio is not None for layer in plan.model.layers for c in layer.caches):
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: its caches are already "
                                 "compressed (DeepSeek-V4's CSA/HCA, or csa given twice)")
        return plan.with_model(map_caches(
            plan.model,
            lambda c: with_policy(c, compress_ratio=self.ratio, compress_topk=self.topk, compress_window=self.window),
            lambda i, l, c: _growing(c),
        ))


@record
class Quest(Technique):
    """Quest: per-page min/max key metadata; a step reads only the top-k pages.
    Stored bytes grow by the metadata; read bytes shrink."""

    page: int = 16
    topk: int = 64

    def apply(self, plan: Plan) -> Plan:
        if not any(c.kind == "attention" for layer in plan.model.layers for c in layer.caches):
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: no attention K/V cache")
        if any(c.policy.read_page_tokens is not None for layer in plan.model.layers for c in layer.caches):
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: its layers already read "
                                 "a top-k of blocks (MiniMax-M3's block-sparse attention, or quest given twice)")
        return plan.with_model(map_caches(
            plan.model,
            lambda c: with_policy(c, read_page_tokens=self.page, read_topk_pages=self.topk),
            lambda i, l, c: c.kind == "attention",
        ))
