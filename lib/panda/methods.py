"""PANDA, the methods: PANDA itself and its baselines (ignore the response, unrolled
descent-ascent, implicit differentiation). See :mod:`icml26.panda` for the paper and the
equations, :mod:`icml26.panda.game` for the game.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from icml26.common import check_int
from icml26.panda.equilibrium import Equilibrium, jacobians, phi, solve_equilibrium
from icml26.panda.game import (
    DTYPE,
    MarkovGame,
    batch_x,
    best_response,
    ni_gap,
    policy_value,
    split_logits,
    upper_objective,
)


# --------------------------------------------------------------------------- methods
@dataclass(frozen=True)
class PandaConfig:
    """PANDA's schedule. Defaults: the spec probe (Adam 0.02 on (x, logits), rho_k = 1 +
    0.01 k); the iteration count is ours (quick scale)."""

    iterations: int = 1000  # ours (quick scale); the spec probe ran 6000
    lr: float = 0.02  # spec probe
    rho0: float = 1.0  # spec probe
    rho_growth: float = 0.01  # spec probe; 0 freezes the penalty (the mutation test)
    anneal: float = 0.2  # ours: lr decays linearly to 1% over this final fraction
    lr_x: float = 0.02  # spec probe: one Adam(0.02) on x and the logits
    warm_start: bool = True  # ours: start (pi, nu) at the saddle point of x0 (one solve)
    inner: str = "danskin"  # "unrolled": differentiate through the inner max (the pitfall)
    record_every: int = 10

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


@dataclass(frozen=True)
class BaselineConfig:
    """Schedules of the baselines (ours): double-loop methods take far fewer outer steps."""

    ignore_iterations: int = 100
    unrolled_iterations: int = 150
    unrolled_steps: int = 5  # K descent-ascent steps differentiated through
    unrolled_step_size: float = 0.5  # eta of the inner descent-ascent on logits
    implicit_iterations: int = 150
    implicit_lr: float = 0.05  # exact hypergradients tolerate a larger Adam step
    lr: float = 0.02  # Adam on x for ignore / unrolled, as PANDA
    record_every: int = 5

    def validate(self) -> BaselineConfig:
        for name in ("ignore_iterations", "unrolled_iterations", "unrolled_steps",
                     "implicit_iterations", "record_every"):
            check_int(name, getattr(self, name), 1)
        if not (self.lr > 0 and self.implicit_lr > 0 and self.unrolled_step_size > 0):
            raise ValueError(f"lr, implicit_lr and unrolled_step_size must be > 0, got "
                             f"{self.lr}, {self.implicit_lr}, {self.unrolled_step_size}")
        return self


@dataclass
class Trace:
    """What a method did, recorded every few iterations (lists of floats / [D] lists)."""

    method: str
    iteration: list[int] = field(default_factory=list)
    x: list[list[float]] = field(default_factory=list)
    ni: list[float] = field(default_factory=list)  # NI gap of the method's own (pi, nu)
    rho: list[float] = field(default_factory=list)
    phi: list[float] = field(default_factory=list)  # true Phi(x_k), filled by `evaluate`
    seconds: float = 0.0  # wall clock, for benchmarks only (never a claim)
    final_z: torch.Tensor | None = None

    def record(self, k, x, ni=math.nan, rho=math.nan):
        self.iteration.append(int(k))
        self.x.append([float(v) for v in x.reshape(-1)])
        self.ni.append(float(ni))
        self.rho.append(float(rho))


def evaluate(game: MarkovGame, trace: Trace) -> Trace:
    """Fill ``trace.phi`` with the true ``Phi(x_k)`` (exact lower-level solve per record)."""
    xs = torch.tensor(trace.x, dtype=DTYPE, device=game.r0.device)
    trace.phi = phi(game, xs)[0].tolist()
    return trace


def _x0(game, x0):
    if x0 is None:
        return torch.zeros(game.n_features, dtype=DTYPE, device=game.r0.device)
    return batch_x(game, x0)[0].clone()


def panda(game: MarkovGame, cfg: PandaConfig = PandaConfig(), x0=None,
          progress: Callable[[float], None] | None = None) -> Trace:
    """PANDA: Adam on ``(x, z_pi, z_nu)`` for ``f + rho_k NI`` with Danskin gradients.

    Every step computes the two soft best responses with no gradient (warm-started soft
    policy iteration), then ``NI = rho0.(V^{pi', nu} - V^{pi, nu'})`` with ``pi', nu'`` held
    fixed, so ``loss.backward()`` is an ordinary first-order pass (Danskin's theorem: the
    gradient of a max is the gradient at the maximiser). Starts from ``x0`` (default 0) and,
    with ``warm_start``, the saddle point at ``x0`` (one exact solve; else uniform policies).
    ``rho_growth = 0`` freezes the penalty and ``inner = "unrolled"`` differentiates through
    the inner problems: the two pitfalls of the mutation tests.
    """
    cfg.validate()
    t0 = time.perf_counter()
    s, (n, m) = game.n_states, game.n_actions
    x = _x0(game, x0)[None].requires_grad_(True)
    zp = torch.zeros(1, s, n, dtype=DTYPE, device=x.device)
    zn = torch.zeros(1, s, m, dtype=DTYPE, device=x.device)
    if cfg.warm_start:
        zp, zn = split_logits(game, solve_equilibrium(game, x.detach()).z)
    zp, zn = zp.clone().requires_grad_(True), zn.clone().requires_grad_(True)
    opt = torch.optim.Adam([{"params": [x], "lr": cfg.lr_x},
                            {"params": [zp, zn], "lr": cfg.lr}])
    trace = Trace("panda")
    br_hi = br_lo = None
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
        if k % cfg.record_every == 0 or k == cfg.iterations:
            trace.record(k, x.detach(), float(ni.detach()), rho)
            if progress is not None:
                progress(k / cfg.iterations)
        if k == cfg.iterations:
            break
        loss = upper_objective(game, x, pi, nu) + rho * ni
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        if cfg.anneal > 0:  # linear decay to 1% over the last `anneal` of the run
            left = (cfg.iterations - k) / (cfg.anneal * cfg.iterations)
            for group, base in zip(opt.param_groups, (cfg.lr_x, cfg.lr)):
                group["lr"] = base * max(0.01, min(1.0, left))
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


def ignore_response(game: MarkovGame, cfg: BaselineConfig = BaselineConfig(),
                    x0=None) -> Trace:
    """Baseline: Adam on ``x`` with the partial gradient ``d f / d x`` at the exact
    equilibrium, treating the players' response as fixed (``d pi* / d x`` dropped)."""
    cfg.validate()
    t0 = time.perf_counter()
    x = _x0(game, x0)[None].requires_grad_(True)
    opt = torch.optim.Adam([x], lr=cfg.lr)
    trace = Trace("ignore")
    eq = solve_equilibrium(game, x.detach())
    for k in range(cfg.ignore_iterations + 1):
        eq = solve_equilibrium(game, x.detach(), z0=eq.z)
        if k % cfg.record_every == 0 or k == cfg.ignore_iterations:
            trace.record(k, x.detach(), 0.0)
        if k == cfg.ignore_iterations:
            break
        loss = upper_objective(game, x, eq.pi, eq.nu)  # pi*, nu* are constants here
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
    trace.final_z = eq.z
    trace.seconds = time.perf_counter() - t0
    return trace


