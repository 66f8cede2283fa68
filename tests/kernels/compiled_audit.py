"""Audit of kernels compiled for CUDA (sm_90, an H100/H200), without a GPU.

Run as a script (``python tests/kernels/compiled_audit.py``, ``TRITON_INTERPRET`` unset): each
float64 kernel's launch arguments are captured from its wrapper, the kernel is compiled ahead
of time for an H100/H200 target, and its LLVM IR / PTX is searched for float32 in the float64
path: a float32 scalar argument (a Python float passed to an unannotated parameter), a
``fptrunc double``, or a float32 ``ex2``/``lg2`` approximation.  Prints one JSON object,
kernel -> [problems per launch]; ``control_bad`` is a deliberately wrong kernel (a plain float
argument and ``tl.exp`` on float64) that the audit must flag.  ``gain_shape_assign_tf32x3``
checks the other way round that ``precision="tf32x3"`` compiles to tensor-core instructions
(``wgmma``/``mma``) and the default ``"ieee"`` does not.  Used by ``test_compiled_audit.py``.
"""

from __future__ import annotations

import json
import os
import re
import sys

os.environ.pop("TRITON_INTERPRET", None)  # before triton / the kernels are imported

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

TYPES = {torch.float64: "fp64", torch.float32: "fp32", torch.int64: "i64", torch.int32: "i32"}
APPROX_F32 = ("ex2.approx.f32", "lg2.approx.f32", "ex2.approx.ftz.f32", "lg2.approx.ftz.f32")


class Capture:
    """Stands in for a ``@triton.jit`` kernel: records ``kernel[grid](*args, **kwargs)``."""

    def __init__(self):
        self.calls = []

    def __getitem__(self, grid):
        return lambda *a, **k: self.calls.append((a, k))


def signature(fn, args, kwargs):
    bound = dict(zip([p.name for p in fn.params], args))
    bound.update(kwargs)
    sig, const = {}, {}
    for p in fn.params:
        v = bound[p.name]
        if p.is_constexpr:
            sig[p.name], const[p.name] = "constexpr", v
        elif isinstance(v, torch.Tensor):
            sig[p.name] = "*" + TYPES[v.dtype]
        elif isinstance(v, bool):
            sig[p.name] = "i1"
        elif isinstance(v, int):
            sig[p.name] = "i32" if -2**31 <= v < 2**31 else "i64"
        elif isinstance(v, float):
            sig[p.name] = p.annotation_type or "fp32"  # what the launcher would pass
        else:
            raise TypeError(f"{p.name}: {type(v)}")
    return sig, const


def audit(fn, args, kwargs) -> list[str]:
    sig, const = signature(fn, args, kwargs)
    asm = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=const),
                         target=GPUTarget("cuda", 90, 32)).asm
    define = next(line for line in asm["llir"].splitlines() if line.startswith("define"))
    problems = []
    if re.search(r"\bfloat %", define):
        problems.append("float32 kernel argument")
    if "fptrunc double" in asm["llir"]:
        problems.append("double truncated to float")
    problems += [ins for ins in APPROX_F32 if ins in asm["ptx"]]
    return problems


def ptx_of(fn, args, kwargs) -> str:
    sig, const = signature(fn, args, kwargs)
    return triton.compile(ASTSource(fn=fn, signature=sig, constexprs=const),
                          target=GPUTarget("cuda", 90, 32)).asm["ptx"]


def captured(mod, name, call) -> list[tuple]:
    orig, cap = getattr(mod, name), Capture()
    setattr(mod, name, cap)
    try:
        call()
    finally:
        setattr(mod, name, orig)
    return cap.calls


def launches(mod, name, call) -> list[list[str]]:
    orig, cap = getattr(mod, name), Capture()
    setattr(mod, name, cap)
    try:
        call()  # CPU tensors: the wrapper validates, allocates and "launches" into cap
    finally:
        setattr(mod, name, orig)
    return [audit(orig, a, k) for a, k in cap.calls]


def main() -> dict:
    import icml26.kernels.bellman_interp as bi
    import icml26.kernels.lattice_forward as lf
    import icml26.kernels.pgf as pg
    import icml26.kernels.soft_bellman as sb

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_bellman_interp import make_inputs

    g = torch.Generator().manual_seed(0)

    def r(*shape):
        return torch.rand(*shape, generator=g, dtype=torch.float64)

    b, s, a, c, d = 2, 3, 2, 2, 1
    out = {"soft_bellman": launches(sb, "_soft_bellman_kernel", lambda: sb.soft_bellman(
        r(b, d), r(s, a, c), r(d, s, a, c), r(s, a, c, s), r(b, s), r(b, s, c), 0.3, 0.9,
        impl="triton"))}
    edges, logp = torch.zeros(1, 3, 2, dtype=torch.int64), torch.log(r(2, 4))
    out["lattice_forward"] = launches(lf, "_lattice_forward_kernel", lambda: [
        lf.lattice_forward(edges, logp, sr, impl="triton") for sr in ("log", "max")])
    out["pgf"] = launches(pg, "_pgf_mul_kernel",
                          lambda: pg.pgf_mul(r(2, 5), r(2, 5), impl="triton"))
    inp = make_inputs(1, 2, 5, 3, 2, torch.float64)
    out["bellman_interp"] = launches(bi, "_bellman_interp_kernel",
                                     lambda: bi.bellman_interp(*inp, 2, 1, impl="triton"))

    @triton.jit
    def _bad(x_ptr, o_ptr, tau, n, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + i, mask=i < n, other=0.0)
        tl.store(o_ptr + i, tl.exp(x / tau), mask=i < n)

    x64 = r(4)
    out["control_bad"] = [audit(_bad, (x64, x64, 0.3, 4), {"BLOCK": 4})]

    import icml26.kernels.gain_shape_assign as gs

    x, code = torch.randn(256, 128), torch.randn(64, 128)
    tensor_cores = {}
    for prec in ("ieee", "tf32x3"):
        (a, k), = captured(gs, "_gain_shape_assign_kernel", lambda p=prec: gs.gain_shape_assign(
            x, code, torch.rand(64), "l2", impl="triton", block_n=64, block_k=64, precision=p))
        ptx = ptx_of(gs._gain_shape_assign_kernel, a, k)
        tensor_cores[prec] = "wgmma" in ptx or "mma.sync" in ptx
    out["gain_shape_assign_tensor_cores"] = tensor_cores
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
