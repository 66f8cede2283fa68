"""PANDA, the exact lower level: the regularised saddle point, ``Phi(x)`` and the landscape.

Shapley value iteration + Newton with analytic Jacobians (the equilibrium equations in
logits), ``Phi(x) = f(x, pi*(x), nu*(x))``, the batched landscape over a grid of ``x``, the
provable radius of the minimiser, and the random instances (whose reachable targets are a
saddle point). These exact solves serve the oracle, the evaluation of every method and the
implicit-differentiation baselines -- never PANDA itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from icml26.common import check_int, generator
from icml26.panda.game import (
    DTYPE,
    GameConfig,
    MarkovGame,
    backup,
    batch_x,
    ni_gap,
    policies,
    policy_value,
    reward,
    split_logits,
    upper_objective,
)


@dataclass
class ExactCalls:
    """How often the exact lower-level machinery ran: the saddle-point solver (Shapley +
    Newton) and the analytic Jacobians of the equilibrium equations (second-order information,
    computed under ``no_grad``, so autograd never sees it). The detector reads the deltas."""

    equilibria: int = 0
    jacobians: int = 0


EXACT_CALLS = ExactCalls()


def residual(game: MarkovGame, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Equilibrium equations ``G(z, x) = 0`` in logits: ``[B, K], [B, D] -> [B, K]``.

    ``G = (z_pi - Q1 / tau, z_nu + Q2 / tau)`` with ``Q1(s,a) = sum_b nu Q``, ``Q2(s,b) = sum_a
    pi Q`` and ``Q = r_x + gamma P V^{pi,nu}``: each policy is the soft-greedy response to the
    other's Q-function, which characterises the unique regularised saddle point. The root
    ``z`` is unique (no softmax shift freedom), so ``dG/dz`` is invertible there.
    """
    pi, nu = policies(game, z)
    v = policy_value(game, x, pi, nu)
    q = reward(game, x) + game.gamma * torch.einsum("sact,bt->bsac", game.P, v)
    q1 = torch.einsum("bsac,bsc->bsa", q, nu)
    q2 = torch.einsum("bsac,bsa->bsc", q, pi)
    zp, zn = split_logits(game, z)
    return torch.cat([(zp - q1 / game.tau).flatten(-2), (zn + q2 / game.tau).flatten(-2)], -1)


