"""GPU benchmark of the fused gain-shape assignment (``kernels/gain_shape_assign.py``).

Assignment (``op`` = fwd): Triton vs torch eager (``x @ s.T`` -> scores -> ``max``, which
materialises ``N x K``) vs ``torch.compile`` of the same function, for N in 2^14..2^22
(quick: 2^14, 2^22), K in {16 (gsrq's codebooks), 256}, d = 128, fp32, the l2 rule; the
Triton rows are the default ``precision="ieee"`` (fp32 FMAs) and ``triton-tf32x3`` (tensor
cores).  Centroid
update (pass ``update``): the Triton scatter-add vs the torch path.  Bytes moved by the fused
assignment: ``4 N d`` in, ``12 N`` out, the codebook once.

    python -m icml26.kernels.bench --only gain_shape_assign [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

LOG2N = tuple(range(14, 23, 2))
QUICK_LOG2N = (14, 22)
CODES = (16, 256)
DIM = 128


def eager_assign(x: torch.Tensor, shapes: torch.Tensor, gains: torch.Tensor):
    """The unfused baseline: the full ``[N, K]`` score matrix, then a row max."""
    scores = 2.0 * gains * (x @ shapes.T) - gains * gains
    best, idx = scores.max(dim=1)
    return idx, best


def cases(quick: bool = False):
    dim = DIM
    dev = harness.DEVICE
    from icml26.kernels.gain_shape_assign import centroid_sums, gain_shape_assign

    comp = harness.compiled(eager_assign)
    g = torch.Generator(device=dev).manual_seed(0)
    for k in CODES:
        shapes = torch.nn.functional.normalize(
            torch.randn(k, dim, device=dev, generator=g), dim=1)
        gains = torch.rand(k, device=dev, generator=g) + 0.5
        for log2n in (QUICK_LOG2N if quick else LOG2N):
            n = 2**log2n
            x = torch.randn(n, dim, device=dev, generator=g)
            ref_idx, _ = eager_assign(x, shapes, gains)
            a = (x, shapes, gains)
            yield Case("gain_shape_assign", f"N={n} K={k} d={dim}", "fp32",
                       {"triton": lambda a=a: gain_shape_assign(*a, "l2", impl="triton"),
                        "triton-tf32x3": lambda a=a: gain_shape_assign(
                            *a, "l2", impl="triton", precision="tf32x3"),
                        "torch-eager": lambda a=a: eager_assign(*a),
                        "torch-compile": lambda a=a: comp(*a)},
                       bytes_moved=4 * n * dim + 12 * n + 4 * k * (dim + 1),
                       error=lambda out, r=ref_idx: float((out[0] != r).float().mean()),
                       note="max_err = fraction of rows assigned another code",
                       extra={"tflop": 2 * n * k * dim / 1e12})
            yield Case("gain_shape_assign", f"N={n} K={k} d={dim}", "fp32",
                       {"triton": lambda x=x, i=ref_idx, k=k: centroid_sums(
                           x, i, k, unit=True, impl="triton"),
                        "torch-eager": lambda x=x, i=ref_idx, k=k: centroid_sums(
                            x, i, k, unit=True, impl="torch")},
                       bytes_moved=4 * n * dim + 8 * n + 8 * k * (dim + 1), pass_="update")


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("gain_shape_assign"))
