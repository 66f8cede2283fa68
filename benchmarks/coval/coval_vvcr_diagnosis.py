"""Diagnosis of coval's headline (issue 47): what the VVCR head learns under each loss placement.

The audit's cause of ``coval_gain``'s failure: L_VVCR was taken on the labelled anomaly beams
only (``vvcr_beams="anomaly"``, the issue-35 loss), so the reconstruction head was never told
"no void here" and learned nothing that separates anomalies.  For replicates 0 and 1 at quick
scale, with the first design's fixed weights (w_vvcr = w_vicc = 1: a diagnosis, not a choice),
this trains seg-only, +VVCR and full COVAL with the loss on the anomaly beams (before) and on
every beam with a return (after, the second design) and records on the held-out test beams:

* the segmentation head's point AP / AUROC (what the claim measures);
* the VVCR head's mean prediction and its target (the void depth, log r_cf - log r_f) on
  the anomaly beams and on the other beams with a return, its mean squared error on each;
* the VVCR head's prediction used as an anomaly score (AP / AUROC): does it separate them?

    ICML26_CACHE=/tmp/x OMP_NUM_THREADS=1 python benchmarks/coval/coval_vvcr_diagnosis.py
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import replace
from pathlib import Path

from icml26 import coval

OUT = Path(__file__).with_suffix(".csv")
FIELDS = ["replicate", "vvcr_beams", "variant", "seg_ap", "seg_auroc", "rec_anomaly",
          "target_anomaly", "rec_other", "target_other", "mse_anomaly", "mse_other",
          "rec_score_ap", "rec_score_auroc"]
PLACEMENTS = {"anomaly": "anomaly beams only (issue 35)", "valid": "every beam (issue 47)"}


def rows_for(cfg, s: int) -> list[dict]:
    tr, te = coval.scan_data(cfg, s, "train"), coval.scan_data(cfg, s, "test")
    v, y = te["valid"], te["label"]
    other = v & ~y
    target = te["rec_cf"]
    out = []
    runs = [("seg-only", "-")] + [(var, b) for b in PLACEMENTS for var in ("+VVCR", "full COVAL")]
    for variant, beams in runs:
        c = replace(cfg, vvcr_beams=beams if beams != "-" else "valid", weight_grid=())
        tcfg = c.train_config(variant)
        net = coval.train(tr, tcfg, s)
        seg = coval.scores(net, te["x_f"], tcfg.visibility)
        rec = coval.scores(net, te["x_f"], tcfg.visibility, head=1)
        out.append({
            "replicate": s, "variant": variant,
            "vvcr_beams": PLACEMENTS.get(beams, "- (no VVCR: head untrained)"),
            "seg_ap": coval.average_precision(seg[v], y[v]), "seg_auroc": coval.auroc(seg[v], y[v]),
            "rec_anomaly": float(rec[y].mean()), "target_anomaly": float(target[y].mean()),
            "rec_other": float(rec[other].mean()), "target_other": float(target[other].mean()),
            "mse_anomaly": float(((rec - target)[y] ** 2).mean()),
            "mse_other": float(((rec - target)[other] ** 2).mean()),
            "rec_score_ap": coval.average_precision(rec[v], y[v]),
            "rec_score_auroc": coval.auroc(rec[v], y[v])})
        print({k: (round(x, 4) if isinstance(x, float) else x) for k, x in out[-1].items()},
              flush=True)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    cfg = coval.config_for("quick")
    rows = [r for s in args.replicates for r in rows_for(cfg, s)]
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows({k: (round(x, 4) if isinstance(x, float) else x) for k, x in r.items()}
                    for r in rows)


if __name__ == "__main__":
    main()