def jacobians(game: MarkovGame, z: torch.Tensor, x: torch.Tensor, wrt_x: bool = False):
    """Analytic ``dG/dz [B, K, K]`` (and ``dG/dx [B, K, D]``) of :func:`residual`.

    With ``M = I - gamma P_{pi nu}``, the value moves as ``dV = M^{-1} u`` where
    ``u(s) = sum_a dpi (Q1 - tau log pi) + sum_b dnu (Q2 + tau log nu)`` (the envelope of the
    entropy terms), ``dpi = (diag pi - pi pi^T) dz_pi``, and ``dQ = gamma P dV``; the blocks
    below are that chain rule written out (checked against autograd in the tests).
    """
    EXACT_CALLS.jacobians += 1
    tau, gam = game.tau, game.gamma
    s_n, (n, m) = game.n_states, game.n_actions
    bsz = z.shape[0]
    pi, nu = policies(game, z)
    v = policy_value(game, x, pi, nu)
    q = reward(game, x) + gam * torch.einsum("sact,bt->bsac", game.P, v)
    q1 = torch.einsum("bsac,bsc->bsa", q, nu)
    q2 = torch.einsum("bsac,bsa->bsc", q, pi)
    joint = pi[..., :, None] * nu[..., None, :]
    eye_s = torch.eye(s_n, dtype=z.dtype, device=z.device)
    minv = torch.linalg.inv(eye_s - gam * torch.einsum("bsac,sact->bst", joint, game.P))
    a1 = q1 - tau * torch.log(pi)
    a2 = q2 + tau * torch.log(nu)
    g_pi = pi * (a1 - (pi * a1).sum(-1, keepdim=True))  # [B, S, n]: dV-source per dz_pi
    g_nu = nu * (a2 - (nu * a2).sum(-1, keepdim=True))
    pv1 = gam * torch.einsum("sact,bsc->bsat", game.P, nu)  # [B, S, n, S']
    pv2 = gam * torch.einsum("sact,bsa->bsct", game.P, pi)  # [B, S, m, S']
    # dV(t) / dz_pi(s', a') = minv[t, s'] g_pi[s', a']
    dv_pi = minv[:, :, :, None] * g_pi[:, None, :, :]  # [B, T, S', n]
    dv_nu = minv[:, :, :, None] * g_nu[:, None, :, :]
    s_pi = torch.diag_embed(pi) - pi[..., :, None] * pi[..., None, :]  # [B, S, n, n]
    s_nu = torch.diag_embed(nu) - nu[..., :, None] * nu[..., None, :]
    diag_s = eye_s[None, :, None, :, None]  # [1, S, 1, S', 1]
    j_pp = -torch.einsum("bsat,btuk->bsauk", pv1, dv_pi) / tau
    j_pn = -(torch.einsum("bsat,btuk->bsauk", pv1, dv_nu)
             + diag_s * torch.einsum("bsac,bsck->bsak", q, s_nu)[:, :, :, None, :]) / tau
    j_np = (torch.einsum("bsct,btuk->bscuk", pv2, dv_pi)
            + diag_s * torch.einsum("bsac,bsak->bsck", q, s_pi)[:, :, :, None, :]) / tau
    j_nn = torch.einsum("bsct,btuk->bscuk", pv2, dv_nu) / tau
    kp, kn = s_n * n, s_n * m
    top = torch.cat([j_pp.reshape(bsz, kp, kp), j_pn.reshape(bsz, kp, kn)], -1)
    bot = torch.cat([j_np.reshape(bsz, kn, kp), j_nn.reshape(bsz, kn, kn)], -1)
    jz = torch.cat([top, bot], 1) + torch.eye(kp + kn, dtype=z.dtype, device=z.device)
    if not wrt_x:
        return jz
    w = torch.einsum("bsac,dsac->bds", joint, game.feats)  # [B, D, S]
    dv_x = torch.einsum("bts,bds->btd", minv, w)  # [B, S, D]
    jx_p = -(torch.einsum("dsac,bsc->bsad", game.feats, nu)
             + torch.einsum("bsat,btd->bsad", pv1, dv_x)) / tau
    jx_n = (torch.einsum("dsac,bsa->bscd", game.feats, pi)
            + torch.einsum("bsct,btd->bscd", pv2, dv_x)) / tau
    jx = torch.cat([jx_p.reshape(bsz, kp, -1), jx_n.reshape(bsz, kn, -1)], 1)
    return jz, jx


def jacobians_autograd(game: MarkovGame, z: torch.Tensor, x: torch.Tensor):
    """Reference ``(dG/dz, dG/dx)`` by reverse-mode autograd, one output at a time (tests)."""
    z = z.detach().requires_grad_(True)
    x = x.detach().requires_grad_(True)
    G = residual(game, z, x)
    rows = [torch.autograd.grad(G[:, i].sum(), (z, x), retain_graph=True)
            for i in range(G.shape[1])]
    return torch.stack([r[0] for r in rows], 1), torch.stack([r[1] for r in rows], 1)


