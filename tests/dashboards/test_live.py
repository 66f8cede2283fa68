"""Live figures (dashboards/app/live.py): one function per figure, drawn once, then updated in
place; what the page shows always equals a fresh drawing of the current chart."""

from __future__ import annotations

import random

import numpy as np
import param
import pytest
from bokeh.document import Document
from bokeh.models import Span
from test_explorers import fuzzable, random_value

from icml26 import papers
from icml26.dashboards.app import live
from icml26.dashboards.app.live import Chart, Series

pn = pytest.importorskip("panel")

BUILT = [p.slug for p in papers.built()]


def shown(fig) -> dict:
    """What a drawn figure shows: title, each line's (x, y) and label, each mark."""
    legend = fig.above[0].items if fig.above else []
    return {"title": fig.title.text,
            "lines": [(np.asarray(r.data_source.data["x"], float),
                       np.asarray(r.data_source.data["y"], float)) for r in fig.renderers],
            # a label is a Value (a bare string would name a data column: "Invalid field")
            "labels": [i.label.value for i in legend],
            "marks": [m.location for m in fig.center if isinstance(m, Span)]}


def assert_same(a: dict, b: dict) -> None:
    assert a["title"] == b["title"] and a["labels"] == b["labels"] and a["marks"] == b["marks"]
    assert len(a["lines"]) == len(b["lines"])
    for (x1, y1), (x2, y2) in zip(a["lines"], b["lines"]):
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(y1, y2)


def test_default_axis_names_are_rejected():
    with pytest.raises(ValueError, match="x_label"):
        live.Chart("t", "x", "loss")
    with pytest.raises(ValueError, match="y_label"):
        live.Chart("t", "step", "y")


def test_update_writes_new_numbers_and_refuses_another_structure():
    one = live.Chart("a", "step", "loss", [live.Series("red", [0, 1], [1, 2], "train"),
                                           live.Series("grey", kind="vline", at=0.5)])
    fig = live.figure(one)
    two = live.Chart("b", "step", "loss", [live.Series("red", [0, 1, 2], [3, 2, 1], "test"),
                                           live.Series("grey", kind="vline", at=1.5)])
    live.update(fig, two)
    assert_same(shown(fig), shown(live.figure(two)))
    with pytest.raises(ValueError, match="draw it anew"):
        live.update(fig, live.Chart("c", "step", "loss", [live.Series("red", [0], [1])]))


def test_live_axes_hold_the_data_and_are_kept_while_it_fills_half():
    def chart(y):
        return live.Chart("a", "step", "loss", [live.Series("red", [0, 1, 2], y, "train")])
    fig = live.figure(chart([1.0, 2.0, 3.0]), live=True)
    assert fig.y_range.start < 1.0 and fig.y_range.end > 3.0  # padded extent
    kept = (fig.y_range.start, fig.y_range.end)
    live.update(fig, chart([1.5, 2.0, 2.9]))  # inside, fills more than half: axes kept
    assert (fig.y_range.start, fig.y_range.end) == kept
    live.update(fig, chart([1.0, 2.0, 5.0]))  # leaves the axes: refitted
    assert fig.y_range.start < 1.0 and fig.y_range.end > 5.0
    live.update(fig, chart([2.0, 2.1, 2.2]))  # inside but a sliver of it: zoomed in
    assert fig.y_range.end - fig.y_range.start < 0.5
    log = live.Chart("a", "step", "loss", [live.Series("red", [1, 10, 100], [0, 1e-3, 1])],
                     x_log=True, y_log=True)
    fig = live.figure(log, live=True)  # the non-positive point is not on a log axis
    assert 0 < fig.y_range.start < 1e-3 and fig.y_range.end > 1


def test_live_figures_have_no_toolbar_and_an_html_legend():
    chart = live.Chart("a", "step", "loss", [
        live.Series("red", [0, 1], [1, 2], "train <1>"),
        live.Series("blue", [0, 1], [2, 1], "test", kind="scatter"),
        live.Series("grey", [0, 1], [1, 1]), live.Series("black", kind="vline", at=0.5)])
    fig = live.figure(chart, live=True)
    assert fig.toolbar_location is None and not fig.above
    legend = live.legend_html(chart)
    assert legend.count("<span style=\"margin-right") == 2 and "train &lt;1&gt;" in legend
    assert "red" in legend and "blue" in legend and "grey" not in legend
    static = live.figure(chart)
    assert static.toolbar_location == "right" and len(static.above[0].items) == 2


