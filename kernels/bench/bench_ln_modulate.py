"""GPU benchmark of the fused LayerNorm + adaLN modulation (``kernels/ln_modulate.py``).

Triton vs torch eager (``layer_norm`` then ``(1 + scale) * xhat + shift``) vs ``torch.compile``
of the same function, for N = B*T tokens in 2^12..2^22 (quick: 2^12, 2^22) and D in {128,
1152 (SiT-XL's width, selfflow)}, fp32 and bf16 (forward only: the kernel has no backward).
Bytes moved by the fused kernel: ``4 N D`` elements.

    python -m icml26.kernels.bench --only ln_modulate [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

LOG2N = tuple(range(12, 23, 2))
QUICK_LOG2N = (12, 22)
DIMS = (128, 1152)


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.ln_modulate import ln_modulate, ln_modulate_ref

    comp = harness.compiled(ln_modulate_ref)
    for dtype, name in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        for d in DIMS:
            for log2n in (QUICK_LOG2N if quick else LOG2N):
                n = 2**log2n
                a = tuple(torch.randn(n, d, device=dev, dtype=dtype) for _ in range(3))
                ref = ln_modulate_ref(*(t.double() for t in a))
                yield Case("ln_modulate", f"N={n} D={d}", name,
                           {"triton": lambda a=a: ln_modulate(*a, impl="triton"),
                            "torch-eager": lambda a=a: ln_modulate_ref(*a),
                            "torch-compile": lambda a=a: comp(*a)},
                           bytes_moved=4 * n * d * a[0].element_size(),
                           error=lambda out, ref=ref: float((out.double() - ref).abs().max()))


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("ln_modulate"))
