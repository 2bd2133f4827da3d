"""The top-level name `kernels` belongs to the PyPI package transformers 5.25 requires, never to the repository's
kernels/ folder (installed as kvplan.kernels), even though `python -m pytest` starts sys.path at the repository
root (tests/conftest.py's _InstalledKernelsFirst)."""

from __future__ import annotations

import importlib.util
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_installed_kernels_package_is_found_before_the_repository_folder():
    try:
        dist = distribution("kernels")
    except PackageNotFoundError:
        pytest.skip("no kernels distribution installed (transformers up to 5.23 does not require it)")
    spec = importlib.util.find_spec("kernels")
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).resolve() == Path(dist.locate_file("kernels/__init__.py")).resolve()
    assert ROOT / "kernels" not in Path(spec.origin).resolve().parents


def test_repository_kernels_stay_reachable_as_kvplan_kernels():
    spec = importlib.util.find_spec("kvplan.kernels")
    assert spec is not None and Path(spec.origin).resolve() == (ROOT / "kernels" / "__init__.py").resolve()