def test_chart_ranges_ignore_marks_and_non_finite_points():
    chart = live.Chart("a", "step", "loss", [
        live.Series("red", [0, 1, 2], [1, np.nan, 5]), live.Series("k", kind="hline", at=99)])
    assert live.chart_ranges(chart) == ((0.0, 2.0), (1.0, 5.0))


@pytest.mark.parametrize("slug", BUILT)
def test_rendered_live_figures_equal_a_fresh_drawing_after_random_steps(slug):
    """After each of 40 random steps (valid or not), every rendered live figure shows what a
    fresh drawing of its chart shows (or, while the settings are invalid, the last valid)."""
    explorer = papers.get(slug).dashboard().Explorer()
    if not explorer.live_charts():
        pytest.skip(f"{slug} has no live figures")
    pn.Column(explorer).server_doc(Document())
    (group,) = explorer._rendered_live
    params, rng = fuzzable(explorer), random.Random(7)
    last_valid = None
    for _ in range(40):
        name = rng.choice(sorted(params))
        setattr(explorer, name, random_value(params[name], rng))
        charts = [chart() for chart in explorer.live_charts()]
        if all(c is not None for c in charts):
            last_valid = [(shown(live.figure(c, live=True)), live.legend_html(c))
                          for c in charts]
        for (figure, _), (expected, legend) in zip(group.figures, last_valid or [],
                                                   strict=False):
            assert_same(shown(figure.pane.object), expected)
            assert figure.legend.object == legend


def test_a_step_drawn_late_never_overwrites_a_later_step():
    """Served, a step's charts are computed on a worker thread and drawn on the event loop:
    two quick steps may arrive out of order. Each figure keeps the newest step's chart."""

    class Two(pn.viewable.Viewer):
        a = param.Number(1.0)
        b = param.Number(1.0)

        @param.depends("a")
        def chart_a(self):
            return live.Chart("a", "step", "loss", [live.Series("red", [0, 1], [0, self.a])])

        @param.depends("b")
        def chart_b(self):
            return live.Chart("b", "step", "loss", [live.Series("red", [0, 1], [0, self.b])])

    owner = Two()
    group = live.LiveFigures(owner)
    group.add(owner.chart_a)
    group.add(owner.chart_b)
    fig_a, fig_b = (f for f, _ in group.figures)
    owner.param.update(a=2.0, b=2.0)  # step 1 (drawn at once: no server here)
    old_a, old_b = owner.chart_a(), owner.chart_b()
    owner.a, owner.b = 3.0, 5.0  # steps 2 and 3
    group._draw(1, [(fig_a, old_a), (fig_b, old_b)])  # step 1 again, arriving late
    assert shown(fig_a.pane.object)["lines"][0][1][1] == 3.0  # step 2's chart stays
    assert shown(fig_b.pane.object)["lines"][0][1][1] == 5.0


# --------------------------------------------------------------------------- the tick standard
def test_integer_quantities_get_whole_number_ticks_only():
    """Layers 1..4 on x: ticks at whole numbers (no 1.5); a ratio axis keeps Bokeh's default."""
    from bokeh.models import AdaptiveTicker

    layers = Chart("t", "layer", "eRank", [Series("red", [1, 2, 3, 4], [12.1, 15.3, 18.2, 21.0])])
    fig = live.figure(layers)
    assert isinstance(fig.xaxis[0].ticker, AdaptiveTicker)
    assert fig.xaxis[0].ticker.min_interval == 1.0
    assert live.ticker(layers, 1) is None  # eRank values are fractional
    ratio = Chart("t", "ratio", "v", [Series("red", [0.25, 0.5, 0.75], [0.1, 0.2, 0.3])])
    assert live.ticker(ratio, 0) is None
    assert not live.integer_valued(Chart("t", "a", "b", [Series("red", [3, 3], [0, 1])]), 0)


