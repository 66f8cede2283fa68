"""The tools of mini-TritonGym: ``compile``, ``verify`` and ``profile``, with the test shapes.

``compile_source(src, op)`` writes the kernel source to a file in the cache folder, imports it
(``@triton.jit`` runs under ``TRITON_INTERPRET=1`` when no CUDA device is present) and returns
the kernel object or the error text.  ``verify(src, op)`` compiles and RUNS it on the
operator's three test shapes and compares with the torch reference: pass means every shape has
max |out - ref| <= ``tol`` (the paper's Pass@1 criterion, tol = 0.01).  The inputs live inside
guarded buffers: the gaps between strided rows and a guard zone on both sides hold NaN (a read
outside the tensor poisons the result) and the output's guard holds a sentinel that must be
intact after the launch (a write outside the tensor fails the shape), like a memory sanitizer.
The output itself is pre-filled with NaN, so an element never written fails too.

Test shapes (``Shape.kind``): ``regular`` (sizes a multiple of the block), ``odd-tail`` (not a
multiple: the last block is partial) and ``stress`` (a strided / transposed input, large or
offset values, a small variance for the norms: what catches stride, range, precision and eps
mistakes).  Each shape names the bug classes it is designed to probe (``probes``); the repair
model reads the first failing shape from ``verify``'s feedback through these tags.

``profile(src, op)``: on CUDA the median latency of the launch (``triton.testing.do_bench``);
on CPU an explicit COST MODEL (bytes moved at a nominal 3.35 TB/s plus 2 us per launch and
0.1 us per program loop trip), labelled as such: interpreter time says nothing about GPU speed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
import triton.language as tl

from icml26.common import cache_dir
from icml26.kernels.tritongym_ops import (
    BLOCK_1D,
    BLOCK_MM,
    REFERENCES,
    check_op,
    kernel_name,
    launch,
    output_shape,
)

KINDS = ("regular", "odd-tail", "stress")
GUARD = 4096  #: guard elements before and after every tensor
SENTINEL = 7777.0  #: value of the output guard (must survive the launch)
TOL = 0.01  #: the paper's Pass@1 tolerance on max |err|
_IMPORT_LOCK = threading.Lock()
#: the interpreter patches triton.language while a kernel runs: one launch at a time per process
_RUN_LOCK = threading.Lock()
#: Triton's interpreter needs TRITON_INTERPRET=1 before triton is first imported (its
#: ``tl.max`` / ``tl.sum`` helpers are jit functions made at import); when this process was
#: started without it on a CPU machine, ``verify_many`` runs the candidates in a worker process.
def _interpreter_ready() -> bool:
    """True when triton was imported in interpreter mode (its ``tl.max`` is interpreted)."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover
        return False
    return isinstance(tl.max, InterpretedFunction)


IN_PROCESS = _interpreter_ready()


@dataclass(frozen=True)
class Shape:
    """One test case: ``dims`` (n | (R, C) | (M, K, N)), a row stride pad, value scale/offset,
    the weights' scale (norms) and whether B is given transposed (matmul)."""

    name: str
    kind: str
    dims: tuple[int, ...]
    pad: int = 0
    scale: float = 1.0
    offset: float = 0.0
    w_scale: float = 1.0
    transposed_b: bool = False
    probes: tuple[str, ...] = field(default=())


TAIL = ("mask_dropped", "off_by_one")
STRESS = ("no_max_sub", "wrong_eps", "wrong_stride", "fp16_acc")


def _row_shapes(scale, offset, w_scale=1.0) -> tuple[Shape, ...]:
    return (Shape("regular 4x64", "regular", (4, 64)),
            Shape("odd tail 5x37", "odd-tail", (5, 37), probes=TAIL),
            Shape("stress 3x64, row stride 80", "stress", (3, 64), pad=16, scale=scale,
                  offset=offset, w_scale=w_scale, probes=STRESS))


_1D = (Shape("regular 256", "regular", (256,)),
       Shape("odd tail 300", "odd-tail", (300,), probes=TAIL),
       Shape("stress 512, |x| ~ 64", "stress", (512,), scale=64.0, probes=STRESS))

