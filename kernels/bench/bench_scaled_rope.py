"""GPU benchmark of the fused scaled RoPE (``kernels/scaled_rope.py``), forward and backward.

Forward (q and k together) and backward (the inverse rotation with the same scale) of the
Triton kernel vs the torch reference eager and under ``torch.compile``, for OLMo-like shapes
``[B, H, T, D]`` (H = 8; D = 64 and 128; T up to 8192; quick: ``8x8x512x64`` (short sequences,
place_fields' regime) and ``2x8x8192x64``), bf16 and fp32.  Bytes moved: read q, k and write
both, ``4 B H T D`` elements (the backward moves the same).

    python -m icml26.kernels.bench --only scaled_rope [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

SHAPES = [(8, 8, 512, 64), (4, 8, 2048, 64), (2, 8, 8192, 64), (4, 8, 2048, 128)]
QUICK = [(8, 8, 512, 64), (2, 8, 8192, 64)]


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.scaled_rope import scaled_rope, scaled_rope_ref

    def ref_both(q, k, c, s, sc):
        return scaled_rope_ref(q, c, s, sc), scaled_rope_ref(k, c, s, sc)

    comp = harness.compiled(ref_both)
    paths = {"triton": lambda *a: scaled_rope(*a, impl="triton"), "torch-eager": ref_both,
             "torch-compile": comp}
    for dtype, name in ((torch.bfloat16, "bf16"), (torch.float32, "fp32")):
        for b, h, t, d in (QUICK if quick else SHAPES):
            g = torch.Generator(device=dev).manual_seed(0)
            q = torch.randn(b, h, t, d, device=dev, generator=g).to(dtype)
            k = torch.randn(b, h, t, d, device=dev, generator=g).to(dtype)
            omega = 1e4 ** (-torch.arange(0, d, 2, device=dev, dtype=torch.float64) / d)
            ang = torch.arange(t, device=dev, dtype=torch.float64)[:, None] * omega
            cos, sin = ang.cos().float(), ang.sin().float()
            sc = torch.rand(h, d // 2, device=dev, generator=g) + 0.5
            exact = scaled_rope_ref(q.double(), cos.double(), sin.double(), sc.double())
            moved = 4 * q.numel() * q.element_size()
            a = (q, k, cos, sin, sc)
            shape = f"B={b} H={h} T={t} D={d}"
            yield Case("scaled_rope", shape, name,
                       {i: (lambda fn=fn, a=a: fn(*a)) for i, fn in paths.items()},
                       bytes_moved=moved,
                       error=lambda out, e=exact: float((out[0].double() - e).abs().max()))
            gq, gk = torch.randn_like(q), torch.randn_like(k)
            bwd = {}
            for impl, fn in paths.items():
                qq, kk = q.clone().requires_grad_(), k.clone().requires_grad_()
                oq, ok = fn(qq, kk, cos, sin, sc)
                bwd[impl] = (lambda oq=oq, ok=ok, qq=qq, kk=kk, gq=gq, gk=gk: torch.autograd.grad(
                    (oq, ok), (qq, kk), (gq, gk), retain_graph=True))
            yield Case("scaled_rope", shape, name, bwd, bytes_moved=moved, pass_="bwd")


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("scaled_rope"))
