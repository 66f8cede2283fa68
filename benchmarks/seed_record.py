"""Every claim of one paper on seeds 0-6 at quick scale -> ``benchmarks/<slug>/<slug>_seeds.csv``.

The per-seed record of a paper's claims: the evidence behind its status (read by
the status before issue 44's ledger) and its notebook's seed table. Wall seconds per seed are
recorded (cold only when the cache was empty).

    ICML26_CACHE=/tmp/empty OMP_NUM_THREADS=1 python benchmarks/seed_record.py SLUG [SEED ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from icml26 import papers
from icml26.kernels.bench import append_csv


def main(slug: str, seeds=range(7)) -> int:
    paper = papers.get(slug)
    rows = []
    for seed in seeds:
        start = time.perf_counter()
        claims = paper.claims(seed)
        seconds = time.perf_counter() - start
        rows += [{"seed": seed, "claim": c.name, "measured": round(c.measured, 4), "op": c.op,
                  "threshold": c.threshold, "holds": c.holds, "expected": c.expected,
                  "seconds": round(seconds, 1)} for c in claims]
        print(f"seed {seed}: " + ", ".join(f"{c.name} {c.measured:.3f}" for c in claims),
              flush=True)
    append_csv(Path(__file__).resolve().parent / slug / f"{slug}_seeds.csv", rows)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], [int(s) for s in sys.argv[2:]] or range(7)))
