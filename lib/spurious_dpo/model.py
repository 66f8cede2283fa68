"""The model of ``icml26.spurious_dpo``: config, data, losses and population moments.

Log-linear DPO is logistic regression on oriented pair differences; this module holds the
pieces every figure shares (see the package docstring for the paper, the equations and what
is reconstructed). Nothing runs at import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26 import common

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
    # F2's claims: the 1/n decay is checked over this decade of n_grid (spec: 1e3 -> 1e4), and
    # the OOD gap at max(n_grid) is compared with the gap at its low end (spec: 1e3)
    decay_ns: tuple[int, int] = (1_000, 10_000)
    tie_fractions: tuple[float, ...] = (0.0, 0.1, 0.3, 0.5)  # spec F3 x-axis
    replicates: int = 8  # independent data sets per seed behind F2's means (ours)
    tie_replicates: int = 4  # ... and behind F3's (ours)
    tie_loss: str = "symmetric"  # the spec's main tie loss
    test_shift_m: float = -0.5  # OOD test bias m' (spec: m' = -m)
    # pitfalls (mutation switches)
    tie_equal_utility: bool = True  # False: "ties" drawn with any utility difference
    leakage_regime: str = "early_stop"  # "converged": measure leakage only at convergence
    # True: a tie forced into a win/loss is labelled like every pair of the pipeline (the
    # "winner" carries the offset m); False: a coin flip independent of s, which equals the
    # random-label control in expectation and so cannot show that naive labels hurt
    forced_label_bias: bool = True
    # neural policy (F4, all ours: sized so held-out loss ~0.32 vs the optimum's 0.31)
    mlp_hidden: int = 16
    mlp_pairs: int = 2_000
    mlp_steps: int = 200  # full-batch Adam steps
    mlp_lr: float = 0.01
    mlp_tie_fraction: float = 0.3  # spec F4
    mlp_replicates: int = 3

    def validate(self) -> None:
        common.check_int("d_c", self.d_c, 2)
        for name in ("sigma_eps", "kappa", "beta"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if self.m < 0:
            raise ValueError(f"m (mean spurious bias) must be >= 0, got {self.m!r}")
        if not -1.0 <= self.rho <= 1.0:
            raise ValueError(f"rho must be in [-1, 1], got {self.rho!r}")
        for name in ("n_pairs", "n_population"):
            check_n(getattr(self, name), name)
        for n in (*self.n_grid, *self.decay_ns):
            check_n(n, "n_grid and decay_ns entries")
        if len(self.decay_ns) != 2 or not self.decay_ns[0] < self.decay_ns[1]:
            raise ValueError(f"decay_ns must be two increasing n, got {self.decay_ns!r}")
        for f in (*self.tie_fractions, self.mlp_tie_fraction):
            check_tie_fraction(f)
        common.check_choice("tie_loss", self.tie_loss, TIE_LOSSES)
        common.check_choice("leakage_regime", self.leakage_regime, ("early_stop", "converged"))
        common.check_int("early_steps", self.early_steps, 1)
        if not self.lr > 0 or not self.shrink_lambda >= 0:
            raise ValueError(f"lr must be > 0 and shrink_lambda >= 0, got {self.lr!r}, "
                             f"{self.shrink_lambda!r}")
        common.check_int("far_steps (0 = skip)", self.far_steps, 0)
        for name in ("replicates", "tie_replicates", "mlp_replicates", "mlp_steps",
                     "mlp_hidden"):
            common.check_int(name, getattr(self, name), 1)
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
    """The preset ``"quick"`` (CI, notebooks) or ``"paper"`` (a patient CPU user)."""
    return common.config_for(SCALES, scale)


def check_n(n: int, name: str = "n") -> None:
    """A number of pairs: an integer >= 2."""
    common.check_int(name, n, 2)


def check_tie_fraction(f: float) -> None:
    if not 0.0 <= f < 1.0:
        raise ValueError(f"tie fraction must be in [0, 1), got {f!r}")


def w_star(d_c: int) -> torch.Tensor:
    """The true utility direction: ``(1, ..., 1) / sqrt(d_c)`` (ours; any unit vector works)."""
    return torch.full((d_c,), 1.0 / math.sqrt(d_c), dtype=DTYPE)


def feature_dim(cfg: SpuriousConfig) -> int:
    """Number of features the policy sees: ``d_c (- 1 if a cause is hidden) + 2``."""
    return cfg.d_c - int(cfg.hidden_causal) + 2


def substream(seed: int, tag: int) -> torch.Generator:
    """A generator for sub-experiment ``tag`` of ``seed`` (independent streams)."""
    return common.generator(int(seed) * 1_000_003 + 7919 * tag + 17)


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
               hidden_causal: bool = False, equal_utility: bool = True,
               return_labels: bool = False):
    """Differences ``dphi`` of ``n`` tie pairs (unordered: a random orientation).

    Equal utility: ``dc`` is projected onto ``w*``'s orthogonal complement, the spurious
    features keep their usual spread (``ds1 = +-m + sigma eps``, ``ds2 = sigma eps``): non-zero
    ``ds`` is what makes ties regularise. ``equal_utility=False`` is the pitfall: "ties" drawn
    like any pair (``du != 0``, ``ds = ... + rho du``). Returns ``[R, S, n, p]``.

    The sign ``t = +-1`` of a tie's offset ``m t`` is the label the data pipeline would record
    if forced to choose (its "winner" is the one with the larger s1, as for every preference
    pair); ``return_labels=True`` also returns it, ``[R, n]`` (the forced-label control).
    """
    m, rho, sigma = (torch.as_tensor(v, dtype=DTYPE) for v in (m, rho, sigma))
    s = max(v.numel() if v.ndim else 1 for v in (m, rho, sigma))
    m, rho, sigma = (_as_batch(v, s)[None, :, None] for v in (m, rho, sigma))
    if n == 0:
        empty = torch.zeros(replicates, s, 0, d_c - int(hidden_causal) + 2, dtype=DTYPE)
        return (empty, torch.zeros(replicates, 0, dtype=DTYPE)) if return_labels else empty
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
    x = torch.cat([c, ds1[..., None].expand(replicates, s, n, 1),
                   ds2[..., None].expand(replicates, s, n, 1)], -1)
    return (x, sign[:, 0].to(DTYPE)) if return_labels else x


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
    return loss_derivs(z, TIE, kind)[0]


def _logcosh(x: torch.Tensor) -> torch.Tensor:
    return x.abs() + softplus(-2 * x.abs()) - math.log(2.0)


def loss_derivs(z: torch.Tensor, kind_code: int, tie_kind: str):
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
