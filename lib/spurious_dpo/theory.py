"""Closed forms and the near-reference (quadratic-loss) theory of ``icml26.spurious_dpo``.

The exact population optimum, the linearised prediction ``(2/beta)(Sigma + lambda I)^-1 mu``
and its gradient-descent path, tie training in the same theory (with the live curves the
dashboard draws), exact accuracies by Gauss-Hermite quadrature, and the R^2 helpers. Nothing
runs at import.
"""

from __future__ import annotations

import numpy as np
import torch

from icml26.spurious_dpo.model import (
    DTYPE,
    GH_W,
    GH_X,
    TIE,
    TRAININGS,
    SpuriousConfig,
    check_tie_fraction,
    loss_derivs,
    moments,
    w_star,
)


def population_theta(cfg: SpuriousConfig, m=None, rho=None) -> torch.Tensor:
    """Exact population DPO optimum (all causes observed): ``[S, d_c + 2]``::

        theta* = ((kappa - 2 m rho / sigma^2) w*, 2 m / sigma^2, 0) / beta
    """
    if cfg.hidden_causal:
        raise ValueError("population_theta is closed-form only with hidden_causal=False")
    m = torch.as_tensor(cfg.m if m is None else m, dtype=DTYPE).reshape(-1)
    rho = torch.as_tensor(cfg.rho if rho is None else rho, dtype=DTYPE).reshape(-1)
    m, rho = torch.broadcast_tensors(m, rho)
    s2 = cfg.sigma_eps**2
    theta = torch.zeros(m.numel(), cfg.d_c + 2, dtype=DTYPE)
    theta[:, : cfg.d_c] = (cfg.kappa - 2 * m * rho / s2)[:, None] * w_star(cfg.d_c)
    theta[:, cfg.d_c] = 2 * m / s2
    return theta / cfg.beta


def linearised_theta(cfg: SpuriousConfig, lam=None, steps=None, lr=None, m=None,
                     rho=None) -> torch.Tensor:
    """Near-reference prediction ``[S, p]``.

    With ``lam``: ``(2/beta)(Sigma + lam I)^-1 mu`` (stationary point of the quadratic loss
    plus ``beta^2 lam/8 |theta|^2``). With ``steps``: ``steps`` gradient steps of size ``lr`` on
    the quadratic loss from 0, ``(2/beta) Sigma^-1 (I - (I - lr beta^2 Sigma/4)^steps) mu``.
    """
    mu, sig = moments(cfg, m, rho)
    p = mu.shape[-1]
    eye = torch.eye(p, dtype=DTYPE)
    if steps is None:
        lam = torch.as_tensor(cfg.shrink_lambda if lam is None else lam, dtype=DTYPE)
        lam = lam.reshape(-1, 1, 1) if lam.ndim else lam
        return 2 / cfg.beta * torch.linalg.solve(sig + lam * eye, mu[..., None])[..., 0]
    lr = cfg.lr if lr is None else lr
    evals, evecs = torch.linalg.eigh(sig)
    filt = (1 - (1 - lr * cfg.beta**2 * evals / 4) ** steps) / evals
    return 2 / cfg.beta * (evecs @ (filt[..., None] * (evecs.transpose(1, 2) @ mu[..., None])))[
        ..., 0]


def tie_moments(cfg: SpuriousConfig) -> torch.Tensor:
    """``Sigma_tie = E[dphi dphi']`` of the tie pairs ``[p, p]`` (closed form).

    Equal utility: ``I - w* w*'`` on the causal block, ``m^2 + sigma^2`` and ``sigma^2`` on
    s1, s2, no cross terms. Without the constraint (the pitfall): the causal block is ``I``,
    ``s`` gains ``rho du`` (``rho w*`` cross terms, ``+rho^2``)."""
    d, s2 = cfg.d_c, cfg.sigma_eps**2
    w = w_star(d)
    sig = torch.zeros(d + 2, d + 2, dtype=DTYPE)
    rho = 0.0 if cfg.tie_equal_utility else cfg.rho
    sig[:d, :d] = torch.eye(d, dtype=DTYPE) - (torch.outer(w, w) if cfg.tie_equal_utility
                                               else 0.0)
    sig[:d, d] = sig[d, :d] = rho * w
    sig[:d, d + 1] = sig[d + 1, :d] = rho * w
    sig[d, d] = cfg.m**2 + rho**2 + s2
    sig[d + 1, d + 1] = rho**2 + s2
    sig[d, d + 1] = sig[d + 1, d] = rho**2
    if cfg.hidden_causal:
        keep = torch.arange(1, d + 2)
        sig = sig[keep][:, keep]
    return sig


def tie_curvature(kind: str = "symmetric") -> float:
    """``l''(0)`` of a tie loss: 1/4 (symmetric), ``sech^2(a/2)/2`` (Rao-Kupper),
    ``(1 + nu/2) / (2 + nu)^2`` (Davidson)."""
    return float(loss_derivs(torch.zeros(1, dtype=DTYPE), TIE, kind)[2])