def _stage_min(q: torch.Tensor, tau: float, w: torch.Tensor, iters: int = 30,
               tol: float = 1e-10, backtrack: bool = True) -> torch.Tensor:
    """Minimiser's logits of each regularised stage game ``max_pi min_nu pi.Q.nu + tau H(pi) -
    tau H(nu)``: Newton on ``F(w) = w + Q^T softmax(Q softmax(w) / tau) / tau`` whose Jacobian
    ``I + Q^T S_pi Q S_nu / tau^2`` (a product of PSD matrices plus I) is always invertible;
    backtracking on ``|F|`` makes it safe from a cold start. ``q [B, S, n, m]``, ``w [B, S, m]``.
    """

    def resid(w):
        nu = torch.softmax(w, -1)
        pi = torch.softmax((q @ nu[..., None])[..., 0] / tau, -1)
        return w + (pi[..., None, :] @ q)[..., 0, :] / tau, pi, nu

    eye = torch.eye(q.shape[-1], dtype=q.dtype, device=q.device)
    qt = q.transpose(-1, -2)
    for _ in range(iters):
        F, pi, nu = resid(w)
        norm = F.abs().amax(-1)
        if backtrack and float(norm.max()) < tol:
            break
        s_pi = torch.diag_embed(pi) - pi[..., :, None] * pi[..., None, :]
        s_nu = torch.diag_embed(nu) - nu[..., :, None] * nu[..., None, :]
        step = torch.linalg.solve(eye + qt @ s_pi @ q @ s_nu / tau**2, F[..., None])[..., 0]
        t = torch.ones_like(norm)
        for _ in range(20 if backtrack else 0):  # halve per (b, s) until |F| decreases
            cand = w - t[..., None] * step
            bad = (resid(cand)[0].abs().amax(-1) > (1 - 1e-4 * t) * norm) & (norm > tol)
            if not bool(bad.any()):
                break
            t = torch.where(bad, t / 2, t)
        w = w - t[..., None] * step
    return w


@dataclass
class Equilibrium:
    z: torch.Tensor  # [B, S (n + m)] logits at the saddle point
    pi: torch.Tensor  # [B, S, n]
    nu: torch.Tensor  # [B, S, m]
    value: torch.Tensor  # [B, S]
    residual: torch.Tensor  # [B] sup norm of G


def solve_equilibrium(game: MarkovGame, x, z0: torch.Tensor | None = None, tol: float = 1e-11,
                      shapley_tol: float = 1e-5, max_shapley: int = 2000,
                      impl: str = "auto") -> Equilibrium:
    """Exact regularised saddle point for every row of ``x [B, D]`` (no gradients).

    Without ``z0``: Shapley value iteration ``V <- val_tau(r_x + gamma P V)`` (a
    gamma-contraction) where each stage game is solved by :func:`_stage_min` and the backed-up
    value comes from the soft Bellman kernel at the minimiser's stage policy, until the value
    moves less than ``shapley_tol``; then Newton on ``G(z, x) = 0`` (quadratic) to ``tol``.
    With ``z0`` (a warm start, e.g. a nearby x): Newton directly, with rows that fail
    falling back to the cold path.
    """
    x = batch_x(game, x)
    EXACT_CALLS.equilibria += 1
    with torch.no_grad():
        if z0 is None:
            z = _shapley(game, x, shapley_tol, max_shapley, impl)
        else:
            z = z0.detach().to(x.dtype).expand(x.shape[0], -1).clone()
        z, res = _newton(game, z, x, tol)
        bad = ~(res < tol)
        if z0 is not None and bool(bad.any()):
            idx = bad.nonzero()[:, 0]
            zb = _shapley(game, x[idx], shapley_tol, max_shapley, impl)
            zb, rb = _newton(game, zb, x[idx], tol)
            z[idx], res[idx] = zb, rb
        pi, nu = policies(game, z)
        v = policy_value(game, x, pi, nu)
    return Equilibrium(z, pi, nu, v, res)


