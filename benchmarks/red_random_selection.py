"""RED against a random channel selection, per seed -> ``benchmarks/red_random_selection.csv``.

The mutation of ``erank_preserved`` that issue #34 asks to be able to fail: the activation-aware
selection replaced by a random one (``claims_for(..., red_init="random_select")``). Per seed, the
claims' ``erank_preserved`` and ``general_kept`` for RED and for the random selection, both
against the same Gaussian student (``figure_data`` distils every init, so this reuses the claims'
cache). Run from the repository root:

    OMP_NUM_THREADS=1 python benchmarks/red_random_selection.py 0 1 2 3 4 5 6
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from icml26 import red

OUT = Path(__file__).resolve().parent / "red_random_selection.csv"
FIELDS = ("seed", "init", "claim", "measured", "holds")


def rows(seed: int) -> list[dict]:
    cfg = red.config_for("quick")
    out = []
    for init in ("red", "random_select"):
        got = {c.name: c for c in red.claims_for(cfg, seed, red_init=init)}
        out += [{"seed": seed, "init": init, "claim": n, "measured": round(got[n].measured, 4),
                 "holds": got[n].holds} for n in ("erank_preserved", "general_kept")]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seeds", nargs="+", type=int)
    args = ap.parse_args(argv)
    with OUT.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for s in args.seeds:
            for r in rows(s):
                w.writerow(r)
                print(r, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
