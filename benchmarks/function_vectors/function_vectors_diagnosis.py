"""Where does the task live? Issue 31's diagnosis of ``icml26.function_vectors`` per seed.

For each seed's quick-scale model (:mod:`icml26.function_vectors.diagnosis`): the joint AIE of
the top-k heads for k = 1..12 (every head), the AIE of replacing each layer's MLP output and
the residual after each layer with its task mean, and linear probes of the task at the final
token from every head, MLP output and residual. Rows are tagged with the training schedule
(``steps``) of the models they describe; the file keeps the rows of other schedules, so the
diagnosis of the 3000-step models (the shipped weights before issue 31, read from git with
``--weights-dir``) stays next to that of the current ones:

    OMP_NUM_THREADS=1 python benchmarks/function_vectors/function_vectors_diagnosis.py
        [--seeds 0 1 ...]
        [--weights-dir DIR]   # DIR/function_vectors_seed<S>.pt instead of claims(seed)'s model
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import torch

from icml26 import function_vectors as fv
from icml26.function_vectors.diagnosis import RECORD, diagnose
from icml26.kernels.bench import append_csv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(fv.SHIPPED_SEEDS))
    ap.add_argument("--weights-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=RECORD)
    args = ap.parse_args()
    cfg = fv.config_for("quick")
    rows = []
    for seed in args.seeds:
        model, steps = None, cfg.train.steps
        if args.weights_dir is not None:
            blob = torch.load(args.weights_dir / f"function_vectors_seed{seed}.pt",
                              weights_only=False)
            model, steps = fv.model_from_state(blob), blob["train_config"]["steps"]
        r = [{"steps": steps, **x} for x in diagnose(cfg, seed, model)]
        rows += r
        print(f"seed {seed} ({steps} steps): joint AIE top-1..12 " + ", ".join(
            f"{x['value']:.2f}" for x in r if x["kind"] == "joint_aie"), flush=True)
        print("   " + ", ".join(f"{x['kind'][0]}:{x['site']} {x['value']:.2f}" for x in r
                                if x["kind"] != "joint_aie"), flush=True)
    done = {(r["steps"], r["seed"]) for r in rows}
    keep = []
    if args.out.exists():  # rows of other schedules / seeds stay
        with open(args.out, newline="") as f:
            keep = [r for r in csv.DictReader(f)
                    if (int(r["steps"]), int(r["seed"])) not in done]
    args.out.unlink(missing_ok=True)
    append_csv(args.out, keep + rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
