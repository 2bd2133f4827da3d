"""Write small safetensors files of zeros for tests that read a checkpoint's tensor table."""

from __future__ import annotations

import json
import struct
from pathlib import Path


def write_safetensors(path: Path, tensors: dict) -> None:
    """A safetensors file of zeros: tensors maps a name to (dtype, shape, bytes per element)."""
    header, offset = {}, 0
    for name, (dtype, shape, size) in tensors.items():
        n = size
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))
