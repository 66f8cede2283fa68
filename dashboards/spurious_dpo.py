"""Explorer for "Spurious Correlation Learning in Preference Optimization" (spurious_dpo).

Live views (closed forms, exact accuracies by quadrature, a few milliseconds per move): the
mean-bias channel 2m/(beta sigma^2); the leakage channel theta_s2 vs rho predicted by the
near-reference (quadratic-loss) theory for early stopping, shrinkage and convergence;
deployment accuracy vs the test-time bias m' for DPO and DPO + ties; and tie training vs
plain L2 in the same theory. Behind the Run button (real fits, batched over replicates):
the two channels at n pairs, theta_s1 and the ID/OOD gap vs n, and the tie-fraction sweep
with both controls.

Serve alone with ``panel serve dashboards/spurious_dpo.py`` or with every paper via
``icml26 serve``.
"""

from __future__ import annotations

import functools

import holoviews as hv
import numpy as np
import panel as pn
import param

from icml26 import spurious_dpo as sd
from icml26.dashboards import perf
from icml26.dashboards.live import Line
from icml26.dashboards.page import ExplorerBase, paper_page

COLORS = {"converged": "#1f77b4", "early_stop": "#d62728", "shrunk": "#2ca02c",
          "hidden_converged": "#9467bd", "ties": "#d62728", "random_labels": "#ff7f0e",
          "l2_matched": "#7f7f7f", "dpo": "#1f77b4"}
LABELS = {"converged": "converged", "early_stop": "early-stopped", "shrunk": "L2 shrinkage",
          "hidden_converged": "converged, cause hidden", "ties": "DPO + ties",
          "random_labels": "ties as random wins/losses", "l2_matched": "plain L2 (matched |θ_s|)"}
N_STEPS = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
TIE_N_CAP = 20_000  # the Run tie sweep uses at most this many preference pairs (memory)


@functools.lru_cache(maxsize=256)
def _live(cfg: sd.SpuriousConfig, training: str, tie_fraction: float) -> dict:
    """Every number behind the live views for one config (cached: the views share it)."""
    return sd.figure_theory_data(cfg, training, tie_fraction)


# ---------------------------------------------------------------------- plots (shared)
def _opts(el, title: str, legend: str = "top_left"):
    return el.opts(title=title, legend_position=legend, responsive=True, min_height=280)


def mean_bias_plot(theory: dict, fitted=None) -> hv.Overlay:
    """Channel 1: the line 2m/(beta sigma^2) and, if given, the fitted theta_s1 vs m (F1a)."""
    layers = [hv.Curve((theory["m"], theory["theta_s1_theory"]), "m (mean spurious bias)",
                       "θ_s1", label="theory 2m / (β σ²)").opts(color="black")]
    if fitted is not None:
        layers.append(hv.Scatter((fitted.m, fitted.theta_s1), "m (mean spurious bias)", "θ_s1",
                                 label="converged fit (n = 1e5)").opts(color=COLORS["converged"],
                                                                       size=8))
    return _opts(hv.Overlay(layers), "Mean-bias channel: θ_s1 = 2m/(βσ²) at any n")


def theory_leakage_plot(theory: dict, steps: int, lr: float, lam: float) -> hv.Overlay:
    """Channel 2 in the quadratic theory: theta_s2 vs rho for the three regimes."""
    rho = theory["rho"]
    return _opts(hv.Overlay([
        hv.Curve((rho, theory["leak_early_stop"]), "ρ", "θ_s2",
                 label=f"early stop ({steps} × lr {lr:g})").opts(color=COLORS["early_stop"]),
        hv.Curve((rho, theory["leak_shrunk"]), "ρ", "θ_s2",
                 label=f"shrinkage λ = {lam:g}").opts(color=COLORS["shrunk"]),
        hv.Curve((rho, theory["leak_converged"]), "ρ", "θ_s2",
                 label="converged (quadratic model)").opts(color=COLORS["converged"])]),
        "Leakage, near-reference theory (2/β)(Σ + λI)⁻¹μ")