def hypergradient(game: MarkovGame, x: torch.Tensor, eq: Equilibrium) -> torch.Tensor:
    """Exact ``dPhi/dx`` by the implicit function theorem at the saddle point ``eq``:
    ``dz*/dx = -(dG/dz)^{-1} dG/dx`` and ``dPhi/dx = df/dx + df/dz . dz*/dx``. ``[B, D]``."""
    x = batch_x(game, x)
    jz, jx = jacobians(game, eq.z, x, wrt_x=True)
    dz_dx = -torch.linalg.solve(jz, jx)  # [B, K, D]
    s_n = game.n_states
    dpi = 2 * (eq.pi - game.pi_tgt) / s_n
    dnu = 2 * (eq.nu - game.nu_tgt) / s_n
    # chain through the softmax: d f / d z = S_p d f / d p
    gz_p = eq.pi * (dpi - (eq.pi * dpi).sum(-1, keepdim=True))
    gz_n = eq.nu * (dnu - (eq.nu * dnu).sum(-1, keepdim=True))
    gz = torch.cat([gz_p.flatten(1), gz_n.flatten(1)], -1)
    return 2 * game.incentive_cost * x + torch.einsum("bk,bkd->bd", gz, dz_dx)


def implicit_oracle(game: MarkovGame, cfg: BaselineConfig = BaselineConfig(),
                    x0=None) -> Trace:
    """Baseline (oracle): Adam on ``x`` with the exact implicit hypergradient at the exact
    equilibrium (Newton, warm-started), i.e. what PANDA avoids computing."""
    cfg.validate()
    t0 = time.perf_counter()
    x = _x0(game, x0)[None]
    opt_x = x.clone().requires_grad_(True)
    opt = torch.optim.Adam([opt_x], lr=cfg.implicit_lr)
    trace = Trace("implicit")
    eq = solve_equilibrium(game, x)
    for k in range(cfg.implicit_iterations + 1):
        eq = solve_equilibrium(game, opt_x.detach(), z0=eq.z)
        if k % cfg.record_every == 0 or k == cfg.implicit_iterations:
            trace.record(k, opt_x.detach(), 0.0)
        if k == cfg.implicit_iterations:
            break
        opt.zero_grad(set_to_none=True)
        opt_x.grad = hypergradient(game, opt_x.detach(), eq)
        opt.step()
    trace.final_z = eq.z
    trace.seconds = time.perf_counter() - t0
    return trace


