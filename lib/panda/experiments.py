"""PANDA, the experiment: configs per scale, one seed's run of every method against the
``Phi*`` oracle (cached), and the figures' data (F1 convergence, F2 NI gap, F3 landscape)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from icml26 import common
from icml26.panda.baselines import (
    BaselineConfig,
    ignore_response,
    implicit_aid,
    implicit_oracle,
    unrolled_gda,
)
from icml26.panda.detector import SecondOrderDetector
from icml26.panda.equilibrium import make_game, phi
from icml26.panda.game import DTYPE, GameConfig, ni_gap, policies
from icml26.panda.methods import PandaConfig, Trace, evaluate, panda
from icml26.panda.oracle import OracleConfig, brute_force

PAPER = "panda"
CACHE_VERSION = 2  # 2: cold-start PANDA, related baselines at its oracle budget
METHODS = ("panda", "ignore", "unrolled", "implicit")
METHOD_LABELS = {
    "panda": "PANDA (NI penalty, Danskin)",
    "ignore": "ignore the response (reference)",
    "unrolled": "unrolled descent-ascent",
    "implicit": "implicit differentiation (GDA + MINRES)",
}

#: The related baselines PANDA is compared with at equal oracle calls (the claim's case set).
RELATED = ("unrolled", "implicit")

#: The spec probe's matrix game: 4 x 4 actions, tau = 0.3, x in R^2 (S = 1, gamma = 0).
MATRIX_GAME = GameConfig(n_states=1, n_actions=(4, 4), gamma=0.0)


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything one seed's experiment needs. Defaults = quick scale (the issue's Markov
    game, S = 3); ``detector_window`` PANDA iterations run under the full detector (its
    dispatch-mode signal costs ~3x), the whole run under its cheap signals; the detector
    watches ``unrolled_window`` outer steps of the unrolled baseline."""

    game: GameConfig = GameConfig()
    panda: PandaConfig = PandaConfig()
    baselines: BaselineConfig = BaselineConfig()
    oracle: OracleConfig = OracleConfig()
    detector_window: int = 30
    unrolled_window: int = 2
    methods: tuple[str, ...] = METHODS  # the dashboard may run a subset; claims need all

    def validate(self) -> ExperimentConfig:
        self.game.validate()
        self.panda.validate()
        self.baselines.validate()
        self.oracle.validate()
        if self.game.n_features != 2:
            raise ValueError(f"the experiment draws a 2-D landscape: n_features must be 2, got "
                             f"{self.game.n_features}")
        if not self.game.incentive_cost > 0:
            raise ValueError(f"the Phi* oracle needs incentive_cost > 0, got "
                             f"{self.game.incentive_cost}")
        if self.detector_window < 1 or self.unrolled_window < 1:
            raise ValueError("detector windows must be >= 1")
        if "panda" not in self.methods or not set(self.methods) <= set(METHODS):
            raise ValueError(f"methods must include 'panda' and be drawn from {METHODS}, got "
                             f"{self.methods!r}")
        return self


SCALES = {
    "quick": ExperimentConfig(),
    # longer: 20000 PANDA steps (and the baselines at that budget), deeper unrolling and
    # linear solves, the spec probe's 41 x 41 oracle grid
    "paper": ExperimentConfig(
        panda=PandaConfig(iterations=20_000, record_every=200),
        baselines=BaselineConfig(unrolled_steps=10, implicit_inner_steps=20,
                                 implicit_solver_steps=20, ignore_iterations=300,
                                 exact_iterations=400, record_every=10),
        oracle=OracleConfig(grid=41, keep=5, rounds=22)),
}


def config_for(scale: str) -> ExperimentConfig:
    """The preset named ``scale`` ("quick" | "paper")."""
    return common.config_for(SCALES, scale)


# --------------------------------------------------------------------------- experiment
def _trace_dict(tr: Trace) -> dict:
    return {"method": tr.method, "iteration": tr.iteration, "x": tr.x, "ni": tr.ni,
            "rho": tr.rho, "calls": tr.calls, "phi": tr.phi, "seconds": tr.seconds}


def final_numbers(game, tr: Trace) -> dict:
    """The end of a run: ``x``, the true ``Phi(x)``, the exact NI gap of its own (pi, nu)
    and the oracle calls spent (``Phi`` from :func:`evaluate`)."""
    x = torch.tensor(tr.x[-1], dtype=DTYPE)
    pi, nu = policies(game, tr.final_z)
    return {"x": tr.x[-1], "phi": tr.phi[-1], "ni": float(ni_gap(game, x, pi, nu)[0]),
            "calls": tr.calls[-1]}


