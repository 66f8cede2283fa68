"""PANDA's baselines: the closely related bilevel methods it is compared with, and references.

* :func:`unrolled_gda` (related baseline): ``K`` steps of simultaneous gradient descent-ascent
  (GDA) on the lower-level logits, differentiated through (``create_graph=True``, second
  order), then Adam on ``x`` with that approximate hypergradient (iterative differentiation).
* :func:`implicit_aid` (related baseline): approximate implicit differentiation. ``T`` GDA
  steps track the saddle point, then the implicit function theorem at the current iterate:
  ``dPhi/dx = df/dx - d/dx (w . grad_z V)`` with ``H w = df/dz``, ``H`` the Hessian of
  ``rho0 . V`` in the logits (symmetric, indefinite at a saddle, singular along the softmax
  shifts), solved by ``L`` MINRES iterations of Hessian-vector products (autograd).
* :func:`ignore_response` (reference): the partial gradient ``d f / d x`` at the exact
  equilibrium, the players' response treated as fixed.
* :func:`implicit_oracle` (reference, not a competitor): the exact hypergradient at the exact
  equilibrium (Newton with analytic Jacobians); it cross-checks the brute-force ``Phi*``.

The related baselines start where PANDA starts (``x0 = 0``, uniform policies: logits 0), step
on ``x`` exactly as PANDA does (Adam, same step size and anneal) and stop at a budget of
first-order oracle calls (see :mod:`icml26.panda.methods`), counted as: one per GDA step (a
value and its gradient), one per Hessian-vector product or mixed second derivative (at least
what autograd pays for one), and for unrolling one per step differentiated back through.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from icml26.common import check_int
from icml26.panda.equilibrium import Equilibrium, jacobians, solve_equilibrium
from icml26.panda.game import (
    DTYPE,
    MarkovGame,
    batch_x,
    ni_gap,
    policy_value,
    upper_objective,
)
from icml26.panda.methods import Trace, anneal_factor, start_x


@dataclass(frozen=True)
class BaselineConfig:
    """Schedules of the baselines (ours). The related ones share PANDA's step on x."""

    unrolled_steps: int = 5  # K descent-ascent steps differentiated through
    inner_step_size: float = 0.2  # eta of the GDA on logits (0.5 cycles on seed 0; 0.1 slower)
    implicit_inner_steps: int = 10  # T GDA steps per outer step of the implicit method
    implicit_solver_steps: int = 10  # L MINRES iterations (Hessian-vector products)
    lr: float = 0.02  # Adam on x, as PANDA's lr_x
    anneal: float = 0.2  # as PANDA: linear decay to 1% over the final 20% of the budget
    records: int = 100  # records per budgeted run
    ignore_iterations: int = 100
    exact_iterations: int = 150  # the exact implicit reference
    exact_lr: float = 0.05  # exact hypergradients tolerate a larger Adam step
    record_every: int = 5  # the two references

    def validate(self) -> BaselineConfig:
        for name in ("unrolled_steps", "implicit_inner_steps", "implicit_solver_steps",
                     "records", "ignore_iterations", "exact_iterations", "record_every"):
            check_int(name, getattr(self, name), 1)
        if not (self.lr > 0 and self.exact_lr > 0 and self.inner_step_size > 0):
            raise ValueError(f"lr, exact_lr and inner_step_size must be > 0, got "
                             f"{self.lr}, {self.exact_lr}, {self.inner_step_size}")
        if not 0 <= self.anneal <= 1:
            raise ValueError(f"anneal must be in [0, 1], got {self.anneal}")
        return self

    def step_cost(self, method: str) -> int:
        """Oracle calls of one outer step: ``2K`` (unrolled), ``T + L + 2`` (implicit)."""
        if method == "unrolled":
            return 2 * self.unrolled_steps
        return self.implicit_inner_steps + self.implicit_solver_steps + 2


# --------------------------------------------------------------------------- shared pieces
def value_grad(game: MarkovGame, x, zp, zn, create_graph: bool = False):
    """``(grad_zp, grad_zn)`` of ``rho0 . V_x(softmax zp, softmax zn)``: one oracle call."""
    v = policy_value(game, x, torch.softmax(zp, -1), torch.softmax(zn, -1)) @ game.init
    return torch.autograd.grad(v.sum(), (zp, zn), create_graph=create_graph)


def gda_steps(game: MarkovGame, x, zp, zn, steps: int, eta: float):
    """``steps`` first-order simultaneous GDA steps (ascent on zp, descent on zn), detached."""
    x = x.detach()
    for _ in range(steps):
        zp, zn = zp.detach().requires_grad_(True), zn.detach().requires_grad_(True)
        gp, gn = value_grad(game, x, zp, zn)
        zp, zn = zp + eta * gp, zn - eta * gn
    return zp.detach(), zn.detach()


