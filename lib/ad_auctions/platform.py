"""The platform (the Stackelberg leader) [derived from the abstract]: the net-revenue curve
over a grid of investments, the fixed-rule heuristics and TTSL-PPO.

* ``grid_curve``: net revenue (payments - kappa z), welfare and clicks per round at the
  bidders' ODDB-R response, for each ``z`` of a grid; every grid point sees the same value
  draws (common random numbers), so the argmax is not a noise artefact.
* Heuristics: ``z = 0`` (no LLM creatives), ``z = z_max`` (always the best creative) and the
  myopic rule, which picks ``z`` maximising net revenue with the bidders' duals frozen at their
  ``z = 0`` values and budgets ignored (it does not anticipate that paced bidders cannot pay
  more: the follower response the Stackelberg leader accounts for).
* TTSL-PPO: a Gaussian policy over ``a``, ``z = z_max sigmoid(a)``, trained by PPO's clipped
  surrogate on the per-round net revenue of whole episodes (one per market and iteration).
  The markets run on ``device``; the two policy parameters and their updates stay on the
  CPU (two scalars: nothing to gain from a GPU, and the action draws share the CPU
  generator with the value draws).
  Two timescales: the duals move every round (step ``eta``) and are carried over from one
  episode to the next in each market, the policy moves once per episode with a small Adam
  step ``lr``.  ``objective="gross"`` is the PIM pitfall (the mutation): the platform
  maximises payments and ignores the inference cost it pays.  Each iteration also records
  the bidders' pacing (``pacing_stats`` of its episodes): the followers pace while the
  leader's ``z`` moves (the abstract's non-stationarity).
* Tuned heuristics (issue 46): ``tune_fixed_z`` and ``tune_myopic`` get TTSL-PPO's training
  budget and draws (``iterations`` batches of ``markets`` episodes; batch ``k`` replays the
  value draws of PPO's iteration ``k``) and a grid of ``iterations`` points on ``[0, z_max]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from icml26.ad_auctions.market import (
    MarketConfig,
    episode,
    new_state,
    pacing_stats,
    run_rounds,
)

OBJECTIVES = ("net", "gross")


@dataclass(frozen=True)
class PPOConfig:
    """TTSL-PPO's settings (ours; the abstract gives none)."""

    iterations: int = 40       # policy updates (one batch of episodes each)
    markets: int = 32          # parallel markets (episodes per batch)
    epochs: int = 8            # PPO epochs per batch
    clip: float = 0.2          # PPO ratio clip
    lr: float = 0.05           # Adam step of the policy (the slow timescale)
    z_init: float = 0.4        # initial mean investment (a cautious platform)
    std_init: float = 0.6      # initial policy std in logit space
    objective: str = "net"     # "net" (PIM: cost endogenised) or "gross" (the pitfall)

    def validate(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if not (self.iterations >= 1 and self.markets >= 2 and self.epochs >= 1):
            raise ValueError("PPO needs >= 1 iteration, >= 2 markets and >= 1 epoch")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")


def grid_curve(cfg: MarketConfig, zs: torch.Tensor, markets: int, seed: int,
               respond: bool = True, device: torch.device | str = "cpu") -> dict:
    """Per-round means over ``markets`` episodes at each ``z`` of ``zs`` (same draws); the
    markets run on ``device``, the returned curves are CPU tensors."""
    g = torch.Generator().manual_seed(seed)
    z = zs.repeat_interleave(markets).to(device)
    out = episode(cfg, z, g, respond=respond, tile=len(zs))
    res = {"z": zs.clone()}
    for k in ("net", "payments", "clicks", "welfare", "net_welfare"):
        res[k] = out[k].view(len(zs), markets).mean(1).cpu()
    return res


def evaluate_all(cfg: MarketConfig, z: float, markets: int, seed: int,
                 device: torch.device | str = "cpu") -> dict[str, float]:
    """Per-round net revenue, payments, welfare (the winners' value ``v_w q_w``), social
    welfare net of the inference cost (``v_w q_w - kappa z``) and clicks (engagement) at a
    fixed ``z`` on the same draws as ``grid_curve(seed)``."""
    out = episode(cfg, torch.full((markets,), float(z), device=device),
                  torch.Generator().manual_seed(seed))
    return {k: float(out[k].mean())
            for k in ("net", "payments", "welfare", "net_welfare", "clicks")}


def evaluate(cfg: MarketConfig, z: float, markets: int, seed: int,
             device: torch.device | str = "cpu") -> float:
    """Net revenue per round at a fixed ``z`` on the same draws as ``grid_curve(seed)``."""
    return evaluate_all(cfg, z, markets, seed, device)["net"]


def myopic_z(cfg: MarketConfig, zs: torch.Tensor, markets: int, seed: int,
             device: torch.device | str = "cpu") -> float:
    """The myopic heuristic's ``z``: best net revenue with duals frozen at their ``z = 0``
    values and budgets ignored (bidders assumed not to respond)."""
    g = torch.Generator().manual_seed(seed)
    base = episode(cfg, torch.zeros(markets, device=device), g)
    mu0 = base["mu"].mean(0)
    free = MarketConfig(**{**cfg.__dict__, "budget": (1e6,) * cfg.n_bidders})
    curve = episode(free, zs.repeat_interleave(markets).to(device),
                    torch.Generator().manual_seed(seed), respond=False, mu0=mu0, tile=len(zs))
    net = curve["net"].view(len(zs), markets).mean(1).cpu()
    return float(zs[int(net.argmax())])


class PPOTrainer:
    """TTSL-PPO as an object, so a caller (the app's Run) can train in chunks with progress.

    ``step(n)`` runs ``n`` iterations; ``result()`` gives the paths and the final ``z``."""

    def __init__(self, cfg: MarketConfig, pcfg: PPOConfig, seed: int,
                 device: torch.device | str = "cpu"):
        pcfg.validate()
        cfg.validate()
        self.cfg, self.pcfg, self.device = cfg, pcfg, device
        self.gen = torch.Generator().manual_seed(seed)
        p = min(max(pcfg.z_init / cfg.z_max, 1e-3), 1 - 1e-3)
        self.mean = torch.tensor(math.log(p / (1 - p)), requires_grad=True)
        self.log_std = torch.tensor(math.log(pcfg.std_init), requires_grad=True)
        self.opt = torch.optim.Adam([self.mean, self.log_std], lr=pcfg.lr)
        self.state = new_state(cfg, pcfg.markets, device=device)
        self.z_path: list[float] = []
        self.std_path: list[float] = []
        self.net_path: list[float] = []
        self.paced_path: list[list[float]] = []   # [iteration][bidder]
        self.exhaust_path: list[list[int]] = []

    @property
    def done(self) -> bool:
        return len(self.z_path) >= self.pcfg.iterations

    def step(self, n: int = 1) -> None:
        cfg, pcfg = self.cfg, self.pcfg
        for _ in range(n):
            if self.done:
                return
            with torch.no_grad():
                std = self.log_std.exp()
                a = self.mean + std * torch.randn(pcfg.markets, generator=self.gen)
                old_logp = torch.distributions.Normal(self.mean, std).log_prob(a)
            z = cfg.z_max * torch.sigmoid(a)
            # a new episode in every market: budgets reset, duals carried over (fast timescale)
            self.state.spent.zero_()
            self.state.t = 0
            paid = run_rounds(cfg, self.state, z.to(self.device), cfg.horizon, self.gen,
                              record=True)
            pace = pacing_stats(paid["spent"], torch.tensor(cfg.budget, device=self.device)
                                * cfg.horizon)
            self.paced_path.append(pace["paced"])
            self.exhaust_path.append(pace["exhaust_round"])
            gross = paid["payments"].cpu() / cfg.horizon
            reward = gross - (cfg.kappa * z if pcfg.objective == "net" else 0.0)
            adv = (reward - reward.mean()) / (reward.std() + 1e-8)
            for _ in range(pcfg.epochs):
                logp = torch.distributions.Normal(self.mean, self.log_std.exp()).log_prob(a)
                ratio = (logp - old_logp).exp()
                loss = -torch.minimum(ratio * adv,
                                      ratio.clamp(1 - pcfg.clip, 1 + pcfg.clip) * adv).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                with torch.no_grad():
                    self.log_std.clamp_(math.log(0.02), math.log(2.0))
            self.z_path.append(float(cfg.z_max * torch.sigmoid(self.mean.detach())))
            self.std_path.append(float(self.log_std.detach().exp()))
            self.net_path.append(float((gross - cfg.kappa * z).mean()))

    def result(self) -> dict:
        return {"z_path": list(self.z_path), "std_path": list(self.std_path),
                "net_path": list(self.net_path), "z": self.z_path[-1],
                "paced_path": [list(p) for p in self.paced_path],
                "exhaust_path": [list(e) for e in self.exhaust_path]}


def train_ppo(cfg: MarketConfig, pcfg: PPOConfig, seed: int,
              progress: Callable[[int, int], None] | None = None,
              device: torch.device | str = "cpu") -> dict:
    """TTSL-PPO on ``z`` (markets on ``device``).  Returns the path of the policy's mean
    ``z`` and std, the batch's mean net revenue per iteration and the final deterministic
    ``z``."""
    trainer = PPOTrainer(cfg, pcfg, seed, device)
    while not trainer.done:
        trainer.step()
        if progress is not None:
            progress(len(trainer.z_path), pcfg.iterations)
    return trainer.result()


# --------------------------------------------------------------------------- tuned heuristics
def tune_grid(cfg: MarketConfig, pcfg: PPOConfig) -> torch.Tensor:
    """The tuning grid, fixed before results: one point per PPO iteration on ``[0, z_max]``
    (40 points at quick scale, ends included)."""
    return torch.linspace(0.0, cfg.z_max, pcfg.iterations)


def training_batches(cfg: MarketConfig, pcfg: PPOConfig, seed: int):
    """PPO's training draws, batch by batch: yields ``(k, gen)`` with ``gen`` positioned where
    PPO's iteration ``k`` starts its value draws (its action draw consumed); the caller plays
    exactly ``horizon`` rounds of ``markets`` markets on it before the next batch."""
    gen = torch.Generator().manual_seed(seed)
    for k in range(pcfg.iterations):
        torch.randn(pcfg.markets, generator=gen)  # PPO's action draw of iteration k
        yield k, gen


def tune_fixed_z(cfg: MarketConfig, pcfg: PPOConfig, seed: int,
                 device: torch.device | str = "cpu") -> dict:
    """The fixed-investment rule tuned on TTSL-PPO's budget: batch ``k`` of PPO's training
    draws plays grid point ``k`` (fresh duals); the best batch net revenue picks ``z``."""
    zs = tune_grid(cfg, pcfg)
    nets = []
    for k, gen in training_batches(cfg, pcfg, seed):
        out = episode(cfg, torch.full((pcfg.markets,), float(zs[k]), device=device), gen)
        nets.append(float(out["net"].mean()))
    best = max(range(len(nets)), key=nets.__getitem__)
    return {"z": float(zs[best]), "grid": zs.tolist(), "tried": zs.tolist(), "net": nets}


def tune_myopic(cfg: MarketConfig, pcfg: PPOConfig, seed: int,
                device: torch.device | str = "cpu") -> dict:
    """The myopic rule with its frozen duals learned on TTSL-PPO's budget: batch 0 plays
    ``z = 0``; after batch ``k`` the observed duals (mean end-of-episode ``mu``) are frozen and
    ``z_{k+1}`` maximises net revenue at those duals, budgets ignored, on batch ``k``'s draws
    (replayed); the iterate with the best batch net revenue is kept."""
    zs = tune_grid(cfg, pcfg)
    free = MarketConfig(**{**cfg.__dict__, "budget": (1e6,) * cfg.n_bidders})
    m, z, tried, nets = pcfg.markets, 0.0, [], []
    for _, gen in training_batches(cfg, pcfg, seed):
        start = gen.get_state()
        out = episode(cfg, torch.full((m,), z, device=device), gen)
        tried.append(z)
        nets.append(float(out["net"].mean()))
        after = gen.get_state()
        gen.set_state(start)  # replay this batch's draws for the model's curve
        curve = episode(free, zs.repeat_interleave(m).to(device), gen, respond=False,
                        mu0=out["mu"].mean(0), tile=len(zs))
        gen.set_state(after)
        z = float(zs[int(curve["net"].view(len(zs), m).mean(1).argmax())])
    best = max(range(len(nets)), key=nets.__getitem__)
    return {"z": tried[best], "grid": zs.tolist(), "tried": tried, "net": nets}
