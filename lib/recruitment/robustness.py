"""F4: robustness of the surrogate DP to a misspecified capacity pmf, and the error bound.

Plan with a wrong pmf ``p_model = (1 - eps) p + eps p_alt``, act in the true (homogeneous)
model, evaluate both policies exactly by the DP, and compare the loss with a simulation-lemma
bound split into a frontier term and a transition term.

The bound (ours; the paper states only its split). Write ``V^pi`` for the true value of a
policy, ``Vhat`` / ``pi_hat`` for the planner's optimal value and policy under ``p_model`` and
``pi*`` for the true optimum. For one state ``x = (b, m)`` and spend ``s`` let
``dR(x, s) = E_p R(m, s) - E_model R(m, s)`` (the single-round frontier error: the gap in
expected recruits) and ``dP(x, s) = sum_r (P_p - P_model)(r | m, s) Vhat_{t+1}(b - s, r)``
(the population-level transition error, weighted by the planner's continuation values). Then
``V^{pi*} - Vhat = sum_t E_{p, pi*}[...]`` up to a non-positive slack (``Vhat`` is optimal in
its model) and ``Vhat - V^{pi_hat}`` is an exact telescoping sum, so::

    loss = V^{pi*} - V^{pi_hat}
         <= sum_t disc^t (E_{p,pi*}[dR] - E_{p,pi_hat}[dR])              (frontier term)
          + sum_t disc^{t+1} (E_{p,pi*}[dP] - E_{p,pi_hat}[dP])          (transition term)

with the expectations over the states each policy visits in the TRUE process (computed
exactly, forward through the recruit pmfs). Taking sups over all states instead gives the
textbook form ``2 sum_t disc^t (eps_F + disc * Vmax_{t+1} * eps_P)`` (``worst_case_bound``),
which is valid but vacuous here (it exceeds the optimal value itself from eps ~ 0.2).
"""

from __future__ import annotations

import torch

from .dp import DPResult, continuation_values, evaluate_policy, surrogate_dp
from .experiments import RecruitmentConfig
from .model import DTYPE, population_pmf


def misspec_alt(true: torch.Tensor, toward: int) -> torch.Tensor:
    """The direction of misspecification: all mass on capacity ``toward`` (``[K+1]``)."""
    if not 0 <= toward < true.numel():
        raise ValueError(f"misspec_toward must be a capacity in 0..{true.numel() - 1}, "
                         f"got {toward}")
    alt = torch.zeros_like(true)
    alt[toward] = 1.0
    return alt


def state_occupancy(spend: torch.Tensor, recruit_pmf: torch.Tensor, budget: int,
                    m0: int) -> torch.Tensor:
    """Exact distribution ``[T, B+1 (b), B+1 (m)]`` of the state in each round under a spend
    table, started at ``(budget, min(m0, budget))``; the next frontier is ``min(R, b - s)``."""
    rounds, size, _ = spend.shape
    dev = spend.device
    occ = torch.zeros(rounds, size, size, dtype=DTYPE, device=dev)
    occ[0, budget, min(m0, budget)] = 1.0
    b = torch.arange(size, device=dev)[:, None, None]
    m = torch.arange(size, device=dev)[None, :, None]
    r = torch.arange(size, device=dev)[None, None, :]
    for t in range(rounds - 1):
        s = spend[t][..., None]  # [b, m, 1]
        left = (b - s).clamp(min=0)
        mass = occ[t][..., None] * recruit_pmf[m, s, r]  # [b, m, r]
        dest = left * size + torch.minimum(r, left)  # flat index of (b - s, min(r, b - s))
        occ[t + 1].view(-1).index_add_(0, dest.reshape(-1), mass.reshape(-1))
    return occ


def path_errors(spend: torch.Tensor, occ: torch.Tensor, true: DPResult, plan: DPResult,
                discount: float) -> tuple[float, float]:
    """``(sum_t disc^t E[dR], sum_t disc^{t+1} E[dP])`` along one policy's state path."""
    rounds, size, _ = spend.shape
    m = torch.arange(size, device=spend.device)[None, :].expand(size, size)
    b = torch.arange(size, device=spend.device)[:, None]
    frontier = transition = 0.0
    for t in range(rounds):
        s = spend[t]
        d_r = true.expected_now[m, s] - plan.expected_now[m, s]  # [b, m]
        v_next = plan.value[t + 1] if t + 1 < rounds else torch.zeros_like(plan.value[0])
        w = continuation_values(v_next)[(b - s).clamp(min=0)]  # [b, m, r]
        d_p = ((true.recruit_pmf[m, s] - plan.recruit_pmf[m, s]) * w).sum(-1)
        frontier += discount**t * float((occ[t] * d_r).sum())
        transition += discount ** (t + 1) * float((occ[t] * d_p).sum())
    return frontier, transition


