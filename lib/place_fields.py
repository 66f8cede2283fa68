"""The hippocampal place-field gradient, and HIPE positional embeddings.

"The Hippocampal Place Field Gradient: A Bio-inspired Framework Building Multiscale
Representation for Better Sample Efficiency" (ICML 2026); earlier version: Shujun Zhou and
Guozhang Chen, "The Hippocampal Place Field Gradient: An Eigenmode Theory Linking Grid Cell
Projections to Multiscale Learning", https://arxiv.org/abs/2506.04943.  Code of the HIPE part:
github.com/AIogry/relative_PE (an OLMo fork; class ``ScaledRotaryEmbedding``), read, not copied.

Figures reproduced (``notebooks/place_fields.ipynb``):

* F1 a continuous place-field width gradient from a few discrete grid modules;
* F2 the precision / sample-efficiency trade-off: U-shaped test error in the field width
  ``sigma`` with an optimum ``sigma*`` that grows with the target's length-scale ``ell``;
* F3 HIPE positional kernels: RoPE's oscillating kernel becomes a monotone "place field"
  over relative position whose width is ``sigma``;
* F4 (derived, exploratory) data efficiency of RoPE vs single- and multi-sigma HIPE in a toy
  Transformer (``icml26.place_fields_lm``).

Model (the abstract gives the ideas; the equations are our reconstruction [derived]):

* Grid modules ``m = 0..M-1`` have spacings ``lambda_m = lambda0 r^m`` and frequencies
  ``k_m = 2 pi / lambda_m``; a grid cell is a rectified cosine ``[cos(k_m x - phi_j)]_+`` with
  ``P`` evenly spaced phases ``phi_j`` per module.
* A place cell centred at ``x0`` receives ``w_mj = D(sigma, k_m) cos(k_m x0 - phi_j)``, so its
  field is ``r(x) ∝ sum_m D(sigma, k_m) cos(k_m (x - x0))`` (+ harmonics of the rectification):
  a low-pass-filtered delta whose eigenmodes are the grid frequencies, damped by the decay
  ``D``.  The dorsal-to-ventral index is ``sigma``; decays (from the authors' code):
  ``gaussian exp(-sigma^2 k^2 / 2)``, ``exp 1 / (1 + sigma^2 k^2)``, ``power exp(-sigma k)``.
* FWHM: rates are min-max normalised; the width is the connected interval around ``x0``
  where the rate is >= 1/2, with linearly interpolated crossings (the ``"span"`` method, first
  to last supra-threshold point, is the spec's pitfall: at small ``sigma`` it merges the
  secondary peaks of the periodic modules).
* F2: features ``phi_c(x) = exp(-(x - c)^2 / 2 sigma^2)`` on ``C`` centres of the unit
  environment, ridge regression ``w = argmin |Phi w - y|^2 + ridge |w|^2`` (solved in its
  dual form ``alpha = (Phi Phi^T + ridge I)^-1 y``) of a Gaussian-process sample with an RBF
  kernel of length-scale ``ell`` (random Fourier features), from ``n`` noisy samples.
* HIPE [known, from the code]: RoPE frequencies ``omega_f = base^(-2f/d)``; head ``h`` scales
  both q and k by ``s_h(omega) = sqrt(g_h(omega))`` with ``g_h(omega) = omega D(sigma_h,
  omega)``, normalised to ``mean_f g_h = 1`` per head (the authors normalise over all heads at
  once; per head keeps ``sigma`` from acting as a temperature).  The positional part of a
  logit for unit, aligned q and k is ``K_h(Delta) = sum_f g_h(omega_f) cos(omega_f Delta)``;
  log-spaced frequencies make ``d omega = omega d log omega``, so the factor ``omega`` turns
  the sum into ``∫ D(sigma omega) cos(omega Delta) d omega``, the Fourier transform of the
  decay: ``exp(-Delta^2 / 2 sigma^2)`` (half-width 1.18 sigma), ``exp(-|Delta| / sigma)``,
  ``sigma^2 / (sigma^2 + Delta^2)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from icml26.claims import Claim, failed

PAPER = "place_fields"
DECAYS = ("gaussian", "exp", "power")
DTYPE = torch.float64
HALF_WIDTH_GAUSSIAN = math.sqrt(2 * math.log(2))  # 1.1774: half-width / sigma of exp(-x²/2σ²)


# --------------------------------------------------------------------------- validation
def _check_decay(decay: str) -> None:
    if decay not in DECAYS:
        raise ValueError(f"decay must be one of {DECAYS}, got {decay!r}")


def _check_int(name: str, value, low: int) -> None:
    if isinstance(value, bool) or int(value) != value or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def _check_positive(name: str, value: float, allow_zero: bool = False) -> None:
    ok = value >= 0 if allow_zero else value > 0
    if not (math.isfinite(value) and ok):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, "
                         f"got {value!r}")


def _sigmas(sigmas, name: str = "sigma") -> torch.Tensor:
    s = torch.as_tensor(sigmas, dtype=DTYPE).reshape(-1)
    if s.numel() == 0:
        raise ValueError(f"{name} must hold at least one value, got an empty list")
    if not torch.isfinite(s).all() or (s < 0).any():
        raise ValueError(f"{name} must be >= 0 and finite, got {s.tolist()}")
    return s


def decay_weight(sigma: torch.Tensor | float, k: torch.Tensor | float,
                 decay: str = "gaussian") -> torch.Tensor:
    """The decay ``D(sigma, k)`` of grid->place weights (or of RoPE frequencies) with ``k``.

    Broadcasts ``sigma`` against ``k``; ``D(0, k) = 1`` for every family.
    """
    _check_decay(decay)
    sigma = torch.as_tensor(sigma, dtype=DTYPE)
    k = torch.as_tensor(k, dtype=DTYPE)
    if decay == "gaussian":
        return torch.exp(-0.5 * (sigma * k) ** 2)
    if decay == "exp":
        return 1.0 / (1.0 + (sigma * k) ** 2)
    return torch.exp(-sigma * k)


def closed_form_kernel(decay: str, sigma: float, delta: torch.Tensor) -> torch.Tensor:
    """The Fourier transform of ``D(sigma, .)``, normalised to 1 at ``Delta = 0``."""
    _check_decay(decay)
    delta = torch.as_tensor(delta, dtype=DTYPE)
    if decay == "gaussian":
        return torch.exp(-(delta**2) / (2 * sigma**2))
    if decay == "exp":
        return torch.exp(-delta.abs() / sigma)
    return sigma**2 / (sigma**2 + delta**2)


# --------------------------------------------------------------------------- F1: grid -> place
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
    sigmas: tuple[float, ...] = tuple(np.round(np.linspace(0.0, 0.3, 31), 4))  # spec F1
    shown_sigmas: tuple[float, ...] = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)  # 6 fields in F1
    fwhm_method: str = "peak"  # "span" = the naive threshold that merges secondary peaks

    @property
    def centre(self) -> float:
        return self.env_length / 2 if self.x0 is None else self.x0

    def validate(self) -> None:
        _check_int("n_modules", self.n_modules, 1)
        _check_int("phases", self.phases, 1)
        _check_positive("lambda0", self.lambda0)
        _check_positive("env_length", self.env_length)
        _check_positive("dx", self.dx)
        if not (math.isfinite(self.ratio) and self.ratio > 1):
            raise ValueError(f"module ratio must be > 1, got {self.ratio!r}")
        _check_decay(self.decay)
        if self.fwhm_method not in ("peak", "span"):
            raise ValueError(f"fwhm_method must be 'peak' or 'span', got {self.fwhm_method!r}")
        if self.env_length / self.dx > 200_000:
            raise ValueError(f"env_length / dx must be <= 200000 points, got "
                             f"{self.env_length / self.dx:.0f}")
        if not 0 <= self.centre <= self.env_length:
            raise ValueError(f"x0 must lie in [0, env_length={self.env_length}], got {self.x0}")
        _sigmas(self.sigmas)
        _sigmas(self.shown_sigmas, "shown_sigmas")


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
    s = _sigmas(sigma)
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
    d = decay_weight(_sigmas(sigma)[:, None], grid_frequencies(cfg)[None, :], cfg.decay)
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
    _check_int("n", n, 2)
    s = float(_sigmas(sigma)[0])
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


# --------------------------------------------------------------------------- F2: trade-off
def _logspace(lo: float, hi: float, n: int) -> tuple[float, ...]:
    return tuple(float(v) for v in np.round(np.geomspace(lo, hi, n), 6))


@dataclass(frozen=True)
class RegressionConfig:
    """F2: ridge regression from place-cell features; defaults are the spec's F2 setting."""

    sigmas: tuple[float, ...] = _logspace(0.005, 0.3, 20)  # spec x-axis 0.005-0.3 (log)
    ells: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2)  # spec panels
    n_train: tuple[int, ...] = (5, 20, 80)  # spec curves
    trials: int = 32  # ours: SE of the mean MSE ~ 5-10 %
    n_centres: int = 200  # ours: centre spacing 0.005 = the smallest sigma
    n_test: int = 256  # test grid on the unit environment
    noise: float = 0.1  # sd of the observation noise (spec dashboard default)
    ridge: float = 1e-2  # spec dashboard default
    n_fourier: int = 512  # random Fourier features of the GP target (ours)

    def validate(self) -> None:
        _sigmas(self.sigmas)
        if any(s <= 0 for s in self.sigmas):
            raise ValueError(f"regression sigmas must be > 0, got {list(self.sigmas)}")
        for e in self.ells:
            _check_positive("ell", e)
        if not self.ells:
            raise ValueError("ells must hold at least one length-scale")
        if not self.n_train or any(int(n) != n or n < 1 for n in self.n_train):
            raise ValueError(f"n_train must be integers >= 1, got {list(self.n_train)}")
        _check_int("trials", self.trials, 1)
        _check_int("n_centres", self.n_centres, 1)
        _check_int("n_test", self.n_test, 1)
        _check_int("n_fourier", self.n_fourier, 1)
        _check_positive("noise", self.noise, allow_zero=True)
        _check_positive("ridge", self.ridge)


