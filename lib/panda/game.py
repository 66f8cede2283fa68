"""PANDA, the model: the entropy-regularised zero-sum Markov game, its values, soft best
responses and the Nikaido-Isoda gap.

Games parameterised by an upper-level ``x``, regularised values by policy evaluation (a linear
solve), soft best responses (soft policy iteration over the ``icml26.kernels.soft_bellman``
backup), the NI gap and the upper-level objective ``f``. The exact saddle point lives in
:mod:`icml26.panda.equilibrium`; see :mod:`icml26.panda` for the paper.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import torch

from icml26.common import check_int
from icml26.kernels.soft_bellman import soft_bellman

DTYPE = torch.float64
TARGETS = ("reachable", "pure", "mixed")

# --------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class GameConfig:
    """A random instance family. Defaults: the issue's Markov game (S = 3, 3 x 3 actions,
    gamma = 0.9) with the spec probe's tau = 0.3, x in R^2 and incentive cost 0.01."""

    n_states: int = 3  # issue: S = 3
    n_actions: tuple[int, int] = (3, 3)  # spec: 3 x 3 actions in the Markov game
    n_features: int = 2  # spec: x in R^2 (so Phi can be drawn as a 2-D landscape)
    tau: float = 0.3  # spec probe
    gamma: float = 0.9  # spec
    incentive_cost: float = 0.01  # spec probe: 0.01 ||x||^2
    target: str = "reachable"  # ours: the equilibrium at a hidden incentive x_dag (below)
    target_radius: float = 2.5  # ours: |x_dag|, so Phi* <= lam |x_dag|^2 = 0.0625
    reward_scale: float = 1.0  # ours: r0 ~ N(0, 1)
    feature_scale: float = 0.5  # ours: incentive features ~ N(0, 0.5^2)

    def validate(self) -> GameConfig:
        check_int("n_states", self.n_states, 1)
        if len(self.n_actions) != 2:
            raise ValueError(f"n_actions must be a pair (n, m), got {self.n_actions!r}")
        for k in self.n_actions:
            check_int("number of actions", k, 1)
        check_int("n_features", self.n_features, 0)
        if not self.tau > 0:
            raise ValueError(f"tau must be > 0, got {self.tau}")
        if not 0 <= self.gamma < 1:
            raise ValueError(f"gamma must be in [0, 1), got {self.gamma}")
        if self.target_radius < 0 or not (self.reward_scale > 0 and self.feature_scale > 0):
            raise ValueError(f"need target_radius >= 0 and positive scales, got "
                             f"{self.target_radius}, {self.reward_scale}, {self.feature_scale}")
        if self.incentive_cost < 0:
            raise ValueError(f"incentive_cost must be >= 0, got {self.incentive_cost}")
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {self.target!r}")
        return self



# --------------------------------------------------------------------------- the game
@dataclass(frozen=True, eq=False)
class MarkovGame:
    """Tensors of one instance (float64).

    ``r0 [S, n, m]``, ``feats [D, S, n, m]``, ``P [S, n, m, S]`` (rows sum to 1),
    ``init [S]`` (rho0, the start distribution of the NI gap and of V), targets
    ``pi_tgt [S, n]``, ``nu_tgt [S, m]``.
    """

    r0: torch.Tensor
    feats: torch.Tensor
    P: torch.Tensor
    init: torch.Tensor
    pi_tgt: torch.Tensor
    nu_tgt: torch.Tensor
    tau: float
    gamma: float
    incentive_cost: float
    x_dag: torch.Tensor  # [D] the incentive that induces reachable targets (diagnostics)

    @property
    def n_states(self) -> int:
        return self.r0.shape[0]

    @property
    def n_actions(self) -> tuple[int, int]:
        return self.r0.shape[1], self.r0.shape[2]

    @property
    def n_features(self) -> int:
        return self.feats.shape[0]

    @functools.cached_property
    def _swapped(self) -> MarkovGame:
        return MarkovGame(-self.r0.transpose(1, 2), -self.feats.transpose(2, 3),
                          self.P.transpose(1, 2), self.init, self.nu_tgt, self.pi_tgt,
                          self.tau, self.gamma, self.incentive_cost, self.x_dag)

    def swapped(self) -> MarkovGame:
        """The game seen by the minimiser as a maximiser: reward ``-r`` with actions swapped.
        Its value is ``-V`` of the original game for the same pair of policies."""
        return self._swapped

    def to(self, device) -> MarkovGame:
        t = {k: getattr(self, k).to(device) for k in
             ("r0", "feats", "P", "init", "pi_tgt", "nu_tgt", "x_dag")}
        return replace(self, **t)



# --------------------------------------------------------------------------- values
def batch_x(game: MarkovGame, x) -> torch.Tensor:
    x = torch.as_tensor(x, dtype=game.r0.dtype, device=game.r0.device)
    if x.ndim == 1:
        x = x[None]
    if x.ndim != 2 or x.shape[1] != game.n_features:
        raise ValueError(f"x must be [D] or [B, D] with D = {game.n_features}, got shape "
                         f"{tuple(x.shape)}")
    return x


def reward(game: MarkovGame, x: torch.Tensor) -> torch.Tensor:
    """``r_x``: ``[B, D] -> [B, S, n, m]``."""
    return game.r0 + torch.einsum("bd,dsac->bsac", x, game.feats)


