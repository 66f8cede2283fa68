"""Scales, the cached prior and online runs, and the data of every figure.

One experiment = one seed: demos -> flow-matching BC prior (cached) -> the frozen BC policy,
LP-DS at each trust region ``delta`` in the grid, DSRL and residual RL, each trained online
from the same prior (cached as plain numbers: histories, final metrics, sample paths).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from icml26 import common
from icml26.common import cached, generator
from icml26.lpds.env import MapConfig, demonstrations
from icml26.lpds.prior import FlowPolicy, PriorConfig, train_prior
from icml26.lpds.steer import SteerConfig, evaluate_prior, train_steering

PAPER = "lpds"
CACHE_VERSION = 1
TRUST_TAIL = 10  # iterations the final E||Delta||^2 is averaged over


@dataclass(frozen=True)
class LPDSConfig:
    """Everything one seed's experiment runs (quick: ~15k episodes per method)."""

    map: MapConfig = field(default_factory=MapConfig)
    prior: PriorConfig = field(default_factory=PriorConfig)
    steer: SteerConfig = field(default_factory=SteerConfig)
    deltas: tuple[float, ...] = (0.5, 2.0)  # the spec's grid less 0.1 (CPU budget)
    freeze_lambda: bool = False             # the mutation (no dual ascent)


SCALES = {
    "quick": LPDSConfig(),
    "paper": LPDSConfig(prior=PriorConfig(steps=6000, n_demos=8192),
                        steer=SteerConfig(iterations=120), deltas=(0.1, 0.5, 2.0)),
}


def config_for(scale: str) -> LPDSConfig:
    return common.config_for(SCALES, scale)


def trained_prior(cfg: LPDSConfig, seed: int) -> FlowPolicy:
    """The frozen flow-matching BC policy of ``seed`` (cached state dict)."""
    def fit():
        g = generator(seed)
        demos = demonstrations(cfg.map, cfg.prior.n_demos, g)
        model, losses = train_prior(demos["states"], demos["actions"], cfg.prior, g)
        return {"state": model.state_dict(), "losses": losses}

    blob = cached(PAPER, "prior", (cfg.map, cfg.prior), seed, CACHE_VERSION, fit)
    model = FlowPolicy(cfg.map.action_dim, 2, cfg.prior.hidden, cfg.prior.euler_steps)
    model.load_state_dict(blob["state"])
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def method_configs(cfg: LPDSConfig) -> dict[str, SteerConfig]:
    """Label -> online config: LP-DS at each delta, DSRL, residual RL."""
    out = {f"LP-DS d={d:g}": replace(cfg.steer, method="lpds", delta=d,
                                     freeze_lambda=cfg.freeze_lambda) for d in cfg.deltas}
    out["DSRL"] = replace(cfg.steer, method="dsrl")
    out["residual RL"] = replace(cfg.steer, method="residual")
    return out


def summarize(res: dict) -> dict:
    """The plain-number part of a run (what the cache and the figures keep)."""
    out = {k: v for k, v in res.items() if k != "steerer"}
    out["latent_sq"] = res["latent_sq"].numpy()
    s, a = res["paths"]
    out["paths"] = (s.numpy(), a.numpy())
    return out


def run_method(cfg: LPDSConfig, label: str, seed: int, progress=None) -> dict:
    """One method's online run from the seed's prior (cached)."""
    scfg = method_configs(cfg)[label]
    index = list(method_configs(cfg)).index(label)

    def compute():
        prior = trained_prior(cfg, seed)
        g = generator(1000 * seed + 17 + index)
        return summarize(train_steering(prior, cfg.map, scfg, g, progress))

    return cached(PAPER, "run", (cfg.map, cfg.prior, scfg), seed, CACHE_VERSION, compute)


def bc_result(cfg: LPDSConfig, seed: int) -> dict:
    def compute():
        prior = trained_prior(cfg, seed)
        return summarize({**evaluate_prior(prior, cfg.map, cfg.steer, generator(seed + 99)),
                          "steerer": None})

    return cached(PAPER, "bc", (cfg.map, cfg.prior, cfg.steer.knn_k), seed, CACHE_VERSION,
                  compute)


def experiment(cfg: LPDSConfig, seed: int, progress=None) -> dict:
    """BC and every method's run for ``seed``: ``{label: result}``."""
    out = {"BC": bc_result(cfg, seed)}
    for label in method_configs(cfg):
        out[label] = run_method(cfg, label, seed)
        if progress is not None:
            progress(label)
    return out


def final_trust(res: dict, delta: float) -> float:
    """Final E||Delta||^2 / delta: the mean over the last ``TRUST_TAIL`` iterations' batches
    (a primal-dual method holds its constraint on average over its iterates)."""
    tail = res["history"]["delta_sq"][-TRUST_TAIL:]
    return sum(tail) / len(tail) / delta


def episodes_to_fraction(res: dict, fraction: float = 0.9, window: int = 5) -> float:
    """Episodes until the moving-average return first reaches ``fraction`` x final."""
    h = res["history"]
    r = torch.tensor(h["return"])
    smooth = torch.stack([r[max(0, i - window + 1):i + 1].mean() for i in range(len(r))])
    target = fraction * float(smooth[-1])
    hit = (smooth >= target).nonzero()
    return float(h["episodes"][int(hit[0])]) if len(hit) else float(h["episodes"][-1])


def figure_trajectories_data(cfg: LPDSConfig, seed: int) -> dict:
    """Sample decoded paths per method: ``{label: (states [n, 2], actions [n, 2H])}``."""
    return {k: v["paths"] for k, v in experiment(cfg, seed).items()}


def figure_training_data(cfg: LPDSConfig, seed: int) -> dict:
    """Return and action entropy vs episodes, E||Delta||^2 and lambda vs iterations."""
    return {k: v["history"] for k, v in experiment(cfg, seed).items() if k != "BC"} | {
        "BC": {"final_return": experiment(cfg, seed)["BC"]["final_return"],
               "final_entropy": experiment(cfg, seed)["BC"]["final_entropy"]}}
