"""The tpv notebook's figures (F1-F3), each drawn from the lib's ``figure_*_data`` output;
``dashboards/tpv.py`` re-exports them (``from icml26.dashboards import tpv as dash;
dash.plot_scatter(...)``) and shares the perturbations' names and the TPV unit."""

from __future__ import annotations

import holoviews as hv

LABELS = {"quant": "quantization", "sgd": "SGD noise", "label": "label noise",
          "prune": "pruning (JBR)"}
TPV_UNIT = "E‖Δf‖²"  # TPV is a mean squared output change (targets have unit sd)


def plot_scatter(df, perturbations=("quant", "sgd", "label")) -> hv.Layout:
    """F1: TPV on training vs test inputs, one panel per perturbation, coloured by the
    student's generalization gap, marker by n_train, with the y = x line (log-log)."""
    panels = []
    for p in perturbations:
        sub = df[df.perturbation == p]
        lo, hi = float(sub[["tpv_train", "tpv_test"]].min().min()) / 2, \
            float(sub[["tpv_train", "tpv_test"]].max().max()) * 2
        line = hv.Curve([(lo, lo), (hi, hi)], "tpv_train", "tpv_test", label="y = x").opts(
            color="grey", line_dash="dashed")
        layers = [line]
        for n, marker in zip(sorted(sub.n_train.unique()), ["triangle", "circle", "square"]):
            s = sub[sub.n_train == n]
            layers.append(hv.Scatter(s, "tpv_train", ["tpv_test", "gap", "width", "depth",
                                                      "teacher"], label=f"n_train={n}").opts(
                color="gap", cmap="viridis", colorbar=True, marker=marker, size=9,
                tools=["hover"], clabel="test - train MSE"))
        panels.append(hv.Overlay(layers).opts(
            logx=True, logy=True, title=LABELS[p], legend_position="top",
            xlabel=f"TPV on training inputs ({TPV_UNIT})",
            ylabel=f"TPV on test inputs ({TPV_UNIT})", responsive=True, min_height=340))
    return hv.Layout(panels).cols(len(panels))


def plot_quant_bits(df) -> hv.Overlay:
    """F2: trace form (lines) vs Monte Carlo (points) per width, against bits (log y)."""
    layers = []
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    # a dash per width: where the widths' trace lines coincide, each still shows
    dashes = ["solid", "dashed", "dotted", "dotdash", "dashdot"]
    for (w, sub), color, dash in zip(df.groupby("width"), palette, dashes):
        layers += [hv.Curve((sub.bits, sub.trace), "bits b", f"quantization TPV ({TPV_UNIT})",
                            label=f"width {w}: trace").opts(color=color, line_dash=dash),
                   hv.Scatter((sub.bits, sub.mc), "bits b", f"quantization TPV ({TPV_UNIT})",
                              label=f"width {w}: MC").opts(color=color, size=8,
                                                           marker="circle")]
    return hv.Overlay(layers).opts(logy=True, title="Quantization TPV: trace vs Monte Carlo",
                                   legend_position="right", responsive=True,
                                   min_height=340)


PRUNING_Y = {"test_loss": "test loss (cross-entropy, nats)",
             "test_acc": "test accuracy (share correct)",
             "test_loss_ft": "test loss after fine-tune (cross-entropy, nats)",
             "test_acc_ft": "test accuracy after fine-tune (share correct)"}


def plot_pruning(df, y: str = "test_loss", title: str | None = None) -> hv.Overlay:
    """F3: test loss (or accuracy; ``*_ft`` after the fine-tune every criterion gets)
    against neuron sparsity for each criterion."""
    colors = {"jbr": "#d62728", "magnitude": "#1f77b4", "random": "#7f7f7f",
              "jbr (Fisher metric, v1)": "#ff9896"}
    names = {"jbr": "JBR (logit TPV of removal)", "magnitude": "magnitude", "random": "random"}
    return hv.Overlay([
        hv.Curve((sub.sparsity, sub[y]), "neuron sparsity (share of hidden neurons removed)",
                 PRUNING_Y.get(y, y.replace("_", " ")),
                 label=names.get(c, c)).opts(color=colors.get(c, "black"))
        for c, sub in df.groupby("criterion")]).opts(
        title=title or ("Pruning on digits, then the same fine-tune for every criterion"
                        if y.endswith("_ft") else "Pruning on digits (no fine-tuning)"),
        legend_position="top",
        responsive=True, min_height=340)
