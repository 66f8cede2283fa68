"""The experiments behind the figures: the config, and ``figure_*_data`` (data, never plots).

F1 greedy vs brute force; F2 Monte Carlo value of every policy vs budget (common random
numbers); F3 the DP against Monte Carlo of its own policy, in the homogeneous model it assumes
and in the heterogeneous process, and its runtime. F4 (misspecification) is in
:mod:`icml26.recruitment.robustness`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from icml26 import common
from icml26.common import check_choice, check_int, generator

from .dp import DPResult, surrogate_dp
from .model import (
    DTYPE,
    SPEC_PMF,
    brute_force_allocation,
    capacity_pmf,
    expected_recruits,
    greedy_allocation,
    marginals,
    population_pmf,
    tilt,
)
from .simulator import POLICIES, draw_population, mean_se, simulate


@dataclass(frozen=True)
class RecruitmentConfig:
    """Defaults are the spec's prototype setting (pmf, m0 = 3, T = 4, B = 20)."""

    family: str = "custom"  # the spec's pmf; other families take mean_capacity and k_max
    mean_capacity: float = 1.87  # mean of the spec's pmf
    k_max: int = 6
    heterogeneity: float = 0.5  # sd of the logit/tilt shift (spec dashboard default)
    budget: int = 20
    rounds: int = 4
    m0: int = 3
    discount: float = 1.0  # total recruits, as in the paper's objective
    budgets: tuple[int, ...] = (5, 10, 20, 30, 40)  # F2's x-axis (spec)
    mc_reps: int = 4000
    misspec_eps: tuple[float, ...] = tuple(np.round(np.linspace(0, 0.5, 11), 3).tolist())
    # F4's directions p_alt (all mass on one capacity): 0 = the planner over-counts people who
    # recruit nobody (it spends sooner); 2 = it under-counts the spread (everyone recruits 2)
    misspec_toward: tuple[int, ...] = (0, 2)
    misspec_terms: tuple[str, ...] = ("frontier", "transition")  # the bound's terms
    allow_save: bool = True  # False = the spend-everything pitfall
    tail: str = "lump"  # "drop" = the discarded-tail pitfall

    def base_pmf(self) -> torch.Tensor:
        return capacity_pmf(self.family, self.mean_capacity, self.k_max)

    def validate(self) -> None:
        check_int("budget", self.budget, 0)
        check_int("rounds", self.rounds, 1)
        check_int("m0", self.m0, 0)
        check_int("mc_reps", self.mc_reps, 2)
        if self.heterogeneity < 0:
            raise ValueError(f"heterogeneity must be >= 0, got {self.heterogeneity}")
        if not 0 < self.discount <= 1:
            raise ValueError(f"discount must be in (0, 1], got {self.discount}")
        k = self.base_pmf().numel() - 1
        for c in self.misspec_toward:
            check_int("misspec_toward", c, 0, k)
        for term in self.misspec_terms:
            check_choice("misspec_terms", term, ("frontier", "transition"))


SCALES = {
    "quick": RecruitmentConfig(),
    "paper": RecruitmentConfig(mc_reps=40000, budgets=(5, 10, 20, 30, 40, 50, 60)),
}


def config_for(scale: str) -> RecruitmentConfig:
    """The preset named ``scale`` ("quick" | "paper")."""
    return common.config_for(SCALES, scale)


def figure_greedy_data(seed: int = 0, instances: int = 100, people: int = 4,
                       max_budget: int = 6, k_max: int = 6) -> dict:
    """F1: greedy vs brute force on random small instances, and example survival curves."""
    g = generator(seed)
    gaps, rows = [], []
    for i in range(instances):
        pmfs = _dirichlet(people, k_max + 1, g)
        b = int(torch.randint(0, max_budget + 1, (1,), generator=g))
        marg = marginals(pmfs)
        greedy = float(expected_recruits(marg, greedy_allocation(marg, b)))
        brute = brute_force_allocation(marg, b)
        gaps.append(abs(greedy - brute))
        rows.append({"instance": i, "budget": b, "greedy": greedy, "brute_force": brute})
    base = capacity_pmf()
    thetas = torch.tensor([-1.0, 0.0, 1.0], dtype=DTYPE)
    curves = marginals(tilt(base, thetas))
    return {"rows": rows, "max_gap": max(gaps), "theta": thetas.tolist(),
            "survival": curves.tolist(), "j": list(range(1, base.numel())),
            "instances": instances, "people": people, "max_budget": max_budget, "k_max": k_max}


def _dirichlet(n: int, k: int, g: torch.Generator) -> torch.Tensor:
    x = -torch.log(torch.rand(n, k, generator=g, dtype=DTYPE))  # Gamma(1) draws
    return x / x.sum(-1, keepdim=True)


def figure_value_vs_budget_data(cfg: RecruitmentConfig, seed: int = 0,
                                policies: Sequence[str] = POLICIES, progress=None,
                                device: str | torch.device = "cpu") -> dict:
    """F2: Monte Carlo value of each policy at each budget, common random numbers.

    One DP at the largest budget covers every smaller one. Returns per-policy means and SEs
    and, against the DP, the paired differences and their SEs.
    """
    cfg.validate()
    base = cfg.base_pmf().to(device)
    pbar = population_pmf(base, cfg.heterogeneity)
    bmax = max(cfg.budgets)
    dp = surrogate_dp(pbar, bmax, cfg.rounds, cfg.discount, cfg.allow_save, cfg.tail)
    g = generator(seed)
    rows = []
    for budget in cfg.budgets:
        pop = draw_population(base, cfg.heterogeneity, cfg.mc_reps, cfg.rounds,
                              max(cfg.m0, budget), g)
        totals = {p: simulate(p, pop, budget, cfg.m0, cfg.rounds, dp, cfg.discount)
                  for p in policies}
        for p in policies:
            mean, se = mean_se(totals[p])
            row = {"budget": budget, "policy": p, "mean": mean, "se": se}
            if "dp" in totals:
                row["diff_vs_dp"], row["se_diff"] = mean_se(totals["dp"] - totals[p])
            rows.append(row)
        if progress is not None:
            progress(budget)
    return {"rows": rows, "surrogate": {b: dp.v(b, cfg.m0) for b in cfg.budgets},
            "first_spend": {b: int(dp.spend[0, b, min(cfg.m0, b)]) for b in cfg.budgets}}


