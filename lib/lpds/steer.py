"""Online steering of the frozen prior: LP-DS, DSRL and residual RL on actions.

All three learn a reward model (the action is a whole waypoint chunk, one decision per
episode, so no bootstrapping) from online episodes of ``n_envs`` vectorised starts, and an
actor that maximises it:

* **LP-DS** (the paper's): ``w = eps + Delta_theta(s)``, ``eps ~ N(0, I)``; the critic is
  ``Q(s, w)``; the Lagrangian ``L = -E[Q(s, eps + Delta)] + lambda (E||Delta||^2 - delta)``
  is minimised in ``theta`` while ``lambda <- [lambda + eta_lambda (E||Delta||^2 - delta)]_+``
  (dual ascent once per iteration).  ``freeze_lambda`` (the mutation) keeps ``lambda = 0``.
  The deployed policy is the **averaged iterate** (claims v3): ``Delta_bar(s)``, the mean of
  ``Delta_theta_t(s)`` over the iterates of the last ``AVERAGE_SUFFIX`` of actor training, for
  which primal-dual methods guarantee the constraint (the last iterate oscillates with lambda;
  ``E||Delta||^2`` is convex in Delta's outputs, so Jensen bounds the average's by the
  iterates' mean). The last iterate's evaluation is kept under ``"last"``.
* **DSRL** (baseline): an unconstrained latent policy, a tanh-squashed Gaussian
  ``w = W tanh(mu(s) + sigma(s) xi)`` with a SAC entropy bonus ``alpha log pi`` and
  automatically tuned ``alpha`` (target entropy ``-dim``, the SB3 / DSRL default).
* **residual** (baseline): ``a = Phi(s, eps) + c tanh(rho(s, Phi(s, eps)))`` with a critic
  ``Q(s, a)`` on actions and Gaussian exploration noise.

Action entropy is the Kozachenko--Leonenko k-NN estimate over decoded chunks at fixed starts.

Device: every network and tensor lives on the prior's device; random numbers are drawn from the
CPU generator and then moved, so a CPU run is bit-identical whichever device code path exists.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import torch
from torch import nn

from icml26.common import check_choice, check_int
from icml26.lpds.env import MapConfig, rollout, sample_states

METHODS = ("lpds", "dsrl", "residual")
AVERAGE_SUFFIX = 0.5  # LP-DS deploys the mean of its iterates over the last half of actor steps


@dataclass(frozen=True)
class SteerConfig:
    """One online run (defaults: the spec's 256 vectorised envs; ~15k episodes at quick)."""

    method: str = "lpds"
    delta: float = 0.5          # LP-DS trust region E||Delta||^2 <= delta
    eta_lambda: float = 0.5     # dual step size
    freeze_lambda: bool = False  # mutation: no dual ascent (lambda stays 0)
    iterations: int = 60
    n_envs: int = 256
    warmup: int = 6             # iterations collected with the BC prior before actor steps
    critic_steps: int = 16
    actor_steps: int = 8
    batch: int = 512
    hidden: int = 128           # critic width
    actor_hidden: int = 64      # steering / latent / residual network width
    critic_lr: float = 3e-3
    actor_lr: float = 1e-3
    buffer: int = 8192          # most recent episodes the critic trains on
    dsrl_bound: float = 2.0     # DSRL noise-space action bound W
    residual_scale: float = 0.3  # residual RL's action bound c
    explore: float = 0.05       # residual RL's exploration noise
    entropy_every: int = 10     # iterations between entropy estimates
    entropy_samples: int = 256
    knn_k: int = 3

    def validate(self) -> None:
        check_choice("method", self.method, METHODS)
        check_int("iterations", self.iterations, 1, 100_000)
        check_int("n_envs", self.n_envs, 8, 65_536)
        check_int("warmup", self.warmup, 0, self.iterations)
        check_int("knn_k", self.knn_k, 1, 64)
        check_int("entropy_samples", self.entropy_samples, self.knn_k + 2, 100_000)
        check_int("actor_hidden", self.actor_hidden, 4, 1024)
        check_int("hidden", self.hidden, 4, 1024)
        if not self.delta > 0:
            raise ValueError(f"delta must be > 0, got {self.delta}")
        if not self.eta_lambda >= 0:
            raise ValueError(f"eta_lambda must be >= 0, got {self.eta_lambda}")
        if not 0 < self.critic_lr < 1:
            raise ValueError(f"critic_lr must be in (0, 1), got {self.critic_lr}")


def mlp(n_in: int, hidden: int, n_out: int, zero_last: bool = False) -> nn.Sequential:
    net = nn.Sequential(nn.Linear(n_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden),
                        nn.SiLU(), nn.Linear(hidden, n_out))
    if zero_last:  # start exactly at the BC prior
        nn.init.zeros_(net[-1].weight)
        nn.init.zeros_(net[-1].bias)
    return net


def chi2_quantile(dim: int, q: float = 0.99) -> float:
    """``chi^2_{dim, q}``: the prior's ``q`` ball is ``||w||^2 <= chi2_quantile``."""
    from scipy.stats import chi2

    return float(chi2.ppf(q, dim))


def kl_entropy(x: torch.Tensor, k: int = 3) -> float:
    """Kozachenko--Leonenko entropy (nats) of samples ``x`` ``[N, D]`` from the k-th
    neighbour distance: ``psi(N) - psi(k) + log V_D + D mean log r_k``."""
    n, d = x.shape
    if n <= k:
        raise ValueError(f"need more than k={k} samples, got {n}")
    dist = torch.cdist(x.double(), x.double())
    dist.fill_diagonal_(math.inf)
    r = dist.topk(k, dim=1, largest=False).values[:, -1].clamp_min(1e-12)
    log_vd = d / 2 * math.log(math.pi) - math.lgamma(d / 2 + 1)
    return float(torch.special.digamma(torch.tensor(float(n)))
                 - torch.special.digamma(torch.tensor(float(k))) + log_vd
                 + d * r.log().mean())


class AveragedActor(nn.Module):
    """The averaged iterate: ``Delta_bar(s) = mean_t Delta_theta_t(s)`` over stored actors."""

    def __init__(self, actors: list[nn.Module]):
        super().__init__()
        if not actors:
            raise ValueError("need at least one iterate to average, got 0")
        self.actors = nn.ModuleList(actors)

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        return torch.stack([a(s) for a in self.actors]).mean(0)


class Steerer:
    """One method's actor, critic and acting rule around a frozen prior."""

    def __init__(self, prior, cfg: SteerConfig, dim: int):
        self.prior, self.cfg, self.dim = prior, cfg, dim
        self.device = dev = next(prior.parameters()).device
        h = cfg.actor_hidden
        if cfg.method == "lpds":
            self.actor = mlp(2, h, dim, zero_last=True)
        elif cfg.method == "dsrl":
            self.actor = mlp(2, h, 2 * dim, zero_last=True)
            self.log_alpha = torch.zeros((), device=dev, requires_grad=True)
            self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=3e-3)
        else:
            self.actor = mlp(2 + dim, h, dim, zero_last=True)
        self.critic = mlp(2 + dim, cfg.hidden, 1)
        self.actor.to(dev), self.critic.to(dev)  # initialised on the CPU, then moved
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr)
        self.lam = 0.0

    def q(self, s, x):
        return self.critic(torch.cat([s, x], dim=1)).squeeze(1)

    def _dsrl_latent(self, s, xi):
        mu, log_std = self.actor(s).chunk(2, dim=1)
        std = log_std.clamp(-5, 2).exp()
        u = mu + std * xi
        w = self.cfg.dsrl_bound * torch.tanh(u)
        logp = (torch.distributions.Normal(mu, std).log_prob(u)
                - torch.log(self.cfg.dsrl_bound * (1 - torch.tanh(u) ** 2) + 1e-6)).sum(1)
        return w, logp

    def act(self, s, gen, explore: bool = True) -> dict:
        """Latent ``w``, action ``a`` and the critic's input ``x`` for starts ``s``."""
        noise = torch.randn(len(s), self.dim, generator=gen).to(self.device)
        out = {}
        with torch.no_grad():
            if self.cfg.method == "lpds":
                delta = self.actor(s)
                w = noise + delta
                out["delta_sq"] = (delta ** 2).sum(1)
                a = self.prior.decode(s, w)
                x = w
            elif self.cfg.method == "dsrl":
                w, _ = self._dsrl_latent(s, noise)
                a = self.prior.decode(s, w)
                x = w
            else:
                w = noise
                a0 = self.prior.decode(s, w)
                a = a0 + self.cfg.residual_scale * torch.tanh(self.actor(torch.cat([s, a0], 1)))
                if explore:
                    a = a + self.cfg.explore * torch.randn(a.shape, generator=gen).to(a.device)
                x = a
        out.update(w=w, a=a, x=x)
        return out

    def critic_step(self, s, x, r) -> float:
        loss = ((self.q(s, x) - r) ** 2).mean()
        self.critic_opt.zero_grad()
        loss.backward()
        self.critic_opt.step()
        return float(loss.detach())

    def actor_step(self, s, gen) -> float:
        """One actor step; returns E||Delta||^2 of the batch for LP-DS (else nan)."""
        noise = torch.randn(len(s), self.dim, generator=gen).to(self.device)
        cfg, dsq = self.cfg, math.nan
        if cfg.method == "lpds":
            delta = self.actor(s)
            sq = (delta ** 2).sum(1).mean()
            loss = -self.q(s, noise + delta).mean() + self.lam * (sq - cfg.delta)
            dsq = float(sq.detach())
        elif cfg.method == "dsrl":
            w, logp = self._dsrl_latent(s, noise)
            alpha = self.log_alpha.exp().detach()
            loss = (alpha * logp - self.q(s, w)).mean()
            a_loss = -(self.log_alpha * (logp.detach() - self.dim)).mean()  # target -dim
            self.alpha_opt.zero_grad()
            a_loss.backward()
            self.alpha_opt.step()
        else:
            with torch.no_grad():
                a0 = self.prior.decode(s, noise)
            a = a0 + cfg.residual_scale * torch.tanh(self.actor(torch.cat([s, a0], 1)))
            loss = -self.q(s, a).mean()
        self.actor_opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.actor.parameters(), 1.0)
        self.actor_opt.step()
        return dsq

    def dual_step(self, delta_sq: float) -> None:
        if self.cfg.method == "lpds" and not self.cfg.freeze_lambda:
            # the violation in units of delta, so one step size serves every delta
            self.lam = max(0.0, self.lam + self.cfg.eta_lambda * (delta_sq / self.cfg.delta - 1))


