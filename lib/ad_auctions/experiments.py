"""Scales and the data of the figures (F1 the Stackelberg curve, F2 TTSL-PPO's training,
F3 spend / budget through the value shift, F4 the duals with and without the regulariser).

Every function takes a config, a seed and a ``device`` (where the markets run; the value
draws come from CPU generators either way) and returns plain data (lists, dicts, floats);
TTSL-PPO's training is cached on disk (``icml26.common.cached``), keyed by device type off
the CPU.

Pacing (``pacing_stats``): a budget-bound bidder is paced when its budget lasts the horizon
and is spent.  Per bidder, ``lasts`` = (first round at which half the markets have spent
99.9% of its budget) / T (1.0 when that never happens) and ``spent`` = its mean final spend /
budget; ``paced = min(lasts, spent)``.  Without pacing (``eta = 0``) the bound bidders' budgets
run out around rounds 47-75 of 300 (``paced`` ~0.16-0.25); duals stuck high leave budget
unspent (``spent`` < 1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from icml26.ad_auctions.market import MarketConfig, episode, pacing_stats
from icml26.ad_auctions.platform import (
    PPOConfig,
    evaluate_all,
    grid_curve,
    myopic_z,
    train_ppo,
    tune_fixed_z,
    tune_myopic,
)
from icml26.common import cached, device_key
from icml26.common import config_for as _config_for

PAPER = "ad_auctions"
CACHE_VERSION = 2  # 2: the training records each iteration's pacing (issue 46)
BETAS = (0.05, 0.0)  # the regularised ODDB-R and plain dual descent (F3, F4)


@dataclass(frozen=True)
class AuctionConfig:
    """A full experiment: the market, the grid, the evaluation batch and TTSL-PPO."""

    market: MarketConfig = field(default_factory=MarketConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    grid_points: int = 21        # z grid on [0, z_max]
    eval_markets: int = 64       # episodes per grid point / evaluation (common draws)
    shift_markets: int = 64      # episodes of the shift experiment (F3, F4)
    shift_at: float = 0.5        # the mid-episode value shift
    settle: float = 0.2          # share of the post-shift window skipped before the variance
    objective: str = "net"       # "gross": the platform ignores the inference cost (mutation)

    def validate(self) -> None:
        self.market.validate()
        self.ppo.validate()
        if self.objective not in ("net", "gross"):
            raise ValueError(f"objective must be 'net' or 'gross', got {self.objective!r}")
        if self.grid_points < 3:
            raise ValueError(f"grid_points must be >= 3, got {self.grid_points}")

    def zs(self) -> torch.Tensor:
        return torch.linspace(0.0, self.market.z_max, self.grid_points)


SCALES = {
    "quick": AuctionConfig(),
    "paper": AuctionConfig(market=MarketConfig(horizon=500), ppo=PPOConfig(iterations=120,
                                                                          markets=128),
                           grid_points=41, eval_markets=256, shift_markets=256),
}


def config_for(scale: str) -> AuctionConfig:
    return _config_for(SCALES, scale)


def eval_seed(seed: int) -> int:
    """The evaluation draws' seed (disjoint from PPO's training draws)."""
    return 100_003 + seed


# --------------------------------------------------------------------------- F1
def figure_curve_data(cfg: AuctionConfig, seed: int, device: torch.device | str = "cpu") -> dict:
    """Net revenue, gross payments, welfare and clicks per round vs ``z`` at the bidders'
    ODDB-R response; ``z_star`` maximises the platform's objective (net revenue, or gross
    payments under the mutation)."""
    cfg.validate()
    zs = cfg.zs()
    c = grid_curve(cfg.market, zs, cfg.eval_markets, eval_seed(seed), device=device)
    target = c["net"] if cfg.objective == "net" else c["payments"]
    i = int(target.argmax())
    return {**{k: v.tolist() for k, v in c.items()}, "z_star": float(zs[i]),
            "net_star": float(c["net"][i]), "objective": cfg.objective}


# --------------------------------------------------------------------------- F2
def trained_ppo(cfg: AuctionConfig, seed: int,
                progress: Callable[[int, int], None] | None = None,
                device: torch.device | str = "cpu") -> dict:
    """TTSL-PPO trained on ``cfg`` (cached per config, seed and device type)."""
    pcfg = dataclasses.replace(cfg.ppo, objective=cfg.objective)
    return cached(PAPER, device_key("ppo", device), (cfg.market, pcfg), seed, CACHE_VERSION,
                  lambda: train_ppo(cfg.market, pcfg, seed, progress, device))


def tuned_heuristics(cfg: AuctionConfig, seed: int,
                     device: torch.device | str = "cpu") -> dict:
    """The heuristics tuned on TTSL-PPO's training budget and draws (``platform.tune_*``;
    cached like the training): ``{name: {z, grid, tried, net}}``."""
    def compute():
        return {"fixed z (tuned)": tune_fixed_z(cfg.market, cfg.ppo, seed, device),
                "myopic (tuned)": tune_myopic(cfg.market, cfg.ppo, seed, device)}

    # keyed by what the tuning uses (the budget, not PPO's step size or objective)
    budget = (cfg.ppo.iterations, cfg.ppo.markets)
    return cached(PAPER, device_key("tuned", device), (cfg.market, budget), seed,
                  CACHE_VERSION, compute)


def figure_ppo_data(cfg: AuctionConfig, seed: int,
                    progress: Callable[[int, int], None] | None = None,
                    device: torch.device | str = "cpu") -> dict:
    """TTSL-PPO's mean ``z``, batch net revenue and the bidders' pacing per iteration, its
    final ``z`` evaluated on the grid's draws (net revenue, welfare gross and net of the
    inference cost, clicks per round), the untuned heuristics (``heuristics``) and the tuned
    ones (``tuned``, with what their tuning saw) with the same measures, the grid optimum and
    the net-revenue and net-welfare curves of F1."""
    curve = figure_curve_data(dataclasses.replace(cfg, objective="net"), seed, device)
    ppo = trained_ppo(cfg, seed, progress, device)
    es, m = eval_seed(seed), cfg.eval_markets
    z_myopic = myopic_z(cfg.market, cfg.zs(), m, es, device)
    heuristics = {"z = 0": 0.0, "z = z_max": cfg.market.z_max, "myopic": z_myopic}
    ev = evaluate_all(cfg.market, ppo["z"], m, es, device)
    tuned = {k: {"z": t["z"], "grid": t["grid"], "tried": t["tried"], "tune_net": t["net"],
                 **evaluate_all(cfg.market, t["z"], m, es, device)}
             for k, t in tuned_heuristics(cfg, seed, device).items()}
    # the bidders bound (overspending unpaced) at both ends of the z range the policy mean
    # travelled during training: the ones pacing_through_training reads
    z_range = (min(cfg.ppo.z_init, *ppo["z_path"]), max(cfg.ppo.z_init, *ppo["z_path"]))
    ends = [bound_bidders(cfg.market, z, cfg.shift_markets, es + 3, device) for z in z_range]
    return {"z_path": ppo["z_path"], "std_path": ppo["std_path"], "net_path": ppo["net_path"],
            "train_z_range": z_range, "train_bound": [a and b for a, b in zip(*ends)],
            "paced_path": ppo["paced_path"], "exhaust_path": ppo["exhaust_path"],
            "z_ppo": ppo["z"], **{f"{k}_ppo": v for k, v in ev.items()},
            "heuristics": {k: {"z": z, **evaluate_all(cfg.market, z, m, es, device)}
                           for k, z in heuristics.items()},
            "tuned": tuned,
            "z_star": curve["z_star"], "net_star": curve["net_star"],
            "curve": {k: curve[k] for k in ("z", "net", "net_welfare", "clicks")}}


# --------------------------------------------------------------------------- pacing
def bound_bidders(market: MarketConfig, z: float, markets: int, seed: int,
                  device: torch.device | str = "cpu") -> list[bool]:
    """Which bidders are budget-bound: those who would spend more than their budget with no
    pacing and no cap (duals at 0, same value draws)."""
    budget = torch.tensor(market.budget, device=device) * market.horizon
    free = dataclasses.replace(market, hard_cap=False, mu_init=0.0)
    unpaced = episode(free, torch.full((markets,), float(z), device=device),
                      torch.Generator().manual_seed(seed), respond=False)
    return ((unpaced["spent"] / budget).mean(0) > 1.0).tolist()


def figure_pacing_data(cfg: AuctionConfig, seed: int, z: float,
                       device: torch.device | str = "cpu") -> dict:
    """Pacing in the stationary market of F1 / F2 (no value shift: the market where the
    revenue claims are measured) at investment ``z``: ``pacing_stats`` of ODDB-R (the
    config's ``beta``), the bound bidders and the mean spend / budget path ``[T][N]``."""
    mcfg = dataclasses.replace(cfg.market, shift_at=0.0)
    es = eval_seed(seed) + 2
    budget = torch.tensor(mcfg.budget, device=device) * mcfg.horizon
    ep = episode(mcfg, torch.full((cfg.shift_markets,), float(z), device=device),
                 torch.Generator().manual_seed(es), record=True)
    return {"z": z, "bound": bound_bidders(mcfg, z, cfg.shift_markets, es, device),
            **pacing_stats(ep["spent_path"], budget),
            "spend_ratio_path": (ep["spent_path"] / budget).mean(1).tolist()}


# --------------------------------------------------------------------------- F3, F4
def figure_shift_data(cfg: AuctionConfig, seed: int, z: float | None = None,
                      device: torch.device | str = "cpu") -> dict:
    """Spend / budget and dual paths (mean over markets, ``[T, N]``) through the value shift
    at ``z`` (default: the grid optimum), for each ``beta`` of ``BETAS``; the final spend /
    budget per bidder, ``pacing_stats`` per bidder, which bidders are budget-bound (they
    would overspend without pacing), the post-shift variance of each bidder's dual over
    rounds (mean over markets) and whether the duals move after the shift at all."""
    if z is None:
        z = figure_curve_data(dataclasses.replace(cfg, objective="net"), seed,
                              device)["z_star"]
    T = cfg.market.horizon
    budget = torch.tensor(cfg.market.budget, device=device) * T
    t0 = int(cfg.shift_at * T)
    lo = t0 + int(cfg.settle * (T - t0))
    mcfg = dataclasses.replace(cfg.market, shift_at=cfg.shift_at)
    bound = bound_bidders(mcfg, z, cfg.shift_markets, eval_seed(seed) + 1, device)
    out = {"z": z, "shift_round": t0, "window": (lo, T), "runs": {}, "bound": bound}
    # both arms in one batch of 2 M markets, on the same value draws (tile=2)
    m = cfg.shift_markets
    ep = episode(mcfg, torch.full((2 * m,), float(z), device=device),
                 torch.Generator().manual_seed(eval_seed(seed) + 1), record=True, tile=2,
                 beta=torch.tensor(BETAS).repeat_interleave(m))
    for k, beta in enumerate(BETAS):
        arm = slice(k * m, (k + 1) * m)
        mu, ratio = ep["mu_path"][:, arm], ep["spent_path"][:, arm] / budget   # [T, M, N]
        out["runs"][beta] = {
            "spend_ratio_path": ratio.mean(1).tolist(),  # [T][N]
            "mu_path": mu.mean(1).tolist(),
            "final_ratio": (ep["spent"][arm] / budget).mean(0).tolist(),
            "post_var": mu[lo:].var(0).mean(0).tolist(),
            # do the duals move after the shift at all (False: pacing is switched off)
            "post_moves": bool((mu[lo:] != mu[lo:lo + 1]).any()),
            **pacing_stats(ep["spent_path"][:, arm], budget),
        }
    return out
