"""The promotion phase diagram (F1: the live :func:`phase_chart` of the page and the
notebook's HoloViews :func:`plot_phase`) and the notebook's other HoloViews figures (F3
height, F4 sensitivity, F5 greedy principal), each drawn from the lib's ``figure_*_data``
output; ``dashboards/promotion.py`` re-exports them (``from icml26.dashboards import
promotion as dash; dash.plot_phase(...)``)."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from icml26.dashboards.app import Chart, Series

ACTION_COLORS = {"honest": "#2ca02c", "gaming": "#d62728", "none": "#7f7f7f"}
ACTION_LABELS = {"honest": "honest", "gaming": "gaming", "none": "no effort"}
PHASE_X, PHASE_Y = "gaming cost ratio c-/c+", "effective discount beta*gamma"


def phase_lines() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The analytic boundary c-/c+ = 1 - beta*gamma and the myopic line c-/c+ = 1."""
    bg = np.linspace(0.0, 0.97, 50)
    return {"analytic c-/c+ = 1 - beta*gamma": (1 - bg, bg),
            "myopic line c-/c+ = 1": (np.array([1.0, 1.0]), np.array([0.0, 0.97]))}


def phase_chart(cells: pd.DataFrame | None = None,
                point: tuple[float, float] | None = None) -> Chart:
    """F1 (live): the analytic and myopic lines, the optimal first action per cell of the
    numerical grid (when given) and the current setting (when given)."""
    series = []
    if cells is not None:
        for action, color in ACTION_COLORS.items():
            sub = cells[cells["action"] == action]
            series.append(Series(color, sub["ratio"].to_numpy(), sub["beta_gamma"].to_numpy(),
                                 ACTION_LABELS[action], kind="scatter"))
    (a_x, a_y), (m_x, m_y) = phase_lines().values()
    series += [Series("black", a_x, a_y, "analytic line"),
               Series("grey", m_x, m_y, "myopic line", dash="dashed")]
    if point is not None:
        predicted = "honest" if point[0] > 1 - point[1] else "gaming"
        # a fixed legend label (a relabelled legend item showed "Invalid field" in Bokeh)
        series.append(Series("#000000", [point[0]], [point[1]], "current setting",
                             kind="scatter"))
    title = "Incentive phase diagram" + (f" (current: {predicted})" if point else "")
    return Chart(title, PHASE_X, PHASE_Y, series)


def plot_phase_points(cells: pd.DataFrame) -> hv.Overlay:
    """The optimal first action per cell, coloured honest / gaming / none."""
    layers = []
    for action, color in ACTION_COLORS.items():
        sub = cells[cells["action"] == action]
        layers.append(hv.Points((sub["ratio"].to_numpy(), sub["beta_gamma"].to_numpy()),
                                [PHASE_X, PHASE_Y], label=action)
                      .opts(color=color, size=7, alpha=0.8))
    return hv.Overlay(layers)


def plot_phase(data: dict) -> hv.Overlay:
    """F1: first action of the optimal agent with the analytic and myopic lines; cells that
    disagree with the line are circled."""
    cells = data["cells"]
    wrong = cells[~cells["agree"]]
    miss = hv.Points((wrong["ratio"].to_numpy(), wrong["beta_gamma"].to_numpy()),
                     [PHASE_X, PHASE_Y], label="disagrees with the line").opts(
        fill_alpha=0.0, line_color="black", size=12)
    lines = [hv.Curve(xy, PHASE_X, PHASE_Y, label=name).opts(
        color="black" if name.startswith("analytic") else "grey",
        line_dash="solid" if name.startswith("analytic") else "dashed")
        for name, xy in phase_lines().items()]
    return hv.Overlay([plot_phase_points(cells), *lines, miss]).opts(
        title=f"F1: optimal first action (agreement away from the line "
              f"{data['agreement']:.1%})", legend_position="right", xlim=(0, 1.05),
        width=760, height=420)



def plot_height(frame: pd.DataFrame) -> hv.Layout:
    """F3: final skill vs the target M (with the diagonal) and final level vs L."""
    m = frame["target"].to_numpy()
    skill = (hv.Curve((m, m), "target skill M", "final skill", label="M").opts(
        color="grey", line_dash="dashed")
        * hv.Scatter((m, frame["final_skill"].to_numpy()), "target skill M", "final skill",
                     label="final skill").opts(size=9, color="#1f77b4"))
    level = (hv.Curve((m, frame["levels"].to_numpy()), "target skill M", "level",
                      label="L = ceil((1-gamma)M/delta) + 1").opts(color="grey",
                                                                   line_dash="dashed")
             * hv.Scatter((m, frame["final_level"].to_numpy()), "target skill M", "level",
                          label="final level").opts(size=9, color="#d62728"))
    return hv.Layout([skill.opts(title="Final skill", legend_position="top_left",
                                 width=420, height=280, padding=0.1),
                      level.opts(title="Final level", legend_position="top_left",
                                 width=420, height=280, padding=0.1)]).cols(2).opts(
        shared_axes=False)


def plot_sensitivity(data: dict) -> hv.Layout:
    """F4: highest level reached before any gaming (the claim) and, for comparison, the final
    level held on true skill (blind to gaming during the climb) vs gamma and delta."""
    panels = []
    for key, label, corner in (("gamma", "retention gamma", "top_left"),
                               ("delta", "leg-up delta", "bottom_left")):
        df = data[key]
        x = df[key].to_numpy()
        panels.append((
            hv.Curve((x, df["level_before_gaming"].to_numpy()), label, "level",
                     label="highest level before any gaming").opts(color="#2ca02c",
                                                                   interpolation="linear")
            * hv.Scatter((x, df["level_before_gaming"].to_numpy())).opts(color="#2ca02c",
                                                                         size=6)
            * hv.Curve((x, df["held_level"].to_numpy()), label, "level",
                       label="final level held on true skill").opts(color="#d62728",
                                                                    line_dash="dashed")
        ).opts(title=f"Sensitivity to {label}", legend_position=corner,
               width=460, height=300, padding=0.1))
    return hv.Layout(panels).cols(2).opts(shared_axes=False)


def plot_greedy(frame: pd.DataFrame) -> hv.Overlay:
    """F5: a greedy principal's thresholds vs the steady-state ladder."""
    ell = frame["threshold"].to_numpy()
    return (hv.Curve((ell, frame["steady_state"].to_numpy()), "threshold index l", "mu_l",
                     label="steady state").opts(color="#1f77b4")
            * hv.Curve((ell, frame["greedy"].to_numpy()), "threshold index l", "mu_l",
                       label="greedy principal").opts(color="#d62728")
            * hv.Scatter((ell, frame["greedy"].to_numpy())).opts(color="#d62728", size=7)
            ).opts(title="F5: greedy thresholds", legend_position="top_left",
                   width=520, height=300)

