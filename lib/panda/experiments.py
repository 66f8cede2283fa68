"""PANDA, the experiment: configs per scale, one seed's run of every method against the
``Phi*`` oracle (cached), and the figures' data (F1 convergence, F2 NI gap, F3 landscape)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

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
from icml26.panda.sampled import SAMPLED_METHODS, SampledConfig, run_sampled, transitions

PAPER = "panda"
CACHE_VERSION = 3  # 2: cold-start PANDA, related baselines at its oracle budget; 3: sampled
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
    sampled: SampledConfig = SampledConfig()  # issue 48: the headline's sampled comparison
    detector_window: int = 30
    unrolled_window: int = 2
    methods: tuple[str, ...] = METHODS  # the dashboard may run a subset; claims need all

    def validate(self) -> ExperimentConfig:
        self.game.validate()
        self.panda.validate()
        self.baselines.validate()
        self.oracle.validate()
        self.sampled.validate()
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
        oracle=OracleConfig(grid=41, keep=5, rounds=22),
        sampled=SampledConfig(budget=30_000)),
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
    report("implicit_exact", 0.85)
    exact = implicit_oracle(game, cfg.baselines)
    report("sampled", 0.88)
    # the headline's comparison (skipped when the config drops a related baseline)
    sampled = (run_sampled(game, cfg.panda, cfg.baselines, cfg.sampled, seed)
               if set(RELATED) <= set(cfg.methods) else {})
    report("evaluate", 0.95)
    final = {name: final_numbers(game, evaluate(game, tr)) for name, tr in traces.items()}
    sampled_final = {name: final_numbers(game, evaluate(game, tr))
                     for name, tr in sampled.items()}
    for name, fin in sampled_final.items():
        fin["transitions"] = transitions(game, cfg.sampled, fin["calls"])
        fin["lr"] = cfg.sampled.lr(name)
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
        "sampled": {k: _trace_dict(v) for k, v in sampled.items()},
        "sampled_final": sampled_final,
        "transitions_per_batch": transitions(game, cfg.sampled, 1),
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


def figure_sampled_data(exps: list[dict]) -> dict:
    """F4 (issue 48): the relative Phi gap of each method of the sampled comparison against
    the transitions sampled, per seed (long format), and per method and budget point the
    geometric mean over the seeds given with a 95% t-interval of the mean of log10(gap) (the
    gaps span orders of magnitude). The methods record at the same fractions of the budget,
    so record ``i`` is aligned across seeds."""
    rows = []
    for exp in exps:
        per = exp["transitions_per_batch"]
        for m in SAMPLED_METHODS:
            tr = exp["sampled"][m]
            for i, (c, v) in enumerate(zip(tr["calls"], tr["phi"])):
                rows.append({"seed": exp["seed"], "method": m, "label": METHOD_LABELS[m],
                             "record": i, "transitions": c * per,
                             "gap": abs(v - exp["phi_star"]) / exp["phi_star"]})
    summary = []
    for m in SAMPLED_METHODS:
        for i in sorted({r["record"] for r in rows if r["method"] == m}):
            pts = [r for r in rows if r["method"] == m and r["record"] == i]
            lg = torch.tensor([r["gap"] for r in pts], dtype=DTYPE).clamp_min(1e-300).log10()
            n, mean = len(pts), float(lg.mean())
            half = _t95(n) * float(lg.std()) / n**0.5 if n > 1 else 0.0
            summary.append({"method": m, "label": METHOD_LABELS[m], "record": i,
                            "transitions": sum(r["transitions"] for r in pts) / n,
                            "mean": 10**mean, "lo": 10 ** (mean - half),
                            "hi": 10 ** (mean + half)})
    return {"rows": rows, "summary": summary, "seeds": [e["seed"] for e in exps]}


def _t95(n: int) -> float:
    """Two-sided 95% Student-t quantile for ``n - 1`` degrees of freedom (small n table)."""
    table = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}
    return table.get(n, 2.0 + 2.5 / max(n - 1, 1))


# --------------------------------------------------------------------------- app / notebook text
#: what :func:`run_experiment`'s progress stages compute (the app shows them while it runs)
STAGE_TEXT = {"oracle": "brute-force Phi* over the {grid} x {grid} incentive grid",
              "panda": "PANDA, {iterations} first-order steps from a cold start",
              "ignore": "reference: descent ignoring the players' response",
              "unrolled": "baseline: unrolled descent-ascent at PANDA's oracle budget",
              "implicit": "baseline: implicit differentiation (GDA + MINRES)",
              "implicit_exact": "reference: exact implicit hypergradient",
              "sampled": "sampled gradients: every method at an equal sample budget",
              "evaluate": "true Phi(x_k) along every trace", "done": "done"}
TIMINGS_CSV = Path(__file__).resolve().parents[2] / "benchmarks" / "panda" / "panda_timings.csv"


def summary_markdown(exp: dict) -> str:
    """A small markdown table of one experiment's final numbers (exact and sampled)."""
    star, det = exp["phi_star"], exp["detector"]
    lines = ["| method | final x | Phi(x) | Phi / Phi* | NI gap of its (pi, nu) |",
             "|---|---|---|---|---|"]
    finals = [(METHOD_LABELS[m], f) for m, f in exp["final"].items()]
    finals += [(f"{METHOD_LABELS[m]}, sampled", f)
               for m, f in exp.get("sampled_final", {}).items()]
    lines += [f"| {name} | ({', '.join(f'{v:.3f}' for v in f['x'])}) | "
              f"{f['phi']:.5g} | {f['phi'] / star:.4f} | {f['ni']:.2e} |" for name, f in finals]
    lines.append(f"\nBrute-force Phi* = {star:.6g} at x* = ({exp['x_star'][0]:.3f}, "
                 f"{exp['x_star'][1]:.3f}); max NI over the landscape "
                 f"{exp['landscape']['max_ni']:.1e}.  Second-order events: PANDA "
                 f"{det['panda_run']['events'] + det['panda_window']['events']}, unrolled "
                 f"baseline {det['unrolled_window']['events']}.")
    return "\n".join(lines)


def run_seconds(iterations: int, path: Path = TIMINGS_CSV) -> float | None:
    """Wall seconds of a Run from an empty cache at ``iterations`` PANDA steps: the
    least-squares line through ``benchmarks/panda/panda_timings.csv`` (None without two
    distinct step counts)."""
    if not path.exists():
        return None
    with path.open(newline="") as f:
        pts = [(float(r["panda_iterations"]), float(r["wall_s"])) for r in csv.DictReader(f)]
    if len({n for n, _ in pts}) < 2:
        return None
    mx = sum(n for n, _ in pts) / len(pts)
    my = sum(w for _, w in pts) / len(pts)
    slope = (sum((n - mx) * (w - my) for n, w in pts)
             / sum((n - mx) ** 2 for n, _ in pts))
    return max(my + slope * (iterations - mx), 0.0)
