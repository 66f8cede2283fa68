"""LiveFigure: a rendered HoloViews overlay follows its parameters by pushing new columns.

The contract that matters: what the browser shows after any sequence of steps equals what a
fresh render of the view at the final settings would show.
"""

from __future__ import annotations

import random

import numpy as np
import param
import pytest
from bokeh.document import Document
from test_explorers import fuzzable, random_value

from icml26 import papers

pn = pytest.importorskip("panel")
hv = pytest.importorskip("holoviews")
live = pytest.importorskip("icml26.dashboards.live")

X = np.linspace(0.0, 1.0, 21)


class Toy(param.Parameterized):
    a = param.Number(1.0, bounds=(0.1, 20.0))

    @param.depends("a")
    def view(self) -> hv.Overlay:
        return hv.Overlay([
            hv.Curve((X, self.a * X), "x", "y", label=f"a = {self.a:g}").opts(color="red"),
            hv.Curve((X, X**2), "x", "y", label="fixed").opts(color="grey", line_dash="dashed"),
            hv.VLine(self.a)])

    def layers(self):
        return [live.Line(X, self.a * X, f"a = {self.a:g}"), live.Line(X, X**2), self.a]


def render(owner, view, layers):
    hv.extension("bokeh")
    figures = live.LiveFigures(owner)
    pane = figures.add(view, layers)
    doc = Document()
    pane.server_doc(doc)
    (figure,) = figures.figures
    (plot,) = figure.plots()
    return figure, plot


def shown(plot) -> list:
    """What the rendered plot draws: (x, y) per line layer, the position of each mark."""
    out = []
    for sub in plot.subplots.values():
        if "source" in sub.handles and len(sub.handles["source"].data) == 2:
            x, y = sub.handles["source"].data.values()
            out.append((np.asarray(x, float), np.asarray(y, float)))
        else:
            out.append(sub.handles["glyph"].location)
    return out


def drawn(overlay: hv.Overlay) -> list:
    """The same numbers, read from a freshly built view."""
    return [(layer.dimension_values(0), layer.dimension_values(1))
            if isinstance(layer, hv.Curve | hv.Scatter) else float(layer.data)
            for layer in overlay]


def assert_same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for u, v in zip(a, b, strict=True):
        if isinstance(u, tuple):
            np.testing.assert_allclose(u[0], v[0], atol=1e-12)
            np.testing.assert_allclose(u[1], v[1], atol=1e-12)
        else:
            assert u == pytest.approx(v)


def test_a_step_writes_the_columns_the_mark_and_the_legend():
    toy = Toy()
    figure, plot = render(toy, toy.view, toy.layers)
    toy.a = 3.0
    assert_same(shown(plot), drawn(toy.view()))
    assert "a = 3" in figure._legend.object and "fixed" in figure._legend.object
    y = plot.handles["y_range"]
    assert y.start <= 0.0 and y.end >= 3.0


def test_the_axis_stays_while_the_data_fills_it_and_refits_when_it_does_not():
    toy = Toy(a=2.0)
    _, plot = render(toy, toy.view, toy.layers)
    toy.a = 2.2
    before = (plot.handles["y_range"].start, plot.handles["y_range"].end)
    toy.a = 2.1  # still fills most of the axis: no re-layout
    assert (plot.handles["y_range"].start, plot.handles["y_range"].end) == before
    toy.a = 15.0  # out of range: refit, with HoloViews' 10% padding
    assert plot.handles["y_range"].end == pytest.approx(15.0 + 0.1 * 15.0)
    toy.a = 0.5  # the data would fill less than half the axis: refit
    assert plot.handles["y_range"].end == pytest.approx(1.0 + 0.1 * 1.0)