def place_features(x: torch.Tensor, sigma: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """Gaussian place-cell features: ``x [..., N]``, ``sigma [S]`` -> ``[S, ..., N, C]``."""
    s = sigma.reshape(-1, *([1] * (x.ndim + 1)))
    return torch.exp(-0.5 * ((x[None, ..., None] - centres) / s) ** 2)


def gp_sample_fn(ells: torch.Tensor, trials: int, n_fourier: int, g: torch.Generator):
    """Random-Fourier-feature draws of GPs with RBF kernels; ``f(x [R, N]) -> [L, R, N]``.

    ``f(x) = sqrt(2/J) sum_j cos(w_j x + b_j)``, ``w ~ N(0, 1/ell^2)``, ``b ~ U[0, 2 pi)``:
    unit variance and covariance ``exp(-(x-x')^2 / 2 ell^2)`` as ``J -> infinity``.
    """
    w = torch.randn(len(ells), trials, n_fourier, generator=g, dtype=DTYPE) / ells[:, None, None]
    b = torch.rand(len(ells), trials, n_fourier, generator=g, dtype=DTYPE) * 2 * math.pi
    amp = math.sqrt(2.0 / n_fourier)

    def f(x: torch.Tensor) -> torch.Tensor:
        return amp * torch.cos(x[None, :, :, None] * w[:, :, None, :]
                               + b[:, :, None, :]).sum(-1)

    return f


def ridge_predict(phi: torch.Tensor, y: torch.Tensor, phi_test: torch.Tensor, ridge: float,
                  mask: torch.Tensor | None = None) -> torch.Tensor:
    """Ridge regression, batched: one Cholesky solve for every problem of the batch.

    ``phi [..., N, C]`` train features, ``y [..., N, K]`` targets (K right-hand sides),
    ``phi_test [..., M, C]``; ``mask [..., N]`` (bool) drops padded rows, which is how
    different ``n`` share one solve.  Returns predictions ``[..., M, K]`` of
    ``w = argmin |Phi w - y|^2 + ridge |w|^2``, solved in the dual form
    ``alpha = (Phi Phi^T + ridge I)^-1 y`` when ``N <= C`` and in the primal form
    ``w = (Phi^T Phi + ridge I)^-1 Phi^T y`` otherwise (the same solution).
    """
    if not ridge > 0:
        raise ValueError(f"ridge must be > 0, got {ridge}")
    if mask is not None:
        m = mask.to(phi.dtype)[..., :, None]
        phi, y = phi * m, y * m  # a zero row adds nothing to either form
    n, c = phi.shape[-2], phi.shape[-1]
    if n <= c:
        gram = phi @ phi.transpose(-1, -2)
        eye = torch.eye(n, dtype=gram.dtype, device=gram.device)
        chol = torch.linalg.cholesky(gram + ridge * eye)
        return (phi_test @ phi.transpose(-1, -2)) @ torch.cholesky_solve(y, chol)
    gram = phi.transpose(-1, -2) @ phi
    eye = torch.eye(c, dtype=gram.dtype, device=gram.device)
    chol = torch.linalg.cholesky(gram + ridge * eye)
    return phi_test @ torch.cholesky_solve(phi.transpose(-1, -2) @ y, chol)


def figure_tradeoff_data(cfg: RegressionConfig = RegressionConfig(), seed: int = 0,
                         device: str | torch.device = "cpu") -> dict:
    """F2: test MSE ``[S, n, ell]`` (mean over trials, and its SE) and ``sigma*`` ``[n, ell]``.

    Training inputs are nested (the first ``n`` of ``max(n_train)`` draws) and every sigma sees
    the same targets and noise (common random numbers); all (sigma, n, trial) problems go
    through one batched solve.
    """
    cfg.validate()
    g = torch.Generator().manual_seed(int(seed))
    sig = torch.tensor(cfg.sigmas, dtype=DTYPE)
    ells = torch.tensor(cfg.ells, dtype=DTYPE)
    ns = list(cfg.n_train)
    nmax, trials = max(ns), cfg.trials
    f = gp_sample_fn(ells, trials, cfg.n_fourier, g)
    x = torch.rand(trials, nmax, generator=g, dtype=DTYPE)
    noise = cfg.noise * torch.randn(len(ells), trials, nmax, generator=g, dtype=DTYPE)
    y = f(x) + noise  # [L, R, N]
    xt = (torch.arange(cfg.n_test, dtype=DTYPE) + 0.5) / cfg.n_test
    yt = f(xt.expand(trials, -1))  # [L, R, T]
    centres = (torch.arange(cfg.n_centres, dtype=DTYPE) + 0.5) / cfg.n_centres
    dev = torch.device(device)
    phi = place_features(x, sig, centres).to(dev)  # [S, R, N, C]
    phi_t = place_features(xt, sig, centres).to(dev)  # [S, T, C]
    mask = torch.stack([torch.arange(nmax) < n for n in ns]).to(dev)  # [Q, N]
    pred = ridge_predict(phi[:, None], y.permute(1, 2, 0)[None, None].to(dev),
                         phi_t[:, None, None], cfg.ridge, mask[None, :, None, :])
    err = ((pred.cpu() - yt.permute(1, 2, 0)[None, None]) ** 2).mean(-2)  # [S, Q, R, L]
    mse = err.mean(2)
    se = err.std(2) / math.sqrt(trials) if trials > 1 else torch.zeros_like(mse)
    star = sig[mse.argmin(0)]  # [Q, L]
    return {"sigma": sig.numpy(), "ell": ells.numpy(), "n_train": np.asarray(ns),
            "mse": mse.numpy(), "se": se.numpy(), "sigma_star": star.numpy()}


# --------------------------------------------------------------------------- F3: HIPE kernels
def rope_frequencies(head_dim: int, base: float = 1e4) -> torch.Tensor:
    """RoPE inverse frequencies ``omega_f = base^(-2f/d)``, ``[d/2]`` float64 (rad/token)."""
    _check_int("head_dim", head_dim, 2)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    if not (math.isfinite(base) and base > 1):
        raise ValueError(f"rope base must be > 1, got {base!r}")
    return base ** (-torch.arange(0, head_dim, 2, dtype=DTYPE) / head_dim)


def hipe_gain(sigmas, head_dim: int = 64, base: float = 1e4, decay: str = "gaussian",
              with_omega: bool = True, normalise: bool = True) -> torch.Tensor:
    """Per-(head, frequency) logit weights ``g_h(omega) = omega D(sigma_h, omega)``, ``[H, d/2]``.

    Normalised to ``mean_f g = 1`` per head; ``with_omega=False`` is the spec's pitfall
    (dropping the factor omega).  ``sigma = 0`` gives RoPE-like weights ``∝ omega``.
    """
    s = _sigmas(sigmas, "head sigmas")
    omega = rope_frequencies(head_dim, base)
    g = decay_weight(s[:, None], omega[None, :], decay)
    if with_omega:
        g = g * omega
    if normalise:
        g = g / g.mean(dim=1, keepdim=True).clamp(min=1e-300)
    return g


def hipe_scale(sigmas, head_dim: int = 64, base: float = 1e4, decay: str = "gaussian",
               with_omega: bool = True, normalise: bool = True) -> torch.Tensor:
    """The scale ``s = sqrt(g)`` applied to BOTH q and k, ``[H, d/2]`` float32 (kernel input).

    Its square has mean 1 per head (with ``normalise``).
    """
    return hipe_gain(sigmas, head_dim, base, decay, with_omega, normalise).sqrt().float()


def positional_kernel(gain: torch.Tensor, omega: torch.Tensor, max_dist: int) -> torch.Tensor:
    """``K_h(Delta) = sum_f g_h(omega_f) cos(omega_f Delta)``, ``[H, max_dist + 1]``."""
    delta = torch.arange(max_dist + 1, dtype=DTYPE)
    return gain.to(DTYPE) @ torch.cos(omega[:, None] * delta[None, :])


def half_width(kernel: torch.Tensor) -> torch.Tensor:
    """First crossing of 1/2 by ``K/K(0)`` ``[H, D]`` (linear interpolation; NaN if none)."""
    k = kernel / kernel[:, :1]
    below = k < 0.5
    has = below.any(dim=1)
    j = torch.where(below, torch.arange(k.shape[1]), k.shape[1]).min(dim=1).values
    j = j.clamp(1, k.shape[1] - 1)
    a = k.gather(1, (j - 1)[:, None])[:, 0]
    b = k.gather(1, j[:, None])[:, 0]
    hw = (j - 1).to(DTYPE) + (a - 0.5) / (a - b).clamp(min=1e-300)
    return torch.where(has, hw, torch.full_like(hw, float("nan")))


def r_squared(y: torch.Tensor, target: torch.Tensor) -> float:
    """Coefficient of determination of ``y`` as a prediction of ``target``."""
    ss_res = float(((y - target) ** 2).sum())
    ss_tot = float(((target - target.mean()) ** 2).sum())
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")


def max_upward_step(k: torch.Tensor) -> float:
    """Largest increase between neighbouring samples of a 1-D curve (0 if non-increasing)."""
    return float((k[1:] - k[:-1]).clamp(min=0).max()) if k.numel() > 1 else 0.0


@dataclass(frozen=True)
class HipeConfig:
    """F3 kernels; defaults are the spec's F3 acceptance setting (head_dim 64, base 1e4)."""

    head_dim: int = 64  # OLMo-60M head size (authors' scripts)
    base: float = 1e4  # RoPE base (authors' scripts)
    max_dist: int = 512  # spec F3 x-axis and the authors' sequence length
    sigmas: tuple[float, ...] = (4.0, 8.0, 16.0, 32.0, 64.0, 128.0)  # spec range [4, 128]
    shown_sigmas: tuple[float, ...] = (4.0, 16.0, 64.0)  # spec F3 curves
    fit_window: float = 5.0  # R² on [0, 5 sigma] (ours: where the field is; beyond it both ~0)
    monotone_window: float = 3.0  # spec: monotone on [0, 3 sigma]
    with_omega: bool = True  # False = the pitfall
    normalise: bool = True

    def validate(self) -> None:
        rope_frequencies(self.head_dim, self.base)
        _check_int("max_dist", self.max_dist, 2)
        s = _sigmas(self.sigmas, "head sigmas")
        if (s <= 0).any():
            raise ValueError(f"HIPE sigmas must be > 0, got {s.tolist()}")
        _sigmas(self.shown_sigmas, "shown_sigmas")
        _check_positive("fit_window", self.fit_window)
        _check_positive("monotone_window", self.monotone_window)


def hipe_kernel_stats(cfg: HipeConfig, decay: str, sigmas: Sequence[float]) -> dict:
    """Normalised kernels ``[S, D]`` for one decay, with half-width, R² and upward steps."""
    omega = rope_frequencies(cfg.head_dim, cfg.base)
    gain = hipe_gain(sigmas, cfg.head_dim, cfg.base, decay, cfg.with_omega, cfg.normalise)
    k = positional_kernel(gain, omega, cfg.max_dist)
    k = k / k[:, :1]
    delta = torch.arange(cfg.max_dist + 1, dtype=DTYPE)
    hw, r2, up = half_width(k), [], []
    for i, s in enumerate(sigmas):
        win = delta <= min(cfg.fit_window * s, cfg.max_dist)
        r2.append(r_squared(k[i, win], closed_form_kernel(decay, s, delta[win])))
        up.append(max_upward_step(k[i, delta <= min(cfg.monotone_window * s, cfg.max_dist)]))
    return {"kernel": k.numpy(), "half_width": hw.numpy(), "r2": np.asarray(r2),
            "max_up": np.asarray(up)}


def figure_hipe_kernels_data(cfg: HipeConfig = HipeConfig()) -> dict:
    """F3: ``K(Delta)/K(0)`` for RoPE and for HIPE (each decay, ``shown_sigmas``) + stats."""
    cfg.validate()
    omega = rope_frequencies(cfg.head_dim, cfg.base)
    rope = positional_kernel(torch.ones(1, omega.numel(), dtype=DTYPE), omega, cfg.max_dist)[0]
    out = {"delta": np.arange(cfg.max_dist + 1), "rope": (rope / rope[0]).numpy(),
           "sigmas": np.asarray(cfg.sigmas, dtype=float),
           "shown_sigmas": np.asarray(cfg.shown_sigmas, dtype=float)}
    for decay in DECAYS:
        out[decay] = hipe_kernel_stats(cfg, decay, cfg.sigmas)
        out[decay]["shown"] = hipe_kernel_stats(cfg, decay, cfg.shown_sigmas)["kernel"]
    return out


# --------------------------------------------------------------------------- configs / scales
@dataclass(frozen=True)
class PlaceFieldsConfig:
    """Everything ``claims`` runs: one sub-config per figure."""

    grid: GridConfig = field(default_factory=GridConfig)
    regression: RegressionConfig = field(default_factory=RegressionConfig)
    hipe: HipeConfig = field(default_factory=HipeConfig)
    lm: object = None  # an icml26.place_fields_lm.LMConfig; None = its defaults for the scale


def config_for(scale: str) -> PlaceFieldsConfig:
    """``quick``: CI and notebooks.  ``paper``: closer to the paper (more trials, 3 seeds and
    the spec's 2-layer d=64 toy LM; for a GPU or a patient user)."""
    from icml26 import place_fields_lm as lm

    if scale == "quick":
        return PlaceFieldsConfig(lm=lm.LMConfig())
    if scale == "paper":
        return PlaceFieldsConfig(regression=RegressionConfig(trials=128),
                                 lm=lm.paper_config())
    raise ValueError(f"scale must be 'quick' or 'paper', got {scale!r}")


def figure_data_efficiency_data(cfg=None, seed: int = 0, n_seeds: int | None = None,
                                impl: str = "auto", progress: bool = False):
    """F4 (derived): validation loss of RoPE / HIPE-single / HIPE-multi vs training-set size.

    Seeds ``seed .. seed + n_seeds - 1``; each seed's training is cached.  See
    :func:`icml26.place_fields_lm.figure_data_efficiency_data`.
    """
    from icml26 import place_fields_lm as lm

    return lm.figure_data_efficiency_data(cfg, seed, n_seeds, impl=impl, progress=progress)


# --------------------------------------------------------------------------- claims
def _spearman(a, b) -> float:
    from scipy.stats import spearmanr

    rho = spearmanr(np.asarray(a, dtype=float), np.asarray(b, dtype=float))[0]
    return float(rho) if np.isfinite(rho) else float("nan")


def claims(seed: int = 0, scale: str = "quick") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed``."""
    return claims_for(config_for(scale), seed)


F4_CLAIM = ("hipe_data_efficiency", "Multi-sigma HIPE reaches a lower validation loss than "
            "RoPE at the two smallest data sizes (by > 1 SE) and is no worse than 0.02 nats at "
            "the largest", ">", 0.0)


PARTS = ("f1", "f2", "f3", "f4")


def claims_for(cfg: PlaceFieldsConfig, seed: int = 0,
               parts: Sequence[str] = PARTS) -> list[Claim]:
    """The claims for an explicit config (mutation tests swap FWHM method / drop omega).

    ``parts`` picks figures (``"f1"`` grid -> place, ``"f2"`` regression, ``"f3"`` HIPE
    kernels, ``"f4"`` the toy LM) so a test can recompute only what it checks.
    """
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"parts must be among {PARTS}, got {sorted(unknown)}")
    out: list[Claim] = []

    def add(name, statement, measured, op, threshold, expected=True, note=""):
        out.append(Claim(PAPER, name, statement, measured, op, threshold, expected, note))

    if "f1" in parts:
        _claims_f1(cfg.grid, add)
    if "f2" in parts:
        _claims_f2(cfg.regression, seed, add)
    if "f3" in parts:
        _claims_f3(cfg.hipe, add)
    if "f4" in parts:
        out.append(lm_claim(cfg.lm, seed))
    return out


def _claims_f1(g: GridConfig, add) -> None:
    f1 = figure_field_gradient_data(g)
    w = f1["fwhm"]
    add("fwhm_monotone", "Place-field width grows monotonically with the decay width sigma",
        _spearman(f1["sigma"], w), ">=", 0.95,
        note=f"Spearman rho(sigma, FWHM) over {len(w)} sigmas in [{g.sigmas[0]}, "
        f"{g.sigmas[-1]}] m, {g.n_modules} modules, {g.decay} decay; spec prototype 0.9999")
    distinct = len({int(round(v / g.dx)) for v in w})
    add("fwhm_continuous", f"Field width varies continuously although only {g.n_modules} "
        "grid spacings exist", distinct, ">=", 20,
        note=f"distinct FWHM values on the {g.dx * 1000:g} mm grid out of {len(w)} sigmas "
        "(spec prototype 30)")
    add("fwhm_range", "The widest field (max sigma) is at least twice the narrowest "
        "(sigma = 0)", float(w[-1] / w[0]) if w[0] > 0 else float("nan"), ">=", 2.0,
        note=f"FWHM {w[0]:.3f} m -> {w[-1]:.3f} m (spec prototype 0.20 -> 0.52)")


def _claims_f2(r: RegressionConfig, seed: int, add) -> None:
    f2 = figure_tradeoff_data(r, seed)
    mse, star, ns = f2["mse"], f2["sigma_star"], list(f2["n_train"])
    big = [i for i, n in enumerate(ns) if n >= 20]
    tracked = [i for i, n in enumerate(ns) if n in (20, 80)]
    rhos = [_spearman(f2["ell"], star[i]) for i in tracked]
    shown = ", ".join(f"{s:.3f}" for s in star[tracked[0]]) if tracked else "-"
    add("sigma_star_tracks_ell", "The optimal field width sigma* grows with the target's "
        "length-scale ell", min(rhos) if rhos else float("nan"), ">=", 0.9,
        note=f"worst Spearman rho(ell, sigma*) over n in {{20, 80}}; sigma* for ell = "
        f"{list(r.ells)} at n = {ns[tracked[0]] if tracked else '-'}: {shown} "
        "(spec prototype 0.012/0.023/0.082/0.195)")
    ends = [min(mse[0, i, j], mse[-1, i, j]) / mse[:, i, j].min()
            for i in big for j in range(len(f2["ell"]))]
    add("mse_u_shaped", "Test MSE is U-shaped in sigma: both ends >= 1.2x the minimum",
        min(ends) if ends else float("nan"), ">=", 1.2,
        note=f"worst (end MSE / min MSE) over ell in {list(r.ells)} and n >= 20, sigma in "
        f"[{r.sigmas[0]}, {r.sigmas[-1]}]; {r.trials} trials; n = 5 is not asserted (spec)")


def _claims_f3(h: HipeConfig, add) -> None:
    f3 = figure_hipe_kernels_data(h)
    ga = f3["gaussian"]
    add("hipe_gaussian_width", "Gaussian HIPE gives a place field of half-width 1.18 sigma",
        float(np.max(np.abs(ga["half_width"] / f3["sigmas"] - HALF_WIDTH_GAUSSIAN))), "<=",
        0.1, note=f"max |half-width/sigma - 1.18| over sigma in {list(h.sigmas)}, head_dim "
        f"{h.head_dim}, base {h.base:g}")
    add("hipe_gaussian_fit", "The Gaussian HIPE kernel is a Gaussian of width sigma",
        float(np.min(ga["r2"])), ">=", 0.99,
        note=f"min R² against exp(-Delta²/2sigma²) (no free parameter) on [0, "
        f"{h.fit_window:g} sigma]; spec prototype >= 0.998")
    other = [float(np.min(f3[d]["r2"])) for d in ("exp", "power")]
    add("hipe_other_decays_fit", "exp / power HIPE kernels match exp(-|Delta|/sigma) and "
        "sigma²/(sigma²+Delta²)", min(other), ">=", 0.95,
        note=f"min R² (exp {other[0]:.3f}, power {other[1]:.3f}) on [0, {h.fit_window:g} "
        "sigma]; spec prototype exp >= 0.95 for sigma >= 4, power >= 0.96")
    ups = {d: float(np.max(f3[d]["max_up"])) for d in DECAYS}
    add("hipe_monotone", "Gaussian and power HIPE kernels decrease monotonically on "
        "[0, 3 sigma]", max(ups["gaussian"], ups["power"]), "<", 1e-3,
        note=f"largest upward step of K/K(0): gaussian {ups['gaussian']:.1e}, power "
        f"{ups['power']:.1e} over sigma in {list(h.sigmas)}")
    add("hipe_exp_monotone", "The exp-decay HIPE kernel decreases monotonically on "
        "[0, 3 sigma]", ups["exp"], "<", 1e-3, expected=False,
        note="its spectrum 1/(1+sigma²omega²) falls off slowly, so cutting it at RoPE's "
        "omega_max = 1 rad/token leaves Gibbs ripples of ~2% (its cusp at Delta=0 needs "
        "higher frequencies than RoPE has); our finding, not a claim of the paper")
    add("rope_not_monotone", "Plain RoPE's kernel oscillates (is not monotone) on [0, 512]",
        max_upward_step(torch.as_tensor(f3["rope"])), ">", 1e-3,
        note=f"largest upward step of RoPE's K/K(0); its minimum is {f3['rope'].min():.2f} "
        "(spec prototype 0.08)")


def lm_claim(lm_cfg=None, seed: int = 0) -> Claim:
    """The F4 claim; NaN with a note if the training failed."""
    from icml26 import place_fields_lm as lm

    name, statement, op, thr = F4_CLAIM
    try:
        frame = lm.figure_data_efficiency_data(lm_cfg, seed)
        return lm.efficiency_claim(frame, lm_cfg, seed)
    except (RuntimeError, ValueError, FloatingPointError) as err:  # a run that broke
        return failed(PAPER, [(name, statement, op, thr, lm.EXPECT_EFFICIENCY)], repr(err))[0]


__all__ = [
    "DECAYS", "GridConfig", "HipeConfig", "PAPER", "PlaceFieldsConfig", "RegressionConfig",
    "claims", "claims_for", "closed_form_kernel", "config_for", "decay_weight",
    "figure_data_efficiency_data", "figure_field_gradient_data", "figure_hipe_kernels_data",
    "figure_tradeoff_data", "fwhm", "grid_frequencies", "grid_rates", "half_width",
    "hipe_gain", "hipe_scale", "place_features", "place_field", "place_field_2d",
    "module_fields", "place_weights", "positional_kernel", "ridge_predict", "rope_frequencies",
]
