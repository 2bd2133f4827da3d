"""Which engine a launch flag belongs to, and the one line that refuses it elsewhere: the engine-specific options of
estimate, fit and scenario files (--all2all-backend, --mm-encoder-tp-mode: vLLM's; --moe-a2a-backend and SGLang's
group flags: engines/sglang_groups.py), each usable only where that engine is planned or emitted, and not beside the
other engine (their launch lines differ)."""

from __future__ import annotations

from ..errors import UsageError

NAMES = {"vllm": "vLLM", "sglang": "SGLang"}


def require(flag: str, engine: str, engines: tuple, hint: str | None = None, *, alone: bool = True) -> None:
    """Refuse `flag` (one flag, or several joined by "and") unless `engine` is among the engines planned / emitted
    and the other one is not; `alone` False (another engine's flag was given with it) refuses it too."""
    other = "sglang" if engine == "vllm" else "vllm"
    if engine in engines and other not in engines and alone:
        return
    owner = f"are {NAMES[engine]}'s flags: they need" if " and " in flag else f"is {NAMES[engine]}'s flag: it needs"
    raise UsageError(f"{flag} {owner} --engine {engine} or --emit {engine} (and no {NAMES[other]})", hint)


__all__ = ["NAMES", "require"]
