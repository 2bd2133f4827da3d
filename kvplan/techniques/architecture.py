"""What-ifs that change the architecture: fewer KV heads, shared layers, a latent,
recurrent layers. Each needs a checkpoint trained (or uptrained) for it."""

from __future__ import annotations

from dataclasses import replace

from .._record import record
from ..core.layers import LayerSpec, RecurrentState, TokenCache
from ..core.storage import BF16, Storage
from ..core.transform import map_caches
from ..errors import TechniqueError
from .base import Plan, Technique

RAW_BYTES = Storage("bytes", 8)  # a state given directly in bytes


def _attention_caches(plan: Plan, spec: str) -> None:
    if not any(c.kind == "attention" for layer in plan.model.layers for c in layer.caches):
        kinds = sorted({layer.kind for layer in plan.model.layers})
        raise TechniqueError(
            f"technique {spec!r} cannot apply to {plan.model.name}: it has no attention K/V cache (layers: {', '.join(kinds)})"
        )


@record
class RegroupHeads(Technique):
    """GQA/MQA: K and V with `kv_heads` heads per layer (uptraining, about 5% of pretraining)."""

    kv_heads: int = 1

    def apply(self, plan: Plan) -> Plan:
        _attention_caches(plan, self.spec)
        q_heads = plan.model.num_attention_heads
        if q_heads and q_heads % self.kv_heads:
            raise TechniqueError(
                f"technique {self.spec!r}: {self.kv_heads} KV heads do not divide {q_heads} query heads"
            )

        def regroup(cache: TokenCache) -> TokenCache:
            return replace(cache, heads=min(cache.heads, self.kv_heads))

        return plan.with_model(map_caches(plan.model, regroup, lambda i, l, c: c.kind == "attention"))


@record
class ShareLayers(Technique):
    """Cross-layer attention: every `factor` adjacent cache-owning layers share one cache.

    Layers that already reuse another layer's cache are left alone; only layers
    with identical caches are grouped (a window layer never shares a full one).
    """

    factor: int = 2

    def apply(self, plan: Plan) -> Plan:
        if not any(layer.owns_cache for layer in plan.model.layers):
            raise TechniqueError(
                f"technique {self.spec!r} cannot apply to {plan.model.name}: no layer owns a growing cache"
            )
        owners = sum(layer.owns_cache for layer in plan.model.layers)
        if self.factor > owners:
            raise TechniqueError(f"technique {self.spec!r}: {self.factor} layers per cache is more than the "
                                 f"{owners} layers of {plan.model.name} that own a cache",
                                 f"give a factor from 2 to {owners}")
        out: list[LayerSpec] = []
        owner = None
        in_group = 0
        for i, layer in enumerate(plan.model.layers):
            if not layer.owns_cache:
                out.append(layer)
                continue
            if owner is not None and in_group < self.factor and plan.model.layers[owner].caches == layer.caches:
                out.append(replace(layer, shares_cache_of=owner))
                in_group += 1
            else:
                owner, in_group = i, 1
                out.append(layer)
        return plan.with_model(replace(plan.model, layers=tuple(out)))


@record
class LatentWhatIf(Technique):
    """MLA what-if: K and V replaced by one latent of `rank` + `rope` elements per token."""

    rank: int = 512
    rope: int = 64

    def apply(self, plan: Plan) -> Plan:
        if any(c.kind == "latent" for layer in plan.model.layers for c in layer.caches):
            raise TechniqueError(f"technique {self.spec!r}: {plan.model.name} already uses latent attention (MLA)")
        _attention_caches(plan, self.spec)

        def to_latent(cache: TokenCache) -> TokenCache:
            return TokenCache(
                kind="latent", heads=1, key_dim=self.rank + self.rope, rope_dim=self.rope,
                storage=cache.storage, policy=cache.policy,
            )

        return plan.with_model(map_caches(plan.model, to_latent, lambda i, l, c: c.kind == "attention"))


@record
class HybridWhatIf(Technique):
    """Replace `recurrent` of every `recurrent + attention` attention layers by a fixed state.

    The state defaults to a Gated-DeltaNet-like one: query heads x head_dim x
    head_dim elements in bf16 per layer, or `state_bytes` when given.
    """

    recurrent: int = 3
    attention: int = 1
    state_bytes: int | None = None

    def apply(self, plan: Plan) -> Plan:
        _attention_caches(plan, self.spec)
        period = self.recurrent + self.attention
        out = []
        position = 0
        for layer in plan.model.layers:
            attn = [c for c in layer.caches if c.kind == "attention"]
            if not attn or layer.state is not None:
                out.append(layer)
                continue
            if position % period < self.recurrent:
                if self.state_bytes is not None:
                    state = RecurrentState("linear", 0, self.state_bytes, BF16, RAW_BYTES)
                else:
                    heads = plan.model.num_attention_heads or attn[0].heads
                    state = RecurrentState("linear", 0, heads * attn[0].key_dim * attn[0].value_dim, BF16, BF16)
                out.append(LayerSpec(state=state))
            else:
                out.append(layer)
            position += 1
        return plan.with_model(replace(plan.model, layers=tuple(out)))
