"""Label-noise TPV by the paper's early-stopped refits (:mod:`icml26.tpv`, issue 46).

The paper (``tpv/label_noise/label_tpv.py``, ``investigation/tpv_trace_synth_universal_scatter
.py``) refits the trained network ``R`` times from ``w*`` on noisy targets ``f*(x) + eps``,
``eps ~ N(0, s^2 I)``, by full-batch SGD with momentum 0.9, lr 2e-3, cosine decay, for 200
epochs, with the proximity penalty ``lam ||w - w*||^2`` (``lam = 1e-3``), and measures
``TPV(X) = E_{runs, x in X} (f_r(x) - f*(x))^2``.

For the linearised network ``f = f* + J du`` the refit loss
``(1/n) ||J du - eps||^2 + lam ||du||^2`` decouples in the eigenbasis of the training NTK Gram
``K = J J^T = U diag(e) U^T``: the coordinate ``c_i`` of ``du`` along the i-th right singular
vector of ``J`` has gradient ``h_i (c_i - c_i*)`` with ``h_i = 2 (e_i / n + lam)`` and ridge
fixed point ``c_i* = sqrt(e_i) u_i^T eps / (e_i + n lam)``. Momentum GD from ``c_i = 0`` reaches
``phi_i c_i*`` after the schedule, ``phi_i`` the response of the scalar recursion
(:func:`gd_response`), so the refit is ``du = J^T U diag(g) U^T eps`` with the filter
``g_i = phi_i / (e_i + n lam)`` (the ridge: ``phi_i = 1``) and
``TPV(X) = s^2 / |X| ||K_{X,train} U diag(g)||_F^2``. The paper's gradient clipping (norm 10)
is left out: at the paper's label sd the refit gradients are far below it.
:func:`nonlinear_refits` runs the real refits, the oracle of the tests.
"""

from __future__ import annotations

import math

import torch
from torch.func import functional_call, grad, vmap

from icml26.common import check_int
from icml26.tpv.estimators import LabelNoiseBasis, check_pos, param_dict

REFITS = ("gd", "ridge")


def cosine_lrs(lr: float, steps: int) -> list[float]:
    """The learning rate of each step of ``CosineAnnealingLR(T_max=steps)`` (eta_min 0)."""
    return [lr * (1 + math.cos(math.pi * t / steps)) / 2 for t in range(steps)]


def gd_response(h: torch.Tensor, lr: float, momentum: float, steps: int) -> torch.Tensor:
    """Where momentum GD (PyTorch's SGD: ``v = m v + g``, ``x -= lr_t v``) with a cosine
    schedule takes ``x`` from 0 on the quadratic ``h (x - 1)^2 / 2``, for each curvature in
    ``h``: the share of the way to the fixed point reached, ``[n] -> [n]`` (float64)."""
    check_pos("lr", lr)
    check_int("steps", steps, 1)
    if not 0 <= momentum < 1:
        raise ValueError(f"momentum must be in [0, 1), got {momentum}")
    h = h.double()
    x, v = torch.zeros_like(h), torch.zeros_like(h)
    for lr_t in cosine_lrs(lr, steps):
        v = momentum * v + h * (x - 1.0)
        x = x - lr_t * v
    return x


def refit_filter(evals: torch.Tensor, lam: float, refit: str = "gd", lr: float = 2e-3,
                 momentum: float = 0.9, epochs: int = 200) -> torch.Tensor:
    """The filter ``g`` of the refit in the Gram's eigenbasis (module docstring):
    ``du = J^T U diag(g) U^T eps``. ``evals [n]`` of ``K = J J^T``; ``refit`` "gd" (the
    paper's early-stopped momentum GD) or "ridge" (its fixed point). ``-> [n]`` float64."""
    check_pos("lam", lam)
    if refit not in REFITS:
        raise ValueError(f"refit must be one of {REFITS}, got {refit!r}")
    e = evals.double().clamp_min(0.0)
    n = e.numel()
    ridge = 1.0 / (e + n * lam)
    if refit == "ridge":
        return ridge
    return gd_response(2.0 * (e / n + lam), lr, momentum, epochs) * ridge


def tpv_label_refit(basis: LabelNoiseBasis, split: str, sigma: float,
                    filt: torch.Tensor) -> float:
    """``s^2 / |X| ||K_{X,train} U diag(g)||_F^2``: label-noise TPV on ``split`` for the
    refit filter ``g`` (:func:`refit_filter`)."""
    if not float(sigma) >= 0:
        raise ValueError(f"label noise sd must be >= 0, got {sigma!r}")
    proj = basis.proj[split].double()
    return float(sigma**2 * (proj * filt.to(proj.device)).pow(2).sum() / proj.shape[0])


def compact_basis(basis: LabelNoiseBasis) -> LabelNoiseBasis:
    """``basis`` with each split's projection ``[|X|, n]`` reduced to the row ``[1, n]`` of
    its column norms over ``sqrt(|X|)``: every label-noise trace
    (:func:`tpv_label_refit`, ``sum_ij (p_ij g_j)^2 / |X| = sum_j g_j^2 sum_i p_ij^2 / |X|``)
    is unchanged up to rounding, at ``1/|X|`` of the size (the app's recorded Run keeps it)."""
    proj = {split: (p.double().pow(2).sum(0, keepdim=True) / p.shape[0]).sqrt()
            for split, p in basis.proj.items()}
    return LabelNoiseBasis(basis.evals, proj)


def nonlinear_refits(model: torch.nn.Module, x_train: torch.Tensor, eps: torch.Tensor,
                     lam: float, lr: float = 2e-3, momentum: float = 0.9,
                     epochs: int = 200) -> dict[str, torch.Tensor]:
    """The paper's refits, for real: for each row of ``eps [R, n, K]`` refit ``model`` from
    its weights ``w*`` on ``f*(x_train) + eps`` by full-batch momentum SGD with cosine decay
    and the proximity penalty ``lam ||w - w*||^2`` (all ``R`` refits at once). Returns the
    refitted parameters, each ``[R, ...]``."""
    check_pos("lam", lam)
    w0 = {k: v.detach() for k, v in param_dict(model).items()}
    with torch.no_grad():
        f0 = model(x_train)
    targets = f0[None] + eps

    def loss(p, y):
        out = functional_call(model, p, (x_train,))
        prox = sum((p[k] - w0[k]).pow(2).sum() for k in p)
        return (out - y).pow(2).mean() + lam * prox

    g_fn = vmap(grad(loss))
    r = eps.shape[0]
    p = {k: v[None].repeat(r, *([1] * v.ndim)).clone() for k, v in w0.items()}
    vel = {k: torch.zeros_like(v) for k, v in p.items()}
    for lr_t in cosine_lrs(lr, epochs):
        g = g_fn(p, targets)
        for k in p:
            vel[k] = momentum * vel[k] + g[k]
            p[k] = p[k] - lr_t * vel[k]
    return p
