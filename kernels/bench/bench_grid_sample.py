"""GPU benchmark of bilinear grid sampling (``kernels/grid_sample.py``), forward + backward.

Triton (the fused forward; the fused backward: gathers, scatter-add into the map and the
coordinate gradients) vs ``F.grid_sample`` on a ``[B, C, H, W]`` copy (``impl="reference"``,
cuDNN/ATen, the permute counted) eager and under ``torch.compile``, and the torch twin (gathers
+ ``scatter_add_``).  GridS's shapes: ``H = W = 16``, ``C`` in {32, 1152 (SigLIP)}, ``K`` in
{4, 16, 64} points, batch ``B`` in 2^6..2^12 (quick: K = 16, B = 2^6 and 2^12), fp32.  Passes:
``fwd`` and ``fwd+bwd``.  Bytes per forward: ``16 B K C`` (4 neighbour rows) + ``4 B K C`` out;
the backward adds the same gathers, ``16 B K C`` of atomics and the ``4 B H W C`` zero-fill.

    python -m icml26.kernels.bench --only grid_sample [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

CHANNELS = (32, 1152)
POINTS = (4, 16, 64)
QUICK_POINTS = (16,)
LOG2B = tuple(range(6, 13, 2))
QUICK_LOG2B = (6, 12)
HW = 16


def cases(quick: bool = False):
    hw = HW
    dev = harness.DEVICE
    from icml26.kernels.grid_sample import grid_sample, grid_sample_ref

    reference = grid_sample_ref
    comp = harness.compiled(reference)
    paths = {"triton": lambda f, p: grid_sample(f, p, impl="triton"),
             "torch-eager": reference, "torch-compile": comp,
             "torch-twin": lambda f, p: grid_sample(f, p, impl="torch")}
    g = torch.Generator(device=dev).manual_seed(0)
    for c in CHANNELS:
        for k in (QUICK_POINTS if quick else POINTS):
            for log2b in (QUICK_LOG2B if quick else LOG2B):
                b = 2**log2b
                feat = torch.randn(b, hw, hw, c, device=dev, generator=g,
                                   requires_grad=True)
                coords = torch.rand(b, k, 2, device=dev, generator=g).requires_grad_()
                grad = torch.randn(b, k, c, device=dev, generator=g)
                with torch.no_grad():
                    ref = reference(feat, coords)
                fwd = 20 * b * k * c
                shape = f"B={b} H=W={hw} C={c} K={k}"

                def fwd_fn(fn, feat=feat, coords=coords):
                    with torch.no_grad():
                        return fn(feat, coords)

                def both(fn, feat=feat, coords=coords, grad=grad):
                    return torch.autograd.grad(fn(feat, coords), (feat, coords), grad)

                yield Case("grid_sample", shape, "fp32",
                           {i: (lambda fn=fn: fwd_fn(fn)) for i, fn in paths.items()},
                           bytes_moved=fwd,
                           error=lambda out, ref=ref: float((out - ref).abs().max()))
                yield Case("grid_sample", shape, "fp32",
                           {i: (lambda fn=fn: both(fn)) for i, fn in paths.items()},
                           bytes_moved=2 * fwd + 16 * b * k * c + 4 * b * hw * hw * c,
                           pass_="fwd+bwd")


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("grid_sample"))
