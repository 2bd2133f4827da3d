"""The bytes vLLM's weights hold beyond the checkpoint's (or below them) because vLLM builds some modules otherwise
than the checkpoint stores them: configs/param_vllm_load.py names each case and the vLLM class that makes it
(Gemma 4's k_eq_v layers: a V shard filled with a copy of k_proj; LongCat-Flash with router_bias: the router
classifier's bias, stored, not built). kvplan's plan counts the checkpoint; vLLM's profile adds these for a
config-sized checkpoint, at the checkpoint's float width, held as the module is: whole on every TP rank (a router),
split, or one KV head a rank where TP exceeds the KV heads (capacity.weights.kv_held). Sized from the family's
per-module table (configs/weight_tables/__init__.py) only where it adds up to the family's parameter count; a weight of a
quantized checkpoint (whose stored bytes depend on whether the format quantizes the module) and a tensor table are
not sized, and a note says what is not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..configs.param_vllm_load import TRANSFORMERS_BACKEND_FROM

# the model types whose tables carry a Module.vllm_delta (configs/param_vllm_load.py)
TYPES = ("gemma4_text", "gemma4_unified_text", "longcat_flash", "inkling_model") + tuple(TRANSFORMERS_BACKEND_FROM)


@dataclass(frozen=True)
class HeldDelta:
    whole_params: int  # parameters every TP rank holds whole (signed: negative where vLLM holds fewer)
    split_params: int  # parameters split over TP
    kv: tuple[tuple[int, int], ...]  # (parameters, KV heads) split by KV head
    width: int  # bytes a parameter (the checkpoint's float width; 2 for a float32 checkpoint served in bf16)
    unsized: int  # weight parameters of a quantized checkpoint, not sized
    sources: tuple[str, ...]
    rehomed: int = 0  # parameters the checkpoint's layout splits over TP and vLLM holds whole on every rank
    breaks_tp: str | None = None  # an attention output projection held whole (LoadDelta.breaks_tp): its module

    @property
    def params(self) -> int:
        return self.whole_params + self.split_params + sum(n for n, _ in self.kv)

    def per_gpu_bytes(self, tp: int = 1, pp: int = 1) -> int:
        """The bytes one GPU of a (tp, pp) replica holds beyond the checkpoint's share: the whole part on every
        rank of a stage, the KV shares one KV head a rank above their KV heads, the rest over every GPU."""
        from ..capacity.weights import kv_held

        tp, pp = max(tp, 1), max(pp, 1)
        w = self.width
        out = _div(self.whole_params * w, pp) + _div(self.split_params * w, tp * pp)
        out += self.rehomed * w // pp - self.rehomed * w // (tp * pp)
        for n, heads in self.kv:
            taken, held = kv_held(((abs(n) * w, heads),), tp, pp)
            out += (1 if n > 0 else -1) * (held if taken else abs(n) * w // (tp * pp))
        return out


def _div(n: int, by: int) -> int:
    return n // by if n >= 0 else -(-n // by)


def load_delta(model, version=None, halve: bool = False) -> HeldDelta | None:
    """What vLLM `version` (None: 0.34) holds of `model` beyond (or below) its checkpoint, from the family's table;
    None where kvplan has no such case for the model or cannot read its table."""
    from ..configs import weight_tables
    from ..configs.checkpoint_dtype import float_width_bytes
    from .vllm_load import module_table

    checked = module_table(model) if model.model_type in TYPES else None
    if checked is None:
        return None
    f, modules = checked
    quantized = model.weight_dtype != model.float_dtype
    whole = split = unsized = rehomed = 0
    kv: dict[int, int] = {}
    sources = []
    breaks = None
    for m in modules:
        for d in m.vllm_delta:
            if not d.held(version):
                continue
            if d.breaks_tp and breaks is None:
                breaks = m.name
            if d.source not in sources:
                sources.append(d.source)
            if d.weight and quantized:
                unsized += d.params
            elif d.whole_from_split:
                rehomed += d.params
            elif weight_tables._whole_floats(m):
                whole += d.params
            elif m.kv_heads and not m.whole:
                kv[m.kv_heads] = kv.get(m.kv_heads, 0) + d.params
            else:
                split += d.params
    if not (whole or split or kv or unsized or rehomed):
        return None
    width = 2 if halve else float_width_bytes(f)
    return HeldDelta(whole, split, tuple(sorted((n, h) for h, n in kv.items())), width, unsized, tuple(sources),
                     rehomed, breaks)


def tp_failure_note(d: HeldDelta | None, tp: int) -> str | None:
    """At TP > 1, where vLLM holds an attention output projection whole while its attention layer keeps heads / TP
    (configs/param_vllm_load.py LoadDelta.breaks_tp): one line saying that vLLM fails at start-up."""
    if d is None or d.breaks_tp is None or tp <= 1:
        return None
    return (f"at TP {tp} vLLM would fail at start-up: its Transformers backend (no tensor-parallel plan) holds "
            f"{d.breaks_tp} whole (a ReplicatedLinear for all heads) while the attention layer it feeds is built for "
            "heads / TP (layers/attention/attention.py Attention.forward), so the profile run's first forward raises "
            "a shape error (configs/param_vllm_load.py); serve it at TP 1 (with PP or data parallelism): the figures "
            "are what-if")


def describe(d: HeldDelta, tp: int = 1, pp: int = 1) -> str:
    """', + X MiB of ...' (or ', - X B ...') for the weights line."""
    n = d.per_gpu_bytes(tp, pp)
    size = f"{abs(n) / 2**20:,.1f} MiB" if abs(n) >= 2**20 else f"{abs(n):,} B"
    held = d.params - d.unsized
    if d.rehomed and not held:
        what = f"{d.rehomed:,} parameters vLLM holds whole on every TP rank where the checkpoint's layout splits them"
    else:
        what = (f"{held:,} parameters vLLM builds beyond the checkpoint" if held > 0
                else f"{-held:,} parameters of the checkpoint vLLM does not build")
    return f", {'+' if n >= 0 else '-'} {size} for the {what} ({'; '.join(d.sources)}: configs/param_vllm_load.py)"


def unsized_note(d: HeldDelta) -> str | None:
    if not d.unsized:
        return None
    return (f"vLLM also holds {d.unsized:,} parameters of quantized weights beyond the checkpoint "
            f"({'; '.join(d.sources)}: configs/param_vllm_load.py), in the format's bytes, which kvplan does not size "
            "for this checkpoint: not counted")


def table_note(d: HeldDelta, source: str) -> str:
    """For weights read from a record (a tensor table, a bundled total, a size given: `source`), whose tensors
    kvplan does not match to the table's modules here."""
    held = d.params
    if d.rehomed and not held:
        what = f"{d.rehomed:,} parameters whole on every TP rank that the checkpoint's layout splits"
    else:
        what = (f"{held:,} parameters beyond the checkpoint's" if held > 0
                else f"{-held:,} fewer parameters than the checkpoint")
    return (f"vLLM holds {what} ({'; '.join(d.sources)}: configs/param_vllm_load.py); the weights, read from "
            f"{source}, do not count that")


__all__ = ["HeldDelta", "load_delta", "describe", "unsized_note", "table_note", "tp_failure_note", "TYPES"]
