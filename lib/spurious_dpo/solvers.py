"""Batched solvers of ``icml26.spurious_dpo``: a padded design of preference and tie pairs,
the objective with its analytic gradient and Hessian, damped Newton (converged / shrunk DPO),
early-stopped gradient descent, and the plain-L2 control matched in ``|theta_s|``.

Every batch element is one training set; one tensor program fits them all. Nothing runs at
import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from icml26.spurious_dpo.model import DTYPE, PREF, TIE, loss_derivs


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
                gen: torch.Generator | None = None,
                tie_labels: torch.Tensor | None = None) -> Design:
    """A :class:`Design` from row-major ``pref [B, Np, p]`` and ``ties [B, Nt, p]``, using
    the first ``n_pref[b]`` / ``n_tie[b]`` rows of element ``b``. ``ties_as_random_labels`` is
    the control that feeds the ties to DPO as random wins/losses (a random orientation and
    the preference loss); ``tie_labels [B, Nt]`` (+-1) feeds them as wins/losses with those
    labels instead (the forced-label control)."""
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
        tie_labels = torch.where(torch.rand(b, nt_max, generator=g) < 0.5, 1.0, -1.0)
    if tie_labels is not None and nt_max > 0:
        if tie_labels.shape != (b, nt_max):
            raise ValueError(f"tie_labels must be [{b}, {nt_max}], got {tuple(tie_labels.shape)}")
        pref = torch.cat([pref, ties * tie_labels.to(DTYPE)[..., None]], 1)
        wp = torch.cat([wp, wt], 1)
        ties, wt = ties[:, :0], wt[:, :0]
    return Design(pref.to(DTYPE).transpose(1, 2).contiguous(), wp / per_pref,
                  ties.to(DTYPE).transpose(1, 2).contiguous(), wt / per_pref)


def margins(theta: torch.Tensor, x: torch.Tensor, beta: float) -> torch.Tensor:
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
    out = (design.wp * loss_derivs(margins(theta, design.xp, beta), PREF, tie_kind)[0]).sum(1)
    if design.xt.shape[-1]:
        lt = loss_derivs(margins(theta, design.xt, beta), TIE, tie_kind)[0]
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
        l, d1, d2 = loss_derivs(margins(theta, x, beta), code, tie_kind)
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


def match_l2(design: Design, beta: float, target: torch.Tensor, spurious: slice,
             iters: int = 40, rtol: float = 1e-7) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain-L2 DPO whose spurious norm ``|theta_s|`` equals ``target [B]``: the L2 control.

    Safeguarded Newton on ``log lambda`` with a bisection bracket; the derivative comes from
    the implicit function theorem, ``d theta / d lambda = -H^-1 (beta^2 / 4) theta``. Returns
    ``(theta [B, p], lambda [B])``; a target at or above unpenalised DPO's gives lambda ~ 0.
    """
    b = design.batch
    lo = torch.full((b,), -14.0, dtype=DTYPE)
    hi = torch.full((b,), 14.0, dtype=DTYPE)
    loglam = torch.zeros(b, dtype=DTYPE)
    theta = None
    for _ in range(iters):
        lam = loglam.exp()
        theta = fit_newton(design, beta, ridge=lam, theta0=theta)
        ts = theta[:, spurious]
        norm = ts.norm(dim=-1)
        gap = norm - target
        if float((gap.abs() / target.clamp_min(1e-12)).max()) < rtol:
            break
        lo = torch.where(gap > 0, loglam, lo)
        hi = torch.where(gap > 0, hi, loglam)
        _, _, hess = gradient_hessian(theta, design, beta, lam)
        dtheta = -torch.linalg.solve(hess, (beta**2 / 4 * theta)[..., None])[..., 0] * lam[:,
                                                                                           None]
        slope = (ts * dtheta[:, spurious]).sum(-1) / norm.clamp_min(1e-300)
        proposal = loglam - gap / slope
        ok = torch.isfinite(proposal) & (proposal > lo) & (proposal < hi)
        loglam = torch.where(ok, proposal, (lo + hi) / 2)
    return theta, loglam.exp()
