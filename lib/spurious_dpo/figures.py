"""The data behind every figure of ``icml26.spurious_dpo`` (F1-F4): data frames, never plots.

Each ``figure_*_data(cfg, seed)`` runs one batched tensor program for every (replicate,
setting) of its figure and is cached on disk per (config, seed, ``CACHE_VERSION``); the
notebook, the dashboard's Run and the claims share them. Nothing runs at import.
"""

from __future__ import annotations

import torch

from icml26 import common
from icml26.spurious_dpo.model import (
    DTYPE,
    TIE_LOSSES,
    SpuriousConfig,
    n_ties_for,
    preference_design,
    substream,
    tie_design,
    w_star,
)
from icml26.spurious_dpo.neural import train_neural
from icml26.spurious_dpo.solvers import fit_gd, fit_newton, make_design, match_l2
from icml26.spurious_dpo.theory import (
    accuracy,
    cosine_causal,
    linearised_theta,
    population_theta,
)

PAPER = "spurious_dpo"
CACHE_VERSION = 3


# --------------------------------------------------------------------------- figures
def _frame(rows: list[dict]):
    import pandas as pd

    return pd.DataFrame(rows)


def _maybe_cached(key: str, cfg: SpuriousConfig, seed: int, use_cache: bool, compute,
                  device="cpu"):
    if not use_cache:
        return compute()
    return common.cached(PAPER, common.device_key(key, device), cfg, seed, CACHE_VERSION,
                         compute)


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
    x = preference_design(n, ms, rhos, cfg.sigma_eps, cfg.kappa, cfg.d_c, substream(seed, 1),
                          hidden_causal=cfg.hidden_causal)[0]
    th = fit_newton(make_design(x), beta)
    del x
    mean_bias = _frame([{"m": m, "n": n, "theta_s1": float(t[k]), "theta_s2": float(t[k + 1]),
                         "theory": 2 * m / (beta * cfg.sigma_eps**2)}
                        for m, t in zip(cfg.m_grid, th[:-1])])
    null = {"theta_s1": float(th[-1, k]), "theta_s2": float(th[-1, k + 1])}

    grid = torch.tensor(cfg.rho_grid, dtype=DTYPE)
    x = preference_design(n, cfg.m, grid, cfg.sigma_eps, cfg.kappa, cfg.d_c, substream(seed, 2),
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
    xh = preference_design(n, cfg.m, grid, cfg.sigma_eps, cfg.kappa, cfg.d_c, substream(seed, 2),
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
                          substream(seed, 3), replicates=cfg.replicates,
                          hidden_causal=cfg.hidden_causal)[:, 0]
    if cfg.hidden_causal:
        xp = preference_design(cfg.n_population, cfg.m, cfg.rho, cfg.sigma_eps, cfg.kappa,
                               cfg.d_c, substream(seed, 4), hidden_causal=True)[0]
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
    ties fed to DPO as random wins/losses), ``forced_labels`` (fed as wins/losses labelled
    like every pair of the pipeline: the "winner" carries the offset m), ``l2_matched`` (plain
    L2 tuned per fraction and replicate to the ties' ``|theta_s|``) and, with
    ``extra_tie_losses``, the other tie likelihoods. Returns ``{"rows": df}`` with one row per
    (method, fraction, replicate)."""
    cfg.validate()
    key = "ties" + ("+losses" if extra_tie_losses else "")
    return _maybe_cached(key, cfg, seed, use_cache,
                         lambda: _ties(cfg, seed, extra_tie_losses))


def _ties(cfg: SpuriousConfig, seed: int, extra_tie_losses: bool) -> dict:
    fr = list(cfg.tie_fractions)
    r, n = cfg.tie_replicates, cfg.n_pairs
    n_tie = [n_ties_for(n, f) for f in fr]
    pref = preference_design(n, cfg.m, cfg.rho, cfg.sigma_eps, cfg.kappa, cfg.d_c,
                             substream(seed, 5), replicates=r,
                             hidden_causal=cfg.hidden_causal)[:, 0]
    ties, labels = tie_design(max(max(n_tie), 1), cfg.m, cfg.rho, cfg.sigma_eps, cfg.d_c,
                              substream(seed, 6), replicates=r, hidden_causal=cfg.hidden_causal,
                              equal_utility=cfg.tie_equal_utility, return_labels=True)
    ties = ties[:, 0]
    if not cfg.forced_label_bias:  # the mutation: forced labels independent of the offset
        labels = torch.where(torch.rand(labels.shape, generator=substream(seed, 8)) < 0.5,
                             1.0, -1.0).to(DTYPE)
    xp, xt = pref.repeat(len(fr), 1, 1), ties.repeat(len(fr), 1, 1)
    counts = [c for c in n_tie for _ in range(r)]
    k = cfg.d_c - int(cfg.hidden_causal)
    spur = slice(k, k + 2)
    fits = {"ties": fit_newton(make_design(xp, xt, n_tie=counts), cfg.beta,
                               tie_kind=cfg.tie_loss),
            "random_labels": fit_newton(make_design(xp, xt, n_tie=counts,
                                                    ties_as_random_labels=True,
                                                    gen=substream(seed, 7)), cfg.beta),
            "forced_labels": fit_newton(make_design(xp, xt, n_tie=counts,
                                                    tie_labels=labels.repeat(len(fr), 1)),
                                        cfg.beta)}
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


def figure_neural_data(cfg: SpuriousConfig, seed: int = 0, use_cache: bool = True,
                       device="cpu") -> dict:
    """F4: spurious sensitivity of MLP rewards trained by DPO vs DPO + ties at
    ``mlp_tie_fraction`` (paired replicates), trained on ``device`` (cached per device type).
    Returns ``{"rows": df, "loss_curve": tensor}``."""
    cfg.validate()
    return _maybe_cached("neural", cfg, seed, use_cache, lambda: _neural(cfg, seed, device),
                         device)


def _neural(cfg: SpuriousConfig, seed: int, device="cpu") -> dict:
    out = train_neural(cfg, seed, (0.0, cfg.mlp_tie_fraction), device=device)
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
