"""Explorer for "Adaptive Multi-Round Allocation with Stochastic Arrivals" (recruitment).

Live views (exact, from the surrogate DP): capacity survival curves, the value of the DP
policy and of two spend-schedule baselines versus budget, and the optimal first-round spend.
Behind the Run button (Monte Carlo, with progress): every policy in the heterogeneous
simulator with common random numbers (F2), and the misspecification loss with its bound (F4).

Serve alone with ``panel serve dashboards/recruitment.py`` or with every paper via
``icml26 serve``.
"""

from __future__ import annotations

import functools

import holoviews as hv
import numpy as np
import panel as pn
import param
import torch

from icml26 import recruitment as rec
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, message_plot, rows

POLICY_COLORS = {"dp": "#1f77b4", "uniform": "#2ca02c", "fixed3": "#9467bd",
                 "greedy": "#ff7f0e", "spend_all": "#d62728"}
SURVIVAL_COLORS = ("#30a2da", "#fc4f30")  # tilted individuals theta = -h, +h


@functools.lru_cache(maxsize=64)
def _dp_cached(pmf: tuple[float, ...], budget: int, rounds: int, discount: float,
               allow_save: bool, tail: str) -> rec.DPResult:
    return rec.surrogate_dp(pmf, budget, rounds, discount, allow_save, tail)


@functools.lru_cache(maxsize=64)
def _population_cached(family: str, mean_capacity: float, k_max: int,
                       heterogeneity: float) -> tuple[float, ...]:
    """The surrogate's population pmf (a capacity-pmf fit and a Gauss-Hermite mixture)."""
    base = rec.capacity_pmf(family, mean_capacity, k_max)
    return tuple(rec.population_pmf(base, heterogeneity).tolist())


