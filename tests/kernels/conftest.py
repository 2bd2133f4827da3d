"""Kernel tests run natively on a CUDA device, else in Triton's interpreter.

TRITON_INTERPRET must be set before any module that defines a @triton.jit
kernel is imported, so it is set here, at collection time.
"""
import os

import pytest

torch = pytest.importorskip("torch")

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

pytest.importorskip("triton")  # only after TRITON_INTERPRET is set

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def pytest_configure(config):
    from kvplan.kernels._interp import interpreter_problem

    problem = interpreter_problem()
    if problem:  # one clear line instead of fifty identical failures
        raise pytest.UsageError(problem)


@pytest.fixture
def device() -> str:
    return DEVICE


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
