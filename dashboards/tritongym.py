"""Explorer for "TritonGym: A Benchmark for Agentic LLM Workflows in Triton GPU Code
Generation" (tritongym; tier C: no LLM runs here).

Live views (closed form, microseconds): Pass@1 of the four workflows against the verify-call
budget and against the bug rate ``p_bug``, for an IDEAL verifier and a repair that succeeds
with ``p_fix / suspects`` per turn (``tritongym.closed_form_pass``).
Behind the Run button (with progress): verify every candidate kernel (8 oracles, 33
(operator, bug) mutants, 10 wrong-eps variants: compiled and run under the Triton interpreter
on CPU, ~10 s the first time, then cached), then the Monte Carlo of the workflows with the
MEASURED verify outcomes: Pass@1 against ``p_bug`` (the heatmap's rows), against the budget,
and the max error of every mutant per operator with the tolerance line.
The module also holds the plot functions the notebook uses for F1-F4.

Serve alone with ``panel serve dashboards/tritongym.py`` or with every paper via
``icml26 serve``.
"""

from __future__ import annotations

import math

import holoviews as hv
import numpy as np
import panel as pn
import param

from icml26 import tritongym as tg
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart
from icml26.kernels.tritongym_ops import OPS

WORKFLOW_COLORS = {"one-shot": "#7f7f7f", "iterative": "#1f77b4", "best-of-N": "#2ca02c",
                   "evolutionary": "#d62728"}
BUG_COLORS = {"mask_dropped": "#1f77b4", "off_by_one": "#ff7f0e", "no_max_sub": "#2ca02c",
              "wrong_eps": "#d62728", "wrong_stride": "#9467bd", "fp16_acc": "#8c564b"}
ERR_CEIL, ERR_FLOOR = 1e3, 1e-8  # a non-finite / failed shape is drawn at ERR_CEIL
TOLS = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]


def clip_err(e: float) -> float:
    return ERR_CEIL if not math.isfinite(e) else min(max(e, ERR_FLOOR), ERR_CEIL)


# --------------------------------------------------------------------------- plot functions
def heatmap_plot(rows: list[dict]) -> hv.HeatMap:
    """F1: Pass@1 by workflow x p_bug (Monte Carlo with measured verify outcomes)."""
    data = [(f"{r['p_bug']:.1f}", r["workflow"], r["pass@1"]) for r in rows]
    return hv.HeatMap(data, ["bug rate p_bug", "workflow"], "Pass@1").opts(
        cmap="viridis", clim=(0, 1), colorbar=True, tools=["hover"], responsive=True,
        min_height=260, title="Pass@1 by workflow and bug rate", xlabel="bug rate p_bug",
        ylabel="workflow")


def pass_matrix_plot(rows: list[dict], tol: float = tg.TOL) -> hv.HeatMap:
    """F3: log10 max error of every (operator, candidate); above log10(tol) fails verify."""
    data = [(r["bug"], r["op"], math.log10(clip_err(r["max_err"]))) for r in rows]
    return hv.HeatMap(data, ["candidate", "operator"], "log10 max |err|").opts(
        cmap="RdYlGn_r", clim=(math.log10(ERR_FLOOR), 3), colorbar=True, tools=["hover"],
        responsive=True, min_height=320, xrotation=30,
        title=f"log10 max error per candidate (fails above {math.log10(tol):.0f}; "
              f"{math.log10(ERR_CEIL):.0f} = non-finite / out-of-bounds)",
        xlabel="candidate (oracle or bug class)", ylabel="operator")


def budget_chart(rows: list[dict], title: str = "Pass@1 vs verify calls") -> Chart:
    """F2: Pass@1 against the verify-call budget, one line per workflow."""
    series = []
    for w, color in WORKFLOW_COLORS.items():
        pts = sorted((r["budget"], r["pass@1"]) for r in rows if r["workflow"] == w)
        if pts:
            x, y = zip(*pts)
            series += [Series(color, x, y, w, kind="line" if len(pts) > 1 else "scatter")]
    return Chart(title, "verify calls (budget)", "Pass@1", series)