def minres(matvec, b: torch.Tensor, iters: int) -> torch.Tensor:
    """``iters`` MINRES iterations for ``A w = b`` with ``A`` symmetric (possibly indefinite
    and singular; from ``w = 0`` a consistent system converges to the min-norm solution).
    Paige & Saunders (1975), unpreconditioned, as in ``scipy.sparse.linalg.minres``."""
    w_out = torch.zeros_like(b)
    beta1 = float(b.norm())
    if beta1 == 0.0:
        return w_out
    r1 = r2 = y = b
    beta, oldb, dbar, epsln, phibar, cs, sn = beta1, 0.0, 0.0, 0.0, beta1, -1.0, 0.0
    w = w2 = torch.zeros_like(b)
    for it in range(iters):
        v = y / beta
        y = matvec(v)
        if it > 0:
            y = y - (beta / oldb) * r1
        alfa = float(v @ y)
        y = y - (alfa / beta) * r2
        r1, r2 = r2, y
        oldb, beta = beta, float(y.norm())
        oldeps = epsln
        delta = cs * dbar + sn * alfa
        gbar = sn * dbar - cs * alfa
        epsln, dbar = sn * beta, -cs * beta
        gamma = max(math.hypot(gbar, beta), 1e-300)
        cs, sn = gbar / gamma, beta / gamma
        phi_k, phibar = cs * phibar, sn * phibar
        w1, w2 = w2, w
        w = (v - oldeps * w1 - delta * w2) / gamma
        w_out = w_out + phi_k * w
        if beta < 1e-14 * beta1:
            break
    return w_out


class BudgetedRun:
    """The loop state every budgeted baseline shares: ``x`` under PANDA's Adam step, the
    lower-level logits (cold: 0), the oracle-call count and records at evenly spaced budgets."""

    def __init__(self, name: str, game: MarkovGame, cfg: BaselineConfig, budget: int, x0):
        check_int("budget", budget, 1)
        s, (n, m) = game.n_states, game.n_actions
        self.game, self.cfg, self.budget, self.cost = game, cfg, budget, cfg.step_cost(name)
        self.x = start_x(game, x0)[None].requires_grad_(True)
        self.zp = torch.zeros(1, s, n, dtype=DTYPE, device=self.x.device)
        self.zn = torch.zeros(1, s, m, dtype=DTYPE, device=self.x.device)
        self.opt = torch.optim.Adam([self.x], lr=cfg.lr)
        self.trace, self.calls, self.k, self.mark = Trace(name), 0, 0, 0
        self.t0 = time.perf_counter()

    def running(self) -> bool:
        """Record when a checkpoint (or the end) is reached; False once the budget is spent."""
        last = self.calls + self.cost > self.budget
        if last or self.calls * self.cfg.records >= self.mark * self.budget:
            pi, nu = torch.softmax(self.zp, -1), torch.softmax(self.zn, -1)
            ni = float(ni_gap(self.game, self.x.detach(), pi, nu)[0])  # measurement only
            self.trace.record(self.k, self.x.detach(), ni, calls=self.calls)
            while self.calls * self.cfg.records >= self.mark * self.budget:
                self.mark += 1
        return not last

    def step(self, grad_x: torch.Tensor) -> None:
        self.calls += self.cost
        self.k += 1
        self.opt.zero_grad(set_to_none=True)
        self.x.grad = grad_x.detach()
        self.opt.param_groups[0]["lr"] = self.cfg.lr * anneal_factor(
            self.calls / self.budget, self.cfg.anneal)
        self.opt.step()

    def done(self) -> Trace:
        self.trace.final_z = torch.cat([self.zp.flatten(1), self.zn.flatten(1)], -1)
        self.trace.seconds = time.perf_counter() - self.t0
        return self.trace


# --------------------------------------------------------------------------- related baselines
def unrolled_gda(game: MarkovGame, cfg: BaselineConfig = BaselineConfig(),
                 budget: int = 10_000, x0=None) -> Trace:
    """Iterative differentiation: per outer step ``K`` GDA steps from the previous logits,
    kept differentiable (``create_graph=True``), then Adam on ``x`` with the gradient of
    ``f(x, pi_K(x), nu_K(x))`` through them. ``2K`` oracle calls per outer step."""
    cfg.validate()
    run = BudgetedRun("unrolled", game, cfg, budget, x0)
    eta = cfg.inner_step_size
    while run.running():
        run.step(unrolled_hypergradient(run, game, game, cfg.unrolled_steps, eta))
    return run.done()


