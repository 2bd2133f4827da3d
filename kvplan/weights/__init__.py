"""Weight bytes of a checkpoint: exact from safetensors headers, a safetensors
index, a GGUF tensor table or a bundled total, else estimated from the config."""

from .record import SOURCES, DtypeBytes, Weights

__all__ = ["SOURCES", "DtypeBytes", "Weights"]
