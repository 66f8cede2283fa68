"""Issue 46, item 6: the router against the best fixed combination of the same z-scores, per
seed -> ``benchmarks/detectrouter/detectrouter_combination.csv`` (the notebook's per-seed figure).

Reads each seed's cached evaluation (``icml26.detectrouter.evaluation``: run the sweep first
with the same ``ICML26_CACHE``, or it is computed here): the router (stage 1+2), the same
router with a text-only encoder, the best fixed surrogate, every combination's validation and
test AUROC and the one chosen on validation (``icml26.detectrouter.combine``). The claim
values themselves are the sweep's; this file keeps the parts the claims' notes summarise.

Added after seed 0's result was seen, outside the rule (the claim never reads it):
``test_logistic_z_only`` / ``val_logistic_z_only``, the logistic regression fitted, with the
same splits and grid, on the criterion's K z-scores only (the scores the router routes
between) instead of the encoder's K x C statistics: how much of the combination's lead comes
from the second criterion.

    ICML26_CACHE=/tmp/x python benchmarks/detectrouter/detectrouter_combination.py SEED [SEED ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from icml26.detectrouter import experiments as E
from icml26.detectrouter.combine import combinations
from icml26.kernels.bench import append_csv


def row(seed: int) -> dict:
    r = E.evaluation(E.config_for("quick"), seed)
    comb = r["combination"]
    out = {"seed": seed, "router": r["stage2"]["auroc"], "text_router": r["text"]["auroc"],
           "best_fixed": max(r["fixed"]), "combination": comb["auroc"], "chosen": comb["chosen"],
           "logistic_C": comb["C"]}
    out.update({f"test_{k}": v for k, v in comb["test"].items()})
    out.update({f"val_{k}": v for k, v in comb["val"].items()})
    z = E.znormed(E.zoo_data(E.config_for("quick").zoo, seed), E.config_for("quick"))
    src = r["sources"]
    zm = np.concatenate([z["router"][s] for s in src])
    zt = np.concatenate([z["sources"][s] for s in src])
    only = combinations((z["ref"], z["ref"]), (zm, zm), (z["human"], z["human"]), (zt, zt), seed)
    out["test_logistic_z_only"], out["val_logistic_z_only"] = (only["test"]["logistic"],
                                                               only["val"]["logistic"])
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


def main(seeds) -> int:
    rows = []
    for seed in seeds:
        rows.append(row(seed))
        print(rows[-1], flush=True)
    append_csv(Path(__file__).with_suffix(".csv"), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main([int(s) for s in sys.argv[1:]] or range(16)))
