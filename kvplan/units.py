"""Parsing and formatting of token counts and byte sizes.

Token counts: plain integers or a k/m suffix, binary (k = 1024, m = 1024*1024),
because context windows are quoted that way (128k = 131,072).
Byte sizes: an explicit unit; GiB/MiB/KiB are binary, GB/MB/KB decimal; a bare
"G" or "GB" is decimal, as vendors quote memory. Bytes are integers everywhere.
"""

from __future__ import annotations

import re

from .errors import UsageError

KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4

_TOKEN_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kib": KIB,
    "mib": MIB,
    "gib": GIB,
    "tib": TIB,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "k": 1000,
    "m": 1000**2,
    "g": 1000**3,
    "t": 1000**4,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_tokens(text: str | int, what: str = "context") -> int:
    """'4096' -> 4096, '128k' -> 131072, '1m' -> 1048576. Positive integers only."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _TOKEN_RE.match(str(text))
        if not match:
            raise UsageError(
                f"{what}: cannot read {text!r} as a token count",
                "use an integer such as 4096, or a k/m suffix such as 128k or 1m",
            )
        number, suffix = match.groups()
        scale = {"": 1, "k": 1024, "m": 1024 * 1024}[suffix.lower()]
        exact = float(number) * scale
        if exact != int(exact):
            raise UsageError(f"{what}: {text!r} is not a whole number of tokens")
        value = int(exact)
    if value <= 0:
        raise UsageError(f"{what}: must be a positive number of tokens, got {text!r}")
    return value


def parse_size(text: str | int, what: str = "size") -> int:
    """'64GiB' -> 68719476736, '80GB' -> 80e9, '8 GiB' -> 8589934592 (integer bytes)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _SIZE_RE.match(str(text))
        unit = match.group(2).lower() if match else None
        if not match or unit not in _SIZE_UNITS:
            raise UsageError(
                f"{what}: cannot read {text!r} as a size",
                "use a number with a unit such as 64GiB, 80GB or 512MiB",
            )
        value = int(round(float(match.group(1)) * _SIZE_UNITS[unit]))
    if value <= 0:
        raise UsageError(f"{what}: must be positive, got {text!r}")
    return value


def parse_positive_int(text: str | int, what: str) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise UsageError(f"{what}: expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise UsageError(f"{what}: must be a positive integer, got {text!r}")
    return value


def gib(num_bytes: float) -> float:
    return num_bytes / GIB


def gb(num_bytes: float) -> float:
    return num_bytes / 1e9


def format_bytes(num_bytes: float) -> str:
    """Binary units for people, with decimal GB beside GiB-scale values."""
    value = float(num_bytes)
    if abs(value) >= GIB:
        return f"{value / GIB:,.2f} GiB ({value / 1e9:,.2f} GB)"
    if abs(value) >= MIB:
        return f"{value / MIB:,.2f} MiB"
    if abs(value) >= KIB:
        return f"{value / KIB:,.2f} KiB"
    return f"{value:,.0f} B"


def format_tokens(tokens: int) -> str:
    if tokens % (1024 * 1024) == 0:
        return f"{tokens // (1024 * 1024)}M"
    if tokens % 1024 == 0:
        return f"{tokens // 1024}K"
    return f"{tokens:,}"
