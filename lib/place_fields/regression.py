"""F2 of ``place_fields``: the precision / sample-efficiency trade-off of place-cell codes.

Features ``phi_c(x) = exp(-(x - c)^2 / 2 sigma^2)`` on ``C`` centres of the unit environment,
ridge regression ``w = argmin |Phi w - y|^2 + ridge |w|^2`` (solved in its dual form
``alpha = (Phi Phi^T + ridge I)^-1 y``) of a Gaussian-process sample with an RBF kernel of
length-scale ``ell`` (random Fourier features), from ``n`` noisy samples.  Test error is
U-shaped in ``sigma`` with an optimum ``sigma*`` that grows with ``ell`` [derived].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26.common import check_int, generator
from icml26.place_fields.decay import DTYPE, as_sigmas, check_positive


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
        as_sigmas(self.sigmas)
        if any(s <= 0 for s in self.sigmas):
            raise ValueError(f"regression sigmas must be > 0, got {list(self.sigmas)}")
        for e in self.ells:
            check_positive("ell", e)
        if not self.ells:
            raise ValueError("ells must hold at least one length-scale")
        if not self.n_train or any(int(n) != n or n < 1 for n in self.n_train):
            raise ValueError(f"n_train must be integers >= 1, got {list(self.n_train)}")
        check_int("trials", self.trials, 1)
        check_int("n_centres", self.n_centres, 1)
        check_int("n_test", self.n_test, 1)
        check_int("n_fourier", self.n_fourier, 1)
        check_positive("noise", self.noise, allow_zero=True)
        check_positive("ridge", self.ridge)


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
    g = generator(seed)
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
