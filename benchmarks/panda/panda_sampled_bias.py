"""Issue 48, after the fresh seeds: why PANDA loses the sampled comparison (seeds 0-1 only).

Diagnosis, not tuning (the claim's design stays as fixed): PANDA's sampled run at the quick
scale's step size and iteration count (1500 iterations of 4 batches), with the number of
next-state draws per (s, a, b) per batch multiplied. Each outer step computes on ONE empirical
model; the plug-in value ``(I - gamma P_hat)^-1 r`` is nonlinear in ``P_hat``, so a step's
gradient is biased by O(1 / draws per step). If the bias (not the number of iterations) holds
PANDA back, its final Phi gap falls as the draws per step grow at a fixed iteration count.
Writes ``panda_sampled_bias.csv``.

    OMP_NUM_THREADS=1 python benchmarks/panda/panda_sampled_bias.py
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import torch

from icml26 import panda as lib
from icml26.panda.methods import evaluate
from icml26.panda.sampled import panda_sampled

OUT = Path(__file__).resolve().parent / "panda_sampled_bias.csv"
DRAWS = (1, 4, 16, 256)  # 1 = the claim's design


def main() -> int:
    torch.set_num_threads(1)
    cfg = lib.config_for("quick")
    rows = []
    for seed in (0, 1):
        game = lib.make_game(cfg.game, seed)
        star = lib.brute_force(game, cfg.oracle)["phi_star"]
        for draws in DRAWS:
            # the same iterations: the budget grows with the draws per batch
            scfg = replace(cfg.sampled, samples=draws)
            tr = evaluate(game, panda_sampled(game, cfg.panda, scfg, scfg.lr_panda,
                                              seed * scfg.stream))
            rows.append({"seed": seed, "draws_per_batch": draws,
                         "draws_per_step": 4 * draws, "iterations": tr.iteration[-1],
                         "phi_gap": f"{abs(tr.phi[-1] - star) / star:.3e}",
                         "ni": f"{tr.ni[-1]:.3e}", "x": tr.x[-1]})
            print(rows[-1], flush=True)
    with OUT.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
