"""One bench result as a type: a row per technique, with its figures grouped.

The JSON row (schema version 1, docs/bench.md) is flat, with about 40 keys;
`BenchRow` holds the same figures in sub-records (bytes, blocks, latency,
offload, accuracy) plus the rank's placement in a distributed run. `to_json`
writes the flat row with its keys in the schema's order; `from_json` reads one
back (unknown keys are kept in `extra`, so a newer document round-trips). The
runner fills rows, the gate and the report read them: all through this module.

Torch-free: `kvplan gate` reads rows without the bench extra.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass
class ByteFigures:
    predicted: int | None = None
    measured: int | None = None
    match: bool | None = None
    predicted_offloaded: int | None = None  # bytes of the sequences moved to the CPU tier
    measured_offloaded: int | None = None
    pool: int | None = None  # the paged pool the kernels allocated
    block_table: int | None = None
    cuda_allocated_delta: int | None = None  # torch.cuda.memory_allocated() growth (CUDA only)


@dataclass
class BlockFigures:
    predicted: int | None = None
    measured: int | None = None
    match: bool | None = None
    shared: int | None = None  # prefix blocks held once for several sequences
    free: int | None = None
    waste_slots: int | None = None  # token slots allocated and unused in the last blocks


@dataclass
class LatencyFigures:
    median_ms: float | None = None  # one decode step of the whole model, summed over layers
    p20_ms: float | None = None
    p80_ms: float | None = None
    method: str | None = None  # how the steps were timed (cuda events, wall clock)
    samples_ms: list[float] | None = None
    prefill_ms: float | None = None
    read_bytes_per_step: int | None = None  # the planner's bytes read per decode step
    floor_ms: float | None = None  # read_bytes_per_step at the copy bandwidth measured in the same run
    achieved_gbps: float | None = None
    efficiency: float | None = None  # floor_ms / median_ms
    efficiency_p20: float | None = None  # at the slow (p80) latency
    efficiency_p80: float | None = None  # at the fast (p20) latency


@dataclass
class OffloadFigures:
    offload_ms_median: float | None = None
    resume_ms_median: float | None = None
    resume_first_step_ms_median: float | None = None
    recompute_ms_predicted: float | None = None


@dataclass
class AccuracyFigures:
    error_rel: float | None = None  # worst relative error of the attention output vs the reference
    attention_mass: float | None = None  # least softmax mass kept by a sparse or evicting cache
    reference: str | None = None


@dataclass
class BenchRow:
    technique: str
    name: str = ""
    status: str = "ok"  # one of report.STATUSES
    message: str = ""
    block_tokens: int | None = None
    layout_notes: list[str] = field(default_factory=list)
    bytes: ByteFigures = field(default_factory=ByteFigures)
    blocks: BlockFigures = field(default_factory=BlockFigures)
    latency: LatencyFigures = field(default_factory=LatencyFigures)
    offload: OffloadFigures = field(default_factory=OffloadFigures)
    accuracy: AccuracyFigures = field(default_factory=AccuracyFigures)
    engine: str = "triton"
    groups: list[dict] = field(default_factory=list)  # per layer group: kind, layers, bytes, blocks, timings
    extra: dict = field(default_factory=dict)  # keys this version does not know; a distributed run's placement

    def to_json(self) -> dict:
        out = {}
        for key, part, attr in _KEYS:
            out[key] = getattr(getattr(self, part), attr) if part else getattr(self, attr)
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, row: dict) -> BenchRow:
        made = cls(technique=row.get("technique"))
        for key, part, attr in _KEYS:
            if key in row:
                setattr(getattr(made, part) if part else made, attr, row[key])
        made.extra = {k: v for k, v in row.items() if k not in _KNOWN}
        return made

    def fail(self, status: str, message: str) -> BenchRow:
        self.status, self.message = status, message
        return self

    def mismatches(self) -> list[str]:
        """'what: predicted P measured M' for each figure whose prediction and measurement differ."""
        pairs = (("bytes", self.bytes.predicted, self.bytes.measured),
                 ("blocks", self.blocks.predicted, self.blocks.measured),
                 ("offloaded_bytes", self.bytes.predicted_offloaded, self.bytes.measured_offloaded))
        return [f"{what}: predicted {p} measured {m}" for what, p, m in pairs if p != m]


# (JSON key, sub-record or "", attribute), in the order the rows have always been written
_KEYS = (
    ("technique", "", "technique"), ("name", "", "name"), ("status", "", "status"), ("message", "", "message"),
    ("block_tokens", "", "block_tokens"), ("layout_notes", "", "layout_notes"),
    ("predicted_bytes", "bytes", "predicted"), ("measured_bytes", "bytes", "measured"),
    ("bytes_match", "bytes", "match"),
    ("predicted_blocks", "blocks", "predicted"), ("measured_blocks", "blocks", "measured"),
    ("blocks_match", "blocks", "match"), ("blocks_shared", "blocks", "shared"), ("blocks_free", "blocks", "free"),
    ("waste_slots", "blocks", "waste_slots"),
    ("predicted_offloaded_bytes", "bytes", "predicted_offloaded"),
    ("measured_offloaded_bytes", "bytes", "measured_offloaded"),
    ("pool_bytes", "bytes", "pool"), ("block_table_bytes", "bytes", "block_table"),
    ("cuda_allocated_delta", "bytes", "cuda_allocated_delta"),
    ("latency_ms_median", "latency", "median_ms"), ("latency_ms_p20", "latency", "p20_ms"),
    ("latency_ms_p80", "latency", "p80_ms"), ("latency_method", "latency", "method"),
    ("latency_samples_ms", "latency", "samples_ms"), ("prefill_ms", "latency", "prefill_ms"),
    ("offload_ms_median", "offload", "offload_ms_median"), ("resume_ms_median", "offload", "resume_ms_median"),
    ("resume_first_step_ms_median", "offload", "resume_first_step_ms_median"),
    ("recompute_ms_predicted", "offload", "recompute_ms_predicted"),
    ("read_bytes_per_step", "latency", "read_bytes_per_step"), ("floor_ms", "latency", "floor_ms"),
    ("achieved_gbps", "latency", "achieved_gbps"), ("efficiency", "latency", "efficiency"),
    ("efficiency_p20", "latency", "efficiency_p20"), ("efficiency_p80", "latency", "efficiency_p80"),
    ("error_rel", "accuracy", "error_rel"), ("attention_mass", "accuracy", "attention_mass"),
    ("accuracy_reference", "accuracy", "reference"),
    ("engine", "", "engine"), ("groups", "", "groups"),
)
_KNOWN = frozenset(k for k, _, _ in _KEYS)


def unmapped() -> list[str]:
    """Fields with no JSON key (empty when every figure is written; a test keeps it so)."""
    parts = {"bytes": ByteFigures, "blocks": BlockFigures, "latency": LatencyFigures, "offload": OffloadFigures,
             "accuracy": AccuracyFigures}
    mapped = {(p, a) for _, p, a in _KEYS}
    out = [f"{part}.{f.name}" for part, kind in parts.items() for f in fields(kind) if (part, f.name) not in mapped]
    top = {f.name for f in fields(BenchRow)} - set(parts) - {"extra"}
    out += sorted(top - {a for _, p, a in _KEYS if not p})
    return out


__all__ = ["BenchRow", "ByteFigures", "BlockFigures", "LatencyFigures", "OffloadFigures", "AccuracyFigures"]
