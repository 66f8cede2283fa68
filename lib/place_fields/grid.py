"""F1 of ``place_fields``: a continuous place-field width gradient from discrete grid modules.

* Grid modules ``m = 0..M-1`` have spacings ``lambda_m = lambda0 r^m`` and frequencies
  ``k_m = 2 pi / lambda_m``; a grid cell is a rectified cosine ``[cos(k_m x - phi_j)]_+`` with
  ``P`` evenly spaced phases ``phi_j`` per module.
* A place cell centred at ``x0`` receives ``w_mj = D(sigma, k_m) cos(k_m x0 - phi_j)``, so its
  field is ``r(x) ∝ sum_m D(sigma, k_m) cos(k_m (x - x0))`` (+ harmonics of the rectification):
  a low-pass-filtered delta whose eigenmodes are the grid frequencies, damped by the decay
  ``D`` (:mod:`icml26.place_fields.decay`).  The dorsal-to-ventral index is ``sigma``.
* FWHM: rates are min-max normalised; the width is the connected interval around ``x0``
  where the rate is >= 1/2, with linearly interpolated crossings (the ``"span"`` method, first
  to last supra-threshold point, is the spec's pitfall: at small ``sigma`` it merges the
  secondary peaks of the periodic modules).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26.common import check_int
from icml26.place_fields.decay import (
    DTYPE,
    as_sigmas,
    check_decay,
    check_positive,
    decay_weight,
)


@dataclass(frozen=True)
class GridConfig:
    """Grid modules and the place-field track of F1; defaults are the spec's prototype."""

    n_modules: int = 5  # M ≈ 4-6 modules (spec prototype M = 5)
    lambda0: float = 0.3  # m, smallest grid spacing (spec prototype)
    ratio: float = 1.42  # spacing ratio between modules (Stensola et al. 2012)
    phases: int = 16  # evenly spaced phases per module (spec prototype)
    env_length: float = 2.0  # m, 1-D track (spec prototype)
    dx: float = 0.0025  # m, the spec's 2.5 mm grid on which distinct widths are counted
    decay: str = "gaussian"  # the authors' default decay family
    rectify: bool = True  # rectified cosines (spec); False = pure cosines
    x0: float | None = None  # field centre; None = middle of the track
    sigmas: tuple[float, ...] = tuple(np.round(np.linspace(0.0, 0.3, 31), 4).tolist())  # spec F1
    shown_sigmas: tuple[float, ...] = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)  # 6 fields in F1
    fwhm_method: str = "peak"  # "span" = the naive threshold that merges secondary peaks

    @property
    def centre(self) -> float:
        return self.env_length / 2 if self.x0 is None else self.x0

    def validate(self) -> None:
        check_int("n_modules", self.n_modules, 1)
        check_int("phases", self.phases, 1)
        check_positive("lambda0", self.lambda0)
        check_positive("env_length", self.env_length)
        check_positive("dx", self.dx)
        if not (math.isfinite(self.ratio) and self.ratio > 1):
            raise ValueError(f"module ratio must be > 1, got {self.ratio!r}")
        check_decay(self.decay)
        if self.fwhm_method not in ("peak", "span"):
            raise ValueError(f"fwhm_method must be 'peak' or 'span', got {self.fwhm_method!r}")
        if self.env_length / self.dx > 200_000:
            raise ValueError(f"env_length / dx must be <= 200000 points, got "
                             f"{self.env_length / self.dx:.0f}")
        if not 0 <= self.centre <= self.env_length:
            raise ValueError(f"x0 must lie in [0, env_length={self.env_length}], got {self.x0}")
        as_sigmas(self.sigmas)
        as_sigmas(self.shown_sigmas, "shown_sigmas")


def track(cfg: GridConfig) -> torch.Tensor:
    """Positions ``[X]`` on ``[0, env_length]`` with step ``dx`` (float64)."""
    n = int(round(cfg.env_length / cfg.dx)) + 1
    return torch.linspace(0.0, cfg.env_length, n, dtype=DTYPE)


def grid_frequencies(cfg: GridConfig) -> torch.Tensor:
    """Module frequencies ``k_m = 2 pi / (lambda0 r^m)``, ``[M]`` in rad/m."""
    spacing = cfg.lambda0 * cfg.ratio ** torch.arange(cfg.n_modules, dtype=DTYPE)
    return 2 * math.pi / spacing