def policy_entropy(st: Steerer, map_cfg: MapConfig, n: int, k: int,
                   gen: torch.Generator) -> float:
    """Mean KL entropy (nats) of decoded chunks at three fixed starts (y = -0.15, 0, 0.15)."""
    hs = []
    for y in (-0.15, 0.0, 0.15):
        s = torch.tensor([[map_cfg.start_x, y]]).repeat(n, 1).to(st.device)
        hs.append(kl_entropy(st.act(s, gen, explore=False)["a"], k))
    return sum(hs) / len(hs)


def train_steering(prior, map_cfg: MapConfig, cfg: SteerConfig, gen: torch.Generator,
                   progress=None) -> dict:
    """Run one method online on the prior's device; returns its history and its final
    evaluation of the final policy."""
    cfg.validate()
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    dim = map_cfg.action_dim
    st = Steerer(prior, cfg, dim)
    buf_s, buf_x, buf_r = [], [], []
    hist = {k: [] for k in ("episodes", "return", "delta_sq", "lam", "ent_episodes",
                            "entropy")}
    avg_from = cfg.warmup + int((cfg.iterations - cfg.warmup) * (1 - AVERAGE_SUFFIX))
    iterates = []  # LP-DS's actors over the averaging suffix
    for it in range(cfg.iterations):
        s = sample_states(map_cfg, cfg.n_envs, gen, st.device)
        out = st.act(s, gen)
        r = rollout(map_cfg, s, out["a"])["return"]
        buf_s.append(s), buf_x.append(out["x"]), buf_r.append(r)
        S, X, R = (torch.cat(b)[-cfg.buffer:] for b in (buf_s, buf_x, buf_r))
        for _ in range(cfg.critic_steps):
            idx = torch.randint(0, len(S), (cfg.batch,), generator=gen)
            st.critic_step(S[idx], X[idx], R[idx])
        dsq = float(out["delta_sq"].mean()) if "delta_sq" in out else math.nan
        if it >= cfg.warmup:
            sq = []
            for _ in range(cfg.actor_steps):
                idx = torch.randint(0, len(S), (cfg.batch,), generator=gen)
                sq.append(st.actor_step(S[idx], gen))
            st.dual_step(sum(sq) / len(sq))
            if cfg.method == "lpds" and it >= avg_from:
                iterates.append(copy.deepcopy(st.actor).requires_grad_(False))
        hist["episodes"].append((it + 1) * cfg.n_envs)
        hist["return"].append(float(r.mean()))
        hist["delta_sq"].append(dsq)
        hist["lam"].append(st.lam)
        if it % cfg.entropy_every == 0 or it == cfg.iterations - 1:
            hist["ent_episodes"].append((it + 1) * cfg.n_envs)
            hist["entropy"].append(policy_entropy(st, map_cfg, cfg.entropy_samples,
                                                  cfg.knn_k, gen))
        if progress is not None:
            progress((it + 1) / cfg.iterations)
    if cfg.method != "lpds" or not iterates:
        return {"history": hist, "steerer": st, **evaluate(st, map_cfg, cfg, gen)}
    # LP-DS: the last iterate and the deployed averaged iterate on the same starts and noise
    state = gen.get_state()
    last = evaluate(st, map_cfg, cfg, gen)
    gen.set_state(state)
    st.actor = AveragedActor(iterates)
    out = evaluate(st, map_cfg, cfg, gen)
    out["last"] = {k: last[k] for k in ("final_return", "final_delta_sq", "off_support",
                                        "final_entropy")}
    out["averaged_iterates"] = len(iterates)
    return {"history": hist, "steerer": st, **out}


