"""Interpreter flag and exact-rounding helpers shared by the kernels.

Triton's CPU interpreter (TRITON_INTERPRET=1) has three bugs that matter here
(see shared/reference/triton-on-cpu.md):

* ``tl.dot`` on bf16 operands returns garbage -> kernels upcast to fp32 first
  when ``INTERPRET`` is set (a ``tl.constexpr`` argument of each kernel);
* fp32 -> bf16 casts truncate instead of rounding to nearest even;
* fp32 -> fp8 e4m3 casts drop the rounding carry, do not round ties to even
  and do not saturate.

``round_to_e4m3`` and ``round_to_bf16`` below return an fp32 value that already
lies exactly on the target grid (round-to-nearest-even, e4m3 saturates at
+-448), so the following cast is exact even under the interpreter. On a GPU the
hardware conversion is already correct; kernels call these helpers only when
their ``INTERPRET`` constexpr is true (e4m3 clamping to +-448 is done always).

``INTERPRET`` is read from the environment when this module is imported; the
variable must be set before any kernel module is imported.
"""
import os

import triton
import triton.language as tl

INTERPRET: bool = os.environ.get("TRITON_INTERPRET", "0") == "1"

E4M3_MAX = 448.0


@triton.jit
def round_to_e4m3(x):
    """fp32 -> fp32 on the e4m3fn grid: clamp to +-448, round to nearest even.

    e4m3fn: 3 mantissa bits, smallest normal exponent -6 (subnormals share the
    quantum 2**-9). For |x| with unbiased exponent e (e >= -6) the grid step is
    2**(e-3); x / step is exact (power of two) and adding then subtracting
    1.5 * 2**23 rounds it to an integer with ties to even. A carry into the next
    binade (1.98 -> 2.0) comes out right because the product is formed in fp32.
    """
    x = x.to(tl.float32)
    x = tl.minimum(tl.maximum(x, -448.0), 448.0)
    ax = tl.abs(x)
    bits = ax.to(tl.int32, bitcast=True)
    e = ((bits >> 23) & 0xFF) - 127
    e = tl.maximum(e, -6)
    step = ((e - 3 + 127) << 23).to(tl.float32, bitcast=True)
    r = ax / step
    r = (r + 12582912.0) - 12582912.0
    y = r * step
    # copy the sign bit (keeps -0.0 and tiny negatives that round to -0.0)
    sign = x.to(tl.int32, bitcast=True) & -2147483648
    return (y.to(tl.int32, bitcast=True) | sign).to(tl.float32, bitcast=True)


@triton.jit
def round_to_bf16(x):
    """fp32 -> fp32 whose low 16 bits are zero, rounded to nearest even (bf16 grid).

    Integer form: add 0x7FFF plus the lowest kept bit, then clear the low half.
    Overflow rounds to +-inf like torch; NaN payloads are not preserved.
    """
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    lsb = (bits >> 16) & 1
    bits = (bits + 0x7FFF + lsb) & -65536
    return bits.to(tl.float32, bitcast=True)


def _rewrap_stdlib_for_interpreter() -> int:
    """Make triton.language's own @jit helpers callable by the interpreter.

    ``@triton.jit`` picks interpreter or compiler mode when a function is
    *decorated*. If ``triton.language`` was imported before TRITON_INTERPRET was
    set (tests/kernels/conftest.py imports triton first), its library functions
    (``tl.max``, ``tl.sum``, ``tl.cdiv``, their combine functions ...) are
    compiled-mode ``JITFunction`` objects and the interpreter refuses to call
    them ("Cannot call @triton.jit'd outside of the scope of a kernel"). This
    replaces each of them, in the triton.language modules, with the
    interpreter-mode wrapper it would have had if the variable had been set
    first. Only runs when INTERPRET is set; returns how many were replaced.
    """
    import sys

    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    replaced: dict[int, object] = {}
    mods = [m for name, m in list(sys.modules.items())
            if m is not None and (name == "triton.language" or name.startswith("triton.language."))]
    for mod in mods:
        for attr, val in list(vars(mod).items()):
            if type(val) is JITFunction:
                new = replaced.get(id(val))
                if new is None:
                    new = InterpretedFunction(val.fn)
                    replaced[id(val)] = new
                setattr(mod, attr, new)
    return len(replaced)


@triton.jit
def _loop_bound_probe(ptr):
    n = tl.load(ptr)
    acc = 0
    for _ in range(0, n):  # a loop bound read from memory, as every decode kernel has
        acc += 1
    tl.store(ptr, acc)


def interpreter_problem() -> str | None:
    """None when the interpreter can run these kernels, else one line saying why not.

    Triton's interpreter before 3.9 (3.6 seen) turns a loop bound loaded from memory
    into a Python int with ``int(array)`` on a one-element array, which NumPy 2.3 and
    later refuse ("only 0-dimensional arrays can be converted to Python scalars").
    The kernels themselves are fine; that pair of versions cannot interpret them.
    """
    if not INTERPRET:
        return None
    import numpy
    import torch

    cell = torch.tensor([3], dtype=torch.int32)
    try:
        _loop_bound_probe[(1,)](cell)
    except Exception as exc:  # InterpreterError wraps the TypeError
        return (f"Triton {triton.__version__}'s interpreter cannot run loops bounded by a loaded value "
                f"with NumPy {numpy.__version__} ({exc}); install triton>=3.9 or numpy<2.3")
    if int(cell.item()) != 3:
        return f"Triton {triton.__version__}'s interpreter counted a 3-trip loop as {int(cell.item())}"
    return None


if INTERPRET:
    _rewrap_stdlib_for_interpreter()