def grid_rates(x: torch.Tensor, cfg: GridConfig) -> torch.Tensor:
    """Grid-cell rates ``[M, P, X]``: ``[cos(k_m x - phi_j)]_+`` (or the pure cosine)."""
    k = grid_frequencies(cfg)
    phi = 2 * math.pi * torch.arange(cfg.phases, dtype=DTYPE) / cfg.phases
    rate = torch.cos(k[:, None, None] * x[None, None, :] - phi[None, :, None])
    return rate.clamp(min=0) if cfg.rectify else rate


def place_weights(sigma, cfg: GridConfig) -> torch.Tensor:
    """Grid->place weights ``[S, M, P]``: ``D(sigma, k_m) cos(k_m x0 - phi_j)``."""
    s = as_sigmas(sigma)
    k = grid_frequencies(cfg)
    phi = 2 * math.pi * torch.arange(cfg.phases, dtype=DTYPE) / cfg.phases
    d = decay_weight(s[:, None], k[None, :], cfg.decay)  # [S, M]
    return d[:, :, None] * torch.cos(k[None, :, None] * cfg.centre - phi[None, None, :])


def module_fields(cfg: GridConfig, x: torch.Tensor) -> torch.Tensor:
    """Each module's phase-summed input to the place cell, ``[M, X]``:
    ``sum_j cos(k_m x0 - phi_j) g_mj(x)``.  The field is ``D(sigma, k) @ module_fields``."""
    k = grid_frequencies(cfg)
    phi = 2 * math.pi * torch.arange(cfg.phases, dtype=DTYPE) / cfg.phases
    proj = torch.cos(k[:, None] * cfg.centre - phi[None, :])  # [M, P]
    return torch.einsum("mp,mpx->mx", proj, grid_rates(x, cfg))


def place_field(sigma, cfg: GridConfig, x: torch.Tensor | None = None,
                modules: torch.Tensor | None = None) -> torch.Tensor:
    """Min-max normalised place fields ``[S, X]`` along the track (one row per sigma).

    Equal to ``einsum(place_weights, grid_rates)``, computed module by module (the weights
    factor into ``D(sigma, k_m)`` times a phase pattern that does not depend on sigma);
    ``modules`` = precomputed :func:`module_fields` on ``x`` (the dashboard caches them).
    """
    cfg.validate()
    x = track(cfg) if x is None else x
    d = decay_weight(as_sigmas(sigma)[:, None], grid_frequencies(cfg)[None, :], cfg.decay)
    r = d @ (module_fields(cfg, x) if modules is None else modules)
    lo = r.min(dim=1, keepdim=True).values
    span = (r.max(dim=1, keepdim=True).values - lo).clamp(min=1e-300)
    return (r - lo) / span


def fwhm(fields: torch.Tensor, x: torch.Tensor, x0: float, method: str = "peak") -> torch.Tensor:
    """Full width at half maximum ``[S]`` of normalised fields ``[S, X]``.

    ``"peak"``: the connected run of samples >= 1/2 that contains the sample nearest ``x0``,
    with crossings interpolated linearly (0 if that sample is below half maximum).  ``"span"``:
    first to last sample >= 1/2, the naive threshold that merges secondary peaks.
    """
    if method not in ("peak", "span"):
        raise ValueError(f"method must be 'peak' or 'span', got {method!r}")
    if fields.ndim != 2 or fields.shape[1] != x.numel() or x.numel() < 2:
        raise ValueError(f"fields must be [S, X] with X = len(x) >= 2, got "
                         f"{tuple(fields.shape)} and {x.numel()} positions")
    nx = x.numel()
    above = fields >= 0.5
    idx = torch.arange(nx)
    if method == "span":
        first = torch.where(above, idx, nx).min(dim=1).values
        last = torch.where(above, idx, -1).max(dim=1).values
        width = x[last.clamp(min=0)] - x[first.clamp(max=nx - 1)]
        return torch.where(last >= first, width, torch.zeros_like(width))
    i0 = int(torch.argmin((x - x0).abs()))
    below = ~above
    # last below-threshold sample left of i0 and first one right of it
    left_b = torch.where(below & (idx <= i0), idx, -1).max(dim=1).values  # -1: none
    right_b = torch.where(below & (idx >= i0), idx, nx).min(dim=1).values  # nx: none

    def cross(a_idx, b_idx, a_fallback):
        # interpolate between an above sample a and a below sample b (or hit the boundary)
        ok = (b_idx >= 0) & (b_idx < nx)
        a = a_idx.clamp(0, nx - 1)
        b = b_idx.clamp(0, nx - 1)
        fa = fields.gather(1, a[:, None])[:, 0]
        fb = fields.gather(1, b[:, None])[:, 0]
        t = ((fa - 0.5) / (fa - fb).clamp(min=1e-300)).clamp(0, 1)
        return torch.where(ok, x[a] + t * (x[b] - x[a]), x[a_fallback])

    right = cross(right_b - 1, right_b, torch.full_like(right_b, nx - 1))
    left = cross(left_b + 1, left_b, torch.zeros_like(left_b))
    width = (right - left).clamp(min=0)
    return torch.where(above[:, i0], width, torch.zeros_like(width))


