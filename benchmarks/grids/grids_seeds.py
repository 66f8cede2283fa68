"""Seed record for grids: every claim's measured value on the given seeds at quick scale.

The evidence behind the registry's status and the claims' ``expected`` flags: each seed's
claims are computed (from ``ICML26_CACHE``, so a warm cache makes this quick) and one row per
(seed, claim) is appended to ``benchmarks/grids/grids_seeds.csv`` with the rows' notes and the
seconds the seed took (from the cache as it was: an empty ``ICML26_CACHE`` times the whole
training). The second design (CLAIMS_VERSION 2) was run on seeds 0-6 and fresh seeds 7-11 from an
empty cache; the first design's record is ``benchmarks/grids/grids_seeds_first_design.csv``.

    OMP_NUM_THREADS=1 python benchmarks/grids/grids_seeds.py --seeds 0 1 2 3 4 5 6 7 8 9 10 11
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from icml26 import grids
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_suffix(".csv")
FIELDS = ["seed", "claim", "measured", "op", "threshold", "holds", "expected", "seconds", "note"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(7)))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    for seed in args.seeds:
        start = time.perf_counter()
        got = grids.claims(seed)
        seconds = round(time.perf_counter() - start, 1)
        rows = [{"seed": seed, "claim": c.name, "measured": round(c.measured, 5), "op": c.op,
                 "threshold": c.threshold, "holds": c.holds, "expected": c.expected,
                 "seconds": seconds, "note": c.note} for c in got]
        append_csv(args.out, rows, FIELDS)
        print(seed, {r["claim"]: (r["measured"], r["holds"]) for r in rows}, flush=True)


if __name__ == "__main__":
    main()
