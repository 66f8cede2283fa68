"""GPU benchmark of the fused per-token statistics (``kernels/token_stats.py``).

Triton vs torch eager (``log_softmax`` -> ``p`` -> ``p l`` -> centred ``p l^2``, each an
``[N, V]`` tensor) vs ``torch.compile`` of the same function, for N in 2^14..2^22 rows (quick:
2^14, 2^22), V in {96 (the characters of ``detectrouter``), 32768 (an LLM vocabulary, N capped
so the logits fit in 2 GiB)}, fp32.  Triton rows: the default (several whole rows per program
when a row is one chunk) and ``triton-one-row`` (the one-row streaming kernel), so the
crossover between them is measured.  Bytes moved by the fused kernel: ``4 N V`` in, ``20 N``
in/out.

    python -m icml26.kernels.bench --only token_stats [--quick] [--out DIR]
"""

from __future__ import annotations

import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

MAX_LOGITS = 2**31  # bytes of the largest logits tensor benchmarked

LOG2N = tuple(range(14, 23, 2))
VOCABS = (96, 32768)


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.token_stats import token_stats, token_stats_ref

    comp = harness.compiled(token_stats_ref)
    g = torch.Generator(device=dev).manual_seed(0)
    for v in VOCABS:
        log2ns = [n for n in LOG2N if 4 * 2**n * v <= MAX_LOGITS]
        for log2n in ((log2ns[0], log2ns[-1]) if quick else log2ns):
            n = 2**log2n
            z = torch.randn(n, v, device=dev, generator=g) * 3
            y = torch.randint(0, v, (n,), device=dev, generator=g)
            ref = token_stats_ref(z.double(), y)
            yield Case("token_stats", f"N={n} V={v}", "fp32",
                       {"triton": lambda z=z, y=y: token_stats(z, y, impl="triton"),
                        "triton-one-row": lambda z=z, y=y: token_stats(
                            z, y, impl="triton", rows_per_program=1),
                        "torch-eager": lambda z=z, y=y: token_stats_ref(z, y),
                        "torch-compile": lambda z=z, y=y: comp(z, y)},
                       bytes_moved=4 * n * v + 20 * n,
                       error=lambda out, ref=ref: max(float((a.double() - b).abs().max())
                                                      for a, b in zip(out, ref)))


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("token_stats"))
