"""PANDA, the method: PANDA itself, the trace every method records and the shared schedule.

The baselines live in :mod:`icml26.panda.baselines`. See :mod:`icml26.panda` for the paper
and the equations, :mod:`icml26.panda.game` for the game.

First-order oracle calls (the currency of the equal-budget comparison): one call is one
evaluation of a lower-level value ``V_x(pi, nu)`` by policy evaluation, with or without its
first-order gradient. PANDA spends one call per soft-policy-iteration step of each best
response (an evaluation, then the soft-greedy improvement) and two per iteration for
``V(pi', nu)`` and ``V(pi, nu')`` with their gradients (Danskin).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from icml26.common import check_int
from icml26.panda.equilibrium import phi, solve_equilibrium
from icml26.panda.game import (
    DTYPE,
    MarkovGame,
    batch_x,
    best_response,
    policy_value,
    split_logits,
    upper_objective,
)


# --------------------------------------------------------------------------- methods
@dataclass(frozen=True)
class PandaConfig:
    """PANDA's schedule. Defaults: the spec probe (Adam 0.02 on (x, logits), rho_k = 1 +
    0.01 k, 6000 iterations, a cold start at x0 = 0 with uniform policies)."""

    iterations: int = 6000  # spec probe (a cold start needs them: 1000 leave NI ~ 2e-3)
    lr: float = 0.02  # spec probe
    rho0: float = 1.0  # spec probe
    rho_growth: float = 0.01  # spec probe; 0 freezes the penalty (the mutation test)
    anneal: float = 0.2  # ours: lr decays linearly to 1% over this final fraction
    lr_x: float = 0.02  # spec probe: one Adam(0.02) on x and the logits
    # NOT the paper's method: start (pi, nu) at the exact saddle point of x0 (Shapley + Newton
    # with analytic second-order Jacobians); an explorer option, first_order_only fails with it
    warm_start: bool = False
    inner: str = "danskin"  # "unrolled": differentiate through the inner max (the pitfall)
    record_every: int = 60  # 100 records over the default run

    def validate(self) -> PandaConfig:
        check_int("iterations", self.iterations, 1)
        check_int("record_every", self.record_every, 1)
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.inner not in ("danskin", "unrolled"):
            raise ValueError(f"inner must be 'danskin' or 'unrolled', got {self.inner!r}")
        if not self.lr_x > 0:
            raise ValueError(f"lr_x must be > 0, got {self.lr_x}")
        if not 0 <= self.anneal <= 1:
            raise ValueError(f"anneal must be in [0, 1], got {self.anneal}")
        if not self.rho0 > 0 or self.rho_growth < 0:
            raise ValueError(f"need rho0 > 0 and rho_growth >= 0, got {self.rho0}, "
                             f"{self.rho_growth}")
        return self


@dataclass
class Trace:
    """What a method did, recorded every few iterations (lists of floats / [D] lists)."""

    method: str
    iteration: list[int] = field(default_factory=list)
    x: list[list[float]] = field(default_factory=list)
    ni: list[float] = field(default_factory=list)  # NI gap of the method's own (pi, nu)
    rho: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)  # first-order oracle calls spent so far
    phi: list[float] = field(default_factory=list)  # true Phi(x_k), filled by `evaluate`
    seconds: float = 0.0  # wall clock, for benchmarks only (never a claim)
    final_z: torch.Tensor | None = None

    def record(self, k, x, ni=math.nan, rho=math.nan, calls=0):
        self.iteration.append(int(k))
        self.x.append([float(v) for v in x.reshape(-1)])
        self.ni.append(float(ni))
        self.rho.append(float(rho))
        self.calls.append(int(calls))


def evaluate(game: MarkovGame, trace: Trace) -> Trace:
    """Fill ``trace.phi`` with the true ``Phi(x_k)`` (exact lower-level solve per record)."""
    xs = torch.tensor(trace.x, dtype=DTYPE, device=game.r0.device)
    trace.phi = phi(game, xs)[0].tolist()
    return trace


def anneal_factor(progress: float, anneal: float) -> float:
    """Step-size factor at ``progress`` in [0, 1] of a run: 1, then a linear decay to 1% over
    the final ``anneal`` fraction (0: constant). Every method's step on x uses it."""
    if anneal <= 0:
        return 1.0
    return max(0.01, min(1.0, (1.0 - progress) / anneal))


def start_x(game: MarkovGame, x0=None) -> torch.Tensor:
    """The common start ``x0`` (default 0) as a fresh ``[D]`` tensor."""
    if x0 is None:
        return torch.zeros(game.n_features, dtype=DTYPE, device=game.r0.device)
    return batch_x(game, x0)[0].clone()