def tie_quadratic_theory(cfg: SpuriousConfig, fractions, lam=0.0, steps: int | None = None,
                         lr: float | None = None, tie_kind: str | None = None) -> torch.Tensor:
    """Near-reference (quadratic-loss) DPO + ties at each tie fraction ``f``: ``[F, p]``.

    With ``r = f / (1 - f)`` ties per preference pair, ``A = Sigma + 4 l''(0) r Sigma_tie +
    lam I``: the stationary point is ``(2/beta) A^-1 mu``; ``steps`` gradient steps of size
    ``lr`` from 0 give ``(2/beta) A^-1 (I - (I - lr beta^2 A / 4)^steps) mu`` (raises when
    that iteration is unstable). ``l''(0) = 1/4`` for the symmetric loss, so ties add
    ``r (beta^2/8) E_tie[(theta . dphi)^2]``. ``lam`` may be a scalar or ``[F]`` (an L2 path
    at ``f = 0``). Exact for the quadratic model; qualitative at convergence (there it gives
    theta_s1 ~ 0.46 where the true optimum is 1.0).
    """
    f = torch.as_tensor(fractions, dtype=DTYPE).reshape(-1)
    if ((f < 0) | (f >= 1)).any():
        raise ValueError(f"tie fractions must be in [0, 1), got {f.tolist()}")
    lam = torch.as_tensor(lam, dtype=DTYPE).reshape(-1)
    f, lam = torch.broadcast_tensors(f, lam)
    mu, sig = moments(cfg)
    sig_t = tie_moments(cfg)
    curv = tie_curvature(tie_kind or cfg.tie_loss)
    eye = torch.eye(mu.shape[-1], dtype=DTYPE)
    r = (f / (1 - f))[:, None, None]
    a = sig + 4 * curv * r * sig_t + lam[:, None, None] * eye
    b = mu[0].expand(len(f), -1)
    evals, evecs = torch.linalg.eigh(a)
    if steps is None:
        filt = 1 / evals
    else:
        lr = cfg.lr if lr is None else lr
        if float(evals.max()) * lr * cfg.beta**2 / 4 >= 2:
            raise ValueError(f"lr = {lr:g} is too large for gradient descent with ties at "
                             f"fraction {float(f.max()):g}: needs lr < "
                             f"{8 / (cfg.beta**2 * float(evals.max())):.3g}")
        filt = (1 - (1 - lr * cfg.beta**2 * evals / 4) ** steps) / evals
    return 2 / cfg.beta * (evecs @ (filt[..., None] * (evecs.transpose(1, 2) @ b[..., None])))[
        ..., 0]


def figure_theory_data(cfg: SpuriousConfig, training: str = "converged",
                       tie_fraction: float = 0.3) -> dict:
    """The closed-form / quadratic-theory curves (the dashboard's live views, milliseconds).

    ``training`` picks the regime of the quadratic theory: ``converged`` (lambda = 0),
    ``early_stop`` (``cfg.early_steps`` steps of ``cfg.lr``) or ``l2`` (``cfg.shrink_lambda``).
    Returns numpy arrays: theta_s1 = 2m/(beta sigma^2) vs m; theta_s2 vs rho for the three
    regimes; ties vs plain L2 at matched |theta_s| vs tie fraction (relative to DPO); exact
    accuracy vs test-time bias m' for DPO and DPO + ties at ``tie_fraction``.
    """
    cfg.validate()
    if training not in TRAININGS:
        raise ValueError(f"training must be one of {TRAININGS}, got {training!r}")
    check_tie_fraction(tie_fraction)
    k = cfg.d_c - int(cfg.hidden_causal)
    wk = w_star(cfg.d_c)[cfg.d_c - k:]
    lam = cfg.shrink_lambda if training == "l2" else 0.0
    steps = cfg.early_steps if training == "early_stop" else None
    m_axis = np.linspace(0.0, 1.5, 61)
    rho = torch.linspace(0.0, 1.0, 41, dtype=DTYPE)
    leak = {"early_stop": linearised_theta(cfg, steps=cfg.early_steps, lr=cfg.lr, rho=rho),
            "shrunk": linearised_theta(cfg, lam=cfg.shrink_lambda, rho=rho),
            "converged": linearised_theta(cfg, lam=0.0, rho=rho)}
    fr = torch.linspace(0.0, 0.7, 36, dtype=DTYPE)
    ties = tie_quadratic_theory(cfg, fr, lam, steps)
    # plain L2 on top of the same regime, matched to the ties' |theta_s| along a lambda path
    extra = torch.cat([torch.zeros(1, dtype=DTYPE), torch.logspace(-3, 4, 281, dtype=DTYPE)])
    if steps is not None:  # gradient descent on a shrunk loss is stable only for small lambda
        top = 0.99 * 8 / (cfg.lr * cfg.beta**2) - float(torch.linalg.eigvalsh(
            moments(cfg)[1]).max())
        extra = extra[extra < top]
    path = tie_quadratic_theory(cfg, torch.zeros(1, dtype=DTYPE), lam + extra, steps)
    path_s = path[:, k:k + 2].norm(dim=-1).numpy()
    path_c = (path[:, :k] @ wk).numpy()
    order = np.argsort(path_s)
    ties_s = ties[:, k:k + 2].norm(dim=-1).numpy()
    l2_c = np.interp(ties_s, path_s[order], path_c[order])
    causal = (ties[:, :k] @ wk).numpy()
    s1 = ties[:, k].numpy()

    def rel(x, base):
        return x / base if base != 0 else np.zeros_like(x)

    pair = tie_quadratic_theory(cfg, torch.tensor([0.0, tie_fraction], dtype=DTYPE), lam, steps)
    test_m = np.linspace(-1.5, 1.5, 61)
    acc = accuracy(pair[:, None, :], cfg, torch.tensor(test_m, dtype=DTYPE)).numpy()
    return {"m": m_axis, "theta_s1_theory": 2 * m_axis / (cfg.beta * cfg.sigma_eps**2),
            "rho": rho.numpy(), **{f"leak_{r}": v[:, k + 1].numpy() for r, v in leak.items()},
            "tie_fraction": fr.numpy(), "ties_spurious": rel(s1, s1[0]),
            "ties_causal": rel(causal, causal[0]), "l2_causal": rel(l2_c, causal[0]),
            "test_m": test_m, "acc_dpo": acc[0], "acc_ties": acc[1]}