def unrolled_gda(game: MarkovGame, cfg: BaselineConfig = BaselineConfig(), x0=None) -> Trace:
    """Baseline: ``K`` steps of simultaneous gradient descent-ascent on ``rho0 . V`` (logits,
    warm-started from the previous outer step), differentiated through with
    ``create_graph=True`` (second-order), then Adam on ``x`` with that approximate
    hypergradient of ``f(x, pi_K(x), nu_K(x))``."""
    cfg.validate()
    t0 = time.perf_counter()
    x = _x0(game, x0)[None].requires_grad_(True)
    opt = torch.optim.Adam([x], lr=cfg.lr)
    zp0, zn0 = split_logits(game, solve_equilibrium(game, x.detach()).z)  # as PANDA: warm start
    trace = Trace("unrolled")
    eta = cfg.unrolled_step_size
    for k in range(cfg.unrolled_iterations + 1):
        zp, zn = zp0.clone().requires_grad_(True), zn0.clone().requires_grad_(True)
        for _ in range(cfg.unrolled_steps):
            v = policy_value(game, x, torch.softmax(zp, -1), torch.softmax(zn, -1)) @ game.init
            gp, gn = torch.autograd.grad(v.sum(), (zp, zn), create_graph=True)
            zp, zn = zp + eta * gp, zn - eta * gn
        pi, nu = torch.softmax(zp, -1), torch.softmax(zn, -1)
        if k % cfg.record_every == 0 or k == cfg.unrolled_iterations:
            trace.record(k, x.detach(), float(ni_gap(game, x.detach(), pi.detach(),
                                                     nu.detach())[0]))
        zp0, zn0 = zp.detach(), zn.detach()
        if k == cfg.unrolled_iterations:
            break
        loss = upper_objective(game, x, pi, nu)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
    trace.final_z = torch.cat([zp0.flatten(1), zn0.flatten(1)], -1)
    trace.seconds = time.perf_counter() - t0
    return trace
