"""TPV tracks test loss: the measured test-loss increase under each perturbation of F1.

The abstract: "TPV correlates well with test loss". For every student of the universal
scatter and every perturbation, draw ``du`` from the perturbation's covariance ``C``, evaluate
the network at ``w* + du`` and ``w* - du`` (an antithetic pair: ``du`` is symmetric in law, so
the expectation is unchanged and the first-order term ``2 (f - y) J du``, zero in expectation,
cancels exactly inside each pair) and measure the test mean squared error increase::

    dL = E_du [ L_test(w* + du) ] - L_test(w*)
       ~= TPV_test + (1/m) sum_x (f(x) - y(x)) du^T Hess_w f(x) du        (second order)

The second term, which TPV ignores, is weighted by the test residuals: it is what can break
the tracking for students that generalize badly.

How ``du`` is drawn (the covariance of each trace form, not the paper's training runs):

* ``quant``: uniform ``U(-delta/2, delta/2)`` on every weight, ``delta`` from the weight range
  at ``cfg.bits`` bits (the fused ``quant_noise`` kernel, as the Monte Carlo TPV);
* ``sgd``: ``N(0, (lr / B) H_eff(train))`` as ``du = sqrt(lr / (B n)) J_train^T z``,
  ``z ~ N(0, I_n)``: the Gauss-Newton SGD-noise covariance, not SGD iterates;
* ``label``: the linearised early-stopped refit of the trace form
  (:mod:`icml26.tpv.refits`), ``du = J_train^T U diag(g) U^T eps``, ``eps ~ N(0, s^2 I_n)``,
  ``K = U diag(e) U^T``, ``g`` the filter of the paper's 200 epochs of momentum GD (or of the
  ridge, ``cfg.label_refit="ridge"``).
"""

from __future__ import annotations

import math

import torch
from torch.func import functional_call, vmap

from icml26.common import config_hash, device_key, generator
from icml26.kernels.quant_noise import quant_noise
from icml26.tpv.estimators import (
    MLP,
    flat_params,
    jacobian_transpose,
    layer_factors,
    ntk_gram,
    quant_step,
    unflatten,
)
from icml26.tpv.refits import refit_filter
from icml26.tpv.students import TPVConfig, cached, record_key, train_student

TRACKED = ("quant", "sgd", "label")  # the perturbations of F1 (pruning is F3)


def perturbation_draws(model: MLP, x_train: torch.Tensor, cfg: TPVConfig, perturbation: str,
                       draws: int, seed: int, impl: str = "auto") -> torch.Tensor:
    """``draws`` weight perturbations ``du`` of ``perturbation`` (module docstring):
    ``-> [draws, p]``. ``seed`` (in ``[0, 2^31)``) fixes them."""
    w = flat_params(model)
    if perturbation == "quant":
        return quant_noise(w, quant_step(w, cfg.bits), draws=draws, seed=seed, impl=impl) - w
    if perturbation not in TRACKED:
        raise ValueError(f"perturbation must be one of {TRACKED}, got {perturbation!r}")
    g = generator(seed)
    n = x_train.shape[0]
    fac = layer_factors(model, x_train)
    z = torch.randn(draws, n, generator=g, dtype=torch.float64).to(w.device)
    if perturbation == "sgd":
        return jacobian_transpose(fac, z * math.sqrt(cfg.sgd_lr / (cfg.sgd_batch * n))).float()
    evals, u = torch.linalg.eigh(ntk_gram(fac, fac, dtype=torch.float64))
    filt = refit_filter(evals, cfg.label_lambda, cfg.label_refit, cfg.label_lr,
                        cfg.label_momentum, cfg.label_epochs).to(u.device)
    alpha = ((cfg.label_sigma * z) @ u * filt) @ u.T  # [draws, n]
    return jacobian_transpose(fac, alpha).float()


def loss_increase(model: MLP, x: torch.Tensor, y: torch.Tensor, du: torch.Tensor,
                  chunk: int = 8) -> tuple[float, float]:
    """Mean and standard error over antithetic pairs of the MSE increase on ``(x, y)``,
    ``(L(w + du) + L(w - du)) / 2 - L(w)`` for each row of ``du [R, p]``. Sums run in
    float64 on the prediction changes, so increases far below the loss itself resolve."""
    w = flat_params(model)
    with torch.no_grad():
        f0 = model(x)
        resid = (f0 - y).double()
        per = []
        for i in range(0, du.shape[0], chunk):
            d = du[i:i + chunk]
            pred = vmap(lambda wv: functional_call(model, unflatten(model, wv), (x,)))(
                torch.cat([w + d, w - d]))
            df = (pred - f0).double()
            dl = (df.pow(2) + 2 * df * resid).sum(-1).mean(-1)
            per.append((dl[:d.shape[0]] + dl[d.shape[0]:]) / 2)
    per = torch.cat(per)
    return float(per.mean()), float(per.std() / math.sqrt(per.numel()))


def loss_record(cfg: TPVConfig, teacher: str, width: int, depth: int, n_train: int,
                seed: int, impl: str = "auto", device: str | torch.device = "cpu"
                ) -> dict[str, dict[str, float]]:
    """Measured test-loss increase of one F1 student under each tracked perturbation, with
    ``cfg.loss_pairs`` antithetic pairs on the first ``cfg.loss_inputs`` test inputs (cached):
    ``{perturbation: {"mean", "se"}}``. The noise of the estimate is in the draws of ``du``
    (the residual-weighted term), not in the inputs, so the pairs buy more precision than
    the inputs would."""
    key = record_key(cfg, teacher, width, depth, n_train)
    key = {**key, "cfg": {k: v for k, v in key["cfg"].items() if k != "heff_source"},
           "pairs": cfg.loss_pairs, "inputs": cfg.loss_inputs}  # H_eff plays no part here

    def compute():
        model, data, _ = train_student(teacher, width, depth, n_train, seed, cfg.d,
                                       cfg.n_test, cfg.steps, cfg.lr, device=device)
        out = {}
        for p in TRACKED:
            draw_seed = int(config_hash({**key, "seed": seed, "p": p}), 16) % 2**31
            du = perturbation_draws(model, data["X_train"], cfg, p, cfg.loss_pairs,
                                    draw_seed, impl)
            m = cfg.loss_inputs
            mean, se = loss_increase(model, data["X_test"][:m], data["y_test"][:m], du)
            out[p] = {"mean": mean, "se": se}
        return out

    return cached(device_key("loss_increase", device), key, seed, compute)


def rank_correlation(a, b) -> float:
    """Spearman's rank correlation of two equally long sequences (average ranks for ties;
    NaN when either is constant)."""
    import pandas as pd

    ra, rb = pd.Series(list(a)).rank(), pd.Series(list(b)).rank()
    if ra.nunique() < 2 or rb.nunique() < 2:
        return math.nan
    return float(ra.corr(rb))
