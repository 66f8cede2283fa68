"""Per-sample Jacobians for H_eff: ``vmap(jacrev)`` vs a per-sample autograd loop (CPU).

Times :func:`icml26.tpv.per_sample_jacobians` (batched with ``torch.func.vmap``), the
per-sample loop :func:`icml26.tpv.per_sample_jacobians_loop` it replaces, and the
layer-factored path :func:`icml26.tpv.layer_factors` that the wide students use
(``||J(x)||^2`` and NTK Grams without the ``[N, p]`` matrix). All three give the same
Jacobians (``tests/test_tpv.py``). Best of ``--repeats``; appends to
``benchmarks/tpv/tpv_vmap_vs_loop.csv``. Timings are records, never claims.

    python benchmarks/tpv/tpv_vmap_vs_loop.py [--threads 1] [--repeats 3] [--n 256]
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import time
from pathlib import Path

import torch

from icml26 import tpv
from icml26.common import generator
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_suffix(".csv")


def best_of(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=256, help="inputs per measurement")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    machine = f"{platform.machine()} {os.cpu_count()} cpu"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = []
    for width, depth, d_out in [(4, 3, 1), (32, 3, 1), (256, 2, 1), (256, 3, 1), (64, 3, 10)]:
        model = tpv.MLP.build(20, width, depth, d_out, generator=generator(0))
        x = torch.randn(args.n, 20, generator=generator(1))
        p = tpv.flat_params(model).numel()
        tpv.per_sample_jacobians(model, x[:8])  # warm-up
        t_vmap = best_of(lambda m=model, x=x: tpv.per_sample_jacobians(m, x), args.repeats)
        t_loop = best_of(lambda m=model, x=x: tpv.per_sample_jacobians_loop(m, x), 1)
        t_fac = best_of(lambda m=model, x=x: tpv.layer_factors(m, x), args.repeats)
        rows.append({"when": stamp, "machine": machine, "threads": args.threads,
                     "load_avg_1min": f"{load:.2f}", "width": width, "depth": depth,
                     "outputs": d_out, "params": p, "n": args.n,
                     "loop_s": f"{t_loop:.4f}", "vmap_s": f"{t_vmap:.4f}",
                     "factored_s": f"{t_fac:.4f}", "loop_over_vmap": f"{t_loop / t_vmap:.1f}",
                     "loop_over_factored": f"{t_loop / t_fac:.1f}"})
        print(f"width {width:3d} depth {depth} K={d_out:2d} p={p:6d}: loop {t_loop:.3f}s  "
              f"vmap {t_vmap:.3f}s ({t_loop / t_vmap:.1f}x)  factored {t_fac:.3f}s "
              f"({t_loop / t_fac:.1f}x)")
    if not args.no_write:
        append_csv(OUT, rows)
        print(f"appended to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
