"""GPU benchmark of the batched soft Bellman backup (``kernels/soft_bellman.py``).

One backup over an x-grid of the PANDA landscape sweep: the quick-scale grid (33 x 33 points,
S = 3, 3 x 3 actions, D = 2), the paper-scale grid (41 x 41) and larger games (S = 16 and 64,
8 x 8 actions) at 128 x 128 grid points. Compared: the Triton kernel and the torch reference
(which materialises ``r_x`` and ``Q``, ``B S A C`` numbers each). Times are
``triton.testing.do_bench`` medians in float64 (the library's dtype) and float32; rows are
appended to ``benchmarks/soft_bellman.csv``.

    python kernels/bench/bench_soft_bellman.py [--out PATH]

Needs a CUDA GPU: without one it exits with a message and writes nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv

FIELDS = ["timestamp", "device", "torch", "triton", "dtype", "B", "S", "A", "C", "D", "impl",
          "ms", "backups_per_s", "max_abs_diff"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "soft_bellman.csv"
SIZES = [(33 * 33, 3, 3, 3, 2), (41 * 41, 3, 3, 3, 2), (128 * 128, 16, 8, 8, 2),
         (128 * 128, 64, 8, 8, 2)]


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_soft_bellman: no CUDA device found. This benchmark measures the Triton "
              "kernel on a GPU; nothing was run or written.")
        return 0
    import triton
    from triton.testing import do_bench

    from icml26.kernels.soft_bellman import soft_bellman

    device = torch.device("cuda")
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    rows = []
    for dtype in (torch.float64, torch.float32):
        for b, s, a, c, d in SIZES:
            x = inputs(b, s, a, c, d, dtype, device)
            ref, _ = soft_bellman(*x, tau=0.3, gamma=0.9, impl="torch")
            for impl in ("triton", "torch"):
                fn = lambda: soft_bellman(*x, tau=0.3, gamma=0.9, impl=impl)  # noqa: E731, B023
                out, _ = fn()
                ms = do_bench(fn, quantiles=[0.5, 0.2, 0.8])[0]
                rows.append({"timestamp": stamp, "device": torch.cuda.get_device_name(device),
                             "torch": torch.__version__, "triton": triton.__version__,
                             "dtype": str(dtype).replace("torch.", ""), "B": b, "S": s,
                             "A": a, "C": c, "D": d, "impl": impl, "ms": ms,
                             "backups_per_s": b * s / (ms * 1e-3),
                             "max_abs_diff": float((out - ref).abs().max())})
                print(f"{dtype} B={b} S={s} A={a} C={c} {impl}: {ms:.4f} ms", flush=True)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
