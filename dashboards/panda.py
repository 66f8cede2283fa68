"""Explorer for "Bilevel Optimization over Saddle Points of Zero-Sum Markov Games" (PANDA).

Live figures (analytic): the penalty schedule ``rho_k`` and PANDA's step sizes over the run.
Behind the Run button (one stage with the lib's sub-stages and a progress bar; results cached
on disk): the game instance, the landscape sweep ``Phi(x)`` over a grid of incentives
(batched lower-level solves), the brute-force ``Phi*``, PANDA from a cold start and the
baselines at its budget of oracle calls, the NI gap with ``rho_k``, and the second-order
detector's counts. The app's default Run is the claims' run (``icml26.panda.claims(seed)``:
the same config, so the same cache entry: seconds once the claims or the notebook ran it,
minutes from an empty cache); a short run of ``SHORT_ITERATIONS`` PANDA steps is the
option, and the page says before a Run which of the two costs applies (:func:`plan_note`).

Serve alone with ``panel serve dashboards/panda.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import panel as pn
import param
from bokeh.models import ColorBar, Legend, LegendItem, LinearColorMapper
from bokeh.palettes import Viridis256
from bokeh.plotting import figure as bokeh_figure

from icml26 import panda as lib
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, rows, run_chart
from icml26.dashboards.app.run_costs import duration

METHOD_COLORS = {"panda": "#1f77b4", "ignore": "#d62728", "unrolled": "#9467bd",
                 "implicit": "#2ca02c"}
METHOD_SHORT = {"panda": "PANDA", "ignore": "ignore (ref.)", "unrolled": "unrolled",
                "implicit": "implicit"}  # legends above the frame: short (caption: long)
#: trajectories on the landscape: methods that take the same path (from the same cold start)
#: coincide, so each has its own dash and every one shows
METHOD_DASH = {"panda": "solid", "ignore": "dashed", "unrolled": "dotted", "implicit": "dotdash"}
#: what the lib's progress stages compute (shown while the Run goes)
STAGE_TEXT = {"oracle": "brute-force Phi* over the {grid} x {grid} incentive grid (batched "
                        "lower-level solves)",
              "panda": "PANDA, {iterations} first-order steps from a cold start (then the "
                       "second-order detector's window)",
              "ignore": "reference: descent ignoring the players' response",
              "unrolled": "baseline: unrolled descent-ascent at PANDA's oracle budget",
              "implicit": "baseline: implicit differentiation (GDA + MINRES) at PANDA's budget",
              "implicit_exact": "reference: exact implicit hypergradient",
              "evaluate": "true Phi(x_k) along every trace", "done": "done"}
#: PANDA steps of the app's default Run: the claims' quick scale (the spec probe's 6000), so a
#: Run at the defaults is the claims' cached experiment and shows their result
CLAIMS_ITERATIONS = lib.config_for("quick").panda.iterations
#: the short run offered instead (PANDA far from converged: Phi/Phi* ~13 on seed 0)
SHORT_ITERATIONS = 100
TIMINGS_CSV = Path(__file__).resolve().parents[1] / "benchmarks" / "panda" / "panda_timings.csv"
LIVE_CAPTION = (
    "*Live:* the penalty rho_k = rho_0 + growth k on the Nikaido-Isoda gap and PANDA's Adam "
    "step sizes (policy logits and incentive x), decayed linearly to 1% over the final "
    "`anneal` fraction of the run.")


class PandaExplorer(ExplorerBase):
    """Tune the game and PANDA's schedule; Run the methods on the landscape."""

    tau = param.Number(0.3, bounds=(0.05, 2.0), step=0.05,
                       doc="Entropy regularisation tau of both players (spec probe 0.3).")
    gamma = param.Number(0.9, bounds=(0.0, 0.95), step=0.05,
                         doc="Discount gamma of the Markov game (0 with 1 state: a matrix game).")
    n_states = param.Integer(3, bounds=(1, 5), doc="Number of states S (issue: 3).")
    n_actions = param.Integer(3, bounds=(2, 5), doc="Actions per player (n = m; spec: 3).")
    target = param.Selector(default="reachable", objects=list(lib.TARGETS),
                            doc="Target policies: the saddle point at a hidden incentive of "
                                "norm 2.5 ('reachable'), one pure action per state ('pure', "
                                "never reachable under entropy), or random mixtures.")
    incentive_cost = param.Number(0.01, bounds=(0.002, 0.1), step=0.002,
                                  doc="lam in f = |pi - pi_tgt|^2 + |nu - nu_tgt|^2 + "
                                      "lam |x|^2 (spec probe 0.01).")
    rho0 = param.Number(1.0, bounds=(0.1, 10.0), step=0.1,
                        doc="Initial penalty rho_0 on the NI gap (spec probe 1).")
    rho_growth = param.Number(0.01, bounds=(0.0, 0.1), step=0.005,
                              doc="rho_k = rho_0 + growth * k (spec probe 0.01; 0 freezes "
                                  "the penalty: the NI gap then stays visible).")
    lr = param.Number(0.02, bounds=(0.002, 0.1), step=0.002,
                      doc="Adam step size of PANDA on (x, policy logits) (spec probe 0.02).")
    lr_x = param.Number(0.02, bounds=(0.002, 0.1), step=0.002,
                        doc="Adam step size of PANDA on the incentive x.")
    anneal = param.Number(0.2, bounds=(0.0, 1.0), step=0.05,
                          doc="Final fraction of the run over which the step sizes decay "
                              "linearly to 1% (ours; 0 = constant).")
    iterations = param.Integer(CLAIMS_ITERATIONS, bounds=(50, 12000), step=50,
                               doc=f"PANDA iterations from a cold start (default: the claims' "
                                   f"{CLAIMS_ITERATIONS}, the spec probe's, so a Run reads the "
                                   f"claims' cached experiment once they ran). The related "
                                   f"baselines run at PANDA's budget of oracle calls, so a "
                                   f"Run's cost grows linearly with it; the line under the Run "
                                   f"button says what this Run costs. Short run: "
                                   f"{SHORT_ITERATIONS} (PANDA far from converged).")
    warm_start = param.Boolean(False, doc="Warm start (NOT the paper's method): the lower "
                                          "level starts at the exact saddle point of x0 "
                                          "(Newton with analytic second-order Jacobians).")
    baseline_lr = param.Number(0.02, bounds=(0.002, 0.1), step=0.002,
                               doc="Adam step size on x of the ignore / unrolled baselines.")
    unrolled_steps = param.Integer(5, bounds=(1, 20),
                                   doc="K descent-ascent steps differentiated through "
                                       "(second order) by the unrolled baseline.")
    methods = param.ListSelector(default=list(lib.METHODS), objects=list(lib.METHODS),
                                 doc="Methods to run (PANDA always runs).")
    grid = param.Integer(33, bounds=(9, 41), step=2,
                         doc="Landscape / oracle grid points per axis over [-R, R]^2, R the "
                             "provable radius of the minimiser (33: ~20 s of the Run).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the random game instance.")
    run = param.Event(doc="Solve the landscape, run the methods (cached on disk).")
    RUN_LABEL, LIVE_CAPTION = "Run (landscape + methods)", LIVE_CAPTION
    WIDGETS = {"methods": pn.widgets.CheckBoxGroup}

    _SETTINGS = ("tau", "gamma", "n_states", "n_actions", "target", "incentive_cost", "rho0",
                 "rho_growth", "lr", "lr_x", "anneal", "iterations", "warm_start", "baseline_lr",
                 "unrolled_steps", "methods", "grid", "seed")
    _LIVE = ("rho0", "rho_growth", "lr", "lr_x", "anneal", "iterations")

    RUN_STATE = ("_result", "_result_key")  # what a Run keeps (the record too)

    def __init__(self, **params):
        self._result_key = None
        self._summary = pn.pane.Markdown("", sizing_mode="stretch_width")
        self._landscape = pn.pane.Bokeh(None, sizing_mode="stretch_width")
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    def config(self) -> lib.ExperimentConfig:
        """The lib config for the current parameters (raises ValueError when invalid)."""
        methods = tuple(m for m in lib.METHODS if m == "panda" or m in self.methods)
        cfg = lib.ExperimentConfig(
            game=lib.GameConfig(n_states=self.n_states,
                               n_actions=(self.n_actions, self.n_actions), tau=self.tau,
                               gamma=self.gamma, incentive_cost=self.incentive_cost,
                               target=self.target),
            panda=lib.PandaConfig(iterations=self.iterations, lr=self.lr, lr_x=self.lr_x,
                                 rho0=self.rho0, rho_growth=self.rho_growth,
                                 anneal=self.anneal, warm_start=self.warm_start,
                                 record_every=max(1, self.iterations // 100)),
            baselines=lib.BaselineConfig(lr=self.baseline_lr, unrolled_steps=self.unrolled_steps),
            oracle=lib.OracleConfig(grid=self.grid), methods=methods)
        return cfg.validate()

    def schedule(self, k: np.ndarray | None = None) -> dict:
        """``rho_k`` and PANDA's step sizes at iterations ``k`` (default: every one)."""
        if k is None:
            k = np.arange(self.iterations + 1, dtype=float)
        rho = self.rho0 + self.rho_growth * k
        if self.anneal > 0:
            left = (self.iterations - k) / (self.anneal * self.iterations)
            factor = np.clip(left, 0.01, 1.0)
        else:
            factor = np.ones_like(k)
        return {"iteration": k, "rho": rho, "lr": self.lr * factor, "lr_x": self.lr_x * factor}

    def _schedule_points(self) -> dict:
        """The schedule at its breakpoints (exact for these piecewise-linear curves) and a
        coarse grid: a slider step sends ~100 points, not one per iteration."""
        n = self.iterations
        start = n * (1 - self.anneal)
        floor = n - 0.01 * self.anneal * n
        k = np.unique(np.clip(np.concatenate([np.linspace(0, n, 51), [start, floor]]), 0, n))
        return self.schedule(k)

    def _key(self):
        return (self.config(), self.seed) if not self._error() else None

    def result(self) -> dict | None:
        """The Run's experiment if it matches the current settings (else None: Run again)."""
        if self._result is None or self._result_key != self._key():
            return None
        return self._result

    def plot_data(self) -> dict:
        """The numbers behind the views: the schedule, and the Run results once computed."""
        data = dict(self.schedule())
        exp = self.result()
        if exp is not None:
            data["convergence"] = lib.figure_convergence_data(exp)["rows"]
            data["ni"] = lib.figure_ni_data(exp)["rows"]
            land = lib.figure_landscape_data(exp)
            data["landscape"] = np.asarray(land["phi"])
            data["paths"] = {k: np.array([v["x0"], v["x1"]]) for k, v in land["paths"].items()}
        return data

    # ------------------------------------------------------------------ live figures
    @param.depends("rho0", "rho_growth", "iterations", "anneal")
    def penalty_chart(self) -> Chart:
        """The penalty rho_k PANDA will put on the NI gap."""
        return penalty_chart(self._schedule_points())

    @param.depends("lr", "lr_x", "anneal", "iterations")
    def step_chart(self) -> Chart:
        """PANDA's Adam step sizes over the run."""
        return step_chart(self._schedule_points())

    def live_charts(self) -> list:
        return [self.penalty_chart, self.step_chart]

    # ------------------------------------------------------------------ the Run's figures
    # drawn when a Run ends (run_done), then kept until the next Run; the caption says when
    # the settings moved since (the figures show the Run, not the sliders)
    @run_chart
    def convergence_chart(self) -> Chart | None:
        """F1: Phi(x_k) / Phi* against first-order oracle calls (after Run)."""
        return convergence_chart(lib.figure_convergence_data(self._result))

    @run_chart
    def ni_chart(self) -> Chart | None:
        """F2: the NI gap of PANDA and of the related baselines (after Run)."""
        return ni_chart(lib.figure_ni_data(self._result))

    @run_chart
    def rho_chart(self) -> Chart | None:
        """F2: the penalty rho_k of the Run's PANDA (after Run)."""
        return rho_chart(lib.figure_ni_data(self._result))

    def run_charts(self) -> list:
        return [self.convergence_chart, self.ni_chart, self.rho_chart]

    @param.depends(*_SETTINGS)
    def result_note(self) -> str:
        """The caption of the Run's figures: which settings they show, stale or not."""
        exp = self._result
        if exp is None:
            return ("**Landscape and methods:** press **Run** to solve Phi(x) over the "
                    "incentive grid and run PANDA and the baselines (the figures of F1-F3 "
                    "appear here).")
        cfg, seed = self._result_key
        g, p = cfg.game, cfg.panda
        quick = lib.config_for("quick").panda.iterations
        stale = self.result() is None
        return (f"**Run result** (seed {seed}, S = {g.n_states}, {g.n_actions[0]} actions, "
                f"tau = {g.tau:g}, gamma = {g.gamma:g}; PANDA {p.iterations} steps, budget "
                f"{exp['budget']} oracle calls): Phi* = {exp['phi_star']:.5g} by brute force."
                + (" - **stale: settings changed since this Run**" if stale else "")
                + (f" PANDA ran {p.iterations} steps, fewer than the claims' {quick}: set "
                   f"*Iterations* to {quick} for the claims' run (cached once they ran)."
                   if p.iterations < quick else "")
                + "  \n*Top:* Phi(x_k)/Phi* against first-order oracle calls (the related "
                "baselines ran at PANDA's budget; the ignore-response reference's final value "
                "dotted; PANDA = NI penalty with Danskin gradients, unrolled = unrolled "
                "descent-ascent, implicit = implicit differentiation by GDA + MINRES) and the "
                "landscape log10 Phi(x) with every trajectory, x* the brute-force minimiser, "
                "x_dag the incentive that induces the targets. *Bottom:* the Nikaido-Isoda gap "
                "of each method's policies and PANDA's penalty rho_k.")

    @param.depends("run_done", watch=True)
    def _draw_results(self) -> None:
        exp = self._result
        self._landscape.object = (None if exp is None
                                  else landscape_figure(lib.figure_landscape_data(exp)))
        self._summary.object = "" if exp is None else summary_markdown(exp)

    @param.depends("run", watch=True)
    def _run(self) -> None:
        if self._error():
            return
        cfg, seed = self.config(), self.seed
        label = (f"Phi* on a {cfg.oracle.grid} x {cfg.oracle.grid} grid, PANDA "
                 f"({cfg.panda.iterations} steps) and {len(cfg.methods) - 1} baselines")
        fmt = {"grid": cfg.oracle.grid, "iterations": cfg.panda.iterations}

        def tick(stage: str, frac: float) -> None:  # the lib's sub-stages, in the Run's line
            self.stage_progress(STAGE_TEXT.get(stage, stage).format(**fmt), frac)

        def keep(results: list) -> None:
            self._result, self._result_key = results[0], (cfg, seed)
            self._show_error()

        self.run_stages([(label, lambda: lib.experiment(cfg, seed, progress=tick))], keep)

    def plan_note(self) -> str:
        """What a Run at the current settings costs, said before it: read from the cache, or
        computed (and how long, from the recorded timings)."""
        if self._error():
            return ""
        cfg = self.config()
        claims = "the claims' run" if cfg == lib.config_for("quick") else "not the claims' run"
        if lib.in_cache(cfg, self.seed):
            return f"**This Run** ({claims}) is in the cache: it reads it (seconds)."
        eta = run_seconds(cfg.panda.iterations)
        text = (f"**This Run** ({claims}) is not in the cache: it computes"
                + ("" if eta is None else f", about {duration(eta)} on 2 cores")
                + " (benchmarks/panda/panda_timings.csv; longer on busy cores), then caches it.")
        if cfg.panda.iterations > SHORT_ITERATIONS:
            short = run_seconds(SHORT_ITERATIONS)
            text += (f" A short run: *Iterations* {SHORT_ITERATIONS}"
                     + ("" if short is None else f" (about {duration(short)})")
                     + ", PANDA far from converged.")
        return text

    @param.depends("tau", "gamma", "n_states", "n_actions", "target", "incentive_cost",
                   "rho0", "rho_growth", "lr", "lr_x", "anneal", "iterations", "grid",
                   "methods", watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ layout
    def control_column(self) -> pn.Column:
        """Live controls first (the schedule figures follow them at once); the game and the
        baselines only matter for a Run, so they sit below with the button and its status."""
        on_run = [p for p in self._SETTINGS if p not in self._LIVE] + ["run"]
        return pn.Column(pn.pane.Markdown("**PANDA's schedule** (live)"),
                         self.controls(list(self._LIVE)),
                         pn.pane.Markdown("**Game, baselines, oracle** (press Run)"),
                         self.controls(on_run), self.run_status, width=320)

    def result_panes(self) -> list:
        convergence, ni, rho = self.run_panes()
        return [*rows([convergence, self._landscape, ni, rho]), self._summary]


# ---------------------------------------------------------------------- figures (shared
# with the notebook: each takes the lib's figure_*_data output; draw a Chart with ``show``)
def penalty_chart(data: dict) -> Chart:
    """The penalty rho_k against iteration (``data``: :meth:`PandaExplorer.schedule`)."""
    return Chart("Penalty on the NI gap", "iteration k", "penalty rho_k",
                 [Series("black", data["iteration"], data["rho"])], height=260)


def step_chart(data: dict) -> Chart:
    """PANDA's Adam step sizes on the policy logits and on the incentive x."""
    k = data["iteration"]
    return Chart("Adam step sizes", "iteration k", "step size", [
        Series(METHOD_COLORS["panda"], k, data["lr"], "policy logits"),
        Series("#ff7f0e", k, data["lr_x"], "incentive x", dash="dashed")], height=260)


def convergence_chart(data: dict) -> Chart:
    """F1: Phi(x_k) / Phi* (log) against first-order oracle calls for PANDA and the related
    baselines (equal budgets); the ignore-response reference (it counts no oracle calls) as
    its final value over the budget, and Phi* itself (ratio 1)."""
    rows = data["rows"]
    budget = max((r["calls"] for r in rows), default=1) or 1
    series = []
    for method in dict.fromkeys(r["method"] for r in rows):
        pts = [r for r in rows if r["method"] == method]
        if method == "ignore":
            final = pts[-1]["ratio"]
            series.append(Series(METHOD_COLORS[method], [0, budget], [final, final],
                                 METHOD_SHORT[method], dash="dotted"))
        else:
            series.append(Series(METHOD_COLORS[method], [r["calls"] for r in pts],
                                 [r["ratio"] for r in pts], METHOD_SHORT[method]))
    series.append(Series("black", [0, budget], [1.0, 1.0], "Phi*", dash="dashed", width=1))
    return Chart("Upper-level objective", "first-order oracle calls", "Phi(x_k) / Phi*",
                 series, y_log=True, height=340)


def ni_chart(data: dict) -> Chart:
    """F2: the Nikaido-Isoda gap (log) of PANDA's policies and of the related baselines'
    against first-order oracle calls (equal budgets)."""
    series = [Series(METHOD_COLORS["panda"], [r["calls"] for r in data["rows"]],
                     [r["ni"] for r in data["rows"]], METHOD_SHORT["panda"])]
    for name in lib.RELATED:
        rows = data.get(name) or []
        if rows:
            series.append(Series(METHOD_COLORS[name], [r["calls"] for r in rows],
                                 [r["ni"] for r in rows], METHOD_SHORT[name]))
    return Chart(f"NI gap (final PANDA {data['final_ni']:.1e})", "first-order oracle calls",
                 "Nikaido-Isoda gap", series, y_log=True, height=300)


def rho_chart(data: dict) -> Chart:
    """F2: PANDA's penalty rho_k against iteration."""
    rows = data["rows"]
    return Chart("PANDA's penalty", "iteration k", "penalty rho_k",
                 [Series("black", [r["iteration"] for r in rows], [r["rho"] for r in rows])],
                 height=300)


def landscape_figure(data: dict):
    """F3: log10 Phi(x) on the oracle's grid, every method's trajectory, the brute-force x*
    and the design incentive x_dag (a Bokeh figure; in a notebook wrap it in
    ``pn.pane.Bokeh``). The legend sits above the frame."""
    x0, x1 = np.asarray(data["x0"], float), np.asarray(data["x1"], float)
    z = np.log10(np.maximum(np.asarray(data["phi"], float), 1e-300))  # indexed [i1, i0]
    dx = (x0[-1] - x0[0]) / max(len(x0) - 1, 1)
    dy = (x1[-1] - x1[0]) / max(len(x1) - 1, 1)
    fig = bokeh_figure(title="Phi(x) landscape", x_axis_label="incentive x_1",
                       y_axis_label="incentive x_2", height=340, sizing_mode="stretch_width",
                       min_width=300, tools="pan,wheel_zoom,box_zoom,reset,save",
                       toolbar_location="right", output_backend="canvas")
    fig.title.text_font_size = "13px"
    mapper = LinearColorMapper(palette=Viridis256, low=float(np.nanmin(z)),
                               high=float(np.nanmax(z)))
    fig.image(image=[z], x=float(x0[0] - dx / 2), y=float(x1[0] - dy / 2),
              dw=float(x0[-1] - x0[0] + dx), dh=float(x1[-1] - x1[0] + dy),
              color_mapper=mapper)
    fig.add_layout(ColorBar(color_mapper=mapper, title="log10 Phi", width=10), "right")
    items = []
    for method, p in data["paths"].items():
        r = fig.line(p["x0"], p["x1"], line_color=METHOD_COLORS[method], line_width=2,
                     line_dash=METHOD_DASH.get(method, "solid"))
        items.append(LegendItem(label=METHOD_SHORT[method], renderers=[r]))
    r = fig.scatter([data["x_star"][0]], [data["x_star"][1]], marker="x", size=14,
                    line_color="white", line_width=3)
    items.append(LegendItem(label="x* (brute force)", renderers=[r]))
    r = fig.scatter([data["x_dag"][0]], [data["x_dag"][1]], marker="circle", size=9,
                    color="orange")
    items.append(LegendItem(label="x_dag", renderers=[r]))
    fig.add_layout(Legend(items=items, orientation="horizontal", click_policy="hide",
                          label_text_font_size="11px", spacing=8, padding=2, margin=2,
                          border_line_alpha=0), "above")
    return fig


def summary_markdown(exp: dict) -> str:
    """A small table of the final numbers of one experiment."""
    star = exp["phi_star"]
    lines = ["| method | final x | Phi(x) | Phi / Phi* | NI gap of its (pi, nu) |",
             "|---|---|---|---|---|"]
    for method, f in exp["final"].items():
        x = ", ".join(f"{v:.3f}" for v in f["x"])
        lines.append(f"| {lib.METHOD_LABELS[method]} | ({x}) | {f['phi']:.5g} | "
                     f"{f['phi'] / star:.4f} | {f['ni']:.2e} |")
    det = exp["detector"]
    lines.append("")
    lines.append(f"Brute-force Phi* = {star:.6g} at x* = ({exp['x_star'][0]:.3f}, "
                 f"{exp['x_star'][1]:.3f}); max NI over the landscape "
                 f"{exp['landscape']['max_ni']:.1e}.  Second-order events: PANDA "
                 f"{det['panda_run']['events'] + det['panda_window']['events']}, unrolled "
                 f"baseline {det['unrolled_window']['events']}.")
    return "\n".join(lines)


def run_seconds(iterations: int, path: Path = TIMINGS_CSV) -> float | None:
    """Wall seconds of a Run from an empty cache at ``iterations`` PANDA steps (default grid
    and methods): the least-squares line through the recorded runs of
    ``benchmarks/panda/panda_timings.csv`` (None without two distinct step counts)."""
    if not path.exists():
        return None
    with path.open(newline="") as f:
        pts = [(float(r["panda_iterations"]), float(r["wall_s"])) for r in csv.DictReader(f)]
    if len({n for n, _ in pts}) < 2:
        return None
    slope, intercept = np.polyfit(*np.array(pts).T, 1)
    return max(float(intercept + slope * iterations), 0.0)


def _eta_text(iterations: int) -> str:
    eta = run_seconds(iterations)
    return "several minutes" if eta is None else duration(eta)


Explorer = PandaExplorer
create_app = app_factory(Explorer, lambda: (  # the recorded timings, read at page build
    "## PANDA: bilevel optimisation over saddle points of zero-sum Markov games\n\n"
    "Zheng, King, Lu, *Bilevel Optimization over Saddle Points of Zero-Sum Markov "
    "Games*, ICML 2026 ([arXiv 2605.26654](https://arxiv.org/abs/2605.26654)). An "
    "incentive x steers an entropy-regularised zero-sum Markov game towards target "
    "policies; PANDA penalises the Nikaido-Isoda gap with a growing rho_k and uses "
    "only first-order (Danskin) gradients. **Run** solves the Phi(x) landscape and "
    f"runs PANDA ({CLAIMS_ITERATIONS} steps by default: the claims' run) and the "
    "baselines: seconds once the claims or the notebook cached it, else about "
    f"{_eta_text(CLAIMS_ITERATIONS)} on 2 cores (the line under the Run button says "
    f"which); a short run of {SHORT_ITERATIONS} steps is an option."))

if __name__.startswith("bokeh"):
    create_app().servable()
