"""Config readers: Hugging Face config.json -> ModelSpec."""

from .build import build_model

__all__ = ["build_model"]
