"""A small reader of GGUF files (llama.cpp, Ollama): the header, the metadata
key/values and the tensor table, never the tensor data.

Layout (GGUF v2 and v3, little-endian; v1 used 32-bit counts and is refused):
  magic "GGUF" | u32 version | u64 tensor count | u64 metadata count
  metadata: key (u64 length + UTF-8) | u32 value type | value
            (types 0-12: u8 i8 u16 i16 u32 i32 f32 bool string array u64 i64 f64;
             an array is u32 element type + u64 count + elements)
  tensors:  name | u32 dims | u64 x dims (innermost first) | u32 ggml type | u64 offset
  padding to general.alignment (default 32), then the tensor data.
A tensor of n elements of a block type takes n / block_elements x block_bytes bytes.

Every count and length the header claims is checked against the bytes left in
the file before anything is read or allocated by it (a 1 KB file may claim
2**64 entries); each refusal names the metadata key or tensor being read.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..files import regular_file_size
from ..errors import WeightsError
from .dtypes import GGML_TYPES
from .roles import TensorEntry

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_KEEP_ARRAY = 1 << 16  # longer arrays (tokenizer vocabularies) are skipped, their length kept
_MAX_NESTING = 32  # arrays of arrays deeper than this are a corrupt file (Python's recursion ends near 1,000)
# fewest bytes one element of each type takes: scalars their size, a string its u64 length, an array its type + count
_MIN_BYTES = {t: struct.calcsize(f) for t, f in _SCALARS.items()} | {8: 8, 9: 4 + 8}
_MIN_ENTRY_BYTES = 8 + 4 + 1  # a metadata entry: key length, value type, a one-byte value
_MIN_TENSOR_BYTES = 8 + 4 + 4 + 8  # a tensor entry: name length, dims, ggml type, offset


_AGAIN = "the file is cut short or damaged: download or convert it again"


def _short(value) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


@dataclass(frozen=True)
class GgufFile:
    path: str
    version: int
    metadata: dict  # key -> value (long arrays: ("array", length))
    tensors: tuple[TensorEntry, ...]
    ggml_types: dict  # tensor name -> ggml type name
    file_bytes: int


class _Reader:
    def __init__(self, buf, where: str):
        self.buf, self.pos, self.where = buf, 0, where
        self.at = "the header"  # what is being read, for the messages: "metadata key 'x'", "tensor 'y'"

    def left(self) -> int:
        return len(self.buf) - self.pos

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise WeightsError(f"{self.where}: truncated GGUF header (ends at byte {len(self.buf):,} while reading {self.at})", _AGAIN)
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return value

    def string(self) -> str:
        n = self.take("<Q")
        if self.pos + n > len(self.buf):
            raise WeightsError(f"{self.where}: truncated GGUF header ({self.at}: a {n:,}-byte string runs past the end of the file)", _AGAIN)
        raw = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def value(self, vtype: int, depth: int = 0):
        if vtype in _SCALARS:
            return self.take(_SCALARS[vtype])
        if vtype == 8:
            return self.string()
        if vtype == 9:
            if depth >= _MAX_NESTING:
                raise WeightsError(f"{self.where}: GGUF metadata arrays nested more than {_MAX_NESTING} deep ({self.at}; corrupt file?)", _AGAIN)
            etype, count = self.take("<I"), self.take("<Q")
            if count and etype not in _MIN_BYTES:
                raise WeightsError(f"{self.where}: unknown GGUF metadata value type {etype} ({self.at}; corrupt file?)")
            if count and count * _MIN_BYTES[etype] > self.left():
                raise WeightsError(f"{self.where}: truncated GGUF header ({self.at}: an array of {count:,} entries "
                                   f"cannot fit in the {self.left():,} bytes left in the file)", _AGAIN)
            if count > _KEEP_ARRAY or etype == 8:
                if etype in _SCALARS:  # skip fixed-size elements at once
                    size = struct.calcsize(_SCALARS[etype]) * count
                    self.pos += size  # fits: checked above
                else:
                    for _ in range(count):
                        self.value(etype, depth + 1)
                return ("array", count)
            return [self.value(etype, depth + 1) for _ in range(count)]
        raise WeightsError(f"{self.where}: unknown GGUF metadata value type {vtype} ({self.at}; corrupt file?)")


def parse(path: Path) -> GgufFile:
    where = str(path)
    size = regular_file_size(path, "a GGUF file", WeightsError)
    try:
        with path.open("rb") as fh:
            if size < 24:
                raise WeightsError(f"{where}: truncated GGUF file ({size} bytes)")
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _parse(buf, where, size)
    except FileNotFoundError:
        raise WeightsError(f"{where}: no such file") from None
    except OSError as exc:
        raise WeightsError(f"{where}: cannot read ({exc.strerror or exc})") from None


def _parse(buf, where: str, size: int) -> GgufFile:
    if bytes(buf[:4]) != MAGIC:
        raise WeightsError(f"{where}: not a GGUF file (magic {bytes(buf[:4])!r}, expected b'GGUF')")
    r = _Reader(buf, where)
    r.pos = 4
    version = r.take("<I")
    if version not in VERSIONS:
        hint = "a big-endian file?" if version > 0xFFFF else "kvplan reads GGUF v2 and v3"
        raise WeightsError(f"{where}: unknown GGUF version {version}", hint)
    n_tensors, n_kv = r.take("<Q"), r.take("<Q")
    if n_kv * _MIN_ENTRY_BYTES + n_tensors * _MIN_TENSOR_BYTES > r.left():
        raise WeightsError(f"{where}: truncated or corrupt GGUF header ({n_tensors:,} tensors and {n_kv:,} metadata entries cannot fit in {size:,} bytes)", _AGAIN)
    meta = {}
    for i in range(n_kv):
        r.at = f"the key of metadata entry {i + 1:,} of {n_kv:,}"
        key = r.string()
        r.at = f"metadata key {_short(key)}"
        meta[key] = r.value(r.take("<I"))
    infos = []
    for i in range(n_tensors):
        r.at = f"the name of tensor {i + 1:,} of {n_tensors:,}"
        name = r.string()
        r.at = f"tensor {_short(name)}"
        n_dims = r.take("<I")
        if n_dims > 8:
            raise WeightsError(f"{where}: tensor {_short(name)} has {n_dims} dimensions (corrupt tensor table)")
        dims = tuple(r.take("<Q") for _ in range(n_dims))
        gtype, offset = r.take("<I"), r.take("<Q")
        infos.append((name, dims, gtype, offset))
    alignment = meta.get("general.alignment", DEFAULT_ALIGNMENT)
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment <= 0:
        raise WeightsError(f"{where}: GGUF metadata general.alignment must be an integer >= 1, got {_short(alignment)}", _AGAIN)
    data_start = -(-r.pos // alignment) * alignment
    data_bytes = size - data_start
    entries, types = [], {}
    for name, dims, gtype, offset in infos:
        spec = GGML_TYPES.get(gtype)
        if spec is None:
            raise WeightsError(f"{where}: tensor {_short(name)} has ggml type {gtype}, which kvplan does not know")
        type_name, block, block_bytes = spec
        elements = 1
        for d in dims:
            elements *= d
        if elements % block:
            raise WeightsError(f"{where}: tensor {_short(name)} has {elements:,} elements, not a whole number of {type_name} blocks of {block}")
        nbytes = elements // block * block_bytes
        if offset + nbytes > data_bytes:
            raise WeightsError(f"{where}: tensor {_short(name)} ends at byte {offset + nbytes:,} of a {data_bytes:,}-byte data section (truncated file)")
        entries.append(TensorEntry(name, type_name, elements, nbytes, tuple(reversed(dims))))
        types[name] = type_name
    return GgufFile(where, version, meta, tuple(entries), types, size)


@lru_cache(maxsize=8)
def _cached(path: str, mtime_ns: int, size: int) -> GgufFile:
    return parse(Path(path))


def read(path: Path) -> GgufFile:
    """Parse once per file version (estimate reads both the config and the weights)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise WeightsError(f"{path}: no such file") from None
    return _cached(str(path.resolve()), st.st_mtime_ns, st.st_size)
