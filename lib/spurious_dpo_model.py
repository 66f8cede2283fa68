"""The model of ``icml26.spurious_dpo``: config, data, losses, batched solvers, moments.

Log-linear DPO is logistic regression on oriented pair differences; this module holds the
pieces every figure shares (see ``icml26.spurious_dpo`` for the paper, the equations and what
is reconstructed). Nothing runs at import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

DTYPE = torch.float64
TIE_LOSSES = ("symmetric", "rao_kupper", "davidson")
TRAININGS = ("converged", "early_stop", "l2")
#: Rao-Kupper log-threshold a = log(nu) and Davidson nu: our choices (Chen et al. fit them).
RAO_KUPPER_ALPHA = 1.0
DAVIDSON_NU = 1.0

# kinds of rows in a design: preference pair (DPO loss on the oriented difference) or tie
PREF, TIE = 0, 1


# --------------------------------------------------------------------------- config
@dataclass(frozen=True)
class SpuriousConfig:
    """One setting of the model and of every sweep. Defaults are the spec's prototype
    (d_c = 4, d_s = 2, kappa = 3, m = 0.5, rho = 0.5, sigma = 1, beta = 1) unless noted."""

    d_c: int = 4  # spec prototype
    m: float = 0.5  # mean spurious bias of the chosen response (spec)
    rho: float = 0.5  # causal-spurious correlation (spec)
    sigma_eps: float = 1.0  # spurious noise sd (spec)
    kappa: float = 3.0  # label sharpness, P(win) = sigma(kappa du) (spec)
    beta: float = 1.0  # DPO beta (spec)
    hidden_causal: bool = False  # the policy does not see causal coordinate 0 (spec variant)
    # training regimes
    n_pairs: int = 10_000  # preference pairs of F3 (spec dashboard default)
    n_population: int = 100_000  # "population" fits of F1 (spec: n = 1e5)
    early_steps: int = 10  # near-reference early stopping: gradient-flow time lr*steps = 1,
    lr: float = 0.1  # |theta| ~ 0.5, where log sigma(z) is within 1% of its quadratic (ours)
    shrink_lambda: float = 4.0  # explicit shrinkage with |theta| ~ 0.4 (ours, same criterion)
    far_steps: int = 50  # the spec prototype's early stopping (50 steps of lr 0.5): far from
    far_lr: float = 0.5  # the reference (|theta| ~ 2), shown and reported; 0 steps = skip
    # sweeps
    m_grid: tuple[float, ...] = (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0)
    rho_grid: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)  # spec F1(b): rho in [0, 1]
    n_grid: tuple[int, ...] = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)  # spec F2
    tie_fractions: tuple[float, ...] = (0.0, 0.1, 0.3, 0.5)  # spec F3 x-axis
    replicates: int = 8  # independent data sets per seed behind F2's means (ours)
    tie_replicates: int = 4  # ... and behind F3's (ours)
    tie_loss: str = "symmetric"  # the spec's main tie loss
    test_shift_m: float = -0.5  # OOD test bias m' (spec: m' = -m)
    # pitfalls (mutation switches)
    tie_equal_utility: bool = True  # False: "ties" drawn with any utility difference
    leakage_regime: str = "early_stop"  # "converged": measure leakage only at convergence
    # neural policy (F4, all ours: sized so held-out loss ~0.32 vs the optimum's 0.31)
    mlp_hidden: int = 16
    mlp_pairs: int = 2_000
    mlp_steps: int = 200  # full-batch Adam steps
    mlp_lr: float = 0.01
    mlp_tie_fraction: float = 0.3  # spec F4
    mlp_replicates: int = 3

    def validate(self) -> None:
        if int(self.d_c) != self.d_c or self.d_c < 2:
            raise ValueError(f"d_c must be an integer >= 2, got {self.d_c!r}")
        for name in ("sigma_eps", "kappa", "beta"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if self.m < 0:
            raise ValueError(f"m (mean spurious bias) must be >= 0, got {self.m!r}")
        if not -1.0 <= self.rho <= 1.0:
            raise ValueError(f"rho must be in [-1, 1], got {self.rho!r}")
        for name in ("n_pairs", "n_population"):
            check_n(getattr(self, name), name)
        for n in self.n_grid:
            check_n(n, "n_grid entries")
        for f in (*self.tie_fractions, self.mlp_tie_fraction):
            check_tie_fraction(f)
        if self.tie_loss not in TIE_LOSSES:
            raise ValueError(f"tie_loss must be one of {TIE_LOSSES}, got {self.tie_loss!r}")
        if self.leakage_regime not in ("early_stop", "converged"):
            raise ValueError("leakage_regime must be 'early_stop' or 'converged', "
                             f"got {self.leakage_regime!r}")
        if int(self.early_steps) != self.early_steps or self.early_steps < 1:
            raise ValueError(f"early_steps must be an integer >= 1, got {self.early_steps!r}")
        if not self.lr > 0 or not self.shrink_lambda >= 0:
            raise ValueError(f"lr must be > 0 and shrink_lambda >= 0, got {self.lr!r}, "
                             f"{self.shrink_lambda!r}")
        if int(self.far_steps) != self.far_steps or self.far_steps < 0:
            raise ValueError(f"far_steps must be an integer >= 0 (0 = skip), got "
                             f"{self.far_steps!r}")
        for name in ("replicates", "tie_replicates", "mlp_replicates", "mlp_steps",
                     "mlp_hidden"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        check_n(self.mlp_pairs, "mlp_pairs")
        if not self.far_lr > 0 or not self.mlp_lr > 0:
            raise ValueError(f"far_lr and mlp_lr must be > 0, got {self.far_lr}, {self.mlp_lr}")
        limit = max_stable_lr(self)
        for name in ("lr", "far_lr") if self.far_steps else ("lr",):
            if getattr(self, name) >= limit:
                raise ValueError(f"{name} = {getattr(self, name):g} is too large: gradient descent "
                                 f"on the DPO loss is only guaranteed stable for lr < "
                                 f"8 / (beta^2 lambda_max(Sigma)) = {limit:.3g}")


SCALES = {
    "quick": SpuriousConfig(),
    "paper": SpuriousConfig(n_population=1_000_000, replicates=32, tie_replicates=16,
                            mlp_pairs=20_000, mlp_steps=1_000, mlp_replicates=10,
                            n_grid=(100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000)),
}


def config_for(scale: str) -> SpuriousConfig:
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {sorted(SCALES)}, got {scale!r}")
    return SCALES[scale]


def check_n(n: int, name: str = "n") -> None:
    if int(n) != n or n < 2:
        raise ValueError(f"{name} must be an integer >= 2 (pairs), got {n!r}")


def check_tie_fraction(f: float) -> None:
    if not 0.0 <= f < 1.0:
        raise ValueError(f"tie fraction must be in [0, 1), got {f!r}")


def w_star(d_c: int) -> torch.Tensor:
    """The true utility direction: ``(1, ..., 1) / sqrt(d_c)`` (ours; any unit vector works)."""
    return torch.full((d_c,), 1.0 / math.sqrt(d_c), dtype=DTYPE)


def feature_dim(cfg: SpuriousConfig) -> int:
    """Number of features the policy sees: ``d_c (- 1 if a cause is hidden) + 2``."""
    return cfg.d_c - int(cfg.hidden_causal) + 2


def _gen(seed: int, tag: int) -> torch.Generator:
    """A generator for sub-experiment ``tag`` of ``seed`` (independent streams)."""
    return torch.Generator().manual_seed(int(seed) * 1_000_003 + 7919 * tag + 17)


# --------------------------------------------------------------------------- data
def _as_batch(x, b: int) -> torch.Tensor:
    t = torch.as_tensor(x, dtype=DTYPE)
    return t.expand(b).clone() if t.ndim == 0 else t


def preference_design(n: int, m, rho, sigma, kappa, d_c: int, gen: torch.Generator,
                      replicates: int = 1, hidden_causal: bool = False) -> torch.Tensor:
    """Oriented differences ``d = phi_w - phi_l`` of ``n`` preference pairs.

    ``m, rho, sigma, kappa`` are scalars or ``[S]`` tensors (settings); the noise is common
    to all settings (common random numbers), independent across ``replicates``.
    Returns ``[R, S, n, p]`` with ``p = d_c (- 1 if hidden) + 2``: ``(c..., s1, s2)``.
    """
    check_n(n)
    if (torch.as_tensor(sigma) < 0).any():
        raise ValueError(f"noise sigma must be >= 0, got {sigma}")
    m, rho, sigma, kappa = (torch.as_tensor(v, dtype=DTYPE) for v in (m, rho, sigma, kappa))
    s = max(v.numel() if v.ndim else 1 for v in (m, rho, sigma, kappa))
    m, rho, sigma, kappa = (_as_batch(v, s)[None, :, None] for v in (m, rho, sigma, kappa))
    dc = torch.randn(replicates, 1, n, d_c, generator=gen, dtype=DTYPE)
    eps = torch.randn(replicates, 1, n, 2, generator=gen, dtype=DTYPE)
    unif = torch.rand(replicates, 1, n, generator=gen, dtype=DTYPE)
    du = dc @ w_star(d_c)  # [R, 1, n]
    t = torch.where(unif < torch.sigmoid(kappa * du), 1.0, -1.0)  # [R, S, n]
    ds1 = m * t + rho * du + sigma * eps[..., 0]
    ds2 = rho * du + sigma * eps[..., 1]
    c = dc[..., 1:] if hidden_causal else dc
    c = c.expand(replicates, s, n, c.shape[-1])
    return torch.cat([t[..., None] * c, (t * ds1)[..., None], (t * ds2)[..., None]], -1)


def tie_design(n: int, m, rho, sigma, d_c: int, gen: torch.Generator, replicates: int = 1,
               hidden_causal: bool = False, equal_utility: bool = True) -> torch.Tensor:
    """Differences ``dphi`` of ``n`` tie pairs (unordered: a random orientation).

    Equal utility: ``dc`` is projected onto ``w*``'s orthogonal complement, the spurious
    features keep their usual spread (``ds1 = +-m + sigma eps``, ``ds2 = sigma eps``): non-zero
    ``ds`` is what makes ties regularise. ``equal_utility=False`` is the pitfall: "ties" drawn
    like any pair (``du != 0``, ``ds = ... + rho du``). Returns ``[R, S, n, p]``.
    """
    m, rho, sigma = (torch.as_tensor(v, dtype=DTYPE) for v in (m, rho, sigma))
    s = max(v.numel() if v.ndim else 1 for v in (m, rho, sigma))
    m, rho, sigma = (_as_batch(v, s)[None, :, None] for v in (m, rho, sigma))
    if n == 0:
        return torch.zeros(replicates, s, 0, d_c - int(hidden_causal) + 2, dtype=DTYPE)
    w = w_star(d_c)
    dc = torch.randn(replicates, 1, n, d_c, generator=gen, dtype=DTYPE)
    if equal_utility:
        dc = dc - (dc @ w)[..., None] * w
    eps = torch.randn(replicates, 1, n, 2, generator=gen, dtype=DTYPE)
    sign = torch.where(torch.rand(replicates, 1, n, generator=gen) < 0.5, 1.0, -1.0)
    du = dc @ w
    ds1 = m * sign.to(DTYPE) + rho * du + sigma * eps[..., 0]
    ds2 = rho * du + sigma * eps[..., 1]
    c = dc[..., 1:] if hidden_causal else dc
    c = c.expand(replicates, s, n, c.shape[-1])
    return torch.cat([c, ds1[..., None].expand(replicates, s, n, 1),
                      ds2[..., None].expand(replicates, s, n, 1)], -1)


def n_ties_for(n_pref: int, tie_fraction: float) -> int:
    """Ties to add so that they are ``tie_fraction`` of all data at fixed preference pairs."""
    check_tie_fraction(tie_fraction)
    return int(round(n_pref * tie_fraction / (1.0 - tie_fraction)))


# --------------------------------------------------------------------------- losses
def softplus(x: torch.Tensor) -> torch.Tensor:
    """``log(1 + e^x)`` without ``F.softplus``'s switch to the identity above 20 (which
    drops ~e^-20 per term and zeroes the curvature there)."""
    return x.clamp_min(0) + torch.log1p(torch.exp(-x.abs()))


def dpo_loss(z: torch.Tensor) -> torch.Tensor:
    """DPO (Bradley-Terry) loss of an oriented margin ``z = beta theta . (phi_w - phi_l)``."""
    return softplus(-z)


def tie_loss(z: torch.Tensor, kind: str = "symmetric") -> torch.Tensor:
    """Negative log-likelihood of a tie at margin ``z`` (any orientation; even in ``z``).

    symmetric: ``-1/2 log sigma(z) - 1/2 log sigma(-z) = log(2 cosh(z/2))``;
    rao_kupper: ``-log(1 - sigma(z - a) - sigma(-z - a))``, up to a constant
    ``log cosh((z-a)/2) + log cosh((z+a)/2)``; davidson: ``-log(nu / (2 cosh(z/2) + nu))``.
    """
    return _loss_derivs(z, TIE, kind)[0]


def _logcosh(x: torch.Tensor) -> torch.Tensor:
    return x.abs() + softplus(-2 * x.abs()) - math.log(2.0)


def _loss_derivs(z: torch.Tensor, kind_code: int, tie_kind: str):
    """``(l, dl/dz, d2l/dz2)`` of the preference (``PREF``) or tie (``TIE``) loss."""
    if kind_code == PREF:
        s, sm = torch.sigmoid(z), torch.sigmoid(-z)  # not 1 - s: no cancellation
        return softplus(-z), -sm, s * sm
    if tie_kind == "symmetric":  # log(2 cosh(z/2)); its curvature sech^2(z/2)/4 = s(z)s(-z)
        h = z / 2
        return (_logcosh(h) + math.log(2.0), 0.5 * torch.tanh(h),
                torch.sigmoid(z) * torch.sigmoid(-z))
    if tie_kind == "rao_kupper":
        a = RAO_KUPPER_ALPHA
        lo, hi = (z - a) / 2, (z + a) / 2
        const = math.log(4.0) - math.log(math.exp(2 * a) - 1) + a  # so l = -log P(tie)
        sech2 = (lambda x: 4 * torch.sigmoid(2 * x) * torch.sigmoid(-2 * x))  # noqa: E731
        return (_logcosh(lo) + _logcosh(hi) + const, 0.5 * (torch.tanh(lo) + torch.tanh(hi)),
                0.25 * (sech2(lo) + sech2(hi)))
    if tie_kind == "davidson":
        nu = DAVIDSON_NU
        h = (z / 2).clamp(-300, 300)
        ch, sh = torch.cosh(h), torch.sinh(h)
        den = 2 * ch + nu
        big = h.abs() > 30  # log(2 cosh h + nu) = |h| + O(e^-|h|) for large |h|
        l = torch.where(big, h.abs(), torch.log(den)) - math.log(nu)
        d1 = torch.where(big, 0.5 * torch.sign(h), sh / den)
        d2 = torch.where(big, torch.zeros_like(h), (1 + 0.5 * nu * ch) / den**2)
        return l, d1, d2
    raise ValueError(f"tie loss must be one of {TIE_LOSSES}, got {tie_kind!r}")


# --------------------------------------------------------------------------- training
@dataclass(frozen=True)
class Design:
    """A batch of training sets, padded to common lengths, stored feature-major.

    ``xp [B, p, Np]``: oriented preference differences (columns) with weights ``wp [B, Np]``;
    ``xt [B, p, Nt]``: tie differences with weights ``wt [B, Nt]`` (``Nt`` may be 0). Weights
    are 0 on padding and ``1 / n_pref`` elsewhere: the loss is summed over all pairs and
    divided by the number of preference pairs, so at fixed preference data ties ADD a term
    ``(n_tie / n_pref) E_tie[l]`` (a mean over all pairs would instead dilute the preference
    term, which matters under shrinkage or early stopping). (Feature-major makes the three
    batched products of a Newton step contiguous: ~3x faster on CPU than row-major.)
    """

    xp: torch.Tensor
    wp: torch.Tensor
    xt: torch.Tensor
    wt: torch.Tensor

    @property
    def batch(self) -> int:
        return self.xp.shape[0]

    @property
    def dim(self) -> int:
        return self.xp.shape[1]


def make_design(pref: torch.Tensor, ties: torch.Tensor | None = None,
                n_pref: Sequence[int] | None = None, n_tie: Sequence[int] | None = None,
                ties_as_random_labels: bool = False,
                gen: torch.Generator | None = None) -> Design:
    """A :class:`Design` from row-major ``pref [B, Np, p]`` and ``ties [B, Nt, p]``, using
    the first ``n_pref[b]`` / ``n_tie[b]`` rows of element ``b``. ``ties_as_random_labels`` is
    the control that feeds the ties to DPO as random wins/losses (a random orientation and
    the preference loss)."""
    if pref.ndim != 3:
        raise ValueError(f"pref must be [B, N, p], got shape {tuple(pref.shape)}")
    b, np_max, p = pref.shape
    n_pref = [np_max] * b if n_pref is None else list(n_pref)
    if len(n_pref) != b or min(n_pref) < 0 or max(n_pref) > np_max:
        raise ValueError(f"n_pref must list {b} counts in [0, {np_max}], got {n_pref}")
    wp = (torch.arange(np_max)[None, :] < torch.tensor(n_pref)[:, None]).to(DTYPE)
    if ties is None:
        ties = torch.zeros(b, 0, p, dtype=DTYPE)
    if ties.ndim != 3 or ties.shape[0] != b or ties.shape[2] != p:
        raise ValueError(f"ties must be [{b}, Nt, {p}], got shape {tuple(ties.shape)}")
    nt_max = ties.shape[1]
    n_tie = [nt_max] * b if n_tie is None else list(n_tie)
    if len(n_tie) != b or min(n_tie) < 0 or max(n_tie) > nt_max:
        raise ValueError(f"n_tie must list {b} counts in [0, {nt_max}], got {n_tie}")
    wt = (torch.arange(nt_max)[None, :] < torch.tensor(n_tie)[:, None]).to(DTYPE)
    per_pref = wp.sum(1, keepdim=True)
    if (per_pref == 0).any():
        raise ValueError("every training set needs at least one preference pair")
    if ties_as_random_labels and nt_max > 0:
        g = gen if gen is not None else torch.Generator().manual_seed(0)
        sign = torch.where(torch.rand(b, nt_max, generator=g) < 0.5, 1.0, -1.0).to(DTYPE)
        pref = torch.cat([pref, ties * sign[..., None]], 1)
        wp = torch.cat([wp, wt], 1)
        ties, wt = ties[:, :0], wt[:, :0]
    return Design(pref.to(DTYPE).transpose(1, 2).contiguous(), wp / per_pref,
                  ties.to(DTYPE).transpose(1, 2).contiguous(), wt / per_pref)


def _margins(theta: torch.Tensor, x: torch.Tensor, beta: float) -> torch.Tensor:
    """``beta theta . x`` for feature-major ``x [B, p, N]``: ``[B, N]``."""
    return beta * torch.bmm(theta[:, None, :], x)[:, 0]


def _ridge(ridge, theta: torch.Tensor, beta: float) -> torch.Tensor:
    """Per-element coefficient ``beta^2 lambda / 4`` of the shrinkage gradient: ``[B]``."""
    r = torch.as_tensor(ridge, dtype=theta.dtype)
    if (r < 0).any():
        raise ValueError(f"shrinkage lambda must be >= 0, got {ridge}")
    return beta**2 * r.expand(theta.shape[0]) / 4


def objective(theta: torch.Tensor, design: Design, beta: float, ridge=0.0,
              tie_kind: str = "symmetric") -> torch.Tensor:
    """Loss ``sum_i w_i l(beta theta . x_i) + (beta^2 lambda / 8) |theta|^2``: ``[B]``.

    ``theta [B, p]``; ``ridge`` = lambda, a scalar or ``[B]``. Differentiable (the gradient
    test checks :func:`gradient_hessian` against autograd).
    """
    out = (design.wp * _loss_derivs(_margins(theta, design.xp, beta), PREF, tie_kind)[0]).sum(1)
    if design.xt.shape[-1]:
        lt = _loss_derivs(_margins(theta, design.xt, beta), TIE, tie_kind)[0]
        out = out + (design.wt * lt).sum(1)
    return out + _ridge(ridge, theta, beta) / 2 * (theta**2).sum(-1)


def gradient_hessian(theta: torch.Tensor, design: Design, beta: float, ridge=0.0,
                     tie_kind: str = "symmetric", hessian: bool = True):
    """Objective ``[B]``, analytic gradient ``[B, p]`` and Hessian ``[B, p, p]`` (or None)
    of :func:`objective`, in one pass over the data."""
    r = _ridge(ridge, theta, beta)
    value = r / 2 * (theta**2).sum(-1)
    grad = r[:, None] * theta
    hess = r[:, None, None] * torch.eye(theta.shape[-1], dtype=theta.dtype) if hessian else None
    for x, w, code in ((design.xp, design.wp, PREF), (design.xt, design.wt, TIE)):
        if x.shape[-1] == 0:
            continue
        l, d1, d2 = _loss_derivs(_margins(theta, x, beta), code, tie_kind)
        value = value + (w * l).sum(1)
        grad = grad + beta * torch.bmm(x, (w * d1)[..., None])[..., 0]
        if hessian:
            hess = hess + beta**2 * torch.bmm(x * (w * d2)[:, None, :], x.transpose(1, 2))
    return value, grad, hess


def fit_newton(design: Design, beta: float, ridge=0.0, tie_kind: str = "symmetric",
               theta0: torch.Tensor | None = None, max_iter: int = 60,
               tol: float = 1e-18) -> torch.Tensor:
    """Converged (optionally shrunk) DPO: damped Newton on :func:`objective`, every batch
    element at once; stops when every Newton decrement ``g' H^-1 g`` is below ``tol``.

    Armijo backtracking per element. An unpenalised, linearly separable set has no optimum:
    ``max_iter`` bounds the slow divergence and the result stays finite. Returns ``[B, p]``.
    """
    b, p = design.batch, design.dim
    theta = torch.zeros(b, p, dtype=DTYPE) if theta0 is None else theta0.clone()
    eye = torch.eye(p, dtype=DTYPE)
    for _ in range(max_iter):
        f0, grad, hess = gradient_hessian(theta, design, beta, ridge, tie_kind)
        step = torch.linalg.solve(hess + 1e-12 * eye, grad[..., None])[..., 0]
        decrement = (grad * step).sum(-1)
        if float(decrement.max()) < tol:
            break
        t = torch.ones(b, dtype=DTYPE)
        slack = 1e-12 * f0.abs()  # rounding: near the optimum f1 == f0 up to ulps
        for _ in range(40):  # Armijo backtracking, per element
            f1 = objective(theta - t[:, None] * step, design, beta, ridge, tie_kind)
            bad = ~(f1 <= f0 - 1e-4 * t * decrement + slack) & (decrement > tol)
            if not bad.any():
                break
            t = torch.where(bad, t / 2, t)
        theta = theta - t[:, None] * step
    return theta


def fit_gd(design: Design, beta: float, steps: int, lr: float, ridge=0.0,
           tie_kind: str = "symmetric", record: bool = False):
    """Early-stopped DPO: ``steps`` full-batch gradient steps of size ``lr`` from the
    reference ``theta = 0``. Returns ``theta [B, p]`` (and the path ``[steps + 1, B, p]``)."""
    theta = torch.zeros(design.batch, design.dim, dtype=DTYPE)
    path = [theta]
    for _ in range(int(steps)):
        _, grad, _ = gradient_hessian(theta, design, beta, ridge, tie_kind, hessian=False)
        theta = theta - lr * grad
        if record:
            path.append(theta)
    return (theta, torch.stack(path)) if record else theta


# --------------------------------------------------------------------------- moments
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(80)
GH_X = torch.as_tensor(_GH_X, dtype=DTYPE)
GH_W = torch.as_tensor(_GH_W / _GH_W.sum(), dtype=DTYPE)  # E f(Z) ≈ sum w f(x), Z ~ N(0,1)


def label_signal(kappa) -> torch.Tensor:
    """``a = E[du tanh(kappa du / 2)] = E[t du]`` for ``du ~ N(0, 1)`` (quadrature)."""
    k = torch.as_tensor(kappa, dtype=DTYPE)[..., None]
    return (GH_W * GH_X * torch.tanh(k * GH_X / 2)).sum(-1)


def moments(cfg: SpuriousConfig, m=None, rho=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Population ``mu = E[d]`` ``[S, p]`` and ``Sigma = E[d d']`` ``[S, p, p]`` of the
    oriented differences (closed forms; ``m``/``rho`` default to the config's, may be [S])."""
    m = torch.as_tensor(cfg.m if m is None else m, dtype=DTYPE).reshape(-1)
    rho = torch.as_tensor(cfg.rho if rho is None else rho, dtype=DTYPE).reshape(-1)
    m, rho = torch.broadcast_tensors(m, rho)
    s2 = cfg.sigma_eps**2
    a = label_signal(cfg.kappa)
    w = w_star(cfg.d_c)
    d = cfg.d_c
    S = m.numel()
    mu = torch.zeros(S, d + 2, dtype=DTYPE)
    mu[:, :d] = a * w
    mu[:, d] = m + rho * a
    mu[:, d + 1] = rho * a
    sig = torch.zeros(S, d + 2, d + 2, dtype=DTYPE)
    sig[:, :d, :d] = torch.eye(d, dtype=DTYPE)
    sig[:, :d, d] = (m * a + rho)[:, None] * w
    sig[:, :d, d + 1] = rho[:, None] * w
    sig[:, d, d] = m**2 + rho**2 + s2 + 2 * m * rho * a
    sig[:, d + 1, d + 1] = rho**2 + s2
    sig[:, d, d + 1] = m * rho * a + rho**2
    # mirror the three off-diagonal blocks (cheaper than triu + transpose on large batches)
    sig[:, d, :d] = sig[:, :d, d]
    sig[:, d + 1, :d] = sig[:, :d, d + 1]
    sig[:, d + 1, d] = sig[:, d, d + 1]
    if cfg.hidden_causal:
        keep = torch.arange(1, d + 2)
        mu, sig = mu[:, keep], sig[:, keep][:, :, keep]
    return mu, sig


def max_stable_lr(cfg: SpuriousConfig) -> float:
    """``8 / (beta^2 lambda_max(Sigma))``: the DPO Hessian is at most ``(beta^2/4) Sigma``
    (``sigma' <= 1/4``), so full-batch gradient descent is stable below this step size."""
    _, sig = moments(cfg)
    return 8.0 / (cfg.beta**2 * float(torch.linalg.eigvalsh(sig).max()))