def accuracy(theta: torch.Tensor, cfg: SpuriousConfig, test_m: float | torch.Tensor) -> \
        torch.Tensor:
    """Exact preference accuracy ``P(sign(theta . dphi) = label)`` on test pairs whose mean
    spurious bias is ``test_m`` (other settings from ``cfg``). ``theta [..., p] -> [...]``.

    Given ``du`` and label ``t``, the margin is ``N(t (A du t + theta_s1 m'), V)`` with
    ``A = theta_c . w* + rho (theta_s1 + theta_s2)``, ``V = |theta_c - (theta_c . w*) w*|^2 +
    sigma^2 (theta_s1^2 + theta_s2^2)``; the ``du`` integral is Gauss-Hermite.
    """
    theta = theta.to(DTYPE)
    d = cfg.d_c
    w = w_star(d)
    if cfg.hidden_causal:
        theta = torch.cat([torch.zeros(*theta.shape[:-1], 1, dtype=DTYPE), theta], -1)
    tc, t1, t2 = theta[..., :d], theta[..., d], theta[..., d + 1]
    along = tc @ w
    perp2 = (tc**2).sum(-1) - along**2
    a_coef = along + cfg.rho * (t1 + t2)
    sd = torch.sqrt(perp2.clamp_min(0) + cfg.sigma_eps**2 * (t1**2 + t2**2)).clamp_min(1e-300)
    mprime = torch.as_tensor(test_m, dtype=DTYPE)
    x = GH_X  # du nodes
    p_win = torch.sigmoid(cfg.kappa * x)
    normal = torch.distributions.Normal(torch.tensor(0.0, dtype=DTYPE),
                                        torch.tensor(1.0, dtype=DTYPE))
    right_win = normal.cdf((a_coef[..., None] * x + t1[..., None] * mprime[..., None])
                           / sd[..., None])
    right_lose = normal.cdf((-a_coef[..., None] * x + t1[..., None] * mprime[..., None])
                            / sd[..., None])
    return (GH_W * (p_win * right_win + (1 - p_win) * right_lose)).sum(-1)


def cosine_causal(theta: torch.Tensor, cfg: SpuriousConfig) -> torch.Tensor:
    """``cos(theta_c, w*)`` over the causal coordinates the policy sees. ``[..., p] -> [...]``."""
    k = cfg.d_c - int(cfg.hidden_causal)
    w = w_star(cfg.d_c)[cfg.d_c - k:]
    tc = theta[..., :k]
    return (tc @ w) / (tc.norm(dim=-1) * w.norm()).clamp_min(1e-300)


def r_squared_through_origin(x: torch.Tensor, y: torch.Tensor) -> float:
    """Uncentred R^2 of the proportional fit ``y = b x`` (1 - SS_res / sum y^2).

    "theta_s2 ∝ rho" is the statement, so the fit has no intercept; a constant curve scores
    ``(sum x)^2 / (n sum x^2)`` (2/3 on an even grid from 0), all-zeros scores 0.
    """
    x, y = x.to(DTYPE), y.to(DTYPE)
    ss = float((y**2).sum())
    if ss == 0.0:
        return 0.0
    b = float((x * y).sum() / (x**2).sum())
    return 1.0 - float(((y - b * x) ** 2).sum()) / ss


def r_squared(x: torch.Tensor, y: torch.Tensor) -> float:
    """Ordinary (centred) R^2 of the least-squares line ``y = a + b x`` (0 for a flat y)."""
    x, y = x.to(DTYPE) - x.to(DTYPE).mean(), y.to(DTYPE) - y.to(DTYPE).mean()
    ss = float((y**2).sum())
    if ss == 0.0:
        return 0.0
    b = float((x * y).sum() / (x**2).sum())
    return 1.0 - float(((y - b * x) ** 2).sum()) / ss
