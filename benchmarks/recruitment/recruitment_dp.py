"""Recruitment DP timings: runtime vs budget (log-log slope), B=40/T=4, torch vs pure Python.

Appends to ``benchmarks/recruitment/recruitment_dp.csv``. Timings are records, never claims.

    python benchmarks/recruitment/recruitment_dp.py
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import time
from pathlib import Path

import numpy as np

from icml26 import recruitment as rec
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_name("recruitment_dp.csv")


def best_of(fn, repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    machine = f"{platform.machine()} {os.cpu_count()} cpu"
    rows = []
    budgets = [10, 20, 30, 40, 50, 60]
    for b in budgets:
        rows.append({"what": "torch_dp", "budget": b, "rounds": 4,
                     "seconds": best_of(lambda b=b: rec.surrogate_dp(rec.SPEC_PMF, b, 4))})
    slope = np.polyfit(np.log(budgets), np.log([r["seconds"] for r in rows]), 1)[0]
    for b in (8, 12, 16):
        py = best_of(lambda b=b: rec.surrogate_dp_reference(rec.SPEC_PMF, b, 4), repeats=1)
        th = best_of(lambda b=b: rec.surrogate_dp(rec.SPEC_PMF, b, 4))
        rows.append({"what": "python_dp", "budget": b, "rounds": 4, "seconds": py})
        rows.append({"what": "speedup_torch_vs_python", "budget": b, "rounds": 4,
                     "seconds": py / th})
    for r in rows:
        r.update(when=stamp, machine=machine)
        print(f"{r['what']:26s} B={r['budget']:3d} T={r['rounds']}  {r['seconds']:.4g}")
    print(f"log-log slope of torch DP runtime vs B over {budgets}: {slope:.2f} "
          "(the paper: O(b^5 log b))")
    rows.append({"when": stamp, "machine": machine, "what": "loglog_slope_torch_dp",
                 "budget": 0, "rounds": 4, "seconds": slope})
    append_csv(OUT, rows, ["when", "machine", "what", "budget", "rounds", "seconds"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
