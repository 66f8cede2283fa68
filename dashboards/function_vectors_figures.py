"""The function_vectors notebook's figures (training curve, issue 31's diagnosis, F1-F4),
each drawn from the lib's ``figure_*_data`` output; ``dashboards/function_vectors.py``
re-exports them (``from icml26.dashboards import function_vectors as fvd;
fvd.plot_aie(...)``) and draws F1 (``plot_aie``, ``plot_interventions``) on its page."""

from __future__ import annotations

import holoviews as hv
import numpy as np

from icml26.dashboards.app.hvstyle import cell_labels

MODE_LABELS = {"zero-shot": "zero-shot", "neither": "neither", "qk": "QK only", "v": "V only",
               "both": "both"}


def plot_training(history) -> hv.Overlay:
    """Training curve: clean 6-shot and zero-shot accuracy on a fixed evaluation set."""
    step = [h[0] for h in history]
    return hv.Overlay([
        hv.Curve((step, [h[3] for h in history]), "step", "accuracy", label="clean 6-shot"),
        hv.Curve((step, [h[4] for h in history]), "step", "accuracy", label="zero-shot"),
    ]).opts(title="Toy D training (TVP auxiliary loss)", legend_position="right",
            responsive=True, height=260, ylim=(0, 1.05), xlabel="training step",
            ylabel="accuracy (fixed evaluation set)")


SEED_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#ff7f0e", "#17becf")


def plot_diagnosis(rows: list[dict]) -> hv.Layout:
    """Issue 31's diagnosis (``fvlib.read_diagnosis()``): per training schedule, the joint AIE
    of the top-k heads against k (one curve per seed; dashed: the 0.3 bar of
    ``cie_top_effect``, read at k = 3)."""
    panels = []
    for steps in sorted({r["steps"] for r in rows}):
        curves = [hv.HLine(0.3).opts(color="grey", line_dash="dashed", line_width=1),
                  hv.VLine(3).opts(color="grey", line_dash="dotted", line_width=1)]
        for seed in sorted({r["seed"] for r in rows if r["steps"] == steps}):
            pts = sorted((int(r["site"][3:]), r["value"]) for r in rows
                         if r["steps"] == steps and r["seed"] == seed and r["kind"] == "joint_aie")
            color = SEED_COLORS[seed % len(SEED_COLORS)]
            curves.append(hv.Curve(pts, "k", "joint AIE", label=f"seed {seed}").opts(color=color))
            curves.append(hv.Scatter(pts, "k", "joint AIE").opts(color=color, size=4))
        panels.append(hv.Overlay(curves).opts(
            title=f"{steps} training steps: top-k heads patched together",
            xlabel="k (heads patched, by single-head AIE)", ylabel="joint AIE",
            xticks=list(range(1, 13)), ylim=(-0.25, 0.85), legend_position="right",
            width=460, height=300))
    return hv.Layout(panels).cols(2)


def plot_aie(data: dict) -> hv.HeatMap:
    """F1 (left): signed AIE per (layer, head); FV heads marked with a star."""
    aie = np.asarray(data["aie"])
    top = set(map(tuple, data["top"]))
    cells = [(f"head {h}", f"layer {layer}", float(aie[layer, h]))
             for layer in range(aie.shape[0]) for h in range(aie.shape[1])]
    lim = max(float(np.abs(aie).max()), 1e-6)
    labels = cell_labels(cells, ["head", "layer"], (-lim, lim), diverging=True,
                         marks={(f"head {h}", f"layer {layer}"): " *" for layer, h in top})
    return (hv.HeatMap(cells, ["head", "layer"], "AIE").opts(
        cmap="RdBu_r", clim=(-lim, lim), colorbar=True, responsive=True, height=260,
        tools=["hover"], title="Average indirect effect (* = FV heads)",
        xlabel="attention head", ylabel="layer", framewise=True)
        * labels)


def plot_interventions(data: dict) -> hv.Bars:
    """F1 (right): accuracy under each intervention, zero-shot and shuffled 6-shot."""
    rows = [(r["intervention"], r["corruption"], r["accuracy"]) for r in data["rows"]]
    return hv.Bars(rows, ["intervention", "prompt"], "accuracy").opts(
        multi_level=False, xrotation=35, ylim=(0, 1.05), responsive=True, height=340,
        title="Interventions on the FV heads (final token)", tools=["hover"],
        color="prompt", cmap={"zero_shot": "#1f77b4", "shuffled": "#ff7f0e"},
        show_legend=True, legend_position="right", xlabel="intervention",
        ylabel="accuracy on the true task")


def plot_additivity(data: dict) -> hv.Layout:
    """F2: R^2 vs number of shots (shared alpha, other-task control, uniform, per-prompt),
    and the fitted alpha by position."""
    rows = data["rows"]
    n = [r["n"] for r in rows]
    series = {"shared": "shared alpha + intercept", "control": "other-task control",
              "uniform": "uniform alpha = 1/n", "per_prompt": "per-prompt alpha",
              "per_prompt_control": "per-prompt alpha, control"}
    dashes = {"per_prompt": "dashed", "per_prompt_control": "dashed"}
    curves = hv.Overlay([
        hv.Curve((n, [r[k] for r in rows]), "shots n", "held-out R^2", label=v).opts(
            line_dash=dashes.get(k, "solid"))
        * hv.Scatter((n, [r[k] for r in rows]), "shots n", "held-out R^2")
        for k, v in series.items()]).opts(title="Is the FV a sum of sub-FVs?",
                                          legend_position="right", width=560, height=300,
                                          ylim=(-0.1, 1.05))
    alphas = hv.Overlay([hv.Curve((np.arange(1, len(r["alpha"]) + 1), r["alpha"]),
                                  "demonstration position", "alpha", label=f"n = {r['n']}")
                         for r in rows]).opts(title="Shared alpha by position",
                                              legend_position="right", width=420, height=300,
                                              framewise=True)
    return (curves + alphas).cols(2)


def plot_reweighting(data: dict) -> hv.Bars:
    """F3: attention mass per demonstration slot in the FV heads, informative vs Z demos, in
    context / isolated (1-shot) / isolated keys."""
    rows = [(r["condition"], f"{r['kind']}", r["mass"]) for r in data["rows"]]
    agg: dict = {}
    for cond, kind, mass in rows:
        agg.setdefault((cond, kind), []).append(mass)
    bars = [(cond, kind, float(np.mean(v))) for (cond, kind), v in agg.items()]
    title = (f"Informative / Z ratio: in context {data['ratio_ctx']:.2f}, isolated "
             f"{data['ratio_iso']:.2f} (p = {data['p']:.1e})")
    return hv.Bars(bars, ["condition", "demonstration"], "attention mass (mean over slots)"
                   ).opts(multi_level=False, responsive=True, height=300, title=title,
                          color="demonstration", show_legend=True, legend_position="right",
                          cmap={"informative": "#1f77b4", "Z demo": "#ff7f0e"},
                          xlabel="condition")


def plot_qkv(data: dict) -> hv.Bars:
    """F4: FV quality (zero-shot accuracy with the hybrid injected) in both panels."""
    rows = [(r["panel"], MODE_LABELS[r["mode"]], r["accuracy"]) for r in data["rows"]]
    return hv.Bars(rows, ["panel", "hybrid"], "zero-shot accuracy").opts(
        multi_level=False, responsive=True, height=300, ylim=(0, 1.05),
        title="QK vs V hybrids (FV quality)", color="hybrid", show_legend=True,
        legend_position="right", cmap="Category10", xlabel="prompt panel",
        ylabel="zero-shot accuracy with the hybrid")
