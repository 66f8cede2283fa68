"""CPU record for gsrq: the batched torch assignment vs a naive per-row Python loop.

The torch path is ``icml26.kernels.gain_shape_assign.gain_shape_assign(impl="torch")``
(row blocks of 8192, one matmul + max per block); the naive loop scores one row at a time
(``argmax_k 2 g_k <x_i, s_k> - g_k^2`` with a matrix-vector product per row), as a first
implementation would.  Times are the minimum of ``--repeats`` runs (robust to a busy machine)
with one thread; they are records, never claims.  Appends to
``benchmarks/gsrq/gsrq_cpu_assign.csv``.

    OMP_NUM_THREADS=1 python benchmarks/gsrq/gsrq_cpu_assign.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import time
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv
from icml26.kernels.gain_shape_assign import gain_shape_assign

OUT = Path(__file__).with_suffix(".csv")
FIELDS = ["timestamp", "machine", "torch", "threads", "N", "K", "d", "impl", "seconds",
          "speedup_vs_loop", "match"]


def naive_loop(x: torch.Tensor, shapes: torch.Tensor, gains: torch.Tensor) -> torch.Tensor:
    idx = torch.empty(x.shape[0], dtype=torch.int64)
    g2 = gains * gains
    for i in range(x.shape[0]):
        idx[i] = int(torch.argmax(2.0 * gains * (shapes @ x[i]) - g2))
    return idx


def best_time(fn, repeats: int) -> tuple[float, object]:
    out, best = None, float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    rows = []
    g = torch.Generator().manual_seed(0)
    for n, k, d in ((4096, 16, 128), (4096, 256, 128), (16384, 256, 128)):
        x = torch.randn(n, d, generator=g)
        shapes = torch.nn.functional.normalize(torch.randn(k, d, generator=g), dim=1)
        gains = torch.rand(k, generator=g) + 0.5
        t_loop, idx_loop = best_time(lambda: naive_loop(x, shapes, gains), args.repeats)  # noqa: B023
        t_torch, (idx, _) = best_time(
            lambda: gain_shape_assign(x, shapes, gains, "l2", impl="torch"), args.repeats)  # noqa: B023
        match = float((idx == idx_loop).float().mean())
        for impl, t in (("naive-loop", t_loop), ("torch", t_torch)):
            rows.append({"timestamp": stamp, "machine": platform.machine(),
                         "torch": torch.__version__, "threads": torch.get_num_threads(),
                         "N": n, "K": k, "d": d, "impl": impl, "seconds": t,
                         "speedup_vs_loop": t_loop / t, "match": match})
        print(f"N={n} K={k} d={d}: loop {t_loop:.4f} s, torch {t_torch:.5f} s, "
              f"speedup {t_loop / t_torch:.1f}x, argmax match {match:.4f}")
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
