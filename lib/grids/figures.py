"""The figures' data of ``grids`` (data, never plots): F1 error and success vs K, F2 analytic
head FLOPs vs K, F3 GridS's points over test scenes."""

from __future__ import annotations

import math

from icml26.grids.experiments import (
    GridsConfig,
    all_tokens_row,
    features,
    run_policy,
    success_radius,
    with_success,
)
from icml26.grids.models import head_flops


def figure_error_data(cfg: GridsConfig, seed: int, methods=None, ks=None,
                      progress=None) -> list[dict]:
    """F1: one row per (method, K) plus the all-tokens row (K = all tokens)."""
    methods = cfg.figure_methods if methods is None else methods
    ks = cfg.ks if ks is None else ks
    feats = features(cfg, seed)
    jobs = [(m, k) for m in methods for k in ks
            if not (m == "avgpool" and math.isqrt(k) ** 2 != k) and k < cfg.side ** 2]
    full = all_tokens_row(cfg, seed, feats)
    radius = success_radius(cfg, full)
    drop = ("coords_px", "pos_px", "val_pos_px")
    rows = [{key: v for key, v in with_success(full, radius).items() if key not in drop}]
    for j, (m, k) in enumerate(jobs):
        row = with_success(run_policy(cfg, m, k, seed, feats), radius)
        rows.append({key: v for key, v in row.items() if key not in drop})
        if progress is not None:
            progress(j + 1, len(jobs))
    return rows


def figure_flops_data(cfg: GridsConfig, ks=None) -> list[dict]:
    """F2: analytic head FLOPs ``L (24 N d^2 + 4 N^2 d)`` vs K, and their ratio to all the
    run's tokens (``side^2``: 16 in the second design; issue 46: before, the ratio was to 256,
    the paper's SigLIP count, which the run never reads)."""
    n = cfg.side ** 2
    ks = sorted(set([k for k in (1, 2, 4, 8, 16, 32, 64, 128, 256) if k <= n] + [n]
                    if ks is None else ks))
    full = head_flops(n, cfg.d_model)
    return [{"k": k, "flops": head_flops(k, cfg.d_model),
             "ratio": head_flops(k, cfg.d_model) / full} for k in ks]


def figure_coords_data(cfg: GridsConfig, seed: int, k: int = 4, n_show: int = 8) -> dict:
    """F3: test images, their contact points and GridS's K sampling points (pixels)."""
    row = run_policy(cfg, "grids", k, seed)
    data = features(cfg, seed)
    n0 = data["n_train"]
    return {"images": data["img"][n0: n0 + n_show], "contact": data["act"][n0: n0 + n_show],
            "coords": row["coords_px"][:n_show], "k": k}
