"""What every technique is: a named transform of a Plan, with the term it cuts and its price."""

from __future__ import annotations

from dataclasses import replace

from .._record import record
from ..core.model import ModelSpec

# What each technique needs before it can be used.
NEEDS_TRAINING = "needs training"
QUALITY_RISK = "quality risk"
ENGINE_SUPPORT = "needs engine support"
NONE = "none"


@record
class PrefixShare:
    tokens: int  # shared prefix length P
    requests: int  # concurrent requests R sharing it


@record
class Offload:
    cpu_bytes: int  # size of the CPU tier
    active_sequences: int  # sequences that must stay resident on the GPU
    link_gbps: float | None  # host link, GB/s (None: from the GPU catalog)
    mfu: float  # achievable fraction of dense TFLOP/s for the recompute estimate


@record
class Plan:
    """A model description plus serving-level settings the techniques set."""

    model: ModelSpec
    block_size: int | None = None  # paging (None = ideal, token-granular)
    prefix: PrefixShare | None = None
    offload: Offload | None = None

    def with_model(self, model: ModelSpec) -> "Plan":
        return replace(self, model=model)


@record
class Technique:
    spec: str  # as the user wrote it
    label: str  # what it does, with its parameters
    term: str  # heads | layers | tokens | width | bytes | state | waste | duplicates | residency | reads
    caveat: str

    def apply(self, plan: Plan) -> Plan:  # pragma: no cover - overridden
        raise NotImplementedError
