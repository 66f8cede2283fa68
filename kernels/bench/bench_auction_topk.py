"""GPU benchmark of batched auction resolution (``kernels/auction_topk.py``).

Triton (one fused pass: top-2, winner, reserve, price) vs torch eager (``torch.topk(k=2)``
then ``where``/``clamp``: the reference) vs ``torch.compile`` of the reference, for M auctions
in 2^14..2^24 (quick: 2^14, 2^24) and N in {5 (ad_auctions' slots), 64} bidders, fp32.
Bytes moved by the fused kernel: ``4 M N`` in, ``20 M`` out.

    python -m icml26.kernels.bench --only auction_topk [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

LOG2M = tuple(range(14, 25, 2))
QUICK_LOG2M = (14, 24)
BIDDERS = (5, 64)


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.auction_topk import auction_topk, auction_topk_ref

    comp = harness.compiled(auction_topk_ref)
    g = torch.Generator(device=dev).manual_seed(0)
    for n in BIDDERS:
        for log2m in (QUICK_LOG2M if quick else LOG2M):
            m = 2**log2m
            s = torch.rand(m, n, device=dev, generator=g)
            ref = auction_topk_ref(s, 0.05)
            yield Case("auction_topk", f"M={m} N={n}", "fp32",
                       {"triton": lambda s=s: auction_topk(s, 0.05, impl="triton"),
                        "torch-eager": lambda s=s: auction_topk_ref(s, 0.05),
                        "torch-compile": lambda s=s: comp(s, 0.05)},
                       bytes_moved=4 * m * n + 20 * m,
                       error=lambda out, ref=ref: float((out[3] - ref[3]).abs().max()))


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("auction_topk"))
