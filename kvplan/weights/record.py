"""The weights of a checkpoint: exact bytes by dtype and by role, and where they came from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

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
    # kv_a_proj_with_mqa, the DSA indexer, o_proj biases, one-element scales), or splits though their role is whole (MiniMax-M2's q/k
    # norms), by (role, layer): roles.against_role; not in the JSON
    against_role: tuple[tuple[str, int, int], ...] = ()
    # a record without a tensor table: of total_bytes, what each TP rank holds whole (the config estimate's norms,
    # routers, biases, per-tensor and KV scales: ModelSpec.weight_replicated, the bytes or a counter run on first
    # use); read it as replicated_bytes; not in the JSON
    replicated: int | Callable[[], int] = field(default=0, compare=False, repr=False)
    # of the bytes, the KV shares vLLM splits by KV head, as (role, decoder layer or NO_LAYER, bytes, KV heads): a
    # tensor table's k_proj / v_proj tensors and the keys' and values' rows of a fused qkv (roles.fold, matched by
    # name against the family's per-module table), or a record without a table the config estimate's
    # (ModelSpec.weight_kv, a counter stays one). Under TP above the KV heads vLLM gives every rank one whole KV head
    # (capacity.weights.kv_rank_bytes). None where kvplan does not know them (no per-module table of the family, a
    # GGUF, a given size), and a counter may answer None too. Not in the JSON
    kv_split: tuple[tuple[str, int, int, int], ...] | Callable[[], tuple | None] | None = field(
        default=None, compare=False, repr=False)
    # a tensor table's GPTQ `*.g_idx` tensors, folded as a record of their own (roles.fold), which an engine that
    # drops them at load takes away (less); None without a table or without g_idx; not in the JSON
    g_idx: Weights | None = field(default=None, compare=False, repr=False)
    # a record without a tensor table: of total_bytes, the config estimate's vision tower and projector as (bytes,
    # bytes vLLM holds whole on every TP rank) (ModelSpec.weight_vision), on the first pipeline stage only; by_role
    # names it "vision" (a tensor table's vision tensors are its "vision" parts)
    vision: tuple[int, int] = (0, 0)
    # a tensor table's vision tensors SGLang 0.5.23 places otherwise than vLLM, as (bytes it holds whole that vLLM
    # splits, bytes it splits that vLLM holds whole): roles.fold with weights/vision_tp.py sglang_vision_whole; read
    # by engines/sglang_tower.py; not in the JSON
    vision_sglang: tuple[int, int] = (0, 0)

    @property
    def known(self) -> bool:
        """Whether the bytes were counted: a config estimate of 0 B is a family or format kvplan cannot size from the
        config (capacity.weights.require_known refuses a GPU plan on it; the JSON says null, not 0)."""
        return not (self.total_bytes <= 0 and self.source == "estimated from config")

    @property
    def replicated_bytes(self) -> int:
        whole = self.replicated
        return whole if isinstance(whole, int) else whole()

    @property
    def kv_parts(self) -> tuple[tuple[str, int, int, int], ...] | None:
        kv = self.kv_split
        return kv() if callable(kv) else kv

    @property
    def by_role(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for role, _, n in self.parts:
            out[role] = out.get(role, 0) + n
        if self.vision[0] and not self.parts:
            out["vision"] = self.vision[0]
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


def _less(whole: tuple[tuple[str, int, int], ...], part: tuple[tuple[str, int, int], ...]) -> tuple:
    taken = {(role, layer): n for role, layer, n in part}
    kept = ((role, layer, n - taken.get((role, layer), 0)) for role, layer, n in whole)
    return tuple(p for p in kept if p[2])


def less(w: Weights, part: Weights, note: str) -> Weights:
    """w without the tensors of `part`, a record folded from some of w's own tensors (Weights.g_idx): its bytes
    taken from the total, the dtypes, the roles, the MTP parts and what is held against its role."""
    taken = {d.dtype: d for d in part.by_dtype}
    by_dtype = []
    for d in w.by_dtype:
        t = taken.get(d.dtype)
        if t is not None:
            d = DtypeBytes(d.dtype, d.bytes - t.bytes, d.elements - t.elements, d.tensors - t.tensors)
        if d.tensors or d.bytes:
            by_dtype.append(d)
    return replace(w, total_bytes=w.total_bytes - part.total_bytes, by_dtype=tuple(by_dtype),
                   parts=_less(w.parts, part.parts), tensors=w.tensors - part.tensors,
                   mtp_parts=_less(w.mtp_parts, part.mtp_parts), against_role=_less(w.against_role, part.against_role),
                   notes=w.notes + (note,), g_idx=None if part is w.g_idx else w.g_idx)