def panda(game: MarkovGame, cfg: PandaConfig = PandaConfig(), x0=None,
          progress: Callable[[float], None] | None = None) -> Trace:
    """PANDA: Adam on ``(x, z_pi, z_nu)`` for ``f + rho_k NI`` with Danskin gradients.

    Every step computes the two soft best responses with no gradient (warm-started soft
    policy iteration), then ``NI = rho0.(V^{pi', nu} - V^{pi, nu'})`` with ``pi', nu'`` held
    fixed, so ``loss.backward()`` is an ordinary first-order pass (Danskin's theorem: the
    gradient of a max is the gradient at the maximiser). Starts from ``x0`` (default 0) and
    uniform policies; ``warm_start`` (not the paper's method) starts at the exact saddle point
    of ``x0`` instead. Counts first-order oracle calls (module docstring) in ``trace.calls``.
    ``rho_growth = 0`` freezes the penalty and ``inner = "unrolled"`` differentiates through
    the inner problems: the two pitfalls of the mutation tests.
    """
    cfg.validate()
    t0 = time.perf_counter()
    s, (n, m) = game.n_states, game.n_actions
    x = start_x(game, x0)[None].requires_grad_(True)
    zp = torch.zeros(1, s, n, dtype=DTYPE, device=x.device)
    zn = torch.zeros(1, s, m, dtype=DTYPE, device=x.device)
    if cfg.warm_start:
        zp, zn = split_logits(game, solve_equilibrium(game, x.detach()).z)
    zp, zn = zp.clone().requires_grad_(True), zn.clone().requires_grad_(True)
    opt = torch.optim.Adam([{"params": [x], "lr": cfg.lr_x},
                            {"params": [zp, zn], "lr": cfg.lr}])
    trace = Trace("panda")
    br_hi = br_lo = None
    calls = 0
    for k in range(cfg.iterations + 1):
        rho = cfg.rho0 + cfg.rho_growth * k
        pi, nu = torch.softmax(zp, -1), torch.softmax(zn, -1)
        br_hi = best_response(game, x.detach(), nu.detach(), "max",
                              start=None if br_hi is None else br_hi.policy)
        br_lo = best_response(game, x.detach(), pi.detach(), "min",
                              start=None if br_lo is None else br_lo.policy)
        # Danskin: the best responses enter as constants; one batched evaluation of
        # V(pi', nu) and V(pi, nu') (rows 0 and 1)
        if cfg.inner == "danskin":
            v2 = policy_value(game, x.expand(2, -1), torch.cat([br_hi.policy, pi]),
                              torch.cat([nu, br_lo.policy])) @ game.init
            ni = (v2[0] - v2[1])[None]
        else:
            ni = _unrolled_ni(game, x, pi, nu, br_hi.policy, br_lo.policy)
        calls += br_hi.iterations + br_lo.iterations + 2
        if k % cfg.record_every == 0 or k == cfg.iterations:
            trace.record(k, x.detach(), float(ni.detach()), rho, calls)
            if progress is not None:
                progress(k / cfg.iterations)
        if k == cfg.iterations:
            break
        loss = upper_objective(game, x, pi, nu) + rho * ni
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        factor = anneal_factor(k / cfg.iterations, cfg.anneal)
        for group, base in zip(opt.param_groups, (cfg.lr_x, cfg.lr)):
            group["lr"] = base * factor
        opt.step()
    trace.final_z = torch.cat([zp.detach().flatten(1), zn.detach().flatten(1)], -1)
    trace.seconds = time.perf_counter() - t0
    return trace


def _unrolled_ni(game, x, pi, nu, hi0, lo0, steps: int = 3, eta: float = 0.5):
    """The pitfall PANDA avoids: NI with its inner max / min replaced by ``steps`` gradient
    steps (from the best responses' logits) that stay differentiable (``create_graph``), so
    backpropagating through them builds a second-order graph. Used by the mutation test."""
    a = torch.log(hi0).requires_grad_(True)
    b = torch.log(lo0).requires_grad_(True)
    for _ in range(steps):
        va = policy_value(game, x, torch.softmax(a, -1), nu) @ game.init
        vb = policy_value(game, x, pi, torch.softmax(b, -1)) @ game.init
        ga, gb = torch.autograd.grad(va.sum() + vb.sum(), (a, b), create_graph=True)
        a, b = a + eta * ga, b - eta * gb
    return (policy_value(game, x, torch.softmax(a, -1), nu)
            - policy_value(game, x, pi, torch.softmax(b, -1))) @ game.init
