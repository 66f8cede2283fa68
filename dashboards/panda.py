"""Explorer for "Bilevel Optimization over Saddle Points of Zero-Sum Markov Games" (PANDA).

Live view (analytic): the penalty schedule ``rho_k`` and PANDA's step size over the run.
Behind the Run button (with progress; results cached on disk): the game instance, the
landscape sweep ``Phi(x)`` over a grid of incentives (batched lower-level solves whose soft
Bellman backups run in ``icml26.kernels.soft_bellman``), the brute-force ``Phi*``, PANDA and
the baselines, the NI gap with ``rho_k``, and the second-order-graph detector's counts.

Serve alone with ``panel serve dashboards/panda.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn
import param

from icml26 import panda as lib
from icml26.dashboards.app import ExplorerBase, paper_page
from icml26.dashboards.app.runview import run_results

METHOD_COLORS = {"panda": "#1f77b4", "ignore": "#d62728", "unrolled": "#9467bd",
                 "implicit": "#2ca02c"}


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
    iterations = param.Integer(lib.config_for("quick").panda.iterations, bounds=(100, 12000),
                               step=100, doc="PANDA iterations from a cold start (quick scale: "
                                             "the spec probe's 6000); the related baselines "
                                             "run at PANDA's budget of oracle calls.")
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
                             "provable radius of the minimiser.")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the random game instance.")
    run = param.Event(doc="Solve the landscape, run the methods (cached on disk).")

    _SETTINGS = ("tau", "gamma", "n_states", "n_actions", "target", "incentive_cost", "rho0",
                 "rho_growth", "lr", "lr_x", "anneal", "iterations", "warm_start", "baseline_lr",
                 "unrolled_steps", "methods", "grid", "seed")

    def __init__(self, **params):
        self._result: dict | None = None
        self._result_key = None
        self._progress = pn.indicators.Progress(value=0, max=100, visible=False,
                                                sizing_mode="stretch_width")
        self._stage = pn.pane.Markdown("", sizing_mode="stretch_width")
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

    def schedule(self) -> dict:
        """``rho_k`` and PANDA's step sizes over the run (analytic, no computation)."""
        k = np.arange(self.iterations + 1, dtype=float)
        rho = self.rho0 + self.rho_growth * k
        if self.anneal > 0:
            left = (self.iterations - k) / (self.anneal * self.iterations)
            factor = np.clip(left, 0.01, 1.0)
        else:
            factor = np.ones_like(k)
        return {"iteration": k, "rho": rho, "lr": self.lr * factor, "lr_x": self.lr_x * factor}

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

    # ------------------------------------------------------------------ views
    def _message_plot(self, text: str) -> hv.Element:
        # fixed height: a responsive min_height plot turns its column "stretch_both"
        return hv.Text(0.5, 0.5, text).opts(xaxis=None, yaxis=None, toolbar=None,
                                            responsive=True, height=300)

    @param.depends("rho0", "rho_growth", "lr", "lr_x", "anneal", "iterations")
    def schedule_view(self) -> hv.Layout:
        """The penalty rho_k (left) and the step sizes (right) PANDA will use."""
        return plot_schedule(self.schedule())

    @param.depends("run", *_SETTINGS)
    def convergence_view(self) -> hv.Overlay | hv.Element:
        """F1: Phi(x_k) of every method with the brute-force Phi*."""
        exp = self.result()
        if exp is None:
            return self._message_plot("Press Run to solve the landscape and run the methods")
        return plot_convergence(lib.figure_convergence_data(exp))

    @param.depends("run", *_SETTINGS)
    def ni_view(self) -> hv.Layout | hv.Element:
        """F2: PANDA's NI gap (log) and the penalty rho_k."""
        exp = self.result()
        if exp is None:
            return self._message_plot("Press Run for the NI gap")
        return plot_ni(lib.figure_ni_data(exp))

    @param.depends("run", *_SETTINGS)
    def landscape_view(self) -> hv.Overlay | hv.Element:
        """F3: Phi(x) over the incentive grid with every method's trajectory."""
        exp = self.result()
        if exp is None:
            return self._message_plot("Press Run for the landscape sweep")
        return plot_landscape(lib.figure_landscape_data(exp))

    @param.depends("run", *_SETTINGS)
    def summary_view(self) -> pn.pane.Markdown:
        """Final numbers: Phi vs Phi*, NI gaps, detector counts."""
        exp = self.result()
        if exp is None:
            return pn.pane.Markdown("")
        return pn.pane.Markdown(summary_markdown(exp), sizing_mode="stretch_width")

    @param.depends("run", watch=True)
    def _run(self) -> None:
        err = self._error()
        if err:
            return
        cfg = self.config()
        self._progress.visible, self._progress.value = True, 0

        def tick(stage: str, frac: float) -> None:
            self._progress.value = int(100 * frac)
            self._stage.object = f"*{stage}…*"

        try:
            self._result = lib.experiment(cfg, self.seed, progress=tick)
            self._result_key = (cfg, self.seed)
            self._alert.visible = False
        except (ValueError, RuntimeError) as e:  # a solver failure must not kill the server
            self._result = None
            self._alert.object, self._alert.visible = f"Run failed: {e}", True
        finally:
            self._progress.visible = False
            self._stage.object = ""

    @param.depends("tau", "gamma", "n_states", "n_actions", "target", "incentive_cost",
                   "rho0", "rho_growth", "lr", "lr_x", "anneal", "iterations", "grid",
                   "methods", watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ layout
    def __panel__(self):
        # live controls first (the schedule plot follows them at once); the game and the
        # baselines only matter for a Run (a few seconds), so they sit below with the button
        live = ["rho0", "rho_growth", "lr", "lr_x", "anneal", "iterations"]
        on_run = [p for p in self._SETTINGS if p not in live] + ["run"]
        controls = pn.Column(
            pn.pane.Markdown("**PANDA's schedule** (live)"),
            pn.Param(self.param, parameters=live, show_name=False),
            pn.pane.Markdown("**Game, baselines, oracle** (press Run)"),
            pn.Param(self.param, parameters=on_run, show_name=False, widgets={
                "run": {"type": pn.widgets.Button, "color": "primary",
                        "name": "Run (landscape + methods)"},
                "methods": pn.widgets.CheckBoxGroup,
            }))
        def results() -> list:
            return [pn.Row(pn.panel(self.convergence_view(), sizing_mode="stretch_width"),
                           pn.panel(self.landscape_view(), sizing_mode="stretch_width"),
                           sizing_mode="stretch_width"),
                    pn.panel(self.ni_view(), sizing_mode="stretch_width"),
                    self.summary_view()]

        def shown_result():  # which Run the views show (None: settings differ, press Run)
            exp = self.result()
            return None if exp is None else id(exp)

        results = run_results(self, ["run", *self._SETTINGS], shown_result, results,
                              sizing_mode="stretch_width")
        return pn.Row(
            pn.Column(controls, width=320),
            pn.Column(self._alert,
                      pn.panel(self.schedule_view, sizing_mode="stretch_width"),
                      self._progress, self._stage, results, sizing_mode="stretch_width"),
            sizing_mode="stretch_width")


# ---------------------------------------------------------------------- figures (shared
# with the notebook: each takes the lib's figure_*_data output)
def plot_schedule(data: dict) -> hv.Layout:
    """The penalty rho_k and the step sizes against iteration."""
    k = data["iteration"]
    rho = hv.Curve((k, data["rho"]), "iteration k", "rho_k").opts(
        title="Penalty on the NI gap", color="black", responsive=True, min_height=250)
    lr = hv.Overlay([
        hv.Curve((k, data["lr"]), "iteration k", "step size", label="policy logits"),
        hv.Curve((k, data["lr_x"]), "iteration k", "step size", label="incentive x"),
    ]).opts(title="Adam step sizes", legend_position="bottom_left", responsive=True,
            min_height=250)
    return (rho + lr).cols(2)


def plot_convergence(data: dict) -> hv.Overlay:
    """F1: Phi(x_k) / Phi* against iteration for each method (log y), Phi* = 1."""
    rows = data["rows"]
    layers = []
    for method in dict.fromkeys(r["method"] for r in rows):
        pts = [(r["iteration"], r["ratio"]) for r in rows if r["method"] == method]
        layers.append(hv.Curve(pts, "iteration k", "Phi(x_k) / Phi*",
                               label=lib.METHOD_LABELS[method])
                      .opts(color=METHOD_COLORS[method]))
    layers.append(hv.HLine(1.0).opts(color="black", line_dash="dashed"))
    return hv.Overlay(layers).opts(
        title=f"Upper-level objective (oracle Phi* = {data['phi_star']:.4g}, dashed)",
        logy=True, legend_position="top_right", responsive=True, min_height=320)


def plot_ni(data: dict) -> hv.Layout:
    """F2: PANDA's NI gap on a log axis (with the unrolled baseline's), and rho_k."""
    rows, other = data["rows"], data["unrolled"]
    k = [r["iteration"] for r in rows]
    layers = [hv.Curve((k, [r["ni"] for r in rows]), "iteration k", "NI gap", label="PANDA")
              .opts(color=METHOD_COLORS["panda"])]
    if other:
        layers.append(hv.Curve(([r["iteration"] for r in other], [r["ni"] for r in other]),
                               "iteration k", "NI gap",
                               label="unrolled descent-ascent (its outer steps)")
                      .opts(color=METHOD_COLORS["unrolled"]))
    layers.append(hv.HLine(1e-4).opts(color="grey", line_dash="dotted"))
    ni = hv.Overlay(layers).opts(
        logy=True, title=f"Nikaido-Isoda gap (final PANDA: {data['final_ni']:.2e})",
        legend_position="top_right", responsive=True, min_height=300)
    rho = hv.Curve((k, [r["rho"] for r in rows]), "iteration k", "rho_k").opts(
        color="black", title="Penalty rho_k", responsive=True, min_height=300)
    return (ni + rho).cols(2)


def plot_landscape(data: dict) -> hv.Overlay:
    """F3: log10 Phi(x) on the grid, trajectories of the methods, x* and x_dag."""
    x0, x1 = np.asarray(data["x0"]), np.asarray(data["x1"])
    z = np.log10(np.maximum(np.asarray(data["phi"]), 1e-300))  # indexed [i1, i0]
    img = hv.Image((x0, x1, z), ["x_1", "x_2"], "log10 Phi").opts(
        cmap="viridis", colorbar=True, responsive=True, min_height=320)
    layers = [img]
    for method, p in data["paths"].items():
        layers.append(hv.Curve((p["x0"], p["x1"]), "x_1", "x_2", label=lib.METHOD_LABELS[method])
                      .opts(color=METHOD_COLORS[method], line_width=2))
    layers.append(hv.Scatter([tuple(data["x_star"])], "x_1", "x_2", label="brute-force x*")
                  .opts(color="white", marker="x", size=14))
    layers.append(hv.Scatter([tuple(data["x_dag"])], "x_1", "x_2",
                             label="x_dag (induces the targets)")
                  .opts(color="orange", marker="circle", size=8))
    return hv.Overlay(layers).opts(title="Phi(x) landscape and trajectories",
                                   legend_position="bottom_left")


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


Explorer = PandaExplorer


def create_app() -> pn.viewable.Viewable:
    """The served page: the paper's citation above the explorer."""
    return paper_page(
        "## PANDA: bilevel optimisation over saddle points of zero-sum Markov games\n\n"
        "Zheng, King, Lu, *Bilevel Optimization over Saddle Points of Zero-Sum Markov "
        "Games*, ICML 2026 ([arXiv 2605.26654](https://arxiv.org/abs/2605.26654)). An "
        "incentive x steers an entropy-regularised zero-sum Markov game towards target "
        "policies; PANDA penalises the Nikaido-Isoda gap with a growing rho_k and uses "
        "only first-order (Danskin) gradients. **Run** solves the Phi(x) landscape and "
        "runs PANDA and the baselines (about half a minute at the defaults; cached).",
        Explorer())


if __name__.startswith("bokeh"):
    create_app().servable()
