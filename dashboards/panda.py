"""Explorer for "Bilevel Optimization over Saddle Points of Zero-Sum Markov Games" (PANDA).

Live: the penalty ``rho_k`` and PANDA's step sizes. The Run (its cost said first; cached, the
default is the claims' run): the landscape ``Phi(x)``, ``Phi*``, PANDA and the baselines at
equal oracle calls, the headline's sampled comparison (issue 48), NI gaps, the detector.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import ColorBar, Legend, LegendItem, LinearColorMapper
from bokeh.palettes import Viridis256
from bokeh.plotting import figure as bokeh_figure

from icml26 import panda as lib
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, rows, run_chart
from icml26.dashboards.app.run_costs import duration
from icml26.panda.experiments import STAGE_TEXT, run_seconds, summary_markdown  # noqa: F401

METHOD_COLORS = {"panda": "#1f77b4", "ignore": "#d62728", "unrolled": "#9467bd",
                 "implicit": "#2ca02c"}
METHOD_SHORT = {"panda": "PANDA", "ignore": "ignore (ref.)", "unrolled": "unrolled",
                "implicit": "implicit"}  # legends above the frame: short (caption: long)
#: trajectories on the landscape may coincide: each method has its own dash
METHOD_DASH = {"panda": "solid", "ignore": "dashed", "unrolled": "dotted", "implicit": "dotdash"}
CLAIMS_ITERATIONS = lib.config_for("quick").panda.iterations  # the default Run: the claims'
SHORT_ITERATIONS = 100  # the short run offered instead (PANDA far from converged)
LIVE_CAPTION = ("*Live:* the penalty rho_k = rho_0 + growth k on the NI gap and PANDA's Adam "
                "steps, decayed linearly to 1% over the final `anneal` fraction.")


def _num(default, lo, hi, step, doc):
    return param.Number(default, bounds=(lo, hi), step=step, doc=doc)


class PandaExplorer(ExplorerBase):
    """Tune the game and PANDA's schedule; Run the methods on the landscape."""

    rho0 = _num(1.0, 0.1, 10.0, 0.1, "Initial penalty rho_0 on the NI gap (spec probe 1).")
    rho_growth = _num(0.01, 0.0, 0.1, 0.005, "rho_k = rho_0 + growth * k (0 freezes it).")
    lr = _num(0.02, 0.002, 0.1, 0.002, "PANDA's Adam step on the policy logits.")
    lr_x = _num(0.02, 0.002, 0.1, 0.002, "PANDA's Adam step on the incentive x.")
    anneal = _num(0.2, 0.0, 1.0, 0.05, "Final fraction over which the steps decay to 1%.")
    iterations = param.Integer(CLAIMS_ITERATIONS, bounds=(50, 12000), step=50,
                               doc=f"PANDA iterations (default: the claims' "
                                   f"{CLAIMS_ITERATIONS}; the baselines run at its budget, so "
                                   f"the cost grows with it). Short run: {SHORT_ITERATIONS}.")
    tau = _num(0.3, 0.05, 2.0, 0.05, "Entropy regularisation tau.")
    gamma = _num(0.9, 0.0, 0.95, 0.05, "Discount gamma.")
    n_states = param.Integer(3, bounds=(1, 5), doc="Number of states S (issue: 3).")
    n_actions = param.Integer(3, bounds=(2, 5), doc="Actions per player (n = m; spec: 3).")
    target = param.Selector(default="reachable", objects=list(lib.TARGETS),
                            doc="Targets: the saddle point at a hidden incentive ('reachable'), "
                                "pure actions, or random mixtures.")
    incentive_cost = _num(0.01, 0.002, 0.1, 0.002,
                          "lam in f = |pi - pi_tgt|^2 + |nu - nu_tgt|^2 + lam |x|^2.")
    warm_start = param.Boolean(False, doc="Warm start at the exact saddle point of x0 (NOT "
                                          "the paper's method: second-order solves).")
    baseline_lr = _num(0.02, 0.002, 0.1, 0.002, "Adam step on x of the exact-gradient baselines.")
    unrolled_steps = param.Integer(5, bounds=(1, 20), doc="K unrolled descent-ascent steps.")
    methods = param.ListSelector(default=list(lib.METHODS), objects=list(lib.METHODS),
                                 doc="Methods to run (PANDA always; the sampled comparison "
                                     "needs both related baselines).")
    grid = param.Integer(33, bounds=(9, 41), step=2, doc="Landscape / oracle grid per axis.")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the random game instance.")
    run = param.Event(doc="Solve the landscape, run the methods (cached on disk).")
    RUN_LABEL, LIVE_CAPTION = "Run (landscape + methods)", LIVE_CAPTION
    WIDGETS = {"methods": pn.widgets.CheckBoxGroup}
    _LIVE = ("rho0", "rho_growth", "lr", "lr_x", "anneal", "iterations")
    _GAME = ("tau", "gamma", "n_states", "n_actions", "target", "incentive_cost")
    _SETTINGS = (*_GAME, *_LIVE, "warm_start", "baseline_lr", "unrolled_steps", "methods",
                 "grid", "seed")
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
        return lib.ExperimentConfig(
            game=lib.GameConfig(n_states=self.n_states,
                               n_actions=(self.n_actions, self.n_actions), tau=self.tau,
                               gamma=self.gamma, incentive_cost=self.incentive_cost,
                               target=self.target),
            panda=lib.PandaConfig(iterations=self.iterations, lr=self.lr, lr_x=self.lr_x,
                                 rho0=self.rho0, rho_growth=self.rho_growth,
                                 anneal=self.anneal, warm_start=self.warm_start,
                                 record_every=max(1, self.iterations // 100)),
            baselines=lib.BaselineConfig(lr=self.baseline_lr, unrolled_steps=self.unrolled_steps),
            oracle=lib.OracleConfig(grid=self.grid), methods=methods).validate()

    def schedule(self, k: np.ndarray | None = None) -> dict:
        """``rho_k`` and PANDA's step sizes at iterations ``k`` (default: every one)."""
        k = np.arange(self.iterations + 1, dtype=float) if k is None else k
        factor = (np.clip((self.iterations - k) / (self.anneal * self.iterations), 0.01, 1.0)
                  if self.anneal > 0 else np.ones_like(k))
        return {"iteration": k, "rho": self.rho0 + self.rho_growth * k,
                "lr": self.lr * factor, "lr_x": self.lr_x * factor}

    def _schedule_points(self) -> dict:
        """The schedule at its breakpoints and a coarse grid (~50 points, exact curves)."""
        n = self.iterations
        ends = [n * (1 - self.anneal), n - 0.01 * self.anneal * n]
        return self.schedule(np.unique(np.clip(np.r_[np.linspace(0, n, 51), ends], 0, n)))

    def _key(self):
        return (self.config(), self.seed) if not self._error() else None

    def result(self) -> dict | None:
        """The Run's experiment if it matches the current settings (else None: Run again)."""
        ok = self._result is not None and self._result_key == self._key()
        return self._result if ok else None

    def plot_data(self) -> dict:
        """The numbers behind the views: the schedule, and the Run results once computed."""
        data, exp = dict(self.schedule()), self.result()
        if exp is not None:
            data["convergence"] = lib.figure_convergence_data(exp)["rows"]
            data["ni"], land = lib.figure_ni_data(exp)["rows"], lib.figure_landscape_data(exp)
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

    @run_chart
    def sampled_chart(self) -> Chart | None:
        """F4: the sampled comparison, Phi gap against transitions (after a full Run)."""
        if (exp := self._result).get("sampled"):
            return sampled_chart(lib.figure_sampled_data([exp]))

    def run_charts(self) -> list:
        return [self.convergence_chart, self.ni_chart, self.rho_chart, self.sampled_chart]

    @param.depends(*_SETTINGS)
    def result_note(self) -> str:
        """The caption of the Run's figures: which settings they show, stale or not."""
        exp = self._result
        if exp is None:
            return ("**Landscape and methods:** press **Run** to solve Phi(x) over the "
                    "incentive grid and run PANDA and the baselines (F1-F4 appear here).")
        (cfg, seed), quick = self._result_key, CLAIMS_ITERATIONS
        g, p = cfg.game, cfg.panda
        return (f"**Run result** (seed {seed}, S = {g.n_states}, {g.n_actions[0]} actions, "
                f"tau = {g.tau:g}, gamma = {g.gamma:g}; PANDA {p.iterations} steps, budget "
                f"{exp['budget']} oracle calls): Phi* = {exp['phi_star']:.5g} by brute force."
                + (" - **stale: settings changed since this Run**" if self.result() is None
                   else "")
                + (f" Fewer steps than the claims' {quick}." if p.iterations < quick else "")
                + "  \n*F1:* Phi/Phi* against oracle calls (exact gradients) and the landscape "
                "with every trajectory; *F2:* NI gaps and rho_k; *F4* (the headline, issue 48): "
                "Phi gap against sampled transitions at an equal sample budget.")

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
        """What a Run costs, said before it: a cache read, or a computation (how long)."""
        if self._error():
            return ""
        cfg = self.config()
        claims = "the claims' run" if cfg == lib.config_for("quick") else "not the claims' run"
        if lib.in_cache(cfg, self.seed):
            return f"**This Run** ({claims}) is in the cache: it reads it (seconds)."
        eta, short = run_seconds(cfg.panda.iterations), run_seconds(SHORT_ITERATIONS)
        return (f"**This Run** ({claims}) is not in the cache: it computes"
                + ("" if eta is None else f", about {duration(eta)} on 2 cores")
                + " (panda_timings.csv; longer on busy cores), then caches it."
                + ("" if cfg.panda.iterations <= SHORT_ITERATIONS else
                   f" A short run: *Iterations* {SHORT_ITERATIONS}"
                   + ("" if short is None else f" (about {duration(short)})")
                   + ", PANDA far from converged."))

    @param.depends(*_GAME, *_LIVE, "grid", "methods", watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    def result_panes(self) -> list:
        convergence, ni, rho, sampled = self.run_panes()
        return [*rows([convergence, self._landscape, ni, rho, sampled]), self._summary]


# ------------------------------------------------------ figures (shared with the notebook)
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
    """F1: Phi(x_k) / Phi* (log) against oracle calls (equal budgets); the ignore-response
    reference (no oracle calls) as its final value, and Phi* (ratio 1)."""
    rows = data["rows"]
    budget = max((r["calls"] for r in rows), default=1) or 1
    series = []
    for m in dict.fromkeys(r["method"] for r in rows):
        pts = [r for r in rows if r["method"] == m]
        x, y = ([0, budget], [pts[-1]["ratio"]] * 2) if m == "ignore" else (
            [r["calls"] for r in pts], [r["ratio"] for r in pts])
        series.append(Series(METHOD_COLORS[m], x, y, METHOD_SHORT[m],
                             dash="dotted" if m == "ignore" else "solid"))
    series.append(Series("black", [0, budget], [1.0, 1.0], "Phi*", dash="dashed", width=1))
    return Chart("Upper-level objective", "first-order oracle calls", "Phi(x_k) / Phi*",
                 series, y_log=True, height=340)


def ni_chart(data: dict) -> Chart:
    """F2: the NI gap (log) of each method's policies against oracle calls."""
    lines = {"panda": data["rows"], **{m: data.get(m) or [] for m in lib.RELATED}}
    series = [Series(METHOD_COLORS[m], [r["calls"] for r in pts], [r["ni"] for r in pts],
                     METHOD_SHORT[m]) for m, pts in lines.items() if pts]
    return Chart(f"NI gap (final PANDA {data['final_ni']:.1e})", "first-order oracle calls",
                 "Nikaido-Isoda gap", series, y_log=True, height=300)


def rho_chart(data: dict) -> Chart:
    """F2: PANDA's penalty rho_k against iteration."""
    k, rho = zip(*((r["iteration"], r["rho"]) for r in data["rows"]))
    return Chart("PANDA's penalty", "iteration k", "penalty rho_k", [Series("black", k, rho)],
                 height=300)


def sampled_chart(data: dict) -> Chart:
    """F4: relative Phi gap (log) against sampled transitions: per method the geometric mean
    over ``data["seeds"]`` and, over several seeds, its 95% t-interval (thin dashed)."""
    series, n = [], len(data["seeds"])
    for m in dict.fromkeys(r["method"] for r in data["summary"]):
        pts = [r for r in data["summary"] if r["method"] == m]
        x = [r["transitions"] for r in pts]
        series.append(Series(METHOD_COLORS[m], x, [r["mean"] for r in pts], METHOD_SHORT[m]))
        series += [Series(METHOD_COLORS[m], x, [r[k] for r in pts], dash="dashed", width=1)
                   for k in ("lo", "hi") if n > 1]
    return Chart(f"Sampled gradients, equal budget ({n} seed{'s' * (n > 1)})",
                 "sampled transitions", "|Phi(x) - Phi*| / Phi*", series, y_log=True,
                 height=320)


def landscape_figure(data: dict):
    """F3: log10 Phi(x) on the oracle's grid with every trajectory, x* and x_dag (Bokeh)."""
    x0, x1 = np.asarray(data["x0"], float), np.asarray(data["x1"], float)
    z = np.log10(np.maximum(np.asarray(data["phi"], float), 1e-300))  # indexed [i1, i0]
    dx, dy = ((v[-1] - v[0]) / max(len(v) - 1, 1) for v in (x0, x1))
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
    items = [LegendItem(label=METHOD_SHORT[m], renderers=[fig.line(
        p["x0"], p["x1"], line_color=METHOD_COLORS[m], line_width=2,
        line_dash=METHOD_DASH.get(m, "solid"))]) for m, p in data["paths"].items()]
    items += [LegendItem(label="x* (brute force)", renderers=[fig.scatter(
                  [data["x_star"][0]], [data["x_star"][1]], marker="x", size=14,
                  line_color="white", line_width=3)]),
              LegendItem(label="x_dag", renderers=[fig.scatter(
                  [data["x_dag"][0]], [data["x_dag"][1]], marker="circle", size=9,
                  color="orange")])]
    fig.add_layout(Legend(items=items, orientation="horizontal", click_policy="hide",
                          label_text_font_size="11px", spacing=8, padding=2, margin=2,
                          border_line_alpha=0), "above")
    return fig


def _eta_text(iterations: int) -> str:
    return "several minutes" if (eta := run_seconds(iterations)) is None else duration(eta)


Explorer = PandaExplorer
create_app = app_factory(Explorer, lambda: (  # the recorded timings, read at page build
    "## PANDA: bilevel optimisation over saddle points of zero-sum Markov games\n\n"
    "Zheng, King, Lu, ICML 2026 ([arXiv 2605.26654](https://arxiv.org/abs/2605.26654)). "
    "An incentive x steers an entropy-regularised zero-sum Markov game; PANDA penalises "
    "the Nikaido-Isoda gap with a growing rho_k, first order only (Danskin). **Run**: "
    f"the landscape, PANDA ({CLAIMS_ITERATIONS} steps: the claims' run), the baselines and "
    "the sampled comparison: seconds once cached, else about "
    f"{_eta_text(CLAIMS_ITERATIONS)} on 2 cores (the line under Run says which); a short "
    f"run of {SHORT_ITERATIONS} steps is an option."))

if __name__.startswith("bokeh"):
    create_app().servable()
