"""Parameters of transformers modules built on the meta device (no memory, no weights): the independent count the
vision-tower tests check kvplan's against."""

from __future__ import annotations

import warnings

import pytest


def meta_params(build) -> int:
    """The parameters of the modules `build()` returns, built on the meta device (skips without torch)."""
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        modules = build()
    return sum(p.numel() for m in modules for p in m.parameters())
