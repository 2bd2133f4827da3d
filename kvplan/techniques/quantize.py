"""Quantization: fewer bytes per cached element, scales and zero points counted."""

from __future__ import annotations

from dataclasses import replace

from .._record import record
from ..core.storage import Storage
from ..core.transform import map_caches
from ..errors import TechniqueError
from .base import Plan, Technique


@record
class Quantize(Technique):
    """Store K/V (or the MLA latent) as `storage`. With skip_windowed, sliding-window
    layers keep their native dtype (vLLM's --kv-cache-dtype-skip-layers sliding_window).
    The DeepSeek-V3.2 indexer cache keeps its own fp8 format."""

    storage: Storage | None = None
    skip_windowed: bool = False

    def apply(self, plan: Plan) -> Plan:
        if not any(c.kind in ("attention", "latent") for layer in plan.model.layers for c in layer.caches):
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: no K/V cache to quantize")
        if self.storage.granularity in ("group", "kivi"):
            for layer in plan.model.layers:
                for cache in layer.caches:
                    if cache.kind in ("attention", "latent") and cache.key_dim % 2 and self.storage.bits < 8:
                        raise TechniqueError(f"technique {self.spec!r}: head width {cache.key_dim} cannot be packed")

        for layer in plan.model.layers:
            for cache in layer.caches:
                if cache.kind in ("attention", "latent") and cache.storage.bits < self.storage.bits:
                    raise TechniqueError(
                        f"technique {self.spec!r}: the cache is already stored as {cache.storage.name} "
                        f"({cache.storage.bits} bits); {self.storage.name} would widen it",
                        "apply one quantization, or the narrower one last",
                    )

        def where(i, layer, cache) -> bool:
            if cache.kind not in ("attention", "latent"):
                return False
            return not (self.skip_windowed and cache.policy.window_tokens is not None)

        return plan.with_model(map_caches(plan.model, lambda c: replace(c, storage=self.storage), where))