def evaluate(st: Steerer, map_cfg: MapConfig, cfg: SteerConfig, gen: torch.Generator,
             n: int = 2048) -> dict:
    """The final policy on ``n`` fresh starts: return, E||Delta||^2 (LP-DS), the share of
    latents outside the prior's 99% ball, action entropy, sample paths."""
    s = sample_states(map_cfg, n, gen, st.device)
    out = st.act(s, gen, explore=False)
    roll = rollout(map_cfg, s, out["a"])
    w_sq = (out["w"] ** 2).sum(1)
    return {
        "final_return": float(roll["return"].mean()),
        "final_delta_sq": float(out["delta_sq"].mean()) if "delta_sq" in out else math.nan,
        "off_support": float((w_sq > chi2_quantile(map_cfg.action_dim)).float().mean()),
        "collision_rate": float((roll["collision"] > 0).float().mean()),
        "gap_share": float(roll["gap"].float().mean()),
        "latent_sq": w_sq,
        "final_entropy": policy_entropy(st, map_cfg, 512, cfg.knn_k, gen),
        "paths": (s[:64], out["a"][:64]),
    }


def evaluate_prior(prior, map_cfg: MapConfig, cfg: SteerConfig, gen: torch.Generator) -> dict:
    """The frozen BC policy evaluated like a steered one (Delta = 0)."""
    st = Steerer(prior, SteerConfig(method="lpds", knn_k=cfg.knn_k), map_cfg.action_dim)
    return evaluate(st, map_cfg, cfg, gen)


def validation_return(st: Steerer, map_cfg: MapConfig, gen: torch.Generator,
                      n: int = 2048) -> float:
    """The deployed policy's mean return on ``n`` starts drawn from ``gen`` (claims v3: one
    generator per seed shared by every method, so all choose their setting on the same
    starts and noise; never the evaluation that is reported)."""
    s = sample_states(map_cfg, n, gen, st.device)
    return float(rollout(map_cfg, s, st.act(s, gen, explore=False)["a"])["return"].mean())
