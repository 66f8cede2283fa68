"""Coinciding lines (issue 49): a line that lies on one drawn before it gets a dash of its
own, in a static figure, a live one as its data moves, and the legend's swatch; lines that
differ, or already differ in dash, keep their style. The browser check of the same thing
(``tests/ui/figure_checks.py::covered_lines``) has its mutation in tests/ui."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from icml26.dashboards.app.chart import COINCIDE_TOL, separate_coinciding  # noqa: E402
from icml26.dashboards.app.live import Chart, Series, figure, legend_html, update  # noqa: E402

X = np.arange(10.0)


def _chart(*ys, dashes=None, y_log=False):
    dashes = dashes or ["solid"] * len(ys)
    return Chart("levels", "period t", "level held", [
        Series(c, X, y, f"ladder {i}", dash=d)
        for i, (c, y, d) in enumerate(zip(["red", "blue", "green", "black"], ys, dashes))],
        y_log=y_log)


def test_each_line_on_an_earlier_one_gets_a_dash_of_its_own():
    same = X.copy()
    got = separate_coinciding(_chart(same, same, same, X + 5))
    assert [s.dash for s in got.series] == ["solid", "dashed", "dotted", "solid"]


def test_lines_apart_or_already_told_apart_keep_their_style():
    apart = _chart(X, X + 1)
    assert separate_coinciding(apart) is apart
    told = _chart(X, X, dashes=["solid", "dashed"])
    assert separate_coinciding(told) is told
    # ... but a solid line on a dashed one hides it: it gets the next free dash
    hiding = separate_coinciding(_chart(X, X, dashes=["dashed", "solid"]))
    assert [s.dash for s in hiding.series] == ["dashed", "dotted"]


def test_within_the_tolerance_counts_as_the_same_line():
    extent = float(X.max() - X.min())
    near = X + 0.5 * COINCIDE_TOL * extent
    far = X + 3 * COINCIDE_TOL * extent
    assert separate_coinciding(_chart(X, near)).series[1].dash == "dashed"
    assert separate_coinciding(_chart(X, far)).series[1].dash == "solid"


def test_the_figure_the_legend_and_a_live_update_follow():
    solid, dashed = [], [6]  # Bokeh's values of "solid" and "dashed"
    fig = figure(_chart(X, X))
    assert [r.glyph.line_dash for r in fig.renderers] == [solid, dashed]
    assert "dashed blue" in legend_html(_chart(X, X))
    live = figure(_chart(X, X + 5), live=True)
    assert [r.glyph.line_dash for r in live.renderers] == [solid, solid]
    update(live, _chart(X, X))  # a slider moved the second line onto the first
    assert [r.glyph.line_dash for r in live.renderers] == [solid, dashed]
    update(live, _chart(X, X + 5))
    assert [r.glyph.line_dash for r in live.renderers] == [solid, solid]


def test_the_live_legend_says_which_line_lies_on_which():
    """Issue 49: say that they coincide (the app's caption says why)."""
    assert "“ladder 1” lies on “ladder 0”" in legend_html(_chart(X, X, X + 5))
    assert "lies on" not in legend_html(_chart(X, X + 1))
    told = legend_html(_chart(X, X, dashes=["solid", "dashed"]))  # told apart: still the same
    assert "“ladder 1” lies on “ladder 0”" in told
