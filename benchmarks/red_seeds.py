"""Every red claim on seeds 0-6 at quick scale -> ``benchmarks/red_seeds.csv``.

The evidence behind the registry's status (``tests/test_red.py::BLOCKED_ON``) and the
notebook's seed table; wall seconds per seed are recorded (cold only when the cache was empty).

    ICML26_CACHE=/tmp/empty OMP_NUM_THREADS=1 python benchmarks/red_seeds.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from icml26 import red
from icml26.kernels.bench import append_csv

OUT = Path(__file__).resolve().parent / "red_seeds.csv"


def main(seeds=range(7)) -> int:
    rows = []
    for seed in seeds:
        start = time.perf_counter()
        claims = red.claims(seed)
        seconds = time.perf_counter() - start
        rows += [{"seed": seed, "claim": c.name, "measured": round(c.measured, 4), "op": c.op,
                  "threshold": c.threshold, "holds": c.holds, "expected": c.expected,
                  "seconds": round(seconds, 1)} for c in claims]
        print(f"seed {seed}: " + ", ".join(f"{c.name} {c.measured:.3f}" for c in claims),
              flush=True)
    append_csv(OUT, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
