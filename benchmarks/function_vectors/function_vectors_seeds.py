"""Every claim of ``icml26.function_vectors`` on the seven shipped models (seeds 0-6).

The evidence behind ``expected`` and the registry status: a binding claim must hold on every
seed. Training is bit-reproducible on one machine and torch version only, so robustness is
shown across independently trained models (0-6 shipped, 7-16 trained in place: issue 31's
validation), not by retraining one. Writes
``benchmarks/function_vectors/function_vectors_seeds.csv`` (one row per seed and claim, with the
wall seconds of the seed's ``claims`` call); rows of seeds not run now are kept:

    OMP_NUM_THREADS=1 python benchmarks/function_vectors/function_vectors_seeds.py
        [--seeds 0 1 ...] [--out F]
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from icml26 import function_vectors as fv
from icml26.kernels.bench import append_csv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(fv.SHIPPED_SEEDS))
    ap.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".csv"))
    args = ap.parse_args()
    out = args.out
    rows = []
    for seed in args.seeds:
        start = time.perf_counter()
        claims = fv.claims(seed)
        seconds = round(time.perf_counter() - start, 1)
        for c in claims:
            rows.append({"seed": seed, "claim": c.name, "measured": f"{c.measured:.6g}",
                         "op": c.op, "threshold": c.threshold, "holds": c.holds,
                         "expected": c.expected, "source": fv.weights_source(
                             fv.config_for("quick"), seed), "seconds": seconds})
        print(f"seed {seed}: binding failing: " + (", ".join(
            r["claim"] for r in rows if r["seed"] == seed and r["expected"] and not r["holds"])
            or "none"), flush=True)
    keep = []
    if out.exists():  # rows of the seeds not run now stay
        with open(out, newline="") as f:
            keep = [r for r in csv.DictReader(f) if int(r["seed"]) not in set(args.seeds)]
    out.unlink(missing_ok=True)  # rewritten whole: the kept rows, then this run's
    fields = list(rows[0])
    append_csv(out, sorted(({k: r.get(k, "") for k in fields} for r in keep + rows),
                           key=lambda r: int(r["seed"])), fields)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
