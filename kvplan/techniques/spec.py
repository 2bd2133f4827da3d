"""The technique spec syntax: NAME[:ARG][,KEY=VALUE...].

Examples: fp8, int4:group=64, cla:2, window:4096,pattern=5:1, evict:0.5,
evict:2048,recent=64, pyramid:0.12, csa:m=4,k=512,window=128,
quest:page=16,topk=64, gqa:2, mqa, prefix:tokens=2000,requests=32,
offload:cpu=64GiB, page:16.
"""

from __future__ import annotations

from dataclasses import field
from fractions import Fraction

from .._record import record
from ..errors import TechniqueError
from ..units import MAX_TOKENS, parse_size, parse_tokens


@record
class Spec:
    text: str
    name: str
    arg: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    def fail(self, message: str) -> TechniqueError:
        return TechniqueError(f"technique {self.text!r}: {message}", "see 'kvplan techniques' for the syntax")

    def known(self, *names: str) -> None:
        unknown = sorted(set(self.options) - set(names))
        if unknown:
            allowed = ", ".join(names) if names else "none"
            raise self.fail(f"unknown option {unknown[0]!r} (allowed: {allowed})")

    def value(self, key: str, positional: bool = False) -> str | None:
        if key in self.options:
            if positional and self.arg is not None:
                raise self.fail(f"{key} is given twice (as {self.arg!r} and as {key}={self.options[key]!r})")
            return self.options[key]
        return self.arg if positional else None

    def int(self, key: str, default=None, positional: bool = False, minimum: int = 1) -> int:
        text = self.value(key, positional)
        if text is None:
            if default is None:
                raise self.fail(f"needs {key}=N")
            return default
        try:
            value = 0 if minimum == 0 and text.strip() == "0" else parse_tokens(text, key)
        except Exception:
            if text.strip().isdigit() and int(text.strip()) > MAX_TOKENS:  # whole, but too large for a count
                raise self.fail(f"{key} {text.strip()} is above the limit of 2^40 = {MAX_TOKENS:,} tokens") from None
            kind = "a non-negative" if minimum == 0 else "a positive"
            raise self.fail(f"{key} must be {kind} integer, got {text!r}") from None
        if value < minimum:
            raise self.fail(f"{key} must be >= {minimum}, got {value}")
        return value

    def fraction(self, key: str, positional: bool = False) -> Fraction | None:
        text = self.value(key, positional)
        if text is None:
            return None
        try:
            value = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise self.fail(f"{key} must be a number, got {text!r}") from None
        return value

    def size(self, key: str, default=None) -> int:
        text = self.value(key)
        if text is None:
            if default is None:
                raise self.fail(f"needs {key}=SIZE (for example {key}=64GiB)")
            return default
        try:
            return parse_size(text, key)
        except Exception:
            raise self.fail(f"{key} must be a size such as 64GiB, got {text!r}") from None


def parse_spec(text: str) -> Spec:
    raw = text.strip()
    if not raw:
        raise TechniqueError("empty technique", "for example -t fp8 or -t cla:2")
    cut = min((i for i in (raw.find(":"), raw.find(",")) if i >= 0), default=len(raw))
    name, rest = raw[:cut], raw[cut + 1 :]
    if cut < len(raw) and raw[cut] == ",":
        rest = "," + rest  # no positional argument: options only
    name = name.strip().lower()
    arg = None
    options: dict[str, str] = {}
    if rest:
        for i, part in enumerate(rest.split(",")):
            part = part.strip()
            if "=" in part:
                key, value = part.split("=", 1)
                key = key.strip().lower()
                if not key:
                    raise TechniqueError(f"technique {raw!r}: empty option name in {part!r}")
                if key in options:
                    raise TechniqueError(f"technique {raw!r}: option {key!r} is given twice",
                                         "give each option once")
                options[key] = value.strip()
            elif i == 0 and part:
                arg = part
            elif not part and i == 0:
                continue
            else:
                raise TechniqueError(f"technique {raw!r}: expected key=value, got {part!r}")
    return Spec(raw, name, arg, options)
