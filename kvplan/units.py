"""Parsing and formatting of token counts and byte sizes.

Token counts: plain integers or a k/m suffix, binary (k = 1024, m = 1024*1024),
because context windows are quoted that way (128k = 131,072).
Byte sizes: an explicit unit; GiB/MiB/KiB are binary, GB/MB/KB decimal; a bare
"G" or "GB" is decimal, as vendors quote memory; "B" is bytes. A number without
a unit is refused (80 meant as 80GB would silently be 80 bytes). Bytes are
integers everywhere.

Bounds: at most 2^40 tokens (a trillion: nothing longer is a context), at most
2^60 bytes (an exbibyte), counts at most 2^40. Values are read exactly (no float
step), so a thousand-digit number is an error, not an overflow.
"""

from __future__ import annotations

import re
from fractions import Fraction

from .errors import UsageError

KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4
MAX_TOKENS = 2**40
MAX_BYTES = 2**60
MAX_COUNT = 2**40
_MAX_DIGITS = 24  # more digits than any bound above needs

_TOKEN_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
_SIZE_UNITS = {
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
def _shown(text) -> str:
    """The value as written, clipped: a megabyte of digits is not echoed back."""
    shown = repr(text)
    return shown if len(shown) <= 40 else shown[:32] + "...(" + f"{len(str(text)):,} characters)"


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_tokens(text: str | int, what: str = "context") -> int:
    """'4096' -> 4096, '128k' -> 131072, '1m' -> 1048576. Positive integers only."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _TOKEN_RE.match(str(text))
        if not match:
            raise UsageError(
                f"{what}: cannot read {_shown(text)} as a token count",
                "use an integer such as 4096, or a k/m suffix such as 128k or 1m",
            )
        number, suffix = match.groups()
        if len(number) > _MAX_DIGITS:
            raise UsageError(f"{what}: {_shown(text)} is too large (at most 2^40 = {MAX_TOKENS:,} tokens)")
        scale = {"": 1, "k": 1024, "m": 1024 * 1024}[suffix.lower()]
        exact = Fraction(number) * scale
        if exact.denominator != 1:
            raise UsageError(f"{what}: {_shown(text)} is not a whole number of tokens")
        value = int(exact)
    if value <= 0:
        raise UsageError(f"{what}: must be a positive number of tokens, got {_shown(text)}")
    if value > MAX_TOKENS:
        raise UsageError(f"{what}: {_shown(text)} is {value:,} tokens, above the limit of 2^40 = {MAX_TOKENS:,}")
    return value


def parse_size(text: str | int, what: str = "size", *, allow_zero: bool = False) -> int:
    """'64GiB' -> 68719476736, '80GB' -> 80e9, '8 GiB' -> 8589934592 (integer bytes).

    A unit is required: a bare number (a string or an int) is refused. allow_zero (a reserve): 0 is taken,
    bare or with any unit (0, 0B, 0GiB); otherwise a size must be positive.
    """
    if allow_zero and not isinstance(text, bool) and str(text).strip() == "0":
        return 0
    match = None if isinstance(text, bool) else _SIZE_RE.match(str(text))
    unit = match.group(2).lower() if match else None
    if match and unit == "":
        raise UsageError(f"{what}: {_shown(text)} has no unit",
                         f"add one: {match.group(1)}GiB (binary), {match.group(1)}GB (decimal) or {match.group(1)}B (bytes)")
    if not match or unit not in _SIZE_UNITS:
        raise UsageError(
            f"{what}: cannot read {_shown(text)} as a size",
            "use a number with a unit such as 64GiB, 80GB or 512MiB",
        )
    number = match.group(1)
    if len(number) > _MAX_DIGITS:
        raise UsageError(f"{what}: {_shown(text)} is too large (at most 2^60 bytes)")
    value = round(Fraction(number) * _SIZE_UNITS[unit])
    if value == 0 and allow_zero and Fraction(number) == 0:
        return 0
    if value <= 0:
        raise UsageError(f"{what}: must be positive, got {_shown(text)}")
    if value > MAX_BYTES:
        raise UsageError(f"{what}: {_shown(text)} is above the limit of 2^60 bytes (1 EiB)")
    return value


def parse_positive_int(text: str | int, what: str, maximum: int = MAX_COUNT) -> int:
    raw = str(text).strip()
    if isinstance(text, bool) or not re.fullmatch(r"[+-]?\d{1,24}", raw):
        raise UsageError(f"{what}: expected a positive integer, got {_shown(text)}")
    value = int(raw)
    if value <= 0:
        raise UsageError(f"{what}: must be a positive integer, got {_shown(text)}")
    if value > maximum:
        raise UsageError(f"{what}: {value:,} is above the limit of {maximum:,}")
    return value


def check_number(value: float | int | None, what: str, *, minimum: float = 0.0, strict: bool = False,
                 maximum: float | None = None) -> None:
    """A number option (--hbm-gbps, --max-kv-gib, ...): finite and within bounds, else exit 2."""
    import math

    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (isinstance(value, float) and not math.isfinite(value)):  # an int of 400 digits: no float holds it
        raise UsageError(f"{what}: expected a finite number, got {value!r}")
    if value < minimum or (strict and value == minimum):
        raise UsageError(f"{what}: must be {'>' if strict else '>='} {_number(minimum)}, got {_number(value)}")
    if maximum is not None and value > maximum:
        raise UsageError(f"{what}: must be at most {_number(maximum)}, got {_number(value)}")


def _number(value: float | int) -> str:
    """A bound or a value for a message: whole numbers in full with grouped digits (2,147,483,647, not
    '2.14748e+09', which hid the limit), others as %g."""
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        return count_text(int(value))
    return f"{value:g}"


def count_text(value: int) -> str:
    """A whole number with grouped digits; past 24 digits its start and its length (a 400-digit --pp is not
    echoed whole)."""
    digits = str(abs(value))
    if len(digits) <= 24:
        return f"{value:,}"
    return f"{'-' if value < 0 else ''}{digits[:12]}... ({len(digits):,} digits)"


def cdiv(a: int, b: int) -> int:
    """a / b rounded up, in integers (blocks that hold a tokens of b each)."""
    return -(-a // b)


def gib(num_bytes: float) -> float:
    return num_bytes / GIB


def gb(num_bytes: float) -> float:
    return num_bytes / 1e9


def format_bytes(num_bytes: float, decimal: bool = True) -> str:
    """Binary units for people, with decimal GB beside GiB-scale values (decimal=False: without,
    for the cells of wide tables, where the two-column summaries above carry both)."""
    value = float(num_bytes)
    if abs(value) >= GIB:
        return f"{value / GIB:,.2f} GiB" + (f" ({value / 1e9:,.2f} GB)" if decimal else "")
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