def policy_value(game: MarkovGame, x: torch.Tensor, pi: torch.Tensor,
                 nu: torch.Tensor) -> torch.Tensor:
    """Regularised value ``V_x^{pi,nu}`` by a linear solve ``(I - gamma P_{pi nu}) V = r``.

    ``x [B, D]``, ``pi [B, S, n]``, ``nu [B, S, m]`` -> ``V [B, S]``. Differentiable.
    """
    s, (n, m) = game.n_states, game.n_actions
    r = reward(game, x)
    joint = pi[..., :, None] * nu[..., None, :]  # [B, S, n, m]
    r_pn = (joint * r).sum((-1, -2))
    r_pn = r_pn - game.tau * torch.special.xlogy(pi, pi).sum(-1) \
        + game.tau * torch.special.xlogy(nu, nu).sum(-1)
    p_pn = (joint.reshape(-1, s, 1, n * m) @ game.P.reshape(s, n * m, s))[..., 0, :]
    eye = torch.eye(s, dtype=r.dtype, device=r.device)
    return torch.linalg.solve(eye - game.gamma * p_pn, r_pn[..., None])[..., 0]


def backup(game: MarkovGame, x: torch.Tensor, V: torch.Tensor, opp: torch.Tensor,
           impl: str = "auto") -> tuple[torch.Tensor, torch.Tensor]:
    """Soft Bellman backup of the maximiser against ``opp`` (the kernel): ``(value, policy)``."""
    return soft_bellman(x, game.r0, game.feats, game.P, V, opp, game.tau, game.gamma,
                        impl=impl)


@dataclass
class BestResponse:
    policy: torch.Tensor  # [B, S, n]
    value: torch.Tensor  # [B, S]: V of (best response, opponent)
    iterations: int


def best_response(game: MarkovGame, x: torch.Tensor, opp: torch.Tensor, player: str = "max",
                  start: torch.Tensor | None = None, tol: float = 1e-6, max_iter: int = 100,
                  impl: str = "auto") -> BestResponse:
    """Soft best response to a fixed opponent by soft policy iteration (no gradients).

    ``player="max"``: the maximiser's response to ``nu = opp``; ``"min"``: the minimiser's
    response to ``pi = opp`` (value reported in the original game's sign). Each step evaluates
    the current policy (a linear solve on the MDP induced by the opponent) and improves it
    with one soft Bellman backup (the kernel). Soft policy iteration is Newton's method on
    the soft Bellman equation, so once a step moves the policy by less than ``tol`` (sup norm;
    default 1e-6) the remaining error is ``O(tol^2)``: it stops there and returns the
    backed-up value. 2-3 steps from a warm start, ~6 from uniform.
    """
    if player not in ("max", "min"):
        raise ValueError(f"player must be 'max' or 'min', got {player!r}")
    view = game if player == "max" else game.swapped()
    x = batch_x(game, x)
    s, n = view.n_states, view.n_actions[0]
    tau, gam = view.tau, view.gamma
    with torch.no_grad():
        pol = (torch.full((x.shape[0], s, n), 1.0 / n, dtype=x.dtype, device=x.device)
               if start is None else start.detach())
        r_o = (reward(view, x) @ opp[..., None])[..., 0]  # [B, S, n]: opponent marginalised
        p_o = (view.P.transpose(-1, -2) @ opp[:, :, None, :, None])[..., 0]  # [B, S, n, T]
        ent = tau * torch.special.xlogy(opp, opp).sum(-1)
        eye = torch.eye(s, dtype=x.dtype, device=x.device)
        steps = 0
        while steps < max_iter:
            steps += 1
            r_pi = (pol * r_o).sum(-1) - tau * torch.special.xlogy(pol, pol).sum(-1) + ent
            p_pi = (pol[..., None, :] @ p_o)[..., 0, :]
            v = torch.linalg.solve(eye - gam * p_pi, r_pi[..., None])[..., 0]
            value, new = backup(view, x, v, opp, impl=impl)
            delta = float((new - pol).abs().max())
            pol = new
            if delta < tol:
                break
    return BestResponse(pol, value if player == "max" else -value, steps)


def ni_gap(game: MarkovGame, x, pi: torch.Tensor, nu: torch.Tensor,
           impl: str = "auto") -> torch.Tensor:
    """Nikaido-Isoda gap ``rho0 . (V^{dagger,nu} - V^{pi,dagger})`` for each row: ``[B]``."""
    x = batch_x(game, x)
    hi = best_response(game, x, nu, "max", impl=impl).value
    lo = best_response(game, x, pi, "min", impl=impl).value
    return (hi - lo) @ game.init


def upper_objective(game: MarkovGame, x: torch.Tensor, pi: torch.Tensor,
                    nu: torch.Tensor) -> torch.Tensor:
    """``f(x, pi, nu)``: ``[B, D], [B, S, n], [B, S, m] -> [B]``."""
    dev = ((pi - game.pi_tgt) ** 2).sum(-1) + ((nu - game.nu_tgt) ** 2).sum(-1)
    return dev.mean(-1) + game.incentive_cost * (x**2).sum(-1)



# --------------------------------------------------------------------------- logits
def split_logits(game: MarkovGame, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    s, (n, m) = game.n_states, game.n_actions
    zp = z[..., : s * n].reshape(*z.shape[:-1], s, n)
    zn = z[..., s * n :].reshape(*z.shape[:-1], s, m)
    return zp, zn


def policies(game: MarkovGame, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax policies from stacked logits ``z [B, S (n + m)]``."""
    zp, zn = split_logits(game, z)
    return torch.softmax(zp, -1), torch.softmax(zn, -1)