def test_log_axes_spanning_few_decades_get_at_least_three_labels():
    """Decade ticks alone label 5-20 or 1-1.5 at one or two values, and Bokeh's own fallback
    piles linear ticks up at the top of a one-decade log axis: the rule gives the 1-2-5 values
    inside the range (integer mantissas where those are under three), round linear values on
    a span under ~1.5x, and Bokeh's decades from three decades on."""
    from bokeh.models import AdaptiveTicker, FixedTicker

    def chart(lo, hi):
        return Chart("t", "step", "loss", [Series("red", [0, 1], [lo, hi])], y_log=True)

    assert isinstance(live.ticker(chart(1.0, 1.5), 1), AdaptiveTicker)
    assert live.ticker(chart(5.0, 20.0), 1).ticks == [5.0, 10.0, 20.0]
    assert live.ticker(chart(0.08, 0.8), 1).ticks == pytest.approx([0.1, 0.2, 0.5])
    assert live.ticker(chart(2.0, 9.0), 1).ticks == pytest.approx([2, 3, 4, 5, 6, 7, 8, 9])
    wide = live.ticker(chart(1.0, 300.0), 1)
    assert isinstance(wide, FixedTicker) and wide.ticks[:3] == [1.0, 2.0, 5.0]
    assert live.ticker(chart(1e-3, 10.0), 1) is None


def test_a_refitted_log_axis_gets_ticks_for_its_new_range():
    fig = live.figure(Chart("t", "step", "loss", [Series("red", [0, 1], [5.0, 20.0])],
                            y_log=True))
    live.update(fig, Chart("t", "step", "loss", [Series("red", [0, 1], [50.0, 200.0])],
                           y_log=True))
    assert fig.yaxis[0].ticker.ticks == [50.0, 100.0, 200.0]


def test_frames_are_never_lower_than_the_minimum():
    low = Chart("t", "step", "loss", [Series("red", [0, 1], [0.5, 1.5])], height=110)
    assert live.figure(low).height == live.MIN_HEIGHT


def test_geometry_charts_have_equal_aspect_kept_across_updates():
    """A unit circle in a wide cloud of points: one data unit is as long in x as in y on the
    frame (fixed size), and stays so when the data moves and the axes refit."""
    theta = np.linspace(0, 2 * np.pi, 50)

    def chart(scale):
        return Chart("t", "coordinate x1", "coordinate x2", [
            Series("grey", np.cos(theta), np.sin(theta)),
            Series("red", [-3 * scale, 3 * scale], [0.2, -0.2], kind="scatter")], geometry=True)

    def units_per_px(fig):  # the frame: the fixed size less the fixed borders
        width = fig.width - fig.min_border_left - fig.min_border_right
        height = fig.height - fig.min_border_top - fig.min_border_bottom
        return ((fig.x_range.end - fig.x_range.start) / width,
                (fig.y_range.end - fig.y_range.start) / height)

    fig = live.figure(chart(1.0))
    assert fig.sizing_mode == "fixed" and fig.width > fig.height
    assert units_per_px(fig)[0] == pytest.approx(units_per_px(fig)[1])
    assert live.axes_hold_data(fig, chart(1.0))
    live.update(fig, chart(3.0))
    assert live.axes_hold_data(fig, chart(3.0))
    assert units_per_px(fig)[0] == pytest.approx(units_per_px(fig)[1])
    plain = live.figure(Chart("t", "a", "b", [Series("red", [0, 10], [0, 1])]))
    assert plain.sizing_mode == "stretch_width"
    with pytest.raises(ValueError):
        Chart("t", "a", "b", [Series("red", [1, 2], [1, 2])], x_log=True, geometry=True)


def test_categorical_axes_are_labelled_by_name():
    """Operators 0..3 on x: one tick per operator, labelled with its name (tilted when long),
    the axis spanning half a category beyond the first and the last."""
    from bokeh.models import FixedTicker

    names = ["softmax", "layernorm", "matmul", "cross_entropy"]
    c = Chart("t", "operator", "max |err|", [Series("red", [0, 1, 3], [1e-3, 1e-2, 1.0],
                                                    kind="scatter")], x_names=names)
    fig = live.figure(c)
    assert isinstance(fig.xaxis[0].ticker, FixedTicker)
    assert list(fig.xaxis[0].ticker.ticks) == [0, 1, 2, 3]
    assert fig.xaxis[0].major_label_overrides == dict(enumerate(names))
    assert (fig.x_range.start, fig.x_range.end) == (-0.5, 3.5)
    assert fig.xaxis[0].major_label_orientation == pytest.approx(np.pi / 4)
    short = Chart("t", "language", "accuracy", [Series("red", [1, 2], [0.5, 0.9])],
                  x_names={1: "de", 2: "fr"})
    assert live.figure(short).xaxis[0].major_label_orientation == "horizontal"
    assert short.structure() != Chart("t", "language", "accuracy", short.series).structure()