def tolerance_plot(rows: list[dict]) -> hv.Overlay:
    """F4: the wrong-eps family: max error on the shapes where the oracle is exact to 1e-5
    (bars; the dashed lines are the tolerances 1e-2 and 1e-5)."""
    data = [(f"{r['op']}: {r['variant']}", clip_err(r["err_clean_shapes"])) for r in rows]
    bars = hv.Bars(data, "wrong-eps mutant", "max |err| where the oracle is exact").opts(
        logy=True, ylim=(1e-7, 1e4), xrotation=40, color="#d62728")
    return hv.Overlay([bars, hv.HLine(1e-2).opts(color="black", line_dash="dashed"),
                       hv.HLine(1e-5).opts(color="grey", line_dash="dotted")]).opts(
        title="Wrong eps: small mistakes hide under tol 1e-2", responsive=True,
        min_height=320)


LIVE_CAPTION = (
    "*Closed form, ideal verifier* (every bug caught; a repair hits the real bug with "
    "probability p_fix / suspects): one-shot 1 - p; best-of-N 1 - p^N; iterative "
    "1 - p (1 - q)^(T-1); evolutionary (P = 2) 1 - p^2 [p (1 - q)]^(G-1). **Run** replaces "
    "the ideal verifier by the measured one (real kernels, interpreter on CPU) and the fixed "
    "suspects by what verify's first failing shape tells the repair. Tier C: no LLM runs.")


