"""GPU benchmark of the truncated-PGF product (``kernels/pgf.py``), new with the harness.

Triton (one program per row pair, the ``L x L`` anti-diagonal sums in registers) vs the torch
reference (``L`` shifted axpys over the batch, then the lumped tail) eager and under
``torch.compile``, float64 (the recruitment DP's dtype) and float32.  Shapes: the DP's
products (``N = 1681`` rows of ``L = 61``, ``4096 x 41``) and at scale (``2^18 x 64``,
``2^14 x 256``); quick: ``1681 x 61`` and ``2^18 x 64``.  Bytes moved: ``3 N L`` elements.

    python -m icml26.kernels.bench --only pgf [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

SHAPES = [(1681, 61), (4096, 41), (2**18, 64), (2**14, 256)]
QUICK = [(1681, 61), (2**18, 64)]


def random_pmfs(n: int, length: int, dtype, seed: int, dev) -> torch.Tensor:
    g = torch.Generator(device=dev).manual_seed(seed)
    x = torch.rand(n, length, generator=g, dtype=torch.float64, device=dev)
    return (x / x.sum(-1, keepdim=True)).to(dtype)


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.pgf import pgf_mul, pgf_mul_ref

    comp = harness.compiled(pgf_mul_ref)
    for dtype, name in ((torch.float64, "fp64"), (torch.float32, "fp32")):
        for n, length in (QUICK if quick else SHAPES):
            a, b = random_pmfs(n, length, dtype, 1, dev), random_pmfs(n, length, dtype, 2, dev)
            ref = pgf_mul_ref(a.double(), b.double())
            yield Case("pgf", f"N={n} L={length}", name,
                       {"triton": lambda a=a, b=b: pgf_mul(a, b, impl="triton"),
                        "torch-eager": lambda a=a, b=b: pgf_mul_ref(a, b),
                        "torch-compile": lambda a=a, b=b: comp(a, b)},
                       bytes_moved=3 * n * length * a.element_size(),
                       error=lambda out, ref=ref: float((out.double() - ref).abs().max()))


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("pgf"))