class TwoFigures(param.Parameterized):
    """Settings become invalid through ``broken``, which only the second figure draws."""

    a = param.Number(1.0, bounds=(0.1, 20.0))
    broken = param.Boolean(False)

    @param.depends("a")
    def view_a(self) -> hv.Overlay:
        return hv.Overlay([hv.Curve((X, self.a * X), "x", "y", label="a x").opts(color="red")])

    def layers_a(self):
        return None if self.broken else [live.Line(X, self.a * X)]

    @param.depends("broken")
    def view_b(self) -> hv.Overlay:
        return hv.Overlay([hv.Curve((X, X * (2.0 if self.broken else 1.0)), "x", "y")])

    def layers_b(self):
        return [live.Line(X, X * (2.0 if self.broken else 1.0))]


def test_invalid_settings_keep_the_last_figure_and_it_catches_up_afterwards():
    hv.extension("bokeh")
    two = TwoFigures()
    figures = live.LiveFigures(two)
    for pane in (figures.add(two.view_a, two.layers_a), figures.add(two.view_b, two.layers_b)):
        pane.server_doc(Document())
    figure_a = figures.figures[0]
    (plot,) = figure_a.plots()
    two.a = 2.0
    kept = shown(plot)
    two.broken = True
    two.a = 5.0
    assert_same(shown(plot), kept)
    assert figure_a.stale
    two.broken = False  # a parameter figure A does not draw makes the settings valid again
    assert_same(shown(plot), drawn(two.view_a()))


def test_in_a_notebook_a_step_is_sent_over_the_comm():
    """Outside a server nobody else pushes direct Bokeh changes: the figure must."""
    pyviz_comms = pytest.importorskip("pyviz_comms")
    sent = []

    class RecordingComm(pyviz_comms.Comm):
        def init(self):
            self._comm = True  # "open", so Panel sends instead of rescheduling

        def send(self, data=None, metadata=None, buffers=None):
            sent.append(str(data))

        def close(self):
            pass

    hv.extension("bokeh")
    toy = Toy()
    doc, comm = Document(), RecordingComm()
    comm.init()
    root = live.LiveFigures(toy).add(toy.view, toy.layers).get_root(doc, comm)
    if root.document is None:
        doc.add_root(root)
    sent.clear()
    toy.a = 4.0
    assert any("PATCH-DOC" in m for m in sent) and any("ColumnDataChanged" in m for m in sent)


def test_a_line_without_an_explicit_color_is_an_error():
    """The HTML legend needs each line's color; a HoloViews color cycle would be guessed."""
    figure = live.LiveFigure(lambda: hv.Overlay([hv.Curve((X, X), label="no color")]),
                             lambda: [live.Line(X, X)])
    with pytest.raises(ValueError, match="explicit color"):
        figure.panel()


def test_layers_that_do_not_match_the_figure_are_an_error():
    toy = Toy()
    figure, _ = render(toy, toy.view, lambda: [live.Line(X, X)])
    with pytest.raises(ValueError, match="layers"):
        figure.push()


LIVE = [p.slug for p in papers.reproduced()
        if hasattr(p.dashboard().Explorer, "live_figures")]


@pytest.mark.parametrize("slug", LIVE)
def test_rendered_live_figures_equal_a_fresh_render_after_random_steps(slug):
    """Every rendered live figure, after each of 40 random steps (valid or not), shows what
    its view draws at those settings (or, while they are invalid, the last valid state)."""
    hv.extension("bokeh")
    explorer = papers.get(slug).dashboard().Explorer()
    pn.Column(explorer).server_doc(Document())
    (group,) = explorer._rendered_live
    specs = explorer.live_figures()
    params, rng = fuzzable(explorer), random.Random(7)
    last_valid = None
    for _ in range(40):
        name = rng.choice(sorted(params))
        setattr(explorer, name, random_value(params[name], rng))
        valid = not explorer.error_message()
        if valid:
            last_valid = [drawn(view()) for view, _ in specs]
        for figure, (view, layers), expected in zip(group.figures, specs, last_valid or [],
                                                    strict=False):
            (plot,) = figure.plots()
            assert_same(shown(plot), expected)
            if valid:
                new = layers()
                labels = [n.label for n in new if isinstance(n, live.Line) and n.label]
                view_labels = [layer.label for layer in view()
                               if isinstance(layer, hv.Curve | hv.Scatter)]
                assert set(labels) <= set(view_labels), f"{name}: legend {labels}"