# --------------------------------------------------------------------------- explorer
class TritonGymExplorer(ExplorerBase):
    """Bug rate, repair skill and workflow budget; Run verifies every kernel candidate."""

    p_bug = param.Number(0.5, bounds=(0.0, 1.0), step=0.05,
                         doc="Bug rate: chance the 'model' injects one bug class into the "
                             "oracle source (the claims use 0.5).")
    p_fix = param.Number(0.5, bounds=(0.0, 1.0), step=0.05,
                         doc="Repair skill: chance a repair that targets the real bug removes "
                             "it (the claims use 0.5).")
    turns = param.Integer(4, bounds=(1, 8),
                          doc="Budget T of iterative refinement (also N of best-of-N and P x G "
                              "of the evolutionary loop in the p_bug sweep).")
    suspects = param.Integer(2, bounds=(1, 6),
                             doc="Closed-form views only: bug classes the repair hesitates "
                                 "between after a failure (1 = perfect localisation).")
    tol = param.Selector(default=1e-2, objects=TOLS,
                         doc="Verify tolerance on max |err| (the paper's Pass@1 uses 0.01).")
    feedback = param.Selector(default="full", objects=list(tg.FEEDBACK),
                              doc="What verify tells the model: the first failing shape and "
                                  "error ('full') or only pass / fail.")
    shape_kinds = param.ListSelector(default=list(tg.KINDS), objects=list(tg.KINDS),
                                     doc="Test shapes verify runs (drop 'odd-tail' to see "
                                         "mask and bound bugs escape).")
    operators = param.ListSelector(default=list(OPS), objects=list(OPS),
                                   doc="Operators the Monte Carlo cycles through.")
    episodes = param.Integer(400, bounds=(50, 4000), step=50,
                             doc="Monte Carlo episodes per cell (the claims use 400).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the Monte Carlo.")
    run = param.Event(doc="Verify every candidate kernel, then simulate the workflows.")
    RUN_LABEL, LIVE_CAPTION = "Run harness", LIVE_CAPTION
    WIDGETS = {"operators": pn.widgets.CheckBoxGroup,
               "shape_kinds": pn.widgets.CheckBoxGroup}

    #: settings the bounds cannot rule out (tests/dashboards/test_explorers.py)
    INVALID_EXAMPLES = [{"operators": []}, {"shape_kinds": []}]

    # ------------------------------------------------------------------ model
    def config(self) -> tg.TritonGymConfig:
        """The lib config (raises ValueError when invalid)."""
        if not self.operators:
            raise ValueError("choose at least one operator")
        if not self.shape_kinds:
            raise ValueError("choose at least one test shape kind")
        cfg = tg.TritonGymConfig(
            tol=self.tol, tight_tol=min(1e-5, self.tol / 10), shape_kinds=tuple(
                k for k in tg.KINDS if k in self.shape_kinds),
            p_bug=self.p_bug, p_fix=self.p_fix, turns=self.turns, best_of=self.turns,
            episodes=self.episodes, feedback=self.feedback,
            ops=tuple(o for o in OPS if o in self.operators))
        cfg.validate()
        return cfg

    @param.depends("operators", "shape_kinds", watch=True, on_init=True)
    def _check(self) -> None:
        self._show_error()

    def plot_data(self) -> dict:
        """The numbers behind the live views (closed-form Pass@1 per workflow vs budget and
        vs p_bug) and, after a Run, its Pass@1 rows."""
        budgets = np.arange(1, 9)
        grid = np.linspace(0.0, 1.0, 21)
        out = {"budgets": budgets, "grid": grid}
        for w in tg.WORKFLOWS:
            out[("budget", w)] = np.array([tg.closed_form_pass(
                w, self.p_bug, self.p_fix, int(b), self.suspects) for b in budgets])
            out[("p_bug", w)] = np.array([tg.closed_form_pass(
                w, float(p), self.p_fix, self.turns, self.suspects) for p in grid])
        if self._result is not None:
            out["heatmap"] = [r["pass@1"] for r in self._result["heatmap"]]
            out["budget_rows"] = [r["pass@1"] for r in self._result["budget"]]
        return out

    # ------------------------------------------------------------------ live views
    def _closed_form_chart(self, x: str, kind: str, title: str, x_label: str) -> Chart:
        d = self.plot_data()
        return Chart(title, x_label, "Pass@1", [Series(WORKFLOW_COLORS[w], d[x], d[(kind, w)], w)
                                                for w in tg.WORKFLOWS])

    @param.depends("p_bug", "p_fix", "suspects")
    def budget_live_chart(self) -> Chart:
        """Closed form: Pass@1 vs verify calls for the four workflows (ideal verifier)."""
        return self._closed_form_chart("budgets", "budget", f"Ideal verifier: Pass@1 vs budget "
                                       f"(p_bug {self.p_bug:.2f})", "verify calls (budget)")

    @param.depends("p_fix", "turns", "suspects")
    def p_bug_live_chart(self) -> Chart:
        """Closed form: Pass@1 vs p_bug at budget T for the four workflows."""
        return self._closed_form_chart("grid", "p_bug", f"Ideal verifier: Pass@1 vs bug rate "
                                       f"(budget {self.turns})", "bug rate p_bug")

    def live_charts(self) -> list:
        return [self.budget_live_chart, self.p_bug_live_chart]

    # ------------------------------------------------------------------ Run results
    @run_chart
    def mc_p_bug_chart(self) -> Chart | None:
        """Monte Carlo with measured verify outcomes: Pass@1 vs p_bug (after Run)."""
        rows = self._result["heatmap"]
        series = []
        for w, color in WORKFLOW_COLORS.items():
            pts = sorted((r["p_bug"], r["pass@1"]) for r in rows if r["workflow"] == w)
            x, y = zip(*pts)
            series += [Series(color, x, y, w), Series(color, x, y, kind="scatter")]
        return Chart("Measured verify: Pass@1 vs bug rate", "bug rate p_bug", "Pass@1", series)

    @run_chart
    def mc_budget_chart(self) -> Chart | None:
        """Monte Carlo: Pass@1 vs the verify-call budget (after Run)."""
        return budget_chart(self._result["budget"], "Measured verify: Pass@1 vs budget")

    @run_chart
    def error_chart(self) -> Chart | None:
        """Max error of every mutant per operator (log scale) and the tolerance (after Run)."""
        rows = [r for r in self._result["matrix"] if r["bug"] != "oracle"]
        ops = list(self._result["config"].ops)
        tol = self._result["config"].tol
        series = [Series("black", [-0.5, len(ops) - 0.5], [tol, tol], "tolerance",
                         dash="dashed", width=1)]
        for i, bug in enumerate(tg.BUGS):  # side by side within an operator: no overplotting
            pts = [(ops.index(r["op"]) + 0.12 * (i - 2.5), clip_err(r["max_err"]))
                   for r in rows if r["bug"] == bug]
            if pts:
                x, y = zip(*pts)
                series.append(Series(BUG_COLORS[bug], x, y, tg.BUG_LABELS[bug],
                                     kind="scatter"))
        return Chart("Max error of each mutant", "operator", "max |err| (1e3: crash/NaN/OOB)",
                     series, y_log=True, height=340, x_names=ops)

    def run_charts(self) -> list:
        return [self.mc_p_bug_chart, self.mc_budget_chart, self.error_chart]

    def result_note(self) -> str:
        if self._result is None:
            return ("**Measured harness:** press **Run** to verify every candidate kernel "
                    "(compiled and run; cached after the first time) and simulate the "
                    "workflows with the measured outcomes.")
        r = self._result
        cfg = r["config"]
        return (f"**Measured harness** ({r['title']}): {r['caught']} of {r['mutants']} "
                f"mutants fail verify. Iterative (T={cfg.turns}) minus one-shot Pass@1 at p_bug "
                f"{cfg.p_bug:g}: {r['gap']['gap']:+.3f}.")

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed = self.seed

        def keep(results):
            table, matrix, heat, budget, gap = results
            mutants = [r for r in matrix if r["bug"] != "oracle"]
            self._result = {
                "config": cfg, "matrix": matrix, "heatmap": heat, "budget": budget,
                "gap": gap, "mutants": len(mutants),
                "caught": sum(not r["passed"] for r in mutants),
                "title": f"tol {cfg.tol:g}, shapes {', '.join(cfg.shape_kinds)}, p_fix "
                         f"{cfg.p_fix:g}, feedback {cfg.feedback}, {cfg.episodes} episodes, "
                         f"seed {seed}"}

        state: dict = {}

        def verify():
            state["table"] = tg.verify_table()
            return state["table"]

        self.run_stages([
            (f"verify {len(tg.candidates())} candidate kernels (cached after the first Run)",
             verify),
            ("per-operator pass matrix",
             lambda: tg.figure_pass_matrix_data(cfg, state["table"])),
            (f"workflows x {len(cfg.p_bug_grid)} bug rates",
             lambda: tg.figure_heatmap_data(cfg, seed, state["table"])),
            ("Pass@1 vs budget", lambda: tg.figure_budget_data(cfg, seed, state["table"])),
            ("iterative vs one-shot", lambda: tg.feedback_gap(cfg, seed, state["table"])),
        ], keep)


Explorer = TritonGymExplorer
create_app = app_factory(Explorer, (
    "## TritonGym: agentic workflows for Triton code generation (tritongym)\n\n"
    "Guan, Lin, Zhao, Yao, Qiang, Yu, Viswanath, Ding & Aziz, *TritonGym: A Benchmark for "
    "Agentic LLM Workflows in Triton GPU Code Generation*, ICML 2026 (no arXiv id). "
    "**Tier C:** no LLM runs here, the leaderboard is not reproduced; this is the "
    "harness (compile / verify / profile on 8 operators) with a seeded bug generator "
    "standing in for the model. Live: closed-form Pass@1 of the workflows; **Run** "
    "verifies every candidate kernel and simulates the workflows."))

if __name__.startswith("bokeh"):
    create_app().servable()
