"""GPU benchmark of the fused Bellman backup (``kernels/bellman_interp.py``).

One backup of the promotion DP on random but valid ladders, float64 (the library's dtype), at
the F1 phase-diagram size (``L = 2``, 102 skill nodes, 41 efforts + gaps, ``B`` = 420 and
4200 configurations) and the spec's prototype size (``L = 8``, 408 nodes, 161 + 7 efforts,
``B`` = 1 and 64); quick: B=420 L=2 and both L=8 sizes.  Compared: the Triton kernel, the torch
reference eager (materialises ``B x L x Q x C`` candidates) and under ``torch.compile``, and
the torch table path (candidates tabulated once, then gather + max per backup; the table build
is not timed).  Compute-bound (candidates in registers): no % of copy bandwidth.

    python -m icml26.kernels.bench --only bellman_interp [--quick] [--out DIR]
"""

from __future__ import annotations

import math
import sys

import torch

from icml26.kernels.bench import harness
from icml26.kernels.bench.harness import Case

SIZES = [(420, 2, 102, 41), (4200, 2, 102, 41), (1, 8, 408, 161), (64, 8, 408, 161)]
QUICK = [(420, 2, 102, 41), (1, 8, 408, 161), (64, 8, 408, 161)]


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


def cases(quick: bool = False):
    dev = harness.DEVICE
    from icml26.kernels.bellman_interp import (
        backup_table,
        bellman_interp,
        bellman_interp_ref,
        table_backup,
    )

    comp = harness.compiled(bellman_interp_ref)
    for batch, levels, n_x, n_a in (QUICK if quick else SIZES):
        v, grid, xq, mu, reward, par = ladder_inputs(batch, levels, n_x, n_a, dev)
        n_gap = levels - 1
        args = (v, grid, xq, mu, reward, par, n_a, n_gap)
        ref, _ = bellman_interp_ref(*args)
        table = backup_table(grid, xq, mu, reward, par, n_a, n_gap)
        yield Case("bellman_interp", f"B={batch} L={levels} NX={n_x} na={n_a}", "fp64",
                   {"triton": lambda a=args: bellman_interp(*a, impl="triton"),
                    "torch-eager": lambda a=args: bellman_interp_ref(*a),
                    "torch-compile": lambda a=args: comp(*a),
                    "torch-table": lambda v=v, t=table: table_backup(v, t)},
                   error=lambda out, ref=ref: float((out[0] - ref).abs().max()))


if __name__ == "__main__":
    from icml26.kernels.bench.cli import main_for

    sys.exit(main_for("bellman_interp"))