def _shapley(game, x, tol, max_iter, impl):
    b, s, m = x.shape[0], game.n_states, game.n_actions[1]
    v = torch.zeros(b, s, dtype=x.dtype, device=x.device)
    w = torch.zeros(b, s, m, dtype=x.dtype, device=x.device)
    r = reward(game, x)
    for _ in range(max_iter):
        q = r + game.gamma * torch.einsum("sact,bt->bsac", game.P, v)
        w = _stage_min(q, game.tau, w)
        v_new, _ = backup(game, x, v, torch.softmax(w, -1), impl=impl)
        done = float((v_new - v).abs().max()) < tol
        v = v_new
        if done:
            break
    q = r + game.gamma * torch.einsum("sact,bt->bsac", game.P, v)
    w = _stage_min(q, game.tau, w)
    nu = torch.softmax(w, -1)
    zp = torch.einsum("bsac,bsc->bsa", q, nu) / game.tau
    return torch.cat([zp.flatten(-2), w.flatten(-2)], -1)


def _newton(game, z, x, tol, max_iter: int = 30):
    """Newton on ``G(z, x) = 0`` per row with step halving on ``|G|`` (a row that cannot
    decrease its residual stops; the caller checks the returned residual)."""
    res = residual(game, z, x).abs().amax(-1)
    for _ in range(max_iter):
        active = (res >= tol).nonzero()[:, 0]
        if active.numel() == 0:
            break
        za, xa, ra = z[active], x[active], res[active]
        G = residual(game, za, xa)
        step = torch.linalg.solve(jacobians(game, za, xa), G[..., None])[..., 0]
        t = torch.ones_like(ra)
        accept = torch.zeros_like(ra, dtype=torch.bool)
        new_r = ra.clone()
        for _ in range(12):
            rc = residual(game, za - t[:, None] * step, xa).abs().amax(-1)
            ok = ~accept & (rc < ra)
            new_r = torch.where(ok, rc, new_r)
            accept = accept | ok
            if bool(accept.all()):
                break
            t = torch.where(accept, t, t / 2)
        if not bool(accept.any()):
            break
        z[active[accept]] = (za - t[:, None] * step)[accept]
        res[active[accept]] = new_r[accept]
    return z, res


def phi(game: MarkovGame, x, z0: torch.Tensor | None = None,
        impl: str = "auto") -> tuple[torch.Tensor, Equilibrium]:
    """``Phi(x) = f(x, pi*(x), nu*(x))`` for each row of ``x``: ``([B], Equilibrium)``."""
    x = batch_x(game, x)
    eq = solve_equilibrium(game, x, z0, impl=impl)
    return upper_objective(game, x, eq.pi, eq.nu), eq


# --------------------------------------------------------------------------- landscape
def phi_radius(game: MarkovGame) -> float:
    """Radius that provably contains every minimiser of Phi: ``Phi(x) >= lam |x|^2`` and
    ``Phi* <= Phi(x_ref)``, so ``|x*| <= sqrt(min(Phi(0), Phi(x_dag)) / lam)``."""
    if game.incentive_cost <= 0:
        raise ValueError("the brute-force oracle needs incentive_cost > 0 (a bounded search)")
    refs = torch.stack([torch.zeros_like(game.x_dag), game.x_dag])
    return math.sqrt(float(phi(game, refs)[0].min()) / game.incentive_cost)


def landscape(game: MarkovGame, box: float | tuple[float, float, float, float], grid: int = 33,
              certify: bool = True, impl: str = "auto") -> dict:
    """``Phi(x)`` on a ``grid x grid`` lattice of ``x in [x0lo, x0hi] x [x1lo, x1hi]`` (D = 2).

    The lower level at every grid point is solved at once (batched Shapley iteration whose
    backups run in the soft Bellman kernel, then Newton); with ``certify`` the NI gap of every
    computed saddle point is recomputed from best responses (kernel again) as a certificate.
    Returns ``{"x0": [G], "x1": [G], "phi": [G, G] (indexed [i1, i0]), "z": [G*G, K],
    "max_ni": float, "max_residual": float}``.
    """
    if game.n_features != 2:
        raise ValueError(f"the landscape needs x in R^2, got D = {game.n_features}")
    check_int("grid", grid, 2)
    lo0, hi0, lo1, hi1 = (-box, box, -box, box) if isinstance(box, (int, float)) else box
    if not (hi0 > lo0 and hi1 > lo1):
        raise ValueError(f"box must have lo < hi on both axes, got {box!r}")
    dev = game.r0.device
    x0 = torch.linspace(lo0, hi0, grid, dtype=DTYPE, device=dev)
    x1 = torch.linspace(lo1, hi1, grid, dtype=DTYPE, device=dev)
    xx = torch.stack(torch.meshgrid(x0, x1, indexing="xy"), -1).reshape(-1, 2)  # row = i1
    eq = solve_equilibrium(game, xx, impl=impl)
    val = upper_objective(game, xx, eq.pi, eq.nu)
    max_ni = float(ni_gap(game, xx, eq.pi, eq.nu, impl=impl).abs().max()) if certify else math.nan
    return {"x0": x0, "x1": x1, "phi": val.reshape(grid, grid), "z": eq.z, "xx": xx,
            "max_ni": max_ni, "max_residual": float(eq.residual.max())}


