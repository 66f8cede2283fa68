"""Issue 31: a candidate design of ``icml26.function_vectors`` tried on the diagnosis seeds.

Trains each seed's quick-scale model under a candidate training config in a private cache
(set ``ICML26_CACHE``) and appends every claim (``claims_for``) with the training and analysis
wall seconds. Only the diagnosis seeds (0-6) go through here: fresh seeds are run once, after
the design is fixed, by ``function_vectors_seeds.py``.

    OMP_NUM_THREADS=1 python benchmarks/function_vectors/function_vectors_trial.py
        --tvp-site attn --seeds 0 1
        [--attn-only-layers N] [--tvp-center icl|zero_shot] [--schedule fixed|emergence]
        [--out F]   # default: rows appended to function_vectors_trials.csv next to this script
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from icml26 import function_vectors as fv
from icml26.kernels.bench import append_csv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--tvp-site", choices=("resid", "attn"), default="attn")
    ap.add_argument("--tvp-center", choices=("icl", "zero_shot"), default="icl")
    ap.add_argument("--attn-only-layers", type=int, default=0)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--schedule", choices=("fixed", "emergence"), default="fixed")
    ap.add_argument("--post-steps", type=int, default=1500)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    base = fv.config_for("quick")
    train = replace(base.train, tvp_site=args.tvp_site, tvp_center=args.tvp_center,
                    steps=args.steps or base.train.steps, schedule=args.schedule,
                    post_steps=args.post_steps)
    model = replace(base.model, attn_only_layers=args.attn_only_layers)
    cfg = replace(base, model=model, train=train, weights="train")
    out = args.out or Path(__file__).with_name("function_vectors_trials.csv")
    design = f"ao{model.attn_only_layers}-{train.tvp_site}-{train.tvp_center}-{train.schedule}"
    for seed in args.seeds:
        start = time.perf_counter()
        blob = fv.trained(cfg, seed, progress=False)
        t_train = round(time.perf_counter() - start, 1)
        claims = fv.claims_for(cfg, seed)
        t_all = round(time.perf_counter() - start, 1)
        fixed = train.schedule == "fixed"
        rows = [{"design": design, "attn_only_layers": model.attn_only_layers,
                 "tvp_site": train.tvp_site, "tvp_center": train.tvp_center,
                 "schedule": train.schedule, "post_steps": "" if fixed else train.post_steps,
                 "steps": train.steps, "seed": seed, "claim": c.name,
                 "measured": f"{c.measured:.6g}", "op": c.op, "threshold": c.threshold,
                 "holds": c.holds, "expected": c.expected,
                 "emerged_at": "" if fixed else blob.get("emerged_at"),
                 "trained_steps": blob["history"][-1][0], "train_s": t_train, "total_s": t_all}
                for c in claims]
        append_csv(out, rows)
        failing = [r["claim"] for r in rows if r["expected"] and not r["holds"]]
        print(f"seed {seed}: emerged at {blob.get('emerged_at')}, trained "
              f"{blob['history'][-1][0]} steps in {t_train} s, all {t_all} s; binding failing: "
              f"{', '.join(failing) or 'none'}", flush=True)


if __name__ == "__main__":
    main()
