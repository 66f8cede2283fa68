"""Seed record for grids: every claim's measured value on the given seeds at quick scale.

The evidence behind the registry's status and the claims' ``expected`` flags: each seed's
claims are computed (from ``ICML26_CACHE``, so a warm cache makes this quick) and one row per
(seed, claim) is appended to ``benchmarks/grids_seeds.csv`` with the rows' notes.

    OMP_NUM_THREADS=1 python benchmarks/grids_seeds.py --seeds 0 1 2 3 4 5 6
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icml26 import grids
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_suffix(".csv")
FIELDS = ["seed", "claim", "measured", "op", "threshold", "holds", "expected", "note"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(7)))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    for seed in args.seeds:
        rows = [{"seed": seed, "claim": c.name, "measured": round(c.measured, 5), "op": c.op,
                 "threshold": c.threshold, "holds": c.holds, "expected": c.expected,
                 "note": c.note} for c in grids.claims(seed)]
        append_csv(args.out, rows, FIELDS)
        print(seed, {r["claim"]: (r["measured"], r["holds"]) for r in rows}, flush=True)


if __name__ == "__main__":
    main()
