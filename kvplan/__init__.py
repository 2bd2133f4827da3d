"""kvplan: plan and validate the KV cache of LLM serving."""

__version__ = "0.1.0"

from .core.estimate import Estimate, estimate  # noqa: E402
from .sources import load_model  # noqa: E402

__all__ = ["Estimate", "estimate", "load_model", "__version__"]