#: op -> its three test shapes (regular, odd tail, stress)
SHAPES: dict[str, tuple[Shape, ...]] = {
    "add": _1D,
    "gelu": _1D,
    "softmax": _row_shapes(2.0, 1000.0),  # logits ~1000: exp overflows without the max,
    # and fp16 rounds them to 0.5 (probabilities off by ~30%)
    "layernorm": _row_shapes(0.1, 200.0),  # var 0.01 (eps-sensitive), mean 200 (fp16-lossy)
    "rmsnorm": _row_shapes(0.1, 0.0, 50.0),  # mean square 0.01, outputs ~100
    "rowsum": _row_shapes(1.0, 20.0),  # sums ~1300: fp16 rounds to 1
    "cumsum": _row_shapes(1.0, 20.0),
    "matmul": (Shape("regular 32x32x32", "regular", (32, 32, 32)),
               Shape("odd tail 20x40x24", "odd-tail", (20, 40, 24), probes=TAIL),
               Shape("stress 32x32x32, B transposed", "stress", (32, 32, 32), scale=4.0,
                     transposed_b=True, probes=STRESS)),
}


def shapes_for(op: str, kinds: tuple[str, ...] = KINDS) -> tuple[Shape, ...]:
    check_op(op)
    bad = set(kinds) - set(KINDS)
    if bad:
        raise ValueError(f"shape kinds must be among {KINDS}, got {sorted(bad)}")
    return tuple(s for s in SHAPES[op] if s.kind in kinds)


# --------------------------------------------------------------------------- guarded tensors
def _guarded(values: torch.Tensor, stride: tuple[int, ...], fill: float) -> torch.Tensor:
    """A view with ``values``' shape and ``stride`` into a buffer of ``fill`` with guards."""
    span = 1 + sum((n - 1) * s for n, s in zip(values.shape, stride))
    buf = torch.full((span + 2 * GUARD,), fill, dtype=torch.float32, device=values.device)
    view = torch.as_strided(buf, values.shape, stride, GUARD)
    view.copy_(values)
    return view


def make_inputs(op: str, shape: Shape, device="cpu") -> list[torch.Tensor]:
    """The inputs of one test case, in guarded NaN buffers (seeded by op and shape)."""
    seed = int(hashlib.sha256(f"{op}/{shape.name}".encode()).hexdigest()[:8], 16)
    g = torch.Generator().manual_seed(seed)

    def draw(*dims):
        return torch.randn(*dims, generator=g) * shape.scale + shape.offset

    if op in ("add", "gelu"):
        xs = [draw(shape.dims[0]) for _ in range(2 if op == "add" else 1)]
        return [_guarded(x.to(device), (1,), math.nan) for x in xs]
    if op == "matmul":
        m, k, n = shape.dims
        a = _guarded(draw(m, k).to(device), (k, 1), math.nan)
        b_val = draw(k, n).to(device)
        b_stride = (1, k) if shape.transposed_b else (n, 1)
        return [a, _guarded(b_val, b_stride, math.nan)]
    rows, cols = shape.dims
    x = _guarded(draw(rows, cols).to(device), (cols + shape.pad, 1), math.nan)
    weights = [torch.randn(cols, generator=g) * shape.w_scale for _ in
               range({"layernorm": 2, "rmsnorm": 1}.get(op, 0))]
    return [x] + [_guarded(w.to(device), (1,), math.nan) for w in weights]


