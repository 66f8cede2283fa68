"""GPU benchmark of the fused Bellman backup (``kernels/bellman_interp.py``).

One backup of the promotion DP on random but valid ladders, at the F1 phase-diagram size
(``L = 2``, 102 skill nodes, 41 effort points + gaps, ``B`` = 420 and 4200 configurations) and
the spec's prototype size (``L = 8``, 408 nodes, 161 + 7 efforts, ``B`` = 1 and 64). Compared:
the Triton kernel, the torch reference (materialises ``B x L x Q x C`` candidates) and the
torch table path (candidates tabulated once, then gather + max per backup; the table build is
not timed). Times are ``triton.testing.do_bench`` medians; rows are appended to
``benchmarks/bellman_interp.csv``.

    python kernels/bench/bench_bellman_interp.py [--out PATH]

Needs a CUDA GPU: without one it exits with a message and writes nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import sys
from pathlib import Path

import torch

from icml26.kernels.bench import append_csv

FIELDS = ["timestamp", "device", "torch", "triton", "B", "L", "NX", "n_a", "impl", "ms",
          "candidates_per_s", "max_abs_diff"]
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "bellman_interp.csv"
SIZES = [(420, 2, 102, 41), (4200, 2, 102, 41), (1, 8, 408, 161), (64, 8, 408, 161)]


def ladder_inputs(batch, levels, n_x, n_a, device, seed=0):
    """Steady-state-like ladders with random costs, uniform grid plus thresholds, float64."""
    g = torch.Generator().manual_seed(seed)
    rand = lambda *s: torch.rand(*s, generator=g, dtype=torch.float64)  # noqa: E731
    step = 0.2 + rand(batch)
    mu_inner = step[:, None] * torch.arange(1, levels, dtype=torch.float64)
    x_max = 1.1 * (mu_inner[:, -1] + step)
    uniform = torch.linspace(0, 1, n_x - levels + 1, dtype=torch.float64) * x_max[:, None]
    grid = torch.sort(torch.cat([uniform, mu_inner], 1), dim=1).values
    inf = torch.full((batch, 1), math.inf, dtype=torch.float64)
    mu = torch.cat([-inf, mu_inner, inf], 1)
    reward = 0.3 * torch.arange(levels, dtype=torch.float64).expand(batch, -1).contiguous()
    par = torch.stack([x_max / (n_a - 1), 0.5 + 0.45 * rand(batch), 0.1 * rand(batch),
                       0.5 + 0.45 * rand(batch), torch.ones(batch), 0.1 + 0.8 * rand(batch)], 1)
    v = torch.cumsum(rand(batch, levels, n_x), -1)
    xq = grid[:, None, :].expand(-1, levels, -1).contiguous()
    return [t.to(device) for t in (v, grid, xq, mu, reward, par)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_bellman_interp: no CUDA device found. This benchmark measures the Triton "
              "kernel on a GPU; nothing was run or written. (The CPU batched-vs-loop record "
              "of the phase diagram is benchmarks/promotion_phase_batch.py.)")
        return 0
    import triton
    from triton.testing import do_bench

    from icml26.kernels.bellman_interp import (
        backup_table,
        bellman_interp,
        n_candidates,
        table_backup,
    )

    device = torch.device("cuda")
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    rows = []
    for batch, levels, n_x, n_a in SIZES:
        v, grid, xq, mu, reward, par = ladder_inputs(batch, levels, n_x, n_a, device)
        n_gap = levels - 1
        ref, _ = bellman_interp(v, grid, xq, mu, reward, par, n_a, n_gap, impl="torch")
        table = backup_table(grid, xq, mu, reward, par, n_a, n_gap)
        impls = {
            "triton": lambda: bellman_interp(v, grid, xq, mu, reward, par, n_a, n_gap,  # noqa: B023
                                             impl="triton"),
            "torch-ref": lambda: bellman_interp(v, grid, xq, mu, reward, par, n_a, n_gap,  # noqa: B023
                                                impl="torch"),
            "torch-table": lambda: table_backup(v, table),  # noqa: B023
        }
        cands = batch * levels * n_x * n_candidates(n_a, n_gap)
        for impl, fn in impls.items():
            out, _ = fn()
            ms = do_bench(fn, quantiles=[0.5, 0.2, 0.8])[0]
            rows.append({"timestamp": stamp, "device": torch.cuda.get_device_name(device),
                         "torch": torch.__version__, "triton": triton.__version__, "B": batch,
                         "L": levels, "NX": n_x, "n_a": n_a, "impl": impl, "ms": ms,
                         "candidates_per_s": cands / (ms * 1e-3),
                         "max_abs_diff": float((out - ref).abs().max())})
            print(f"B={batch} L={levels} NX={n_x} n_a={n_a} {impl}: {ms:.3f} ms", flush=True)
    append_csv(args.out, rows, FIELDS)
    print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
