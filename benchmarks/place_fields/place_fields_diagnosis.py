"""Diagnosis of F4's first design (issue 47): was ``hipe_data_efficiency`` measuring data?

The first design trained every (variant, size) member from scratch for the same 300 steps x
batch 16 = 4,800 sequences, so the sizes 4,096 and 16,384 saw at most 1.2 and 0.3 epochs.
For seeds 0 and 1 only (no later seed is run here), this script trains the first design
(:func:`icml26.place_fields.first_design_config`) at the fixed 300 steps and at 4x and 8x the
steps (cosine schedule to 0 in every run), and records per (seed, steps, variant, size): the
epochs seen, the validation loss, its gap to the task's exact Bayes floor and HIPE - RoPE.

If the audit's cause holds, at 300 steps the largest sizes sit far above the floor and drop
with more steps (optimisation-limited, not data-limited), and at the best budget every
variant reaches the same loss (the task is one RoPE learns as easily: HIPE - RoPE ~ 0).

    ICML26_CACHE=/tmp/x OMP_NUM_THREADS=1 python benchmarks/place_fields/place_fields_diagnosis.py
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

from icml26 import place_fields as pf
from icml26.place_fields import lm

OUT = Path(__file__).with_name("place_fields_diagnosis.csv")
FIELDS = ["seed", "steps", "variant", "size", "epochs", "val_loss", "bayes_loss", "gap",
          "hipe_minus_rope"]
SEEDS = (0, 1)
STEPS = (300, 1200, 2400)


def main() -> None:
    base = pf.first_design_config()
    rows = []
    for seed in SEEDS:
        data = pf.task_data(base, seed)
        bayes = pf.bayes_loss(base, data["val"], data["table"])
        for steps in STEPS:
            cfg = dataclasses.replace(base, steps=steps, warmup=steps // 10)
            res = lm.train_seed(cfg, seed)
            loss = dict(zip(res["members"], res["val_loss"].tolist()))
            for (variant, size), v in loss.items():
                rows.append({"seed": seed, "steps": steps, "variant": variant, "size": size,
                             "epochs": round(steps * cfg.batch / size, 3),
                             "val_loss": round(v, 5), "bayes_loss": round(bayes, 5),
                             "gap": round(v - bayes, 5),
                             "hipe_minus_rope": round(v - loss[("rope", size)], 5)})
            print(f"seed {seed} steps {steps} done", flush=True)
    with OUT.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
