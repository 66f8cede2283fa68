"""The studies behind the figures and claims: F1's phase grid, F5's greedy principal, the
whole study (base agent, sweeps, targets) and its scale presets, and the seeded draws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from icml26 import common
from icml26.common import check_int
from icml26.promotion.model import DTYPE, PromotionConfig


@dataclass(frozen=True)
class PhaseConfig:
    """F1: the spec's L = 2 prototype (R = (0, r), mu_1 = 1, delta = 0, c+ = 1, x0 = 0) on a
    grid of c-/c+ in (0, 1) and beta*gamma in [0, bg_max]. beta is fixed and gamma =
    (beta*gamma)/beta (beta = 0.96 so that beta*gamma = 0.95 keeps gamma < 1); one extra row of
    truly myopic agents (beta = 0, gamma = myopic_gamma) joins the beta*gamma = 0 row."""

    n_ratio: int = 20
    n_discount: int = 20
    bg_max: float = 0.95
    beta: float = 0.96
    myopic_gamma: float = 0.8
    reward: float = 1.0  # R(2) - R(1); too small and the agent never tries (spec pitfall)
    threshold: float = 1.0
    nx: int = 101
    na: int = 41
    jitter: float = 0.4  # seeded offset of each cell inside its grid cell, in grid steps
    exact_gaps: bool = True
    backups: int = 0  # 0: iterate to convergence; k > 0: stop after k VI backups (pitfall)

    def validate(self) -> None:
        check_int("n_ratio", self.n_ratio, 2)
        check_int("n_discount", self.n_discount, 2)
        check_int("backups", self.backups, 0)
        if not 0 < self.bg_max < self.beta < 1:
            raise ValueError(f"need 0 < bg_max < beta < 1, got bg_max={self.bg_max}, "
                             f"beta={self.beta}")
        if not 0 <= self.jitter < 0.5:
            raise ValueError(f"jitter must be in [0, 0.5) grid steps, got {self.jitter}")


@dataclass(frozen=True)
class GreedyConfig:
    """F5 (optional in the spec): a greedy principal on a ``levels``-level ladder with the
    base agent; each threshold is searched over ``candidates`` values up to ``max_step``
    steady-state steps above the previous one."""

    levels: int = 6
    candidates: int = 16
    max_step: float = 4.0
    nx: int = 101
    na: int = 41
    horizon: int = 30

    def validate(self) -> None:
        check_int("levels", self.levels, 2)
        check_int("candidates", self.candidates, 2)
        if self.max_step <= 0:
            raise ValueError(f"max_step must be > 0, got {self.max_step}")


@dataclass(frozen=True)
class StudyConfig:
    """Everything the figures and claims use. ``base`` is the spec's L = 8 prototype (F2 (a),
    the F4 ladder and rewards); ``steep`` the slope multiplier of F2 (b); ``shallow`` that of
    F2 (d), the naive equal-step ladder of the headline's second measurement (issue 46: half as
    steep as the designed ladder, the mirror of (b), chosen from the theory before any run)."""

    base: PromotionConfig = PromotionConfig()
    phase: PhaseConfig = PhaseConfig()
    steep: float = 2.0
    shallow: float = 0.5
    targets: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0)
    sens_levels: int = 10  # F4 ladder: the base design's mu_l = 0.5 l with 10 levels
    gammas: tuple[float, ...] = tuple(np.round(np.linspace(0.3, 0.95, 14), 4).tolist())
    deltas: tuple[float, ...] = tuple(np.round(np.linspace(0.0, 0.3, 13), 4).tolist())
    sens_horizon: int = 60
    sens_nx: int = 201
    sens_na: int = 81
    x0_jitter: float = 0.5  # x0 ~ U[0, x0_jitter * mu_1) drawn from the seed
    greedy: GreedyConfig = GreedyConfig()

    def validate(self) -> None:
        self.base.validate()
        self.phase.validate()
        self.greedy.validate()
        if self.steep <= 0:
            raise ValueError(f"steep must be > 0, got {self.steep}")
        if not 0 < self.shallow < 1:
            raise ValueError(f"shallow must be in (0, 1), got {self.shallow}")
        if not self.targets or min(self.targets) <= 0:
            raise ValueError(f"targets must be positive skills, got {self.targets}")
        if not 0 <= self.x0_jitter < 1:
            raise ValueError(f"x0_jitter must be in [0, 1), got {self.x0_jitter}")


SCALES = {
    "quick": StudyConfig(),
    # closer to the paper's resolution: finer grids and sweeps (minutes on CPU, seconds on GPU)
    "paper": StudyConfig(base=PromotionConfig(nx=801, na=321),
                         phase=PhaseConfig(n_ratio=40, n_discount=40, nx=201, na=81),
                         gammas=tuple(np.round(np.linspace(0.3, 0.95, 27), 4).tolist()),
                         deltas=tuple(np.round(np.linspace(0.0, 0.3, 25), 4).tolist()),
                         sens_nx=401, sens_na=161),
}


def config_for(scale: str) -> StudyConfig:
    """The study preset named ``scale`` ("quick" | "paper")."""
    return common.config_for(SCALES, scale)


def seeded_generator(seed: int | None, salt: int) -> torch.Generator | None:
    """The generator of one figure's draws (``seed * 1000 + salt``), None without a seed."""
    return None if seed is None else common.generator(int(seed) * 1000 + salt)


def uniform_draws(g: torch.Generator | None, n: int, lo: float, hi: float) -> torch.Tensor:
    """``n`` draws from ``U[lo, hi)``; without a generator, the midpoint ``n`` times."""
    if g is None:
        return torch.full((n,), (lo + hi) / 2, dtype=DTYPE) if n else torch.zeros(0)
    return lo + (hi - lo) * torch.rand(n, generator=g, dtype=DTYPE)
