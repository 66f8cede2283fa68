"""Heima diagnosis (issue 34, step 1) -> ``benchmarks/heima/heima_diagnosis.csv``: linear probes of
``x_0 .. x_h`` from every layer at each stage's writing position (CoT's ``GIVES``, Heima's and
pause tokens' ``T_k``) at steps 150 / 300 / 600 of the first design's training recipe (every
model from scratch, 600 steps: ``heima.FIRST_DESIGN``), 1 and 2 hops.

    OMP_NUM_THREADS=1 python benchmarks/heima/heima_diagnosis.py [SEED ...]
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

from icml26.heima import FIRST_DESIGN
from icml26.heima.diagnosis import probe_curves

OUT = Path(__file__).with_name("heima_diagnosis.csv")


def main(seeds=(0,)) -> int:
    rows = []
    for seed in seeds:
        start = time.perf_counter()
        rows += probe_curves(FIRST_DESIGN, seed,
                             progress=lambda k, h, seed=seed, start=start: print(
                                 f"seed {seed}: {k} {h} hops "
                                 f"{time.perf_counter() - start:.0f} s", flush=True))
    with open(OUT, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows({**r, "probe_accuracy": round(r["probe_accuracy"], 4),
                     "answer_accuracy": round(r["answer_accuracy"], 4)} for r in rows)
    print(f"wrote {len(rows)} rows to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main([int(s) for s in sys.argv[1:]] or (0,)))
