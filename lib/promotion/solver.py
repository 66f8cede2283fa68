"""The solver: optimal values and policy of a batch of ladders (policy iteration on the fused
Bellman backup), the greedy action at exact states, and the simulated optimal agent.

Converged when a full backup changes ``V`` by at most ``1e-8``; ``V`` between grid points is
linear interpolation. Actions: ``a+`` on a grid plus the exact gaps ``mu_j - x`` (see the
package docstring for why the gaps matter).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from icml26.kernels.bellman_interp import (
    PAR_FIELDS,
    Actions,
    backup_table,
    interp_index,
    table_backup,
)
from icml26.promotion.model import DTYPE, Ladder, PromotionConfig, backup, decode, make_ladder


@dataclass(frozen=True)
class Solution:
    """Converged values ``V [B, L, NX]`` on the grid, the greedy candidate per grid state,
    and the Bellman residual ``max |T V - V|`` per configuration."""

    ladder: Ladder
    value: torch.Tensor
    policy: torch.Tensor
    residual: torch.Tensor
    backups: int
    impl: str = "auto"


def _evaluate(ladder: Ladder, policy: torch.Tensor) -> torch.Tensor:
    """Exact value of a fixed grid policy: solve ``(I - beta P) V = r`` (sparse, per batch).

    ``P`` moves each grid state to the two grid nodes around its next skill (the same linear
    interpolation as the backup), so this is the policy's value in the discretised MDP.
    """
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    bsz, n_levels, n_x = ladder.grid.shape
    level = torch.arange(n_levels, device=policy.device).reshape(1, -1, 1)
    act = decode(ladder, policy, ladder.grid, level)
    i0, w = interp_index(act.x_next, ladder.nodes)
    beta = ladder.par[:, PAR_FIELDS.index("beta")].reshape(-1, 1, 1)
    bidx = torch.arange(bsz, device=policy.device).reshape(-1, 1, 1)
    col = ((bidx * n_levels + act.level_next) * n_x + i0).reshape(-1).cpu().numpy()
    n = bsz * n_levels * n_x
    rows = np.arange(n)
    w0 = (beta * (1 - w)).expand(bsz, n_levels, n_x).reshape(-1).cpu().numpy()
    w1 = (beta * w).expand(bsz, n_levels, n_x).reshape(-1).cpu().numpy()
    a = sp.csc_matrix((np.concatenate([np.ones(n), -w0, -w1]),
                       (np.concatenate([rows, rows, rows]),
                        np.concatenate([rows, col, col + 1]))), shape=(n, n))
    v = spla.spsolve(a, act.reward.reshape(-1).cpu().numpy())
    return torch.as_tensor(v, dtype=DTYPE, device=policy.device).reshape(bsz, n_levels, n_x)


def solve(ladder: Ladder, impl: str = "auto", tol: float = 1e-8,
          max_backups: int = 200, method: str = "pi") -> Solution:
    """Optimal values and policy of every configuration in the batch.

    ``method="pi"`` (default): Bellman backup -> exact evaluation of the greedy policy ->
    backup ... (Howard's policy iteration, a handful of backups); ``"vi"``: plain value
    iteration (``O(log(tol)/log(beta))`` backups, for tests). Both stop when one backup moves
    ``V`` by at most ``tol`` in every configuration; the returned policy is greedy for the
    returned ``V``. On CPU with the torch path the V-independent part of the backup
    (candidate transitions) is tabulated once.
    """
    if method not in ("pi", "vi"):
        raise ValueError(f"method must be 'pi' or 'vi', got {method!r}")
    if impl not in ("auto", "triton", "torch"):
        raise ValueError(f"impl must be 'auto', 'triton' or 'torch', got {impl!r}")
    on_torch = impl == "torch" or (impl == "auto" and not ladder.grid.is_cuda)
    table = None
    if on_torch:
        table = backup_table(ladder.nodes, ladder.grid, ladder.mu, ladder.reward, ladder.par,
                             ladder.n_a, ladder.n_gap, ladder.tol)

    def step(v):
        return table_backup(v, table) if table is not None else backup(ladder, v, impl=impl)

    v = torch.zeros_like(ladder.grid)
    res = torch.full((ladder.batch,), math.inf, dtype=DTYPE)
    for n in range(1, max_backups + 1):
        tv, policy = step(v)
        res = (tv - v).abs().amax(dim=(1, 2))
        if float(res.max()) <= tol:
            return Solution(ladder, v, policy, res.cpu(), n, impl)
        v = _evaluate(ladder, policy) if method == "pi" else tv
    raise RuntimeError(f"no convergence after {max_backups} backups: residual "
                       f"{float(res.max()):.3g} > {tol}")


def residual(sol: Solution, impl: str = "auto") -> torch.Tensor:
    """``max |T V - V|`` per configuration, recomputed with a fresh backup."""
    tv, _ = backup(sol.ladder, sol.value, impl=impl)
    return (tv - sol.value).abs().amax(dim=(1, 2))


def act(sol: Solution, level: torch.Tensor, x: torch.Tensor) -> Actions:
    """Greedy action at EXACT states (not grid points): ``level [B]`` (1-based), ``x [B]``.

    One-step lookahead on the converged ``V`` with the same candidate set, evaluated at the
    agent's own skill (so the exact gaps are exact for it).
    """
    lad = sol.ladder
    lvl0 = (level - 1).long()
    xq = x.to(DTYPE)[:, None, None].expand(-1, lad.levels, 1).contiguous()
    _, best = backup(lad, sol.value, xq, impl=sol.impl)
    cand = best[torch.arange(lad.batch, device=best.device), lvl0, 0]
    return decode(lad, cand, x.to(DTYPE), lvl0)


def simulate(sol: Solution, x0: torch.Tensor | None = None,
             horizon: int | None = None) -> dict[str, torch.Tensor]:
    """Trajectories of the optimal agent from level 1: ``level [B, T+1]`` (1-based),
    ``skill [B, T+1]``, ``a_plus``, ``a_minus``, ``payoff`` ``[B, T]``."""
    lad = sol.ladder
    dev = lad.grid.device
    if x0 is None:
        x0 = torch.tensor([c.x0 for c in lad.configs], dtype=DTYPE)
    horizon = horizon or max(c.horizon for c in lad.configs)
    level = torch.ones(lad.batch, dtype=torch.long, device=dev)
    x = x0.to(device=dev, dtype=DTYPE).clone()
    out = {"level": [level], "skill": [x], "a_plus": [], "a_minus": [], "payoff": []}
    for _ in range(horizon):
        a = act(sol, level, x)
        level, x = a.level_next + 1, a.x_next
        out["level"].append(level)
        out["skill"].append(x)
        out["a_plus"].append(a.a_plus)
        out["a_minus"].append(a.a_minus)
        out["payoff"].append(a.reward)
    return {k: torch.stack(v, dim=1) for k, v in out.items()}


def solve_configs(configs: Sequence[PromotionConfig], impl: str = "auto",
                  device=None) -> Solution:
    return solve(make_ladder(configs, device), impl=impl)


def truncated_vi(ladder: Ladder, backups: int, impl: str) -> Solution:
    """Plain value iteration stopped after ``backups`` steps, converged or not (the
    convergence pitfall: the agent then plans over a ``backups``-period horizon)."""
    v = torch.zeros_like(ladder.grid)
    for _ in range(backups):
        tv, policy = backup(ladder, v, impl=impl)
        res = (tv - v).abs().amax(dim=(1, 2))
        v = tv
    return Solution(ladder, v, policy, res, backups, impl)
