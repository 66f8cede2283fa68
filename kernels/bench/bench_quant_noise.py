"""GPU benchmark of the fused fake-quantization noise (``kernels/quant_noise.py``).

``R`` noisy copies of a weight vector of ``N`` float32 weights: the Triton kernel (counter-based
hash uniforms, no RNG state) vs the torch reference eager and under ``torch.compile``, additive
and subtractive dither.  Shapes: tpv's widest student (71,425 weights x 512 draws) and larger
nets (2^20 x 64, 2^24 x 8); quick: the first and the last.  Bytes moved: read ``N``, write
``R N`` float32.

    python -m icml26.kernels.bench --only quant_noise [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

SHAPES = [(71_425, 512), (1 << 20, 64), (1 << 24, 8)]
QUICK = [(71_425, 512), (1 << 24, 8)]


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.quant_noise import quant_noise, quant_noise_ref

    comp = harness.compiled(quant_noise_ref)
    for n, r in (QUICK if quick else SHAPES):
        w = torch.randn(n, device=dev, generator=torch.Generator(device=dev).manual_seed(0))
        kw = {"delta": float(w.max() - w.min()) / 255, "draws": r, "seed": 1,
              "w_min": float(w.min()), "levels": 255}
        for mode in ("additive", "subtractive"):
            ref = quant_noise_ref(w, mode=mode, **kw)
            yield Case("quant_noise", f"N={n} R={r} {mode}", "fp32",
                       {"triton": lambda w=w, m=mode, kw=kw: quant_noise(w, mode=m,
                                                                         impl="triton", **kw),
                        "torch-eager": lambda w=w, m=mode, kw=kw: quant_noise_ref(w, mode=m,
                                                                                  **kw),
                        "torch-compile": lambda w=w, m=mode, kw=kw: comp(w, mode=m, **kw)},
                       bytes_moved=(n + r * n) * 4,
                       error=lambda out, ref=ref: float((out - ref).abs().max()))


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("quant_noise"))