def run_experiment(cfg: ExperimentConfig = ExperimentConfig(), seed: int = 0,
                   progress: Callable[[str, float], None] | None = None,
                   device: str = "cpu") -> dict:
    """One seed: the instance, ``Phi*`` by brute force, PANDA (cold start), the related
    baselines at PANDA's budget of oracle calls, the references, every trace with the true
    ``Phi(x_k)``, the exact final NI gaps and the detector counts. Plain data (lists /
    floats), so it caches and plots without the classes.

    ``device``: where the game's tensors live (drawn on the CPU from the seed's generator,
    then moved, so the instance is the same everywhere); every method follows them."""
    dev = common.resolve_device(device)
    cfg.validate()
    report = progress or (lambda stage, frac: None)
    game = make_game(cfg.game, seed, device=dev)
    report("oracle", 0.0)
    oracle = brute_force(game, cfg.oracle)
    land = oracle.pop("landscape")
    report("panda", 0.1)
    with SecondOrderDetector(dispatch=False) as det_run:
        tr_panda = panda(game, cfg.panda, progress=lambda f: report("panda", 0.1 + 0.5 * f))
    with SecondOrderDetector() as det_window:
        panda(game, replace(cfg.panda, iterations=cfg.detector_window))
    with SecondOrderDetector() as det_unrolled:
        unrolled_gda(game, cfg.baselines,
                     budget=cfg.unrolled_window * cfg.baselines.step_cost("unrolled"))
    budget = tr_panda.calls[-1]
    traces = {"panda": tr_panda}
    runners = {"ignore": lambda: ignore_response(game, cfg.baselines),
               "unrolled": lambda: unrolled_gda(game, cfg.baselines, budget),
               "implicit": lambda: implicit_aid(game, cfg.baselines, budget)}
    for i, name in enumerate(m for m in METHODS[1:] if m in cfg.methods):
        report(name, 0.6 + 0.1 * i)
        traces[name] = runners[name]()
    report("implicit_exact", 0.9)
    exact = implicit_oracle(game, cfg.baselines)
    report("evaluate", 0.95)
    final = {name: final_numbers(game, evaluate(game, tr)) for name, tr in traces.items()}
    reference = {"implicit_exact": final_numbers(game, evaluate(game, exact))}
    report("done", 1.0)
    return {
        "seed": seed,
        "phi_star": oracle["phi_star"], "x_star": oracle["x_star"],
        "radius": oracle["radius"], "candidates": oracle["candidates"],
        "x_dag": game.x_dag.tolist(),
        "phi_zero": float(phi(game, torch.zeros(1, 2, dtype=DTYPE))[0][0]),
        "landscape": {"x0": land["x0"].tolist(), "x1": land["x1"].tolist(),
                      "phi": land["phi"].tolist(), "max_ni": land["max_ni"],
                      "max_residual": land["max_residual"]},
        "traces": {k: _trace_dict(v) for k, v in traces.items()},
        "final": final, "reference": reference, "budget": budget,
        "detector": {"panda_run": det_run.counts(), "panda_window": det_window.counts(),
                     "unrolled_window": det_unrolled.counts()},
    }


def experiment(cfg: ExperimentConfig = ExperimentConfig(), seed: int = 0,
               progress: Callable[[str, float], None] | None = None,
               device: str = "cpu") -> dict:
    """:func:`run_experiment` through the on-disk cache (``ICML26_CACHE``), keyed by device
    type (a CUDA run never overwrites the CPU entry; the CPU key is unchanged)."""
    return common.cached(PAPER, common.device_key("experiment", device), cfg, seed,
                         CACHE_VERSION, lambda: run_experiment(cfg, seed, progress, device))


def in_cache(cfg: ExperimentConfig = ExperimentConfig(), seed: int = 0,
             device: str = "cpu") -> bool:
    """Whether :func:`experiment` would read ``(cfg, seed)`` from the cache (nothing runs)."""
    return common.in_cache(PAPER, common.device_key("experiment", device), cfg, seed,
                           CACHE_VERSION)


# --------------------------------------------------------------------------- figures
def figure_convergence_data(exp: dict) -> dict:
    """F1: ``Phi(x_k)`` per method against iteration and oracle calls (long format; the
    related baselines ran at PANDA's budget of calls) and the oracle ``Phi*``."""
    rows = []
    for name, tr in exp["traces"].items():
        for k, c, v in zip(tr["iteration"], tr["calls"], tr["phi"]):
            rows.append({"method": name, "label": METHOD_LABELS[name], "iteration": k,
                         "calls": c, "phi": v, "ratio": v / exp["phi_star"]})
    return {"rows": rows, "phi_star": exp["phi_star"]}


def figure_ni_data(exp: dict) -> dict:
    """F2: PANDA's NI gap and penalty ``rho_k`` against iteration and oracle calls (NI
    floored at 1e-16 for a log axis), plus each related baseline's NI (``unrolled``,
    ``implicit``: empty when it did not run)."""
    tr = exp["traces"]["panda"]
    rows = [{"iteration": k, "calls": c, "ni": max(v, 1e-16), "rho": r}
            for k, c, v, r in zip(tr["iteration"], tr["calls"], tr["ni"], tr["rho"])]
    out = {"rows": rows, "final_ni": exp["final"]["panda"]["ni"]}
    for name in RELATED:
        b = exp["traces"].get(name, {"iteration": [], "calls": [], "ni": []})
        out[name] = [{"iteration": k, "calls": c, "ni": max(v, 1e-16)}
                     for k, c, v in zip(b["iteration"], b["calls"], b["ni"])]
    return out


def figure_landscape_data(exp: dict) -> dict:
    """F3: ``Phi`` on the oracle's grid (``[i1, i0]``), the trajectories of every method, the
    oracle minimiser and the hidden design incentive ``x_dag``."""
    land = exp["landscape"]
    paths = {name: {"x0": [p[0] for p in tr["x"]], "x1": [p[1] for p in tr["x"]]}
             for name, tr in exp["traces"].items()}
    return {"x0": land["x0"], "x1": land["x1"], "phi": land["phi"], "paths": paths,
            "x_star": exp["x_star"], "x_dag": exp["x_dag"], "radius": exp["radius"]}
