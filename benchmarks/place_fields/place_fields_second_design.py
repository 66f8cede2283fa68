"""Where F4's second design (issue 47) stands, per seed and member, from the claims' cache.

For every seed given (already trained by ``claims`` or ``icml26 sweep``; nothing is trained
that is not in the cache unless ``--train``), one row per (seed, variant, k): the source
validation loss after pretraining, the shifted source's test loss before adaptation
(zero-shot) and at the early-stopped checkpoint, the step of that checkpoint, and each of the
three as a difference to RoPE's (same seed, same k).  It separates what HIPE loses or gains in
pretraining from what it gains or loses in adaptation.

    ICML26_CACHE=/tmp/x python benchmarks/place_fields/place_fields_second_design.py 0:17 100:106
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from icml26 import place_fields as pf
from icml26.common import in_cache
from icml26.place_fields import lm

OUT = Path(__file__).with_name("place_fields_second_design.csv")
FIELDS = ["seed", "variant", "k", "source_val", "zero_shot", "adapted", "best_step",
          "source_minus_rope", "zero_shot_minus_rope", "adapted_minus_rope"]


def seeds_of(spec: str) -> list[int]:
    a, b = spec.split(":")
    return list(range(int(a), int(b)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ranges", nargs="+", help="seed ranges A:B (half-open)")
    ap.add_argument("--train", action="store_true", help="train seeds missing from the cache")
    args = ap.parse_args()
    cfg = pf.LMConfig()
    rows = []
    for seed in [s for r in args.ranges for s in seeds_of(r)]:
        if not args.train and not in_cache(pf.PAPER, lm.cache_key(cfg), cfg, seed,
                                           lm.CACHE_VERSION):
            continue
        r = lm.seed_results(cfg, seed)
        mem = [tuple(m) for m in r["members"]]
        src = dict(zip(pf.VARIANTS, r["source_val"].tolist()))
        for j, (v, k) in enumerate(mem):
            rope = mem.index(("rope", k))
            rows.append({"seed": seed, "variant": v, "k": k,
                         "source_val": round(src[v], 5),
                         "zero_shot": round(float(r["zero_shot"][j]), 5),
                         "adapted": round(float(r["val_loss"][j]), 5),
                         "best_step": int(r["best_step"][j]),
                         "source_minus_rope": round(src[v] - src["rope"], 5),
                         "zero_shot_minus_rope": round(float(r["zero_shot"][j]
                                                             - r["zero_shot"][rope]), 5),
                         "adapted_minus_rope": round(float(r["val_loss"][j]
                                                           - r["val_loss"][rope]), 5)})
    with OUT.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {OUT} ({len({r['seed'] for r in rows})} seeds)")


if __name__ == "__main__":
    main()
