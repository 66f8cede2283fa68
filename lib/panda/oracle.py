"""PANDA's ``Phi*`` oracle: brute force on a grid over the provable disk + zoom refinement."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from icml26.common import check_int
from icml26.panda.equilibrium import landscape, phi, phi_radius
from icml26.panda.game import DTYPE, MarkovGame


@dataclass(frozen=True)
class OracleConfig:
    """Brute force for Phi*: a grid over the provable disk, then zoom refinement (ours)."""

    grid: int = 33  # spec probe: 41 x 41 (we use 33 at quick scale)
    keep: int = 3  # refine this many best grid-local minima
    rounds: int = 18  # zoom rounds, each halves the half-width of a 5 x 5 stencil

    def validate(self) -> OracleConfig:
        check_int("grid", self.grid, 3)
        check_int("keep", self.keep, 1)
        check_int("rounds", self.rounds, 0)
        return self


def brute_force(game: MarkovGame, cfg: OracleConfig = OracleConfig()) -> dict:
    """``Phi*`` by exhaustive search: ``Phi`` on a grid over ``[-R, R]^2`` with ``R`` from
    :func:`phi_radius` (so the global minimiser is inside), then each of the ``keep`` best
    grid-local minima is refined by zoom grids (5 x 5 stencil, half-width halved per round,
    Newton warm-started from the centre). Derivative-free: independent of every method.
    Returns ``{"phi_star", "x_star", "radius", "landscape", "candidates"}``."""
    cfg.validate()
    radius = phi_radius(game)
    land = landscape(game, radius, cfg.grid)
    F = land["phi"]
    g = cfg.grid
    pad = torch.nn.functional.pad(F[None, None], (1, 1, 1, 1), value=math.inf)[0, 0]
    neigh = torch.stack([pad[1 + i : g + 1 + i, 1 + j : g + 1 + j]
                         for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0)])
    is_min = (F <= neigh.min(0).values).reshape(-1)
    flat = F.reshape(-1)
    idx = is_min.nonzero()[:, 0]
    idx = idx[flat[idx].argsort()][: cfg.keep]
    centers, zc = land["xx"][idx].clone(), land["z"][idx].clone()
    h = 2 * radius / (g - 1)
    off = torch.linspace(-1, 1, 5, dtype=DTYPE, device=game.r0.device)
    stencil = torch.stack(torch.meshgrid(off, off, indexing="xy"), -1).reshape(-1, 2)
    best = flat[idx].clone()
    for _ in range(cfg.rounds):
        pts = (centers[:, None, :] + h * stencil[None]).reshape(-1, 2)
        z0 = zc[:, None, :].expand(-1, 25, -1).reshape(pts.shape[0], -1)
        val, eq = phi(game, pts, z0=z0)
        val = val.reshape(-1, 25)
        j = val.argmin(-1)
        rows = torch.arange(len(idx), device=val.device)
        improve = val[rows, j] <= best
        centers = torch.where(improve[:, None], pts.reshape(-1, 25, 2)[rows, j], centers)
        zc = torch.where(improve[:, None], eq.z.reshape(len(idx), 25, -1)[rows, j], zc)
        best = torch.minimum(best, val[rows, j])
        h /= 2
    k = int(best.argmin())
    return {"phi_star": float(best[k]), "x_star": centers[k].tolist(), "radius": radius,
            "landscape": land, "candidates": list(zip(best.tolist(), centers.tolist()))}
