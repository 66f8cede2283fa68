"""RED against a random channel selection, per seed -> ``benchmarks/red/red_random_selection.csv``.

Issue 46, item 7: does choosing the channels by activation beat choosing them at random, at the
same width? Per seed, from the students the claims distil (``figure_data`` distils every init
on the same batches, so this reuses the claims' cache), one row:

* ``erank_red_gauss`` / ``erank_random_gauss``: min over layers of eRank(init) / eRank(Gaussian),
  i.e. ``erank_preserved`` for RED and for the random selection;
* ``erank_red_random``: min over layers of eRank(RED) / eRank(random selection);
* ``ppl_red``, ``ppl_random``, ``ppl_random_red`` = ppl(random) / ppl(RED) (held-out text);
* ``activation_beats_random``: the claim, ``min(erank_red_random, ppl_random_red)``;
* ``random_keeps_top``: how many of the teacher's 3 highest-energy channels (RED keeps all 3)
  the random selection keeps;
* ``seeds``: ``swept`` (0-15) or ``fresh`` (100-104, first measured after the design was fixed).

Run from the repository root (with the sweep's cache in ``ICML26_CACHE``):

    OMP_NUM_THREADS=1 python benchmarks/red/red_random_selection.py 0:16 100:105
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import icml26  # noqa: F401  (first: pins the numeric code paths)
from icml26 import red

OUT = Path(__file__).resolve().parent / "red_random_selection.csv"
FIELDS = ("seed", "seeds", "erank_red_gauss", "erank_random_gauss", "erank_red_random",
          "ppl_red", "ppl_random", "ppl_random_red", "activation_beats_random",
          "random_keeps_top")
FRESH = 100  # seeds from here on are the fresh ones


def row(seed: int) -> dict:
    students = red.figure_data(red.config_for("quick"), seed)["students"]
    last = {i: s["curve"][-1] for i, s in students.items()}

    def worst(a: str, b: str) -> float:  # min over layers of eRank(a) / eRank(b)
        return min(x / y for x, y in zip(last[a]["erank"], last[b]["erank"]))

    ppl = last["random_select"]["ppl"] / last["red"]["ppl"]
    out = {"seed": seed, "seeds": "fresh" if seed >= FRESH else "swept",
           "erank_red_gauss": worst("red", "gaussian"),
           "erank_random_gauss": worst("random_select", "gaussian"),
           "erank_red_random": worst("red", "random_select"),
           "ppl_red": last["red"]["ppl"], "ppl_random": last["random_select"]["ppl"],
           "ppl_random_red": ppl}
    out["activation_beats_random"] = min(out["erank_red_random"], ppl)
    cfg = red.config_for("quick")
    top = set(red.teacher_energy(cfg).topk(3).indices.tolist())
    out["random_keeps_top"] = len(top & set(red.projection(cfg, "random_select", seed)
                                            .argmax(0).tolist()))
    return {k: (round(v, 5) if isinstance(v, float) else v) for k, v in out.items()}


def seeds_of(spec: str) -> list[int]:
    """``"0:16"`` (a half-open range) or ``"3"``."""
    if ":" in spec:
        a, b = spec.split(":")
        return list(range(int(a), int(b)))
    return [int(spec)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seeds", nargs="+", help="seeds or half-open ranges A:B")
    args = ap.parse_args(argv)
    with OUT.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, lineterminator="\n")
        w.writeheader()
        for spec in args.seeds:
            for s in seeds_of(spec):
                r = row(s)
                w.writerow(r)
                print(r, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