def _guarded_output(op: str, inputs: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(output view pre-filled with NaN, its whole buffer with SENTINEL guards)."""
    shp = output_shape(op, inputs)
    stride = tuple(int(np.prod(shp[i + 1:])) for i in range(len(shp)))
    numel = int(np.prod(shp))
    buf = torch.full((numel + 2 * GUARD,), SENTINEL, dtype=torch.float32,
                     device=inputs[0].device)
    out = torch.as_strided(buf, shp, stride, GUARD)
    out.fill_(math.nan)
    return out, buf


# --------------------------------------------------------------------------- compile
@dataclass(frozen=True)
class Compiled:
    ok: bool
    kernel: object = None
    error: str = ""


def _use_cuda() -> bool:
    return torch.cuda.is_available()


def compile_source(src: str, op: str) -> Compiled:
    """Import kernel source ``src`` of ``op`` (the ``compile`` tool): a kernel or the error.

    The file goes to ``$ICML26_CACHE/tritongym/src/<hash>.py`` (``@triton.jit`` reads the
    source from a file).  On CPU the decorator runs under ``TRITON_INTERPRET=1``; on CUDA the
    kernel is compiled for the device at its first launch (inside ``verify``)."""
    check_op(op)
    digest = hashlib.sha256(src.encode()).hexdigest()[:16]
    folder = cache_dir() / "tritongym" / "src"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{op}_{digest}.py"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text("import triton\nimport triton.language as tl\n\n\n" + src)
        os.replace(tmp, path)
    name = f"tritongym_candidate_{op}_{digest}"
    try:
        with _IMPORT_LOCK:
            old = os.environ.get("TRITON_INTERPRET")
            if not _use_cuda():
                os.environ["TRITON_INTERPRET"] = "1"
            try:
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            finally:
                if old is None:
                    os.environ.pop("TRITON_INTERPRET", None)
                else:
                    os.environ["TRITON_INTERPRET"] = old
        return Compiled(True, getattr(module, kernel_name(op)))
    except Exception as err:  # noqa: BLE001 - a broken candidate is a verify result
        return Compiled(False, error=f"{type(err).__name__}: {err}")


# --------------------------------------------------------------------------- verify
@dataclass(frozen=True)
class ShapeResult:
    shape: str
    kind: str
    max_err: float  # inf: non-finite output, out-of-bounds write or a failed launch
    note: str = ""


@dataclass(frozen=True)
class VerifyResult:
    """``verify``'s answer for one candidate on a set of shapes."""

    op: str
    compiled: bool
    shapes: tuple[ShapeResult, ...]
    error: str = ""

    def passed(self, tol: float = TOL, kinds: tuple[str, ...] = KINDS) -> bool:
        rs = self.select(kinds)
        return self.compiled and bool(rs) and all(r.max_err <= tol for r in rs)

    def select(self, kinds: tuple[str, ...]) -> tuple[ShapeResult, ...]:
        return tuple(r for r in self.shapes if r.kind in kinds)

    def max_err(self, kinds: tuple[str, ...] = KINDS) -> float:
        rs = self.select(kinds)
        return max((r.max_err for r in rs), default=math.inf) if self.compiled else math.inf

    def first_failure(self, tol: float = TOL, kinds: tuple[str, ...] = KINDS
                      ) -> ShapeResult | None:
        """The first shape (in test order) over ``tol``; None when all pass."""
        if not self.compiled:
            return ShapeResult("compile", "compile", math.inf, self.error)
        return next((r for r in self.select(kinds) if r.max_err > tol), None)


def run_shape(kernel, op: str, shape: Shape, device="cpu") -> ShapeResult:
    """Launch ``kernel`` on one guarded test case and compare with the torch reference."""
    inputs = make_inputs(op, shape, device)
    ref = REFERENCES[op](*inputs)
    out, buf = _guarded_output(op, inputs)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            launch(op, kernel, inputs, out)
        if device != "cpu":
            torch.cuda.synchronize()
    except Exception as err:  # noqa: BLE001 - a failed launch fails the shape
        return ShapeResult(shape.name, shape.kind, math.inf,
                           f"launch failed: {type(err).__name__}: {str(err)[:200]}")
    guards = torch.cat([buf[:GUARD], buf[-GUARD:]])
    if not bool((guards == SENTINEL).all()):
        return ShapeResult(shape.name, shape.kind, math.inf, "wrote outside the output")
    err = (out - ref).abs()
    if not bool(torch.isfinite(out).all()):
        return ShapeResult(shape.name, shape.kind, math.inf, "non-finite output")
    return ShapeResult(shape.name, shape.kind, float(err.max()), "")


def verify(src: str, op: str, kinds: tuple[str, ...] = KINDS) -> VerifyResult:
    """The ``verify`` tool: compile ``src`` and run it on ``op``'s test shapes."""
    compiled = compile_source(src, op)
    if not compiled.ok:
        return VerifyResult(op, False, (), compiled.error)
    device = "cuda" if _use_cuda() else "cpu"
    with _RUN_LOCK:
        return VerifyResult(op, True, tuple(run_shape(compiled.kernel, op, s, device)
                                            for s in shapes_for(op, kinds)))


# --------------------------------------------------------------------------- profile
HBM_BYTES_PER_S = 3.35e12  #: nominal H100 SXM bandwidth of the cost model
LAUNCH_US, TRIP_US = 2.0, 0.1


def _programs_and_trips(op: str, shape: Shape) -> tuple[int, int]:
    if op in ("add", "gelu"):
        return math.ceil(shape.dims[0] / BLOCK_1D), 1
    if op == "matmul":
        m, k, n = shape.dims
        return math.ceil(m / BLOCK_MM) * math.ceil(n / BLOCK_MM), math.ceil(k / BLOCK_MM)
    return shape.dims[0], 1


def profile(src: str, op: str, kinds: tuple[str, ...] = KINDS) -> dict:
    """The ``profile`` tool: per-shape time in microseconds and what produced it.

    CUDA: ``triton.testing.do_bench`` median of the launch (``"source": "measured"``).
    CPU: the cost model above (``"source": "cost model (CPU, not a measurement)"``)."""
    check_op(op)
    rows = []
    if _use_cuda():
        import triton.testing

        compiled = compile_source(src, op)
        if not compiled.ok:
            return {"source": "measured", "error": compiled.error, "shapes": []}
        for s in shapes_for(op, kinds):
            inputs = make_inputs(op, s, "cuda")
            out, _ = _guarded_output(op, inputs)
            ms = triton.testing.do_bench(
                lambda i=inputs, o=out: launch(op, compiled.kernel, i, o))
            rows.append({"shape": s.name, "us": 1e3 * ms})
        return {"source": "measured", "shapes": rows}
    for s in shapes_for(op, kinds):
        inputs = make_inputs(op, s)
        moved = 4 * (sum(t.numel() for t in inputs) + int(np.prod(output_shape(op, inputs))))
        programs, trips = _programs_and_trips(op, s)
        us = moved / HBM_BYTES_PER_S * 1e6 + LAUNCH_US + TRIP_US * programs * trips
        rows.append({"shape": s.name, "us": us, "bytes": moved, "programs": programs,
                     "trips": trips})
    return {"source": "cost model (CPU, not a measurement)", "shapes": rows}




# --------------------------------------------------------------------------- batches
def _to_dict(r: VerifyResult) -> dict:
    return dataclasses.asdict(r)


def _from_dict(d: dict) -> VerifyResult:
    return VerifyResult(d["op"], d["compiled"], tuple(ShapeResult(**s) for s in d["shapes"]),
                        d["error"])


def verify_device(device: str | None = None) -> str:
    """Where ``verify_many`` runs candidates: ``"cuda"`` (compiled kernels) or ``"cpu"`` (the
    Triton interpreter); None picks CUDA whenever torch sees a GPU."""
    from icml26.common import resolve_device

    return ("cuda" if _use_cuda() else "cpu") if device is None else resolve_device(device).type


def verify_many(jobs: list[tuple[str, str]], device: str | None = None) -> list[VerifyResult]:
    """``verify`` for every ``(src, op)`` on ``device`` (``verify_device``): in this process
    on CUDA or under the interpreter, else in one worker process started with
    ``TRITON_INTERPRET=1`` (a few seconds of start-up, and a candidate that crashes cannot take
    the caller down); ``device="cpu"`` on a machine with a GPU hides the GPU from that worker,
    so the candidates run in the interpreter there too."""
    if not jobs:
        return []
    where = verify_device(device)
    if where == "cuda" or (IN_PROCESS and not _use_cuda()):
        return [verify(src, op) for src, op in jobs]
    with tempfile.TemporaryDirectory() as tmp:
        job_file, out_file = os.path.join(tmp, "jobs.json"), os.path.join(tmp, "out.json")
        with open(job_file, "w") as f:
            json.dump([list(j) for j in jobs], f)
        env = {**os.environ, "TRITON_INTERPRET": "1", "ICML26_CACHE": str(cache_dir())}
        if _use_cuda():  # device="cpu" on a GPU machine: the interpreter, not the GPU
            env["CUDA_VISIBLE_DEVICES"] = ""
        proc = subprocess.run([sys.executable, "-m", "icml26.tritongym.harness", job_file,
                               out_file], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"verify worker failed ({proc.returncode}): "
                               f"{proc.stderr[-2000:]}")
        with open(out_file) as f:
            return [_from_dict(d) for d in json.load(f)]


def _worker(job_file: str, out_file: str) -> None:
    with open(job_file) as f:
        jobs = json.load(f)
    results = [_to_dict(verify(src, op)) for src, op in jobs]
    with open(out_file, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2])
