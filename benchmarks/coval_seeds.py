"""Every coval claim on seeds 0-6 at quick scale -> ``benchmarks/coval_seeds.csv``.

The per-seed record of the claims (the evidence behind the paper's status and the notebook's
seed table); wall seconds per seed are recorded (cold only when the cache was empty). Each
claim seed averages replicates ``seed .. seed + n_seeds - 1``, so neighbouring seeds share
trained models through the cache.

    ICML26_CACHE=/tmp/empty OMP_NUM_THREADS=1 python benchmarks/coval_seeds.py [SEED ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from icml26 import coval
from icml26.kernels.bench import append_csv

OUT = Path(__file__).resolve().parent / "coval_seeds.csv"


def main(seeds=range(7)) -> int:
    rows = []
    for seed in seeds:
        start = time.perf_counter()
        claims = coval.claims(seed)
        seconds = time.perf_counter() - start
        rows += [{"seed": seed, "claim": c.name, "measured": round(c.measured, 4), "op": c.op,
                  "threshold": c.threshold, "holds": c.holds, "expected": c.expected,
                  "seconds": round(seconds, 1)} for c in claims]
        print(f"seed {seed}: " + ", ".join(f"{c.name} {c.measured:.3f}" for c in claims),
              flush=True)
    append_csv(OUT, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main([int(s) for s in sys.argv[1:]] or range(7)))
