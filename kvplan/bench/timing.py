"""Timing of bench steps: do_bench on CUDA, a synchronised wall clock elsewhere,
and the device-to-device copy ceiling measured in the same run."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial

import torch


@dataclass
class Timing:
    median_ms: float
    p20_ms: float
    p80_ms: float
    method: str  # "do_bench" (CUDA events) | "wall clock (interpreter)" | "wall clock"
    repeats: int
    samples_ms: tuple[float, ...] = ()  # every timed call, in order (the gate tests on these)

    def as_dict(self) -> dict:
        return {"median_ms": self.median_ms, "p20_ms": self.p20_ms, "p80_ms": self.p80_ms,
                "method": self.method, "repeats": self.repeats, "samples_ms": list(self.samples_ms)}


def _quantiles(samples: list[float]) -> tuple[float, float, float]:
    s = sorted(samples)

    def q(p):
        if len(s) == 1:
            return s[0]
        x = p * (len(s) - 1)
        lo = math.floor(x)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (x - lo)

    return q(0.5), q(0.2), q(0.8)


def time_fn(fn, device: torch.device, repeats: int) -> Timing:
    """Median / p20 / p80 of `fn` in ms: do_bench on CUDA, a wall clock on CPU."""
    if device.type == "cuda":
        from triton.testing import do_bench

        samples = [float(x) for x in do_bench(fn, warmup=10, rep=max(25, 10 * repeats), return_mode="all")]
        med, p20, p80 = _quantiles(samples)  # linear interpolation, as do_bench's quantiles
        return Timing(med, p20, p80, "do_bench", repeats, tuple(samples))
    import os

    interp = os.environ.get("TRITON_INTERPRET") == "1"
    if not interp:  # warm-up (torch allocators); the interpreter compiles nothing and its clock is ungated
        fn()
    samples = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    med, p20, p80 = _quantiles(samples)
    return Timing(med, p20, p80, "wall clock (interpreter)" if interp else "wall clock", repeats, tuple(samples))


def _synced(fn, device: torch.device):
    """(wall-clock ms, result) of one call, the device idle before and finished after."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    result = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return (time.perf_counter() - start) * 1e3, result


def time_once(fn, device: torch.device, warm=None):
    """(Timing, fn's result) of one synchronised call of `fn`, for work that cannot be repeated as is (a
    prefill write). `warm`, run first and untimed, should launch the same kernels
    with the same argument shapes but no effect (every slot padded), so that the
    timed call measures the kernel, not Triton compiling it on first launch (CUDA
    only: the interpreter compiles nothing)."""
    if warm is not None and device.type == "cuda":
        warm()
    ms, result = _synced(fn, device)
    return Timing(ms, ms, ms, "wall clock, once", 1), result


def time_roundtrip(do, undo, device: torch.device, repeats: int) -> Timing:
    """Time `do` alone, running `undo` (untimed) after each call: e.g. resume an
    offloaded sequence, then offload it again for the next repeat."""
    samples = []
    for _ in range(max(1, repeats) + 1):  # the first call warms up
        samples.append(_synced(do, device)[0])
        undo()
    med, p20, p80 = _quantiles(samples[1:])
    return Timing(med, p20, p80, "wall clock with device sync", repeats, tuple(samples[1:]))


@dataclass
class OffloadCycle:
    """One sequence moved off the device and back, per layer: copy out (gather +
    device-to-host), copy back (host-to-device + scatter), and copy back followed by
    that sequence's first decode step (the figure to set beside recomputing it)."""

    offload: Timing
    resume: Timing
    resume_first_step: Timing


def time_offload_cycle(offload, resume, first_step, device: torch.device, repeats: int) -> OffloadCycle:
    """Start and end with the sequence offloaded; each timed call undoes itself untimed."""

    def resume_then_step():
        resume()
        first_step()

    t_resume = time_roundtrip(resume, offload, device, repeats)
    t_step = time_roundtrip(resume_then_step, offload, device, repeats)
    resume()
    t_offload = time_roundtrip(offload, resume, device, repeats)
    offload()
    return OffloadCycle(t_offload, t_resume, t_step)


def copy_ceiling_gbps(device: torch.device) -> tuple[float, int]:
    """Device-to-device copy bandwidth measured now (read + write bytes / time)."""
    nbytes = (256 if device.type == "cuda" else 32) * 2**20
    src = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(1)
    dst = torch.empty_like(src)
    t = time_fn(partial(dst.copy_, src), device, 5)
    del src, dst
    return 2 * nbytes / (t.median_ms * 1e-3) / 1e9, nbytes
