"""Explorer for "Multi-Level Strategic Classification" (promotion and relegation).

Live views (analytic, instant): the threshold ladder of the chosen design against the
steady-state ladder and the skill each level settles at without effort (the gap is the
maintenance the agent must pay), and the incentive phase diagram's analytic boundary
c-/c+ = 1 - beta*gamma with the current setting marked.
Behind the Run button (value iteration, with progress): the optimal agent's trajectory
(level, skill, honest effort, gaming) under the chosen design, and the numerical phase
diagram of first actions on a grid of (c-/c+, beta*gamma). The phase diagram's chart and the
notebook's HoloViews figures are in ``dashboards/promotion_figures.py``, re-exported here.

Serve alone with ``panel serve dashboards/promotion.py`` or with every paper via
``icml26 serve``.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import panel as pn
import param

from icml26 import promotion as pro
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart
from icml26.dashboards.promotion_figures import (  # noqa: F401 - the notebook's figures
    ACTION_COLORS,
    phase_chart,
    plot_greedy,
    plot_height,
    plot_phase,
    plot_sensitivity,
)

LIVE_CAPTION = (
    "*Left:* the stay threshold mu_l of level l+1 for the chosen design, the steady-state "
    "ladder delta l/(1-gamma) and the skill level l+1 settles at with no effort (where mu_l "
    "is above it, holding the level costs maintenance). *Right:* the analytic boundary "
    "c-/c+ = 1 - beta*gamma (honest effort pays to its right), the myopic line c-/c+ = 1, "
    "the current setting with the action the line predicts and, after **Run**, the "
    "solver's first action per cell of the L = 2 prototype.")
DESIGN_COLORS = {"steady": "#1f77b4", "steep": "#ff7f0e", "no_legup": "#9467bd",
                 "shallow": "#d62728", "chosen": "#1f77b4"}
DESIGN_SHORT = {"steady": "(a) steady state", "steep": "(b) steeper", "no_legup": "(c) delta = 0",
                "shallow": "(d) shallower (naive)"}
DESIGN_PARAM = {"steady-state": "steady", "linear slope": "linear", "custom": "custom"}
DESIGN_LABELS_LONG = {"steady": "steady-state ladder", "linear": "linear ladder",
                      "custom": "custom ladder"}
TRAJ_PANELS = (("level", "Level held", "level l"), ("skill", "Skill", "skill x"),
               ("a_plus", "Honest effort", "honest effort a+ (skill units)"),
               ("a_minus", "Gaming", "gaming a- (score units)"))


@functools.lru_cache(maxsize=16)
def _trajectory(cfg: pro.PromotionConfig) -> pd.DataFrame:
    sol = pro.solve(pro.make_ladder([cfg]))
    return pro.trajectory_frame(pro.simulate(sol), 0)


@functools.lru_cache(maxsize=8)
def _phase(ph: pro.PhaseConfig) -> dict:
    return pro.figure_phase_data(ph)


class PromotionExplorer(ExplorerBase):
    """Tune the agent and the ladder; watch whether promotion pays for honest effort."""

    beta = param.Number(0.9, bounds=(0.0, 0.99), step=0.01,
                        doc="Discount factor beta (farsightedness).")
    gamma = param.Number(0.8, bounds=(0.0, 0.99), step=0.01,
                         doc="Skill retention gamma: improvement persists, gaming does not.")
    delta = param.Number(0.1, bounds=(0.0, 0.5), step=0.01,
                         doc="Leg-up delta: skill gained per period from the level held.")
    c_minus_ratio = param.Number(0.5, bounds=(0.05, 1.0), step=0.01,
                                 doc="Gaming cost per unit over improvement cost (c+ = 1); "
                                     "the model needs it below 1.")
    levels = param.Integer(8, bounds=(2, 20), doc="Number of levels L.")
    reward_per_level = param.Number(0.3, bounds=(0.05, 2.0), step=0.05,
                                    doc="Per-period reward of each level above the first: "
                                        "R(l) = r (l - 1).")
    threshold_design = param.Selector(default="steady-state", objects=list(DESIGN_PARAM),
                                      doc="steady-state: mu_l = delta l/(1-gamma); linear "
                                          "slope: that ladder times the slope multiplier; "
                                          "custom: the thresholds typed below.")
    slope_multiplier = param.Number(1.0, bounds=(0.5, 3.0), step=0.1,
                                    doc="Steepness of the 'linear slope' design relative to "
                                        "the steady-state ladder.")
    custom_thresholds = param.String("0.5, 1, 1.5, 2, 2.5, 3, 3.5",
                                     doc="mu_1, ..., mu_{L-1} for the custom design: L-1 "
                                         "increasing numbers, comma-separated.")
    x0 = param.Number(0.0, bounds=(0.0, 2.0), step=0.05, doc="Initial skill (at level 1).")
    horizon = param.Integer(40, bounds=(10, 200), doc="Periods simulated T.")
    x_grid = param.Integer(401, bounds=(101, 801), softbounds=(101, 801), step=20,
                           doc="Skill grid points per level (the thresholds are added).")
    a_grid = param.Integer(161, bounds=(41, 321), step=20,
                           doc="Honest-effort grid points (the exact gaps are added).")
    exact_gaps = param.Boolean(True, doc="Offer the exact gaps mu_j - x as honest actions; "
                                         "off shows the discretisation pitfall (fake gaming).")
    phase_cells = param.Integer(12, bounds=(4, 20),
                                doc="Cells per axis of the numerical phase diagram (Run).")
    run = param.Event(doc="Solve the agent's problem (value iteration) for the trajectory "
                          "and the numerical phase diagram.")
    RUN_LABEL, LIVE_CAPTION = "Run (value iteration)", LIVE_CAPTION
    #: the settings of the model (the alert and the result note follow them)
    _SETTINGS = ("beta", "gamma", "delta", "c_minus_ratio", "levels", "reward_per_level",
                 "threshold_design", "slope_multiplier", "custom_thresholds", "x0", "horizon",
                 "x_grid", "a_grid", "exact_gaps")

    #: settings within every bound that the model still rejects (the generic test uses them)
    INVALID_EXAMPLES = ({"c_minus_ratio": 1.0},
                        {"threshold_design": "steady-state", "delta": 0.0},
                        {"threshold_design": "custom", "levels": 3})

    RUN_STATE = ("_result", "_phase_data", "_trajectory_cfg")  # what a Run keeps (the record too)

    def __init__(self, **params):
        self._result: pd.DataFrame | None = None  # the trajectory of the last Run
        self._trajectory_cfg: pro.PromotionConfig | None = None
        self._phase_data: dict | None = None
        self._note = pn.pane.Alert("", alert_type="warning", visible=False)
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    def _custom(self) -> tuple[float, ...]:
        try:
            return tuple(float(v) for v in self.custom_thresholds.replace(";", ",").split(",")
                         if v.strip())
        except ValueError:
            raise ValueError(f"custom thresholds must be numbers separated by commas, got "
                             f"{self.custom_thresholds!r}") from None

    def config(self) -> pro.PromotionConfig:
        """The lib config for the current parameters (raises ValueError when invalid)."""
        design = DESIGN_PARAM[self.threshold_design]
        cfg = pro.PromotionConfig(
            levels=self.levels, beta=self.beta, gamma=self.gamma, delta=self.delta,
            c_plus=1.0, c_minus=self.c_minus_ratio, reward_per_level=self.reward_per_level,
            design=design, slope=self.slope_multiplier,
            custom_thresholds=self._custom() if design == "custom" else (),
            x0=self.x0, horizon=self.horizon, nx=self.x_grid, na=self.a_grid,
            exact_gaps=self.exact_gaps)
        cfg.validate()
        return cfg

    def plot_data(self) -> dict:
        """The numbers behind the views (empty arrays when the settings are invalid)."""
        bg = np.linspace(0.0, 0.95, 20)
        data = {"line_beta_gamma": bg, "line_ratio": 1.0 - bg,
                "point": np.array([self.c_minus_ratio, self.beta * self.gamma])}
        if self._error():
            empty = np.zeros(0)
            data.update(level=empty, thresholds=empty, steady=empty, settle=empty)
        else:
            cfg = self.config()
            lv = np.arange(1, cfg.levels)
            data["level"] = lv
            data["thresholds"] = cfg.thresholds().numpy()
            # the skill a level settles at with no effort: delta (l)/(1-gamma) at level l+1
            data["settle"] = cfg.delta * lv / (1 - cfg.gamma)
            data["steady"] = (pro.steady_state_thresholds(cfg.levels, cfg.gamma, cfg.delta)
                              .numpy() if cfg.delta > 0 else np.zeros(len(lv)))
        if self._result is not None:
            data["trajectory"] = self._result
        if self._phase_data is not None:
            data["phase"] = self._phase_data["cells"][["ratio", "beta_gamma", "a_plus",
                                                       "a_minus"]]
        return data

    # ------------------------------------------------------------------ views
    # Live figures: one function per figure returning a Chart (dashboards/app/live.py), drawn
    # once and updated in place; axes follow the data, legends sit above the frame. None
    # keeps the last valid figure while the settings are invalid (the alert says why).
    @param.depends("levels", "gamma", "delta", "threshold_design", "slope_multiplier",
                   "custom_thresholds")
    def ladder_chart(self) -> Chart | None:
        """Thresholds of the chosen design vs the steady-state ladder and the skill each level
        settles at without effort: where the stay threshold is above it, holding the level
        needs maintenance."""
        if self._error():
            return None
        d = self.plot_data()
        lv = d["level"]
        return Chart("Threshold ladder", "threshold index l (stay threshold of level l+1)",
                     "skill x", [
                         Series("black", lv, d["thresholds"], "chosen mu_l"),
                         Series("black", lv, d["thresholds"], kind="scatter"),
                         Series(DESIGN_COLORS["steady"], lv, d["steady"], "steady state",
                                dash="dotted"),
                         Series(ACTION_COLORS["honest"], lv, d["settle"], "no-effort skill",
                                dash="dashed")])

    @param.depends("beta", "gamma", "c_minus_ratio", "run_done")
    def phase_chart(self) -> Chart:
        """F1: the analytic boundary, the myopic line, the current setting and (after Run)
        the optimal first action of the numerical solver on a grid."""
        cells = self._phase_data["cells"] if self._phase_data is not None else None
        return phase_chart(cells, (self.c_minus_ratio, self.beta * self.gamma))

    def live_charts(self) -> list:
        return [self.ladder_chart, self.phase_chart]

    def _trajectory_chart(self, i: int) -> Chart:
        return trajectory_charts({"chosen": self._result})[i]

    # the Run's trajectory: four figures (one per quantity), drawn when a Run ends
    @run_chart
    def level_chart(self) -> Chart | None:
        """F2: the optimal agent's level over time (after Run)."""
        return self._trajectory_chart(0)

    @run_chart
    def skill_chart(self) -> Chart | None:
        """F2: the optimal agent's true skill over time (after Run)."""
        return self._trajectory_chart(1)

    @run_chart
    def effort_chart(self) -> Chart | None:
        """F2: the optimal agent's honest effort over time (after Run)."""
        return self._trajectory_chart(2)

    @run_chart
    def gaming_chart(self) -> Chart | None:
        """F2: the optimal agent's gaming over time (after Run)."""
        return self._trajectory_chart(3)

    def run_charts(self) -> list:
        return [self.level_chart, self.skill_chart, self.effort_chart, self.gaming_chart]

    @param.depends(*_SETTINGS)
    def result_note(self) -> str:
        """The caption of the trajectory figures: which ladder, and whether it is stale."""
        if self._result is None:
            return ("**Optimal agent's trajectory:** press **Run** to solve the agent's "
                    "problem (value iteration).")
        cfg = self._trajectory_cfg
        stale = cfg != self._current_or_none()
        return (f"**Optimal agent's trajectory** on the {DESIGN_LABELS_LONG.get(cfg.design, '')}"
                f" (L = {cfg.levels}, beta = {cfg.beta:g}, gamma = {cfg.gamma:g}, "
                f"delta = {cfg.delta:g}, c-/c+ = {cfg.c_minus:g}, x0 = {cfg.x0:g})"
                + (" - **stale: parameters changed since Run**" if stale else ""))

    def _current_or_none(self) -> pro.PromotionConfig | None:
        try:
            return self.config()
        except ValueError:
            return None

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config): trajectory, then phase diagram."""
        n = self.phase_cells
        phase = pro.PhaseConfig(n_ratio=n, n_discount=n, nx=61, na=21,
                                exact_gaps=self.exact_gaps)

        def keep(results):
            self._result, self._phase_data = results
            self._trajectory_cfg = cfg

        self.run_stages([
            (f"value iteration for the agent on the {DESIGN_LABELS_LONG[cfg.design]} "
             f"(L = {cfg.levels}, {cfg.nx} x {cfg.na} grid), then T = {cfg.horizon} periods",
             lambda: _trajectory(cfg)),
            (f"numerical phase diagram: {n} x {n + 1} cells of the L = 2 prototype "
             f"(batched value iteration)", lambda: _phase(phase)),
        ], keep)

    @param.depends(*_SETTINGS, watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    def design_note(self) -> str:
        """Which edited setting the chosen design ignores ('' when none): the custom
        thresholds apply only to the custom design, the slope only to the linear one."""
        ignored = [f"{name} (used only by the design '{design}')"
                   for name, p, design in (("custom thresholds", "custom_thresholds", "custom"),
                                           ("slope multiplier", "slope_multiplier",
                                            "linear slope"))
                   if self.threshold_design != design
                   and getattr(self, p) != self.param[p].default]
        if not ignored:
            return ""
        return (f"Ignored by the '{self.threshold_design}' ladder: " + "; ".join(ignored)
                + ". Choose that design to use them.")

    @param.depends("threshold_design", "custom_thresholds", "slope_multiplier", watch=True,
                   on_init=True)
    def _update_note(self) -> None:
        text = self.design_note()
        self._note.object, self._note.visible = text, bool(text)

    # ------------------------------------------------------------------ layout
    def live_rows(self) -> list:
        return [self._note, *super().live_rows()]  # the design's warning above the figures


def _steps(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A step line (the value holds over each period): x = t0 t1 t1 t2 t2 ..., y = y0 y0 y1 ..."""
    return np.repeat(t, 2)[1:], np.repeat(y, 2)[:-1]