def leakage_plot(leakage, far: bool = True) -> hv.Overlay:
    """F1(b): fitted theta_s2 vs rho in every regime, linearised predictions dashed."""
    layers = []
    fits = [("converged", "converged"), ("early_stop", "early-stopped"),
            ("shrunk", "L2 shrinkage"), ("hidden_converged", "converged, cause hidden")]
    if far and "far_early_stop" in set(leakage.regime):
        fits.append(("far_early_stop", "50 steps × lr 0.5 (spec prototype)"))
    colors = {**COLORS, "far_early_stop": "#8c564b"}
    for regime, label in fits:
        sel = leakage[leakage.regime == regime]
        layers.append(hv.Curve((sel.rho, sel.theta_s2), "ρ", "θ_s2", label=label)
                      .opts(color=colors[regime]))
        layers.append(hv.Scatter((sel.rho, sel.theta_s2), "ρ", "θ_s2")
                      .opts(color=colors[regime], size=6))
    for regime, lin in (("early_stop", "linearised_early_stop"),
                        ("shrunk", "linearised_shrunk"), ("far_early_stop", "linearised_far")):
        sel = leakage[leakage.regime == lin]
        if len(sel) and (far or regime != "far_early_stop"):
            layers.append(hv.Curve((sel.rho, sel.theta_s2), "ρ", "θ_s2",
                                   label=f"linearised ({regime.replace('_', ' ')})")
                          .opts(color=colors[regime], line_dash="dashed"))
    return _opts(hv.Overlay(layers), "Leakage channel: θ_s2 vs ρ")


def irreducible_plot(rows, theta_s1_pop: float | None = None) -> hv.Layout:
    """F2: theta_s1, ID/OOD accuracy and the estimation error vs n (mean ± SE)."""
    g = rows.groupby("n")
    mean, se = g.mean(numeric_only=True), g.sem(numeric_only=True).fillna(0.0)
    n = mean.index.values.astype(float)

    def band(col, label, color):
        return (hv.Curve((n, mean[col]), "n pairs", col, label=label).opts(color=color) *
                hv.ErrorBars((n, mean[col], 2 * se[col]), "n pairs", [col, "2 SE"])
                .opts(color=color))

    s1 = band("theta_s1", "θ_s1 (mean ± 2 SE)", COLORS["converged"])
    if theta_s1_pop is not None:
        s1 = s1 * hv.HLine(theta_s1_pop).opts(color="black", line_dash="dashed")
    acc = band("acc_id", "in distribution (m' = m)", COLORS["converged"]) * \
        band("acc_ood", "flipped bias (m' = -m)", COLORS["ties"]) * \
        band("acc_neutral", "neutral (m' = 0)", COLORS["shrunk"])
    err = hv.Curve((n, mean.est_error), "n pairs", "|θ_n - θ_pop|²", label="estimation error")
    ref = hv.Curve((n, mean.est_error.iloc[-1] * n[-1] / n), "n pairs", "|θ_n - θ_pop|²",
                   label="∝ 1/n").opts(color="grey", line_dash="dashed")
    return (_opts(s1.opts(logx=True), "θ_s1 does not shrink with n (dashed: population)") +
            _opts(acc.opts(logx=True), "Accuracy: the ID-OOD gap stays", "bottom_right") +
            _opts((err * ref).opts(logx=True, logy=True), "Reducible part ~ 1/n",
                  "bottom_left")).cols(3)


def ties_plot(rows, methods=("ties", "random_labels", "l2_matched")) -> hv.Layout:
    """F3: |theta_s1| / DPO's, theta_c . w*, neutral and OOD accuracy vs tie fraction."""
    g = rows.groupby(["method", "tie_fraction"])
    mean = g.mean(numeric_only=True).reset_index()
    base = float(abs(mean[(mean.method == "ties") & (mean.tie_fraction == 0)].theta_s1.iloc[0]))
    panels = {"spur": [], "causal": [], "neutral": [], "ood": []}
    labels = {**LABELS, "ties_rao_kupper": "ties (Rao-Kupper)", "ties_davidson": "ties (Davidson)"}
    colors = {**COLORS, "ties_rao_kupper": "#e377c2", "ties_davidson": "#17becf"}
    for method in methods:
        sel = mean[mean.method == method].sort_values("tie_fraction")
        if sel.empty:
            continue
        x, kw = sel.tie_fraction, {"label": labels[method]}
        c = colors[method]
        panels["spur"].append(hv.Curve((x, sel.theta_s1.abs() / (base or 1.0)), "tie fraction",
                                       "|θ_s1| / DPO's", **kw).opts(color=c))
        panels["causal"].append(hv.Curve((x, sel.causal_dot), "tie fraction", "θ_c·w*", **kw)
                                .opts(color=c))
        panels["neutral"].append(hv.Curve((x, sel.acc_neutral), "tie fraction",
                                          "accuracy, neutral pairs", **kw).opts(color=c))
        panels["ood"].append(hv.Curve((x, sel.acc_ood), "tie fraction",
                                      "accuracy, flipped bias", **kw).opts(color=c))
    return (_opts(hv.Overlay(panels["spur"]), "Spurious weight vs DPO", "bottom_left") +
            _opts(hv.Overlay(panels["causal"]), "Causal weight θ_c·w*", "bottom_left") +
            _opts(hv.Overlay(panels["neutral"]), "Neutral pairs (m' = 0)", "bottom_right") +
            _opts(hv.Overlay(panels["ood"]), "Flipped bias (m' = -m)", "bottom_right")).cols(2)


