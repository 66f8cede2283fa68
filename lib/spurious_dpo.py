"""Spurious-feature channels in DPO and their mitigation by tie training.

Christian Moya, Alex Semendinger, Guang Lin, Elliott Thornley. "Spurious Correlation Learning
in Preference Optimization: Mechanisms, Consequences, and Mitigation via Tie Training",
ICML 2026, https://arxiv.org/abs/2605.11134. No code was released; everything below is a
reconstruction from the abstract and public summaries (see ``shared/specs/spurious_dpo.md``).

Figures reproduced (``notebooks/spurious_dpo.ipynb``):
F1 the two channels (theta_s1 vs m against 2m/sigma^2; theta_s2 vs rho for early-stopped,
shrunk, converged and linearised DPO, and the hidden-cause variant); F2 irreducibility
(theta_s1 and the ID-OOD accuracy gap vs n, the estimation error falling like 1/n);
F3 tie training (spurious weight, causal alignment, neutral and OOD accuracy vs tie
fraction, with two controls); F4 a small neural reward trained with DPO vs DPO+ties.

Model (paper: log-linear policies, the two channels, linearisation near the reference,
irreducible + O(1/n) error, tie training; ours: the exact data model and every constant):

* Log-linear policy ``pi_theta(y|x) ∝ pi_ref(y|x) exp(theta . phi(x, y))`` with features
  ``phi = (c, s)``, causal ``c in R^{d_c}`` and spurious ``s = (s1, s2)``. The DPO margin of a
  pair is ``beta theta . (phi_w - phi_l)`` (the partition function cancels), so **DPO is
  logistic regression on oriented pair differences** ``d = phi_w - phi_l``::

      L(theta) = -E log sigma(beta theta . d)

* Data: ``dc ~ N(0, I)``, utility ``du = w* . dc`` (``|w*| = 1``), ``P(first wins) =
  sigma(kappa du)``, ``t = +-1`` the label; ``ds1 = m t + rho du + sigma eps1`` (mean spurious
  bias: the chosen response is "longer" by m), ``ds2 = rho du + sigma eps2`` (correlated with
  utility, no extra label information).
* Channel 1 (exact here): given ``du``, ``ds1`` is Gaussian with mean ``+-m``, so the label
  log-odds are exactly linear and the population optimum is
  ``beta theta* = ((kappa - 2 m rho / sigma^2) w*, 2m / sigma^2, 0)``: ``theta_s1 = 2m/(beta
  sigma^2)`` however large n is.
* Channel 2 (leakage): near the reference ``L ≈ log 2 - (beta/2) theta.mu + (beta^2/8)
  theta' Sigma theta`` with ``Sigma = E[d d']``, ``mu = E[d]`` (closed forms in
  :func:`moments`). With shrinkage ``(beta^2 lambda / 8)|theta|^2`` the stationary point is
  ``theta = (2/beta)(Sigma + lambda I)^-1 mu``; ``k`` gradient steps of size ``eta`` from the
  reference give ``(2/beta) Sigma^-1 (I - (I - eta beta^2 Sigma / 4)^k) mu``. Both put weight
  ``∝ rho`` on s2; at exact convergence with every causal feature observed it vanishes.
  Hiding one causal coordinate makes s a proxy for it even at convergence.
* Deployment: test pairs with ``m' = -m`` (flip) or ``m' = 0`` (neutral). Accuracy of
  ``sign(theta . dphi)`` against the label is computed EXACTLY by 1-D Gauss-Hermite quadrature
  over ``du`` (:func:`accuracy`): given ``du`` and the label, the margin is Gaussian.
* Ties: pairs with ``w* . dc = 0`` and the usual spurious spread (``ds1 = +-m + sigma eps``,
  ``ds2 = sigma eps``), trained with the symmetric loss ``-1/2 log sigma(z) - 1/2 log
  sigma(-z) = log(2 cosh(z/2))`` (``z = beta theta . dphi``), ≈ ``log 2 + z^2/8``: a
  data-driven penalty ``(beta^2/8) E_tie[(theta . dphi)^2]`` that touches only directions of
  zero utility change. Rao-Kupper (``log cosh((z-a)/2) + log cosh((z+a)/2)``) and Davidson
  (``log(2 cosh(z/2) + nu)``) tie likelihoods are options (applied to the tie pairs only, the
  preference pairs keep the DPO loss, so every variant shares the same tie-free baseline).
  Controls: the same ties fed to DPO as random wins/losses; plain L2 at matched ``|theta_s|``.
* Neural (F4): a 2-layer MLP reward over one response's raw ``(c, s)`` trained by DPO on
  ``r(phi_w) - r(phi_l)`` (a log-linear policy whose feature map is learnt), with and without
  ties; spurious sensitivity ``E |dr/ds1|`` by central finite differences.

Everything is batched: one tensor program per figure runs every (replicate, setting) at once
(Newton's method in float64, a [B, d, d] solve per step). Nothing runs at import.

Layout: ``spurious_dpo_model`` (config, data, losses, solvers, moments),
``spurious_dpo_theory`` (closed forms, quadratic theory, exact accuracy, the L2 control),
``spurious_dpo_neural`` (F4); this module re-exports them and holds the figures and claims.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from icml26.claims import Claim, failed
from icml26.spurious_dpo_model import (  # noqa: F401  (re-exported: the paper's API)
    DAVIDSON_NU,
    DTYPE,
    GH_W,
    GH_X,
    PREF,
    RAO_KUPPER_ALPHA,
    SCALES,
    TIE,
    TIE_LOSSES,
    TRAININGS,
    Design,
    SpuriousConfig,
    _gen,
    _loss_derivs,
    _margins,
    check_n,
    check_tie_fraction,
    config_for,
    dpo_loss,
    feature_dim,
    fit_gd,
    fit_newton,
    gradient_hessian,
    label_signal,
    make_design,
    max_stable_lr,
    moments,
    n_ties_for,
    objective,
    preference_design,
    softplus,
    tie_design,
    tie_loss,
    w_star,
)
from icml26.spurious_dpo_neural import (  # noqa: F401
    NEURAL_TEST_PAIRS,
    BatchedMLP,
    response_features,
    sensitivity,
    train_neural,
)
from icml26.spurious_dpo_theory import (  # noqa: F401
    accuracy,
    cosine_causal,
    figure_theory_data,
    linearised_theta,
    match_l2,
    population_theta,
    r_squared,
    r_squared_through_origin,
    tie_curvature,
    tie_moments,
    tie_quadratic_theory,
)

PAPER = "spurious_dpo"
CACHE_VERSION = 2


# --------------------------------------------------------------------------- figures
def _frame(rows: list[dict]):
    import pandas as pd

    return pd.DataFrame(rows)


def _maybe_cached(key: str, cfg: SpuriousConfig, seed: int, use_cache: bool, compute):
    if not use_cache:
        return compute()
    from icml26.common import cached

    return cached(PAPER, key, cfg, seed, CACHE_VERSION, compute)


def figure_channels_data(cfg: SpuriousConfig, seed: int = 0, use_cache: bool = True) -> dict:
    """F1: (a) converged theta_s1 vs m with the 2m/(beta sigma^2) line and the m = rho = 0
    null; (b) theta_s2 vs rho for every regime (converged, near-reference early stopping and
    shrinkage with their linearised predictions, the spec's 50-step early stopping, and the
    hidden-cause variant at convergence). All fits at ``n_population`` pairs, common random
    numbers across the sweep. Returns ``{"mean_bias": df, "leakage": df, "null": dict}``."""
    cfg.validate()
    return _maybe_cached("channels", cfg, seed, use_cache, lambda: _channels(cfg, seed))


def _channels(cfg: SpuriousConfig, seed: int) -> dict:
    n, beta = cfg.n_population, cfg.beta
    k = cfg.d_c - int(cfg.hidden_causal)  # index of s1
    ms = [*cfg.m_grid, 0.0]
    rhos = [cfg.rho] * len(cfg.m_grid) + [0.0]
    x = preference_design(n, ms, rhos, cfg.sigma_eps, cfg.kappa, cfg.d_c, _gen(seed, 1),
                          hidden_causal=cfg.hidden_causal)[0]
    th = fit_newton(make_design(x), beta)
    del x
    mean_bias = _frame([{"m": m, "theta_s1": float(t[k]), "theta_s2": float(t[k + 1]),
                         "theory": 2 * m / (beta * cfg.sigma_eps**2)}
                        for m, t in zip(cfg.m_grid, th[:-1])])
    null = {"theta_s1": float(th[-1, k]), "theta_s2": float(th[-1, k + 1])}

    grid = torch.tensor(cfg.rho_grid, dtype=DTYPE)
    x = preference_design(n, cfg.m, grid, cfg.sigma_eps, cfg.kappa, cfg.d_c, _gen(seed, 2),
                          hidden_causal=cfg.hidden_causal)[0]
    des = make_design(x)
    fits = {"converged": fit_newton(des, beta),
            "early_stop": fit_gd(des, beta, cfg.early_steps, cfg.lr),
            "shrunk": fit_newton(des, beta, ridge=cfg.shrink_lambda)}
    if cfg.far_steps:
        fits["far_early_stop"] = fit_gd(des, beta, cfg.far_steps, cfg.far_lr)
    del x, des
    fits["linearised_early_stop"] = linearised_theta(cfg, steps=cfg.early_steps, lr=cfg.lr,
                                                     rho=grid)
    fits["linearised_shrunk"] = linearised_theta(cfg, lam=cfg.shrink_lambda, rho=grid)
    if cfg.far_steps:
        fits["linearised_far"] = linearised_theta(cfg, steps=cfg.far_steps, lr=cfg.far_lr,
                                                  rho=grid)
    xh = preference_design(n, cfg.m, grid, cfg.sigma_eps, cfg.kappa, cfg.d_c, _gen(seed, 2),
                           hidden_causal=True)[0]
    th_h = fit_newton(make_design(xh), beta)
    del xh
    rows = []
    for regime, t in fits.items():
        rows += [{"regime": regime, "rho": float(r), "theta_s1": float(v[k]),
                  "theta_s2": float(v[k + 1]), "norm": float(v.norm())}
                 for r, v in zip(grid, t)]
    kh = cfg.d_c - 1
    rows += [{"regime": "hidden_converged", "rho": float(r), "theta_s1": float(v[kh]),
              "theta_s2": float(v[kh + 1]), "norm": float(v.norm())}
             for r, v in zip(grid, th_h)]
    return {"mean_bias": mean_bias, "leakage": _frame(rows), "null": null}


def figure_irreducible_data(cfg: SpuriousConfig, seed: int = 0, use_cache: bool = True) -> dict:
    """F2: converged DPO at every n of ``n_grid`` on nested prefixes of ``replicates``
    independent data sets (one batched fit per n). Per (n, replicate): theta_s1, the
    estimation error ``|theta_n - theta_pop|^2`` and exact ID (m' = m), OOD (m' =
    ``test_shift_m``) and neutral (m' = 0) accuracies. ``theta_pop`` is closed-form (a fit at
    ``n_population`` when a cause is hidden). Returns ``{"rows": df, "theta_pop": list}``."""
    cfg.validate()
    return _maybe_cached("irreducible", cfg, seed, use_cache,
                         lambda: _irreducible(cfg, seed))


def _irreducible(cfg: SpuriousConfig, seed: int) -> dict:
    nmax = max(cfg.n_grid)
    x = preference_design(nmax, cfg.m, cfg.rho, cfg.sigma_eps, cfg.kappa, cfg.d_c,
                          _gen(seed, 3), replicates=cfg.replicates,
                          hidden_causal=cfg.hidden_causal)[:, 0]
    if cfg.hidden_causal:
        xp = preference_design(cfg.n_population, cfg.m, cfg.rho, cfg.sigma_eps, cfg.kappa,
                               cfg.d_c, _gen(seed, 4), hidden_causal=True)[0]
        pop = fit_newton(make_design(xp), cfg.beta)[0]
    else:
        pop = population_theta(cfg)[0]
    k = cfg.d_c - int(cfg.hidden_causal)
    rows = []
    for n in sorted(cfg.n_grid):
        th = fit_newton(make_design(x[:, :n].contiguous()), cfg.beta)
        acc_id = accuracy(th, cfg, cfg.m)
        acc_ood = accuracy(th, cfg, cfg.test_shift_m)
        acc_neutral = accuracy(th, cfg, 0.0)
        err = ((th - pop) ** 2).sum(-1)
        rows += [{"n": n, "replicate": r, "theta_s1": float(th[r, k]),
                  "theta_s2": float(th[r, k + 1]), "est_error": float(err[r]),
                  "acc_id": float(acc_id[r]), "acc_ood": float(acc_ood[r]),
                  "acc_neutral": float(acc_neutral[r])} for r in range(cfg.replicates)]
    return {"rows": _frame(rows), "theta_pop": pop.tolist(),
            "theta_s1_pop": float(pop[k])}


def figure_ties_data(cfg: SpuriousConfig, seed: int = 0, extra_tie_losses: bool = True,
                     use_cache: bool = True) -> dict:
    """F3: tie training at a fixed number of preference pairs, every tie fraction and
    replicate in one batch. Methods: ``ties`` (``cfg.tie_loss``), ``random_labels`` (the same
    ties fed to DPO as random wins/losses), ``l2_matched`` (plain L2 tuned per fraction and
    replicate to the ties' ``|theta_s|``) and, with ``extra_tie_losses``, the other tie
    likelihoods. Returns ``{"rows": df}`` with one row per (method, fraction, replicate)."""
    cfg.validate()
    key = "ties" + ("+losses" if extra_tie_losses else "")
    return _maybe_cached(key, cfg, seed, use_cache,
                         lambda: _ties(cfg, seed, extra_tie_losses))


def _ties(cfg: SpuriousConfig, seed: int, extra_tie_losses: bool) -> dict:
    fr = list(cfg.tie_fractions)
    r, n = cfg.tie_replicates, cfg.n_pairs
    n_tie = [n_ties_for(n, f) for f in fr]
    pref = preference_design(n, cfg.m, cfg.rho, cfg.sigma_eps, cfg.kappa, cfg.d_c,
                             _gen(seed, 5), replicates=r, hidden_causal=cfg.hidden_causal)[:, 0]
    ties = tie_design(max(max(n_tie), 1), cfg.m, cfg.rho, cfg.sigma_eps, cfg.d_c,
                      _gen(seed, 6), replicates=r, hidden_causal=cfg.hidden_causal,
                      equal_utility=cfg.tie_equal_utility)[:, 0]
    xp, xt = pref.repeat(len(fr), 1, 1), ties.repeat(len(fr), 1, 1)
    counts = [c for c in n_tie for _ in range(r)]
    k = cfg.d_c - int(cfg.hidden_causal)
    spur = slice(k, k + 2)
    fits = {"ties": fit_newton(make_design(xp, xt, n_tie=counts), cfg.beta,
                               tie_kind=cfg.tie_loss),
            "random_labels": fit_newton(make_design(xp, xt, n_tie=counts,
                                                    ties_as_random_labels=True,
                                                    gen=_gen(seed, 7)), cfg.beta)}
    if extra_tie_losses:
        for loss in TIE_LOSSES:
            if loss != cfg.tie_loss:
                fits[f"ties_{loss}"] = fit_newton(make_design(xp, xt, n_tie=counts), cfg.beta,
                                                  tie_kind=loss)
    target = fits["ties"][:, spur].norm(dim=-1)
    l2, lam = match_l2(make_design(pref.repeat(len(fr), 1, 1)), cfg.beta, target, spur)
    fits["l2_matched"] = l2
    w = w_star(cfg.d_c)[cfg.d_c - k:]
    rows = []
    for method, th in fits.items():
        acc_n = accuracy(th, cfg, 0.0)
        acc_o = accuracy(th, cfg, cfg.test_shift_m)
        acc_i = accuracy(th, cfg, cfg.m)
        cos = cosine_causal(th, cfg)
        for b in range(th.shape[0]):
            fi, rep = divmod(b, r)
            rows.append({"method": method, "tie_fraction": fr[fi], "replicate": rep,
                         "n_pref": n, "n_tie": n_tie[fi], "n_total": n + n_tie[fi],
                         "theta_s1": float(th[b, k]), "theta_s2": float(th[b, k + 1]),
                         "spurious_norm": float(th[b, spur].norm()),
                         "causal_dot": float(th[b, :k] @ w), "cos_causal": float(cos[b]),
                         "acc_neutral": float(acc_n[b]), "acc_ood": float(acc_o[b]),
                         "acc_id": float(acc_i[b]),
                         "l2_lambda": float(lam[b]) if method == "l2_matched" else 0.0})
    return {"rows": _frame(rows)}


def figure_neural_data(cfg: SpuriousConfig, seed: int = 0, use_cache: bool = True) -> dict:
    """F4: spurious sensitivity of MLP rewards trained by DPO vs DPO + ties at
    ``mlp_tie_fraction`` (paired replicates). Returns ``{"rows": df, "loss_curve": tensor}``."""
    cfg.validate()
    return _maybe_cached("neural", cfg, seed, use_cache, lambda: _neural(cfg, seed))


def _neural(cfg: SpuriousConfig, seed: int) -> dict:
    out = train_neural(cfg, seed, (0.0, cfg.mlp_tie_fraction))
    rows = []
    for fi, f in enumerate(out["tie_fractions"]):
        for rep in range(cfg.mlp_replicates):
            rows.append({"tie_fraction": f, "replicate": rep,
                         "sens_s1": float(out["sens_s1"][fi, rep]),
                         "sens_s2": float(out["sens_s2"][fi, rep]),
                         "sens_causal": float(out["sens_causal"][fi, rep]),
                         "final_loss": float(out["final_loss"][fi, rep]),
                         "test_loss": float(out["test_loss"][fi, rep])})
    return {"rows": _frame(rows), "loss_curve": out["loss_curve"]}


# --------------------------------------------------------------------------- claims
def claims(seed: int = 0, scale: str = "quick") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed (or read from the cache) for ``seed``.

    ``scale="quick"``: the spec's setting with 1e5-pair population fits, 8 replicates for F2,
    4 for F3 and 3 small MLPs (CI). ``scale="paper"``: 1e6-pair population fits, n up to 3e5,
    32/16 replicates and bigger MLP runs (a patient CPU user; not run in CI).
    """
    return claims_for(config_for(scale), seed)


def claims_for(cfg: SpuriousConfig, seed: int = 0) -> list[Claim]:
    """The claims for an explicit config (mutation tests flip ``tie_equal_utility`` and
    ``leakage_regime``)."""
    return [*channel_claims(cfg, seed), *irreducible_claims(cfg, seed),
            *tie_claims(cfg, seed), *neural_claims(cfg, seed)]


def _guard(specs, compute):
    """Run ``compute``; on a numerical failure return NaN claims naming the reason."""
    try:
        return compute()
    except (RuntimeError, ValueError, KeyError, IndexError, torch.linalg.LinAlgError) as e:
        return failed(PAPER, specs, f"{type(e).__name__}: {e}")


CHANNEL_SPECS = (
    ("mean_bias_theory", "The population DPO optimum puts theta_s1 = 2m/sigma^2 on a "
     "mean-biased spurious feature (within 10%, m >= 0.25)", "<=", 0.10, True),
    ("no_spurious_without_cause", "Without mean bias or correlation (m = rho = 0) the "
     "population optimum puts no weight on s (|theta_s| <= 0.03 at n = 1e5)", "<=", 0.03, True),
    ("leakage_linear", "Near the reference, the weight leaked onto a correlated spurious "
     "feature is proportional to rho (R^2 >= 0.98)", ">=", 0.98, True),
    ("leakage_matches_linearised", "Near the reference, leakage matches the linearised "
     "prediction (Sigma + lambda I)^-1 mu within 15%", "<=", 0.15, True),
    ("leakage_vanishes", "At exact convergence with every cause observed the leakage channel "
     "vanishes (|theta_s2| <= 0.03)", "<=", 0.03, True),
    ("hidden_cause_leaks", "With one causal coordinate hidden, s becomes its proxy even at "
     "convergence (theta_s2 >= 0.1 at rho = 1)", ">=", 0.1, True),
    ("leakage_linearised_far", "The linearised prediction also describes the spec's 50-step "
     "early stopping (within 15%)", "<=", 0.15, False),
)


def channel_claims(cfg: SpuriousConfig, seed: int = 0) -> list[Claim]:
    """F1's claims. ``leakage_regime="converged"`` is the pitfall of measuring leakage only
    at convergence (``leakage_linear`` then fails)."""
    return _guard(CHANNEL_SPECS, lambda: _channel_claims(cfg, seed))


def _channel_claims(cfg: SpuriousConfig, seed: int) -> list[Claim]:
    d = figure_channels_data(cfg, seed)
    spec = {s[0]: s for s in CHANNEL_SPECS}
    out = []

    def add(name, measured, note):
        _, statement, op, thr, exp = spec[name]
        out.append(Claim(PAPER, name, statement, measured, op, thr, exp, note))

    mb = d["mean_bias"]
    big = mb[mb.m >= 0.25]
    rel = ((big.theta_s1 / big.theory) - 1).abs()
    add("mean_bias_theory", float(rel.max()),
        f"worst |theta_s1 / (2m/(beta sigma^2)) - 1| over m in {list(big.m)} (n = "
        f"{cfg.n_population:.0e}, converged); at m = {cfg.m}: {_at(mb, 'm', cfg.m, 'theta_s1'):.3f}"
        f" vs {2 * cfg.m / (cfg.beta * cfg.sigma_eps**2):.3f}")
    null = d["null"]
    add("no_spurious_without_cause", max(abs(null["theta_s1"]), abs(null["theta_s2"])),
        f"max |theta_s| at m = rho = 0, n = {cfg.n_population:.0e}: theta_s1 = "
        f"{null['theta_s1']:+.4f}, theta_s2 = {null['theta_s2']:+.4f}")
    lk = d["leakage"]
    regime = cfg.leakage_regime
    curve = lk[lk.regime == regime].sort_values("rho")
    rho = torch.tensor(curve.rho.values)
    s2 = torch.tensor(curve.theta_s2.values)
    how = (f"{cfg.early_steps} steps of lr {cfg.lr} from the reference, gradient-flow time "
           f"{cfg.early_steps * cfg.lr:g}" if regime == "early_stop" else "exact optimum")
    add("leakage_linear", r_squared_through_origin(rho, s2),
        f"R^2 of the proportional fit theta_s2 = b rho, {regime} ({how}); ordinary R^2 "
        f"{r_squared(rho, s2):.3f}; theta_s2 = " + ", ".join(f"{v:.3f}" for v in s2.tolist()))
    errs = []
    for fit, lin in (("early_stop", "linearised_early_stop"), ("shrunk", "linearised_shrunk")):
        a = lk[(lk.regime == fit) & (lk.rho > 0)].sort_values("rho").theta_s2.values
        b = lk[(lk.regime == lin) & (lk.rho > 0)].sort_values("rho").theta_s2.values
        errs.append(float(np.max(np.abs(a / b - 1))))
    add("leakage_matches_linearised", max(errs),
        f"worst |theta_s2 / linearised - 1| over rho > 0: early stopping {errs[0]:.3f} (vs "
        f"the quadratic-loss GD path), shrinkage lambda = {cfg.shrink_lambda:g} {errs[1]:.3f} "
        "(vs (2/beta)(Sigma + lambda I)^-1 mu); near the reference, |theta| <= ~0.5")
    conv = lk[lk.regime == "converged"]
    add("leakage_vanishes", float(conv.theta_s2.abs().max()),
        f"max |theta_s2| over rho in {list(cfg.rho_grid)} at convergence, n = "
        f"{cfg.n_population:.0e}")
    hid = lk[lk.regime == "hidden_converged"].sort_values("rho")
    add("hidden_cause_leaks", float(hid.theta_s2.values[-1]),
        f"converged theta_s2 at rho = {hid.rho.values[-1]:g} with causal coordinate 0 hidden; "
        "along rho: " + ", ".join(f"{v:.3f}" for v in hid.theta_s2.values)
        + " (spec prototype 0.02 / 0.21 / 0.29 at rho = 0 / 0.5 / 1)")
    a = lk[(lk.regime == "far_early_stop") & (lk.rho > 0)].sort_values("rho").theta_s2.values
    b = lk[(lk.regime == "linearised_far") & (lk.rho > 0)].sort_values("rho").theta_s2.values
    far = lk[lk.regime == "far_early_stop"]
    add("leakage_linearised_far", float(np.max(np.abs(a / b - 1))),
        f"{cfg.far_steps} steps of lr {cfg.far_lr} reach |theta| ~ {far.norm.mean():.1f}, far "
        "from the reference: the logistic curvature is well below its value 1/4 at 0, so "
        "the quadratic theory underestimates the leaked weight several-fold; the paper's "
        "linearisation is a near-reference statement")
    return out


def _at(df, col, value, out):
    i = int(np.argmin(np.abs(df[col].values - value)))
    return float(df[out].values[i])


IRREDUCIBLE_SPECS = (
    ("irreducible_bias", "theta_s1 does not shrink with data: |theta_s1(n = 1e5) - "
     "theta_s1(pop)| <= 0.05", "<=", 0.05, True),
    ("irreducible_ood_gap", "The ID-OOD accuracy gap under a flipped bias does not close "
     "with data (gap at 1e5 >= 0.8x gap at 1e3)", ">=", 0.8, True),
    ("reducible_one_over_n", "The estimation error |theta_n - theta_pop|^2 decays like 1/n "
     "(falls >= 5x from n = 1e3 to 1e4)", ">=", 5.0, True),
)


def irreducible_claims(cfg: SpuriousConfig, seed: int = 0) -> list[Claim]:
    """F2's claims, with the OOD test bias flipped (m' = -m)."""
    cfg = replace(cfg, test_shift_m=-cfg.m)
    return _guard(IRREDUCIBLE_SPECS, lambda: _irreducible_claims(cfg, seed))


def _irreducible_claims(cfg: SpuriousConfig, seed: int) -> list[Claim]:
    d = figure_irreducible_data(cfg, seed)
    rows, pop = d["rows"], d["theta_s1_pop"]
    spec = {s[0]: s for s in IRREDUCIBLE_SPECS}
    out = []

    def add(name, measured, note):
        _, statement, op, thr, exp = spec[name]
        out.append(Claim(PAPER, name, statement, measured, op, thr, exp, note))

    nmax = max(cfg.n_grid)
    top = rows[rows.n == nmax]
    add("irreducible_bias", float((top.theta_s1 - pop).abs().max()),
        f"worst over {cfg.replicates} replicates at n = {nmax:.0e}; theta_s1(pop) = {pop:.3f} "
        f"(>= 0.8 required: {pop >= 0.8}); mean theta_s1(n) = "
        + ", ".join(f"{v:.2f}" for v in rows.groupby("n").theta_s1.mean().values))
    gap = rows.assign(gap=rows.acc_id - rows.acc_ood).groupby("n").gap.mean()
    add("irreducible_ood_gap", float(gap[nmax] / gap[1000]),
        f"mean ID - OOD accuracy (m' = {cfg.test_shift_m:g}, exact) at 1e3: {gap[1000]:.3f}, "
        f"at {nmax:.0e}: {gap[nmax]:.3f}")
    err = rows.groupby("n").est_error.mean()
    add("reducible_one_over_n", float(err[1000] / err[10000]),
        f"mean |theta_n - theta_pop|^2 over {cfg.replicates} replicates: {err[1000]:.2e} at "
        f"1e3, {err[10000]:.2e} at 1e4 (1/n predicts 10x)")
    return out


TIE_SPECS = (
    ("ties_cut_30", "Ties at 30% of the data cut |theta_s1| to <= 0.6x DPO's", "<=", 0.6, True),
    ("ties_cut_50", "Ties at 50% of the data cut |theta_s1| to <= 0.4x DPO's", "<=", 0.4, True),
    ("ties_keep_causal", "Tie training keeps the causal direction: cos(theta_c, w*) >= 0.99",
     ">=", 0.99, True),
    ("ties_keep_accuracy", "Tie training costs <= 1 point of causal accuracy on neutral pairs "
     "(m' = 0)", ">=", -0.01, True),
    ("ties_help_ood", "Ties at 30% raise accuracy under a flipped bias (m' = -m) by >= 3 "
     "points", ">=", 0.03, True),
    ("ties_selective", "At matched |theta_s|, plain L2 leaves a lower theta_c . w* than ties "
     "(ties are selective)", ">", 0.0, True),
    ("ties_keep_causal_weight", "Ties do not shrink the causal weight: theta_c . w* >= 0.98x "
     "DPO's", ">=", 0.98, True),
)


def tie_claims(cfg: SpuriousConfig, seed: int = 0) -> list[Claim]:
    """F3's claims. ``tie_equal_utility=False`` is the pitfall of "ties" drawn without the
    equal-utility constraint (they then shrink the causal weight like L2)."""
    cfg = replace(cfg, test_shift_m=-cfg.m)
    return _guard(TIE_SPECS, lambda: _tie_claims(cfg, seed))


def _tie_claims(cfg: SpuriousConfig, seed: int) -> list[Claim]:
    rows = figure_ties_data(cfg, seed)["rows"]
    spec = {s[0]: s for s in TIE_SPECS}
    out = []

    def add(name, measured, note):
        _, statement, op, thr, exp = spec[name]
        out.append(Claim(PAPER, name, statement, measured, op, thr, exp, note))

    def get(method, f, col):
        sel = rows[(rows.method == method) & np.isclose(rows.tie_fraction, f)]
        if sel.empty:
            raise KeyError(f"tie fraction {f} not in tie_fractions {cfg.tie_fractions}")
        return sel.sort_values("replicate")[col].to_numpy()

    base = np.abs(get("ties", 0.0, "theta_s1"))
    for name, f in (("ties_cut_30", 0.3), ("ties_cut_50", 0.5)):
        ratio = np.abs(get("ties", f, "theta_s1")) / base
        add(name, float(ratio.max()),
            f"worst over {cfg.tie_replicates} replicates of |theta_s1(ties)| / |theta_s1(DPO)| "
            f"at {cfg.n_pairs} preference pairs + {n_ties_for(cfg.n_pairs, f)} ties; mean "
            f"{ratio.mean():.3f}; random-label control "
            f"{np.mean(np.abs(get('random_labels', f, 'theta_s1')) / base):.3f}")
    pos = [f for f in cfg.tie_fractions if f > 0]
    cos = min(float(get("ties", f, "cos_causal").min()) for f in cfg.tie_fractions)
    add("ties_keep_causal", cos, f"min over tie fractions {list(cfg.tie_fractions)} and "
        "replicates")
    drop = min(float((get("ties", f, "acc_neutral") - get("ties", 0.0, "acc_neutral")).min())
               for f in pos)
    add("ties_keep_accuracy", drop, "min over fractions > 0 and replicates of the change in "
        f"exact accuracy on neutral pairs; DPO: {get('ties', 0.0, 'acc_neutral').mean():.4f}")
    gain = get("ties", 0.3, "acc_ood") - get("ties", 0.0, "acc_ood")
    add("ties_help_ood", float(gain.min()),
        f"worst over replicates; OOD accuracy {get('ties', 0.0, 'acc_ood').mean():.3f} -> "
        f"{get('ties', 0.3, 'acc_ood').mean():.3f} (random labels "
        f"{get('random_labels', 0.3, 'acc_ood').mean():.3f})")
    margin = min(float((get("ties", f, "causal_dot") - get("l2_matched", f, "causal_dot")).min())
                 for f in pos)
    add("ties_selective", margin,
        "min over fractions > 0 and replicates of theta_c.w*(ties) - theta_c.w*(L2 at the same "
        "|theta_s|); at 0.3: ties " f"{get('ties', 0.3, 'causal_dot').mean():.2f} vs L2 "
        f"{get('l2_matched', 0.3, 'causal_dot').mean():.2f}")
    keep = min(float((get("ties", f, "causal_dot") / get("ties", 0.0, "causal_dot")).min())
               for f in pos)
    add("ties_keep_causal_weight", keep,
        "min over fractions > 0 and replicates of theta_c.w*(ties) / theta_c.w*(DPO); DPO "
        f"{get('ties', 0.0, 'causal_dot').mean():.2f}, ties at 0.5 "
        f"{get('ties', 0.5, 'causal_dot').mean():.2f} (spec prototype: 2.54 -> 2.80)")
    return out


NEURAL_SPECS = (
    ("neural_ties_cut", "Ties at 30% cut a 2-layer MLP reward's spurious sensitivity "
     "E|dr/ds1| by >= 30%", "<=", 0.7, True),
)


def neural_claims(cfg: SpuriousConfig, seed: int = 0) -> list[Claim]:
    """F4's claim (reported; expected because it holds on seeds 0-4)."""
    return _guard(NEURAL_SPECS, lambda: _neural_claims(cfg, seed))


def _neural_claims(cfg: SpuriousConfig, seed: int) -> list[Claim]:
    rows = figure_neural_data(cfg, seed)["rows"]
    dpo = rows[rows.tie_fraction == 0].sort_values("replicate")
    tie = rows[rows.tie_fraction > 0].sort_values("replicate")
    ratio = tie.sens_s1.to_numpy() / dpo.sens_s1.to_numpy()
    causal = tie.sens_causal.to_numpy() / dpo.sens_causal.to_numpy()
    test = dpo.test_loss.to_numpy()
    _, statement, op, thr, exp = NEURAL_SPECS[0]
    return [Claim(PAPER, "neural_ties_cut", statement, float(ratio.max()), op, thr, exp,
                  f"worst over {cfg.mlp_replicates} paired MLPs (hidden {cfg.mlp_hidden}, "
                  f"{cfg.mlp_pairs} pairs, {cfg.mlp_steps} Adam steps) of sensitivity(ties) / "
                  f"sensitivity(DPO), finite differences; causal sensitivity ratio "
                  f"{causal.mean():.2f}; DPO held-out loss {test.mean():.3f}")]
