"""Diagnosis record for grids (issue 35): does pruning lose the contact point, in each design?

For the first design (``FIRST_DESIGN``: 4-px tokens, 256 of them, the scout reading the
encoder's attention-pooled feature) and the second (quick scale: 16-px tokens, 16 of them, the
scout reading position-aware tokens), on the design seeds 0-1 only, over the test scenes:

* ``token_centre``: distance (px) from the contact point to the nearest token centre (what a
  pruner that keeps the right token can be off by, before the feature says more);
* ``all``: the all-tokens reference's contact error (px) and success (< 2 px);
* ``grids`` / ``topk`` at K = 4: contact error, success, and the distance from the contact point
  to the nearest of the K reading points (``nearest`` mean, ``nearest_max``).

One row per (design, seed, row, quantity); rewrites ``benchmarks/grids/grids_diagnosis.csv``.  Uses
``ICML26_CACHE`` like the claims (the policies are the claims' own cached rows).

    OMP_NUM_THREADS=1 python benchmarks/grids/grids_diagnosis.py --seeds 0 1
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from icml26 import grids
from icml26.grids.models import grid_coords
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_suffix(".csv")
FIELDS = ["design", "seed", "tokens", "patch_px", "row", "quantity", "value"]


def token_centre_distance(cfg: grids.GridsConfig, seed: int) -> torch.Tensor:
    """Per test scene: distance (px) from the contact point to the nearest token centre."""
    data = grids.scenes(cfg, seed)
    contact = data["act"][cfg.n_train:, :2]
    centres = grids.to_px(cfg, grid_coords(cfg.side, cfg.side))  # [N, 2]
    return (contact[:, None] - centres[None]).norm(dim=-1).min(1).values


def rows_for(design: str, cfg: grids.GridsConfig, seed: int) -> list[dict]:
    base = {"design": design, "seed": seed, "tokens": cfg.side ** 2, "patch_px": cfg.patch}
    out = []
    near = token_centre_distance(cfg, seed)
    out += [{**base, "row": "token_centre", "quantity": "nearest", "value": float(near.mean())},
            {**base, "row": "token_centre", "quantity": "nearest_max",
             "value": float(near.max())}]
    got = grids.claim_rows(cfg, seed)
    for row, r in (("all", got["full"]), ("grids", got["grids"]), ("topk", got["topk"])):
        for q, key in (("error", "error_px"), ("success", "success"), ("nearest", "nearest_px"),
                       ("nearest_max", "nearest_max_px")):
            if key in r:
                out.append({**base, "row": row, "quantity": q, "value": round(r[key], 4)})
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.out.exists():
        args.out.unlink()
    for design, cfg in (("first", grids.FIRST_DESIGN), ("second", grids.config_for("quick"))):
        for seed in args.seeds:
            rows = rows_for(design, cfg, seed)
            append_csv(args.out, rows, FIELDS, digits=4)
            print(design, seed, {(r["row"], r["quantity"]): round(r["value"], 2) for r in rows},
                  flush=True)


if __name__ == "__main__":
    main()