def theory_ties_plot(theory: dict, tie_loss: str, tie_fraction: float | None = None):
    """Ties vs plain L2 at matched |theta_s| in the quadratic theory, relative to DPO."""
    x, y = "tie fraction", "relative to DPO"
    fr = theory["tie_fraction"]
    out = hv.Overlay([
        hv.Curve((fr, theory["ties_spurious"]), x, y, label=f"ties ({tie_loss}): θ_s1")
        .opts(color=COLORS["ties"]),
        hv.Curve((fr, theory["ties_causal"]), x, y, label="ties: θ_c·w*")
        .opts(color=COLORS["ties"], line_dash="dashed"),
        hv.Curve((fr, theory["l2_causal"]), x, y, label="L2 at the same |θ_s|: θ_c·w*")
        .opts(color=COLORS["l2_matched"], line_dash="dashed")])
    if tie_fraction is not None:
        out = out * hv.VLine(tie_fraction).opts(color="grey")
    return _opts(out, "Tie training vs L2 in the quadratic theory", "bottom_left")


def deployment_plot(theory: dict, tie_fraction: float, training: str,
                    marks: tuple[float, float] | None = None):
    """Exact accuracy vs the deployment bias m' for DPO and DPO + ties; ``marks`` = (training
    m, test m') draws them as dotted / dashed lines."""
    x = "test-time bias m'"
    out = hv.Overlay([
        hv.Curve((theory["test_m"], theory["acc_dpo"]), x, "accuracy", label=f"DPO ({training})")
        .opts(color=COLORS["dpo"]),
        hv.Curve((theory["test_m"], theory["acc_ties"]), x, "accuracy",
                 label=f"DPO + ties ({tie_fraction:.0%})").opts(color=COLORS["ties"])])
    if marks is not None:
        out = out * hv.VLine(marks[0]).opts(color="black", line_dash="dotted") * \
            hv.VLine(marks[1]).opts(color="grey", line_dash="dashed")
    return _opts(out, "Deployment: accuracy vs m' (dotted: training m, dashed: m')",
                 "bottom_right")