def test_holoviews_figures_are_padded_beyond_their_data():
    """Points and error bars never sit on the frame: the page module sets 5% padding as the
    HoloViews default, and a later hv.extension keeps it; a figure's own padding wins."""
    import holoviews as hv

    import icml26.dashboards.app.page  # noqa: F401  (applies the defaults)

    hv.extension("bokeh")
    fig = hv.render(hv.Scatter([(0, 0), (1, 1)]) * hv.ErrorBars([(0, 0, 0.5), (1, 1, 0.5)]))
    assert fig.x_range.start < 0 and fig.x_range.end > 1
    own = hv.render(hv.Curve([(0, 0), (1, 1)]).opts(padding=0))
    assert (own.x_range.start, own.x_range.end) == (0, 1)


def test_heatmap_labels_contrast_with_their_cells():
    """White text on the dark ends of a diverging map (and the top of a sequential one), black
    on the light middle; no '-0.00'; marks appended."""
    from icml26.dashboards.app import cell_labels

    cells = [("a", "r", 0.0), ("b", "r", 0.5), ("c", "r", 1.0), ("d", "r", -1e-4)]
    div = cell_labels(cells, ["x", "y"], (0, 1), diverging=True, marks={("a", "r"): " *"})
    assert list(div.dimension_values("ink")) == ["white", "black", "white", "white"]
    assert list(div.dimension_values("text")) == ["0.00 *", "0.50", "1.00", "0.00"]
    seq = cell_labels(cells, ["x", "y"], (0, 1), diverging=False)
    assert list(seq.dimension_values("ink")) == ["black", "black", "white", "black"]


def test_a_long_title_is_wrapped_and_its_line_adds_height():
    """Issue 49: "Exact value in the surrogate model (" was clipped in JupyterLab."""
    long = "Exact value in the surrogate model (T = 10, m0 = 5)"
    assert live.wrap_title(long) == "Exact value in the surrogate model\n(T = 10, m0 = 5)"
    assert all(len(line) <= live.TITLE_CHARS for line in live.wrap_title(long * 3).split("\n"))
    assert live.wrap_title("AUROC per detector") == "AUROC per detector"

    def chart(title):
        return Chart(title, "budget B", "recruits", [Series("#1f77b4", np.arange(3.0),
                                                           np.arange(3.0))])

    one, two = live.figure(chart("short")), live.figure(chart(long))
    assert two.title.text.count("\n") == 1
    assert two.height == one.height + live.TITLE_LINE_PX
    live.update(one, chart(long))  # a live figure's title follows the chart, wrapped too
    assert one.title.text == two.title.text


def test_holoviews_log_axes_get_the_tick_rule_unless_the_figure_sets_its_own():
    """gsrq's F3 asked for ticks at its bits per element and got 0.06 0.07 0.08 0.09 0.1."""
    import holoviews as hv
    from bokeh.models import LogAxis

    from icml26.dashboards.app import hvstyle

    hvstyle.apply()  # as importing any app does
    curve = hv.Curve([(0.0625, 1.0), (0.125, 2.0), (0.25, 3.0)], "bits", "perplexity")

    def x_ticks(element):
        axis = next(a for a in hv.render(element).xaxis if isinstance(a, LogAxis))
        return axis.ticker

    ruled = x_ticks(hv.Overlay([curve]).opts(logx=True))
    assert hvstyle.OURS in ruled.tags
    own = x_ticks(hv.Overlay([curve]).opts(logx=True, xticks=[(0.0625, "1/16"), (0.25, "1/4")]))
    assert list(own.ticks) == [0.0625, 0.25] and hvstyle.OURS not in own.tags


def test_a_linear_axis_writes_large_counts_plainly():
    """panda's sampled transitions were labelled 0.000e+0, 5.000e+4, 1.000e+5."""
    fig = live.figure(Chart("equal budget", "sampled transitions", "gap",
                            [Series("#1f77b4", np.array([0.0, 8e4, 1.6e5]), np.ones(3))]))
    assert fig.xaxis[0].formatter.power_limit_high >= 7
