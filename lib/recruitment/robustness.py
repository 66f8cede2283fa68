"""F4: robustness of the surrogate DP to a misspecified capacity pmf, and the error bound.

Plan with a wrong pmf, act in the true (homogeneous) model, evaluate both exactly by the DP,
and compare the loss with a simulation-lemma bound split into a frontier term (the gap in
expected recruits) and a transition term (the total variation of the truncated recruit pmfs).
"""

from __future__ import annotations

import torch

from .dp import evaluate_policy, surrogate_dp
from .experiments import RecruitmentConfig
from .model import population_pmf, validate_pmf


def figure_misspec_data(cfg: RecruitmentConfig, alt: torch.Tensor | None = None) -> dict:
    """F4: loss of planning with ``(1-eps) p + eps p_alt`` when ``p`` is true, and the bound.

    Values are exact (policy evaluation by the same DP), not Monte Carlo: the DP computes
    the expectation exactly, so the loss carries no sampling noise and loss(0) = 0 exactly.
    ``p_alt`` defaults to the uniform pmf on ``0..K`` (mean K/2: a heavier tail).
    """
    cfg.validate()
    true = population_pmf(cfg.base_pmf(), cfg.heterogeneity)
    alt = torch.full_like(true, 1.0 / true.numel()) if alt is None else validate_pmf(alt)
    b, t, disc = cfg.budget, cfg.rounds, cfg.discount
    best = surrogate_dp(true, b, t, disc)
    v_true = float(best.value[0, b, min(cfg.m0, b)])
    size = b + 1
    bb = torch.arange(size)[:, None, None]
    mm = torch.arange(size)[None, :, None]
    ss = torch.arange(size)[None, None, :]
    valid = (ss <= bb) & (mm >= 1) & (mm <= bb)  # reachable (b, m, s)
    lvl = (bb - ss).clamp(min=0)  # truncation level b - s
    rows = []
    for eps in cfg.misspec_eps:
        model = (1 - eps) * true + eps * alt
        plan = surrogate_dp(model, b, t, disc, cfg.allow_save, cfg.tail)
        achieved = evaluate_policy(plan.spend, true, disc)
        loss = v_true - float(achieved[0, b, min(cfg.m0, b)])
        # frontier term: largest gap in expected recruits
        gap_now = (best.expected_now - plan.expected_now).abs()  # [m, s]
        eps_f = float(gap_now[None].expand(size, -1, -1)[valid].max()) if valid.any() else 0.0
        # transition term: TV between the truncated recruit pmfs at level b - s
        eps_p = float(_truncated_tv(best.recruit_pmf, plan.recruit_pmf, lvl)[valid].max()) \
            if valid.any() else 0.0
        vmax = [float(plan.value[i + 1].max()) if i + 1 < t else 0.0 for i in range(t)]
        frontier = 2 * sum(disc**i * eps_f for i in range(t))
        transition = 2 * sum(disc**i * disc * vmax[i] * eps_p for i in range(t))
        rows.append({"eps": float(eps), "loss": loss, "frontier_term": frontier,
                     "transition_term": transition, "bound": frontier + transition})
    return {"rows": rows, "v_true": v_true}


def _truncated_tv(p: torch.Tensor, q: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
    """TV of ``min(R, level)`` under two pmfs ``[m, s, r]``, for levels ``[b, 1, s]``."""
    size = p.shape[-1]
    diff = p - q  # [m, s, r]
    r = torch.arange(size)
    head = (diff.abs()[None] * (r < level[..., None])).sum(-1)  # [b, m, s]
    tail_p = (p[None] * (r >= level[..., None])).sum(-1)
    tail_q = (q[None] * (r >= level[..., None])).sum(-1)
    return 0.5 * (head + (tail_p - tail_q).abs())