def figure_misspec_data(cfg: RecruitmentConfig, device: str | torch.device = "cpu") -> dict:
    """F4: loss of planning with ``(1-eps) p + eps p_alt`` when ``p`` is true, and the bound.

    One sweep over ``cfg.misspec_eps`` per direction ``p_alt`` = all mass on a capacity in
    ``cfg.misspec_toward``. Values are exact (policy evaluation by the same DP), not Monte
    Carlo, so the loss carries no sampling noise and does not depend on the seed. Terms not in
    ``cfg.misspec_terms`` are left out of the bound (reported as 0): the mutation tests drop
    one. Rows: ``toward, eps, loss, frontier_term, transition_term, bound, worst_case_bound``
    and the planner's first-round spend. The DP tables live on ``device``.
    """
    cfg.validate()
    true = population_pmf(cfg.base_pmf().to(device), cfg.heterogeneity)
    b, t, disc, m0 = cfg.budget, cfg.rounds, cfg.discount, min(cfg.m0, cfg.budget)
    best = surrogate_dp(true, b, t, disc)
    v_true = float(best.value[0, b, m0])
    occ_best = state_occupancy(best.spend, best.recruit_pmf, b, m0)
    rows = []
    for toward in cfg.misspec_toward:
        alt = misspec_alt(true, toward)
        for eps in cfg.misspec_eps:
            plan = surrogate_dp((1 - eps) * true + eps * alt, b, t, disc, cfg.allow_save,
                                cfg.tail)
            achieved = evaluate_policy(plan.spend, discount=disc,
                                       tables=(best.expected_now, best.recruit_pmf))
            occ_plan = state_occupancy(plan.spend, best.recruit_pmf, b, m0)
            f_best, p_best = path_errors(best.spend, occ_best, best, plan, disc)
            f_plan, p_plan = path_errors(plan.spend, occ_plan, best, plan, disc)
            terms = {"frontier_term": f_best - f_plan, "transition_term": p_best - p_plan}
            terms = {k: v if k.removesuffix("_term") in cfg.misspec_terms else 0.0
                     for k, v in terms.items()}
            rows.append({"toward": toward, "eps": float(eps),
                         "loss": v_true - float(achieved[0, b, m0]), **terms,
                         "bound": sum(terms.values()),
                         "worst_case_bound": worst_case_bound(best, plan, disc),
                         "first_spend": int(plan.spend[0, b, m0])})
    return {"rows": rows, "v_true": v_true, "first_spend_true": int(best.spend[0, b, m0]),
            "toward": list(cfg.misspec_toward)}


def worst_case_bound(true: DPResult, plan: DPResult, discount: float) -> float:
    """``2 sum_t disc^t (eps_F + disc * Vmax_{t+1} * eps_P)`` with sups over every reachable
    ``(b, m, s)``: the largest gap in expected recruits and the largest total variation
    between the recruit pmfs truncated at ``b - s``."""
    rounds, size, _ = plan.value.shape
    dev = plan.value.device
    bb = torch.arange(size, device=dev)[:, None, None]
    mm = torch.arange(size, device=dev)[None, :, None]
    ss = torch.arange(size, device=dev)[None, None, :]
    valid = (ss <= bb) & (mm >= 1) & (mm <= bb)  # reachable (b, m, s)
    if not valid.any():
        return 0.0
    gap_now = (true.expected_now - plan.expected_now).abs()  # [m, s]
    eps_f = float(gap_now[None].expand(size, -1, -1)[valid].max())
    eps_p = float(_truncated_tv(true.recruit_pmf, plan.recruit_pmf,
                                (bb - ss).clamp(min=0))[valid].max())
    vmax = [float(plan.value[i + 1].max()) if i + 1 < rounds else 0.0 for i in range(rounds)]
    return 2 * sum(discount**i * (eps_f + discount * vmax[i] * eps_p) for i in range(rounds))


def _truncated_tv(p: torch.Tensor, q: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
    """TV of ``min(R, level)`` under two pmfs ``[m, s, r]``, for levels ``[b, 1, s]``."""
    size = p.shape[-1]
    diff = p - q  # [m, s, r]
    r = torch.arange(size, device=p.device)
    head = (diff.abs()[None] * (r < level[..., None])).sum(-1)  # [b, m, s]
    tail_p = (p[None] * (r >= level[..., None])).sum(-1)
    tail_q = (q[None] * (r >= level[..., None])).sum(-1)
    return 0.5 * (head + (tail_p - tail_q).abs())
