"""float64-exact transcendentals for the kernels: one name, the right precision per dtype.

Why.  A kernel that accepts float64 must compute in float64 on CUDA.  ``tl.exp``/``tl.log``
of a float64 tensor are lowered by some Triton versions to float32 approximations
(``ex2.approx.f32`` after a truncation), and a Python ``float`` kernel argument is a
*float32* scalar in a compiled kernel unless the parameter is annotated.  So the float64
kernels here (``soft_bellman``, ``lattice_forward``, ``bellman_interp``; ``pgf`` needs no
transcendental) call ``exp(x, F64)`` / ``log(x, F64)`` / ``sqrt(x, F64)`` below with a
``constexpr`` ``F64 = (dtype == float64)`` switch, and annotate float scalars ``: fp64``
(then cast them to the tensor dtype with ``tl.full([], s, dtype)``).

``F64`` true and compiled: ``triton.language.extra.libdevice`` (``__nv_exp``, ``__nv_log``,
``__nv_dsqrt``: correctly rounded or <= 1-2 ulp in double).  ``F64`` false: the default
``tl.exp``/``tl.log``/``tl.sqrt`` (float32, Triton's fast paths).  Under
``TRITON_INTERPRET=1`` libdevice is not available (the interpreter cannot run extern
functions), and not needed: the interpreter's ``tl.exp`` is numpy's, exact in float64.
"""

from __future__ import annotations

import triton
import triton.language as tl

# annotation for float64 scalar kernel arguments; with ``from __future__ import annotations``
# Triton reads the annotation's source text, ``fp64``, as the argument's type
fp64 = tl.float64


@triton.jit
def _probe(x):
    return x


INTERPRETED = not isinstance(_probe, triton.runtime.JITFunction)

if INTERPRETED:

    @triton.jit
    def exp(x, F64: tl.constexpr):
        return tl.exp(x)

    @triton.jit
    def log(x, F64: tl.constexpr):
        return tl.log(x)

    @triton.jit
    def sqrt(x, F64: tl.constexpr):
        return tl.sqrt(x)

else:  # pragma: no cover - compiled only (CUDA)
    from triton.language.extra import libdevice

    @triton.jit
    def exp(x, F64: tl.constexpr):
        if F64:
            y = libdevice.exp(x)
        else:
            y = tl.exp(x)
        return y

    @triton.jit
    def log(x, F64: tl.constexpr):
        if F64:
            y = libdevice.log(x)
        else:
            y = tl.log(x)
        return y

    @triton.jit
    def sqrt(x, F64: tl.constexpr):
        if F64:
            y = libdevice.sqrt(x)
        else:
            y = tl.sqrt(x)
        return y
