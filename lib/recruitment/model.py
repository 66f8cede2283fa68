"""The capacity model and the single round: pmfs, survival marginals, exact greedy.

A person with capacity ``C`` given ``k`` coupons recruits ``min(k, C)``; ``E min(k, C) =
sum_{j <= k} S(j)`` with the marginal survival ``S(j) = P(C >= j)``, non-increasing in ``j``,
so one round's separable concave allocation problem is solved exactly by greedy.
Individuals differ by an exponential tilt of a base pmf (see the package docstring).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence

import numpy as np
import torch

from icml26.common import check_choice, check_int

#: The spec's prototype population pmf over capacities 0..6 (mean 1.87).
SPEC_PMF = (0.25, 0.25, 0.20, 0.12, 0.08, 0.06, 0.04)
FAMILIES = ("custom", "poisson", "binomial", "geometric")
DTYPE = torch.float64


# --------------------------------------------------------------------------- inputs
def validate_pmf(pmf: Sequence[float] | torch.Tensor, name: str = "pmf") -> torch.Tensor:
    """Return ``pmf`` as a float64 tensor, or raise ``ValueError`` naming what was expected."""
    p = torch.as_tensor(pmf, dtype=DTYPE)
    if p.ndim != 1 or p.numel() < 2:
        raise ValueError(f"{name} must be a 1-D pmf over capacities 0..K with K >= 1, "
                         f"got shape {tuple(p.shape)}")
    if not torch.isfinite(p).all() or (p < 0).any():
        raise ValueError(f"{name} must be non-negative and finite, got {p.tolist()}")
    if abs(float(p.sum()) - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1, got sum={float(p.sum()):.6g}")
    return p


def capacity_pmf(family: str = "custom", mean: float = 1.87, k_max: int = 6) -> torch.Tensor:
    """A population capacity pmf on ``0..k_max``.

    ``custom`` is the spec's prototype pmf (its own mean and K=6); ``poisson`` is a Poisson
    truncated to ``0..k_max`` and renormalised, ``binomial`` is Binomial(k_max, mean/k_max),
    ``geometric`` is ``p(c) ∝ rho^c`` on ``0..k_max``. The free parameter is solved so that the
    mean equals ``mean`` (bisection; the truncated mean is monotone in it).
    """
    check_choice("family", family, FAMILIES)
    if family == "custom":
        return validate_pmf(SPEC_PMF)
    check_int("k_max", k_max, 1)
    if not 0 < mean < k_max:
        raise ValueError(f"mean capacity must be in (0, k_max={k_max}), got {mean}")
    c = torch.arange(k_max + 1, dtype=DTYPE)
    if family == "binomial":
        q = mean / k_max
        logp = (torch.lgamma(torch.tensor(k_max + 1.0, dtype=DTYPE)) - torch.lgamma(c + 1)
                - torch.lgamma(k_max - c + 1) + c * math.log(q) + (k_max - c) * math.log1p(-q))
        return validate_pmf(torch.softmax(logp, 0))

    def make(x: float) -> torch.Tensor:
        logp = c * math.log(x) - torch.lgamma(c + 1) if family == "poisson" else c * math.log(x)
        return torch.softmax(logp, 0)

    lo, hi = 1e-9, 1e9
    for _ in range(200):  # geometric bisection on the rate / ratio
        mid = math.sqrt(lo * hi)
        if float((make(mid) * c).sum()) < mean:
            lo = mid
        else:
            hi = mid
    return validate_pmf(make(math.sqrt(lo * hi)))


def tilt(pmf: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Exponentially tilted pmfs ``p(c) exp(theta c) / Z``: ``[K+1], [...] -> [..., K+1]``."""
    c = torch.arange(pmf.numel(), dtype=pmf.dtype, device=pmf.device)
    logp = torch.log(pmf.clamp_min(1e-300)) + theta[..., None] * c
    logp = torch.where(pmf > 0, logp, torch.full_like(logp, -math.inf))
    return torch.softmax(logp, dim=-1)


