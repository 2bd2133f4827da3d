"""Engine releases as comparable keys: the one parser for every rule that holds "from release X" (vLLM's and
SGLang's version strings alike). Engine-free, so the config readers can ask it too.

"0.24.0" -> (0, 24, 0); "0.24" -> (0, 24, 0); "v0.10.1.dev101+gbda9d0535" -> (0, 10, 1); a tuple is
padded the same way; anything unreadable -> None.
"""

from __future__ import annotations


def release_key(version) -> tuple[int, ...] | None:
    if version is None:
        return None
    if isinstance(version, tuple):
        parts = list(version)
    else:
        parts = []
        for piece in str(version).strip().lstrip("v").split("."):
            digits = ""
            for ch in piece:
                if not ch.isdigit():
                    break
                digits += ch
            if not digits:
                break
            parts.append(int(digits))
            if digits != piece:
                break
    if not parts:
        return None
    return tuple(parts) + (0,) * (3 - len(parts))


def at_least(version, first: tuple[int, ...]) -> bool:
    """Whether `version` is `first` or later (False when unreadable)."""
    key = release_key(version)
    return key is not None and key >= first


def within(version, first: tuple[int, ...], end: tuple[int, ...]) -> bool:
    """Whether first <= version < end (False when unreadable)."""
    key = release_key(version)
    return key is not None and first <= key < end


__all__ = ["release_key", "at_least", "within"]