def unrolled_hypergradient(run: BudgetedRun, inner: MarkovGame, upper: MarkovGame,
                           steps: int, eta: float) -> torch.Tensor:
    """d/dx of ``upper``'s objective at ``steps`` gradient descent-ascent steps on ``inner``
    from ``run``'s logits, differentiated through them; ``run``'s logits move to the last
    step's (``inner`` is the true game, or a sampled one in :mod:`icml26.panda.sampled`)."""
    x = run.x
    zp, zn = run.zp.clone().requires_grad_(True), run.zn.clone().requires_grad_(True)
    for _ in range(steps):
        gp, gn = value_grad(inner, x, zp, zn, create_graph=True)
        zp, zn = zp + eta * gp, zn - eta * gn
    loss = upper_objective(upper, x, torch.softmax(zp, -1), torch.softmax(zn, -1))
    (grad_x,) = torch.autograd.grad(loss.sum(), x)
    run.zp, run.zn = zp.detach(), zn.detach()
    return grad_x


def aid_hypergradient(game: MarkovGame, x, zp, zn, solver_steps: int) -> torch.Tensor:
    """Implicit hypergradient at the iterate ``(zp, zn)`` (not the exact saddle point):
    ``df/dx - d/dx (w . grad_z V)`` with ``w`` from ``solver_steps`` MINRES iterations on
    ``H w = df/dz``. ``solver_steps + 2`` oracle calls. ``[1, D]``."""
    xg = x.detach().clone().requires_grad_(True)
    zp, zn = zp.detach().requires_grad_(True), zn.detach().requires_grad_(True)
    gp, gn = value_grad(game, xg, zp, zn, create_graph=True)
    g = torch.cat([gp.flatten(), gn.flatten()])
    f = upper_objective(game, xg, torch.softmax(zp, -1), torch.softmax(zn, -1))
    fx, fp, fn = torch.autograd.grad(f.sum(), (xg, zp, zn))

    def hvp(u):
        hp, hn = torch.autograd.grad(g @ u, (zp, zn), retain_graph=True)
        return torch.cat([hp.flatten(), hn.flatten()])

    w = minres(hvp, torch.cat([fp.flatten(), fn.flatten()]), solver_steps)
    (mixed,) = torch.autograd.grad(g @ w, xg)
    return fx - mixed


def implicit_aid(game: MarkovGame, cfg: BaselineConfig = BaselineConfig(),
                 budget: int = 10_000, x0=None) -> Trace:
    """Approximate implicit differentiation: per outer step ``T`` GDA steps from the previous
    logits, then :func:`aid_hypergradient` and Adam on ``x``. ``T + L + 2`` calls a step."""
    cfg.validate()
    run = BudgetedRun("implicit", game, cfg, budget, x0)
    while run.running():
        run.zp, run.zn = gda_steps(game, run.x, run.zp, run.zn, cfg.implicit_inner_steps,
                                   cfg.inner_step_size)
        run.step(aid_hypergradient(game, run.x, run.zp, run.zn, cfg.implicit_solver_steps))
    return run.done()


# --------------------------------------------------------------------------- references
def _descent_at_equilibrium(game: MarkovGame, name: str, iterations: int, lr: float,
                            record_every: int, grad_x, x0) -> Trace:
    """Adam on ``x`` with ``grad_x(x, eq)`` at the exact equilibrium ``eq`` of every iterate
    (Newton warm-started from the previous one): the two references' shared loop."""
    t0 = time.perf_counter()
    x = start_x(game, x0)[None].requires_grad_(True)
    opt = torch.optim.Adam([x], lr=lr)
    trace = Trace(name)
    eq = solve_equilibrium(game, x.detach())
    for k in range(iterations + 1):
        eq = solve_equilibrium(game, x.detach(), z0=eq.z)
        if k % record_every == 0 or k == iterations:
            trace.record(k, x.detach(), 0.0)
        if k == iterations:
            break
        opt.zero_grad(set_to_none=True)
        x.grad = grad_x(x.detach(), eq)
        opt.step()
    trace.final_z = eq.z
    trace.seconds = time.perf_counter() - t0
    return trace


def ignore_response(game: MarkovGame, cfg: BaselineConfig = BaselineConfig(),
                    x0=None) -> Trace:
    """Reference: Adam on ``x`` with the partial gradient ``d f / d x`` at the exact
    equilibrium, treating the players' response as fixed (``d pi* / d x`` dropped)."""
    cfg.validate()

    def partial(x, eq):  # pi*, nu* are constants here
        x = x.requires_grad_(True)
        return torch.autograd.grad(upper_objective(game, x, eq.pi, eq.nu).sum(), x)[0]

    return _descent_at_equilibrium(game, "ignore", cfg.ignore_iterations, cfg.lr,
                                   cfg.record_every, partial, x0)


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
    """Reference: Adam on ``x`` with the exact implicit hypergradient at the exact
    equilibrium (Newton, warm-started): what neither PANDA nor a practical baseline has."""
    cfg.validate()
    return _descent_at_equilibrium(game, "implicit_exact", cfg.exact_iterations, cfg.exact_lr,
                                   cfg.record_every, lambda x, eq: hypergradient(game, x, eq),
                                   x0)
