"""CPU timings of spurious_dpo: claims per figure, batched vs looped fits, dashboard work.

Single thread, wall and CPU seconds (CPU time is the honest number on a shared machine).
Rows: every figure behind ``claims(seed)`` from an empty cache; the F3 tie sweep (4 fractions x
4 replicates) as one batched Newton solve vs a loop of one solve per training set (with a
check that both give the same theta); the dashboard's live theory (per regime) and its Run
button at n = 1e3, 1e4, 1e5 (3 replicates). Appends to
``benchmarks/spurious_dpo/spurious_dpo_timings.csv``. Timings are records, never claims.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/spurious_dpo/spurious_dpo_timings.py [--no-write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

from icml26 import spurious_dpo as sd
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_suffix(".csv")


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def tie_sweep_designs(cfg: sd.SpuriousConfig, seed: int):
    fr, r, n = list(cfg.tie_fractions), cfg.tie_replicates, cfg.n_pairs
    n_tie = [sd.n_ties_for(n, f) for f in fr]
    pref = sd.preference_design(n, cfg.m, cfg.rho, cfg.sigma_eps, cfg.kappa, cfg.d_c,
                                sd.substream(seed, 5), replicates=r)[:, 0]
    ties = sd.tie_design(max(n_tie), cfg.m, cfg.rho, cfg.sigma_eps, cfg.d_c,
                         sd.substream(seed, 6), replicates=r)[:, 0]
    counts = [c for c in n_tie for _ in range(r)]
    xp, xt = pref.repeat(len(fr), 1, 1), ties.repeat(len(fr), 1, 1)
    batched = sd.make_design(xp, xt, n_tie=counts)
    single = [sd.make_design(xp[b:b + 1, :], xt[b:b + 1, :counts[b]]) for b in range(len(counts))]
    return batched, single


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print only, no CSV rows")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.environ["ICML26_CACHE"] = tempfile.mkdtemp(prefix="icml26-bench-")  # empty cache
    cfg = sd.config_for("quick")
    rows = []

    def record(what, n, wall, cpu, note=""):
        rows.append({"date": dt.date.today().isoformat(), "what": what, "n": n,
                     "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "note": note,
                     "load_avg_1min": round(os.getloadavg()[0], 2), "threads": 1,
                     "torch": torch.__version__})
        print(f"{what:34s} n={n:<7} wall {wall:7.2f} s  cpu {cpu:7.2f} s  {note}", flush=True)

    sd.figure_theory_data(cfg)  # warm-up: imports, allocator
    for name, fn in (("claims: F1 channels", sd.channel_claims),
                     ("claims: F2 irreducibility", sd.irreducible_claims),
                     ("claims: F3 ties", sd.tie_claims), ("claims: F4 neural", sd.neural_claims)):
        _, wall, cpu = timed(lambda fn=fn: fn(cfg, args.seed))
        record(name, cfg.n_population if "F1" in name else cfg.n_pairs, wall, cpu, "empty cache")

    batched, single = tie_sweep_designs(cfg, args.seed)
    tb, b_wall, b_cpu = timed(lambda: sd.fit_newton(batched, cfg.beta))
    tl, l_wall, l_cpu = timed(lambda: torch.cat([sd.fit_newton(d, cfg.beta) for d in single]))
    same = float((tb - tl).abs().max())
    record("F3 ties: one batched Newton solve", cfg.n_pairs, b_wall, b_cpu,
           f"{len(single)} training sets")
    record("F3 ties: loop of Newton solves", cfg.n_pairs, l_wall, l_cpu,
           f"speedup cpu {l_cpu / b_cpu:.2f}x, max |theta diff| {same:.1e}")

    reps = 20
    for training in sd.TRAININGS:
        _, wall, cpu = timed(lambda t=training: [sd.figure_theory_data(cfg, t, 0.3)
                                                 for _ in range(reps)])
        record(f"dashboard live theory ({training})", 0, wall / reps, cpu / reps,
               "per slider move (uncached)")
    for n in (1_000, 10_000, 100_000):
        dash = replace(cfg, n_pairs=min(n, 20_000), n_population=n, replicates=3,
                       tie_replicates=3, far_steps=0, m_grid=(0.0, 0.25, 0.5, 0.75, 1.0, 1.25,
                                                               1.5),
                       n_grid=tuple(v for v in (100, 300, 1_000, 3_000, 10_000, 30_000)
                                    if v < n) + (n,))
        _, wall, cpu = timed(lambda d=dash: (sd.figure_channels_data(d, 0, use_cache=False),
                                             sd.figure_irreducible_data(d, 0, use_cache=False),
                                             sd.figure_ties_data(d, 0, False, use_cache=False)))
        record("dashboard Run (3 replicates)", n, wall, cpu, "ties capped at 2e4 pairs")

    if not args.no_write:
        append_csv(OUT, rows)
        print(f"appended {len(rows)} rows to {OUT}")


if __name__ == "__main__":
    main()
