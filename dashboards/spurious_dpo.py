"""Explorer for "Spurious Correlation Learning in Preference Optimization" (spurious_dpo).

Live views (closed forms, exact accuracies by quadrature, a few milliseconds per move): the
mean-bias channel 2m/(beta sigma^2); the leakage channel theta_s2 vs rho predicted by the
near-reference (quadratic-loss) theory for early stopping, shrinkage and convergence;
deployment accuracy vs the test-time bias m' for DPO and DPO + ties; and tie training vs
plain L2 in the same theory. Behind the Run button (real fits, batched over replicates):
the two channels at n pairs, theta_s1 and the ID/OOD gap vs n, and the tie-fraction sweep
with both controls. Their HoloViews figures (and the notebook's F4) are in
``dashboards/spurious_dpo_figures.py``, re-exported here.

Serve alone with ``panel serve dashboards/spurious_dpo.py`` or with every paper via
``icml26 serve``.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import holoviews as hv
import numpy as np
import panel as pn
import param

from icml26 import spurious_dpo as sd
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, message_plot
from icml26.dashboards.app.page import figure_grid
from icml26.dashboards.spurious_dpo_figures import (  # noqa: F401 - the notebook's figures
    COLORS,
    irreducible_plot,
    leakage_plot,
    neural_plot,
    ties_plot,
)

N_STEPS = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
TIE_N_CAP = 20_000  # the Run tie sweep uses at most this many preference pairs (memory)


@functools.lru_cache(maxsize=256)
def _live(cfg: sd.SpuriousConfig, training: str, tie_fraction: float) -> dict:
    """Every number behind the live views for one config (cached: the views share it)."""
    return sd.figure_theory_data(cfg, training, tie_fraction)


# ---------------------------------------------------------------------- live charts (shared
# with the notebook through live.show)
def mean_bias_chart(theory: dict, fitted=None, n_fit: int | None = None) -> Chart:
    """Channel 1: the line 2m/(beta sigma^2) and, if given, the fitted theta_s1 vs m (F1a)."""
    series = [Series("black", theory["m"], theory["theta_s1_theory"], "theory 2m / (β σ²)")]
    if fitted is not None:
        series.append(Series(COLORS["converged"], fitted.m, fitted.theta_s1,
                             f"converged fit (n = {n_fit:.0e})" if n_fit else "converged fit",
                             kind="scatter"))
    return Chart("Mean-bias channel: θ_s1 = 2m/(βσ²) at any n", "m (mean spurious bias)",
                 "spurious weight θ_s1", series)


def theory_leakage_chart(theory: dict, steps: int, lr: float, lam: float) -> Chart:
    """Channel 2 in the quadratic theory: theta_s2 vs rho for the three regimes."""
    rho = theory["rho"]
    return Chart("Leakage, near-reference theory", "ρ (causal-spurious correlation)",
                 "spurious weight θ_s2", [
                     Series(COLORS["early_stop"], rho, theory["leak_early_stop"],
                            f"early stop ({steps} × lr {lr:g})"),
                     Series(COLORS["shrunk"], rho, theory["leak_shrunk"],
                            f"shrinkage λ = {lam:g}"),
                     Series(COLORS["converged"], rho, theory["leak_converged"],
                            "converged (quadratic model)")])


def theory_ties_chart(theory: dict, tie_loss: str, tie_fraction: float | None = None) -> Chart:
    """Ties vs plain L2 at matched |theta_s| in the quadratic theory, relative to DPO."""
    fr = theory["tie_fraction"]
    series = [Series(COLORS["ties"], fr, theory["ties_spurious"], f"ties ({tie_loss}): θ_s1"),
              Series(COLORS["ties"], fr, theory["ties_causal"], "ties: θ_c·w*", dash="dashed"),
              Series(COLORS["l2_matched"], fr, theory["l2_causal"],
                     "L2 at the same |θ_s|: θ_c·w*", dash="dashed")]
    if tie_fraction is not None:
        series.append(Series("grey", kind="vline", at=tie_fraction))
    return Chart("Tie training vs L2 (quadratic theory)", "tie fraction (of all data)",
                 "weight relative to DPO", series)


def deployment_chart(theory: dict, tie_fraction: float, training: str,
                     marks: tuple[float, float] | None = None) -> Chart:
    """Exact accuracy vs the deployment bias m' for DPO and DPO + ties; ``marks`` = (training
    m, test m') draws them as dotted / dashed lines."""
    series = [Series(COLORS["dpo"], theory["test_m"], theory["acc_dpo"], f"DPO ({training})"),
              Series(COLORS["ties"], theory["test_m"], theory["acc_ties"],
                     f"DPO + ties ({tie_fraction:.0%})")]
    if marks is not None:
        series += [Series("black", kind="vline", at=marks[0], dash="dotted"),
                   Series("grey", kind="vline", at=marks[1], dash="dashed")]
    return Chart("Deployment (dotted: training m, dashed: m')", "test-time bias m'",
                 "accuracy (share of pairs)", series)