def neural_plot(rows) -> hv.Layout:
    """F4: spurious and causal sensitivity of the MLP rewards, DPO vs DPO + ties."""
    long = []
    for _, r in rows.iterrows():
        who = "DPO" if r.tie_fraction == 0 else f"DPO + ties ({r.tie_fraction:.0%})"
        long += [(who, "spurious s1", r.sens_s1), (who, "spurious s2", r.sens_s2),
                 (who, "causal (w*)", r.sens_causal)]
    import pandas as pd

    df = pd.DataFrame(long, columns=["model", "direction", "sensitivity"])
    df = df.groupby(["direction", "model"]).sensitivity.mean().reset_index()
    bars = hv.Bars(df, ["direction", "model"], "sensitivity")
    return bars.opts(title="MLP reward: E|∂r/∂x| by finite differences", responsive=True,
                     min_height=280, xrotation=0, tools=["hover"])


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

    #: settings within every bound that the model still rejects (the generic test uses them)
    INVALID_EXAMPLES = ({"lr": 1.0, "beta": 2.0, "sigma_eps": 2.0, "m": 1.5},)

    _THEORY = ["m", "rho", "sigma_eps", "kappa", "beta", "early_steps", "lr", "shrink_lambda",
               "hidden_causal"]
    _MODEL = [*_THEORY, "log10_n_pairs", "tie_fraction", "tie_loss", "training",
              "test_shift_m"]

    def __init__(self, **params):
        self._result: dict | None = None
        self._config_memo: tuple | None = None
        self._progress = pn.indicators.Progress(value=0, max=100, visible=False,
                                                sizing_mode="stretch_width")
        self._stage = pn.pane.Markdown("", sizing_mode="stretch_width")
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    @property
    def n_pairs(self) -> int:
        return int(round(10**self.log10_n_pairs))

    def config(self) -> sd.SpuriousConfig:
        """The lib config for the current parameters (raises ValueError when invalid).

        Memoised per settings: validation solves an eigenproblem (the stable step size), and
        every view and the error check ask for the config on each slider step."""
        key = perf.settings_key(self)
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
    def _message_plot(self, text: str) -> hv.Element:
        return hv.Text(0.5, 0.5, text).opts(xaxis=None, yaxis=None, toolbar=None,
                                            responsive=True, min_height=280)

    # Live views: drawn once per document, then updated in place by a LiveFigure (each
    # step writes only the new columns; a DynamicMap re-render of these four overlays cost
    # ~2.9x the trivial app's latency). ``*_layers`` give the same numbers layer by layer,
    # or None while the settings are invalid (the figure keeps the last valid state).
    _MEAN_BIAS = ["beta", "sigma_eps"]
    _DEPLOYMENT = [*_THEORY, "tie_loss", "training", "tie_fraction", "test_shift_m"]
    _TIES = [*_THEORY, "tie_loss", "training", "tie_fraction"]

    @param.depends(*_MEAN_BIAS)
    def mean_bias_view(self) -> hv.Overlay:
        """Channel 1: the population optimum's theta_s1 = 2m/(beta sigma^2) (exact). The
        training m is the dotted line of the deployment view (a marker here would redraw
        this plot on every m step, for no new number)."""
        return mean_bias_plot(self.plot_data())

    def _mean_bias_layers(self) -> list | None:
        if self._error():
            return None
        d = self.plot_data()
        return [Line(d["m"], d["theta_s1_theory"])]

    @param.depends(*_THEORY)
    def leakage_view(self) -> hv.Overlay:
        """Channel 2: theta_s2 vs rho in the near-reference (quadratic-loss) theory."""
        return theory_leakage_plot(self.plot_data(), self.early_steps, self.lr,
                                   self.shrink_lambda)

    def _leakage_layers(self) -> list | None:
        if self._error():
            return None
        d = self.plot_data()
        return [Line(d["rho"], d["leak_early_stop"],
                     f"early stop ({self.early_steps} × lr {self.lr:g})"),
                Line(d["rho"], d["leak_shrunk"], f"shrinkage λ = {self.shrink_lambda:g}"),
                Line(d["rho"], d["leak_converged"])]

    @param.depends(*_DEPLOYMENT)
    def deployment_view(self) -> hv.Overlay:
        """Exact accuracy vs the deployment bias m' for DPO and DPO + ties (quadratic
        theory in the selected regime), with the training m (dotted) and m' (dashed)."""
        return deployment_plot(self.plot_data(), self.tie_fraction, self.training,
                               marks=(self.m, self.test_shift_m))

    def _deployment_layers(self) -> list | None:
        if self._error():
            return None
        d = self.plot_data()
        return [Line(d["test_m"], d["acc_dpo"], f"DPO ({self.training})"),
                Line(d["test_m"], d["acc_ties"], f"DPO + ties ({self.tie_fraction:.0%})"),
                self.m, self.test_shift_m]

    @param.depends(*_TIES)
    def ties_view(self) -> hv.Overlay:
        """Ties vs plain L2 at matched |theta_s| (quadratic theory), relative to DPO."""
        return theory_ties_plot(self.plot_data(), self.tie_loss, self.tie_fraction)

    def _ties_layers(self) -> list | None:
        if self._error():
            return None
        d = self.plot_data()
        return [Line(d["tie_fraction"], d["ties_spurious"], f"ties ({self.tie_loss}): θ_s1"),
                Line(d["tie_fraction"], d["ties_causal"]),
                Line(d["tie_fraction"], d["l2_causal"]), self.tie_fraction]

    def live_figures(self) -> list[tuple]:
        """``(view, layers)`` of each live figure, in page order (see ``LiveFigure``)."""
        return [(self.mean_bias_view, self._mean_bias_layers),
                (self.leakage_view, self._leakage_layers),
                (self.deployment_view, self._deployment_layers),
                (self.ties_view, self._ties_layers)]

    @param.depends("run")
    def run_leakage_view(self) -> hv.Overlay | hv.Element:
        """Fitted theta_s2 vs rho in every regime, with the linearised predictions dashed."""
        if self._result is None:
            return self._message_plot("Press Run to fit the channels at n pairs")
        return leakage_plot(self._result["channels"]["leakage"]).opts(
            title=f"Fitted leakage, n = {self._result['n']}")

    @param.depends("run")
    def run_irreducible_view(self) -> hv.Layout | hv.Element:
        """theta_s1, accuracies and the estimation error vs n (mean over replicates)."""
        if self._result is None:
            return self._message_plot("Press Run for the sweep over n")
        d = self._result["irreducible"]
        return irreducible_plot(d["rows"], d["theta_s1_pop"])

    @param.depends("run")
    def run_ties_view(self) -> hv.Layout | hv.Element:
        """Fitted |theta_s1| relative to DPO, theta_c.w* and accuracies vs tie fraction."""
        if self._result is None:
            return self._message_plot("Press Run for the tie sweep")
        return ties_plot(self._result["ties"]["rows"])

    @param.depends("run", watch=True)
    def _run(self) -> None:
        if self._error():
            return
        cfg = self.config()
        from dataclasses import replace

        tie_n = min(cfg.n_pairs, TIE_N_CAP)
        stage_cfg = {"channels": cfg, "irreducible": cfg,
                     "ties": replace(cfg, n_pairs=tie_n)}
        self._progress.visible, self._progress.value = True, 0
        try:
            result = {"n": cfg.n_pairs, "tie_n": tie_n}
            for i, (stage, doing) in enumerate(RUN_STAGES):
                self._stage.object = f"*{i + 1}/{len(RUN_STAGES)}: {doing}…*"
                result[stage] = _run_stage(stage, stage_cfg[stage], int(self.seed))
                self._progress.value = int(100 * (i + 1) / len(RUN_STAGES))
            self._result = result
        except (ValueError, RuntimeError) as e:  # never kill the server from a callback
            self._show_error(f"Run failed: {e}")
        finally:
            self._progress.visible = False
            self._stage.object = ""

    @param.depends(*_MODEL, watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ layout
    def __panel__(self):
        controls = pn.Param(self.param, show_name=False, widgets={
            "run": {"type": pn.widgets.Button, "color": "primary", "name": "Run fits"}})

        mean_bias, leakage, deployment, ties = self.live_panes()

        return pn.Row(
            pn.Column(controls, width=320),
            pn.Column(
                self._alert,
                pn.Row(mean_bias, leakage, sizing_mode="stretch_width"),
                pn.Row(deployment, ties, sizing_mode="stretch_width"),
                self._progress, self._stage,
                pn.panel(self.run_leakage_view, sizing_mode="stretch_width"),
                pn.panel(self.run_irreducible_view, sizing_mode="stretch_width"),
                pn.panel(self.run_ties_view, sizing_mode="stretch_width"),
                sizing_mode="stretch_width"),
            sizing_mode="stretch_width")


Explorer = SpuriousDPOExplorer


def create_app() -> pn.viewable.Viewable:
    """The served page: the paper's citation above the explorer."""
    return paper_page(
        "## Spurious correlation learning in DPO and tie training (spurious_dpo)\n\n"
        "Moya, Semendinger, Lin, Thornley, *Spurious Correlation Learning in Preference "
        "Optimization: Mechanisms, Consequences, and Mitigation via Tie Training*, ICML "
        "2026 ([arXiv 2605.11134](https://arxiv.org/abs/2605.11134)). Live plots: the "
        "exact mean-bias optimum and the near-reference (quadratic-loss) theory with "
        "exact accuracies; **Run** fits log-linear DPO at n pairs (batched Newton / "
        "gradient descent).",
        Explorer())


if __name__.startswith("bokeh"):
    create_app().servable()
