"""GPU benchmark of the eight mini-TritonGym oracle kernels (``kernels/tritongym_ops.py``).

Oracle Triton kernel vs torch eager (the reference) and ``torch.compile`` of it, fp32: add /
gelu on 2^24 elements, the row operators on [8192, 1024] (rowsum, cumsum, softmax, layernorm,
rmsnorm) and the matmul on 1024^3 (16x16x16 tiles: a correctness oracle, not a tuned GEMM, so
expect it far below cuBLAS).  These are oracles (exempt from the speed target); the numbers
are the latencies ``profile`` reports on CUDA.  Bytes moved: inputs once, output once.
``--quick`` runs the same set (one size each).

    python -m icml26.kernels.bench --only tritongym_ops [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

SIZES = (8192, 1024, 2**24, 1024)  # rows, cols of the row ops; elements; matmul side


def op_inputs(device) -> dict:
    """op -> (size label, inputs) at benchmark sizes."""
    g = torch.Generator(device=device).manual_seed(0)

    def rnd(*shape):
        return torch.randn(*shape, device=device, generator=g)

    rows, cols, n, mm = SIZES
    return {"add": (f"{n}", [rnd(n), rnd(n)]), "gelu": (f"{n}", [rnd(n)]),
            "softmax": (f"{rows}x{cols}", [rnd(rows, cols)]),
            "layernorm": (f"{rows}x{cols}", [rnd(rows, cols), rnd(cols), rnd(cols)]),
            "rmsnorm": (f"{rows}x{cols}", [rnd(rows, cols), rnd(cols)]),
            "rowsum": (f"{rows}x{cols}", [rnd(rows, cols)]),
            "cumsum": (f"{rows}x{cols}", [rnd(rows, cols)]),
            "matmul": (f"{mm}^3", [rnd(mm, mm), rnd(mm, mm)])}


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels import tritongym_ops as K

    for op, (size, inputs) in op_inputs(dev).items():
        ref = K.REFERENCES[op](*inputs)
        comp = harness.compiled(K.REFERENCES[op])
        yield Case("tritongym_ops", f"{op} {size}", "fp32",
                   {"triton": lambda op=op, a=inputs: K.run_op(op, *a, impl="triton"),
                    "torch-eager": lambda op=op, a=inputs: K.REFERENCES[op](*a),
                    "torch-compile": lambda c=comp, a=inputs: c(*a)},
                   bytes_moved=4 * (sum(t.numel() for t in inputs) + ref.numel()),
                   error=lambda out, ref=ref: float((out - ref).abs().max()))


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("tritongym_ops"))