def figure_field_gradient_data(cfg: GridConfig = GridConfig(), shown: bool = True) -> dict:
    """F1: fields for ``shown_sigmas`` (unless ``shown=False``) and FWHM over ``sigmas`` (m)."""
    cfg.validate()
    x = track(cfg)
    widths = fwhm(place_field(cfg.sigmas, cfg, x), x, cfg.centre, cfg.fwhm_method)
    out = {"x": x.numpy(), "shown_sigmas": np.asarray(cfg.shown_sigmas, dtype=float),
           "sigma": np.asarray(cfg.sigmas, dtype=float), "fwhm": widths.numpy(),
           "spacings": (2 * math.pi / grid_frequencies(cfg)).numpy()}
    if shown:
        out["fields"] = place_field(cfg.shown_sigmas, cfg, x).numpy()
    return out


def place_field_2d(sigma: float, cfg: GridConfig, n: int = 101) -> dict:
    """2-D field on ``[0, L]^2`` (optional view): 3 grid orientations at 60 degrees.

    The phase-summed projection keeps each module's fundamental, so the field is the mode
    sum ``sum_m D(sigma, k_m) sum_o cos(k_m e_o . (x - x0))`` with unit vectors ``e_o`` at
    0, 60 and 120 degrees (the pure-cosine limit; rectification harmonics are left out).
    Returns ``{"x": [n], "field": [n, n]}`` min-max normalised.
    """
    cfg.validate()
    check_int("n", n, 2)
    s = float(as_sigmas(sigma)[0])
    x = torch.linspace(0.0, cfg.env_length, n, dtype=DTYPE)
    xx, yy = torch.meshgrid(x - cfg.centre, x - cfg.centre, indexing="xy")
    k = grid_frequencies(cfg)
    d = decay_weight(s, k, cfg.decay)
    r = torch.zeros_like(xx)
    for theta in (0.0, math.pi / 3, 2 * math.pi / 3):
        proj = xx * math.cos(theta) + yy * math.sin(theta)
        r = r + (d[:, None, None] * torch.cos(k[:, None, None] * proj[None])).sum(0)
    r = (r - r.min()) / (r.max() - r.min()).clamp(min=1e-300)
    return {"x": x.numpy(), "field": r.numpy()}


def field_data(cfg: GridConfig, sigma: float, dim: str = "1D") -> dict:
    """One place field at decay width ``sigma``: ``{"x", "field", "fwhm"}`` (numpy; FWHM in
    m) along the track (``dim="1D"``), or ``{"x", "field"}`` on a 61 x 61 arena (``"2D"``)."""
    if dim == "2D":
        return place_field_2d(sigma, cfg, n=61)
    x, modules = _track_modules(cfg)
    field = place_field([sigma], cfg, x, modules)
    return {"x": x.numpy(), "field": field[0].numpy(),
            "fwhm": float(fwhm(field, x, cfg.centre)[0])}


@functools.lru_cache(maxsize=16)
def _track_modules(cfg: GridConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The track and its module fields (they do not depend on sigma: a slider step reuses
    them)."""
    x = track(cfg)
    return x, module_fields(cfg, x)
