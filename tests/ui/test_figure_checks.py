"""The reader's-eye checks (``figure_checks.py``) fail the figures they are meant to catch.

Each mutation is a figure broken in one way (served in a tiny app); the check must name it. A
figure drawn by the suite's live-figure code (``icml26.dashboards.app.live``) with the same
data passes: the figure standard fixes what the mutation breaks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from browser import figure_problems, open_app, plots, serve_in_thread
from figure_checks import layout_problems

pytestmark = pytest.mark.ui


def _page(fig):
    import panel as pn

    def app():
        pn.extension()
        return pn.Column(pn.widgets.FloatSlider(start=0, end=1), pn.pane.Bokeh(fig))

    return app


def _mutant(kind: str):
    """A figure broken in one way (or, ``fine``, not at all)."""
    from bokeh.models import FixedTicker, Legend, LegendItem, Range1d
    from bokeh.plotting import figure

    x = np.linspace(0, 1, 50)
    if kind == "overlapping ticks":  # 21 labelled y ticks in a 100 px frame
        fig = figure(height=160, width=500, x_axis_label="step", y_axis_label="loss")
        fig.line(x, x, line_color="black", line_width=2)
        fig.yaxis.ticker = FixedTicker(ticks=list(np.round(np.linspace(0, 1, 21), 2)))
    elif kind == "overlapping tilted names":  # 60 named categories tilted in a 400 px frame
        fig = figure(height=300, width=480, x_axis_label="language", y_axis_label="accuracy")
        fig.scatter(np.arange(60), np.linspace(0.2, 0.8, 60), size=5, color="black")
        fig.x_range = Range1d(-1, 60)
        fig.xaxis.ticker = FixedTicker(ticks=list(range(60)))
        fig.xaxis.major_label_overrides = {i: f"lang_{i}" for i in range(60)}
        fig.xaxis.major_label_orientation = math.pi / 4
    elif kind == "log axis labelled once":  # 5..20 on a log axis with one tick
        fig = figure(height=300, width=500, y_axis_type="log", x_axis_label="step",
                     y_axis_label="tokens")
        fig.line(x, 5 + 15 * x, line_color="black", line_width=2)
        fig.yaxis.ticker = FixedTicker(ticks=[10])
    elif kind == "page too wide":  # a fixed figure wider than the 1400 px window
        fig = figure(height=300, width=1800, x_axis_label="step", y_axis_label="loss")
        fig.line(x, x, line_color="black", line_width=2)
    elif kind == "legend over data":  # the legend in the middle, the line through it
        fig = figure(height=300, width=500, x_axis_label="step", y_axis_label="loss")
        r = fig.line(x, x, line_color="black", line_width=2)
        fig.add_layout(Legend(items=[LegendItem(label="the loss curve", renderers=[r])],
                              location="center"))
    elif kind == "point on the edge":  # axes exactly at the data's extent
        fig = figure(height=300, width=500, x_axis_label="step", y_axis_label="loss",
                     x_range=Range1d(0, 1), y_range=Range1d(0, 1))
        fig.scatter([0.0, 0.5, 1.0], [0.2, 0.5, 1.0], size=8, color="black")
    elif kind == "coinciding lines":  # two methods with the same curve, both solid
        fig = figure(height=300, width=500, x_axis_label="step", y_axis_label="loss")
        a = fig.line(x, x ** 2, line_color="blue", line_width=2)
        b = fig.line(x, x ** 2, line_color="red", line_width=2)
        fig.add_layout(Legend(items=[LegendItem(label="DPO", renderers=[a]),
                                     LegendItem(label="DPO + ties", renderers=[b])]), "right")
    else:  # ... and coinciding lines drawn so both show: the later one dashed on top
        fig = figure(height=300, width=500, x_axis_label="step", y_axis_label="loss")
        r = fig.line(x, x, line_color="black", line_width=2)
        fig.line(x, x, line_color="red", line_width=2, line_dash="dashed")
        fig.scatter([0.0, 0.5, 1.0], [0.2, 0.5, 1.0], size=8, color="black")
        fig.add_layout(Legend(items=[LegendItem(label="loss", renderers=[r])]), "right")
    return _page(fig)


def _standard(kind: str):
    """The mutation's data drawn by the suite's live figures (the figure standard)."""
    from icml26.dashboards.app.live import Chart, Series, figure

    x = np.linspace(0, 1, 50)
    if kind == "overlapping ticks":
        chart = Chart("t", "step", "loss", [Series("black", x, x)], height=110)
    elif kind == "log axis labelled once":
        chart = Chart("t", "step", "tokens", [Series("black", x, 5 + 15 * x)], y_log=True)
    elif kind == "point on the edge":
        chart = Chart("t", "step", "loss", [Series("black", x, x), Series(
            "red", [0, 0.5, 1], [0.2, 0.5, 1], kind="scatter")])
    elif kind == "tilted names":  # 22 language codes (unilid's)
        codes = [f"l{i}_{'x' * (i % 4)}" for i in range(22)]
        chart = Chart("t", "language", "accuracy", [
            Series("black", np.arange(22), np.linspace(0.5, 0.9, 22), kind="scatter"),
            Series("black", np.arange(22), np.linspace(0.5, 0.9, 22))], x_names=codes)
    else:
        theta = np.linspace(0, 2 * math.pi, 100)
        chart = Chart("t", "operator", "position", [
            Series("black", np.cos(theta), np.sin(theta), "unit circle"),
            Series("red", [0, 1], [0, 1], kind="scatter")], geometry=True)
    return _page(figure(chart))


MUTATIONS = [("overlapping ticks", "tick labels overlap"),
             ("overlapping tilted names", "x tick labels overlap"),
             ("log axis labelled once", "labelled at 1 value"),
             ("page too wide", "px wide in a 1400 px window"),
             ("legend over data", "covers Line data"),
             ("point on the edge", "on the frame's edge"),
             ("coinciding lines", "is drawn exactly under line")]
STANDARD = ["overlapping ticks", "log axis labelled once", "point on the edge", "tilted names",
            "geometry"]


@pytest.fixture(scope="module")
def mutants():
    apps = {f"/m{i}": _mutant(kind) for i, (kind, _) in enumerate(MUTATIONS)}
    apps["/fine"] = _mutant("fine")
    apps.update({f"/s{i}": _standard(kind) for i, kind in enumerate(STANDARD)})
    server, port = serve_in_thread(apps)
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.mark.parametrize("i, kind, message", [(i, k, m) for i, (k, m) in enumerate(MUTATIONS)])
def test_each_check_fails_its_mutation(page, mutants, i, kind, message):
    open_app(page, f"{mutants}/m{i}")
    problems = layout_problems(page, kind)
    assert any(message in p for p in problems), problems
    others = [p for p in problems if message not in p]
    assert not others, f"the {kind!r} mutation also failed other checks: {others}"


def test_a_fine_figure_and_the_standards_figures_pass(page, mutants):
    """...and the geometry figure, as painted, has one unit as long on x as on y."""
    for route in ["fine", *(f"s{i}" for i in range(len(STANDARD)))]:
        open_app(page, f"{mutants}/{route}")
        assert figure_problems(page, route) == []
    (geometry,) = plots(page)
    _, _, w, h = geometry["frame"]
    (x0, x1), (y0, y1) = geometry["x_range"], geometry["y_range"]
    assert (x1 - x0) / w == pytest.approx((y1 - y0) / h, rel=0.01), geometry
