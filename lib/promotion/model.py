"""The promotion model: the threshold ladder, the agent's configuration and the batched problem.

Levels ``l = 1..L``; ``mu_l`` is the threshold for LEAVING level ``l`` upward (our index
convention, see the package docstring); the skill grid, rewards and dynamics of a batch of
configurations are stacked into a :class:`Ladder`, whose Bellman backup is the fused operator
``icml26.kernels.bellman_interp``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from icml26.common import check_int
from icml26.kernels.bellman_interp import PAR_FIELDS, Actions, bellman_interp, ladder_actions

PAPER = "promotion"
DTYPE = torch.float64
DESIGNS = ("steady", "linear", "custom")
DESIGN_LABELS = {"steady": "steady-state", "linear": "linear slope", "custom": "custom"}
EPS_ACTION = 1e-6  # an action below this many units counts as none (gaming, effort)


# --------------------------------------------------------------------------- thresholds
def steady_state_thresholds(levels: int, gamma: float, delta: float) -> torch.Tensor:
    """``mu_l = delta l / (1 - gamma)`` for ``l = 1..L-1`` (our index convention): ``[L-1]``."""
    check_int("levels", levels, 2)
    if not 0 <= gamma < 1:
        raise ValueError(f"gamma must be in [0, 1), got {gamma}")
    if delta <= 0:
        raise ValueError(f"the steady-state ladder needs a leg-up delta > 0, got {delta}")
    return delta * torch.arange(1, levels, dtype=DTYPE) / (1 - gamma)


def levels_for_target(target: float, gamma: float, delta: float) -> int:
    """Levels ``L`` whose steady-state top stay threshold ``mu_{L-1}`` is ``>= target``.

    ``L = ceil((1-gamma) M / delta) + 1`` in our convention (the paper's ``ceil(.)`` counts
    thresholds); the ``1e-9`` guards ``ceil`` against rounding (``0.2 * 1 / 0.1 = 2.0000...04``).
    """
    if target <= 0:
        raise ValueError(f"target skill must be > 0, got {target}")
    if delta <= 0 or not 0 <= gamma < 1:
        raise ValueError(f"need delta > 0 and gamma in [0, 1), got delta={delta}, "
                         f"gamma={gamma}")
    return max(2, math.ceil((1 - gamma) * target / delta - 1e-9) + 1)


# --------------------------------------------------------------------------- config
@dataclass(frozen=True)
class PromotionConfig:
    """One agent/principal setting. Defaults: the spec's prototype (L=8, gamma=0.8,
    delta=0.1 so mu_l = 0.5 l, beta=0.9, c+=1, c-=0.5, R(l)=0.3(l-1)) and its dashboard
    grid sizes (401 skills, 161 honest-effort values)."""

    levels: int = 8
    beta: float = 0.9
    gamma: float = 0.8
    delta: float = 0.1
    c_plus: float = 1.0
    c_minus: float = 0.5
    reward_per_level: float = 0.3  # R(l) = r (l - 1)
    design: str = "steady"  # steady: delta_d l/(1-gamma); linear: slope x that; custom
    slope: float = 1.0  # multiplier of the steady-state slope for design="linear"
    design_delta: float | None = None  # leg-up the ladder was designed for (None: delta)
    custom_thresholds: tuple[float, ...] = ()  # mu_1..mu_{L-1} for design="custom"
    x0: float = 0.0  # initial skill, at level 1
    horizon: int = 40  # periods simulated (F2's x-axis 0-40)
    nx: int = 401  # skill grid points per level
    na: int = 161  # honest-effort grid points on [0, x_max] (plus the exact gaps)
    exact_gaps: bool = True  # False: the discretisation pitfall (mutation test)
    tol: float = 1e-9  # threshold comparison tolerance; 0 is the ties pitfall
    index_shift: int = 0  # 1: mu_l = delta (l-1)/(1-gamma) read in our convention (pitfall)
    grid_margin: float = 1.1  # skill grid reaches this x the safe extent (< 1: the pitfall)
    threshold_nodes: bool = True  # thresholds as grid nodes (False: V's kinks get blurred)

    @property
    def ratio(self) -> float:
        return self.c_minus / self.c_plus

    def ladder_delta(self) -> float:
        return self.delta if self.design_delta is None else self.design_delta

    def thresholds(self) -> torch.Tensor:
        """``mu_1..mu_{L-1}`` as a float64 tensor (validated strictly increasing)."""
        if self.design not in DESIGNS:
            raise ValueError(f"design must be one of {DESIGNS}, got {self.design!r}")
        if self.design == "custom":
            mu = torch.tensor(self.custom_thresholds, dtype=DTYPE)
            if mu.numel() != self.levels - 1:
                raise ValueError(f"custom_thresholds needs L-1 = {self.levels - 1} values, "
                                 f"got {mu.numel()}")
        else:
            if self.slope <= 0:
                raise ValueError(f"slope must be > 0, got {self.slope}")
            mu = self.slope * steady_state_thresholds(self.levels, self.gamma,
                                                      self.ladder_delta())
            mu = mu - self.index_shift * float(mu[0])  # the other summary's indexing
        if not torch.isfinite(mu).all() or (mu < 0).any():
            raise ValueError(f"thresholds must be finite and >= 0, got {mu.tolist()}")
        if (mu.diff() <= 0).any():
            raise ValueError(f"thresholds must be strictly increasing, got {mu.tolist()}")
        return mu

    def rewards(self) -> torch.Tensor:
        """``R(1..L) = r (l - 1)``: ``[L]``."""
        return self.reward_per_level * torch.arange(self.levels, dtype=DTYPE)

    def skill_range(self) -> float:
        """Top of the skill grid: ``grid_margin`` (10%) beyond ``max(x0, mu_{L-1} +
        delta/(1-gamma), delta (L-1)/(1-gamma))`` (the spec's grid-range pitfall: the grid must
        extend past the top threshold plus one steady-state step, or interpolation clamps V)."""
        mu_top = float(self.thresholds()[-1])
        step = self.delta / (1 - self.gamma)
        return self.grid_margin * max(self.x0, mu_top + step, step * (self.levels - 1), 1e-3)

    def validate(self) -> None:
        check_int("levels", self.levels, 2)
        check_int("horizon", self.horizon, 1)
        check_int("nx", self.nx, 3)
        check_int("na", self.na, 2)
        if not 0 <= self.beta < 1:
            raise ValueError(f"beta must be in [0, 1), got {self.beta}")
        if not 0 <= self.gamma < 1:
            raise ValueError(f"gamma must be in [0, 1), got {self.gamma}")
        if self.delta < 0:
            raise ValueError(f"delta must be >= 0, got {self.delta}")
        if self.c_plus <= 0 or self.c_minus <= 0:
            raise ValueError(f"costs must be > 0, got c_plus={self.c_plus}, "
                             f"c_minus={self.c_minus}")
        if self.c_minus >= self.c_plus:
            raise ValueError(f"the model needs c_minus < c_plus (gaming is cheaper per unit "
                             f"than improvement), got c_minus/c_plus = {self.ratio:g}")
        if self.reward_per_level < 0:
            raise ValueError(f"reward_per_level must be >= 0, got {self.reward_per_level}")
        if self.x0 < 0:
            raise ValueError(f"x0 must be >= 0, got {self.x0}")
        if not 0 <= self.tol < 1e-3:
            raise ValueError(f"tol must be in [0, 1e-3), got {self.tol}")
        if self.index_shift not in (0, 1):
            raise ValueError(f"index_shift must be 0 or 1, got {self.index_shift}")
        if not 0 < self.grid_margin <= 10:
            raise ValueError(f"grid_margin must be in (0, 10], got {self.grid_margin}")
        self.thresholds()


# --------------------------------------------------------------------------- problem
@dataclass(frozen=True)
class Ladder:
    """A batch of configurations as tensors: ``B`` problems with a common ``L``, grid sizes
    and action set. ``mu [B, L+1]`` is padded ``[-inf, mu_1..mu_{L-1}, +inf]``."""

    configs: tuple[PromotionConfig, ...]
    mu: torch.Tensor  # [B, L+1]
    reward: torch.Tensor  # [B, L]
    par: torch.Tensor  # [B, 6], columns PAR_FIELDS
    nodes: torch.Tensor  # [B, NX] sorted skill grid: uniform on [0, x_max] plus the thresholds
    grid: torch.Tensor  # [B, L, NX] the same nodes for every level (the backup's queries)
    n_a: int
    n_gap: int
    tol: float

    @property
    def batch(self) -> int:
        return self.mu.shape[0]

    @property
    def levels(self) -> int:
        return self.reward.shape[1]

    @property
    def nx(self) -> int:
        return self.grid.shape[2]


def make_ladder(configs: Sequence[PromotionConfig], device=None) -> Ladder:
    """Stack configurations sharing ``levels, nx, na, exact_gaps, tol`` into a :class:`Ladder`."""
    configs = tuple(configs)
    if not configs:
        raise ValueError("need at least one configuration")
    for c in configs:
        c.validate()
    keys = {(c.levels, c.nx, c.na, c.exact_gaps, c.tol, c.threshold_nodes) for c in configs}
    if len(keys) != 1:
        raise ValueError(f"a batch needs one (levels, nx, na, exact_gaps, tol, "
                         f"threshold_nodes), got {keys}")
    c0 = configs[0]
    inf = torch.tensor([math.inf], dtype=DTYPE)
    mu = torch.stack([torch.cat([-inf, c.thresholds(), inf]) for c in configs])
    reward = torch.stack([c.rewards() for c in configs])
    x_hi = torch.tensor([c.skill_range() for c in configs], dtype=DTYPE)
    cols = {"a_step": x_hi / (c0.na - 1),
            **{k: torch.tensor([getattr(c, k) for c in configs], dtype=DTYPE)
               for k in ("gamma", "delta", "beta", "c_plus", "c_minus")}}
    par = torch.stack([cols[k] for k in PAR_FIELDS], dim=1)
    # V has kinks at the thresholds: make them nodes, or interpolation blurs the kink and an
    # exact-gap target looks worse than undershooting by a grid step and gaming the rest
    if c0.threshold_nodes:
        uniform = torch.linspace(0, 1, c0.nx, dtype=DTYPE)[None, :] * x_hi[:, None]
        nodes = torch.sort(torch.cat([uniform, mu[:, 1:-1]], dim=1), dim=1).values
    else:  # same node count, uniform: thresholds fall between nodes
        nodes = torch.linspace(0, 1, c0.nx + c0.levels - 1, dtype=DTYPE)[None, :] * x_hi[:, None]
    grid = nodes[:, None, :].expand(-1, c0.levels, -1).contiguous()
    n_gap = c0.levels - 1 if c0.exact_gaps else 0
    return Ladder(configs, *(t.to(device) for t in (mu, reward, par, nodes, grid)),
                  n_a=c0.na, n_gap=n_gap, tol=c0.tol)


def backup(ladder: Ladder, v: torch.Tensor, xq: torch.Tensor | None = None,
           impl: str = "auto"):
    """One Bellman backup ``(T V, greedy candidate)`` at ``xq [B, L, Q]`` (default: the grid)."""
    xq = ladder.grid if xq is None else xq
    return bellman_interp(v, ladder.nodes, xq, ladder.mu, ladder.reward, ladder.par,
                          ladder.n_a, ladder.n_gap, ladder.tol, impl=impl)


def decode(ladder: Ladder, cand: torch.Tensor, x: torch.Tensor,
           level: torch.Tensor) -> Actions:
    """Actions of candidate indices ``cand`` at skills ``x`` on 0-based levels (broadcast)."""
    return ladder_actions(cand, x, level, ladder.mu, ladder.reward, ladder.par, ladder.n_a,
                          ladder.tol)
