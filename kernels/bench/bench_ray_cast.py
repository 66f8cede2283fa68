"""GPU benchmark of the 2-D ray caster (``kernels/ray_cast.py``).

Triton (one program per block of rays, a running min over primitives) vs the torch reference
(broadcast ``[B, R, S]`` / ``[B, R, C]`` intersections, then a first-index min) eager and under
``torch.compile``, for B scenes in 2^4..2^12 (quick: 2^4, 2^12), R = 720 beams, S = 48
segments, C = 8 circles (the coval scene layout), fp32.  Compute-bound (ray-primitive tests;
the scene is read once): ``max_err`` is the fraction of hit ids that differ from the
reference's; no % of copy bandwidth.

    python -m icml26.kernels.bench --only ray_cast [--quick] [--out DIR]
"""

from __future__ import annotations

import math
import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

LOG2B = tuple(range(4, 13, 2))
QUICK_LOG2B = (4, 12)
SCENE = (720, 48, 8)  # beams, segments, circles


def scenes(b, r, s, c, device, seed=0):
    """Random scenes: segments and circles within 10 m of sensors near the origin."""
    g = torch.Generator(device=device).manual_seed(seed)
    origins = torch.randn(b, 2, device=device, generator=g) * 0.3
    ang = (torch.arange(r, device=device) + 0.5) * (2 * math.pi / r)
    dirs = torch.stack([ang.cos(), ang.sin()], 1)
    segs = torch.randn(b, s, 4, device=device, generator=g) * 5
    circ = torch.cat([torch.randn(b, c, 2, device=device, generator=g) * 5,
                      torch.rand(b, c, 1, device=device, generator=g)], 2)
    return origins, dirs, segs, circ


def cases(quick: bool = False):
    r, s, c = SCENE
    dev = harness.DEVICE
    from icml26.kernels.ray_cast import ray_cast, ray_cast_ref

    comp = harness.compiled(ray_cast_ref)
    for log2b in (QUICK_LOG2B if quick else LOG2B):
        b = 2**log2b
        args = scenes(b, r, s, c, dev)
        _, ref_id = ray_cast_ref(*args, 20.0)
        yield Case("ray_cast", f"B={b} R={r} S={s} C={c}", "fp32",
                   {"triton": lambda a=args: ray_cast(*a, 20.0, impl="triton"),
                    "torch-eager": lambda a=args: ray_cast_ref(*a, 20.0),
                    "torch-compile": lambda a=args: comp(*a, 20.0)},
                   error=lambda out, ref=ref_id: float((out[1] != ref).float().mean()),
                   extra={"gtests": b * r * (s + c) / 1e9})


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("ray_cast"))
