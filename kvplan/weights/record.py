"""The weights of a checkpoint: exact bytes by dtype and by role, and where they came from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# where a Weights record's bytes come from, most exact first
SOURCES = ("safetensors", "gguf", "index", "bundled", "given", "estimated from config")

# roles of tensors; under tensor parallelism REPLICATED roles sit whole on every rank
ROLES = ("embeddings", "attention", "mlp", "experts", "router", "mixer", "norms", "lm_head", "vision", "mtp", "other")
REPLICATED = frozenset({"norms", "router"})
# "mtp": a multi-token-prediction module stored in its own namespace (Qwen3-Next's `mtp.*`, MiMo's
# `model.mtp_layers.*`, GGUF `nextn` tensors). DeepSeek-style checkpoints store it as decoder layers past
# num_hidden_layers instead (model.layers.61 of DeepSeek-V3); capacity.weights counts both as MTP.
NO_LAYER = -1


@dataclass(frozen=True)
class DtypeBytes:
    dtype: str  # as the file names it: BF16, F8_E4M3, U8, Q4_K, ...
    bytes: int
    elements: int  # stored elements (a packed U8 byte holding two FP4 values is one)
    tensors: int


@dataclass(frozen=True)
class Weights:
    total_bytes: int
    source: str  # one of SOURCES
    origin: str = ""  # file, folder, URL or bundled alias the bytes were read from
    quantization: str = "none"  # the format, e.g. "MXFP4 (experts)", "AWQ int4, group 128"
    by_dtype: tuple[DtypeBytes, ...] = ()
    # (role, decoder layer index or NO_LAYER, bytes): the tensor table folded by role and layer
    parts: tuple[tuple[str, int, int], ...] = ()
    tied_embeddings: bool = False  # no separate lm_head tensor: the head reuses the embedding
    files: int = 0
    tensors: int = 0
    notes: tuple[str, ...] = field(default=())
    # a total without a tensor table: the bytes of the MTP module inside it, estimated from the config
    # (kvplan.weights.mtp); a table's MTP parts are exact and this stays 0
    mtp_estimated_bytes: int = 0
    # the "mtp" parts again by (role inside the module, its layer index or NO_LAYER): roles.mtp_role_of; not in
    # the JSON (by_role shows the module as "mtp")
    mtp_parts: tuple[tuple[str, int, int], ...] = ()
    # of the parts, the bytes that vLLM holds whole on every TP rank though their role is split (MLA's q_a_proj /
    # kv_a_proj_with_mqa, the DSA indexer, o_proj biases), or splits though their role is whole (MiniMax-M2's q/k
    # norms), by (role, layer): roles.against_role; not in the JSON
    against_role: tuple[tuple[str, int, int], ...] = ()
    # a record without a tensor table: of total_bytes, what each TP rank holds whole (the config estimate's norms,
    # routers, biases, per-tensor and KV scales: ModelSpec.weight_replicated, the bytes or a counter run on first
    # use); read it as replicated_bytes; not in the JSON
    replicated: int | Callable[[], int] = field(default=0, compare=False, repr=False)

    @property
    def replicated_bytes(self) -> int:
        whole = self.replicated
        return whole if isinstance(whole, int) else whole()

    @property
    def by_role(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for role, _, n in self.parts:
            out[role] = out.get(role, 0) + n
        return {role: out[role] for role in ROLES if role in out}

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "origin": self.origin,
            "total_bytes": self.total_bytes,
            "quantization": self.quantization,
            "by_dtype": [
                {"dtype": d.dtype, "bytes": d.bytes, "elements": d.elements, "tensors": d.tensors} for d in self.by_dtype
            ],
            "by_role": self.by_role,
            "tied_embeddings": self.tied_embeddings,
            "files": self.files,
            "tensors": self.tensors,
            "notes": list(self.notes),
            "mtp_estimated_bytes": self.mtp_estimated_bytes,
        }
