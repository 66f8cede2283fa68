"""The F1 phase diagram as one batched solve vs a loop of one solve per configuration.

Both paths run the same solver (``icml26.promotion.solve``, torch backup on CPU); the batch
stacks the 420 configurations of F1 (20 x 20 grid plus the myopic row) into one tensor
program. Records wall and CPU seconds (single thread) and checks that both paths choose the
same first action in every cell. Timings are records, never claims.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/promotion/promotion_phase_batch.py [--no-write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time
from pathlib import Path

import torch

from icml26 import promotion as pro
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_suffix(".csv")


def first_actions(sol: pro.Solution) -> tuple[torch.Tensor, torch.Tensor]:
    n = sol.ladder.batch
    a = pro.act(sol, torch.ones(n, dtype=torch.long), torch.zeros(n, dtype=pro.DTYPE))
    return a.a_plus, a.a_minus


def configs(ph: pro.PhaseConfig, seed: int) -> list[pro.PromotionConfig]:
    cells = pro.phase_configs(ph, seed)
    return [pro.PromotionConfig(levels=2, beta=float(r.beta), gamma=float(r.gamma), delta=0.0,
                                c_minus=float(r.ratio), reward_per_level=ph.reward,
                                design="custom", custom_thresholds=(ph.threshold,),
                                nx=ph.nx, na=ph.na) for r in cells.itertuples()]


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print only, no CSV row")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    ph = pro.PhaseConfig()
    cfgs = configs(ph, args.seed)

    def batched():
        return first_actions(pro.solve(pro.make_ladder(cfgs)))

    def looped():
        acts = [first_actions(pro.solve(pro.make_ladder([c]))) for c in cfgs]
        return torch.cat([a for a, _ in acts]), torch.cat([m for _, m in acts])

    batched()  # warm-up: imports, allocator
    (bp, bm), b_wall, b_cpu = timed(batched)
    (lp, lm), l_wall, l_cpu = timed(looped)
    same = pro.classify(bp, bm) == pro.classify(lp, lm)
    load = os.getloadavg()[0]
    row = {"date": dt.date.today().isoformat(), "configs": len(cfgs), "levels": 2,
           "nx": ph.nx, "na": ph.na, "batched_wall_s": round(b_wall, 3),
           "batched_cpu_s": round(b_cpu, 3), "loop_wall_s": round(l_wall, 3),
           "loop_cpu_s": round(l_cpu, 3), "speedup_wall": round(l_wall / b_wall, 2),
           "speedup_cpu": round(l_cpu / b_cpu, 2), "same_actions": same,
           "load_avg_1min": round(load, 2), "threads": torch.get_num_threads(),
           "device": "cpu", "torch": torch.__version__}
    for k, v in row.items():
        print(f"{k:>16}: {v}")
    if not args.no_write:
        append_csv(OUT, [row])
        print(f"appended to {OUT}")


if __name__ == "__main__":
    main()
