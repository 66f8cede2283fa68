"""GPU benchmark of the batched soft Bellman backup (``kernels/soft_bellman.py``).

One backup over an x-grid of the PANDA landscape sweep: the quick-scale grid (33 x 33 points,
S = 3, 3 x 3 actions, D = 2), the paper-scale grid (41 x 41) and larger games (S = 16 and 64,
8 x 8 actions) at 128 x 128 grid points; quick: 41 x 41 and S = 64.  Compared: the Triton
kernel and the torch reference (materialises ``r_x`` and ``Q``, ``B S A C`` numbers each)
eager and under ``torch.compile``, float64 (the library's dtype) and float32.  Compute/latency
bound (the game tensors are cache-resident): no % of copy bandwidth.

    python -m icml26.kernels.bench --only soft_bellman [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

SIZES = [(33 * 33, 3, 3, 3, 2), (41 * 41, 3, 3, 3, 2), (128 * 128, 16, 8, 8, 2),
         (128 * 128, 64, 8, 8, 2)]
QUICK = [(41 * 41, 3, 3, 3, 2), (128 * 128, 64, 8, 8, 2)]


def inputs(b, s, a, c, d, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    P = torch.rand(s, a, c, s, generator=g, dtype=torch.float64)
    opp = torch.rand(b, s, c, generator=g, dtype=torch.float64)
    args = (torch.randn(b, d, generator=g, dtype=torch.float64),
            torch.randn(s, a, c, generator=g, dtype=torch.float64),
            torch.randn(d, s, a, c, generator=g, dtype=torch.float64),
            P / P.sum(-1, keepdim=True), torch.randn(b, s, generator=g, dtype=torch.float64),
            opp / opp.sum(-1, keepdim=True))
    return [t.to(device=device, dtype=dtype) for t in args]


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.soft_bellman import soft_bellman, soft_bellman_ref

    comp = harness.compiled(soft_bellman_ref)
    for dtype, name in ((torch.float64, "fp64"), (torch.float32, "fp32")):
        for b, s, a, c, d in (QUICK if quick else SIZES):
            x = inputs(b, s, a, c, d, dtype, dev)
            ref, _ = soft_bellman_ref(*[t.double() for t in x], tau=0.3, gamma=0.9)
            yield Case("soft_bellman", f"B={b} S={s} A={a} C={c} D={d}", name,
                       {"triton": lambda x=x: soft_bellman(*x, tau=0.3, gamma=0.9,
                                                           impl="triton"),
                        "torch-eager": lambda x=x: soft_bellman_ref(*x, tau=0.3, gamma=0.9),
                        "torch-compile": lambda x=x: comp(*x, tau=0.3, gamma=0.9)},
                       error=lambda out, ref=ref: float((out[0].double() - ref).abs().max()))


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("soft_bellman"))