# --------------------------------------------------------------------------- instances
def make_game(cfg: GameConfig | None = None, seed: int = 0, device=None) -> MarkovGame:
    """Draw an instance from ``icml26.common.generator(seed)``.

    ``r0 ~ N(0, reward_scale^2)``, ``feats ~ N(0, feature_scale^2)``, ``P(.|s,a,b) ~
    Dirichlet(1)``, start distribution uniform. Targets: ``"reachable"`` (default) = the
    saddle point at a hidden incentive ``x_dag`` drawn uniformly on the circle of radius
    ``target_radius`` (an inverse-game-design task: some incentive induces the target, so
    ``0 < Phi* <= lam |x_dag|^2``); ``"pure"`` = one pure action per state and player (never
    reachable under entropy regularisation); ``"mixed"`` = Dirichlet(1) draws.
    """
    cfg = (GameConfig() if cfg is None else cfg).validate()
    g = generator(seed)
    s, (n, m), d = cfg.n_states, cfg.n_actions, cfg.n_features
    r0 = cfg.reward_scale * torch.randn(s, n, m, generator=g, dtype=DTYPE)
    feats = cfg.feature_scale * torch.randn(d, s, n, m, generator=g, dtype=DTYPE)
    P = -torch.log(torch.rand(s, n, m, s, generator=g, dtype=DTYPE))  # Dirichlet(1) rows
    P = P / P.sum(-1, keepdim=True)
    x_dag = torch.zeros(d, dtype=DTYPE)
    if d:
        u = torch.randn(d, generator=g, dtype=DTYPE)
        x_dag = cfg.target_radius * u / u.norm()
    if cfg.target == "reachable":
        pi_tgt = torch.full((s, n), 1.0 / n, dtype=DTYPE)  # placeholders, replaced below
        nu_tgt = torch.full((s, m), 1.0 / m, dtype=DTYPE)
    elif cfg.target == "pure":
        pi_tgt = torch.nn.functional.one_hot(torch.randint(n, (s,), generator=g), n).to(DTYPE)
        nu_tgt = torch.nn.functional.one_hot(torch.randint(m, (s,), generator=g), m).to(DTYPE)
    else:
        pi_tgt = -torch.log(torch.rand(s, n, generator=g, dtype=DTYPE))
        nu_tgt = -torch.log(torch.rand(s, m, generator=g, dtype=DTYPE))
        pi_tgt, nu_tgt = pi_tgt / pi_tgt.sum(-1, keepdim=True), nu_tgt / nu_tgt.sum(-1, True)
    init = torch.full((s,), 1.0 / s, dtype=DTYPE)
    game = MarkovGame(r0, feats, P, init, pi_tgt, nu_tgt, cfg.tau, cfg.gamma,
                      cfg.incentive_cost, x_dag)
    if cfg.target == "reachable":
        eq = solve_equilibrium(game, x_dag[None])
        game = replace(game, pi_tgt=eq.pi[0], nu_tgt=eq.nu[0])
    return game.to(device) if device is not None else game