def _step_charts(frames: dict[str, pd.DataFrame], panels, height: int, labelled: bool = True,
                 cumulative: bool = False) -> list[Chart]:
    """A chart per ``(column, title, y label)`` of ``panels``, a step line per design
    (``frames``: design -> ``trajectory_frame``), named in the legend when ``labelled``, the
    column summed over the periods so far when ``cumulative``."""
    total = np.cumsum if cumulative else np.asarray
    return [Chart(title, "period t", y_label, [
        Series(DESIGN_COLORS.get(name, "black"),
               *_steps(df["t"].to_numpy(float), total(df[col].to_numpy(float))),
               DESIGN_SHORT.get(name, name) if labelled else None)
        for name, df in frames.items()], height=height) for col, title, y_label in panels]


def trajectory_charts(frames: dict[str, pd.DataFrame]) -> list[Chart]:
    """F2: level, skill, honest effort and gaming over time (four figures), one step line
    per design (``frames``: design -> ``trajectory_frame``). Draw each with ``show``."""
    return _step_charts(frames, TRAJ_PANELS, 260, labelled=len(frames) > 1)


def headline_charts(frames: dict[str, pd.DataFrame]) -> list[Chart]:
    """The headline's second measurement (issue 46): cumulative gaming and cumulative honest
    effort over time, one step line per ladder, all in one cost regime. The designed ladder
    is flat in both after its climb; the naive shallower one games, the steeper one and the
    one without leg-up keep paying effort (maintenance)."""
    return _step_charts(frames, (
        ("a_minus", "Cumulative gaming", "gaming to date, sum a- (score units)"),
        ("a_plus", "Cumulative honest effort", "effort to date, sum a+ (skill units)")),
        300, cumulative=True)


Explorer = PromotionExplorer
create_app = app_factory(Explorer, (
    "## Multi-level strategic classification (promotion)\n\n"
    "Huang, Alkarmi, Liu, *Multi-Level Strategic Classification: Incentivizing "
    "Improvement through Promotion and Relegation Dynamics*, ICML 2026 "
    "([arXiv 2602.11439](https://arxiv.org/abs/2602.11439)). The ladder and the "
    "analytic boundary update live; **Run** solves the agent's problem by value "
    "iteration (trajectory and numerical phase diagram)."))

if __name__.startswith("bokeh"):
    create_app().servable()
