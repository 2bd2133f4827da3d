"""kvplan: plan and validate the KV cache of LLM serving."""

__version__ = "0.1.0"

__all__ = ["Estimate", "estimate", "estimate_many", "load_model", "__version__"]


def __getattr__(name: str):
    """The public API loads on first use, so `kvplan --version` and the CLI's
    imports of kvplan.cli do not pay for the core and the config readers."""
    if name in ("Estimate", "estimate"):
        from .core import estimate as _module

        value = getattr(_module, name)
    elif name == "estimate_many":  # numpy: many contexts at once
        from .workload.vector import estimate_many as value
    elif name == "load_model":
        from .sources import load_model as value
    else:
        raise AttributeError(f"module 'kvplan' has no attribute {name!r}")
    globals()[name] = value
    return value
