"""The figures' data (never plots; shared by the notebook, the dashboard and the claims).

F1 incentive phase diagram, F2 trajectories under four ladders, F3 arbitrarily high honest
attainment, F4 sensitivity of the honestly reached level to retention and leg-up, F5 a greedy
principal. Each ``figure_*_data`` draws from generators seeded by ``seed`` (None: no jitter).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd
import torch

from icml26.promotion.model import (
    DTYPE,
    EPS_ACTION,
    PromotionConfig,
    levels_for_target,
    make_ladder,
    steady_state_thresholds,
)
from icml26.promotion.solver import act, simulate, solve, truncated_vi
from icml26.promotion.studies import (
    GreedyConfig,
    PhaseConfig,
    StudyConfig,
    seeded_generator,
    uniform_draws,
)


def classify(a_plus: torch.Tensor, a_minus: torch.Tensor) -> list[str]:
    """``gaming`` if any gaming (``> 1e-6``), ``honest`` if only improvement, else ``none``."""
    out = []
    for p, m in zip(a_plus.tolist(), a_minus.tolist()):
        out.append("gaming" if m > EPS_ACTION else "honest" if p > EPS_ACTION else "none")
    return out


def phase_configs(ph: PhaseConfig, seed: int | None = None) -> pd.DataFrame:
    """The F1 cells: ``ratio = c-/c+``, ``beta``, ``gamma`` and the row kind.

    Cell centres are ``ratio = (j + 1/2)/n`` and ``beta*gamma = i * bg_max/(n-1)``; with a
    seed, each cell moves by up to ``jitter`` grid steps (the ``beta*gamma = 0`` rows stay on
    0, where the myopic claim is checked).
    """
    ph.validate()
    g = seeded_generator(seed, 1)
    nr, nd = ph.n_ratio, ph.n_discount
    d_ratio, d_bg = 1.0 / nr, ph.bg_max / (nd - 1)
    rows = []
    jit = uniform_draws(g, 2 * (nr * nd + nr), -ph.jitter, ph.jitter).tolist() if g else None
    for i in range(nd + 1):  # last row: the truly myopic agents (beta = 0)
        for j in range(nr):
            n = i * nr + j
            dr, db = (jit[2 * n], jit[2 * n + 1]) if jit else (0.0, 0.0)
            ratio = (j + 0.5 + dr) * d_ratio
            if i == nd:
                beta, gamma, kind = 0.0, ph.myopic_gamma, "myopic"
            else:
                bg = 0.0 if i == 0 else min(ph.bg_max, (i + db) * d_bg)
                beta, gamma, kind = ph.beta, bg / ph.beta, "grid"
            rows.append({"ratio": ratio, "beta_gamma": beta * gamma, "beta": beta,
                         "gamma": gamma, "kind": kind})
    return pd.DataFrame(rows)


def figure_phase_data(ph: PhaseConfig | None = None, seed: int | None = None,
                      impl: str = "auto", device=None) -> dict:
    """F1: the optimal first action at (level 1, x0 = 0) on the (c-/c+, beta*gamma) grid.

    One batched solve over every cell (``n_ratio * (n_discount + 1)`` configurations).
    Returns ``cells`` (DataFrame: ratio, beta_gamma, action, predicted, agree, near_line),
    the agreement away from the line, the myopic cells' gaming share and the analytic lines.
    """
    ph = PhaseConfig() if ph is None else ph
    cells = phase_configs(ph, seed)
    cfgs = [PromotionConfig(levels=2, beta=float(r.beta), gamma=float(r.gamma), delta=0.0,
                            c_plus=1.0, c_minus=float(r.ratio), reward_per_level=ph.reward,
                            design="custom", custom_thresholds=(ph.threshold,), x0=0.0,
                            nx=ph.nx, na=ph.na, exact_gaps=ph.exact_gaps)
            for r in cells.itertuples()]
    ladder = make_ladder(cfgs, device)
    if ph.backups:
        sol = truncated_vi(ladder, ph.backups, impl)
    else:
        sol = solve(ladder, impl=impl)
    n = ladder.batch
    dev = ladder.grid.device
    first = act(sol, torch.ones(n, dtype=torch.long, device=dev),
                torch.zeros(n, dtype=DTYPE, device=dev))
    a_plus, a_minus = first.a_plus.cpu(), first.a_minus.cpu()
    cells["a_plus"] = a_plus.numpy()
    cells["a_minus"] = a_minus.numpy()
    cells["action"] = classify(a_plus, a_minus)
    line = 1.0 - cells["beta_gamma"]
    cells["predicted"] = np.where(cells["ratio"] > line, "honest", "gaming")
    cells["agree"] = cells["action"] == cells["predicted"]
    step = max(1.0 / ph.n_ratio, ph.bg_max / (ph.n_discount - 1))
    cells["near_line"] = (cells["ratio"] - line).abs() <= step
    far = cells[~cells["near_line"] & (cells["kind"] == "grid")]
    zero = cells[(cells["beta_gamma"] == 0.0)]
    bg = np.linspace(0, ph.bg_max, 50)
    return {"cells": cells, "agreement": float(far["agree"].mean()), "n_far": len(far),
            "myopic_gaming": float((zero["action"] == "gaming").mean()), "n_myopic": len(zero),
            "line": pd.DataFrame({"beta_gamma": bg, "ratio": 1 - bg}),
            "residual": float(sol.residual.max()), "backups": sol.backups}


def _draw_x0(study: StudyConfig, cfg: PromotionConfig, seed: int | None, salt: int) -> float:
    g = seeded_generator(seed, salt)
    if g is None:
        return cfg.x0
    mu1 = float(cfg.thresholds()[0])
    return float(uniform_draws(g, 1, 0.0, study.x0_jitter * mu1))


def trajectory_frame(tr: dict[str, torch.Tensor], b: int) -> pd.DataFrame:
    """One configuration's trajectory as a DataFrame with ``t = 0..T`` (actions NaN-free:
    the last row repeats zero effort, it is the state after the horizon)."""
    tr = {k: v.cpu() for k, v in tr.items()}
    horizon = tr["a_plus"].shape[1]
    pad = torch.zeros(1, dtype=DTYPE)
    return pd.DataFrame({
        "t": np.arange(horizon + 1),
        "level": tr["level"][b].numpy(),
        "skill": tr["skill"][b].numpy(),
        "a_plus": torch.cat([tr["a_plus"][b], pad]).numpy(),
        "a_minus": torch.cat([tr["a_minus"][b], pad]).numpy(),
    })


def trajectory_summary(df: pd.DataFrame, cfg: PromotionConfig) -> dict:
    """Arrival at the top, honest effort and gaming totals, effort after arrival."""
    top = cfg.levels
    mu_top = float(cfg.thresholds()[-1])
    acts = df.iloc[:-1]
    at_top = np.flatnonzero(df["level"].to_numpy() == top)
    arrival = int(at_top[0]) if at_top.size else math.inf
    after = acts[acts["t"] >= arrival] if at_top.size else acts.iloc[0:0]
    states_after = df[df["t"] >= arrival] if at_top.size else df.iloc[0:0]
    return {
        "arrival": arrival,
        "total_a_plus": float(acts["a_plus"].sum()),
        "total_a_minus": float(acts["a_minus"].sum()),
        "mean_a_plus_after": float(after["a_plus"].mean()) if len(after) else math.nan,
        "min_skill_after": float(states_after["skill"].min()) if len(states_after) else math.nan,
        "stays_top": bool(len(states_after) and (states_after["level"] == top).all()),
        "final_level": int(df["level"].iloc[-1]),
        "final_skill": float(df["skill"].iloc[-1]),
        "mu_top": mu_top,
        "maintenance_no_legup": (1 - cfg.gamma) * mu_top,
    }


def trajectory_designs(study: StudyConfig, x0: float | None = None
                       ) -> dict[str, PromotionConfig]:
    """F2's four designs: (a) steady state, (b) ``steep`` x steeper, (c) the steady-state
    ladder designed for the base delta but dynamics without leg-up (delta = 0), (d) the naive
    equal-step ladder ``shallow`` x as steep (issue 46)."""
    base = study.base if x0 is None else replace(study.base, x0=x0)
    steady = replace(base, design="steady", slope=1.0, design_delta=None)
    return {
        "steady": steady,
        "steep": replace(steady, design="linear", slope=study.steep),
        "no_legup": replace(steady, design_delta=base.ladder_delta(), delta=0.0),
        "shallow": replace(steady, design="linear", slope=study.shallow),
    }


DESIGN_TITLES = {"steady": "(a) steady state mu_l = delta l/(1-gamma)",
                 "steep": "(b) steeper ladder", "no_legup": "(c) steady-state ladder, delta = 0",
                 "shallow": "(d) shallower equal-step ladder (naive)"}
#: designs solved on their own (added later: the batch of the first three stays bit-identical)
SEPARATE_DESIGNS = ("shallow",)


def figure_trajectories_data(study: StudyConfig | None = None, seed: int | None = None,
                             impl: str = "auto", device=None) -> dict:
    """F2: trajectories under the four designs: one batched solve for (a)-(c) and one for the
    naive ladder (d) (:data:`SEPARATE_DESIGNS`), so adding (d) left (a)-(c) bit-identical.

    Returns ``{"frames": {design: DataFrame(t, level, skill, a_plus, a_minus)},
    "summary": {design: dict}, "thresholds": {design: list}, "x0": float}``.
    """
    study = StudyConfig() if study is None else study
    study.validate()
    x0 = _draw_x0(study, study.base, seed, 2)
    designs = trajectory_designs(study, x0)
    groups = [[k for k in designs if k not in SEPARATE_DESIGNS],
              [k for k in designs if k in SEPARATE_DESIGNS]]
    frames, residual = {}, 0.0
    for names in (g for g in groups if g):
        sol = solve(make_ladder([designs[k] for k in names], device), impl=impl)
        tr = simulate(sol)
        frames.update({k: trajectory_frame(tr, b) for b, k in enumerate(names)})
        residual = max(residual, float(sol.residual.max()))
    frames = {k: frames[k] for k in designs}
    return {"frames": frames,
            "summary": {k: trajectory_summary(frames[k], c) for k, c in designs.items()},
            "thresholds": {k: c.thresholds().tolist() for k, c in designs.items()},
            "x0": x0, "residual": residual}


def figure_height_data(study: StudyConfig | None = None, seed: int | None = None,
                       impl: str = "auto", progress: Callable | None = None,
                       device=None) -> pd.DataFrame:
    """F3: for each target skill ``M``, the steady-state ladder with
    ``L = ceil((1-gamma) M/delta) + 1`` levels; final level and skill of the optimal agent.

    One solve per target (each has its own ``L``); horizon ``max(T, 2(L-1) + 10)``.
    """
    study = StudyConfig() if study is None else study
    study.validate()
    base = replace(study.base, design="steady", slope=1.0, design_delta=None)
    rows = []
    for i, m in enumerate(study.targets):
        levels = levels_for_target(m, base.gamma, base.delta)
        cfg = replace(base, levels=levels, horizon=max(base.horizon, 2 * (levels - 1) + 10))
        cfg = replace(cfg, x0=_draw_x0(study, cfg, seed, 10 + i))
        sol = solve(make_ladder([cfg], device), impl=impl)
        s = trajectory_summary(trajectory_frame(simulate(sol), 0), cfg)
        rows.append({"target": float(m), "levels": levels, "x0": cfg.x0, **s})
        if progress is not None:
            progress(m)
    return pd.DataFrame(rows)


def level_before_gaming(level: torch.Tensor, a_minus: torch.Tensor) -> torch.Tensor:
    """The highest level reached before any gaming (the paper's "highest level reached
    honestly"): ``max level[t]`` over the states ``t`` whose every earlier action had
    ``a- <= 1e-6``; a level entered by a gaming action does not count, nor anything after it.

    ``level [B, T+1]`` (1-based, ``level[:, 0]`` the start), ``a_minus [B, T]`` -> ``[B]``.
    """
    gamed = (a_minus > EPS_ACTION).long().cumsum(dim=1) > 0  # [B, T]: gamed at or before t
    clean = torch.cat([torch.ones_like(gamed[:, :1]), ~gamed], dim=1)  # [B, T+1]
    return torch.where(clean, level, torch.zeros_like(level)).amax(dim=1)


def held_level(level: torch.Tensor, skill: torch.Tensor, mu: torch.Tensor,
               tol: float = 1e-9) -> torch.Tensor:
    """The level a final state holds on true skill: ``min(level, 1 + #{j: mu_j <= x})``.

    Level ``l``'s stay threshold is ``mu_{l-1}``. This looks only at the end: gaming during
    the climb is invisible to it (and honest maintenance effort is not counted), so it is
    shown beside the claim, never the claim. ``level, skill [B]``, ``mu [B, L-1]`` -> ``[B]``.
    """
    supported = 1 + (skill[:, None] >= mu - tol).sum(dim=1)
    return torch.minimum(level, supported)


def figure_sensitivity_data(study: StudyConfig | None = None, seed: int | None = None,
                            impl: str = "auto", device=None) -> dict:
    """F4: a FIXED ladder and reward schedule (the base design, ``sens_levels`` levels),
    sweeping gamma (delta fixed) and delta (gamma fixed); one batched solve for both sweeps.

    Per configuration: the highest level reached before any gaming
    (:func:`level_before_gaming`, the paper's honestly reached level, what the claims use), the
    first period with gaming (-1: none), the final level and skill, the final level held on
    true skill (:func:`held_level`, blind to gaming during the climb), total gaming and effort.
    """
    study = StudyConfig() if study is None else study
    study.validate()
    g = seeded_generator(seed, 3)
    base = replace(study.base, levels=study.sens_levels, horizon=study.sens_horizon,
                   nx=study.sens_nx, na=study.sens_na)
    mu = tuple(base.thresholds().tolist())  # fixed: designed once, at the base gamma, delta
    ladder_cfg = replace(base, design="custom", custom_thresholds=mu, design_delta=None)

    def jittered(values: Sequence[float], n_salt: int) -> list[float]:
        v = np.asarray(values, dtype=float)
        if g is None or len(v) < 3:
            return v.tolist()
        step = np.diff(v).min()
        shift = uniform_draws(g, len(v), -0.4 * step, 0.4 * step).numpy()
        shift[0] = shift[-1] = 0.0  # keep the ends of the spec's ranges
        return (v + shift).tolist()

    gammas, deltas = jittered(study.gammas, 0), jittered(study.deltas, 1)
    cfgs = ([replace(ladder_cfg, gamma=x) for x in gammas]
            + [replace(ladder_cfg, delta=x) for x in deltas])
    sol = solve(make_ladder(cfgs, device), impl=impl)
    tr = {k: v.cpu() for k, v in simulate(sol).items()}
    mu_t = torch.tensor(mu, dtype=DTYPE)[None, :].expand(len(cfgs), -1)
    held = held_level(tr["level"][:, -1], tr["skill"][:, -1], mu_t, base.tol)
    before = level_before_gaming(tr["level"], tr["a_minus"])
    gamed = tr["a_minus"] > EPS_ACTION
    first = torch.where(gamed.any(dim=1), gamed.long().argmax(dim=1), -1)
    frame = pd.DataFrame({
        "gamma": [c.gamma for c in cfgs], "delta": [c.delta for c in cfgs],
        "level_before_gaming": before.numpy(), "first_gaming": first.numpy(),
        "held_level": held.numpy(),
        "final_level": tr["level"][:, -1].numpy(), "final_skill": tr["skill"][:, -1].numpy(),
        "total_gaming": tr["a_minus"].sum(dim=1).numpy(),
        "total_effort": tr["a_plus"].sum(dim=1).numpy(),
    })
    n = len(gammas)
    return {"gamma": frame.iloc[:n].reset_index(drop=True),
            "delta": frame.iloc[n:].reset_index(drop=True), "thresholds": list(mu),
            "fixed_gamma": base.gamma, "fixed_delta": base.delta}


def figure_greedy_data(base: PromotionConfig | None = None,
                       greedy: GreedyConfig | None = None, impl: str = "auto",
                       progress: Callable | None = None, device=None) -> pd.DataFrame:
    """F5: raise each ``mu_l`` (in order) as far as the best response stays honest promotion.

    For level ``l`` the ladder is truncated at ``l + 1`` levels with ``mu_1..mu_{l-1}`` fixed;
    a candidate ``mu_l`` is feasible if the optimal agent from ``x0`` reaches and holds level
    ``l + 1`` with no gaming (``<= 1e-6``) within the horizon. All candidates of one level are
    one batched solve. Returns one row per threshold: greedy vs steady-state value.
    """
    base = PromotionConfig() if base is None else base
    greedy = GreedyConfig() if greedy is None else greedy
    greedy.validate()
    base = replace(base, design="steady", slope=1.0, design_delta=None, nx=greedy.nx,
                   na=greedy.na, horizon=greedy.horizon)
    base.validate()
    steady = steady_state_thresholds(greedy.levels, base.gamma, base.delta).tolist()
    step = base.delta / (1 - base.gamma)
    chosen: list[float] = []
    rows = []
    for ell in range(1, greedy.levels):
        lo = chosen[-1] if chosen else 0.0
        cand = lo + step * np.linspace(0.25, greedy.max_step, greedy.candidates)
        cfgs = [replace(base, levels=ell + 1, design="custom",
                        custom_thresholds=(*chosen, float(c))) for c in cand]
        sol = solve(make_ladder(cfgs, device), impl=impl)
        tr = {k: v.cpu() for k, v in simulate(sol).items()}
        ok = ((tr["level"][:, -1] == ell + 1) & (tr["a_minus"].sum(dim=1) <= EPS_ACTION))
        if not bool(ok.any()):
            break
        best = float(cand[int(torch.nonzero(ok).max())])
        chosen.append(best)
        rows.append({"threshold": ell, "greedy": best, "steady_state": steady[ell - 1],
                     "feasible_candidates": int(ok.sum())})
        if progress is not None:
            progress(ell)
    return pd.DataFrame(rows, columns=["threshold", "greedy", "steady_state",
                                       "feasible_candidates"])


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation with average ranks for ties (NaN for a constant input)."""
    rx = pd.Series(list(x)).rank().to_numpy()
    ry = pd.Series(list(y)).rank().to_numpy()
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])