def stress_state(dp: DPResult) -> tuple[int, int, int]:
    """The state ``(t, b, m)`` where the truncated tail carries the most value.

    Under the DP's own policy, ``sum_{r > b-s} P(R = r) V_{t+1}(b-s, b-s)`` is what lumping
    adds; checking the DP against Monte Carlo there exercises the truncation hardest.
    """
    rounds, size, _ = dp.value.shape
    dev = dp.value.device
    b = torch.arange(size, device=dev)[:, None]
    m = torch.arange(size, device=dev)[None, :]
    best, arg = -1.0, (0, size - 1, 1)
    for t in range(rounds - 1):
        s = dp.spend[t]  # [b, m]
        left = (b - s).clamp(min=0)
        dist = dp.recruit_pmf[m.expand(size, size), s]  # [b, m, r]
        beyond = torch.arange(size, device=dev)[None, None, :] > left[..., None]
        worth = dp.value[t + 1][left, left]  # V_{t+1}(b', b')
        tail = (dist * beyond).sum(-1) * worth
        tail = torch.where((m >= 1) & (m <= b), tail, torch.zeros_like(tail))
        if float(tail.max()) > best:
            best = float(tail.max())
            i = int(tail.argmax())
            arg = (t, i // size, i % size)
    return arg


def _z(diff: float, se: float) -> float:
    """``diff / se``; a deterministic outcome (se = 0) is 0 when it agrees, inf when not."""
    if se > 0:
        return diff / se
    return 0.0 if abs(diff) <= 1e-9 else math.inf


def figure_dp_vs_mc_data(cfg: RecruitmentConfig, seed: int = 0,
                         device: str | torch.device = "cpu") -> dict:
    """F3 (left): DP value vs Monte Carlo of its policy in the homogeneous model it assumes.

    Checked from the start state ``(B, m0)`` for every budget of F2, and from the
    :func:`stress_state`, where the lumped tail of the truncated PGF matters most.
    """
    cfg.validate()
    pmf = population_pmf(cfg.base_pmf().to(device), cfg.heterogeneity)
    bmax = max(cfg.budgets)
    dp = surrogate_dp(pmf, bmax, cfg.rounds, cfg.discount, cfg.allow_save, cfg.tail)
    g = generator(seed + 7919)
    t_s, b_s, m_s = stress_state(dp)
    starts = [(0, b, cfg.m0, "start") for b in cfg.budgets] + [(t_s, b_s, m_s, "stress")]
    rows = []
    for t, budget, m0, kind in starts:
        pop = draw_population(pmf, 0.0, cfg.mc_reps, cfg.rounds, max(m0, budget), g)
        sim = simulate("dp", pop, budget, m0, cfg.rounds, dp, cfg.discount, start_round=t)
        mc, se = mean_se(sim)
        v = dp.v(budget, m0, t)
        rows.append({"kind": kind, "round": t, "budget": budget, "m0": m0, "dp": v, "mc": mc,
                     "se": se, "z": _z(v - mc, se)})
    return {"rows": rows}


def figure_heterogeneous_data(cfg: RecruitmentConfig, seed: int = 0,
                              device: str | torch.device = "cpu") -> dict:
    """F3 (right): the surrogate's V(B, m0) vs Monte Carlo of its policy in the real process."""
    cfg.validate()
    base = cfg.base_pmf().to(device)
    pbar = population_pmf(base, cfg.heterogeneity)
    dp = surrogate_dp(pbar, cfg.budget, cfg.rounds, cfg.discount, cfg.allow_save, cfg.tail)
    g = generator(seed + 104729)
    pop = draw_population(base, cfg.heterogeneity, cfg.mc_reps, cfg.rounds,
                          max(cfg.m0, cfg.budget), g)
    mc, se = mean_se(simulate("dp", pop, cfg.budget, cfg.m0, cfg.rounds, dp, cfg.discount))
    return {"surrogate": dp.v(cfg.budget, cfg.m0), "mc": mc, "se": se}


def dp_runtime_data(budgets: Sequence[int] = (10, 20, 30, 40, 60), rounds: int = 4,
                    repeats: int = 5) -> list[dict]:
    """F3 (right): the DP's cost per budget, counted and timed.

    ``flops``: the floating-point operations torch executed, counted by
    :class:`torch.utils.flop_counter.FlopCounterMode` (the expectations' einsum: ``2 T (B+1)^4``;
    a count, the same on every machine, which is what a complexity statement is about).
    ``seconds``: the median wall time of ``repeats`` runs, with their min and max (a figure,
    never a claim: timings depend on the machine and its load)."""
    import statistics
    import time

    from torch.utils.flop_counter import FlopCounterMode

    rows = []
    for b in budgets:
        with FlopCounterMode(display=False) as counter:
            surrogate_dp(SPEC_PMF, b, rounds)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            surrogate_dp(SPEC_PMF, b, rounds)
            times.append(time.perf_counter() - start)
        rows.append({"budget": b, "rounds": rounds, "flops": counter.get_total_flops(),
                     "seconds": statistics.median(times), "seconds_min": min(times),
                     "seconds_max": max(times), "repeats": repeats})
    return rows
