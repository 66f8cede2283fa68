"""The experiments of ``evoclaw``: scales, cached runs and the data behind F1-F4.

F1 reconstruction quality (ARI, edge F1) vs commit-log noise over a seed's repositories; F2
resolve rate by milestone index, isolated vs continuous; F3 recall / precision of the tests as
milestones accumulate (continuous); F4 score vs competence ``p`` and vs coupling ``beta``.
Repository ``i`` of seed ``s`` draws from ``numpy.random.default_rng([s, i, stream])``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np

from icml26.common import cached
from icml26.common import config_for as preset
from icml26.evoclaw.evolution import Agent, SuiteOracle, draw_trajectories, grade
from icml26.evoclaw.history import HistoryConfig, make_history, random_dag
from icml26.evoclaw.package import make_package
from icml26.evoclaw.reconstruct import ReconConfig, reconstruct

PAPER = "evoclaw"
CACHE_VERSION = 1
HISTORY, PACKAGE, AGENT = 0, 1, 2  # random streams of a repository


@dataclass(frozen=True)
class EvoConfig:
    """One scale of the experiments. Quick defaults fit CI; ``SCALES["paper"]`` is closer."""

    history: HistoryConfig = field(default_factory=HistoryConfig)
    recon: ReconConfig = field(default_factory=ReconConfig)
    n_repos: int = 7  # EvoClaw's 7 repositories (98 milestones, 124 edges)
    noise_grid: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4)  # F1's x-axis
    claim_noise: float = 0.2  # the noise for dag_recovered / edges_recovered
    pkg_milestones: int = 14  # 98 milestones / 7 repositories
    pkg_density: float = 0.3
    pkg_max_parents: int = 3
    n_tests: int = 4
    beta: float = 1.0  # share of integration tests
    p: float = 0.85  # the competence for continuous_drop
    r: float = 0.0  # regression rate (0: isolated measures p alone)
    n_trajectories: int = 100  # per repository
    p_grid: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0)  # F4
    beta_grid: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)  # F4 (n_tests = 4)
    sweep_trajectories: int = 30
    reset_dependencies: bool = False  # the mutation: grade continuous runs on reference deps

    def validate(self) -> None:
        self.history.validate()
        self.recon.validate()
        Agent(self.p, self.r).validate()
        for name in ("n_repos", "n_trajectories", "sweep_trajectories"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 2 <= self.pkg_milestones <= 40:
            raise ValueError(f"pkg_milestones must be in [2, 40], got {self.pkg_milestones}")
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"beta must be in [0, 1], got {self.beta}")


SCALES = {
    "quick": EvoConfig(),
    # paper: 14 milestones per repository in the logs too, 4x the trajectories
    "paper": EvoConfig(history=HistoryConfig(n_milestones=14), n_trajectories=400,
                       sweep_trajectories=100),
}


def config_for(scale: str) -> EvoConfig:
    """The preset named ``scale`` (``"quick"`` or ``"paper"``)."""
    return preset(SCALES, scale)


def repo_rng(seed: int, repo: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), int(repo), int(stream)])


# --------------------------------------------------------------------------- (A) DeepCommit
def figure_reconstruction_data(cfg: EvoConfig, seed: int = 0, progress=None) -> list[dict]:
    """F1: one row per (noise, repository) with ARI, edge F1/precision/recall (cached)."""
    cfg.validate()

    def compute():
        rows = []
        for noise in cfg.noise_grid:
            for repo in range(cfg.n_repos):
                hist = make_history(replace(cfg.history, noise=noise),
                                    repo_rng(seed, repo, HISTORY))
                res = reconstruct(hist, cfg.recon)
                rows.append({"noise": noise, "repo": repo,
                             **{k: v for k, v in res.items() if k not in ("labels", "edges")},
                             "n_edges": len(hist.edges)})
                if progress:
                    progress(1)
        return rows

    key = (cfg.history, cfg.recon, cfg.n_repos, cfg.noise_grid)
    return cached(PAPER, "reconstruction", key, seed, CACHE_VERSION, compute)


# --------------------------------------------------------------------------- (B) evolution
def repo_package(cfg: EvoConfig, seed: int, repo: int, beta: float | None = None):
    """Repository ``repo``'s generated package (its DAG, templates and tests)."""
    rng = repo_rng(seed, repo, PACKAGE)
    edges = random_dag(cfg.pkg_milestones, cfg.pkg_density, cfg.pkg_max_parents, rng)
    return make_package(edges, cfg.pkg_milestones, rng, cfg.n_tests,
                        cfg.beta if beta is None else beta)


