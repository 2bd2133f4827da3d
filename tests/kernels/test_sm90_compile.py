"""Compile the part-2 kernels for an H100/H200 (sm_90) without a GPU, in a
subprocess: catches what only the compiler rejects, and register spills."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("module", ["csa", "evict", "mla", "quest", "recurrent"])
def test_kernels_compile_for_sm90_without_spills(module):
    from kvplan.kernels._sm90_compile import check_in_subprocess, ptxas_available

    if not ptxas_available():
        pytest.skip("triton ships no ptxas here")
    rc, out = check_in_subprocess(module)
    assert rc == 0, out
