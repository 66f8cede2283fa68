"""CPU record for grids: the sampler's torch twin (hand-written backward) vs ``F.grid_sample``.

Forward + backward (gradients to the map and to the coordinates) of bilinear sampling at the
toy's shapes (``[B, 16, 16, 32]`` map, K points), one thread, the minimum of ``--repeats``
runs of ``--inner`` calls (robust to a busy machine); ``impl="torch"`` is what the library runs
on CPU (``impl="auto"``), ``"reference"`` is ``F.grid_sample`` on a permuted ``[B, C, H, W]``
view, as a channels-last caller would call it.  Records, never claims.  Appends to
``benchmarks/grids/grids_cpu_sample.csv``.

    OMP_NUM_THREADS=1 python benchmarks/grids/grids_cpu_sample.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import time
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv
from icml26.kernels.grid_sample import grid_sample

OUT = Path(__file__).with_suffix(".csv")
FIELDS = ["timestamp", "machine", "torch", "threads", "B", "H", "W", "C", "K", "impl",
          "ms_per_call", "speedup_vs_reference", "max_abs_diff"]


def fwd_bwd(feat, coords, grad, impl):
    f = feat.detach().requires_grad_()
    p = coords.detach().requires_grad_()
    out = grid_sample(f, p, impl=impl)
    return (out.detach(), *torch.autograd.grad(out, (f, p), grad))


def best_ms(fn, repeats: int, inner: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t) / inner)
    return 1000 * best


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--inner", type=int, default=20)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    g = torch.Generator().manual_seed(0)
    rows = []
    for b, k in ((64, 4), (64, 64), (512, 4), (512, 64)):
        feat = torch.randn(b, 16, 16, 32, generator=g)
        coords = torch.rand(b, k, 2, generator=g)
        grad = torch.randn(b, k, 32, generator=g)
        ref = fwd_bwd(feat, coords, grad, "reference")
        times = {}
        for impl in ("reference", "torch"):
            times[impl] = best_ms(lambda: fwd_bwd(feat, coords, grad, impl),  # noqa: B023
                                  args.repeats, args.inner)
            diff = max((a - r).abs().max().item()
                       for a, r in zip(fwd_bwd(feat, coords, grad, impl), ref))
            rows.append({"timestamp": stamp, "machine": platform.machine(),
                         "torch": torch.__version__, "threads": 1, "B": b, "H": 16, "W": 16,
                         "C": 32, "K": k, "impl": impl, "ms_per_call": round(times[impl], 4),
                         "speedup_vs_reference": round(times["reference"] / times[impl], 3),
                         "max_abs_diff": diff})
            print(rows[-1], flush=True)
    append_csv(args.out, rows, FIELDS)


if __name__ == "__main__":
    main()
