"""safetensors headers, read without torch: an 8-byte little-endian header
length N, then N bytes of JSON mapping each tensor name to its dtype, shape and
[begin, end) byte offsets into the data that follows (plus an optional
"__metadata__" of strings).

Only the header is read; the tensor data is never touched.
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

from ..files import read_bounded, regular_file_size
from ..sources import JSON_LIMIT_BYTES
from ..errors import WeightsError
from .dtypes import SAFETENSORS_BITS
from .roles import TensorEntry

# the reference implementation refuses headers over 100 MB; so does kvplan
MAX_HEADER_BYTES = 100_000_000
INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"


def header_length(prefix: bytes, where: str, file_bytes: int | None = None) -> int:
    """The JSON header's length from the first 8 bytes, checked against the file size."""
    if len(prefix) < 8:
        raise WeightsError(f"{where}: truncated safetensors file ({len(prefix)} bytes; the header length alone takes 8)")
    (n,) = struct.unpack("<Q", prefix[:8])
    if n > MAX_HEADER_BYTES:
        raise WeightsError(f"{where}: safetensors header length {n:,} bytes exceeds the format's limit of {MAX_HEADER_BYTES:,}"
                           " (not a safetensors file?)")
    if file_bytes is not None and 8 + n > file_bytes:
        raise WeightsError(f"{where}: safetensors header length {n:,} bytes is larger than the file ({file_bytes:,} bytes):"
                           " truncated or not a safetensors file")
    return n


def parse_header(raw: bytes, where: str, data_bytes: int | None = None) -> tuple[list[TensorEntry], dict]:
    """(tensors, __metadata__) from the JSON header bytes; every tensor checked."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # undecodable, malformed, nested too deeply, a number too long to read
        raise WeightsError(f"{where}: the safetensors header is not valid JSON (truncated or not a safetensors file)") from None
    if not isinstance(header, dict):
        raise WeightsError(f"{where}: the safetensors header is not a JSON object")
    meta = header.pop("__metadata__", None) or {}
    entries = []
    for name, info in header.items():
        entries.append(tensor_entry(name, info, where, data_bytes))
    return entries, meta if isinstance(meta, dict) else {}


def tensor_entry(name: str, info, where: str, data_bytes: int | None = None) -> TensorEntry:
    if not isinstance(info, dict):
        raise WeightsError(f"{where}: tensor {name!r} has no dtype/shape/data_offsets entry")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    bits = SAFETENSORS_BITS.get(dtype) if isinstance(dtype, str) else None
    if bits is None:
        raise WeightsError(f"{where}: tensor {name!r} has dtype {dtype!r}, which kvplan does not know",
                           f"known: {', '.join(SAFETENSORS_BITS)}")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise WeightsError(f"{where}: tensor {name!r} has a bad shape {shape!r}")
    if (not isinstance(offsets, list) or len(offsets) != 2 or not all(isinstance(o, int) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1]):
        raise WeightsError(f"{where}: tensor {name!r} has bad data_offsets {offsets!r}")
    elements = 1
    for d in shape:
        elements *= d
    span = offsets[1] - offsets[0]
    if elements * bits != span * 8:
        raise WeightsError(f"{where}: tensor {name!r} spans {span:,} bytes but {dtype} x {shape} needs "
                           f"{elements * bits / 8:,g} (corrupt header)")
    if data_bytes is not None and offsets[1] > data_bytes:
        raise WeightsError(f"{where}: tensor {name!r} ends at byte {offsets[1]:,} of a {data_bytes:,}-byte data section"
                           " (truncated file)")
    return TensorEntry(name, dtype, elements, span, tuple(shape))


def read_file(path: Path) -> tuple[list[TensorEntry], dict]:
    """The header of one local .safetensors file."""
    size = regular_file_size(path, "a safetensors file", WeightsError)
    try:
        with path.open("rb") as fh:
            n = header_length(fh.read(8), str(path), size)
            raw = fh.read(n)
    except FileNotFoundError:
        raise WeightsError(f"{path}: no such file") from None
    except OSError as exc:
        raise WeightsError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_header(raw, str(path), size - 8 - n)


def read_index(path: Path) -> dict:
    raw = read_bounded(path, "a safetensors index", JSON_LIMIT_BYTES, WeightsError)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:  # Python's codec message (byte 0xeb in position 1...) said nothing of use
        raise WeightsError(f"{path}: not a readable safetensors index (not UTF-8 text)") from None
    if not text.strip():
        raise WeightsError(f"{path}: not a readable safetensors index (the file is empty)") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WeightsError(f"{path}: not a readable safetensors index (malformed JSON at line {exc.lineno}, "
                           f"column {exc.colno}: {exc.msg})") from None
    except RecursionError as exc:
        raise WeightsError(f"{path}: not a readable safetensors index ({exc})") from None
    except ValueError:  # an integer longer than Python reads (sys.int_max_str_digits)
        raise WeightsError(f"{path}: not a readable safetensors index (a number in it has more than "
                           f"{sys.get_int_max_str_digits():,} digits)") from None
    if not isinstance(data, dict):
        raise WeightsError(f"{path}: not a safetensors index (expected a JSON object)")
    return data


def index_total(data: dict, where: str) -> int:
    total = (data.get("metadata") or {}).get("total_size") if isinstance(data.get("metadata"), dict) else None
    if isinstance(total, bool) or not isinstance(total, (int, float)) or total <= 0:
        raise WeightsError(f"{where}: not a safetensors index (needs a positive metadata.total_size)")
    return int(total)


def shard_names(data: dict, where: str) -> list[str]:
    weight_map = data.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise WeightsError(f"{where}: the index has no weight_map")
    for tensor, shard in weight_map.items():
        if not isinstance(shard, str) or not shard.strip():
            raise WeightsError(f"{where}: weight_map gives tensor {tensor!r} the shard {shard!r}, not a file name",
                               "fix the index, or pass --weights SIZE")
    return sorted(set(weight_map.values()))


def local_files(path: Path) -> tuple[list[Path], Path | None]:
    """(shard files, index file or None) for a .safetensors file or a model folder."""
    if path.is_file():
        return [path], None
    index = path / INDEX_NAME
    if index.is_file():
        names = shard_names(read_index(index), str(index))
        files = [path / name for name in names]
        for f in files:
            if not f.is_file():
                raise WeightsError(f"{f}: shard listed in {index.name} is missing", "download every shard, or pass --weights SIZE")
        return files, index
    # a LoRA adapter is not the model; Mistral's consolidated.safetensors repeats the shards
    files = sorted(f for f in path.glob("*.safetensors") if not f.name.startswith("adapter_"))
    plain = [f for f in files if not f.name.startswith("consolidated")]
    return (plain or files), None


def has_safetensors(path: Path) -> bool:
    if path.is_file():
        return path.suffix == ".safetensors"
    return path.is_dir() and ((path / INDEX_NAME).is_file() or bool(local_files(path)[0]))