def population_pmf(base: torch.Tensor, heterogeneity: float, nodes: int = 48) -> torch.Tensor:
    """``pbar = E_theta[tilt(base, theta)]`` for ``theta ~ N(0, h^2)`` (Gauss-Hermite, exact
    to ~1e-12 here). This is what the surrogate assumes every frontier member is drawn from."""
    if heterogeneity < 0:
        raise ValueError(f"heterogeneity must be >= 0, got {heterogeneity}")
    if heterogeneity == 0:
        return base.clone()
    x, w = _hermite_nodes(nodes)
    theta = torch.as_tensor(x * heterogeneity, dtype=base.dtype, device=base.device)
    weights = torch.as_tensor(w / w.sum(), dtype=base.dtype, device=base.device)
    return (weights[:, None] * tilt(base, theta)).sum(0)


@functools.lru_cache(maxsize=4)
def _hermite_nodes(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.hermite_e.hermegauss(nodes)


def marginals(pmf: torch.Tensor, k_max: int | None = None) -> torch.Tensor:
    """Marginal survival probabilities ``S(j) = P(C >= j)`` for ``j = 1..k_max``.

    ``[..., K+1] -> [..., k_max]`` (zero beyond K); non-increasing in ``j``.
    """
    k = pmf.shape[-1] - 1
    k_max = k if k_max is None else k_max
    tail = pmf.flip(-1).cumsum(-1).flip(-1)[..., 1:]  # P(C >= j), j = 1..K
    if k_max <= k:
        return tail[..., :k_max]
    pad = torch.zeros(*pmf.shape[:-1], k_max - k, dtype=pmf.dtype, device=pmf.device)
    return torch.cat([tail, pad], dim=-1)


# --------------------------------------------------------------------------- one round
def greedy_allocation(marg: torch.Tensor, budget: int | torch.Tensor) -> torch.Tensor:
    """Exact single-round allocation: the ``budget`` largest positive marginals.

    ``marg`` is ``[..., n, k_max]`` (rows non-increasing), ``budget`` a scalar or ``[...]``.
    Returns coupon counts ``[..., n]``. Because every row is non-increasing, picking the
    largest entries overall is the same as repeatedly giving the next coupon to the highest
    ``S_i(k_i + 1)``; zero marginals are never bought.
    """
    *batch, n, k_max = marg.shape
    flat = marg.reshape(*batch, n * k_max)
    order = torch.argsort(flat, dim=-1, descending=True, stable=True)
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(n * k_max, device=marg.device).expand_as(order))
    budget = torch.as_tensor(budget, device=marg.device)
    if (budget < 0).any():
        raise ValueError(f"budget must be >= 0, got {budget}")
    chosen = (rank < budget[..., None]) & (flat > 0)
    return chosen.reshape(*batch, n, k_max).sum(-1)


def expected_recruits(marg: torch.Tensor, coupons: torch.Tensor) -> torch.Tensor:
    """``sum_i sum_{j <= k_i} S_i(j)``: ``[..., n, k_max], [..., n] -> [...]``."""
    j = torch.arange(1, marg.shape[-1] + 1, device=marg.device)
    return (marg * (j <= coupons[..., None])).sum((-1, -2))


def brute_force_allocation(marg: torch.Tensor, budget: int) -> float:
    """Best single-round value by enumerating every allocation with ``sum k_i <= budget``."""
    n, k_max = marg.shape
    cum = torch.cat([torch.zeros(n, 1, dtype=marg.dtype), marg.cumsum(1)], 1).tolist()
    best = 0.0
    for ks in itertools.product(range(min(budget, k_max) + 1), repeat=n):
        if sum(ks) <= budget:
            best = max(best, sum(cum[i][k] for i, k in enumerate(ks)))
    return best