@functools.lru_cache(maxsize=64)
def _schedule_values(pmf: tuple[float, ...], budget: int, rounds: int, discount: float):
    """Exact homogeneous values of the spend-all and uniform spend schedules vs budget."""
    dp = _dp_cached(pmf, budget, rounds, discount, True, "lump")
    tables = (dp.expected_now, dp.recruit_pmf)
    size = budget + 1
    b = torch.arange(size)[None, :, None].expand(rounds, size, size)
    t = torch.arange(rounds)[:, None, None]
    spend_all = rec.evaluate_policy(b.clone(), discount=discount, tables=tables)
    uniform = rec.evaluate_policy((b // (rounds - t)).clone(), discount=discount, tables=tables)
    return spend_all, uniform


class RecruitmentExplorer(ExplorerBase):
    """Sweep budget, horizon and the capacity model; watch the DP save coupons."""

    budget = param.Integer(20, bounds=(5, 60), doc="Total coupon budget B (spec range 5-60).")
    rounds = param.Integer(4, bounds=(1, 8), doc="Number of recruitment rounds T.")
    m0 = param.Integer(3, bounds=(1, 20), doc="Initial frontier size (seeds holding coupons).")
    family = param.Selector(default="custom", objects=list(rec.FAMILIES),
                            doc="Capacity family: 'custom' is the spec's pmf (mean 1.87, K=6); "
                                "the others use mean_capacity and k_max.")
    mean_capacity = param.Number(1.87, bounds=(0.5, 5.0), step=0.01,
                                 doc="Mean referral capacity (not used by 'custom'); must be "
                                     "below k_max.")
    k_max = param.Integer(6, bounds=(2, 10), doc="Largest capacity K (not used by 'custom').")
    heterogeneity = param.Number(0.5, bounds=(0.0, 2.0), step=0.05,
                                 doc="Sd of each person's logit (exponential-tilt) shift.")
    discount = param.Number(1.0, bounds=(0.5, 1.0), step=0.01,
                            doc="Per-round discount of recruits (1 = total recruits).")
    pitfall = param.Selector(default="none", objects=["none", "drop tail", "no saving"],
                             doc="Inject a pitfall into the DP: discard the truncated PGF "
                                 "mass, or forbid saving coupons.")
    epsilon_max = param.Number(0.5, bounds=(0.05, 0.5), step=0.05,
                               doc="Largest misspecification eps in the robustness run.")
    mc_reps = param.Integer(2000, bounds=(200, 20000), softbounds=(200, 10000), step=200,
                            doc="Monte Carlo runs per budget (Run button).")
    policies = param.ListSelector(default=list(rec.POLICIES), objects=list(rec.POLICIES),
                                  doc="Policies shown in the Monte Carlo comparison.")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the Monte Carlo runs.")
    run = param.Event(doc="Run the Monte Carlo comparison and the misspecification sweep.")
    RUN_LABEL, WIDGETS = "Run Monte Carlo", {"policies": pn.widgets.CheckBoxGroup}
    STATUS_BY_RESULTS = True

    #: settings within every bound that the model still rejects (the generic test uses them)
    INVALID_EXAMPLES = ({"family": "poisson", "mean_capacity": 4.0, "k_max": 3},
                        {"family": "geometric", "mean_capacity": 2.0, "k_max": 2})

    RUN_STATE = ("_mc", "_misspec")  # what a Run keeps (the record too)

    def __init__(self, **params):
        self._mc: dict | None = None
        self._misspec: dict | None = None
        self._plot_data_memo: tuple | None = None
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    def config(self) -> rec.RecruitmentConfig:
        """The lib config for the current parameters (raises ValueError when invalid)."""
        cfg = rec.RecruitmentConfig(
            family=self.family, mean_capacity=self.mean_capacity, k_max=self.k_max,
            heterogeneity=self.heterogeneity, budget=self.budget, rounds=self.rounds,
            m0=self.m0, discount=self.discount, mc_reps=self.mc_reps,
            budgets=tuple(sorted({max(5, self.budget // 4), max(5, self.budget // 2),
                                  self.budget})),
            misspec_eps=tuple(np.round(np.linspace(0, self.epsilon_max, 6), 3)),
            allow_save=self.pitfall != "no saving",
            tail="drop" if self.pitfall == "drop tail" else "lump")
        cfg.validate()
        return cfg

    def _population(self) -> tuple[float, ...]:
        cfg = self.config()
        return _population_cached(cfg.family, cfg.mean_capacity, cfg.k_max, cfg.heterogeneity)

    def _dp(self) -> rec.DPResult:
        cfg = self.config()
        return _dp_cached(self._population(), cfg.budget, cfg.rounds, cfg.discount,
                          cfg.allow_save, cfg.tail)

    def plot_data(self) -> dict:
        """The numbers behind the live views (empty arrays when the settings are invalid).

        Memoised on the settings and the Run results: a slider step redraws two views from
        one computation."""
        key = (self.settings_key(), id(self._mc), id(self._misspec))
        if self._plot_data_memo is None or self._plot_data_memo[0] != key:
            self._plot_data_memo = (key, self._compute_plot_data())
        return self._plot_data_memo[1]

    def _compute_plot_data(self) -> dict:
        if self._error():
            empty = np.zeros(0)
            return {"budget": empty, "dp": empty, "spend_all": empty, "uniform": empty,
                    "first_spend": empty, "survival_population": empty,
                    "survival_tilted": np.zeros((2, 0))}
        cfg = self.config()
        pmf = self._population()
        dp = self._dp()
        spend_all, uniform = _schedule_values(pmf, cfg.budget, cfg.rounds, cfg.discount)
        b = np.arange(cfg.budget + 1)
        m = np.minimum(cfg.m0, b)
        base = cfg.base_pmf()
        data = {
            "budget": b,
            "dp": dp.value[0, b, m].numpy(),
            "spend_all": spend_all[0, b, m].numpy(),
            "uniform": uniform[0, b, m].numpy(),
            "first_spend": dp.spend[0, b, m].numpy(),
            "survival_population": rec.marginals(torch.tensor(pmf, dtype=rec.DTYPE)).numpy(),
            "survival_tilted": rec.marginals(rec.tilt(base, torch.tensor(
                [-cfg.heterogeneity, cfg.heterogeneity], dtype=base.dtype))).numpy(),
        }
        if self._mc is not None:
            data["mc"] = self._mc["rows"]
        if self._misspec is not None:
            data["misspec"] = self._misspec["rows"]
        return data

    # ------------------------------------------------------------------ views
    # Live figures: each is one function returning a Chart (numbers and labels), drawn once
    # and then updated in place (dashboards/app/live.py); None keeps the last valid figure
    # while the settings are invalid (the alert says why).
    _DP = ["budget", "rounds", "m0", "family", "mean_capacity", "k_max", "heterogeneity",
           "discount", "pitfall"]
    _SURVIVAL = ["family", "mean_capacity", "k_max", "heterogeneity"]
    _VALUE_KEYS = ("dp", "uniform", "spend_all")

    @param.depends(*_DP)
    def value_chart(self) -> Chart | None:
        """Exact value of the DP policy and of two spend schedules vs budget (F2, exact)."""
        if self._error():
            return None
        d = self.plot_data()
        return Chart(f"Exact value in the surrogate model (T = {self.rounds}, m0 = {self.m0})",
                     "budget B (coupons)", "expected recruits",
                     [Series(POLICY_COLORS[k], d["budget"], d[k], rec.POLICY_LABELS[k])
                      for k in self._VALUE_KEYS])

    @param.depends(*_DP)
    def spend_chart(self) -> Chart | None:
        """Optimal first-round spend vs budget: below the diagonal, the DP saves coupons."""
        if self._error():
            return None
        d = self.plot_data()
        return Chart("Coupons spent in round 1", "budget B (coupons)",
                     "first-round spend (coupons)",
                     [Series("grey", d["budget"], d["budget"], "spend everything",
                             dash="dashed"),
                      Series(POLICY_COLORS["dp"], d["budget"], d["first_spend"], "DP optimum")])

    @param.depends(*_SURVIVAL)
    def survival_chart(self) -> Chart | None:
        """Marginal survival P(C >= j): the population and two tilted individuals (F1)."""
        if self._error():
            return None
        d = self.plot_data()
        j = np.arange(1, len(d["survival_population"]) + 1)
        lo, hi = d["survival_tilted"]
        h = self.heterogeneity
        return Chart("Marginal survival probabilities", "coupon index j", "P(C >= j)",
                     [Series("black", j, d["survival_population"], "population"),
                      Series(SURVIVAL_COLORS[0], j, lo, f"theta = -{h:g}"),
                      Series(SURVIVAL_COLORS[1], j, hi, f"theta = +{h:g}")])

    def live_charts(self) -> list:
        return [self.value_chart, self.spend_chart, self.survival_chart]

    @param.depends("run_done")
    def mc_view(self) -> hv.Overlay | hv.Element:
        """Monte Carlo value (± 2 SE) of every policy in the heterogeneous simulator."""
        if self._mc is None:
            return message_plot("Press Run for the Monte Carlo comparison")
        return plot_value_vs_budget(self._mc)

    @param.depends("run_done")
    def misspec_view(self) -> hv.Overlay | hv.Element:
        """Realised loss of planning with a misspecified pmf vs the bound (F4)."""
        if self._misspec is None:
            return message_plot("Press Run for the misspecification sweep")
        return plot_misspec(self._misspec)

    @param.depends("run", watch=True)
    def _run(self) -> None:
        if self._error():
            return
        cfg = self.config()
        policies = [p for p in rec.POLICIES if p in self.policies] or ["dp"]

        def monte_carlo():
            mc = rec.figure_value_vs_budget_data(cfg, self.seed, policies)
            return {**mc, "policies": policies}

        def keep(results):
            self._mc, self._misspec = results

        self.run_stages([
            (f"Monte Carlo of {len(policies)} policies at budgets {list(cfg.budgets)} "
             f"({cfg.mc_reps} runs each)", monte_carlo),
            ("misspecification sweep (exact DP per eps)", lambda: rec.figure_misspec_data(cfg)),
        ], keep)

    @param.depends("budget", "rounds", "m0", "family", "mean_capacity", "k_max",
                   "heterogeneity", "discount", "pitfall", watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ layout
    def result_panes(self) -> list:
        return rows([pn.panel(self.mc_view, sizing_mode="stretch_width"),
                     pn.panel(self.misspec_view, sizing_mode="stretch_width")])


# ---------------------------------------------------------------------- figures (shared
# with the notebook: each takes the lib's figure_*_data output)
def plot_value_vs_budget(data: dict, policies=None) -> hv.Overlay:
    """F2: Monte Carlo recruits (± 2 SE) of each policy vs budget."""
    rows = data["rows"]
    policies = policies or data.get("policies") or list(dict.fromkeys(r["policy"] for r in rows))
    layers = []
    for p in policies:
        pts = [(r["budget"], r["mean"], 2 * r["se"]) for r in rows if r["policy"] == p]
        x, y, e = map(np.array, zip(*pts))
        color = POLICY_COLORS[p]
        layers += [hv.Curve((x, y), "budget B", "recruits (MC)", label=rec.POLICY_LABELS[p])
                   .opts(color=color),
                   hv.ErrorBars((x, y, e), "budget B", ["recruits (MC)", "2 SE"])
                   .opts(color=color)]
    return hv.Overlay(layers).opts(title="Heterogeneous simulator, common random numbers",
                                   legend_position="top_left", responsive=True, min_height=300)


def plot_misspec(data: dict, toward: int | None = None) -> hv.Overlay:
    """F4: realised loss, frontier term, transition term and bound vs eps, for the
    misspecification toward capacity ``toward`` (default: the first direction swept)."""
    toward = data["toward"][0] if toward is None else toward
    rows = [r for r in data["rows"] if r["toward"] == toward]
    eps = [r["eps"] for r in rows]
    series = {"loss": "realised loss", "frontier_term": "frontier term",
              "transition_term": "transition term", "bound": "bound (sum)"}
    return hv.Overlay([hv.Curve((eps, [r[k] for r in rows]), "eps", "recruits", label=v)
                       for k, v in series.items()]).opts(
        title=f"Misspecified pmf, mass moved to capacity {toward}",
        legend_position="top_left", responsive=True, min_height=300)


def plot_survival(data: dict) -> hv.Overlay:
    """F1 (left): marginal survival curves P(C_i >= j) of a few individuals."""
    j = data["j"]
    return hv.Overlay([hv.Curve((j, s), "coupon j", "P(C >= j)", label=f"theta = {t:+g}")
                       for t, s in zip(data["theta"], data["survival"])]).opts(
        title="Marginal survival probabilities", legend_position="top_right",
        responsive=True, min_height=300)


def plot_dp_vs_mc(data: dict) -> hv.Overlay:
    """F3 (left): DP value vs Monte Carlo (± 3 SE) of its policy, per start state."""
    rows = data["rows"]
    x = np.arange(len(rows))
    labels = [f"B={r['budget']}" if r["kind"] == "start" else
              f"stress (t={r['round'] + 1}, b={r['budget']}, m={r['m0']})" for r in rows]
    dp = hv.Scatter((x, [r["dp"] for r in rows]), "start state", "value", label="DP")
    mc = hv.ErrorBars((x, [r["mc"] for r in rows], [3 * r["se"] for r in rows]),
                      "start state", ["value", "3 SE"], label="MC ± 3 SE")
    return (mc * dp.opts(size=8, color="black")).opts(
        title="Surrogate DP vs Monte Carlo of its own policy", xticks=list(zip(x, labels)),
        xrotation=30, responsive=True, min_height=300)


def plot_runtime(rows: list[dict]) -> hv.Layout:
    """F3 (right): the DP's cost against the budget on log-log axes: the floating-point
    operations torch counted (the complexity statement; the slope tends to 4, ``O(T B^4)``) and
    the median wall time of the repeats with their min-max spread (machine-dependent)."""
    b = np.array([r["budget"] for r in rows], dtype=float)
    flops = np.array([r["flops"] for r in rows], dtype=float)
    slope = np.polyfit(np.log(b), np.log(flops), 1)[0]
    ops = (hv.Curve((b, flops), "budget B", "operations")
           * hv.Scatter((b, flops)).opts(size=6)).opts(
        logx=True, logy=True, title=f"DP operations counted (log-log slope {slope:.2f})",
        responsive=True, min_height=300)
    sec = np.array([r["seconds"] for r in rows])
    lo = sec - np.array([r["seconds_min"] for r in rows])
    hi = np.array([r["seconds_max"] for r in rows]) - sec
    # one legend entry: bokeh draws none for error bars, so the scatter's names both
    wall = (hv.ErrorBars((b, sec, lo, hi), "budget B", ["seconds", "below", "above"])
            * hv.Scatter((b, sec), "budget B", "seconds",
                         label="median, bars min-max").opts(size=6)).opts(
        logx=True, logy=True, title=f"DP wall time (median of {rows[0]['repeats']} runs)",
        legend_position="top_left", responsive=True, min_height=300)
    return ops + wall


Explorer = RecruitmentExplorer
create_app = app_factory(Explorer, (
    "## Adaptive multi-round allocation (recruitment)\n\n"
    "Pan et al., *Adaptive Multi-Round Allocation with Stochastic Arrivals*, ICML 2026 "
    "([arXiv 2605.12111](https://arxiv.org/abs/2605.12111)). Live plots are exact "
    "(truncated-PGF DP); **Run** adds the Monte Carlo comparison in the heterogeneous "
    "process and the misspecification bound."))

if __name__.startswith("bokeh"):
    create_app().servable()