@functools.lru_cache(maxsize=32)
def repo_oracle(cfg: EvoConfig, seed: int, repo: int, beta: float) -> SuiteOracle:
    """The test oracle of a repository's package (shared by the p values of a sweep, so a
    code state's tests run once)."""
    return SuiteOracle(repo_package(cfg, seed, repo, beta))


def evaluate_repo(cfg: EvoConfig, seed: int, repo: int, p: float, r: float, beta: float,
                  trajectories: int, reset_dependencies: bool = False) -> dict:
    """One repository: its package's tests really run for every state its agents reach;
    per mode the ``grade`` arrays, plus ``runs`` (distinct code states whose tests were
    run for these agents) and ``edges``."""
    oracle = repo_oracle(cfg, seed, repo, beta)
    spec = oracle.spec
    draws = draw_trajectories(spec, Agent(p, r), trajectories, repo_rng(seed, repo, AGENT))
    oracle.seen.clear()
    out = {mode: grade(oracle, *draws, mode, reset_dependencies)
           for mode in ("isolated", "continuous")}
    out["runs"] = len(oracle.seen)
    out["edges"] = sum(len(ps) for ps in spec.parents)
    return out


def pool(repos: list[dict]) -> dict:
    """Pool repositories' gradings: per mode the ``score`` (mean resolved over every milestone
    of every repository), ``by_index`` (resolve rate by milestone index), ``recall`` /
    ``precision`` (means by index) and ``per_repo`` scores; ``runs`` and ``edges`` summed."""
    out: dict = {"runs": sum(r["runs"] for r in repos), "edges": sum(r["edges"] for r in repos)}
    for mode in ("isolated", "continuous"):
        resolved = np.concatenate([r[mode]["resolved"] for r in repos])  # [repos * n, M]
        out[mode] = {
            "score": float(resolved.mean()),
            "by_index": resolved.mean(0).tolist(),
            "recall": np.concatenate([r[mode]["recall"] for r in repos]).mean(0).tolist(),
            "precision": np.concatenate([r[mode]["precision"] for r in repos]).mean(0).tolist(),
            "per_repo": [r[mode]["score"] for r in repos]}
    return out


def evaluate(cfg: EvoConfig, seed: int, p: float, r: float, beta: float, trajectories: int,
             reset_dependencies: bool = False, progress=None) -> dict:
    """Isolated and continuous grading of ``trajectories`` agents per repository, pooled."""
    repos = []
    for repo in range(cfg.n_repos):
        repos.append(evaluate_repo(cfg, seed, repo, p, r, beta, trajectories,
                                   reset_dependencies))
        if progress:
            progress(1)
    return pool(repos)


def figure_evolution_data(cfg: EvoConfig, seed: int = 0, progress=None) -> dict:
    """F2 and F3 at the claims' ``p``, ``r`` and ``beta`` (cached)."""
    cfg.validate()
    key = (cfg.pkg_milestones, cfg.pkg_density, cfg.pkg_max_parents, cfg.n_tests, cfg.beta,
           cfg.p, cfg.r, cfg.n_trajectories, cfg.n_repos, cfg.reset_dependencies)
    return cached(PAPER, "evolution", key, seed, CACHE_VERSION,
                  lambda: evaluate(cfg, seed, cfg.p, cfg.r, cfg.beta, cfg.n_trajectories,
                                   cfg.reset_dependencies, progress))


def figure_sweep_data(cfg: EvoConfig, seed: int = 0, progress=None) -> list[dict]:
    """F4: pooled isolated and continuous scores vs ``p`` (at ``beta``) and vs ``beta`` (at
    the claims' ``p``), ``sweep_trajectories`` agents per repository (cached)."""
    cfg.validate()

    def compute():
        rows = []
        cases = [("p", p, cfg.beta) for p in cfg.p_grid]
        cases += [("beta", cfg.p, b) for b in cfg.beta_grid]
        for sweep, p, beta in cases:
            res = evaluate(cfg, seed, p, cfg.r, beta, cfg.sweep_trajectories)
            for mode in ("isolated", "continuous"):
                rows.append({"sweep": sweep, "p": p, "beta": beta, "mode": mode,
                             "score": res[mode]["score"]})
            if progress:
                progress(1)
        return rows

    key = (cfg.pkg_milestones, cfg.pkg_density, cfg.pkg_max_parents, cfg.n_tests, cfg.p_grid,
           cfg.beta_grid, cfg.beta, cfg.p, cfg.r, cfg.sweep_trajectories, cfg.n_repos)
    return cached(PAPER, "sweep", key, seed, CACHE_VERSION, compute)
