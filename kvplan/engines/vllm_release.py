"""The release parser the vLLM rules use: kvplan/core/releases.py (engine-free, so configs/ reads it too)."""

from ..core.releases import at_least, release_key, within

__all__ = ["release_key", "at_least", "within"]