@functools.lru_cache(maxsize=48)
def _run_stage(stage: str, cfg: sd.SpuriousConfig, seed: int) -> dict:
    """One part of a Run (cached per settings: a repeated Run only redraws)."""
    if stage == "channels":
        return sd.figure_channels_data(cfg, seed, use_cache=False)
    if stage == "irreducible":
        return sd.figure_irreducible_data(cfg, seed, use_cache=False)
    return sd.figure_ties_data(cfg, seed, extra_tie_losses=False, use_cache=False)


#: the parts of a Run, in order, with what the progress line says while each runs
RUN_STAGES = (("channels", "fitting θ vs m and ρ in every regime"),
              ("irreducible", "fitting at every n up to n pairs"),
              ("ties", "fitting DPO + ties and both controls at every tie fraction"))


class SpuriousDPOExplorer(ExplorerBase):
    """Move the data-pipeline artefacts and the training regime; watch the two channels."""

    m = param.Number(0.5, bounds=(0.0, 1.5), step=0.05,
                     doc="Mean spurious bias: the chosen response's s1 is larger by m.")
    rho = param.Number(0.5, bounds=(0.0, 1.0), step=0.05,
                       doc="Causal-spurious correlation: s carries rho * utility difference.")
    sigma_eps = param.Number(1.0, bounds=(0.3, 2.0), step=0.05,
                             doc="Noise sd of the spurious features.")
    kappa = param.Number(3.0, bounds=(0.5, 10.0), step=0.1,
                         doc="Label sharpness: P(first wins) = sigmoid(kappa * du).")
    beta = param.Number(1.0, bounds=(0.05, 2.0), step=0.05, doc="DPO beta.")
    log10_n_pairs = param.Number(4.0, bounds=(2.0, 5.0), step=0.25,
                                 doc="log10 of the number of preference pairs (Run).")
    tie_fraction = param.Number(0.3, bounds=(0.0, 0.7), step=0.05,
                                doc="Ties as a fraction of all data, at fixed preference pairs.")
    tie_loss = param.Selector(default="symmetric", objects=list(sd.TIE_LOSSES),
                              doc="Tie likelihood: symmetric BT, Rao-Kupper or Davidson.")
    training = param.Selector(default="converged", objects=list(sd.TRAININGS),
                              doc="Regime of the live theory: converged, early-stopped "
                                  "gradient descent, or L2 shrinkage.")
    early_steps = param.Integer(10, bounds=(1, 500), softbounds=(1, 200),
                                doc="Full-batch gradient steps of early stopping.")
    lr = param.Number(0.1, bounds=(0.01, 1.0), step=0.01,
                      doc="Step size of early stopping (must stay below the stability limit).")
    shrink_lambda = param.Number(4.0, bounds=(0.0, 20.0), step=0.25,
                                 doc="Shrinkage lambda: penalty (beta^2 lambda / 8)|theta|^2.")
    hidden_causal = param.Boolean(False, doc="The policy does not see causal coordinate 0.")
    test_shift_m = param.Number(-0.5, bounds=(-1.5, 1.5), step=0.05,
                                doc="Mean spurious bias m' of the deployment pairs.")
    seeds = param.Integer(3, bounds=(1, 10), doc="Replicate data sets per Run (mean shown).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the Run.")
    run = param.Event(doc="Fit the channels, the n sweep and the tie sweep at these settings.")
    RUN_LABEL, STATUS_BY_RESULTS = "Run fits", True

    #: settings within every bound that the model still rejects (the generic test uses them)
    INVALID_EXAMPLES = ({"lr": 1.0, "beta": 2.0, "sigma_eps": 2.0, "m": 1.5},)

    _THEORY = ["m", "rho", "sigma_eps", "kappa", "beta", "early_steps", "lr", "shrink_lambda",
               "hidden_causal"]
    _MODEL = [*_THEORY, "log10_n_pairs", "tie_fraction", "tie_loss", "training",
              "test_shift_m"]

    def __init__(self, **params):
        self._result: dict | None = None
        self._config_memo: tuple | None = None
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    @property
    def n_pairs(self) -> int:
        return int(round(10**self.log10_n_pairs))

    def config(self) -> sd.SpuriousConfig:
        """The lib config for the current parameters (raises ValueError when invalid).

        Memoised per settings: validation solves an eigenproblem (the stable step size), and
        every view and the error check ask for the config on each slider step."""
        key = self.settings_key()
        if self._config_memo is None or self._config_memo[0] != key:
            try:
                self._config_memo = (key, self._build_config(), "")
            except ValueError as e:
                self._config_memo = (key, None, str(e))
        _, cfg, error = self._config_memo
        if error:
            raise ValueError(error)
        return cfg

    def _build_config(self) -> sd.SpuriousConfig:
        n = self.n_pairs
        cfg = sd.SpuriousConfig(
            m=self.m, rho=self.rho, sigma_eps=self.sigma_eps, kappa=self.kappa, beta=self.beta,
            hidden_causal=self.hidden_causal, n_pairs=n, n_population=n,
            early_steps=self.early_steps, lr=self.lr, shrink_lambda=self.shrink_lambda,
            far_steps=0, m_grid=tuple(np.round(np.linspace(0, 1.5, 7), 3)),
            n_grid=tuple(v for v in N_STEPS if v < n) + (n,), replicates=max(self.seeds, 2),
            tie_replicates=self.seeds, tie_loss=self.tie_loss,
            tie_fractions=tuple(sorted({0.0, 0.1, 0.3, 0.5, round(self.tie_fraction, 4)})),
            test_shift_m=self.test_shift_m)
        cfg.validate()
        return cfg

    def _error(self) -> str:
        try:
            _live(self.config(), self.training, float(self.tie_fraction))
        except ValueError as e:
            return str(e)
        return ""

    def plot_data(self) -> dict:
        """The numbers behind the views (live ones always; Run ones once Run was pressed)."""
        if self._error():
            keys = ("m", "theta_s1_theory", "rho", "leak_early_stop", "leak_shrunk",
                    "leak_converged", "tie_fraction", "ties_spurious", "ties_causal",
                    "l2_causal", "test_m", "acc_dpo", "acc_ties")
            data = {k: np.zeros(0) for k in keys}
        else:
            data = dict(_live(self.config(), self.training, float(self.tie_fraction)))
        if self._result is not None:
            data["run_mean_bias"] = self._result["channels"]["mean_bias"]
            data["run_leakage"] = self._result["channels"]["leakage"]
            data["run_irreducible"] = self._result["irreducible"]["rows"]
            data["run_ties"] = self._result["ties"]["rows"]
        return data

    # ------------------------------------------------------------------ views
    # Live views: each returns a Chart, drawn once and then updated in place (each step
    # writes only the new columns; a DynamicMap re-render of these four overlays cost ~2.9x
    # the trivial app's latency); None keeps the last valid figure while the settings are
    # invalid (the alert says why).
    _MEAN_BIAS = ["beta", "sigma_eps"]
    _DEPLOYMENT = [*_THEORY, "tie_loss", "training", "tie_fraction", "test_shift_m"]
    _TIES = [*_THEORY, "tie_loss", "training", "tie_fraction"]

    @param.depends(*_MEAN_BIAS)
    def mean_bias_view(self) -> Chart | None:
        """Channel 1: the population optimum's theta_s1 = 2m/(beta sigma^2) (exact). The
        training m is the dotted line of the deployment view (a marker here would redraw
        this plot on every m step, for no new number)."""
        return None if self._error() else mean_bias_chart(self.plot_data())

    @param.depends(*_THEORY)
    def leakage_view(self) -> Chart | None:
        """Channel 2: theta_s2 vs rho in the near-reference (quadratic-loss) theory."""
        return None if self._error() else theory_leakage_chart(
            self.plot_data(), self.early_steps, self.lr, self.shrink_lambda)

    @param.depends(*_DEPLOYMENT)
    def deployment_view(self) -> Chart | None:
        """Exact accuracy vs the deployment bias m' for DPO and DPO + ties (quadratic
        theory in the selected regime), with the training m (dotted) and m' (dashed)."""
        return None if self._error() else deployment_chart(
            self.plot_data(), self.tie_fraction, self.training,
            marks=(self.m, self.test_shift_m))

    @param.depends(*_TIES)
    def ties_view(self) -> Chart | None:
        """Ties vs plain L2 at matched |theta_s| (quadratic theory), relative to DPO."""
        return None if self._error() else theory_ties_chart(
            self.plot_data(), self.tie_loss, self.tie_fraction)

    def live_charts(self) -> list:
        return [self.mean_bias_view, self.leakage_view, self.deployment_view, self.ties_view]

    @param.depends("run_done")
    def run_leakage_view(self) -> hv.Overlay | hv.Element:
        """Fitted theta_s2 vs rho in every regime, with the linearised predictions dashed."""
        if self._result is None:
            return message_plot("Press Run to fit the channels at n pairs")
        return leakage_plot(self._result["channels"]["leakage"]).opts(
            title=f"Fitted leakage, n = {self._result['n']}")

    @param.depends("run_done")
    def run_irreducible_view(self) -> pn.GridBox | hv.Element:
        """theta_s1, accuracies and the estimation error vs n (mean over replicates)."""
        if self._result is None:
            return message_plot("Press Run for the sweep over n")
        d = self._result["irreducible"]
        return figure_grid(irreducible_plot(d["rows"], d["theta_s1_pop"]))

    @param.depends("run_done")
    def run_ties_view(self) -> pn.GridBox | hv.Element:
        """Fitted |theta_s1| relative to DPO, theta_c.w* and accuracies vs tie fraction."""
        if self._result is None:
            return message_plot("Press Run for the tie sweep")
        return figure_grid(ties_plot(self._result["ties"]["rows"]), ncols=2)

    @param.depends("run", watch=True)
    def _run(self) -> None:
        if self._error():
            return
        cfg = self.config()
        tie_n = min(cfg.n_pairs, TIE_N_CAP)
        stage_cfg = {"channels": cfg, "irreducible": cfg,
                     "ties": replace(cfg, n_pairs=tie_n)}
        seed = int(self.seed)

        def keep(results):
            self._result = {"n": cfg.n_pairs, "tie_n": tie_n,
                            **dict(zip((stage for stage, _ in RUN_STAGES), results))}

        self.run_stages([(doing, functools.partial(_run_stage, stage, stage_cfg[stage], seed))
                         for stage, doing in RUN_STAGES], keep)

    @param.depends(*_MODEL, watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ layout
    def result_panes(self) -> list:
        return [pn.panel(view, sizing_mode="stretch_width") for view in
                (self.run_leakage_view, self.run_irreducible_view, self.run_ties_view)]


Explorer = SpuriousDPOExplorer
create_app = app_factory(Explorer, (
    "## Spurious correlation learning in DPO and tie training (spurious_dpo)\n\n"
    "Moya, Semendinger, Lin, Thornley, *Spurious Correlation Learning in Preference "
    "Optimization: Mechanisms, Consequences, and Mitigation via Tie Training*, ICML "
    "2026 ([arXiv 2605.11134](https://arxiv.org/abs/2605.11134)). Live plots: the "
    "exact mean-bias optimum and the near-reference (quadratic-loss) theory with "
    "exact accuracies; **Run** fits log-linear DPO at n pairs (batched Newton / "
    "gradient descent)."))

if __name__.startswith("bokeh"):
    create_app().servable()
