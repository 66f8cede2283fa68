"""The heterogeneous recruitment process, simulated with common random numbers.

Every policy fixes a spend per round and (except the fixed-3 norm) hands the coupons out
greedily by the *individual* marginals; recruits form the next frontier.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from icml26.common import check_choice

from .dp import DPResult
from .model import DTYPE, greedy_allocation, marginals, tilt

POLICIES = ("dp", "uniform", "fixed3", "greedy", "spend_all")
POLICY_LABELS = {
    "dp": "surrogate DP",
    "uniform": "uniform per round",
    "fixed3": "fixed 3 per person",
    "greedy": "greedy each round",
    "spend_all": "spend all now",
}


@dataclass(frozen=True)
class Population:
    """Common random numbers for ``reps`` runs: the person in round ``t``, slot ``j`` has the
    same tilt and the same capacity draw under every policy."""

    theta: torch.Tensor  # [reps, T, slots]
    capacity: torch.Tensor  # [reps, T, slots] (int64)
    pmfs: torch.Tensor  # [reps, T, slots, K+1]


def draw_population(base: torch.Tensor, heterogeneity: float, reps: int, rounds: int,
                    slots: int, generator: torch.Generator) -> Population:
    """Draws on the (CPU) ``generator``, moved to ``base``'s device."""
    theta = heterogeneity * torch.randn(reps, rounds, slots, generator=generator,
                                        dtype=DTYPE).to(base.device)
    pmfs = tilt(base, theta)
    u = torch.rand(reps, rounds, slots, 1, generator=generator, dtype=DTYPE).to(base.device)
    capacity = (pmfs.cumsum(-1) < u).sum(-1).clamp(max=base.numel() - 1)
    return Population(theta, capacity, pmfs)


SpendRule = Callable[[int, torch.Tensor, torch.Tensor], torch.Tensor]


def spend_rules(dp: DPResult | None, rounds: int) -> dict[str, SpendRule]:
    """Coupons to spend this round, ``(t, budget_left [R], frontier [R]) -> [R]``."""
    rules: dict[str, SpendRule] = {
        "spend_all": lambda t, b, m: b,
        "uniform": lambda t, b, m: b // (rounds - t),
        "fixed3": lambda t, b, m: torch.minimum(b, 3 * m),
        "greedy": lambda t, b, m: b,  # myopic: buys every positive marginal it can afford
    }
    if dp is not None:
        rules["dp"] = lambda t, b, m: dp.spend[t, b, torch.minimum(m, b)]
    return rules


def simulate(policy: str, pop: Population, budget: int, m0: int, rounds: int,
             dp: DPResult | None = None, discount: float = 1.0,
             start_round: int = 0) -> torch.Tensor:
    """Total (discounted) recruits of each run under ``policy``: ``-> [reps]``.

    Each round the policy fixes a spend ``s``; ``fixed3`` hands out 3 coupons per person in
    frontier order, every other policy allocates ``s`` greedily by individual marginals.
    ``start_round`` starts the process mid-way (rounds ``start_round..rounds-1``).
    """
    check_choice("policy", policy, POLICIES)
    if policy == "dp" and dp is None:
        raise ValueError("policy 'dp' needs the DP tables (dp=...)")
    reps, _, slots = pop.theta.shape
    k = pop.pmfs.shape[-1] - 1
    rule = spend_rules(dp, rounds)[policy]
    dev = pop.theta.device
    b = torch.full((reps,), budget, dtype=torch.long, device=dev)
    m = torch.full((reps,), min(m0, slots), dtype=torch.long, device=dev)
    total = torch.zeros(reps, dtype=DTYPE, device=dev)
    slot = torch.arange(slots, device=dev)
    for t in range(start_round, rounds):
        s = torch.minimum(torch.as_tensor(rule(t, b, m), dtype=torch.long), b)
        s = torch.where(m > 0, s, torch.zeros_like(s))
        present = slot[None, :] < m[:, None]
        if policy == "fixed3":
            coupons = (s[:, None] - 3 * slot[None, :]).clamp(0, 3) * present
        else:
            marg = marginals(pop.pmfs[:, t], k) * present[..., None]
            coupons = greedy_allocation(marg, s)
        recruits = torch.minimum(coupons, pop.capacity[:, t]).sum(-1)
        total += discount ** (t - start_round) * recruits
        # coupons handed out are gone, even ones nobody can use; only the myopic greedy
        # keeps what it could not place (it buys positive marginals only)
        b = b - (coupons.sum(-1) if policy == "greedy" else s)
        m = recruits.clamp(max=slots)
    return total


def mean_se(x: torch.Tensor) -> tuple[float, float]:
    return float(x.mean()), float(x.std(unbiased=True) / math.sqrt(x.numel()))
