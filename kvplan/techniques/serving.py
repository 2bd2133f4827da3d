"""Serving-level techniques: paging, prefix reuse, offloading. They change how the
engine allocates, shares and places the cache, not what one layer stores."""

from __future__ import annotations

from dataclasses import replace

from .._record import record
from ..errors import TechniqueError
from .base import Offload, Plan, PrefixShare, Technique


@record
class Page(Technique):
    """PagedAttention: the cache is allocated in blocks of `block` tokens."""

    block: int = 16

    def apply(self, plan: Plan) -> Plan:
        return replace(plan, block_size=self.block)


@record
class Prefix(Technique):
    """Prefix caching: R concurrent requests share a P-token prefix; only full
    blocks are shared (block size from page:, else 16)."""

    tokens: int = 0
    requests: int = 2

    def apply(self, plan: Plan) -> Plan:
        if not any(layer.owns_cache for layer in plan.model.layers):
            raise TechniqueError(f"technique {self.spec!r} cannot apply to {plan.model.name}: no growing cache to share")
        return replace(plan, prefix=PrefixShare(self.tokens, self.requests))


@record
class OffloadTier(Technique):
    """A CPU tier of `cpu_bytes`: idle sequences move there, `active` stay on the GPU."""

    cpu_bytes: int = 0
    active: int = 1
    link_gbps: float | None = None
    mfu: float = 0.5

    def apply(self, plan: Plan) -> Plan:
        return replace(plan, offload=Offload(self.cpu_bytes, self.active, self.link_gbps, self.mfu))
