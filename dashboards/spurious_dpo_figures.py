"""The spurious_dpo Run's and notebook's HoloViews figures (F1b, F2, F3, F4), each drawn from
the lib's ``figure_*_data`` output; ``dashboards/spurious_dpo.py`` re-exports them (``from
icml26.dashboards import spurious_dpo as dash; dash.ties_plot(...)``), draws F1b-F3 after a
Run and shares the colours of the regimes and methods."""

from __future__ import annotations

import holoviews as hv
import pandas as pd

from icml26.dashboards.app.page import PANEL_WIDTH

COLORS = {"converged": "#1f77b4", "early_stop": "#d62728", "shrunk": "#2ca02c",
          "hidden_converged": "#9467bd", "ties": "#d62728", "random_labels": "#ff7f0e",
          "l2_matched": "#7f7f7f", "dpo": "#1f77b4"}
LABELS = {"converged": "converged", "early_stop": "early-stopped", "shrunk": "L2 shrinkage",
          "hidden_converged": "converged, cause hidden", "ties": "DPO + ties",
          "random_labels": "ties as random wins/losses", "l2_matched": "plain L2 (matched |θ_s|)"}
#: the tie methods' dashes: where two of them coincide (ties and ties as random wins/losses
#: train to the same causal weight and accuracies at most tie fractions) the dashed line lies
#: on the solid one and both show
TIE_DASH = {"ties": "solid", "random_labels": "dashed", "l2_matched": "dotted",
            "ties_rao_kupper": "dashdot", "ties_davidson": "dotdash"}


def _panel_opts(el, title: str):
    """A panel of a grid: a fixed size and the legend below the frame (never over data),
    close under its axis label (Bokeh's default 10 px margin and padding left it floating
    ~40 px below, nearer the next row's title than its own plot)."""
    return el.opts(title=title, legend_position="bottom", legend_cols=1, width=PANEL_WIDTH,
                   height=340, legend_opts={"margin": 0, "padding": 3, "spacing": 0})


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
    return hv.Overlay(layers).opts(title="Leakage channel: θ_s2 vs ρ", legend_position="right",
                                   responsive=True, min_height=280)


def irreducible_plot(rows, theta_s1_pop: float | None = None) -> hv.Layout:
    """F2: theta_s1, ID/OOD accuracy and the estimation error vs n (mean ± SE)."""
    g = rows.groupby("n")
    mean, se = g.mean(numeric_only=True), g.sem(numeric_only=True).fillna(0.0)
    n = mean.index.values.astype(float)

    def band(col, label, color, y="accuracy"):
        y = hv.Dimension(col, label=y)  # one axis name for the overlaid columns
        return (hv.Curve((n, mean[col]), "n pairs", y, label=label).opts(color=color) *
                hv.ErrorBars((n, mean[col], 2 * se[col]), "n pairs", [y, "2 SE"])
                .opts(color=color))

    s1 = band("theta_s1", "θ_s1 (mean ± 2 SE)", COLORS["converged"], "spurious weight θ_s1")
    if theta_s1_pop is not None:
        s1 = s1 * hv.HLine(theta_s1_pop).opts(color="black", line_dash="dashed")
    acc = band("acc_id", "in distribution (m' = m)", COLORS["converged"]) * \
        band("acc_ood", "flipped bias (m' = -m)", COLORS["ties"]) * \
        band("acc_neutral", "neutral (m' = 0)", COLORS["shrunk"])
    err = hv.Curve((n, mean.est_error), "n pairs", "|θ_n - θ_pop|²", label="estimation error")
    ref = hv.Curve((n, mean.est_error.iloc[-1] * n[-1] / n), "n pairs", "|θ_n - θ_pop|²",
                   label="∝ 1/n").opts(color="grey", line_dash="dashed")
    title = "θ_s1 stays (dashed: θ_pop)"  # fits a 330 px panel
    return (_panel_opts(s1.opts(logx=True), title) +
            _panel_opts(acc.opts(logx=True), "Accuracy: the ID-OOD gap stays") +
            _panel_opts((err * ref).opts(logx=True, logy=True), "Reducible part ~ 1/n")).cols(3)


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
        style = {"color": colors[method], "line_dash": TIE_DASH.get(method, "solid")}
        panels["spur"].append(hv.Curve((x, sel.theta_s1.abs() / (base or 1.0)), "tie fraction",
                                       "|θ_s1| / DPO's", **kw).opts(**style))
        panels["causal"].append(hv.Curve((x, sel.causal_dot), "tie fraction", "θ_c·w*", **kw)
                                .opts(**style))
        panels["neutral"].append(hv.Curve((x, sel.acc_neutral), "tie fraction",
                                          "accuracy, neutral pairs", **kw).opts(**style))
        panels["ood"].append(hv.Curve((x, sel.acc_ood), "tie fraction",
                                      "accuracy, flipped bias", **kw).opts(**style))
    return (_panel_opts(hv.Overlay(panels["spur"]), "Spurious weight vs DPO") +
            _panel_opts(hv.Overlay(panels["causal"]), "Causal weight θ_c·w*") +
            _panel_opts(hv.Overlay(panels["neutral"]), "Neutral pairs (m' = 0)") +
            _panel_opts(hv.Overlay(panels["ood"]), "Flipped bias (m' = -m)")).cols(2)


def neural_plot(rows) -> hv.Layout:
    """F4: spurious and causal sensitivity of the MLP rewards, DPO vs DPO + ties."""
    long = []
    for _, r in rows.iterrows():
        who = "DPO" if r.tie_fraction == 0 else f"DPO + ties ({r.tie_fraction:.0%})"
        long += [(who, "spurious s1", r.sens_s1), (who, "spurious s2", r.sens_s2),
                 (who, "causal (w*)", r.sens_causal)]
    df = pd.DataFrame(long, columns=["model", "direction", "sensitivity"])
    df = df.groupby(["direction", "model"]).sensitivity.mean().reset_index()
    bars = hv.Bars(df, ["direction", "model"], "sensitivity")
    return bars.opts(title="MLP reward: E|∂r/∂x| by finite differences", responsive=True,
                     min_height=280, xrotation=0, tools=["hover"])
